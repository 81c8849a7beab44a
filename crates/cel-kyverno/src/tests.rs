#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::KyvernoEnv;
use celer_cel_kubernetes::KubernetesEnv;
use std::sync::Arc;

use super::*;
use crate::cel_test_support::same;
use celer_cel::format::to_json;
use celer_cel::types::Type;
use celer_cel::value::{Json, Value};
use celer_cel::{Activation, Env};

fn env() -> Env {
    let mut env = Env::kubernetes();
    env.enable_kyverno_libraries();
    env.declare("input", Type::Dyn);
    env
}

/// Evaluates `expr` (with `input` bound to a JSON document) and renders the result as JSON,
/// or the error as `error: <message>`.
fn run_with(expr: &str, input: &str, values: Option<&ContextValues>) -> String {
    let env = env();
    let json: Json = sonic_rs::from_str(input).unwrap();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let mut act = Activation::new(&env);
    act.bind_json("input", &json).unwrap();
    if let Some(v) = values {
        v.bind(&mut act);
    }
    match program.eval(&act) {
        Ok(v) => to_json(&v).unwrap_or_else(|e| format!("unprintable: {e}")),
        Err(e) => format!("error: {}", e.message()),
    }
}

fn run(expr: &str) -> String {
    run_with(expr, "{}", None)
}

fn check_true(exprs: &[&str]) {
    for e in exprs {
        assert_eq!(run(e), "true", "{e}");
    }
}

// ----- image -----

#[test]
fn image_references_normalize_like_go_containerregistry() {
    let cases: &[(&str, &str, &str, &str, &str, bool)] = &[
        // input, registry, repository, tag, digest, containsDigest
        (
            "nginx",
            "index.docker.io",
            "library/nginx",
            "latest",
            "",
            false,
        ),
        (
            "nginx:1.25",
            "index.docker.io",
            "library/nginx",
            "1.25",
            "",
            false,
        ),
        (
            "docker.io/nginx",
            "index.docker.io",
            "library/nginx",
            "latest",
            "",
            false,
        ),
        (
            "docker.io/bitnami/redis:7",
            "index.docker.io",
            "bitnami/redis",
            "7",
            "",
            false,
        ),
        (
            "index.docker.io/nginx",
            "index.docker.io",
            "library/nginx",
            "latest",
            "",
            false,
        ),
        (
            "ghcr.io/kyverno/kyverno:v1.12.0",
            "ghcr.io",
            "kyverno/kyverno",
            "v1.12.0",
            "",
            false,
        ),
        (
            "localhost:5000/app",
            "localhost:5000",
            "app",
            "latest",
            "",
            false,
        ),
        (
            "localhost/app",
            "index.docker.io",
            "localhost/app",
            "latest",
            "",
            false,
        ),
        (
            "quay.io/org/sub/app:TaG_1",
            "quay.io",
            "org/sub/app",
            "TaG_1",
            "",
            false,
        ),
        ("[::1]:5000/app:v1", "[::1]:5000", "app", "v1", "", false),
    ];
    for (input, registry, repository, tag, digest, has_digest) in cases {
        let r = ImageReference::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(r.registry(), *registry, "{input}");
        assert_eq!(r.repository(), *repository, "{input}");
        assert_eq!(r.tag(), *tag, "{input}");
        assert_eq!(r.digest(), *digest, "{input}");
        assert_eq!(!r.digest().is_empty(), *has_digest, "{input}");
    }
    let hex = "a".repeat(64);
    let r = ImageReference::parse(&format!("nginx:1.25@sha256:{hex}")).unwrap();
    assert_eq!(r.tag(), "", "a tag next to a digest is dropped");
    assert_eq!(r.digest(), format!("sha256:{hex}"));
    assert_eq!(r.identifier(), format!("sha256:{hex}"));
    assert_eq!(r.repository(), "library/nginx");
    assert_eq!(
        r.name(),
        format!("index.docker.io/library/nginx@sha256:{hex}")
    );
    let r = ImageReference::parse(&format!("registry.k8s.io/pause@sha256:{hex}")).unwrap();
    assert_eq!(
        (r.registry(), r.repository().as_str()),
        ("registry.k8s.io", "pause")
    );
}

