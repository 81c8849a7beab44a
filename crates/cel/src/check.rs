//! The type checker.

use crate::env::Env;
use crate::error::CompileError;
use crate::syntax::ast::Expr;
use crate::types::Type;

/// Checks `expr` against `env` and returns its type.
pub fn check(_env: &Env, _source: &str, _expr: &Expr) -> Result<Type, CompileError> {
    Ok(Type::Dyn)
}
