//! The webhook configurations celer registers. Kyverno's CEL policies get the webhooks
//! Kyverno's controller would register for them ([`crate::kyverno_webhooks`]); every other
//! policy shares one webhook per configuration (`validate.celer.webhook` on
//! `/validate/shared`, `mutate.celer.webhook` on `/mutate/shared`): rules derived from the
//! loaded policies (only the resources and operations some bound policy can match, so the API
//! server sends nothing else), the CA bundle, failurePolicy and timeout from flags,
//! `sideEffects: None`, `admissionReviewVersions: [v1]`, and reinvocation when a mutating
//! policy asks for it. Every webhook skips the excluded namespaces (kube-system and celer's
//! own by default: an outage of celer must not block the Pods that would bring it back).
//! Kyverno's webhooks go into celer's configurations, or into Kyverno's own
//! (`kyverno-resource-validating-webhook-cfg`, `kyverno-resource-mutating-webhook-cfg`) when
//! asked, for a cluster whose tools look for those. Applied with server-side apply under the
//! field manager `celer`; removed when asked.

use std::collections::{BTreeMap, BTreeSet};

use celer_policy::kyverno::webhook::KyvernoWebhook;
use celer_policy::matching::{Pattern, RuleKey};
use celer_policy::model::LabelSelector;
use celer_policy::model::ReinvocationPolicy;
use celer_policy::policy_set::{Family, PolicySet};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

use crate::ClusterError;
use crate::kyverno_webhooks::{self, Common};

/// The field manager of celer's server-side applies.
pub const FIELD_MANAGER: &str = "celer";

/// The name of the webhook inside the ValidatingWebhookConfiguration.
pub const VALIDATING_WEBHOOK: &str = "validate.celer.webhook";
/// The name of the webhook inside the MutatingWebhookConfiguration.
pub const MUTATING_WEBHOOK: &str = "mutate.celer.webhook";

/// Kyverno's configuration names, for [`WebhookSettings::kyverno_configurations`].
pub const KYVERNO_VALIDATING_CONFIGURATION: &str = "kyverno-resource-validating-webhook-cfg";
pub const KYVERNO_MUTATING_CONFIGURATION: &str = "kyverno-resource-mutating-webhook-cfg";
pub const KYVERNO_POLICY_CONFIGURATION: &str = "kyverno-policy-validating-webhook-cfg";
/// The webhook that checks Kyverno's policy objects before they are stored.
pub const POLICY_WEBHOOK: &str = "validate-policy.kyverno.svc";

/// Where the API server reaches celer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A base URL (`https://host:port`); `/validate` and `/mutate` are appended.
    Url(String),
    /// A Service in the cluster.
    Service {
        namespace: String,
        name: String,
        port: u16,
    },
}

/// What the configurations say besides their rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSettings {
    /// The name of both configurations.
    pub name: String,
    pub endpoint: Endpoint,
    /// PEM certificates the API server trusts for celer's serving certificate.
    pub ca_bundle: Vec<u8>,
    /// `Fail` or `Ignore`: what the API server does when celer cannot answer.
    pub failure_policy: String,
    /// Seconds the API server waits for an answer (1 to 30).
    pub timeout_seconds: u8,
    /// Namespaces no webhook is called for.
    pub exclude_namespaces: Vec<String>,
    /// Kyverno's policies in Kyverno's own configurations, labelled as Kyverno labels them,
    /// rather than in celer's.
    pub kyverno_configurations: bool,
    /// Register [`POLICY_WEBHOOK`] (`/policyvalidate`): Kyverno's policy objects refused as
    /// Kyverno refuses them.
    pub validate_policy_objects: bool,
    /// Annotations of every configuration (Kyverno's default, `admissions.enforcer/disabled:
    /// "true"`, keeps AKS's admissions enforcer from rewriting them).
    pub annotations: Vec<(String, String)>,
    /// The owner of every configuration ([`crate::owner`]): deleting it deletes them.
    pub owner: Option<crate::owner::Owner>,
    /// The webhooks of the loaded GeneratingPolicies
    /// ([`kyverno_webhooks::generating_webhooks`]), beside Kyverno's validating ones.
    pub generating: Vec<celer_policy::kyverno::webhook::KyvernoWebhook>,
}

