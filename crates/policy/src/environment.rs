//! The CEL environment of admission policies (`plugin/cel/compile.go createEnvForOpts`):
//! `object`, `oldObject`, `request`, `namespaceObject`, `params` (only with a paramKind),
//! `authorizer` and `authorizer.requestResource`, then the policy's `variables`.
//!
//! Every expression of a policy is compiled against one environment, so one activation layout
//! serves them all. Upstream compiles messageExpressions without `authorizer`; here they compile
//! with it declared but run with it unbound, so using it there is a runtime error rather than a
//! compile error.

use celer_cel::{Env, Program, Type};
use celer_cel_kubernetes::{KubernetesEnv, authz, mutation};

/// What kind of expression is compiled: decides the required result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionKind {
    /// `validations[].expression`, `matchConditions[].expression`: bool.
    Condition,
    /// `validations[].messageExpression`: string.
    Message,
    /// `auditAnnotations[].valueExpression`: string or null.
    AuditValue,
    /// `variables[].expression`: anything.
    Variable,
    /// `mutations[].applyConfiguration.expression`: an `Object`.
    ApplyConfiguration,
    /// `mutations[].jsonPatch.expression`: a list of `JSONPatch`.
    JsonPatch,
}

/// The slots of the fixed variables.
#[derive(Debug, Clone, Copy)]
pub struct Slots {
    pub object: usize,
    pub old_object: usize,
    pub request: usize,
    pub namespace_object: usize,
    pub params: Option<usize>,
    pub authorizer: usize,
    pub request_resource: usize,
}

/// A policy's environment while it is being compiled.
#[derive(Debug, Clone)]
pub struct PolicyEnv {
    pub env: Env,
    pub slots: Slots,
    /// Set once the variables are compiled: see [`crate::compiled::Expression::explain`].
    pub variable_errors: std::sync::Arc<[(String, String)]>,
    /// Whether an expression compiled here may read `authorizer` (see [`PolicyEnv::compile`]).
    pub reads_authorizer: ReadsVariable,
    /// Whether an expression compiled here may read `request` (see [`PolicyEnv::compile`]).
    pub reads_request: ReadsVariable,
}

