//! Rule matching and validation, after the ideas of upstream's `rules_test.go` and the rule
//! cases of `validation_test.go`; the cases are our own.

use super::*;
use crate::attributes::GroupVersionKind;

pub(crate) fn rule(
    ops: &[&str],
    groups: &[&str],
    versions: &[&str],
    resources: &[&str],
) -> NamedRuleWithOperations {
    let v = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    NamedRuleWithOperations {
        resource_names: Vec::new(),
        operations: v(ops),
        api_groups: v(groups),
        api_versions: v(versions),
        resources: v(resources),
        scope: None,
    }
}

/// A request for `group/version/resource[/sub]` named `name` in `namespace`.
pub(crate) fn request<'a>(
    gvr: (&'a str, &'a str, &'a str),
    sub: &'a str,
    op: Operation,
    namespace: &'a str,
    name: &'a str,
) -> Attributes<'a> {
    Attributes {
        kind: GroupVersionKind {
            group: gvr.0,
            version: gvr.1,
            kind: "K",
        },
        resource: GroupVersionResource {
            group: gvr.0,
            version: gvr.1,
            resource: gvr.2,
        },
        sub_resource: sub,
        operation: op,
        name,
        namespace,
        object: None,
        old_object: None,
    }
}

fn matches(r: &NamedRuleWithOperations, a: &Attributes<'_>) -> bool {
    Rule::new(r).matches(a, a.resource)
}

const C: Operation = Operation::Create;

#[test]
fn groups_and_versions_are_exact_or_wildcard() {
    let any = rule(&["*"], &["*"], &["*"], &["*"]);
    let exact = rule(&["*"], &["g1", ""], &["v1", "v2"], &["*"]);
    let cases = [
        (("g1", "v1", "r"), true, true),
        (("", "v2", "r"), true, true),
        (("g3", "v1", "r"), true, false),
        (("g1", "v3", "r"), true, false),
        (("G1", "v1", "r"), true, false),
    ];
    for (gvr, any_want, exact_want) in cases {
        let a = request(gvr, "", C, "ns", "n");
        assert_eq!(matches(&any, &a), any_want, "{gvr:?} any");
        assert_eq!(matches(&exact, &a), exact_want, "{gvr:?} exact");
    }
}

#[test]
fn operations_are_exact_or_wildcard() {
    let all = [
        Operation::Create,
        Operation::Update,
        Operation::Delete,
        Operation::Connect,
    ];
    let any = rule(&["*"], &["*"], &["*"], &["*"]);
    let some = rule(&["CREATE", "DELETE"], &["*"], &["*"], &["*"]);
    for op in all {
        let a = request(("g", "v", "r"), "", op, "ns", "n");
        assert!(matches(&any, &a), "{op:?}");
        assert_eq!(
            matches(&some, &a),
            matches!(op, Operation::Create | Operation::Delete),
            "{op:?}"
        );
    }
    // An operation validation rejects never matches; neither does an empty list.
    let bogus = rule(&["PATCH"], &["*"], &["*"], &["*"]);
    let none = rule(&[], &["*"], &["*"], &["*"]);
    for op in all {
        let a = request(("g", "v", "r"), "", op, "ns", "n");
        assert!(!matches(&bogus, &a));
        assert!(!matches(&none, &a));
    }
}

#[test]
fn resource_forms() {
    // (entries, [pods, pods/status, pods/log, deployments, deployments/status, deployments/scale])
    let reqs = [
        ("pods", ""),
        ("pods", "status"),
        ("pods", "log"),
        ("deployments", ""),
        ("deployments", "status"),
        ("deployments", "scale"),
    ];
    let cases: [(&[&str], [bool; 6]); 9] = [
        (&["*"], [true, false, false, true, false, false]),
        (&["*/*"], [true, true, true, true, true, true]),
        (&["pods"], [true, false, false, false, false, false]),
        (&["pods/*"], [true, true, true, false, false, false]),
        (&["*/status"], [false, true, false, false, true, false]),
        (&["pods/status"], [false, true, false, false, false, false]),
        (
            &["pods", "deployments/scale"],
            [true, false, false, false, false, true],
        ),
        // `pods/` splits into pods and the empty subresource: plain pods.
        (&["pods/"], [true, false, false, false, false, false]),
        (&["*", "*/status"], [true, true, false, true, true, false]),
    ];
    for (entries, want) in cases {
        let r = rule(&["*"], &["*"], &["*"], entries);
        for ((res, sub), expected) in reqs.iter().zip(want) {
            let a = request(("", "v1", res), sub, C, "ns", "n");
            assert_eq!(matches(&r, &a), expected, "{entries:?} on {res}/{sub}");
        }
    }
}

