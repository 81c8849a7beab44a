//! What the JSON Patch tests share: running a CEL-style patch and checking the outcome,
//! including that a patch that does not apply leaves the document unchanged.

use super::*;

pub(super) fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

/// What a case expects.
pub(super) enum Expect {
    /// Applied; the document equals this JSON.
    Doc(&'static str),
    /// A test failed; the document is unchanged.
    TestFailed,
    /// This error text; the document is unchanged.
    Error(&'static str),
}
pub(super) use Expect::*;

/// Runs `patch` (a CEL-style JSON list) on `doc` through [`apply_json`] and checks the
/// outcome; on anything but success the document must not change.
pub(super) fn check(name: &str, doc: &str, patch: &str, expect: Expect) {
    check_with(name, doc, patch, expect, COPY_SIZE_LIMIT);
}

pub(super) fn check_with(name: &str, doc: &str, patch: &str, expect: Expect, copy_limit: usize) {
    let original = json(doc);
    let mut patched = original.clone();
    let decoded = decode(&json(patch));
    let result = decoded.and_then(|d| apply_then(&mut patched, &d.ops, d.invalid, copy_limit));
    match expect {
        Doc(want) => {
            assert_eq!(result, Ok(Applied::Patched), "{name}");
            assert!(
                json_eq(&patched, &json(want)),
                "{name}: got {}, want {want}",
                sonic_rs::to_string(&patched).unwrap()
            );
        }
        TestFailed => {
            assert_eq!(result, Ok(Applied::TestFailed), "{name}");
            assert_eq!(patched, original, "{name}: document changed");
        }
        Error(want) => {
            let got = result.expect_err(name).to_string();
            assert_eq!(got, want, "{name}");
            assert_eq!(patched, original, "{name}: document changed");
        }
    }
}

pub(super) fn run_cases(cases: Vec<(&str, &str, &str, Expect)>) {
    for (name, doc, patch, expect) in cases {
        check(name, doc, patch, expect);
    }
}
