//! What Kyverno's webhook controller registers for one CEL policy (`pkg/controllers/webhook`,
//! `buildWebhookRules`), worked out when the policy is loaded so that registration reads it
//! off the set:
//!
//! - the rules: the policy's resource rules and its autogen variants', deduplicated and
//!   sorted as Kyverno sorts them (`sortedRules`: each list sorted, then rules by their lists,
//!   shorter first);
//! - whether it gets a webhook of its own ("fine-grained"): when it has match conditions the
//!   API server can evaluate (they compile in Kubernetes' own CEL environment), matchPolicy
//!   `Exact`, or `webhookConfiguration.timeoutSeconds`. Its webhook then carries those match
//!   conditions, wrapped for the Pod and each autogen variant as Kyverno's
//!   `autogen.CreateMatchConditions` wraps them (conditions that read `namespaceObject`,
//!   which the API server leaves null for webhooks, stay with celer);
//! - failurePolicy, and the selectors (a namespaced policy's pinned to its namespace).

use std::collections::BTreeSet;

use crate::environment::{ExpressionKind, PolicyEnv};
use crate::model::{
    FailurePolicy, LabelSelector, LabelSelectorRequirement, MatchCondition, MatchPolicy,
    MatchResources, NamedRuleWithOperations, ReinvocationPolicy,
};

use super::autogen::{self, Generated, Template};
use super::model::{Policy, PolicyKind};

/// One rule of a webhook, as the API's `RuleWithOperations`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WebhookRule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub operations: Vec<String>,
    pub resources: Vec<String>,
    pub scope: String,
}

/// What a policy's own webhook says beyond the shared one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FineGrained {
    /// (name, expression), as the API server evaluates them.
    pub match_conditions: Vec<(String, String)>,
    /// `matchPolicy: Exact`.
    pub exact: bool,
    pub timeout_seconds: Option<u8>,
}

/// The webhook part of a Kyverno CEL policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KyvernoWebhook {
    pub kind: PolicyKind,
    pub name: String,
    pub namespace: Option<String>,
    pub rules: Vec<WebhookRule>,
    /// `None`: the policy shares its kind's webhook with the others of its failurePolicy
    /// and selectors.
    pub fine_grained: Option<FineGrained>,
    /// `failurePolicy: Ignore`.
    pub ignore: bool,
    /// The namespace selector before the configured exclusions are added.
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
    /// `reinvocationPolicy: IfNeeded` (MutatingPolicies).
    pub reinvoke: bool,
}

fn rules_of(m: Option<&MatchResources>, out: &mut Vec<WebhookRule>) {
    for r in m.map(|m| m.resource_rules.as_slice()).unwrap_or_default() {
        out.push(rule(r));
    }
}

fn rule(r: &NamedRuleWithOperations) -> WebhookRule {
    WebhookRule {
        api_groups: r.api_groups.clone(),
        api_versions: r.api_versions.clone(),
        operations: r.operations.clone(),
        resources: r.resources.clone(),
        scope: r.scope.clone().unwrap_or_else(|| "*".to_string()),
    }
}

/// Kyverno's `less`: shorter lists first, then element by element.
fn less(a: &[String], b: &[String]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `deDuplicatedRules` then `sortedRules`.
pub fn sorted_rules(rules: Vec<WebhookRule>) -> Vec<WebhookRule> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<WebhookRule> = rules
        .into_iter()
        .filter(|r| seen.insert(r.clone()))
        .collect();
    for r in &mut out {
        r.api_groups.sort();
        r.api_versions.sort();
        r.resources.sort();
        r.operations.sort();
    }
    out.sort_by(|a, b| {
        less(&a.api_groups, &b.api_groups)
            .then_with(|| less(&a.api_versions, &b.api_versions))
            .then_with(|| less(&a.resources, &b.resources))
            .then_with(|| less(&a.operations, &b.operations))
            .then_with(|| a.scope.cmp(&b.scope))
    });
    out
}

