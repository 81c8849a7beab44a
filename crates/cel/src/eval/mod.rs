//! The executable form of a program and its interpreter.
//!
//! Nodes are built once by `compile`; evaluation walks them with the activation and the
//! comprehension scopes, borrowing everything it can from the input. Errors are values:
//! `&&`, `||`, `?:` and comprehensions absorb them as the CEL specification says.

use std::cell::Cell;
use std::sync::Arc;

pub mod activation;
pub mod program;

use crate::error::EvalError;
use crate::library::cost;
use crate::library::{Binary, CostFn, Nary, Ternary, Unary};
use crate::ops::{self, Relation};
use crate::value::EvalResult;
use crate::value::{Key, OwnedMap, Value};
use activation::Activation;

mod fold;
mod lazy;
mod paths;

pub use paths::MEMO_SLOTS;
use paths::{MemoCells, Root, fresh_memo, has_path, memo_of, walk};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
}

/// A string predicate with a literal argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrTest {
    StartsWith,
    EndsWith,
    Contains,
}

impl StrTest {
    pub fn function(self) -> &'static str {
        match self {
            StrTest::StartsWith => "startsWith",
            StrTest::EndsWith => "endsWith",
            StrTest::Contains => "contains",
        }
    }
}

/// A set of literal strings, hashed with a fast seeded hasher.
pub type StringSet = hashbrown::HashSet<Box<str>>;

/// How an expression reads a lazy variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LazyRead {
    /// `variables.x`
    Value,
    /// `has(variables.x)`: true once the variable evaluates without error.
    Has,
    /// `variables.?x`
    Optional,
}

/// Which comprehension variable a local refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalVar {
    Iter,
    Iter2,
    Accu,
}

