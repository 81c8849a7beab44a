//! Kyverno's test files (`kyverno-test.yaml`, kind `Test`) for the kinds celer runs: each
//! resource is evaluated as a CREATE request against the suite's policies and every expected
//! result row is checked.
//!
//! Kyverno's CLI is more forgiving than the API server, and its suites rely on it: a policy
//! with no binding applies as if bound with `validationActions: [Deny]`, a binding without
//! validationActions denies, a paramRef without parameterNotFoundAction denies when nothing
//! is found, a resource rule without operations matches every operation, a namespace that the
//! suite does not describe exists with no labels, and params chosen by a selector are passed
//! together as one list object (`params.items`). These are applied here and through
//! [`EvalOptions::selector_params_as_list`], never by default in the engine.

use std::path::Path;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::document::parse_documents;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::{Manifest, Manifests};
use celer_policy::lookup::ObjectLookup;
use celer_policy::model::{
    MutatingAdmissionPolicyBinding, MutatingAdmissionPolicyBindingSpec, ObjectMeta,
    ParameterNotFoundAction, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidationAction,
};
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use celer_policy::response::{Outcome, PolicyKind, ResultKind};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::files::read_text;
use crate::suite::{Check, SuiteOutcome};

fn str_of<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

fn list_of(v: &Json, key: &str) -> Vec<String> {
    match v.get(key) {
        Some(l) if l.is_array() => l
            .as_array()
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        Some(s) => s.as_str().map(|s| vec![s.to_string()]).unwrap_or_default(),
        None => Vec::new(),
    }
}

