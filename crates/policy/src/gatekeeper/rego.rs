//! Gatekeeper's Rego engine: a template's `rego` and `libs` compiled once with regorus (v0
//! syntax unless the `code[]` entry says `version: v1`), Gatekeeper's template checks made at
//! load, and the `violation` rule evaluated per matching Constraint with Gatekeeper's input,
//! `{"review": <the AdmissionRequest>, "parameters": <spec.parameters>}`. The review is
//! converted once per request and shared by every Constraint; each Constraint's parameters
//! are converted once, at load.
//!
//! `data.inventory` (Gatekeeper's synced objects, [`super::inventory`]) is the base document
//! of templates that read it; a template keeps the program for the last inventory it saw, so
//! an unchanged inventory costs nothing per request.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use celer_cel::Json;
use celer_rego::native::{Plan, Stop, Unsupported, Val};
use celer_rego::value::{self, ConvertError};
use celer_rego::{EvalError, Module, Options, Program, RegoValue};
use parking_lot::Mutex;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::external_data;
use super::inventory::Inventory;

/// The packages a template's modules may reference under `data` besides their own: the
/// synced objects, and the template's libs.
const DATA_ROOTS: [&str; 2] = ["data.inventory", "data.lib"];

/// The inventory a program's base document is, and the program.
type WithInventory = Option<(Arc<Inventory>, Arc<Program>)>;

/// A compiled Rego template.
pub struct RegoTemplate {
    /// The `violation` rule's path (`data.<package>.violation`).
    pub violation: String,
    /// Whether any module reads `data.inventory`.
    pub reads_inventory: bool,
    /// Whether any module calls `external_data`, so that evaluations need the Providers.
    pub calls_external_data: bool,
    program: Arc<Program>,
    /// The `violation` rule lowered for celer's own evaluator, or why it is not: templates
    /// that read `data.inventory` or call `external_data` stay on regorus.
    native: Result<Plan, Unsupported>,
    /// The program with the last inventory it was given, by the inventory's address.
    with_inventory: Mutex<WithInventory>,
}

impl std::fmt::Debug for RegoTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegoTemplate")
            .field("violation", &self.violation)
            .field("reads_inventory", &self.reads_inventory)
            .field("calls_external_data", &self.calls_external_data)
            .field("native", &self.native.as_ref().map(|_| ()))
            .finish_non_exhaustive()
    }
}

/// The Rego of a template target, as written.
pub struct RegoCode<'t> {
    pub rego: &'t str,
    pub libs: &'t [String],
    pub v1: bool,
    /// The field the code is at, for errors (`spec.targets[0].rego`).
    pub at: String,
}

