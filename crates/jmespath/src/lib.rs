//! JMESPath for celer, as Kyverno's classic engine runs it: compile an expression once,
//! search borrowed JSON ([`sonic_rs::Value`], celer's JSON type) many times.
//!
//! ```
//! use celer_jmespath::Expression;
//! use sonic_rs::json;
//! let expr = Expression::compile("spec.containers[?image != 'nginx'].name | sort(@)").unwrap();
//! let pod = json!({"spec": {"containers": [
//!     {"name": "b", "image": "busybox"}, {"name": "n", "image": "nginx"}, {"name": "a", "image": "x"}
//! ]}});
//! assert_eq!(expr.search(&pod).unwrap(), json!(["a", "b"]));
//! ```
//!
//! Custom functions (Kyverno's `to_upper`, `regex_match`, `time_*`, ...) go into a
//! [`FunctionRegistry`]:
//!
//! ```
//! use std::sync::Arc;
//! use celer_jmespath::{ArgType, Function, FunctionRegistry, Signature};
//! use sonic_rs::{json, JsonValueTrait, Value};
//! let mut registry = FunctionRegistry::new();
//! registry.register(Function::new("to_upper", Signature::new([ArgType::STRING]), |args| {
//!     let name = args.first().and_then(|v| v.as_str()).unwrap_or_default();
//!     Ok(Value::from(name.to_uppercase().as_str()))
//! })).unwrap();
//! let registry = Arc::new(registry);
//! let expr = registry.compile("to_upper(metadata.name)").unwrap();
//! assert_eq!(expr.search(&json!({"metadata": {"name": "web"}})).unwrap(), json!("WEB"));
//! ```
//!
//! # Dialect
//!
//! Kyverno v1.19.1 pins `github.com/kyverno/go-jmespath v0.4.1-0.20231124160150-95e59c162877`,
//! a fork of `github.com/jmespath/go-jmespath` v0.4.0 (not the jmespath-community edition:
//! there are no arithmetic operators, `let`, `$variables` or community built-ins; Kyverno's
//! `add`, `items`, `to_upper`, ... are its own custom functions, registered by its layer).
//! This crate implements that dialect:
//!
//! - the whole JMESPath specification of go-jmespath v0.4.0: identifiers (unquoted, quoted),
//!   sub-expressions, indexes, slices (negative steps), list, slice, object and filter
//!   projections, flatten, comparators, `||`, `&&`, `!`, pipes, multi-select lists and
//!   hashes, `@`, JSON literals, raw strings, `&expr`, parentheses, and the 26 built-in
//!   functions with their type checks and JMESPath's falsiness;
//! - go-jmespath's grouping (its binding powers: `!a.b` is `(!a).b`) and its leniencies in
//!   what it accepts: an argument list may leave out a comma or end with one (`f(a b)`,
//!   `f(a,)`), a multi-select hash may leave out commas, a slice may end with a fourth `:`;
//! - the fork's two additions: custom functions (with overriding of built-ins, which Kyverno
//!   uses for `sum`), and `NotFoundError`. A field an object lacks raises
//!   [`RuntimeError::NotFound`] (`Unknown key "x" in path`) where the fork does; most nodes
//!   turn it into `null` on the way up (see [Missing keys](#missing-keys)), so `search`
//!   returns it only when the expression's result itself comes from a missing key
//!   (`a.missing`, `a && missing`). [`Expression::search_or_null`] gives the
//!   specification's `null` instead;
//! - unknown functions, arity and argument types are checked when a call is evaluated, not
//!   when it is compiled, as in go-jmespath (an unused branch never fails).
//!
//! ## Deliberate differences from go-jmespath
//!
//! Where go-jmespath's behaviour is an accident (a panic, Go's random map order, a value
//! JSON cannot hold), this crate does what the specification says instead:
//!
//! - no elided-quote literals (`` `foo` ``): an error in go-jmespath too;
//! - an unclosed raw string (`'abc`) is a syntax error (go-jmespath silently drops its last
//!   character); a function call must be made on a name or a string (`@(x)` is a syntax
//!   error; it is a runtime error in go-jmespath); an unfinished or out-of-range index or
//!   slice at the start of an expression (`[0`, `[::-1`) is a syntax error (go-jmespath
//!   swallows it there and fails if the node is evaluated);
//! - `.*` projects the object's values once each, in the object's order (go-jmespath also
//!   projects `len` nulls first, visible only with expressions that map null to a value);
//!   `keys`/`values`/`merge` keep the object's order (a parsed document's; Go's is random);
//! - variadic arguments (`merge`, `not_null`, custom ones) are type checked (go-jmespath
//!   does not, and ``merge(`1`)`` panics); `contains` compares arrays and objects deeply
//!   (Go's `==` panics on them); `avg([])` is null (Go: NaN, which cannot be encoded);
//!   `to_number` of `"inf"` or `"NaN"` is null (Go: a float JSON cannot encode);
//! - numbers keep their JSON form (an integer input stays an integer); computed numbers are
//!   integers when integral within ±2^53; two integers compare exactly and print exactly
//!   (Go rounds every number to a float64, so beyond 2^53 its `==`, `<` and `to_string`
//!   see rounded values). Otherwise `to_string` writes what Go's `json.Marshal` writes.
//!
//! ## Missing keys
//!
//! Node by node, as in the fork: a missing key passes up through `a.b` and `a[0]` (either
//! side) and through the right side of `&&`; it becomes `null` in comparisons, `||` (both
//! sides), the left side of `&&`, `!`, `|` (both sides), function arguments (and `map`,
//! `sort_by`, ... applying their expression), multi-select items, the per-element
//! expressions of projections and filters, and the left side of `[*]`/`[:]`/`[]`
//! projections. On the left side of `.*`, `[?...]` and `[]`'s flattening, any error (missing
//! key or not) makes the whole projection `null`.
//!
//! ## Left out
//!
//! Nothing of the pinned dialect. Not implemented because Kyverno's JMESPath does
//! not have them: the jmespath-community extensions (arithmetic, `let`, `$var`,
//! `find_first`, `group_by`, `items`, `lower`, `pad_left`, `split`, `zip`, ...).
//!
//! # Bounds
//!
//! The parser refuses expressions nested deeper than [`MAX_EXPRESSION_DEPTH`] (counting
//! both its own recursion and the height of the tree, so a path of more than that many
//! `.`s is refused too); evaluation recurses along the expression only. Walks over the data
//! (equality, `to_string`, results of custom functions) stop with
//! [`RuntimeError::TooDeep`] past [`MAX_VALUE_DEPTH`]. No input panics.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