#[derive(Debug)]
pub enum Node {
    Const(Value<'static>),
    /// A subexpression folded at compile time, still charged what evaluating it costs, so
    /// that costs match an engine that does not fold.
    Folded {
        value: Value<'static>,
        cost: u64,
    },
    /// A declared variable, by activation slot.
    Var {
        slot: usize,
        name: Box<str>,
    },
    /// A lazy variable, `variables.<name>`, by lazy slot: evaluated on first read and kept
    /// in the activation.
    Lazy {
        slot: usize,
        name: Box<str>,
        read: LazyRead,
    },
    /// `variables` on its own: a map of every lazy variable the program's environment
    /// declared (by lazy slot), each evaluated.
    LazyAll(Box<[Box<str>]>),
    /// A comprehension variable, `up` scopes out from the innermost.
    Local {
        up: u32,
        var: LocalVar,
    },
    Select {
        operand: Box<Node>,
        field: Box<str>,
    },
    /// Field selections on a variable (`c.securityContext.privileged`), walked directly over
    /// the JSON without building intermediate values.
    Path {
        base: Box<Node>,
        fields: Box<[Box<str>]>,
        /// For paths on a comprehension variable: the memo slot of each prefix, if any.
        memo: Box<[Option<u8>]>,
    },
    /// `has(base.f1...fn)` on a variable: the path to `fn`'s parent, then a presence test,
    /// sharing the comprehension's memo with the paths that read the same fields.
    HasPath {
        base: Box<Node>,
        fields: Box<[Box<str>]>,
        memo: Box<[Option<u8>]>,
    },
    OptSelect {
        operand: Box<Node>,
        field: Box<str>,
    },
    Has {
        operand: Box<Node>,
        field: Box<str>,
    },
    Index(Box<Node>, Box<Node>),
    /// `m[k]` inside `m.all(k, ...)` (a fold over a map, indexed by its own key): the value
    /// the fold is visiting, charged what the index costs. Over a list, the index itself.
    RangeValue {
        index: Box<Node>,
        cost: u64,
    },
    OptIndex(Box<Node>, Box<Node>),
    /// `a && b && ...`, a chain flattened into its terms.
    And(Box<[Node]>),
    /// `a || b || ...`, a chain flattened into its terms.
    Or(Box<[Node]>),
    Not(Box<Node>),
    NotStrictlyFalse(Box<Node>),
    Cond(Box<[Node; 3]>),
    Eq(Box<Node>, Box<Node>),
    Ne(Box<Node>, Box<Node>),
    Rel(Relation, Box<Node>, Box<Node>),
    Arith(Arith, Box<Node>, Box<Node>),
    Neg(Box<Node>),
    In(Box<Node>, Box<Node>),
    /// `x in ['a', 'b', ...]` with a constant list of strings: a hash set lookup.
    InStrings(Box<Node>, Arc<StringSet>, Box<Node>),
    List {
        elements: Vec<Node>,
        /// Positions written `?e`, as a mask parallel to `elements` (empty when none).
        optional: Vec<bool>,
    },
    Map(Vec<MapEntryNode>),
    Struct(Box<StructNode>),
    Call1(Unary, Option<CostFn>, Box<Node>),
    Call2(Binary, Option<CostFn>, Box<[Node; 2]>),
    Call3(Ternary, Option<CostFn>, Box<[Node; 3]>),
    CallN(Nary, Option<CostFn>, Vec<Node>),
    /// `s.startsWith('lit')`, `s.endsWith('lit')`, `s.contains('lit')`: the most common
    /// policy string tests, run on borrowed operands with the library's cost.
    StrTest(StrTest, Box<Node>, Box<str>),
    /// `s.matches(re)` with a constant pattern compiled once; the pattern's length in code
    /// points is kept for the cost.
    Matches(Box<Node>, Arc<regex::Regex>, u64),
    Comprehension(Box<Comprehension>),
    /// An error known at compile time that CEL reports at run time (unbound names in
    /// unchecked programs, unknown functions).
    Fail(EvalError),
}

/// `Name{...}` of a message type a library defines ([`MessageTypes`](crate::value::MessageTypes)).
#[derive(Debug)]
pub struct StructNode {
    pub types: &'static dyn crate::value::MessageTypes,
    pub type_name: Arc<str>,
    pub fields: Box<[StructFieldNode]>,
}

#[derive(Debug)]
pub struct StructFieldNode {
    pub name: Arc<str>,
    pub value: Node,
    /// Written `?name: value`: set only when the optional has a value.
    pub optional: bool,
}

#[derive(Debug)]
pub struct MapEntryNode {
    pub key: Node,
    pub value: Node,
    pub optional: bool,
}

#[derive(Debug)]
pub struct Comprehension {
    pub iter_range: Node,
    pub two_vars: bool,
    /// How many memo slots paths on the loop variables use (reset at every element).
    pub memo_used: usize,
    /// A one-variable fold over a map whose body reads `m[k]`: visit values too.
    pub needs_value: bool,
    pub accu_init: Node,
    pub loop_condition: Option<Node>,
    pub step: Step,
    pub result: Node,
}

/// The loop step, with the shapes of `map` and `filter` recognised so that the result list
/// grows in place instead of being copied at every element.
#[derive(Debug)]
pub enum Step {
    Generic(Node),
    /// `@result + [e]`
    Append(Node),
    /// `c ? @result + [e] : @result`
    AppendIf(Node, Node),
    /// The fold of `all(x, p)`: `@result && p` while `@result` is not false.
    All(Node),
    /// The fold of `exists(x, p)`: `@result || p` while `@result` is not true.
    Exists(Node),
    /// `cel.@mapInsert(@result, k, v)` (`transformMap`) or `cel.@mapInsert(@result, e)`
    /// (`transformMapEntry`, `key` is `None`), under `filter ? ... : @result` when there
    /// is a filter; the accumulated map grows in place.
    MapInsert {
        filter: Option<Node>,
        key: Option<Node>,
        value: Node,
    },
}

/// The values of one comprehension's variables.
struct Scope<'s, 'a> {
    parent: Option<&'s Scope<'s, 'a>>,
    iter: Value<'a>,
    /// The element when a fold visits a JSON array: read in place, `iter` is then unused.
    iter_json: Option<&'a crate::value::Json>,
    iter2: Value<'a>,
    accu: &'s EvalResult<'a>,
    memo: &'s MemoCells<'a>,
}

pub(crate) struct Ctx<'c, 'a> {
    pub activation: &'c Activation<'a>,
    /// Cost so far, as cel-go's runtime cost tracker counts it.
    pub cost: Cell<u64>,
    /// Evaluation stops with an error once `cost` exceeds this.
    pub limit: u64,
    /// What `has()` costs: cel-go charges 1 unless the environment makes it free.
    pub presence_cost: u64,
    /// The cost of the lazy variables this evaluation was first to read: separate
    /// evaluations, not counted against `limit`.
    pub lazy_cost: Cell<u64>,
    /// Lazy slots from this one up may not be read: inside the evaluation of lazy variable
    /// `i`, only variables declared before it exist.
    lazy_bound: usize,
    /// Field paths on variables (`object.metadata.annotations`) read more than once.
    memo: MemoCells<'a>,
}

impl<'c, 'a> Ctx<'c, 'a> {
    pub fn new(activation: &'c Activation<'a>, limit: u64, presence_cost: u64) -> Self {
        Ctx {
            activation,
            cost: Cell::new(0),
            limit,
            presence_cost,
            lazy_cost: Cell::new(0),
            lazy_bound: usize::MAX,
            memo: fresh_memo(),
        }
    }

