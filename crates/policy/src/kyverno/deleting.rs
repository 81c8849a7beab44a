//! Kyverno's DeletingPolicy and NamespacedDeletingPolicy (`policies.kyverno.io`): on a cron
//! `schedule`, the existing resources its `matchConstraints` select and whose `conditions`
//! all hold are deleted.
//!
//! A DeletingPolicy is a ValidatingPolicy in all but its action, so it is lowered into one
//! and runs on the one driver: `matchConstraints` with every rule's operations widened to
//! `*` (Kyverno matches with `OperationAll`), the `variables`, background processing on, no
//! autogen, and the `conditions` joined into one validation `(c1) && (c2) && ...`. CEL's
//! `&&` is Kyverno's rule for conditions exactly: any false is false whatever the others
//! gave, then any error is an error (the conditions read the variables, which
//! `matchConditions` could not). Each condition is also compiled alone, so a compile error
//! names `spec.conditions[i]`. Each object is evaluated as the controller's scans evaluate
//! it (a `CREATE` of the object); the lowered policy's result tells the decision: no result,
//! the resource is not selected; `pass`, every condition held (delete); `fail`, one was false;
//! `skip`, a PolicyException (whose `policyRefs` name the DeletingPolicy) applies; `error`, a
//! condition failed. A namespaced policy becomes a NamespacedValidatingPolicy and so selects
//! only its namespace.
//!
//! What the controller does with the decisions (listing, deleting, status) is
//! `celer-controller`'s `deleting` module; `celer test` reads the decisions as Kyverno's CLI
//! does (`pass` delete, `fail` keep, no row when not selected).

use celer_cel::Json;
use chrono::{DateTime, Utc};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::lowered::Lowering;
use super::model::{GROUP, PolicyException, VERSIONS};
use crate::background::ScannedResource;
use crate::engine::{self, EvalOptions};
use crate::kinds::KindInfo;
use crate::load::{LoadError, Manifests, Source};
use crate::lookup::Lookup;
use crate::policy_set::PolicySet;
use crate::request::AdmissionReview;
use crate::response::{PolicyKind, ResultKind};

/// The kinds this module reads.
pub const KINDS: [&str; 2] = ["DeletingPolicy", "NamespacedDeletingPolicy"];
/// Kyverno's bound on `spec.conditions`.
pub const MAX_CONDITIONS: usize = 64;
/// The uid of the requests a decision is made with.
const UID: &str = "celer-deleting-policy";

/// Whether a document is a DeletingPolicy or NamespacedDeletingPolicy.
pub fn is_deleting_policy(api_version: &str, kind: &str) -> bool {
    let (group, version) = crate::kinds::split_api_version(api_version);
    group == GROUP && VERSIONS.contains(&version) && KINDS.contains(&kind)
}

/// `spec.deletionPropagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Foreground,
    Background,
    Orphan,
}

impl Propagation {
    pub fn parse(text: &str) -> Option<Propagation> {
        Some(match text {
            "Foreground" => Propagation::Foreground,
            "Background" => Propagation::Background,
            "Orphan" => Propagation::Orphan,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Foreground => "Foreground",
            Propagation::Background => "Background",
            Propagation::Orphan => "Orphan",
        }
    }
}

/// A cron `schedule`: five fields (minute, hour, day of month, month, day of week) or a macro
/// (`@hourly`, `@daily`...), in UTC, as Kyverno's cronexpr reads the five-field form.
#[derive(Debug, Clone)]
pub struct Schedule {
    text: String,
    cron: croner::Cron,
}

impl Schedule {
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let fields = text.split_whitespace().count();
        if !text.trim_start().starts_with('@') && fields != 5 {
            return Err(format!(
                "{text:?} has {fields} fields; celer reads five-field cron schedules (minute hour day-of-month month day-of-week) and @-macros"
            ));
        }
        let cron = text
            .parse::<croner::Cron>()
            .map_err(|e| format!("{text:?} is not a cron schedule: {e}"))?;
        Ok(Schedule {
            text: text.to_string(),
            cron,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first time the schedule fires after `time` (`None` if it never does).
    pub fn next_after(&self, time: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron.find_next_occurrence(&time, false).ok()
    }
}

/// One DeletingPolicy, compiled.
#[derive(Debug)]
pub struct DeletingPolicy {
    /// `DeletingPolicy` or `NamespacedDeletingPolicy`.
    pub kind: &'static str,
    pub name: String,
    /// A NamespacedDeletingPolicy's namespace: it deletes only there.
    pub namespace: Option<String>,
    pub schedule: Schedule,
    pub propagation: Option<Propagation>,
    /// `matchConstraints.objectSelector` as a list request's `labelSelector`.
    pub label_selector: Option<String>,
    /// The lowered ValidatingPolicy, alone in its set; `None` without `matchConstraints`.
    set: Option<PolicySet>,
}

/// What a DeletingPolicy decides for one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `matchConstraints` do not select it.
    NotSelected,
    /// Selected, but a condition is false or an exception applies.
    Keep,
    /// Selected and every condition holds.
    Delete,
    /// A condition (or a variable it reads) failed to evaluate.
    Error(String),
}

impl DeletingPolicy {
    /// `name`, or `namespace/name`, as Kyverno keys policies.
    pub fn key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The lowered policy's set: what discovery asks which resources the policy may select;
    /// `None` for a policy without `matchConstraints`, which selects nothing.
    pub fn policy_set(&self) -> Option<&PolicySet> {
        self.set.as_ref()
    }

