//! Matching through the engine (`policy/matching/matching.go`): the binding's matchResources
//! within the policy's matchConstraints, namespaceSelector over the lookup's Namespaces,
//! objectSelector over object or oldObject, excluded and exempt resources, and equivalent
//! resources with the `request` fields they give CEL (`plugin/cel/condition.go`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::*;

/// A policy that always denies, matching `constraints`, bound with `binding_spec`.
fn denying(constraints: &str, binding_spec: &str) -> Harness {
    Harness::clean(
        &(vap_matching(
            "p",
            constraints,
            r#"validations: [{expression: "false", message: "matched"}]"#,
        ) + &binding("b", "p", "[Deny]", binding_spec)
            + &namespace("prod", "{env: prod}")
            + &namespace("dev", "{env: dev}")),
    )
}

fn matched(h: &Harness, r: &Req) -> bool {
    let outcome = h.eval(r);
    if !outcome.allowed {
        assert!(
            verdict(&outcome).ends_with("denied request: matched"),
            "{}",
            verdict(&outcome)
        );
    }
    !outcome.allowed
}

fn update_pod(name: &str, labels: &str, old_labels: &str) -> Req {
    let mut r = Req::create_pod(name, labels);
    r.operation = "UPDATE";
    r.with_old(&pod_json(name, "default", old_labels))
}

fn delete_pod(name: &str, old_labels: &str) -> Req {
    let mut r = Req::pod("DELETE", name, None);
    r.old_object = Some(pod_json(name, "default", old_labels));
    r
}

const ALL_PODS: &str = r#"{resourceRules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;

