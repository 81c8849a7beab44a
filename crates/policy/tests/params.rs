//! Params as `policy/generic/policy_dispatcher.go CollectParams` collects them: by name or by
//! selector (each param its own evaluation, the decisions of all kept), namespaces, the
//! parameterNotFoundAction, and bindings without a paramRef.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use celer_policy::response::ResultKind;
use support::*;

/// A policy reading `params.data.max` as the longest allowed Pod name.
fn policy(failure: &str) -> String {
    vap(
        "p",
        &format!(
            r#"failurePolicy: {failure}, paramKind: {{apiVersion: v1, kind: ConfigMap}}, validations: [{{expression: "size(object.metadata.name) <= int(params.data.max)", messageExpression: "'longer than ' + params.data.max + ' (' + params.metadata.name + ')'"}}]"#
        ),
    )
}

fn params() -> String {
    config_map("two", "default", "{tier: strict}", "{max: '2'}")
        + &config_map("ten", "default", "{tier: loose}", "{max: '10'}")
        + &config_map("one", "other", "{tier: strict}", "{max: '1'}")
}

#[test]
fn params_by_name_and_by_selector() {
    let no_params = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction";
    // (paramRef, expected verdict for a Pod `web` in `default`)
    let cases: &[(&str, &str)] = &[
        // By name, in the request's namespace.
        ("{name: ten, parameterNotFoundAction: Deny}", "allowed"),
        (
            "{name: two, parameterNotFoundAction: Deny}",
            "longer than 2 (two)",
        ),
        // By name, in another namespace.
        (
            "{name: one, namespace: other, parameterNotFoundAction: Deny}",
            "longer than 1 (one)",
        ),
        // Not found.
        ("{name: one, parameterNotFoundAction: Deny}", no_params),
        ("{name: one, parameterNotFoundAction: Allow}", "allowed"),
        // By selector: each selected param is evaluated, and any denial denies.
        (
            "{selector: {matchLabels: {tier: loose}}, parameterNotFoundAction: Deny}",
            "allowed",
        ),
        (
            "{selector: {}, parameterNotFoundAction: Deny}",
            "longer than 2 (two)",
        ),
        (
            "{selector: {matchExpressions: [{key: tier, operator: In, values: [strict, loose]}]}, parameterNotFoundAction: Deny}",
            "longer than 2 (two)",
        ),
        (
            "{selector: {}, namespace: other, parameterNotFoundAction: Deny}",
            "longer than 1 (one)",
        ),
        // A selector that selects nothing.
        (
            "{selector: {matchLabels: {tier: none}}, parameterNotFoundAction: Deny}",
            no_params,
        ),
        (
            "{selector: {matchLabels: {tier: none}}, parameterNotFoundAction: Allow}",
            "allowed",
        ),
        (
            "{selector: {}, namespace: empty, parameterNotFoundAction: Allow}",
            "allowed",
        ),
    ];
    for (param_ref, want) in cases {
        let h = Harness::clean(
            &(policy("Fail")
                + &binding("b", "p", "[Deny]", &format!("paramRef: {param_ref}"))
                + &params()),
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        let want = if *want == "allowed" {
            want.to_string()
        } else {
            forbidden("web", "p", "b", want)
        };
        assert_eq!(verdict(&outcome), want, "{param_ref}");
    }
}

#[test]
fn each_selected_param_makes_its_own_decisions() {
    let h = Harness::clean(
        &(policy("Fail")
            + &binding(
                "b",
                "p",
                "[Audit]",
                "paramRef: {selector: {}, parameterNotFoundAction: Deny}",
            )
            + &config_map("two", "default", "{}", "{max: '2'}")
            + &config_map("ten", "default", "{}", "{max: '10'}")
            + &config_map("one", "default", "{}", "{max: '1'}")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    // Two of the three params fail; both failures are audited, each at its index (0).
    assert_eq!(
        outcome.audit_annotations["validation.policy.admission.k8s.io/validation_failure"],
        concat!(
            r#"[{"message":"longer than 2 (two)","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]},"#,
            r#"{"message":"longer than 1 (one)","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}]"#
        )
    );
}

#[test]
fn a_missing_param_with_allow_evaluates_nothing() {
    let h = Harness::clean(
        &(policy("Fail")
            + &binding(
                "b",
                "p",
                "[Deny]",
                "paramRef: {name: absent, parameterNotFoundAction: Allow}",
            )),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        results(&outcome, "p"),
        [(Some("b".to_string()), ResultKind::Skip)]
    );
}

#[test]
fn a_binding_without_param_ref_evaluates_with_null_params() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, validations: [{expression: "params == null", message: "params set"}, {expression: "false", messageExpression: "'params are ' + (params == null ? 'null' : 'set')"}]"#,
        ) + &deny_binding("p")
            + &params()),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden("web", "p", "p-binding", "params are null")
    );
}

