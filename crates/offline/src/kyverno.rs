//! Kyverno's test files (`kyverno-test.yaml`, kind `Test`) for the kinds celer runs: each
//! resource is evaluated as a CREATE request against the suite's policies and every expected
//! result row is checked.
//!
//! Kyverno's CLI is more forgiving than the API server, and its suites rely on it: a policy
//! with no binding applies as if bound with `validationActions: [Deny]`, a binding without
//! validationActions denies, a paramRef without parameterNotFoundAction denies when nothing
//! is found, a resource rule without operations matches every operation, a namespace that the
//! suite does not describe exists with no labels, and params chosen by a selector are passed
//! together as one list object (`params.items`). These are applied here and through
//! [`EvalOptions::selector_params_as_list`], never by default in the engine.

use std::path::Path;
use std::sync::Arc;

use celer_cel_kyverno::{KyvernoContext, MemoryContext, MockError};

use celer_cel::Json;
use celer_policy::NativeManifest;
use celer_policy::attributes::Operation;
use celer_policy::document::parse_documents;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::{Manifest, Manifests, PolicyManifest};
use celer_policy::lookup::ObjectLookup;
use celer_policy::model::{
    MutatingAdmissionPolicyBinding, MutatingAdmissionPolicyBindingSpec, ObjectMeta,
    ParameterNotFoundAction, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidationAction,
};
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use celer_policy::response::{Outcome, PolicyKind, ResultKind};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use crate::OfflineError;
use crate::files::read_text;
use crate::kyverno_classic::{classic_result, has_type_flag, left_out_errors, left_out_reason};
use crate::suite::{Check, SuiteOutcome};

fn str_of<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

fn list_of(v: &Json, key: &str) -> Vec<String> {
    match v.get(key) {
        Some(l) if l.is_array() => l
            .as_array()
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        Some(s) => s.as_str().map(|s| vec![s.to_string()]).unwrap_or_default(),
        None => Vec::new(),
    }
}

fn read_json(path: &Path) -> Result<Vec<Json>, OfflineError> {
    let text = read_text(path).map_err(|e| OfflineError::read_file(path, e))?;
    parse_documents(&text).map_err(|e| OfflineError::document(path, e))
}

fn object_key(o: &Json) -> (String, String) {
    let name = o
        .get("metadata")
        .map(|m| str_of(m, "name"))
        .unwrap_or_default();
    (str_of(o, "kind").to_string(), name.to_string())
}

/// Runs one `kyverno-test.yaml` on its own mocks.
pub fn run(test_file: &Path) -> Result<SuiteOutcome, OfflineError> {
    run_with(test_file, &crate::suite::RunOptions::default())
}

