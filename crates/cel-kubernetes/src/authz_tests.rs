#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_types
)]

use crate::KubernetesEnv;
use std::sync::Mutex;

use super::*;
use celer_cel::Activation;

/// Allows what its list says (user, verb, and a path or `group/resource[/sub]`), says
/// NoOpinion otherwise, fails for the verb `explode`, and records what it was asked.
#[derive(Debug, Default)]
struct AllowList {
    allowed: Vec<(&'static str, &'static str, &'static str)>,
    asked: Mutex<Vec<AuthzAttributes>>,
}

impl Authorizer for AllowList {
    fn authorize(&self, a: &AuthzAttributes) -> AuthzDecision {
        self.asked.lock().unwrap().push(a.clone());
        if a.verb == "explode" {
            return AuthzDecision {
                decision: Decision::NoOpinion,
                reason: String::new(),
                error: Some("webhook unavailable".to_string()),
            };
        }
        let target = if a.resource_request {
            let mut t = format!("{}/{}", a.api_group, a.resource);
            if !a.subresource.is_empty() {
                t = format!("{t}/{}", a.subresource);
            }
            t
        } else {
            a.path.clone()
        };
        let hit = self
            .allowed
            .iter()
            .any(|(u, v, t)| *u == a.user.name && *v == a.verb && *t == target);
        if hit {
            AuthzDecision {
                decision: Decision::Allow,
                reason: format!("{} may {} {target}", a.user.name, a.verb),
                error: None,
            }
        } else {
            AuthzDecision {
                decision: Decision::NoOpinion,
                reason: String::new(),
                error: None,
            }
        }
    }
}

fn fixture() -> (Env, Arc<AllowList>, UserInfo) {
    let mut env = Env::kubernetes();
    declare_variables(&mut env);
    let authz = Arc::new(AllowList {
        allowed: vec![
            ("alice", "get", "/healthz"),
            ("alice", "create", "apps/deployments"),
            ("alice", "update", "apps/deployments/status"),
            (
                "system:serviceaccount:kube-system:deployer",
                "delete",
                "/pods",
            ),
            (
                "system:serviceaccount:kube-system:deployer",
                "list",
                "/pods",
            ),
        ],
        asked: Mutex::new(Vec::new()),
    });
    let user = UserInfo {
        name: "alice".to_string(),
        uid: "u-1".to_string(),
        groups: vec!["devs".to_string()],
        extra: BTreeMap::new(),
    };
    (env, authz, user)
}

fn run(expr: &str) -> (EvalResult<'static>, u64, Vec<AuthzAttributes>) {
    let (env, authz, user) = fixture();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let mut act = Activation::new(&env);
    let dyn_authz: Arc<dyn Authorizer> = authz.clone();
    act.bind(
        AUTHORIZER_VAR,
        authorizer_value(dyn_authz.clone(), user.clone()),
    )
    .unwrap();
    let request = RequestResource {
        group: "apps".to_string(),
        resource: "deployments".to_string(),
        subresource: "status".to_string(),
        namespace: "team-a".to_string(),
        name: "web".to_string(),
    };
    act.bind(
        REQUEST_RESOURCE_VAR,
        request_resource_value(dyn_authz, user, &request),
    )
    .unwrap();
    let e = program.evaluate(&act, None);
    let asked = authz.asked.lock().unwrap().clone();
    (e.result, e.cost, asked)
}

fn ok(expr: &str) -> Value<'static> {
    run(expr).0.unwrap_or_else(|e| panic!("{expr}: {e}"))
}