    /// Adds to the cost; an error once the limit is passed.
    #[inline]
    fn charge(&self, n: u64) -> Result<(), EvalError> {
        let total = self.cost.get().saturating_add(n);
        self.cost.set(total);
        if total > self.limit {
            Err(EvalError::new(cost::LIMIT_EXCEEDED))
        } else {
            Ok(())
        }
    }

    /// Takes back a charge that the node's context does not pay for.
    fn refund(&self, n: u64) {
        self.cost.set(self.cost.get().saturating_sub(n));
    }

    pub fn exceeded(&self) -> bool {
        self.cost.get() > self.limit
    }
}

/// An operand that is borrowed where it can be (constants, variables, comprehension
/// variables) so that reading it copies nothing and touches no reference counts.
enum Operand<'r, 'a> {
    Ref(&'r Value<'a>),
    Val(Value<'a>),
}

impl<'a> Operand<'_, 'a> {
    fn into_value(self) -> Value<'a> {
        match self {
            Operand::Ref(v) => v.clone(),
            Operand::Val(v) => v,
        }
    }
}

impl<'a> std::ops::Deref for Operand<'_, 'a> {
    type Target = Value<'a>;
    #[inline]
    fn deref(&self) -> &Value<'a> {
        match self {
            Operand::Ref(v) => v,
            Operand::Val(v) => v,
        }
    }
}

/// Runs a call and charges its cost (1 unless the function declares otherwise).
#[inline]
fn charge_call<'a, A: Clone + std::borrow::Borrow<[Value<'a>]>>(
    ctx: &Ctx<'_, 'a>,
    cost: Option<CostFn>,
    args: A,
    call: impl FnOnce(A) -> EvalResult<'a>,
) -> EvalResult<'a> {
    match cost {
        None => {
            ctx.charge(1)?;
            call(args)
        }
        Some(cost_of) => {
            let kept = args.clone();
            let result = call(args)?;
            ctx.charge(cost_of(kept.borrow(), &result))?;
            Ok(result)
        }
    }
}

fn bool_overload(function: &str, v: &Value<'_>) -> EvalError {
    ops::overload(function, &[v])
}

impl Node {
    pub(crate) fn eval<'a>(&self, ctx: &Ctx<'_, 'a>) -> EvalResult<'a> {
        self.run(ctx, None)
    }

    /// Evaluates, borrowing the value where it already exists.
    #[inline]
    fn operand<'r, 'a>(
        &'r self,
        ctx: &Ctx<'r, 'a>,
        scope: Option<&'r Scope<'r, 'a>>,
    ) -> Result<Operand<'r, 'a>, EvalError> {
        match self {
            Node::Const(v) => Ok(Operand::Ref(v)),
            Node::Folded { value, cost } => {
                ctx.charge(*cost)?;
                Ok(Operand::Ref(value))
            }
            Node::Var { .. } | Node::Local { .. } => {
                ctx.charge(cost::SELECT_AND_IDENT)?;
                self.variable(ctx, scope)
            }
            _ => self.run(ctx, scope).map(Operand::Val),
        }
    }

