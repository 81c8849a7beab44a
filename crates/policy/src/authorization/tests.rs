#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::evaluate::{AuthorizationDecision, FailureMode, authorize};
use super::narrow::{Narrowed, narrow};
use super::review::{SarVersion, SubjectAccessReview};
use crate::load::Manifests;
use crate::policy_set::PolicySet;

const EXAMPLES: &str = include_str!("../../../../examples/authz/policies.yaml");

fn set(text: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("p.yaml", text);
    let set = PolicySet::build(&m);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set
}

/// The load errors (reading and compiling) of one AuthorizationPolicy with this `spec:` text.
fn load_errors(spec: &str) -> Vec<String> {
    let mut m = Manifests::default();
    m.add_text(
        "p.yaml",
        &format!("apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {{name: bad}}\n{spec}"),
    );
    let set = PolicySet::build(&m);
    m.errors
        .iter()
        .chain(&set.errors)
        .map(ToString::to_string)
        .collect()
}

fn sar(user: &str, attributes: &str) -> SubjectAccessReview {
    let body = format!(
        r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{{"user":"{user}","groups":["system:authenticated"],{attributes}}}}}"#
    );
    SubjectAccessReview::parse(body.as_bytes()).unwrap()
}

fn resource(verb: &str, group: &str, resource: &str, sub: &str, ns: &str, name: &str) -> String {
    let mut fields = vec![
        format!(r#""verb":"{verb}""#),
        r#""version":"v1""#.to_string(),
    ];
    for (k, v) in [
        ("group", group),
        ("resource", resource),
        ("subresource", sub),
        ("namespace", ns),
        ("name", name),
    ] {
        if !v.is_empty() {
            fields.push(format!(r#""{k}":"{v}""#));
        }
    }
    format!(r#""resourceAttributes":{{{}}}"#, fields.join(","))
}

fn decide(
    set: &PolicySet,
    review: &SubjectAccessReview,
) -> (AuthorizationDecision, Option<String>) {
    let out = authorize(set.authorization(), review, FailureMode::NoOpinion);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    (out.decision, out.policy)
}

#[test]
fn pods_in_kube_system_are_denied_except_to_the_system_components() {
    let set = set(EXAMPLES);
    let delete = resource("delete", "", "pods", "", "kube-system", "coredns");
    let (d, p) = decide(&set, &sar("alice", &delete));
    assert_eq!(d, AuthorizationDecision::Deny);
    assert_eq!(p.as_deref(), Some("kube-system-pods"));
    let out = authorize(
        set.authorization(),
        &sar("alice", &delete),
        FailureMode::NoOpinion,
    );
    assert_eq!(
        out.reason(),
        "AuthorizationPolicy \"kube-system-pods\" rule \"everyone-else\": pods in kube-system are off limits to alice"
    );
    for user in ["system:kube-controller-manager", "system:kube-scheduler"] {
        let (d, _) = decide(&set, &sar(user, &delete));
        assert_eq!(d, AuthorizationDecision::NoOpinion, "{user}");
        let bind = resource("create", "", "pods", "binding", "kube-system", "web");
        assert_eq!(
            decide(&set, &sar(user, &bind)).0,
            AuthorizationDecision::NoOpinion
        );
    }
    let elsewhere = resource("delete", "", "pods", "", "default", "web");
    assert_eq!(
        decide(&set, &sar("alice", &elsewhere)).0,
        AuthorizationDecision::NoOpinion
    );
}

#[test]
fn the_ceph_storage_class_is_protected_from_delete_and_deletecollection() {
    let set = set(EXAMPLES);
    for attributes in [
        resource("delete", "storage.k8s.io", "storageclasses", "", "", "ceph"),
        resource(
            "deletecollection",
            "storage.k8s.io",
            "storageclasses",
            "",
            "",
            "",
        ),
        resource("patch", "storage.k8s.io", "storageclasses", "", "", "ceph"),
    ] {
        let (d, p) = decide(&set, &sar("admin", &attributes));
        assert_eq!(d, AuthorizationDecision::Deny, "{attributes}");
        assert_eq!(p.as_deref(), Some("protect-ceph-storageclass"));
    }
    for attributes in [
        resource("delete", "storage.k8s.io", "storageclasses", "", "", "fast"),
        resource("get", "storage.k8s.io", "storageclasses", "", "", "ceph"),
        resource("create", "storage.k8s.io", "storageclasses", "", "", "ceph"),
    ] {
        assert_eq!(
            decide(&set, &sar("admin", &attributes)).0,
            AuthorizationDecision::NoOpinion,
            "{attributes}"
        );
    }
}

#[test]
fn no_port_forward_to_kube_system_even_for_the_system_components() {
    let set = set(EXAMPLES);
    let pf = resource("create", "", "pods", "portforward", "kube-system", "etcd-0");
    let (d, p) = decide(&set, &sar("system:kube-controller-manager", &pf));
    assert_eq!(d, AuthorizationDecision::Deny);
    assert_eq!(p.as_deref(), Some("no-port-forward-kube-system"));
    let pf = resource("create", "", "pods", "portforward", "default", "web");
    assert_eq!(
        decide(&set, &sar("bob", &pf)).0,
        AuthorizationDecision::NoOpinion
    );
}

#[test]
fn v1beta1_group_is_groups_and_the_answer_keeps_the_version() {
    let set = set(
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: admins}\nspec:\n  rules:\n  - {name: admins, expression: \"'admins' in request.groups\", decision: Allow}\n",
    );
    let body = br#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{"user":"a","group":["admins"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#;
    let review = SubjectAccessReview::parse(body).unwrap();
    assert_eq!(review.version, SarVersion::V1beta1);
    assert_eq!(review.attributes.groups, ["admins"]);
    let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    assert_eq!(out.decision, AuthorizationDecision::Allow);
    let json = out.status().review_json(review.version);
    assert_eq!(
        json,
        r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":true,"reason":"AuthorizationPolicy \"admins\" rule \"admins\""}}"#
    );
}

#[test]
fn deny_wins_then_allow_then_no_opinion() {
    let policy = |name: &str, decision: &str, expression: &str| {
        format!(
            "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {{name: {name}}}\nspec:\n  rules:\n  - {{name: r, expression: \"{expression}\", decision: {decision}}}\n---\n"
        )
    };
    let text = [
        policy("allow-all", "Allow", "true"),
        policy("deny-bob", "Deny", "request.user == 'bob'"),
        policy("nothing", "NoOpinion", "true"),
    ]
    .concat();
    let set = set(&text);
    let r = resource("get", "", "pods", "", "default", "");
    let (d, p) = decide(&set, &sar("bob", &r));
    assert_eq!(
        (d, p.as_deref()),
        (AuthorizationDecision::Deny, Some("deny-bob"))
    );
    let (d, p) = decide(&set, &sar("alice", &r));
    assert_eq!(
        (d, p.as_deref()),
        (AuthorizationDecision::Allow, Some("allow-all"))
    );
}

#[test]
fn evaluation_errors_answer_per_the_failure_mode_unless_a_policy_denies() {
    let text = "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: broken}\nspec:\n  rules:\n  - {name: r, expression: \"request.resourceAttributes.name == 'x'\", decision: Deny}\n---\napiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: allow}\nspec:\n  rules:\n  - {name: r, expression: \"true\", decision: Allow}\n";
    let set = set(text);
    // A non-resource request has no resourceAttributes (in the API server's `request` too):
    // reading them is an error, so the Allow does not stand.
    let review = sar("a", r#""nonResourceAttributes":{"path":"/x","verb":"get"}"#);
    let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    assert_eq!(out.decision, AuthorizationDecision::NoOpinion);
    assert!(
        out.errors[0].starts_with("AuthorizationPolicy \"broken\": rule \"r\": expression"),
        "{:?}",
        out.errors
    );
    let status = out.status();
    assert!(!status.allowed && !status.denied && !status.evaluation_error.is_empty());
    let out = authorize(set.authorization(), &review, FailureMode::Deny);
    assert_eq!(out.decision, AuthorizationDecision::Deny);
    assert!(out.status().denied);
    // Named: the broken policy denies, no error.
    let review = sar("a", &resource("get", "", "pods", "", "default", "x"));
    assert_eq!(decide(&set, &review).0, AuthorizationDecision::Deny);
}

#[test]
fn compile_errors_are_load_errors_naming_the_field() {
    let mut m = Manifests::default();
    m.add_text(
        "bad.yaml",
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: bad}\nspec:\n  matchConditions: [{name: c, expression: 'request.user'}]\n  rules:\n  - {name: r, expression: 'request.(', decision: Deny}\n  - {name: s, expression: 'true', decision: Maybe}\n",
    );
    assert_eq!(m.errors.len(), 1);
    assert!(
        m.errors[0]
            .to_string()
            .contains("spec.rules[1].decision: unknown variant `Maybe`"),
        "{}",
        m.errors[0]
    );
    let mut m = Manifests::default();
    m.add_text(
        "bad.yaml",
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: bad}\nspec:\n  matchConditions: [{name: c, expression: 'request.user'}]\n  rules:\n  - {name: r, expression: 'request.(', decision: Deny}\n",
    );
    let set = PolicySet::build(&m);
    assert!(set.authorization().policies.is_empty());
    let text = set.errors[0].to_string();
    assert!(text.starts_with("bad.yaml (document 1): AuthorizationPolicy \"bad\": spec.matchConditions[0].expression: Invalid value: \"request.user\": must evaluate to bool"), "{text}");
    assert!(
        text.contains("spec.rules[0].expression: Invalid value: \"request.(\": compilation failed"),
        "{text}"
    );
}

/// 1,000 policies for other resources: the index skips them all, and only the one that
/// can decide the request runs.
#[test]
fn the_index_skips_policies_for_other_resources() {
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!(
            "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {{name: p{i}}}\nspec:\n  match:\n    resources: [{{apiGroups: [example.com], resources: [things{i}], verbs: ['*']}}]\n  rules: [{{name: r, expression: 'true', decision: Deny}}]\n---\n"
        ));
    }
    text.push_str(EXAMPLES);
    let set = set(&text);
    let review = sar(
        "alice",
        &resource("delete", "", "pods", "", "kube-system", "x"),
    );
    let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    assert_eq!(out.decision, AuthorizationDecision::Deny);
    assert_eq!(out.evaluated, 1);
    let review = sar(
        "alice",
        &resource("get", "", "configmaps", "", "default", "x"),
    );
    assert_eq!(
        authorize(set.authorization(), &review, FailureMode::NoOpinion).evaluated,
        0
    );
    let review = sar(
        "alice",
        &resource("get", "example.com", "things7", "", "", ""),
    );
    let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    assert_eq!((out.evaluated, out.policy.as_deref()), (1, Some("p7")));
}

