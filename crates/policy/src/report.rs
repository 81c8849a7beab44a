//! Policy report objects: one per scanned resource, as Kyverno lays them out (named by the
//! resource's uid, owned by it, `scope` naming it), in OpenReports (`openreports.io/v1alpha1`
//! Report, ClusterReport) or the older `wgpolicyk8s.io/v1alpha2` PolicyReport and
//! ClusterPolicyReport, which share the shape. Results carry no timestamp until written
//! ([`report_object`] stamps them), so that the same scan gives the same [`content_hash`].

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::background::{ReportResult, Severity, Status};

/// Which report kinds are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    /// `openreports.io/v1alpha1` Report and ClusterReport.
    #[default]
    OpenReports,
    /// `wgpolicyk8s.io/v1alpha2` PolicyReport and ClusterPolicyReport.
    WgPolicy,
}

impl ReportFormat {
    pub fn api_version(self) -> &'static str {
        match self {
            ReportFormat::OpenReports => "openreports.io/v1alpha1",
            ReportFormat::WgPolicy => "wgpolicyk8s.io/v1alpha2",
        }
    }

    pub fn group(self) -> &'static str {
        match self {
            ReportFormat::OpenReports => "openreports.io",
            ReportFormat::WgPolicy => "wgpolicyk8s.io",
        }
    }

    pub fn version(self) -> &'static str {
        match self {
            ReportFormat::OpenReports => "v1alpha1",
            ReportFormat::WgPolicy => "v1alpha2",
        }
    }

    /// The kind of a report on a namespaced (`true`) or cluster-scoped resource.
    pub fn kind(self, namespaced: bool) -> &'static str {
        match (self, namespaced) {
            (ReportFormat::OpenReports, true) => "Report",
            (ReportFormat::OpenReports, false) => "ClusterReport",
            (ReportFormat::WgPolicy, true) => "PolicyReport",
            (ReportFormat::WgPolicy, false) => "ClusterPolicyReport",
        }
    }

    /// The resource (plural) of [`ReportFormat::kind`].
    pub fn plural(self, namespaced: bool) -> &'static str {
        match (self, namespaced) {
            (ReportFormat::OpenReports, true) => "reports",
            (ReportFormat::OpenReports, false) => "clusterreports",
            (ReportFormat::WgPolicy, true) => "policyreports",
            (ReportFormat::WgPolicy, false) => "clusterpolicyreports",
        }
    }
}

/// The resource a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReportScope {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl ReportScope {
    /// The scope of `object`; `None` without a name (a report needs one to name it).
    pub fn of(object: &Json) -> Option<ReportScope> {
        let s = |v: Option<&Json>| v.and_then(|v| v.as_str()).unwrap_or_default().to_string();
        let meta = object.get("metadata");
        let scope = ReportScope {
            api_version: s(object.get("apiVersion")),
            kind: s(object.get("kind")),
            namespace: s(meta.and_then(|m| m.get("namespace"))),
            name: s(meta.and_then(|m| m.get("name"))),
            uid: s(meta.and_then(|m| m.get("uid"))),
        };
        (!scope.name.is_empty() && !scope.kind.is_empty()).then_some(scope)
    }

    /// The report's name: the resource's uid (Kyverno's), else its kind and name (offline,
    /// where objects have no uid).
    pub fn report_name(&self) -> String {
        if self.uid.is_empty() {
            format!("{}-{}", self.kind.to_ascii_lowercase(), self.name)
        } else {
            self.uid.clone()
        }
    }
}

/// The label that says who wrote a report.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// A hash of the results that stays the same across scans, restarts and replicas of one
/// build (no timestamps, results sorted): a report is written only when it changes.
pub fn content_hash<R: Borrow<ReportResult>>(results: &[R]) -> u64 {
    // SipHash with fixed keys: the same value in every process of this build.
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    results.len().hash(&mut hasher);
    for r in results {
        r.borrow().hash(&mut hasher);
    }
    hasher.finish()
}

/// Counts by status, as the report's `summary`.
pub fn summary<R: Borrow<ReportResult>>(results: &[R]) -> [(Status, u64); 5] {
    let mut counts = [
        (Status::Pass, 0),
        (Status::Fail, 0),
        (Status::Warn, 0),
        (Status::Error, 0),
        (Status::Skip, 0),
    ];
    for r in results {
        let r = r.borrow();
        if let Some(c) = counts.iter_mut().find(|(s, _)| *s == r.result) {
            c.1 += 1;
        }
    }
    counts
}

fn text(s: &str) -> Json {
    Json::from(s)
}

