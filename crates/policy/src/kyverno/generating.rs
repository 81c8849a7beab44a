//! Kyverno's GeneratingPolicy and NamespacedGeneratingPolicy (`policies.kyverno.io`): for a
//! trigger resource its `matchConstraints` and `matchConditions` select, the `generate[]`
//! expressions call `generator.Apply(namespace, objects)`, and those objects are made (or,
//! with `synchronize`, kept as generated) by the controller.
//!
//! Lowered into a ValidatingPolicy ([`super::lowered`]) and run on the one driver: the
//! constraints (operations as written: admission triggers are CREATE and UPDATE as the
//! policy says), `matchConditions`, `variables`, and each generate expression as a
//! validation wrapped so that any result counts as held (`[(e)].size() == 1`: the expression
//! runs once, and only an error stops the rest). The objects `generator.Apply` hands over are
//! collected by a context wrapped around the host's ([`Collecting`]); the lowered policy's
//! result tells the outcome: no result, not selected; `pass`, the objects generated (maybe
//! none); `skip`, a match condition was false or a PolicyException applies; `error`, an
//! expression failed (what it generated before is dropped, as Kyverno drops it).

use std::sync::Arc;

use celer_cel::Json;
use celer_cel_kyverno::{ContextError, Gvr, HttpRequest, KyvernoContext};
use parking_lot::Mutex;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use super::lowered::Lowering;
use super::model::{GROUP, PolicyException, VERSIONS};
use crate::background::{PolicyMeta, ReportResult, ScannedResource, Status};
use crate::engine::{self, EvalOptions};
use crate::kinds::KindInfo;
use crate::load::{LoadError, Manifests, Source};
use crate::lookup::Lookup;
use crate::policy_set::PolicySet;
use crate::request::AdmissionReview;
use crate::response::{PolicyKind, ResultKind};

/// The kinds this module reads.
pub const KINDS: [&str; 2] = ["GeneratingPolicy", "NamespacedGeneratingPolicy"];
/// The uid of the requests made for existing triggers.
const UID: &str = "celer-generating-policy";

/// Whether a document is a GeneratingPolicy or NamespacedGeneratingPolicy.
pub fn is_generating_policy(api_version: &str, kind: &str) -> bool {
    let (group, version) = crate::kinds::split_api_version(api_version);
    group == GROUP && VERSIONS.contains(&version) && KINDS.contains(&kind)
}

/// `spec.evaluation`, with Kyverno's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    /// Triggers from admission requests (default on).
    pub admission: bool,
    /// Triggers that existed before the policy (default off).
    pub generate_existing: bool,
    /// Downstream objects kept as generated: restored when changed or deleted, updated when
    /// the trigger changes, deleted with it (default off).
    pub synchronize: bool,
    /// Downstream objects left in place when the policy is deleted (default off).
    pub orphan_downstream_on_policy_delete: bool,
    /// Requests of background controllers do not trigger (default on).
    pub skip_background_requests: bool,
}

impl Default for Evaluation {
    fn default() -> Evaluation {
        Evaluation {
            admission: true,
            generate_existing: false,
            synchronize: false,
            orphan_downstream_on_policy_delete: false,
            skip_background_requests: true,
        }
    }
}

/// One GeneratingPolicy, compiled.
#[derive(Debug)]
pub struct GeneratingPolicy {
    /// `GeneratingPolicy` or `NamespacedGeneratingPolicy`.
    pub kind: &'static str,
    pub name: String,
    /// A NamespacedGeneratingPolicy's namespace: its triggers and downstream objects are there.
    pub namespace: Option<String>,
    pub evaluation: Evaluation,
    /// `spec.useServerSideApply`: downstream objects are applied (field manager `generate`).
    pub use_server_side_apply: bool,
    /// What its report results say besides the result (scored, category, severity).
    pub report: PolicyMeta,
    set: PolicySet,
    /// Each validation as lowered and the expression it stands for, so that messages quote
    /// what the author wrote.
    written: Vec<(String, String)>,
}