/// The conditions the API server can evaluate, all or none (`validConditions`): each must
/// compile in Kubernetes' CEL environment, without Kyverno's libraries, where `request` is
/// the typed AdmissionRequest (so `request.object`, which Kyverno's own `request` has, does
/// not compile there).
fn valid_conditions(conditions: &[MatchCondition]) -> Option<&[MatchCondition]> {
    if conditions.is_empty() {
        return None;
    }
    let env = PolicyEnv::new(false, false);
    conditions
        .iter()
        .all(|c| {
            !selects_unknown_request_field(&c.expression)
                && env
                    .compile(&c.expression, ExpressionKind::Condition)
                    .is_ok()
        })
        .then_some(conditions)
}

/// The fields of `admission.k8s.io/v1` AdmissionRequest, as the API server's CEL declares
/// `request` for webhook match conditions.
const ADMISSION_REQUEST_FIELDS: &[&str] = &[
    "uid",
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "dryRun",
    "options",
];

/// Whether an expression selects a field of `request` that AdmissionRequest's CEL type lacks
/// (a textual check: `request` as an identifier followed by `.field` or `.?field`).
fn selects_unknown_request_field(expression: &str) -> bool {
    let word = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    let bytes = expression.as_bytes();
    expression.match_indices("request").any(|(i, m)| {
        let before = bytes[..i].last().copied();
        if before.is_some_and(|b| word(b) || b == b'.') {
            return false;
        }
        let rest = &expression[i + m.len()..];
        if rest.as_bytes().first().is_some_and(|&b| word(b)) {
            return false;
        }
        let rest = rest.trim_start();
        let Some(field) = rest.strip_prefix(".?").or_else(|| rest.strip_prefix('.')) else {
            return false;
        };
        let field: String = field
            .trim_start()
            .chars()
            .take_while(|c| *c == '_' || c.is_ascii_alphanumeric())
            .collect();
        !ADMISSION_REQUEST_FIELDS.contains(&field.as_str())
    })
}

/// Whether an expression names `namespaceObject` (a conservative, textual check: a string
/// that contains the word keeps the condition with celer, which is always correct).
fn reads_namespace_object(expression: &str) -> bool {
    expression.match_indices("namespaceObject").any(|(i, m)| {
        let word = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
        let before = expression.as_bytes()[..i].last().is_none_or(|&b| !word(b));
        let after = expression.as_bytes()[i + m.len()..]
            .first()
            .is_none_or(|&b| !word(b));
        before && after
    })
}

/// `webhookMatchConditions`.
fn offloadable(conditions: &[MatchCondition]) -> Vec<(String, String)> {
    conditions
        .iter()
        .filter(|c| !reads_namespace_object(&c.expression))
        .map(|c| (c.name.clone(), c.expression.clone()))
        .collect()
}

/// `autogen.CreateMatchConditions`: each condition applies to `targets` only.
fn wrap(
    config: &str,
    targets: &[(String, String, String)],
    conditions: Vec<(String, String)>,
) -> Vec<(String, String)> {
    if targets.is_empty() || conditions.is_empty() {
        return Vec::new();
    }
    let preconditions: BTreeSet<String> = targets
        .iter()
        .map(|(group, version, kind)| {
            let api_version = if group.is_empty() {
                version.clone()
            } else {
                format!("{group}/{version}")
            };
            format!("(object.apiVersion == '{api_version}' && object.kind =='{kind}')")
        })
        .collect();
    let precondition = preconditions.into_iter().collect::<Vec<_>>().join(" || ");
    let prefix = if config.is_empty() {
        "autogen".to_string()
    } else {
        format!("autogen-{config}")
    };
    conditions
        .into_iter()
        .map(|(name, expression)| {
            (
                format!("{prefix}-{name}"),
                format!("!({precondition}) || ({expression})"),
            )
        })
        .collect()
}

/// The (group, version, kind) targets of a generated variant.
fn targets(g: &Generated) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for r in &g.match_constraints.resource_rules {
        for resource in &r.resources {
            let Some(kind) = autogen::controller_kind(resource) else {
                continue;
            };
            for group in &r.api_groups {
                for version in &r.api_versions {
                    out.push((group.clone(), version.clone(), kind.to_string()));
                }
            }
        }
    }
    out
}

