//! Ratchet files: `key<TAB>count` floors of passing counts. A count below its floor fails
//! the runner; a count above it is reported so the floor is raised in the same change.

use std::collections::BTreeMap;

use crate::table;

#[derive(Debug, Clone)]
pub struct Ratchet {
    file: String,
    floors: BTreeMap<String, usize>,
}

/// How a count compares with its floor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Held,
    /// Above the floor: the message asks for the floor to be raised.
    Rose(String),
    /// Below the floor: the message says by how much.
    Fell(String),
}

impl Ratchet {
    /// Reads `text`, the contents of the ratchet file called `file` (named in messages).
    pub fn parse(file: &str, text: &str) -> Result<Ratchet, String> {
        let mut floors = BTreeMap::new();
        for row in table::rows(text) {
            let [key, count] = row.fields.as_slice() else {
                return Err(format!("{file}:{}: want key<TAB>count", row.line));
            };
            let count: usize = count
                .parse()
                .map_err(|e| format!("{file}:{}: count {count:?}: {e}", row.line))?;
            if floors.insert((*key).to_string(), count).is_some() {
                return Err(format!("{file}:{}: {key} listed twice", row.line));
            }
        }
        Ok(Ratchet {
            file: file.to_string(),
            floors,
        })
    }

    /// [`Ratchet::parse`], failing the test on a malformed file.
    pub fn load(file: &str, text: &str) -> Ratchet {
        Ratchet::parse(file, text).unwrap_or_else(|e| crate::fail(e))
    }

    /// The floor for `key`; a key the file does not list fails the test.
    pub fn floor(&self, key: &str) -> usize {
        match self.floors.get(key) {
            Some(n) => *n,
            None => crate::fail(format!("{} has no count for {key:?}", self.file)),
        }
    }

    /// Compares `passed` with the floor for `key`.
    pub fn check(&self, key: &str, passed: usize) -> Check {
        let floor = self.floor(key);
        match passed.cmp(&floor) {
            std::cmp::Ordering::Equal => Check::Held,
            std::cmp::Ordering::Greater => Check::Rose(format!(
                "{key}: {passed} pass, more than the floor of {floor} in {}: raise it",
                self.file
            )),
            std::cmp::Ordering::Less => Check::Fell(format!(
                "{key}: {passed} pass, fewer than the floor of {floor} in {} ({} lost)",
                self.file,
                floor - passed
            )),
        }
    }

    /// [`Ratchet::check`], failing the test when the count fell and printing when it rose.
    pub fn enforce(&self, key: &str, passed: usize) {
        match self.check(key, passed) {
            Check::Held => {}
            Check::Rose(message) => println!("{message}"),
            Check::Fell(message) => crate::fail(message),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn counts_are_compared_with_their_floor() {
        let r = Ratchet::parse("x.ratchet", "# floors\nrows a\t10\nb\t3\n").unwrap();
        assert_eq!(r.floor("rows a"), 10);
        assert_eq!(r.check("rows a", 10), Check::Held);
        assert!(matches!(r.check("rows a", 11), Check::Rose(m) if m.contains("raise it")));
        assert!(matches!(r.check("b", 1), Check::Fell(m) if m.contains("2 lost")));
    }

    #[test]
    fn malformed_files_are_refused() {
        assert!(Ratchet::parse("x", "a\n").is_err());
        assert!(Ratchet::parse("x", "a\tmany\n").is_err());
        assert!(Ratchet::parse("x", "a\t1\na\t2\n").is_err());
    }

    #[test]
    #[should_panic(expected = "has no count")]
    fn an_unlisted_key_fails() {
        Ratchet::parse("x", "").unwrap().floor("missing");
    }
}
