//! The checks Kyverno's webhooks for its own objects make before the API server stores them
//! (`validate-policy.kyverno.svc`: `pkg/cel/policies/{vpol,mpol}/validate.go`;
//! PolicyExceptions: `api/kyverno/v2` `PolicyExceptionSpec.Validate`), so that an object
//! Kyverno would refuse is refused with Kyverno's words, each error also a warning as Kyverno
//! returns them.
//!
//! For ValidatingPolicies and MutatingPolicies only the structural checks are made. Kyverno
//! also refuses a policy whose expressions do not compile in its environment; celer's CEL
//! environment differs in places, and refusing what Kyverno accepts would block a team's
//! GitOps, so such a policy is admitted and says why it does not serve on its status, as
//! every policy celer cannot compile does. GeneratingPolicies and DeletingPolicies, which
//! only celer's controller runs, are compiled here too and refused with the compiler's
//! errors: one celer cannot compile would never run, and admitted it would sit in the cluster
//! under a name the next policy may want.

use serde::de::DeserializeOwned;
use sonic_rs::JsonValueMutTrait as _;

use super::classic_model::{ClassicException, Filter};
use super::model::{Policy, PolicyKind};

/// What the checks found: errors refuse the object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

impl Findings {
    /// The denial's message, as a Go `field.ErrorList` aggregate prints it.
    pub fn message(&self) -> Option<String> {
        match self.errors.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(format!("[{}]", many.join(", "))),
        }
    }
}

/// Whether `group` and `kind` name an object these checks cover.
pub fn covers(group: &str, kind: &str) -> bool {
    match group {
        super::model::GROUP => PolicyKind::parse(kind).is_some() || controlled(kind).is_some(),
        "kyverno.io" => kind == "PolicyException" || kind == "GlobalContextEntry",
        _ => false,
    }
}

fn read<T: DeserializeOwned>(object: &sonic_rs::Value) -> Option<T> {
    // An object the API server's schema let through but that does not read is for the
    // loader to report on the object; these checks have nothing to add.
    sonic_rs::from_value(object).ok()
}

/// Checks one object of a kind [`covers`] names (others pass).
pub fn check(group: &str, kind: &str, object: &sonic_rs::Value) -> Findings {
    let mut errors = Vec::new();
    match (group, PolicyKind::parse(kind)) {
        (super::model::GROUP, Some(kind)) => {
            if let Some(p) = read::<Policy>(object) {
                policy(&p, kind, &mut errors);
            }
        }
        (super::model::GROUP, None) => {
            if let Some(kind) = controlled(kind) {
                controlled_policy(object, kind, &mut errors);
            }
        }
        ("kyverno.io", _) if kind == "PolicyException" => {
            if let Some(e) = read::<ClassicException>(object) {
                exception(&e, &mut errors);
            }
        }
        ("kyverno.io", _) if kind == "GlobalContextEntry" => {
            global_context_entry(object, &mut errors);
        }
        _ => {}
    }
    Findings {
        warnings: errors.clone(),
        errors,
    }
}