/// The report object for `scope`'s results, owned by the resource (when it has a uid) so that
/// the garbage collector removes it with the resource. `seconds`: the results' timestamp.
pub fn report_object<R: Borrow<ReportResult>>(
    format: ReportFormat,
    scope: &ReportScope,
    namespaced: bool,
    results: &[R],
    managed_by: &str,
    seconds: i64,
) -> Json {
    let mut metadata = Json::new_object();
    metadata.insert("name", text(&scope.report_name()));
    if namespaced {
        metadata.insert("namespace", text(&scope.namespace));
    }
    let mut labels = Json::new_object();
    labels.insert(MANAGED_BY, text(managed_by));
    metadata.insert("labels", labels);
    if !scope.uid.is_empty() {
        let mut owner = Json::new_object();
        owner.insert("apiVersion", text(&scope.api_version));
        owner.insert("kind", text(&scope.kind));
        owner.insert("name", text(&scope.name));
        owner.insert("uid", text(&scope.uid));
        metadata.insert("ownerReferences", Json::from(vec![owner]));
    }
    let mut scope_json = Json::new_object();
    scope_json.insert("apiVersion", text(&scope.api_version));
    scope_json.insert("kind", text(&scope.kind));
    scope_json.insert("name", text(&scope.name));
    if namespaced {
        scope_json.insert("namespace", text(&scope.namespace));
    }
    if !scope.uid.is_empty() {
        scope_json.insert("uid", text(&scope.uid));
    }
    let mut summary_json = Json::new_object();
    for (status, n) in summary(results) {
        summary_json.insert(status.as_str(), Json::from(n));
    }
    let list = Json::from(
        (results.iter())
            .map(|r| result_json(r.borrow(), seconds))
            .collect::<Vec<_>>(),
    );
    let mut report = Json::new_object();
    report.insert("apiVersion", text(format.api_version()));
    report.insert("kind", text(format.kind(namespaced)));
    report.insert("metadata", metadata);
    report.insert("scope", scope_json);
    report.insert("summary", summary_json);
    report.insert("results", list);
    report
}

fn result_json(r: &ReportResult, seconds: i64) -> Json {
    let mut out = Json::new_object();
    out.insert("source", text(&r.source));
    out.insert("policy", text(&r.policy));
    if !r.rule.is_empty() {
        out.insert("rule", text(&r.rule));
    }
    out.insert("result", text(r.result.as_str()));
    out.insert("scored", Json::from(r.scored));
    if !r.message.is_empty() {
        out.insert("message", text(&r.message));
    }
    if let Some(c) = &r.category {
        out.insert("category", text(c));
    }
    if let Some(s) = r.severity {
        out.insert("severity", text(s.as_str()));
    }
    if !r.properties.is_empty() {
        let mut p = Json::new_object();
        for (k, v) in &r.properties {
            p.insert(k, text(v));
        }
        out.insert("properties", p);
    }
    let mut ts = Json::new_object();
    ts.insert("seconds", Json::from(seconds));
    ts.insert("nanos", Json::from(0));
    out.insert("timestamp", ts);
    out
}

/// What `celer serve` hands the controller: admission results of resources, as one JSON
/// document (`{"items": [{"object": {apiVersion, kind, metadata: {namespace, name, uid}},
/// "namespaced": bool, "results": [...]}]}`; results without timestamps).
pub fn admission_batch(items: &[(ReportScope, bool, Vec<ReportResult>)]) -> String {
    let list: Vec<Json> = (items.iter())
        .map(|(scope, namespaced, results)| {
            let mut metadata = Json::new_object();
            metadata.insert("namespace", text(&scope.namespace));
            metadata.insert("name", text(&scope.name));
            metadata.insert("uid", text(&scope.uid));
            let mut object = Json::new_object();
            object.insert("apiVersion", text(&scope.api_version));
            object.insert("kind", text(&scope.kind));
            object.insert("metadata", metadata);
            let mut item = Json::new_object();
            item.insert("object", object);
            item.insert("namespaced", Json::from(*namespaced));
            let results: Vec<Json> = results.iter().map(|r| result_json(r, 0)).collect();
            item.insert("results", Json::from(results));
            item
        })
        .collect();
    let mut batch = Json::new_object();
    batch.insert("items", Json::from(list));
    sonic_rs::to_string(&batch).unwrap_or_else(|_| r#"{"items":[]}"#.to_string())
}

/// Reads [`admission_batch`]'s document; an item without a uid or with unreadable results
/// makes the whole batch an error (it came from a peer that writes them well).
pub fn read_admission_batch(
    body: &[u8],
) -> Result<Vec<(ReportScope, bool, Vec<ReportResult>)>, String> {
    let batch: Json = sonic_rs::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let items = (batch.get("items").and_then(|i| i.as_array())).ok_or("no items list")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let scope = (item.get("object").and_then(ReportScope::of))
            .filter(|s| !s.uid.is_empty())
            .ok_or_else(|| format!("item {i}: no object with kind, name and uid"))?;
        let namespaced = item
            .get("namespaced")
            .and_then(|n| n.as_bool())
            .unwrap_or(true);
        let results = read_results(item).ok_or_else(|| format!("item {i}: unreadable results"))?;
        out.push((scope, namespaced, results));
    }
    Ok(out)
}

