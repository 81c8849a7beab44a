//! The compilation environment: declared variables, functions, container and limits.
//!
//! # Lazily evaluated variables (`variables.<name>`)
//!
//! Policies may declare variables that their expressions read as `variables.<name>`
//! (composition, as in apiserver's `pkg/admission/plugin/cel/composition.go`). celer models
//! them as *lazy variables*:
//!
//! - [`Env::declare_lazy`] declares `variables.<name>` with a type and returns its *lazy
//!   slot*. It also declares the ordinary variable `variables` (as
//!   [`Env::enable_lazy_variables`] does, which a policy environment calls before its first
//!   variable), of an object type ([`Env::set_lazy_variables_type`]) whose fields are the
//!   lazy variables:
//!   `variables.x` has the declared type, `has(variables.x)` and `variables.?x` check, and
//!   `variables.y` for an undeclared `y` is the compile error `undefined field 'y'`, as in
//!   composition. `variables` on its own is a map of every variable, each evaluated.
//! - [`Activation::set_lazy`](crate::Activation::set_lazy) binds a lazy slot to a compiled
//!   [`Program`](crate::Program). The program is evaluated, under the same activation, the
//!   first time an evaluation reads the variable;
//!   its result (value or error) is kept in the activation, so every later read, by that
//!   evaluation or another one using the same activation, costs nothing more.
//! - The variable's cost is reported by the evaluation that first reads it, in
//!   [`Evaluation::cost`](crate::Evaluation::cost) and, separately,
//!   [`Evaluation::variables_cost`](crate::Evaluation::variables_cost). As in composition it
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

use crate::error::CompileError;
use crate::library::{Library, Registry};
use crate::syntax::ParseOptions;
use crate::syntax::ast::Expr;
use crate::types::Type;
use crate::value::Value;

/// Checker options, cel-go's environment options of the same names.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Offer the ordering overloads across numeric kinds (`1 < 2.0`). On by default, as the
    /// cel-spec conformance suite expects; cel-go's own default is off.
    pub cross_type_numeric_comparisons: bool,
    /// Reject list and map literals whose elements (keys, values) do not all have exactly the
    /// same type once checked, as cel-go's `HomogeneousAggregateLiterals` validator does
    /// Without it mixed elements give `dyn`, cel-go's default. Either
    /// way `dyn` is not the same type as `int`: `[1, dyn(2)]` is rejected.
    pub homogeneous_aggregate_literals: bool,
    /// Calls whose arguments, at any depth, are exempt from the homogeneity check (cel-go's
    /// string extension exempts `format`, the block extension `cel.@block`).
    pub homogeneous_exempt_functions: Vec<String>,
    /// Reject literal arguments of `duration`, `timestamp` and `matches` that can never work,
    /// as cel-go's literal validators do.
    pub validate_literals: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            cross_type_numeric_comparisons: true,
            homogeneous_aggregate_literals: false,
            homogeneous_exempt_functions: vec!["format".into(), "cel.@block".into()],
            validate_literals: false,
        }
    }
}

/// The name under which lazy variables are read: `variables.<name>`.
pub const VARIABLES: &str = "variables";

/// The type of the `variables` object unless the environment names it otherwise
/// ([`Env::set_lazy_variables_type`]).
pub const DEFAULT_VARIABLES_TYPE: &str = "celer.variables";

/// Declared variables; a variable's slot is its index here. Lazy variables
/// (`variables.<name>`) have slots of their own, indices into a second table.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    pub(crate) names: Vec<(String, Type)>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) lazy: Vec<(String, Type)>,
    pub(crate) lazy_by_name: HashMap<String, usize>,
    /// Values read for some slots while an activation leaves them unbound (see
    /// [`Env::declare_with_default`]).
    pub(crate) defaults: Vec<(usize, Value<'static>)>,
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

/// The type under which a variable's output type is declared, as composition converts it
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
    /// The libraries added to the standard library, in order, while the registry is one of
    /// the process-wide shared ones; `None` once [`Env::registry_mut`] made it this
    /// environment's own.
    pub(crate) libraries: Option<Vec<&'static str>>,
    pub(crate) container: String,
    pub(crate) parse_options: ParseOptions,
    pub(crate) check_options: CheckOptions,
    /// Whether `has()` costs 1 (cel-go's default) or 0.
    pub(crate) presence_test_has_cost: bool,
    /// The type name of the `variables` object ([`Env::set_lazy_variables_type`]).
    pub(crate) lazy_variables_type: &'static str,
    /// Object types whose fields the checker knows ([`Env::set_object_types`]).
    pub(crate) object_types: Option<&'static dyn ObjectTypes>,
}

/// Object types an embedder declares for its variables (kube-apiserver's DeclTypes, such as
/// an authorizer's `request`): the checker types `object.field` by them and refuses a field
/// they do not have (`undefined field`), while the values stay what the activation binds (JSON
/// maps), so nothing changes at run time.
pub trait ObjectTypes: std::fmt::Debug + Send + Sync {
    /// The type of `object.field` when `object` is one of these types: `Some(None)` when it
    /// has no such field, `None` when the type is not one of these.
    fn field_type(&self, object: &str, field: &str) -> Option<Option<Type>>;
}

/// The function registries environments are built from, one per sequence of libraries added
/// to the standard library, built once per process and shared: a registry is large (every
/// overload of the standard library and the libraries added, thousands of allocations) and each
/// compiled policy keeps its environment, so a private copy per policy cost about 180 KiB,
/// and a reload as much again. [`Env::registry_mut`] still copies on write.
///
/// Environments are built when policies load, never per request, so a plain lock is fine.
#[allow(clippy::disallowed_types)]
type SharedRegistries = std::sync::Mutex<HashMap<Vec<&'static str>, Arc<Registry>>>;

