//! Background scans: an existing object evaluated against the validating policies as if it
//! were created now, and the engine's results turned into policy report results.
//!
//! The request is the one Kyverno's background scanner builds (`pkg/controllers/report/utils/
//! scanner.go`): operation `CREATE`, the object, no old object, an empty `userInfo`, not a dry
//! run. Native ValidatingAdmissionPolicies get the same request; Gatekeeper's Constraints too
//! (its audit reviews the object alone). Only Kyverno policies with background processing on
//! run ([`crate::family::Mode::background`]); every binding's failed validation is reported,
//! whatever its `validationActions`, and nothing is enforced. docs/controller.md has the
//! per-family details.

use std::collections::{BTreeMap, HashMap};

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use crate::engine::{self, EvalOptions};
use crate::kinds::KindInfo;
use crate::load::{Manifest, Source};
use crate::lookup::Lookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, ReviewError};
use crate::response::{PolicyKind, PolicyResult, ResultKind};

/// Kyverno's annotations that reports read.
const CATEGORY: &str = "policies.kyverno.io/category";
const SEVERITY: &str = "policies.kyverno.io/severity";
const SCORED: &str = "policies.kyverno.io/scored";
const REPORTS_DISABLED: &str = "reports.kyverno.io/disabled";

/// What a report says of a policy besides its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyMeta {
    /// A namespaced policy's namespace: its results name it `namespace/name`.
    pub namespace: Option<String>,
    pub category: Option<String>,
    pub severity: Option<Severity>,
    /// `policies.kyverno.io/scored: "false"` turns its failures into warnings.
    pub scored: bool,
    /// The label `reports.kyverno.io/disabled` (any value) keeps its results out of reports
    /// (Kyverno's `IsPolicyReportable`).
    pub reported: bool,
}

impl PolicyMeta {
    /// What a policy document's metadata says (kinds read outside a policy set).
    pub fn of_document(doc: &Json) -> PolicyMeta {
        let metadata = doc.get("metadata");
        let text = |field: &str, key: &str| {
            (metadata.and_then(|m| m.get(field)).and_then(|a| a.get(key)))
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        PolicyMeta {
            namespace: (metadata.and_then(|m| m.get("namespace")))
                .and_then(|v| v.as_str())
                .filter(|v| !v.is_empty())
                .map(str::to_string),
            category: text("annotations", CATEGORY).map(str::to_string),
            severity: text("annotations", SEVERITY).and_then(Severity::parse),
            scored: text("annotations", SCORED) != Some("false"),
            reported: (metadata.and_then(|m| m.get("labels")))
                .and_then(|l| l.get(REPORTS_DISABLED))
                .is_none(),
        }
    }
}

/// A result's severity, as OpenReports spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Critical,
    High,
    Medium,
    Low,
    Info,
}

impl Severity {
    pub fn parse(text: &str) -> Option<Severity> {
        Some(match text {
            "critical" => Severity::Critical,
            "high" => Severity::High,
            "medium" => Severity::Medium,
            "low" => Severity::Low,
            "info" => Severity::Info,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }
}

/// The report metadata of every policy of a set, by the kind and name results carry.
#[derive(Debug, Default)]
pub struct PolicyDirectory(HashMap<(PolicyKind, String), Vec<PolicyMeta>>);

/// The kind a policy document's results are recorded under.
fn result_kind(kind: &str) -> Option<PolicyKind> {
    Some(match kind {
        "ValidatingAdmissionPolicy" => PolicyKind::Validating,
        "ValidatingPolicy" | "NamespacedValidatingPolicy" => PolicyKind::KyvernoValidating,
        "ClusterPolicy" | "Policy" => PolicyKind::KyvernoClusterPolicy,
        "ConstraintTemplate" => PolicyKind::GatekeeperConstraint,
        _ => return None,
    })
}

impl PolicyDirectory {
    pub(crate) fn from_manifests(items: &[(Source, Manifest)]) -> PolicyDirectory {
        let mut directory = PolicyDirectory::default();
        for (_, item) in items {
            let Some(policy) = item.policy() else {
                continue;
            };
            let Some(kind) = result_kind(policy.kind()) else {
                continue;
            };
            let annotation = |key: &str| {
                (policy.annotations())
                    .and_then(|a| a.get(key))
                    .map(|v| v.trim())
                    .filter(|v| !v.is_empty())
            };
            let meta = PolicyMeta {
                namespace: policy.namespace().map(str::to_string),
                category: annotation(CATEGORY).map(str::to_string),
                severity: annotation(SEVERITY).and_then(Severity::parse),
                scored: annotation(SCORED) != Some("false"),
                reported: !(policy.labels()).is_some_and(|l| l.contains_key(REPORTS_DISABLED)),
            };
            (directory.0)
                .entry((kind, policy.name().to_string()))
                .or_default()
                .push(meta);
        }
        directory
    }

    /// A result's policy: the namespaced one of that name in the resource's namespace, else
    /// the cluster-wide one.
    pub fn find(&self, kind: PolicyKind, name: &str, namespace: &str) -> Option<&PolicyMeta> {
        let all = self.0.get(&(kind, name.to_string()))?;
        (all.iter())
            .find(|m| m.namespace.as_deref() == Some(namespace))
            .or_else(|| all.iter().find(|m| m.namespace.is_none()))
    }
}

/// A report result's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Pass,
    Fail,
    Warn,
    Error,
    Skip,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Warn => "warn",
            Status::Error => "error",
            Status::Skip => "skip",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "pass" => Status::Pass,
            "fail" => Status::Fail,
            "warn" => Status::Warn,
            "error" => Status::Error,
            "skip" => Status::Skip,
            _ => return None,
        })
    }
}

