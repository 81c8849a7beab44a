//! Duplicate keys in a parsed JSON tree.
//!
//! sonic-rs keeps every member of an object, duplicates included, and its lookups answer the
//! first; Go's decoder (the API server, kubectl) keeps the last. A document with a key twice
//! would then mean one thing to the API server and another to celer, so celer refuses it.
//! The check walks the tree once after the parse: objects up to [`SMALL`] members are compared
//! pairwise, up to [`MEDIUM`] through a small hash table on the stack (neither allocates),
//! larger ones sorted in a `Vec`.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// Objects with at most this many members are checked pairwise.
const SMALL: usize = 8;

/// Objects with at most this many members go through a table on the stack; larger ones are
/// sorted in a `Vec`. At most 255 (table entries are `u8` indices).
const MEDIUM: usize = 128;

/// The path of the first key found twice in one object (`request.object.metadata.labels.app`,
/// array elements as `[3]`), or `None`.
pub fn find(root: &Json) -> Option<String> {
    let mut path = Vec::new();
    if walk(root, &mut path) {
        Some(render(&path))
    } else {
        None
    }
}

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Whether a duplicate is under `value`; on `true`, `path` leads to it (the duplicate key last).
fn walk<'a>(value: &'a Json, path: &mut Vec<Segment<'a>>) -> bool {
    if let Some(object) = value.as_object() {
        // Most objects of a Kubernetes object are small: read their members once, check the
        // keys pairwise, then descend from what was read (one pass over the members instead
        // of two).
        if object.len() <= SMALL {
            let mut members: [(&str, Option<&Json>); SMALL] = [("", None); SMALL];
            let mut n = 0;
            for (slot, (key, member)) in members.iter_mut().zip(object.iter()) {
                *slot = (key, Some(member));
                n += 1;
            }
            let members = members.get(..n).unwrap_or_default();
            for (i, (a, _)) in members.iter().enumerate() {
                if members
                    .get(i + 1..)
                    .unwrap_or_default()
                    .iter()
                    .any(|(b, _)| a == b)
                {
                    path.push(Segment::Key(a));
                    return true;
                }
            }
            for (key, member) in members {
                if let Some(member) = member
                    && (member.is_object() || member.is_array())
                {
                    path.push(Segment::Key(key));
                    if walk(member, path) {
                        return true;
                    }
                    path.pop();
                }
            }
            return false;
        }
        if let Some(key) = duplicate(object) {
            path.push(Segment::Key(key));
            return true;
        }
        for (key, member) in object.iter() {
            if member.is_object() || member.is_array() {
                path.push(Segment::Key(key));
                if walk(member, path) {
                    return true;
                }
                path.pop();
            }
        }
    } else if let Some(array) = value.as_array() {
        for (i, item) in array.iter().enumerate() {
            if item.is_object() || item.is_array() {
                path.push(Segment::Index(i));
                if walk(item, path) {
                    return true;
                }
                path.pop();
            }
        }
    }
    false
}

/// The first key found twice in an object of more than [`SMALL`] members ([`walk`] checks
/// the small ones as it reads them).
fn duplicate(object: &sonic_rs::Object) -> Option<&str> {
    let n = object.len();
    if n <= MEDIUM {
        // An open-addressing table on the stack, at most half full: no allocation, one cheap
        // hash and usually one probe per key.
        let mut keys: [&str; MEDIUM] = [""; MEDIUM];
        let mut slots = [0u8; 2 * MEDIUM];
        for (i, (key, _)) in object.iter().enumerate() {
            let mut at = hash(key) & (2 * MEDIUM - 1);
            loop {
                match slots.get(at).copied() {
                    Some(0) => {
                        if let (Some(slot), Some(k)) = (slots.get_mut(at), keys.get_mut(i)) {
                            // `i < MEDIUM <= 255`: fits, and 0 stays "empty".
                            *slot = u8::try_from(i + 1).unwrap_or(u8::MAX);
                            *k = key;
                        }
                        break;
                    }
                    Some(taken) => {
                        if keys.get(usize::from(taken) - 1) == Some(&key) {
                            return Some(key);
                        }
                        at = (at + 1) & (2 * MEDIUM - 1);
                    }
                    None => break,
                }
            }
        }
        return None;
    }
    let mut keys: Vec<&str> = object.iter().map(|(k, _)| k).collect();
    keys.sort_unstable();
    adjacent(&keys)
}

/// A cheap hash of a key: its length and its first and last eight bytes.
fn hash(key: &str) -> usize {
    let bytes = key.as_bytes();
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        for (d, s) in w.iter_mut().zip(b) {
            *d = *s;
        }
        u64::from_le_bytes(w)
    };
    let head = word(bytes);
    let tail = word(
        bytes
            .get(bytes.len().saturating_sub(8)..)
            .unwrap_or_default(),
    );
    let mixed =
        (head ^ tail.rotate_left(29) ^ (bytes.len() as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 40) as usize
}

/// The first key equal to the next one in sorted keys.
fn adjacent<'a>(keys: &[&'a str]) -> Option<&'a str> {
    keys.windows(2)
        .find(|w| w.first() == w.get(1))
        .and_then(|w| w.first().copied())
}

fn render(path: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn check(text: &str) -> Option<String> {
        find(&sonic_rs::from_str::<Json>(text).unwrap())
    }

    #[test]
    fn finds_the_first_duplicate_with_its_path() {
        assert_eq!(
            check(r#"{"a":1,"b":{"c":[{"d":1},{"d":1,"d":2}]}}"#).as_deref(),
            Some("b.c[1].d")
        );
        assert_eq!(check(r#"{"a":1,"a":2}"#).as_deref(), Some("a"));
        assert_eq!(check(r#"{"a":1,"b":2,"c":[1,2,{"x":{}}]}"#), None);
        assert_eq!(check("[]"), None);
        let many: Vec<String> = (0..400).map(|i| format!("\"k{i}\":{i}")).collect();
        assert_eq!(check(&format!("{{{}}}", many.join(","))), None);
        let dup = format!("{{{},\"k7\":0}}", many.join(","));
        assert_eq!(check(&dup).as_deref(), Some("k7"));
        let medium = format!("{{{},\"k7\":0}}", many.get(..40).unwrap().join(","));
        assert_eq!(check(&medium).as_deref(), Some("k7"));
        let small = r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"c":0}"#;
        assert_eq!(check(small).as_deref(), Some("c"));
    }
}
