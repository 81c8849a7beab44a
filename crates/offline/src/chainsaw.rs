//! Kyverno's chainsaw conformance tests (`test/conformance/chainsaw`), read offline: the
//! policies a test creates, then each resource it creates or applies, evaluated as the
//! admission request the cluster would send, against what the test expects: the request
//! refused (`($error != null): true`), refused with a message (`($error): ...`, compared after
//! the webhook's `denied the request: `), or admitted; and, after a resource was admitted, the
//! `assert` files that describe it (a subset of the stored object, as patched by mutations).
//! Steps that need a cluster (scripts, events, reports, policy status, deletions) are skipped
//! with their reason.

use std::path::Path;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::engine;
use std::sync::Arc;

use celer_policy::kyverno::model::KyvernoManifest;
use celer_policy::kyverno::mutate_existing::{self, Existing};
use celer_policy::load::Manifests;
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use crate::OfflineError;
use crate::suite::{Check, SuiteOutcome};

// What a cluster would do beside admission, emulated on the objects a test holds:
// `resource.*` and GlobalContextEntries, mutate-existing.
#[path = "chainsaw_cluster.rs"]
mod cluster;

/// The namespace chainsaw creates for a test, where objects without one go.
const TEST_NAMESPACE: &str = "chainsaw-test";

fn str_of<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

fn read(path: &Path) -> Result<Vec<Json>, OfflineError> {
    let text = crate::files::read_text(path).map_err(|e| OfflineError::read_file(path, e))?;
    celer_policy::document::parse_documents(&text).map_err(|e| OfflineError::document(path, e))
}

/// What a create or apply expects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Admitted,
    Refused(Option<String>),
}

fn expectation(op: &Json) -> Result<Expect, OfflineError> {
    let Some(list) = op.get("expect").and_then(|e| e.as_array()) else {
        return Ok(Expect::Admitted);
    };
    let mut out = Expect::Admitted;
    for e in list.iter() {
        if e.get("match").is_some() {
            return Err(OfflineError::ExpectationWithMatch);
        }
        let Some(check) = e.get("check").and_then(|c| c.as_object()) else {
            return Err(OfflineError::ExpectationWithoutCheck);
        };
        for (key, value) in check.iter() {
            out = match (key.trim(), value.as_bool(), value.as_str()) {
                ("($error != null)", Some(true), _) | ("($error == null)", Some(false), _) => {
                    Expect::Refused(None)
                }
                ("($error == null)", Some(true), _) | ("($error != null)", Some(false), _) => {
                    Expect::Admitted
                }
                ("($error)", _, Some(message)) => Expect::Refused(Some(message.trim().to_string())),
                (other, _, _) => return Err(OfflineError::UnreadCheck(other.to_string())),
            };
        }
    }
    Ok(out)
}

fn is_policy_document(doc: &Json) -> bool {
    let api = str_of(doc, "apiVersion");
    api.starts_with("policies.kyverno.io/")
        || api.starts_with("admissionregistration.k8s.io/")
        || (api.starts_with("kyverno.io/")
            && matches!(
                str_of(doc, "kind"),
                "ClusterPolicy" | "Policy" | "PolicyException"
            ))
}

fn key(o: &Json) -> (String, String, String) {
    let meta = o.get("metadata");
    let name = meta.map(|m| str_of(m, "name")).unwrap_or_default();
    let namespace = meta.map(|m| str_of(m, "namespace")).unwrap_or_default();
    (
        str_of(o, "kind").to_string(),
        namespace.to_string(),
        name.to_string(),
    )
}

/// The first chainsaw JMESPath key (`(expression)`) in an assertion tree. celer does not
/// evaluate JMESPath, so an assertion holding one is counted as skipped, never as a match.
fn jmespath_key(expected: &Json, depth: usize) -> Option<String> {
    if depth > celer_policy::document::MAX_DEPTH {
        return None;
    }
    if let Some(e) = expected.as_object() {
        return e.iter().find_map(|(k, v)| {
            if k.starts_with('(') || k.starts_with("~(") {
                Some(k.to_string())
            } else {
                jmespath_key(v, depth + 1)
            }
        });
    }
    expected
        .as_array()
        .and_then(|e| e.iter().find_map(|v| jmespath_key(v, depth + 1)))
}

/// Whether `actual` holds everything `expected` says (maps by key, lists element by element,
/// scalars equal), as chainsaw's assert compares. A JMESPath key matches nothing here
/// ([`jmespath_key`] keeps such assertions out of the counts).
fn contains(actual: &Json, expected: &Json, depth: usize) -> bool {
    matches(actual, expected, false, depth)
}

