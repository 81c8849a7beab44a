//! Function declarations (for the checker) and implementations (for the evaluator).
//!
//! A function has typed overload declarations, used only at check time, and one runtime
//! implementation per call style and arity that dispatches on the runtime kinds of its
//! arguments. Arguments are passed by value so an implementation can reuse owned data.

pub mod cost;
pub mod ext;
pub mod optional;

use std::collections::HashMap;

pub mod conversions;
pub mod operators;
pub mod re2;
pub mod strings;
pub mod time;

#[cfg(test)]
pub(crate) mod test_support;

/// The environment of the core's library tests: cel-go's extensions, with homogeneous
/// aggregate literals, literal validation and free presence tests, the options those tests
/// were written for.
#[cfg(test)]
pub(crate) use test_env::test_env;

#[cfg(test)]
mod test_env {
    pub(crate) fn test_env() -> crate::Env {
        let mut env = crate::Env::standard();
        env.add_library(&super::Extensions);
        env.check_options_mut().homogeneous_aggregate_literals = true;
        env.check_options_mut().validate_literals = true;
        env.set_presence_test_has_cost(false);
        env
    }
}

use crate::types::Type;
use crate::value::EvalResult;
use crate::value::{MessageTypes, Value};

pub type Unary = for<'a> fn(Value<'a>) -> EvalResult<'a>;
pub type Binary = for<'a> fn(Value<'a>, Value<'a>) -> EvalResult<'a>;
pub type Ternary = for<'a> fn(Value<'a>, Value<'a>, Value<'a>) -> EvalResult<'a>;
pub type Nary = for<'a> fn(Vec<Value<'a>>) -> EvalResult<'a>;

/// The runtime cost of one call, from its arguments (receiver first) and its result, as
/// cel-go's cost trackers (or a library's own) compute it. Calls without one cost 1.
pub type CostFn = for<'a> fn(&[Value<'a>], &Value<'a>) -> u64;

/// A runtime implementation; the receiver, when there is one, is the first argument.
#[derive(Clone, Copy)]
pub enum Impl {
    Unary(Unary),
    Binary(Binary),
    Ternary(Ternary),
    Nary(Nary),
}

impl Impl {
    pub fn arity(&self) -> Option<usize> {
        match self {
            Impl::Unary(_) => Some(1),
            Impl::Binary(_) => Some(2),
            Impl::Ternary(_) => Some(3),
            Impl::Nary(_) => None,
        }
    }
}

impl std::fmt::Debug for Impl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.arity() {
            Some(n) => write!(f, "Impl/{n}"),
            None => f.write_str("Impl/n"),
        }
    }
}

/// One typed signature of a function, as cel-go declares it.
#[derive(Debug, Clone)]
pub struct Overload {
    /// cel-go's overload id, e.g. `add_int64` or `string_contains_string`.
    pub id: &'static str,
    /// True for `target.f(args)` style; the receiver's type is `params[0]`.
    pub receiver: bool,
    pub params: Vec<Type>,
    pub result: Type,
}

/// A function: its overload declarations and runtime implementations.
#[derive(Debug, Clone, Default)]
pub struct Function {
    pub overloads: Vec<Overload>,
    /// Keyed by (receiver style, arity including the receiver).
    pub impls: HashMap<(bool, usize), Impl>,
    /// Runtime costs where they differ from 1, keyed like `impls`.
    pub costs: HashMap<(bool, usize), CostFn>,
    /// The result may differ between calls with the same arguments (`random()`): the
    /// compiler never folds such a call into a constant.
    pub nondeterministic: bool,
}

/// A set of functions (overloads, implementations, costs), type names, message types and
/// variables that extends an environment: how libraries this crate does not hold (the
/// Kubernetes and Kyverno ones live in crates of their own) or a host's own plug into the
/// core, which knows none of them. A library registers once, when an
/// environment is built ([`Env::add_library`](crate::Env::add_library)); compiled programs
/// then call its implementations directly, as they call the standard library's.
pub trait Library {
    /// A name unique among libraries: adding a library twice registers it once.
    fn name(&self) -> &'static str;

    /// Declares the library's functions, types and costs.
    fn register(&self, registry: &mut Registry);

    /// Variables the library's functions read (handles such as a clock), each with the
    /// value every activation starts with; none by default.
    fn variables(&self) -> Vec<LibraryVariable> {
        Vec::new()
    }
}

/// A variable a [`Library`] declares, with the value activations start bound to.
#[derive(Debug, Clone)]
pub struct LibraryVariable {
    pub name: &'static str,
    pub ty: Type,
    pub default: Value<'static>,
}

