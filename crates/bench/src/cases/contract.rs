//! The 180 correctness cases of the contract policies (policies/bench-contract): a mutation
//! that adds `policy-bench-injected: "true"` when the annotation is absent, and a validation
//! that requires `policy-bench-team: "platform"`, on Pods labelled `policy-bench-subject:
//! "true"` in namespace `policy-bench`, for CREATE and UPDATE. The expected answers are
//! written from the contract's own rules here ([`expected_validate`], [`expected_mutate`]),
//! not taken from any engine.

use std::collections::BTreeMap;

use sonic_rs::{JsonValueMutTrait, Value};

use super::{Case, Expectation, set};
use crate::bodies::{CONTRACT_NAMESPACE, INJECTED_ANNOTATION, SUBJECT_LABEL, TEAM_ANNOTATION};

/// The validation's message.
pub const MESSAGE: &str = "policy-bench-team annotation must equal platform";

/// The number of cases [`cases`] makes.
pub const COUNT: usize = 180;

const NAMESPACES: [&str; 3] = [CONTRACT_NAMESPACE, "default", "policy-bench-staging"];
/// `None`: no such label / annotation.
const SUBJECT: [Option<&str>; 3] = [Some("true"), Some("false"), None];
const TEAM: [Option<&str>; 5] = [
    Some("platform"),
    Some("other"),
    None,
    Some(""),
    Some("Platform"),
];
const INJECTED: [Option<&str>; 3] = [None, Some("true"), Some("false")];
const OPERATIONS: [&str; 2] = ["CREATE", "UPDATE"];

/// A Pod as the cases send it.
#[derive(Debug, Clone)]
struct PodSpec<'a> {
    name: String,
    namespace: &'a str,
    subject: Option<&'a str>,
    /// `None`: no annotations map at all.
    annotations: Option<Vec<(&'a str, &'a str)>>,
    containers: usize,
}

impl PodSpec<'_> {
    fn value(&self) -> Value {
        let mut labels = sonic_rs::Object::new();
        labels.insert(&"app", "web");
        if let Some(s) = self.subject {
            labels.insert(&SUBJECT_LABEL, s);
        }
        let mut metadata = sonic_rs::json!({
            "name": self.name.as_str(),
            "namespace": self.namespace,
            "labels": labels,
        });
        if let Some(list) = &self.annotations {
            let mut map = sonic_rs::Object::new();
            for (k, v) in list {
                map.insert(k, *v);
            }
            set(&mut metadata, "annotations", map.into());
        }
        let containers: Vec<Value> = (0..self.containers)
            .map(|i| sonic_rs::json!({"name": format!("c{i}"), "image": format!("registry.example/web:{i}")}))
            .collect();
        sonic_rs::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {"containers": containers}
        })
    }

    /// In the contract's scope (for one object; UPDATE matches if either object does).
    fn subject(&self) -> bool {
        self.namespace == CONTRACT_NAMESPACE && self.subject == Some("true")
    }
}

/// What `/validate` must answer for a Pod in scope or not.
pub fn expected_validate(in_scope: bool, team: Option<&str>) -> Expectation {
    if in_scope && team != Some("platform") {
        Expectation {
            allowed: false,
            code: Some(403),
            message_contains: Some(MESSAGE.to_string()),
            warnings: Some(Vec::new()),
            patched: Some(false),
            annotations: None,
        }
    } else {
        Expectation {
            allowed: true,
            warnings: Some(Vec::new()),
            patched: Some(false),
            ..Expectation::default()
        }
    }
}

/// What `/mutate` must answer: the injected annotation added only when in scope and absent.
pub fn expected_mutate(in_scope: bool, injected: Option<&str>) -> Expectation {
    let adds = in_scope && injected.is_none();
    let after = if adds { Some("true") } else { injected };
    let mut annotations = BTreeMap::new();
    annotations.insert(INJECTED_ANNOTATION.to_string(), after.map(str::to_string));
    Expectation {
        allowed: true,
        warnings: Some(Vec::new()),
        patched: Some(adds),
        annotations: Some(annotations),
        ..Expectation::default()
    }
}