#[test]
fn the_narrowed_match_condition_is_true_exactly_where_a_policy_can_decide() {
    let set = set(EXAMPLES);
    let Narrowed::Expression(expression) = narrow(set.authorization()) else {
        panic!("expected an expression");
    };
    // Compiled and run as the API server would: over the SubjectAccessReview spec.
    let env = super::compile::AuthorizationEnv::new();
    let program = env.env.compile(&expression).unwrap();
    let check = |attributes: &str| {
        let review = sar("u", attributes);
        let mut act = celer_cel::Activation::new(&env.env);
        act.set(env.request, celer_cel::Value::from_json(&review.spec));
        match program.eval(&act) {
            Ok(celer_cel::Value::Bool(b)) => b,
            other => panic!("{other:?}"),
        }
    };
    assert!(check(&resource(
        "delete",
        "",
        "pods",
        "",
        "kube-system",
        "x"
    )));
    assert!(check(&resource(
        "create",
        "",
        "pods",
        "portforward",
        "default",
        "x"
    )));
    assert!(check(&resource(
        "deletecollection",
        "storage.k8s.io",
        "storageclasses",
        "",
        "",
        ""
    )));
    assert!(!check(&resource(
        "get",
        "storage.k8s.io",
        "storageclasses",
        "",
        "",
        "ceph"
    )));
    assert!(!check(&resource(
        "get",
        "",
        "configmaps",
        "",
        "default",
        "x"
    )));
    assert!(!check(&resource("get", "apps", "pods", "", "default", "x")));
    assert!(!check(
        r#""nonResourceAttributes":{"path":"/healthz","verb":"get"}"#
    ));
}