/// Runs one `kyverno-test.yaml` as `options` say (a live cluster's context).
pub fn run_with(
    test_file: &Path,
    options: &crate::suite::RunOptions,
) -> Result<SuiteOutcome, OfflineError> {
    let docs = read_json(test_file)?;
    let test = docs
        .into_iter()
        .next()
        .ok_or_else(|| OfflineError::EmptyTestFile {
            path: test_file.to_path_buf(),
        })?;
    let dir = test_file.parent().unwrap_or(Path::new("."));
    let mut outcome = SuiteOutcome::new(test_file);

    let mut manifests = Manifests::default();
    for p in list_of(&test, "policies") {
        crate::files::read_into(&mut manifests, &dir.join(p));
    }
    for p in list_of(&test, "exceptions") {
        crate::files::read_into(&mut manifests, &dir.join(p));
    }
    outcome
        .errors
        .extend(manifests.errors.drain(..).map(|e| e.to_string()));
    apply_cli_defaults(&mut manifests);
    let set = PolicySet::build(&manifests);
    // ClusterPolicy and Policy rules celer leaves out are not errors here: the rows that check
    // them are skipped, with the reason.
    let classic = celer_policy::kyverno::load::classic_rules(&manifests);
    let left_out = left_out_errors(&set);
    outcome.errors.extend(
        set.errors
            .iter()
            .map(ToString::to_string)
            .filter(|e| !left_out.contains(e)),
    );

    let mut resources = Vec::new();
    for p in list_of(&test, "resources") {
        resources.extend(read_json(&dir.join(p))?.into_iter().map(cli_resource));
    }
    let mut lookup_objects = Vec::new();
    for p in list_of(&test, "paramResources") {
        lookup_objects.extend(read_json(&dir.join(p))?);
    }
    let mut described_namespaces = Vec::new();
    // `request.operation` among a values file's globalValues: the default operation.
    let mut default_operation = Operation::Create;
    // (kind, parent resource, subresource)
    let mut subresources: Vec<(String, String, String)> = Vec::new();
    let mut classic_values: Option<Arc<celer_policy::kyverno::ClassicValues>> = None;
    if let Some(values) = test.get("variables").and_then(|v| v.as_str()) {
        for doc in read_json(&dir.join(values))? {
            let read = celer_policy::kyverno::ClassicValues::from_document(&doc);
            if !read.is_empty() {
                classic_values = Some(Arc::new(read));
            }
            if let Some(op) = doc
                .get("globalValues")
                .and_then(|g| g.get("request.operation"))
                .and_then(|o| o.as_str())
                .and_then(parse_operation)
            {
                default_operation = op;
            }
            // `subresources`: kinds admitted as a subresource of a parent resource
            // (`Binding` as `pods/binding`).
            for sub in doc
                .get("subresources")
                .and_then(|l| l.as_array())
                .into_iter()
                .flat_map(|l| l.iter())
            {
                let kind = sub
                    .get("subresource")
                    .map(|s| str_of(s, "kind"))
                    .unwrap_or_default();
                let name = sub
                    .get("subresource")
                    .map(|s| str_of(s, "name"))
                    .unwrap_or_default();
                if let Some((parent, subresource)) = name.split_once('/') {
                    subresources.push((
                        kind.to_string(),
                        parent.to_string(),
                        subresource.to_string(),
                    ));
                }
            }
            if let Some(list) = doc.get("namespaceSelector").and_then(|l| l.as_array()) {
                for ns in list.iter() {
                    let name = str_of(ns, "name");
                    let labels = ns
                        .get("labels")
                        .and_then(|l| sonic_rs::to_string(l).ok())
                        .unwrap_or_else(|| "{}".to_string());
                    described_namespaces.push(name.to_string());
                    lookup_objects.push(namespace_object(name, &labels)?);
                }
            }
            // `namespaces`: whole Namespace objects, which win over namespaceSelector.
            if let Some(list) = doc.get("namespaces").and_then(|l| l.as_array()) {
                for ns in list.iter() {
                    let name = ns
                        .get("metadata")
                        .map(|m| str_of(m, "name"))
                        .unwrap_or_default()
                        .to_string();
                    let mut ns = ns.clone();
                    if let Some(o) = ns.as_object_mut() {
                        o.insert(&"apiVersion", Json::from("v1"));
                        o.insert(&"kind", Json::from("Namespace"));
                    }
                    lookup_objects.retain(|o| {
                        !(str_of(o, "kind") == "Namespace"
                            && o.get("metadata").map(|m| str_of(m, "name")) == Some(name.as_str()))
                    });
                    described_namespaces.push(name);
                    lookup_objects.push(ns);
                }
            }
        }
    }
    let mut user = RequestUser::default();
    if let Some(file) = test.get("userinfo").and_then(|v| v.as_str()) {
        for doc in read_json(&dir.join(file))? {
            if let Some(u) = doc.get("userInfo") {
                user.username = str_of(u, "username").to_string();
                user.groups = list_of(u, "groups");
            }
        }
    }
    // Kyverno's CLI evaluates resources in namespaces it was not told about as if they
    // existed with no labels.
    for r in &resources {
        let ns = r
            .get("metadata")
            .map(|m| str_of(m, "namespace"))
            .filter(|n| !n.is_empty())
            .unwrap_or("default");
        if !described_namespaces.iter().any(|d| d == ns) {
            described_namespaces.push(ns.to_string());
            lookup_objects.push(namespace_object(ns, "{}")?);
        }
    }
    let lookup = ObjectLookup::new(lookup_objects);
    let kyverno_context = match &options.context {
        Some(live) => Arc::clone(live),
        None => context_of(&test, dir)?,
    };

    let evaluate_all = |operation: Operation| -> Result<Vec<Evaluated>, OfflineError> {
        let mut evaluated: Vec<Evaluated> = Vec::new();
        for (i, r) in resources.iter().enumerate() {
            // Kyverno's CLI shapes requests as the API server would: UPDATE sees the resource
            // as both objects, DELETE only as the old one.
            let (object, old_object) = match operation {
                Operation::Update => (Some(r), Some(r)),
                Operation::Delete => (None, Some(r)),
                _ => (Some(r), None),
            };
            let mut body = review_for(object, old_object, operation, &user, &format!("celer-{i}"))
                .map_err(|source| OfflineError::Resource {
                    name: object_key(r).1,
                    source,
                })?;
            if let Some((_, parent, subresource)) = subresources
                .iter()
                .find(|(k, _, _)| *k == str_of(r, "kind"))
            {
                body = as_subresource(&body, parent, subresource)?;
            }
            let review = AdmissionReview::parse(body.as_bytes())?;
            let request = review.request()?;
            let options = EvalOptions {
                selector_params_as_list: true,
                kyverno: celer_policy::family::Mode {
                    offline: true,
                    live_context: options.context.is_some(),
                    ..Default::default()
                },
                kyverno_context: Some(kyverno_context.clone()),
                classic_values: classic_values.clone(),
                ..EvalOptions::default()
            };
            let result = engine::evaluate(&set, &request, &lookup, &options);
            evaluated.push((object_key(r), r.clone(), result));
        }
        Ok(evaluated)
    };
    let mut by_operation: Vec<(Operation, Vec<Evaluated>)> = Vec::new();
    let deleting = celer_policy::kyverno::deleting::load(&manifests);
    outcome
        .errors
        .extend(deleting.errors.iter().map(ToString::to_string));
    let deleting_options = EvalOptions {
        selector_params_as_list: true,
        kyverno: celer_policy::family::Mode {
            offline: true,
            live_context: options.context.is_some(),
            ..Default::default()
        },
        kyverno_context: Some(kyverno_context.clone()),
        ..EvalOptions::default()
    };

    let Some(rows) = test.get("results").and_then(|r| r.as_array()) else {
        return Ok(outcome);
    };
    let mut targets = Vec::new();
    for p in list_of(&test, "targetResources") {
        targets.extend(read_json(&dir.join(p))?.into_iter().map(cli_resource));
    }
    let generating = celer_policy::kyverno::generating::load(&manifests);
    outcome
        .errors
        .extend(generating.errors.iter().map(ToString::to_string));
    for row in rows.iter() {
        if row.get("isGeneratingPolicy").and_then(|b| b.as_bool()) == Some(true) {
            let generating = Generating {
                policies: &generating.policies,
                resources: &resources,
                lookup: &lookup,
                options: &deleting_options,
                dir,
            };
            generating.check_row(row, &mut outcome)?;
            continue;
        }
        if row.get("isMutatingPolicy").and_then(|b| b.as_bool()) == Some(true)
            && !targets.is_empty()
            && let Some(policy) = celer_policy::kyverno::mutate_existing::policies(&set)
                .iter()
                .find(|e| e.name == str_of(row, "policy"))
        {
            let existing = ExistingRows {
                policy,
                set: &set,
                triggers: &resources,
                targets: &targets,
                lookup: &lookup,
                options: &deleting_options,
                dir,
                user: &user,
            };
            existing.check_row(row, &mut outcome)?;
            continue;
        }
        if row.get("isDeletingPolicy").and_then(|b| b.as_bool()) == Some(true) {
            let deleting = Deleting {
                policies: &deleting.policies,
                resources: &resources,
                lookup: &lookup,
                options: &deleting_options,
                payloads: test.get("jsonPayloads").is_some(),
            };
            deleting.check_row(row, &mut outcome);
            continue;
        }
        let operation = match row.get("operation").and_then(|o| o.as_str()) {
            Some(op) => match parse_operation(op) {
                Some(op) => op,
                None => {
                    outcome.errors.push(format!(
                        "result row operation {op:?}: not CREATE, UPDATE or DELETE"
                    ));
                    continue;
                }
            },
            None => default_operation,
        };
        if !by_operation.iter().any(|(op, _)| *op == operation) {
            by_operation.push((operation, evaluate_all(operation)?));
        }
        let evaluated: &[Evaluated] = by_operation
            .iter()
            .find(|(op, _)| *op == operation)
            .map(|(_, e)| e.as_slice())
            .unwrap_or_default();
        let policy = str_of(row, "policy").to_string();
        let kind = str_of(row, "kind").to_string();
        let expected = str_of(row, "result").to_string();
        if !has_type_flag(row)
            && let Some(reason) = left_out_reason(&classic, &policy, str_of(row, "rule"))
        {
            skip_row(&mut outcome, row, &reason);
            continue;
        }
        let policy_kind = if row
            .get("isValidatingAdmissionPolicy")
            .and_then(|b| b.as_bool())
            == Some(true)
        {
            PolicyKind::Validating
        } else if row
            .get("isMutatingAdmissionPolicy")
            .and_then(|b| b.as_bool())
            == Some(true)
        {
            PolicyKind::Mutating
        } else if row.get("isValidatingPolicy").and_then(|b| b.as_bool()) == Some(true) {
            PolicyKind::KyvernoValidating
        } else if row.get("isMutatingPolicy").and_then(|b| b.as_bool()) == Some(true) {
            PolicyKind::KyvernoMutating
        } else if let Some(kind) = kind_of_policy(&set, &policy) {
            // Kyverno's CLI checks a row without a type flag against whatever policy has the
            // name.
            kind
        } else {
            skip_row(
                &mut outcome,
                row,
                "not a policy celer runs (ValidatingAdmissionPolicy, MutatingAdmissionPolicy, ValidatingPolicy, MutatingPolicy, ClusterPolicy and Policy rules of the types celer runs)",
            );
            continue;
        };
        let names = list_of(row, "resources");
        let patched = match row.get("patchedResources").and_then(|p| p.as_str()) {
            Some(p) => read_json(&dir.join(p))?
                .into_iter()
                .map(cli_resource)
                .collect(),
            None => Vec::new(),
        };
        for ((r_kind, r_name), original, result) in evaluated {
            if *r_kind != kind
                || !(names.is_empty() || names.iter().any(|n| names_resource(n, original)))
            {
                continue;
            }
            let (actual, detail) = match policy_kind {
                PolicyKind::Validating | PolicyKind::GatekeeperConstraint => {
                    validating_result(&policy, result)
                }
                // Kyverno's test files never name a Gatekeeper mutator; it would read as a
                // MutatingAdmissionPolicy's result.
                kind @ (PolicyKind::Mutating | PolicyKind::GatekeeperMutator) => {
                    mutating_result(&set, &policy, kind, original, result, &patched)
                }
                PolicyKind::KyvernoValidating => kyverno_validating_result(&set, &policy, result),
                PolicyKind::KyvernoClusterPolicy => {
                    classic_result(&policy, str_of(row, "rule"), result)
                }
                PolicyKind::KyvernoMutating => mutating_result(
                    &set,
                    &policy,
                    PolicyKind::KyvernoMutating,
                    original,
                    result,
                    &patched,
                ),
            };
            if actual == EXCLUDED {
                outcome.skipped.push((
                    format!("{policy} {kind}/{r_name}"),
                    "the policy does not match the resource: Kyverno's CLI counts the row as skipped (excluded)"
                        .to_string(),
                ));
                continue;
            }
            if actual == NOT_IN_PATCHED {
                outcome.skipped.push((
                    format!("{policy} {kind}/{r_name}"),
                    "the resource is not in patchedResources: Kyverno's CLI skips the row"
                        .to_string(),
                ));
                continue;
            }
            let actual = match detail {
                Some(d) if actual != expected => format!("{actual} ({d})"),
                _ => actual,
            };
            outcome.checks.push(Check {
                name: format!("{policy} {kind}/{r_name}"),
                passed: actual == expected,
                expected: expected.clone(),
                actual,
            });
        }
        for name in &names {
            if !evaluated
                .iter()
                .any(|((k, _), r, _)| *k == kind && names_resource(name, r))
            {
                outcome.checks.push(Check::failed(
                    &format!("{policy} {kind}/{name}"),
                    "resource",
                    expected.clone(),
                    "missing: no resource of this kind and name in the suite".to_string(),
                ));
            }
        }
    }
    Ok(outcome)
}