/// One result of a policy report (OpenReports and wgpolicyk8s share the shape). No timestamp:
/// the writer stamps results, so that an unchanged scan compares equal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReportResult {
    /// `ValidatingAdmissionPolicy`, `KyvernoValidatingPolicy`, `kyverno`.
    pub source: String,
    pub policy: String,
    pub rule: String,
    pub result: Status,
    pub message: String,
    pub category: Option<String>,
    pub severity: Option<Severity>,
    pub scored: bool,
    pub properties: BTreeMap<String, String>,
}

/// A Gatekeeper Constraint the object violates, for the Constraint's audit status.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Violation {
    /// The Constraint's kind is its template's `spec.crd.spec.names.kind`; the template's
    /// name is that kind lowercased.
    pub template: String,
    pub constraint: String,
    /// `deny`, `warn` or `dryrun`, as Gatekeeper writes a violation's enforcementAction.
    pub enforcement_action: &'static str,
    pub message: String,
}

/// What scanning one object found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// For the object's policy report, sorted by policy, rule and source (as Kyverno sorts).
    pub results: Vec<ReportResult>,
    /// For the Constraints' status.
    pub violations: Vec<Violation>,
    /// How many of the engine's results would deny the object at admission: failures of a
    /// ValidatingAdmissionPolicy binding or a ValidatingPolicy with `Deny`, of a Constraint
    /// with `enforcementAction: deny`, and failures and errors of a ClusterPolicy rule with
    /// `Enforce`. Reports say `fail` for all failures; this tells the ones that block
    /// (`celer scan`'s exit status). Errors of the other families are not counted (whether
    /// their failurePolicy denies is not in the result).
    pub blocking: usize,
}

/// The object's resource as discovery names it (the object says only its kind).
#[derive(Debug, Clone, Copy)]
pub struct ScannedResource<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub namespaced: bool,
}

/// Why an object could not be scanned.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("cannot build the request: {0}")]
    Review(#[from] ReviewError),
}

/// The uid the scan's requests carry.
const SCAN_UID: &str = "celer-background-scan";

/// Evaluates `object` as if created now against the validating policies of `set`. `resource`:
/// what discovery says of its kind; `None` guesses it from the kind, as offline tools do.
pub fn scan(
    set: &PolicySet,
    object: &Json,
    resource: Option<ScannedResource<'_>>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> Result<Scan, ScanError> {
    let info = resource.map(|r| KindInfo {
        group: r.group.to_string(),
        version: r.version.to_string(),
        resource: r.resource.to_string(),
        namespaced: r.namespaced,
    });
    let body = crate::request::background_review(object, info, SCAN_UID)?;
    let review = AdmissionReview::parse(body.as_bytes())?;
    let request = review.request()?;
    let mut options = options.clone();
    options.kyverno.background = true;
    options.kyverno.offline = false;
    let outcome = engine::evaluate(set, &request, lookup, &options);
    let namespace = request.attributes.namespace;
    let mut scan = Scan::default();
    for result in &outcome.results {
        if blocks(set, result, namespace) {
            scan.blocking += 1;
        }
        match result.kind {
            PolicyKind::GatekeeperConstraint => scan.violations.extend(violation(result)),
            _ => scan.results.extend(report_result(set, result, namespace)),
        }
    }
    scan.results.sort();
    scan.violations.sort();
    Ok(scan)
}

/// Whether `set` has Kyverno policies that run at admission only (`spec.background: false`,
/// `evaluation.background.enabled: false`): their report results can only come from
/// admission requests ([`admission_results`]).
pub fn has_admission_only(set: &PolicySet) -> bool {
    let kyverno = set.kyverno();
    kyverno.validating.iter().any(|k| !k.extras.background)
        || kyverno.classic.iter().any(|r| !r.background)
}