#[test]
fn checks_reach_the_authorizer_and_decide() {
    let cases: Vec<(&str, Value<'static>)> = vec![
        (
            "authorizer.path('/healthz').check('get').allowed()",
            Value::Bool(true),
        ),
        (
            "authorizer.path('/healthz').check('post').allowed()",
            Value::Bool(false),
        ),
        (
            "authorizer.path('/healthz').check('get').reason()",
            Value::string("alice may get /healthz"),
        ),
        (
            "authorizer.group('apps').resource('deployments').namespace('x').check('create').allowed()",
            Value::Bool(true),
        ),
        (
            "authorizer.group('apps').resource('deployments').check('delete').allowed()",
            Value::Bool(false),
        ),
        (
            "authorizer.group('apps').resource('deployments').subresource('status').check('update').allowed()",
            Value::Bool(true),
        ),
        (
            "authorizer.requestResource.check('update').allowed()",
            Value::Bool(true),
        ),
        (
            "authorizer.requestResource.check('create').allowed()",
            Value::Bool(false),
        ),
        (
            "authorizer.serviceAccount('kube-system', 'deployer').group('').resource('pods').check('delete').allowed()",
            Value::Bool(true),
        ),
        (
            "authorizer.serviceAccount('kube-system', 'deployer').path('/healthz').check('get').allowed()",
            Value::Bool(false),
        ),
        (
            "authorizer.path('/x').check('get').errored()",
            Value::Bool(false),
        ),
        (
            "authorizer.path('/x').check('get').error()",
            Value::string(""),
        ),
        (
            "authorizer.path('/x').check('explode').errored()",
            Value::Bool(true),
        ),
        (
            "authorizer.path('/x').check('explode').error()",
            Value::string("webhook unavailable"),
        ),
        (
            "authorizer.path('/x').check('explode').allowed()",
            Value::Bool(false),
        ),
        (
            "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=web').check('list').allowed()",
            Value::Bool(false),
        ),
    ];
    for (expr, want) in cases {
        let got = ok(expr);
        assert!(
            celer_cel::ops::equals(&got, &want),
            "{expr}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn attributes_mirror_kubernetes_records() {
    let (_, _, asked) = run(
        "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('web').fieldSelector('metadata.name=web').labelSelector('').check('patch').allowed()",
    );
    let a = asked.first().unwrap();
    assert!(a.resource_request);
    assert_eq!(a.user.name, "alice");
    assert_eq!(a.user.groups, vec!["devs".to_string()]);
    assert_eq!(
        (
            a.verb.as_str(),
            a.api_group.as_str(),
            a.api_version.as_str(),
            a.resource.as_str(),
            a.subresource.as_str(),
            a.namespace.as_str(),
            a.name.as_str()
        ),
        ("patch", "apps", "*", "deployments", "scale", "ns", "web")
    );
    assert_eq!(a.field_selector.as_deref(), Some("metadata.name=web"));
    assert_eq!(a.label_selector, None);

    let (_, _, asked) = run("authorizer.requestResource.check('get').allowed()");
    let a = asked.first().unwrap();
    assert_eq!(
        (
            a.api_group.as_str(),
            a.resource.as_str(),
            a.subresource.as_str()
        ),
        ("apps", "deployments", "status")
    );
    assert_eq!((a.namespace.as_str(), a.name.as_str()), ("team-a", "web"));

    let (_, _, asked) = run("authorizer.path('/metrics').check('get').allowed()");
    let a = asked.first().unwrap();
    assert!(!a.resource_request);
    assert_eq!((a.path.as_str(), a.verb.as_str()), ("/metrics", "get"));
    assert_eq!(a.api_version, "");

    let (_, _, asked) =
        run("authorizer.serviceAccount('ns1', 'robot').path('/x').check('get').allowed()");
    let u = &asked.first().unwrap().user;
    assert_eq!(u.name, "system:serviceaccount:ns1:robot");
    assert_eq!(
        u.groups,
        vec!["system:serviceaccounts", "system:serviceaccounts:ns1"]
    );
    assert_eq!(u.uid, "");
}

#[test]
fn errors_have_kubernetes_texts() {
    let cases = [
        (
            "authorizer.path('').check('get').allowed()",
            "path must not be empty",
        ),
        (
            "authorizer.path('  ').check('get').allowed()",
            "path must not be empty",
        ),
        (
            "authorizer.group('apps').resource(' ').check('get').allowed()",
            "resource must not be empty",
        ),
        (
            "authorizer.serviceAccount('ns', 'Bad_Name').path('/x').check('get').allowed()",
            "Invalid service account name",
        ),
        (
            "authorizer.serviceAccount('a.b', 'ok').path('/x').check('get').allowed()",
            "Invalid service account namespace",
        ),
        (
            "authorizer.serviceAccount('-ns', 'a..b').path('/x').check('get').allowed()",
            "Invalid service account name",
        ),
    ];
    for (expr, text) in cases {
        match run(expr).0 {
            Err(e) => assert_eq!(e.message(), text, "{expr}"),
            Ok(v) => panic!("{expr}: not an error: {v:?}"),
        }
    }
    // Nothing was asked of the authorizer after an error.
    assert!(
        run("authorizer.path('').check('get').allowed()")
            .2
            .is_empty()
    );
}

#[test]
fn unbound_authorizer_is_an_error_value() {
    let (env, _, _) = fixture();
    let act = Activation::new(&env);
    for (expr, var) in [
        (
            "authorizer.path('/healthz').check('get').allowed()",
            AUTHORIZER_VAR,
        ),
        (
            "authorizer.requestResource.check('get').allowed()",
            REQUEST_RESOURCE_VAR,
        ),
    ] {
        let program = env.compile(expr).unwrap();
        let e = program.eval(&act).unwrap_err();
        assert_eq!(e.message(), format!("no such attribute: {var}"), "{expr}");
        // ...which `||` absorbs, as any CEL error.
        let program = env.compile(&format!("true || {expr}")).unwrap();
        assert!(program.eval(&act).unwrap().as_bool().unwrap());
    }
}

#[test]
fn declarations_check() {
    let (env, _, _) = fixture();
    assert_eq!(
        env.check("authorizer.group('apps')").unwrap(),
        group_check_type()
    );
    assert_eq!(
        env.check("authorizer.requestResource.namespace('x')")
            .unwrap(),
        resource_check_type()
    );
    assert_eq!(
        env.check("authorizer.path('/a').check('get')").unwrap(),
        decision_type()
    );
    for bad in [
        "authorizer.check('get')",
        "authorizer.group('apps').check('get')",
        "authorizer.path('/a').namespace('x')",
        "authorizer.group('apps').resource('x').check('get').allowed(1)",
        "authorizer.requestResource.fieldSelector(1)",
    ] {
        assert!(env.compile(bad).is_err(), "{bad} should not compile");
    }
    // Without the variables, `authorizer` is unknown.
    assert!(Env::kubernetes().compile("authorizer.path('/a')").is_err());
}

#[test]
fn runtime_costs_as_kubernetes() {
    // TestAuthzLibraryCost in k8s.io/apiserver/pkg/cel/library/cost_test.go.
    let cases = [
        ("authorizer.path('/healthz')", 2),
        (
            "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')",
            6,
        ),
        (
            "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')",
            1821,
        ),
        (
            "authorizer.group('').resource('pods').labelSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')",
            1821,
        ),
        (
            "authorizer.path('/healthz').check('get').allowed()",
            350_003,
        ),
        (
            "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()",
            350_007,
        ),
        (
            "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').errored()",
            350_007,
        ),
        (
            "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').error()",
            350_007,
        ),
        ("authorizer.requestResource.check('get').allowed()", 350_002),
    ];
    for (expr, want) in cases {
        let (result, cost, _) = run(expr);
        assert!(result.is_ok(), "{expr}: {result:?}");
        assert_eq!(cost, want, "{expr}");
    }
}

#[test]
fn three_checks_exceed_the_per_expression_limit() {
    let (env, authz, user) = fixture();
    let expr = "authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()";
    let program = env.compile(expr).unwrap();
    let mut act = Activation::new(&env);
    act.bind(AUTHORIZER_VAR, authorizer_value(authz, user))
        .unwrap();
    let e = program.evaluate(&act, Some(crate::cost::PER_CALL_LIMIT));
    assert_eq!(e.result.unwrap_err().message(), cost::LIMIT_EXCEEDED);
}

#[test]
fn dns_names() {
    for ok in ["a", "a-b", "0", "abc123"] {
        assert!(is_dns1123_label(ok), "{ok}");
        assert!(is_dns1123_subdomain(ok), "{ok}");
    }
    assert!(is_dns1123_subdomain("a.b-c.d"));
    assert!(!is_dns1123_label("a.b"));
    for bad in ["", "-a", "a-", "A", "a_b", "a..b", ".a", "a."] {
        assert!(!is_dns1123_subdomain(bad), "{bad}");
    }
    assert!(is_dns1123_label(&"a".repeat(63)));
    assert!(!is_dns1123_label(&"a".repeat(64)));
    assert!(is_dns1123_subdomain(&"a".repeat(253)));
    assert!(!is_dns1123_subdomain(&"a".repeat(254)));
}
