//! The status of the policy objects celer serves (issue 16 item 3), written as the engine it
//! replaces writes it, so that kubectl, GitOps health checks and Kyverno's own chainsaw tests
//! read the same fields:
//!
//! - Kyverno's CEL kinds: `status.conditionStatus` with `ready` and two conditions,
//!   `WebhookConfigured` and `RBACPermissionsGranted` (the permissions a background scan needs
//!   on the matched resources, checked with SelfSubjectAccessReviews);
//! - Kyverno's ClusterPolicy and Policy: `status.conditions` with `Ready`, and `status.ready`;
//! - Gatekeeper's ConstraintTemplate: `status.created` (its Constraint kind is served) and
//!   `status.byPod[]` with this replica's entry (errors included); a Constraint:
//!   `status.byPod[]` with `enforced`.
//!
//! Written with server-side apply to the status subresource, by a field manager of this
//! replica, only when what it says changes (condition times are kept across writes that change
//! nothing else). Writes are paced, so a restart with 5,000 policies does not flood the API
//! server.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_cel::Json;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};
use tokio::sync::watch;

/// A served policy object, as the status writer needs it.
#[derive(Debug, Clone)]
pub struct PolicyObject {
    pub resource: ApiResource,
    pub namespace: String,
    pub name: String,
    pub object: Arc<Json>,
}

/// What the last load made of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Compiled and served.
    Served,
    /// Left out of the set, with every reason.
    LeftOut(Vec<String>),
}

/// What the writer is told after each load.
#[derive(Debug, Clone, Default)]
pub struct Desired {
    pub objects: Vec<(PolicyObject, Health)>,
    /// The Constraint kinds the API server serves (a template's `status.created`).
    pub constraint_kinds: Vec<String>,
}

/// How the writer is set up.
#[derive(Debug, Clone)]
pub struct StatusSettings {
    /// This replica's name (the Pod's), for `byPod[].id` and the field manager.
    pub replica: String,
    /// Whether celer registers the webhook configurations itself (`WebhookConfigured`).
    pub registers_webhooks: bool,
    /// The user whose permissions decide `RBACPermissionsGranted` (the identity that scans
    /// and reports, as Kyverno checks its reports controller's service account); `None`:
    /// this replica's own (SelfSubjectAccessReviews).
    pub reports_user: Option<String>,
}

/// Writes statuses in the background: [`StatusWriter::desire`] hands it the latest load.
#[derive(Debug)]
pub struct StatusWriter {
    desired: watch::Sender<Option<Arc<Desired>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StatusWriter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Status writes per second at most.
const WRITES_PER_SECOND: u32 = 50;

/// How long a granted permission is believed (RBAC can change while celer runs).
const PERMISSIONS_TTL: Duration = Duration::from_secs(60);
/// How long a missing one is, and how soon statuses that lack one are checked again: RBAC is
/// often applied beside the policy, and aggregated into its ClusterRole moments later.
const MISSING_TTL: Duration = Duration::from_secs(2);
const RECHECK: Duration = Duration::from_secs(3);
const RECHECK_MAX: Duration = Duration::from_secs(60);

impl StatusWriter {
    pub fn spawn(client: Client, settings: StatusSettings) -> StatusWriter {
        let (desired, mut rx) = watch::channel(None::<Arc<Desired>>);
        let task = tokio::spawn(async move {
            let mut writer = Writer {
                client,
                settings,
                written: HashMap::new(),
                permissions: HashMap::new(),
                missing: false,
            };
            let mut recheck = false;
            let mut delay = RECHECK;
            loop {
                if recheck {
                    // A permission was missing: look again soon (less often while it stays
                    // missing), or at the next load.
                    tokio::select! {
                        changed = rx.changed() => {
                            if changed.is_err() {
                                break;
                            }
                            delay = RECHECK;
                        }
                        () = tokio::time::sleep(delay) => delay = (delay * 2).min(RECHECK_MAX),
                    }
                } else if rx.changed().await.is_err() {
                    break;
                } else {
                    delay = RECHECK;
                }
                let Some(desired) = rx.borrow_and_update().clone() else {
                    continue;
                };
                writer.missing = false;
                writer.write_all(&desired).await;
                recheck = writer.missing;
            }
        });
        StatusWriter { desired, task }
    }