/// [`contains`] on the plain keys only: JMESPath keys are left out. An assertion whose plain
/// part already fails is a failure whatever its JMESPath keys say.
fn contains_plain(actual: &Json, expected: &Json, depth: usize) -> bool {
    matches(actual, expected, true, depth)
}

fn matches(actual: &Json, expected: &Json, skip_jmespath: bool, depth: usize) -> bool {
    if depth > celer_policy::document::MAX_DEPTH {
        return false;
    }
    if let Some(e) = expected.as_object() {
        let Some(a) = actual.as_object() else {
            return false;
        };
        return e.iter().all(|(k, v)| {
            (skip_jmespath && (k.starts_with('(') || k.starts_with("~(")))
                || a.get(&k)
                    .is_some_and(|av| matches(av, v, skip_jmespath, depth + 1))
        });
    }
    if let Some(e) = expected.as_array() {
        let Some(a) = actual.as_array() else {
            return false;
        };
        return e.len() == a.len()
            && e.iter()
                .zip(a.iter())
                .all(|(ev, av)| matches(av, ev, skip_jmespath, depth + 1));
    }
    actual == expected
}

struct State {
    dir: std::path::PathBuf,
    manifests: Manifests,
    set: Option<PolicySet>,
    objects: Vec<Json>,
    outcome: SuiteOutcome,
    user: RequestUser,
    /// The fingerprint of each mutate-existing policy when it last ran on creation.
    ran: std::collections::HashMap<String, u64>,
}

