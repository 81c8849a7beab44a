//! `celer scan`: existing objects evaluated against the validating policies as a background
//! scan sees them ([`celer_policy::background::scan`]: each object as if created now, a
//! `CREATE` by nobody, Kyverno policies only with background processing on), and what each
//! scan found, for tables, JSON, policy reports and JUnit ([`crate::scan_output`]).
//!
//! Objects come from files here ([`scan`]); `celer scan --kubeconfig` lists them from a
//! cluster and scans each with [`scan_object`], page by page, keeping only the results.

use std::path::PathBuf;

use celer_cel::Json;
use celer_policy::background::{self, Scan, ScannedResource, Status};
use celer_policy::engine::EvalOptions;
use celer_policy::kinds::kind_info;
use celer_policy::lookup::{Lookup, ObjectLookup};
use celer_policy::policy_set::PolicySet;
use celer_policy::report::ReportScope;

use crate::apply::{LoadErrors, ObjectRef};
use crate::inputs::{assume_namespace, objects, read_manifests};

/// What to scan, from files.
#[derive(Debug, Clone, Default)]
pub struct ScanInput {
    pub policies: Vec<PathBuf>,
    pub resources: Vec<PathBuf>,
    pub params: Vec<PathBuf>,
    pub namespaces: Vec<PathBuf>,
}

/// What scanning one object found.
#[derive(Debug, Clone)]
pub struct ResourceScan {
    /// The object; a namespaced object without a namespace is in `default`, as the request
    /// that scans it says.
    pub resource: ObjectRef,
    /// Its policy report's scope; `None` for an object without a name (no report names it).
    pub scope: Option<ReportScope>,
    /// Whether its kind is namespaced (discovery's word on a cluster; offline, the built-in
    /// kinds' table, and namespaced for other kinds).
    pub namespaced: bool,
    /// The report results, Constraint violations and blocking count; empty with an error.
    pub scan: Scan,
    /// Why the object could not be scanned.
    pub error: Option<String>,
    /// The object's Namespace, when no file supplied it and it was assumed to exist with only
    /// its `kubernetes.io/metadata.name` label (set on the first object that named it).
    pub assumed_namespace: Option<String>,
}

impl ResourceScan {
    /// Whether some result would deny the object at admission (a failure of a binding,
    /// policy, rule or Constraint that denies).
    pub fn denied(&self) -> bool {
        self.scan.blocking > 0
    }

    /// Whether the scan found anything to say (results, violations or an error).
    pub fn has_findings(&self) -> bool {
        !self.scan.results.is_empty() || !self.scan.violations.is_empty() || self.error.is_some()
    }
}

/// Every object scanned, in the order read (or listed), and the counts over them.
#[derive(Debug, Clone, Default)]
pub struct ScanReport {
    /// The objects listed (all of them from files; with findings only, from a cluster).
    pub resources: Vec<ResourceScan>,
    /// Counts over every object scanned, listed or not.
    pub summary: ScanSummary,
}

/// Counts over a scan: report results by status, Constraint violations, and what would be
/// denied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanSummary {
    /// Objects scanned (those that could not be are counted too, in `unscanned`).
    pub resources: usize,
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub error: usize,
    pub skip: usize,
    /// Gatekeeper Constraint violations, whatever their enforcementAction.
    pub violations: usize,
    /// Results that would deny at admission.
    pub blocking: usize,
    /// Objects that some result would deny at admission.
    pub denied: usize,
    /// Objects that could not be scanned.
    pub unscanned: usize,
}

impl ScanSummary {
    /// Counts one object's scan in.
    pub fn add(&mut self, r: &ResourceScan) {
        self.resources += 1;
        for result in &r.scan.results {
            match result.result {
                Status::Pass => self.pass += 1,
                Status::Fail => self.fail += 1,
                Status::Warn => self.warn += 1,
                Status::Error => self.error += 1,
                Status::Skip => self.skip += 1,
            }
        }
        self.violations += r.scan.violations.len();
        self.blocking += r.scan.blocking;
        self.denied += usize::from(r.denied());
        self.unscanned += usize::from(r.error.is_some());
    }
}

