//! A compact S-expression rendering of the AST (`Display` for [`Expr`]), for tests and
//! debugging. Ids and spans are not shown.
//!
//! | node | rendering |
//! |------|-----------|
//! | literals | `1`, `2u`, `1.5`, `"s"`, `b"\xff"`, `true`, `null` |
//! | identifier | `a`, `.a` |
//! | select | `(. a f)`, optional `(.? a f)`, presence test `(has a f)` |
//! | global call | `(f x y)`, operators by their names: `(_+_ a b)` |
//! | receiver call | `(.f target x y)` |
//! | list | `[a, ?b]` |
//! | map | `{k: v, ?k2: v2}` |
//! | message | `pkg.Name{f: v, ?g: w}` |
//! | comprehension | `(fold x[,y] range accu init cond step result)` |
//!
//! Rendering recurses over the tree; the parser bounds its height.

use std::fmt;

use super::ast::{Expr, ExprKind, Literal};

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal(l) => write!(f, "{l}"),
            ExprKind::Ident(name) => f.write_str(name),
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                let op = if *test_only {
                    "has"
                } else if *optional {
                    ".?"
                } else {
                    "."
                };
                write!(f, "({op} {operand} {field})")
            }
            ExprKind::Call {
                target,
                function,
                args,
            } => {
                match target {
                    Some(t) => write!(f, "(.{function} {t}")?,
                    None => write!(f, "({function}")?,
                }
                for a in args {
                    write!(f, " {a}")?;
                }
                f.write_str(")")
            }
            ExprKind::List {
                elements,
                optional_indices,
            } => {
                f.write_str("[")?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if optional_indices.iter().any(|&o| o as usize == i) {
                        f.write_str("?")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("]")
            }
            ExprKind::Map { entries } => {
                f.write_str("{")?;
                for (i, e) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    let q = if e.optional { "?" } else { "" };
                    write!(f, "{q}{}: {}", e.key, e.value)?;
                }
                f.write_str("}")
            }
            ExprKind::Struct { type_name, fields } => {
                write!(f, "{type_name}{{")?;
                for (i, e) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    let q = if e.optional { "?" } else { "" };
                    write!(f, "{q}{}: {}", e.name, e.value)?;
                }
                f.write_str("}")
            }
            ExprKind::Comprehension(c) => {
                write!(f, "(fold {}", c.iter_var)?;
                if let Some(v2) = &c.iter_var2 {
                    write!(f, ",{v2}")?;
                }
                write!(
                    f,
                    " {} {} {} {} {} {})",
                    c.iter_range, c.accu_var, c.accu_init, c.loop_condition, c.loop_step, c.result
                )
            }
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Uint(u) => write!(f, "{u}u"),
            Literal::Double(d) => write!(f, "{d:?}"),
            Literal::String(s) => write!(f, "{s:?}"),
            Literal::Bytes(b) => {
                f.write_str("b\"")?;
                for &byte in b {
                    write!(f, "{}", std::ascii::escape_default(byte))?;
                }
                f.write_str("\"")
            }
        }
    }
}
