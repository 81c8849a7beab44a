//! Gatekeeper's test suites (`suite.yaml`, `test.gatekeeper.sh/v1alpha1` kind `Suite`), run
//! with the semantics of `gator verify`:
//!
//! - each `tests[]` entry loads one `template` and one `constraint` (paths relative to the
//!   suite file); `skip: true` skips it; `invalid: true` expects the pair to be refused; a test
//!   with an `expansion` file loads its ExpansionTemplate too, so the case's object is also
//!   judged as what it expands into (violations `[Implied by <template>] ...`);
//! - each case reviews one `object`: a resource (reviewed as a CREATE; gator sends no
//!   operation) or an `AdmissionReview` (its `request`, which may set the operation,
//!   `oldObject` or `userInfo`; fields it leaves out are filled from its object);
//! - each assertion counts the violations whose message matches its `message` regex (all of
//!   them without one) and wants `violations`: `yes` (at least one; the default), `no` (none)
//!   or exactly a number. `yes`/`no` may arrive as YAML 1.1 booleans.
//!
//! `inventory[]` files feed Rego's `data.inventory` (each object under `cluster` or, with a
//! namespace, `namespace`, as Gatekeeper's sync fills it); their Namespace objects are also
//! used, as gator's cache uses them, for `namespaceSelector` and `namespaceObject`. A template
//! whose engine celer does not run skips its tests with the reason; a test whose template or
//! constraint does not load fails each of its assertions with the load errors.

use std::path::Path;

use celer_cel::Json;
use celer_policy::document::parse_documents;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::gatekeeper::TemplateEngine;
use celer_policy::kinds::kind_info;
use celer_policy::load::Manifests;
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::{PolicyKind, ResultKind};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use crate::OfflineError;
use crate::files::read_text;
use crate::suite::{Check, SuiteOutcome};

fn str_of<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

fn bool_of(v: &Json, key: &str) -> bool {
    v.get(key).and_then(|b| b.as_bool()).unwrap_or(false)
}

/// Whether a parsed document is a Gatekeeper suite.
pub fn is_suite(doc: &Json) -> bool {
    str_of(doc, "kind") == "Suite" && str_of(doc, "apiVersion") == "test.gatekeeper.sh/v1alpha1"
}

fn read_objects(path: &Path) -> Result<Vec<Json>, OfflineError> {
    let text = read_text(path).map_err(|e| OfflineError::read_file(path, e))?;
    let docs = parse_documents(&text).map_err(|e| OfflineError::document(path, e))?;
    // Empty documents (a trailing `---`) are not objects.
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// What an assertion wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Yes,
    No,
    Exactly(u64),
}

impl Want {
    fn parse(v: Option<&Json>) -> Result<Want, OfflineError> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(Want::Yes);
        };
        if let Some(b) = v.as_bool() {
            return Ok(if b { Want::Yes } else { Want::No });
        }
        if let Some(n) = v.as_u64() {
            return Ok(Want::Exactly(n));
        }
        match v.as_str() {
            Some("yes") => Ok(Want::Yes),
            Some("no") => Ok(Want::No),
            _ => Err(OfflineError::Violations {
                got: sonic_rs::to_string(v).unwrap_or_default(),
            }),
        }
    }

    fn holds(self, matching: u64) -> bool {
        match self {
            Want::Yes => matching > 0,
            Want::No => matching == 0,
            Want::Exactly(n) => matching == n,
        }
    }

    fn describe(self) -> String {
        match self {
            Want::Yes => "at least 1".to_string(),
            Want::No => "none".to_string(),
            Want::Exactly(n) => format!("exactly {n}"),
        }
    }
}

/// How suites are run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Templates with both engines run their Rego (as if annotated
    /// `celer.dev/gatekeeper-engine: Rego`) instead of their CEL, as Gatekeeper picks.
    pub prefer_rego: bool,
}

/// Runs one suite file.
pub fn run(path: &Path) -> Result<SuiteOutcome, OfflineError> {
    run_with(path, RunOptions::default())
}

