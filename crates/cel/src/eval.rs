//! The executable form of a program and its interpreter.
//!
//! Nodes are built once by `compile`; evaluation walks them with the activation and the
//! comprehension scopes, borrowing everything it can from the input. Errors are values:
//! `&&`, `||`, `?:` and comprehensions absorb them as the CEL specification says.

use std::collections::HashSet;
use std::sync::Arc;

use crate::env::Activation;
use crate::error::{EvalError, EvalResult};
use crate::library::{Binary, Nary, Ternary, Unary};
use crate::ops::{self, Relation};
use crate::value::{Key, List, Map, OwnedMap, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
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
    /// A declared variable, by activation slot.
    Var {
        slot: usize,
        name: Box<str>,
    },
    /// A comprehension variable, `up` scopes out from the innermost.
    Local {
        up: u32,
        var: LocalVar,
    },
    Select {
        operand: Box<Node>,
        field: Box<str>,
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
    OptIndex(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
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
    InStrings(Box<Node>, Arc<HashSet<Box<str>>>, Box<Node>),
    List {
        elements: Vec<Node>,
        /// Positions written `?e`, as a mask parallel to `elements` (empty when none).
        optional: Vec<bool>,
    },
    Map(Vec<MapEntryNode>),
    Call1(Unary, Box<Node>),
    Call2(Binary, Box<[Node; 2]>),
    Call3(Ternary, Box<[Node; 3]>),
    CallN(Nary, Vec<Node>),
    /// `s.matches(re)` with a constant pattern compiled once.
    Matches(Box<Node>, Arc<regex::Regex>),
    Comprehension(Box<Comprehension>),
    /// An error known at compile time that CEL reports at run time (unbound names in
    /// unchecked programs, unknown functions).
    Fail(EvalError),
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
}

/// The values of one comprehension's variables.
struct Scope<'s, 'a> {
    parent: Option<&'s Scope<'s, 'a>>,
    iter: Value<'a>,
    iter2: Value<'a>,
    accu: &'s EvalResult<'a>,
}

pub(crate) struct Ctx<'c, 'a> {
    pub activation: &'c Activation<'a>,
}

fn bool_overload(function: &str, v: &Value<'_>) -> EvalError {
    ops::overload(function, &[v])
}

impl Node {
    pub(crate) fn eval<'a>(&self, ctx: &Ctx<'_, 'a>) -> EvalResult<'a> {
        self.run(ctx, None)
    }

    fn run<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> EvalResult<'a> {
        match self {
            Node::Const(v) => Ok(v.clone()),
            Node::Var { slot, name } => match ctx.activation.get(*slot) {
                Some(v) => Ok(v.clone()),
                None => Err(EvalError::new(format!("no such attribute: {name}"))),
            },
            Node::Local { up, var } => {
                let mut s = scope;
                for _ in 0..*up {
                    s = s.and_then(|s| s.parent);
                }
                match s {
                    Some(s) => match var {
                        LocalVar::Iter => Ok(s.iter.clone()),
                        LocalVar::Iter2 => Ok(s.iter2.clone()),
                        LocalVar::Accu => s.accu.clone(),
                    },
                    None => Err(EvalError::new(
                        "internal error: unbound comprehension variable",
                    )),
                }
            }
            Node::Select { operand, field } => {
                let v = operand.run(ctx, scope)?;
                ops::select(&v, field)
            }
            Node::OptSelect { operand, field } => {
                let v = operand.run(ctx, scope)?;
                ops::optional_select(&v, field)
            }
            Node::Has { operand, field } => {
                let v = operand.run(ctx, scope)?;
                ops::has_field(&v, field)
            }
            Node::Index(c, i) => {
                let c = c.run(ctx, scope)?;
                let i = i.run(ctx, scope)?;
                match &c {
                    Value::Optional(None) => Ok(Value::Optional(None)),
                    Value::Optional(Some(inner)) => ops::optional_index(inner, &i),
                    _ => ops::index(&c, &i),
                }
            }
            Node::OptIndex(c, i) => {
                let c = c.run(ctx, scope)?;
                let i = i.run(ctx, scope)?;
                ops::optional_index(&c, &i)
            }
            Node::And(a, b) => logic(true, a, b, ctx, scope),
            Node::Or(a, b) => logic(false, a, b, ctx, scope),
            Node::Not(a) => ops::not(a.run(ctx, scope)?),
            Node::NotStrictlyFalse(a) => match a.run(ctx, scope) {
                Ok(Value::Bool(false)) => Ok(Value::Bool(false)),
                _ => Ok(Value::Bool(true)),
            },
            Node::Cond(parts) => {
                let [c, t, f] = &**parts;
                match c.run(ctx, scope)? {
                    Value::Bool(true) => t.run(ctx, scope),
                    Value::Bool(false) => f.run(ctx, scope),
                    other => Err(bool_overload("_?_:_", &other)),
                }
            }
            Node::Eq(a, b) => {
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                Ok(Value::Bool(ops::equals(&a, &b)))
            }
            Node::Ne(a, b) => {
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                Ok(Value::Bool(!ops::equals(&a, &b)))
            }
            Node::Rel(rel, a, b) => {
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                ops::relation(*rel, &a, &b)
            }
            Node::Arith(op, a, b) => {
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                match op {
                    Arith::Add => ops::add(a, b),
                    Arith::Subtract => ops::subtract(a, b),
                    Arith::Multiply => ops::multiply(a, b),
                    Arith::Divide => ops::divide(a, b),
                    Arith::Modulo => ops::modulo(a, b),
                }
            }
            Node::Neg(a) => ops::negate(a.run(ctx, scope)?),
            Node::In(e, c) => {
                let e = e.run(ctx, scope)?;
                let c = c.run(ctx, scope)?;
                ops::contains(&e, &c)
            }
            Node::InStrings(e, set, list) => {
                let e = e.run(ctx, scope)?;
                match &e {
                    Value::String(s) => Ok(Value::Bool(set.contains(s.as_str()))),
                    _ => {
                        let c = list.run(ctx, scope)?;
                        ops::contains(&e, &c)
                    }
                }
            }
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
                Ok(Value::map(map))
            }
            Node::Call1(f, a) => f(a.run(ctx, scope)?),
            Node::Call2(f, args) => {
                let [a, b] = &**args;
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                f(a, b)
            }
            Node::Call3(f, args) => {
                let [a, b, c] = &**args;
                let a = a.run(ctx, scope)?;
                let b = b.run(ctx, scope)?;
                let c = c.run(ctx, scope)?;
                f(a, b, c)
            }
            Node::CallN(f, args) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(a.run(ctx, scope)?);
                }
                f(values)
            }
            Node::Matches(s, re) => match s.run(ctx, scope)? {
                Value::String(s) => Ok(Value::Bool(re.is_match(&s))),
                other => Err(ops::overload("matches", &[&other])),
            },
            Node::Comprehension(c) => c.run(ctx, scope),
            Node::Fail(e) => Err(e.clone()),
        }
    }
}

