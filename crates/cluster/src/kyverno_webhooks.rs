//! The webhooks of Kyverno's CEL policies, laid out as Kyverno's webhook controller lays them
//! out (`pkg/controllers/webhook`, `buildWebhookRules`), so that the API server applies each
//! policy's failurePolicy, timeout, selectors and match conditions, and its messages name the
//! webhook Kyverno's would (`admission webhook "vpol.validate.kyverno.svc-fail" denied the
//! request: ...`):
//!
//! - a policy with match conditions the API server can evaluate, matchPolicy `Exact` or its
//!   own timeout gets a webhook of its own, `<kind>.validate.kyverno.svc-<fail|ignore>-
//!   finegrained-[<namespace>-]<name>`, path `/<kind>/<name>`;
//! - the others share one webhook per failurePolicy and selector pair,
//!   `<kind>.validate.kyverno.svc-<fail|ignore>[-<selector digest>]`, path
//!   `/<kind>/<name>/<name>...` (the names sorted).
//!
//! The configured namespace exclusions are added to every namespace selector, after the
//! policy's own, as Kyverno adds its configuration's.

use std::collections::BTreeMap;

use celer_policy::kyverno::model::PolicyKind;
use celer_policy::kyverno::webhook::{KyvernoWebhook, WebhookRule};
use celer_policy::model::{LabelSelector, LabelSelectorRequirement};
use celer_policy::scope;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Kyverno's base webhook name for a kind (`config.*PolicyWebhookName`).
pub fn base_name(kind: PolicyKind) -> &'static str {
    match kind {
        PolicyKind::ValidatingPolicy => "vpol.validate.kyverno.svc",
        PolicyKind::NamespacedValidatingPolicy => "nvpol.validate.kyverno.svc",
        PolicyKind::MutatingPolicy => "mpol.validate.kyverno.svc",
        PolicyKind::NamespacedMutatingPolicy => "nmpol.validate.kyverno.svc",
    }
}

/// What every webhook of a configuration shares.
pub struct Common<'a> {
    /// The clientConfig for a path.
    pub client_config: &'a dyn Fn(&str) -> Value,
    /// The namespace selector every webhook adds (the exclusions), if any.
    pub exclusions: Option<LabelSelector>,
    pub timeout_seconds: u8,
}

/// Go's `json.Marshal` of a selector (fields omitted when empty, keys sorted), for the group
/// digest and the webhook body alike.
pub fn selector_json(s: &LabelSelector) -> Value {
    let mut out = Map::new();
    if !s.match_labels.is_empty() {
        out.insert("matchLabels".into(), json!(s.match_labels));
    }
    if !s.match_expressions.is_empty() {
        let expressions: Vec<Value> = s
            .match_expressions
            .iter()
            .map(|r| {
                let mut e = Map::new();
                e.insert("key".into(), json!(r.key));
                e.insert("operator".into(), json!(r.operator));
                if !r.values.is_empty() {
                    e.insert("values".into(), json!(r.values));
                }
                Value::Object(e)
            })
            .collect();
        out.insert("matchExpressions".into(), Value::Array(expressions));
    }
    Value::Object(out)
}

/// `mergeLabelSelectors`: `a`'s labels and expressions, then `b`'s.
pub fn merge(a: Option<&LabelSelector>, b: Option<&LabelSelector>) -> Option<LabelSelector> {
    match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(a.clone()),
        (None, Some(b)) => Some(b.clone()),
        (Some(a), Some(b)) => {
            let mut merged = a.clone();
            merged
                .match_labels
                .extend(b.match_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            merged
                .match_expressions
                .extend(b.match_expressions.iter().cloned());
            Some(merged)
        }
    }
}

/// The selector that keeps webhooks away from `namespaces` (one `NotIn` each, as Kyverno's
/// default configuration writes them).
pub fn exclusions(namespaces: &[String]) -> Option<LabelSelector> {
    (!namespaces.is_empty()).then(|| LabelSelector {
        match_labels: BTreeMap::new(),
        match_expressions: namespaces
            .iter()
            .map(|ns| LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".to_string(),
                operator: "NotIn".to_string(),
                values: vec![ns.clone()],
            })
            .collect(),
    })
}

fn rules_json(rules: &[WebhookRule]) -> Value {
    Value::Array(
        rules
            .iter()
            .map(|r| {
                json!({
                    "apiGroups": r.api_groups,
                    "apiVersions": r.api_versions,
                    "operations": r.operations,
                    "resources": r.resources,
                    "scope": r.scope,
                })
            })
            .collect(),
    )
}

