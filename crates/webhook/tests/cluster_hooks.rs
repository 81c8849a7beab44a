//! The server with a cluster attached (`ServeOptions::cluster`): Namespaces and params come from
//! the cluster's lookup instead of the policy files, and the cluster hears of every policy set,
//! the first and each reload. A fake cluster stands in for `celer-cluster` (which e2e/run.sh
//! tests against a real kube-apiserver).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::lookup::{Lookup, LookupError, ObjectLookup, ParamScope};
use celer_policy::model::ParamKind;
use celer_policy::request::{RequestUser, review_for};
use celer_webhook::lookup::ClusterHooks;
use celer_webhook::policies::{Policies, PolicySource};
use celer_webhook::server::ServeOptions;

mod support;

#[derive(Debug)]
struct FakeCluster {
    objects: Arc<ObjectLookup>,
    loads: AtomicUsize,
    validating: AtomicUsize,
    /// The operations of the requests `generate_requested` heard of.
    generate: parking_lot::Mutex<Vec<String>>,
}

#[derive(Debug)]
struct Objects(Arc<ObjectLookup>);

impl Lookup for Objects {
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        self.0.namespace(name)
    }
    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope> {
        self.0.param_scope(kind)
    }
    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        self.0.param(kind, namespace, name)
    }
    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        self.0.params(kind, namespace)
    }
}

impl ClusterHooks for FakeCluster {
    fn lookup(&self) -> Arc<dyn Lookup> {
        Arc::new(Objects(Arc::clone(&self.objects)))
    }
    fn generate_requested(&self, _review: &[u8], request: &celer_policy::request::Request<'_>) {
        let op = format!(
            "{:?} {}",
            request.attributes.operation, request.attributes.name
        );
        self.generate.lock().push(op);
    }
    fn policies_loaded(&self, policies: &Policies) {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.validating
            .store(policies.counts().validating, Ordering::SeqCst);
    }
}

const POLICY: &str = "
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-prod-pods}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations: [{expression: 'false', message: no Pods in prod namespaces}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-prod-pods}
spec:
  policyName: no-prod-pods
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {env: prod}}
---
# In the files, team-a is not prod; the cluster says it is, and the cluster wins.
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {env: dev}}
";

#[test]
fn namespaces_come_from_the_cluster_and_it_hears_of_every_load() {
    let dir = std::env::temp_dir().join(format!("celer-webhook-cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("policy.yaml"), POLICY).unwrap();
    let cluster = Arc::new(FakeCluster {
        objects: Arc::new(ObjectLookup::new([sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","labels":{"env":"prod"}}}"#,
        )
        .unwrap()])),
        loads: AtomicUsize::new(0),
        validating: AtomicUsize::new(0),
        generate: parking_lot::Mutex::new(Vec::new()),
    });
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = support::start(ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            policies: PolicySource::Paths(vec![dir.clone()]),
            reload_interval: Duration::from_millis(50),
            cluster: Some(Arc::clone(&cluster) as Arc<dyn ClusterHooks>),
            ..ServeOptions::default()
        })
        .await;
        assert_eq!(cluster.loads.load(Ordering::SeqCst), 1);
        assert_eq!(cluster.validating.load(Ordering::SeqCst), 1);

        let pod: Json = sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"team-a"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#,
        )
        .unwrap();
        let review = review_for(Some(&pod), None, Operation::Create, &RequestUser::default(), "u1").unwrap();
        let answer = support::post_validate(running.addr, &review).await;
        assert!(answer.contains(r#""allowed":false"#), "{answer}");
        assert!(answer.contains("no Pods in prod namespaces"), "{answer}");

        // A namespace the cluster does not know is not made up from its name, as it is
        // without a cluster: the policy's namespaceSelector cannot be matched.
        let elsewhere = review.replace("team-a", "team-b");
        let answer = support::post_validate(running.addr, &elsewhere).await;
        assert!(answer.contains(r#""allowed":false"#), "{answer}");
        assert!(answer.contains("team-b"), "{answer}");

        // Kyverno's GeneratingPolicy webhooks are always answered allowed, and the cluster
        // hears of each request (not of a dry run).
        let configmap: Json = sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"leaving","namespace":"team-a"}}"#,
        )
        .unwrap();
        let delete = review_for(None, Some(&configmap), Operation::Delete, &RequestUser::default(), "u2").unwrap();
        let answer = support::post(running.addr, "/gpol/tombstones", &delete).await;
        assert!(answer.contains(r#""allowed":true"#), "{answer}");
        let dry = delete.replace(r#""dryRun":false"#, r#""dryRun":true"#);
        let answer = support::post(running.addr, "/ngpol/a/b", &dry).await;
        assert!(answer.contains(r#""allowed":true"#), "{answer}");
        assert_eq!(*cluster.generate.lock(), ["Delete leaving"]);

        // A reload is announced too.
        std::fs::write(dir.join("more.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n").unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while cluster.loads.load(Ordering::SeqCst) < 2 {
            assert!(tokio::time::Instant::now() < deadline, "no reload announced");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = stop.send(());
        running.wait().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
