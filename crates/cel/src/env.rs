//! The compilation environment: declared variables, functions, container and limits.
//!
//! # Lazily evaluated variables (`variables.<name>`)
//!
//! Kubernetes admission policies declare `spec.variables`, which their expressions read as
//! `variables.<name>` (apiserver `pkg/admission/plugin/cel/composition.go`). celer models
//! them as *lazy variables*:
//!
//! - [`Env::declare_lazy`] declares `variables.<name>` with a type and returns its *lazy
//!   slot*. It also declares the ordinary variable `variables` (as
//!   [`Env::enable_lazy_variables`] does, which a policy environment calls before its first
//!   variable), of the object type [`VARIABLES_TYPE`] whose fields are the lazy variables:
//!   `variables.x` has the declared type, `has(variables.x)` and `variables.?x` check, and
//!   `variables.y` for an undeclared `y` is the compile error `undefined field 'y'`, as in
//!   Kubernetes. `variables` on its own is a map of every variable, each evaluated.
//! - [`Activation::set_lazy`] binds a lazy slot to a compiled [`Program`]. The program is
//!   evaluated, under the same activation, the first time an evaluation reads the variable;
//!   its result (value or error) is kept in the activation, so every later read, by that
//!   evaluation or another one using the same activation, costs nothing more.
//! - The variable's cost is reported by the evaluation that first reads it, in
//!   [`Evaluation::cost`](crate::Evaluation::cost) and, separately,
//!   [`Evaluation::variables_cost`](crate::Evaluation::variables_cost). As in Kubernetes it
//!   is its own CEL evaluation: the per-call limit given to
//!   [`Program::evaluate`](crate::Program::evaluate) applies to the variable's cost and the
//!   reader's cost separately, and a variable that exceeds it becomes an error value.
//! - An error becomes the error value `composited variable "<name>" fails to evaluate:
//!   <error>`, which `&&`, `||`, `?:` and comprehensions absorb like any other.
//!
//! The policy engine compiles variable *i* with an environment where variables `0..i` are
//! declared, then declares variable *i* with the program's
//! [`result_type`](crate::Program::result_type); every later expression is compiled with the
//! extended environment. Declarations only append slots, so a program compiled from an
//! earlier environment runs unchanged with an activation built from the final one.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::error::{CompileError, EvalResult};
use crate::library::Registry;
use crate::program::Program;
use crate::syntax::ast::Expr;
use crate::types::Type;
use crate::value::{Json, Value};

/// Limits applied while parsing.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// Nesting depth of the expression; deeper input is a parse error, never a stack overflow.
    pub max_depth: usize,
    /// Source length in code points (cel-go's default is 100,000).
    pub max_code_points: usize,
    /// Expand `has`, `all`, `exists`, `exists_one`, `map`, `filter`.
    pub macros: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: 250,
            max_code_points: 100_000,
            macros: true,
        }
    }
}

/// The name under which lazy variables are read: `variables.<name>`.
pub const VARIABLES: &str = "variables";

/// The type of the `variables` object, as Kubernetes names it.
pub const VARIABLES_TYPE: &str = "kubernetes.variables";

/// Declared variables; a variable's slot is its index here. Lazy variables
/// (`variables.<name>`) have slots of their own, indices into a second table.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    names: Vec<(String, Type)>,
    by_name: HashMap<String, usize>,
    lazy: Vec<(String, Type)>,
    lazy_by_name: HashMap<String, usize>,
    /// Values that activations start with for some slots (see [`Env::declare_with_default`]).
    defaults: Vec<(usize, Value<'static>)>,
}

impl Variables {
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn get(&self, slot: usize) -> Option<(&str, &Type)> {
        self.names.get(slot).map(|(n, t)| (n.as_str(), t))
    }