/// A result row not checked: one skip per resource it names (one if it names none).
fn skip_row(outcome: &mut SuiteOutcome, row: &Json, reason: &str) {
    let (policy, kind) = (str_of(row, "policy"), str_of(row, "kind"));
    let names = list_of(row, "resources");
    for name in names
        .iter()
        .map(String::as_str)
        .chain(names.is_empty().then_some(""))
    {
        outcome
            .skipped
            .push((format!("{policy} {kind}/{name}"), reason.to_string()));
    }
}

/// What Kyverno's context-backed functions read in a test, as Kyverno's CLI fills it: the
/// objects of the `context` file (`spec.resources`, `spec.images`) and of `clusterResources`
/// for `resource.*`, `apiCallResponses` for `http.*`, `globalContextEntries` (with their
/// `resourceFiles` read into `resources`) for `globalContext.*`.
fn context_of(test: &Json, dir: &Path) -> Result<Arc<dyn KyvernoContext>, OfflineError> {
    let mut ctx = MemoryContext::new();
    let at = |what: &str, source: MockError| OfflineError::Context {
        what: what.to_string(),
        source,
    };
    if let Some(file) = test.get("context").and_then(|c| c.as_str()) {
        for doc in read_json(&dir.join(file))? {
            ctx.add_context_file(&doc).map_err(|e| at(file, e))?;
        }
    }
    // The targets of mutate-existing policies are in the cluster for Kyverno's CLI too.
    for file in list_of(test, "targetResources") {
        for doc in read_json(&dir.join(&file))? {
            ctx.add_object(cli_resource(doc))
                .map_err(|e| at(&file, e))?;
        }
    }
    for file in list_of(test, "clusterResources") {
        for doc in read_json(&dir.join(&file))? {
            // Either objects, or a `ClusterResource` document listing them in
            // `spec.resources` as a context file does.
            let listed = str_of(&doc, "apiVersion").starts_with("cli.kyverno.io/");
            let added = match listed {
                true => ctx.add_context_file(&doc),
                false => ctx.add_object(cli_resource(doc)),
            };
            added.map_err(|e| at(&file, e))?;
        }
    }
    for entry in test
        .get("apiCallResponses")
        .and_then(|l| l.as_array())
        .into_iter()
        .flat_map(|l| l.iter())
    {
        ctx.add_api_call_response(entry)
            .map_err(|e| at("apiCallResponses", e))?;
    }
    for entry in test
        .get("globalContextEntries")
        .and_then(|l| l.as_array())
        .into_iter()
        .flat_map(|l| l.iter())
    {
        let files = list_of(entry, "resourceFiles");
        if files.is_empty() {
            ctx.add_global_context_entry(entry)
                .map_err(|e| at("globalContextEntries", e))?;
            continue;
        }
        let mut resources = Json::new_array();
        if let Some(list) = resources.as_array_mut() {
            for file in &files {
                for doc in read_json(&dir.join(file))? {
                    list.push(doc);
                }
            }
        }
        let mut entry = entry.clone();
        if let Some(e) = entry.as_object_mut() {
            e.insert(&"resources", resources);
        }
        ctx.add_global_context_entry(&entry)
            .map_err(|e| at("globalContextEntries", e))?;
    }
    Ok(ctx.into_shared())
}

