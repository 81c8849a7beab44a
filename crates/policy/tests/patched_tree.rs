//! The mutating dispatcher keeps the object as a patch tree between mutations
//! (`mutation::patched`) instead of writing it out as JSON after each. These properties check
//! that it gives what the JSON way gives, patch after patch: the same outcome (changed,
//! unchanged, failed test, or the same error), the same object text (member order included),
//! and the same response patch (`Patched::diff_from` against `diff::diff`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use celer_policy::mutation::diff::{diff, to_text};
use celer_policy::mutation::json_patch::{self, Applied};
use celer_policy::mutation::patched::{Patch, Patched};
use proptest::prelude::*;

/// Keys that make paths collide, need escaping, or look like indices.
const KEYS: [&str; 6] = ["a", "b", "c", "d/e", "f~g", "0"];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(&KEYS[..]).prop_map(str::to_string)
}

fn quoted(key: &str) -> String {
    sonic_rs::to_string(key).unwrap()
}

/// Small JSON values as text: numbers spelled as integers or floats, strings, containers.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("1".to_string()),
        Just("1.0".to_string()),
        Just("2.5".to_string()),
        Just("\"x\"".to_string()),
        Just("\"y\"".to_string()),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key(), inner), 0..4).prop_map(|members| object(&members)),
        ]
    })
}

/// An object's text, each key once (its first member kept). Objects that repeat a key never
/// reach a patch: `AdmissionReview::parse` and `document::parse` refuse them, and sonic-rs's
/// `==` on such objects is not symmetric (it compares first members by key, from the left
/// operand's keys), so the two ways of deciding "unchanged" may differ on them.
fn object(members: &[(String, String)]) -> String {
    let mut seen = std::collections::HashSet::new();
    let members: Vec<String> = members
        .iter()
        .filter(|(k, _)| seen.insert(k.clone()))
        .map(|(k, v)| format!("{}:{v}", quoted(k)))
        .collect();
    format!("{{{}}}", members.join(","))
}

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec((key(), value()), 1..5).prop_map(|members| object(&members))
}

/// Pointers: escaped keys and indices, one to three deep, and a few odd ones.
fn pointer() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        key().prop_map(|k| k.replace('~', "~0").replace('/', "~1")),
        Just("0".to_string()),
        Just("1".to_string()),
        Just("-".to_string()),
        Just("-1".to_string()),
    ];
    prop_oneof![
        8 => prop::collection::vec(token, 1..4).prop_map(|t| format!("/{}", t.join("/"))),
        1 => Just(String::new()),
        1 => Just("a/b".to_string()),
    ]
}

fn operation() -> impl Strategy<Value = String> {
    let op = prop::sample::select(&["add", "remove", "replace", "move", "copy", "test"][..]);
    (op, pointer(), pointer(), value()).prop_map(|(op, path, from, value)| match op {
        "remove" => format!(r#"{{"op":"remove","path":{}}}"#, quoted(&path)),
        "move" | "copy" => format!(
            r#"{{"op":"{op}","from":{},"path":{}}}"#,
            quoted(&from),
            quoted(&path)
        ),
        _ => format!(
            r#"{{"op":"{op}","path":{},"value":{value}}}"#,
            quoted(&path)
        ),
    })
}

/// Mostly single operations (the dispatcher's fast path), some longer patches.
fn patch() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => operation().prop_map(|op| format!("[{op}]")),
        1 => prop::collection::vec(operation(), 2..4).prop_map(|ops| format!("[{}]", ops.join(","))),
    ]
}

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

/// What the dispatcher did with JSON: apply, keep the result if it `!=` the object.
fn reference(object: &Json, patch: &Json) -> Result<(Json, Patch), String> {
    let mut doc = object.clone();
    match json_patch::apply_json(&mut doc, patch).map_err(|e| e.to_string())? {
        Applied::TestFailed => Ok((object.clone(), Patch::TestFailed)),
        Applied::Patched if doc == *object => Ok((object.clone(), Patch::Unchanged)),
        Applied::Patched => Ok((doc, Patch::Changed)),
    }
}

/// CEL expressions over `object`, evaluated on the object's JSON and on the patch tree's CEL
/// view (`Patched::cel_view`): same results, same errors, same cost.
const EXPRESSIONS: &[&str] = &[
    "object",
    "size(object)",
    "has(object.a)",
    "has(object.b.c)",
    "object.a",
    "object.b.c",
    "object['d/e']",
    "object['f~g'][0]",
    "'a' in object",
    "object.map(k, k)",
    "object.all(k, k != 'zz')",
    "object.exists(k, k == 'c')",
    "object.filter(k, k.startsWith('d'))",
    "object == {'a': 1}",
    "object.a == object.b",
    "object.b == object.b",
    "type(object.a)",
    "[object.a, object.b]",
    "has(object.a) ? object.a : null",
    "object.?a.orValue(7)",
    "size(object.a)",
    "object.a.all(x, true)",
    "object.c.exists(x, x == 1)",
    "string(object.a)",
    "object.transformMap(k, v, v)",
];

fn evaluations(
    env: &celer_policy::environment::PolicyEnv,
    object: celer_cel::Value<'_>,
) -> Vec<(String, u64)> {
    use celer_policy::environment::ExpressionKind;
    let mut activation = celer_cel::Activation::new(&env.env);
    activation.set(env.slots.object, object);
    EXPRESSIONS
        .iter()
        .map(|source| {
            let program = env
                .compile(source, ExpressionKind::Variable)
                .unwrap_or_else(|e| panic!("{source}: {e}"));
            let evaluation = program.evaluate(&activation, Some(1_000_000));
            let result = match &evaluation.result {
                Ok(v) => celer_cel::format::to_cel(v),
                Err(e) => format!("error: {e}"),
            };
            (format!("{source} => {result}"), evaluation.cost)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_patch_tree_agrees_with_json(
        object in document(),
        patches in prop::collection::vec(patch(), 1..6),
    ) {
        let env = celer_policy::environment::PolicyEnv::new(false, true);
        let original = json(&object);
        let mut current = original.clone();
        let mut patched = Patched::new(&original);
        for (i, text) in patches.iter().enumerate() {
            let patch = json(text);
            let want = reference(&current, &patch);
            let got = patched.apply_json(&patch).map_err(|e| e.to_string());
            match (want, got) {
                (Ok((next, want)), Ok(got)) => {
                    prop_assert_eq!(want, got, "patch {} {}", i, text);
                    current = next;
                }
                (Err(want), Err(got)) => prop_assert_eq!(want, got, "patch {} {}", i, text),
                (want, got) => prop_assert!(false, "patch {i} {text}: want {want:?}, got {got:?}"),
            }
            let object = patched.json().unwrap().clone();
            prop_assert_eq!(
                sonic_rs::to_string(&object).unwrap(),
                sonic_rs::to_string(&current).unwrap(),
                "after patch {} {}", i, text
            );
            prop_assert_eq!(
                to_text(&patched.diff_from(&original).unwrap()).unwrap(),
                to_text(&diff(&original, &current)).unwrap(),
                "response patch after patch {} {}", i, text
            );
            if let Some(view) = patched.cel_view() {
                prop_assert_eq!(
                    evaluations(&env, view),
                    evaluations(&env, celer_cel::Value::from_json(&object)),
                    "CEL over the tree after patch {} {}", i, text
                );
            }
        }
    }
}