fn read_json(path: &Path) -> Result<Vec<Json>, String> {
    let text = read_text(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_documents(&text).map_err(|(i, e)| format!("{} (document {}): {e}", path.display(), i + 1))
}

fn object_key(o: &Json) -> (String, String) {
    let name = o
        .get("metadata")
        .map(|m| str_of(m, "name"))
        .unwrap_or_default();
    (str_of(o, "kind").to_string(), name.to_string())
}

/// Runs one `kyverno-test.yaml`.
pub fn run(test_file: &Path) -> Result<SuiteOutcome, String> {
    let docs = read_json(test_file)?;
    let test = docs
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: empty test file", test_file.display()))?;
    let dir = test_file.parent().unwrap_or(Path::new("."));
    let mut outcome = SuiteOutcome::new(test_file);

    let mut manifests = Manifests::default();
    for p in list_of(&test, "policies") {
        crate::files::read_into(&mut manifests, &dir.join(p));
    }
    outcome
        .errors
        .extend(manifests.errors.drain(..).map(|e| e.to_string()));
    apply_cli_defaults(&mut manifests);
    let set = PolicySet::build(&manifests);
    outcome
        .errors
        .extend(set.errors.iter().map(ToString::to_string));

    let mut resources = Vec::new();
    for p in list_of(&test, "resources") {
        resources.extend(read_json(&dir.join(p))?);
    }
    let mut lookup_objects = Vec::new();
    for p in list_of(&test, "paramResources") {
        lookup_objects.extend(read_json(&dir.join(p))?);
    }
    let mut described_namespaces = Vec::new();
    if let Some(values) = test.get("variables").and_then(|v| v.as_str()) {
        for doc in read_json(&dir.join(values))? {
            if let Some(list) = doc.get("namespaceSelector").and_then(|l| l.as_array()) {
                for ns in list.iter() {
                    let name = str_of(ns, "name");
                    let labels = ns
                        .get("labels")
                        .and_then(|l| sonic_rs::to_string(l).ok())
                        .unwrap_or_else(|| "{}".to_string());
                    described_namespaces.push(name.to_string());
                    lookup_objects.push(namespace_object(name, &labels)?);
                }
            }
        }
    }
    let mut user = RequestUser::default();
    if let Some(file) = test.get("userinfo").and_then(|v| v.as_str()) {
        for doc in read_json(&dir.join(file))? {
            if let Some(u) = doc.get("userInfo") {
                user.username = str_of(u, "username").to_string();
                user.groups = list_of(u, "groups");
            }
        }
    }
    // Kyverno's CLI evaluates resources in namespaces it was not told about as if they
    // existed with no labels.
    for r in &resources {
        let ns = r
            .get("metadata")
            .map(|m| str_of(m, "namespace"))
            .filter(|n| !n.is_empty())
            .unwrap_or("default");
        if !described_namespaces.iter().any(|d| d == ns) {
            described_namespaces.push(ns.to_string());
            lookup_objects.push(namespace_object(ns, "{}")?);
        }
    }
    let lookup = ObjectLookup::new(lookup_objects);

    let mut evaluated: Vec<((String, String), Json, Outcome)> = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        let body = review_for(
            Some(r),
            None,
            Operation::Create,
            &user,
            &format!("celer-{i}"),
        )
        .map_err(|e| format!("resource {}: {e}", object_key(r).1))?;
        let review = AdmissionReview::parse(body.as_bytes()).map_err(|e| e.to_string())?;
        let request = review.request().map_err(|e| e.to_string())?;
        let options = EvalOptions {
            selector_params_as_list: true,
            ..EvalOptions::default()
        };
        let result = engine::evaluate(&set, &request, &lookup, &options);
        evaluated.push((object_key(r), r.clone(), result));
    }

    let Some(rows) = test.get("results").and_then(|r| r.as_array()) else {
        return Ok(outcome);
    };
    for row in rows.iter() {
        let policy = str_of(row, "policy").to_string();
        let kind = str_of(row, "kind").to_string();
        let expected = str_of(row, "result").to_string();
        let policy_kind = if row
            .get("isValidatingAdmissionPolicy")
            .and_then(|b| b.as_bool())
            == Some(true)
        {
            PolicyKind::Validating
        } else if row
            .get("isMutatingAdmissionPolicy")
            .and_then(|b| b.as_bool())
            == Some(true)
        {
            PolicyKind::Mutating
        } else {
            outcome.skipped.push((
                policy.clone(),
                "not a native admission policy row (Kyverno's own kinds come with [compat])"
                    .to_string(),
            ));
            continue;
        };
        let names = list_of(row, "resources");
        let patched = match row.get("patchedResources").and_then(|p| p.as_str()) {
            Some(p) => read_json(&dir.join(p))?,
            None => Vec::new(),
        };
        for ((r_kind, r_name), original, result) in &evaluated {
            if *r_kind != kind || !(names.is_empty() || names.contains(r_name)) {
                continue;
            }
            let (actual, detail) = match policy_kind {
                PolicyKind::Validating | PolicyKind::GatekeeperConstraint => {
                    validating_result(&policy, result)
                }
                PolicyKind::Mutating => mutating_result(&policy, original, result, &patched),
            };
            let actual = match detail {
                Some(d) if actual != expected => format!("{actual} ({d})"),
                _ => actual,
            };
            outcome.checks.push(Check {
                name: format!("{policy} {kind}/{r_name}"),
                passed: actual == expected,
                expected: expected.clone(),
                actual,
            });
        }
        for name in &names {
            if !evaluated
                .iter()
                .any(|((k, n), _, _)| *k == kind && n == name)
            {
                outcome.checks.push(Check::failed(
                    &format!("{policy} {kind}/{name}"),
                    "resource",
                    expected.clone(),
                    "missing: no resource of this kind and name in the suite".to_string(),
                ));
            }
        }
    }
    Ok(outcome)
}

