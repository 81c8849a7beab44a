//! Loading policies: what the API server's validation (`pkg/apis/admissionregistration/
//! validation/validation.go`) would refuse is reported with the file, the document, the object
//! and the field, and left out; expressions that do not compile are reported but their policy
//! loads and fails through failurePolicy; a binding whose policy is missing is reported and
//! ignored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::*;

const OK: &str = r#"validations: [{expression: "true"}]"#;
const RULES: &str = r#"resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]"#;

fn with_constraints(constraints: &str) -> String {
    vap_matching("p", &format!("{{{constraints}}}"), OK)
}

#[test]
fn invalid_objects_are_reported_by_file_document_object_and_field() {
    let with_param = vap(
        "p",
        &format!("paramKind: {{apiVersion: v1, kind: ConfigMap}}, {OK}"),
    );
    // (documents, expected errors; the policy or binding in error is document 2, the other 1)
    let cases: Vec<(String, &str)> = vec![
        (
            vap("p", OK) + &binding("b", "p", "[Warn, Deny, Audit]", ""),
            r#"ValidatingAdmissionPolicyBinding "b": spec.validationActions: Invalid value: ["Warn","Deny","Audit"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"#,
        ),
        (
            vap("p", OK) + &binding("b", "p", "[]", ""),
            r#"ValidatingAdmissionPolicyBinding "b": spec.validationActions: Required value: at least one validation action is required"#,
        ),
        (
            vap("p", OK) + &binding("b", "p", "[Deny, Audit, Deny]", ""),
            r#"ValidatingAdmissionPolicyBinding "b": spec.validationActions[2]: Duplicate value: "Deny""#,
        ),
        (
            vap("q", OK) + &vap("p", "validations: []"),
            r#"ValidatingAdmissionPolicy "p": spec.validations: Required value: validations or auditAnnotations must contain at least one item; spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"#,
        ),
        (
            vap("q", OK) + &vap("p", r#"validations: [{expression: "  "}]"#),
            r#"ValidatingAdmissionPolicy "p": spec.validations[0].expression: Required value: expression is not specified"#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"validations: [{expression: "true", message: "two\nlines"}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.validations[0].message: Invalid value: "two\nlines": message must not contain line breaks"#,
        ),
        (
            vap("q", OK) + &vap("p", r#"validations: [{expression: "true", message: " "}]"#),
            r#"ValidatingAdmissionPolicy "p": spec.validations[0].message: Invalid value: " ": message must be non-empty if specified"#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"validations: [{expression: "true", messageExpression: " "}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified"#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"validations: [{expression: "true", reason: Teapot}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized""#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"variables: [{name: a, expression: "1"}, {name: a, expression: "2"}], validations: [{expression: "true"}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.variables[1].name: Duplicate value: "a""#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"variables: [{name: "x-y", expression: "1"}, {name: z, expression: " "}], validations: [{expression: "true"}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.variables[0].name: Invalid value: "x-y": name is not a valid CEL identifier; spec.variables[1].expression: Required value: expression is not specified"#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"matchConditions: [{name: a, expression: "true"}, {name: a, expression: "true"}], validations: [{expression: "true"}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.matchConditions[1].name: Duplicate value: "a""#,
        ),
        (
            vap("q", OK)
                + &vap(
                    "p",
                    r#"auditAnnotations: [{key: a, valueExpression: "'x'"}, {key: a, valueExpression: " "}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.auditAnnotations[1].key: Duplicate value: "a"; spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified"#,
        ),
        (
            vap("q", OK)
                + &with_constraints(&format!(
                    "namespaceSelector: {{matchExpressions: [{{key: env, operator: Near}}]}}, {RULES}"
                )),
            r#"ValidatingAdmissionPolicy "p": spec.matchConstraints.namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator"#,
        ),
        (
            vap("q", OK)
                + &with_constraints(&format!(
                    "objectSelector: {{matchExpressions: [{{key: env, operator: In}}]}}, {RULES}"
                )),
            r#"ValidatingAdmissionPolicy "p": spec.matchConstraints.objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"#,
        ),
        (
            vap("q", OK) + &with_constraints(""),
            r#"ValidatingAdmissionPolicy "p": spec.matchConstraints.resourceRules: Required value"#,
        ),
        (
            vap("q", OK)
                + &with_constraints(
                    r#"resourceRules: [{operations: [PATCH], apiGroups: [""], apiVersions: [v1], resources: [pods]}]"#,
                ),
            r#"ValidatingAdmissionPolicy "p": spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE""#,
        ),
        (
            with_param.clone()
                + &binding(
                    "b",
                    "p",
                    "[Deny]",
                    "paramRef: {name: x, selector: {}, parameterNotFoundAction: Deny}",
                ),
            r#"ValidatingAdmissionPolicyBinding "b": spec.paramRef.name: Forbidden: name and selector are mutually exclusive; spec.paramRef.selector: Forbidden: name and selector are mutually exclusive"#,
        ),
        (
            with_param.clone()
                + &binding(
                    "b",
                    "p",
                    "[Deny]",
                    "paramRef: {parameterNotFoundAction: Deny}",
                ),
            r#"ValidatingAdmissionPolicyBinding "b": spec.paramRef: Required value: one of name or selector must be specified"#,
        ),
        (
            with_param.clone() + &binding("b", "p", "[Deny]", "paramRef: {name: x}"),
            r#"ValidatingAdmissionPolicyBinding "b": spec.paramRef.parameterNotFoundAction: Required value"#,
        ),
        (
            with_param
                + &binding(
                    "b",
                    "p",
                    "[Deny]",
                    "paramRef: {selector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}, parameterNotFoundAction: Deny}",
                ),
            r#"ValidatingAdmissionPolicyBinding "b": spec.paramRef.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"#,
        ),
        // Names are unique per kind.
        (
            vap("p", OK) + &vap("p", r#"validations: [{expression: "false"}]"#),
            r#"ValidatingAdmissionPolicy "p": a policy of this name is already loaded; this one is ignored"#,
        ),
        (
            deny_binding("p") + &deny_binding("p") + &vap("p", OK),
            r#"ValidatingAdmissionPolicyBinding "p-binding": a binding of this name is already loaded; this one is ignored"#,
        ),
        (
            map(
                "q",
                r#"reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
            ) + &map(
                "p",
                r#"mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
            ),
            r#"MutatingAdmissionPolicy "p": spec.reinvocationPolicy: Required value"#,
        ),
        (
            map(
                "q",
                r#"reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
            ) + &map(
                "p",
                r#"reinvocationPolicy: Never, mutations: [{patchType: JSONPatch, applyConfiguration: {expression: "Object{}"}}]"#,
            ),
            r#"MutatingAdmissionPolicy "p": spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch; spec.mutations[0].applyConfiguration: Forbidden: must not be specified when patchType is JSONPatch"#,
        ),
        // Shapes the API would not accept.
        (
            vap("q", OK)
                + "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: {expression: 'true'}}\n",
            r#"ValidatingAdmissionPolicy "p": spec.validations: invalid type: map, expected a sequence"#,
        ),
        (
            vap("q", OK)
                + "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {failurePolicy: Sometimes}\n",
            r#"ValidatingAdmissionPolicy "p": spec.failurePolicy: unknown variant `Sometimes`, expected `Fail` or `Ignore`"#,
        ),
    ];
    for (documents, want) in cases {
        let h = Harness::new(&documents);
        assert_eq!(
            h.errors(),
            [format!("policies.yaml (document 2): {want}")],
            "{documents}"
        );
    }
}

#[test]
fn an_invalid_policy_is_left_out_with_its_bindings() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"validations: [{expression: "false", reason: Teapot}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        h.errors(),
        [
            r#"policies.yaml (document 1): ValidatingAdmissionPolicy "p": spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized""#,
            r#"policies.yaml (document 2): ValidatingAdmissionPolicyBinding "p-binding": spec.policyName: policy "p" is not loaded; the binding is ignored"#,
        ]
    );
    assert!(h.set.is_empty());
    assert!(h.eval(&Req::create_pod("web", "{}")).allowed);
}

#[test]
fn a_binding_for_a_missing_policy_is_reported_and_ignored() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "no"}]"#,
        ) + &binding("b", "p", "[Deny]", "")
            + &binding("orphan", "absent", "[Deny]", "")
            + &map_binding("m-orphan", "absent", "")),
    );
    assert_eq!(
        h.errors(),
        [
            r#"policies.yaml (document 3): ValidatingAdmissionPolicyBinding "orphan": spec.policyName: policy "absent" is not loaded; the binding is ignored"#,
            r#"policies.yaml (document 4): MutatingAdmissionPolicyBinding "m-orphan": spec.policyName: policy "absent" is not loaded; the binding is ignored"#,
        ]
    );
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", "{}"))),
        forbidden("web", "p", "b", "no")
    );
}

