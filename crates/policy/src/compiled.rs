//! Policies and bindings lowered into what evaluation runs: every expression compiled once, at
//! load time, defaults applied. An expression that fails to compile keeps its error, which
//! evaluation reports through failurePolicy (`compilation error: ...`), as kube-apiserver does
//! for a stored policy its environment no longer compiles.

use std::sync::Arc;

use celer_cel::Program;
use celer_cel::syntax::ast::{Expr, ExprKind};

use crate::environment::{ExpressionKind, PolicyEnv};
use crate::matching::{FieldErrors, MatchConstraints, Selector};
use crate::model::{
    self, FailurePolicy, ParamKind, ParamRef, ReinvocationPolicy, ValidationAction,
};
use crate::name::Name;

/// One compiled expression with its source (messages quote it).
#[derive(Debug)]
pub struct Expression {
    pub source: Arc<str>,
    pub program: Result<Program, String>,
    /// The policy's variables that failed to compile, as (what reading one reports, what
    /// kube-apiserver reports): see [`Expression::explain`].
    pub variable_errors: Arc<[(String, String)]>,
}

impl Expression {
    pub(crate) fn compile(env: &PolicyEnv, source: &str, kind: ExpressionKind) -> Expression {
        Expression {
            source: Arc::from(source),
            program: env.compile(source, kind),
            variable_errors: env.variable_errors.clone(),
        }
    }

    /// An evaluation error as kube-apiserver words it. A variable that failed to compile has
    /// no program bound, so reading it reports an unbound variable; upstream's lazy map says
    /// `composited variable "x" fails to compile: <error>` (`plugin/cel/composition.go`).
    pub fn explain(&self, message: String) -> String {
        let mut message = message;
        for (unbound, upstream) in self.variable_errors.iter() {
            if message.contains(unbound.as_str()) {
                message = message.replace(unbound.as_str(), upstream);
            }
        }
        message
    }
}

#[derive(Debug)]
pub struct NamedExpression {
    pub name: String,
    pub expression: Expression,
}

/// A variable: its compiled expression and its slot in the policy's environment.
#[derive(Debug)]
pub struct CompiledVariable {
    pub name: String,
    pub expression: Expression,
    pub slot: usize,
}

/// What validating and mutating policies share.
#[derive(Debug)]
pub struct PolicyCommon {
    pub name: Name,
    pub failure_policy: FailurePolicy,
    pub param_kind: Option<ParamKind>,
    pub constraints: MatchConstraints,
    pub match_conditions: Vec<NamedExpression>,
    pub variables: Vec<CompiledVariable>,
    pub env: PolicyEnv,
}

impl PolicyCommon {
    fn new(
        name: &str,
        failure_policy: Option<FailurePolicy>,
        param_kind: Option<&ParamKind>,
        constraints: MatchConstraints,
        match_conditions: &[model::MatchCondition],
        variables: &[model::Variable],
        mutating: bool,
    ) -> PolicyCommon {
        let env = PolicyEnv::new(param_kind.is_some(), mutating);
        PolicyCommon::with_env(
            env,
            name,
            failure_policy,
            param_kind,
            constraints,
            match_conditions,
            variables,
        )
    }

    /// [`PolicyCommon::new`] in a given environment (Kyverno's policies declare more).
    pub fn with_env(
        mut env: PolicyEnv,
        name: &str,
        failure_policy: Option<FailurePolicy>,
        param_kind: Option<&ParamKind>,
        constraints: MatchConstraints,
        match_conditions: &[model::MatchCondition],
        variables: &[model::Variable],
    ) -> PolicyCommon {
        // Match conditions see no variables.
        let match_conditions = match_conditions
            .iter()
            .map(|c| NamedExpression {
                name: c.name.clone(),
                expression: Expression::compile(&env, &c.expression, ExpressionKind::Condition),
            })
            .collect();
        let mut compiled = Vec::with_capacity(variables.len());
        let mut variable_errors = Vec::new();
        for v in variables {
            let expression = Expression::compile(&env, &v.expression, ExpressionKind::Variable);
            let slot = env.declare_variable(&v.name, expression.program.as_ref().ok());
            if let Err(e) = &expression.program {
                variable_errors.push((
                    format!(
                        "composited variable \"{}\" is not bound in the activation",
                        v.name
                    ),
                    format!("composited variable \"{}\" fails to compile: {e}", v.name),
                ));
            }
            compiled.push(CompiledVariable {
                name: v.name.clone(),
                expression,
                slot,
            });
        }
        env.variable_errors = variable_errors.into();
        PolicyCommon {
            name: Name::from(name),
            failure_policy: failure_policy.unwrap_or(FailurePolicy::Fail),
            param_kind: param_kind.cloned(),
            constraints,
            match_conditions,
            variables: compiled,
            env,
        }
    }
}