/// [`run`] with `options`.
pub fn run_with(path: &Path, options: RunOptions) -> Result<SuiteOutcome, OfflineError> {
    let docs = read_objects(path)?;
    let suite = docs
        .first()
        .filter(|d| is_suite(d))
        .ok_or_else(|| OfflineError::NotASuite {
            path: path.to_path_buf(),
        })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut outcome = SuiteOutcome::new(path);
    let tests = suite
        .get("tests")
        .and_then(|t| t.as_array())
        .map(|a| a.iter().collect::<Vec<_>>())
        .unwrap_or_default();
    for (i, test) in tests.into_iter().enumerate() {
        let name = match str_of(test, "name") {
            "" => format!("tests[{i}]"),
            n => n.to_string(),
        };
        run_test(dir, &name, test, options, &mut outcome);
    }
    Ok(outcome)
}

/// Every assertion of a test, as (check name, reason) rows for skipping.
fn skip_all(test_name: &str, test: &Json, why: &str, outcome: &mut SuiteOutcome) {
    for (ci, case) in cases(test).into_iter().enumerate() {
        let case_name = case_name(case, ci);
        for (ai, _) in assertions(case).into_iter().enumerate() {
            outcome.skipped.push((
                format!("{test_name}/{case_name}: assertion {ai}"),
                why.to_string(),
            ));
        }
    }
}