/// A GlobalContextEntry's checks (`GlobalContextEntry.Validate`, kyverno.io/v2beta1): one
/// source, a complete resource, an API call with one target, data only with POST and a
/// refresh interval, projections named (not as the entry) with a JMESPath that parses.
fn global_context_entry(object: &sonic_rs::Value, errors: &mut Vec<String>) {
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};
    let present = |v: Option<&sonic_rs::Value>| v.is_some_and(|v| !v.is_null());
    let text = |v: Option<&sonic_rs::Value>, key: &str| -> String {
        v.and_then(|v| v.get(key))
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let name = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or_default();
    let spec = object.get("spec");
    let resource = spec.and_then(|s| s.get("kubernetesResource"));
    let call = spec.and_then(|s| s.get("apiCall"));
    if present(resource) == present(call) {
        errors.push("spec.kubernetesResource: Forbidden: A global context entry should either have KubernetesResource or APICall".to_string());
    }
    if present(resource) {
        let (group, version) = (text(resource, "group"), text(resource, "version"));
        if group.is_empty() && version != "v1" {
            errors.push(
                "spec.resource.group: Required value: A Resource entry requires a group"
                    .to_string(),
            );
        }
        if version.is_empty() {
            errors.push(
                "spec.resource.version: Required value: A Resource entry requires a version"
                    .to_string(),
            );
        }
        if text(resource, "resource").is_empty() {
            errors.push(
                "spec.resource.resource: Required value: A Resource entry requires a resource"
                    .to_string(),
            );
        }
    }
    if present(call) {
        // Absent, it is the CRD's default (10m).
        let interval = text(call, "refreshInterval");
        if !interval.is_empty() && celer_cel::time::parse_go_duration(&interval) == Ok(0) {
            errors.push("spec.apiCall.refreshIntervalSeconds: Required value: A Resource entry requires a refresh interval greater than 0 seconds".to_string());
        }
        let service = present(call.and_then(|c| c.get("service")));
        let url_path = !text(call, "urlPath").is_empty();
        if service == url_path {
            errors.push("spec.apiCall.service: Forbidden: An External API call should either have Service or URLPath".to_string());
        }
        if present(call.and_then(|c| c.get("data"))) && text(call, "method") != "POST" {
            errors.push("spec.apiCall.method: Forbidden: An External API call with data should have method as POST".to_string());
        }
    }
    let projections = spec
        .and_then(|s| s.get("projections"))
        .and_then(|p| p.as_array());
    for (i, p) in projections.into_iter().flat_map(|a| a.iter()).enumerate() {
        let at = format!("spec.projections[{i}]");
        let projection = text(Some(p), "name");
        if projection.is_empty() {
            errors.push(format!(
                "{at}.name: Required value: A projection entry requires a name"
            ));
        }
        if projection == name {
            errors.push(format!("{at}.name: Required value: A projection entry requires a name different from the global context entry name"));
        }
        let path = text(Some(p), "jmesPath");
        if path.is_empty() {
            errors.push(format!(
                "{at}.jmesPath: Required value: A projection entry requires a JMESPath"
            ));
        }
        if let Err(e) =
            celer_jmespath::Expression::compile_with(&path, celer_jmespath_kyverno::registry())
        {
            errors.push(format!("{at}.jmesPath: Invalid value: {path:?}: {e}"));
        }
    }
}

fn policy(p: &Policy, kind: PolicyKind, errors: &mut Vec<String>) {
    let spec = &p.spec;
    if spec
        .match_constraints
        .as_ref()
        .is_none_or(|m| m.resource_rules.is_empty())
    {
        errors.push(
            "spec.matchConstraints: Required value: a matchConstraints with at least one resource rule is required"
                .to_string(),
        );
    }
    if !kind.is_validating() && !spec.admission_enabled() && !spec.mutate_existing_enabled() {
        errors.push(
            "spec.evaluation: Forbidden: disabling both admission and mutateExisting evaluation modes is not allowed"
                .to_string(),
        );
    }
}

/// The kinds the controller runs (`gpol/validate.go`, `dpol/validate.go`): whether the
/// kind is a DeletingPolicy (which also needs a schedule).
fn controlled(kind: &str) -> Option<bool> {
    match kind {
        "GeneratingPolicy" | "NamespacedGeneratingPolicy" => Some(false),
        "DeletingPolicy" | "NamespacedDeletingPolicy" => Some(true),
        _ => None,
    }
}

