//! Matching of whole constraints, after the ideas of upstream's `matching_test.go` and the
//! namespace and object matcher tests; the cases are our own.

use std::cell::Cell;

use super::*;
use crate::attributes::GroupVersionKind;

fn constraints(yaml: &str, owner: Owner) -> MatchConstraints {
    let m: MatchResources = serde_yaml_ng::from_str(yaml).unwrap();
    MatchConstraints::compile(Some(&m), owner, "spec.matchConstraints").unwrap()
}

fn policy(yaml: &str) -> MatchConstraints {
    constraints(yaml, Owner::ValidatingPolicy)
}

fn errors(yaml: Option<&str>, owner: Owner, path: &str) -> Vec<String> {
    let m: Option<MatchResources> = yaml.map(|y| serde_yaml_ng::from_str(y).unwrap());
    match MatchConstraints::compile(m.as_ref(), owner, path) {
        Ok(_) => Vec::new(),
        Err(FieldErrors(e)) => e.iter().map(ToString::to_string).collect(),
    }
}

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

/// Deployments in extensions/v1beta1 and apps v1, v1beta1, v1alpha1, sharing storage, with
/// their scale subresources (the registry upstream's matcher test builds).
fn registry() -> EquivalentResources {
    let mut eq = EquivalentResources::new();
    let rows = [
        ("extensions", "v1beta1", ("extensions", "v1beta1")),
        ("apps", "v1", ("autoscaling", "v1")),
        ("apps", "v1beta1", ("apps", "v1beta1")),
        ("apps", "v1alpha1", ("apps", "v1alpha1")),
    ];
    for (group, version, scale) in rows {
        let r = GroupVersionResource {
            group,
            version,
            resource: "deployments",
        };
        let kind = GroupVersionKind {
            group,
            version,
            kind: "Deployment",
        };
        eq.register("deployments", r, "", kind);
        let scale = GroupVersionKind {
            group: scale.0,
            version: scale.1,
            kind: "Scale",
        };
        eq.register("deployments", r, "scale", scale);
    }
    eq
}

