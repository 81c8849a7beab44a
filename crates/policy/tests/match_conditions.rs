//! matchConditions as `webhook/matchconditions/matcher.go` decides them: a false condition
//! skips the policy and wins over errors; errors deny under Fail (one error as itself, several
//! as `[a, b]`) and skip under Ignore; conditions see no `namespaceObject`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::*;

const MISSING: &str =
    "expression 'object.spec.missing == 1' resulted in error: no such key: missing";
const OTHER: &str = "expression 'object.spec.other == 1' resulted in error: no such key: other";

#[test]
fn false_wins_then_errors_follow_the_failure_policy() {
    let err_a = r#"{name: a, expression: "object.spec.missing == 1"}"#;
    let err_b = r#"{name: b, expression: "object.spec.other == 1"}"#;
    let yes = r#"{name: t, expression: "object.metadata.name == 'web'"}"#;
    let no = r#"{name: f, expression: "object.metadata.name == 'api'"}"#;
    // (failurePolicy, conditions, verdict: `allowed`, `ran` (the policy denied), or the error)
    let cases: Vec<(&str, String, String)> = vec![
        ("Fail", format!("[{yes}]"), "ran".into()),
        ("Fail", format!("[{yes}, {no}]"), "allowed".into()),
        ("Fail", format!("[{no}, {err_a}]"), "allowed".into()),
        ("Fail", format!("[{err_a}, {no}]"), "allowed".into()),
        ("Fail", format!("[{err_a}, {yes}]"), MISSING.into()),
        (
            "Fail",
            format!("[{err_a}, {yes}, {err_b}]"),
            format!("[{MISSING}, {OTHER}]"),
        ),
        // The same error twice is reported once, without brackets.
        (
            "Fail",
            format!("[{err_a}, {}]", err_a.replace("name: a", "name: a2")),
            MISSING.into(),
        ),
        ("Ignore", format!("[{err_a}, {yes}]"), "allowed".into()),
        ("Ignore", format!("[{err_a}, {err_b}]"), "allowed".into()),
        ("Ignore", format!("[{yes}]"), "ran".into()),
    ];
    for (failure, conditions, want) in cases {
        let h = Harness::clean(
            &(vap(
                "p",
                &format!(
                    r#"failurePolicy: {failure}, matchConditions: {conditions}, validations: [{{expression: "false", message: "ran"}}]"#
                ),
            ) + &deny_binding("p")),
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        let want = if want == "allowed" {
            want
        } else {
            forbidden("web", "p", "p-binding", &want)
        };
        assert_eq!(verdict(&outcome), want, "{failure} {conditions}");
    }
}

#[test]
fn condition_errors_follow_the_validation_actions() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"matchConditions: [{name: a, expression: "object.spec.missing == 1"}], validations: [{expression: "true"}]"#,
        ) + &binding("b", "p", "[Warn]", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.warnings,
        [format!(
            "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': {MISSING}"
        )]
    );
}

#[test]
fn a_condition_that_does_not_compile_is_an_error() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"matchConditions: [{name: a, expression: "object.metadata.name"}], validations: [{expression: "true"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden(
            "web",
            "p",
            "p-binding",
            "compilation error: must evaluate to bool but got dyn"
        )
    );
}

#[test]
fn conditions_see_no_namespace_object_but_params() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, matchConditions: [{name: ns, expression: "namespaceObject == null"}, {name: param, expression: "params.data.enforce == 'yes'"}], validations: [{expression: "namespaceObject == null", message: "validations see the namespace"}]"#,
        ) + &binding(
            "b",
            "p",
            "[Deny]",
            "paramRef: {name: settings, parameterNotFoundAction: Deny}",
        ) + &namespace("default", "{}")
            + &config_map("settings", "default", "{}", "{enforce: 'yes'}")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden("web", "p", "b", "validations see the namespace")
    );
}

#[test]
fn conditions_share_one_budget() {
    let expensive = "lists.range(999000).size() > 0";
    let conditions = |n: usize| {
        let c: Vec<String> = (0..n)
            .map(|i| format!(r#"{{name: c{i}, expression: "{expensive}"}}"#))
            .collect();
        format!("[{}]", c.join(", "))
    };
    // Two fit in 2.5M; the third does not.
    let h = Harness::clean(
        &(vap(
            "p",
            &format!(
                r#"matchConditions: {}, validations: [{{expression: "false", message: "ran"}}]"#,
                conditions(2)
            ),
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden("web", "p", "p-binding", "ran")
    );
    let budget = "validation failed due to running out of cost budget, no further validation rules will be run";
    for (failure, want) in [
        ("Fail", forbidden("web", "p", "p-binding", budget)),
        ("Ignore", "allowed".to_string()),
    ] {
        // An error before the exhaustion is not reported: the budget error is the only one.
        let h = Harness::clean(
            &(vap(
                "p",
                &format!(
                    r#"failurePolicy: {failure}, matchConditions: [{{name: err, expression: "object.spec.missing == 1"}}, {}], validations: [{{expression: "false", message: "ran"}}]"#,
                    conditions(3).trim_start_matches('[').trim_end_matches(']')
                ),
            ) + &deny_binding("p")),
        );
        assert_eq!(
            verdict(&h.eval(&Req::create_pod("web", "{}"))),
            want,
            "{failure}"
        );
    }
}