fn review(
    n: usize,
    operation: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    api_version: &str,
) -> Value {
    let subject = object.or(old).cloned().unwrap_or_default();
    let mut review = crate::bodies::review_for(&subject, operation, old);
    if let Some(request) = review.get_mut("request") {
        set(
            request,
            "uid",
            format!("c0ffee00-0000-4000-8000-{n:012}").as_str().into(),
        );
        set(request, "object", object.cloned().unwrap_or_default());
        set(request, "oldObject", old.cloned().unwrap_or_default());
        if operation == "DELETE" {
            set(
                request,
                "options",
                sonic_rs::json!({"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}),
            );
        }
    }
    set(&mut review, "apiVersion", api_version.into());
    review
}

struct Builder {
    cases: Vec<Case>,
}

impl Builder {
    fn push(&mut self, name: String, path: &str, review: Value, expect: Expectation) {
        self.cases.push(Case {
            name: format!("{:03} {name}", self.cases.len() + 1),
            path: Some(path.to_string()),
            review,
            expect,
        });
    }

    /// A Pod CREATE or UPDATE (the old object the same Pod with other containers).
    fn pod(&mut self, label: String, path: &str, op: &str, pod: &PodSpec<'_>, expect: Expectation) {
        let n = self.cases.len() + 1;
        let object = pod.value();
        let old = (op == "UPDATE").then(|| {
            PodSpec {
                containers: pod.containers + 1,
                ..pod.clone()
            }
            .value()
        });
        let review = review(n, op, Some(&object), old.as_ref(), "admission.k8s.io/v1");
        self.push(label, path, review, expect);
    }
}

fn show(v: Option<&str>) -> String {
    match v {
        None => "absent".to_string(),
        Some(s) => format!("{s:?}"),
    }
}

fn pod<'a>(
    n: usize,
    ns: &'a str,
    subject: Option<&'a str>,
    annotations: Vec<(&'a str, &'a str)>,
) -> PodSpec<'a> {
    PodSpec {
        name: format!("web-{n}"),
        namespace: ns,
        subject,
        annotations: Some(annotations),
        containers: 1,
    }
}

/// The 180 cases, in a fixed order, each named by what it checks.
pub fn cases() -> Vec<Case> {
    let mut b = Builder { cases: Vec::new() };
    // 90: the validation over namespace x subject label x team annotation x operation.
    for ns in NAMESPACES {
        for subject in SUBJECT {
            for team in TEAM {
                for op in OPERATIONS {
                    let mut ann = vec![("owner", "web")];
                    if let Some(t) = team {
                        ann.push((TEAM_ANNOTATION, t));
                    }
                    let p = pod(b.cases.len(), ns, subject, ann);
                    let expect = expected_validate(p.subject(), team);
                    let label = format!(
                        "validate {op} ns={ns} subject={} team={}",
                        show(subject),
                        show(team)
                    );
                    b.pod(label, "/validate", op, &p, expect);
                }
            }
        }
    }
    // 54: the mutation over namespace x subject label x injected annotation x operation.
    for ns in NAMESPACES {
        for subject in SUBJECT {
            for injected in INJECTED {
                for op in OPERATIONS {
                    let mut ann = vec![(TEAM_ANNOTATION, "platform")];
                    if let Some(i) = injected {
                        ann.push((INJECTED_ANNOTATION, i));
                    }
                    let p = pod(b.cases.len(), ns, subject, ann);
                    let expect = expected_mutate(p.subject(), injected);
                    let label = format!(
                        "mutate {op} ns={ns} subject={} injected={}",
                        show(subject),
                        show(injected)
                    );
                    b.pod(label, "/mutate", op, &p, expect);
                }
            }
        }
    }
    // 8: no annotations map at all.
    for ns in [CONTRACT_NAMESPACE, "default"] {
        for op in OPERATIONS {
            let p = PodSpec {
                annotations: None,
                ..pod(b.cases.len(), ns, Some("true"), Vec::new())
            };
            let v = expected_validate(p.subject(), None);
            b.pod(
                format!("validate {op} ns={ns} no annotations map"),
                "/validate",
                op,
                &p,
                v,
            );
            let m = expected_mutate(p.subject(), None);
            b.pod(
                format!("mutate {op} ns={ns} no annotations map"),
                "/mutate",
                op,
                &p,
                m,
            );
        }
    }
    extra_cases(&mut b);
    b.cases
}