#[test]
fn malformed_reviews_are_named_errors() {
    for (body, expected) in [
        (&b"{"[..], "request body is not valid JSON"),
        (br#"{"kind":"AdmissionReview"}"#, "expected kind SubjectAccessReview, got \"AdmissionReview\""),
        (br#"{"kind":"SubjectAccessReview","apiVersion":"v1"}"#, "unsupported SubjectAccessReview apiVersion \"v1\""),
        (br#"{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1"}"#, "SubjectAccessReview has no spec"),
        (br#"{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"a"}}"#, "one of resourceAttributes or nonResourceAttributes is required"),
        (br#"{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"groups":"a","nonResourceAttributes":{}}}"#, "spec.groups: must be a list of strings"),
        (br#"{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"verb":1}}}"#, "spec.resourceAttributes.verb: must be a string"),
    ] {
        let e = SubjectAccessReview::parse(body).unwrap_err().to_string();
        assert!(e.contains(expected), "{e}");
    }
}

const REGO_EXAMPLES: &str = include_str!("../../../../examples/authz/rego-policies.yaml");

#[test]
fn rego_deny_modules_decide_the_write_ups_examples() {
    let set = set(REGO_EXAMPLES);
    let delete = resource("delete", "", "pods", "", "kube-system", "coredns");
    let out = authorize(
        set.authorization(),
        &sar("alice", &delete),
        FailureMode::NoOpinion,
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.decision, AuthorizationDecision::Deny);
    assert_eq!(
        out.reason(),
        "AuthorizationPolicy \"rego-write-up\" rule \"deny\": pods in kube-system are off limits to alice"
    );
    for user in ["system:kube-controller-manager", "system:kube-scheduler"] {
        assert_eq!(
            decide(&set, &sar(user, &delete)).0,
            AuthorizationDecision::NoOpinion
        );
    }
    for attributes in [
        resource("delete", "storage.k8s.io", "storageclasses", "", "", "ceph"),
        resource(
            "deletecollection",
            "storage.k8s.io",
            "storageclasses",
            "",
            "",
            "",
        ),
    ] {
        assert_eq!(
            decide(&set, &sar("admin", &attributes)).0,
            AuthorizationDecision::Deny
        );
    }
    let fast = resource("delete", "storage.k8s.io", "storageclasses", "", "", "fast");
    assert_eq!(
        decide(&set, &sar("admin", &fast)).0,
        AuthorizationDecision::NoOpinion
    );
    // The index keeps the module from running for other resources.
    let other = resource("get", "", "configmaps", "", "kube-system", "x");
    assert_eq!(
        authorize(
            set.authorization(),
            &sar("a", &other),
            FailureMode::NoOpinion
        )
        .evaluated,
        0
    );
}

#[test]
fn rego_allow_input_is_the_review_in_its_version_and_errors_are_load_errors() {
    let set = set(
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: r}\nspec:\n  regoVersion: v1\n  rego: |\n    package authz\n    allow if {\n      input.apiVersion == \"authorization.k8s.io/v1beta1\"\n      \"admins\" in input.spec.group\n    }\n",
    );
    let body = br#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{"user":"a","group":["admins"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#;
    let review = SubjectAccessReview::parse(body).unwrap();
    let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    assert_eq!(
        (out.decision, out.rule.as_deref()),
        (AuthorizationDecision::Allow, Some("allow")),
        "{:?}",
        out.errors
    );
    for (text, expected) in [
        (
            "  rego: 'package x\n\n    deny[r] { r := }'\n",
            "spec.rego: Invalid value",
        ),
        (
            "  rego: 'package x\n\n    other { true }'\n",
            "must define a rule named \"deny\" or \"allow\"",
        ),
        (
            "  rego: 'package x\n\n    deny[r] { r := \"a\" }'\n  rules: [{name: r, expression: 'true', decision: Deny}]\n",
            "spec.rego: Forbidden",
        ),
    ] {
        let errors = load_errors(&format!("spec:\n{text}"));
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{text}: {errors:?}"
        );
    }
}

/// Hostile bodies: every prefix of a valid review, bytes flipped, fields of every JSON type.
/// Parsing either refuses with an error or gives a review that is then decided; nothing panics.
#[test]
fn hostile_reviews_are_refused_or_decided_never_a_panic() {
    let set = set(&[EXAMPLES, "---\n", REGO_EXAMPLES].concat());
    let body = br#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{"user":"alice","group":["a"],"extra":{"k":["v"]},"resourceAttributes":{"namespace":"kube-system","verb":"delete","group":"","resource":"pods","subresource":"log","name":"x"}}}"#;
    let mut decided = 0;
    let mut try_body = |bytes: &[u8]| {
        if let Ok(review) = SubjectAccessReview::parse(bytes) {
            let _ = authorize(set.authorization(), &review, FailureMode::Deny).status();
            decided += 1;
        }
    };
    for end in 0..=body.len() {
        try_body(&body[..end]);
    }
    for i in 0..body.len() {
        for b in [b'"', b'{', b'}', b'[', b'0', b'\\', 0xff] {
            let mut mutated = body.to_vec();
            mutated[i] = b;
            try_body(&mutated);
        }
    }
    for value in ["null", "1", "true", "[]", "{}", r#""s""#, "[1,{}]"] {
        for field in ["user", "groups", "extra", "uid"] {
            try_body(format!(r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{{"{field}":{value},"nonResourceAttributes":{{"path":"/","verb":"get"}}}}}}"#).as_bytes());
        }
        for field in [
            "verb",
            "group",
            "resource",
            "namespace",
            "name",
            "fieldSelector",
        ] {
            try_body(format!(r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{{"user":"a","resourceAttributes":{{"{field}":{value},"resource":"pods","namespace":"kube-system"}}}}}}"#).as_bytes());
        }
    }
    assert!(decided > 10, "{decided}");
}

#[test]
fn only_requests_a_rego_module_may_decide_are_said_to_run_rego() {
    let both = set(&format!("{EXAMPLES}\n---\n{REGO_EXAMPLES}"));
    let cel_only = set(EXAMPLES);
    let a = both.authorization();
    let pods = sar("alice", &resource("list", "", "pods", "", "default", ""));
    let system_pods = sar(
        "alice",
        &resource("list", "", "pods", "", "kube-system", ""),
    );
    let ceph = sar(
        "alice",
        &resource("patch", "storage.k8s.io", "storageclasses", "", "", "ceph"),
    );
    let configmaps = sar(
        "alice",
        &resource("get", "", "configmaps", "", "default", ""),
    );
    // The Rego module matches Pods; StorageClasses only for delete and deletecollection.
    assert!(a.may_run_rego(&system_pods));
    assert!(!a.may_run_rego(&ceph));
    assert!(!a.may_run_rego(&configmaps));
    assert!(!cel_only.authorization().may_run_rego(&system_pods));
    // Its `deny` rule is indexed: every body opens with `namespace == "kube-system"` or
    // `resource == "storageclasses"`, so Pods elsewhere run no Rego at all.
    assert!(!a.may_run_rego(&pods));
    let rego_only = set(REGO_EXAMPLES);
    let module = rego_only.authorization().policies[0].rego.as_ref().unwrap();
    assert!(module.indexed("deny"));
}

/// The index only skips work: every decision is the interpreter's, for reviews that meet
/// the guards, miss them, or leave them to the conversion (v1beta1's `group`).
#[test]
fn indexed_rego_rules_decide_as_evaluated_ones() {
    let indexed = "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: q}\nspec:\n  match:\n    resources:\n    - apiGroups: [\"*\"]\n      resources: [\"*\"]\n      verbs: [\"*\"]\n  rego: |\n    package q\n    deny[r] {\n      startswith(input.spec.resourceAttributes.namespace, \"quarantine-\")\n      not input.spec.resourceAttributes.verb == \"get\"\n      r := sprintf(\"%s is quarantined\", [input.spec.resourceAttributes.namespace])\n    }\n    deny[r] {\n      input.spec.resourceAttributes.resource == \"pods\"\n      input.spec.group[_] == \"x\"\n      r := \"x\"\n    }\n    deny[r] {\n      input.apiVersion == \"authorization.k8s.io/v1beta1\"\n      input.spec.user == \"old\"\n      r := \"old client\"\n    }\n";
    let set = set(indexed);
    let module = set.authorization().policies[0].rego.as_ref().unwrap();
    assert!(module.indexed("deny"));
    let cases: [(&str, &str, Option<&str>); 5] = [
        (
            "v1",
            r#""user":"a","resourceAttributes":{"verb":"create","resource":"pods","namespace":"quarantine-1"}"#,
            Some("quarantine-1 is quarantined"),
        ),
        (
            "v1",
            r#""user":"a","resourceAttributes":{"verb":"get","resource":"pods","namespace":"quarantine-1"}"#,
            None,
        ),
        (
            "v1",
            r#""user":"a","resourceAttributes":{"verb":"create","resource":"pods","namespace":"team-1"}"#,
            None,
        ),
        (
            "v1beta1",
            r#""user":"a","group":["x"],"resourceAttributes":{"verb":"get","resource":"pods","namespace":"team-1"}"#,
            Some("x"),
        ),
        (
            "v1beta1",
            r#""user":"old","resourceAttributes":{"verb":"get","resource":"pods"}"#,
            Some("old client"),
        ),
    ];
    for (version, spec, reason) in cases {
        let body = format!(
            r#"{{"apiVersion":"authorization.k8s.io/{version}","kind":"SubjectAccessReview","spec":{{{spec}}}}}"#
        );
        let review = SubjectAccessReview::parse(body.as_bytes()).unwrap();
        let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        match reason {
            Some(reason) => {
                assert_eq!(out.decision, AuthorizationDecision::Deny, "{spec}");
                assert_eq!(out.message.as_deref(), Some(reason), "{spec}");
            }
            None => assert_eq!(out.decision, AuthorizationDecision::NoOpinion, "{spec}"),
        }
    }
}

/// `request` is shaped as kube-apiserver shapes it for CEL: an expression written for the
/// API server's matchConditions reads a field the review left out as empty, not as an error.
#[test]
fn cel_request_has_every_field_the_api_server_gives_cel() {
    let policy = |expression: &str| {
        format!(
            "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {{name: shaped}}\nspec:\n  rules:\n  - name: r\n    expression: {expression:?}\n    decision: Deny\n"
        )
    };
    let cases = [
        // A cluster-scoped request without namespace, name or subresource.
        (
            r#""user":"a","resourceAttributes":{"verb":"list","resource":"nodes"}"#,
            "request.resourceAttributes.namespace == '' && request.resourceAttributes.name == '' && request.resourceAttributes.subresource == '' && request.resourceAttributes.group == '' && request.resourceAttributes.version == ''",
        ),
        // No groups, uid or extra.
        (
            r#""user":"a","resourceAttributes":{"verb":"get","resource":"pods"}"#,
            "request.groups == [] && request.uid == '' && request.extra == {} && !has(request.nonResourceAttributes)",
        ),
        (
            r#""user":"a","nonResourceAttributes":{"verb":"get"}"#,
            "request.nonResourceAttributes.path == '' && !has(request.resourceAttributes)",
        ),
        // A raw selector wins over requirements; requirements have every field.
        (
            r#""user":"a","resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"rawSelector":"spec.nodeName=n1","requirements":[{"key":"x"}]},"labelSelector":{"requirements":[{"key":"app","operator":"Exists"}]}}"#,
            "request.resourceAttributes.fieldSelector.rawSelector == 'spec.nodeName=n1' && !has(request.resourceAttributes.fieldSelector.requirements) && request.resourceAttributes.labelSelector.requirements.size() == 1 && request.resourceAttributes.labelSelector.requirements[0].key == 'app' && request.resourceAttributes.labelSelector.requirements[0].operator == 'Exists' && request.resourceAttributes.labelSelector.requirements[0].values == []",
        ),
        // An empty selector is left out.
        (
            r#""user":"a","resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{}}"#,
            "!has(request.resourceAttributes.fieldSelector) && !has(request.resourceAttributes.labelSelector)",
        ),
    ];
    for (spec, expression) in cases {
        let set = set(&policy(expression));
        let body = format!(
            r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{{{spec}}}}}"#
        );
        let review = SubjectAccessReview::parse(body.as_bytes()).unwrap();
        let out = authorize(set.authorization(), &review, FailureMode::NoOpinion);
        assert!(out.errors.is_empty(), "{expression}: {:?}", out.errors);
        assert_eq!(
            out.decision,
            AuthorizationDecision::Deny,
            "{expression} on {spec}"
        );
    }
}

/// `request` is typed as kube-apiserver types it: a misspelt field is refused at load.
#[test]
fn a_misspelt_request_field_is_a_load_error() {
    for (expression, field) in [
        ("request.usr == 'a'", "usr"),
        ("request.resourceAttributes.namspace == 'a'", "namspace"),
        ("has(request.resourceAttributes.labels)", "labels"),
        ("request.nonResourceAttributes.url == '/'", "url"),
        (
            "request.resourceAttributes.fieldSelector.requirements.exists(r, r.value == 'a')",
            "value",
        ),
    ] {
        let errors = load_errors(&format!(
            "spec:\n  rules:\n  - name: r\n    expression: {expression:?}\n    decision: Deny\n"
        ));
        assert!(
            errors
                .iter()
                .any(|e| e.contains(&format!("undefined field '{field}'"))),
            "{expression}: {errors:?}"
        );
    }
    // Fields of every type, the maps' keys and the lists' elements type-check.
    set(
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: typed}\nspec:\n  rules:\n  - name: r\n    expression: \"request.user.startsWith('a') && request.groups.exists(g, g.endsWith('x')) && request.extra['k'].size() > 0 && 'k' in request.extra && request.uid != '' && request.resourceAttributes.labelSelector.requirements.all(r, r.values.size() > 0 && r.key != '' && r.operator != '')\"\n    decision: Deny\n",
    );
}