    /// A variable's value by reference, not charged (the caller charges it with the rest of
    /// its node); `None` for anything but a variable.
    #[inline]
    fn variable_ref<'r, 'a>(
        &'r self,
        ctx: &Ctx<'r, 'a>,
        scope: Option<&'r Scope<'r, 'a>>,
    ) -> Option<Result<Root<'r, 'a>, EvalError>> {
        Some(match self {
            Node::Var { slot, name } => ctx
                .activation
                .get(*slot)
                .map(Root::Value)
                .ok_or_else(|| EvalError::new(format!("no such attribute: {name}"))),
            Node::Local { up, var } => {
                let mut s = scope;
                for _ in 0..*up {
                    s = s.and_then(|s| s.parent);
                }
                match s {
                    Some(s) => match var {
                        LocalVar::Iter => Ok(match s.iter_json {
                            Some(j) => Root::Json(j),
                            None => Root::Value(&s.iter),
                        }),
                        LocalVar::Iter2 => Ok(Root::Value(&s.iter2)),
                        LocalVar::Accu => match s.accu {
                            Ok(v) => Ok(Root::Value(v)),
                            Err(e) => Err(e.clone()),
                        },
                    },
                    None => Err(EvalError::new(
                        "internal error: unbound comprehension variable",
                    )),
                }
            }
            _ => return None,
        })
    }

    /// A variable's value by reference, not charged (the caller charges it with the rest of
    /// its node). Anything but a variable is evaluated and charged as usual.
    #[inline]
    fn variable<'r, 'a>(
        &'r self,
        ctx: &Ctx<'r, 'a>,
        scope: Option<&'r Scope<'r, 'a>>,
    ) -> Result<Operand<'r, 'a>, EvalError> {
        match self.variable_ref(ctx, scope) {
            Some(Ok(Root::Value(v))) => Ok(Operand::Ref(v)),
            Some(Ok(Root::Json(j))) => Ok(Operand::Val(Value::from_json(j))),
            Some(Err(e)) => Err(e),
            None => self.operand(ctx, scope),
        }
    }