/// Compiles a template's Rego, with Gatekeeper's checks: a package, a `violation` rule, libs
/// under `lib.`, no `data` other than `data.inventory` and the libs.
pub fn compile(code: &RegoCode<'_>) -> Result<RegoTemplate, Vec<String>> {
    let mut errors = Vec::new();
    let mut modules = vec![Module {
        name: code.at.clone(),
        text: code.rego.to_string(),
    }];
    for (i, lib) in code.libs.iter().enumerate() {
        modules.push(Module {
            name: format!("{}.libs[{i}]", code.at.trim_end_matches(".rego")),
            text: lib.clone(),
        });
    }
    let mut reads_inventory = false;
    let mut calls_external_data = false;
    for module in &modules {
        for name in celer_rego::scan::names(&module.text) {
            if name.called && name.path == external_data::EXTERNAL_DATA.name {
                calls_external_data = true;
            }
            if !(name.path == "data" || name.path.starts_with("data.")) {
                continue;
            }
            if name.path.starts_with("data.inventory") {
                reads_inventory = true;
            }
            let allowed = DATA_ROOTS
                .iter()
                .any(|root| name.path == *root || name.path.starts_with(&format!("{root}.")));
            if !allowed {
                errors.push(format!(
                    "{}:{}: invalid reference {:?}: templates may read only data.inventory and their libs (data.lib)",
                    module.name, name.line, name.path
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let defaults = Options::default();
    let options = Options {
        rego_v0: !code.v1,
        extensions: external_data::EXTENSIONS,
        // A call to a provider may take up to its timeout, within the evaluation's bound.
        timeout: match calls_external_data {
            true => defaults.timeout + external_data::provider::MAX_TIMEOUT,
            false => defaults.timeout,
        },
        ..defaults
    };
    let program = Program::compile(&modules, None, options).map_err(|e| vec![e.message])?;
    let packages = program.packages();
    let Some(package) = packages.first().cloned() else {
        return Err(vec![format!("{}: Required value: a package", code.at)]);
    };
    for (i, lib_package) in packages.iter().enumerate().skip(1) {
        if !lib_package.starts_with("data.lib.") && lib_package != "data.lib" {
            errors.push(format!(
                "{}.libs[{}]: Invalid value: package {:?}: libs must be in packages under \"lib.\"",
                code.at.trim_end_matches(".rego"),
                i - 1,
                lib_package.trim_start_matches("data.")
            ));
        }
    }
    if !program.declares(&code.at, "violation") {
        errors.push(format!(
            "{}: Invalid value: the Rego must define a rule named \"violation\"",
            code.at
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let violation = format!("{package}.violation");
    let native = program.native_plan(&violation);
    Ok(RegoTemplate {
        violation,
        reads_inventory,
        calls_external_data,
        native,
        program: Arc::new(program),
        with_inventory: Mutex::new(None),
    })
}

impl RegoTemplate {
    /// The program to evaluate with, given the synced objects as `data.inventory`.
    fn program(&self, inventory: Option<Arc<Inventory>>) -> Result<Arc<Program>, String> {
        let Some(inventory) = inventory.filter(|_| self.reads_inventory) else {
            return Ok(Arc::clone(&self.program));
        };
        let mut last = self.with_inventory.lock();
        if let Some((seen, program)) = last.as_ref()
            && Arc::ptr_eq(seen, &inventory)
        {
            return Ok(Arc::clone(program));
        }
        let program = Arc::new(
            self.program
                .with_data(inventory.data().clone())
                .map_err(|e| format!("data.inventory: {e}"))?,
        );
        *last = Some((inventory, Arc::clone(&program)));
        Ok(program)
    }

    /// The template's program with `data` (an [`super::inventory::InventoryData`]'s) as its
    /// base document.
    pub fn with_inventory_data(&self, data: RegoValue) -> Result<Program, String> {
        self.program
            .with_data(data)
            .map_err(|e| format!("data.inventory: {e}"))
    }

    /// Why the `violation` rule is not run by celer's own evaluator, if it is not.
    pub fn native_unsupported(&self) -> Option<&Unsupported> {
        self.native.as_ref().err()
    }

    /// The violations' messages for one Constraint; an evaluation error is one violation
    /// naming it, as Gatekeeper counts it. celer's own evaluator answers when it can
    /// ([`celer_rego::native`]), regorus otherwise, with the same answers.
    pub fn violations(
        &self,
        review: &Review<'_>,
        parameters: Option<&Json>,
        rego_parameters: &RegoValue,
        inventory: Option<Arc<Inventory>>,
        host: Option<Arc<dyn celer_rego::Host>>,
        out: &mut Vec<String>,
    ) {
        let messages = match self.violations_native(review, parameters, inventory.as_deref()) {
            Ok(messages) => messages,
            Err(Stop::Error(message)) => vec![EvalError::Failed(message).to_string()],
            Err(Stop::Timeout(limit)) => {
                out.push(EvalError::Timeout(limit).to_string());
                return;
            }
            Err(Stop::Fallback(why)) => {
                match &self.native {
                    Err(unsupported) => oracle::fell_back(&self.violation, &unsupported.0),
                    Ok(_) => oracle::fell_back(&self.violation, why),
                }
                self.violations_regorus(review, rego_parameters, inventory, host, out);
                return;
            }
        };
        if oracle::on() {
            let mut regorus = Vec::new();
            self.violations_regorus(review, rego_parameters, inventory, host, &mut regorus);
            oracle::compare(&self.violation, &messages, &regorus);
        }
        out.extend(messages);
    }

    /// The violations as celer's own evaluator finds them, or why it leaves them to regorus.
    pub fn violations_native(
        &self,
        review: &Review<'_>,
        parameters: Option<&Json>,
        inventory: Option<&Inventory>,
    ) -> Result<Vec<String>, Stop> {
        let plan = match &self.native {
            Ok(plan) => plan,
            Err(_) => return Err(Stop::Fallback("the rule is not lowered")),
        };
        let mut input = BTreeMap::new();
        input.insert(Val::str("review"), review.native()?);
        if let Some(p) = parameters {
            input.insert(Val::str("parameters"), Val::of_json(p)?);
        }
        // `data`: the synced objects for a template that reads them, as regorus is given them.
        let data = match inventory.filter(|_| self.reads_inventory) {
            Some(inventory) => Val::of_rego(inventory.data())?,
            None => Val::Object(Rc::new(BTreeMap::new())),
        };
        let results = plan.eval_set(Val::Object(Rc::new(input)), data, self.program.timeout())?;
        let mut messages: Vec<String> = results
            .iter()
            .map(|r| {
                r.get(&Val::str("msg"))
                    .ok()
                    .flatten()
                    .and_then(|m| m.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .collect();
        // Gatekeeper reports results in the order OPA returns them (sorted).
        messages.sort();
        Ok(messages)
    }

    /// [`Self::violations`] by regorus alone.
    pub fn violations_regorus(
        &self,
        review: &Review<'_>,
        parameters: &RegoValue,
        inventory: Option<Arc<Inventory>>,
        host: Option<Arc<dyn celer_rego::Host>>,
        out: &mut Vec<String>,
    ) {
        let review = match review.converted() {
            Ok(r) => r,
            Err(e) => {
                out.push(e.clone());
                return;
            }
        };
        let program = match self.program(inventory) {
            Ok(p) => p,
            Err(e) => {
                out.push(e);
                return;
            }
        };
        self.violations_with(&program, review, parameters, host, out);
    }

    /// [`Self::violations`] with a given program (the template's, with some inventory).
    /// `host` answers `external_data` (without one, a call is an evaluation error).
    pub fn violations_with(
        &self,
        program: &Program,
        review: &RegoValue,
        parameters: &RegoValue,
        host: Option<Arc<dyn celer_rego::Host>>,
        out: &mut Vec<String>,
    ) {
        let mut input = BTreeMap::new();
        input.insert(RegoValue::from("review"), review.clone());
        if !matches!(parameters, RegoValue::Undefined) {
            input.insert(RegoValue::from("parameters"), parameters.clone());
        }
        let host = host.filter(|_| self.calls_external_data);
        match program.eval_rule_with(&self.violation, &RegoValue::from(input), host) {
            Ok(RegoValue::Set(results)) => {
                let mut messages: Vec<String> = results
                    .iter()
                    .map(|r| {
                        value::member(r, "msg")
                            .and_then(value::as_str)
                            .unwrap_or_default()
                            .to_string()
                    })
                    .collect();
                // Gatekeeper reports results in the order OPA returns them (sorted).
                messages.sort();
                out.extend(messages);
            }
            Ok(RegoValue::Undefined) => {}
            Ok(other) => out.push(format!(
                "{}: expected a set of violations, got {}",
                self.violation,
                value::to_json(&other)
                    .map(|j| j.to_string())
                    .unwrap_or_else(|e| e.to_string())
            )),
            Err(e) => out.push(e.to_string()),
        }
    }
}

/// Gatekeeper's `input.review`, for either evaluator: the request's documents as parsed,
/// read in place by celer's own evaluator, and regorus's value of them, converted on first
/// use and shared by every Constraint of the request.
pub struct Review<'r> {
    parts: ReviewParts<'r>,
    converted: OnceCell<Result<RegoValue, String>>,
    native: OnceCell<Result<Val<'r>, Stop>>,
}

enum ReviewParts<'r> {
    Request {
        request: &'r Json,
        uid: &'r str,
        object: Option<&'r Json>,
        old_object: Option<&'r Json>,
        delete: bool,
    },
    /// Gatekeeper's audit of an existing object.
    Audit {
        object: &'r Json,
        kind: Option<&'r Json>,
        name: &'r str,
        namespace: &'r str,
    },
}

impl<'r> Review<'r> {
    /// The review of a request ([`review`]).
    pub fn request(
        request: &'r Json,
        uid: &'r str,
        object: Option<&'r Json>,
        old_object: Option<&'r Json>,
        delete: bool,
    ) -> Self {
        Review::of(ReviewParts::Request {
            request,
            uid,
            object,
            old_object,
            delete,
        })
    }

    /// The audit review of an existing object ([`audit_review`]).
    pub fn audit(
        object: &'r Json,
        kind: Option<&'r Json>,
        name: &'r str,
        namespace: &'r str,
    ) -> Self {
        Review::of(ReviewParts::Audit {
            object,
            kind,
            name,
            namespace,
        })
    }

    fn of(parts: ReviewParts<'r>) -> Self {
        Review {
            parts,
            converted: OnceCell::new(),
            native: OnceCell::new(),
        }
    }

    /// regorus's value of the review.
    pub fn converted(&self) -> &Result<RegoValue, String> {
        self.converted.get_or_init(|| match &self.parts {
            ReviewParts::Request {
                request,
                uid,
                object,
                old_object,
                delete,
            } => review(request, uid, *object, *old_object, *delete)
                .map_err(|e| format!("the request cannot be given to Rego: {e}")),
            ReviewParts::Audit {
                object,
                kind,
                name,
                namespace,
            } => audit_review(object, &kind.cloned().unwrap_or_default(), name, namespace)
                .map_err(|e| format!("the object cannot be given to Rego: {e}")),
        })
    }

    /// The review as celer's own evaluator reads it: the same members as [`review`] and
    /// [`audit_review`] give, the documents read in place.
    pub fn native(&self) -> Result<Val<'r>, Stop> {
        self.native
            .get_or_init(|| {
                let mut fields: BTreeMap<Val<'r>, Val<'r>> = BTreeMap::new();
                match self.parts {
                    ReviewParts::Request {
                        request,
                        uid,
                        object,
                        old_object,
                        delete,
                    } => {
                        if let Some(members) = request.as_object() {
                            for (k, v) in members.iter() {
                                fields.insert(Val::str(k), Val::of_json(v)?);
                            }
                        }
                        fields.insert(Val::str("uid"), Val::str(uid));
                        let object = if delete {
                            old_object.or(object)
                        } else {
                            object
                        };
                        if let Some(o) = object.filter(|o| !o.is_null()) {
                            fields.insert(Val::str("object"), Val::of_json(o)?);
                        }
                        if let Some(o) = old_object.filter(|o| !o.is_null()) {
                            fields.insert(Val::str("oldObject"), Val::of_json(o)?);
                        }
                    }
                    ReviewParts::Audit {
                        object,
                        kind,
                        name,
                        namespace,
                    } => {
                        let kind = match kind {
                            Some(k) => Val::of_json(k)?,
                            None => Val::Null,
                        };
                        fields.insert(Val::str("kind"), kind);
                        fields.insert(Val::str("object"), Val::of_json(object)?);
                        fields.insert(Val::str("name"), Val::str(name));
                        if !namespace.is_empty() {
                            fields.insert(Val::str("namespace"), Val::str(namespace));
                        }
                    }
                }
                Ok(Val::Object(Rc::new(fields)))
            })
            .clone()
    }
}

/// Checking celer's own evaluator against regorus: while on, every answer it gives is
/// compared with regorus's, and every evaluation it leaves to regorus is counted. For the
/// differential tests and `celer test --rego-oracle`; off, it costs one atomic load.
pub mod oracle {
    use std::sync::atomic::{AtomicBool, Ordering};

    use parking_lot::Mutex;

    static ON: AtomicBool = AtomicBool::new(false);
    static LOG: Mutex<Log> = Mutex::new(Log {
        agreed: 0,
        fell_back: Vec::new(),
        disagreed: Vec::new(),
    });

    /// What the oracle saw since it was started.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Log {
        /// Answers of celer's evaluator that regorus gave too.
        pub agreed: usize,
        /// (rule, why) of each evaluation left to regorus at run time.
        pub fell_back: Vec<(String, String)>,
        /// Each disagreement: the rule and both answers.
        pub disagreed: Vec<String>,
    }

    /// Starts checking, with an empty log.
    pub fn start() {
        *LOG.lock() = Log::default();
        ON.store(true, Ordering::SeqCst);
    }

    /// Stops checking and returns the log.
    pub fn stop() -> Log {
        ON.store(false, Ordering::SeqCst);
        std::mem::take(&mut *LOG.lock())
    }

    pub(super) fn on() -> bool {
        ON.load(Ordering::Relaxed)
    }

    pub(super) fn compare(rule: &str, native: &[String], regorus: &[String]) {
        let mut log = LOG.lock();
        if native == regorus {
            log.agreed += 1;
        } else {
            log.disagreed
                .push(format!("{rule}: celer {native:?}, regorus {regorus:?}"));
        }
    }

    pub(super) fn fell_back(rule: &str, why: &str) {
        if on() {
            LOG.lock()
                .fell_back
                .push((rule.to_string(), why.to_string()));
        }
    }
}

/// Gatekeeper's review of a request: the AdmissionRequest (as the CEL `request` has it,
/// with `uid`), `object` (the old object on DELETE, as Gatekeeper sets it) and `oldObject`.
pub fn review(
    request: &Json,
    uid: &str,
    object: Option<&Json>,
    old_object: Option<&Json>,
    delete: bool,
) -> Result<RegoValue, ConvertError> {
    // One converter for the three documents: their keys are mostly the same strings.
    let mut converter = value::Converter::default();
    let mut review = match converter.from_json(request)? {
        RegoValue::Object(fields) => (*fields).clone(),
        _ => Default::default(),
    };
    review.insert(RegoValue::from("uid"), RegoValue::from(uid));
    let object = if delete {
        old_object.or(object)
    } else {
        object
    };
    if let Some(o) = object.filter(|o| !o.is_null()) {
        review.insert(RegoValue::from("object"), converter.from_json(o)?);
    }
    if let Some(o) = old_object.filter(|o| !o.is_null()) {
        review.insert(RegoValue::from("oldObject"), converter.from_json(o)?);
    }
    Ok(RegoValue::from(review))
}

/// Gatekeeper's audit review of an existing object (`unstructuredToAdmissionRequest`): its
/// kind, name, namespace and the object; no operation, user or uid.
pub fn audit_review(
    object: &Json,
    kind: &Json,
    name: &str,
    namespace: &str,
) -> Result<RegoValue, ConvertError> {
    let mut review = match value::from_json(&Json::new_object())? {
        RegoValue::Object(fields) => (*fields).clone(),
        _ => Default::default(),
    };
    review.insert(RegoValue::from("kind"), value::from_json(kind)?);
    review.insert(RegoValue::from("object"), value::from_json(object)?);
    review.insert(RegoValue::from("name"), RegoValue::from(name));
    if !namespace.is_empty() {
        review.insert(RegoValue::from("namespace"), RegoValue::from(namespace));
    }
    Ok(RegoValue::from(review))
}

/// A Constraint's `spec.parameters` as Rego reads it (undefined when absent).
pub fn parameters(object: &Json) -> Result<RegoValue, ConvertError> {
    match object.get("spec").and_then(|s| s.get("parameters")) {
        Some(p) => value::from_json(p),
        None => Ok(RegoValue::Undefined),
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn code(rego: &str) -> RegoCode<'_> {
        RegoCode {
            rego,
            libs: &[],
            v1: false,
            at: "spec.targets[0].rego".to_string(),
        }
    }

    /// Both evaluators' answers for `rego` on a CREATE of `object`: celer's own (`Err`
    /// when it leaves the evaluation to regorus) and regorus's.
    fn both(rego: &str, object: &str) -> (Result<Vec<String>, Stop>, Vec<String>) {
        let template = match compile(&code(rego)) {
            Ok(t) => t,
            Err(e) => panic!("{e:?}"),
        };
        let object: Json = sonic_rs::from_str(object).unwrap_or_default();
        let request: Json = sonic_rs::from_str(
            r#"{"operation":"CREATE","kind":{"group":"","version":"v1","kind":"Pod"}}"#,
        )
        .unwrap_or_default();
        let review = Review::request(&request, "uid-1", Some(&object), None, false);
        let native = template
            .violations_native(&review, None, None)
            .map(|m| m.to_vec());
        let native = match native {
            Err(Stop::Error(message)) => Ok(vec![EvalError::Failed(message).to_string()]),
            other => other,
        };
        let mut regorus = Vec::new();
        template.violations_regorus(&review, &RegoValue::Undefined, None, None, &mut regorus);
        (native, regorus)
    }

    /// A function whose definitions give different values is OPA's conflict error; celer's
    /// evaluator reports it at the same call site, in regorus's words, wherever the call is.
    #[test]
    fn conflicting_function_definitions_are_the_same_error_in_both_evaluators() {
        let pod = r#"{"spec":{"containers":[{"name":"a","livenessProbe":{"x":1},"readinessProbe":{"y":2}}]}}"#;
        let probe = "get_probe(c) = p { p := c.livenessProbe }\nget_probe(c) = p { p := c.readinessProbe }\n";
        for body in [
            "c := input.review.object.spec.containers[_]\n  p := get_probe(c)\n  m := sprintf(\"%v\", [p])",
            "c := input.review.object.spec.containers[_]\n  not get_probe(c)\n  m := \"none\"",
            "ps := [p | c := input.review.object.spec.containers[_]; p := get_probe(c)]\n  m := sprintf(\"%v\", [ps])",
            "helper[x]\n  m := x",
        ] {
            let rego = format!(
                "package p\n\nviolation[{{\"msg\": m}}] {{\n  {body}\n}}\n\nhelper[x] {{\n  c := input.review.object.spec.containers[_]\n  x := get_probe(c)\n}}\n\n{probe}"
            );
            let (native, regorus) = both(&rego, pod);
            assert!(
                regorus.iter().any(|m| m.contains("multiple outputs")),
                "{body}: regorus {regorus:?}"
            );
            assert_eq!(native, Ok(regorus), "{body}");
        }
        // Without the conflict, both find the one violation.
        let one = r#"{"spec":{"containers":[{"name":"a","livenessProbe":{"x":1}}]}}"#;
        let rego = format!(
            "package p\n\nviolation[{{\"msg\": m}}] {{\n  c := input.review.object.spec.containers[_]\n  p := get_probe(c)\n  m := sprintf(\"%v\", [p])\n}}\n\n{probe}"
        );
        let (native, regorus) = both(&rego, one);
        assert_eq!(regorus, ["{\"x\": 1}"]);
        assert_eq!(native, Ok(regorus));
    }

    #[test]
    fn gatekeepers_template_checks_are_load_errors() {
        let no_violation = "package p\n\ndeny[msg] { msg := \"x\" }\n";
        let errors = compile(&code(no_violation)).err().unwrap_or_default();
        assert_eq!(
            errors,
            [
                "spec.targets[0].rego: Invalid value: the Rego must define a rule named \"violation\""
            ]
        );
        let other_data = "package p\n\nviolation[{\"msg\": m}] { m := data.secrets.token }\n";
        let errors = compile(&code(other_data)).err().unwrap_or_default();
        assert_eq!(
            errors,
            [
                "spec.targets[0].rego:3: invalid reference \"data.secrets.token\": templates may read only data.inventory and their libs (data.lib)"
            ]
        );
        let inventory =
            "package p\n\nviolation[{\"msg\": m}] { data.inventory.cluster[_]; m := \"x\" }\n";
        assert!(compile(&code(inventory)).is_ok_and(|t| t.reads_inventory));
        let libs = ["package notlib.x\n\nf(a) = a\n".to_string()];
        let bad_lib = RegoCode {
            libs: &libs,
            ..code("package p\n\nviolation[{\"msg\": m}] { m := \"x\" }\n")
        };
        let errors = compile(&bad_lib).err().unwrap_or_default();
        assert_eq!(
            errors,
            [
                "spec.targets[0].libs[0]: Invalid value: package \"notlib.x\": libs must be in packages under \"lib.\""
            ]
        );
    }
}
