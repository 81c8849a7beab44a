//! The server with a policy feed (`ServeOptions::feed`): policies that are cluster objects or
//! ConfigMap files, beside the policy files. A fake feed stands in for `celer-cluster`'s
//! watches (e2e tests those against a real kube-apiserver). Checked: the first load waits for
//! the feed; a fed policy is enforced, changed and removed as soon as the feed says so; a
//! broken fed document is left out and named, and disturbs neither the files nor the other fed
//! policies; a broken policy file still refuses the reload.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test doubles' locks, off the request path.
#![allow(clippy::disallowed_types)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::request::{RequestUser, review_for};
use celer_webhook::feed::{FeedDocument, PolicyFeed};
use celer_webhook::policies::PolicySource;
use celer_webhook::server::ServeOptions;
use tokio::sync::watch;

mod support;

#[derive(Debug)]
struct FakeFeed {
    documents: Mutex<Vec<FeedDocument>>,
    changes: watch::Sender<u64>,
    synced: AtomicBool,
}

impl FakeFeed {
    fn set(&self, documents: Vec<FeedDocument>) {
        *self.documents.lock().unwrap() = documents;
        self.changes.send_modify(|n| *n += 1);
    }
}

impl PolicyFeed for FakeFeed {
    fn documents(&self) -> Vec<FeedDocument> {
        self.documents.lock().unwrap().clone()
    }
    fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
    fn is_synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }
}

/// A Kyverno ValidatingPolicy denying Pods named `name`, as the API server would hand it.
fn deny_named(policy: &str, name: &str) -> FeedDocument {
    let json: Json = sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{{"name":"{policy}","uid":"u-{policy}"}},"spec":{{"validationActions":["Deny"],"matchConstraints":{{"resourceRules":[{{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}}]}},"validations":[{{"expression":"object.metadata.name != '{name}'","message":"no pod named {name}"}}]}}}}"#
    ))
    .unwrap();
    FeedDocument::Object {
        origin: format!("ValidatingPolicy {policy:?}"),
        json: Arc::new(json),
    }
}

const FILE_POLICY: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-files-pod}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}\n  validations: [{expression: \"object.metadata.name != 'files'\", message: no pod named files}]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-files-pod}\nspec: {policyName: no-files-pod, validationActions: [Deny]}\n";

async fn decide(addr: SocketAddr, pod: &str) -> String {
    let object: Json = sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{pod}","namespace":"default"}},"spec":{{"containers":[{{"name":"a","image":"b"}}]}}}}"#
    ))
    .unwrap();
    let body = review_for(
        Some(&object),
        None,
        Operation::Create,
        &RequestUser::default(),
        "u1",
    )
    .unwrap();
    support::post_validate(addr, &body).await
}

