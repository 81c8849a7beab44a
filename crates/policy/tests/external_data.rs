//! Gatekeeper external data against a local provider: an HTTPS server with a CA made here,
//! answering `ProviderRequest`s as the test tells it, counting the keys it is sent.
//! Rego templates calling `external_data` deny or admit by the answer; answers are cached
//! (idempotent ones only); a slow provider is a timeout; a wrong CA fails the handshake; a
//! mutator's `assign.externalData` assigns the provider's value, each failurePolicy as
//! Gatekeeper applies it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use std::time::Duration;

use base64::Engine as _;
use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::engine::{EvalOptions, evaluate};
use celer_policy::load::Manifests;
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use celer_policy::response::Outcome;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// What the provider does with a key.
type Answer = fn(&str) -> Result<String, String>;

/// A running provider.
struct ProviderServer {
    url: String,
    /// base64 of the CA's PEM, for `spec.caBundle`.
    ca_bundle: String,
    /// Every key sent, in order.
    keys: Arc<Mutex<Vec<String>>>,
    calls: Arc<AtomicUsize>,
}

/// A CA, and a serving certificate for 127.0.0.1 signed by it; client certificates signed by
/// `client_ca` are required when it is given.
fn pki(client_ca: Option<rustls::RootCertStore>) -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = params.signed_by(&key, &ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let private = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap();
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(roots) => builder.with_client_cert_verifier(
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap(),
        ),
    };
    let config = builder
        .with_single_cert(vec![leaf.der().clone()], private)
        .unwrap();
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca.pem());
    (bundle, config)
}

/// Starts a provider answering each key with `answer`, after `delay`, marking its responses
/// `idempotent` as told.
fn start(answer: Answer, idempotent: bool, delay: Duration) -> ProviderServer {
    start_with(answer, idempotent, delay, None)
}