/// The report results an admitted request gives policies that run at admission only (those
/// of policies that run in background scans come from the scans), with the object's report
/// scope; `None` when there are none or the request is not one Kyverno reports (a dry run,
/// a subresource, a DELETE or CONNECT, an object without a uid yet).
pub fn admission_results(
    set: &PolicySet,
    request: &crate::request::Request<'_>,
    outcome: &crate::response::Outcome,
) -> Option<(crate::report::ReportScope, Vec<ReportResult>)> {
    use crate::attributes::Operation;
    let a = &request.attributes;
    if request.dry_run
        || !a.sub_resource.is_empty()
        || !matches!(a.operation, Operation::Create | Operation::Update)
    {
        return None;
    }
    let kyverno = set.kyverno();
    let mut results: Vec<ReportResult> = (outcome.results.iter())
        .filter(|r| match r.kind {
            PolicyKind::KyvernoValidating => (kyverno.validating.iter())
                .any(|k| k.policy.common.name == r.policy && !k.extras.background),
            PolicyKind::KyvernoClusterPolicy => kyverno.classic.iter().any(|c| {
                c.policy == r.policy && r.binding.as_ref() == Some(&c.rule) && !c.background
            }),
            _ => false,
        })
        .filter_map(|r| report_result_of(set, r, a.namespace, ADMISSION_REVIEW))
        .collect();
    if results.is_empty() {
        return None;
    }
    let scope = crate::report::ReportScope::of(a.object?)?;
    if scope.uid.is_empty() {
        return None;
    }
    results.sort();
    Some((scope, results))
}

/// Whether some validating policy of `set` may apply to objects of `kind` (served as
/// `resource`): the families' indexes are asked, as for a request to create one, and nothing
/// is evaluated. A superset: the scan's own match decides for each object.
pub fn may_scan(set: &PolicySet, resource: ScannedResource<'_>, kind: &str) -> bool {
    let api_version = if resource.group.is_empty() {
        resource.version.to_string()
    } else {
        format!("{}/{}", resource.group, resource.version)
    };
    let text = |s: &str| Json::from(s);
    let mut probe = Json::new_object();
    probe.insert("apiVersion", text(&api_version));
    probe.insert("kind", text(kind));
    let mut metadata = Json::new_object();
    metadata.insert("name", text("celer-probe"));
    if resource.namespaced {
        metadata.insert("namespace", text("celer-probe"));
    }
    probe.insert("metadata", metadata);
    let info = KindInfo {
        group: resource.group.to_string(),
        version: resource.version.to_string(),
        resource: resource.resource.to_string(),
        namespaced: resource.namespaced,
    };
    let Ok(body) = crate::request::background_review(&probe, Some(info), SCAN_UID) else {
        return false;
    };
    let Ok(review) = AdmissionReview::parse(body.as_bytes()) else {
        return false;
    };
    let Ok(request) = review.request() else {
        return false;
    };
    let options = EvalOptions {
        kyverno: crate::family::Mode {
            background: true,
            probe: true,
            ..Default::default()
        },
        ..Default::default()
    };
    engine::evaluate(set, &request, &crate::lookup::NoLookup, &options).candidates > 0
}

/// Whether `result` would deny the request at admission. The engine's `Fail` is a failure
/// whose binding denies (a VAP binding or ValidatingPolicy with `Deny`, a Constraint with
/// `deny`), except for ClusterPolicy rules, whose failures are `Fail` in `Audit` too: those
/// block when the rule is `Enforce` (failures and errors, as Kyverno blocks them).
fn blocks(set: &PolicySet, result: &PolicyResult, namespace: &str) -> bool {
    match result.kind {
        PolicyKind::KyvernoClusterPolicy => {
            matches!(result.result, ResultKind::Fail | ResultKind::Error)
                && set.kyverno().classic.iter().any(|r| {
                    r.enforce
                        && r.policy == result.policy
                        && result.binding.as_ref() == Some(&r.rule)
                        && r.namespace.as_deref().is_none_or(|ns| ns == namespace)
                })
        }
        // Kyverno's ValidatingPolicies fail whatever their actions: Deny is what blocks.
        PolicyKind::KyvernoValidating => {
            result.result == ResultKind::Fail
                && set.kyverno().validating.iter().any(|k| {
                    k.policy.common.name == result.policy
                        && k.actions.contains(&crate::model::ValidationAction::Deny)
                })
        }
        _ => result.result == ResultKind::Fail,
    }
}