/// One object a policy generated, and the namespace `generator.Apply` named for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub namespace: String,
    pub object: Json,
}

/// What a GeneratingPolicy gives for one trigger.
#[derive(Debug, Clone, PartialEq)]
pub enum Generation {
    /// Its `matchConstraints` do not select the trigger.
    NotSelected,
    /// A match condition was false.
    Skipped,
    /// PolicyExceptions apply (by name): nothing is generated; `pass` when the one that
    /// decides says `reportResult: pass`.
    Excepted { exceptions: Vec<String>, pass: bool },
    /// The objects generated (maybe none), and the audit annotations' values.
    Generated(Vec<Generated>, Vec<(String, String)>),
    /// An expression failed.
    Error(String),
}

impl GeneratingPolicy {
    /// `name`, or `namespace/name`, as Kyverno keys policies.
    pub fn key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The lowered policy's set: what selects triggers, for discovery and admission.
    pub fn policy_set(&self) -> &PolicySet {
        &self.set
    }

    /// The webhook Kyverno's webhook controller registers for the policy
    /// (`gpol.validate.kyverno.svc`, `ngpol...`): the lowered policy's, on all four
    /// operations (generation also follows deletions and subresource requests), failurePolicy
    /// Ignore, and for a synchronized policy match conditions that only filter creations
    /// (an update or deletion of a trigger that stopped matching must still arrive).
    pub fn webhook(&self) -> Option<super::webhook::KyvernoWebhook> {
        let lowered = self.set.kyverno().validating.first()?;
        let mut webhook = (**lowered.extras.webhook.as_ref()?).clone();
        for rule in &mut webhook.rules {
            rule.operations = ["CONNECT", "CREATE", "DELETE", "UPDATE"]
                .map(str::to_string)
                .to_vec();
        }
        webhook.rules = super::webhook::sorted_rules(std::mem::take(&mut webhook.rules));
        webhook.ignore = true;
        if self.evaluation.synchronize
            && let Some(fine) = &mut webhook.fine_grained
        {
            for (_, expression) in &mut fine.match_conditions {
                *expression = format!("request.operation != 'CREATE' || ({expression})");
            }
        }
        Some(webhook)
    }

    /// Whether the request is of a resource and operation its resource rules name (what the
    /// webhook that hands requests over asks; the controller then evaluates in full).
    pub fn may_select(&self, attributes: &crate::attributes::Attributes<'_>) -> bool {
        (self.set.kyverno().validating.iter()).any(|k| {
            (k.policy.common.constraints.rule_keys().iter()).any(|key| {
                key.group.matches(attributes.resource.group)
                    && key.resource.matches(attributes.resource.resource)
                    && key.subresource.matches(attributes.sub_resource)
                    && key.operation.is_none_or(|op| op == attributes.operation)
            })
        })
    }