fn start_with(
    answer: Answer,
    idempotent: bool,
    delay: Duration,
    client_ca: Option<rustls::RootCertStore>,
) -> ProviderServer {
    let (ca_bundle, config) = pki(client_ca);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let keys = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let (seen, counted) = (Arc::clone(&keys), Arc::clone(&calls));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, seen, counted) =
                    (acceptor.clone(), Arc::clone(&seen), Arc::clone(&counted));
                tokio::spawn(async move {
                    // A client that does not trust the CA ends the handshake: nothing to serve.
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |request| {
                        let (seen, counted) = (Arc::clone(&seen), Arc::clone(&counted));
                        async move {
                            respond(request, answer, idempotent, delay, &seen, &counted).await
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
    });
    ProviderServer {
        url: format!("https://127.0.0.1:{port}/validate"),
        ca_bundle,
        keys,
        calls,
    }
}

async fn respond(
    request: hyper::Request<hyper::body::Incoming>,
    answer: Answer,
    idempotent: bool,
    delay: Duration,
    seen: &Mutex<Vec<String>>,
    counted: &AtomicUsize,
) -> Result<hyper::Response<http_body_util::Full<bytes::Bytes>>, hyper::Error> {
    use http_body_util::BodyExt;
    let body = request.into_body().collect().await?.to_bytes();
    let doc: Json = sonic_rs::from_slice(&body).unwrap_or_default();
    assert_eq!(doc["kind"].as_str(), Some("ProviderRequest"));
    let keys: Vec<String> = doc["request"]["keys"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    counted.fetch_add(1, Ordering::SeqCst);
    seen.lock().extend(keys.iter().cloned());
    tokio::time::sleep(delay).await;
    let items: Vec<Json> = keys
        .iter()
        .map(|k| match answer(k) {
            Ok(v) => sonic_rs::json!({"key": k, "value": v}),
            Err(e) => sonic_rs::json!({"key": k, "error": e}),
        })
        .collect();
    let response = sonic_rs::json!({
        "apiVersion": "externaldata.gatekeeper.sh/v1beta1",
        "kind": "ProviderResponse",
        "response": {"idempotent": idempotent, "items": items},
    });
    Ok(hyper::Response::new(http_body_util::Full::new(
        bytes::Bytes::from(sonic_rs::to_string(&response).unwrap()),
    )))
}

/// Images from `registry.ok/` are signed; others are not.
fn signed(key: &str) -> Result<String, String> {
    match key.strip_prefix("registry.ok/") {
        Some(rest) => Ok(format!("registry.ok/{rest}@sha256:1")),
        None => Err(format!("{key} is not signed")),
    }
}

fn provider_yaml(name: &str, server: &ProviderServer, timeout: u64) -> String {
    format!(
        "---\napiVersion: externaldata.gatekeeper.sh/v1beta1\nkind: Provider\nmetadata: {{name: {name}}}\nspec:\n  url: {}\n  timeout: {timeout}\n  caBundle: {}\n",
        server.url, server.ca_bundle
    )
}

/// A template denying a Pod whose images the provider answers with an error, or when the
/// provider fails (its `system_error`), and a Constraint of it using provider `provider`.
fn template_yaml(provider: &str) -> String {
    format!(
        r#"---
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {{name: k8ssignedimages}}
spec:
  crd: {{spec: {{names: {{kind: K8sSignedImages}}}}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8ssignedimages

      violation[{{"msg": msg}}] {{
        images := [c.image | c := input.review.object.spec.containers[_]]
        response := external_data({{"provider": "{provider}", "keys": images}})
        msg := problem(response)
      }}

      problem(r) = m {{
        r.system_error != ""
        m := sprintf("provider failed: %v", [r.system_error])
      }}

      problem(r) = m {{
        r.system_error == ""
        count(r.errors) > 0
        m := sprintf("unsigned: %v", [[e[0] | e := r.errors[_]]])
      }}
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sSignedImages
metadata: {{name: signed-images}}
spec:
  match: {{kinds: [{{apiGroups: [""], kinds: [Pod]}}]}}
"#
    )
}

fn set(yaml: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("policies.yaml", yaml);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    let set = PolicySet::build(&m);
    let errors: Vec<String> = set.errors.iter().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    set
}

fn pod(images: &[&str]) -> Json {
    let containers: Vec<Json> = images
        .iter()
        .enumerate()
        .map(|(i, image)| sonic_rs::json!({"name": format!("c{i}"), "image": image}))
        .collect();
    sonic_rs::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "prod"},
        "spec": {"containers": containers},
    })
}

fn admit(set: &PolicySet, object: &Json, user: &str) -> Outcome {
    let user = RequestUser {
        username: user.to_string(),
        ..RequestUser::default()
    };
    let body = review_for(Some(object), None, Operation::Create, &user, "uid-1").unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(
        set,
        &request,
        &ObjectLookup::new(Vec::new()),
        &EvalOptions::default(),
    )
}

fn message(o: &Outcome) -> String {
    o.status
        .as_ref()
        .map(|s| s.message.clone())
        .unwrap_or_default()
}

#[test]
fn a_template_denies_and_admits_by_the_providers_answer_and_idempotent_answers_are_cached() {
    let server = start(signed, true, Duration::ZERO);
    let s = set(&(provider_yaml("signer", &server, 2) + &template_yaml("signer")));
    let admitted = admit(&s, &pod(&["registry.ok/web:1"]), "alice");
    assert!(admitted.allowed, "{:?}", admitted.status);
    let denied = admit(&s, &pod(&["registry.ok/web:1", "evil.io/x:1"]), "alice");
    assert!(!denied.allowed);
    assert_eq!(
        message(&denied),
        r#"[signed-images] unsigned: ["evil.io/x:1"]"#
    );
    // The second request sent only the key not cached; a third sends nothing.
    assert_eq!(*server.keys.lock(), ["registry.ok/web:1", "evil.io/x:1"]);
    let again = admit(&s, &pod(&["registry.ok/web:1"]), "alice");
    assert!(again.allowed);
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
}

#[test]
fn answers_not_idempotent_are_not_cached() {
    let server = start(signed, false, Duration::ZERO);
    let s = set(&(provider_yaml("volatile", &server, 2) + &template_yaml("volatile")));
    for _ in 0..2 {
        assert!(admit(&s, &pod(&["registry.ok/a:1"]), "alice").allowed);
    }
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
}

#[test]
fn a_slow_provider_is_a_timeout_the_template_sees_as_a_system_error() {
    let server = start(signed, true, Duration::from_millis(2500));
    let s = set(&(provider_yaml("slow", &server, 1) + &template_yaml("slow")));
    let started = std::time::Instant::now();
    let o = admit(&s, &pod(&["registry.ok/a:1"]), "alice");
    assert!(started.elapsed() < Duration::from_millis(2400));
    assert!(!o.allowed);
    assert_eq!(
        message(&o),
        r#"[signed-images] provider failed: external data provider "slow": no answer within its timeout of 1s"#
    );
}

#[test]
fn a_provider_with_another_ca_fails_the_handshake_with_a_clear_error() {
    let server = start(signed, true, Duration::ZERO);
    let other = start(signed, true, Duration::ZERO);
    let wrong = ProviderServer {
        ca_bundle: other.ca_bundle.clone(),
        url: server.url.clone(),
        keys: Arc::clone(&server.keys),
        calls: Arc::clone(&server.calls),
    };
    let s = set(&(provider_yaml("untrusted", &wrong, 2) + &template_yaml("untrusted")));
    let o = admit(&s, &pod(&["registry.ok/a:1"]), "alice");
    assert!(!o.allowed);
    let m = message(&o);
    assert!(
        m.starts_with(r#"[signed-images] provider failed: external data provider "untrusted": TLS handshake failed: invalid peer certificate"#),
        "{m}"
    );
    assert_eq!(server.calls.load(Ordering::SeqCst), 0);
}

/// A client CA (as roots for a provider) and a client certificate it signed.
fn client_identity() -> (rustls::RootCertStore, rustls::sign::CertifiedKey) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa,
        KeyPair,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let mut params = CertificateParams::new(vec!["celer.test".to_string()]).unwrap();
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let private = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let provider = rustls::crypto::ring::default_provider();
    let identity =
        rustls::sign::CertifiedKey::from_der(vec![cert.der().clone()], private, &provider).unwrap();
    (roots, identity)
}

#[test]
fn a_provider_requiring_a_client_certificate_is_shown_the_one_celer_presents() {
    let (client_ca, identity) = client_identity();
    let server = start_with(signed, true, Duration::ZERO, Some(client_ca));
    let s = set(&(provider_yaml("mutual", &server, 2) + &template_yaml("mutual")));
    // No other test presents a certificate: the provider refuses the connection.
    let refused = admit(&s, &pod(&["registry.ok/a:1"]), "alice");
    assert!(!refused.allowed);
    let m = message(&refused);
    assert!(
        m.starts_with(r#"[signed-images] provider failed: external data provider "mutual": "#)
            && m.ends_with("received fatal alert: CertificateRequired"),
        "{m}"
    );
    celer_policy::gatekeeper::external_data::present_client_certificate(Some(Arc::new(identity)));
    let admitted = admit(&s, &pod(&["registry.ok/a:1"]), "alice");
    assert!(admitted.allowed, "{:?}", admitted.status);
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_template_naming_a_missing_provider_gets_the_error_naming_it() {
    let s = set(&template_yaml("absent"));
    let o = admit(&s, &pod(&["registry.ok/a:1"]), "alice");
    assert_eq!(
        message(&o),
        r#"[signed-images] provider failed: external data provider "absent" is not loaded (no Provider of that name)"#
    );
}

/// An Assign giving every container's image the provider's answer for it.
fn digest_mutator(provider: &str, failure_policy: &str) -> String {
    format!(
        r#"---
apiVersion: mutations.gatekeeper.sh/v1
kind: Assign
metadata: {{name: digest-images}}
spec:
  applyTo: [{{groups: [""], kinds: [Pod], versions: [v1]}}]
  location: "spec.containers[name:*].image"
  parameters:
    assign:
      externalData:
        provider: {provider}
        dataSource: ValueAtLocation
        failurePolicy: {failure_policy}
        default: registry.ok/fallback:1
"#
    )
}

fn images(o: &Outcome) -> Vec<String> {
    let patched = o.patched.as_ref().expect("a mutated object");
    patched["spec"]["containers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["image"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn assign_external_data_sets_the_providers_value_at_every_location_in_one_call() {
    let server = start(signed, true, Duration::ZERO);
    let s = set(&(provider_yaml("digests", &server, 2) + &digest_mutator("digests", "Fail")));
    let o = admit(
        &s,
        &pod(&["registry.ok/web:1", "registry.ok/db:2"]),
        "alice",
    );
    assert!(o.allowed, "{:?}", o.status);
    assert_eq!(
        images(&o),
        ["registry.ok/web:1@sha256:1", "registry.ok/db:2@sha256:1"]
    );
    // One call for both keys; the assigned digests are not sent back as keys in the next
    // pass, which converges.
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        *server.keys.lock(),
        ["registry.ok/web:1", "registry.ok/db:2"]
    );
}

#[test]
fn each_failure_policy_does_what_gatekeepers_does() {
    let server = start(signed, true, Duration::ZERO);
    let provider = provider_yaml("strict", &server, 2);
    let object = pod(&["registry.ok/web:1", "evil.io/x:1"]);

    let fail = admit(
        &set(&(provider.clone() + &digest_mutator("strict", "Fail"))),
        &object,
        "a",
    );
    assert!(!fail.allowed);
    let status = fail.status.expect("a failure");
    assert_eq!(status.code, 500);
    assert!(
        status.message.contains(
            r#"external data provider "strict" failed key "evil.io/x:1": evil.io/x:1 is not signed"#
        ),
        "{}",
        status.message
    );

    let ignore = admit(
        &set(&(provider.clone() + &digest_mutator("strict", "Ignore"))),
        &object,
        "a",
    );
    assert!(ignore.allowed, "{:?}", ignore.status);
    assert_eq!(
        images(&ignore),
        ["registry.ok/web:1@sha256:1", "evil.io/x:1"]
    );
    // Only the key not cached was sent, once: the next pass remembers it failed.
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);

    let default = admit(
        &set(&(provider + &digest_mutator("strict", "UseDefault"))),
        &object,
        "a",
    );
    assert!(default.allowed, "{:?}", default.status);
    assert_eq!(
        images(&default),
        ["registry.ok/web:1@sha256:1", "registry.ok/fallback:1"]
    );
    assert_eq!(server.calls.load(Ordering::SeqCst), 3);
}

#[test]
fn a_failed_call_follows_the_failure_policy_too_and_usernames_are_keys() {
    // No Provider "gone": Fail fails naming it, UseDefault assigns the default.
    let object = pod(&["registry.ok/web:1"]);
    let fail = admit(&set(&digest_mutator("gone", "Fail")), &object, "a");
    assert!(
        message(&fail).contains(r#"external data provider "gone" is not loaded"#),
        "{}",
        message(&fail)
    );
    let default = admit(&set(&digest_mutator("gone", "UseDefault")), &object, "a");
    assert_eq!(images(&default), ["registry.ok/fallback:1"]);

    fn owner(user: &str) -> Result<String, String> {
        Ok(format!("{user}@example.com"))
    }
    let server = start(owner, true, Duration::ZERO);
    let annotate = format!(
        "{}---\napiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {{name: owner}}\nspec:\n  location: metadata.annotations.owner\n  parameters:\n    assign:\n      externalData: {{provider: owners, dataSource: Username}}\n",
        provider_yaml("owners", &server, 2)
    );
    let o = admit(&set(&annotate), &object, "alice");
    assert!(o.allowed, "{:?}", o.status);
    let patched = o.patched.expect("annotated");
    assert_eq!(
        patched["metadata"]["annotations"]["owner"].as_str(),
        Some("alice@example.com")
    );
    assert_eq!(*server.keys.lock(), ["alice"]);
}