impl WebhookSettings {
    /// Every configuration these settings may register: (validating, name).
    pub fn names(&self) -> Vec<(bool, String)> {
        configuration_names(&self.name, self.kyverno_configurations)
    }
}

/// The configurations registered under celer's `name`, with Kyverno's own when
/// `kyverno_configurations`: (validating, name).
pub fn configuration_names(name: &str, kyverno_configurations: bool) -> Vec<(bool, String)> {
    let mut out = vec![(true, name.to_string()), (false, name.to_string())];
    if kyverno_configurations {
        out.push((true, KYVERNO_VALIDATING_CONFIGURATION.to_string()));
        out.push((false, KYVERNO_MUTATING_CONFIGURATION.to_string()));
        out.push((true, KYVERNO_POLICY_CONFIGURATION.to_string()));
    }
    out
}

/// One webhook rule: operations on resources of one API group, any version, any scope.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WebhookRule {
    pub api_group: String,
    pub operations: Vec<String>,
    pub resources: Vec<String>,
}

fn pattern(p: Pattern<'_>) -> &str {
    match p {
        Pattern::Any => "*",
        Pattern::Exact(s) => s,
    }
}

/// `resource` or `resource/subresource` as a webhook rule names it.
fn resource_text(key: &RuleKey<'_>) -> String {
    let resource = pattern(key.resource);
    match key.subresource {
        Pattern::Exact("") => resource.to_string(),
        sub => format!("{resource}/{}", pattern(sub)),
    }
}

/// The rules that cover every key: one per (group, operations), each listing its resources.
pub fn rules_from_keys<'k>(keys: impl IntoIterator<Item = RuleKey<'k>>) -> Vec<WebhookRule> {
    // (group, resource) -> operations ("*" absorbs the rest)
    let mut by_resource: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for key in keys {
        let op = match key.operation {
            None => "*".to_string(),
            Some(op) => op.as_str().to_string(),
        };
        let ops = by_resource
            .entry((pattern(key.group).to_string(), resource_text(&key)))
            .or_default();
        if op == "*" {
            ops.clear();
        }
        if !ops.contains("*") {
            ops.insert(op);
        }
    }
    let mut grouped: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
    for ((group, resource), ops) in by_resource {
        grouped
            .entry((group, ops.into_iter().collect()))
            .or_default()
            .push(resource);
    }
    grouped
        .into_iter()
        .map(|((api_group, operations), resources)| WebhookRule {
            api_group,
            operations,
            resources,
        })
        .collect()
}

/// The keys of the bound policies of a family (a policy without a binding applies to nothing).
fn family_keys<P>(
    family: &Family<P>,
    constraints: impl Fn(&P) -> &celer_policy::matching::MatchConstraints,
) -> Vec<RuleKey<'_>> {
    family
        .policies
        .iter()
        .zip(&family.bindings)
        .filter(|(_, bindings)| !bindings.is_empty())
        .flat_map(|(p, _)| constraints(p).rule_keys())
        .collect()
}

/// The rules of the shared validating webhook: the bound validating policies' and, for Gatekeeper Constraints and Kyverno ClusterPolicy rules (which match
/// kinds, not resources), every resource on CREATE, UPDATE and DELETE.
pub fn validating_rules(set: &PolicySet) -> Vec<WebhookRule> {
    let mut keys = family_keys(&set.native().validating, |p| &p.common.constraints);
    // ClusterPolicy rules, like Constraints, match kinds.
    if !set.gatekeeper().constraints.is_empty() || !set.kyverno().classic.is_empty() {
        use celer_policy::attributes::Operation;
        for op in [Operation::Create, Operation::Update, Operation::Delete] {
            keys.push(RuleKey {
                group: Pattern::Any,
                resource: Pattern::Any,
                subresource: Pattern::Exact(""),
                operation: Some(op),
            });
        }
        // Rules naming subresources (`Deployment/scale`, `Pod/exec`, a Pod's ephemeral
        // containers), on every operation a subresource request can have.
        let subresources: BTreeSet<(&str, &str)> = (set.kyverno().classic.iter())
            .flat_map(|r| r.subresources())
            .collect();
        for (resource, sub) in subresources {
            for op in [
                Operation::Create,
                Operation::Update,
                Operation::Delete,
                Operation::Connect,
            ] {
                keys.push(RuleKey {
                    group: Pattern::Any,
                    resource: if resource == "*" {
                        Pattern::Any
                    } else {
                        Pattern::Exact(resource)
                    },
                    subresource: if sub == "*" {
                        Pattern::Any
                    } else {
                        Pattern::Exact(sub)
                    },
                    operation: Some(op),
                });
            }
        }
    }
    rules_from_keys(keys)
}

