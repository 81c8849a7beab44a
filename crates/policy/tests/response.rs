//! What validation decisions become in the response, as `policy/validating/dispatcher.go`
//! dispatches them: the first denial's status (`admission.NewForbidden`), validationActions
//! (Deny, Warn, Audit), auditAnnotations, configuration errors, and the AdmissionReview JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use sonic_rs::{JsonContainerTrait, JsonValueTrait};
use support::*;

const FAILURES: &str = "validation.policy.admission.k8s.io/validation_failure";

#[test]
fn the_first_denial_makes_the_status() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "object.metadata.name != 'web'", message: "first", reason: Forbidden}, {expression: "false", message: "second"}]"#,
        ) + &binding("b1", "p", "[Deny]", "")
            + &binding("b2", "p", "[Deny]", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    let status = outcome.status.as_ref().unwrap();
    let message = "ValidatingAdmissionPolicy 'p' with binding 'b1' denied request: first";
    assert_eq!(
        status.message,
        format!("pods \"web\" is forbidden: {message}")
    );
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    let details = status.details.as_ref().unwrap();
    assert_eq!(
        (
            details.group.as_str(),
            details.kind.as_str(),
            details.name.as_str()
        ),
        ("", "pods", "web")
    );
    // One cause: the message without the resource prefix.
    assert_eq!(details.causes, [message]);
}