impl State {
    fn add_policies(&mut self, file: &str) {
        let before = self.manifests.errors.len();
        let items = self.manifests.items.len();
        crate::files::read_into(&mut self.manifests, &self.dir.join(file));
        // Namespaced kinds created without a namespace land in the test's namespace.
        for (_, item) in self.manifests.items.iter_mut().skip(items) {
            let meta = match item.downcast_mut() {
                Some(KyvernoManifest::Policy(kind, p)) if kind.is_namespaced() => &mut p.metadata,
                Some(KyvernoManifest::Exception(e)) => &mut e.metadata,
                Some(KyvernoManifest::ClassicException(e)) => &mut e.metadata,
                Some(KyvernoManifest::ClusterPolicy(true, p)) => &mut p.metadata,
                _ => continue,
            };
            if meta.namespace.as_deref().is_none_or(str::is_empty) {
                meta.namespace = Some(TEST_NAMESPACE.to_string());
            }
        }
        for e in self.manifests.errors.iter().skip(before) {
            self.outcome.errors.push(e.to_string());
        }
        self.set = Some(PolicySet::build(&self.manifests));
        // Mutate-existing policies new or changed run once on the objects held.
        let changed: Vec<Arc<Existing>> = match &self.set {
            Some(set) => mutate_existing::policies(set)
                .iter()
                .filter(|p| self.ran.insert(p.key(), p.fingerprint) != Some(p.fingerprint))
                .filter(|p| p.runs_on_creation())
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        for policy in changed {
            self.mutate_existing(&policy, None);
        }
    }

    fn skip(&mut self, step: &str, why: &str) {
        self.outcome
            .skipped
            .push((step.to_string(), why.to_string()));
    }

    /// A create or apply of `file`.
    fn write(&mut self, step: &str, op: &Json, apply: bool) -> Result<(), OfflineError> {
        let Some(file) = op.get("file").and_then(|f| f.as_str()) else {
            self.skip(step, "an operation without a file");
            return Ok(());
        };
        if file.starts_with('(') {
            self.skip(step, "a templated file name");
            return Ok(());
        }
        let docs = read(&self.dir.join(file))?;
        let expect = match expectation(op) {
            Ok(e) => e,
            Err(what) => {
                self.skip(step, &format!("{what} is not read"));
                return Ok(());
            }
        };
        if docs.iter().any(is_policy_document) {
            if expect != Expect::Admitted {
                self.skip(
                    step,
                    "a policy the cluster refuses at creation (policy validation is not checked here)",
                );
                return Ok(());
            }
            self.add_policies(file);
            return Ok(());
        }
        for doc in docs {
            self.admit(step, doc, &expect, apply)?;
        }
        Ok(())
    }

    fn admit(
        &mut self,
        step: &str,
        mut object: Json,
        expect: &Expect,
        apply: bool,
    ) -> Result<(), OfflineError> {
        let info =
            celer_policy::kinds::kind_info(str_of(&object, "apiVersion"), str_of(&object, "kind"));
        let namespaced = crd_scope(&self.objects, &object).unwrap_or(info.namespaced);
        if namespaced
            && let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut())
            && meta
                .get(&"namespace")
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .is_empty()
        {
            meta.insert(&"namespace", Json::from(TEST_NAMESPACE));
        }
        default_namespace_label(&mut object);
        let (kind, namespace, name) = key(&object);
        let existing = self
            .objects
            .iter()
            .position(|o| key(o) == (kind.clone(), namespace.clone(), name.clone()));
        let (operation, old) = match (existing, apply) {
            (Some(i), true) => (Operation::Update, self.objects.get(i).cloned()),
            (Some(_), false) => {
                self.skip(
                    step,
                    "a create of an object that exists (the API server refuses it)",
                );
                return Ok(());
            }
            (None, _) => (Operation::Create, None),
        };
        let body = review_for(
            Some(&object),
            old.as_ref(),
            operation,
            &self.user,
            "chainsaw",
        )
        .map_err(|source| OfflineError::Object {
            kind: kind.clone(),
            name: name.clone(),
            source,
        })?;
        let review = AdmissionReview::parse(body.as_bytes())?;
        let request = review.request()?;
        // Namespaces, and params: every object the test created.
        let lookup = ObjectLookup::new(self.objects.iter().cloned());
        // What `resource.*` reads: the objects the test has created so far.
        let options = self.options();
        let set = {
            let manifests = &self.manifests;
            self.set.get_or_insert_with(|| PolicySet::build(manifests))
        };
        let outcome = engine::evaluate(set, &request, &lookup, &options);
        let triggered: Vec<Arc<Existing>> = if outcome.allowed {
            mutate_existing::triggered(set, &request, &lookup, &options, false)
                .into_iter()
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let matched = outcome.results.iter().any(|r| {
            matches!(
                r.kind,
                celer_policy::response::PolicyKind::KyvernoValidating
                    | celer_policy::response::PolicyKind::KyvernoMutating
                    | celer_policy::response::PolicyKind::KyvernoClusterPolicy
            )
        });
        // A mutate-existing policy whose constraints match the request looks at it, though
        // the policy leaves it alone (it is a trigger when its conditions hold).
        let matched = matched
            || !triggered.is_empty()
            || mutate_existing::constrains(set, &request, &lookup, &options);
        if !matched && *expect == Expect::Admitted && outcome.allowed {
            // A fixture (a Namespace, RBAC, a ConfigMap) that no policy looks at: admitted,
            // and not counted as a check.
            self.skip(
                step,
                &format!("{kind} {name}: no Kyverno policy matches it"),
            );
            self.objects.push(object);
            return Ok(());
        }
        let actual = match (&outcome.status, outcome.allowed) {
            (_, true) => Expect::Admitted,
            (Some(s), false) => Expect::Refused(Some(s.message.clone())),
            (None, false) => Expect::Refused(None),
        };
        let (expected_text, actual_text) = match (expect, &actual) {
            (Expect::Admitted, _) | (Expect::Refused(None), _) => (
                describe(expect, false),
                describe(&actual, matches!(expect, Expect::Refused(None))),
            ),
            (Expect::Refused(Some(m)), _) => (
                format!("refused: {}", after_denied(m)),
                describe(&actual, false),
            ),
        };
        self.outcome.checks.push(Check {
            name: format!("{step}: {kind} {namespace}/{name}"),
            passed: expected_text == actual_text,
            expected: expected_text,
            actual: actual_text,
        });
        if outcome.allowed {
            let stored = outcome.patched.clone().unwrap_or(object);
            let index = match existing {
                Some(i) => {
                    if let Some(slot) = self.objects.get_mut(i) {
                        *slot = stored;
                    }
                    i
                }
                None => {
                    self.objects.push(stored);
                    self.objects.len() - 1
                }
            };
            for policy in triggered {
                self.mutate_existing(&policy, Some((index, operation)));
            }
        }
        Ok(())
    }

    fn assert(&mut self, step: &str, op: &Json) -> Result<(), OfflineError> {
        let Some(file) = op.get("file").and_then(|f| f.as_str()) else {
            self.skip(step, "an assert without a file");
            return Ok(());
        };
        for expected in read(&self.dir.join(file))? {
            let kind = str_of(&expected, "kind");
            let name = expected
                .get("metadata")
                .map(|m| str_of(m, "name"))
                .unwrap_or_default();
            let found = self.objects.iter().find(|o| {
                str_of(o, "kind") == kind
                    && o.get("metadata").map(|m| str_of(m, "name")) == Some(name)
            });
            match found {
                None => self.skip(
                    step,
                    &format!("assert on {kind} {name:?}, which the test did not create here (status, reports, events)"),
                ),
                // Status is the API server's or a controller's to write (a CRD's
                // acceptedNames, a Deployment's replicas); admission never stored one here.
                Some(actual) if expected.get("status").is_some() && actual.get("status").is_none() => {
                    self.skip(
                        step,
                        &format!("assert on the status of {kind} {name:?}, which the API server or a controller writes"),
                    )
                }
                Some(actual)
                    if contains_plain(actual, &expected, 0)
                        && let Some(key) = jmespath_key(&expected, 0) =>
                {
                    self.skip(
                    step,
                        &format!("assert on {kind} {name:?} uses the JMESPath key {key}, which celer does not evaluate"),
                    )
                }
                Some(actual) => {
                    let passed = contains(actual, &expected, 0);
                    self.outcome.checks.push(Check {
                        name: format!("{step}: assert {kind} {name}"),
                        passed,
                        expected: sonic_rs::to_string(&expected).unwrap_or_default(),
                        actual: if passed {
                            sonic_rs::to_string(&expected).unwrap_or_default()
                        } else {
                            sonic_rs::to_string(actual).unwrap_or_default()
                        },
                    });
                }
            }
        }
        Ok(())
    }
}

/// Whether `object`'s kind is namespaced, by a CustomResourceDefinition the test created.
fn crd_scope(objects: &[Json], object: &Json) -> Option<bool> {
    let api_version = str_of(object, "apiVersion");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = str_of(object, "kind");
    objects
        .iter()
        .filter(|o| str_of(o, "kind") == "CustomResourceDefinition")
        .filter_map(|o| o.get("spec"))
        .find(|spec| {
            str_of(spec, "group") == group
                && spec.get("names").map(|n| str_of(n, "kind")) == Some(kind)
        })
        .map(|spec| str_of(spec, "scope") != "Cluster")
}

/// The API server's defaulting of a Namespace (`SetDefaults_Namespace`): the label
/// `kubernetes.io/metadata.name` holds its name, before admission sees it.
fn default_namespace_label(object: &mut Json) {
    if str_of(object, "apiVersion") != "v1" || str_of(object, "kind") != "Namespace" {
        return;
    }
    let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) else {
        return;
    };
    let name = meta
        .get(&"name")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        return;
    }
    if meta.get(&"labels").is_none_or(|l| !l.is_object()) {
        meta.insert(&"labels", Json::new_object());
    }
    if let Some(labels) = meta.get_mut(&"labels").and_then(|l| l.as_object_mut()) {
        labels.insert(&"kubernetes.io/metadata.name", Json::from(name.as_str()));
    }
}

