//! `known_failures.txt`: the tests allowed to fail, one `file/section/test<TAB>reason` a line.
//! A failure not listed is a regression; a listed test that passes must be removed. So the
//! list can only shrink, except by blessing (`CELER_CONFORMANCE_BLESS=1`, which writes fresh
//! reasons, or `=keep`, which keeps the reasons already written for tests that still fail).

use std::collections::{BTreeMap, BTreeSet};

const HEADER: &str = "\
# Conformance tests celer still fails: file/section/test<TAB>reason.
# The conformance test fails when a test not listed here fails, or a listed one passes.
# Regenerate with CELER_CONFORMANCE_BLESS=1 cargo test -p celer-cel --test conformance,
# then edit the reasons by hand; CELER_CONFORMANCE_BLESS=keep keeps the reasons of tests
# that still fail.
";

/// How blessing treats the reasons already in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasons {
    /// Every reason describes this run's failure.
    Fresh,
    /// Tests that were listed and still fail keep their (possibly hand-written) reason.
    Keep,
}

#[derive(Debug, Default)]
pub struct KnownFailures {
    pub tests: BTreeMap<String, String>,
}

/// How this run differs from the list.
#[derive(Debug, Default)]
pub struct Drift {
    /// Failed but not listed: `(id, detail)`.
    pub regressions: Vec<(String, String)>,
    /// Listed but passed.
    pub now_passing: Vec<String>,
    /// Listed but not run at all (renamed, removed or now skipped).
    pub stale: Vec<String>,
}

impl KnownFailures {
    pub fn parse(text: &str) -> Result<KnownFailures, String> {
        let mut tests = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, reason) = line.split_once('\t').unwrap_or((line, ""));
            let id = id.trim();
            if id.split('/').count() < 3 {
                return Err(format!(
                    "known_failures.txt:{}: want file/section/test<TAB>reason",
                    n + 1
                ));
            }
            if tests
                .insert(id.to_string(), reason.trim().to_string())
                .is_some()
            {
                return Err(format!("known_failures.txt:{}: {id} listed twice", n + 1));
            }
        }
        Ok(KnownFailures { tests })
    }

    /// Compares one run with the list. `ran` holds every test that ran (passed or failed);
    /// listed tests outside it count as stale only when the whole suite ran.
    pub fn drift(
        &self,
        ran: &BTreeSet<String>,
        failures: &BTreeMap<String, (String, String)>,
        whole_suite: bool,
    ) -> Drift {
        let mut drift = Drift::default();
        for (id, (_, detail)) in failures {
            if !self.tests.contains_key(id) {
                drift.regressions.push((id.clone(), detail.clone()));
            }
        }
        for id in self.tests.keys() {
            if failures.contains_key(id) {
                continue;
            }
            if ran.contains(id) {
                drift.now_passing.push(id.clone());
            } else if whole_suite {
                drift.stale.push(id.clone());
            }
        }
        drift
    }

    /// The list after this run: current failures with their reasons, keeping entries for
    /// tests that did not run (a filtered run must not drop them).
    pub fn blessed(
        &self,
        ran: &BTreeSet<String>,
        failures: &BTreeMap<String, (String, String)>,
        whole_suite: bool,
        reasons: Reasons,
    ) -> String {
        let mut tests: BTreeMap<&str, &str> = BTreeMap::new();
        if !whole_suite {
            for (id, reason) in &self.tests {
                if !ran.contains(id) {
                    tests.insert(id, reason);
                }
            }
        }
        for (id, (reason, _)) in failures {
            let kept = match reasons {
                Reasons::Keep => self.tests.get(id).filter(|r| !r.is_empty()),
                Reasons::Fresh => None,
            };
            tests.insert(id, kept.unwrap_or(reason));
        }
        let mut out = String::from(HEADER);
        for (id, reason) in tests {
            out.push_str(id);
            out.push('\t');
            out.push_str(reason);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn failures(ids: &[&str]) -> BTreeMap<String, (String, String)> {
        ids.iter()
            .map(|id| (id.to_string(), ("why".to_string(), "detail".to_string())))
            .collect()
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn drift_and_bless() {
        let known = KnownFailures::parse("# c\na/b/c\told\na/b/d\tx\na/b/gone\ty\n").unwrap();
        let ran = set(&["a/b/c", "a/b/d", "a/b/e"]);
        let failed = failures(&["a/b/c", "a/b/e"]);
        let drift = known.drift(&ran, &failed, true);
        assert_eq!(drift.regressions.len(), 1);
        assert_eq!(drift.regressions[0].0, "a/b/e");
        assert_eq!(drift.now_passing, ["a/b/d"]);
        assert_eq!(drift.stale, ["a/b/gone"]);
        assert!(known.drift(&ran, &failed, false).stale.is_empty());

        let blessed = known.blessed(&ran, &failed, true, Reasons::Fresh);
        let again = KnownFailures::parse(&blessed).unwrap();
        assert_eq!(again.tests.keys().collect::<Vec<_>>(), ["a/b/c", "a/b/e"]);
        assert_eq!(again.tests["a/b/c"], "why");
        // A filtered run keeps entries it did not run.
        let partial =
            KnownFailures::parse(&known.blessed(&ran, &failed, false, Reasons::Fresh)).unwrap();
        assert!(partial.tests.contains_key("a/b/gone"));
        // Keeping reasons: a listed test keeps its reason, a new one gets this run's.
        let kept =
            KnownFailures::parse(&known.blessed(&ran, &failed, true, Reasons::Keep)).unwrap();
        assert_eq!(kept.tests["a/b/c"], "old");
        assert_eq!(kept.tests["a/b/e"], "why");
    }

    #[test]
    fn malformed_lines() {
        assert!(KnownFailures::parse("nonsense\n").is_err());
        assert!(KnownFailures::parse("a/b/c\tx\na/b/c\ty\n").is_err());
    }
}