    /// The declared type of a variable.
    pub fn get_type(&self, name: &str) -> Option<&Type> {
        self.slot(name).and_then(|s| self.get(s)).map(|(_, t)| t)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Type)> {
        self.names.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// The lazy slot of `variables.<name>`.
    pub fn lazy_slot(&self, name: &str) -> Option<usize> {
        self.lazy_by_name.get(name).copied()
    }

    /// The name and type of a lazy slot.
    pub fn lazy_get(&self, slot: usize) -> Option<(&str, &Type)> {
        self.lazy.get(slot).map(|(n, t)| (n.as_str(), t))
    }

    /// How many lazy variables are declared.
    pub fn lazy_len(&self) -> usize {
        self.lazy.len()
    }

    /// Lazy variables in slot order.
    pub fn lazy_iter(&self) -> impl Iterator<Item = (&str, &Type)> {
        self.lazy.iter().map(|(n, t)| (n.as_str(), t))
    }
}

/// The type under which a variable's output type is declared, as Kubernetes converts it
/// (`convertCelTypeToDeclType` in composition.go): scalar types, lists and maps keep their
/// types (element types converted the same way), anything else (messages, optionals, type
/// values, extension types) becomes `dyn`.
pub fn lazy_variable_type(ty: &Type) -> Type {
    match ty {
        Type::Dyn
        | Type::Null
        | Type::Bool
        | Type::Int
        | Type::Uint
        | Type::Double
        | Type::String
        | Type::Bytes
        | Type::Timestamp
        | Type::Duration => ty.clone(),
        Type::List(e) => Type::list(lazy_variable_type(e)),
        Type::Map(k, v) => Type::map(lazy_variable_type(k), lazy_variable_type(v)),
        Type::Type(_)
        | Type::Optional(_)
        | Type::Param(_)
        | Type::Message(_)
        | Type::Abstract(..)
        | Type::Error => Type::Dyn,
    }
}

/// Everything needed to compile expressions. Cheap to clone; programs compiled from it keep
/// what they need.
#[derive(Debug, Clone)]
pub struct Env {
    pub(crate) variables: Arc<Variables>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) container: String,
    pub(crate) parse_options: ParseOptions,
    pub(crate) check_options: crate::check::CheckOptions,
    /// Whether `has()` costs 1 (cel-go's default) or 0 (as Kubernetes configures it).
    pub(crate) presence_test_has_cost: bool,
    /// Whether `Object{...}` and `JSONPatch{...}` are types (see [`crate::mutation`]).
    pub(crate) mutation_types: bool,
}

/// The function registries every environment starts from, built once per process and shared:
/// a registry is large (every overload of the standard and Kubernetes libraries, thousands of
/// allocations), and each compiled policy keeps its environment. [`Env::registry_mut`] still
/// copies on write.
static STANDARD: OnceLock<Arc<Registry>> = OnceLock::new();
static KUBERNETES: OnceLock<Arc<Registry>> = OnceLock::new();
static KUBERNETES_KYVERNO: OnceLock<Arc<Registry>> = OnceLock::new();

fn shared(cell: &OnceLock<Arc<Registry>>, build: impl FnOnce() -> Registry) -> Arc<Registry> {
    Arc::clone(cell.get_or_init(|| Arc::new(build())))
}

impl Env {
    /// The standard CEL environment with no variables.
    pub fn standard() -> Env {
        Env {
            variables: Arc::new(Variables::default()),
            registry: shared(&STANDARD, crate::library::standard),
            container: String::new(),
            parse_options: ParseOptions::default(),
            check_options: crate::check::CheckOptions::default(),
            presence_test_has_cost: true,
            mutation_types: false,
        }
    }

    /// The environment of Kubernetes admission policies: the standard library plus the
    /// extensions and Kubernetes libraries, homogeneous aggregate literals, literal validation
    /// (durations, timestamps, regexes), and free
    /// presence tests, as kube-apiserver's base environment configures them.
    pub fn kubernetes() -> Env {
        let mut env = Env::standard();
        env.registry = shared(&KUBERNETES, crate::library::kubernetes);
        env.check_options.homogeneous_aggregate_literals = true;
        env.check_options.validate_literals = true;
        env.presence_test_has_cost = false;
        env
    }

    /// Declares a variable (or redeclares it with a new type) and returns its slot.
    pub fn declare(&mut self, name: &str, ty: Type) -> usize {
        let vars = Arc::make_mut(&mut self.variables);
        if let Some(&slot) = vars.by_name.get(name) {
            if let Some(entry) = vars.names.get_mut(slot) {
                entry.1 = ty;
            }
            return slot;
        }
        let slot = vars.names.len();
        vars.names.push((name.to_string(), ty));
        vars.by_name.insert(name.to_string(), slot);
        slot
    }