/// Whether a result row's resource entry, `name` or `namespace/name`, names `resource` (a
/// resource without a namespace is in `default`).
fn names_resource(entry: &str, resource: &Json) -> bool {
    let meta = resource.get("metadata");
    let name = meta.map(|m| str_of(m, "name")).unwrap_or_default();
    match entry.split_once('/') {
        None => entry == name,
        Some((ns, n)) => {
            let own = meta
                .map(|m| str_of(m, "namespace"))
                .filter(|ns| !ns.is_empty())
                .unwrap_or("default");
            n == name && ns == own
        }
    }
}

/// A suite's DeletingPolicies and what they are checked against, for `isDeletingPolicy` rows:
/// Kyverno's CLI writes `pass` when the policy would delete the resource, `fail` when a
/// condition is false (or an exception applies), `error` when a condition failed, and no
/// result when `matchConstraints` do not select it (counted here as skipped, as for the
/// other kinds).
struct Deleting<'a> {
    policies: &'a [celer_policy::kyverno::deleting::DeletingPolicy],
    resources: &'a [Json],
    lookup: &'a ObjectLookup,
    options: &'a EvalOptions,
    /// The suite checks `jsonPayloads`, which celer does not evaluate.
    payloads: bool,
}

impl Deleting<'_> {
    fn check_row(&self, row: &Json, outcome: &mut SuiteOutcome) {
        use celer_policy::kyverno::deleting::Decision;
        let policy_name = str_of(row, "policy");
        let kind = str_of(row, "kind");
        let expected = str_of(row, "result");
        let names = list_of(row, "resources");
        if self.payloads && names.is_empty() {
            skip_row(
                outcome,
                row,
                "a DeletingPolicy over JSON payloads (jsonPayloads): celer evaluates Kubernetes objects only",
            );
            return;
        }
        let Some(policy) = self.policies.iter().find(|p| p.name == policy_name) else {
            for name in names
                .iter()
                .map(String::as_str)
                .chain(names.is_empty().then_some(""))
            {
                outcome.checks.push(Check::failed(
                    &format!("{policy_name} {kind}/{name}"),
                    "policy",
                    expected.to_string(),
                    "no DeletingPolicy of this name loaded".to_string(),
                ));
            }
            return;
        };
        for name in &names {
            let Some(resource) = (self.resources.iter())
                .find(|r| str_of(r, "kind") == kind && names_resource(name, r))
            else {
                outcome.checks.push(Check::failed(
                    &format!("{policy_name} {kind}/{name}"),
                    "resource",
                    expected.to_string(),
                    "not among the suite's resources".to_string(),
                ));
                continue;
            };
            let subject = format!("{policy_name} {kind}/{name}");
            let actual = match policy.decide(resource, None, self.lookup, self.options) {
                Decision::NotSelected => {
                    outcome.skipped.push((
                        subject,
                        "the policy does not select the resource: Kyverno's CLI gives no result"
                            .to_string(),
                    ));
                    continue;
                }
                Decision::Delete => "pass".to_string(),
                Decision::Keep => "fail".to_string(),
                Decision::Error(e) if expected == "error" => {
                    let _ = e;
                    "error".to_string()
                }
                Decision::Error(e) => format!("error ({e})"),
            };
            outcome.checks.push(Check {
                name: subject,
                passed: actual == expected,
                expected: expected.to_string(),
                actual,
            });
        }
    }
}

