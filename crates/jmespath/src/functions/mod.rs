//! Functions: the registry expressions resolve their calls against, signatures and their
//! type checks, and the extension point for custom functions.
//!
//! A [`FunctionRegistry`] starts with JMESPath's built-ins. Custom functions are added with
//! [`FunctionRegistry::register`], which refuses a name already taken;
//! [`FunctionRegistry::replace`] is the explicit way to override a built-in (Kyverno, for
//! one, replaces `sum`). Calls are resolved when an expression is compiled, so a search
//! looks nothing up by name; an unknown name fails when the call is evaluated, as in
//! go-jmespath.

mod builtins;
mod parse_float;
mod signature;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use sonic_rs::Value;

use crate::Expression;
use crate::ast::Node;
use crate::error::{ParseError, RegistryError, RuntimeError};
use crate::eval::{Ctx, Eval, Fault, eval};
use crate::value::Val;

pub(crate) use builtins::Builtin;
pub use signature::{ArgType, Signature};

/// A custom function's body: its arguments (an expression reference reads as `null`; use
/// [`ExprRefs`] to apply it) and the expression references of the call.
pub type Handler = dyn Fn(&[Value], &ExprRefs<'_>) -> Result<Value, RuntimeError> + Send + Sync;

/// A named function with its signature and body, to register.
#[derive(Clone)]
pub struct Function {
    name: Box<str>,
    signature: Signature,
    handler: Arc<Handler>,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

impl Function {
    /// A function of its argument values. Arguments are checked against `signature` before
    /// `body` runs, so `body` may rely on their types (but should still not panic).
    ///
    /// ```
    /// use celer_jmespath::{ArgType, Function, RuntimeError, Signature};
    /// use sonic_rs::{JsonValueTrait, Value};
    /// let upper = Function::new("to_upper", Signature::new([ArgType::STRING]), |args| {
    ///     let s = args.first().and_then(|v| v.as_str()).unwrap_or_default();
    ///     Ok(Value::from(s.to_uppercase().as_str()))
    /// });
    /// ```
    pub fn new<F>(name: &str, signature: Signature, body: F) -> Function
    where
        F: Fn(&[Value]) -> Result<Value, RuntimeError> + Send + Sync + 'static,
    {
        Function::with_exprefs(name, signature, move |args, _| body(args))
    }

    /// A function that also applies expression references passed to it (arguments typed
    /// [`ArgType::EXPREF`]), like `sort_by`.
    pub fn with_exprefs<F>(name: &str, signature: Signature, body: F) -> Function
    where
        F: Fn(&[Value], &ExprRefs<'_>) -> Result<Value, RuntimeError> + Send + Sync + 'static,
    {
        Function {
            name: name.into(),
            signature,
            handler: Arc::new(body),
        }
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The function's signature.
    pub fn signature(&self) -> &Signature {
        &self.signature
    }
}

/// The expression references passed to a custom function.
pub struct ExprRefs<'c> {
    refs: Vec<Option<&'c Node>>,
    registry: &'c FunctionRegistry,
}

impl ExprRefs<'_> {
    /// Whether argument `position` (0-based) is an expression reference.
    pub fn is_expref(&self, position: usize) -> bool {
        matches!(self.refs.get(position), Some(Some(_)))
    }

    /// Applies the expression reference at argument `position` (0-based) to `value`. A
    /// missing key reads as `null` there, as in go-jmespath's `map` and `sort_by`.
    pub fn apply(&self, position: usize, value: &Value) -> Result<Value, RuntimeError> {
        let Some(Some(node)) = self.refs.get(position) else {
            return Err(RuntimeError::function_failed(format!(
                "argument {} is not an expression reference",
                position + 1
            )));
        };
        let ctx = Ctx {
            registry: self.registry,
        };
        match eval(node, &Val::from_json(value), &ctx) {
            Ok(v) => v.try_to_json(),
            Err(Fault::NotFound(_)) => Ok(Value::new_null()),
            Err(Fault::Error(e)) => Err(*e),
        }
    }
}

/// What a registry slot runs.
#[derive(Clone)]
enum Body {
    Builtin(Builtin),
    Custom(Arc<Handler>),
}

#[derive(Clone)]
struct Entry {
    name: Box<str>,
    signature: Signature,
    body: Body,
}

/// The functions an expression may call: JMESPath's built-ins plus registered ones.
///
/// Share it in an [`Arc`]; expressions compiled with [`FunctionRegistry::compile`] keep it
/// alive.
#[derive(Clone)]
pub struct FunctionRegistry {
    entries: Vec<Entry>,
    by_name: HashMap<Box<str>, usize>,
}

impl fmt::Debug for FunctionRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.by_name.keys().map(|k| &**k).collect();
        names.sort_unstable();
        f.debug_struct("FunctionRegistry")
            .field("functions", &names)
            .finish()
    }
}

