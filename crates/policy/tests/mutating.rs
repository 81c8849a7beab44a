//! MutatingAdmissionPolicies through the engine, as `policy/mutating/dispatcher.go` and the
//! generic `policy_dispatcher.go` run them: invocations in order, each mutation on the latest
//! object, errors and failurePolicy, reinvocation, the response's patch, and validation of the
//! mutated object.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;

use celer_cel::Json;
use celer_cel_kubernetes::authz::{Authorizer, AuthzAttributes, AuthzDecision, Decision};
use celer_policy::mutation::json_patch;
use celer_policy::response::{Outcome, ResultKind};
use sonic_rs::JsonValueTrait;
use support::*;

/// A JSONPatch mutation (flow YAML).
fn json_patch(expression: &str) -> String {
    format!(r#"{{patchType: JSONPatch, jsonPatch: {{expression: "{expression}"}}}}"#)
}

/// An ApplyConfiguration mutation (flow YAML).
fn apply(expression: &str) -> String {
    format!(
        r#"{{patchType: ApplyConfiguration, applyConfiguration: {{expression: "{expression}"}}}}"#
    )
}

/// A MutatingAdmissionPolicy with these mutations and a binding `<name>-binding`.
fn policy(name: &str, more: &str, mutations: &[String]) -> String {
    let more = if more.is_empty() {
        String::new()
    } else {
        format!("{more}, ")
    };
    map(
        name,
        &format!(
            "{more}reinvocationPolicy: Never, mutations: [{}]",
            mutations.join(", ")
        ),
    ) + &map_binding(&format!("{name}-binding"), name, "")
}

fn set_label(key: &str, value: &str) -> String {
    apply(&format!(
        "Object{{metadata: Object.metadata{{labels: {{'{key}': {value}}}}}}}"
    ))
}

/// The labels of the mutated object.
fn labels(outcome: &Outcome) -> String {
    let patched = outcome
        .patched
        .as_ref()
        .expect("the object was not mutated");
    sonic_rs::to_string(&patched["metadata"]["labels"]).unwrap()
}

/// The patch in the response, applied to the original object, gives the mutated object.
#[track_caller]
fn assert_patch_reproduces(request: &Req, outcome: &Outcome) {
    let mut original = json(request.object.as_ref().unwrap());
    let patch = outcome.patch.as_ref().expect("no patch");
    assert_eq!(
        json_patch::apply(&mut original, patch).unwrap(),
        json_patch::Applied::Patched
    );
    assert_eq!(&original, outcome.patched.as_ref().unwrap());
}

#[test]
fn mutations_apply_in_order_each_on_the_last_result() {
    let h = Harness::clean(
        &(policy(
            "first",
            "",
            &[
                set_label("a", "'1'"),
                // Reads the label the previous mutation set.
                json_patch(
                    "[JSONPatch{op: 'add', path: '/metadata/labels/b', value: object.metadata.labels.a + '2'}]",
                ),
            ],
        ) + &policy(
            "second",
            "",
            // Policies run in order too: this one sees both labels.
            &[set_label(
                "c",
                "object.metadata.labels.a + object.metadata.labels.b + '3'",
            )],
        )),
    );
    let request = Req::create_pod("web", r#"{"app":"web"}"#);
    let outcome = h.eval(&request);
    assert!(outcome.allowed);
    assert_eq!(
        labels(&outcome),
        r#"{"app":"web","a":"1","b":"12","c":"1123"}"#
    );
    assert_patch_reproduces(&request, &outcome);
    assert_eq!(
        results(&outcome, "first"),
        [(Some("first-binding".to_string()), ResultKind::Pass)]
    );
}

#[test]
fn a_failed_test_operation_is_a_silent_no_op() {
    let h = Harness::clean(&policy(
        "p",
        "",
        &[
            json_patch(
                "[JSONPatch{op: 'add', path: '/metadata/labels/x', value: 'set'}, JSONPatch{op: 'test', path: '/metadata/labels/app', value: 'api'}]",
            ),
            set_label("after", "'yes'"),
        ],
    ));
    let outcome = h.eval(&Req::create_pod("web", r#"{"app":"web"}"#));
    assert!(outcome.allowed);
    // The whole first patch is dropped; the next mutation applies.
    assert_eq!(labels(&outcome), r#"{"app":"web","after":"yes"}"#);
}

#[test]
fn no_change_means_no_patch() {
    let h = Harness::clean(&policy("p", "", &[set_label("app", "'web'")]));
    let outcome = h.eval(&Req::create_pod("web", r#"{"app":"web"}"#));
    assert!(outcome.allowed);
    assert!(outcome.patch.is_none() && outcome.patched.is_none());
}

#[test]
fn mutation_errors_deny_with_upstreams_texts() {
    // (mutation, error)
    let cases: Vec<(String, String)> = vec![
        (
            set_label("x", "object.spec.missing"),
            "expression 'Object{metadata: Object.metadata{labels: {'x': object.spec.missing}}}' resulted in error: no such key: missing".into(),
        ),
        // A compile error is reported as it is, without `compilation error: `.
        (
            set_label("x", "nope"),
            "compilation failed: ERROR: <input>:1:48: undeclared reference to 'nope' (in container '')\n | Object{metadata: Object.metadata{labels: {'x': nope}}}\n | ...............................................^".into(),
        ),
        (
            apply("object"),
            "must evaluate to Object but got dyn".into(),
        ),
        (
            json_patch("[JSONPatch{op: 'remove', path: '/spec/nothing'}]"),
            "JSON Patch: error in remove for path: '/spec/nothing': Unable to remove nonexistent key: nothing: missing value".into(),
        ),
        (
            json_patch("[JSONPatch{op: 'remove', path: '/spec/no/thing'}]"),
            "JSON Patch: remove operation does not apply: doc is missing path: \"/spec/no/thing\": missing value".into(),
        ),
        (
            json_patch("[JSONPatch{op: 'bogus', path: '/spec'}]"),
            "JSON Patch: Unexpected kind: bogus".into(),
        ),
        (
            apply("Object{spec: Object.spec{containers: [Object.spec.volumes{name: 'x'}]}}"),
            "type mismatch: unexpected type name \"Object.spec.volumes\", expected \"Object.spec.containers\", which matches field name path from root Object type".into(),
        ),
    ];
    for (mutation, error) in cases {
        let h = Harness::new(&policy("p", "", std::slice::from_ref(&mutation)));
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        let status = outcome
            .status
            .as_ref()
            .unwrap_or_else(|| panic!("{mutation} allowed"));
        let message = format!("policy 'p' with binding 'p-binding' denied request: {error}");
        assert_eq!(status.message, message, "{mutation}");
        assert_eq!((status.code, status.reason.as_str()), (403, "Invalid"));
        assert_eq!(status.details.as_ref().unwrap().causes, [message]);
        assert!(outcome.patch.is_none());
    }
}

#[test]
fn a_failing_mutation_does_not_stop_the_next_ones() {
    let mutations = [
        set_label("a", "'1'"),
        set_label("x", "object.spec.missing"),
        set_label("b", "'2'"),
        set_label("y", "object.spec.other"),
    ];
    // Under Ignore the errors are dropped and the other mutations applied.
    let h = Harness::clean(&policy("p", "failurePolicy: Ignore", &mutations));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(labels(&outcome), r#"{"a":"1","b":"2"}"#);
    // Under Fail every error is a cause; the first is the message.
    let h = Harness::clean(&policy("p", "", &mutations));
    let status = h.eval(&Req::create_pod("web", "{}")).status.unwrap();
    let error = |e: &str, field: &str| {
        format!(
            "policy 'p' with binding 'p-binding' denied request: expression 'Object{{metadata: Object.metadata{{labels: {{'{field}': object.spec.{e}}}}}}}' resulted in error: no such key: {e}"
        )
    };
    assert_eq!(status.message, error("missing", "x"));
    assert_eq!(
        status.details.unwrap().causes,
        [error("missing", "x"), error("other", "y")]
    );
}

#[test]
fn configuration_errors_are_forbidden() {
    // Errors found before any mutation runs carry no reason: the status keeps Forbidden.
    let h = Harness::clean(
        &(map(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
        ) + &map_binding(
            "b",
            "p",
            "paramRef: {name: absent, parameterNotFoundAction: Deny}",
        )),
    );
    let status = h.eval(&Req::create_pod("web", "{}")).status.unwrap();
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (
            403,
            "Forbidden",
            "policy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
        )
    );
    // A policy-level error names the policy in double quotes and no binding.
    let h = Harness::clean(
        &(map(
            "p",
            r#"paramKind: {apiVersion: example.com/v1, kind: Missing}, reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
        ) + &map_binding("b", "p", "")),
    );
    let status = h.eval(&Req::create_pod("web", "{}")).status.unwrap();
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (
            403,
            "Forbidden",
            "policy \"p\" denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Missing'"
        )
    );
    // Configuration errors come before evaluation errors, whatever the policy order.
    let h = Harness::clean(
        &(policy("a", "", &[set_label("x", "object.spec.missing")])
            + &map(
                "z",
                r#"paramKind: {apiVersion: v1, kind: ConfigMap}, reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]"#,
            )
            + &map_binding(
                "zb",
                "z",
                "paramRef: {name: absent, parameterNotFoundAction: Deny}",
            )),
    );
    let status = h.eval(&Req::create_pod("web", "{}")).status.unwrap();
    assert_eq!(status.reason, "Forbidden");
    let causes = status.details.unwrap().causes;
    assert_eq!(causes.len(), 2);
    assert!(
        causes[0].starts_with(
            "policy 'z' with binding 'zb' denied request: failed to configure binding"
        )
    );
    assert!(
        causes[1].starts_with("policy 'a' with binding 'a-binding' denied request: expression")
    );
}

#[test]
fn match_conditions_select_invocations() {
    let conditions = |expression: &str, failure: &str| {
        format!(
            r#"failurePolicy: {failure}, matchConditions: [{{name: c, expression: "{expression}"}}]"#
        )
    };
    // (conditions, verdict: the labels, or the denial)
    let cases = [
        (conditions("object.metadata.name == 'web'", "Fail"), r#"{"m":"yes"}"#.to_string()),
        (conditions("object.metadata.name == 'api'", "Fail"), "no change".to_string()),
        (
            conditions("object.spec.missing == 1", "Fail"),
            "policy 'p' with binding 'p-binding' denied request: expression 'object.spec.missing == 1' resulted in error: no such key: missing".to_string(),
        ),
        (conditions("object.spec.missing == 1", "Ignore"), "no change".to_string()),
    ];
    for (more, want) in cases {
        let h = Harness::clean(&policy("p", &more, &[set_label("m", "'yes'")]));
        let outcome = h.eval(&Req::create_pod("web", "{}"));
        let got = match (&outcome.status, &outcome.patched) {
            (Some(s), _) => {
                assert_eq!((s.code, s.reason.as_str()), (403, "Invalid"));
                s.message.clone()
            }
            (None, Some(_)) => labels(&outcome),
            (None, None) => "no change".to_string(),
        };
        assert_eq!(got, want, "{more}");
    }
}

#[test]
fn each_param_is_an_invocation() {
    let h = Harness::clean(
        &(map(
            "p",
            r#"paramKind: {apiVersion: v1, kind: ConfigMap}, reinvocationPolicy: Never, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {params.data.key: params.data.value + string(size(object.metadata.labels))}}}"}}]"#,
        ) + &map_binding(
            "b",
            "p",
            "paramRef: {selector: {}, parameterNotFoundAction: Allow}",
        ) + &config_map("one", "default", "{}", "{key: a, value: x}")
            + &config_map("two", "default", "{}", "{key: b, value: y}")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    // The second param's invocation sees the first one's label.
    assert_eq!(labels(&outcome), r#"{"a":"x0","b":"y1"}"#);
}

/// A policy incrementing annotation `count` and setting label `<name>`.
fn counting(name: &str, reinvocation: &str) -> String {
    map(
        name,
        &format!(
            r#"reinvocationPolicy: {reinvocation}, mutations: [{{patchType: ApplyConfiguration, applyConfiguration: {{expression: "Object{{metadata: Object.metadata{{labels: {{'{name}': 'applied'}}, annotations: {{'count': string(int(object.metadata.annotations['count']) + 1)}}}}}}"}}}}]"#
        ),
    ) + &map_binding(&format!("{name}-binding"), name, "")
}

fn count_after(policies: &[(&str, &str)]) -> String {
    let text: String = policies.iter().map(|(n, r)| counting(n, r)).collect();
    let h = Harness::clean(&text);
    let request = Req::create(
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default","annotations":{"count":"0"}}}"#,
    );
    let outcome = h.eval(&request);
    assert!(outcome.allowed, "{outcome:#?}");
    assert_patch_reproduces(&request, &outcome);
    outcome.patched.unwrap()["metadata"]["annotations"]["count"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn if_needed_invocations_run_again_once() {
    // kube-apiserver's integration test "multiple policies requiring reinvocation": 0->1->2->3,
    // then policy-1 and policy-2 again: 5.
    assert_eq!(
        count_after(&[
            ("policy-1", "IfNeeded"),
            ("policy-2", "IfNeeded"),
            ("policy-3", "Never")
        ]),
        "5"
    );
    // Never: once each.
    assert_eq!(count_after(&[("a", "Never"), ("b", "Never")]), "2");
    // Any successful mutation marks the object dirty, which at the end of the first round
    // reinvokes every IfNeeded invocation not yet marked (`dispatchInvocations`,
    // `lastVersionedAttr.Dirty`): the last IfNeeded one runs again too. Never more than once.
    assert_eq!(count_after(&[("a", "IfNeeded")]), "2");
    assert_eq!(count_after(&[("a", "IfNeeded"), ("b", "IfNeeded")]), "4");
    assert_eq!(count_after(&[("a", "Never"), ("b", "IfNeeded")]), "3");
}

#[test]
fn the_second_round_evaluates_every_match_condition_again() {
    // `first` (Never) runs while label x is there; `second` removes it. Since a mutation
    // succeeded the chain runs again, and there `first`'s condition fails on the mutated
    // object, even though `first` itself is not reinvoked.
    let h = Harness::clean(
        &(policy(
            "first",
            r#"matchConditions: [{name: x, expression: "object.metadata.labels.x == 'y'"}]"#,
            &[set_label("first", "'ran'")],
        ) + &policy(
            "second",
            "",
            &[json_patch(
                "[JSONPatch{op: 'remove', path: '/metadata/labels/x'}]",
            )],
        )),
    );
    let status = h
        .eval(&Req::create_pod("web", r#"{"x":"y"}"#))
        .status
        .unwrap();
    assert_eq!(
        status.message,
        "policy 'first' with binding 'first-binding' denied request: expression 'object.metadata.labels.x == 'y'' resulted in error: no such key: x"
    );
}

#[test]
fn a_condition_reads_what_an_earlier_policy_changed_in_the_same_round() {
    // `a` adds a label; `b`'s condition reads it (and a part nobody changed) from the object
    // as `a` left it, before anything is written out as JSON; `c`'s condition wants the label
    // gone and so does not match.
    let h = Harness::clean(
        &(policy("a", "", &[set_label("stage", "'one'")])
            + &policy(
                "b",
                r#"matchConditions: [{name: s, expression: "object.metadata.labels.stage == 'one' && object.metadata.name == 'web'"}]"#,
                &[set_label("seen", "object.metadata.labels.stage")],
            )
            + &policy(
                "c",
                r#"matchConditions: [{name: s, expression: "!('stage' in object.metadata.labels)"}]"#,
                &[set_label("wrong", "'yes'")],
            )),
    );
    let outcome = h.eval(&Req::create_pod("web", r#"{"x":"y"}"#));
    assert!(outcome.allowed);
    assert_eq!(labels(&outcome), r#"{"x":"y","stage":"one","seen":"one"}"#);
}

#[test]
fn nothing_is_reinvoked_when_no_mutation_succeeded() {
    let h = Harness::clean(
        &(map(
            "p",
            r#"failurePolicy: Ignore, reinvocationPolicy: IfNeeded, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'x': object.spec.missing}}}"}}]"#,
        ) + &map_binding("b", "p", "")),
    );
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert!(outcome.allowed);
    assert_eq!(
        results(&outcome, "p"),
        [(Some("b".to_string()), ResultKind::Error)]
    );
}

/// A ValidatingAdmissionPolicy `v` (denying) that wants the label `team: core`.
fn team_core() -> String {
    vap(
        "v",
        r#"validations: [{expression: "object.metadata.labels.team == 'core'", messageExpression: "'team is ' + object.metadata.labels.team"}]"#,
    ) + &deny_binding("v")
}

#[test]
fn validation_sees_the_mutated_object() {
    let validating = team_core();
    let h = Harness::clean(&(policy("m", "", &[set_label("team", "'core'")]) + &validating));
    let outcome = h.eval(&Req::create_pod("web", r#"{"team":"other"}"#));
    assert!(outcome.allowed, "{}", verdict(&outcome));
    assert_eq!(labels(&outcome), r#"{"team":"core"}"#);
    // Without the mutation the same request is denied.
    let h = Harness::clean(&validating);
    assert_eq!(
        verdict(&h.eval(&Req::create_pod("web", r#"{"team":"other"}"#))),
        forbidden("web", "v", "v-binding", "team is other")
    );
}

/// As `celer serve` evaluates (`patch_only`): the same patch and decision, no mutated object
/// kept in the outcome; a validating policy in the set still reads the mutated object.
#[test]
fn patch_only_keeps_the_patch_and_what_validation_sees() {
    let validating = team_core();
    let mutations = policy(
        "m",
        "",
        &[set_label("team", "'core'"), set_label("x", "'1'")],
    );
    for yaml in [mutations.clone(), mutations + &validating] {
        let mut h = Harness::clean(&yaml);
        let request = Req::create_pod("web", r#"{"team":"other"}"#);
        let whole = h.eval(&request);
        h.options.patch_only = true;
        let patch_only = h.eval(&request);
        assert!(
            whole.allowed && patch_only.allowed,
            "{}",
            verdict(&patch_only)
        );
        assert!(whole.patched.is_some());
        assert!(patch_only.patched.is_none());
        assert!(patch_only.patch.is_some());
        assert_eq!(whole.patch, patch_only.patch);
    }
}

#[test]
fn the_review_response_carries_the_patch() {
    let h = Harness::clean(&policy("p", "", &[set_label("x", "'1'")]));
    let body = h.review_json(&Req::create_pod("web", "{}"));
    let response = &body["response"];
    assert_eq!(response["allowed"].as_bool(), Some(true));
    assert_eq!(response["patchType"].as_str(), Some("JSONPatch"));
    let patch = base64_decode(response["patch"].as_str().unwrap());
    assert_eq!(
        json(&patch),
        json(r#"[{"op":"add","path":"/metadata/labels/x","value":"1"}]"#)
    );
}

fn base64_decode(text: &str) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = alphabet.iter().position(|a| *a == c).unwrap() as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Allows everything under `/allowed`.
#[derive(Debug)]
struct PathAuthorizer;

impl Authorizer for PathAuthorizer {
    fn authorize(&self, attributes: &AuthzAttributes) -> AuthzDecision {
        AuthzDecision {
            decision: if attributes.path.starts_with("/allowed") {
                Decision::Allow
            } else {
                Decision::Deny
            },
            reason: String::new(),
            error: None,
        }
    }
}

#[test]
fn mutations_and_their_conditions_may_use_the_authorizer() {
    let mut h = Harness::clean(&policy(
        "p",
        r#"matchConditions: [{name: may, expression: "authorizer.path('/allowed/a').check('get').allowed()"}]"#,
        &[set_label(
            "allowed",
            "string(authorizer.path('/allowed/b').check('get').allowed()) + '-' + string(authorizer.path('/denied').check('get').allowed())",
        )],
    ));
    h.options.authorizer = Some(Arc::new(PathAuthorizer));
    let outcome = h.eval(&Req::create_pod("web", "{}"));
    assert_eq!(labels(&outcome), r#"{"allowed":"true-false"}"#);
}

#[test]
fn a_request_matched_through_an_equivalent_is_presented_as_it() {
    let h = Harness::clean(
        &(format!(
            "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {{name: p}}\nspec: {{matchConstraints: {{resourceRules: [{{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v2], resources: [horizontalpodautoscalers]}}]}}, reinvocationPolicy: Never, matchConditions: [{{name: c, expression: \"request.kind.version == 'v2' && request.resource.version == 'v1'\"}}], mutations: [{}]}}\n",
            set_label(
                "seen",
                "request.kind.version + '.' + request.resource.version + '.' + request.requestKind.version + '.' + request.requestResource.version"
            )
        ) + &map_binding("b", "p", "")),
    );
    let mut r = Req::pod(
        "CREATE",
        "web",
        Some(
            r#"{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"}}"#,
        ),
    );
    r.kind = ("autoscaling", "v1", "HorizontalPodAutoscaler");
    r.resource = ("autoscaling", "v1", "horizontalpodautoscalers");
    let outcome = h.eval(&r);
    let patched: &Json = outcome.patched.as_ref().expect("not mutated");
    assert_eq!(
        patched["metadata"]["labels"]["seen"].as_str(),
        Some("v2.v2.v1.v1")
    );
}

#[test]
fn metadata_maps_take_strings_computed_or_read_and_refuse_others() {
    // A whole map read from the object (its strings as the request has them) changes nothing.
    let h = Harness::clean(&policy(
        "p",
        "",
        &[apply(
            "Object{metadata: Object.metadata{labels: object.metadata.labels}}",
        )],
    ));
    let outcome = h.eval(&Req::create_pod("web", r#"{"app":"web"}"#));
    assert!(outcome.allowed && outcome.patch.is_none());
    // Read and computed strings, in two maps, one the object does not have yet.
    let h = Harness::clean(&policy(
        "p",
        "",
        &[apply(
            "Object{metadata: Object.metadata{labels: {'copy': object.metadata.labels.app, 'app': dyn('api')}, annotations: {'a': 'b'}}}",
        )],
    ));
    let request = Req::create_pod("web", r#"{"app":"web"}"#);
    let outcome = h.eval(&request);
    assert!(outcome.allowed);
    assert_eq!(labels(&outcome), r#"{"app":"api","copy":"web"}"#);
    assert_eq!(
        sonic_rs::to_string(&outcome.patched.as_ref().unwrap()["metadata"]["annotations"]).unwrap(),
        r#"{"a":"b"}"#
    );
    assert_patch_reproduces(&request, &outcome);
    // A value that is no string is refused by the typing, as before.
    let h = Harness::new(&policy("p", "", &[set_label("n", "1")]));
    let status = h
        .eval(&Req::create_pod("web", r#"{"app":"web"}"#))
        .status
        .expect("a number label was allowed");
    assert!(
        status.message.ends_with(
            "failed to convert patch object to typed object: .metadata.labels.n: expected string, got &value.valueUnstructured{Value:1}"
        ),
        "{}",
        status.message
    );
}