fn controlled_policy(object: &sonic_rs::Value, deleting: bool, errors: &mut Vec<String>) {
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};
    let spec = object.get("spec");
    let rules = (spec.and_then(|s| s.get("matchConstraints")))
        .and_then(|m| m.get("resourceRules"))
        .and_then(|r| r.as_array())
        .map_or(0, |r| r.len());
    if rules == 0 {
        errors.push(
            "spec.matchConstraints: Required value: a matchConstraints with at least one resource rule is required"
                .to_string(),
        );
    }
    if errors.is_empty() {
        let mut manifests = crate::load::Manifests::default();
        manifests.add_json(
            crate::load::Source {
                file: "the object".to_string(),
                document: 0,
            },
            object.clone(),
        );
        let compiled: Vec<String> = if deleting {
            (super::deleting::load(&manifests).errors.iter())
                .map(|e| e.message.clone())
                .collect()
        } else {
            (super::generating::load(&manifests).errors.iter())
                .map(|e| e.message.clone())
                .collect()
        };
        errors.extend(compiled);
    }
    if deleting {
        match spec
            .and_then(|s| s.get("schedule"))
            .and_then(|s| s.as_str())
        {
            None | Some("") => {
                errors.push("spec.schedule: Required value: schedule is required".to_string())
            }
            Some(text) => {
                if let Err(e) = super::deleting::Schedule::parse(text) {
                    errors.push(format!(
                        "spec.schedule: Invalid value: {text:?}: schedule spec in the deletingPolicy is not in proper cron format: {e}"
                    ));
                }
            }
        }
    }
}

fn no_user_info(filter: &Filter, path: &str, errors: &mut Vec<String>) {
    for (field, used) in [
        ("roles", !filter.roles.is_empty()),
        ("clusterRoles", !filter.cluster_roles.is_empty()),
        ("subjects", !filter.subjects.is_empty()),
    ] {
        if used {
            errors.push(format!(
                "{path}.{field}: Forbidden: Usage of user info is forbidden"
            ));
        }
    }
}

fn exception(e: &ClassicException, errors: &mut Vec<String>) {
    let spec = &e.spec;
    // Background scans have no user: an exception that applies to them cannot name one.
    if spec.background.unwrap_or(true) {
        for (i, f) in spec.match_resources.any.iter().enumerate() {
            no_user_info(f, &format!("spec.match.any[{i}]"), errors);
        }
        for (i, f) in spec.match_resources.all.iter().enumerate() {
            no_user_info(f, &format!("spec.match.all[{i}]"), errors);
        }
    }
    for (i, entry) in spec.exceptions.iter().enumerate() {
        if entry.policy_name.is_empty() {
            errors.push(format!(
                "spec.exceptions[{i}].policyName: Required value: An exception requires a policy name"
            ));
        }
    }
}

/// An AdmissionReview of a Kyverno policy object, as [`review`] reads it.
#[derive(serde::Deserialize)]
struct PolicyReview {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    request: Option<PolicyReviewRequest>,
}

#[derive(serde::Deserialize)]
struct PolicyReviewRequest {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    kind: PolicyReviewKind,
    #[serde(default)]
    object: Option<sonic_rs::Value>,
}

#[derive(serde::Deserialize, Default)]
struct PolicyReviewKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