/// A mutate-existing MutatingPolicy's rows, as Kyverno's CLI checks them: each of the suite's
/// resources that triggers the policy selects its targets among `targetResources` (by
/// `targetMatchConstraints`, or the expression on the trigger), each target is mutated as the
/// background controller would (an UPDATE of itself), and the row's resources are the
/// targets, compared with `patchedResources`.
struct ExistingRows<'a> {
    policy: &'a Arc<celer_policy::kyverno::mutate_existing::Existing>,
    set: &'a PolicySet,
    triggers: &'a [Json],
    targets: &'a [Json],
    lookup: &'a ObjectLookup,
    options: &'a EvalOptions,
    dir: &'a Path,
    user: &'a RequestUser,
}

impl ExistingRows<'_> {
    fn request_body(&self, object: &Json, operation: Operation) -> Result<String, OfflineError> {
        let old = (operation == Operation::Update).then_some(object);
        review_for(Some(object), old, operation, self.user, "celer-existing").map_err(|source| {
            OfflineError::Resource {
                name: object_key(object).1,
                source,
            }
        })
    }

    /// The targets as mutated by every trigger that triggers the policy.
    fn mutated(&self) -> Result<Vec<Json>, OfflineError> {
        use celer_policy::kyverno::mutate_existing::{Targets, triggered};
        let mut targets: Vec<Json> = self.targets.to_vec();
        for trigger in self.triggers {
            let body = self.request_body(trigger, Operation::Create)?;
            let review = AdmissionReview::parse(body.as_bytes())?;
            let request = review.request()?;
            let fired = triggered(self.set, &request, self.lookup, self.options, false);
            if !fired.iter().any(|e| Arc::ptr_eq(e, self.policy)) {
                continue;
            }
            let chosen: Vec<usize> = match &self.policy.targets {
                Targets::Resources(resources) => (targets.iter().enumerate())
                    .filter(|(_, t)| {
                        let info = celer_policy::kinds::kind_info(
                            str_of(t, "apiVersion"),
                            str_of(t, "kind"),
                        );
                        resources.selects((&info.group, &info.version, &info.resource), t, None)
                    })
                    .map(|(i, _)| i)
                    .collect(),
                Targets::Expression { .. } => {
                    let selected = self
                        .policy
                        .select(&request, self.lookup, self.options)
                        .unwrap_or_default();
                    (targets.iter().enumerate())
                        .filter(|(_, t)| selected.iter().any(|s| object_key(s) == object_key(t)))
                        .map(|(i, _)| i)
                        .collect()
                }
            };
            for i in chosen {
                let body = self.request_body(&targets[i], Operation::Update)?;
                let review = AdmissionReview::parse(body.as_bytes())?;
                let request = review.request()?;
                if let Ok(Some(patched)) = self.policy.mutate(&request, self.lookup, self.options) {
                    targets[i] = patched;
                }
            }
        }
        Ok(targets)
    }

    fn check_row(&self, row: &Json, outcome: &mut SuiteOutcome) -> Result<(), OfflineError> {
        let policy = str_of(row, "policy");
        let kind = str_of(row, "kind");
        let expected = str_of(row, "result");
        let patched: Vec<Json> = match row.get("patchedResources").and_then(|p| p.as_str()) {
            Some(p) => read_json(&self.dir.join(p))?
                .into_iter()
                .map(cli_resource)
                .collect(),
            None => Vec::new(),
        };
        let mutated = self.mutated()?;
        for name in list_of(row, "resources") {
            let subject = format!("{policy} {kind}/{name}");
            let Some(target) =
                (mutated.iter()).find(|t| str_of(t, "kind") == kind && names_resource(&name, t))
            else {
                outcome.checks.push(Check::failed(
                    &subject,
                    "resource",
                    expected.to_string(),
                    "not among the suite's targetResources".to_string(),
                ));
                continue;
            };
            let want = patched.iter().find(|p| object_key(p) == object_key(target));
            let (actual, detail) = match want {
                Some(want) if tidy(want) != tidy(target) => (
                    "fail".to_string(),
                    Some(format!(
                        "patched target differs:\n  expected {}\n  actual   {}",
                        sonic_rs::to_string(want).unwrap_or_default(),
                        sonic_rs::to_string(target).unwrap_or_default()
                    )),
                ),
                _ => ("pass".to_string(), None),
            };
            let actual = match detail {
                Some(d) if actual != expected => format!("{actual} ({d})"),
                _ => actual,
            };
            outcome.checks.push(Check {
                name: subject,
                passed: actual == expected,
                expected: expected.to_string(),
                actual,
            });
        }
        Ok(())
    }
}

/// A suite's GeneratingPolicies and what they are checked against, for `isGeneratingPolicy`
/// rows, as Kyverno's CLI checks them: each trigger is evaluated as if created; every object
/// it generates is compared with the row's `generatedResource` file (the document of the same
/// apiVersion, kind, namespace and name), after the CLI's clean-up of generated objects (no
/// uid, resourceVersion, creationTimestamp, managedFields or annotations; the namespace
/// `generator.Apply` named, none for a cluster-scoped kind) and with the `generate.kyverno.io/`
/// labels set aside on both sides; `error` when an expression failed; a trigger the policy
/// does not select, or a row expecting `skip` whose policy was excepted or whose match
/// conditions were false, as Kyverno's CLI counts it.
struct Generating<'a> {
    policies: &'a [celer_policy::kyverno::generating::GeneratingPolicy],
    resources: &'a [Json],
    lookup: &'a ObjectLookup,
    options: &'a EvalOptions,
    dir: &'a Path,
}