#[test]
fn bad_image_references_are_errors() {
    let long_tag = format!("nginx:{}", "a".repeat(129));
    let long_repo = "a".repeat(256);
    for bad in [
        "",
        "a",                // a repository has at least two characters
        "Nginx",            // upper case
        "nginx:bad/tag:",   // empty tag after a port-like part
        "nginx@sha256:abc", // short digest
        "nginx@md5:0123",   // unsupported algorithm
        "nginx@@sha256:x",
        "my registry.io/app", // space in the registry
        "host:port/app",      // non-numeric port
        "user@host.io/app",
        "ghcr.io/app?x=1",
        &long_tag,
        &long_repo,
        "nginx:1.0 ",
        "\u{0}",
    ] {
        assert!(ImageReference::parse(bad).is_err(), "{bad:?} parsed");
        assert_eq!(
            run(&format!(
                "isImage({})",
                celer_cel::format::to_cel(&Value::string(bad))
            )),
            "false",
            "{bad:?}"
        );
    }
    assert_eq!(
        run("image('Nginx')"),
        "error: could not parse reference: Nginx"
    );
    assert_eq!(
        run("parseImageReference('a').registry()"),
        "error: could not parse reference: a"
    );
}

#[test]
fn image_functions_in_expressions() {
    check_true(&[
        "image('nginx').registry() == 'index.docker.io'",
        "parseImageReference('ghcr.io/a/b:1').repository() == 'a/b'",
        "parseImageReference('ghcr.io/a/b:1').identifier() == '1'",
        "parseImageReference('ghcr.io/a/b').tag() == 'latest'",
        "!parseImageReference('ghcr.io/a/b').containsDigest()",
        "parseImageReference('ghcr.io/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef').containsDigest()",
        "isImage('nginx') && !isImage('NGINX')",
        "image('nginx') == image('nginx')",
        "image('nginx') != image('docker.io/nginx')",
        "input.?spec.containers.orValue([]).all(c, isImage(c.image))",
    ]);
    assert_eq!(
        run_with(
            "input.containers.map(c, image(c.image).registry())",
            r#"{"containers": [{"image": "nginx"}, {"image": "gcr.io/x/y:1"}]}"#,
            None
        ),
        r#"["index.docker.io","gcr.io"]"#
    );
}

// ----- user -----

#[test]
fn service_accounts() {
    assert_eq!(
        run("parseServiceAccount('system:serviceaccount:kube-system:builder')"),
        r#"{"Name":"builder","Namespace":"kube-system"}"#
    );
    assert_eq!(
        run("user.parseServiceAccount('system:serviceaccount:ns:a:b')"),
        r#"{"Name":"a:b","Namespace":"ns"}"#
    );
    for other in [
        "alice",
        "system:serviceaccount:",
        "system:serviceaccount:nocolon",
        "",
    ] {
        assert_eq!(
            run(&format!("parseServiceAccount('{other}')")),
            r#"{"Name":"","Namespace":""}"#,
            "{other}"
        );
    }
    check_true(&["parseServiceAccount('system:serviceaccount:a:b').Namespace == 'a'"]);
}

// ----- json / yaml -----