struct Req {
    gvk: (&'static str, &'static str, &'static str),
    gvr: (&'static str, &'static str, &'static str),
    sub: &'static str,
    op: Operation,
    namespace: &'static str,
    name: &'static str,
    object: Option<Json>,
    old_object: Option<Json>,
}

impl Req {
    fn new(gvr: (&'static str, &'static str, &'static str), sub: &'static str) -> Req {
        Req {
            gvk: (gvr.0, gvr.1, "Deployment"),
            gvr,
            sub,
            op: Operation::Create,
            namespace: "ns",
            name: "name",
            object: None,
            old_object: None,
        }
    }

    fn kind(mut self, gvk: (&'static str, &'static str, &'static str)) -> Req {
        self.gvk = gvk;
        self
    }

    fn op(mut self, op: Operation) -> Req {
        self.op = op;
        self
    }

    fn namespace(mut self, ns: &'static str) -> Req {
        self.namespace = ns;
        self
    }

    fn name(mut self, name: &'static str) -> Req {
        self.name = name;
        self
    }

    fn object(mut self, o: &str) -> Req {
        self.object = Some(json(o));
        self
    }

    fn old_object(mut self, o: &str) -> Req {
        self.old_object = Some(json(o));
        self
    }

    fn attrs(&self) -> Attributes<'_> {
        Attributes {
            kind: GroupVersionKind {
                group: self.gvk.0,
                version: self.gvk.1,
                kind: self.gvk.2,
            },
            resource: GroupVersionResource {
                group: self.gvr.0,
                version: self.gvr.1,
                resource: self.gvr.2,
            },
            sub_resource: self.sub,
            operation: self.op,
            name: self.name,
            namespace: self.namespace,
            object: self.object.as_ref(),
            old_object: self.old_object.as_ref(),
        }
    }
}

fn no_namespace() -> Result<Option<Arc<Json>>, LookupError> {
    panic!("the namespace must not be looked up")
}

/// The outcome as text: `no`, `error: ...`, or `group/version/resource group/version/Kind`.
fn outcome(c: &MatchConstraints, req: &Req, eq: &EquivalentResources) -> String {
    outcome_with(c, req, eq, &no_namespace)
}

fn outcome_with(
    c: &MatchConstraints,
    req: &Req,
    eq: &EquivalentResources,
    ns: &NamespaceFn<'_>,
) -> String {
    match c.matches(&req.attrs(), eq, ns) {
        Ok(None) => "no".to_string(),
        Ok(Some(m)) => format!(
            "{}/{}/{} {}/{}/{}{}",
            m.resource.group,
            m.resource.version,
            m.resource.resource,
            m.kind.group,
            m.kind.version,
            m.kind.kind,
            if m.equivalent { " (equivalent)" } else { "" }
        ),
        Err(e) => format!("error: {e}"),
    }
}

const APPS_V1: (&str, &str, &str) = ("apps", "v1", "deployments");
const EXT: (&str, &str, &str) = ("extensions", "v1beta1", "deployments");
const SCALE_KIND: (&str, &str, &str) = ("autoscaling", "v1", "Scale");

fn rules(entries: &[(&str, &str, &str)], extra: &str) -> String {
    let mut y = String::from("resourceRules:\n");
    for (g, v, r) in entries {
        y.push_str(&format!(
            "- {{operations: ['*'], apiGroups: ['{g}'], apiVersions: ['{v}'], resources: [{r}]}}\n"
        ));
    }
    y.push_str(extra);
    y
}

#[test]
fn rules_and_equivalents() {
    let eq = registry();
    let dep = "deployments";
    let dep_scale = "deployments, deployments/scale";
    let cases: Vec<(&str, String, Req, &str)> = vec![
        (
            "wildcard rule matches as requested",
            rules(&[("*", "*", "'*'")], ""),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            "an exact match is preferred over earlier equivalent rules",
            rules(
                &[
                    ("extensions", "v1beta1", dep),
                    ("apps", "v1beta1", dep),
                    ("apps", "v1", dep),
                ],
                "",
            ),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            "no rule names the resource: equivalent by default, first rule wins",
            rules(
                &[("extensions", "v1beta1", dep), ("apps", "v1beta1", dep)],
                "",
            ),
            Req::new(APPS_V1, ""),
            "extensions/v1beta1/deployments extensions/v1beta1/Deployment (equivalent)",
        ),
        (
            "first rule wins, the other way round",
            rules(
                &[("apps", "v1beta1", dep), ("extensions", "v1beta1", dep)],
                "",
            ),
            Req::new(APPS_V1, ""),
            "apps/v1beta1/deployments apps/v1beta1/Deployment (equivalent)",
        ),
        (
            "Exact policy misses",
            rules(
                &[("extensions", "v1beta1", dep), ("apps", "v1beta1", dep)],
                "matchPolicy: Exact\n",
            ),
            Req::new(APPS_V1, ""),
            "no",
        ),
        (
            "subresource: exact match keeps the request's kind",
            rules(
                &[
                    ("extensions", "v1beta1", dep_scale),
                    ("apps", "v1", dep_scale),
                ],
                "",
            ),
            Req::new(APPS_V1, "scale").kind(SCALE_KIND),
            "apps/v1/deployments autoscaling/v1/Scale",
        ),
        (
            "subresource: equivalent match takes the equivalent's scale kind",
            rules(
                &[
                    ("extensions", "v1beta1", dep_scale),
                    ("apps", "v1beta1", dep_scale),
                ],
                "",
            ),
            Req::new(APPS_V1, "scale").kind(SCALE_KIND),
            "extensions/v1beta1/deployments extensions/v1beta1/Scale (equivalent)",
        ),
        (
            "subresource: the other rule first",
            rules(
                &[
                    ("apps", "v1beta1", dep_scale),
                    ("extensions", "v1beta1", dep_scale),
                ],
                "",
            ),
            Req::new(APPS_V1, "scale").kind(SCALE_KIND),
            "apps/v1beta1/deployments apps/v1beta1/Scale (equivalent)",
        ),
        (
            "subresource: Exact misses",
            rules(&[("apps", "v1beta1", dep_scale)], "matchPolicy: Exact\n"),
            Req::new(APPS_V1, "scale").kind(SCALE_KIND),
            "no",
        ),
        (
            "a rule for the main resource does not match the subresource by equivalence",
            rules(&[("apps", "v1beta1", dep)], ""),
            Req::new(APPS_V1, "scale").kind(SCALE_KIND),
            "no",
        ),
        (
            "equivalent from extensions to apps/v1",
            rules(&[("apps", "v1", dep_scale)], ""),
            Req::new(EXT, "scale").kind(("extensions", "v1beta1", "Scale")),
            "apps/v1/deployments autoscaling/v1/Scale (equivalent)",
        ),
        (
            "wildcard versions through equivalence take the first equivalent in registration order",
            rules(&[("apps", "*", dep)], ""),
            Req::new(EXT, ""),
            "apps/v1/deployments apps/v1/Deployment (equivalent)",
        ),
        (
            "an unregistered resource has no equivalents",
            rules(&[("apps", "v1", "widgets")], ""),
            Req::new(("example.com", "v1", "widgets"), ""),
            "no",
        ),
    ];
    for (name, yaml, req, want) in cases {
        assert_eq!(outcome(&policy(&yaml), &req, &eq), want, "{name}");
    }
}

#[test]
fn resource_names() {
    let eq = registry();
    let named = |names: &str, resources: &str| {
        policy(&format!(
            "resourceRules:\n- {{resourceNames: [{names}], operations: ['*'], apiGroups: [apps], apiVersions: [v1], resources: [{resources}]}}\n"
        ))
    };
    let scale_req = || Req::new(EXT, "scale").kind(SCALE_KIND);
    let cases = [
        (
            named("name", "deployments"),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            named("wrong-name", "deployments"),
            Req::new(APPS_V1, ""),
            "no",
        ),
        (
            named("name", "deployments, deployments/scale"),
            scale_req(),
            "apps/v1/deployments autoscaling/v1/Scale (equivalent)",
        ),
        (
            named("wrong-name", "deployments, deployments/scale"),
            scale_req(),
            "no",
        ),
        (
            named("other, name", "deployments"),
            Req::new(APPS_V1, "").name("other"),
            "apps/v1/deployments apps/v1/Deployment",
        ),
    ];
    for (i, (c, req, want)) in cases.into_iter().enumerate() {
        assert_eq!(outcome(&c, &req, &eq), want, "case {i}");
    }
}

#[test]
fn exclusions() {
    let eq = registry();
    let all = "resourceRules:\n- {operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}\n";
    let excluding =
        |rule: &str, extra: &str| policy(&format!("{all}excludeResourceRules:\n- {rule}\n{extra}"));
    let ext_rule = "{operations: ['*'], apiGroups: [extensions], apiVersions: [v1beta1], resources: [deployments]}";
    let cases = [
        (
            "exclusion misses",
            excluding(ext_rule, "matchPolicy: Exact"),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            "exclusion matches",
            excluding(ext_rule, ""),
            Req::new(EXT, ""),
            "no",
        ),
        (
            "exclusion matches by equivalence",
            excluding(ext_rule, ""),
            Req::new(APPS_V1, ""),
            "no",
        ),
        (
            "exclusion by name",
            excluding(
                "{resourceNames: [name], operations: ['*'], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}",
                "",
            ),
            Req::new(APPS_V1, ""),
            "no",
        ),
        (
            "exclusion for another name",
            excluding(
                "{resourceNames: [other-name], operations: ['*'], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}",
                "",
            ),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            "equivalent exclusion for another name",
            excluding(
                "{resourceNames: [other-name], operations: ['*'], apiGroups: [extensions], apiVersions: [v1beta1], resources: [deployments]}",
                "",
            ),
            Req::new(APPS_V1, ""),
            "apps/v1/deployments apps/v1/Deployment",
        ),
        (
            "exclusion by operation",
            excluding(
                "{operations: [DELETE], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}",
                "",
            ),
            Req::new(APPS_V1, "").op(Operation::Delete),
            "no",
        ),
    ];
    for (name, c, req, want) in cases {
        assert_eq!(outcome(&c, &req, &eq), want, "{name}");
    }
}

#[test]
fn bindings() {
    let eq = registry();
    let absent =
        MatchConstraints::compile(None, Owner::ValidatingBinding, "spec.matchResources").unwrap();
    assert_eq!(absent, MatchConstraints::everything());
    let req = Req::new(APPS_V1, "scale").kind(SCALE_KIND);
    assert_eq!(
        outcome(&absent, &req, &eq),
        "apps/v1/deployments autoscaling/v1/Scale"
    );

    // No resourceRules: every resource, but exclusions and selectors still apply.
    let binding = constraints(
        "excludeResourceRules:\n- {operations: ['*'], apiGroups: [extensions], apiVersions: [v1beta1], resources: [deployments]}\nobjectSelector: {matchLabels: {app: a}}\n",
        Owner::MutatingBinding,
    );
    let labelled = r#"{"metadata": {"labels": {"app": "a"}}}"#;
    assert_eq!(
        outcome(
            &binding,
            &Req::new(("", "v1", "pods"), "").object(labelled),
            &eq
        ),
        "/v1/pods /v1/Deployment"
    );
    assert_eq!(
        outcome(&binding, &Req::new(("", "v1", "pods"), ""), &eq),
        "no"
    );
    assert_eq!(
        outcome(&binding, &Req::new(APPS_V1, "").object(labelled), &eq),
        "no"
    );
}

#[test]
fn object_selector() {
    let eq = EquivalentResources::new();
    let c = policy(&rules(
        &[("*", "*", "'*/*'")],
        "objectSelector: {matchLabels: {app: a}}\n",
    ));
    let a = r#"{"metadata": {"labels": {"app": "a"}}}"#;
    let b = r#"{"metadata": {"labels": {"app": "b"}}}"#;
    let pods = ("", "v1", "pods");
    let cases = [
        ("object matches", Req::new(pods, "").object(a), true),
        ("object does not", Req::new(pods, "").object(b), false),
        (
            "old object matches",
            Req::new(pods, "")
                .op(Operation::Update)
                .object(b)
                .old_object(a),
            true,
        ),
        (
            "DELETE has only the old object",
            Req::new(pods, "").op(Operation::Delete).old_object(a),
            true,
        ),
        (
            "no objects",
            Req::new(pods, "").op(Operation::Delete),
            false,
        ),
        (
            "no metadata: not an object with labels",
            Req::new(pods, "exec")
                .op(Operation::Connect)
                .object(r#"{"kind": "PodExecOptions"}"#),
            false,
        ),
        (
            "not a JSON object",
            Req::new(pods, "").object(r#""text""#),
            false,
        ),
    ];
    for (name, req, want) in cases {
        assert_eq!(outcome(&c, &req, &eq) != "no", want, "{name}");
    }

    // DoesNotExist matches an object with metadata but no labels, not one without metadata.
    let absent = policy(&rules(
        &[("*", "*", "'*/*'")],
        "objectSelector: {matchExpressions: [{key: app, operator: DoesNotExist}]}\n",
    ));
    assert_ne!(
        outcome(
            &absent,
            &Req::new(pods, "").object(r#"{"metadata": {}}"#),
            &eq
        ),
        "no"
    );
    assert_eq!(
        outcome(
            &absent,
            &Req::new(pods, "exec").object(r#"{"stdin": true}"#),
            &eq
        ),
        "no"
    );

    // `{}` matches even without any object.
    let everything = policy(&rules(&[("*", "*", "'*/*'")], "objectSelector: {}\n"));
    assert_ne!(
        outcome(&everything, &Req::new(pods, "").op(Operation::Delete), &eq),
        "no"
    );
}

/// A namespace source that counts its calls.
struct Namespaces {
    calls: Cell<usize>,
    answer: Result<Option<Arc<Json>>, LookupError>,
}

impl Namespaces {
    fn new(answer: Result<Option<&str>, &str>) -> Namespaces {
        Namespaces {
            calls: Cell::new(0),
            answer: answer
                .map(|o| o.map(|text| Arc::new(json(text))))
                .map_err(|e| LookupError(e.to_string())),
        }
    }

    fn get(&self) -> Result<Option<Arc<Json>>, LookupError> {
        self.calls.set(self.calls.get() + 1);
        self.answer.clone()
    }
}

#[test]
fn namespace_selector() {
    let eq = EquivalentResources::new();
    let c = policy(&rules(
        &[("*", "*", "'*/*'")],
        "namespaceSelector: {matchLabels: {env: prod}}\n",
    ));
    let prod = r#"{"metadata": {"name": "ns", "labels": {"env": "prod"}}}"#;
    let dev = r#"{"metadata": {"name": "ns", "labels": {"env": "dev"}}}"#;
    let pods = ("", "v1", "pods");
    let namespaces = ("", "v1", "namespaces");
    let matched = |req: &Req, ns: &Namespaces| outcome_with(&c, req, &eq, &|| ns.get()) != "no";

    // Namespaced requests use the namespace's labels.
    let ns = Namespaces::new(Ok(Some(prod)));
    assert!(matched(&Req::new(pods, ""), &ns));
    assert_eq!(ns.calls.get(), 1);
    let ns = Namespaces::new(Ok(Some(dev)));
    assert!(!matched(&Req::new(pods, ""), &ns));

    // Cluster-scoped requests other than namespaces always match, without a lookup.
    let ns = Namespaces::new(Ok(Some(dev)));
    assert!(matched(
        &Req::new(("", "v1", "nodes"), "").namespace(""),
        &ns
    ));
    assert_eq!(ns.calls.get(), 0);

    // A Namespace being created or updated is judged by its own labels.
    for op in [Operation::Create, Operation::Update] {
        let ns = Namespaces::new(Ok(Some(dev)));
        assert!(matched(
            &Req::new(namespaces, "").namespace("ns").op(op).object(prod),
            &ns
        ));
        assert!(matched(
            &Req::new(namespaces, "").namespace("").op(op).object(prod),
            &ns
        ));
        assert!(!matched(
            &Req::new(namespaces, "").namespace("ns").op(op).object(dev),
            &ns
        ));
        assert_eq!(ns.calls.get(), 0);
    }
    // Deleting one, or a subresource, reads the stored namespace.
    let ns = Namespaces::new(Ok(Some(prod)));
    assert!(matched(
        &Req::new(namespaces, "").op(Operation::Delete).object(dev),
        &ns
    ));
    assert!(matched(
        &Req::new(namespaces, "status")
            .op(Operation::Update)
            .object(dev),
        &ns
    ));
    assert_eq!(ns.calls.get(), 2);
    // Any group's "namespaces" counts as the Namespace resource here.
    let ns = Namespaces::new(Ok(Some(prod)));
    assert!(matched(
        &Req::new(("example.com", "v1", "namespaces"), "")
            .namespace("")
            .op(Operation::Delete),
        &ns
    ));
    assert_eq!(ns.calls.get(), 1);

    // `{}` never looks the namespace up.
    let everything = policy(&rules(&[("*", "*", "'*/*'")], "namespaceSelector: {}\n"));
    let ns = Namespaces::new(Err("boom"));
    assert_ne!(
        outcome_with(&everything, &Req::new(pods, ""), &eq, &|| ns.get()),
        "no"
    );
    assert_eq!(ns.calls.get(), 0);
}

#[test]
fn namespace_errors_count_only_when_the_rest_matches() {
    let eq = EquivalentResources::new();
    let selector =
        "namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}\n";
    let on_pods = policy(&rules(&[("*", "*", "pods")], selector));
    let on_deployments = policy(&rules(&[("*", "*", "deployments")], selector));
    let pods = Req::new(("", "v1", "pods"), "");

    let missing = Namespaces::new(Ok(None));
    assert_eq!(
        outcome_with(&on_deployments, &pods, &eq, &|| missing.get()),
        "no"
    );
    assert_eq!(missing.calls.get(), 0);
    assert_eq!(
        outcome_with(&on_pods, &pods, &eq, &|| missing.get()),
        "error: namespaces \"ns\" not found"
    );

    let failing = Namespaces::new(Err("connection refused"));
    assert_eq!(
        outcome_with(&on_deployments, &pods, &eq, &|| failing.get()),
        "no"
    );
    assert_eq!(
        outcome_with(&on_pods, &pods, &eq, &|| failing.get()),
        "error: Internal error occurred: connection refused"
    );

    // Excluded requests and requests the object selector rejects raise no error either.
    let excluded = policy(&rules(
        &[("*", "*", "pods")],
        &format!(
            "{selector}excludeResourceRules:\n- {{operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: [pods]}}\n"
        ),
    ));
    assert_eq!(outcome_with(&excluded, &pods, &eq, &|| missing.get()), "no");
    let by_object = policy(&rules(
        &[("*", "*", "pods")],
        &format!("{selector}objectSelector: {{matchLabels: {{a: b}}}}\n"),
    ));
    assert_eq!(
        outcome_with(&by_object, &pods, &eq, &|| missing.get()),
        "no"
    );

    // A Namespace CREATE without an object cannot be judged.
    let on_namespaces = policy(&rules(&[("", "v1", "namespaces")], selector));
    let create = Req::new(("", "v1", "namespaces"), "").namespace("");
    match on_namespaces.matches(&create.attrs(), &eq, &no_namespace) {
        Err(e) => {
            assert_eq!(e, MatchError::NamespaceObjectMissing);
            assert_eq!((e.code(), e.reason()), (500, "InternalError"));
            assert_eq!(
                e.to_string(),
                "Internal error occurred: object does not implement the Object interfaces"
            );
        }
        other => panic!("{other:?}"),
    }
    let not_found = MatchError::NamespaceNotFound("x".into());
    assert_eq!((not_found.code(), not_found.reason()), (404, "NotFound"));
}

#[test]
fn defaults() {
    let c = policy(&rules(&[("*", "*", "'*'")], ""));
    assert_eq!(c.match_policy(), MatchPolicy::Equivalent);
    assert!(c.namespace_selector().is_empty());
    assert!(c.object_selector().is_empty());
    let exact = policy(&rules(&[("*", "*", "'*'")], "matchPolicy: Exact\n"));
    assert_eq!(exact.match_policy(), MatchPolicy::Exact);
    // Scope defaults to `*`: both namespaced and cluster-scoped requests match.
    let eq = EquivalentResources::new();
    assert_ne!(outcome(&c, &Req::new(("", "v1", "pods"), ""), &eq), "no");
    assert_ne!(
        outcome(&c, &Req::new(("", "v1", "nodes"), "").namespace(""), &eq),
        "no"
    );
}

#[test]
fn validation() {
    let p = "spec.matchConstraints";
    assert_eq!(
        errors(None, Owner::ValidatingPolicy, p),
        vec!["spec.matchConstraints: Required value"]
    );
    assert_eq!(
        errors(None, Owner::MutatingBinding, "spec.matchResources"),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(Some("namespaceSelector: {}"), Owner::ValidatingPolicy, p),
        vec!["spec.matchConstraints.resourceRules: Required value"]
    );
    assert_eq!(
        errors(Some("namespaceSelector: {}"), Owner::ValidatingBinding, p),
        Vec::<String>::new()
    );

    let yaml = "namespaceSelector: {matchExpressions: [{key: env, operator: In}]}\n\
                objectSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}\n\
                resourceRules:\n\
                - {operations: [CREATE, PATCH], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n\
                excludeResourceRules:\n\
                - {operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: [], scope: Everywhere}\n";
    assert_eq!(
        errors(Some(yaml), Owner::ValidatingPolicy, p),
        vec![
            "spec.matchConstraints.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "spec.matchConstraints.objectSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            r#"spec.matchConstraints.resourceRules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE""#,
            "spec.matchConstraints.excludeResourceRules[0].resources: Required value",
            r#"spec.matchConstraints.excludeResourceRules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced""#,
        ]
    );
}

#[test]
fn mutating_policies_cannot_match_delete() {
    let yaml = "resourceRules:\n\
                - {operations: [CREATE, DELETE], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n\
                - {operations: [UPDATE, CONNECT], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n\
                excludeResourceRules:\n\
                - {operations: [DELETE], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n";
    let delete = r#"spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE""#;
    assert_eq!(
        errors(Some(yaml), Owner::MutatingPolicy, "spec.matchConstraints"),
        vec![delete]
    );
    assert_eq!(
        errors(Some(yaml), Owner::MutatingBinding, "spec.matchConstraints"),
        vec![delete]
    );
    assert_eq!(
        errors(Some(yaml), Owner::ValidatingPolicy, "spec.matchConstraints"),
        Vec::<String>::new()
    );
    // PATCH is reported twice: as an operation no rule may name, and as one a mutation may not.
    let patch = "resourceRules:\n- {operations: [PATCH], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n";
    assert_eq!(
        errors(Some(patch), Owner::MutatingPolicy, "spec.matchConstraints").len(),
        2
    );
}

#[test]
fn keys_for_an_index() {
    let c = policy(
        "resourceRules:\n\
         - {operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments, deployments/scale]}\n\
         - {operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: ['pods/*']}\n",
    );
    let keys = c.rule_keys();
    assert_eq!(keys.len(), 5);
    let key = |g, r, s, op| RuleKey {
        group: Pattern::Exact(g),
        resource: Pattern::Exact(r),
        subresource: s,
        operation: op,
    };
    assert!(keys.contains(&key(
        "apps",
        "deployments",
        Pattern::Exact("scale"),
        Some(Operation::Update)
    )));
    assert!(keys.contains(&key("", "pods", Pattern::Any, None)));

    // Equivalence widens the keys to extensions' deployments (in an old cluster's table).
    let eq = EquivalentResources::builtin(15);
    let widened = c.index_keys(&eq);
    assert!(widened.contains(&key(
        "extensions",
        "deployments",
        Pattern::Exact(""),
        Some(Operation::Create)
    )));
    assert!(widened.contains(&key(
        "extensions",
        "deployments",
        Pattern::Exact("scale"),
        Some(Operation::Update)
    )));
    assert!(
        !widened
            .iter()
            .any(|k| k.group == Pattern::Exact("extensions")
                && k.operation == Some(Operation::Delete))
    );
    assert_eq!(widened.len(), 9);
    // ...but not with matchPolicy Exact, nor in a release without extensions.
    let exact = policy(
        "matchPolicy: Exact\nresourceRules:\n- {operations: ['*'], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}\n",
    );
    assert_eq!(exact.index_keys(&eq).len(), 1);
    assert_eq!(
        c.index_keys(&EquivalentResources::builtin_latest()).len(),
        5
    );

    // A binding without rules names everything.
    assert_eq!(
        MatchConstraints::everything().rule_keys(),
        vec![RuleKey {
            group: Pattern::Any,
            resource: Pattern::Any,
            subresource: Pattern::Any,
            operation: None,
        }]
    );
}