    /// `has(base.f1...fn)`, charged at once: the variable, the selections to `fn`'s parent,
    /// the presence test, and `extra` (a `!` applied to it).
    #[inline]
    fn has_path_node<'a>(
        base: &Node,
        fields: &[Box<str>],
        memo: &[Option<u8>],
        extra: u64,
        ctx: &Ctx<'_, 'a>,
        scope: Option<&Scope<'_, 'a>>,
    ) -> Result<bool, EvalError> {
        let selections = u64::try_from(fields.len().saturating_sub(1)).unwrap_or(u64::MAX);
        ctx.charge(
            cost::SELECT_AND_IDENT
                .saturating_add(selections)
                .saturating_add(ctx.presence_cost)
                .saturating_add(extra),
        )?;
        match base.variable_ref(ctx, scope) {
            Some(root) => has_path(root?, fields, memo, memo_of(base, ctx, scope)),
            None => {
                let root = base.operand(ctx, scope)?;
                has_path(Root::Value(&root), fields, memo, memo_of(base, ctx, scope))
            }
        }
    }

    /// Evaluates a branch of `?:`. cel-go makes every conditional an attribute whose branches,
    /// when they are attributes themselves (a variable and its field selections), are resolved
    /// without charging for the variable: only the selections cost.
    fn run_branch<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> EvalResult<'a> {
        let base_is_free = match self {
            Node::Var { .. } | Node::Local { .. } => true,
            Node::Path { base, .. } => matches!(**base, Node::Var { .. } | Node::Local { .. }),
            Node::Lazy { .. } | Node::Select { .. } => self.is_lazy_attribute(),
            _ => false,
        };
        let result = self.run(ctx, scope);
        if base_is_free {
            ctx.refund(cost::SELECT_AND_IDENT);
        }
        result
    }

    /// `variables.x` and field selections on it: an attribute rooted at `variables`.
    fn is_lazy_attribute(&self) -> bool {
        match self {
            Node::Lazy {
                read: LazyRead::Value,
                ..
            } => true,
            Node::Select { operand, .. } => operand.is_lazy_attribute(),
            _ => false,
        }
    }

    /// Evaluates a node in a boolean position (`&&`, `||`, `!`, `?:`, a quantifier's
    /// predicate) without building a `Value` for the common boolean-producing nodes.
    fn truth<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> Truth<'a> {
        match self {
            Node::And(terms) => logic(true, terms, ctx, scope),
            Node::Or(terms) => logic(false, terms, ctx, scope),
            // `!has(...)`, the most common guard in policies: one node, one charge.
            Node::Not(a) if matches!(**a, Node::HasPath { .. }) => {
                let Node::HasPath { base, fields, memo } = &**a else {
                    return Err(NotBool::Error(EvalError::new(
                        "internal error: not a has()",
                    )));
                };
                Node::has_path_node(base, fields, memo, 1, ctx, scope)
                    .map(|b| !b)
                    .map_err(NotBool::Error)
            }
            Node::Not(a) => {
                let t = a.truth(ctx, scope);
                if let Err(NotBool::Error(e)) = t {
                    return Err(NotBool::Error(e));
                }
                ctx.charge(1).map_err(NotBool::Error)?;
                match t {
                    Ok(b) => Ok(!b),
                    Err(n) => Err(NotBool::Error(n.into_error("!_"))),
                }
            }
            Node::HasPath { base, fields, memo } => {
                Node::has_path_node(base, fields, memo, 0, ctx, scope).map_err(NotBool::Error)
            }
            Node::StrTest(test, s, literal) => {
                str_test(*test, s, literal, ctx, scope).map_err(NotBool::Error)
            }
            Node::InStrings(e, set, list) => {
                in_strings(e, set, list, ctx, scope).map_err(NotBool::Error)
            }
            Node::Eq(a, b) | Node::Ne(a, b) => {
                let a = a.operand(ctx, scope).map_err(NotBool::Error)?;
                let b = b.operand(ctx, scope).map_err(NotBool::Error)?;
                ctx.charge(cost::compare(&a, &b)).map_err(NotBool::Error)?;
                let eq = ops::equals(&a, &b);
                Ok(if matches!(self, Node::Eq(..)) {
                    eq
                } else {
                    !eq
                })
            }
            _ => match self.run(ctx, scope) {
                Ok(Value::Bool(b)) => Ok(b),
                Ok(v) => Err(NotBool::Value(v)),
                Err(e) => Err(NotBool::Error(e)),
            },
        }
    }

    fn run<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> EvalResult<'a> {
        match self {
            Node::Const(_) | Node::Folded { .. } | Node::Var { .. } | Node::Local { .. } => {
                self.operand(ctx, scope).map(Operand::into_value)
            }
            Node::Select { operand, field } => {
                let v = operand.operand(ctx, scope)?;
                ctx.charge(cost::SELECT_AND_IDENT)?;
                ops::select(&v, field)
            }
            Node::Path { base, fields, memo } => {
                let selections = u64::try_from(fields.len()).unwrap_or(u64::MAX);
                ctx.charge(cost::SELECT_AND_IDENT.saturating_add(selections))?;
                match base.variable_ref(ctx, scope) {
                    Some(root) => walk(root?, fields, memo, memo_of(base, ctx, scope)),
                    None => {
                        let root = base.operand(ctx, scope)?;
                        walk(Root::Value(&root), fields, memo, memo_of(base, ctx, scope))
                    }
                }
            }
            Node::HasPath { base, fields, memo } => {
                Node::has_path_node(base, fields, memo, 0, ctx, scope).map(Value::Bool)
            }
            Node::OptSelect { operand, field } => {
                let v = operand.run(ctx, scope)?;
                ctx.charge(cost::SELECT_AND_IDENT)?;
                ops::optional_select(&v, field)
            }
            Node::Has { operand, field } => {
                let v = operand.operand(ctx, scope)?;
                ctx.charge(ctx.presence_cost)?;
                ops::has_field(&v, field)
            }
            Node::Index(c, i) => {
                let c = c.operand(ctx, scope)?;
                let i = i.operand(ctx, scope)?;
                ctx.charge(1)?;
                match &*c {
                    Value::Optional(None) => Ok(Value::Optional(None)),
                    Value::Optional(Some(inner)) => ops::optional_index(inner, &i),
                    _ => ops::index(&c, &i),
                }
            }
            Node::RangeValue { index, cost } => match scope {
                Some(s) if !matches!(s.iter2, Value::Null) => {
                    ctx.charge(*cost)?;
                    Ok(s.iter2.clone())
                }
                _ => index.run(ctx, scope),
            },
            Node::OptIndex(c, i) => {
                let c = c.run(ctx, scope)?;
                let i = i.run(ctx, scope)?;
                ctx.charge(1)?;
                ops::optional_index(&c, &i)
            }
            Node::And(terms) => logic(true, terms, ctx, scope)
                .map(Value::Bool)
                .map_err(|n| n.into_error("_&&_")),
            Node::Or(terms) => logic(false, terms, ctx, scope)
                .map(Value::Bool)
                .map_err(|n| n.into_error("_||_")),
            Node::Not(a) => {
                let v = a.operand(ctx, scope)?;
                ctx.charge(1)?;
                match &*v {
                    Value::Bool(b) => Ok(Value::Bool(!b)),
                    other => Err(ops::overload("!_", &[other])),
                }
            }
            Node::NotStrictlyFalse(a) => {
                let v = a.run(ctx, scope);
                ctx.charge(1)?;
                match v {
                    Ok(Value::Bool(false)) => Ok(Value::Bool(false)),
                    _ => Ok(Value::Bool(true)),
                }
            }
            Node::Cond(parts) => {
                let [c, t, f] = &**parts;
                match c.truth(ctx, scope) {
                    Ok(true) => t.run_branch(ctx, scope),
                    Ok(false) => f.run_branch(ctx, scope),
                    Err(n) => Err(n.into_error("_?_:_")),
                }
            }
            Node::Eq(a, b) | Node::Ne(a, b) => {
                let a = a.operand(ctx, scope)?;
                let b = b.operand(ctx, scope)?;
                ctx.charge(cost::compare(&a, &b))?;
                let eq = ops::equals(&a, &b);
                Ok(Value::Bool(if matches!(self, Node::Eq(..)) {
                    eq
                } else {
                    !eq
                }))
            }
            Node::Rel(rel, a, b) => {
                let a = a.operand(ctx, scope)?;
                let b = b.operand(ctx, scope)?;
                let c = match (&*a, &*b) {
                    (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
                        cost::compare(&a, &b)
                    }
                    _ => 1,
                };
                ctx.charge(c)?;
                ops::relation(*rel, &a, &b)
            }
            Node::Arith(op, a, b) => {
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                let c = match (&a, &b) {
                    (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
                        cost::traversal(cost::actual_size(&a).saturating_add(cost::actual_size(&b)))
                    }
                    _ => 1,
                };
                ctx.charge(c)?;
                match op {
                    Arith::Add => ops::add(a, b),
                    Arith::Subtract => ops::subtract(a, b),
                    Arith::Multiply => ops::multiply(a, b),
                    Arith::Divide => ops::divide(a, b),
                    Arith::Modulo => ops::modulo(a, b),
                }
            }
            Node::Neg(a) => {
                let v = a.run(ctx, scope)?;
                ctx.charge(1)?;
                ops::negate(v)
            }
            Node::In(e, c) => {
                let e = e.operand(ctx, scope)?;
                let c = c.operand(ctx, scope)?;
                ctx.charge(match &*c {
                    Value::List(l) => u64::try_from(l.len()).unwrap_or(u64::MAX),
                    _ => 1,
                })?;
                ops::contains(&e, &c)
            }
            Node::InStrings(e, set, list) => in_strings(e, set, list, ctx, scope).map(Value::Bool),
            Node::List { .. }
            | Node::Map(_)
            | Node::Struct(_)
            | Node::Call1(..)
            | Node::Call2(..)
            | Node::Call3(..)
            | Node::CallN(..)
            | Node::StrTest(..)
            | Node::Matches(..)
            | Node::Lazy { .. }
            | Node::LazyAll(_) => self.run_cold(ctx, scope),
            Node::Comprehension(c) => c.run(ctx, scope),
            Node::Fail(e) => Err(e.clone()),
        }
    }
    /// The less frequent node kinds, kept out of `run` so that its frame stays small.
    #[inline(never)]
    fn run_cold<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> EvalResult<'a> {
        match self {
            Node::List { elements, optional } => {
                let mut items = Vec::with_capacity(elements.len());
                for (i, e) in elements.iter().enumerate() {
                    let v = e.run(ctx, scope)?;
                    if optional.get(i).copied().unwrap_or(false) {
                        match v {
                            Value::Optional(Some(inner)) => items.push((*inner).clone()),
                            Value::Optional(None) => {}
                            other => {
                                return Err(EvalError::new(format!(
                                    "cannot use a value of type '{}' as an optional list element",
                                    other.type_name()
                                )));
                            }
                        }
                    } else {
                        items.push(v);
                    }
                }
                ctx.charge(cost::LIST_CREATE_BASE)?;
                Ok(Value::list(items))
            }
            Node::Map(entries) => {
                let mut map = OwnedMap::with_capacity(entries.len());
                for entry in entries {
                    let k = entry.key.run(ctx, scope)?;
                    let key = Key::from_value(&k).ok_or_else(|| {
                        EvalError::new(format!("unsupported key type: {}", k.type_name()))
                    })?;
                    let v = entry.value.run(ctx, scope)?;
                    let v = if entry.optional {
                        match v {
                            Value::Optional(Some(inner)) => (*inner).clone(),
                            Value::Optional(None) => continue,
                            other => {
                                return Err(EvalError::new(format!(
                                    "cannot use a value of type '{}' as an optional map entry",
                                    other.type_name()
                                )));
                            }
                        }
                    } else {
                        v
                    };
                    if map.contains_equivalent(&k) || !map.insert_new(key, v) {
                        return Err(EvalError::new(format!(
                            "Failed with repeated key: {}",
                            crate::ops::key_text(&k)
                        )));
                    }
                }
                ctx.charge(cost::MAP_CREATE_BASE)?;
                Ok(Value::map(map))
            }
            Node::Struct(s) => {
                let mut fields = Vec::with_capacity(s.fields.len());
                for f in &s.fields {
                    let v = f.value.run(ctx, scope)?;
                    if !f.optional {
                        fields.push((f.name.clone(), v));
                        continue;
                    }
                    match v {
                        Value::Optional(Some(inner)) => {
                            fields.push((f.name.clone(), (*inner).clone()))
                        }
                        Value::Optional(None) => {}
                        other => {
                            return Err(EvalError::new(format!(
                                "cannot use a value of type '{}' as an optional field",
                                other.type_name()
                            )));
                        }
                    }
                }
                ctx.charge(cost::STRUCT_CREATE_BASE)?;
                s.types.check_fields(&s.type_name, &fields)?;
                Ok(Value::Struct(Arc::new(crate::value::Struct::new(
                    s.types,
                    s.type_name.clone(),
                    fields,
                ))))
            }
            Node::Call1(f, c, a) => {
                let a = a.run(ctx, scope)?;
                charge_call(ctx, *c, [a], |[a]| f(a))
            }
            Node::Call2(f, c, args) => {
                let [a, b] = &**args;
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                charge_call(ctx, *c, [a, b], |[a, b]| f(a, b))
            }
            Node::Call3(f, c, args) => {
                let [a, b, x] = &**args;
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                let x = x.run(ctx, scope)?;
                charge_call(ctx, *c, [a, b, x], |[a, b, x]| f(a, b, x))
            }
            Node::CallN(f, c, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.run(ctx, scope)?);
                }
                charge_call(ctx, *c, values, f)
            }
            Node::StrTest(test, s, literal) => {
                str_test(*test, s, literal, ctx, scope).map(Value::Bool)
            }
            Node::Matches(s, re, pattern_len) => {
                let subject = s.operand(ctx, scope)?;
                match &*subject {
                    Value::String(text) => {
                        ctx.charge(cost::matches(&subject, *pattern_len))?;
                        Ok(Value::Bool(re.is_match(text)))
                    }
                    other => Err(ops::overload("matches", &[other])),
                }
            }
            Node::Lazy { slot, name, read } => lazy::read(ctx, *slot, name, *read),
            Node::LazyAll(names) => lazy::all(ctx, names),
            _ => Err(EvalError::new("internal error: not a cold node")),
        }
    }
}