    /// The statuses wanted now (the latest wins).
    pub fn desire(&self, desired: Desired) {
        self.desired.send_replace(Some(Arc::new(desired)));
    }
}

/// `(group, kind, namespace, name, uid)` of an object. The uid counts: a policy deleted and
/// created again under its name (Kyverno's chainsaw tests reuse names) is a new object whose
/// status must be written, even when it equals the one written for its predecessor.
type ObjectKey = (String, String, String, String, String);

fn object_key(object: &PolicyObject) -> ObjectKey {
    let uid = (object.object.get("metadata"))
        .and_then(|m| m.get("uid"))
        .and_then(|u| u.as_str())
        .unwrap_or_default();
    (
        object.resource.group.clone(),
        object.resource.kind.clone(),
        object.namespace.clone(),
        object.name.clone(),
        uid.to_string(),
    )
}

struct Writer {
    client: Client,
    settings: StatusSettings,
    /// What was last written per object: the status without condition times, and the status.
    written: HashMap<ObjectKey, (Value, Value)>,
    /// `(verb, group, version, resource)` -> why it is denied (`None`: allowed), checked at.
    permissions: HashMap<PermissionKey, (Option<String>, Instant)>,
    /// Whether the last pass found a permission missing.
    missing: bool,
}

impl Writer {
    async fn write_all(&mut self, desired: &Desired) {
        let pace = Duration::from_secs(1) / WRITES_PER_SECOND;
        // Objects gone (deleted, or replaced under their name) are forgotten.
        let present: std::collections::HashSet<ObjectKey> =
            desired.objects.iter().map(|(o, _)| object_key(o)).collect();
        self.written.retain(|key, _| present.contains(key));
        for (object, health) in &desired.objects {
            let Some(status) = self.status_of(object, health, desired).await else {
                continue;
            };
            let key = object_key(object);
            let timeless = without_times(&status);
            let previous = self.written.get(&key);
            if previous.is_some_and(|(t, _)| *t == timeless) {
                continue;
            }
            let status = keep_times(status, previous.map(|(_, s)| s));
            match self.apply(object, &status).await {
                Ok(()) => {
                    self.written.insert(key, (timeless, status));
                }
                Err(e) => {
                    tracing::warn!(policy = %object.name, kind = %object.resource.kind, error = %e, "policy status not written");
                }
            }
            tokio::time::sleep(pace).await;
        }
    }

    async fn apply(&self, object: &PolicyObject, status: &Value) -> Result<(), kube::Error> {
        let api: Api<DynamicObject> = if object.namespace.is_empty() {
            Api::all_with(self.client.clone(), &object.resource)
        } else {
            Api::namespaced_with(self.client.clone(), &object.namespace, &object.resource)
        };
        let body = json!({
            "apiVersion": object.resource.api_version,
            "kind": object.resource.kind,
            "metadata": {"name": object.name},
            "status": status,
        });
        let manager = format!("celer-{}", self.settings.replica);
        let params = PatchParams::apply(&manager).force();
        api.patch_status(&object.name, &params, &Patch::Apply(&body))
            .await
            .map(|_| ())
    }