#[derive(Debug)]
pub struct CompiledValidation {
    pub expression: Expression,
    pub message: Option<String>,
    pub message_expression: Option<Expression>,
    pub reason: Option<String>,
}

#[derive(Debug)]
pub struct CompiledAuditAnnotation {
    pub key: String,
    pub value: Expression,
}

/// A compiled ValidatingAdmissionPolicy.
#[derive(Debug)]
pub struct ValidatingPolicy {
    pub common: PolicyCommon,
    pub validations: Vec<CompiledValidation>,
    pub audit_annotations: Vec<CompiledAuditAnnotation>,
}

impl ValidatingPolicy {
    pub fn compile(p: &model::ValidatingAdmissionPolicy, constraints: MatchConstraints) -> Self {
        let spec = &p.spec;
        let common = PolicyCommon::new(
            &p.metadata.name,
            spec.failure_policy,
            spec.param_kind.as_ref(),
            constraints,
            &spec.match_conditions,
            &spec.variables,
            false,
        );
        ValidatingPolicy::compile_validations(common, spec)
    }

    /// Compiles the validations and audit annotations of `spec` in `common`'s environment.
    pub fn compile_validations(
        common: PolicyCommon,
        spec: &model::ValidatingAdmissionPolicySpec,
    ) -> Self {
        let env = &common.env;
        let validations = spec
            .validations
            .iter()
            .map(|v| CompiledValidation {
                expression: Expression::compile(env, &v.expression, ExpressionKind::Condition),
                message: v.message.clone(),
                message_expression: v
                    .message_expression
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .map(|m| Expression::compile(env, m, ExpressionKind::Message)),
                reason: v.reason.clone(),
            })
            .collect();
        let audit_annotations = spec
            .audit_annotations
            .iter()
            .map(|a| CompiledAuditAnnotation {
                key: a.key.clone(),
                value: Expression::compile(env, &a.value_expression, ExpressionKind::AuditValue),
            })
            .collect();
        ValidatingPolicy {
            common,
            validations,
            audit_annotations,
        }
    }
}

/// How a mutation patches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    ApplyConfiguration,
    JsonPatch,
}

#[derive(Debug)]
pub struct CompiledMutation {
    pub patch_type: PatchType,
    pub expression: Expression,
    /// Whether the expression may read `object` (see [`may_read_object`]): when it cannot,
    /// the object mutated so far need not be written out as JSON for it.
    pub reads_object: bool,
}

/// Whether an expression may read the `object` variable: it names `object`, or `variables`
/// (whose expressions may). Decided on the parsed expression, conservatively: any identifier
/// of either name counts (even a comprehension variable that shadows it), and so does an
/// expression that does not parse.
pub fn may_read_object(env: &PolicyEnv, source: &str) -> bool {
    env.env
        .parse(source)
        .map_or(true, |e| mentions(&e, &["object", "variables"], 0))
}

/// Whether an identifier of one of `names` occurs in `e`. Deeper than the parser nests (it
/// refuses deeper expressions) counts as yes.
fn mentions(e: &Expr, names: &[&str], depth: usize) -> bool {
    if depth > 1024 {
        return true;
    }
    let m = |e: &Expr| mentions(e, names, depth + 1);
    match &e.kind {
        ExprKind::Literal(_) => false,
        ExprKind::Ident(name) => names.contains(&name.as_str()),
        ExprKind::Select { operand, .. } => m(operand),
        ExprKind::Call { target, args, .. } => {
            target.as_deref().is_some_and(m) || args.iter().any(m)
        }
        ExprKind::List { elements, .. } => elements.iter().any(m),
        ExprKind::Map { entries } => entries.iter().any(|en| m(&en.key) || m(&en.value)),
        ExprKind::Struct { fields, .. } => fields.iter().any(|f| m(&f.value)),
        ExprKind::Comprehension(c) => {
            m(&c.iter_range)
                || m(&c.accu_init)
                || m(&c.loop_condition)
                || m(&c.loop_step)
                || m(&c.result)
        }
    }
}