/// The rules of the shared mutating webhook: bound MutatingAdmissionPolicies'; and, for Gatekeeper's mutators (which match kinds, not resources),
/// every resource on CREATE and UPDATE, the operations Gatekeeper mutates.
pub fn mutating_rules(set: &PolicySet) -> Vec<WebhookRule> {
    let mut keys = family_keys(&set.native().mutating, |p| &p.common.constraints);
    if !set.gatekeeper_mutators().is_empty() {
        use celer_policy::attributes::Operation;
        for op in [Operation::Create, Operation::Update] {
            keys.push(RuleKey {
                group: Pattern::Any,
                resource: Pattern::Any,
                subresource: Pattern::Exact(""),
                operation: Some(op),
            });
        }
    }
    rules_from_keys(keys)
}

/// `IfNeeded` when some bound MutatingAdmissionPolicy asks to be reinvoked, else `Never`.
pub fn reinvocation(set: &PolicySet) -> &'static str {
    let needed = set
        .native()
        .mutating
        .policies
        .iter()
        .zip(&set.native().mutating.bindings)
        .any(|(p, b)| !b.is_empty() && p.reinvocation == ReinvocationPolicy::IfNeeded);
    if needed { "IfNeeded" } else { "Never" }
}

/// The webhook parts of the Kyverno CEL policies of a set (the policies as written, not
/// autogen's variants, which their policy's webhook covers).
fn kyverno_policies(set: &PolicySet, mutating: bool) -> Vec<&KyvernoWebhook> {
    let k = set.kyverno();
    if mutating {
        (k.mutating.iter())
            .filter_map(|m| m.extras.webhook.as_deref())
            .collect()
    } else {
        (k.validating.iter())
            .filter_map(|v| v.extras.webhook.as_deref())
            .collect()
    }
}

fn client_config(settings: &WebhookSettings, path: &str) -> Value {
    // k8s-openapi's ByteString serializes as base64, as the API wants caBundle.
    let ca = serde_json::to_value(k8s_openapi::ByteString(settings.ca_bundle.clone()))
        .unwrap_or(Value::Null);
    match &settings.endpoint {
        Endpoint::Url(base) => json!({
            "url": format!("{}{path}", base.trim_end_matches('/')),
            "caBundle": ca,
        }),
        Endpoint::Service {
            namespace,
            name,
            port,
        } => json!({
            "service": {"namespace": namespace, "name": name, "path": path, "port": port},
            "caBundle": ca,
        }),
    }
}

fn webhook(
    settings: &WebhookSettings,
    exclusions: Option<&LabelSelector>,
    name: &str,
    path: &str,
    rules: &[WebhookRule],
) -> Value {
    let rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "apiGroups": [r.api_group],
                "apiVersions": ["*"],
                "operations": r.operations,
                "resources": r.resources,
                "scope": "*",
            })
        })
        .collect();
    json!({
        "name": name,
        "clientConfig": client_config(settings, path),
        "rules": rules,
        "failurePolicy": settings.failure_policy,
        "matchPolicy": "Equivalent",
        "namespaceSelector": exclusions.map_or_else(|| json!({}), kyverno_webhooks::selector_json),
        "sideEffects": "None",
        "timeoutSeconds": settings.timeout_seconds,
        "admissionReviewVersions": ["v1"],
    })
}

fn metadata(
    name: &str,
    kyverno: bool,
    annotations: &[(String, String)],
    owner: Option<&crate::owner::Owner>,
) -> Value {
    let labels = if kyverno {
        json!({"webhook.kyverno.io/managed-by": "kyverno"})
    } else {
        json!({"app.kubernetes.io/managed-by": "celer"})
    };
    let mut out = json!({"name": name, "labels": labels});
    if let (Some(owner), Some(meta)) = (owner, out.as_object_mut()) {
        meta.insert(
            "ownerReferences".to_string(),
            Value::Array(vec![owner.reference()]),
        );
    }
    if !annotations.is_empty()
        && let Some(meta) = out.as_object_mut()
    {
        let map: serde_json::Map<String, Value> = (annotations.iter())
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        meta.insert("annotations".to_string(), Value::Object(map));
    }
    out
}