/// 28 more: other operations, kinds and subresources, label changes on UPDATE, near-miss
/// values, large Pods, dry runs, v1beta1.
fn extra_cases(b: &mut Builder) {
    let ns = CONTRACT_NAMESPACE;
    // DELETE of a subject Pod without the team annotation: out of the contract's operations.
    for (path, expect) in [
        ("/validate", expected_validate(false, None)),
        ("/mutate", expected_mutate(false, None)),
    ] {
        let old = pod(b.cases.len(), ns, Some("true"), Vec::new()).value();
        let r = review(
            b.cases.len() + 1,
            "DELETE",
            None,
            Some(&old),
            "admission.k8s.io/v1",
        );
        b.push(
            format!("{} DELETE subject Pod", &path[1..]),
            path,
            r,
            expect,
        );
    }
    // Other kinds labelled as subjects in the namespace: only Pods are in scope.
    let configmap = sonic_rs::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": ns, "labels": {SUBJECT_LABEL: "true"}},
        "data": {"k": "v"}
    });
    let deployment = sonic_rs::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": ns, "labels": {SUBJECT_LABEL: "true"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web", SUBJECT_LABEL: "true"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example/web:1"}]}}}
    });
    for (kind, object) in [("ConfigMap", &configmap), ("Deployment", &deployment)] {
        for (path, expect) in [
            ("/validate", expected_validate(false, None)),
            ("/mutate", expected_mutate(false, None)),
        ] {
            let r = review(
                b.cases.len() + 1,
                "CREATE",
                Some(object),
                None,
                "admission.k8s.io/v1",
            );
            b.push(
                format!("{} CREATE subject {kind}", &path[1..]),
                path,
                r,
                expect,
            );
        }
    }
    // The Namespace policy-bench itself.
    let namespace =
        sonic_rs::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    for (path, expect) in [
        ("/validate", expected_validate(false, None)),
        ("/mutate", expected_mutate(false, None)),
    ] {
        let r = review(
            b.cases.len() + 1,
            "CREATE",
            Some(&namespace),
            None,
            "admission.k8s.io/v1",
        );
        b.push(
            format!("{} CREATE Namespace {ns}", &path[1..]),
            path,
            r,
            expect,
        );
    }
    // pods/status: a subresource the rules do not name.
    for (path, expect) in [
        ("/validate", expected_validate(false, None)),
        ("/mutate", expected_mutate(false, None)),
    ] {
        let p = pod(b.cases.len(), ns, Some("true"), Vec::new()).value();
        let mut r = review(
            b.cases.len() + 1,
            "UPDATE",
            Some(&p),
            Some(&p),
            "admission.k8s.io/v1",
        );
        if let Some(request) = r.get_mut("request") {
            set(request, "subResource", "status".into());
            set(request, "requestSubResource", "status".into());
        }
        b.push(
            format!("{} UPDATE pods/status of a subject Pod", &path[1..]),
            path,
            r,
            expect,
        );
    }
    // UPDATE where only one of object and oldObject carries the label: the objectSelector
    // matches if either does.
    for (new_label, old_label) in [(None, Some("true")), (Some("true"), None)] {
        let n = b.cases.len();
        let new = pod(n, ns, new_label, vec![("owner", "web")]).value();
        let old = pod(n, ns, old_label, vec![("owner", "web")]).value();
        let r = review(
            n + 1,
            "UPDATE",
            Some(&new),
            Some(&old),
            "admission.k8s.io/v1",
        );
        let which = if new_label.is_some() {
            "object"
        } else {
            "oldObject"
        };
        b.push(
            format!("validate UPDATE label only on {which}"),
            "/validate",
            r,
            expected_validate(true, None),
        );
        let n = b.cases.len();
        let r = review(
            n + 1,
            "UPDATE",
            Some(&new),
            Some(&old),
            "admission.k8s.io/v1",
        );
        b.push(
            format!("mutate UPDATE label only on {which}"),
            "/mutate",
            r,
            expected_mutate(true, None),
        );
    }
    // Near misses of the team value.
    for team in [" platform", "platform "] {
        let p = pod(
            b.cases.len(),
            ns,
            Some("true"),
            vec![(TEAM_ANNOTATION, team)],
        );
        b.pod(
            format!("validate CREATE team={team:?}"),
            "/validate",
            "CREATE",
            &p,
            expected_validate(true, Some(team)),
        );
    }
    // The label's value is case-sensitive: "True" is not a subject.
    let p = pod(b.cases.len(), ns, Some("True"), Vec::new());
    b.pod(
        "validate CREATE subject=\"True\"".into(),
        "/validate",
        "CREATE",
        &p,
        expected_validate(false, None),
    );
    let p = pod(b.cases.len(), ns, Some("True"), Vec::new());
    b.pod(
        "mutate CREATE subject=\"True\"".into(),
        "/mutate",
        "CREATE",
        &p,
        expected_mutate(false, None),
    );
    // An empty injected value is present: never overwritten.
    for op in OPERATIONS {
        let p = pod(
            b.cases.len(),
            ns,
            Some("true"),
            vec![(INJECTED_ANNOTATION, "")],
        );
        b.pod(
            format!("mutate {op} injected=\"\""),
            "/mutate",
            op,
            &p,
            expected_mutate(true, Some("")),
        );
    }
    // Large Pods: 8 containers, 50 annotations.
    let many: Vec<(&str, &str)> = NOTE_KEYS.iter().map(|k| (*k, "note")).collect();
    for team in [Some("platform"), None] {
        let mut ann = many.clone();
        if let Some(t) = team {
            ann.push((TEAM_ANNOTATION, t));
        }
        let p = PodSpec {
            containers: 8,
            ..pod(b.cases.len(), ns, Some("true"), ann.clone())
        };
        b.pod(
            format!("validate CREATE large Pod team={}", show(team)),
            "/validate",
            "CREATE",
            &p,
            expected_validate(true, team),
        );
        let p = PodSpec {
            containers: 8,
            ..pod(b.cases.len(), ns, Some("true"), ann)
        };
        b.pod(
            format!("mutate CREATE large Pod team={}", show(team)),
            "/mutate",
            "CREATE",
            &p,
            expected_mutate(true, None),
        );
    }
    // Dry runs are judged the same.
    for (path, expect) in [
        ("/validate", expected_validate(true, None)),
        ("/mutate", expected_mutate(true, None)),
    ] {
        let p = pod(b.cases.len(), ns, Some("true"), Vec::new()).value();
        let mut r = review(
            b.cases.len() + 1,
            "CREATE",
            Some(&p),
            None,
            "admission.k8s.io/v1",
        );
        if let Some(request) = r.get_mut("request") {
            set(request, "dryRun", true.into());
        }
        b.push(
            format!("{} CREATE dryRun subject Pod", &path[1..]),
            path,
            r,
            expect,
        );
    }
    // admission.k8s.io/v1beta1 reviews.
    for (path, expect) in [
        ("/validate", expected_validate(true, None)),
        ("/mutate", expected_mutate(true, None)),
    ] {
        let p = pod(b.cases.len(), ns, Some("true"), Vec::new()).value();
        let r = review(
            b.cases.len() + 1,
            "CREATE",
            Some(&p),
            None,
            "admission.k8s.io/v1beta1",
        );
        b.push(
            format!("{} CREATE v1beta1 subject Pod", &path[1..]),
            path,
            r,
            expect,
        );
    }
}