/// The results of a report read back (to compare with a scan's without writing), sorted as
/// scans sort them; `None` for an object that is not a report of this shape.
pub fn read_results(report: &Json) -> Option<Vec<ReportResult>> {
    let list = report.get("results");
    let Some(list) = list else {
        return Some(Vec::new());
    };
    let list = list.as_array()?;
    let s = |v: &Json, key: &str| {
        v.get(key)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut out = Vec::with_capacity(list.len());
    for r in list.iter() {
        let properties: BTreeMap<String, String> = r
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let category = s(r, "category");
        out.push(ReportResult {
            source: s(r, "source"),
            policy: s(r, "policy"),
            rule: s(r, "rule"),
            result: Status::parse(&s(r, "result"))?,
            message: s(r, "message"),
            category: (!category.is_empty()).then_some(category),
            severity: Severity::parse(&s(r, "severity")),
            scored: r.get("scored").and_then(|v| v.as_bool()).unwrap_or(false),
            properties,
        });
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn result(policy: &str, status: Status) -> ReportResult {
        ReportResult {
            source: "kyverno".to_string(),
            policy: policy.to_string(),
            rule: "r".to_string(),
            result: status,
            message: format!("{policy} says {}", status.as_str()),
            category: Some("Pod Security".to_string()),
            severity: Some(Severity::High),
            scored: true,
            properties: BTreeMap::from([("process".to_string(), "background scan".to_string())]),
        }
    }

    fn scope() -> ReportScope {
        ReportScope {
            api_version: "v1".to_string(),
            kind: "Pod".to_string(),
            namespace: "ns".to_string(),
            name: "p".to_string(),
            uid: "0b4c".to_string(),
        }
    }

    #[test]
    fn a_report_is_named_and_owned_by_its_resource() {
        let results = vec![result("a", Status::Fail), result("b", Status::Pass)];
        let r = report_object(
            ReportFormat::OpenReports,
            &scope(),
            true,
            &results,
            "celer",
            1_700_000_000,
        );
        let v = r;
        assert_eq!(v["kind"], "Report");
        assert_eq!(v["apiVersion"], "openreports.io/v1alpha1");
        assert_eq!(v["metadata"]["name"], "0b4c");
        assert_eq!(v["metadata"]["namespace"], "ns");
        assert_eq!(v["metadata"]["labels"][MANAGED_BY], "celer");
        assert_eq!(v["metadata"]["ownerReferences"][0]["uid"], "0b4c");
        assert_eq!(v["scope"]["kind"], "Pod");
        assert_eq!(v["summary"]["fail"], 1);
        assert_eq!(v["summary"]["pass"], 1);
        assert_eq!(v["summary"]["warn"], 0);
        assert_eq!(v["results"][0]["severity"], "high");
        assert_eq!(v["results"][0]["timestamp"]["seconds"], 1_700_000_000);
        let cluster = report_object(ReportFormat::WgPolicy, &scope(), false, &results, "x", 0);
        let text = sonic_rs::to_string(&cluster).unwrap();
        assert!(text.contains(r#""kind":"ClusterPolicyReport""#), "{text}");
        assert!(!text.contains(r#""namespace""#), "{text}");
    }

    #[test]
    fn admission_batches_read_back() {
        let items = vec![(scope(), true, vec![result("a", Status::Fail)])];
        let text = admission_batch(&items);
        assert_eq!(read_admission_batch(text.as_bytes()).unwrap(), items);
        assert!(read_admission_batch(b"{").is_err());
        assert!(
            read_admission_batch(
                br#"{"items":[{"object":{"kind":"Pod","metadata":{"name":"p"}}}]}"#
            )
            .is_err()
        );
    }

    #[test]
    fn a_report_read_back_hashes_as_its_scan() {
        let mut results = vec![result("b", Status::Pass), result("a", Status::Fail)];
        results.sort();
        let r = report_object(ReportFormat::WgPolicy, &scope(), true, &results, "celer", 5);
        let back = read_results(&r).unwrap();
        assert_eq!(back, results);
        assert_eq!(content_hash(&back), content_hash(&results));
        let mut changed = results.clone();
        changed[0].message.push('!');
        assert_ne!(content_hash(&changed), content_hash(&results));
    }
}