/// One configuration to register: `body` `None` where nothing is left to match (it is then
/// removed rather than registered empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    /// A ValidatingWebhookConfiguration, else a MutatingWebhookConfiguration.
    pub validating: bool,
    pub name: String,
    pub body: Option<Value>,
}

/// The configurations for the loaded sets, every name of [`WebhookSettings::names`].
#[derive(Debug, Clone, PartialEq)]
pub struct Configurations {
    pub items: Vec<Configuration>,
}

impl Configurations {
    pub fn new(
        settings: &WebhookSettings,
        validating: &PolicySet,
        mutating: &PolicySet,
    ) -> Configurations {
        let exclusions = kyverno_webhooks::exclusions(&settings.exclude_namespaces);
        let client_config = |path: &str| client_config(settings, path);
        let common = Common {
            client_config: &client_config,
            exclusions: exclusions.clone(),
            timeout_seconds: settings.timeout_seconds,
        };
        let v_rules = validating_rules(validating);
        let m_rules = mutating_rules(mutating);
        let mut v_hooks = Vec::new();
        if !v_rules.is_empty() {
            v_hooks.push(webhook(
                settings,
                exclusions.as_ref(),
                VALIDATING_WEBHOOK,
                celer_policy::scope::SHARED_VALIDATE_PATH,
                &v_rules,
            ));
        }
        let mut m_hooks = Vec::new();
        if !m_rules.is_empty() {
            let mut hook = webhook(
                settings,
                exclusions.as_ref(),
                MUTATING_WEBHOOK,
                celer_policy::scope::SHARED_MUTATE_PATH,
                &m_rules,
            );
            if let Some(h) = hook.as_object_mut() {
                h.insert(
                    "reinvocationPolicy".to_string(),
                    Value::from(reinvocation(mutating)),
                );
            }
            m_hooks.push(hook);
        }
        let mut kv =
            kyverno_webhooks::webhooks(kyverno_policies(validating, false), false, &common);
        if !settings.generating.is_empty() {
            kv.extend(kyverno_webhooks::generating_webhooks(
                &settings.generating,
                &common,
            ));
            // Kyverno sorts a configuration's webhooks by name.
            kv.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        }
        // Failure policy Ignore: a celer outage must not stop a team applying policies (they
        // are then checked on load, and a broken one says so on its status).
        let policy_hook = settings.validate_policy_objects.then(|| {
            json!({
                "name": POLICY_WEBHOOK,
                "clientConfig": client_config("/policyvalidate"),
                "rules": [
                    {"apiGroups": ["policies.kyverno.io"], "apiVersions": ["*"],
                     "operations": ["CREATE", "UPDATE"], "scope": "*",
                     "resources": ["validatingpolicies", "namespacedvalidatingpolicies",
                                   "mutatingpolicies", "namespacedmutatingpolicies",
                                   "generatingpolicies", "namespacedgeneratingpolicies",
                                   "deletingpolicies", "namespaceddeletingpolicies"]},
                    {"apiGroups": ["kyverno.io"], "apiVersions": ["*"],
                     "operations": ["CREATE", "UPDATE"], "scope": "*",
                     "resources": ["policyexceptions", "globalcontextentries"]},
                ],
                "failurePolicy": "Ignore",
                "matchPolicy": "Equivalent",
                "sideEffects": "None",
                "timeoutSeconds": settings.timeout_seconds,
                "admissionReviewVersions": ["v1"],
            })
        });
        let km = kyverno_webhooks::webhooks(kyverno_policies(mutating, true), true, &common);
        let config = |validating: bool, name: &str, kyverno: bool, hooks: Vec<Value>| {
            let kind = if validating {
                "ValidatingWebhookConfiguration"
            } else {
                "MutatingWebhookConfiguration"
            };
            Configuration {
                validating,
                name: name.to_string(),
                body: (!hooks.is_empty()).then(|| {
                    json!({
                        "apiVersion": "admissionregistration.k8s.io/v1",
                        "kind": kind,
                        "metadata": metadata(name, kyverno, &settings.annotations, settings.owner.as_ref()),
                        "webhooks": hooks,
                    })
                }),
            }
        };
        let items = if settings.kyverno_configurations {
            vec![
                config(true, &settings.name, false, v_hooks),
                config(false, &settings.name, false, m_hooks),
                config(true, KYVERNO_VALIDATING_CONFIGURATION, true, kv),
                config(false, KYVERNO_MUTATING_CONFIGURATION, true, km),
                config(
                    true,
                    KYVERNO_POLICY_CONFIGURATION,
                    true,
                    policy_hook.into_iter().collect(),
                ),
            ]
        } else {
            v_hooks.extend(policy_hook);
            v_hooks.extend(kv);
            m_hooks.extend(km);
            vec![
                config(true, &settings.name, false, v_hooks),
                config(false, &settings.name, false, m_hooks),
            ]
        };
        Configurations { items }
    }