#[test]
fn multi_level_subresources_compare_whole() {
    let r = rule(&["*"], &["*"], &["*"], &["services/proxy/x"]);
    assert!(matches(
        &r,
        &request(("", "v1", "services"), "proxy/x", C, "ns", "n")
    ));
    assert!(!matches(
        &r,
        &request(("", "v1", "services"), "proxy", C, "ns", "n")
    ));
}

#[test]
fn scopes() {
    let scoped = |scope: Option<&str>| {
        let mut r = rule(&["*"], &["*"], &["*"], &["*"]);
        r.scope = scope.map(str::to_string);
        r
    };
    // (request, [None, "*", Namespaced, Cluster, bogus])
    type Case<'a> = ((&'a str, &'a str, &'a str), &'a str, [bool; 5]);
    let cases: [Case<'_>; 5] = [
        (("", "v1", "pods"), "ns", [true, true, true, false, false]),
        (("", "v1", "nodes"), "", [true, true, false, true, false]),
        // A Namespace request carries its own name as namespace but is cluster-scoped.
        (
            ("", "v1", "namespaces"),
            "ns",
            [true, true, false, true, false],
        ),
        (
            ("", "v1", "namespaces"),
            "",
            [true, true, false, true, false],
        ),
        // Only the core v1 namespaces resource is special.
        (
            ("x.io", "v1", "namespaces"),
            "ns",
            [true, true, true, false, false],
        ),
    ];
    let scopes = [
        None,
        Some("*"),
        Some("Namespaced"),
        Some("Cluster"),
        Some("Global"),
    ];
    for (gvr, ns, want) in cases {
        for (scope, expected) in scopes.iter().zip(want) {
            let a = request(gvr, "", C, ns, "n");
            assert_eq!(
                matches(&scoped(*scope), &a),
                expected,
                "{gvr:?} in {ns:?} scope {scope:?}"
            );
        }
    }
}

#[test]
fn resource_names() {
    let mut r = rule(&["*"], &["*"], &["*"], &["configmaps"]);
    r.resource_names = vec!["a".into(), "b".into()];
    assert!(matches(
        &r,
        &request(("", "v1", "configmaps"), "", C, "ns", "a")
    ));
    assert!(matches(
        &r,
        &request(("", "v1", "configmaps"), "", C, "ns", "b")
    ));
    assert!(!matches(
        &r,
        &request(("", "v1", "configmaps"), "", C, "ns", "c")
    ));
    // A CREATE relying on generateName has no name yet.
    assert!(!matches(
        &r,
        &request(("", "v1", "configmaps"), "", C, "ns", "")
    ));
    // Names do not widen the rule itself.
    assert!(!matches(
        &r,
        &request(("", "v1", "secrets"), "", C, "ns", "a")
    ));
}

#[test]
fn keys_enumerate_the_rule() {
    let r = Rule::new(&rule(
        &["CREATE", "UPDATE"],
        &["", "apps"],
        &["v1"],
        &["pods/*", "*"],
    ));
    let keys = r.keys();
    assert_eq!(keys.len(), 8);
    assert!(keys.contains(&RuleKey {
        group: Pattern::Exact("apps"),
        resource: Pattern::Any,
        subresource: Pattern::Exact(""),
        operation: Some(Operation::Update),
    }));
    assert!(keys.contains(&RuleKey {
        group: Pattern::Exact(""),
        resource: Pattern::Exact("pods"),
        subresource: Pattern::Any,
        operation: Some(Operation::Create),
    }));
    let all = Rule::new(&rule(&["*"], &["*"], &["*"], &["*/*"]));
    assert_eq!(
        all.keys(),
        vec![RuleKey {
            group: Pattern::Any,
            resource: Pattern::Any,
            subresource: Pattern::Any,
            operation: None,
        }]
    );
}

fn errors(r: &NamedRuleWithOperations) -> Vec<String> {
    validate(r, "spec.matchConstraints.resourceRules[0]")
        .iter()
        .map(ToString::to_string)
        .collect()
}

const P: &str = "spec.matchConstraints.resourceRules[0]";