#[test]
fn the_binding_narrows_the_policy() {
    let pods_create = r#"{resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;
    let narrow = format!("matchResources: {pods_create}");
    let wide = format!("matchResources: {ALL_PODS}");
    // (policy constraints, binding spec, request, matched)
    let cases: Vec<(&str, &str, Req, bool)> = vec![
        (ALL_PODS, "", update_pod("web", "{}", "{}"), true),
        (ALL_PODS, &narrow, Req::create_pod("web", "{}"), true),
        (ALL_PODS, &narrow, update_pod("web", "{}", "{}"), false),
        // A binding cannot widen the policy.
        (pods_create, &wide, update_pod("web", "{}", "{}"), false),
        // A binding's matchResources without rules matches whatever the policy does.
        (
            ALL_PODS,
            "matchResources: {namespaceSelector: {matchLabels: {env: prod}}}",
            Req::create_pod("web", "{}").in_namespace("prod"),
            true,
        ),
        (
            ALL_PODS,
            "matchResources: {namespaceSelector: {matchLabels: {env: prod}}}",
            Req::create_pod("web", "{}").in_namespace("dev"),
            false,
        ),
        (
            ALL_PODS,
            "matchResources: {objectSelector: {matchLabels: {app: web}}}",
            Req::create_pod("web", r#"{"app":"web"}"#),
            true,
        ),
        (
            ALL_PODS,
            "matchResources: {objectSelector: {matchLabels: {app: web}}}",
            Req::create_pod("web", r#"{"app":"api"}"#),
            false,
        ),
        (
            ALL_PODS,
            "matchResources: {excludeResourceRules: [{operations: [DELETE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]}",
            delete_pod("web", "{}"),
            false,
        ),
        (
            ALL_PODS,
            "matchResources: {excludeResourceRules: [{operations: [DELETE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]}",
            Req::create_pod("web", "{}"),
            true,
        ),
        (
            ALL_PODS,
            "matchResources: {resourceRules: [{operations: [\"*\"], apiGroups: [\"\"], apiVersions: [v1], resources: [pods], resourceNames: [web]}]}",
            Req::create_pod("web", "{}"),
            true,
        ),
        (
            ALL_PODS,
            "matchResources: {resourceRules: [{operations: [\"*\"], apiGroups: [\"\"], apiVersions: [v1], resources: [pods], resourceNames: [web]}]}",
            Req::create_pod("api", "{}"),
            false,
        ),
    ];
    for (i, (constraints, spec, request, want)) in cases.iter().enumerate() {
        let h = denying(constraints, spec);
        assert_eq!(matched(&h, request), *want, "case {i}: {spec}");
    }
}

#[test]
fn selectors_of_the_policy() {
    // (constraints, request, matched)
    let in_prod = r#"{namespaceSelector: {matchLabels: {env: prod}}, resourceRules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods, namespaces]}]}"#;
    let not_dev = r#"{namespaceSelector: {matchExpressions: [{key: env, operator: NotIn, values: [dev]}]}, resourceRules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;
    let web = r#"{objectSelector: {matchLabels: {app: web}}, resourceRules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;
    let new_namespace = |labels: &str| {
        let mut r = Req::pod(
            "CREATE",
            "fresh",
            Some(&format!(
                r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"fresh","labels":{labels}}}}}"#
            )),
        );
        r.kind = ("", "v1", "Namespace");
        r.resource = ("", "v1", "namespaces");
        r.namespace = String::new();
        r
    };
    let cases: Vec<(&str, Req, bool)> = vec![
        (
            in_prod,
            Req::create_pod("web", "{}").in_namespace("prod"),
            true,
        ),
        (
            in_prod,
            Req::create_pod("web", "{}").in_namespace("dev"),
            false,
        ),
        // A Namespace being created is selected by its own labels.
        (in_prod, new_namespace(r#"{"env":"prod"}"#), true),
        (in_prod, new_namespace(r#"{"env":"dev"}"#), false),
        (
            not_dev,
            Req::create_pod("web", "{}").in_namespace("prod"),
            true,
        ),
        (
            not_dev,
            Req::create_pod("web", "{}").in_namespace("dev"),
            false,
        ),
        // objectSelector: the object or the old object.
        (web, Req::create_pod("web", r#"{"app":"web"}"#), true),
        (
            web,
            update_pod("web", r#"{"app":"api"}"#, r#"{"app":"web"}"#),
            true,
        ),
        (
            web,
            update_pod("web", r#"{"app":"web"}"#, r#"{"app":"api"}"#),
            true,
        ),
        (
            web,
            update_pod("web", r#"{"app":"api"}"#, r#"{"app":"api"}"#),
            false,
        ),
        (web, delete_pod("web", r#"{"app":"web"}"#), true),
        (web, delete_pod("web", r#"{"app":"api"}"#), false),
    ];
    for (i, (constraints, request, want)) in cases.iter().enumerate() {
        let h = denying(constraints, "");
        assert_eq!(matched(&h, request), *want, "case {i}: {constraints}");
    }
}

#[test]
fn subresources_and_scope() {
    let rule = |resources: &str, scope: &str| {
        format!(
            r#"{{resourceRules: [{{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: {resources}, scope: "{scope}"}}]}}"#
        )
    };
    let status = || {
        let mut r = update_pod("web", "{}", "{}");
        r.sub_resource = "status";
        r
    };
    // (resources, scope, request, matched)
    let cases: Vec<(&str, &str, Req, bool)> = vec![
        ("[pods]", "*", status(), false),
        ("[pods/status]", "*", status(), true),
        ("[pods/*]", "*", status(), true),
        ("[\"*/*\"]", "*", status(), true),
        ("[\"*\"]", "*", status(), false),
        ("[\"*\"]", "*", Req::create_pod("web", "{}"), true),
        ("[pods]", "Namespaced", Req::create_pod("web", "{}"), true),
        ("[pods]", "Cluster", Req::create_pod("web", "{}"), false),
    ];
    for (i, (resources, scope, request, want)) in cases.iter().enumerate() {
        let h = denying(&rule(resources, scope), "");
        assert_eq!(matched(&h, request), *want, "case {i}: {resources} {scope}");
    }
}

#[test]
fn admission_configuration_and_review_requests_are_never_seen() {
    let everything = r#"{resourceRules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]}"#;
    let h = denying(everything, "");
    // (group, version, kind, resource, matched)
    let cases = [
        ("", "v1", "ConfigMap", "configmaps", true),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            false,
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            false,
        ),
        // Webhook configurations are exempt from webhooks only, not from policies.
        (
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            true,
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            true,
        ),
        (
            "authentication.k8s.io",
            "v1",
            "TokenReview",
            "tokenreviews",
            false,
        ),
        (
            "authorization.k8s.io",
            "v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
        ),
    ];
    for (group, version, kind, resource, want) in cases {
        let mut r = Req::pod("CREATE", "x", Some(r#"{"metadata":{"name":"x"}}"#));
        r.kind = (group, version, kind);
        r.resource = (group, version, resource);
        r.namespace = String::new();
        assert_eq!(matched(&h, &r), want, "{resource}");
    }
}

/// An autoscaling/v1 HorizontalPodAutoscaler CREATE.
fn hpa_v1() -> Req {
    let mut r = Req::pod(
        "CREATE",
        "web",
        Some(
            r#"{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"}}"#,
        ),
    );
    r.kind = ("autoscaling", "v1", "HorizontalPodAutoscaler");
    r.resource = ("autoscaling", "v1", "horizontalpodautoscalers");
    r
}

const HPA_V2: &str = r#"resourceRules: [{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v2], resources: [horizontalpodautoscalers]}]"#;

#[test]
fn equivalent_resources_match_unless_exact() {
    for (policy, want) in [("Equivalent", true), ("Exact", false)] {
        let h = denying(&format!("{{matchPolicy: {policy}, {HPA_V2}}}"), "");
        assert_eq!(matched(&h, &hpa_v1()), want, "{policy}");
    }
    let h = denying(&format!("{{{HPA_V2}}}"), "");
    assert!(matched(&h, &hpa_v1()), "Equivalent is the default");
}

#[test]
fn a_request_matched_through_an_equivalent_is_presented_as_it() {
    // Validations see the matched kind and resource; requestKind and requestResource keep
    // the request's own (`CreateAdmissionRequest` with the matched GVR and GVK).
    let h = Harness::clean(
        &(vap_matching(
            "p",
            &format!("{{{HPA_V2}}}"),
            r#"validations: [{expression: "false", messageExpression: "request.kind.version + ' ' + request.resource.version + ' ' + request.requestKind.version + ' ' + request.requestResource.version + ' ' + request.kind.kind"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&hpa_v1())),
        "horizontalpodautoscalers.autoscaling \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p-binding' denied request: v2 v2 v1 v1 HorizontalPodAutoscaler"
    );
}

#[test]
fn match_conditions_see_the_matched_kind_and_the_requests_resource() {
    // `matcher.go` builds its request from the versioned kind and `GetResource()`, the
    // request's own resource.
    let h = Harness::clean(
        &(vap_matching(
            "p",
            &format!("{{{HPA_V2}}}"),
            r#"matchConditions: [{name: versions, expression: "request.kind.version == 'v2' && request.resource.version == 'v1'"}], validations: [{expression: "false", message: "ran"}]"#,
        ) + &deny_binding("p")),
    );
    assert_eq!(
        verdict(&h.eval(&hpa_v1())),
        "horizontalpodautoscalers.autoscaling \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p-binding' denied request: ran"
    );
}

/// Policies pinned to namespaces by `kubernetes.io/metadata.name` (through the policy's own
/// namespaceSelector or every binding's) are looked up by that label, not matched one by one;
/// the outcome must be the one matching each would give: by the label's value on the stored
/// Namespace (not the request's namespace name), all of them for cluster-scoped requests and
/// Namespaces being written, and upstream's error when the Namespace is missing.
#[test]
fn policies_pinned_to_namespaces_by_name() {
    let pinned = |ns: &str| format!("{{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}");
    let pods_and_namespaces = r#"resourceRules: [{operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [pods, namespaces, nodes]}]"#;
    let audit = r#"validations: [{expression: "false", message: "matched"}]"#;
    let yaml = [
        // Pinned by its bindings.
        vap_matching("by-bindings", &format!("{{{pods_and_namespaces}}}"), audit),
        binding("by-bindings-a", "by-bindings", "[Audit]", &format!("matchResources: {{namespaceSelector: {}}}", pinned("team-a"))),
        binding("by-bindings-b", "by-bindings", "[Audit]", &format!("matchResources: {{namespaceSelector: {}}}", pinned("team-b"))),
        // Pinned by the policy, to two namespaces with an expression.
        vap_matching(
            "by-policy",
            &format!("{{namespaceSelector: {{matchExpressions: [{{key: kubernetes.io/metadata.name, operator: In, values: [team-b, team-c]}}]}}, {pods_and_namespaces}}}"),
            audit,
        ),
        deny_binding("by-policy").replace("[Deny]", "[Audit]"),
        // One binding pins, one does not: anywhere.
        vap_matching("mixed", &format!("{{{pods_and_namespaces}}}"), audit),
        binding("mixed-a", "mixed", "[Audit]", &format!("matchResources: {{namespaceSelector: {}}}", pinned("team-a"))),
        binding("mixed-any", "mixed", "[Audit]", "matchResources: {namespaceSelector: {matchLabels: {env: prod}}}"),
        // Pinned, but with a NotIn beside it.
        vap_matching(
            "pinned-not-in",
            &format!("{{namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: team-a}}, matchExpressions: [{{key: env, operator: NotIn, values: [prod]}}]}}, {pods_and_namespaces}}}"),
            audit,
        ),
        deny_binding("pinned-not-in").replace("[Deny]", "[Audit]"),
        namespace("team-a", "{kubernetes.io/metadata.name: team-a, env: prod}"),
        namespace("team-b", "{kubernetes.io/metadata.name: team-b}"),
        namespace("team-c", "{kubernetes.io/metadata.name: team-c, env: dev}"),
        // The label decides, not the name (a fixture the API server would never store).
        namespace("impostor", "{kubernetes.io/metadata.name: team-c}"),
        // No label at all (an offline fixture).
        namespace("bare", "{env: prod}"),
    ]
    .concat();
    let h = Harness::clean(&yaml);
    let audited = |r: &Req| {
        let outcome = h.eval(r);
        assert!(outcome.allowed, "{}", verdict(&outcome));
        let mut names: Vec<String> = outcome
            .results
            .iter()
            .filter(|r| r.result == celer_policy::response::ResultKind::Audit)
            .map(|r| format!("{}/{}", r.policy, r.binding.as_deref().unwrap_or("-")))
            .collect();
        names.sort();
        names
    };
    let pod_in = |ns: &str| Req::create_pod("web", "{}").in_namespace(ns);
    assert_eq!(
        audited(&pod_in("team-a")),
        [
            "by-bindings/by-bindings-a",
            "mixed/mixed-a",
            "mixed/mixed-any"
        ]
    );
    assert_eq!(
        audited(&pod_in("team-b")),
        ["by-bindings/by-bindings-b", "by-policy/by-policy-binding"]
    );
    assert_eq!(audited(&pod_in("team-c")), ["by-policy/by-policy-binding"]);
    assert_eq!(
        audited(&pod_in("impostor")),
        ["by-policy/by-policy-binding"]
    );
    assert_eq!(audited(&pod_in("bare")), ["mixed/mixed-any"]);
    // Cluster-scoped: namespaceSelector is not read, every policy matches.
    let mut node = Req::create(r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}"#);
    node.kind = ("", "v1", "Node");
    node.resource = ("", "v1", "nodes");
    node.namespace = String::new();
    assert_eq!(
        audited(&node),
        [
            "by-bindings/by-bindings-a",
            "by-bindings/by-bindings-b",
            "by-policy/by-policy-binding",
            "mixed/mixed-a",
            "mixed/mixed-any",
            "pinned-not-in/pinned-not-in-binding"
        ]
    );
    // A Namespace being created is matched by its own labels.
    let mut created = Req::create(
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b","labels":{"kubernetes.io/metadata.name":"team-b"}}}"#,
    );
    created.kind = ("", "v1", "Namespace");
    created.resource = ("", "v1", "namespaces");
    created.namespace = "team-b".to_string();
    assert_eq!(
        audited(&created),
        ["by-bindings/by-bindings-b", "by-policy/by-policy-binding"]
    );
    // A missing Namespace is the error matching gives (a binding configuration error of the
    // first pinned policy), not a skip.
    let outcome = h.eval(&pod_in("ghost"));
    assert_eq!(
        denial(&outcome).2,
        "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'by-bindings' with binding 'by-bindings-a' denied request: failed to configure binding: namespaces \"ghost\" not found"
    );
}