    /// The status an object should have; `None` for kinds without one (PolicyException).
    async fn status_of(
        &mut self,
        object: &PolicyObject,
        health: &Health,
        desired: &Desired,
    ) -> Option<Value> {
        let generation = object
            .object
            .get("metadata")
            .and_then(|m| m.get("generation"))
            .and_then(|g| g.as_i64())
            .unwrap_or(0);
        let uid = (object.object.get("metadata"))
            .and_then(|m| m.get("uid"))
            .and_then(|u| u.as_str())
            .unwrap_or_default()
            .to_string();
        match (
            object.resource.group.as_str(),
            object.resource.kind.as_str(),
        ) {
            ("policies.kyverno.io", "PolicyException") => None,
            ("policies.kyverno.io", kind) => {
                // Kyverno checks the permissions of background scans only where the policy
                // runs in the background.
                let background = (object.object.get("spec"))
                    .and_then(|s| s.get("evaluation"))
                    .and_then(|e| e.get("background"))
                    .and_then(|b| b.get("enabled"))
                    .and_then(|e| e.as_bool())
                    .unwrap_or(true);
                let admission = (object.object.get("spec"))
                    .and_then(|s| s.get("evaluation"))
                    .and_then(|e| e.get("admission"))
                    .and_then(|b| b.get("enabled"))
                    .and_then(|e| e.as_bool())
                    .unwrap_or(true);
                let autogen = match kind {
                    "ValidatingPolicy" | "NamespacedValidatingPolicy" => {
                        Some(autogen_of(&object.object, false))
                    }
                    "MutatingPolicy" | "NamespacedMutatingPolicy" => {
                        Some(autogen_of(&object.object, true))
                    }
                    _ => None,
                };
                // The resources of the policy and of every autogen'd config, as Kyverno's
                // reports controller watches them.
                let mut resources = matched_resources(&object.object);
                let configs = (autogen.as_ref())
                    .and_then(|a| a.get("configs"))
                    .and_then(Value::as_object);
                for config in configs.into_iter().flat_map(|c| c.values()) {
                    if let Some(spec) = config.get("spec")
                        && let Ok(spec) = sonic_rs::from_str::<Json>(&spec.to_string())
                    {
                        let mut wrapped = sonic_rs::Object::new();
                        wrapped.insert(&"spec", spec);
                        resources.extend(matched_resources(&Json::from(wrapped)));
                    }
                }
                let missing = match background {
                    true => Some(self.missing_permissions(resources).await),
                    false => None,
                };
                let has_autogen = configs.is_some_and(|c| !c.is_empty());
                let mut status = kyverno_cel_status(
                    &self.settings,
                    health,
                    missing.as_deref(),
                    has_autogen,
                    admission,
                );
                if let Some(autogen) = autogen {
                    status["autogen"] = autogen;
                }
                Some(status)
            }
            ("kyverno.io", "PolicyException") => None,
            ("kyverno.io", _) => {
                let mut status = classic_status(health);
                let rules = crate::classic_autogen::autogen_rules(&object.object);
                status["rulecount"] = crate::classic_autogen::rule_count(&object.object, &rules);
                // Kyverno omits an empty list.
                status["autogen"] = match rules.is_empty() {
                    true => json!({}),
                    false => json!({"rules": rules}),
                };
                Some(status)
            }
            ("templates.gatekeeper.sh", _) => {
                let kind = (object.object.get("spec"))
                    .and_then(|s| s.get("crd"))
                    .and_then(|c| c.get("spec"))
                    .and_then(|s| s.get("names"))
                    .and_then(|n| n.get("kind"))
                    .and_then(|k| k.as_str())
                    .unwrap_or_default();
                let created = desired.constraint_kinds.iter().any(|k| k == kind);
                let mut entry = json!({
                    "id": self.settings.replica,
                    "observedGeneration": generation,
                    "operations": ["webhook"],
                    "templateUID": uid,
                });
                if let Health::LeftOut(reasons) = health {
                    entry["errors"] = (reasons.iter())
                        .map(|m| json!({"code": "ingest_error", "message": m}))
                        .collect();
                }
                Some(json!({"created": created, "byPod": [entry]}))
            }
            (super::sources::CONSTRAINTS_GROUP, _) => {
                let mut entry = json!({
                    "id": self.settings.replica,
                    "observedGeneration": generation,
                    "operations": ["webhook"],
                    "constraintUID": uid,
                    "enforced": *health == Health::Served,
                });
                if let Health::LeftOut(reasons) = health {
                    entry["errors"] = (reasons.iter())
                        .map(|m| json!({"code": "ingest_error", "message": m}))
                        .collect();
                }
                Some(json!({"byPod": [entry]}))
            }
            _ => None,
        }
    }
}

/// A ValidatingPolicy's `status.autogen`: the policies autogen derives from it, as Kyverno
/// lists them (`celer_policy::kyverno::autogen::validating_status`).
fn autogen_of(object: &Json, mutating: bool) -> Value {
    let Some(spec) = object.get("spec") else {
        return json!({});
    };
    let status = match mutating {
        false => celer_policy::kyverno::autogen::validating_status(spec),
        true => celer_policy::kyverno::autogen::mutating_status(spec),
    };
    (sonic_rs::to_string(&status).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| json!({}))
}

/// Kyverno's CEL kinds: `conditionStatus` with `ready` and its two conditions.
/// `(verb, group, version, resource)`.
type PermissionKey = (String, String, String, String);

/// `missing`: the permissions a background scan lacks; `None` when the policy does not run in
/// the background. `admission`: `evaluation.admission.enabled`; without admission no webhook
/// is configured for the policy and Kyverno writes no `WebhookConfigured` condition.
fn kyverno_cel_status(
    settings: &StatusSettings,
    health: &Health,
    missing: Option<&[String]>,
    has_autogen: bool,
    admission: bool,
) -> Value {
    let webhook = match (health, settings.registers_webhooks) {
        (Health::LeftOut(reasons), _) => {
            condition("WebhookConfigured", false, "Failed", &reasons.join("; "))
        }
        (Health::Served, true) => condition(
            "WebhookConfigured",
            true,
            "Succeeded",
            "Webhook configured.",
        ),
        (Health::Served, false) => json!({
            "type": "WebhookConfigured",
            "status": "Unknown",
            "reason": "External",
            "message": "celer does not manage the webhook configurations (--register-webhooks is off).",
        }),
    };
    let rbac = if let Some([]) = missing {
        condition(
            "RBACPermissionsGranted",
            true,
            "Succeeded",
            "Policy is ready for reporting.",
        )
    } else if missing.is_none() {
        condition(
            "RBACPermissionsGranted",
            true,
            "Succeeded",
            "Background scanning disabled; reporting permissions not required.",
        )
    } else {
        condition(
            "RBACPermissionsGranted",
            false,
            "Failed",
            &format!(
                "Policy is not ready for reporting, missing permissions: {}.{}",
                missing.unwrap_or_default().join("; "),
                if has_autogen {
                    " If this is for an autogen'd custom workload CRD, grant it via reportsController.rbac.clusterRole.extraResources in the Helm values (or an equivalent ClusterRole labeled rbac.kyverno.io/aggregate-to-reports-controller)."
                } else {
                    ""
                }
            ),
        )
    };
    let conditions = match (health, admission) {
        (Health::Served, false) => vec![rbac],
        _ => vec![webhook, rbac],
    };
    json!({
        "conditionStatus": {
            "ready": *health == Health::Served,
            "conditions": conditions,
        }
    })
}

impl Writer {
    /// The get/list/watch permissions a background scan of the policy's resources needs and
    /// this replica lacks, as Kyverno words them: `verb group/version, Resource=resource:
    /// reason`.
    async fn missing_permissions(
        &mut self,
        resources: Vec<(String, String, String)>,
    ) -> Vec<String> {
        let mut missing = Vec::new();
        for (group, version, resource) in resources {
            for verb in ["get", "list", "watch"] {
                if let Some(reason) = self.denied(verb, &group, &version, &resource).await {
                    missing.push(format!(
                        "{verb} {group}/{version}, Resource={resource}: {reason}"
                    ));
                }
            }
        }
        missing
    }