/// The 180 cases for API mode (`celer bench --kube`, `celer bench cases contract-api`): Pod
/// CREATEs over namespace x subject label x team annotation x existing injected annotation
/// (absent, "true", "false", ""), each judged as the API server answers a client with both
/// policies installed: the mutation first, then the validation; admitted with HTTP 201 and the
/// injected annotation as the mutation leaves it, or denied with 403 and the message. Only
/// CREATEs: an UPDATE needs the object to exist. Warnings are not checked (the API server may
/// add its own, e.g. Pod Security's).
pub fn api_cases() -> Vec<Case> {
    const INJECTED_API: [Option<&str>; 4] = [None, Some("true"), Some("false"), Some("")];
    let mut b = Builder { cases: Vec::new() };
    for ns in NAMESPACES {
        for subject in SUBJECT {
            for team in TEAM {
                for injected in INJECTED_API {
                    let mut ann = vec![("owner", "web")];
                    if let Some(t) = team {
                        ann.push((TEAM_ANNOTATION, t));
                    }
                    if let Some(i) = injected {
                        ann.push((INJECTED_ANNOTATION, i));
                    }
                    let p = pod(b.cases.len(), ns, subject, ann);
                    let validate = expected_validate(p.subject(), team);
                    let expect = if validate.allowed {
                        Expectation {
                            allowed: true,
                            code: Some(201),
                            annotations: expected_mutate(p.subject(), injected).annotations,
                            ..Expectation::default()
                        }
                    } else {
                        Expectation {
                            allowed: false,
                            code: Some(403),
                            message_contains: Some(MESSAGE.to_string()),
                            ..Expectation::default()
                        }
                    };
                    let label = format!(
                        "api CREATE ns={ns} subject={} team={} injected={}",
                        show(subject),
                        show(team),
                        show(injected)
                    );
                    let review = review(
                        b.cases.len() + 1,
                        "CREATE",
                        Some(&p.value()),
                        None,
                        "admission.k8s.io/v1",
                    );
                    b.cases.push(Case {
                        name: format!("{:03} {label}", b.cases.len() + 1),
                        path: None,
                        review,
                        expect,
                    });
                }
            }
        }
    }
    b.cases
}

