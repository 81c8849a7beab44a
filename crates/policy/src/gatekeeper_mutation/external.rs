//! `assign.externalData` in a pass: the keys of one mutator's application (every string at
//! its location for `ValueAtLocation`, the user's name for `Username`) are sent to its
//! Provider in one call (cached answers are not sent again), then each location gets its
//! key's value, or what the failurePolicy says for a key the provider failed: `Fail` fails
//! the request with the provider's error, `Ignore` leaves the location, `UseDefault`
//! assigns `default`. Gatekeeper requires idempotent answers for mutation; one that is not
//! is a failure like any other.
//!
//! The passes repeat until nothing changes, so each mutator remembers, for the request, what
//! each key resolved to (a key is asked once per request, a failed one too), and a value it
//! assigned is not sent again as a key: the provider's answer (a digest for a tag) is not a
//! key of its own.

use celer_cel::Json;
use hashbrown::HashMap;
use sonic_rs::JsonValueTrait;

use super::apply::{Resolve, Setter, mutate};
use super::mutator::{DataSource, ExternalData, FailurePolicy, Mutator};
use super::tree::Tree;
use crate::gatekeeper::external_data::Providers;

/// One application's answers: by key, the value to assign (`None`: leave it).
pub(super) struct Resolved {
    by_key: HashMap<String, Option<Json>>,
    source: DataSource,
    username: String,
}

impl Resolved {
    /// What the setter assigns at a location holding `current`.
    pub(super) fn value_for(&self, current: Option<&Tree>) -> Option<Json> {
        let key = match self.source {
            DataSource::Username => self.username.as_str(),
            DataSource::ValueAtLocation => current.and_then(Tree::as_str)?,
        };
        self.by_key.get(key).cloned().flatten()
    }
}

/// What one mutator resolved in a request: by key, the value to assign (`None`: leave it),
/// and the values it assigned.
#[derive(Debug, Default)]
pub(super) struct Memo {
    resolved: HashMap<String, Option<Json>>,
    pub(super) assigned: Vec<Json>,
}

/// Asks the Provider for the keys of `mutator`'s application to `tree` not in `memo`;
/// `Err` is the request's failure (failurePolicy `Fail`).
pub(super) fn resolve(
    mutator: &Mutator,
    external: &ExternalData,
    providers: &Providers,
    tree: &mut Tree,
    username: &str,
    memo: &mut Memo,
) -> Result<Resolved, String> {
    let assigned = &memo.assigned;
    let keys = match external.data_source {
        DataSource::Username => vec![username.to_string()],
        DataSource::ValueAtLocation => {
            let found = std::cell::RefCell::new(Vec::<String>::new());
            let collect = |current: Option<&Tree>| {
                if let Some(key) = current.and_then(Tree::as_str)
                    && !assigned.iter().any(|a| a.as_str() == Some(key))
                {
                    found.borrow_mut().push(key.to_string());
                }
                // Nothing is written: the walk only reads.
                None
            };
            mutate(
                &mutator.path,
                &mutator.tester,
                &Setter::External(Resolve(&collect)),
                tree,
            )
            .map_err(|e| e.to_string())?;
            found.into_inner()
        }
    };
    let mut by_key: HashMap<String, Option<Json>> = HashMap::new();
    let keys: Vec<String> = keys
        .into_iter()
        .filter(|k| match memo.resolved.get(k) {
            Some(known) => {
                by_key.insert(k.clone(), known.clone());
                false
            }
            None => true,
        })
        .collect();
    if !keys.is_empty() {
        let fallback = |error: String| -> Result<Option<Json>, String> {
            match external.failure_policy {
                FailurePolicy::Fail => Err(error),
                FailurePolicy::Ignore => Ok(None),
                FailurePolicy::UseDefault => Ok(Some(Json::from(external.default.as_str()))),
            }
        };
        let provider = &external.provider;
        match providers.fetch(provider, &keys) {
            Err(e) => {
                let value = fallback(e.to_string())?;
                for k in keys {
                    memo.resolved.insert(k.clone(), value.clone());
                    by_key.insert(k, value.clone());
                }
            }
            Ok(answer) => {
                for k in keys {
                    let value = match answer.get(&k) {
                        _ if !answer.idempotent => fallback(format!(
                            "external data provider {provider:?}: its answer is not idempotent, which mutation requires"
                        ))?,
                        Some(Ok(v)) => Some(v.clone()),
                        Some(Err(e)) => fallback(format!(
                            "external data provider {provider:?} failed key {k:?}: {e}"
                        ))?,
                        None => fallback(format!(
                            "external data provider {provider:?} gave no answer for key {k:?}"
                        ))?,
                    };
                    memo.resolved.insert(k.clone(), value.clone());
                    by_key.insert(k, value);
                }
            }
        }
    }
    Ok(Resolved {
        by_key,
        source: external.data_source,
        username: username.to_string(),
    })
}