    /// Why `verb` on the resource is denied to this replica (the review's reason, often
    /// empty), `None` when it is allowed.
    async fn denied(
        &mut self,
        verb: &str,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Option<String> {
        let key = (
            verb.to_string(),
            group.to_string(),
            version.to_string(),
            resource.to_string(),
        );
        if let Some((denied, at)) = self.permissions.get(&key) {
            let ttl = if denied.is_some() {
                MISSING_TTL
            } else {
                PERMISSIONS_TTL
            };
            if at.elapsed() < ttl {
                self.missing |= denied.is_some();
                return denied.clone();
            }
        }
        // As Kyverno asks: the resource as the rule writes it (a subresource included in it).
        let attributes = ResourceAttributes {
            verb: Some(verb.to_string()),
            group: Some(group.to_string()),
            version: Some(version.to_string()),
            resource: Some(resource.to_string()),
            ..ResourceAttributes::default()
        };
        let user = self.settings.reports_user.as_deref();
        let answer = crate::access::denied(&self.client, user, attributes).await;
        let denied = match answer {
            Ok(denied) => denied,
            Err(e) => {
                tracing::warn!(verb, group, resource, error = %e, "permission not checked");
                Some(e.to_string())
            }
        };
        self.missing |= denied.is_some();
        self.permissions
            .insert(key, (denied.clone(), Instant::now()));
        denied
    }
}

/// `(group, version, resource)` triples a Kyverno CEL policy's
/// `matchConstraints.resourceRules` name, as written (a subresource kept in the resource) and
/// in order, as Kyverno's policy status controller resolves them for its permission check.
fn matched_resources(object: &Json) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let rules = (object.get("spec"))
        .and_then(|s| s.get("matchConstraints"))
        .and_then(|m| m.get("resourceRules"))
        .and_then(|r| r.as_array());
    for rule in rules.into_iter().flat_map(|r| r.iter()) {
        let strings = |field: &str| -> Vec<String> {
            (rule.get(field).and_then(|v| v.as_array()))
                .into_iter()
                .flat_map(|a| a.iter())
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        for group in strings("apiGroups") {
            for version in strings("apiVersions") {
                for resource in strings("resources") {
                    out.push((group.clone(), version.clone(), resource));
                }
            }
        }
    }
    out
}

fn condition(kind: &str, ok: bool, reason: &str, message: &str) -> Value {
    json!({
        "type": kind,
        "status": if ok { "True" } else { "False" },
        "reason": reason,
        "message": message,
    })
}

/// ClusterPolicy and Policy: a `Ready` condition, and the older `ready` field.
fn classic_status(health: &Health) -> Value {
    let ready = match health {
        Health::Served => condition("Ready", true, "Succeeded", "Ready"),
        Health::LeftOut(reasons) => condition("Ready", false, "Failed", &reasons.join("; ")),
    };
    json!({"ready": *health == Health::Served, "conditions": [ready]})
}

/// Every condition list in a status: `conditions` at the top or under `conditionStatus`.
fn condition_lists(status: &mut Value) -> Vec<&mut Vec<Value>> {
    let mut lists = Vec::new();
    if let Some(object) = status.as_object_mut() {
        for (key, value) in object.iter_mut() {
            match (key.as_str(), value) {
                ("conditions", Value::Array(list)) => lists.push(list),
                ("conditionStatus", Value::Object(inner)) => {
                    if let Some(Value::Array(list)) = inner.get_mut("conditions") {
                        lists.push(list);
                    }
                }
                _ => {}
            }
        }
    }
    lists
}

/// The status without `lastTransitionTime`s: what decides whether it changed.
fn without_times(status: &Value) -> Value {
    let mut status = status.clone();
    for list in condition_lists(&mut status) {
        for c in list.iter_mut() {
            if let Some(c) = c.as_object_mut() {
                c.remove("lastTransitionTime");
            }
        }
    }
    status
}

/// Gives each condition its `lastTransitionTime`: the previous one when its status did not
/// change, else now.
fn keep_times(mut status: Value, previous: Option<&Value>) -> Value {
    let now = serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now(),
    ))
    .unwrap_or(Value::Null);
    let mut previous = previous.cloned().unwrap_or(Value::Null);
    let before: BTreeMap<String, (Value, Value)> = condition_lists(&mut previous)
        .into_iter()
        .flat_map(|l| l.iter())
        .filter_map(|c| {
            let kind = c.get("type")?.as_str()?.to_string();
            let state = c.get("status")?.clone();
            let time = c.get("lastTransitionTime")?.clone();
            Some((kind, (state, time)))
        })
        .collect();
    for list in condition_lists(&mut status) {
        for c in list.iter_mut() {
            let kind = c.get("type").and_then(|t| t.as_str()).unwrap_or_default();
            let time = match before.get(kind) {
                Some((state, time)) if Some(state) == c.get("status") => time.clone(),
                _ => now.clone(),
            };
            if let Some(c) = c.as_object_mut() {
                c.insert("lastTransitionTime".to_string(), time);
            }
        }
    }
    status
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_created_again_under_its_name_is_a_new_object() {
        let object = |uid: &str| PolicyObject {
            resource: ApiResource {
                group: "policies.kyverno.io".into(),
                version: "v1".into(),
                api_version: "policies.kyverno.io/v1".into(),
                kind: "ValidatingPolicy".into(),
                plural: "validatingpolicies".into(),
            },
            namespace: String::new(),
            name: "check-labels".into(),
            object: Arc::new(sonic_rs::json!({"metadata": {"name": "check-labels", "uid": uid}})),
        };
        assert_eq!(object_key(&object("a")), object_key(&object("a")));
        assert_ne!(object_key(&object("a")), object_key(&object("b")));
    }

