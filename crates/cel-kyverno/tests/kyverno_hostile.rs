//! The Kyverno library functions on arbitrary input: an answer or an error value, never a
//! panic, and quickly. Inputs are bound as variables so nothing is folded at compile time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use celer_cel::{Activation, Env, Program, Type, Value};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::cost::PER_CALL_LIMIT;
use celer_cel_kyverno::KyvernoEnv;
use proptest::prelude::*;

const STRING_FUNCTIONS: [&str; 13] = [
    "isImage(s)",
    "parseImageReference(s).repository()",
    "image(s).identifier()",
    "json.unmarshal(s)",
    "yaml.parse(s)",
    "x509.decode(s)",
    "random(s)",
    "base64.decode(s)",
    "parseServiceAccount(s)",
    "regex.extractAll(s, s)",
    "regex.replace(s, s, s)",
    "sha256(s) + md5(s) + sha1(s)",
    "json.marshal(s)",
];

fn programs() -> &'static (Env, Vec<Program>, Program) {
    static P: OnceLock<(Env, Vec<Program>, Program)> = OnceLock::new();
    P.get_or_init(|| {
        let mut env = Env::kubernetes();
        env.enable_kyverno_libraries();
        env.declare("s", Type::String);
        env.declare("b", Type::Bytes);
        let strings = STRING_FUNCTIONS
            .iter()
            .map(|e| env.compile(e).unwrap())
            .collect();
        let bytes = env.compile("gzip.decompress(b)").unwrap();
        (env, strings, bytes)
    })
}

fn run_all(s: &str, b: &[u8]) {
    let (env, strings, bytes) = programs();
    let mut act = Activation::new(env);
    act.bind("s", Value::string(s)).unwrap();
    act.bind("b", Value::bytes(b.to_vec())).unwrap();
    let names = STRING_FUNCTIONS
        .iter()
        .chain(std::iter::once(&"gzip.decompress(b)"));
    for (p, name) in strings.iter().chain(std::iter::once(bytes)).zip(names) {
        let start = Instant::now();
        let _ = p.evaluate(&act, Some(PER_CALL_LIMIT));
        let took = start.elapsed();
        let shown: String = s.chars().take(40).collect();
        assert!(
            took < Duration::from_secs(10),
            "{name} took {took:?} on {} chars starting {shown:?}",
            s.len()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text(s in ".{0,200}", b in proptest::collection::vec(any::<u8>(), 0..200)) {
        run_all(&s, &b);
    }

    #[test]
    fn image_like_text(s in "[a-zA-Z0-9:/@._\\-\\[\\]]{0,80}") {
        run_all(&s, &[]);
    }

    #[test]
    fn pem_like_text(body in "[A-Za-z0-9+/=\n]{0,400}") {
        let s = format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n");
        run_all(&s, &[]);
    }
}

#[test]
fn pathological_inputs_end_quickly() {
    for s in [
        "[".repeat(50_000),
        "{\"a\":".repeat(50_000),
        "- ".repeat(50_000),
        format!("a{}", "{1000}".repeat(10)),
        "(((((((((((((((((((((a)))))))))))))))))))))*".to_string(),
        "-----BEGIN CERTIFICATE-----\n".repeat(10_000),
        "\u{0}".repeat(10_000),
    ] {
        run_all(&s, s.as_bytes());
    }
}
