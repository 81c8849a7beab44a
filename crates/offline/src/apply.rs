//! `celer apply`: every resource evaluated as an admission request against a set of policies,
//! with params and Namespaces from files; and the stable JSON report of the results.

use std::path::PathBuf;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for_subresource};
use celer_policy::response::{Outcome, ResultKind};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait};

use crate::OfflineError;
use crate::inputs::{assume_namespace, objects, read_manifests};

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct ApplyInput {
    pub policies: Vec<PathBuf>,
    pub resources: Vec<PathBuf>,
    pub params: Vec<PathBuf>,
    pub namespaces: Vec<PathBuf>,
    pub old_resources: Vec<PathBuf>,
    pub operation: Operation,
    pub user: RequestUser,
    /// `RESOURCE/SUBRESOURCE` (`pods/ephemeralcontainers`), as the API server would send the
    /// request; `None` for the resource itself.
    pub sub_resource: Option<String>,
}

/// Why nothing was evaluated: every problem found while loading, each naming its file,
/// document and field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct LoadErrors(pub Vec<String>);

/// Which object a report is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectRef {
    pub fn of(object: &Json) -> ObjectRef {
        let s = |v: Option<&Json>| v.and_then(|v| v.as_str()).unwrap_or_default().to_string();
        let meta = object.get("metadata");
        ObjectRef {
            api_version: s(object.get("apiVersion")),
            kind: s(object.get("kind")),
            namespace: s(meta.and_then(|m| m.get("namespace"))),
            name: s(meta.and_then(|m| m.get("name"))),
        }
    }
}

/// One resource's evaluation.
#[derive(Debug, Clone)]
pub struct ResourceReport {
    pub resource: ObjectRef,
    pub outcome: Outcome,
    /// The resource's Namespace, when no file supplied it and it was assumed to exist with only
    /// its `kubernetes.io/metadata.name` label (set on the first resource that named it).
    pub assumed_namespace: Option<String>,
    /// What each GeneratingPolicy that selects the resource would generate for it.
    pub generated: Vec<GeneratedBy>,
}

/// A GeneratingPolicy's result for one trigger: `pass` with the objects it would make (in the
/// namespace `generator.Apply` named), `skip` (a match condition false, or excepted), or
/// `error` with the message.
#[derive(Debug, Clone)]
pub struct GeneratedBy {
    pub policy: String,
    pub result: &'static str,
    pub message: Option<String>,
    pub objects: Vec<Json>,
}

/// Loads everything and evaluates each resource. Any load problem stops the run.
pub fn apply(input: &ApplyInput) -> Result<Vec<ResourceReport>, LoadErrors> {
    let mut errors = Vec::new();
    let manifests = read_manifests(&input.policies);
    let set = PolicySet::build(&manifests);
    errors.extend(set.errors.iter().map(ToString::to_string));
    let generating = celer_policy::kyverno::generating::load(&manifests);
    errors.extend(generating.errors.iter().map(ToString::to_string));
    let resources = objects(&input.resources, &mut errors);
    let old_resources = objects(&input.old_resources, &mut errors);
    let mut lookup_objects = objects(&input.params, &mut errors);
    lookup_objects.extend(objects(&input.namespaces, &mut errors));
    if resources.is_empty() && errors.is_empty() {
        errors.push("no resources to evaluate".to_string());
    }
    if !errors.is_empty() {
        return Err(LoadErrors(errors));
    }
    let mut lookup = ObjectLookup::new(lookup_objects);
    // Offline, as Kyverno's CLI: `evaluation.admission.enabled: false` does not keep a Kyverno
    // policy from running.
    let options = EvalOptions {
        kyverno: celer_policy::family::Mode {
            offline: true,
            ..Default::default()
        },
        ..EvalOptions::default()
    };
    let mut reports = Vec::with_capacity(resources.len());
    for (i, resource) in resources.iter().enumerate() {
        let reference = ObjectRef::of(resource);
        let old = old_resources.iter().find(|o| {
            let r = ObjectRef::of(o);
            r.kind == reference.kind
                && r.name == reference.name
                && r.namespace == reference.namespace
        });
        let (object, old_object) = match input.operation {
            Operation::Delete => (None, Some(resource)),
            Operation::Update => match old {
                Some(old) => (Some(resource), Some(old)),
                None => {
                    return Err(LoadErrors(vec![format!(
                        "UPDATE of {} {:?}: no --old-resource of the same kind, namespace and name",
                        reference.kind, reference.name
                    )]));
                }
            },
            Operation::Create | Operation::Connect => (Some(resource), old),
        };
        let body = review_for_subresource(
            object,
            old_object,
            input.operation,
            &input.user,
            &format!("celer-apply-{i}"),
            input.sub_resource.as_deref(),
        )
        .map_err(|e| {
            LoadErrors(vec![format!(
                "resource {} {:?}: {e}",
                reference.kind, reference.name
            )])
        })?;
        let review = AdmissionReview::parse(body.as_bytes())
            .map_err(|e| LoadErrors(vec![format!("resource {:?}: {e}", reference.name)]))?;
        let request = review
            .request()
            .map_err(|e| LoadErrors(vec![format!("resource {:?}: {e}", reference.name)]))?;
        let namespace = request.attributes.namespace;
        let assumed_namespace =
            assume_namespace(&mut lookup, namespace).then(|| namespace.to_string());
        let outcome = engine::evaluate(&set, &request, &lookup, &options);
        let generated = (generating.policies.iter())
            .filter_map(|policy| generated_by(policy, &request, &lookup, &options))
            .collect();
        reports.push(ResourceReport {
            resource: reference,
            outcome,
            assumed_namespace,
            generated,
        });
    }
    Ok(reports)
}

