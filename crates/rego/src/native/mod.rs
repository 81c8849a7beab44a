//! celer's own evaluator for the Rego that admission policies are written in, with regorus
//! as its fallback and its oracle.
//!
//! A rule is lowered from regorus's parse (the same modules, after the same rewrites) into a
//! small plan: variables become slots, names become rules, builtins or input references,
//! resolved once. The plan evaluates over the request as parsed ([`Val::Json`]): nothing is
//! converted per request, which alone cost regorus's path more than CEL's whole evaluation.
//!
//! The plan is exact or it steps aside. What it does not cover is refused when lowered
//! ([`Unsupported`]: `with`, `data` beyond the modules' rules and `data.inventory`, builtins
//! it lacks), and the caller keeps regorus for that rule. What it cannot answer exactly at run time ends the
//! evaluation with [`Stop::Fallback`], and the caller asks regorus instead: a builtin error, a
//! rule or function with two values (OPA's conflict errors, whose messages are regorus's to
//! give), arithmetic that leaves the integers, a variable OPA would have bound by reordering
//! the body. So the answers that come from here are the answers regorus gives, only sooner.

mod builtins;
mod lower;
mod run;
pub mod val;

use std::time::Duration;

pub use lower::Unsupported;
pub use val::{Num, Text, Val};

use builtins::Builtin;
use regorus::unstable::{ArithOp, BinOp, BoolOp};

/// Why an evaluation did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    /// Something regorus answers exactly and this evaluator does not: ask regorus.
    #[error("left to regorus: {0}")]
    Fallback(&'static str),
    /// The evaluation ends with this error, worded as regorus words it.
    #[error("{0}")]
    Error(String),
    /// The evaluation ran past its time bound.
    #[error("rego evaluation exceeded its time limit of {0:?}")]
    Timeout(Duration),
}

/// One rule lowered, with every rule and function it reaches.
#[derive(Debug)]
pub struct Plan {
    rules: Vec<RuleDef>,
    target: usize,
    /// The error of each call site whose function gives two different values, as regorus
    /// words it (with the site's file, line and column).
    conflicts: Vec<String>,
}

impl Plan {
    /// Lowers the rule at `path` (`data.k8spsp.violation`) of `modules`.
    pub fn lower(
        modules: &[regorus::unstable::Ref<regorus::unstable::Module>],
        path: &str,
    ) -> Result<Plan, Unsupported> {
        lower::lower(modules, path)
    }

    /// The paths of the rules lowered (the target and every rule it reaches).
    pub fn rule_paths(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.path.as_str())
    }

    /// The members of the target rule, a partial set (`violation[...]`), with `input` (none
    /// when no body holds). A target that is not a partial set is left to regorus.
    /// `data` is the base document the rules read (`data.inventory`).
    pub fn eval_set<'a>(
        &'a self,
        input: Val<'a>,
        data: Val<'a>,
        timeout: Duration,
    ) -> Result<Vec<Val<'a>>, Stop> {
        run::Run::new(self, input, data, timeout).eval_target()
    }
}

/// A constant of the policy.
#[derive(Debug, Clone)]
enum Lit {
    Null,
    Bool(bool),
    Num(Num),
    Str(Box<str>),
    /// A number this evaluator does not hold exactly (an integer past 64 bits): reading it
    /// leaves the evaluation to regorus.
    Inexact,
}

/// An expression: it has values (one for most, several for a reference that iterates,
/// none when undefined).
#[derive(Debug)]
enum Expr {
    Lit(Lit),
    /// `data`, the base document (Gatekeeper's `data.inventory`).
    Data,
    /// A variable of the rule body, by slot.
    Var(usize),
    Input,
    /// The value of a complete, partial set or partial object rule.
    Rule(usize),
    /// `base[index]`; an unbound variable as the index iterates.
    Index(Box<Expr>, Box<Expr>),
    Array(Vec<Expr>),
    Set(Vec<Expr>),
    Object(Vec<(Expr, Expr)>),
    ArrayCompr(Box<Expr>, Vec<Stmt>),
    SetCompr(Box<Expr>, Vec<Stmt>),
    ObjectCompr(Box<Expr>, Box<Expr>, Vec<Stmt>),
    Call(Callee, Vec<Expr>),
    Compare(BoolOp, Box<Expr>, Box<Expr>),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    SetOp(BinOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    /// `value in collection`, `key, value in collection`.
    Member(Option<Box<Expr>>, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy)]
enum Callee {
    Builtin(Builtin),
    /// A function of the modules, and the call site's error for two different values
    /// (regorus's text), when the call has a site.
    Function(usize, Option<usize>),
}

/// A statement of a body.
#[derive(Debug)]
enum Stmt {
    /// Holds when the expression has a value other than `false`.
    Expr(Expr),
    Not(Box<Stmt>),
    /// `pattern := value`.
    Assign(Expr, Expr),
    /// `a = b`: whichever side has unbound variables is bound from the other.
    Unify(Expr, Expr),
    /// `some key, value in collection`.
    SomeIn(Option<Expr>, Expr, Expr),
    /// `every key, value in domain { body }`.
    Every(Option<usize>, usize, Expr, Vec<Stmt>),
    /// `some x` (declares only).
    Nothing,
}

/// One body of a definition and the value it gives.
#[derive(Debug)]
struct Branch {
    value: Option<Expr>,
    body: Vec<Stmt>,
}

/// One definition of a rule: a body and its `else` chain, the head's arguments and key.
#[derive(Debug)]
struct Def {
    args: Vec<Expr>,
    key: Option<Expr>,
    chain: Vec<Branch>,
    slots: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Complete,
    PartialSet,
    PartialObject,
    Function(usize),
}

#[derive(Debug)]
struct RuleDef {
    path: String,
    kind: Kind,
    defs: Vec<Def>,
    default: Option<Expr>,
}