#[test]
fn valid_rules_have_no_errors() {
    let mut r = rule(
        &["CREATE", "UPDATE"],
        &["", "apps"],
        &["v1"],
        &["pods", "pods/status", "*/scale"],
    );
    r.scope = Some("Namespaced".into());
    r.resource_names = vec!["a".into(), "b".into()];
    assert_eq!(errors(&r), Vec::<String>::new());
    for resources in [
        &["*"][..],
        &["*/*"],
        &["pods/*", "deployments"],
        &["*", "*/status"],
    ] {
        assert_eq!(
            errors(&rule(&["*"], &["*"], &["*"], resources)),
            Vec::<String>::new(),
            "{resources:?}"
        );
    }
}

#[test]
fn required_lists() {
    assert_eq!(
        errors(&rule(&[], &[], &[], &[])),
        vec![
            format!("{P}.operations: Required value"),
            format!("{P}.apiGroups: Required value"),
            format!("{P}.apiVersions: Required value"),
            format!("{P}.resources: Required value"),
        ]
    );
    assert_eq!(
        errors(&rule(&["*"], &["*"], &["v1", ""], &["pods", ""])),
        vec![
            format!("{P}.apiVersions[1]: Required value"),
            format!("{P}.resources[1]: Required value"),
        ]
    );
}

#[test]
fn wildcards_must_stand_alone() {
    assert_eq!(
        errors(&rule(
            &["*", "CREATE"],
            &["*", "apps"],
            &["*", "v1"],
            &["*/*", "pods"]
        )),
        vec![
            format!(
                r#"{P}.operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations"#
            ),
            format!(
                r#"{P}.apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups"#
            ),
            format!(
                r#"{P}.apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions"#
            ),
            format!(
                r#"{P}.resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources"#
            ),
        ]
    );
}

#[test]
fn unsupported_operations_and_scope() {
    let mut r = rule(&["CREATE", "PATCH", "create"], &["*"], &["*"], &["*"]);
    r.scope = Some("Global".into());
    assert_eq!(
        errors(&r),
        vec![
            format!(
                r#"{P}.operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE""#
            ),
            format!(
                r#"{P}.operations[2]: Unsupported value: "create": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE""#
            ),
            format!(
                r#"{P}.scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced""#
            ),
        ]
    );
}

#[test]
fn resource_combinations() {
    let cases: [(&[&str], Vec<String>); 6] = [
        (
            &["*", "pods"],
            vec![format!(
                r#"{P}.resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources without subresources"#
            )],
        ),
        // Upstream only remembers the last plain entry, so this order passes.
        (&["pods", "*"], vec![]),
        (
            &["pods/*", "pods/status"],
            vec![format!(
                r#"{P}.resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status"#
            )],
        ),
        (
            &["*/status", "pods/status"],
            vec![format!(
                r#"{P}.resources[1]: Invalid value: "pods/status": if '*/status' is present, must not specify pods/status"#
            )],
        ),
        // An entry before the wildcard is not checked against it.
        (&["pods/status", "pods/*"], vec![]),
        (
            &["*/*", "*/*"],
            vec![
                format!(
                    r#"{P}.resources[1]: Invalid value: "*/*": if '*/*' is present, must not specify */*"#
                ),
                format!(
                    r#"{P}.resources[1]: Invalid value: "*/*": if '*/*' is present, must not specify */*"#
                ),
                format!(
                    r#"{P}.resources: Invalid value: ["*/*","*/*"]: if '*/*' is present, must not specify other resources"#
                ),
            ],
        ),
    ];
    for (resources, want) in cases {
        assert_eq!(
            errors(&rule(&["*"], &["*"], &["*"], resources)),
            want,
            "{resources:?}"
        );
    }
}

#[test]
fn resource_names_are_path_segments_and_unique() {
    let mut r = rule(&["*"], &["*"], &["*"], &["*"]);
    r.resource_names = vec!["a".into(), "..".into(), "a/b".into(), "a".into()];
    assert_eq!(
        errors(&r),
        vec![
            format!(r#"{P}.resourceNames[1]: Invalid value: "..": may not be '..'"#),
            format!(r#"{P}.resourceNames[2]: Invalid value: "a/b": may not contain '/'"#),
            format!(r#"{P}.resourceNames[3]: Duplicate value: "a""#),
        ]
    );
}