    /// The body of a configuration, if it is registered.
    pub fn body(&self, validating: bool, name: &str) -> Option<&Value> {
        self.items
            .iter()
            .find(|c| c.validating == validating && c.name == name)
            .and_then(|c| c.body.as_ref())
    }
}

fn api_error(what: String, e: kube::Error) -> ClusterError {
    ClusterError::Api {
        what,
        message: e.to_string(),
    }
}

/// Creates or updates each configuration (or removes the ones with no webhook).
pub async fn apply(client: &Client, configurations: &Configurations) -> Result<(), ClusterError> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    for c in &configurations.items {
        let name = c.name.as_str();
        match (&c.body, c.validating) {
            (Some(body), true) => {
                validating
                    .patch(name, &params, &Patch::Apply(body))
                    .await
                    .map_err(|e| {
                        api_error(format!("apply ValidatingWebhookConfiguration {name}"), e)
                    })?;
            }
            (Some(body), false) => {
                mutating
                    .patch(name, &params, &Patch::Apply(body))
                    .await
                    .map_err(|e| {
                        api_error(format!("apply MutatingWebhookConfiguration {name}"), e)
                    })?;
            }
            (None, true) => delete(&validating, name).await?,
            (None, false) => delete(&mutating, name).await?,
        }
    }
    Ok(())
}

async fn delete<K>(api: &Api<K>, name: &str) -> Result<(), ClusterError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(api_error(format!("delete webhook configuration {name}"), e)),
    }
}

/// Removes the configurations of `names` ([`configuration_names`]; absent ones are fine).
pub async fn remove(client: &Client, names: &[(bool, String)]) -> Result<(), ClusterError> {
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    for (is_validating, name) in names {
        if *is_validating {
            delete(&validating, name).await?;
        } else {
            delete(&mutating, name).await?;
        }
    }
    Ok(())
}

/// Keeps the registered configurations in step with the policies: each reload hands it the
/// configurations wanted ([`Registrar::desire`]); a task applies the latest, retrying every
/// few seconds while the API server refuses, and skipping what is already applied.
#[derive(Debug)]
pub struct Registrar {
    desired: tokio::sync::watch::Sender<Option<Configurations>>,
    task: tokio::task::JoinHandle<()>,
}

/// How long a failed apply waits before it is tried again.
const RETRY: std::time::Duration = std::time::Duration::from_secs(5);