impl ScanReport {
    /// Lists and counts one object's scan.
    pub fn push(&mut self, r: ResourceScan) {
        self.summary.add(&r);
        self.resources.push(r);
    }

    /// Counts one object's scan without listing it (an object no policy applied to, on a
    /// cluster: memory grows with findings, not with objects).
    pub fn count(&mut self, r: &ResourceScan) {
        self.summary.add(r);
    }

    /// Whether some object would be denied at admission.
    pub fn denied(&self) -> bool {
        self.summary.denied > 0
    }
}

/// The validating policies under `paths`, compiled; mutating policies are not part of scans.
/// Problems found while loading are added to `errors`, each naming its file and document.
pub fn load_policies(paths: &[PathBuf], errors: &mut Vec<String>) -> PolicySet {
    let before = errors.len();
    let manifests = read_manifests(paths);
    // `by_phase` keeps the documents only: their errors are taken first.
    errors.extend(manifests.errors.iter().map(ToString::to_string));
    let validating = manifests.by_phase().validating;
    let set = PolicySet::build(&validating);
    errors.extend(set.errors.iter().map(ToString::to_string));
    if validating.items.is_empty() && errors.len() == before {
        errors.push(
            "no validating policy in the --policy files (mutating policies are not part of scans)"
                .to_string(),
        );
    }
    set
}

/// Whether `object` is namespaced and the namespace its request is in: `resource` says
/// (discovery), else its kind (offline); a namespaced object without one is in `default`.
fn placement(object: &Json, resource: Option<ScannedResource<'_>>) -> (bool, String) {
    let reference = ObjectRef::of(object);
    let namespaced = match resource {
        Some(r) => r.namespaced,
        None => kind_info(&reference.api_version, &reference.kind).namespaced,
    };
    let namespace = match (namespaced, reference.namespace.is_empty()) {
        (false, _) => String::new(),
        (true, true) => "default".to_string(),
        (true, false) => reference.namespace,
    };
    (namespaced, namespace)
}

/// Scans one object against `set`; `resource`: what discovery says of its kind (`None`
/// guesses it from the kind); `options`: what context functions and the `authorizer` read
/// (none offline). An object that cannot be scanned gives its error, not a panic.
pub fn scan_object(
    set: &PolicySet,
    object: &Json,
    resource: Option<ScannedResource<'_>>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> ResourceScan {
    let (namespaced, namespace) = placement(object, resource);
    let mut reference = ObjectRef::of(object);
    reference.namespace.clone_from(&namespace);
    let scope = ReportScope::of(object).map(|mut s| {
        s.namespace = namespace;
        s
    });
    let (scan, error) = match background::scan(set, object, resource, lookup, options) {
        Ok(scan) => (scan, None),
        Err(e) => (Scan::default(), Some(e.to_string())),
    };
    ResourceScan {
        resource: reference,
        scope,
        namespaced,
        scan,
        error,
        assumed_namespace: None,
    }
}

/// Loads everything and scans each resource. Any load problem stops the run; an object that
/// cannot be scanned is reported with its error and the others are scanned.
pub fn scan(input: &ScanInput) -> Result<ScanReport, LoadErrors> {
    let mut errors = Vec::new();
    let set = load_policies(&input.policies, &mut errors);
    let resources = objects(&input.resources, &mut errors);
    let mut lookup_objects = objects(&input.params, &mut errors);
    lookup_objects.extend(objects(&input.namespaces, &mut errors));
    if resources.is_empty() && errors.is_empty() {
        errors.push("no resources to scan".to_string());
    }
    if !errors.is_empty() {
        return Err(LoadErrors(errors));
    }
    let mut lookup = ObjectLookup::new(lookup_objects);
    // Offline: Kyverno's context functions and the `authorizer` have nothing to read.
    let options = EvalOptions::default();
    let mut report = ScanReport {
        resources: Vec::with_capacity(resources.len()),
        summary: ScanSummary::default(),
    };
    for object in &resources {
        let (_, namespace) = placement(object, None);
        let assumed = assume_namespace(&mut lookup, &namespace).then_some(namespace);
        let mut scanned = scan_object(&set, object, None, &lookup, &options);
        scanned.assumed_namespace = assumed;
        report.push(scanned);
    }
    Ok(report)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "scan_tests.rs"]
mod tests;