fn cases(test: &Json) -> Vec<&Json> {
    test.get("cases")
        .and_then(|c| c.as_array())
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn assertions(case: &Json) -> Vec<&Json> {
    case.get("assertions")
        .and_then(|c| c.as_array())
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn case_name(case: &Json, index: usize) -> String {
    match str_of(case, "name") {
        "" => format!("cases[{index}]"),
        n => n.to_string(),
    }
}

fn run_test(dir: &Path, name: &str, test: &Json, options: RunOptions, outcome: &mut SuiteOutcome) {
    if bool_of(test, "skip") {
        skip_all(name, test, "the test is marked skip", outcome);
        return;
    }
    let mut manifests = Manifests::default();
    // An ExpansionTemplate: the case's object is also judged as what it expands into.
    let expansion = str_of(test, "expansion");
    if !expansion.is_empty() {
        crate::files::read_into(&mut manifests, &dir.join(expansion));
    }
    for key in ["template", "constraint"] {
        match str_of(test, key) {
            "" => {
                outcome.errors.push(format!("{name}: {key} is required"));
                return;
            }
            file if key == "template" && options.prefer_rego => {
                read_preferring_rego(&mut manifests, &dir.join(file))
            }
            file => crate::files::read_into(&mut manifests, &dir.join(file)),
        }
    }
    let set = PolicySet::build(&manifests);
    let invalid = bool_of(test, "invalid");
    if let Some(t) = set.gatekeeper().templates.first()
        && let TemplateEngine::Unsupported(why) = &t.engine
    {
        let why = format!("template {:?}: {why}", t.name.as_str());
        if invalid {
            outcome
                .skipped
                .push((format!("{name}: invalid constraint refused"), why));
        } else {
            skip_all(name, test, &why, outcome);
        }
        return;
    }
    if invalid {
        outcome.checks.push(Check::compare(
            name,
            "template and constraint refused",
            "refused".to_string(),
            if set.errors.is_empty() {
                "loaded".to_string()
            } else {
                "refused".to_string()
            },
        ));
        return;
    }
    if !set.errors.is_empty() {
        // Every assertion of the test counts, failed with the reason it could not run.
        let why: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        for (ci, case) in cases(test).into_iter().enumerate() {
            let label = format!("{name}/{}", case_name(case, ci));
            for (ai, _) in assertions(case).into_iter().enumerate() {
                outcome.checks.push(Check::failed(
                    &label,
                    &format!("assertion {ai}"),
                    "the template and constraint load".to_string(),
                    why.join("; "),
                ));
            }
        }
        return;
    }
    if set.gatekeeper().constraints.is_empty() {
        outcome
            .errors
            .push(format!("{name}: no constraint was loaded"));
        return;
    }
    for (ci, case) in cases(test).into_iter().enumerate() {
        let case_name = case_name(case, ci);
        let label = format!("{name}/{case_name}");
        if bool_of(case, "skip") {
            for (ai, _) in assertions(case).into_iter().enumerate() {
                outcome.skipped.push((
                    format!("{label}: assertion {ai}"),
                    "the case is marked skip".to_string(),
                ));
            }
            continue;
        }
        match violations(dir, &set, case) {
            Ok(messages) => check_assertions(&label, case, &messages, outcome),
            Err(e) => outcome.errors.push(format!("{label}: {e}")),
        }
    }
}

/// Reads a template file, each ConstraintTemplate annotated to run its Rego.
fn read_preferring_rego(manifests: &mut Manifests, path: &Path) {
    let name = path.display().to_string();
    let docs = match read_objects(path) {
        Ok(docs) => docs,
        Err(e) => {
            manifests.errors.push(celer_policy::load::LoadError {
                location: celer_policy::load::Source {
                    file: name,
                    document: 0,
                },
                what: "file".to_string(),
                message: e.to_string(),
            });
            return;
        }
    };
    for (i, mut doc) in docs.into_iter().enumerate() {
        if str_of(&doc, "kind") == "ConstraintTemplate"
            && has_rego(&doc)
            && let Some(metadata) = doc.get_mut("metadata").and_then(|m| m.as_object_mut())
        {
            if metadata.get(&"annotations").is_none_or(|a| !a.is_object()) {
                metadata.insert("annotations", Json::new_object());
            }
            if let Some(annotations) = metadata
                .get_mut(&"annotations")
                .and_then(|a| a.as_object_mut())
            {
                annotations.insert(
                    celer_policy::gatekeeper::ENGINE_ANNOTATION,
                    Json::from(celer_policy::gatekeeper::model::REGO_ENGINE),
                );
            }
        }
        let source = celer_policy::load::Source {
            file: name.clone(),
            document: i,
        };
        manifests.add_json(source, doc);
    }
}

/// Whether a ConstraintTemplate carries Rego (legacy `rego`, or a `Rego` entry of `code`).
fn has_rego(template: &Json) -> bool {
    let targets = template
        .get("spec")
        .and_then(|s| s.get("targets"))
        .and_then(|t| t.as_array());
    targets.into_iter().flat_map(|t| t.iter()).any(|t| {
        !str_of(t, "rego").trim().is_empty()
            || t.get("code")
                .and_then(|c| c.as_array())
                .is_some_and(|c| c.iter().any(|c| str_of(c, "engine") == "Rego"))
    })
}

/// The violation messages of a case's object.
fn violations(dir: &Path, set: &PolicySet, case: &Json) -> Result<Vec<String>, OfflineError> {
    let object_file = match str_of(case, "object") {
        "" => return Err(OfflineError::NoObject),
        f => dir.join(f),
    };
    let objects = read_objects(&object_file)?;
    let [object] = objects.as_slice() else {
        return Err(OfflineError::ObjectCount {
            count: objects.len(),
            path: object_file,
        });
    };
    let mut inventory = Vec::new();
    for file in case
        .get("inventory")
        .and_then(|i| i.as_array())
        .into_iter()
        .flat_map(|a| a.iter())
        .filter_map(|f| f.as_str())
    {
        inventory.extend(read_objects(&dir.join(file))?);
    }
    let review = admission_review(object)?;
    let review = AdmissionReview::from_json(review)?;
    let request = review.request()?;
    let lookup = ObjectLookup::new(inventory);
    let outcome = engine::evaluate(set, &request, &lookup, &EvalOptions::default());
    let mut messages = Vec::new();
    for r in &outcome.results {
        if r.kind != PolicyKind::GatekeeperConstraint {
            continue;
        }
        match r.result {
            ResultKind::Fail | ResultKind::Warn | ResultKind::Audit => {
                messages.push(r.message.as_deref().unwrap_or_default().to_string());
            }
            // A match that could not be decided fails the review, as in gator.
            ResultKind::Error => {
                return Err(OfflineError::Undecided(
                    r.message.as_deref().unwrap_or_default().to_string(),
                ));
            }
            ResultKind::Pass | ResultKind::Skip => {}
        }
    }
    Ok(messages)
}

fn check_assertions(label: &str, case: &Json, messages: &[String], outcome: &mut SuiteOutcome) {
    let list = assertions(case);
    if list.is_empty() {
        outcome
            .errors
            .push(format!("{label}: assertions must be non-empty"));
        return;
    }
    for (ai, assertion) in list.into_iter().enumerate() {
        let what = format!("assertion {ai}");
        let want = match Want::parse(assertion.get("violations")) {
            Ok(w) => w,
            Err(e) => {
                outcome
                    .checks
                    .push(Check::failed(label, &what, e.to_string(), String::new()));
                continue;
            }
        };
        let pattern = assertion.get("message").and_then(|m| m.as_str());
        let regex = match pattern.map(regex::Regex::new).transpose() {
            Ok(r) => r,
            Err(e) => {
                outcome.checks.push(Check::failed(
                    label,
                    &what,
                    "a valid message regex".to_string(),
                    e.to_string(),
                ));
                continue;
            }
        };
        let matching = messages
            .iter()
            .filter(|m| regex.as_ref().is_none_or(|r| r.is_match(m)))
            .count() as u64;
        let expected = match pattern {
            Some(p) => format!("{} violations matching {p:?}", want.describe()),
            None => format!("{} violations", want.describe()),
        };
        let actual = format!("{matching} (messages: {messages:?})");
        outcome.checks.push(if want.holds(matching) {
            Check {
                name: format!("{label}: {what}"),
                passed: true,
                expected,
                actual,
            }
        } else {
            Check::failed(label, &what, expected, actual)
        });
    }
}

fn gvk_value(group: &str, version: &str, kind: &str) -> Json {
    sonic_rs::json!({"group": group, "version": version, "kind": kind})
}

/// The AdmissionReview a case's object stands for: a resource becomes a CREATE of it with
/// its own name and namespace (none when it has none, as gator sends it); an AdmissionReview
/// keeps its request, with `uid`, `kind`, `resource`, `name`, `namespace` and `operation`
/// filled in from its object when absent.
pub fn admission_review(object: &Json) -> Result<Json, OfflineError> {
    let is_review = str_of(object, "kind") == "AdmissionReview"
        && str_of(object, "apiVersion").starts_with("admission.k8s.io/");
    let mut request = if is_review {
        let Some(request) = object.get("request").filter(|r| r.is_object()) else {
            return Err(OfflineError::NoRequest);
        };
        let present = |k: &str| request.get(k).is_some_and(|v| !v.is_null());
        if !present("object") && !present("oldObject") {
            return Err(OfflineError::NothingToReview);
        }
        request.clone()
    } else {
        sonic_rs::json!({"object": object.clone()})
    };
    let subject = request
        .get("object")
        .filter(|o| !o.is_null())
        .or_else(|| request.get("oldObject"))
        .cloned()
        .unwrap_or_default();
    let api_version = str_of(&subject, "apiVersion").to_string();
    let kind = str_of(&subject, "kind").to_string();
    let meta = subject.get("metadata");
    let name = meta
        .map(|m| str_of(m, "name"))
        .unwrap_or_default()
        .to_string();
    let namespace = meta
        .map(|m| str_of(m, "namespace"))
        .unwrap_or_default()
        .to_string();
    let info = kind_info(&api_version, &kind);
    let Some(fields) = request.as_object_mut() else {
        return Err(OfflineError::RequestNotObject);
    };
    let mut fill = |key: &str, value: Json| {
        if fields.get(&key).is_none_or(|v| v.is_null()) {
            fields.insert(key, value);
        }
    };
    fill("uid", Json::from("celer-gator"));
    fill("operation", Json::from("CREATE"));
    fill("kind", gvk_value(&info.group, &info.version, &kind));
    fill(
        "resource",
        sonic_rs::json!({"group": info.group.as_str(), "version": info.version.as_str(), "resource": info.resource.as_str()}),
    );
    if !name.is_empty() {
        fill("name", Json::from(name.as_str()));
    }
    if !namespace.is_empty() {
        fill("namespace", Json::from(namespace.as_str()));
    }
    Ok(sonic_rs::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": request,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn violations_read_yes_no_booleans_and_counts() {
        let j = |t: &str| -> Json { sonic_rs::from_str(t).unwrap() };
        assert_eq!(Want::parse(None).unwrap(), Want::Yes);
        assert_eq!(Want::parse(Some(&j("true"))).unwrap(), Want::Yes);
        assert_eq!(Want::parse(Some(&j("false"))).unwrap(), Want::No);
        assert_eq!(Want::parse(Some(&j("\"no\""))).unwrap(), Want::No);
        assert_eq!(Want::parse(Some(&j("2"))).unwrap(), Want::Exactly(2));
        assert!(Want::parse(Some(&j("\"maybe\""))).is_err());
        assert!(Want::parse(Some(&j("-1"))).is_err());
        assert!(Want::Yes.holds(2) && !Want::Yes.holds(0));
        assert!(Want::No.holds(0) && !Want::No.holds(1));
        assert!(Want::Exactly(1).holds(1) && !Want::Exactly(1).holds(2));
    }

    #[test]
    fn reviews_fill_what_the_case_leaves_out() {
        let pod: Json = sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"prod"}}"#,
        )
        .unwrap();
        let review = admission_review(&pod).unwrap();
        let request = &review["request"];
        assert_eq!(request["operation"].as_str(), Some("CREATE"));
        assert_eq!(request["resource"]["resource"].as_str(), Some("pods"));
        assert_eq!(request["namespace"].as_str(), Some("prod"));
        let update: Json = sonic_rs::from_str(
            r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"operation":"UPDATE","object":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}}}"#,
        )
        .unwrap();
        let review = admission_review(&update).unwrap();
        let request = &review["request"];
        assert_eq!(request["operation"].as_str(), Some("UPDATE"));
        assert_eq!(request["kind"]["group"].as_str(), Some("apps"));
        assert!(request.get("namespace").is_none());
        let empty: Json = sonic_rs::from_str(
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}"#,
        )
        .unwrap();
        assert!(admission_review(&empty).is_err());
    }

    /// A Provider in a suite's template file is loaded like the template; offline (no
    /// runtime) `external_data` calls it, and a provider that cannot be reached is the
    /// template's `system_error`.
    #[test]
    fn suites_load_providers_and_external_data_runs_offline() {
        // A CA certificate of no one's (made for this test); port 9 refuses connections.
        const CA: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJsekNDQVQyZ0F3SUJBZ0lVTVMxL2RQTnhJaStXZU9ta2ZmQ2NUdXBYTkY4d0NnWUlLb1pJemowRUF3SXcKSURFZU1Cd0dBMVVFQXd3VlkyVnNaWElnYjJabWJHbHVaU0IwWlhOMElFTkJNQ0FYRFRJMk1USXdNakEzTlRReQpOVm9ZRHpJeE1qWXhNVEE0TURjMU5ESTFXakFnTVI0d0hBWURWUVFEREJWalpXeGxjaUJ2Wm1ac2FXNWxJSFJsCmMzUWdRMEV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVRZYmtnTm1aZmNtamdqVVFzOGRnVmsKVXhxMVZ3RjEwaURGZ3NxN1laS0w2WmN1NFF6L3p6MHdBbWpKbVRZcmgzdmd3bGUxdXhoSWRVTlB1UEdHZlNSaQpvMU13VVRBZEJnTlZIUTRFRmdRVTZVMmREd2NYTjdqUDh2RllkZzdwNFRMM01DOHdId1lEVlIwakJCZ3dGb0FVCjZVMmREd2NYTjdqUDh2RllkZzdwNFRMM01DOHdEd1lEVlIwVEFRSC9CQVV3QXdFQi96QUtCZ2dxaGtqT1BRUUQKQWdOSUFEQkZBaUJpMmlseDdPbHRtYXYrdkQyNFNBNGJDeGtJY0pHdUt0NG5qY3llZFBSSnFRSWhBTW1nNjB5QworeUU2YWYwNlhpZmZpL1Z3ellRbnhudUZnTlIvcmdzd0hEUUUKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";
        let dir = std::env::temp_dir().join(format!("celer-gk-extdata-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        write(
            "template.yaml",
            &format!(
                "apiVersion: externaldata.gatekeeper.sh/v1beta1\nkind: Provider\nmetadata: {{name: nowhere}}\nspec: {{url: 'https://127.0.0.1:9/', timeout: 1, caBundle: {CA}}}\n---\napiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {{name: k8sasked}}\nspec:\n  crd: {{spec: {{names: {{kind: K8sAsked}}}}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    rego: |\n      package k8sasked\n      violation[{{\"msg\": msg}}] {{\n        r := external_data({{\"provider\": \"nowhere\", \"keys\": [input.review.object.metadata.name]}})\n        r.system_error != \"\"\n        msg := r.system_error\n      }}\n"
            ),
        );
        write(
            "constraint.yaml",
            "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sAsked\nmetadata: {name: asked}\n",
        );
        write(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: prod}\n",
        );
        write(
            "suite.yaml",
            "apiVersion: test.gatekeeper.sh/v1alpha1\nkind: Suite\ntests:\n- name: t\n  template: template.yaml\n  constraint: constraint.yaml\n  cases:\n  - name: unreachable\n    object: cm.yaml\n    assertions:\n    - {violations: 1, message: 'external data provider \"nowhere\": cannot connect to 127.0.0.1:9'}\n",
        );
        let outcome = run(&dir.join("suite.yaml")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        let results: Vec<(String, bool)> = outcome
            .checks
            .iter()
            .map(|c| (c.name.clone(), c.passed))
            .collect();
        assert_eq!(
            results,
            [("t/unreachable: assertion 0".to_string(), true)],
            "{:?}",
            outcome.checks
        );
    }

    /// A suite in a temporary directory: each assertion form, a failing one, a skipped case,
    /// an AdmissionReview case and an inventory Namespace read by namespaceSelector.
    #[test]
    fn suites_run_with_gator_semantics() {
        let dir = std::env::temp_dir().join(format!("celer-gk-suite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        write(
            "template.yaml",
            "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8sbadwords}\nspec:\n  crd: {spec: {names: {kind: K8sBadWords}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source:\n        variables:\n        - {name: isUpdate, expression: 'request.operation == \"UPDATE\"'}\n        validations:\n        - {expression: 'variables.isUpdate || !variables.anyObject.metadata.name.contains(\"bad\")', message: bad name}\n        - {expression: 'variables.isUpdate || !variables.anyObject.metadata.name.contains(\"worse\")', message: worse name}\n",
        );
        write(
            "constraint.yaml",
            "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sBadWords\nmetadata: {name: bad-words}\nspec:\n  match:\n    namespaceSelector: {matchLabels: {checked: 'yes'}}\n",
        );
        write(
            "bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad-and-worse, namespace: prod}\n",
        );
        write(
            "update.yaml",
            "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  operation: UPDATE\n  object: {apiVersion: v1, kind: ConfigMap, metadata: {name: bad, namespace: prod}}\n  oldObject: {apiVersion: v1, kind: ConfigMap, metadata: {name: bad, namespace: prod}}\n",
        );
        write(
            "ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {checked: 'yes'}}\n",
        );
        write(
            "suite.yaml",
            "apiVersion: test.gatekeeper.sh/v1alpha1\nkind: Suite\ntests:\n- name: t\n  template: template.yaml\n  constraint: constraint.yaml\n  cases:\n  - name: counted\n    object: bad.yaml\n    inventory: [ns.yaml]\n    assertions:\n    - violations: 2\n    - {violations: 1, message: '^worse'}\n    - {violations: no, message: nothing}\n    - {}\n    - violations: no\n  - name: update\n    object: update.yaml\n    inventory: [ns.yaml]\n    assertions:\n    - violations: no\n  - name: no-namespace\n    object: bad.yaml\n    assertions:\n    - violations: yes\n  - name: skipped\n    skip: true\n    object: bad.yaml\n    assertions:\n    - violations: yes\n",
        );
        let outcome = run(&dir.join("suite.yaml")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let results: Vec<(String, bool)> = outcome
            .checks
            .iter()
            .map(|c| (c.name.clone(), c.passed))
            .collect();
        assert_eq!(
            results,
            vec![
                ("t/counted: assertion 0".to_string(), true),
                ("t/counted: assertion 1".to_string(), true),
                ("t/counted: assertion 2".to_string(), true),
                ("t/counted: assertion 3".to_string(), true),
                ("t/counted: assertion 4".to_string(), false),
                ("t/update: assertion 0".to_string(), true),
            ]
        );
        // Without the Namespace, the namespaceSelector cannot be decided: the case errors.
        assert_eq!(outcome.errors.len(), 1, "{:?}", outcome.errors);
        assert!(
            outcome.errors[0].starts_with("t/no-namespace: "),
            "{:?}",
            outcome.errors
        );
        assert_eq!(outcome.skipped.len(), 1);
    }
}