impl Default for FunctionRegistry {
    fn default() -> Self {
        FunctionRegistry::new()
    }
}

static BUILTINS: LazyLock<Arc<FunctionRegistry>> =
    LazyLock::new(|| Arc::new(FunctionRegistry::new()));

impl FunctionRegistry {
    /// A registry of JMESPath's built-in functions.
    pub fn new() -> FunctionRegistry {
        let mut registry = FunctionRegistry {
            entries: Vec::new(),
            by_name: HashMap::new(),
        };
        for builtin in Builtin::ALL {
            let name: Box<str> = builtin.name().into();
            registry
                .by_name
                .insert(name.clone(), registry.entries.len());
            registry.entries.push(Entry {
                name,
                signature: builtin.signature(),
                body: Body::Builtin(builtin),
            });
        }
        registry
    }

    /// The shared registry of built-ins only.
    pub(crate) fn builtins() -> &'static Arc<FunctionRegistry> {
        &BUILTINS
    }

    /// Adds a custom function; a name already taken (a built-in or an earlier registration)
    /// is refused.
    pub fn register(&mut self, function: Function) -> Result<(), RegistryError> {
        check_name(&function.name)?;
        if let Some(&slot) = self.by_name.get(&function.name) {
            let builtin = matches!(
                self.entries.get(slot).map(|e| &e.body),
                Some(Body::Builtin(_))
            );
            let name = function.name.into_string();
            return Err(if builtin {
                RegistryError::Builtin(name)
            } else {
                RegistryError::Duplicate(name)
            });
        }
        self.insert(function);
        Ok(())
    }

    /// Adds a custom function, overriding a built-in or earlier registration of the same
    /// name. Returns whether it replaced one.
    pub fn replace(&mut self, function: Function) -> Result<bool, RegistryError> {
        check_name(&function.name)?;
        Ok(self.insert(function))
    }

    fn insert(&mut self, function: Function) -> bool {
        let entry = Entry {
            name: function.name.clone(),
            signature: function.signature,
            body: Body::Custom(function.handler),
        };
        if let Some(slot) = self
            .by_name
            .get(&function.name)
            .and_then(|&s| self.entries.get_mut(s))
        {
            *slot = entry;
            true
        } else {
            self.by_name.insert(function.name, self.entries.len());
            self.entries.push(entry);
            false
        }
    }

    /// Whether a function of this name is registered (built-in or custom).
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Whether `name` is one of JMESPath's built-ins and has not been replaced.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.slot(name)
            .and_then(|s| self.entries.get(s))
            .is_some_and(|e| matches!(e.body, Body::Builtin(_)))
    }

    /// The names of every function, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.by_name.keys().map(|k| &**k).collect();
        names.sort_unstable();
        names
    }

    /// Compiles `expression` with this registry's functions.
    pub fn compile(self: &Arc<Self>, expression: &str) -> Result<Expression, ParseError> {
        Expression::compile_with(expression, self)
    }

    pub(crate) fn slot(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Calls the function in `slot` with evaluated arguments.
    pub(crate) fn call<'a>(&self, slot: usize, args: Vec<Val<'a>>, ctx: &Ctx<'_>) -> Eval<'a> {
        let Some(entry) = self.entries.get(slot) else {
            return Err(RuntimeError::UnknownFunction {
                name: String::new(),
            }
            .into());
        };
        entry.signature.check(&entry.name, &args)?;
        match &entry.body {
            Body::Builtin(builtin) => builtin.call(args, ctx),
            Body::Custom(handler) => {
                let mut values = Vec::with_capacity(args.len());
                let mut refs = Vec::with_capacity(args.len());
                for arg in &args {
                    if let Val::ExprRef(node) = arg {
                        refs.push(Some(*node));
                        values.push(Value::new_null());
                    } else {
                        refs.push(None);
                        values.push(arg.try_to_json()?);
                    }
                }
                let refs = ExprRefs {
                    refs,
                    registry: ctx.registry,
                };
                let result = handler(&values, &refs).map_err(|e| e.in_function(&entry.name))?;
                Ok(Val::from_owned_json(&result)?)
            }
        }
    }
}