fn selector_value(s: Option<&LabelSelector>) -> Value {
    s.map_or_else(|| json!({}), selector_json)
}

struct Hook {
    name: String,
    path: String,
    ignore: bool,
    rules: Vec<WebhookRule>,
    match_conditions: Vec<(String, String)>,
    exact: bool,
    timeout_seconds: Option<u8>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
    reinvoke: bool,
}

impl Hook {
    fn to_json(&self, common: &Common<'_>, mutating: bool) -> Value {
        let mut hook = json!({
            "name": self.name,
            "clientConfig": (common.client_config)(&self.path),
            "rules": rules_json(&celer_policy::kyverno::webhook::sorted_rules(self.rules.clone())),
            "failurePolicy": if self.ignore { "Ignore" } else { "Fail" },
            "matchPolicy": if self.exact { "Exact" } else { "Equivalent" },
            "namespaceSelector": selector_value(self.namespace_selector.as_ref()),
            "objectSelector": selector_value(self.object_selector.as_ref()),
            "sideEffects": "NoneOnDryRun",
            "timeoutSeconds": self.timeout_seconds.unwrap_or(common.timeout_seconds),
            "admissionReviewVersions": ["v1"],
        });
        if let Some(h) = hook.as_object_mut() {
            if !self.match_conditions.is_empty() {
                let conditions: Vec<Value> = (self.match_conditions.iter())
                    .map(|(name, expression)| json!({"name": name, "expression": expression}))
                    .collect();
                h.insert("matchConditions".into(), Value::Array(conditions));
            }
            if mutating {
                let policy = if self.reinvoke { "IfNeeded" } else { "Never" };
                h.insert("reinvocationPolicy".into(), Value::from(policy));
            }
        }
        hook
    }
}

