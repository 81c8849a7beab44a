//! Errors: compile-time (parse and check) with positions, and evaluation errors as values.

use std::fmt;

/// An evaluation error. CEL treats these as values: `&&`, `||`, `?:` and comprehensions may
/// absorb them, so they are cheap to build and carry only a message.
#[derive(Clone, PartialEq, Eq)]
pub struct EvalError {
    message: Box<str>,
}

impl EvalError {
    pub fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into().into_boxed_str(),
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn no_such_overload(function: &str, args: &[&str]) -> EvalError {
        EvalError::new(format!("no such overload: {function}({})", args.join(", ")))
    }

    pub fn no_such_key(key: impl fmt::Display) -> EvalError {
        EvalError::new(format!("no such key: {key}"))
    }

    pub fn division_by_zero() -> EvalError {
        EvalError::new("division by zero")
    }

    pub fn modulus_by_zero() -> EvalError {
        EvalError::new("modulus by zero")
    }

    pub fn overflow(what: &str) -> EvalError {
        EvalError::new(format!("{what} overflow"))
    }
}

impl fmt::Debug for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EvalError({:?})", self.message)
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

/// A byte range into the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end).unwrap_or(u32::MAX),
        }
    }
}

/// One problem found while parsing or checking, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
}

/// Parse or check failure: every diagnostic, rendered against the source like cel-go does:
///
/// ```text
/// ERROR: <input>:1:3: Syntax error: mismatched input ...
///  | 1 + + 2
///  | ..^
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rendered}")]
pub struct CompileError {
    pub kind: CompileErrorKind,
    pub diagnostics: Vec<Diagnostic>,
    rendered: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileErrorKind {
    Parse,
    Check,
}

impl CompileError {
    pub fn new(kind: CompileErrorKind, source: &str, diagnostics: Vec<Diagnostic>) -> CompileError {
        let rendered = render(source, &diagnostics);
        CompileError {
            kind,
            diagnostics,
            rendered,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(source: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(source.len());
    let mut line = 1;
    let mut col = 1;
    for (i, ch) in source.char_indices() {
        if i >= offset {
            break;
        }
        if ch == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    (line, col)
}

fn render(source: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for (n, d) in diagnostics.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let (line, col) = line_col(source, d.span.start);
        out.push_str(&format!("ERROR: <input>:{line}:{col}: {}", d.message));
        if let Some(text) = source.lines().nth(line - 1) {
            out.push_str("\n | ");
            out.push_str(text);
            out.push_str("\n | ");
            for _ in 1..col {
                out.push('.');
            }
            out.push('^');
        }
    }
    out
}