impl Registrar {
    /// Starts the task on the current runtime; `applied` is what is registered already.
    pub fn spawn(client: Client, name: String, applied: Option<Configurations>) -> Registrar {
        let (desired, mut rx) = tokio::sync::watch::channel(None::<Configurations>);
        let task = tokio::spawn(async move {
            let mut applied = applied;
            while rx.changed().await.is_ok() {
                let Some(wanted) = rx.borrow_and_update().clone() else {
                    continue;
                };
                if applied.as_ref() == Some(&wanted) {
                    continue;
                }
                loop {
                    match apply(&client, &wanted).await {
                        Ok(()) => {
                            tracing::info!(name = %name, "webhook configurations updated");
                            applied = Some(wanted);
                            break;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "webhook configurations not updated; retrying");
                            tokio::select! {
                                _ = tokio::time::sleep(RETRY) => {}
                                changed = rx.changed() => {
                                    if changed.is_err() {
                                        return;
                                    }
                                    rx.mark_changed();
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        });
        Registrar { desired, task }
    }

    /// The configurations wanted now (the latest wins).
    pub fn desire(&self, configurations: Configurations) {
        self.desired.send_replace(Some(configurations));
    }
}

impl Drop for Registrar {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use celer_policy::load::Manifests;

    fn set(text: &str) -> PolicySet {
        let mut manifests = Manifests::default();
        manifests.add_text("test.yaml", text);
        let set = PolicySet::build(&manifests);
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        set
    }

    fn settings() -> WebhookSettings {
        WebhookSettings {
            name: "celer".into(),
            endpoint: Endpoint::Url("https://127.0.0.1:8443/".into()),
            ca_bundle: b"PEM".to_vec(),
            failure_policy: "Fail".into(),
            timeout_seconds: 5,
            exclude_namespaces: vec!["kube-system".into()],
            kyverno_configurations: false,
            validate_policy_objects: false,
            generating: Vec::new(),
            annotations: vec![("admissions.enforcer/disabled".into(), "true".into())],
            owner: None,
        }
    }

    const VALIDATING: &str = "
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: pods}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  validations: [{expression: 'true'}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: pods}
spec: {policyName: pods, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: apps}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: ['*'], operations: ['*'], resources: ['deployments/*', '*']}
    - {apiGroups: [apps], apiVersions: [v1], operations: [DELETE], resources: [deployments/scale]}
  validations: [{expression: 'true'}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: apps}
spec: {policyName: apps, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: unbound}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
  validations: [{expression: 'true'}]
";

    #[test]
    fn generating_policies_get_kyvernos_gpol_webhooks() {
        let mut manifests = celer_policy::load::Manifests::default();
        manifests.add_text(
            "g.yaml",
            r#"
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: plain}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [namespaces]}
  generate:
  - expression: "true"
---
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: red}
spec:
  evaluation: {synchronize: {enabled: true}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}
  matchConditions:
  - {name: red, expression: "object.metadata.labels['color'] == 'red'"}
  generate:
  - expression: "true"
"#,
        );
        let loaded = celer_policy::kyverno::generating::load(&manifests);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let mut s = settings();
        s.generating = loaded.policies.iter().filter_map(|p| p.webhook()).collect();
        let configurations = Configurations::new(&s, &set(""), &set(""));
        let body = configurations.body(true, &s.name).unwrap();
        let hooks = body["webhooks"].as_array().unwrap();
        let names: Vec<&str> = hooks.iter().map(|h| h["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "gpol.validate.kyverno.svc-ignore",
                "gpol.validate.kyverno.svc-ignore-finegrained-red"
            ]
        );
        let plain = &hooks[0];
        assert_eq!(plain["failurePolicy"], "Ignore");
        assert_eq!(plain["sideEffects"], "NoneOnDryRun");
        assert_eq!(
            plain["rules"][0]["operations"],
            json!(["CONNECT", "CREATE", "DELETE", "UPDATE"])
        );
        assert!(
            plain["clientConfig"]["url"]
                .as_str()
                .unwrap()
                .ends_with("/gpol/plain")
        );
        // Synchronized: its conditions only filter creations.
        assert_eq!(
            hooks[1]["matchConditions"][0]["expression"],
            "request.operation != 'CREATE' || (object.metadata.labels['color'] == 'red')"
        );
    }

    #[test]
    fn rules_name_what_bound_policies_match() {
        let rules = validating_rules(&set(VALIDATING));
        let rule = |g: &str, ops: &[&str], res: &[&str]| WebhookRule {
            api_group: g.into(),
            operations: ops.iter().map(|s| s.to_string()).collect(),
            resources: res.iter().map(|s| s.to_string()).collect(),
        };
        // The unbound policy on jobs adds nothing; `*` operations absorb DELETE.
        assert_eq!(
            rules,
            vec![
                rule("", &["CREATE", "UPDATE"], &["pods"]),
                rule("apps", &["*"], &["*", "deployments/*"]),
                rule("apps", &["DELETE"], &["deployments/scale"]),
            ]
        );
    }