    /// Declares a variable that every activation starts bound to `value` (a clone of it), so
    /// that an evaluation that binds nothing else still reads it; [`Activation::bind`]
    /// replaces it for one activation. Libraries use it for their handle variables (Kyverno's
    /// `json`, or `resource` with no context supplied). Returns the slot.
    pub fn declare_with_default(&mut self, name: &str, ty: Type, value: Value<'static>) -> usize {
        let slot = self.declare(name, ty);
        let vars = Arc::make_mut(&mut self.variables);
        vars.defaults.retain(|(s, _)| *s != slot);
        vars.defaults.push((slot, value));
        slot
    }

    /// Kyverno's CEL libraries (`kyverno/sdk` `extensions/cel/libs`): image references,
    /// json, yaml, x509, hash, math, random, time, transform, gzip, base64, user, and the
    /// context-backed `resource`, `http`, `globalContext` and `image` variables (see
    /// [`crate::library::kyverno`]). Call it on [`Env::kubernetes`].
    /// Idempotent.
    pub fn enable_kyverno_libraries(&mut self) {
        if self.registry.get("parseImageReference").is_none() {
            // The Kubernetes registry with Kyverno's libraries is built once and shared too.
            let kubernetes = shared(&KUBERNETES, crate::library::kubernetes);
            if Arc::ptr_eq(&self.registry, &kubernetes) {
                self.registry = shared(&KUBERNETES_KYVERNO, || {
                    let mut registry = crate::library::kubernetes();
                    crate::library::kyverno::register(&mut registry);
                    registry
                });
            } else {
                crate::library::kyverno::register(self.registry_mut());
            }
        }
        crate::library::kyverno::declare_variables(self);
    }

    /// Declares the variable `variables`, the object whose fields are the lazy variables,
    /// with no fields yet: as in Kubernetes, where every expression of a policy with
    /// composition sees `variables`, `variables.x` is then `undefined field 'x'` rather than
    /// an undeclared reference. [`Env::declare_lazy`] calls it. Idempotent; it takes a
    /// variable slot like [`Env::declare`].
    pub fn enable_lazy_variables(&mut self) {
        let ty = Type::Message(Arc::from(VARIABLES_TYPE));
        if self.variables.slot(VARIABLES).is_none()
            || self.variables.get_type(VARIABLES) != Some(&ty)
        {
            self.declare(VARIABLES, ty);
        }
    }

    /// Declares the lazy variable `variables.<name>` (or redeclares it with a new type) and
    /// returns its lazy slot, for [`Activation::set_lazy`]. The type is converted as
    /// Kubernetes converts a variable's output type ([`lazy_variable_type`]). Also declares
    /// `variables` itself ([`Env::enable_lazy_variables`]); see the
    /// [module documentation](self).
    pub fn declare_lazy(&mut self, name: &str, ty: Type) -> usize {
        self.enable_lazy_variables();
        let ty = lazy_variable_type(&ty);
        let vars = Arc::make_mut(&mut self.variables);
        if let Some(&slot) = vars.lazy_by_name.get(name) {
            if let Some(entry) = vars.lazy.get_mut(slot) {
                entry.1 = ty;
            }
            return slot;
        }
        let slot = vars.lazy.len();
        vars.lazy.push((name.to_string(), ty));
        vars.lazy_by_name.insert(name.to_string(), slot);
        slot
    }

    /// Makes `Object`, `Object.<field>...` and `JSONPatch` types that expressions construct
    /// (`Object{spec: Object.spec{replicas: 3}}`, `JSONPatch{op: "add", ...}`), as
    /// Kubernetes' MutatingAdmissionPolicy environment does; any other message name then is
    /// an undeclared reference. See [`crate::mutation`].
    pub fn enable_mutation_types(&mut self) {
        self.mutation_types = true;
    }

    /// Whether [`Env::enable_mutation_types`] was called.
    pub fn mutation_types(&self) -> bool {
        self.mutation_types
    }

    /// Sets the container (namespace) that qualifies identifiers, as cel-go's `Container`.
    pub fn set_container(&mut self, container: &str) {
        self.container = container.to_string();
    }

    pub fn container(&self) -> &str {
        &self.container
    }