/// `&&` (`is_and`) and `||` with CEL's commutative error absorption: a decisive operand
/// (false for `&&`, true for `||`) wins over an error on the other side.
fn logic<'a>(
    is_and: bool,
    a: &Node,
    b: &Node,
    ctx: &Ctx<'_, 'a>,
    scope: Option<&Scope<'_, 'a>>,
) -> EvalResult<'a> {
    let name = if is_and { "_&&_" } else { "_||_" };
    let decisive = !is_and;
    let left = match a.run(ctx, scope) {
        Ok(Value::Bool(x)) if x == decisive => return Ok(Value::Bool(decisive)),
        Ok(Value::Bool(_)) => None,
        Ok(other) => Some(bool_overload(name, &other)),
        Err(e) => Some(e),
    };
    match b.run(ctx, scope) {
        Ok(Value::Bool(x)) if x == decisive => Ok(Value::Bool(decisive)),
        Ok(Value::Bool(x)) => match left {
            Some(e) => Err(e),
            None => Ok(Value::Bool(x)),
        },
        Ok(other) => Err(left.unwrap_or_else(|| bool_overload(name, &other))),
        Err(e) => Err(left.unwrap_or(e)),
    }
}

impl Comprehension {
    fn run<'a>(&self, ctx: &Ctx<'_, 'a>, scope: Option<&Scope<'_, 'a>>) -> EvalResult<'a> {
        let range = self.iter_range.run(ctx, scope)?;
        let mut accu = self.accu_init.run(ctx, scope);
        match &range {
            Value::List(list) => {
                for (i, item) in list.iter().enumerate() {
                    let (iter, iter2) = if self.two_vars {
                        (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), item)
                    } else {
                        (item, Value::Null)
                    };
                    if !self.step_once(ctx, scope, iter, iter2, &mut accu) {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for (k, v) in map_entries(map) {
                    let (iter, iter2) = if self.two_vars {
                        (k.into_value(), v)
                    } else {
                        (k.into_value(), Value::Null)
                    };
                    if !self.step_once(ctx, scope, iter, iter2, &mut accu) {
                        break;
                    }
                }
            }
            other => {
                return Err(EvalError::new(format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    other.type_name()
                )));
            }
        }
        let inner = Scope {
            parent: scope,
            iter: Value::Null,
            iter2: Value::Null,
            accu: &accu,
        };
        self.result.run(ctx, Some(&inner))
    }

