//! The byte scan's duplicate-key answer (`depth::scan`) against the tree walk it stands in
//! front of (`duplicates::find` over sonic-rs's parse), on random JSON: objects with keys drawn
//! from a few names (so duplicates are common), keys written with and without escapes
//! (`"a"` and `"\u0061"`), nesting, long strings that straddle the scan's 64-byte blocks,
//! backslashes in values, whitespace. The nesting answer is checked against
//! `document::json_depth_bytes` on the same texts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use celer_policy::depth::{Scan, scan};
use celer_policy::document::json_depth_bytes;
use celer_policy::duplicates;
use proptest::prelude::*;

/// A JSON value whose objects may repeat keys; keys carry how to write them.
#[derive(Debug, Clone)]
enum Doc {
    Scalar(String),
    Array(Vec<Doc>),
    Object(Vec<(Key, Doc)>),
}

#[derive(Debug, Clone)]
struct Key {
    name: String,
    /// Which characters of the name are written as escapes (`\uXXXX`, or `\"`-style).
    escapes: Vec<bool>,
}

fn key() -> impl Strategy<Value = Key> {
    let name = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("ab".to_string()),
        Just("a\"b".to_string()),
        Just("a\\".to_string()),
        Just("é".to_string()),
        Just("\u{1F600}".to_string()),
        Just("x/y\n".to_string()),
        Just("container.apparmor.security.beta.kubernetes.io/c".to_string()),
        "[a-c]{0,3}",
        "[a-z:{}\\[\\] ,]{1,12}",
    ];
    (name, proptest::collection::vec(any::<bool>(), 0..12))
        .prop_map(|(name, escapes)| Key { name, escapes })
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("1".to_string()),
        Just("null".to_string()),
        Just("true".to_string()),
        Just("-2.5e3".to_string()),
        // Strings with brackets, colons, quotes and backslashes inside.
        "[a-z:{}\\[\\],]{0,90}".prop_map(|s| format!("\"{s}\"")),
        Just(r#""a\"b\\\"c:{[""#.to_string()),
        Just(r#""\\""#.to_string()),
        Just(r#"":\\:""#.to_string()),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    scalar()
        .prop_map(Doc::Scalar)
        .prop_recursive(6, 96, 12, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Doc::Array),
                proptest::collection::vec((key(), inner.clone()), 0..8).prop_map(Doc::Object),
                // Large objects (past the pairwise size), mostly distinct keys.
                (
                    proptest::collection::vec(inner, 17..40),
                    any::<u8>(),
                    any::<bool>()
                )
                    .prop_map(|(values, at, repeat)| {
                        let n = values.len();
                        Doc::Object(
                            values
                                .into_iter()
                                .enumerate()
                                .map(|(i, v)| {
                                    let k = if repeat && i == n - 1 {
                                        usize::from(at) % n
                                    } else {
                                        i
                                    };
                                    let name = format!("key-{k}");
                                    let escapes = vec![i % 3 == 0; name.len()];
                                    (Key { name, escapes }, v)
                                })
                                .collect(),
                        )
                    }),
            ]
        })
}

fn write_key(key: &Key, out: &mut String) {
    out.push('"');
    for (i, c) in key.name.chars().enumerate() {
        let escape = key.escapes.get(i).copied().unwrap_or(false);
        match c {
            '"' => out.push_str(if escape { "\\u0022" } else { "\\\"" }),
            '\\' => out.push_str(if escape { "\\u005c" } else { "\\\\" }),
            '\n' => out.push_str(if escape { "\\u000A" } else { "\\n" }),
            '/' if escape => out.push_str("\\/"),
            c if escape => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write(doc: &Doc, pad: &str, out: &mut String) {
    match doc {
        Doc::Scalar(s) => out.push_str(s),
        Doc::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(pad);
                }
                write(item, pad, out);
            }
            out.push(']');
        }
        Doc::Object(members) => {
            out.push('{');
            out.push_str(pad);
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_key(k, out);
                out.push_str(pad);
                out.push(':');
                out.push_str(pad);
                write(v, pad, out);
            }
            out.push('}');
        }
    }
}

fn agree(text: &str) -> Result<(), TestCaseError> {
    let depth = json_depth_bytes(text.as_bytes());
    for limit in [0, 1, depth.saturating_sub(1), depth, depth + 1, 128] {
        let found = scan(text.as_bytes(), limit);
        prop_assert_eq!(
            found == Scan::TooDeep,
            depth > limit,
            "limit {}: {}",
            limit,
            text
        );
    }
    let root: Json = sonic_rs::from_str(text).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let walk = duplicates::find(&root);
    let found = scan(text.as_bytes(), depth + 1);
    prop_assert_eq!(
        found == Scan::MaybeDuplicate,
        walk.is_some(),
        "scan {:?}, walk {:?}: {}",
        found,
        walk,
        text
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_scan_agrees_with_the_tree_walk(doc in doc(), pad in prop_oneof![
        Just(""), Just(" "), Just("\n  "), Just("                                        ")
    ]) {
        let mut text = String::new();
        write(&doc, pad, &mut text);
        agree(&text)?;
        // The same text wrapped, so that it sits at another offset of the 64-byte blocks.
        let wrapped = format!("{{\"pad\":\"{}\",\"doc\":{text}}}", "x".repeat(text.len() % 61));
        agree(&wrapped)?;
    }
}

#[test]
fn chosen_texts() {
    for (text, duplicate) in [
        (r#"{"a":1,"a":2}"#, true),
        (r#"{"a":1,"\u0061":2}"#, true),
        (r#"{"a\"":1,"a\u0022":2}"#, true),
        (r#"{"\ud83d\ude00":1,"😀":2}"#, true),
        (r#"{"a":{"b":1},"b":2}"#, false),
        (r#"{"a":[{"b":1},{"b":2}]}"#, false),
        (r#"{"a":[{"b":1,"b":2}]}"#, true),
        (r#"{"x":"\"a\":1,\"a\":2","a":3}"#, false),
        (r#"{"k":"\\","k\\":1}"#, false),
        (r#"[{"a":1},{"a":1}]"#, false),
    ] {
        let root: Json = sonic_rs::from_str(text).expect(text);
        assert_eq!(duplicates::find(&root).is_some(), duplicate, "{text}");
        assert_eq!(
            scan(text.as_bytes(), 128) == Scan::MaybeDuplicate,
            duplicate,
            "{text}"
        );
    }
}
