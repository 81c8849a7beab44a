//! The compiled form of an expression: go-jmespath's node kinds, with function calls
//! resolved against the registry the expression was compiled with.

use sonic_rs::Value;

/// One node of a compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `@`, and the implicit right-hand side of projections.
    Identity,
    /// A field of an object: `foo`, `"foo"`.
    Field(Box<str>),
    /// `[n]`, negative from the end.
    Index(i64),
    /// `[start:stop:step]`.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    /// A backtick literal.
    Literal(Value),
    /// A raw string `'...'`.
    Str(Box<str>),
    /// `left.right` and `left[index]`: `right` evaluated against `left`'s result.
    Sub(Box<Node>, Box<Node>),
    /// `left[*]`, `left[]`, `left[a:b]` followed by `right`: `right` over each element of the
    /// array `left` gives, nulls dropped.
    Projection(Box<Node>, Box<Node>),
    /// `left.*` followed by `right`: `right` over each value of the object `left` gives.
    ValueProjection(Box<Node>, Box<Node>),
    /// `left[?condition]` followed by `right`.
    Filter {
        left: Box<Node>,
        right: Box<Node>,
        condition: Box<Node>,
    },
    /// The flattening half of `left[]`.
    Flatten(Box<Node>),
    /// `[a, b]`
    MultiList(Vec<Node>),
    /// `{k: a, l: b}`
    MultiHash(Vec<(Box<str>, Node)>),
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Compare(Comparator, Box<Node>, Box<Node>),
    Pipe(Box<Node>, Box<Node>),
    /// `&expr`
    ExprRef(Box<Node>),
    /// `name(args...)`; `function` is the registry slot, `None` when the name is unknown
    /// (an error only when the call is evaluated, as in go-jmespath).
    Call {
        name: Box<str>,
        function: Option<usize>,
        args: Vec<Node>,
    },
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparator {
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
}