/// What `policy` would generate for the request; `None` when it does not select it.
fn generated_by(
    policy: &celer_policy::kyverno::generating::GeneratingPolicy,
    request: &celer_policy::request::Request<'_>,
    lookup: &ObjectLookup,
    options: &EvalOptions,
) -> Option<GeneratedBy> {
    use celer_policy::kyverno::generating::Generation;
    let (result, message, objects) = match policy.generate(request, lookup, options) {
        Generation::NotSelected => return None,
        Generation::Skipped | Generation::Excepted { pass: false, .. } => {
            ("skip", None, Vec::new())
        }
        Generation::Excepted { pass: true, .. } => ("pass", None, Vec::new()),
        Generation::Error(e) => ("error", Some(e), Vec::new()),
        Generation::Generated(objects, _) => {
            let objects = (objects.into_iter())
                .map(|g| {
                    let mut object = g.object;
                    let info = celer_policy::kinds::kind_info(
                        object
                            .get("apiVersion")
                            .and_then(|v| v.as_str())
                            .unwrap_or_default(),
                        object
                            .get("kind")
                            .and_then(|v| v.as_str())
                            .unwrap_or_default(),
                    );
                    if let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                        if info.namespaced && !g.namespace.is_empty() {
                            meta.insert(&"namespace", Json::from(g.namespace.as_str()));
                        } else if !info.namespaced {
                            meta.remove(&"namespace");
                        }
                    }
                    object
                })
                .collect();
            ("pass", None, objects)
        }
    };
    Some(GeneratedBy {
        policy: policy.key(),
        result,
        message,
        objects,
    })
}

/// The result words of the report: an Audit-only failure is reported as `warn` (admitted,
/// but recorded), its message saying so.
pub fn result_word(r: ResultKind) -> &'static str {
    match r {
        ResultKind::Audit => "warn",
        other => other.as_str(),
    }
}

fn json_string(s: &str) -> String {
    sonic_rs::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn opt_json_string(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), json_string)
}

/// The stable JSON report (`docs/cli.md`):
/// `{"resources":[{"resource":{...},"allowed":..,"status":..,"warnings":[..],
/// "auditAnnotations":{..},"patch":[..]|null,"patched":{..}|null,"results":[..]}]}`.
pub fn report_json(reports: &[ResourceReport]) -> Result<Json, OfflineError> {
    let mut out = String::from("{\"resources\":[");
    for (i, r) in reports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let o = &r.outcome;
        out.push_str(&format!(
            "{{\"resource\":{{\"apiVersion\":{},\"kind\":{},\"namespace\":{},\"name\":{}}},\"allowed\":{}",
            json_string(&r.resource.api_version),
            json_string(&r.resource.kind),
            json_string(&r.resource.namespace),
            json_string(&r.resource.name),
            o.allowed
        ));
        match &o.status {
            Some(s) => out.push_str(&format!(
                ",\"status\":{{\"code\":{},\"reason\":{},\"message\":{}}}",
                s.code,
                json_string(&s.reason),
                json_string(&s.message)
            )),
            None => out.push_str(",\"status\":null"),
        }
        let warnings: Vec<String> = o.warnings.iter().map(|w| json_string(w)).collect();
        out.push_str(&format!(",\"warnings\":[{}]", warnings.join(",")));
        let annotations: Vec<String> = o
            .audit_annotations
            .iter()
            .map(|(k, v)| format!("{}:{}", json_string(k), json_string(v)))
            .collect();
        out.push_str(&format!(
            ",\"auditAnnotations\":{{{}}}",
            annotations.join(",")
        ));
        match &o.patch {
            Some(p) => {
                let text = celer_policy::mutation::diff::to_text(p)?;
                out.push_str(&format!(",\"patch\":{text}"));
            }
            None => out.push_str(",\"patch\":null"),
        }
        match &o.patched {
            Some(p) => out.push_str(&format!(",\"patched\":{}", sonic_rs::to_string(p)?)),
            None => out.push_str(",\"patched\":null"),
        }
        let results: Vec<String> = o
            .results
            .iter()
            .map(|p| {
                format!(
                    "{{\"policy\":{},\"binding\":{},\"kind\":{},\"result\":{},\"message\":{}}}",
                    json_string(&p.policy),
                    opt_json_string(p.binding.as_deref()),
                    json_string(p.kind.as_str()),
                    json_string(result_word(p.result)),
                    opt_json_string(p.message.as_deref())
                )
            })
            .collect();
        out.push_str(&format!(",\"results\":[{}]", results.join(",")));
        let mut generated = Vec::new();
        for g in &r.generated {
            let objects = (g.objects.iter())
                .map(sonic_rs::to_string)
                .collect::<Result<Vec<_>, _>>()?;
            generated.push(format!(
                "{{\"policy\":{},\"result\":{},\"message\":{},\"objects\":[{}]}}",
                json_string(&g.policy),
                json_string(g.result),
                opt_json_string(g.message.as_deref()),
                objects.join(",")
            ));
        }
        out.push_str(&format!(",\"generated\":[{}]}}", generated.join(",")));
    }
    out.push_str("]}");
    Ok(sonic_rs::from_str(&out)?)
}
