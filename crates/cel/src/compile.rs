//! Lowers a checked AST into an executable tree of nodes.

use crate::env::{Activation, Env};
use crate::error::{CompileError, EvalError, EvalResult};
use crate::program::Program;
use crate::syntax::ast::Expr;
use crate::types::Type;

#[derive(Debug)]
pub enum Node {
    Unimplemented,
}

pub fn compile(_env: &Env, _source: &str, _expr: &Expr, ty: Type) -> Result<Program, CompileError> {
    Ok(Program {
        root: Node::Unimplemented,
        result_type: ty,
    })
}

pub fn eval<'a>(_node: &Node, _act: &Activation<'a>) -> EvalResult<'a> {
    Err(EvalError::new("evaluator not implemented"))
}
