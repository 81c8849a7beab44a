//! The CEL abstract syntax tree, after macro expansion.
//!
//! Operators are calls with cel-go's internal names (`_+_`, `_&&_`, `_[_]`, `@in`, ...) so
//! that the checker, the compiler and error messages share one vocabulary.

/// A node identifier, unique within one parsed expression (1-based, as in cel-go).
pub type ExprId = u32;

pub use crate::error::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub id: ExprId,
    pub span: Span,
    pub kind: ExprKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A bare identifier; may name a variable, a qualified-name prefix, or a type.
    Ident(String),
    /// `operand.field`; `test_only` for `has(operand.field)`, `optional` for `operand.?field`.
    Select {
        operand: Box<Expr>,
        field: String,
        test_only: bool,
        optional: bool,
    },
    /// A global call `f(args)` (target `None`) or a receiver call `target.f(args)`.
    Call {
        target: Option<Box<Expr>>,
        function: String,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: `optional_indices` lists the positions written with `?`.
    List {
        elements: Vec<Expr>,
        optional_indices: Vec<u32>,
    },
    /// `{k: v, ?k2: v2}`.
    Map {
        entries: Vec<MapEntry>,
    },
    /// `Name{field: value}`: message construction; `type_name` as written (may start with `.`).
    Struct {
        type_name: String,
        fields: Vec<StructField>,
    },
    /// A fold produced by macro expansion (all, exists, exists_one, map, filter, ...).
    Comprehension(Box<Comprehension>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    pub id: ExprId,
    pub key: Expr,
    pub value: Expr,
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    pub id: ExprId,
    pub name: String,
    pub value: Expr,
    pub optional: bool,
}

/// cel-go's comprehension: a fold over `iter_range` with an accumulator.
///
/// `iter_var2` is set by two-variable comprehensions (index/key and value).
#[derive(Debug, Clone, PartialEq)]
pub struct Comprehension {
    pub iter_var: String,
    pub iter_var2: Option<String>,
    pub iter_range: Expr,
    pub accu_var: String,
    pub accu_init: Expr,
    pub loop_condition: Expr,
    pub loop_step: Expr,
    pub result: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
    Bytes(Vec<u8>),
}

/// The accumulator name used by the standard macros, as in cel-go.
pub const ACCUMULATOR: &str = "@result";

/// Operator function names, as cel-go spells them.
pub mod ops {
    pub const CONDITIONAL: &str = "_?_:_";
    pub const LOGICAL_AND: &str = "_&&_";
    pub const LOGICAL_OR: &str = "_||_";
    pub const LOGICAL_NOT: &str = "!_";
    pub const NOT_STRICTLY_FALSE: &str = "@not_strictly_false";
    pub const EQUALS: &str = "_==_";
    pub const NOT_EQUALS: &str = "_!=_";
    pub const LESS: &str = "_<_";
    pub const LESS_EQUALS: &str = "_<=_";
    pub const GREATER: &str = "_>_";
    pub const GREATER_EQUALS: &str = "_>=_";
    pub const ADD: &str = "_+_";
    pub const SUBTRACT: &str = "_-_";
    pub const MULTIPLY: &str = "_*_";
    pub const DIVIDE: &str = "_/_";
    pub const MODULO: &str = "_%_";
    pub const NEGATE: &str = "-_";
    pub const INDEX: &str = "_[_]";
    pub const OPT_INDEX: &str = "_[?_]";
    pub const IN: &str = "@in";
}
