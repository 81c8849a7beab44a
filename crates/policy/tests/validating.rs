//! Validation decisions and their messages, as `policy/validating/validator.go` and
//! `plugin/cel/activation.go` decide them: message precedence, reasons and their HTTP codes,
//! runtime and compile errors, the cost budget and the per-expression limit, failurePolicy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::*;

/// A Pod called `web` whose annotation `long` holds `n` times `x`.
fn pod_with_long_annotation(n: usize) -> Req {
    let object = format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"web","namespace":"default","annotations":{{"long":{}}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}}}}"#,
        q(&"x".repeat(n))
    );
    Req::create(&object)
}

#[test]
fn the_failure_message_is_chosen_in_upstreams_order() {
    let long = "x".repeat(5 * 1024);
    // (validation, expected message)
    let cases: &[(&str, &str)] = &[
        // No message at all: the expression, trimmed.
        (
            r#"{expression: "  object.metadata.name == 'api'  "}"#,
            "failed expression: object.metadata.name == 'api'",
        ),
        // `message`, trimmed.
        (
            r#"{expression: "false", message: "  no pods  "}"#,
            "no pods",
        ),
        // messageExpression wins over message, trimmed.
        (
            r#"{expression: "false", message: "static", messageExpression: "'  pod ' + object.metadata.name + ' refused  '"}"#,
            "pod web refused",
        ),
        // An empty or blank messageExpression result falls back to message...
        (
            r#"{expression: "false", message: "static", messageExpression: "''"}"#,
            "static",
        ),
        (
            r#"{expression: "false", message: "static", messageExpression: "'   '"}"#,
            "static",
        ),
        // ... and to the expression without a message.
        (
            r#"{expression: "false", messageExpression: "' '"}"#,
            "failed expression: false",
        ),
        // A line break drops the messageExpression result.
        (
            r#"{expression: "false", message: "static", messageExpression: "'two\\nlines'"}"#,
            "static",
        ),
        // A line break at either end is trimmed first, so the message stays.
        (
            r#"{expression: "false", message: "static", messageExpression: "'one line\\n'"}"#,
            "one line",
        ),
        // A messageExpression that fails at run time is ignored.
        (
            r#"{expression: "false", message: "static", messageExpression: "string(object.spec.missing)"}"#,
            "static",
        ),
        (
            r#"{expression: "false", messageExpression: "string(object.spec.missing)"}"#,
            "failed expression: false",
        ),
        // One that does not compile too (the policy still loads; see loading.rs).
        (
            r#"{expression: "false", message: "static", messageExpression: "undeclared"}"#,
            "static",
        ),
        // At most 5 KiB.
        (
            r#"{expression: "false", message: "static", messageExpression: "string(object.metadata.annotations.long)"}"#,
            &long,
        ),
    ];
    for (validation, want) in cases {
        let h =
            Harness::new(&(vap("p", &format!("validations: [{validation}]")) + &deny_binding("p")));
        let outcome = h.eval(&pod_with_long_annotation(5 * 1024));
        assert_eq!(
            verdict(&outcome),
            forbidden("web", "p", "p-binding", want),
            "{validation}"
        );
    }
    // One byte more and the messageExpression result is dropped.
    let h = Harness::new(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "static", messageExpression: "string(object.metadata.annotations.long)"}]"#,
        ) + &deny_binding("p")),
    );
    let outcome = h.eval(&pod_with_long_annotation(5 * 1024 + 1));
    assert_eq!(
        verdict(&outcome),
        forbidden("web", "p", "p-binding", "static")
    );
}

#[test]
fn messages_come_from_the_first_failing_validation() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "true", message: "first"}, {expression: "false", message: "second"}, {expression: "false", message: "third"}]"#,
        ) + &deny_binding("p")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(
        verdict(&outcome),
        forbidden("web", "p", "p-binding", "second")
    );
}