/// A compiled MutatingAdmissionPolicy.
#[derive(Debug)]
pub struct MutatingPolicy {
    pub common: PolicyCommon,
    pub mutations: Vec<CompiledMutation>,
    pub reinvocation: ReinvocationPolicy,
}

impl MutatingPolicy {
    pub fn compile(p: &model::MutatingAdmissionPolicy, constraints: MatchConstraints) -> Self {
        let spec = &p.spec;
        let common = PolicyCommon::new(
            &p.metadata.name,
            spec.failure_policy,
            spec.param_kind.as_ref(),
            constraints,
            &spec.match_conditions,
            &spec.variables,
            true,
        );
        MutatingPolicy::compile_mutations(common, spec)
    }

    /// Compiles the mutations of `spec` in `common`'s environment.
    pub fn compile_mutations(
        common: PolicyCommon,
        spec: &model::MutatingAdmissionPolicySpec,
    ) -> Self {
        let mutations = spec
            .mutations
            .iter()
            .filter_map(|m| {
                let (patch_type, source, kind) = match (&m.apply_configuration, &m.json_patch) {
                    (Some(a), _) if m.patch_type != "JSONPatch" => (
                        PatchType::ApplyConfiguration,
                        &a.expression,
                        ExpressionKind::ApplyConfiguration,
                    ),
                    (_, Some(j)) => (
                        PatchType::JsonPatch,
                        &j.expression,
                        ExpressionKind::JsonPatch,
                    ),
                    (Some(a), None) => (
                        PatchType::ApplyConfiguration,
                        &a.expression,
                        ExpressionKind::ApplyConfiguration,
                    ),
                    (None, None) => return None,
                };
                Some(CompiledMutation {
                    patch_type,
                    expression: Expression::compile(&common.env, source, kind),
                    reads_object: may_read_object(&common.env, source),
                })
            })
            .collect();
        MutatingPolicy {
            common,
            mutations,
            reinvocation: spec
                .reinvocation_policy
                .unwrap_or(ReinvocationPolicy::Never),
        }
    }
}

/// A compiled binding of either kind.
#[derive(Debug)]
pub struct Binding {
    pub name: Name,
    pub policy_name: String,
    pub param_ref: Option<ParamRef>,
    /// `paramRef.selector`, compiled at load ([`Binding::param_selector_of`]). An invalid
    /// selector keeps its errors, which evaluation reports as a binding configuration error.
    pub param_selector: Option<Result<Selector, FieldErrors>>,
    /// `None`: the binding matches whatever its policy matches.
    pub match_resources: Option<MatchConstraints>,
    /// Validating bindings only; empty for mutating ones.
    pub validation_actions: Vec<ValidationAction>,
}

impl Binding {
    /// Compiles `paramRef.selector`, when there is one.
    pub fn param_selector_of(
        param_ref: Option<&ParamRef>,
    ) -> Option<Result<Selector, FieldErrors>> {
        param_ref?.selector.as_ref().map(compile_param_selector)
    }
}

/// Compiles a `paramRef.selector`.
pub fn compile_param_selector(selector: &model::LabelSelector) -> Result<Selector, FieldErrors> {
    Selector::compile(selector, "spec.paramRef.selector").map_err(FieldErrors)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn which_expressions_may_read_the_object() {
        let env = PolicyEnv::new(false, true);
        let reads = |source: &str| may_read_object(&env, source);
        assert!(!reads(
            r#"[JSONPatch{op: "add", path: "/metadata/annotations/" + jsonpatch.escapeKey("object/x"), value: "v"}]"#
        ));
        assert!(!reads("request.operation == 'CREATE' && oldObject == null"));
        assert!(!reads("namespaceObject.metadata.name.startsWith('object')"));
        assert!(reads("object.metadata.name == 'x'"));
        assert!(reads("has(object.spec)"));
        assert!(reads("[1, 2].all(x, x in object.spec.ports)"));
        assert!(reads(
            "Object{metadata: Object.metadata{labels: {'a': object.kind}}}"
        ));
        assert!(reads("variables.anything"));
        // A comprehension variable that shadows `object` counts too: conservative.
        assert!(reads("[1].all(object, object > 0)"));
        // What does not parse may read anything.
        assert!(reads("object.("));
    }
}