mod ast;
mod encode;
pub mod error;
mod eval;
mod functions;
mod lexer;
mod parser;
mod value;

use std::fmt;
use std::sync::Arc;

use sonic_rs::Value;

pub use error::{ParseError, ParseErrorKind, RegistryError, RuntimeError};
pub use functions::{ArgType, ExprRefs, Function, FunctionRegistry, Handler, Signature};

use crate::ast::Node;
use crate::eval::{Ctx, Fault, eval};
use crate::value::Val;

/// How deeply an expression may nest (parser recursion and tree height).
pub const MAX_EXPRESSION_DEPTH: usize = 256;

/// How deeply evaluation follows nested values (equality, `to_string`, custom functions'
/// results) before failing with [`RuntimeError::TooDeep`].
pub const MAX_VALUE_DEPTH: usize = 512;

/// A compiled JMESPath expression. Cheap to share: `Send + Sync`, searched concurrently.
#[derive(Clone)]
pub struct Expression {
    source: Box<str>,
    ast: Node,
    registry: Arc<FunctionRegistry>,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Expression {
    /// Compiles `expression` with JMESPath's built-in functions only.
    pub fn compile(expression: &str) -> Result<Expression, ParseError> {
        Expression::compile_with(expression, FunctionRegistry::builtins())
    }

    /// Compiles `expression` with the functions of `registry` (kept alive by the result).
    pub fn compile_with(
        expression: &str,
        registry: &Arc<FunctionRegistry>,
    ) -> Result<Expression, ParseError> {
        let ast = parser::parse(expression, registry)?;
        Ok(Expression {
            source: expression.into(),
            ast,
            registry: Arc::clone(registry),
        })
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Searches `data`, as kyverno/go-jmespath does: a result that comes from a missing key
    /// is [`RuntimeError::NotFound`].
    pub fn search(&self, data: &Value) -> Result<Value, RuntimeError> {
        let ctx = Ctx {
            registry: &self.registry,
        };
        match eval(&self.ast, &Val::from_json(data), &ctx) {
            Ok(v) => v.try_to_json(),
            Err(Fault::NotFound(key)) => Err(RuntimeError::NotFound {
                key: key.to_owned(),
            }),
            Err(Fault::Error(e)) => Err(*e),
        }
    }

    /// Searches `data`, with a missing key's [`RuntimeError::NotFound`] read as `null` (the
    /// JMESPath specification's result, and what go-jmespath's compliance runner checks).
    pub fn search_or_null(&self, data: &Value) -> Result<Value, RuntimeError> {
        match self.search(data) {
            Err(RuntimeError::NotFound { .. }) => Ok(Value::new_null()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests;