/// `&&` (`is_and`) and `||` over a chain of terms with CEL's commutative error absorption:
/// a decisive term (false for `&&`, true for `||`) wins over errors anywhere in the chain;
/// otherwise the first error (in source order) is the result.
#[inline]
fn logic<'a>(
    is_and: bool,
    terms: &[Node],
    ctx: &Ctx<'_, 'a>,
    scope: Option<&Scope<'_, 'a>>,
) -> Truth<'a> {
    let name = if is_and { "_&&_" } else { "_||_" };
    let decisive = !is_and;
    let mut error: Option<EvalError> = None;
    for (i, term) in terms.iter().enumerate() {
        if i > 0 && ctx.exceeded() {
            return Err(NotBool::Error(EvalError::new(cost::LIMIT_EXCEEDED)));
        }
        match term.truth(ctx, scope) {
            Ok(x) if x == decisive => return Ok(decisive),
            Ok(_) => {}
            Err(n) => {
                if error.is_none() {
                    error = Some(n.into_error(name));
                }
            }
        }
    }
    match error {
        Some(e) => Err(NotBool::Error(e)),
        None => Ok(!decisive),
    }
}

/// `s.startsWith('lit')` and friends, charged as the library charges them.
fn str_test<'a>(
    test: StrTest,
    subject: &Node,
    literal: &str,
    ctx: &Ctx<'_, 'a>,
    scope: Option<&Scope<'_, 'a>>,
) -> Result<bool, EvalError> {
    let subject = subject.operand(ctx, scope)?;
    let Value::String(text) = &*subject else {
        return Err(EvalError::no_such_overload(
            test.function(),
            &[subject.type_name(), "string"],
        ));
    };
    let receiver = cost::traversal(cost::actual_size(&subject));
    ctx.charge(match test {
        StrTest::Contains => receiver.saturating_mul(cost::traversal(
            u64::try_from(literal.chars().count()).unwrap_or(u64::MAX),
        )),
        StrTest::StartsWith | StrTest::EndsWith => receiver,
    })?;
    Ok(match test {
        StrTest::StartsWith => text.starts_with(literal),
        StrTest::EndsWith => text.ends_with(literal),
        StrTest::Contains => text.contains(literal),
    })
}