fn rewrite(kind: PolicyKind, text: &str, template: Template) -> String {
    if kind.is_validating() {
        autogen::rewrite_validating(text, template)
    } else {
        autogen::rewrite_mutating(text, template)
    }
}

/// The webhook part of a policy whose autogen made `generated`.
pub fn of_policy(p: &Policy, kind: PolicyKind, generated: &[Generated]) -> KyvernoWebhook {
    let spec = &p.spec;
    let m = spec.match_constraints.as_ref();
    let conditions = valid_conditions(&spec.match_conditions);
    let exact = m.and_then(|m| m.match_policy) == Some(MatchPolicy::Exact);
    let timeout_seconds = spec
        .webhook_configuration
        .as_ref()
        .and_then(|w| w.timeout_seconds)
        .map(|t| t.clamp(1, 30) as u8);
    let mut rules = Vec::new();
    rules_of(m, &mut rules);
    for g in generated {
        rules_of(Some(&g.match_constraints), &mut rules);
    }
    let fine_grained = (conditions.is_some() || exact || timeout_seconds.is_some()).then(|| {
        let own = offloadable(conditions.unwrap_or_default());
        let mut match_conditions = if autogen::can_autogen(m) {
            let pod = [(String::new(), "v1".to_string(), "Pod".to_string())];
            wrap("", &pod, own)
        } else {
            own
        };
        // Kyverno walks its autogen configs in name order.
        let mut by_name: Vec<&Generated> = generated.iter().collect();
        by_name.sort_by_key(|g| g.template.name());
        for g in by_name {
            let rewritten: Vec<MatchCondition> = spec
                .match_conditions
                .iter()
                .map(|c| MatchCondition {
                    name: c.name.clone(),
                    expression: rewrite(kind, &c.expression, g.template),
                })
                .collect();
            let valid = valid_conditions(&rewritten).map(offloadable);
            match_conditions.extend(wrap(
                g.template.name(),
                &targets(g),
                valid.unwrap_or_default(),
            ));
        }
        FineGrained {
            match_conditions,
            exact,
            timeout_seconds,
        }
    });
    // A namespaced policy created without a namespace lives in `default`, as kubectl puts it.
    let namespace = kind.is_namespaced().then(|| {
        (p.metadata.namespace.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string())
    });
    let namespace_selector = match &namespace {
        Some(ns) => Some(LabelSelector {
            match_labels: Default::default(),
            match_expressions: vec![LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".to_string(),
                operator: "In".to_string(),
                values: vec![ns.clone()],
            }],
        }),
        None => m.and_then(|m| m.namespace_selector.clone()),
    };
    KyvernoWebhook {
        kind,
        name: p.metadata.name.clone(),
        namespace,
        rules: sorted_rules(rules),
        fine_grained,
        ignore: spec.failure_policy == Some(FailurePolicy::Ignore),
        namespace_selector,
        object_selector: m.and_then(|m| m.object_selector.clone()),
        reinvoke: spec.reinvocation_policy == Some(ReinvocationPolicy::IfNeeded),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn policy(text: &str) -> (Policy, Vec<Generated>) {
        let p: Policy = serde_yaml_ng::from_str(text).unwrap();
        let generated = autogen::generate(p.spec.match_constraints.as_ref(), None);
        (p, generated)
    }

    #[test]
    fn a_plain_policy_shares_its_kinds_webhook() {
        let (p, g) = policy(
            "
metadata: {name: check-deployment-labels}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE, CREATE], resources: [deployments]}
    - {apiGroups: [apps], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}
  validations: [{expression: 'true'}]
",
        );
        let w = of_policy(&p, PolicyKind::ValidatingPolicy, &g);
        assert!(w.fine_grained.is_none() && !w.ignore);
        let resources: Vec<_> = w.rules.iter().map(|r| r.resources.clone()).collect();
        assert_eq!(resources, [vec!["configmaps"], vec!["deployments"]]);
        assert_eq!(w.rules[1].operations, ["CREATE", "UPDATE"]);
        assert_eq!(w.rules[1].scope, "*");
    }

    #[test]
    fn match_conditions_are_wrapped_for_the_pod_and_each_autogen_variant() {
        let (p, g) = policy(
            "
metadata: {name: disallow-privilege-escalation}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  matchConditions:
  - {name: check-prod-label, expression: \"has(object.metadata.labels) && object.metadata.labels.prod == 'true'\"}
  validations: [{expression: 'true'}]
",
        );
        let w = of_policy(&p, PolicyKind::ValidatingPolicy, &g);
        let fine = w.fine_grained.unwrap();
        let names: Vec<&str> = fine
            .match_conditions
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "autogen-check-prod-label",
                "autogen-cronjobs-check-prod-label",
                "autogen-defaults-check-prod-label"
            ]
        );
        assert_eq!(
            fine.match_conditions[0].1,
            "!((object.apiVersion == 'v1' && object.kind =='Pod')) || (has(object.metadata.labels) && object.metadata.labels.prod == 'true')"
        );
        assert!(
            fine.match_conditions[2].1.starts_with(
                "!((object.apiVersion == 'apps/v1' && object.kind =='DaemonSet') || (object.apiVersion == 'apps/v1' && object.kind =='Deployment')"
            ),
            "{}",
            fine.match_conditions[2].1
        );
        assert!(
            fine.match_conditions[2]
                .1
                .ends_with("|| (has(object.spec.template.metadata.labels) && object.spec.template.metadata.labels.prod == 'true')")
        );
        // The Pod's rule and the controllers': four rules, sorted as Kyverno sorts them.
        let groups: Vec<_> = w.rules.iter().map(|r| r.api_groups[0].as_str()).collect();
        assert_eq!(groups, ["", "apps", "batch", "batch"]);
        assert_eq!(w.rules[2].resources, ["cronjobs"]);
    }

    #[test]
    fn conditions_celer_alone_can_evaluate_keep_the_policy_on_the_shared_webhook() {
        let (p, g) = policy(
            "
metadata: {name: ctx, namespace: team-a}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  matchConditions:
  - {name: ctx, expression: \"resource.Get('v1', 'configmaps', 'x', 'y') != null\"}
  failurePolicy: Ignore
  validations: [{expression: 'true'}]
",
        );
        let w = of_policy(&p, PolicyKind::NamespacedValidatingPolicy, &g);
        assert!(w.fine_grained.is_none() && w.ignore);
        let selector = w.namespace_selector.unwrap();
        assert_eq!(selector.match_expressions[0].values, ["team-a"]);
        // A timeout alone makes a webhook of its own; namespaceObject stays with celer.
        let (p, g) = policy(
            "
metadata: {name: t}
spec:
  webhookConfiguration: {timeoutSeconds: 20}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  matchConditions:
  - {name: ns, expression: \"namespaceObject.metadata.name == 'a'\"}
  validations: [{expression: 'true'}]
",
        );
        let fine = of_policy(&p, PolicyKind::ValidatingPolicy, &g)
            .fine_grained
            .unwrap();
        assert_eq!(fine.timeout_seconds, Some(20));
        assert!(fine.match_conditions.is_empty());
        assert!(reads_namespace_object("x || namespaceObject.y"));
        // Kyverno's `request` has the objects; the API server's AdmissionRequest does not.
        assert!(selects_unknown_request_field(
            "has(request.object.metadata.labels)"
        ));
        assert!(selects_unknown_request_field(
            "request.?oldObject.orValue(null) == null"
        ));
        assert!(!selects_unknown_request_field(
            "request.operation == 'CREATE' && request.userInfo.username != ''"
        ));
        assert!(!selects_unknown_request_field(
            "object.request.object == 1 || myrequest.object"
        ));
        assert!(!reads_namespace_object("mynamespaceObjects"));
    }
}
