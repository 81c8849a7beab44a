//! The compilation environment: declared variables, functions, container and limits.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::CompileError;
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

/// Declared variables; a variable's slot is its index here.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    names: Vec<(String, Type)>,
    by_name: HashMap<String, usize>,
}

impl Variables {
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn get(&self, slot: usize) -> Option<(&str, &Type)> {
        self.names.get(slot).map(|(n, t)| (n.as_str(), t))
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
}

impl Env {
    /// The standard CEL environment with no variables.
    pub fn standard() -> Env {
        Env {
            variables: Arc::new(Variables::default()),
            registry: Arc::new(crate::library::standard()),
            container: String::new(),
            parse_options: ParseOptions::default(),
            check_options: crate::check::CheckOptions::default(),
            presence_test_has_cost: true,
        }
    }

    /// The environment of Kubernetes admission policies: the standard library plus the
    /// extensions and Kubernetes libraries, homogeneous aggregate literals, literal validation
    /// (durations, timestamps, regexes), and free
    /// presence tests, as kube-apiserver's base environment configures them.
    pub fn kubernetes() -> Env {
        let mut env = Env::standard();
        env.registry = Arc::new(crate::library::kubernetes());
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

/// Variable values for one evaluation, by slot.
#[derive(Debug, Clone)]
pub struct Activation<'a> {
    variables: Arc<Variables>,
    values: Vec<Option<Value<'a>>>,
}

/// A variable name the environment does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undeclared variable '{0}'")]
pub struct UndeclaredVariable(pub String);

impl<'a> Activation<'a> {
    pub fn new(env: &Env) -> Activation<'a> {
        Activation {
            variables: env.variables.clone(),
            values: vec![None; env.variables.len()],
        }
    }

    /// An activation with no variables (for constant expressions).
    pub fn empty() -> Activation<'a> {
        Activation {
            variables: Arc::new(Variables::default()),
            values: Vec::new(),
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
}
