//! Gatekeeper's audit results in its Constraints' status: `auditTimestamp`, `totalViolations`
//! and `violations` (at most a configured number, Gatekeeper's `--constraint-violations-limit`,
//! default 20), written when they change and after each full scan, as Gatekeeper's audit
//! writes them after each run.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use celer_policy::background::Violation;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use parking_lot::Mutex;

use crate::metrics::Metrics;

/// The resource a violation is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subject {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// A Constraint, by its kind's plural (the template's name) and its name.
type ConstraintKey = (String, String);

#[derive(Debug, Default)]
struct State {
    /// Violations by Constraint, then by resource.
    violations: BTreeMap<ConstraintKey, BTreeMap<Subject, (&'static str, String)>>,
    /// Constraints whose status must be written.
    dirty: BTreeSet<ConstraintKey>,
    /// Constraints known to have violations written, so that one left with none is cleared.
    written: BTreeSet<ConstraintKey>,
}

pub struct Audit {
    client: Client,
    limit: usize,
    state: Mutex<State>,
    metrics: Arc<Metrics>,
}

impl Audit {
    pub fn new(client: Client, limit: usize, metrics: Arc<Metrics>) -> Arc<Audit> {
        Arc::new(Audit {
            client,
            limit,
            state: Mutex::new(State::default()),
            metrics,
        })
    }

    /// One resource's violations now (none when it is gone or passes).
    pub fn record(&self, subject: &Subject, violations: &[Violation]) {
        let mut state = self.state.lock();
        let state = &mut *state;
        let now: BTreeMap<ConstraintKey, (&'static str, String)> = (violations.iter())
            .map(|v| {
                (
                    (v.template.clone(), v.constraint.clone()),
                    (v.enforcement_action, v.message.clone()),
                )
            })
            .collect();
        for (key, by_subject) in state.violations.iter_mut() {
            if !now.contains_key(key) && by_subject.remove(subject).is_some() {
                state.dirty.insert(key.clone());
            }
        }
        for (key, violation) in now {
            let by_subject = state.violations.entry(key.clone()).or_default();
            if by_subject.get(subject) != Some(&violation) {
                by_subject.insert(subject.clone(), violation);
                state.dirty.insert(key);
            }
        }
        let total: usize = state.violations.values().map(BTreeMap::len).sum();
        self.metrics.set_violations(total as u64);
    }

    /// Marks `constraints` (every loaded one: those without violations get
    /// `totalViolations: 0`) and every Constraint with violations for a write, after a full
    /// scan or a policy change: their `auditTimestamp` moves on, as after a Gatekeeper audit
    /// run.
    pub fn touch(&self, constraints: Vec<(String, String)>) {
        let mut state = self.state.lock();
        let keys: Vec<ConstraintKey> = state.violations.keys().cloned().collect();
        state.dirty.extend(keys);
        state.dirty.extend(constraints);
    }

    /// Writes the status of changed Constraints every `period` until dropped.
    pub async fn run(self: Arc<Self>, period: Duration) {
        loop {
            tokio::time::sleep(period).await;
            let dirty: Vec<ConstraintKey> = std::mem::take(&mut self.state.lock().dirty)
                .into_iter()
                .collect();
            for key in dirty {
                if let Err(e) = self.write(&key).await {
                    tracing::warn!(constraint = %key.1, kind = %key.0, error = %e, "constraint status not written; retrying");
                    self.state.lock().dirty.insert(key);
                }
            }
        }
    }

    async fn write(&self, key: &ConstraintKey) -> Result<(), kube::Error> {
        let (total, listed) = {
            let state = self.state.lock();
            let empty = BTreeMap::new();
            let by_subject = state.violations.get(key).unwrap_or(&empty);
            let listed: Vec<serde_json::Value> = (by_subject.iter())
                .take(self.limit)
                .map(|(s, (action, message))| {
                    let mut v = serde_json::json!({
                        "enforcementAction": action,
                        "group": s.group,
                        "version": s.version,
                        "kind": s.kind,
                        "name": s.name,
                        "message": message,
                    });
                    if !s.namespace.is_empty()
                        && let Some(o) = v.as_object_mut()
                    {
                        o.insert(
                            "namespace".to_string(),
                            serde_json::Value::from(s.namespace.clone()),
                        );
                    }
                    v
                })
                .collect();
            (by_subject.len(), listed)
        };
        // The Constraint's kind is not known here, only its plural (the template's name, the
        // kind lowercased): the status subresource is addressed by plural.
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("constraints.gatekeeper.sh", "v1beta1", &key.0),
            &key.0,
        );
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource);
        let status = serde_json::json!({
            "status": {
                "auditTimestamp": k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                "totalViolations": total,
                "violations": listed,
            }
        });
        match api
            .patch_status(&key.1, &PatchParams::default(), &Patch::Merge(&status))
            .await
        {
            Ok(_) => {
                self.metrics.constraint_write();
                let mut state = self.state.lock();
                if total == 0 {
                    state.written.remove(key);
                    state.violations.remove(key);
                } else {
                    state.written.insert(key.clone());
                }
                Ok(())
            }
            // The Constraint is gone.
            Err(kube::Error::Api(s)) if s.code == 404 => {
                self.state.lock().violations.remove(key);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