    #[test]
    fn gatekeeper_mutators_register_every_resource_on_create_and_update() {
        let mutating = set("
apiVersion: mutations.gatekeeper.sh/v1
kind: AssignMetadata
metadata: {name: owner}
spec:
  location: metadata.labels.owner
  parameters: {assign: {value: me}}
");
        assert_eq!(
            mutating_rules(&mutating),
            vec![WebhookRule {
                api_group: "*".into(),
                operations: vec!["CREATE".into(), "UPDATE".into()],
                resources: vec!["*".into()],
            }]
        );
    }

    #[test]
    fn kyverno_policies_get_kyvernos_webhooks() {
        let validating = set("
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: b}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations: [{expression: 'true'}]
---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: a}
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations: [{expression: 'true'}]
---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: fine}
spec:
  webhookConfiguration: {timeoutSeconds: 20}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations: [{expression: 'true'}]
");
        // Kyverno's CEL policies are not on the shared webhook.
        assert!(validating_rules(&validating).is_empty());
        let mut s = settings();
        s.kyverno_configurations = true;
        s.endpoint = Endpoint::Service {
            namespace: "kyverno".into(),
            name: "kyverno-svc".into(),
            port: 443,
        };
        s.exclude_namespaces.push("kyverno".into());
        let c = Configurations::new(&s, &validating, &set(""));
        assert!(c.body(true, "celer").is_none());
        let v = c.body(true, KYVERNO_VALIDATING_CONFIGURATION).unwrap();
        assert_eq!(
            v["metadata"]["labels"],
            json!({"webhook.kyverno.io/managed-by": "kyverno"})
        );
        // Kyverno's default webhook annotation, which its tests assert.
        assert_eq!(
            v["metadata"]["annotations"],
            json!({"admissions.enforcer/disabled": "true"})
        );
        let hooks = v["webhooks"].as_array().unwrap();
        let summary: Vec<(&str, &str, &str, u64)> = hooks
            .iter()
            .map(|h| {
                (
                    h["name"].as_str().unwrap(),
                    h["clientConfig"]["service"]["path"].as_str().unwrap(),
                    h["failurePolicy"].as_str().unwrap(),
                    h["timeoutSeconds"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("vpol.validate.kyverno.svc-fail", "/vpol/a/b", "Fail", 5),
                (
                    "vpol.validate.kyverno.svc-fail-finegrained-fine",
                    "/vpol/fine",
                    "Fail",
                    20
                ),
                ("vpol.validate.kyverno.svc-ignore", "/vpol/a/b", "Ignore", 5),
            ]
        );
        assert_eq!(hooks[0]["sideEffects"], "NoneOnDryRun");
        assert_eq!(
            hooks[0]["rules"],
            json!([{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                    "resources": ["deployments"], "scope": "*"}])
        );
        assert_eq!(
            hooks[0]["namespaceSelector"]["matchExpressions"][1]["values"],
            json!(["kyverno"])
        );
        assert!(c.body(true, KYVERNO_POLICY_CONFIGURATION).is_none());
        s.validate_policy_objects = true;
        let c = Configurations::new(&s, &validating, &set(""));
        let policy = &c.body(true, KYVERNO_POLICY_CONFIGURATION).unwrap()["webhooks"][0];
        assert_eq!(policy["name"], POLICY_WEBHOOK);
        assert_eq!(policy["clientConfig"]["service"]["path"], "/policyvalidate");
        assert_eq!(policy["failurePolicy"], "Ignore");
        // In celer's own configurations by default.
        let c = Configurations::new(&settings(), &validating, &set(""));
        assert_eq!(c.items.len(), 2);
        assert_eq!(
            c.body(true, "celer").unwrap()["webhooks"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        // ClusterPolicy rules match kinds: every resource, as for Constraints.
        let classic = set("
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: c}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate: {cel: {expressions: [{expression: 'true'}]}}
");
        let rules = validating_rules(&classic);
        assert!(
            rules
                .iter()
                .any(|r| r.api_group == "*" && r.resources == ["*"]),
            "{rules:?}"
        );
        // Subresources are named, on every operation, with a Pod's ephemeral containers.
        let classic = set("
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: c, annotations: {pod-policies.kyverno.io/autogen-controllers: none}}
spec:
  rules:
  - name: r
    match: {any: [{resources: {kinds: [StatefulSet/scale, Pod]}}]}
    validate: {cel: {expressions: [{expression: 'true'}]}}
");
        let rules = validating_rules(&classic);
        let with = |resource: &str| {
            (rules.iter())
                .filter(|r| r.resources.iter().any(|x| x == resource))
                .flat_map(|r| r.operations.iter().map(String::as_str))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            with("*/scale"),
            ["CONNECT", "CREATE", "DELETE", "UPDATE"],
            "{rules:?}"
        );
        assert_eq!(
            with("pods/ephemeralcontainers"),
            ["CONNECT", "CREATE", "DELETE", "UPDATE"]
        );
        assert_eq!(with("*"), ["CREATE", "DELETE", "UPDATE"]);
    }

    #[test]
    fn kyverno_mutating_policies_get_their_kinds_webhook() {
        let mutating = set("
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: m}
spec:
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: 'Object{}'}
");
        assert!(mutating_rules(&mutating).is_empty());
        let c = Configurations::new(&settings(), &set(""), &mutating);
        let hook = &c.body(false, "celer").unwrap()["webhooks"][0];
        assert_eq!(hook["name"], "mpol.validate.kyverno.svc-fail");
        assert_eq!(hook["clientConfig"]["url"], "https://127.0.0.1:8443/mpol/m");
        assert_eq!(hook["reinvocationPolicy"], "IfNeeded");
    }

    #[test]
    fn configurations_carry_the_settings() {
        let validating = set(VALIDATING);
        let mutating = set("
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: inject}
spec:
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: 'Object{}'}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: inject}
spec: {policyName: inject}
");
        let c = Configurations::new(&settings(), &validating, &mutating);
        let v = c.body(true, "celer").unwrap();
        assert_eq!(v["kind"], "ValidatingWebhookConfiguration");
        assert_eq!(v["metadata"]["name"], "celer");
        let hook = &v["webhooks"][0];
        assert_eq!(hook["name"], VALIDATING_WEBHOOK);
        assert_eq!(
            hook["clientConfig"]["url"],
            "https://127.0.0.1:8443/validate/shared"
        );
        assert_eq!(
            hook["namespaceSelector"],
            json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]})
        );
        assert_eq!(hook["clientConfig"]["caBundle"], "UEVN");
        assert_eq!(hook["failurePolicy"], "Fail");
        assert_eq!(hook["sideEffects"], "None");
        assert_eq!(hook["timeoutSeconds"], 5);
        assert_eq!(hook["admissionReviewVersions"], json!(["v1"]));
        assert!(hook.get("reinvocationPolicy").is_none());
        let m = c.body(false, "celer").unwrap();
        let hook = &m["webhooks"][0];
        assert_eq!(
            hook["clientConfig"]["url"],
            "https://127.0.0.1:8443/mutate/shared"
        );
        assert_eq!(hook["reinvocationPolicy"], "IfNeeded");
        assert_eq!(
            hook["rules"],
            json!([{"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE"],
                    "resources": ["pods"], "scope": "*"}])
        );
        assert!(v["metadata"].get("ownerReferences").is_none());
    }

    /// With an owner, every configuration names it, so that deleting the installation's
    /// ClusterRole deletes them (garbage collection).
    #[test]
    fn configurations_name_their_owner() {
        let mut s = settings();
        s.kyverno_configurations = true;
        s.owner = Some(crate::owner::Owner {
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: "ClusterRole".into(),
            name: "celer-admission".into(),
            uid: "u-1".into(),
        });
        let c = Configurations::new(&s, &set(VALIDATING), &set(""));
        let v = c.body(true, "celer").unwrap();
        assert_eq!(
            v["metadata"]["ownerReferences"],
            json!([{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "name": "celer-admission", "uid": "u-1"}])
        );
    }

    #[test]
    fn nothing_to_match_registers_nothing_and_services_are_referenced() {
        let empty = set("");
        let mut s = settings();
        s.endpoint = Endpoint::Service {
            namespace: "celer-system".into(),
            name: "celer".into(),
            port: 443,
        };
        let c = Configurations::new(&s, &set(VALIDATING), &empty);
        assert!(c.body(false, "celer").is_none());
        assert_eq!(reinvocation(&empty), "Never");
        let config = &c.body(true, "celer").unwrap()["webhooks"][0]["clientConfig"];
        assert_eq!(
            config["service"],
            json!({"namespace": "celer-system", "name": "celer", "path": "/validate/shared", "port": 443})
        );
        assert!(config.get("url").is_none());
        let none = Configurations::new(&s, &empty, &empty);
        assert!(none.items.iter().all(|c| c.body.is_none()));
    }
}