#[test]
fn json_round_trips_like_go() {
    // Go accepts an empty tag: `nginx:` is `nginx:latest`.
    assert_eq!(run("image('nginx:').tag()"), "\"latest\"");
    assert_eq!(
        run(r#"json.unmarshal('{"b": 1, "a": [true, null, "x"]}')"#),
        r#"{"a":[true,null,"x"],"b":1.0}"#
    );
    check_true(&[
        r#"json.unmarshal('{"n": 2}').n == 2"#,
        r#"type(json.unmarshal('{"n": 2}').n) == double"#,
        r#"json.unmarshal('"s"') == "s""#,
        r#"json.marshal({"b": dyn(1), "a": dyn(2.5), "c": dyn([dyn(1.0), dyn("<x>")])}) == '{"a":2.5,"b":1,"c":[1,"\\u003cx\\u003e"]}'"#,
        r#"json.marshal(json.unmarshal('{"z": 1e21, "y": 0.0000001}')) == '{"y":1e-7,"z":1e+21}'"#,
        r#"json.marshal(b'hi') == '"aGk="'"#,
        r#"json.marshal(null) == 'null'"#,
    ]);
    for bad in [
        r#"json.unmarshal('{')"#,
        r#"json.unmarshal('')"#,
        r#"json.unmarshal('[1] x')"#,
        "json.unmarshal(1)",
    ] {
        assert!(run(bad).starts_with("error: "), "{bad}: {}", run(bad));
    }
    assert!(run("json.marshal({1: 2})").starts_with("error: json: unsupported map key"));
    assert!(run("json.marshal(1.0/0.0)").starts_with("error: json: unsupported value"));
}

#[test]
fn yaml_parses_the_first_document() {
    assert_eq!(
        run("yaml.parse('a: 1\\nb: [x, true]\\n')"),
        r#"{"a":1.0,"b":["x",true]}"#
    );
    assert_eq!(run("yaml.parse('')"), "null");
    assert_eq!(run("yaml.parse('a: 1\\n---\\nb: 2\\n')"), r#"{"a":1.0}"#);
    assert_eq!(
        run("yaml.parse('1: one\\ntrue: yes')"),
        r#"{"1":"one","true":"yes"}"#
    );
    assert!(run("yaml.parse('a: [')").starts_with("error: yaml:"));
    assert_eq!(
        run("yaml.parse('a: 0x1F\\nb: 1e3\\nc: 0o17\\nf: ~\\ng: 2024-01-01\\n')"),
        r#"{"a":31.0,"b":1000.0,"c":15.0,"f":null,"g":"2024-01-01"}"#
    );
    assert_eq!(
        run("yaml.parse('d: .inf')"),
        "error: error converting YAML to JSON: json: unsupported value: +Inf"
    );
    let deep = "[".repeat(10_000);
    assert_eq!(
        run(&format!("yaml.parse('{deep}')")),
        "error: yaml: exceeded max depth of 128"
    );
    // Brackets in quoted scalars and comments do not count; quotes inside words do not open one.
    let yaml = |text: String, expr: &str| {
        run_with(expr, &serde_json::json!({ "s": text }).to_string(), None)
    };
    let quoted = format!(
        "a: \"{}\"\nb: it's\nc: [x] # {}\nd: '{}'\n",
        "[".repeat(500),
        "{".repeat(500),
        "[".repeat(500)
    );
    assert_eq!(yaml(quoted, "yaml.parse(input.s).c"), r#"["x"]"#);
    let alternating = "[ \"]\" ".repeat(200);
    assert!(
        yaml(alternating, "yaml.parse(input.s)").starts_with("error: yaml: exceeded max depth")
    );
    // Aliases expanding exponentially are refused, not expanded.
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\\n");
    for i in 0..12 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("l{}", i - 1)
        };
        bomb.push_str(&format!("l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\\n"));
    }
    let out = run(&format!("size(yaml.parse('{bomb}'))"));
    assert!(
        out.starts_with("error: ") || out.len() < 10,
        "{}",
        &out[..out.len().min(80)]
    );
}

// ----- hash, math, transform, gzip, base64 -----

#[test]
fn hashes_are_lowercase_hex() {
    check_true(&[
        "sha256('') == 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        "hash.sha256('abc') == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'",
        "sha1('abc') == 'a9993e364706816aba3e25717850c26c9cd0d89d'",
        "hash.sha1('abc') == sha1('abc')",
        "md5('abc') == '900150983cd24fb0d6963f7d28e17f72'",
        "hash.md5('') == 'd41d8cd98f00b204e9800998ecf8427e'",
    ]);
}

#[test]
fn math_round_matches_go() {
    check_true(&[
        "math.round(1.2345, 2) == 1.23",
        "math.round(2.5, 0) == 3.0",
        "math.round(-2.5, 0) == -3.0",
        "math.round(1234.5, -2) == 1200.0",
        "math.round(0.125, 2) == 0.13",
        // cel-go's math extension, in Kyverno's environment.
        "math.round(2.5) == 3.0",
        "math.ceil(1.2) == 2.0 && math.floor(-1.2) == -2.0 && math.trunc(-1.7) == -1.0",
        "math.abs(-3) == 3 && math.abs(2u) == 2u && math.abs(-1.5) == 1.5",
        "math.sign(-7) == -1 && math.sign(0u) == 0u && math.sign(2.5) == 1.0",
        "math.isNaN(0.0/0.0) && math.isInf(1.0/0.0) && math.isFinite(1.0)",
        "math.sqrt(16) == 4.0",
        "math.bitAnd(12, 10) == 8 && math.bitOr(12u, 3u) == 15u && math.bitXor(5, 1) == 4",
        "math.bitNot(0) == -1",
        "math.bitShiftLeft(1, 3) == 8 && math.bitShiftLeft(1, 64) == 0",
        "math.bitShiftRight(-1024, 3) == 2305843009213693824",
        "math.greatest(1, 2.5, 3u) == 3u && math.least([3, -1, 2]) == -1",
        "math.greatest(7) == 7",
    ]);
    assert_eq!(
        run("math.abs(-9223372036854775807 - 1)"),
        "error: integer overflow"
    );
    assert_eq!(
        run("math.greatest([])"),
        "error: math.greatest(list) argument must not be empty"
    );
    assert_eq!(
        run("math.bitShiftLeft(1, -1)"),
        "error: math.bitShiftLeft() negative offset: -1"
    );
    assert!(run("math.greatest(1, 'a')").starts_with("error:"));
}

#[test]
fn list_obj_to_map() {
    assert_eq!(
        run(r#"listObjToMap([{"name": "a"}, {"name": "b"}], [{"v": 1}, {"w": 2}], "name", "v")"#),
        r#"{"a":1,"b":null}"#
    );
    assert_eq!(
        run(r#"transform.listObjToMap([{"name": "a"}], [{"v": "x"}], "name", "v")"#),
        r#"{"a":"x"}"#
    );
    assert_eq!(
        run(r#"listObjToMap([{"name": "a"}], [], "name", "v")"#),
        "error: listObjToMap must take lists of equal length. list1: 1, list2: 0"
    );
    assert_eq!(
        run(r#"listObjToMap([{"name": 1}], [{"v": 1}], "name", "v")"#),
        "error: the passed key name cannot be handled as a string in the key object list"
    );
}

#[test]
fn gzip_and_base64() {
    check_true(&[
        "gzip.decompress(gzip.compress('hello world')) == 'hello world'",
        "gzip.compress('x') == gzip.compress('x')",
        "base64.encode(b'hello') == 'aGVsbG8='",
        "base64.decode('aGVsbG8=') == b'hello'",
        "base64.decode('aGVsbG8') == b'hello'",
        // The gzip mock of Kyverno's conformance test: a base64 gzip stream in a ConfigMap.
        "gzip.decompress(base64.decode(base64.encode(gzip.compress('init')))) == 'init'",
    ]);
    assert!(run("gzip.decompress(b'not gzip')").starts_with("error: gzip"));
    assert!(run("base64.decode('!!')").starts_with("error: illegal base64"));
    assert!(run("gzip.compress(1)").starts_with("error: no such overload"));
    // A small input that expands past the limit is refused.
    let mut big = Vec::new();
    {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(&mut big, flate2::Compression::best());
        e.write_all(&vec![b'a'; (gzip::MAX_DECOMPRESSED + 10) as usize])
            .unwrap();
        e.finish().unwrap();
    }
    let env = env();
    let mut act = Activation::new(&env);
    act.bind("input", Value::bytes(big)).unwrap();
    let e = env
        .compile("gzip.decompress(input)")
        .unwrap()
        .eval(&act)
        .unwrap_err();
    assert!(e.message().contains("exceeds"), "{e}");
}

#[test]
fn or_value_on_a_plain_value_returns_it() {
    check_true(&[
        "dyn([1]).orValue([]) == [1]",
        "optional.none().orValue(2) == 2",
        "optional.of(1).orValue(2) == 1",
        "{'a': 1}.?a.orValue(3) == 1",
    ]);
    assert_eq!(
        run_with("input.items.orValue([])", r#"{"items": [1]}"#, None),
        "[1]"
    );
}

#[test]
fn regex_extension() {
    check_true(&[
        r#"regex.replace("hello world hello", "hello", "hi") == "hi world hi""#,
        r#"regex.replace("foo bar", "(fo)o (ba)r", r'\2 \1') == "ba fo""#,
        r#"regex.replace("docker.io/myimage:latest", "^docker\\.io/", "myregistry.io/") == "myregistry.io/myimage:latest""#,
        r#"regex.replace("aaa", "a", "b", 2) == "bba""#,
        r#"regex.replace("aaa", "a", "b", 0) == "aaa""#,
        r#"regex.replace("a.b", "\\.", "\\\\") == "a\\b""#,
        r#"regex.extract("item-123", "[0-9]+") == optional.of("123")"#,
        r#"regex.extract("item-123", "item-([0-9]+)") == optional.of("123")"#,
        r#"!regex.extract("item", "[0-9]+").hasValue()"#,
        r#"regex.extractAll("a1 b22 c333", "[0-9]+") == ["1", "22", "333"]"#,
        r#"regex.extractAll("k=v, x=y", "([a-z])=") == ["k", "x"]"#,
    ]);
    assert_eq!(
        run(r#"regex.replace("abc", "b", "\\")"#),
        "error: invalid replacement string: '\\' \\ not allowed at end"
    );
    assert_eq!(
        run(r#"regex.replace("abc", "(b)", "\\2")"#),
        "error: replacement string references group 2 but regex has only 1 group(s)"
    );
    assert!(
        run(r#"regex.extract("ab", "(a)(b)")"#)
            .starts_with("error: regular expression has more than one capturing group")
    );
    assert!(run(r#"regex.extractAll("ab", "(")"#).starts_with("error: error parsing regexp"));
    // A search that would cost more than the per-expression limit is refused before it runs.
    let long = serde_json::json!({ "s": "a".repeat(100_000) }).to_string();
    assert_eq!(
        run_with("regex.extractAll(input.s, input.s)", &long, None),
        "error: operation cancelled: actual cost limit exceeded"
    );
}

// ----- random -----

#[test]
fn random_strings_match_their_pattern_and_are_not_folded() {
    let re = ::regex::Regex::new("^[0-9a-z]{8}$").unwrap();
    let env = env();
    let p = env.compile("random()").unwrap();
    let act = Activation::new(&env);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let v = p.eval(&act).unwrap();
        let s = v.as_str().unwrap().to_string();
        assert!(re.is_match(&s), "{s}");
        seen.insert(s);
    }
    assert!(seen.len() > 1, "random() was folded into a constant");
    let p = env.compile("random('(ab|cd)[x-z]{2,4}-[0-9]+')").unwrap();
    let re = ::regex::Regex::new("^(ab|cd)[x-z]{2,4}-[0-9]{1,11}$").unwrap();
    for _ in 0..50 {
        let v = p.eval(&act).unwrap();
        assert!(re.is_match(v.as_str().unwrap()), "{v:?}");
    }
    assert!(run("random.random('[a]{3}')") == "\"aaa\"");
    assert!(run("random('(')").starts_with("error: random:"));
    assert!(run("random('a{100000}')").starts_with("error: random: the output would exceed"));
    assert!(run("random('(a{1000}){1000}')").starts_with("error: random: the output would exceed"));
}

// ----- time -----

#[derive(Debug)]
struct FixedClock(celer_cel::time::Timestamp);
impl KyvernoContext for FixedClock {
    fn now(&self) -> Option<celer_cel::time::Timestamp> {
        Some(self.0)
    }
}

#[test]
fn time_functions() {
    check_true(&[
        "time.toCron(timestamp('2024-03-05T14:07:00Z')) == '7 14 5 3 2'",
        "time.truncate(timestamp('2024-03-05T14:07:09Z'), duration('1h')) == timestamp('2024-03-05T14:00:00Z')",
        "time.truncate(timestamp('2024-03-05T14:07:09Z'), duration('0s')) == timestamp('2024-03-05T14:07:09Z')",
        // Go truncates relative to year 1: a week boundary is a Monday.
        "time.truncate(timestamp('2024-03-07T10:00:00Z'), duration('168h')) == timestamp('2024-03-04T00:00:00Z')",
        "time.now() > timestamp('2024-01-01T00:00:00Z')",
    ]);
    let fixed = celer_cel::time::parse_timestamp("2030-01-02T03:04:05Z").unwrap();
    let values = ContextValues::new(Arc::new(FixedClock(fixed)));
    assert_eq!(
        run_with("time.now()", "{}", Some(&values)),
        "\"2030-01-02T03:04:05Z\""
    );
    assert_eq!(
        run_with("time.toCron(time.now())", "{}", Some(&values)),
        "\"4 3 2 1 3\""
    );
}

// ----- context-backed -----

fn memory() -> MemoryContext {
    let mut ctx = MemoryContext::new();
    let objects = [
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default", "labels": {"app": "x"}}, "data": {"k": "v"}}"#,
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "default"}, "data": {"n": 3}}"#,
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "prod"}}"#,
        r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}"#,
        r#"{"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"}}"#,
        r#"{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "default"}}"#,
    ];
    for o in objects {
        ctx.add_object(sonic_rs::from_str(o).unwrap()).unwrap();
    }
    let context_file = r#"{"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Context",
        "spec": {"images": [{"image": "nginx:1.21", "config": {"architecture": "amd64"}}]}}"#;
    ctx.add_context_file(&sonic_rs::from_str(context_file).unwrap())
        .unwrap();
    for entry in [
        r#"{"method": "GET", "url": "https://example.com/config", "response": {"statusCode": 200, "body": {"allowed": true}}}"#,
        r#"{"url": "https://example.com/any", "response": {"body": [1, 2]}}"#,
        r#"{"method": "POST", "url": "https://example.com/check", "response": {"statusCode": 403, "body": {"allowed": false}}}"#,
    ] {
        ctx.add_api_call_response(&sonic_rs::from_str(entry).unwrap())
            .unwrap();
    }
    let gce = r#"{"name": "gctxentry-deployments", "data": {"deployments": [{"name": "a"}, {"name": "b"}]},
        "projections": [{"name": "items", "path": "deployments"}]}"#;
    ctx.add_global_context_entry(&sonic_rs::from_str(gce).unwrap())
        .unwrap();
    ctx.set_global_context("plain", sonic_rs::from_str(r#"{"x": 1}"#).unwrap());
    ctx
}

#[test]
fn without_a_context_every_call_names_itself() {
    for (expr, function) in [
        (
            "resource.Get('v1', 'configmaps', 'default', 'cm')",
            "resource.Get",
        ),
        (
            "resource.get('v1', 'configmaps', 'default', 'cm')",
            "resource.Get",
        ),
        (
            "resource.List('v1', 'configmaps', 'default')",
            "resource.List",
        ),
        (
            "resource.list('v1', 'configmaps', 'default', {'a': 'b'})",
            "resource.List",
        ),
        (
            "resource.Post('v1', 'configmaps', 'default', {'a': 1})",
            "resource.Post",
        ),
        ("resource.ToGVR('v1', 'ConfigMap')", "resource.ToGVR"),
        ("http.Get('https://x')", "http.Get"),
        ("http.post('https://x', {'a': 1}, {'h': 'v'})", "http.Post"),
        ("http.Client('').Get('https://x')", "http.Get"),
        ("globalContext.Get('e', '')", "globalContext.Get"),
        ("globalContext.get('e')", "globalContext.Get"),
        ("image.GetMetadata('nginx')", "image.GetMetadata"),
        ("image.getMetadata('nginx')", "image.GetMetadata"),
    ] {
        let out = run(expr);
        assert!(
            out.starts_with(&format!("error: {function}: no context was supplied")),
            "{expr}: {out}"
        );
    }
    // A context without the data says the same.
    let values = ContextValues::new(Arc::new(FixedClock(
        celer_cel::time::Timestamp::new(0, 0).unwrap(),
    )));
    let out = run_with(
        "resource.Get('v1', 'configmaps', 'default', 'cm')",
        "{}",
        Some(&values),
    );
    assert!(
        out.starts_with("error: resource.Get: no context was supplied"),
        "{out}"
    );
}

#[test]
fn resources_from_memory() {
    let values = ContextValues::new(Arc::new(memory()));
    let r = |e: &str| run_with(e, r#"{"ns": "default"}"#, Some(&values));
    assert_eq!(
        r("resource.Get('v1', 'configmaps', input.ns, 'cm').data.k"),
        "\"v\""
    );
    assert_eq!(
        r("resource.get('v1', 'configmaps', 'default', 'missing')"),
        "null"
    );
    assert_eq!(
        r("resource.Get('v1', 'namespaces', '', 'prod').metadata.name"),
        "\"prod\""
    );
    assert_eq!(
        r("resource.Get('v1', 'configmaps', 'default', 'other').data.n"),
        "3"
    );
    assert_eq!(
        r("resource.List('v1', 'configmaps', 'default').items.map(i, i.metadata.name)"),
        r#"["cm","other"]"#
    );
    assert_eq!(r("resource.List('v1', 'configmaps', '').items.size()"), "3");
    assert_eq!(
        r("resource.list('v1', 'configmaps', 'default', {'app': 'x'}).items.size()"),
        "1"
    );
    assert_eq!(
        r(
            "resource.List('autoscaling/v1', 'horizontalpodautoscalers', 'default').items[0].metadata.name"
        ),
        "\"h\""
    );
    assert_eq!(
        r("resource.List('v1', 'secrets', 'default')"),
        "error: failed to list resource: secrets resource not found"
    );
    assert_eq!(
        r("resource.List('apps/v1', 'deployments', 'default')"),
        "error: failed to list resource: deployments.apps resource not found"
    );
    assert_eq!(
        r(
            "resource.Get(resource.ToGVR('networking.k8s.io/v1', 'IngressClass'), '', 'nginx').metadata.name"
        ),
        "\"nginx\""
    );
    assert_eq!(
        r("resource.List(resource.toGVR('v1', 'ConfigMap'), 'prod').items.size()"),
        "1"
    );
    assert_eq!(
        r(
            "resource.Post('v1', 'configmaps', 'ns1', {'metadata': {'name': 'new'}}).metadata.namespace"
        ),
        "\"ns1\""
    );
    // Namespaced policies: calls without a namespace use the policy's.
    let namespaced = ContextValues::namespaced(Arc::new(memory()), "prod");
    assert_eq!(
        run_with(
            "resource.Get('v1', 'configmaps', 'cm').metadata.namespace",
            "{}",
            Some(&namespaced)
        ),
        "\"prod\""
    );
    assert_eq!(
        run_with(
            "resource.List('v1', 'configmaps').items.size()",
            "{}",
            Some(&namespaced)
        ),
        "1"
    );
}

#[test]
fn http_global_context_and_image_data_from_memory() {
    let values = ContextValues::new(Arc::new(memory()));
    let r = |e: &str| run_with(e, "{}", Some(&values));
    assert_eq!(
        r("http.Get('https://example.com/config').body.allowed"),
        "true"
    );
    assert_eq!(
        r("http.get('https://example.com/config').statusCode"),
        "200"
    );
    assert_eq!(
        r("http.Get('https://example.com/any', {'Authorization': 'x'}).body"),
        "[1,2]"
    );
    assert_eq!(
        r("http.Post('https://example.com/any', {'a': 1}).statusCode"),
        "200"
    );
    assert_eq!(
        r(
            "http.Client('-----BEGIN CERTIFICATE-----').post('https://example.com/check', {}).statusCode"
        ),
        "403"
    );
    assert_eq!(
        r("http.Get('https://example.com/check')"),
        "error: request failed: no mocked response for GET https://example.com/check"
    );
    assert_eq!(
        r("size(globalContext.Get('gctxentry-deployments', '').items)"),
        "2"
    );
    assert_eq!(
        r("globalContext.get('gctxentry-deployments', 'items')[1].name"),
        "\"b\""
    );
    assert_eq!(r("globalContext.Get('plain')"), r#"{"x":1}"#);
    assert_eq!(r("globalContext.Get('missing', '')"), "null");
    assert_eq!(
        r("globalContext.Get('plain', 'nope')"),
        "error: failed to get global reference: projection \"nope\" not found in global context entry \"plain\""
    );
    assert_eq!(
        r("image.GetMetadata('nginx:1.21').config.architecture"),
        "\"amd64\""
    );
    assert_eq!(
        r(
            r#"image.GetMetadata('nginx:1.21') == {"image": dyn("nginx:1.21"), "resolvedImage": dyn(""), "registry": dyn(""), "repository": dyn(""), "config": dyn({"architecture": "amd64"})}"#
        ),
        "true"
    );
    assert_eq!(
        r("image.getMetadata('busybox')"),
        "error: failed to get image data: image data for busybox not found in the context"
    );
    // `image(...)` the function and `image` the variable live side by side.
    assert_eq!(
        r("image('nginx:1.21').tag() + image.GetMetadata('nginx:1.21').image"),
        "\"1.21nginx:1.21\""
    );
}

#[test]
fn guessed_resources() {
    for (kind, resource) in [
        ("Pod", "pods"),
        ("Ingress", "ingresses"),
        ("NetworkPolicy", "networkpolicies"),
        ("Endpoints", "endpoints"),
        ("HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    ] {
        assert_eq!(memory::guess_resource(kind), resource);
    }
}

#[test]
fn results_type_check_like_kyverno() {
    let env = env();
    for (expr, ty) in [
        ("image('nginx')", "kyverno.image"),
        ("image('nginx').registry()", "string"),
        ("resource.Get('v1', 'pods', 'a', 'b')", "map(string, dyn)"),
        ("resource.ToGVR('v1', 'Pod')", "schema.GroupVersionResource"),
        ("http.Get('u')", "dyn"),
        ("http.Client('ca')", "http.Context"),
        ("json.marshal({})", "string"),
        ("yaml.parse('')", "dyn"),
        ("x509.decode('')", "dyn"),
        ("time.now()", "google.protobuf.Timestamp"),
        ("random()", "string"),
        ("math.round(1.0, 1)", "double"),
        ("parseServiceAccount('x')", "map(string, string)"),
        ("gzip.compress('x')", "bytes"),
    ] {
        let t = env.check(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(t.to_string(), ty, "{expr}");
    }
    for bad in [
        "math.round(1, 1)",
        "image(1)",
        "resource.Get('v1')",
        "json.foo('x')",
        "http.Get(1)",
    ] {
        assert!(env.check(bad).is_err(), "{bad} checked");
    }
}

fn addr(i: &celer_cel::library::Impl) -> usize {
    use celer_cel::library::Impl;
    match i {
        Impl::Unary(f) => *f as usize,
        Impl::Binary(f) => *f as usize,
        Impl::Ternary(f) => *f as usize,
        Impl::Nary(f) => *f as usize,
    }
}

#[test]
fn no_kyverno_function_replaces_a_kubernetes_one() {
    let base = Env::kubernetes();
    let env = env();
    for name in env.registry().names() {
        let (Some(before), Some(after)) = (base.registry().get(name), env.registry().get(name))
        else {
            continue;
        };
        if name == "orValue" {
            continue; // replaced on purpose: Kyverno's compatibility behaviour
        }
        for key in before.impls.keys() {
            assert!(
                after.impls.get(key).map(addr) == before.impls.get(key).map(addr),
                "{name} {key:?} replaced"
            );
        }
    }
}

#[test]
fn activations_without_kyverno_bindings_still_run_the_pure_functions() {
    // Values bound by default do not leak into an environment without the libraries.
    let base = Env::kubernetes();
    assert!(base.variables().slot("json").is_none());
    let env = env();
    let mut buffers = celer_cel::ActivationBuffers::default();
    for _ in 0..3 {
        let act = Activation::with_buffers(&env, std::mem::take(&mut buffers));
        let p = env.compile("json.marshal(yaml.parse('a: 1'))").unwrap();
        assert_eq!(p.eval(&act).unwrap().as_str(), Some(r#"{"a":1}"#));
        buffers = act.into_buffers();
    }
    assert!(same(&Value::Int(1), &Value::Int(1)));
}

#[test]
fn costs_grow_with_input_and_context_calls_cost_a_flat_charge() {
    let env = env();
    let cost = |expr: &str, input: &str| {
        let json: Json = sonic_rs::from_str(input).unwrap();
        let mut act = Activation::new(&env);
        act.bind_json("input", &json).unwrap();
        env.compile(expr).unwrap().evaluate(&act, None).cost
    };
    let short = cost("sha256(input.s)", r#"{"s": "a"}"#);
    let long = cost(
        "sha256(input.s)",
        &format!(r#"{{"s": "{}"}}"#, "a".repeat(10_000)),
    );
    assert!(long >= short + 990, "{short} {long}");
    let values = ContextValues::new(Arc::new(memory()));
    let mut act = Activation::new(&env);
    act.bind("input", Value::Null).unwrap();
    values.bind(&mut act);
    let lookup = env
        .compile("resource.Get('v1', 'pods', 'a', 'b')")
        .unwrap()
        .evaluate(&act, None)
        .cost;
    assert!(lookup >= context::CONTEXT_CALL_COST, "{lookup}");
    let parse = cost(
        "yaml.parse(input.s)",
        &format!(r#"{{"s": "{}"}}"#, "a".repeat(10_000)),
    );
    assert!(parse >= 1000, "{parse}");
}

#[test]
fn kyverno_values_flow_through_policy_variables() {
    let mut env = env();
    env.enable_lazy_variables();
    let img = env.compile("image(input.image)").unwrap();
    env.declare_lazy("img", img.result_type().clone());
    let sa = env.compile("parseServiceAccount(input.user)").unwrap();
    env.declare_lazy("sa", sa.result_type().clone());
    let check = env
        .compile("variables.img.registry() == 'ghcr.io' && variables.sa.Namespace == 'ns' && !variables.img.containsDigest()")
        .unwrap();
    let json: Json =
        sonic_rs::from_str(r#"{"image": "ghcr.io/a/b:1", "user": "system:serviceaccount:ns:x"}"#)
            .unwrap();
    let mut act = Activation::new(&env);
    act.bind_json("input", &json).unwrap();
    act.bind_lazy("img", &img).unwrap();
    act.bind_lazy("sa", &sa).unwrap();
    assert!(matches!(check.eval(&act), Ok(Value::Bool(true))));
}

#[test]
fn enabling_twice_changes_nothing() {
    let once = env();
    let mut twice = env();
    twice.enable_kyverno_libraries();
    assert_eq!(once.variables().len(), twice.variables().len());
    for name in once.registry().names() {
        assert_eq!(
            once.registry().get(name).map(|f| f.overloads.len()),
            twice.registry().get(name).map(|f| f.overloads.len()),
            "{name}"
        );
    }
    assert_eq!(
        twice.check("image('nginx').registry()").unwrap(),
        Type::String
    );
}

// ----- generator -----

#[derive(Debug, Default)]
struct Recording(parking_lot::Mutex<Vec<(String, Json)>>);
impl KyvernoContext for Recording {
    fn generate(&self, namespace: &str, objects: Vec<Json>) -> Result<(), ContextError> {
        let mut taken = self.0.lock();
        taken.extend(objects.into_iter().map(|o| (namespace.to_string(), o)));
        Ok(())
    }
}

#[test]
fn generator_apply_hands_the_objects_to_the_host() {
    let recording = Arc::new(Recording::default());
    let values = ContextValues::new(recording.clone());
    let expr = "generator.Apply('team-a', [{'apiVersion': dyn('v1'), 'kind': dyn('ConfigMap'), 'metadata': dyn({'name': 'x'})}, {'apiVersion': dyn('v1'), 'kind': dyn('Secret'), 'metadata': dyn({'name': input.n})}])";
    assert_eq!(run_with(expr, r#"{"n": "s"}"#, Some(&values)), "true");
    let taken = recording.0.lock().clone();
    assert_eq!(taken.len(), 2);
    assert_eq!(taken[0].0, "team-a");
    assert_eq!(
        sonic_rs::JsonValueTrait::as_str(&taken[1].1["metadata"]["name"]),
        Some("s")
    );
    // The camelCase name too (Kyverno 1.18 and later).
    assert_eq!(
        run_with("generator.apply('', [])", "{}", Some(&values)),
        "true"
    );
    // Without a host that generates, a clear error.
    assert!(
        run("generator.Apply('x', [])")
            .starts_with("error: generator.Apply: no context was supplied")
    );
}

#[test]
fn a_namespaced_policy_generates_into_its_own_namespace_only() {
    let recording = Arc::new(Recording::default());
    let values = ContextValues::namespaced(recording.clone(), "team-a");
    let one =
        "[{'apiVersion': dyn('v1'), 'kind': dyn('ConfigMap'), 'metadata': dyn({'name': 'x'})}]";
    assert_eq!(
        run_with(&format!("generator.Apply({one})"), "{}", Some(&values)),
        "true"
    );
    assert_eq!(recording.0.lock()[0].0, "team-a");
    let elsewhere = run_with(
        &format!("generator.Apply('team-b', {one})"),
        "{}",
        Some(&values),
    );
    assert!(
        elsewhere.contains("cannot generate resources into namespace \"team-b\""),
        "{elsewhere}"
    );
}