/// A Constraint's violation, for its status (Gatekeeper writes no report results).
fn violation(result: &PolicyResult) -> Option<Violation> {
    let action = match result.result {
        ResultKind::Fail => "deny",
        ResultKind::Warn => "warn",
        ResultKind::Audit => "dryrun",
        _ => return None,
    };
    Some(Violation {
        template: result.policy.to_string(),
        constraint: result.binding.as_deref().unwrap_or_default().to_string(),
        enforcement_action: action,
        message: result.message.as_deref().unwrap_or_default().to_string(),
    })
}

/// The texts of skips that are not results (Kyverno drops matchCondition skips from reports).
fn is_routing_skip(message: &str) -> bool {
    !message.contains("exception")
}

/// The exceptions a skip names, by name (Kyverno's `exceptions` property): the engine says
/// `rule is skipped due to policy exception: ns/a, ns/b` (CEL policies) or
/// `rule is skipped due to policy exceptions` followed by the keys (ClusterPolicy rules, as
/// Kyverno words it).
pub(crate) fn exception_names(message: &str) -> Vec<&str> {
    let Some((_, rest)) = message.split_once("due to policy exception") else {
        return Vec::new();
    };
    let rest = rest.strip_prefix('s').unwrap_or(rest);
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    (rest.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.rsplit('/').next().unwrap_or(n))
        .collect()
}

/// Kyverno's `process` property of a result from a scan and from an admission request.
const BACKGROUND_SCAN: &str = "background scan";
pub(crate) const ADMISSION_REVIEW: &str = "admission review";

fn report_result(set: &PolicySet, result: &PolicyResult, namespace: &str) -> Option<ReportResult> {
    report_result_of(set, result, namespace, BACKGROUND_SCAN)
}

fn report_result_of(
    set: &PolicySet,
    result: &PolicyResult,
    namespace: &str,
    process: &'static str,
) -> Option<ReportResult> {
    let source = match result.kind {
        PolicyKind::Validating => "ValidatingAdmissionPolicy",
        PolicyKind::KyvernoValidating => "KyvernoValidatingPolicy",
        PolicyKind::KyvernoClusterPolicy => "kyverno",
        _ => return None,
    };
    let message = result.message.as_deref().unwrap_or_default();
    let mut status = match result.result {
        ResultKind::Pass => Status::Pass,
        ResultKind::Fail | ResultKind::Warn | ResultKind::Audit => Status::Fail,
        ResultKind::Error => Status::Error,
        ResultKind::Skip if is_routing_skip(message) => return None,
        ResultKind::Skip => Status::Skip,
    };
    let meta = set.directory().find(result.kind, &result.policy, namespace);
    if meta.is_some_and(|m| !m.reported) {
        return None;
    }
    let scored = meta.is_none_or(|m| m.scored);
    if status == Status::Fail && !scored {
        status = Status::Warn;
    }
    let policy = match meta.and_then(|m| m.namespace.as_deref()) {
        Some(ns) => format!("{ns}/{}", result.policy),
        None => result.policy.to_string(),
    };
    let mut properties: BTreeMap<String, String> = (result.properties.iter())
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    properties.insert("process".to_string(), process.to_string());
    let (rule, message) = match result.kind {
        PolicyKind::Validating => {
            if let Some(binding) = result.binding.as_ref().filter(|b| !b.is_empty()) {
                properties.insert("binding".to_string(), binding.to_string());
            }
            (result.policy.to_string(), message.to_string())
        }
        PolicyKind::KyvernoClusterPolicy => (
            result.binding.as_deref().unwrap_or_default().to_string(),
            message.to_string(),
        ),
        _ => (String::new(), message.to_string()),
    };
    let mut message = if status == Status::Skip {
        let names = exception_names(&message);
        if !names.is_empty() {
            properties.insert("exceptions".to_string(), names.join(","));
        }
        String::new()
    } else {
        message
    };
    // A rule's reportProperties may say the message: by result, then for all
    // (Kyverno's `ToPolicyReportResult`).
    let by_result = match status {
        Status::Pass => "passMessage",
        Status::Fail => "failMessage",
        Status::Warn => "warnMessage",
        Status::Error => "errorMessage",
        Status::Skip => "skipMessage",
    };
    for key in [by_result, "message"] {
        if let Some(m) = properties.get(key).filter(|m| !m.is_empty()) {
            message = m.clone();
        }
    }
    Some(ReportResult {
        source: source.to_string(),
        policy,
        rule,
        result: status,
        message,
        category: meta.and_then(|m| m.category.clone()),
        severity: meta.and_then(|m| m.severity),
        scored,
        properties,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "background_tests.rs"]
mod tests;
