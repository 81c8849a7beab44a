//! Lexing, parsing and macro expansion.
//!
//! [`parse_with`] turns CEL source into an [`ast::Expr`] with macros expanded, or a
//! [`CompileError`] of kind `Parse` listing every problem found (with byte spans rendered as
//! `line:column` like cel-go). Ids are unique, 1-based and increase in parse order; a node's
//! `span.start` is where cel-go reports that node (the operator of an operator call, the `(`
//! of a call, the `.` of a selection, ...), `span.end` the end of the node's text.
//!
//! Ids of the nodes macros generate are fresh (numbered as cel-go does) and their spans are
//! the macro call's.
//!
//! Macros (`ParseOptions::macros`, see `macros.rs`): `has`, `all`, `exists`, `exists_one` /
//! `existsOne`, `map`, `filter`; the two-variable forms of cel-go's `ext.TwoVarComprehensions`
//! (`all`, `exists`, `existsOne`, `transformList`, `transformMap`, `transformMapEntry`;
//! the map transforms call [`MAP_INSERT`]); `cel.bind`; `optMap` and `optFlatMap`.
//!
//! Limits ([`ParseOptions`]): input longer than `max_code_points` code points is rejected
//! before lexing; sub-expression nesting and the height of the tree are bounded by
//! `max_depth` (see `parser.rs` for how this relates to cel-go's limits), so accepted trees
//! can be walked recursively and dropped without overflowing the stack.
//!
//! `Display` for [`ast::Expr`] prints a compact S-expression (`print.rs`), handy in tests.

pub mod ast;
mod lexer;
mod macros;
mod parser;
mod print;
#[cfg(test)]
mod tests;

use crate::error::{CompileError, CompileErrorKind, Diagnostic};
use ast::{Expr, Span};
pub use macros::{MAP_INSERT, SORT_BY_ASSOCIATED_KEYS};

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

/// Parses with default options.
pub fn parse(source: &str) -> Result<Expr, CompileError> {
    parse_with(source, &ParseOptions::default())
}

/// Parses `source` into an AST with macros expanded.
pub fn parse_with(source: &str, options: &ParseOptions) -> Result<Expr, CompileError> {
    let size = source.chars().count();
    if size > options.max_code_points {
        let diag = Diagnostic {
            span: Span::default(),
            message: format!(
                "expression code point size exceeds limit: size: {size}, limit {}",
                options.max_code_points
            ),
        };
        return Err(CompileError::new(
            CompileErrorKind::Parse,
            source,
            vec![diag],
        ));
    }
    let mut p = parser::Parser::new(source, options);
    let expr = p.parse_all();
    match expr {
        Some(expr) if p.diags.is_empty() => Ok(expr),
        _ => {
            let mut diags = std::mem::take(&mut p.diags);
            diags.sort_by_key(|d| d.span.start);
            if diags.is_empty() {
                diags.push(Diagnostic {
                    span: Span::default(),
                    message: "Syntax error: unparseable expression".into(),
                });
            }
            Err(CompileError::new(CompileErrorKind::Parse, source, diags))
        }
    }
}

/// Whether `word` cannot be used as an identifier: a keyword (`true`, `false`, `null`, `in`)
/// or a reserved word (`if`, `var`, ...).
pub fn is_reserved_word(word: &str) -> bool {
    matches!(word, "true" | "false" | "null" | "in") || parser::RESERVED.contains(&word)
}