/// Set by [`PolicyEnv::compile`] when a source names a variable; shared by an environment's
/// clones, which can only make the answer more conservative.
#[derive(Debug, Clone, Default)]
pub struct ReadsVariable(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl ReadsVariable {
    fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl PolicyEnv {
    /// Whether an expression compiled in this environment may read `authorizer` or
    /// `authorizer.requestResource`: when none can, the request need not build their values.
    pub fn reads_authorizer(&self) -> bool {
        self.reads_authorizer.get()
    }

    /// Whether an expression compiled in this environment may read `request`: when none can,
    /// the request need not build the CEL `request` value for it.
    pub fn reads_request(&self) -> bool {
        self.reads_request.get()
    }

    pub fn new(has_params: bool, mutating: bool) -> PolicyEnv {
        let mut env = Env::kubernetes();
        if mutating {
            env.enable_mutation_types();
        }
        let object = env.declare("object", Type::Dyn);
        let old_object = env.declare("oldObject", Type::Dyn);
        let request = env.declare("request", Type::Dyn);
        let namespace_object = env.declare("namespaceObject", Type::Dyn);
        let params = has_params.then(|| env.declare("params", Type::Dyn));
        authz::declare_variables(&mut env);
        env.enable_lazy_variables();
        let authorizer = env
            .variables()
            .slot(authz::AUTHORIZER_VAR)
            .unwrap_or(usize::MAX);
        let request_resource = env
            .variables()
            .slot(authz::REQUEST_RESOURCE_VAR)
            .unwrap_or(usize::MAX);
        PolicyEnv {
            env,
            slots: Slots {
                object,
                old_object,
                request,
                namespace_object,
                params,
                authorizer,
                request_resource,
            },
            variable_errors: std::sync::Arc::from(Vec::new()),
            reads_authorizer: ReadsVariable::default(),
            reads_request: ReadsVariable::default(),
        }
    }

    /// Compiles one expression and checks its result type, giving the error text
    /// kube-apiserver gives (`compilation failed: ERROR: <input>:1:3: ...`,
    /// `must evaluate to bool but got dyn`).
    pub fn compile(&self, source: &str, kind: ExpressionKind) -> Result<Program, String> {
        // Conservative: any occurrence of the word (an identifier, a field, a string, a part
        // of a longer name) counts, and so does a source that does not compile. CEL names a
        // variable only by its identifier, so a source without the word cannot read it; lazy
        // `variables` are compiled here too, so a variable that reads it counts for all.
        if source.contains(authz::AUTHORIZER_VAR) {
            self.reads_authorizer.set();
        }
        if source.contains("request") {
            self.reads_request.set();
        }
        compile_in(&self.env, source, kind)
    }

    /// Declares a compiled variable so later expressions can read `variables.<name>`; a
    /// variable that failed to compile is declared `dyn`, as upstream.
    pub fn declare_variable(&mut self, name: &str, program: Option<&Program>) -> usize {
        let ty = program.map_or(Type::Dyn, |p| p.result_type().clone());
        self.env.declare_lazy(name, ty)
    }
}

/// Compiles one expression in `env` and checks its result type, with kube-apiserver's error
/// texts: [`PolicyEnv::compile`] for admission, and environments of other shapes (the
/// authorization policies' `request` alone) share it.
pub fn compile_in(env: &Env, source: &str, kind: ExpressionKind) -> Result<Program, String> {
    let program = env
        .compile(source)
        .map_err(|e| format!("compilation failed: {e}"))?;
    let ty = program.result_type();
    let ok = match kind {
        ExpressionKind::Condition => *ty == Type::Bool,
        ExpressionKind::Message => *ty == Type::String,
        ExpressionKind::AuditValue => matches!(ty, Type::String | Type::Null),
        ExpressionKind::Variable => true,
        ExpressionKind::ApplyConfiguration => *ty == mutation::object_type(),
        ExpressionKind::JsonPatch => *ty == mutation::json_patch_list_type(),
    };
    if ok {
        return Ok(program);
    }
    Err(match kind {
        ExpressionKind::Condition => format!("must evaluate to bool but got {}", type_name(ty)),
        ExpressionKind::Message => format!("must evaluate to string but got {}", type_name(ty)),
        ExpressionKind::AuditValue => format!(
            "must evaluate to one of [string null_type] but got {}",
            type_name(ty)
        ),
        ExpressionKind::ApplyConfiguration => {
            format!("must evaluate to Object but got {}", type_name(ty))
        }
        ExpressionKind::JsonPatch => {
            format!("must evaluate to list(JSONPatch) but got {}", type_name(ty))
        }
        ExpressionKind::Variable => String::new(),
    })
}

/// cel-go's spelling of a type in these messages.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Timestamp => "timestamp".to_string(),
        Type::Duration => "duration".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod reads_authorizer_tests {
    use super::*;

    #[test]
    fn an_environment_knows_whether_an_expression_names_the_authorizer() {
        let env = PolicyEnv::new(false, false);
        assert!(
            env.compile("object.kind == 'Pod'", ExpressionKind::Condition)
                .is_ok()
        );
        assert!(!env.reads_authorizer());
        let _ = env.compile(
            "authorizer.path('/a').check('get').allowed()",
            ExpressionKind::Condition,
        );
        assert!(env.reads_authorizer());
        // A clone shares the answer.
        let other = PolicyEnv::new(false, false);
        let clone = other.clone();
        let _ = clone.compile(
            "authorizer.requestResource.check('get').allowed()",
            ExpressionKind::Condition,
        );
        assert!(other.reads_authorizer());
    }

    #[test]
    fn an_environment_knows_whether_an_expression_names_the_request() {
        let env = PolicyEnv::new(false, false);
        assert!(
            env.compile("object.kind == 'Pod'", ExpressionKind::Condition)
                .is_ok()
        );
        assert!(!env.reads_request());
        // A variable's expression counts for the whole policy.
        let _ = env.compile("request.userInfo.username", ExpressionKind::Variable);
        assert!(env.reads_request());
        // So does a source that does not compile, and a clone shares the answer.
        let other = PolicyEnv::new(false, false);
        let clone = other.clone();
        let _ = clone.compile("request.(", ExpressionKind::Condition);
        assert!(other.reads_request());
    }
}
