//! Policy variables as `plugin/cel/composition.go` composes them: lazily, once per
//! activation, each reading those declared before it, errors as values with upstream's texts.
//! (Their cost, charged once per activation, is pinned in validating.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::*;

#[test]
fn variables_evaluate_lazily_with_upstreams_error_texts() {
    let undeclared = "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope\n | ^";
    // (variables, validation expression, expected verdict: `allowed` or the denial message)
    let cases: &[(&str, &str, &str)] = &[
        // Chained: each variable reads those before it.
        (
            r#"[{name: name, expression: "object.metadata.name"}, {name: greeting, expression: "'hello ' + variables.name"}]"#,
            "variables.greeting == 'hello web'",
            "allowed",
        ),
        // A failing variable that nothing reads costs nothing and fails nothing.
        (
            r#"[{name: bad, expression: "object.spec.missing"}, {name: ok, expression: "1"}]"#,
            "variables.ok == 1",
            "allowed",
        ),
        (r#"[{name: bad, expression: "nope"}]"#, "true", "allowed"),
        // Errors are values: `||` absorbs them.
        (
            r#"[{name: bad, expression: "object.spec.missing"}]"#,
            "variables.bad == 1 || true",
            "allowed",
        ),
        // A runtime error.
        (
            r#"[{name: bad, expression: "object.spec.missing"}]"#,
            "variables.bad == 1",
            "expression 'variables.bad == 1' resulted in error: composited variable \"bad\" fails to evaluate: no such key: missing",
        ),
        // Through a chain, each level says so.
        (
            r#"[{name: bad, expression: "object.spec.missing"}, {name: outer, expression: "variables.bad"}]"#,
            "variables.outer == 1",
            "expression 'variables.outer == 1' resulted in error: composited variable \"outer\" fails to evaluate: composited variable \"bad\" fails to evaluate: no such key: missing",
        ),
        // A variable has its own per-expression cost limit.
        (
            r#"[{name: big, expression: "lists.range(1000000).size() > 0"}]"#,
            "variables.big",
            "expression 'variables.big' resulted in error: composited variable \"big\" fails to evaluate: operation cancelled: actual cost limit exceeded",
        ),
        // A variable that does not compile is declared `dyn`; reading it fails.
        (
            r#"[{name: bad, expression: "nope"}]"#,
            "variables.bad == 1",
            &format!(
                "expression 'variables.bad == 1' resulted in error: composited variable \"bad\" fails to compile: {undeclared}"
            ),
        ),
        (
            r#"[{name: bad, expression: "nope"}, {name: outer, expression: "variables.bad"}]"#,
            "variables.outer == 1",
            &format!(
                "expression 'variables.outer == 1' resulted in error: composited variable \"outer\" fails to evaluate: composited variable \"bad\" fails to compile: {undeclared}"
            ),
        ),
        // A variable that reads `request` sees it, though no validation names it (the value
        // is built only for policies that may read it).
        (
            r#"[{name: op, expression: "request.operation"}]"#,
            "variables.op == 'CREATE'",
            "allowed",
        ),
        (
            r#"[{name: op, expression: "request.operation"}]"#,
            "variables.op != 'CREATE'",
            "failed expression: variables.op != 'CREATE'",
        ),
        // A variable reading one declared after it does not compile.
        (
            r#"[{name: early, expression: "variables.late"}, {name: late, expression: "1"}]"#,
            "variables.early == 1",
            "expression 'variables.early == 1' resulted in error: composited variable \"early\" fails to compile: compilation failed: ERROR: <input>:1:10: undefined field 'late'\n | variables.late\n | .........^",
        ),
    ];
    for (variables, expression, want) in cases {
        let h = Harness::new(
            &(vap(
                "p",
                &format!(
                    r#"variables: {variables}, validations: [{{expression: "{expression}"}}]"#
                ),
            ) + &deny_binding("p")),
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        let want = if *want == "allowed" {
            want.to_string()
        } else {
            forbidden("web", "p", "p-binding", want)
        };
        assert_eq!(verdict(&outcome), want, "{variables} / {expression}");
    }
}

#[test]
fn variables_are_typed_by_their_expression() {
    // `variables.n` is an int: comparing it with a string does not compile.
    let h = Harness::new(
        &(vap(
            "p",
            r#"variables: [{name: n, expression: "size(object.metadata.name)"}], validations: [{expression: "variables.n == 'three'"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden(
            "web",
            "p",
            "p-binding",
            "compilation error: compilation failed: ERROR: <input>:1:13: found no matching overload for '_==_' applied to '(int, string)'\n | variables.n == 'three'\n | ............^"
        )
    );
    // A variable's own type checks its uses at run time too: `n` is 3.
    let h = Harness::clean(
        &(vap(
            "p",
            r#"variables: [{name: n, expression: "size(object.metadata.name)"}], validations: [{expression: "variables.n == 3"}]"#,
        ) + &deny_binding("p")),
    );
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);
}

#[test]
fn variables_serve_messages_audit_annotations_and_params() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, variables: [{name: limit, expression: "int(params.data.limit)"}, {name: size, expression: "size(object.metadata.name)"}], validations: [{expression: "variables.size <= variables.limit", messageExpression: "'name longer than ' + string(variables.limit)"}], auditAnnotations: [{key: size, valueExpression: "string(variables.size)"}]"#,
        ) + &binding(
            "b",
            "p",
            "[Deny]",
            "paramRef: {name: limits, parameterNotFoundAction: Deny}",
        ) + &config_map("limits", "default", "{}", "{limit: '2'}")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(
        verdict(&outcome),
        forbidden("web", "p", "b", "name longer than 2")
    );
    assert_eq!(outcome.audit_annotations["p/size"], "3");
}

#[test]
fn a_failing_variable_fails_the_audit_annotation_that_reads_it() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"variables: [{name: bad, expression: "nope"}], auditAnnotations: [{key: k, valueExpression: "string(variables.bad)"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden(
            "web",
            "p",
            "p-binding",
            "expression 'string(variables.bad)' resulted in error: composited variable \"bad\" fails to compile: compilation failed: ERROR: <input>:1:1: undeclared reference to 'nope' (in container '')\n | nope\n | ^"
        )
    );
}