fn namespace_object(name: &str, labels_json: &str) -> Result<Json, String> {
    let text = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{{\"name\":{},\"labels\":{labels_json}}}}}",
        sonic_rs::to_string(name).map_err(|e| e.to_string())?
    );
    sonic_rs::from_str(&text).map_err(|e| e.to_string())
}

/// Kyverno's CLI defaults for bindings and unbound policies (see the module documentation).
pub fn apply_cli_defaults(manifests: &mut Manifests) {
    let mut bound_v = Vec::new();
    let mut bound_m = Vec::new();
    for (_, item) in &mut manifests.items {
        let constraints = match item {
            Manifest::ValidatingPolicy(p) => p.spec.match_constraints.as_mut(),
            Manifest::MutatingPolicy(p) => p.spec.match_constraints.as_mut(),
            _ => None,
        };
        for rule in constraints
            .into_iter()
            .flat_map(|c| c.resource_rules.iter_mut())
        {
            if rule.operations.is_empty() {
                rule.operations = vec!["*".to_string()];
            }
        }
        match item {
            Manifest::ValidatingBinding(b) => {
                if b.spec.validation_actions.is_empty() {
                    b.spec.validation_actions = vec![ValidationAction::Deny];
                }
                if let Some(p) = &mut b.spec.param_ref
                    && p.parameter_not_found_action.is_none()
                {
                    p.parameter_not_found_action = Some(ParameterNotFoundAction::Deny);
                }
                bound_v.push(b.spec.policy_name.clone());
            }
            Manifest::MutatingBinding(b) => {
                if let Some(p) = &mut b.spec.param_ref
                    && p.parameter_not_found_action.is_none()
                {
                    p.parameter_not_found_action = Some(ParameterNotFoundAction::Deny);
                }
                bound_m.push(b.spec.policy_name.clone());
            }
            _ => {}
        }
    }
    let mut extra = Vec::new();
    for (source, item) in &manifests.items {
        match item {
            Manifest::ValidatingPolicy(p) if !bound_v.contains(&p.metadata.name) => {
                extra.push((
                    source.clone(),
                    Manifest::ValidatingBinding(Box::new(ValidatingAdmissionPolicyBinding {
                        metadata: ObjectMeta {
                            name: format!("{}-binding", p.metadata.name),
                            ..ObjectMeta::default()
                        },
                        spec: ValidatingAdmissionPolicyBindingSpec {
                            policy_name: p.metadata.name.clone(),
                            validation_actions: vec![ValidationAction::Deny],
                            ..Default::default()
                        },
                    })),
                ));
            }
            Manifest::MutatingPolicy(p) if !bound_m.contains(&p.metadata.name) => {
                extra.push((
                    source.clone(),
                    Manifest::MutatingBinding(Box::new(MutatingAdmissionPolicyBinding {
                        metadata: ObjectMeta {
                            name: format!("{}-binding", p.metadata.name),
                            ..ObjectMeta::default()
                        },
                        spec: MutatingAdmissionPolicyBindingSpec {
                            policy_name: p.metadata.name.clone(),
                            ..Default::default()
                        },
                    })),
                ));
            }
            _ => {}
        }
    }
    manifests.items.extend(extra);
}

fn results_of<'o>(
    policy: &'o str,
    kind: PolicyKind,
    outcome: &'o Outcome,
) -> impl Iterator<Item = &'o celer_policy::response::PolicyResult> + 'o {
    outcome
        .results
        .iter()
        .filter(move |r| r.kind == kind && r.policy == policy)
}

fn validating_result(policy: &str, outcome: &Outcome) -> (String, Option<String>) {
    let worst = results_of(policy, PolicyKind::Validating, outcome).max_by_key(|r| r.result.rank());
    match worst {
        None => ("skip".to_string(), None),
        Some(r) => (
            match r.result {
                ResultKind::Audit => "pass".to_string(),
                other => other.as_str().to_string(),
            },
            r.message.clone(),
        ),
    }
}

fn mutating_result(
    policy: &str,
    original: &Json,
    outcome: &Outcome,
    expected_patched: &[Json],
) -> (String, Option<String>) {
    let results: Vec<_> = results_of(policy, PolicyKind::Mutating, outcome).collect();
    if let Some(e) = results.iter().find(|r| r.result == ResultKind::Error) {
        return ("error".to_string(), e.message.clone());
    }
    if !results.iter().any(|r| r.result == ResultKind::Pass) {
        return ("skip".to_string(), None);
    }
    let actual = outcome.patched.as_ref().unwrap_or(original);
    let key = object_key(original);
    let Some(expected) = expected_patched.iter().find(|p| object_key(p) == key) else {
        return ("pass".to_string(), None);
    };
    if expected == actual {
        ("pass".to_string(), None)
    } else {
        (
            "fail".to_string(),
            Some(format!(
                "patched resource differs:\n  expected {}\n  actual   {}",
                sonic_rs::to_string(expected).unwrap_or_default(),
                sonic_rs::to_string(actual).unwrap_or_default()
            )),
        )
    }
}