    #[test]
    fn the_resources_a_policy_matches_are_read_from_its_rules() {
        // As Kyverno resolves them: every group, version and resource as written, in order,
        // subresources kept (Kyverno asks for `pods/ephemeralcontainers` itself).
        let policy: Json = sonic_rs::from_str(
            r#"{"spec":{"matchConstraints":{"resourceRules":[
                {"apiGroups":[""],"apiVersions":["v1"],"resources":["pods","pods/status"]},
                {"apiGroups":["apps",""],"apiVersions":["v1"],"resources":["deployments"]}]}}}"#,
        )
        .unwrap();
        let triple = |g: &str, v: &str, r: &str| (g.to_string(), v.to_string(), r.to_string());
        assert_eq!(
            matched_resources(&policy),
            [
                triple("", "v1", "pods"),
                triple("", "v1", "pods/status"),
                triple("apps", "v1", "deployments"),
                triple("", "v1", "deployments"),
            ]
        );
    }

    #[test]
    fn a_validating_policy_for_pods_lists_its_autogen_policies() {
        let object: Json = sonic_rs::from_str(
            r#"{"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}]},"validations":[{"expression":"object.spec.hostPID != true"}]}}"#,
        )
        .unwrap();
        let status = autogen_of(&object, false);
        assert_eq!(
            status["configs"]["defaults"]["spec"]["validations"][0]["expression"],
            "object.spec.template.spec.hostPID != true"
        );
        assert_eq!(
            status["configs"]["cronjobs"]["spec"]["matchConstraints"]["resourceRules"][0]["resources"],
            json!(["cronjobs"])
        );
        let deployments: Json = sonic_rs::from_str(
            r#"{"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]}}}"#,
        )
        .unwrap();
        assert_eq!(autogen_of(&deployments, false), json!({}));
    }

    #[test]
    fn a_served_kyverno_policy_says_what_kyvernos_ready_check_reads() {
        let settings = StatusSettings {
            replica: "celer-0".to_string(),
            registers_webhooks: true,
            reports_user: None,
        };
        let status = kyverno_cel_status(&settings, &Health::Served, Some(&[]), false, true);
        assert_eq!(
            status,
            json!({"conditionStatus": {"ready": true, "conditions": [
                {"type": "WebhookConfigured", "status": "True", "reason": "Succeeded", "message": "Webhook configured."},
                {"type": "RBACPermissionsGranted", "status": "True", "reason": "Succeeded", "message": "Policy is ready for reporting."},
            ]}})
        );
        // A policy that does not run in the background needs no read permission.
        let off = kyverno_cel_status(&settings, &Health::Served, None, false, true);
        assert_eq!(
            off["conditionStatus"]["conditions"][1]["message"],
            "Background scanning disabled; reporting permissions not required."
        );
        let missing = vec!["list apps/v1, Resource=deployments: ".to_string()];
        let left_out = kyverno_cel_status(
            &settings,
            &Health::LeftOut(vec!["expression does not compile".to_string()]),
            Some(&missing),
            false,
            true,
        );
        assert_eq!(left_out["conditionStatus"]["ready"], false);
        assert_eq!(
            left_out["conditionStatus"]["conditions"][0]["message"],
            "expression does not compile"
        );
        assert_eq!(
            left_out["conditionStatus"]["conditions"][1]["message"],
            "Policy is not ready for reporting, missing permissions: list apps/v1, Resource=deployments: ."
        );
        // Without admission, no webhook: only the reporting condition.
        let background_only =
            kyverno_cel_status(&settings, &Health::Served, Some(&[]), false, false);
        let conditions = background_only["conditionStatus"]["conditions"]
            .as_array()
            .unwrap();
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0]["type"], "RBACPermissionsGranted");
        // With autogen'd configs, Kyverno says where to grant a custom workload's rights.
        let autogen = kyverno_cel_status(&settings, &Health::Served, Some(&missing), true, true);
        let message = autogen["conditionStatus"]["conditions"][1]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(message.ends_with("(or an equivalent ClusterRole labeled rbac.kyverno.io/aggregate-to-reports-controller)."), "{message}");
    }

    #[test]
    fn a_mutating_policy_for_pods_lists_its_autogen_configs() {
        let doc = |yaml: &str| {
            celer_policy::document::parse_document(yaml, celer_policy::document::Syntax::Yaml)
                .unwrap()
        };
        let object = doc("apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata: {name: m}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  matchConditions:
  - {name: labelled, expression: \"has(object.metadata.labels)\"}
  variables:
  - {name: image, expression: \"object.spec.containers[0].image\"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: \"Object{metadata: Object.metadata{labels: {'a': 'b'}}}\"
");
        let status = autogen_of(&object, true);
        let configs = status["configs"].as_object().unwrap();
        assert_eq!(configs.len(), 2, "{status}");
        let defaults = &status["configs"]["defaults"];
        assert_eq!(
            defaults["spec"]["matchConditions"][0]["expression"],
            "has(object.spec.template.metadata.labels)"
        );
        // Variables stay as written.
        assert_eq!(
            defaults["spec"]["variables"][0]["expression"],
            "object.spec.containers[0].image"
        );
        // Sorted by group, version, resource (apps before batch).
        let targets: Vec<(&str, &str)> = (defaults["targets"].as_array().unwrap().iter())
            .map(|t| {
                (
                    t["group"].as_str().unwrap(),
                    t["resource"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(targets.last(), Some(&("batch", "jobs")));
        let mut sorted = targets.clone();
        sorted.sort_unstable();
        assert_eq!(targets, sorted);
    }

    #[test]
    fn a_condition_keeps_its_time_until_its_status_changes() {
        let ready = classic_status(&Health::Served);
        let first = keep_times(ready.clone(), None);
        let time = first["conditions"][0]["lastTransitionTime"].clone();
        assert!(time.is_string(), "{first}");
        // Written again unchanged: the same time.
        let again = keep_times(ready, Some(&first));
        assert_eq!(again["conditions"][0]["lastTransitionTime"], time);
        // Times do not decide whether a status changed.
        assert_eq!(without_times(&first), without_times(&again));
        // A policy that breaks changes its condition (and gets a time of its own).
        let broken = classic_status(&Health::LeftOut(vec!["bad".to_string()]));
        assert_ne!(without_times(&broken), without_times(&first));
        assert_eq!(broken["ready"], false);
        assert_eq!(broken["conditions"][0]["status"], "False");
        assert_eq!(broken["conditions"][0]["message"], "bad");
    }
}