    /// The policy on an admission request.
    pub fn generate(
        &self,
        request: &crate::request::Request<'_>,
        lookup: &dyn Lookup,
        options: &EvalOptions,
    ) -> Generation {
        let collecting = Arc::new(Collecting::new(options.kyverno_context.clone()));
        let mut options = options.clone();
        options.kyverno_context = Some(Arc::clone(&collecting) as Arc<dyn KyvernoContext>);
        let outcome = engine::evaluate(&self.set, request, lookup, &options);
        let result = (outcome.results.iter())
            .find(|r| r.kind == PolicyKind::KyvernoValidating && r.policy == *self.name);
        let Some(result) = result else {
            return Generation::NotSelected;
        };
        let message = result.message.as_deref().unwrap_or_default();
        let exceptions = crate::background::exception_names(message);
        if !exceptions.is_empty() && matches!(result.result, ResultKind::Pass | ResultKind::Skip) {
            return Generation::Excepted {
                exceptions: exceptions.into_iter().map(str::to_string).collect(),
                pass: result.result == ResultKind::Pass,
            };
        }
        match result.result {
            ResultKind::Pass => Generation::Generated(
                collecting.take(),
                (result.properties.iter())
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
            ResultKind::Skip => Generation::Skipped,
            _ => {
                let mut message = rename_paths(message);
                for (lowered, written) in &self.written {
                    message = message.replace(lowered, written);
                }
                Generation::Error(message)
            }
        }
    }

    /// The policy on an existing trigger, as if it were created now (Kyverno's
    /// `generateExisting` and celer's controller, which sees triggers through watches).
    pub fn generate_for_object(
        &self,
        object: &Json,
        resource: Option<ScannedResource<'_>>,
        lookup: &dyn Lookup,
        options: &EvalOptions,
    ) -> Generation {
        let info = resource.map(|r| KindInfo {
            group: r.group.to_string(),
            version: r.version.to_string(),
            resource: r.resource.to_string(),
            namespaced: r.namespaced,
        });
        let built = crate::request::background_review(object, info, UID)
            .map_err(|e| e.to_string())
            .and_then(|body| {
                let review = AdmissionReview::parse(body.as_bytes()).map_err(|e| e.to_string())?;
                let mut options = options.clone();
                options.kyverno.background = true;
                let request = review.request().map_err(|e| e.to_string())?;
                Ok(self.generate(&request, lookup, &options))
            });
        built.unwrap_or_else(|e| Generation::Error(format!("cannot build the request: {e}")))
    }
}

/// The argument counts of the `generator.apply`/`generator.Apply` calls in an expression (none
/// when it does not parse: the compiler says why).
fn apply_arities(expression: &str) -> Vec<usize> {
    use celer_cel::syntax::ast::{Expr, ExprKind};
    fn walk(e: &Expr, out: &mut Vec<usize>) {
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select { operand, .. } => walk(operand, out),
            ExprKind::Call {
                target,
                function,
                args,
            } => {
                if let Some(t) = target {
                    let on_generator = matches!(&t.kind, ExprKind::Ident(n) if n == "generator");
                    if on_generator && (function == "apply" || function == "Apply") {
                        out.push(args.len());
                    }
                    walk(t, out);
                }
                args.iter().for_each(|a| walk(a, out));
            }
            ExprKind::List { elements, .. } => elements.iter().for_each(|a| walk(a, out)),
            ExprKind::Map { entries } => {
                for entry in entries {
                    walk(&entry.key, out);
                    walk(&entry.value, out);
                }
            }
            ExprKind::Struct { fields, .. } => fields.iter().for_each(|f| walk(&f.value, out)),
            ExprKind::Comprehension(c) => {
                for part in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_condition,
                    &c.loop_step,
                    &c.result,
                ] {
                    walk(part, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(parsed) = celer_cel::syntax::parse(expression) {
        walk(&parsed, &mut out);
    }
    out
}

/// A report result's source for GeneratingPolicies.
const REPORT_SOURCE: &str = "KyvernoGeneratingPolicy";

impl GeneratingPolicy {
    /// The policy report result Kyverno's generate controller writes for a trigger
    /// (`GenerationEngineResponseToReportResults`): `process: admission review` whatever
    /// brought the trigger, the objects made in `generated-resources`. `failure`: why the
    /// objects were not all made (an error result, as Kyverno's `generator.Apply` fails).
    /// `None` when there is nothing to report (not selected, a match condition false, or
    /// reports disabled for the policy).
    pub fn report_result(
        &self,
        generation: &Generation,
        failure: Option<&str>,
    ) -> Option<ReportResult> {
        if !self.report.reported {
            return None;
        }
        let mut properties = std::collections::BTreeMap::new();
        let (rule, result, message) = match (generation, failure) {
            (Generation::NotSelected | Generation::Skipped, _) => return None,
            (Generation::Excepted { exceptions, pass }, _) => {
                properties.insert("exceptions".to_string(), exceptions.join(","));
                let (result, message) = match pass {
                    true => (
                        Status::Pass,
                        format!(
                            "rule is passed due to policy exception: {}",
                            exceptions.join(", ")
                        ),
                    ),
                    false => (Status::Skip, String::new()),
                };
                ("exception".to_string(), result, message)
            }
            (Generation::Error(e), _) => (
                self.name.clone(),
                Status::Error,
                format!("failed to evaluate policy: {e}"),
            ),
            (Generation::Generated(..), Some(e)) => (
                self.name.clone(),
                Status::Error,
                format!("failed to evaluate policy: {e}"),
            ),
            (Generation::Generated(objects, annotations), None) => {
                properties.extend(annotations.iter().cloned());
                let made: Vec<String> = (objects.iter())
                    .filter_map(generated_resource_info)
                    .collect();
                if !made.is_empty() {
                    properties.insert("generated-resources".to_string(), made.join("; "));
                }
                (
                    self.name.clone(),
                    Status::Pass,
                    "policy evaluated successfully".to_string(),
                )
            }
        };
        properties.insert(
            "process".to_string(),
            crate::background::ADMISSION_REVIEW.to_string(),
        );
        Some(ReportResult {
            source: REPORT_SOURCE.to_string(),
            policy: self.key(),
            rule,
            result,
            message,
            category: self.report.category.clone(),
            severity: self.report.severity,
            scored: self.report.scored,
            properties,
        })
    }
}

/// `<group>/<version>, Kind=<kind> Name=<name>[ Namespace=<namespace>]`, as Kyverno names a
/// generated object in reports (Go's GroupVersionKind text); `None` for what makes no
/// object (no kind).
fn generated_resource_info(generated: &Generated) -> Option<String> {
    let text = |path: &[&str]| {
        let mut at = &generated.object;
        for key in path {
            at = at.get(key)?;
        }
        at.as_str()
    };
    let kind = text(&["kind"]).filter(|k| !k.is_empty())?;
    let api_version = text(&["apiVersion"]).unwrap_or_default();
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    let name = text(&["metadata", "name"]).unwrap_or_default();
    let mut info = format!("{group}/{version}, Kind={kind} Name={name}");
    if !generated.namespace.is_empty() {
        info.push_str(" Namespace=");
        info.push_str(&generated.namespace);
    }
    Some(info)
}

/// The lowered policy's field paths as the GeneratingPolicy's author wrote them.
fn rename_paths(text: &str) -> String {
    text.replace("spec.validations", "spec.generate")
        .replace("NamespacedValidatingPolicy", "NamespacedGeneratingPolicy")
        .replace("ValidatingPolicy", "GeneratingPolicy")
}

/// The GeneratingPolicies of `manifests`, and why the others did not load.
#[derive(Debug, Default)]
pub struct Loaded {
    pub policies: Vec<GeneratingPolicy>,
    pub errors: Vec<LoadError>,
}

/// Reads and compiles every GeneratingPolicy and NamespacedGeneratingPolicy among
/// `manifests` (plain objects to the admission loader), with the PolicyExceptions that name
/// them.
pub fn load(manifests: &Manifests) -> Loaded {
    let (policies, errors) = super::lowered::load_kind(
        manifests,
        is_generating_policy,
        compile,
        |p: &GeneratingPolicy| (p.name.clone(), p.namespace.clone(), p.kind),
    );
    Loaded { policies, errors }
}

fn switch(evaluation: Option<&Json>, key: &str, default: bool) -> bool {
    (evaluation
        .and_then(|e| e.get(key))
        .and_then(|s| s.get("enabled")))
    .and_then(|b| b.as_bool())
    .unwrap_or(default)
}

fn compile(
    source: &Source,
    doc: &Json,
    kind: &str,
    exceptions: &[&PolicyException],
) -> Result<GeneratingPolicy, Vec<String>> {
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
    let generate = spec.get("generate").and_then(|g| g.as_array());
    let mut expressions = Vec::new();
    // The indices of the expressions a template was lowered into (celer's own text).
    let mut lowered_templates = Vec::new();
    match generate {
        None => problems.push("spec.generate: Required value".to_string()),
        Some(list) if list.is_empty() => {
            problems.push("spec.generate: Required value: at least one generation".to_string())
        }
        Some(list) => {
            for (i, g) in list.iter().enumerate() {
                let expression = text(g.get("expression"));
                let template = g.get("template").filter(|t| !t.is_null());
                match (expression.is_empty(), template) {
                    (false, None) => expressions.push(expression),
                    (true, Some(template)) => {
                        let interpolate = text(template.get("interpolate"));
                        let value = text(template.get("value"));
                        match super::generation_template::lower(
                            &value,
                            interpolate == "cel",
                            namespace.as_deref(),
                        ) {
                            Ok(expression) => {
                                lowered_templates.push(expressions.len());
                                expressions.push(expression)
                            }
                            Err(e) => problems.push(format!(
                                "spec.generate[{i}].template.value: Invalid value: {e}"
                            )),
                        }
                    }
                    (false, Some(_)) => problems.push(format!(
                        "spec.generate[{i}]: Invalid value: expression and template are mutually exclusive"
                    )),
                    (true, None) => problems.push(format!(
                        "spec.generate[{i}]: Required value: an expression or a template"
                    )),
                }
            }
        }
    }
    // Kyverno declares `generator.Apply(namespace, objects)` for a GeneratingPolicy and
    // `generator.Apply(objects)` (its own namespace) for a NamespacedGeneratingPolicy only.
    let variables = (spec.get("variables").and_then(|v| v.as_array()))
        .map(|list| {
            (list.iter())
                .map(|v| text(v.get("expression")))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let arity = if namespaced { 1 } else { 2 };
    let located = (expressions.iter().enumerate())
        .filter(|(i, _)| !lowered_templates.contains(i))
        .map(|(i, e)| (format!("spec.generate[{i}].expression"), e))
        .chain(
            (variables.iter().enumerate())
                .map(|(i, e)| (format!("spec.variables[{i}].expression"), e)),
        );
    for (path, expression) in located {
        if let Some(found) = apply_arities(expression).into_iter().find(|n| *n != arity) {
            problems.push(format!(
                "{path}: Invalid value: {expression:?}: found no matching overload for 'generator.apply' with {found} argument{}: a {kind} takes {}",
                if found == 1 { "" } else { "s" },
                if namespaced { "(objects)" } else { "(namespace, objects)" },
            ));
        }
    }
    let Some(constraints) = spec.get("matchConstraints").filter(|c| c.is_object()) else {
        problems.push("spec.matchConstraints: Required value".to_string());
        return Err(problems);
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let evaluation_spec = spec.get("evaluation");
    let evaluation = Evaluation {
        admission: switch(evaluation_spec, "admission", true),
        generate_existing: switch(evaluation_spec, "generateExisting", false),
        synchronize: switch(evaluation_spec, "synchronize", false),
        orphan_downstream_on_policy_delete: switch(
            evaluation_spec,
            "orphanDownstreamOnPolicyDelete",
            false,
        ),
        skip_background_requests: (evaluation_spec.and_then(|e| e.get("skipBackgroundRequests")))
            .and_then(|b| b.as_bool())
            .unwrap_or(true),
    };
    // Kyverno takes a GeneratingPolicy's audit annotation of any type and wants a string
    // at run time (its values are report properties): `object.metadata.name` (dyn) is
    // accepted, which a ValidatingPolicy's type check would refuse.
    let audit_annotations = spec
        .get("auditAnnotations")
        .and_then(|a| a.as_array())
        .map(|list| {
            let lowered = (list.iter())
                .map(|a| {
                    let mut a = a.clone();
                    let value = text(a.get("valueExpression"));
                    if let Some(o) = a.as_object_mut() {
                        o.insert(
                            &"valueExpression",
                            Json::from(format!("string(dyn({value}\n))").as_str()),
                        );
                    }
                    a
                })
                .collect();
            super::lowered::array(lowered)
        });
    let lowering = Lowering {
        name: &name,
        namespace: namespace.as_deref(),
        kind,
        constraints,
        widen_operations: false,
        match_conditions: spec.get("matchConditions"),
        variables: spec.get("variables"),
        audit_annotations: audit_annotations.as_ref(),
        exception_pass: true,
    };
    // Each expression as written first, so that a compile error shows it and its position.
    lowering
        .build(source, &expressions, &[])
        .map_err(|errors| errors.iter().map(|e| rename_paths(e)).collect::<Vec<_>>())?;
    // Any result counts as held; the closing bracket on its own line survives a trailing
    // `//` comment.
    let validations: Vec<String> = (expressions.iter())
        .map(|e| format!("[({e}\n)].size() == 1"))
        .collect();
    let set = lowering
        .build(source, &validations, exceptions)
        .map_err(|errors| errors.iter().map(|e| rename_paths(e)).collect::<Vec<_>>())?;
    let written = validations.into_iter().zip(expressions).collect();
    let report = PolicyMeta {
        namespace: namespace.clone(),
        ..PolicyMeta::of_document(doc)
    };
    Ok(GeneratingPolicy {
        kind,
        name,
        namespace,
        evaluation,
        report,
        use_server_side_apply: spec
            .get("useServerSideApply")
            .and_then(|b| b.as_bool())
            .unwrap_or(false),
        set,
        written,
    })
}

/// The host's context with generation collected: `generator.Apply` hands its objects here,
/// every other call goes to the host's context (or is unsupported without one).
#[derive(Debug)]
pub struct Collecting {
    inner: Option<Arc<dyn KyvernoContext>>,
    generated: Mutex<Vec<Generated>>,
}

impl Collecting {
    pub fn new(inner: Option<Arc<dyn KyvernoContext>>) -> Collecting {
        Collecting {
            inner,
            generated: Mutex::new(Vec::new()),
        }
    }

    /// What was generated so far, taken.
    pub fn take(&self) -> Vec<Generated> {
        std::mem::take(&mut *self.generated.lock())
    }

    fn inner(&self) -> Result<&dyn KyvernoContext, ContextError> {
        self.inner.as_deref().ok_or(ContextError::Unsupported)
    }
}

impl KyvernoContext for Collecting {
    fn get_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Json>, ContextError> {
        self.inner()?
            .get_resource(api_version, resource, namespace, name)
    }

    fn list_resources(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        labels: &[(String, String)],
    ) -> Result<Vec<Json>, ContextError> {
        self.inner()?
            .list_resources(api_version, resource, namespace, labels)
    }

    fn post_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        body: &Json,
    ) -> Result<Json, ContextError> {
        self.inner()?
            .post_resource(api_version, resource, namespace, body)
    }

    fn to_gvr(&self, api_version: &str, kind: &str) -> Result<Gvr, ContextError> {
        self.inner()?.to_gvr(api_version, kind)
    }

    fn http(&self, request: &HttpRequest) -> Result<Json, ContextError> {
        self.inner()?.http(request)
    }

    fn global_context(&self, name: &str, projection: &str) -> Result<Option<Json>, ContextError> {
        self.inner()?.global_context(name, projection)
    }

    fn image_metadata(&self, image: &str) -> Result<Json, ContextError> {
        self.inner()?.image_metadata(image)
    }

    fn now(&self) -> Option<celer_cel::time::Timestamp> {
        self.inner.as_ref().and_then(|i| i.now())
    }

    fn generate(&self, namespace: &str, objects: Vec<Json>) -> Result<(), ContextError> {
        let mut generated = self.generated.lock();
        for object in objects {
            // A list (an object with `items`, as `resource.List` returns) stands for its
            // items, as Kyverno's unstructured `IsList` unpacks it.
            let items = object.get("items").and_then(|i| i.as_array());
            match items {
                Some(items) => generated.extend(items.iter().map(|o| Generated {
                    namespace: namespace.to_string(),
                    object: o.clone(),
                })),
                None => generated.push(Generated {
                    namespace: namespace.to_string(),
                    object,
                }),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "generating_tests.rs"]
mod tests;