impl Generating<'_> {
    fn check_row(&self, row: &Json, outcome: &mut SuiteOutcome) -> Result<(), OfflineError> {
        use celer_policy::kyverno::generating::Generation;
        let policy_name = str_of(row, "policy");
        let kind = str_of(row, "kind");
        let expected = str_of(row, "result");
        let names = list_of(row, "resources");
        let mut files = list_of(row, "generatedResources");
        if let Some(one) = row.get("generatedResource").and_then(|g| g.as_str()) {
            files.push(one.to_string());
        }
        let mut wanted = Vec::new();
        for file in &files {
            wanted.extend(read_json(&self.dir.join(file))?);
        }
        let Some(policy) = self.policies.iter().find(|p| p.name == policy_name) else {
            for name in names
                .iter()
                .map(String::as_str)
                .chain(names.is_empty().then_some(""))
            {
                outcome.checks.push(Check::failed(
                    &format!("{policy_name} {kind}/{name}"),
                    "policy",
                    expected.to_string(),
                    "no GeneratingPolicy of this name loaded".to_string(),
                ));
            }
            return Ok(());
        };
        for name in &names {
            let subject = format!("{policy_name} {kind}/{name}");
            let Some(trigger) = (self.resources.iter())
                .find(|r| str_of(r, "kind") == kind && names_resource(name, r))
            else {
                outcome.checks.push(Check::failed(
                    &subject,
                    "resource",
                    expected.to_string(),
                    "not among the suite's resources".to_string(),
                ));
                continue;
            };
            let (actual, detail) =
                match policy.generate_for_object(trigger, None, self.lookup, self.options) {
                    Generation::NotSelected => (EXCLUDED.to_string(), None),
                    Generation::Skipped if expected == "skip" => ("skip".to_string(), None),
                    Generation::Skipped => (EXCLUDED.to_string(), None),
                    Generation::Excepted { pass: true, .. } => ("pass".to_string(), None),
                    Generation::Excepted { pass: false, .. } => ("skip".to_string(), None),
                    Generation::Error(e) => ("error".to_string(), Some(e)),
                    Generation::Generated(objects, _) => {
                        let mismatch = (objects.iter())
                            .map(|g| cli_generated(g, trigger))
                            .find_map(|o| differs(&o, &wanted));
                        match mismatch {
                            None => ("pass".to_string(), None),
                            Some(d) => ("fail".to_string(), Some(d)),
                        }
                    }
                };
            if actual == EXCLUDED {
                outcome.skipped.push((
                    subject,
                    "the policy does not select the resource (or its match conditions are false): Kyverno's CLI counts the row as skipped (excluded)"
                        .to_string(),
                ));
                continue;
            }
            let actual = match detail {
                Some(d) if actual != expected => format!("{actual} ({d})"),
                _ => actual,
            };
            outcome.checks.push(Check {
                name: subject,
                passed: actual == expected,
                expected: expected.to_string(),
                actual,
            });
        }
        Ok(())
    }
}

/// A generated object as Kyverno's CLI keeps it (`cliEvaluation`).
fn cli_generated(generated: &celer_policy::kyverno::generating::Generated, trigger: &Json) -> Json {
    let mut object = generated.object.clone();
    let info =
        celer_policy::kinds::kind_info(str_of(&object, "apiVersion"), str_of(&object, "kind"));
    let namespace = if info.namespaced {
        generated.namespace.as_str()
    } else {
        ""
    };
    let source_namespace = (object.get("metadata"))
        .map(|m| str_of(m, "namespace").to_string())
        .unwrap_or_default();
    let _ = trigger;
    if let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        for key in [
            "uid",
            "managedFields",
            "annotations",
            "resourceVersion",
            "creationTimestamp",
        ] {
            meta.remove(&key);
        }
        // Cloned into another namespace, an object's owners there do not exist.
        if !source_namespace.is_empty() && source_namespace != namespace {
            meta.remove(&"ownerReferences");
        }
        if namespace.is_empty() {
            meta.remove(&"namespace");
        } else {
            meta.insert(&"namespace", Json::from(namespace));
        }
    }
    object
}

/// Why `actual` does not match its document among `wanted` (by apiVersion, kind, namespace
/// and name), compared as Kyverno's CLI does (labels under `generate.kyverno.io/` set aside,
/// `app.kubernetes.io/managed-by: kyverno` on both, tidied); `None` when it does.
fn differs(actual: &Json, wanted: &[Json]) -> Option<String> {
    let identity = |o: &Json| {
        let meta = o.get("metadata");
        (
            str_of(o, "apiVersion").to_string(),
            str_of(o, "kind").to_string(),
            meta.map(|m| str_of(m, "namespace").to_string())
                .unwrap_or_default(),
            meta.map(|m| str_of(m, "name").to_string())
                .unwrap_or_default(),
        )
    };
    let key = identity(actual);
    let Some(expected) = wanted.iter().find(|w| identity(w) == key) else {
        return Some(format!(
            "generated {} {}/{} is not in the generatedResource file",
            key.1, key.2, key.3
        ));
    };
    let (a, e) = (
        generate_labels_fixed(actual),
        generate_labels_fixed(expected),
    );
    if tidy(&a) == tidy(&e) {
        return None;
    }
    Some(format!(
        "generated resource differs:\n  expected {}\n  actual   {}",
        sonic_rs::to_string(&e).unwrap_or_default(),
        sonic_rs::to_string(&a).unwrap_or_default()
    ))
}

/// Kyverno's `FixupGenerateLabels`: `app.kubernetes.io/managed-by: kyverno` and the labels
/// outside `generate.kyverno.io/`.
fn generate_labels_fixed(object: &Json) -> Json {
    let mut object = object.clone();
    let mut labels = Json::new_object();
    labels.insert("app.kubernetes.io/managed-by", Json::from("kyverno"));
    if let Some(own) =
        (object.get("metadata").and_then(|m| m.get("labels"))).and_then(|l| l.as_object())
    {
        for (k, v) in own.iter() {
            if !k.starts_with("generate.kyverno.io/") {
                labels.insert(k, v.clone());
            }
        }
    }
    if let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.insert(&"labels", labels);
    }
    object
}