fn check_name(name: &str) -> Result<(), RegistryError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(RegistryError::InvalidName(name.to_owned()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::{JsonContainerTrait, JsonValueTrait, json};

    fn upper() -> Function {
        Function::new("to_upper", Signature::new([ArgType::STRING]), |args| {
            let s = args.first().and_then(|v| v.as_str()).unwrap_or_default();
            Ok(Value::from(s.to_uppercase().as_str()))
        })
    }

    #[test]
    fn custom_functions_are_called_with_checked_arguments() {
        let mut registry = FunctionRegistry::new();
        registry.register(upper()).unwrap();
        let registry = Arc::new(registry);
        let expr = registry.compile("to_upper(name)").unwrap();
        assert_eq!(expr.search(&json!({"name": "abc"})).unwrap(), json!("ABC"));
        let err = expr.search(&json!({"name": 1})).unwrap_err();
        assert_eq!(err.kind(), "invalid-type");
        assert_eq!(
            err.to_string(),
            "invalid-type: to_upper() argument 1 must be string, got number"
        );
        let err = registry
            .compile("to_upper(name, name)")
            .unwrap()
            .search(&json!({}))
            .unwrap_err();
        assert_eq!(err.kind(), "invalid-arity");
    }

    #[test]
    fn builtins_are_overridden_only_when_asked() {
        let mut registry = FunctionRegistry::new();
        let sum = Function::new("sum", Signature::new([ArgType::ANY]), |_| Ok(json!("mine")));
        assert_eq!(
            registry.register(sum.clone()),
            Err(RegistryError::Builtin("sum".into()))
        );
        registry.register(upper()).unwrap();
        assert_eq!(
            registry.register(upper()),
            Err(RegistryError::Duplicate("to_upper".into()))
        );
        assert_eq!(registry.replace(sum), Ok(true));
        assert!(!registry.is_builtin("sum"));
        assert!(registry.is_builtin("length"));
        let registry = Arc::new(registry);
        assert_eq!(
            registry
                .compile("sum(@)")
                .unwrap()
                .search(&json!([1]))
                .unwrap(),
            json!("mine")
        );
        // The built-ins-only registry is untouched.
        assert_eq!(
            crate::Expression::compile("sum(@)")
                .unwrap()
                .search(&json!([1]))
                .unwrap(),
            json!(1)
        );
        assert!(matches!(
            FunctionRegistry::new()
                .register(Function::new("a-b", Signature::any(), |_| Ok(json!(1)))),
            Err(RegistryError::InvalidName(_))
        ));
    }

    #[test]
    fn custom_functions_apply_expression_references() {
        let mut registry = FunctionRegistry::new();
        let signature = Signature::new([ArgType::EXPREF, ArgType::ARRAY]);
        registry
            .register(Function::with_exprefs(
                "count_if",
                signature,
                |args, refs| {
                    let mut n = 0u64;
                    for item in args.get(1).and_then(|a| a.as_array()).into_iter().flatten() {
                        if refs.apply(0, item)?.as_bool() == Some(true) {
                            n += 1;
                        }
                    }
                    assert!(refs.is_expref(0) && !refs.is_expref(1));
                    assert!(refs.apply(1, &json!(1)).is_err());
                    Ok(Value::from(n))
                },
            ))
            .unwrap();
        let registry = Arc::new(registry);
        let expr = registry.compile("count_if(&(a > `1`), @)").unwrap();
        assert_eq!(
            expr.search(&json!([{"a": 1}, {"a": 2}, {"a": 3}, {}]))
                .unwrap(),
            json!(2)
        );
    }

    #[test]
    fn custom_function_errors_name_the_function() {
        let mut registry = FunctionRegistry::new();
        registry
            .register(Function::new("fail", Signature::any(), |_| {
                Err(RuntimeError::function_failed("no luck"))
            }))
            .unwrap();
        let err = Arc::new(registry)
            .compile("fail()")
            .unwrap()
            .search(&json!(null))
            .unwrap_err();
        assert_eq!(err.to_string(), "fail(): no luck");
    }

    #[test]
    fn unknown_functions_fail_when_called() {
        let expr = crate::Expression::compile("a || nope(@)").unwrap();
        assert_eq!(expr.search(&json!({"a": 1})).unwrap(), json!(1));
        let err = expr.search(&json!({"a": 0, "b": 1})).unwrap();
        assert_eq!(err, json!(0), "0 is truthy");
        let err = expr.search(&json!({"a": false})).unwrap_err();
        assert_eq!(
            err,
            RuntimeError::UnknownFunction {
                name: "nope".into()
            }
        );
    }
}
