#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::KyvernoEnv;
use celer_cel_kubernetes::KubernetesEnv;

/// JSON with every number as a float, as Go's decoder into `any` reads it.
fn normalized(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::Number(n) => serde_json::json!(n.as_f64().unwrap()),
        J::Array(a) => J::Array(a.into_iter().map(normalized).collect()),
        J::Object(o) => J::Object(o.into_iter().map(|(k, v)| (k, normalized(v))).collect()),
        other => other,
    }
}

fn decoded(pem: &str) -> serde_json::Value {
    let v = decode(Value::string(pem)).unwrap();
    normalized(serde_json::from_str(&celer_cel::format::to_json(&v).unwrap()).unwrap())
}

fn golden(json: &str) -> serde_json::Value {
    normalized(serde_json::from_str(json).unwrap())
}

fn assert_same(got: &serde_json::Value, want: &serde_json::Value) {
    let (serde_json::Value::Object(g), serde_json::Value::Object(w)) = (got, want) else {
        panic!("not objects");
    };
    for (k, wv) in w {
        assert_eq!(g.get(k), Some(wv), "field {k}");
    }
    assert_eq!(
        g.len(),
        w.len(),
        "fields: {:?}",
        g.keys().collect::<Vec<_>>()
    );
}

#[test]
fn certificates_decode_like_go() {
    for (pem, json) in [
        (
            include_str!("testdata/ca.pem"),
            include_str!("testdata/ca.go.json"),
        ),
        (
            include_str!("testdata/leaf.pem"),
            include_str!("testdata/leaf.go.json"),
        ),
    ] {
        assert_same(&decoded(pem), &golden(json));
    }
}

#[test]
fn certificate_requests_decode_like_go() {
    let got = decoded(include_str!("testdata/csr.pem"));
    let want = golden(include_str!("testdata/csr.go.json"));
    assert_same(&got, &want);
}

#[test]
fn refusals_and_hostile_input() {
    let e = |pem: &str| {
        decode(Value::string(pem))
            .unwrap_err()
            .message()
            .to_string()
    };
    assert_eq!(
        e(include_str!("testdata/ec.pem")),
        "certificate should use rsa algorithm"
    );
    assert_eq!(e(""), "failed to decode PEM block");
    assert_eq!(e("not a pem"), "failed to decode PEM block");
    assert_eq!(
        e("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
        "PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST"
    );
    // A block that is not base64 is skipped; none left.
    assert_eq!(
        e("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"),
        "failed to decode PEM block"
    );
    // Garbage DER, truncated DER, huge lengths.
    for der in [
        vec![],
        vec![0x30],
        vec![0x30, 0x84, 0xff, 0xff, 0xff, 0xff],
        vec![0x30, 0x80, 0x00, 0x00],
        vec![0x1f, 0x01, 0x00],
        vec![0x30, 0x03, 0x02, 0x01, 0x01],
    ] {
        let pem = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            STANDARD.encode(&der)
        );
        assert!(
            e(&pem).starts_with("x509: malformed"),
            "{der:?}: {}",
            e(&pem)
        );
    }
    // Every truncation of a real certificate fails cleanly.
    let (_, der) = pem_decode(include_str!("testdata/ca.pem")).unwrap();
    for cut in (0..der.len()).step_by(7) {
        let pem = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            STANDARD.encode(&der[..cut])
        );
        assert!(decode(Value::string(pem)).is_err(), "cut at {cut}");
    }
    // Flipped bytes never panic.
    for i in (0..der.len()).step_by(3) {
        let mut bad = der.clone();
        bad[i] ^= 0xff;
        let pem = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            STANDARD.encode(&bad)
        );
        let _ = decode(Value::string(pem));
    }
    let huge = "A".repeat(MAX_PEM + 1);
    assert!(e(&huge).contains("exceeds"));
}

#[test]
fn big_numbers_in_decimal() {
    assert_eq!(decimal(&[]), "0");
    assert_eq!(decimal(&[0, 0, 1]), "1");
    assert_eq!(decimal(&[0x01, 0x00, 0x01]), "65537");
    assert_eq!(decimal(&[0xff; 8]), "18446744073709551615");
    assert_eq!(
        decimal(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0]),
        "18446744073709551616"
    );
    assert_eq!(
        serial_int64(&[0x12, 0x34, 0x56, 0x78, 0x90, 0xab, 0xcd, 0xef, 0x12]).unwrap(),
        0x34567890abcdef12
    );
}

#[test]
fn in_an_expression() {
    let mut env = celer_cel::Env::kubernetes();
    env.enable_kyverno_libraries();
    env.declare("pem", celer_cel::Type::String);
    let p = env
        .compile("x509.decode(pem).IsCA && x509.decode(pem).PublicKey.E == 65537 && x509.decode(pem).Issuer.CommonName == 'example-ca'")
        .unwrap();
    let mut act = celer_cel::Activation::new(&env);
    act.bind("pem", Value::string(include_str!("testdata/ca.pem")))
        .unwrap();
    assert!(matches!(p.eval(&act), Ok(Value::Bool(true))));
}