/// An AdmissionReview body rewritten for a kind admitted as `parent/subresource`.
fn as_subresource(body: &str, parent: &str, subresource: &str) -> Result<String, sonic_rs::Error> {
    let mut review: Json = sonic_rs::from_str(body)?;
    if let Some(request) = review.get_mut("request").and_then(|r| r.as_object_mut()) {
        for key in ["resource", "requestResource"] {
            if let Some(r) = request.get_mut(&key).and_then(|r| r.as_object_mut()) {
                r.insert(&"resource", Json::from(parent));
            }
        }
        request.insert(&"subResource", Json::from(subresource));
        request.insert(&"requestSubResource", Json::from(subresource));
    }
    sonic_rs::to_string(&review)
}

/// A resource as Kyverno's CLI loads it (`resource.YamlToUnstructured`): a namespaced kind
/// without a namespace is put in `default`, and the map fields it knows (`labels`,
/// `annotations`, `matchLabels`, `nodeSelector`, `data`, `stringData`) that are null become
/// empty maps.
fn cli_resource(mut resource: Json) -> Json {
    fn normalize(v: &mut Json, depth: usize) {
        if depth > celer_policy::document::MAX_DEPTH {
            return;
        }
        if let Some(object) = v.as_object_mut() {
            for (key, value) in object.iter_mut() {
                if value.is_null()
                    && matches!(
                        key,
                        "annotations"
                            | "labels"
                            | "matchLabels"
                            | "nodeSelector"
                            | "data"
                            | "stringData"
                    )
                {
                    *value = Json::new_object();
                } else {
                    normalize(value, depth + 1);
                }
            }
        } else if let Some(list) = v.as_array_mut() {
            for item in list.iter_mut() {
                if item.is_object() {
                    normalize(item, depth + 1);
                }
            }
        }
    }
    let info =
        celer_policy::kinds::kind_info(str_of(&resource, "apiVersion"), str_of(&resource, "kind"));
    if info.namespaced
        && let Some(meta) = resource.get_mut("metadata").and_then(|m| m.as_object_mut())
        && meta
            .get(&"namespace")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .is_empty()
    {
        meta.insert(&"namespace", Json::from("default"));
    }
    normalize(&mut resource, 0);
    resource
}

/// A resource without its null fields and empty maps and lists, as Kyverno's CLI compares
/// patched resources (`resource.Tidy`).
fn tidy(v: &Json) -> Option<Json> {
    fn walk(v: &Json, depth: usize) -> Option<Json> {
        if depth > celer_policy::document::MAX_DEPTH {
            return Some(v.clone());
        }
        if let Some(object) = v.as_object() {
            let mut out = Json::new_object();
            let mut any = false;
            if let Some(o) = out.as_object_mut() {
                for (key, value) in object.iter() {
                    if let Some(value) = walk(value, depth + 1) {
                        o.insert(&key, value);
                        any = true;
                    }
                }
            }
            return any.then_some(out);
        }
        if let Some(list) = v.as_array() {
            let mut out = Json::new_array();
            let mut any = false;
            if let Some(a) = out.as_array_mut() {
                for item in list.iter() {
                    if let Some(item) = walk(item, depth + 1) {
                        a.push(item);
                        any = true;
                    }
                }
            }
            return any.then_some(out);
        }
        (!v.is_null()).then(|| v.clone())
    }
    walk(v, 0)
}

/// The kind of the loaded policy called `name`, if one is.
fn kind_of_policy(set: &PolicySet, name: &str) -> Option<PolicyKind> {
    let k = set.kyverno();
    if k.classic.iter().any(|r| r.policy == name) {
        Some(PolicyKind::KyvernoClusterPolicy)
    } else if k.validating.iter().any(|p| p.policy.common.name == name) {
        Some(PolicyKind::KyvernoValidating)
    } else if k.mutating.iter().any(|p| p.policy.common.name == name) {
        Some(PolicyKind::KyvernoMutating)
    } else if set
        .native()
        .validating
        .policies
        .iter()
        .any(|p| p.common.name == name)
    {
        Some(PolicyKind::Validating)
    } else if set
        .native()
        .mutating
        .policies
        .iter()
        .any(|p| p.common.name == name)
    {
        Some(PolicyKind::Mutating)
    } else {
        None
    }
}

/// What a mutating row reports when its resource is missing from `patchedResources`.
const NOT_IN_PATCHED: &str = "not in patchedResources";

/// A resource's (kind, name), the resource and what evaluating it gave.
type Evaluated = ((String, String), Json, Outcome);

fn parse_operation(op: &str) -> Option<Operation> {
    match op {
        "CREATE" => Some(Operation::Create),
        "UPDATE" => Some(Operation::Update),
        "DELETE" => Some(Operation::Delete),
        _ => None,
    }
}

/// A Kyverno ValidatingPolicy's result for a resource: Kyverno's rule status. A policy that
/// did not match the resource reports nothing: `excluded`.
fn kyverno_validating_result(
    set: &PolicySet,
    policy: &str,
    outcome: &Outcome,
) -> (String, Option<String>) {
    let worst =
        results_of(policy, PolicyKind::KyvernoValidating, outcome).max_by_key(|r| r.result.rank());
    match worst {
        None => unmatched(set, policy),
        Some(r) => (
            r.result.as_str().to_string(),
            r.message.as_deref().map(str::to_string),
        ),
    }
}

/// A Kyverno policy that did not match the resource: Kyverno's CLI skips the row
/// (`excluded`), unless the policy has a namespace or object selector, whose empty response
/// it drops, and the row then fails as not found.
fn unmatched(set: &PolicySet, policy: &str) -> (String, Option<String>) {
    let k = set.kyverno();
    let selector = k
        .validating
        .iter()
        .map(|p| (&p.policy.common.name, &p.extras))
        .chain(
            k.mutating
                .iter()
                .map(|p| (&p.policy.common.name, &p.extras)),
        )
        .any(|(name, extras)| name == policy && extras.has_selector);
    if selector {
        (
            "not found".to_string(),
            Some("the policy's selectors do not match the resource".to_string()),
        )
    } else {
        (EXCLUDED.to_string(), None)
    }
}