/// Waits until a Pod named `pod` is denied (`true`) or admitted (`false`), at most 10 s.
async fn until(addr: SocketAddr, pod: &str, denied: bool) -> Duration {
    let started = tokio::time::Instant::now();
    loop {
        let answer = decide(addr, pod).await;
        if answer.contains(r#""allowed":false"#) == denied {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "pod {pod}: still {answer}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn fed_policies_are_served_changed_and_removed_and_a_broken_one_disturbs_nothing() {
    let dir = std::env::temp_dir().join(format!("celer-webhook-feed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("policy.yaml"), FILE_POLICY).unwrap();
    let feed = Arc::new(FakeFeed {
        documents: Mutex::new(vec![deny_named("one", "first")]),
        changes: watch::Sender::new(0),
        synced: AtomicBool::new(false),
    });
    celer_webhook::runtime().unwrap().block_on(async {
        // The first load waits for the feed to be read once.
        let syncing = {
            let feed = Arc::clone(&feed);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                feed.synced.store(true, Ordering::SeqCst);
            })
        };
        let started = tokio::time::Instant::now();
        let (running, stop) = support::start(ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            policies: PolicySource::Paths(vec![dir.clone()]),
            // Files are checked rarely: fed changes must not wait for that.
            reload_interval: Duration::from_secs(30),
            feed: Some(Arc::clone(&feed) as Arc<dyn PolicyFeed>),
            ..ServeOptions::default()
        })
        .await;
        syncing.await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        let addr = running.addr;
        assert!(decide(addr, "first").await.contains("no pod named first"));
        assert!(decide(addr, "files").await.contains("no pod named files"));
        assert!(decide(addr, "other").await.contains(r#""allowed":true"#));

        // A policy added to the feed is enforced at once (not at the files' interval).
        feed.set(vec![
            deny_named("one", "first"),
            deny_named("two", "second"),
        ]);
        let took = until(addr, "second", true).await;
        assert!(took < Duration::from_secs(5), "took {took:?}");

        // A broken fed policy (its expression does not compile) and an unreadable fed file
        // are left out and named; the other fed policies and the files keep serving.
        let mut broken = deny_named("broken", "x");
        if let FeedDocument::Object { json, .. } = &mut broken {
            let text = sonic_rs::to_string(json.as_ref())
                .unwrap()
                .replace("object.metadata.name !=", "object.metadata.name !=== (");
            *json = Arc::new(sonic_rs::from_str(&text).unwrap());
        }
        let unreadable = FeedDocument::File {
            origin: "configmap celer/policies a.yaml".to_string(),
            text: "kind: [unclosed".to_string(),
        };
        feed.set(vec![
            deny_named("one", "first"),
            broken,
            unreadable,
            deny_named("three", "third"),
        ]);
        until(addr, "third", true).await;
        assert!(decide(addr, "first").await.contains("no pod named first"));
        assert!(decide(addr, "files").await.contains("no pod named files"));
        // `two` left the feed: no longer enforced.
        until(addr, "second", false).await;
        let serving = running.state.current().unwrap();
        let rejected: Vec<&str> = serving
            .policies
            .rejected
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            rejected,
            [
                "ValidatingPolicy \"broken\"",
                "configmap celer/policies a.yaml"
            ]
        );
        let why = serving
            .policies
            .rejected
            .values()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        assert!(why.contains("broken"), "{why}");
        assert_eq!(
            serving
                .policies
                .fed
                .get("ValidatingPolicy \"three\"")
                .map(Vec::as_slice),
            Some(&["ValidatingPolicy \"three\"".to_string()][..])
        );

        // Removing every fed policy is a deliberate removal: the files keep serving alone.
        feed.set(Vec::new());
        until(addr, "first", false).await;
        assert!(decide(addr, "files").await.contains("no pod named files"));

        let _ = stop.send(());
        running.wait().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reload after one fed object changed reads and compiles that object only; the others are
/// taken as the last load left them, and the set enforces the change.
#[test]
fn a_reload_compiles_only_the_changed_object() {
    use celer_webhook::policies::{LoadCache, load_with_feed_cached};
    let documents: Vec<FeedDocument> = (0..20)
        .map(|i| deny_named(&format!("p{i}"), &format!("pod-{i}")))
        .collect();
    let feed = FakeFeed {
        documents: Mutex::new(documents.clone()),
        changes: watch::Sender::new(0),
        synced: AtomicBool::new(true),
    };
    let mut cache = LoadCache::default();
    let first =
        load_with_feed_cached(&PolicySource::Paths(Vec::new()), Some(&feed), &mut cache).unwrap();
    let (reused, compiled) = cache.last_load();
    assert_eq!(reused, 0);
    assert!(compiled >= 20, "{compiled}");
    assert_eq!(first.counts().validating, 20);
    assert_eq!(first.counts().mutating, 0);

    // Nothing changed: nothing compiled.
    load_with_feed_cached(&PolicySource::Paths(Vec::new()), Some(&feed), &mut cache).unwrap();
    assert_eq!(cache.last_load(), (compiled, 0));

    // One object changed (the feed hands a new object for it): that one is compiled.
    let mut changed = documents;
    changed[7] = deny_named("p7", "pod-seven");
    feed.set(changed);
    let after =
        load_with_feed_cached(&PolicySource::Paths(Vec::new()), Some(&feed), &mut cache).unwrap();
    assert_eq!(cache.last_load(), (compiled - 1, 1));
    let p7 = after
        .validating
        .kyverno()
        .validating
        .iter()
        .find(|p| p.policy.common.name == "p7")
        .unwrap();
    assert_eq!(
        &*p7.policy.validations[0].expression.source,
        "object.metadata.name != 'pod-seven'"
    );
}