/// `groupBySelectors`' key: the SHA-256 of the selector pair as Go marshals it.
fn selector_key(namespace: Option<&LabelSelector>, object: Option<&LabelSelector>) -> String {
    let pair = Value::Array(vec![
        namespace.map_or(Value::Null, selector_json),
        object.map_or(Value::Null, selector_json),
    ]);
    let digest = Sha256::digest(pair.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The webhooks of the policies of one kind, in Kyverno's order: fine-grained Fail ones,
/// fine-grained Ignore ones, then per selector group the Fail and Ignore ones.
fn kind_webhooks(
    base: &str,
    prefix: &str,
    policies: &[&KyvernoWebhook],
    common: &Common<'_>,
) -> Vec<Hook> {
    let namespace_selector =
        |w: &KyvernoWebhook| merge(w.namespace_selector.as_ref(), common.exclusions.as_ref());
    let mut fine: Vec<&KyvernoWebhook> = (policies.iter().copied())
        .filter(|w| w.fine_grained.is_some())
        .collect();
    fine.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut out = Vec::new();
    for ignore in [false, true] {
        for w in fine.iter().filter(|w| w.ignore == ignore) {
            let Some(f) = &w.fine_grained else { continue };
            let policy = match &w.namespace {
                Some(ns) => format!("{ns}-{}", w.name),
                None => w.name.clone(),
            };
            let failure = if ignore { "ignore" } else { "fail" };
            out.push(Hook {
                name: format!("{base}-{failure}-finegrained-{policy}"),
                path: format!("{prefix}/{}", w.name),
                ignore,
                rules: w.rules.clone(),
                match_conditions: f.match_conditions.clone(),
                exact: f.exact,
                timeout_seconds: f.timeout_seconds,
                namespace_selector: namespace_selector(w),
                object_selector: w.object_selector.clone(),
                reinvoke: w.reinvoke,
            });
        }
    }
    // Basic policies, grouped by the selectors their webhook carries.
    let mut groups: BTreeMap<String, Vec<&KyvernoWebhook>> = BTreeMap::new();
    let mut selectors: BTreeMap<String, (Option<LabelSelector>, Option<LabelSelector>)> =
        BTreeMap::new();
    for w in policies
        .iter()
        .copied()
        .filter(|w| w.fine_grained.is_none())
    {
        let ns = namespace_selector(w);
        let key = selector_key(ns.as_ref(), w.object_selector.as_ref());
        selectors
            .entry(key.clone())
            .or_insert_with(|| (ns, w.object_selector.clone()));
        groups.entry(key).or_default().push(w);
    }
    let several = groups.len() > 1;
    for (key, members) in &groups {
        let suffix = if several {
            format!("-{}", &key[..8])
        } else {
            String::new()
        };
        let mut names: Vec<&str> = members.iter().map(|w| w.name.as_str()).collect();
        names.sort_unstable();
        let path = format!("{prefix}/{}", names.join("/"));
        let (ns, object) = selectors.get(key).cloned().unwrap_or_default();
        for ignore in [false, true] {
            let of_policy: Vec<&&KyvernoWebhook> =
                members.iter().filter(|w| w.ignore == ignore).collect();
            let rules: Vec<WebhookRule> = of_policy
                .iter()
                .flat_map(|w| w.rules.iter().cloned())
                .collect();
            if rules.is_empty() {
                continue;
            }
            let failure = if ignore { "ignore" } else { "fail" };
            out.push(Hook {
                name: format!("{base}-{failure}{suffix}"),
                path: path.clone(),
                ignore,
                rules,
                match_conditions: Vec::new(),
                exact: false,
                timeout_seconds: None,
                namespace_selector: ns.clone(),
                object_selector: object.clone(),
                reinvoke: of_policy.iter().any(|w| w.reinvoke),
            });
        }
    }
    out
}

/// The webhooks for Kyverno's validating (or mutating) CEL policies among `policies`, sorted
/// by name as Kyverno sorts a configuration's webhooks.
pub fn webhooks<'p>(
    policies: impl IntoIterator<Item = &'p KyvernoWebhook>,
    mutating: bool,
    common: &Common<'_>,
) -> Vec<Value> {
    let kinds = if mutating {
        [
            PolicyKind::MutatingPolicy,
            PolicyKind::NamespacedMutatingPolicy,
        ]
    } else {
        [
            PolicyKind::ValidatingPolicy,
            PolicyKind::NamespacedValidatingPolicy,
        ]
    };
    let all: Vec<&KyvernoWebhook> = policies.into_iter().collect();
    let mut hooks: Vec<Hook> = Vec::new();
    for kind in kinds {
        let of_kind: Vec<&KyvernoWebhook> =
            all.iter().copied().filter(|w| w.kind == kind).collect();
        if !of_kind.is_empty() {
            hooks.extend(kind_webhooks(
                base_name(kind),
                scope::kyverno_path(kind),
                &of_kind,
                common,
            ));
        }
    }
    hooks.sort_by(|a, b| a.name.cmp(&b.name));
    hooks.iter().map(|h| h.to_json(common, mutating)).collect()
}

/// Kyverno's webhook names and path prefixes of GeneratingPolicies (cluster-wide, then
/// namespaced): requests on them are handed to the controller (`/gpol/<names>`).
pub const GENERATING: [(&str, &str); 2] = [
    ("gpol.validate.kyverno.svc", "/gpol"),
    ("ngpol.validate.kyverno.svc", "/ngpol"),
];

/// The webhooks of GeneratingPolicies ([`celer_policy::kyverno::generating::GeneratingPolicy::webhook`]),
/// laid out as the validating kinds' are.
pub fn generating_webhooks(policies: &[KyvernoWebhook], common: &Common<'_>) -> Vec<Value> {
    let mut hooks: Vec<Hook> = Vec::new();
    for (namespaced, (base, prefix)) in [false, true].into_iter().zip(GENERATING) {
        let of_kind: Vec<&KyvernoWebhook> = (policies.iter())
            .filter(|w| w.namespace.is_some() == namespaced)
            .collect();
        if !of_kind.is_empty() {
            hooks.extend(kind_webhooks(base, prefix, &of_kind, common));
        }
    }
    hooks.sort_by(|a, b| a.name.cmp(&b.name));
    hooks.iter().map(|h| h.to_json(common, false)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn selectors_marshal_as_go_does_and_merge_in_order() {
        let policy = LabelSelector {
            match_labels: [("environment".to_string(), "staging".to_string())].into(),
            match_expressions: Vec::new(),
        };
        let merged = merge(
            Some(&policy),
            exclusions(&["kube-system".into(), "kyverno".into()]).as_ref(),
        )
        .unwrap();
        assert_eq!(
            selector_json(&merged),
            json!({
                "matchLabels": {"environment": "staging"},
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
                    {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kyverno"]},
                ]
            })
        );
        assert!(merge(None, None).is_none());
        assert_eq!(selector_key(None, None).len(), 64);
        assert_ne!(selector_key(Some(&policy), None), selector_key(None, None));
    }
}