#[test]
fn each_reason_has_its_http_code() {
    // (reason field, expected reason, expected code)
    let cases: &[(&str, &str, u16)] = &[
        ("", "Invalid", 422),
        (", reason: Invalid", "Invalid", 422),
        (", reason: Forbidden", "Forbidden", 403),
        (", reason: Unauthorized", "Unauthorized", 401),
        (
            ", reason: RequestEntityTooLarge",
            "RequestEntityTooLarge",
            413,
        ),
    ];
    for (field, reason, code) in cases {
        let h = Harness::clean(
            &(vap(
                "p",
                &format!(r#"validations: [{{expression: "false", message: "no"{field}}}]"#),
            ) + &deny_binding("p")),
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(
            denial(&outcome),
            (
                *code,
                reason.to_string(),
                forbidden("web", "p", "p-binding", "no")
            ),
            "{field}"
        );
    }
}

#[test]
fn the_reason_of_the_first_denial_sets_the_code() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "a", reason: Unauthorized}, {expression: "false", message: "b", reason: Forbidden}]"#,
        ) + &deny_binding("p")),
    );
    let (code, reason, _) = denial(&h.eval(&Req::create_pod("web", "{}")));
    assert_eq!((code, reason.as_str()), (401, "Unauthorized"));
}

#[test]
fn errors_are_decisions_with_upstreams_texts() {
    // (validation, expected message); errors carry no reason: Invalid, 422.
    let cases: &[(&str, &str)] = &[
        (
            r#"{expression: "object.spec.missing == 1", message: "ignored"}"#,
            "expression 'object.spec.missing == 1' resulted in error: no such key: missing",
        ),
        (
            r#"{expression: "1 / (size(object.metadata.name) - 3) > 0"}"#,
            "expression '1 / (size(object.metadata.name) - 3) > 0' resulted in error: division by zero",
        ),
        (
            r#"{expression: "undeclared == 1"}"#,
            "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'undeclared' (in container '')\n | undeclared == 1\n | ^",
        ),
        (
            r#"{expression: "object.metadata.name =="}"#,
            "compilation error: compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.metadata.name ==\n | .......................^",
        ),
        (
            r#"{expression: "object.metadata.name"}"#,
            "compilation error: must evaluate to bool but got dyn",
        ),
        (
            r#"{expression: "'yes'"}"#,
            "compilation error: must evaluate to bool but got string",
        ),
    ];
    for (validation, want) in cases {
        let h =
            Harness::new(&(vap("p", &format!("validations: [{validation}]")) + &deny_binding("p")));
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(
            denial(&outcome),
            (
                422,
                "Invalid".to_string(),
                forbidden("web", "p", "p-binding", want)
            ),
            "{validation}"
        );
    }
}