    pub fn variables(&self) -> &Variables {
        &self.variables
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// For adding extension libraries.
    pub fn registry_mut(&mut self) -> &mut Registry {
        Arc::make_mut(&mut self.registry)
    }

    pub fn parse_options_mut(&mut self) -> &mut ParseOptions {
        &mut self.parse_options
    }

    /// Whether `has()` adds to the runtime cost (cel-go: yes; Kubernetes: no).
    pub fn set_presence_test_has_cost(&mut self, has_cost: bool) {
        self.presence_test_has_cost = has_cost;
    }

    pub fn check_options(&self) -> &crate::check::CheckOptions {
        &self.check_options
    }

    pub fn check_options_mut(&mut self) -> &mut crate::check::CheckOptions {
        &mut self.check_options
    }

    /// Parses `source` into an AST with macros expanded.
    pub fn parse(&self, source: &str) -> Result<Expr, CompileError> {
        crate::syntax::parse_with(source, &self.parse_options)
    }

    /// Parses and type-checks, returning the expression's type.
    pub fn check(&self, source: &str) -> Result<Type, CompileError> {
        let expr = self.parse(source)?;
        crate::check::check(self, source, &expr)
    }

    /// Parses, checks and compiles.
    pub fn compile(&self, source: &str) -> Result<Program, CompileError> {
        let expr = self.parse(source)?;
        let ty = crate::check::check(self, source, &expr)?;
        crate::compile::compile(self, source, &expr, ty)
    }

    /// Parses and compiles without type-checking (cel-spec's `disable_check`): type errors
    /// surface at run time instead.
    pub fn compile_unchecked(&self, source: &str) -> Result<Program, CompileError> {
        let expr = self.parse(source)?;
        crate::compile::compile(self, source, &expr, Type::Dyn)
    }
}

/// Variable values for one evaluation, by slot, and the lazy variables with the values they
/// took once read.
#[derive(Debug, Clone)]
pub struct Activation<'a> {
    variables: Arc<Variables>,
    values: Vec<Option<Value<'a>>>,
    lazy: Vec<LazyVariable<'a>>,
}

/// A lazy variable in an activation: the program that computes it and, once read, its
/// result.
#[derive(Debug, Clone, Default)]
pub(crate) struct LazyVariable<'a> {
    pub(crate) program: Option<&'a Program>,
    /// A lock only in name: activations are meant for one thread, but staying `Sync` costs
    /// one atomic load per read. Two threads reading a variable first at the same time would
    /// both evaluate it, and keep one result.
    pub(crate) result: OnceLock<EvalResult<'a>>,
}

/// The memory of an activation without its values, so that one request's many evaluations
/// (each policy has its own environment) need not allocate an activation each:
///
/// ```
/// use celer_cel::env::ActivationBuffers;
/// use celer_cel::{Activation, Env, Type, Value};
/// let mut env = Env::standard();
/// env.declare("x", Type::Int);
/// let program = env.compile("x + 1").unwrap();
/// let mut buffers = ActivationBuffers::default();
/// for i in 0..3 {
///     let mut act = Activation::with_buffers(&env, std::mem::take(&mut buffers));
///     act.bind("x", Value::Int(i)).unwrap();
///     assert!(matches!(program.eval(&act), Ok(Value::Int(n)) if n == i + 1));
///     buffers = act.into_buffers();
/// }
/// ```
#[derive(Debug, Default)]
pub struct ActivationBuffers {
    values: Vec<Option<Value<'static>>>,
    lazy: Vec<LazyVariable<'static>>,
}

/// An emptied vector of another element lifetime over the same allocation: an in-place
/// `collect` (the element types differ only in lifetime, so size and alignment agree).
fn recycle<T, U>(v: Vec<T>) -> Vec<U> {
    v.into_iter().filter_map(|_| None).collect()
}

/// A variable name the environment does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undeclared variable '{0}'")]
pub struct UndeclaredVariable(pub String);