    /// Decides for `object`; `resource` is what discovery says of its kind (`None` guesses
    /// it from the kind, as offline tools do).
    pub fn decide(
        &self,
        object: &Json,
        resource: Option<ScannedResource<'_>>,
        lookup: &dyn Lookup,
        options: &EvalOptions,
    ) -> Decision {
        let Some(set) = &self.set else {
            return Decision::NotSelected;
        };
        let info = resource.map(|r| KindInfo {
            group: r.group.to_string(),
            version: r.version.to_string(),
            resource: r.resource.to_string(),
            namespaced: r.namespaced,
        });
        let body = match crate::request::background_review(object, info, UID) {
            Ok(body) => body,
            Err(e) => return Decision::Error(format!("cannot build the request: {e}")),
        };
        let review = match AdmissionReview::parse(body.as_bytes()) {
            Ok(review) => review,
            Err(e) => return Decision::Error(format!("cannot build the request: {e}")),
        };
        let request = match review.request() {
            Ok(request) => request,
            Err(e) => return Decision::Error(format!("cannot build the request: {e}")),
        };
        let mut options = options.clone();
        options.kyverno.background = true;
        let outcome = engine::evaluate(set, &request, lookup, &options);
        let result = (outcome.results.iter())
            .find(|r| r.kind == PolicyKind::KyvernoValidating && r.policy == *self.name);
        match result.map(|r| (r.result, r.message.as_deref())) {
            None => Decision::NotSelected,
            Some((ResultKind::Pass, _)) => Decision::Delete,
            Some((ResultKind::Fail | ResultKind::Skip, _)) => Decision::Keep,
            Some((_, message)) => Decision::Error(condition_error(message.unwrap_or_default())),
        }
    }
}

/// The lowered policy's words for a failed condition, as the DeletingPolicy's author wrote it.
fn condition_error(message: &str) -> String {
    rename_paths(message)
}

/// The lowered policy's field paths as the DeletingPolicy's author wrote them.
fn rename_paths(text: &str) -> String {
    text.replace("spec.validations", "spec.conditions")
        .replace("ValidatingPolicy", "DeletingPolicy")
}

/// The DeletingPolicies of `manifests`, and why the others did not load.
#[derive(Debug, Default)]
pub struct Loaded {
    pub policies: Vec<DeletingPolicy>,
    pub errors: Vec<LoadError>,
}

/// Reads and compiles every DeletingPolicy and NamespacedDeletingPolicy among `manifests`
/// (they are plain objects to the admission loader), with the PolicyExceptions that name
/// them.
pub fn load(manifests: &Manifests) -> Loaded {
    let (policies, errors) = super::lowered::load_kind(
        manifests,
        is_deleting_policy,
        compile,
        |p: &DeletingPolicy| (p.name.clone(), p.namespace.clone(), p.kind),
    );
    Loaded { policies, errors }
}

fn compile(
    source: &Source,
    doc: &Json,
    kind: &str,
    exceptions: &[&PolicyException],
) -> Result<DeletingPolicy, Vec<String>> {
    let kind: &'static str = if kind == KINDS[1] { KINDS[1] } else { KINDS[0] };
    let namespaced = kind == KINDS[1];
    let metadata = doc.get("metadata");
    let text = |v: Option<&Json>| v.and_then(|v| v.as_str()).unwrap_or_default().to_string();
    let name = text(metadata.and_then(|m| m.get("name")));
    // Applied without one, a namespaced policy lives in `default`, as kubectl puts it.
    let namespace = namespaced.then(|| {
        let ns = text(metadata.and_then(|m| m.get("namespace")));
        if ns.is_empty() {
            "default".to_string()
        } else {
            ns
        }
    });
    let empty = Json::new_object();
    let spec = doc.get("spec").unwrap_or(&empty);
    let mut problems = Vec::new();
    if name.is_empty() {
        problems.push("metadata.name: Required value".to_string());
    }
    let schedule = match spec.get("schedule").and_then(|s| s.as_str()) {
        None | Some("") => {
            problems.push("spec.schedule: Required value".to_string());
            None
        }
        Some(s) => Schedule::parse(s)
            .map_err(|e| problems.push(format!("spec.schedule: Invalid value: {e}")))
            .ok(),
    };
    let propagation = match spec
        .get("deletionPropagationPolicy")
        .and_then(|p| p.as_str())
    {
        None => None,
        Some(p) => match Propagation::parse(p) {
            Some(p) => Some(p),
            None => {
                problems.push(format!(
                    "spec.deletionPropagationPolicy: Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
                ));
                None
            }
        },
    };
    let conditions = spec.get("conditions").and_then(|c| c.as_array());
    if let Some(c) = conditions
        && c.len() > MAX_CONDITIONS
    {
        problems.push(format!(
            "spec.conditions: Too many: {}: must have at most {MAX_CONDITIONS} items",
            c.len()
        ));
    }
    // Kyverno compiles a policy without matchConstraints (its CLI runs such policies on JSON
    // payloads); its controller refuses to run one. So does celer's: such a policy selects
    // nothing here.
    let constraints = spec.get("matchConstraints").filter(|c| c.is_object());
    let label_selector = match constraints.and_then(|c| c.get("objectSelector")) {
        Some(s) if !s.is_null() => match crate::load::read::<crate::model::LabelSelector>(s) {
            Ok(s) => Some(super::mutate_existing::selector_text(&s)),
            Err(e) => {
                problems.push(format!("spec.matchConstraints.objectSelector: {e}"));
                None
            }
        },
        _ => None,
    };
    let (Some(schedule), true) = (schedule, problems.is_empty()) else {
        return Err(problems);
    };
    let Some(constraints) = constraints else {
        return Ok(DeletingPolicy {
            kind,
            name,
            namespace,
            schedule,
            propagation,
            label_selector,
            set: None,
        });
    };
    let mut conditions: Vec<String> = (conditions.into_iter().flat_map(|c| c.iter()))
        .map(|c| text(c.get("expression")))
        .collect();
    if conditions.is_empty() {
        // No condition: everything selected is deleted.
        conditions.push("true".to_string());
    }
    let lowering = Lowering {
        name: &name,
        namespace: namespace.as_deref(),
        kind,
        constraints,
        widen_operations: true,
        match_conditions: None,
        variables: spec.get("variables"),
        audit_annotations: None,
        exception_pass: false,
    };
    // Each condition alone first, so that a compile error names its index.
    lowering
        .build(source, &conditions, &[])
        .map_err(|e| e.iter().map(|e| rename_paths(e)).collect::<Vec<_>>())?;
    // A condition may end in a `//` comment: its closing parenthesis goes on a line of its own.
    let joined = (conditions.iter().map(|c| format!("({c}\n)")))
        .collect::<Vec<_>>()
        .join(" && ");
    let set = lowering
        .build(source, std::slice::from_ref(&joined), exceptions)
        .map_err(|e| e.iter().map(|e| rename_paths(e)).collect::<Vec<_>>())?;
    Ok(DeletingPolicy {
        kind,
        name,
        namespace,
        schedule,
        propagation,
        label_selector,
        set: Some(set),
    })
}

#[cfg(test)]
#[path = "deleting_tests.rs"]
mod tests;
