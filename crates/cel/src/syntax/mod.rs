//! Lexing, parsing and macro expansion.

pub mod ast;

use crate::env::ParseOptions;
use crate::error::{CompileError, CompileErrorKind, Diagnostic};
use ast::{Expr, Span};

/// Parses with default options.
pub fn parse(source: &str) -> Result<Expr, CompileError> {
    parse_with(source, &ParseOptions::default())
}

/// Parses `source` into an AST with macros expanded.
pub fn parse_with(source: &str, _options: &ParseOptions) -> Result<Expr, CompileError> {
    Err(CompileError::new(
        CompileErrorKind::Parse,
        source,
        vec![Diagnostic {
            span: Span::default(),
            message: "parser not implemented".into(),
        }],
    ))
}