#[test]
fn a_policy_that_does_not_compile_loads_and_fails_through_failure_policy() {
    for (failure, allowed) in [("Fail", false), ("Ignore", true)] {
        let h = Harness::new(
            &(vap(
                "p",
                &format!(
                    r#"failurePolicy: {failure}, validations: [{{expression: "true"}}, {{expression: "object.metadata.name.startsWith(1)"}}]"#
                ),
            ) + &deny_binding("p")),
        );
        let error = "compilation failed: ERROR: <input>:1:32: found no matching overload for 'startsWith' applied to 'dyn.(int)'\n | object.metadata.name.startsWith(1)\n | ...............................^";
        assert_eq!(
            h.errors(),
            [format!(
                "policies.yaml (document 1): ValidatingAdmissionPolicy \"p\": spec.validations[1].expression: Invalid value: \"object.metadata.name.startsWith(1)\": {error}"
            )]
        );
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(outcome.allowed, allowed, "{failure}");
        if !allowed {
            assert_eq!(
                verdict(&outcome),
                forbidden(
                    "web",
                    "p",
                    "p-binding",
                    &format!("compilation error: {error}")
                )
            );
        }
    }
}

#[test]
fn compile_errors_name_every_expression_field() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"matchConditions: [{name: c, expression: "1"}], variables: [{name: v, expression: "nope"}], validations: [{expression: "true", messageExpression: "1"}], auditAnnotations: [{key: k, valueExpression: "1"}]"#,
        ) + &map(
            "m",
            r#"reinvocationPolicy: Never, mutations: [{patchType: JSONPatch, jsonPatch: {expression: "1"}}, {patchType: ApplyConfiguration, applyConfiguration: {expression: "1"}}]"#,
        )),
    );
    let errors = h.errors();
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| {
            let rest = e.split_once("\": ").unwrap().1;
            rest.split_once(": ").unwrap().0
        })
        .collect();
    assert_eq!(
        fields,
        [
            "spec.matchConditions[0].expression",
            "spec.variables[0].expression",
            "spec.validations[0].messageExpression",
            "spec.auditAnnotations[0].valueExpression",
            "spec.mutations[0].jsonPatch.expression",
            "spec.mutations[1].applyConfiguration.expression",
        ]
    );
    assert!(
        errors[4].ends_with("must evaluate to list(JSONPatch) but got int"),
        "{}",
        errors[4]
    );
    assert!(
        errors[5].ends_with("must evaluate to Object but got int"),
        "{}",
        errors[5]
    );
}

#[test]
fn unreadable_documents_are_reported_and_the_rest_loads() {
    let h = Harness::new(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "no"}]"#,
        ) + &deny_binding("p")
            + "---\n- just\n- a list\n"),
    );
    assert_eq!(
        h.errors(),
        [
            "policies.yaml (document 3): document: not a Kubernetes object (expected a YAML or JSON mapping)"
        ]
    );
    assert!(!h.eval(&Req::create_pod("web", "{}")).allowed);
}