#[test]
fn the_name_falls_back_to_generate_name_then_unknown() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "no"}]"#,
        ) + &deny_binding("p")),
    );
    // (request name, object metadata, expected name)
    let cases = [
        ("web", r#"{"name":"other"}"#, "web"),
        ("", r#"{"name":"from-object"}"#, "from-object"),
        ("", r#"{"generateName":"web-"}"#, "web-"),
        ("", r#"{"name":"","generateName":"web-"}"#, "web-"),
        ("", r#"{}"#, "Unknown"),
    ];
    for (name, metadata, want) in cases {
        let object = format!(r#"{{"apiVersion":"v1","kind":"Pod","metadata":{metadata}}}"#);
        let outcome = h.eval(&Req::pod("CREATE", name, Some(&object)));
        let status = outcome.status.as_ref().unwrap();
        assert_eq!(
            status.message,
            format!(
                "pods {} is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p-binding' denied request: no",
                q(want)
            ),
            "{metadata}"
        );
        assert_eq!(status.details.as_ref().unwrap().name, want);
    }
}

#[test]
fn a_grouped_resource_is_named_with_its_group() {
    let h = Harness::clean(
        &(vap_matching(
            "p",
            r#"{resourceRules: [{operations: ["*"], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]}"#,
            r#"validations: [{expression: "false", message: "no"}]"#,
        ) + &deny_binding("p")),
    );
    let mut req = Req::pod(
        "CREATE",
        "d",
        Some(r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}"#),
    );
    req.kind = ("apps", "v1", "Deployment");
    req.resource = ("apps", "v1", "deployments");
    let status = h.eval(&req).status.unwrap();
    assert_eq!(
        status.message,
        "deployments.apps \"d\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p-binding' denied request: no"
    );
    let details = status.details.unwrap();
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("apps", "deployments")
    );
}

#[test]
fn validation_actions_deny_warn_and_audit() {
    let policy = vap(
        "p",
        r#"validations: [{expression: "true"}, {expression: "false", message: "no"}]"#,
    );
    let warning = "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': no";
    let audit = |actions: &str| {
        format!(
            r#"[{{"message":"no","policy":"p","binding":"b","expressionIndex":1,"validationActions":{actions}}}]"#
        )
    };
    // (actions, allowed, warnings, validation_failure annotation)
    let cases: Vec<(&str, bool, Vec<&str>, Option<String>)> = vec![
        ("[Deny]", false, vec![], None),
        ("[Warn]", true, vec![warning], None),
        ("[Audit]", true, vec![], Some(audit(r#"["Audit"]"#))),
        (
            "[Deny, Audit]",
            false,
            vec![],
            Some(audit(r#"["Deny","Audit"]"#)),
        ),
        (
            "[Audit, Warn]",
            true,
            vec![warning],
            Some(audit(r#"["Audit","Warn"]"#)),
        ),
    ];
    for (actions, allowed, warnings, annotation) in cases {
        let h = Harness::clean(&(policy.clone() + &binding("b", "p", actions, "")));
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(outcome.allowed, allowed, "{actions}");
        assert_eq!(outcome.warnings, warnings, "{actions}");
        assert_eq!(
            outcome.audit_annotations.get(FAILURES),
            annotation.as_ref(),
            "{actions}"
        );
        if !allowed {
            assert_eq!(verdict(&outcome), forbidden("web", "p", "b", "no"));
        }
    }
}

#[test]
fn errors_follow_the_validation_actions_under_fail() {
    let policy = vap(
        "p",
        r#"validations: [{expression: "object.spec.missing == 1"}]"#,
    );
    let error = "expression 'object.spec.missing == 1' resulted in error: no such key: missing";
    let h = Harness::clean(&(policy.clone() + &binding("b", "p", "[Warn]", "")));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.warnings,
        [format!(
            "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': {error}"
        )]
    );
    let h = Harness::clean(&(policy + &binding("b", "p", "[Audit]", "")));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.audit_annotations[FAILURES],
        format!(
            r#"[{{"message":{},"policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}}]"#,
            q(error)
        )
    );
}

#[test]
fn audit_failures_of_every_binding_and_policy_are_listed_together() {
    let h = Harness::clean(
        &(vap(
            "p1",
            r#"validations: [{expression: "false", message: "a"}, {expression: "false", message: "b"}]"#,
        ) + &binding("x", "p1", "[Audit]", "")
            + &vap(
                "p2",
                r#"validations: [{expression: "false", message: "c"}]"#,
            )
            + &binding("y", "p2", "[Warn, Audit]", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.audit_annotations[FAILURES],
        concat!(
            r#"[{"message":"a","policy":"p1","binding":"x","expressionIndex":0,"validationActions":["Audit"]},"#,
            r#"{"message":"b","policy":"p1","binding":"x","expressionIndex":1,"validationActions":["Audit"]},"#,
            r#"{"message":"c","policy":"p2","binding":"y","expressionIndex":0,"validationActions":["Warn","Audit"]}]"#
        )
    );
}

#[test]
fn at_most_fifty_audit_failures_are_kept() {
    let validations: Vec<String> = (0..60)
        .map(|i| format!(r#"{{expression: "false", message: "m{i}"}}"#))
        .collect();
    let h = Harness::clean(
        &(vap("p", &format!("validations: [{}]", validations.join(", ")))
            + &binding("b", "p", "[Audit]", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    let list = json(&outcome.audit_annotations[FAILURES]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 50);
    assert_eq!(list[49]["message"].as_str(), Some("m49"));
    assert_eq!(list[49]["expressionIndex"].as_i64(), Some(49));
}

/// A Pod called `web` with annotations (a JSON object).
fn pod_with_annotations(annotations: &str) -> Req {
    Req::create(&format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"web","namespace":"default","annotations":{annotations}}}}}"#
    ))
}

#[test]
fn audit_annotation_values() {
    let long = "y".repeat(10 * 1024 + 10);
    let request = pod_with_annotations(&format!(r#"{{"long":{}}}"#, q(&long)));
    // (valueExpression, published value)
    let cases: &[(&str, Option<&str>)] = &[
        ("'plain'", Some("plain")),
        ("'  padded  '", Some("padded")),
        ("''", None),
        ("'   '", None),
        ("null", None),
        (
            "string(object.metadata.annotations.long)",
            Some(&long[..10 * 1024]),
        ),
    ];
    for (expression, want) in cases {
        let h = Harness::clean(
            &(vap(
                "p",
                &format!(r#"auditAnnotations: [{{key: k, valueExpression: "{expression}"}}]"#),
            ) + &deny_binding("p")),
        );
        let outcome = h.eval(&request);
        assert!(outcome.allowed, "{expression}");
        assert_eq!(
            outcome.audit_annotations.get("p/k").map(String::as_str),
            *want,
            "{expression}"
        );
    }
}

#[test]
fn audit_annotations_are_kept_when_validations_fail() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "no"}], auditAnnotations: [{key: who, valueExpression: "'web'"}]"#,
        ) + &deny_binding("p")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(!outcome.allowed);
    assert_eq!(outcome.audit_annotations["p/who"], "web");
}

#[test]
fn distinct_audit_annotation_values_of_a_policy_are_joined() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, auditAnnotations: [{key: k, valueExpression: "string(params.data.v)"}]"#,
        ) + &binding(
            "b1",
            "p",
            "[Deny]",
            "paramRef: {name: one, parameterNotFoundAction: Deny}",
        ) + &binding(
            "b2",
            "p",
            "[Deny]",
            "paramRef: {name: two, parameterNotFoundAction: Deny}",
        ) + &binding(
            "b3",
            "p",
            "[Deny]",
            "paramRef: {name: again, parameterNotFoundAction: Deny}",
        ) + &vap(
            "q",
            r#"auditAnnotations: [{key: k, valueExpression: "'other policy'"}]"#,
        ) + &deny_binding("q")
            + &config_map("one", "default", "{}", "{v: first}")
            + &config_map("two", "default", "{}", "{v: second}")
            + &config_map("again", "default", "{}", "{v: first}")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(outcome.audit_annotations["p/k"], "first, second");
    assert_eq!(outcome.audit_annotations["q/k"], "other policy");
}

#[test]
fn audit_annotation_errors_deny_under_fail_whatever_the_actions() {
    let policy = |failure: &str| {
        vap(
            "p",
            &format!(
                r#"failurePolicy: {failure}, validations: [{{expression: "true"}}], auditAnnotations: [{{key: k, valueExpression: "string(object.spec.missing)"}}, {{key: ok, valueExpression: "'fine'"}}]"#
            ),
        )
    };
    let error = "expression 'string(object.spec.missing)' resulted in error: no such key: missing";
    for actions in ["[Deny]", "[Warn]", "[Audit]"] {
        let h = Harness::clean(&(policy("Fail") + &binding("b", "p", actions, "")));
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        assert_eq!(
            denial(&outcome),
            (
                422,
                "Invalid".to_string(),
                forbidden("web", "p", "b", error)
            ),
            "{actions}"
        );
        assert!(outcome.warnings.is_empty());
        // The other annotation is still published.
        assert_eq!(outcome.audit_annotations["p/ok"], "fine");
        assert!(!outcome.audit_annotations.contains_key(FAILURES));
    }
    // Under Ignore the failing annotation is left out.
    let h = Harness::clean(&(policy("Ignore") + &binding("b", "p", "[Deny]", "")));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.audit_annotations.keys().collect::<Vec<_>>(),
        ["p/ok"]
    );
}

#[test]
fn audit_annotations_running_out_of_budget_replace_the_decisions() {
    // Audit annotations get a fresh 10M budget; eleven expressions of 999k exhaust it, and
    // that one error replaces the invocation's decisions and annotations (`validator.go`):
    // it follows the validationActions like any error, rather than denying as annotation
    // errors do.
    let annotations: Vec<String> = (0..11)
        .map(|i| {
            format!(
                r#"{{key: k{i}, valueExpression: "lists.range(999000).size() > 0 ? 'x' : 'y'"}}"#
            )
        })
        .collect();
    let policy = |failure: &str| {
        vap(
            "p",
            &format!(
                r#"failurePolicy: {failure}, validations: [{{expression: "false", message: "no"}}], auditAnnotations: [{}]"#,
                annotations.join(", ")
            ),
        )
    };
    let budget = "validation failed due to running out of cost budget, no further validation rules will be run";
    let h = Harness::clean(&(policy("Fail") + &binding("b", "p", "[Warn]", "")));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        outcome.warnings,
        [format!(
            "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': {budget}"
        )]
    );
    assert!(outcome.audit_annotations.is_empty());
    let h = Harness::clean(&(policy("Ignore") + &binding("b", "p", "[Deny]", "")));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(
        outcome.allowed,
        "the false validation is dropped with the rest"
    );
    assert!(outcome.audit_annotations.is_empty());
}

#[test]
fn configuration_errors_go_through_failure_policy() {
    // A binding whose paramRef finds nothing, with parameterNotFoundAction Deny.
    let policy = |failure: &str| {
        vap(
            "p",
            &format!(
                r#"failurePolicy: {failure}, paramKind: {{apiVersion: v1, kind: ConfigMap}}, validations: [{{expression: "true"}}]"#
            ),
        )
    };
    let b = binding(
        "b",
        "p",
        "[Warn]",
        "paramRef: {name: absent, parameterNotFoundAction: Deny}",
    );
    let h = Harness::clean(&(policy("Fail") + &b));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    // Configuration errors deny whatever the validationActions, with reason Invalid.
    assert_eq!(
        denial(&outcome),
        (
            422,
            "Invalid".to_string(),
            forbidden(
                "web",
                "p",
                "b",
                "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        )
    );
    assert!(outcome.warnings.is_empty());
    let h = Harness::clean(&(policy("Ignore") + &b));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert!(outcome.warnings.is_empty());
}

#[test]
fn a_policy_configuration_error_names_no_binding() {
    // The request's namespace does not exist and the policy selects namespaces: the
    // policy cannot be matched (`namespaces "missing" not found`).
    let h = Harness::clean(
        &(vap_matching(
            "p",
            r#"{namespaceSelector: {matchLabels: {env: prod}}, resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#,
            r#"validations: [{expression: "true"}]"#,
        ) + &deny_binding("p")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}").in_namespace("missing"));
    assert_eq!(
        denial(&outcome),
        (
            422,
            "Invalid".to_string(),
            "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: namespaces \"missing\" not found".to_string()
        )
    );
}

#[test]
fn the_review_json_echoes_uid_and_version() {
    let h = Harness::clean(
        &(vap(
            "p",
            r#"validations: [{expression: "false", message: "no", reason: Forbidden}], auditAnnotations: [{key: k, valueExpression: "'v'"}]"#,
        ) + &binding("b", "p", "[Deny, Audit]", "")
            + &vap(
                "w",
                r#"validations: [{expression: "false", message: "careful"}]"#,
            )
            + &binding("wb", "w", "[Warn]", "")),
    );
    let mut req = Req::create_pod("web", "{}");
    req.uid = "0df28fbd-5f5f-4b6d-8f4b-7d6a1c1c0001";
    req.api_version = "admission.k8s.io/v1beta1";
    let body = h.review_json(&req);
    let expected = json(&format!(
        r#"{{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{{
            "uid":"0df28fbd-5f5f-4b6d-8f4b-7d6a1c1c0001","allowed":false,
            "status":{{"metadata":{{}},"status":"Failure",
              "message":"pods \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no",
              "reason":"Forbidden",
              "details":{{"name":"web","kind":"pods","causes":[{{"message":"ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no"}}]}},
              "code":403}},
            "warnings":["Validation failed for ValidatingAdmissionPolicy 'w' with binding 'wb': careful"],
            "auditAnnotations":{{"p/k":"v","{FAILURES}":{}}}}}}}"#,
        q(
            r#"[{"message":"no","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Deny","Audit"]}]"#
        )
    ));
    assert_eq!(body, expected);

    // Allowed: no status.
    let h =
        Harness::clean(&(vap("p", r#"validations: [{expression: "true"}]"#) + &deny_binding("p")));
    let body = h.review_json(&Req::create_pod("web", "{}"));
    assert_eq!(
        body,
        json(
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"req-1","allowed":true}}"#
        )
    );
}