#[test]
fn failure_policy_ignore_admits_errors_but_not_denials() {
    // (validations, allowed)
    let cases: &[(&str, bool)] = &[
        (r#"[{expression: "object.spec.missing == 1"}]"#, true),
        (r#"[{expression: "undeclared == 1"}]"#, true),
        (r#"[{expression: "lists.range(1000001).size() > 0"}]"#, true),
        // A false validation still denies.
        (
            r#"[{expression: "object.spec.missing == 1"}, {expression: "false"}]"#,
            false,
        ),
    ];
    for (validations, allowed) in cases {
        let h = Harness::new(
            &(vap(
                "p",
                &format!("failurePolicy: Ignore, validations: {validations}"),
            ) + &binding("b", "p", "[Deny, Audit]", "")),
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(outcome.allowed, *allowed, "{validations}: {outcome:#?}");
        if *allowed {
            // An ignored error leaves no trace in the response.
            assert!(outcome.warnings.is_empty());
            assert!(outcome.audit_annotations.is_empty(), "{validations}");
        } else {
            assert_eq!(
                verdict(&outcome),
                forbidden("web", "p", "b", "failed expression: false")
            );
        }
    }
}

/// An expression costing 999,013 under celer's cost model: just under the per-call limit.
const EXPENSIVE: &str = "lists.range(999000).size() > 0";

#[test]
fn one_expression_above_the_per_call_limit_is_an_error() {
    let expression = "lists.range(1000000).size() > 0";
    let h = Harness::clean(
        &(vap(
            "p",
            &format!(
                r#"validations: [{{expression: "{EXPENSIVE}"}}, {{expression: "{expression}"}}]"#
            ),
        ) + &deny_binding("p")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(
        verdict(&outcome),
        forbidden(
            "web",
            "p",
            "p-binding",
            &format!(
                "expression '{expression}' resulted in error: operation cancelled: actual cost limit exceeded"
            )
        )
    );
}

#[test]
fn running_out_of_the_shared_budget_is_one_error_for_the_invocation() {
    let budget_text = "validation failed due to running out of cost budget, no further validation rules will be run";
    // Ten expensive validations fit in the 10M budget; an eleventh does not.
    let validations = |n: usize, tail: &str| {
        let mut v: Vec<String> = (0..n)
            .map(|_| format!(r#"{{expression: "{EXPENSIVE}"}}"#))
            .collect();
        if !tail.is_empty() {
            v.push(tail.to_string());
        }
        format!("validations: [{}]", v.join(", "))
    };
    let h = Harness::clean(&(vap("p", &validations(10, "")) + &deny_binding("p")));
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);

    // The eleventh runs out: one error, whatever the validations after it would say.
    let h = Harness::clean(
        &(vap(
            "p",
            &validations(11, r#"{expression: "false", message: "never reached"}"#),
        ) + &binding("b", "p", "[Deny, Audit]", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(verdict(&outcome), forbidden("web", "p", "b", budget_text));
    // One decision, so one audit entry, at index 0.
    assert_eq!(
        outcome.audit_annotations["validation.policy.admission.k8s.io/validation_failure"],
        format!(
            r#"[{{"message":"{budget_text}","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Deny","Audit"]}}]"#
        )
    );

    // Under Ignore the exhausted budget admits.
    let h = Harness::clean(
        &(vap(
            "p",
            &format!(
                "failurePolicy: Ignore, {}",
                validations(11, r#"{expression: "false"}"#)
            ),
        ) + &deny_binding("p")),
    );
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);
}

#[test]
fn message_expressions_share_the_budget_the_validations_left() {
    // Nine expensive validations, a failing one, then its messageExpression pushes the total
    // over 10M: every decision becomes the messageExpression's budget error.
    let mut v: Vec<String> = (0..9)
        .map(|_| format!(r#"{{expression: "{EXPENSIVE}"}}"#))
        .collect();
    v.push(format!(
        r#"{{expression: "false", message: "static", messageExpression: "{EXPENSIVE} ? 'a' : 'b'"}}"#
    ));
    v.push(format!(
        r#"{{expression: "{EXPENSIVE}", messageExpression: "'unused'"}}"#
    ));
    let h = Harness::clean(
        &(vap("p", &format!("validations: [{}]", v.join(", "))) + &deny_binding("p")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(
        verdict(&outcome),
        forbidden(
            "web",
            "p",
            "p-binding",
            "failed messageExpression: validation failed due to running out of cost budget, no further validation rules will be run"
        )
    );
    // The same policy with a cheap messageExpression: its message.
    let v: Vec<String> = v
        .into_iter()
        .map(|s| s.replace(&format!("{EXPENSIVE} ? 'a' : 'b'"), "'cheap'"))
        .collect();
    let h = Harness::clean(
        &(vap("p", &format!("validations: [{}]", v.join(", "))) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden("web", "p", "p-binding", "cheap")
    );
}

#[test]
fn variables_are_charged_to_the_budget_once_per_activation() {
    // A variable costing 999k read by twelve validations is evaluated once: twelve direct
    // evaluations would exhaust the 10M budget.
    let reads: Vec<String> = (0..12)
        .map(|_| r#"{expression: "variables.big"}"#.to_string())
        .collect();
    let h = Harness::clean(
        &(vap(
            "p",
            &format!(
                r#"variables: [{{name: big, expression: "{EXPENSIVE}"}}], validations: [{}]"#,
                reads.join(", ")
            ),
        ) + &deny_binding("p")),
    );
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);

    // But each activation evaluates it anew: messageExpressions run in their own, after nine
    // expensive validations and the variable itself have nearly spent the budget.
    let mut v: Vec<String> = (0..9)
        .map(|_| format!(r#"{{expression: "{EXPENSIVE}"}}"#))
        .collect();
    v.push(
        r#"{expression: "!variables.big", messageExpression: "variables.big ? 'x' : 'y'"}"#
            .to_string(),
    );
    let h = Harness::clean(
        &(vap(
            "p",
            &format!(
                r#"variables: [{{name: big, expression: "{EXPENSIVE}"}}], validations: [{}]"#,
                v.join(", ")
            ),
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden(
            "web",
            "p",
            "p-binding",
            "failed messageExpression: validation failed due to running out of cost budget, no further validation rules will be run"
        )
    );
}
