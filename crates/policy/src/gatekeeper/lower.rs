//! Templates and Constraints lowered into the engine's compiled model (see the module docs of
//! [`crate::gatekeeper`]).

use std::collections::HashSet;
use std::sync::Arc;

use celer_cel::Json;

use super::constraint_match::ConstraintMatch;
use super::model::{
    self, ADMISSION_TARGET, CEL_ENGINE, CONSTRAINT_GROUP, CelSource, Constraint,
    ConstraintTemplate, REGO_ENGINE, RegoSource,
};
use super::rego::{self, RegoCode, RegoTemplate};
use crate::compiled::{Binding, ValidatingPolicy};
use crate::matching::MatchConstraints;
use crate::model::{
    FailurePolicy, MatchCondition, ObjectMeta, ParamKind, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicySpec, Validation, ValidationAction, Variable,
};
use crate::name::Name;

/// The annotation that picks a template's engine when it has both: `Rego` runs its Rego
/// instead of the K8sNativeValidation (CEL) code Gatekeeper would run.
pub const ENGINE_ANNOTATION: &str = "celer.dev/gatekeeper-engine";

/// Names no template variable may take (`pkg/drivers/k8scel/schema`).
const RESERVED_PREFIX: &str = "gatekeeper_internal";
const PARAMS_VARIABLE: &str = "params";
const OBJECT_VARIABLE: &str = "anyObject";

/// The variables Gatekeeper binds before a template's own (`transform.AllVariablesCEL`).
const GATEKEEPER_VARIABLES: [(&str, &str); 2] = [
    (
        OBJECT_VARIABLE,
        r#"has(request.operation) && request.operation == "DELETE" && object == null ? oldObject : object"#,
    ),
    (
        PARAMS_VARIABLE,
        "!has(params.spec) ? null : !has(params.spec.parameters) ? null: params.spec.parameters",
    ),
];

/// What runs a template.
#[derive(Debug)]
pub enum TemplateEngine {
    /// The `K8sNativeValidation` source, compiled.
    Cel(Box<ValidatingPolicy>),
    /// The Rego source (legacy `rego` + `libs`, or a `Rego` entry of `code[]`), compiled.
    Rego(Box<RegoTemplate>),
    /// An engine celer does not run, with the reason.
    Unsupported(String),
}

/// A compiled ConstraintTemplate.
#[derive(Debug)]
pub struct CompiledTemplate {
    pub name: Name,
    /// The Constraint kind it defines.
    pub kind: String,
    pub engine: TemplateEngine,
}

/// A compiled Constraint: the implicit binding of its template.
#[derive(Debug)]
pub struct CompiledConstraint {
    /// Index of its template in [`super::GatekeeperSet::templates`].
    pub template: usize,
    /// Named after the Constraint; its validation actions are the enforcement action's.
    pub binding: Binding,
    /// The Constraint object: the template's `params`.
    pub params: Arc<Json>,
    pub matcher: ConstraintMatch,
    /// `spec.enforcementAction` as written (`deny` when absent).
    pub enforcement_action: String,
    /// `spec.parameters` as a Rego template reads them (`input.parameters`), converted once.
    pub rego_parameters: celer_rego::RegoValue,
}

fn is_cel_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !celer_cel::syntax::is_reserved_word(s)
}