/// Answers an AdmissionReview of a policy object: the response's JSON and whether it admits.
/// `Err` names what makes the body no AdmissionReview.
pub fn review(body: &[u8]) -> Result<(String, bool), String> {
    let review: PolicyReview =
        sonic_rs::from_slice(body).map_err(|e| format!("not an AdmissionReview: {e}"))?;
    let request = (review.request)
        .filter(|r| !r.uid.is_empty())
        .ok_or("AdmissionReview request.uid is missing or empty")?;
    let findings = match &request.object {
        Some(object) if covers(&request.kind.group, &request.kind.kind) => {
            check(&request.kind.group, &request.kind.kind, object)
        }
        _ => Findings::default(),
    };
    let api_version = match review.api_version.as_str() {
        "" => "admission.k8s.io/v1",
        v => v,
    };
    let message = findings.message();
    let mut response = sonic_rs::json!({"uid": request.uid, "allowed": message.is_none()});
    if let Some(r) = response.as_object_mut() {
        if let Some(message) = &message {
            // Kyverno's answer: a Failure with its message, no code nor reason.
            r.insert(
                "status",
                sonic_rs::json!({"status": "Failure", "message": message}),
            );
        }
        if !findings.warnings.is_empty() {
            r.insert("warnings", sonic_rs::json!(findings.warnings));
        }
    }
    let out = sonic_rs::json!({
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "response": response,
    });
    Ok((out.to_string(), message.is_none()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> sonic_rs::Value {
        let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).unwrap();
        sonic_rs::from_str(&sonic_rs::to_string(&v).unwrap()).unwrap()
    }

    #[test]
    fn a_policy_without_resource_rules_is_refused_with_kyvernos_words() {
        let f = check(
            "policies.kyverno.io",
            "ValidatingPolicy",
            &yaml("metadata: {name: p}\nspec: {validations: [{expression: 'true'}]}"),
        );
        assert_eq!(
            f.message().unwrap(),
            "spec.matchConstraints: Required value: a matchConstraints with at least one resource rule is required"
        );
        assert_eq!(f.warnings, f.errors);
        let ok = check(
            "policies.kyverno.io",
            "ValidatingPolicy",
            &yaml(
                "metadata: {name: p}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  validations: [{expression: 'this does not compile ((('}]",
            ),
        );
        assert_eq!(ok, Findings::default());
    }

    #[test]
    fn generating_and_deleting_policies_need_resource_rules_and_a_schedule() {
        let gpol = yaml(
            "apiVersion: policies.kyverno.io/v1\nkind: GeneratingPolicy\nmetadata: {name: g}\nspec:\n  generate: [{expression: 'true'}]\n",
        );
        assert!(covers("policies.kyverno.io", "GeneratingPolicy"));
        assert_eq!(
            check("policies.kyverno.io", "GeneratingPolicy", &gpol).message(),
            Some("spec.matchConstraints: Required value: a matchConstraints with at least one resource rule is required".to_string())
        );
        let dpol = yaml(
            "apiVersion: policies.kyverno.io/v1\nkind: DeletingPolicy\nmetadata: {name: d}\nspec:\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], resources: [pods], operations: ['*']}]}\n  schedule: not a schedule\n",
        );
        let findings = check("policies.kyverno.io", "NamespacedDeletingPolicy", &dpol);
        assert!(
            (findings.errors.iter())
                .any(|e| e.starts_with("spec.schedule: Invalid value: \"not a schedule\"")),
            "{findings:?}"
        );
        assert_eq!(findings.warnings, findings.errors);
        // An expression that does not compile is refused (only celer's controller runs it).
        let broken = yaml(
            "apiVersion: policies.kyverno.io/v1\nkind: GeneratingPolicy\nmetadata: {name: g}\nspec:\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], resources: [namespaces], operations: [CREATE]}]}\n  generate: [{expression: 'generator.Apply(object.metadata.name)'}]\n",
        );
        let findings = check("policies.kyverno.io", "GeneratingPolicy", &broken);
        assert_eq!(findings.errors.len(), 1, "{findings:?}");
        assert!(findings.errors[0].contains("generate[0]"), "{findings:?}");
    }

    #[test]
    fn a_mutating_policy_needs_an_evaluation_mode() {
        let text = |existing: bool| {
            format!(
                "metadata: {{name: m}}
spec:
  evaluation: {{admission: {{enabled: false}}, mutateExisting: {{enabled: {existing}}}}}
  matchConstraints: {{resourceRules: [{{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}]}}"
            )
        };
        let refused = check("policies.kyverno.io", "MutatingPolicy", &yaml(&text(false)));
        assert_eq!(refused.errors.len(), 1, "{refused:?}");
        assert!(refused.errors[0].starts_with("spec.evaluation: Forbidden"));
        assert!(
            check("policies.kyverno.io", "MutatingPolicy", &yaml(&text(true)))
                .errors
                .is_empty()
        );
    }

    #[test]
    fn a_background_exception_cannot_name_users() {
        let text = |background: &str| {
            format!(
                "metadata: {{name: e}}
spec:
  {background}
  exceptions: [{{policyName: test, ruleNames: [test]}}, {{policyName: '', ruleNames: [x]}}]
  match:
    any:
    - resources: {{kinds: [Pod]}}
      subjects: [{{kind: User, name: chip}}]"
            )
        };
        let f = check(
            "kyverno.io",
            "PolicyException",
            &yaml(&text("background: true")),
        );
        assert_eq!(
            f.message().unwrap(),
            "[spec.match.any[0].subjects: Forbidden: Usage of user info is forbidden, spec.exceptions[1].policyName: Required value: An exception requires a policy name]"
        );
        let f = check(
            "kyverno.io",
            "PolicyException",
            &yaml(&text("background: false")),
        );
        assert_eq!(f.errors.len(), 1);
        assert!(covers("kyverno.io", "PolicyException") && !covers("kyverno.io", "ClusterPolicy"));
        assert!(covers("policies.kyverno.io", "NamespacedMutatingPolicy"));
    }

    #[test]
    fn global_context_entries_are_checked_as_kyverno_checks_them() {
        let errors = |spec: &str| {
            let doc: sonic_rs::Value = sonic_rs::from_str(&format!(
                r#"{{"apiVersion":"kyverno.io/v2alpha1","kind":"GlobalContextEntry","metadata":{{"name":"e"}},"spec":{spec}}}"#
            ))
            .unwrap();
            check("kyverno.io", "GlobalContextEntry", &doc).errors
        };
        assert!(
            errors(r#"{"kubernetesResource":{"version":"v1","resource":"configmaps"}}"#).is_empty()
        );
        assert!(
            errors(r#"{"apiCall":{"urlPath":"/api/v1/pods","refreshInterval":"10s"}}"#).is_empty()
        );
        let both = errors(
            r#"{"kubernetesResource":{"version":"v1","resource":"x"},"apiCall":{"urlPath":"/x"}}"#,
        );
        assert_eq!(
            both,
            [
                "spec.kubernetesResource: Forbidden: A global context entry should either have KubernetesResource or APICall"
            ]
        );
        assert_eq!(errors("{}").len(), 1);
        let data = errors(
            r#"{"apiCall":{"service":{"url":"http://x"},"method":"GET","data":[{"key":"a","value":"b"}],"refreshInterval":"10s"}}"#,
        );
        assert_eq!(
            data,
            [
                "spec.apiCall.method: Forbidden: An External API call with data should have method as POST"
            ]
        );
        let group = errors(r#"{"kubernetesResource":{"version":"v1beta1","resource":"things"}}"#);
        assert_eq!(
            group,
            ["spec.resource.group: Required value: A Resource entry requires a group"]
        );
        let projections = errors(
            r#"{"kubernetesResource":{"version":"v1","resource":"x"},"projections":[{"name":"e","jmesPath":"a"},{"name":"p","jmesPath":"a[?"}]}"#,
        );
        assert_eq!(projections.len(), 2, "{projections:?}");
        assert!(projections[1].starts_with("spec.projections[1].jmesPath: Invalid value"));
        assert!(
            errors(r#"{"apiCall":{"urlPath":"/x","refreshInterval":"0s"}}"#)[0]
                .contains("refresh interval")
        );
    }

    #[test]
    fn reviews_are_answered_with_the_errors_and_warnings() {
        let body = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",
            "kind":{"group":"policies.kyverno.io","version":"v1","kind":"ValidatingPolicy"},
            "object":{"metadata":{"name":"p"},"spec":{}}}}"#;
        let (text, allowed) = review(body.as_bytes()).unwrap();
        assert!(!allowed);
        let v: sonic_rs::Value = sonic_rs::from_str(&text).unwrap();
        use sonic_rs::JsonValueTrait as _;
        assert_eq!(v["response"]["uid"].as_str(), Some("u1"));
        assert_eq!(v["response"]["allowed"].as_bool(), Some(false));
        assert!(
            v["response"]["status"]["message"]
                .as_str()
                .unwrap()
                .starts_with("spec.matchConstraints: Required value")
        );
        assert_eq!(
            v["response"]["warnings"][0].as_str(),
            v["response"]["status"]["message"].as_str()
        );
        // Other kinds pass; bad bodies are named.
        let other = body
            .replace("ValidatingPolicy", "ConfigMap")
            .replace("policies.kyverno.io", "");
        assert!(review(other.as_bytes()).unwrap().1);
        assert!(review(b"{").unwrap_err().contains("not an AdmissionReview"));
        assert!(review(br#"{"request":{}}"#).unwrap_err().contains("uid"));
    }
}