const NOTE_KEYS: [&str; 50] = [
    "n/00", "n/01", "n/02", "n/03", "n/04", "n/05", "n/06", "n/07", "n/08", "n/09", "n/10", "n/11",
    "n/12", "n/13", "n/14", "n/15", "n/16", "n/17", "n/18", "n/19", "n/20", "n/21", "n/22", "n/23",
    "n/24", "n/25", "n/26", "n/27", "n/28", "n/29", "n/30", "n/31", "n/32", "n/33", "n/34", "n/35",
    "n/36", "n/37", "n/38", "n/39", "n/40", "n/41", "n/42", "n/43", "n/44", "n/45", "n/46", "n/47",
    "n/48", "n/49",
];

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::JsonValueTrait;

    #[test]
    fn one_hundred_and_eighty_distinct_cases() {
        let cases = cases();
        assert_eq!(cases.len(), COUNT);
        let names: std::collections::BTreeSet<_> = cases.iter().map(|c| c.name.clone()).collect();
        assert_eq!(names.len(), COUNT);
        let uids: std::collections::BTreeSet<_> = cases
            .iter()
            .map(|c| {
                c.review
                    .pointer(&["request", "uid"])
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(uids.len(), COUNT);
        // What the set covers.
        let denied = cases.iter().filter(|c| !c.expect.allowed).count();
        let patched = cases
            .iter()
            .filter(|c| c.expect.patched == Some(true))
            .count();
        let kept = cases
            .iter()
            .filter(|c| c.path.as_deref() == Some("/mutate") && c.expect.patched == Some(false))
            .count();
        let updates = cases
            .iter()
            .filter(|c| c.review.pointer(&["request", "operation"]).as_str() == Some("UPDATE"))
            .count();
        let other_ns = cases
            .iter()
            .filter(|c| {
                c.review.pointer(&["request", "namespace"]).as_str() != Some(CONTRACT_NAMESPACE)
            })
            .count();
        // 8 in the matrix, 2 without annotations, 2 label changes, 2 near misses, 1 large Pod,
        // 1 dry run, 1 v1beta1.
        assert_eq!(denied, 17);
        // 2 in the matrix, 2 without annotations, 2 label changes, 2 large Pods, 1 dry run,
        // 1 v1beta1.
        assert_eq!(patched, 10);
        assert!(kept > 40, "{kept}");
        assert!(updates > 70, "{updates}");
        assert!(other_ns > 60, "{other_ns}");
        for c in &cases {
            if !c.expect.allowed {
                assert_eq!(c.expect.message_contains.as_deref(), Some(MESSAGE));
                assert_eq!(c.expect.code, Some(403));
            }
        }
    }

    #[test]
    fn api_cases_are_creates_judged_as_the_api_server_answers() {
        let cases = api_cases();
        assert_eq!(cases.len(), COUNT);
        let denied: Vec<_> = cases.iter().filter(|c| !c.expect.allowed).collect();
        // In scope (policy-bench, subject "true") without team "platform": 4 team values x 4.
        assert_eq!(denied.len(), 16);
        assert!(denied.iter().all(|c| c.expect.code == Some(403)));
        let injected = cases
            .iter()
            .filter(|c| {
                c.expect
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.get(INJECTED_ANNOTATION) == Some(&Some("true".to_string())))
            })
            .count();
        // Admitted subjects (team platform) with the annotation absent or already "true",
        // plus the 8 non-subject namespace x label pairs x 5 team values carrying "true".
        assert_eq!(injected, 2 + 8 * 5);
        assert!(
            cases
                .iter()
                .all(|c| c.path.is_none() && c.expect.warnings.is_none())
        );
        assert!(
            cases
                .iter()
                .all(|c| c.review.pointer(&["request", "operation"]).as_str() == Some("CREATE"))
        );
    }

    #[test]
    fn lines_round_trip() {
        let cases = cases();
        let line = super::super::to_line(&cases[0]);
        let back: Case = sonic_rs::from_str(&line).unwrap();
        assert_eq!(back.name, cases[0].name);
        assert_eq!(back.expect, cases[0].expect);
        assert!(!line.contains('\n'));
    }
}