/// All functions an environment knows, by name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    functions: HashMap<String, Function>,
    /// Names of extension types usable as type values (`net.IP`), as cel-go declares them
    /// with `cel.Variable(name, type(name))`.
    types: std::collections::BTreeSet<String>,
    /// The message types `Name{...}` builds, when a library defines some.
    message_types: Option<&'static dyn MessageTypes>,
    /// Names of the libraries added with [`Registry::add_library`].
    libraries: std::collections::BTreeSet<&'static str>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Declares an overload and its implementation for that call style and arity.
    ///
    /// Several overloads of one style and arity share one implementation that dispatches on
    /// the runtime values; registering a second implementation for the same (style, arity)
    /// replaces the first, so register it once with all its overloads via [`Registry::add`].
    pub fn add(&mut self, name: &str, overloads: Vec<Overload>, imp: Impl) {
        let f = self.functions.entry(name.to_string()).or_default();
        for o in &overloads {
            let key = (o.receiver, o.params.len());
            f.impls.insert(key, imp);
        }
        f.overloads.extend(overloads);
    }

    /// Declares overloads without an implementation (for functions the compiler expands
    /// itself, such as operators and macros' helpers).
    pub fn declare(&mut self, name: &str, overloads: Vec<Overload>) {
        self.functions
            .entry(name.to_string())
            .or_default()
            .overloads
            .extend(overloads);
    }

    /// Sets the runtime implementation for one call style and arity of a declared function.
    pub fn implement(&mut self, name: &str, receiver: bool, arity: usize, imp: Impl) {
        self.functions
            .entry(name.to_string())
            .or_default()
            .impls
            .insert((receiver, arity), imp);
    }

    /// Sets the runtime cost of one call style and arity (default: 1 per call).
    pub fn set_cost(&mut self, name: &str, receiver: bool, arity: usize, cost: CostFn) {
        self.functions
            .entry(name.to_string())
            .or_default()
            .costs
            .insert((receiver, arity), cost);
    }

    /// Marks a function whose result may differ between calls with the same arguments, so
    /// that the compiler does not fold it (see [`Function::nondeterministic`]).
    pub fn set_nondeterministic(&mut self, name: &str) {
        self.functions
            .entry(name.to_string())
            .or_default()
            .nondeterministic = true;
    }

    /// Declares an extension type's name so that expressions can use it as a type value
    /// (`type(ip('::1')) == net.IP`).
    pub fn declare_type(&mut self, name: &str) {
        self.types.insert(name.to_string());
    }

    /// Whether `name` is a declared extension type.
    pub fn has_type(&self, name: &str) -> bool {
        self.types.contains(name)
    }

    /// Makes `Name{...}` build messages of the types `types` defines (one set per
    /// environment: a second call replaces the first). Without it, a message construction
    /// checks loosely and fails at run time.
    pub fn set_message_types(&mut self, types: &'static dyn MessageTypes) {
        self.message_types = Some(types);
    }

    /// The message types set with [`Registry::set_message_types`].
    pub fn message_types(&self) -> Option<&'static dyn MessageTypes> {
        self.message_types
    }

    /// Whether `name` is one of the registered message types.
    pub fn has_message_type(&self, name: &str) -> bool {
        self.message_types.is_some_and(|t| t.has_type(name))
    }

    /// Adds a library's functions, types and costs; a library already added (by
    /// [`Library::name`]) is skipped, so adding is idempotent.
    pub fn add_library(&mut self, library: &dyn Library) {
        if self.libraries.insert(library.name()) {
            library.register(self);
        }
    }

    /// Whether a library of this name was added with [`Registry::add_library`].
    pub fn has_library(&self, name: &str) -> bool {
        self.libraries.contains(name)
    }

    pub fn get(&self, name: &str) -> Option<&Function> {
        self.functions.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(String::as_str)
    }
}

/// Shorthand for building overload declarations.
pub fn global(id: &'static str, params: Vec<Type>, result: Type) -> Overload {
    Overload {
        id,
        receiver: false,
        params,
        result,
    }
}

/// Shorthand for a receiver-style overload; `params[0]` is the receiver.
pub fn member(id: &'static str, params: Vec<Type>, result: Type) -> Overload {
    Overload {
        id,
        receiver: true,
        params,
        result,
    }
}

/// The standard library: everything cel-spec defines that is not an operator the compiler
/// handles itself.
pub fn standard() -> Registry {
    let mut r = Registry::new();
    optional::register(&mut r);
    conversions::register(&mut r);
    strings::register(&mut r);
    time::register(&mut r);
    operators::declare(&mut r);
    // The parser expands two-variable comprehensions in every environment.
    ext::comprehensions::register(&mut r);
    r
}

/// cel-go's extension libraries strings, lists and sets, as one [`Library`]. The math and
/// encoders extensions are libraries of their own ([`Math`], [`Encoders`]): an environment
/// adds those it includes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extensions;

impl Library for Extensions {
    fn name(&self) -> &'static str {
        "cel-go extensions"
    }

    fn register(&self, registry: &mut Registry) {
        ext::register(registry);
    }
}

/// cel-go's `math` extension (`ext.Math()`), as one [`Library`]: see [`ext::math`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Math;

impl Library for Math {
    fn name(&self) -> &'static str {
        "cel-go math extension"
    }

    fn register(&self, registry: &mut Registry) {
        ext::math::register(registry);
    }
}

/// cel-go's `regex` extension (`ext.Regex()`), as one [`Library`]: see [`ext::regex`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Regex;

impl Library for Regex {
    fn name(&self) -> &'static str {
        "cel-go regex extension"
    }

    fn register(&self, registry: &mut Registry) {
        ext::regex::register(registry);
    }
}

/// cel-go's `encoders` extension (`ext.Encoders()`), as one [`Library`]: see
/// [`ext::encoders`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Encoders;

impl Library for Encoders {
    fn name(&self) -> &'static str {
        "cel-go encoders extension"
    }

    fn register(&self, registry: &mut Registry) {
        ext::encoders::register(registry);
    }
}