/// The text after the webhook's `denied the request: `, or the whole text.
fn after_denied(message: &str) -> &str {
    message
        .split_once("denied the request: ")
        .map_or(message, |(_, m)| m)
        .trim()
}

fn describe(e: &Expect, bare: bool) -> String {
    match e {
        Expect::Admitted => "admitted".to_string(),
        Expect::Refused(_) if bare => "refused".to_string(),
        Expect::Refused(None) => "refused".to_string(),
        Expect::Refused(Some(m)) => format!("refused: {}", m.trim()),
    }
}

/// Runs one `chainsaw-test.yaml`.
pub fn run(test_file: &Path) -> Result<SuiteOutcome, OfflineError> {
    let doc =
        read(test_file)?
            .into_iter()
            .next()
            .ok_or_else(|| OfflineError::EmptyChainsawTest {
                path: test_file.to_path_buf(),
            })?;
    let dir = test_file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let namespace: Json = sonic_rs::from_str(&format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{{\"name\":\"{TEST_NAMESPACE}\"}}}}"
    ))?;
    let mut state = State {
        dir,
        manifests: Manifests::default(),
        set: None,
        objects: vec![namespace],
        outcome: SuiteOutcome::new(test_file),
        ran: std::collections::HashMap::new(),
        // Chainsaw runs as the cluster's admin.
        user: RequestUser {
            username: "kubernetes-admin".to_string(),
            uid: String::new(),
            groups: vec![
                "system:masters".to_string(),
                "system:authenticated".to_string(),
            ],
        },
    };
    let steps = doc
        .get("spec")
        .and_then(|s| s.get("steps"))
        .and_then(|s| s.as_array())
        .map(|a| a.iter().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for (i, step) in steps.iter().enumerate() {
        let name = match str_of(step, "name") {
            "" => format!("step {}", i + 1),
            n => n.to_string(),
        };
        if let Some(template) = step
            .get("use")
            .and_then(|u| u.get("template"))
            .and_then(|t| t.as_str())
        {
            if template.ends_with("create-policy.yaml") {
                let file = step
                    .get("use")
                    .and_then(|u| u.get("with"))
                    .and_then(|w| w.get("bindings"))
                    .and_then(|b| b.as_array())
                    .and_then(|b| {
                        b.iter()
                            .find(|x| str_of(x, "name") == "file")
                            .map(|x| str_of(x, "value").to_string())
                    });
                match file {
                    Some(f) => state.add_policies(&f),
                    None => state.skip(&name, "create-policy without a file binding"),
                }
            }
            // The `*-ready` templates wait for a cluster's status: nothing to do offline.
            continue;
        }
        let ops = step
            .get("try")
            .and_then(|t| t.as_array())
            .map(|a| a.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        for op in &ops {
            let Some(object) = op.as_object() else {
                continue;
            };
            for (verb, body) in object.iter() {
                match verb {
                    "create" => state.write(&name, body, false)?,
                    "apply" => state.write(&name, body, true)?,
                    "assert" => state.assert(&name, body)?,
                    "sleep" | "description" => {}
                    other => state.skip(&name, &format!("`{other}` needs a cluster")),
                }
            }
        }
    }
    let mut outcome = state.outcome;
    let built;
    let set = match state.set.as_ref() {
        Some(set) => set,
        None => {
            built = PolicySet::build(&state.manifests);
            &built
        }
    };
    // ClusterPolicy rules left out are not errors of the test: what they would have refused
    // is a failing check, with its reason in the known failures.
    let left_out = crate::kyverno_classic::left_out_errors(set);
    for e in &set.errors {
        let text = e.to_string();
        if !outcome.errors.contains(&text) && !left_out.contains(&text) {
            outcome.errors.push(text);
        }
    }
    Ok(outcome)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        celer_policy::document::parse_document(text, celer_policy::document::Syntax::Yaml).unwrap()
    }

    /// The expectation an operation states, or the text of why it cannot be read.
    fn read_expectation(op: &Json) -> Result<Expect, String> {
        expectation(op).map_err(|e| e.to_string())
    }

    #[test]
    fn expectations_read_chainsaws_checks() {
        assert_eq!(
            read_expectation(&json("file: x.yaml")),
            Ok(Expect::Admitted)
        );
        assert_eq!(
            read_expectation(&json("expect: [{check: {($error != null): true}}]")),
            Ok(Expect::Refused(None))
        );
        assert_eq!(
            read_expectation(&json(
                "expect: [{check: {($error): ' webhook denied the request: no '}}]"
            )),
            Ok(Expect::Refused(Some(
                "webhook denied the request: no".to_string()
            )))
        );
        assert!(read_expectation(&json("expect: [{check: {(foo): 1}}]")).is_err());
        assert_eq!(
            after_denied("admission webhook \"x\" denied the request: Policy p failed: m"),
            "Policy p failed: m"
        );
    }

    #[test]
    fn asserts_are_subsets() {
        let actual = json(
            "metadata: {name: a, labels: {x: '1', y: '2'}}\nspec: {containers: [{name: c, image: i}]}",
        );
        assert!(contains(&actual, &json("metadata: {labels: {x: '1'}}"), 0));
        assert!(contains(
            &actual,
            &json("spec: {containers: [{name: c}]}"),
            0
        ));
        assert!(!contains(&actual, &json("metadata: {labels: {x: '2'}}"), 0));
        assert!(!contains(&actual, &json("spec: {containers: []}"), 0));
        // JMESPath keys are not evaluated: found, so the assertion is skipped, and never a match.
        let jmespath = json("metadata: {labels: {x: '1'}, (labels.z): null}");
        assert_eq!(jmespath_key(&jmespath, 0).as_deref(), Some("(labels.z)"));
        assert!(!contains(&actual, &jmespath, 0));
        assert!(contains_plain(&actual, &jmespath, 0));
        let wrong = json("metadata: {labels: {x: '2'}, (labels.z): null}");
        assert!(!contains_plain(&actual, &wrong, 0));
        assert_eq!(
            jmespath_key(&json("spec: {containers: [{~(name): c}]}"), 0).as_deref(),
            Some("~(name)")
        );
        assert_eq!(jmespath_key(&json("metadata: {labels: {x: '1'}}"), 0), None);
    }
}