/// `x in ['a', 'b', ...]`, charged as the list literal and a linear search would be.
fn in_strings<'a>(
    elem: &Node,
    set: &StringSet,
    list: &Node,
    ctx: &Ctx<'_, 'a>,
    scope: Option<&Scope<'_, 'a>>,
) -> Result<bool, EvalError> {
    let e = elem.operand(ctx, scope)?;
    let c = list.operand(ctx, scope)?;
    ctx.charge(cost::actual_size(&c))?;
    match &*e {
        Value::String(s) => Ok(set.contains(s.as_str())),
        _ => match ops::contains(&e, &c)? {
            Value::Bool(b) => Ok(b),
            other => Err(ops::overload("@in", &[&e, &other])),
        },
    }
}

/// Why a boolean position did not get a boolean.
enum NotBool<'a> {
    Error(EvalError),
    Value(Value<'a>),
}

impl NotBool<'_> {
    /// The error the operator `name` reports: the evaluation error, or "no matching
    /// overload" for a value of another type.
    fn into_error(self, name: &str) -> EvalError {
        match self {
            NotBool::Error(e) => e,
            NotBool::Value(v) => bool_overload(name, &v),
        }
    }
}

/// A condition's outcome without building a `Value`.
type Truth<'a> = Result<bool, NotBool<'a>>;