    /// Runs the condition and one step; false when the loop should stop.
    fn step_once<'a>(
        &self,
        ctx: &Ctx<'_, 'a>,
        scope: Option<&Scope<'_, 'a>>,
        iter: Value<'a>,
        iter2: Value<'a>,
        accu: &mut EvalResult<'a>,
    ) -> bool {
        let next = {
            let inner = Scope {
                parent: scope,
                iter,
                iter2,
                accu,
            };
            if let Some(cond) = &self.loop_condition
                && let Ok(Value::Bool(false)) = cond.run(ctx, Some(&inner))
            {
                return false;
            }
            match &self.step {
                Step::Generic(step) => Some(step.run(ctx, Some(&inner))),
                Step::Append(elem) => {
                    let v = elem.run(ctx, Some(&inner));
                    drop(inner);
                    push(accu, v);
                    None
                }
                Step::AppendIf(cond, elem) => match cond.run(ctx, Some(&inner)) {
                    Ok(Value::Bool(true)) => {
                        let v = elem.run(ctx, Some(&inner));
                        drop(inner);
                        push(accu, v);
                        None
                    }
                    Ok(Value::Bool(false)) => None,
                    Ok(other) => Some(Err(bool_overload("_?_:_", &other))),
                    Err(e) => Some(Err(e)),
                },
            }
        };
        if let Some(next) = next {
            *accu = next;
        }
        true
    }
}

/// Appends to the accumulator list in place (it is uniquely owned during the fold).
fn push<'a>(accu: &mut EvalResult<'a>, v: EvalResult<'a>) {
    let v = match v {
        Ok(v) => v,
        Err(e) => {
            *accu = Err(e);
            return;
        }
    };
    match accu {
        Ok(Value::List(List::Owned(items))) => Arc::make_mut(items).push(v),
        Ok(Value::List(List::Json(json))) => {
            let mut items: Vec<Value<'a>> = json.iter().map(Value::from_json).collect();
            items.push(v);
            *accu = Ok(Value::list(items));
        }
        Ok(other) => {
            let e = ops::overload("_+_", &[other, &Value::list(Vec::new())]);
            *accu = Err(e);
        }
        Err(_) => {}
    }
}

fn map_entries<'m, 'a>(map: &'m Map<'a>) -> Box<dyn Iterator<Item = (Key<'a>, Value<'a>)> + 'm> {
    map.iter()
}