impl<'a> Activation<'a> {
    pub fn new(env: &Env) -> Activation<'a> {
        let mut act = Activation {
            variables: env.variables.clone(),
            values: vec![None; env.variables.len()],
            lazy: (0..env.variables.lazy_len())
                .map(|_| LazyVariable::default())
                .collect(),
        };
        if !act.variables.defaults.is_empty() {
            act.set_defaults();
        }
        act
    }

    /// Binds the variables declared with a default value ([`Env::declare_with_default`]).
    fn set_defaults(&mut self) {
        let variables = self.variables.clone();
        for (slot, value) in &variables.defaults {
            self.set(*slot, value.clone());
        }
    }

    /// An activation for `env` that reuses the memory of an earlier one (see
    /// [`ActivationBuffers`]): no allocation when the buffers are large enough.
    pub fn with_buffers(env: &Env, buffers: ActivationBuffers) -> Activation<'a> {
        let ActivationBuffers { values, lazy } = buffers;
        let mut values = recycle(values);
        values.resize(env.variables.len(), None);
        let mut lazy = recycle(lazy);
        lazy.resize_with(env.variables.lazy_len(), LazyVariable::default);
        let mut act = Activation {
            variables: env.variables.clone(),
            values,
            lazy,
        };
        if !act.variables.defaults.is_empty() {
            act.set_defaults();
        }
        act
    }

    /// Drops the values (and lazy results) and keeps the memory for [`Activation::with_buffers`].
    pub fn into_buffers(self) -> ActivationBuffers {
        ActivationBuffers {
            values: recycle(self.values),
            lazy: recycle(self.lazy),
        }
    }

    /// An activation with no variables (for constant expressions).
    pub fn empty() -> Activation<'a> {
        Activation {
            variables: Arc::new(Variables::default()),
            values: Vec::new(),
            lazy: Vec::new(),
        }
    }

    pub fn bind(&mut self, name: &str, value: Value<'a>) -> Result<(), UndeclaredVariable> {
        let slot = self
            .variables
            .slot(name)
            .ok_or_else(|| UndeclaredVariable(name.to_string()))?;
        self.set(slot, value);
        Ok(())
    }

    /// Binds a JSON document without copying it.
    pub fn bind_json(&mut self, name: &str, json: &'a Json) -> Result<(), UndeclaredVariable> {
        self.bind(name, Value::from_json(json))
    }

    pub fn set(&mut self, slot: usize, value: Value<'a>) {
        if slot >= self.values.len() {
            self.values.resize(slot + 1, None);
        }
        if let Some(v) = self.values.get_mut(slot) {
            *v = Some(value);
        }
    }

    pub fn get(&self, slot: usize) -> Option<&Value<'a>> {
        self.values.get(slot).and_then(Option::as_ref)
    }

    /// Binds the lazy variable `variables.<name>` to the program that computes it.
    pub fn bind_lazy(
        &mut self,
        name: &str,
        program: &'a Program,
    ) -> Result<(), UndeclaredVariable> {
        let slot = self
            .variables
            .lazy_slot(name)
            .ok_or_else(|| UndeclaredVariable(format!("{VARIABLES}.{name}")))?;
        self.set_lazy(slot, program);
        Ok(())
    }

    /// Binds a lazy slot (from [`Env::declare_lazy`]) to the program that computes it, and
    /// forgets any value it had taken.
    pub fn set_lazy(&mut self, slot: usize, program: &'a Program) {
        if slot >= self.lazy.len() {
            self.lazy.resize_with(slot + 1, LazyVariable::default);
        }
        if let Some(v) = self.lazy.get_mut(slot) {
            *v = LazyVariable {
                program: Some(program),
                ..LazyVariable::default()
            };
        }
    }

    /// The result of a lazy variable if some evaluation has read it.
    pub fn lazy_result(&self, slot: usize) -> Option<&EvalResult<'a>> {
        self.lazy.get(slot).and_then(|v| v.result.get())
    }

    pub(crate) fn lazy(&self, slot: usize) -> Option<&LazyVariable<'a>> {
        self.lazy.get(slot)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod buffer_tests {
    use super::*;

    #[test]
    fn buffers_keep_their_memory_across_lifetimes() {
        let mut env = Env::standard();
        for name in ["a", "b", "c", "d", "e"] {
            env.declare(name, Type::Dyn);
        }
        let act = Activation::new(&env);
        let pointer = act.values.as_ptr() as usize;
        let buffers = act.into_buffers();
        assert_eq!(buffers.values.as_ptr() as usize, pointer);
        assert!(buffers.values.is_empty() && buffers.values.capacity() >= 5);
        let text = String::from("x");
        let mut act = Activation::with_buffers(&env, buffers);
        assert_eq!(act.values.as_ptr() as usize, pointer);
        act.bind("a", Value::String(crate::value::Str::Borrowed(&text)))
            .unwrap();
        assert!(act.get(0).is_some() && act.get(1).is_none());
        let again = Activation::with_buffers(&env, act.into_buffers());
        assert!(again.get(0).is_none(), "values do not survive recycling");
    }
}
