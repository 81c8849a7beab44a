//! Known-failure files: the cases a runner is allowed to fail, one `key fields...<TAB>reason`
//! a line. A failure not listed is a regression; a listed case that passes, or that no
//! longer runs, must be removed, so the list only shrinks (or is re-written on purpose by a
//! runner that offers blessing).

use std::collections::{BTreeMap, BTreeSet};

use crate::table;

#[derive(Debug, Clone, Default)]
pub struct KnownFailures {
    file: String,
    /// Key (its fields joined by tabs) to reason.
    entries: BTreeMap<String, String>,
}

/// How one run differs from the list.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Failed but not listed: `(key, detail)`.
    pub regressions: Vec<(String, String)>,
    /// Listed but passed.
    pub now_passing: Vec<String>,
    /// Listed but did not run (renamed, removed or now skipped).
    pub stale: Vec<String>,
}

impl KnownFailures {
    /// Reads `text`, the known-failure file called `file`, whose keys have `key_fields`
    /// fields; every entry needs a reason after them, and no key may repeat.
    pub fn parse(file: &str, text: &str, key_fields: usize) -> Result<KnownFailures, String> {
        let mut entries = BTreeMap::new();
        for row in table::rows(text) {
            if row.fields.len() != key_fields + 1 || row.fields.iter().any(|f| f.is_empty()) {
                return Err(format!(
                    "{file}:{}: want {key_fields} key field(s) and a reason, separated by tabs",
                    row.line
                ));
            }
            let (reason, key) = row.fields.split_last().unwrap_or((&"", &[]));
            let key = key.join("\t");
            if entries.insert(key.clone(), (*reason).to_string()).is_some() {
                return Err(format!("{file}:{}: {key:?} listed twice", row.line));
            }
        }
        Ok(KnownFailures {
            file: file.to_string(),
            entries,
        })
    }

    /// [`KnownFailures::parse`], failing the test on a malformed file.
    pub fn load(file: &str, text: &str, key_fields: usize) -> KnownFailures {
        KnownFailures::parse(file, text, key_fields).unwrap_or_else(|e| crate::fail(e))
    }

    /// The entries whose first key field is `first`, keyed by the remaining fields: one
    /// file can hold the lists of several suites.
    pub fn scope(&self, first: &str) -> KnownFailures {
        let prefix = format!("{first}\t");
        KnownFailures {
            file: self.file.clone(),
            entries: self
                .entries
                .iter()
                .filter_map(|(k, r)| Some((k.strip_prefix(&prefix)?.to_string(), r.clone())))
                .collect(),
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn reason(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, r)| (k.as_str(), r.as_str()))
    }

    /// Compares one run with the list. `ran` holds every case that ran (passed or failed),
    /// `failed` maps each failure to its detail. Listed cases outside `ran` count as stale
    /// only when the whole suite ran (`whole_suite`).
    pub fn drift(
        &self,
        ran: &BTreeSet<String>,
        failed: &BTreeMap<String, String>,
        whole_suite: bool,
    ) -> Drift {
        let mut drift = Drift::default();
        for (key, detail) in failed {
            if !self.entries.contains_key(key) {
                drift.regressions.push((key.clone(), detail.clone()));
            }
        }
        for key in self.entries.keys() {
            if failed.contains_key(key) {
                continue;
            }
            if ran.contains(key) {
                drift.now_passing.push(key.clone());
            } else if whole_suite {
                drift.stale.push(key.clone());
            }
        }
        drift
    }

    /// The file's text after a run: `header`, then the current failures with their reasons
    /// (`failed` maps each to a one-line reason; with `keep_reasons` a case already listed
    /// keeps its written reason), keeping entries that did not run unless the whole suite
    /// ran.
    pub fn blessed(
        &self,
        header: &str,
        ran: &BTreeSet<String>,
        failed: &BTreeMap<String, String>,
        whole_suite: bool,
        keep_reasons: bool,
    ) -> String {
        let mut entries: BTreeMap<&str, &str> = BTreeMap::new();
        if !whole_suite {
            for (key, reason) in &self.entries {
                if !ran.contains(key) {
                    entries.insert(key, reason);
                }
            }
        }
        for (key, reason) in failed {
            let kept = keep_reasons
                .then(|| self.entries.get(key))
                .flatten()
                .filter(|r| !r.is_empty());
            entries.insert(key, kept.unwrap_or(reason));
        }
        let mut out = String::from(header);
        for (key, reason) in entries {
            out.push_str(key);
            out.push('\t');
            out.push_str(reason);
            out.push('\n');
        }
        out
    }
}

impl Drift {
    pub fn is_clean(&self) -> bool {
        self.regressions.is_empty() && self.now_passing.is_empty() && self.stale.is_empty()
    }

    /// One message per difference, naming the list `file`.
    pub fn problems(&self, file: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (key, detail) in &self.regressions {
            out.push(format!("REGRESSION {key} (not in {file})\n  {detail}"));
        }
        for key in &self.now_passing {
            out.push(format!("{key} now passes: remove it from {file}"));
        }
        for key in &self.stale {
            out.push(format!(
                "{key} is in {file} but did not run (renamed or skipped?): remove it"
            ));
        }
        out
    }

    /// Fails the test when the run differs from the list `file`.
    pub fn enforce(&self, file: &str) {
        if !self.is_clean() {
            crate::fail(self.problems(file).join("\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn failed(keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .map(|k| (k.to_string(), "why".to_string()))
            .collect()
    }

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn drift_and_bless() {
        let known = KnownFailures::parse("k", "# c\na\told\nd\tx\ngone\ty\n", 1).unwrap();
        let ran = set(&["a", "d", "e"]);
        let failures = failed(&["a", "e"]);
        let drift = known.drift(&ran, &failures, true);
        assert_eq!(drift.regressions, [("e".to_string(), "why".to_string())]);
        assert_eq!(drift.now_passing, ["d"]);
        assert_eq!(drift.stale, ["gone"]);
        assert_eq!(drift.problems("k").len(), 3);
        assert!(known.drift(&ran, &failures, false).stale.is_empty());

        let blessed = known.blessed("# h\n", &ran, &failures, true, false);
        let again = KnownFailures::parse("k", &blessed, 1).unwrap();
        assert_eq!(again.entries().map(|e| e.0).collect::<Vec<_>>(), ["a", "e"]);
        assert_eq!(again.reason("a"), Some("why"));
        let partial = known.blessed("", &ran, &failures, false, false);
        assert!(
            KnownFailures::parse("k", &partial, 1)
                .unwrap()
                .contains("gone")
        );
        let kept = known.blessed("", &ran, &failures, true, true);
        assert_eq!(
            KnownFailures::parse("k", &kept, 1).unwrap().reason("a"),
            Some("old")
        );
    }

    #[test]
    fn scopes_and_multi_field_keys() {
        let known = KnownFailures::parse("k", "s1\trow a\tr1\ns2\trow b\tr2\n", 2).unwrap();
        let s1 = known.scope("s1");
        assert_eq!(s1.len(), 1);
        assert_eq!(s1.reason("row a"), Some("r1"));
        assert_eq!(known.reason("s2\trow b"), Some("r2"));
    }

    #[test]
    fn malformed_files_are_refused() {
        assert!(KnownFailures::parse("k", "no reason\n", 1).is_err());
        assert!(KnownFailures::parse("k", "a\t\n", 1).is_err());
        assert!(KnownFailures::parse("k", "a\tx\na\ty\n", 1).is_err());
        assert!(KnownFailures::parse("k", "a\tb\n", 2).is_err());
    }
}
