//! `celer cel eval` end to end: the built binary, its output, messages and exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;
use common::Run;

/// Runs in the test's own directory (the crate's).
fn celer(args: &[&str]) -> Run {
    common::celer_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn eval(args: &[&str]) -> Run {
    let mut all = vec!["cel", "eval"];
    all.extend_from_slice(args);
    celer(&all)
}

/// Asserts success and returns stdout.
fn ok(args: &[&str]) -> String {
    let run = eval(args);
    assert_eq!(run.code, 0, "{args:?}: stderr: {}", run.stderr);
    assert_eq!(run.stderr, "", "{args:?}");
    run.stdout
}

/// A directory of its own under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("celer-cel-eval-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, contents: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// `ok` in the standard environment, which allows list and map literals that mix types.
fn ok_std(args: &[&str]) -> String {
    ok(&[&["--env", "standard"], args].concat())
}

// ---- output formats ----

#[test]
fn prints_json_by_default() {
    assert_eq!(ok(&["1 + 2"]), "3\n");
    assert_eq!(ok(&["'a' + 'b'"]), "\"ab\"\n");
    assert_eq!(ok(&["3u"]), "3\n");
    assert_eq!(ok(&["2.0 * 2.0"]), "4.0\n");
    assert_eq!(ok(&["null"]), "null\n");
    assert_eq!(ok(&["1 < 2"]), "true\n");
}

#[test]
fn json_output_is_pretty_and_keeps_map_order() {
    let out = ok_std(&[r#"{"b": [1, 2u], "a": {"x": null}, "e": []}"#]);
    assert_eq!(
        out,
        "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {\n    \"x\": null\n  },\n  \"e\": []\n}\n"
    );
}

#[test]
fn json_mapping_of_special_values() {
    assert_eq!(ok(&["b'hi'"]), "\"aGk=\"\n");
    assert_eq!(ok(&["type(1)"]), "\"int\"\n");
    assert_eq!(ok(&[r#"double("NaN")"#]), "\"NaN\"\n");
    assert_eq!(ok(&["--", r#"-double("Infinity")"#]), "\"-Infinity\"\n");
    assert_eq!(
        ok_std(&["{1: 'a', true: 'b'}"]),
        "{\n  \"1\": \"a\",\n  \"true\": \"b\"\n}\n"
    );
    assert_eq!(
        ok(&[r#"timestamp("2023-01-02T03:04:05.5Z")"#]),
        "\"2023-01-02T03:04:05.5Z\"\n"
    );
    assert_eq!(ok(&[r#"duration("90s")"#]), "\"90s\"\n");
}

#[test]
fn colliding_json_keys_fail_and_cel_output_still_works() {
    let run = eval(&["--env", "standard", "{1: 'a', '1': 'b'}"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("\"1\""), "{}", run.stderr);
    assert!(run.stderr.contains("--output cel"), "{}", run.stderr);
    assert_eq!(
        ok_std(&["--output", "cel", "{1: 'a', '1': 'b'}"]),
        "{1: \"a\", \"1\": \"b\"}\n"
    );
}

#[test]
fn prints_cel_literals() {
    assert_eq!(ok(&["-o", "cel", "1 + 2"]), "3\n");
    assert_eq!(ok(&["--output", "cel", "3u"]), "3u\n");
    assert_eq!(ok(&["--output", "cel", "2.0"]), "2.0\n");
    assert_eq!(
        ok(&["--output", "cel", r#"'say "hi"\n'"#]),
        "\"say \\\"hi\\\"\\n\"\n"
    );
    assert_eq!(ok(&["--output", "cel", r#"b"\x00a""#]), "b\"\\x00a\"\n");
    assert_eq!(
        ok_std(&["--output", "cel", r#"{"b": 1u, "a": [true, null], 2: 'x'}"#]),
        "{2: \"x\", \"a\": [true, null], \"b\": 1u}\n"
    );
    assert_eq!(ok(&["--output", "cel", "type(1u)"]), "uint\n");
    assert_eq!(
        ok(&["--output", "cel", r#"duration("1.5s")"#]),
        "duration(\"1.5s\")\n"
    );
}

#[test]
fn cel_output_evaluates_back_to_the_same_value() {
    for expr in [
        "[1, -2, 3u, 2.5, -0.0, 1e300, 1.0 / 3.0, -9223372036854775807 - 1, 18446744073709551615u]",
        r#"["", "a\"b'c\\d\n\t\r\u0001\u007f", "é 日本 ✓"]"#,
        r#"[b"", b"\x00\xff\"\\abc", bytes("é")]"#,
        r#"{"b": [null], 1: true, false: 1u, 2u: {"x": {}}, -1: []}"#,
        r#"[double("NaN"), double("Infinity"), -double("Infinity")]"#,
        r#"[timestamp("2023-01-02T03:04:05.123456789Z"), duration("-1.5s"), duration("0s")]"#,
        "[int, uint, double, string, bytes, bool, list, map, null_type, type]",
        "[optional.of([1]), optional.none()]",
    ] {
        let first = ok_std(&["--output", "cel", expr]);
        let second = ok_std(&["--output", "cel", first.trim_end()]);
        assert_eq!(first, second, "{expr}");
    }
}

#[test]
fn kubernetes_environment_by_default() {
    // Kubernetes rejects literals that mix types; the standard environment allows them.
    let run = eval(&["[1, 'a']"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("ERROR: <input>:1:"),
        "{}",
        run.stderr
    );
    assert_eq!(ok_std(&["--output", "cel", "[1, 'a']"]), "[1, \"a\"]\n");
    // JSON data may mix types freely in either.
    assert_eq!(
        ok(&["--output", "cel", "x", "--var", r#"x=[1, "a"]"#]),
        "[1, \"a\"]\n"
    );
    let run = eval(&["1", "--env", "go"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn expression_starting_with_a_dash_after_double_dash() {
    assert_eq!(ok(&["--", "-1 + 2"]), "1\n");
}

// ---- variables ----

#[test]
fn variables_from_inline_json_and_yaml() {
    assert_eq!(ok(&["x + 1", "--var", "x=42"]), "43\n");
    assert_eq!(
        ok(&["--var", r#"o={"a": {"b": [1, 2]}}"#, "o.a.b[1]"]),
        "2\n"
    );
    assert_eq!(ok(&["s + '!'", "--var", "s=hello"]), "\"hello!\"\n");
    assert_eq!(
        ok(&["s", "--var", r#"s="@not-a-file""#]),
        "\"@not-a-file\"\n"
    );
    assert_eq!(ok(&["o.a", "--var", "o={a: 1}"]), "1\n");
    assert_eq!(
        ok(&[
            "--output", "cel", "[x, y]", "--var", "x=1.5", "--var", "y=[true]"
        ]),
        "[1.5, [true]]\n"
    );
}

#[test]
fn variables_from_json_and_yaml_files() {
    let dir = TempDir::new();
    let json = dir.file("o.json", r#"{"items": [{"n": 1}, {"n": 2}]}"#);
    let yaml = dir.file("o.yaml", "items:\n  - n: 3\n  - n: 4\n");
    // YAML content in a file without a YAML extension still reads.
    let yaml_txt = dir.file("o.txt", "items:\n  - n: 5\n");
    assert_eq!(
        ok(&["o.items.map(i, i.n)", "--var", &format!("o=@{json}")]),
        "[\n  1,\n  2\n]\n"
    );
    assert_eq!(ok(&["o.items[1].n", "--var", &format!("o=@{yaml}")]), "4\n");
    assert_eq!(
        ok(&["o.items[0].n", "--var", &format!("o=@{yaml_txt}")]),
        "5\n"
    );
    assert_eq!(
        ok(&[
            "a.items.size() + b.items.size()",
            "--var",
            &format!("a=@{json}"),
            "--var",
            &format!("b=@{yaml}"),
        ]),
        "4\n"
    );
}

#[test]
fn documents_keep_their_key_order() {
    let dir = TempDir::new();
    let yaml = dir.file("o.yaml", "z: 1\nm:\n  y: true\n  b: null\na: x\n");
    let json = dir.file(
        "o.json",
        r#"{"z": 1, "m": {"y": true, "b": null}, "a": "x"}"#,
    );
    let expected =
        "{\n  \"z\": 1,\n  \"m\": {\n    \"y\": true,\n    \"b\": null\n  },\n  \"a\": \"x\"\n}\n";
    assert_eq!(ok(&["o", "--var", &format!("o=@{yaml}")]), expected);
    assert_eq!(ok(&["o", "--var", &format!("o=@{json}")]), expected);
}

#[test]
fn kubernetes_pod_policy() {
    let pod = example("pod.yaml");
    let expr = "object.spec.containers.all(c, has(c.securityContext) && c.securityContext.privileged == false)";
    assert_eq!(ok(&[expr, "--var", &format!("object=@{pod}")]), "true\n");

    let dir = TempDir::new();
    let privileged = dir.file(
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: a\n      securityContext:\n        privileged: false\n    - name: b\n      image: b\n      securityContext:\n        privileged: true\n",
    );
    assert_eq!(
        ok(&[expr, "--var", &format!("object=@{privileged}")]),
        "false\n"
    );
    let no_context = dir.file(
        "bare.yaml",
        "spec:\n  containers:\n    - name: a\n      image: a\n",
    );
    assert_eq!(
        ok(&[expr, "--var", &format!("object=@{no_context}")]),
        "false\n"
    );
}

#[test]
fn readme_example() {
    let pod = example("pod.yaml");
    let expr = r#"object.spec.containers.all(c, c.image.startsWith("registry.example/"))"#;
    assert_eq!(ok(&[expr, "--var", &format!("object=@{pod}")]), "true\n");
}

// ---- errors and exit codes ----

#[test]
fn parse_error_exits_2_with_position_and_caret() {
    let run = eval(&["1 + (2"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("ERROR: <input>:1:"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("\n | 1 + (2\n | "), "{}", run.stderr);
    assert!(run.stderr.contains('^'), "{}", run.stderr);

    let run = eval(&["true &&\n  1 +"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("ERROR: <input>:2:"),
        "{}",
        run.stderr
    );
}

#[test]
fn undeclared_variable_exits_2() {
    let run = eval(&["y + 1", "--var", "x=1"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("ERROR: <input>:1:1:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("undeclared reference to 'y'"),
        "{}",
        run.stderr
    );
}

#[test]
fn evaluation_error_exits_1() {
    let run = eval(&["1 / 0"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "error: division by zero\n");

    let run = eval(&["o.missing", "--var", "o={}"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: no such key: missing"),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_file_exits_2_naming_var_and_file() {
    let dir = TempDir::new();
    let missing = dir.0.join("nope.yaml");
    let missing = missing.to_str().unwrap();
    let run = eval(&["object", "--var", &format!("object=@{missing}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: --var object: cannot read file "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(missing), "{}", run.stderr);
}

#[test]
fn malformed_yaml_exits_2_naming_var_and_file() {
    let dir = TempDir::new();
    let bad = dir.file("bad.yaml", "spec:\n  containers: [a, b\n");
    let run = eval(&["object", "--var", &format!("object=@{bad}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: --var object: file "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&bad), "{}", run.stderr);
    assert!(run.stderr.contains("not valid YAML"), "{}", run.stderr);

    let bad_json = dir.file("bad.json", r#"{"a": [1, 2"#);
    let run = eval(&["object", "--var", &format!("object=@{bad_json}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(&bad_json), "{}", run.stderr);
    assert!(run.stderr.contains("neither valid JSON"), "{}", run.stderr);
}

#[test]
fn empty_and_multi_document_files_exit_2() {
    let dir = TempDir::new();
    let empty = dir.file("empty.json", "");
    let run = eval(&["o", "--var", &format!("o=@{empty}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(&empty), "{}", run.stderr);
    assert!(run.stderr.contains("empty"), "{}", run.stderr);

    let multi = dir.file("multi.yaml", "a: 1\n---\nb: 2\n");
    let run = eval(&["o", "--var", &format!("o=@{multi}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(&multi), "{}", run.stderr);
    assert!(run.stderr.contains("2 YAML documents"), "{}", run.stderr);
}

#[test]
fn bad_inline_value_exits_2() {
    let run = eval(&["o", "--var", r#"o={"a": [1"#]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: --var o: neither valid JSON"),
        "{}",
        run.stderr
    );
}

#[test]
fn deeply_nested_input_is_refused() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let run = eval(&["x", "--var", &format!("x={deep}")]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("nested deeper than"), "{}", run.stderr);
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        vec!["x", "--var", "x"],
        vec!["x", "--var", "1x=1"],
        vec!["x", "--var", "x=@"],
        vec!["1", "--output", "yaml"],
        vec!["1", "--bogus"],
        vec![],
    ] {
        let run = eval(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("error"), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    let run = eval(&["x", "--var", "x=1", "--var", "x=2"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr, "error: --var x: given more than once\n");
}

#[test]
fn help_explains_with_an_example() {
    let run = eval(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("--var"), "{}", run.stdout);
    assert!(run.stdout.contains("--output"), "{}", run.stdout);
    assert!(run.stdout.contains("Examples:"), "{}", run.stdout);
    assert!(run.stdout.contains("Exit status"), "{}", run.stdout);
}

#[test]
fn cost_is_reported_and_limited() {
    let run = eval(&["--cost", "[1, 2, 3].exists(x, x == 2)"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "true");
    assert_eq!(run.stderr.trim(), "cost: 26");

    let run = eval(&[
        "--cost",
        "--cost-limit",
        "10",
        "[1, 2, 3].exists(x, x == 2)",
    ]);
    assert_eq!(run.code, 1);
    let reported: u64 = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("cost: "))
        .and_then(|n| n.parse().ok())
        .expect("a cost line");
    assert!(reported > 10, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("operation cancelled: actual cost limit exceeded"),
        "{}",
        run.stderr
    );

    // The Kubernetes environment applies Kubernetes' per-expression limit by default.
    let ten = "[0,1,2,3,4,5,6,7,8,9]";
    let hostile = format!(
        "{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, true))))))"
    );
    let run = eval(&[&hostile]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("cost limit exceeded"), "{}", run.stderr);
}