#[test]
fn a_param_ref_without_param_kind_is_ignored() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "object.metadata.name == 'web'"}]"#,
        ) + &binding(
            "b",
            "p",
            "[Deny]",
            "paramRef: {name: absent, parameterNotFoundAction: Deny}",
        )),
    );
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);
}

/// A policy on Namespaces and Pods with a params kind.
fn scoped_policy(param_kind: &str) -> String {
    vap_matching(
        "p",
        r#"{resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [namespaces, pods]}]}"#,
        &format!(
            r#"paramKind: {param_kind}, validations: [{{expression: "params.metadata.name == 'limits'"}}]"#
        ),
    )
}

fn namespace_request(name: &str) -> Req {
    let mut r = Req::pod(
        "CREATE",
        name,
        Some(&format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":{}}}}}"#,
            q(name)
        )),
    );
    r.kind = ("", "v1", "Namespace");
    r.resource = ("", "v1", "namespaces");
    r.namespace = String::new();
    r
}

#[test]
fn namespaces_of_params() {
    let namespaced = "{apiVersion: v1, kind: ConfigMap}";
    let cluster = "{apiVersion: example.com/v1, kind: Limits}";
    let objects = config_map("limits", "default", "{}", "{}")
        + "---\napiVersion: example.com/v1\nkind: Limits\nmetadata: {name: limits}\n";
    // (paramKind, paramRef, request, verdict)
    let cases: Vec<(&str, &str, Req, String)> = vec![
        // A namespaced param without a namespace is looked up in the request's.
        (
            namespaced,
            "{name: limits, parameterNotFoundAction: Deny}",
            Req::create_pod("web", "{}"),
            "allowed".into(),
        ),
        // ... which a cluster-scoped request does not have.
        (
            namespaced,
            "{name: limits, parameterNotFoundAction: Deny}",
            namespace_request("team"),
            "namespaces \"team\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into(),
        ),
        (
            namespaced,
            "{name: limits, namespace: default, parameterNotFoundAction: Deny}",
            namespace_request("team"),
            "allowed".into(),
        ),
        // A cluster-scoped param has no namespace.
        (
            cluster,
            "{name: limits, parameterNotFoundAction: Deny}",
            Req::create_pod("web", "{}"),
            "allowed".into(),
        ),
        (
            cluster,
            "{name: limits, parameterNotFoundAction: Deny}",
            namespace_request("team"),
            "allowed".into(),
        ),
        (
            cluster,
            "{name: limits, namespace: default, parameterNotFoundAction: Deny}",
            Req::create_pod("web", "{}"),
            forbidden(
                "web",
                "p",
                "b",
                "failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`",
            ),
        ),
    ];
    for (kind, param_ref, request, want) in cases {
        let h = Harness::clean(
            &(scoped_policy(kind)
                + &binding("b", "p", "[Deny]", &format!("paramRef: {param_ref}"))
                + &objects),
        );
        assert_eq!(
            verdict(&h.eval(&request)),
            want,
            "{kind} {param_ref} {}",
            request.name
        );
    }
}

#[test]
fn an_unknown_param_kind_misconfigures_the_policy() {
    // Whatever the binding says, even without a paramRef.
    for param_ref in ["paramRef: {name: x, parameterNotFoundAction: Allow}", ""] {
        for (failure, want) in [
            (
                "Fail",
                "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Missing'",
            ),
            ("Ignore", "allowed"),
        ] {
            let h = Harness::clean(
                &(vap(
                    "p",
                    &format!(
                        r#"failurePolicy: {failure}, paramKind: {{apiVersion: example.com/v1, kind: Missing}}, validations: [{{expression: "true"}}]"#
                    ),
                ) + &binding("b", "p", "[Deny]", param_ref)),
            );
            assert_eq!(
                verdict(&h.eval(&Req::create_pod("web", "{}"))),
                want,
                "{failure} {param_ref}"
            );
        }
    }
    // A core kind is written with an empty group.
    let h = Harness::clean(
        &(vap(
            "p",
            r#"paramKind: {apiVersion: v1, kind: Missing}, validations: [{expression: "true"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: '/v1, Kind=Missing'"
    );
}