/// What a Kyverno row reports for a resource its policy does not match: the row is skipped.
pub(crate) const EXCLUDED: &str = "excluded";

fn namespace_object(name: &str, labels_json: &str) -> Result<Json, sonic_rs::Error> {
    let text = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{{\"name\":{},\"labels\":{labels_json}}}}}",
        sonic_rs::to_string(name)?
    );
    sonic_rs::from_str(&text)
}

/// Kyverno's CLI defaults for bindings and unbound policies (see the module documentation).
pub fn apply_cli_defaults(manifests: &mut Manifests) {
    let mut bound_v = Vec::new();
    let mut bound_m = Vec::new();
    for (_, item) in &mut manifests.items {
        let Some(item) = item.downcast_mut::<NativeManifest>() else {
            continue;
        };
        let constraints = match item {
            NativeManifest::ValidatingPolicy(p) => p.spec.match_constraints.as_mut(),
            NativeManifest::MutatingPolicy(p) => p.spec.match_constraints.as_mut(),
            _ => None,
        };
        for rule in constraints
            .into_iter()
            .flat_map(|c| c.resource_rules.iter_mut())
        {
            if rule.operations.is_empty() {
                rule.operations = vec!["*".to_string()];
            }
        }
        match item {
            NativeManifest::ValidatingBinding(b) => {
                if b.spec.validation_actions.is_empty() {
                    b.spec.validation_actions = vec![ValidationAction::Deny];
                }
                if let Some(p) = &mut b.spec.param_ref
                    && p.parameter_not_found_action.is_none()
                {
                    p.parameter_not_found_action = Some(ParameterNotFoundAction::Deny);
                }
                bound_v.push(b.spec.policy_name.clone());
            }
            NativeManifest::MutatingBinding(b) => {
                if let Some(p) = &mut b.spec.param_ref
                    && p.parameter_not_found_action.is_none()
                {
                    p.parameter_not_found_action = Some(ParameterNotFoundAction::Deny);
                }
                bound_m.push(b.spec.policy_name.clone());
            }
            _ => {}
        }
    }
    let mut extra = Vec::new();
    for (source, item) in &manifests.items {
        match item.downcast::<NativeManifest>() {
            Some(NativeManifest::ValidatingPolicy(p)) if !bound_v.contains(&p.metadata.name) => {
                extra.push((
                    source.clone(),
                    Manifest::Policy(PolicyManifest::new(NativeManifest::ValidatingBinding(
                        ValidatingAdmissionPolicyBinding {
                            metadata: ObjectMeta {
                                name: format!("{}-binding", p.metadata.name),
                                ..ObjectMeta::default()
                            },
                            spec: ValidatingAdmissionPolicyBindingSpec {
                                policy_name: p.metadata.name.clone(),
                                validation_actions: vec![ValidationAction::Deny],
                                ..Default::default()
                            },
                        },
                    ))),
                ));
            }
            Some(NativeManifest::MutatingPolicy(p)) if !bound_m.contains(&p.metadata.name) => {
                extra.push((
                    source.clone(),
                    Manifest::Policy(PolicyManifest::new(NativeManifest::MutatingBinding(
                        MutatingAdmissionPolicyBinding {
                            metadata: ObjectMeta {
                                name: format!("{}-binding", p.metadata.name),
                                ..ObjectMeta::default()
                            },
                            spec: MutatingAdmissionPolicyBindingSpec {
                                policy_name: p.metadata.name.clone(),
                                ..Default::default()
                            },
                        },
                    ))),
                ));
            }
            _ => {}
        }
    }
    manifests.items.extend(extra);
}

pub(crate) fn results_of<'o>(
    policy: &'o str,
    kind: PolicyKind,
    outcome: &'o Outcome,
) -> impl Iterator<Item = &'o celer_policy::response::PolicyResult> + 'o {
    outcome
        .results
        .iter()
        .filter(move |r| r.kind == kind && r.policy == policy)
}

fn validating_result(policy: &str, outcome: &Outcome) -> (String, Option<String>) {
    let worst = results_of(policy, PolicyKind::Validating, outcome).max_by_key(|r| r.result.rank());
    match worst {
        None => ("skip".to_string(), None),
        Some(r) => (
            match r.result {
                ResultKind::Audit => "pass".to_string(),
                other => other.as_str().to_string(),
            },
            r.message.as_deref().map(str::to_string),
        ),
    }
}

fn mutating_result(
    set: &PolicySet,
    policy: &str,
    kind: PolicyKind,
    original: &Json,
    outcome: &Outcome,
    expected_patched: &[Json],
) -> (String, Option<String>) {
    let results: Vec<_> = results_of(policy, kind, outcome).collect();
    if results.is_empty() && kind == PolicyKind::KyvernoMutating {
        return unmatched(set, policy);
    }
    if let Some(e) = results.iter().find(|r| r.result == ResultKind::Error) {
        return (
            "error".to_string(),
            e.message.as_deref().map(str::to_string),
        );
    }
    if !results.iter().any(|r| r.result == ResultKind::Pass) {
        return ("skip".to_string(), None);
    }
    let actual = outcome.patched.as_ref().unwrap_or(original);
    let key = object_key(original);
    let Some(expected) = expected_patched.iter().find(|p| object_key(p) == key) else {
        if !expected_patched.is_empty() && kind == PolicyKind::KyvernoMutating {
            return (NOT_IN_PATCHED.to_string(), None);
        }
        return ("pass".to_string(), None);
    };
    if tidy(expected) == tidy(actual) {
        ("pass".to_string(), None)
    } else {
        (
            "fail".to_string(),
            Some(format!(
                "patched resource differs:\n  expected {}\n  actual   {}",
                sonic_rs::to_string(expected).unwrap_or_default(),
                sonic_rs::to_string(actual).unwrap_or_default()
            )),
        )
    }
}