/// Validates and compiles a template: `Err` leaves it out; `Ok` carries the compile errors of
/// its expressions (the template stays and reports them through failurePolicy).
pub fn compile_template(
    t: &ConstraintTemplate,
) -> Result<(CompiledTemplate, Vec<String>), Vec<String>> {
    let mut errors = Vec::new();
    let name = &t.metadata.name;
    let kind = &t.spec.crd.spec.names.kind;
    if name.is_empty() {
        errors.push("metadata.name: Required value".to_string());
    }
    if kind.is_empty() {
        errors.push("spec.crd.spec.names.kind: Required value".to_string());
    } else if *name != kind.to_lowercase() {
        errors.push(format!(
            "metadata.name: Invalid value: {name:?}: must be the lowercase of spec.crd.spec.names.kind ({:?})",
            kind.to_lowercase()
        ));
    }
    let target = match t.spec.targets.as_slice() {
        [one] => Some(one),
        [] => {
            errors.push("spec.targets: Required value: exactly one target".to_string());
            None
        }
        _ => {
            errors.push("spec.targets: Too many: must have exactly one target".to_string());
            None
        }
    };
    if let Some(target) = target
        && target.target != ADMISSION_TARGET
    {
        errors.push(format!(
            "spec.targets[0].target: Unsupported value: {:?}: supported values: {ADMISSION_TARGET:?}",
            target.target
        ));
    }
    let Some(target) = target.filter(|_| errors.is_empty()) else {
        return Err(errors);
    };
    // K8sNativeValidation wins over Rego, with no fallback, as in Gatekeeper, unless the
    // template's ENGINE_ANNOTATION asks for Rego.
    let prefer_rego = match t
        .metadata
        .annotations
        .get(ENGINE_ANNOTATION)
        .map(String::as_str)
    {
        None | Some(CEL_ENGINE) => false,
        Some(REGO_ENGINE) => true,
        Some(other) => {
            return Err(vec![format!(
                "metadata.annotations[{ENGINE_ANNOTATION:?}]: Unsupported value: {other:?}: supported values: {CEL_ENGINE:?}, {REGO_ENGINE:?}"
            )]);
        }
    };
    let has_rego = target.rego.as_deref().is_some_and(|r| !r.trim().is_empty())
        || target.code.iter().any(|c| c.engine == REGO_ENGINE);
    if prefer_rego && !has_rego {
        return Err(vec![format!(
            "metadata.annotations[{ENGINE_ANNOTATION:?}]: Invalid value: \"Rego\": the template has no Rego"
        )]);
    }
    let cel = target
        .code
        .iter()
        .enumerate()
        .find(|(_, c)| c.engine == CEL_ENGINE && !prefer_rego);
    let Some((index, code)) = cel else {
        return compile_rego_template(t, target).map(|template| (template, Vec::new()));
    };
    let at = format!("spec.targets[0].code[{index}].source");
    let source: CelSource = match &code.source {
        None => return Err(vec![format!("{at}: Required value")]),
        Some(s) => serde_path_to_error::deserialize(s).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." || path.is_empty() {
                vec![format!("{at}: {inner}")]
            } else {
                vec![format!("{at}.{path}: {inner}")]
            }
        })?,
    };
    let failure_policy = match source.failure_policy.as_deref() {
        None | Some("Fail") => FailurePolicy::Fail,
        Some("Ignore") => FailurePolicy::Ignore,
        Some(other) => {
            return Err(vec![format!(
                "{at}.failurePolicy: Unsupported value: {other:?}: supported values: \"Fail\", \"Ignore\""
            )]);
        }
    };
    let mut seen = HashSet::new();
    for (i, v) in source.variables.iter().enumerate() {
        let field = format!("{at}.variables[{i}].name");
        if v.name.starts_with(RESERVED_PREFIX) {
            errors.push(format!(
                "{field}: Invalid value: {:?}: cannot have {RESERVED_PREFIX:?} as a prefix",
                v.name
            ));
        } else if v.name == PARAMS_VARIABLE || v.name == OBJECT_VARIABLE {
            errors.push(format!(
                "{field}: Invalid value: {:?}: a reserved variable name",
                v.name
            ));
        } else if !is_cel_identifier(&v.name) {
            errors.push(format!(
                "{field}: Invalid value: {:?}: name is not a valid CEL identifier",
                v.name
            ));
        } else if !seen.insert(v.name.as_str()) {
            errors.push(format!("{field}: Duplicate value: {:?}", v.name));
        }
        if v.expression.trim().is_empty() {
            errors.push(format!("{at}.variables[{i}].expression: Required value"));
        }
    }
    for (i, v) in source.validations.iter().enumerate() {
        if v.expression.trim().is_empty() {
            errors.push(format!("{at}.validations[{i}].expression: Required value"));
        }
    }
    let mut condition_names = HashSet::new();
    for (i, c) in source.match_condition.iter().enumerate() {
        if c.name.is_empty() {
            errors.push(format!("{at}.matchCondition[{i}].name: Required value"));
        } else if c.name.starts_with(RESERVED_PREFIX) {
            errors.push(format!(
                "{at}.matchCondition[{i}].name: Invalid value: {:?}: cannot have {RESERVED_PREFIX:?} as a prefix",
                c.name
            ));
        } else if !condition_names.insert(c.name.as_str()) {
            errors.push(format!(
                "{at}.matchCondition[{i}].name: Duplicate value: {:?}",
                c.name
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let policy = ValidatingAdmissionPolicy {
        metadata: ObjectMeta {
            name: name.clone(),
            ..ObjectMeta::default()
        },
        spec: ValidatingAdmissionPolicySpec {
            param_kind: Some(ParamKind {
                api_version: format!("{CONSTRAINT_GROUP}/v1beta1"),
                kind: kind.clone(),
            }),
            match_constraints: None,
            validations: source
                .validations
                .iter()
                .map(|v| Validation {
                    expression: v.expression.clone(),
                    message: v.message.clone().filter(|m| !m.is_empty()),
                    reason: None,
                    message_expression: v.message_expression.clone(),
                })
                .collect(),
            failure_policy: Some(failure_policy),
            audit_annotations: Vec::new(),
            match_conditions: source
                .match_condition
                .iter()
                .map(|c| MatchCondition {
                    name: c.name.clone(),
                    expression: c.expression.clone(),
                })
                .collect(),
            variables: GATEKEEPER_VARIABLES
                .iter()
                .map(|(name, expression)| Variable {
                    name: (*name).to_string(),
                    expression: (*expression).to_string(),
                })
                .chain(source.variables.iter().map(|v| Variable {
                    name: v.name.clone(),
                    expression: v.expression.clone(),
                }))
                .collect(),
        },
    };
    let compiled = ValidatingPolicy::compile(&policy, MatchConstraints::everything());
    let compile_errors = compile_errors(&compiled, &at);
    Ok((
        CompiledTemplate {
            name: Name::from(name.as_str()),
            kind: kind.clone(),
            engine: TemplateEngine::Cel(Box::new(compiled)),
        },
        compile_errors,
    ))
}

/// A template without the CEL engine: its Rego (the legacy `rego` first, as Gatekeeper picks
/// it, then a `Rego` entry of `code[]`), or `Unsupported` naming the engines it has.
fn compile_rego_template(
    t: &ConstraintTemplate,
    target: &model::Target,
) -> Result<CompiledTemplate, Vec<String>> {
    let (name, kind) = (&t.metadata.name, &t.spec.crd.spec.names.kind);
    let template = |engine| CompiledTemplate {
        name: Name::from(name.as_str()),
        kind: kind.clone(),
        engine,
    };
    if let Some(text) = target.rego.as_deref().filter(|r| !r.trim().is_empty()) {
        let code = RegoCode {
            rego: text,
            libs: &target.libs,
            v1: false,
            at: "spec.targets[0].rego".to_string(),
        };
        return rego::compile(&code).map(|r| template(TemplateEngine::Rego(Box::new(r))));
    }
    if let Some((index, code)) = target
        .code
        .iter()
        .enumerate()
        .find(|(_, c)| c.engine == REGO_ENGINE)
    {
        let at = format!("spec.targets[0].code[{index}].source");
        let source: RegoSource = match &code.source {
            None => return Err(vec![format!("{at}: Required value")]),
            Some(s) => serde_path_to_error::deserialize(s)
                .map_err(|e| vec![format!("{at}: {}", e.into_inner())])?,
        };
        if source.rego.trim().is_empty() {
            return Err(vec![format!("{at}.rego: Required value")]);
        }
        let v1 = match source.version.as_deref() {
            None | Some("") | Some("v0") => false,
            Some("v1") => true,
            Some(other) => {
                return Err(vec![format!(
                    "{at}.version: Unsupported value: {other:?}: supported values: \"v0\", \"v1\""
                )]);
            }
        };
        let code = RegoCode {
            rego: &source.rego,
            libs: &source.libs,
            v1,
            at: format!("{at}.rego"),
        };
        return rego::compile(&code).map(|r| template(TemplateEngine::Rego(Box::new(r))));
    }
    if target.code.is_empty() {
        return Err(vec![
            "spec.targets[0]: Required value: rego or code".to_string(),
        ]);
    }
    let engines: Vec<&str> = target.code.iter().map(|c| c.engine.as_str()).collect();
    Ok(template(TemplateEngine::Unsupported(format!(
        "engine not supported: {}",
        engines.join(", ")
    ))))
}

fn compile_error(field: String, source: &str, error: &str) -> String {
    format!("{field}: Invalid value: {source:?}: {error}")
}

/// The expressions of a compiled template that failed to compile, under the template's paths.
fn compile_errors(p: &ValidatingPolicy, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, c) in p.common.match_conditions.iter().enumerate() {
        if let Err(e) = &c.expression.program {
            out.push(compile_error(
                format!("{at}.matchCondition[{i}].expression"),
                &c.expression.source,
                e,
            ));
        }
    }
    // The first variables are Gatekeeper's own.
    for (i, v) in p
        .common
        .variables
        .iter()
        .enumerate()
        .skip(GATEKEEPER_VARIABLES.len())
    {
        if let Err(e) = &v.expression.program {
            out.push(compile_error(
                format!(
                    "{at}.variables[{}].expression",
                    i - GATEKEEPER_VARIABLES.len()
                ),
                &v.expression.source,
                e,
            ));
        }
    }
    for (i, v) in p.validations.iter().enumerate() {
        if let Err(e) = &v.expression.program {
            out.push(compile_error(
                format!("{at}.validations[{i}].expression"),
                &v.expression.source,
                e,
            ));
        }
        if let Some(m) = &v.message_expression
            && let Err(e) = &m.program
        {
            out.push(compile_error(
                format!("{at}.validations[{i}].messageExpression"),
                &m.source,
                e,
            ));
        }
    }
    out
}

/// The enforcement point of Gatekeeper's validating webhook, for `scoped` actions.
const WEBHOOK_POINT: &str = "validation.gatekeeper.sh";

/// The validation actions of an enforcement action (deny -> Deny, warn -> Warn,
/// dryrun -> Audit, as Gatekeeper's binding generation maps them).
fn actions_of(c: &model::ConstraintSpec) -> Result<Vec<ValidationAction>, String> {
    let one = |action: &str| match action {
        "deny" => Some(ValidationAction::Deny),
        "warn" => Some(ValidationAction::Warn),
        "dryrun" => Some(ValidationAction::Audit),
        _ => None,
    };
    match c.enforcement_action.as_deref().unwrap_or("deny") {
        "" => Ok(vec![ValidationAction::Deny]),
        "scoped" => {
            let mut out = Vec::new();
            for (i, s) in c.scoped_enforcement_actions.iter().enumerate() {
                let action = one(&s.action).ok_or_else(|| {
                    format!(
                        "spec.scopedEnforcementActions[{i}].action: Unsupported value: {:?}: supported values: \"deny\", \"dryrun\", \"warn\"",
                        s.action
                    )
                })?;
                let here = s
                    .enforcement_points
                    .iter()
                    .any(|p| p.name == WEBHOOK_POINT || p.name == "*");
                if here && !out.contains(&action) {
                    out.push(action);
                }
            }
            Ok(out)
        }
        other => one(other).map(|a| vec![a]).ok_or_else(|| {
            format!(
                "spec.enforcementAction: Unsupported value: {other:?}: supported values: \"deny\", \"dryrun\", \"scoped\", \"warn\""
            )
        }),
    }
}

/// Validates and compiles a Constraint of the template at `template`.
pub fn compile_constraint(
    c: &Constraint,
    template: usize,
) -> Result<CompiledConstraint, Vec<String>> {
    let mut errors = Vec::new();
    let spec = &c.spec;
    if spec.metadata.name.is_empty() {
        errors.push("metadata.name: Required value".to_string());
    }
    let actions = actions_of(&spec.spec).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    let matcher = ConstraintMatch::compile(spec.spec.match_.as_ref()).unwrap_or_else(|e| {
        errors.extend(e);
        ConstraintMatch::everything()
    });
    let rego_parameters = rego::parameters(&c.object).unwrap_or_else(|e| {
        errors.push(format!("spec.parameters: {e}"));
        celer_rego::RegoValue::Undefined
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CompiledConstraint {
        template,
        binding: Binding {
            name: Name::from(spec.metadata.name.as_str()),
            policy_name: c.kind.to_lowercase(),
            param_ref: None,
            param_selector: None,
            match_resources: None,
            validation_actions: actions,
        },
        params: Arc::new(c.object.clone()),
        matcher,
        enforcement_action: spec
            .spec
            .enforcement_action
            .clone()
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "deny".to_string()),
        rego_parameters,
    })
}