static SHARED_REGISTRIES: OnceLock<SharedRegistries> = OnceLock::new();

/// The shared registry of the standard library plus `libraries`, built by `build` (from
/// the one without the last library) the first time.
fn shared_registry(libraries: &[&'static str], build: impl FnOnce() -> Registry) -> Arc<Registry> {
    let registries = SHARED_REGISTRIES.get_or_init(Default::default);
    let mut registries = registries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(r) = registries.get(libraries) {
        return Arc::clone(r);
    }
    let registry = Arc::new(build());
    registries.insert(libraries.to_vec(), Arc::clone(&registry));
    registry
}

impl Env {
    /// The standard CEL environment with no variables.
    pub fn standard() -> Env {
        Env {
            variables: Arc::new(Variables::default()),
            registry: shared_registry(&[], crate::library::standard),
            libraries: Some(Vec::new()),
            container: String::new(),
            parse_options: ParseOptions::default(),
            check_options: CheckOptions::default(),
            presence_test_has_cost: true,
            lazy_variables_type: DEFAULT_VARIABLES_TYPE,
            object_types: None,
        }
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

    /// Declares a variable that reads as `value` in every activation that does not bind it, so
    /// that an evaluation that binds nothing else still reads it; [`Activation::bind`](crate::Activation::bind)
    /// replaces it for one activation. Libraries use it for their handle variables (a JSON
    /// codec, a context that was not supplied). Returns the slot.
    pub fn declare_with_default(&mut self, name: &str, ty: Type, value: Value<'static>) -> usize {
        let slot = self.declare(name, ty);
        let vars = Arc::make_mut(&mut self.variables);
        vars.defaults.retain(|(s, _)| *s != slot);
        vars.defaults.push((slot, value));
        slot
    }

    /// Declares the variable `variables`, the object whose fields are the lazy variables,
    /// with no fields yet: as in composition, where every expression of a policy with
    /// variables sees `variables`, `variables.x` is then `undefined field 'x'` rather than
    /// an undeclared reference. [`Env::declare_lazy`] calls it. Idempotent; it takes a
    /// variable slot like [`Env::declare`].
    pub fn enable_lazy_variables(&mut self) {
        let ty = Type::Message(Arc::from(self.lazy_variables_type));
        if self.variables.slot(VARIABLES).is_none()
            || self.variables.get_type(VARIABLES) != Some(&ty)
        {
            self.declare(VARIABLES, ty);
        }
    }

    /// Names the type of the `variables` object (what `type(variables)` is and what
    /// messages call it) as the host's policies know it; [`DEFAULT_VARIABLES_TYPE`] unless
    /// set. Call it before [`Env::enable_lazy_variables`] or [`Env::declare_lazy`].
    pub fn set_lazy_variables_type(&mut self, name: &'static str) {
        self.lazy_variables_type = name;
    }

    /// The type name of the `variables` object ([`Env::set_lazy_variables_type`]).
    /// Declares the object types variables may have ([`ObjectTypes`]); a variable declared
    /// with `Type::Message(name)` of one of them is checked field by field.
    pub fn set_object_types(&mut self, types: &'static dyn ObjectTypes) {
        self.object_types = Some(types);
    }

    pub(crate) fn object_types(&self) -> Option<&'static dyn ObjectTypes> {
        self.object_types
    }

    pub fn lazy_variables_type(&self) -> &'static str {
        self.lazy_variables_type
    }

    /// Whether a variable of this type is `variables`, whose fields are the lazy variables.
    pub(crate) fn is_lazy_namespace(&self, ty: &Type) -> bool {
        matches!(ty, Type::Message(m) if &**m == self.lazy_variables_type)
    }

    /// Declares the lazy variable `variables.<name>` (or redeclares it with a new type) and
    /// returns its lazy slot, for [`Activation::set_lazy`](crate::Activation::set_lazy). The
    /// type is converted as composition converts a variable's output type
    /// ([`lazy_variable_type`]). Also declares
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

    /// Adds a [`Library`]: its functions, types and costs (once, however often it is
    /// added) and its variables, each bound by default in every activation.
    pub fn add_library(&mut self, library: &dyn Library) {
        match &mut self.libraries {
            _ if self.registry.has_library(library.name()) => {}
            Some(libraries) => {
                libraries.push(library.name());
                let base = &self.registry;
                self.registry = shared_registry(libraries, || {
                    let mut registry = Registry::clone(base);
                    registry.add_library(library);
                    registry
                });
            }
            None => self.registry_mut().add_library(library),
        }
        for v in library.variables() {
            self.declare_with_default(v.name, v.ty, v.default);
        }
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
        self.libraries = None;
        Arc::make_mut(&mut self.registry)
    }

    pub fn parse_options_mut(&mut self) -> &mut ParseOptions {
        &mut self.parse_options
    }

    /// Whether `has()` adds to the runtime cost (cel-go's default: yes).
    pub fn set_presence_test_has_cost(&mut self, has_cost: bool) {
        self.presence_test_has_cost = has_cost;
    }

    pub fn check_options(&self) -> &CheckOptions {
        &self.check_options
    }

    pub fn check_options_mut(&mut self) -> &mut CheckOptions {
        &mut self.check_options
    }

    /// Parses `source` into an AST with macros expanded.
    pub fn parse(&self, source: &str) -> Result<Expr, CompileError> {
        crate::syntax::parse_with(source, &self.parse_options)
    }
}
