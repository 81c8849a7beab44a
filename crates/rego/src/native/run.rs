//! Evaluating a [`Plan`]: a body is a search, written with continuations. Each statement
//! calls the rest of the body once per way it holds (once for a test, once per element for an
//! iteration, never when it fails), binding slots before the call and unbinding them after,
//! so backtracking costs nothing. A continuation returns `true` to end the search early (a
//! `not`, an `every`, a test for any solution).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use regorus::unstable::{ArithOp, BinOp, BoolOp};

use super::val::{Members, Num, Val};
use super::{Callee, Def, Expr, Kind, Lit, Plan, RuleDef, Stmt, Stop};

type R = Result<bool, Stop>;
type Frame<'a> = Vec<Option<Val<'a>>>;
/// What a partial rule's definition gives: each key, with its value for an object rule.
type KeyOut<'r, 'a> = dyn FnMut(&mut Run<'a>, Val<'a>, Option<Val<'a>>) -> Result<(), Stop> + 'r;
/// An object literal's evaluated members.
type Fields<'a> = [(Val<'a>, Val<'a>)];

/// How deep function calls may nest (rules are not recursive; this bounds the stack for
/// long chains of helpers).
const MAX_CALL_DEPTH: usize = 64;

/// How many statements may be open at once (each holds a few stack frames until the rest
/// of its body is done): a body of many statements, or a long chain of calls, ends with
/// the evaluation left to regorus rather than exhausting the stack.
const MAX_OPEN_STATEMENTS: u32 = 400;

/// The time bound is checked once per this many statements.
const CHECK_EVERY: u32 = 1024;

pub(super) struct Run<'a> {
    plan: &'a Plan,
    input: Val<'a>,
    data: Val<'a>,
    /// The value of each rule without arguments, once computed (`Some(None)`: undefined).
    cache: Vec<Option<Option<Val<'a>>>>,
    steps: u32,
    started: Instant,
    timeout: Duration,
    depth: usize,
    /// Inside this many array comprehensions: iterations give Rego's order, which shows.
    ordered: u32,
    /// Statements open on the stack.
    open: u32,
}

fn unbound() -> Stop {
    Stop::Fallback("a variable used before it is bound")
}

fn lit<'a>(l: &'a Lit) -> Val<'a> {
    match l {
        Lit::Null => Val::Null,
        Lit::Bool(b) => Val::Bool(*b),
        Lit::Num(n) => Val::Num(*n),
        Lit::Str(s) => Val::str(s),
        // Never read: `expr` stops first.
        Lit::Inexact => Val::Null,
    }
}

fn slot<'f, 'a>(f: &'f Frame<'a>, s: usize) -> Result<&'f Option<Val<'a>>, Stop> {
    f.get(s).ok_or(Stop::Fallback("a slot out of range"))
}

fn set_slot<'a>(f: &mut Frame<'a>, s: usize, v: Option<Val<'a>>) -> Result<(), Stop> {
    match f.get_mut(s) {
        Some(place) => {
            *place = v;
            Ok(())
        }
        None => Err(Stop::Fallback("a slot out of range")),
    }
}

impl<'a> Run<'a> {
    pub(super) fn new(plan: &'a Plan, input: Val<'a>, data: Val<'a>, timeout: Duration) -> Self {
        Run {
            plan,
            input,
            data,
            cache: vec![None; plan.rules.len()],
            steps: 0,
            started: Instant::now(),
            timeout,
            depth: 0,
            ordered: 0,
            open: 0,
        }
    }

    pub(super) fn eval_target(mut self) -> Result<Vec<Val<'a>>, Stop> {
        let id = self.plan.target;
        if self.plan.rules.get(id).map(|r| r.kind) != Some(Kind::PartialSet) {
            return Err(Stop::Fallback("the rule is not a partial set"));
        }
        match self.rule_value(id)? {
            Some(Val::Set(members)) => Ok(members.iter().cloned().collect()),
            _ => Ok(Vec::new()),
        }
    }

    fn tick(&mut self) -> Result<(), Stop> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(CHECK_EVERY) && self.started.elapsed() > self.timeout {
            return Err(Stop::Timeout(self.timeout));
        }
        Ok(())
    }

    fn rule(&self, id: usize) -> Result<&'a RuleDef, Stop> {
        self.plan
            .rules
            .get(id)
            .ok_or(Stop::Fallback("a rule out of range"))
    }

    /// The value of a rule without arguments, computed once per evaluation.
    fn rule_value(&mut self, id: usize) -> Result<Option<Val<'a>>, Stop> {
        if let Some(Some(v)) = self.cache.get(id) {
            return Ok(v.clone());
        }
        let rule = self.rule(id)?;
        let value = match rule.kind {
            Kind::Complete => self.single_value(rule, &[])?,
            Kind::PartialSet => {
                let mut members = Members::default();
                for def in &rule.defs {
                    let mut f = vec![None; def.slots];
                    self.def_keys(def, &mut f, &mut |_, key, _| {
                        members.insert(key);
                        Ok(())
                    })?;
                }
                Some(Val::Set(Rc::new(members)))
            }
            Kind::PartialObject => {
                let mut fields: BTreeMap<Val<'a>, Val<'a>> = BTreeMap::new();
                for def in &rule.defs {
                    let mut f = vec![None; def.slots];
                    self.def_keys(def, &mut f, &mut |_, key, value| {
                        let Some(value) = value else {
                            return Err(Stop::Fallback("an object rule without a value"));
                        };
                        match fields.get(&key) {
                            Some(v) if *v != value => {
                                Err(Stop::Fallback("an object rule with two values for one key"))
                            }
                            Some(_) => Ok(()),
                            None => {
                                fields.insert(key, value);
                                Ok(())
                            }
                        }
                    })?;
                }
                Some(Val::Object(Rc::new(fields)))
            }
            Kind::Function(_) => return Err(Stop::Fallback("a function read as a value")),
        };
        if let Some(place) = self.cache.get_mut(id) {
            *place = Some(value.clone());
        }
        Ok(value)
    }

    /// Every (key, value) a partial rule's definition gives.
    fn def_keys(
        &mut self,
        def: &'a Def,
        f: &mut Frame<'a>,
        out: &mut KeyOut<'_, 'a>,
    ) -> Result<(), Stop> {
        let Some(key) = &def.key else {
            return Err(Stop::Fallback("a partial rule without a key"));
        };
        let Some(branch) = def.chain.first() else {
            return Ok(());
        };
        self.body(&branch.body, f, &mut |s, f| {
            s.expr(key, f, &mut |s, f, k| match &branch.value {
                Some(v) => s.expr(v, f, &mut |s, _, v| {
                    out(s, k.clone(), Some(v))?;
                    Ok(false)
                }),
                None => {
                    out(s, k, None)?;
                    Ok(false)
                }
            })
        })?;
        Ok(())
    }

    /// The one value of a complete rule or of a function called with `args`: undefined,
    /// the default, or a conflict (left to regorus, whose error it is).
    fn single_value(
        &mut self,
        rule: &'a RuleDef,
        args: &[Val<'a>],
    ) -> Result<Option<Val<'a>>, Stop> {
        let mut result: Option<Val<'a>> = None;
        for def in &rule.defs {
            let mut f = vec![None; def.slots];
            self.def_values(def, &mut f, args, &mut |v| match &result {
                None => {
                    result = Some(v);
                    Ok(())
                }
                Some(r) if *r == v => Ok(()),
                Some(_) => Err(Stop::Fallback("a rule or function with two values")),
            })?;
        }
        match result {
            Some(v) => Ok(Some(v)),
            None => self.default_value(rule),
        }
    }

    /// A rule's or function's `default` value, for when no definition gives one.
    fn default_value(&mut self, rule: &'a RuleDef) -> Result<Option<Val<'a>>, Stop> {
        let Some(default) = &rule.default else {
            return Ok(None);
        };
        let mut value = None;
        let mut f = Vec::new();
        self.expr(default, &mut f, &mut |_, _, v| {
            value = Some(v);
            Ok(true)
        })?;
        Ok(value)
    }

    /// Every value one definition gives: its arguments bound, the first body of its `else`
    /// chain that gives a value.
    fn def_values(
        &mut self,
        def: &'a Def,
        f: &mut Frame<'a>,
        args: &[Val<'a>],
        out: &mut dyn FnMut(Val<'a>) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        if def.args.len() != args.len() {
            return Err(Stop::Fallback("a call with the wrong number of arguments"));
        }
        self.unify_all(&def.args, args, f, &mut |s, f| {
            for branch in &def.chain {
                let mut found = false;
                s.body(&branch.body, f, &mut |s, f| match &branch.value {
                    Some(v) => s.expr(v, f, &mut |_, _, v| {
                        found = true;
                        out(v)?;
                        Ok(false)
                    }),
                    None => {
                        found = true;
                        out(Val::Bool(true))?;
                        Ok(false)
                    }
                })?;
                if found {
                    break;
                }
            }
            Ok(false)
        })?;
        Ok(())
    }

    /// A function's value for `args`. Like regorus: each definition's values first (two
    /// different ones from one definition are left to regorus, which words that error with
    /// the values), then one value for all definitions, or the call site's conflict error.
    fn call_function(
        &mut self,
        id: usize,
        site: Option<usize>,
        args: &[Val<'a>],
    ) -> Result<Option<Val<'a>>, Stop> {
        if self.depth >= MAX_CALL_DEPTH {
            return Err(Stop::Fallback("functions nested too deep"));
        }
        self.depth += 1;
        let rule = self.rule(id)?;
        let mut result: Option<Val<'a>> = None;
        let mut conflict = false;
        for def in &rule.defs {
            let mut f = vec![None; def.slots];
            let mut value: Option<Val<'a>> = None;
            let searched = self.def_values(def, &mut f, args, &mut |v| match &value {
                None => {
                    value = Some(v);
                    Ok(())
                }
                Some(r) if *r == v => Ok(()),
                Some(_) => Err(Stop::Fallback("a function definition with two values")),
            });
            if let Err(e) = searched {
                self.depth -= 1;
                return Err(e);
            }
            match (&result, value) {
                (_, None) => {}
                (None, Some(v)) => result = Some(v),
                (Some(r), Some(v)) => conflict |= *r != v,
            }
        }
        self.depth -= 1;
        if conflict {
            return Err(match site.and_then(|s| self.plan.conflicts.get(s)) {
                Some(message) => Stop::Error(message.clone()),
                None => Stop::Fallback("a function with two values"),
            });
        }
        match result {
            Some(v) => Ok(Some(v)),
            None => self.default_value(rule),
        }
    }

    /// Runs `stmts`, calling `k` once per way they all hold.
    fn body(
        &mut self,
        stmts: &'a [Stmt],
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>) -> R,
    ) -> R {
        let Some((first, rest)) = stmts.split_first() else {
            return k(self, f);
        };
        self.tick()?;
        if self.open >= MAX_OPEN_STATEMENTS {
            return Err(Stop::Fallback("statements nested too deep"));
        }
        self.open += 1;
        let result = self.statement(first, rest, f, k);
        self.open -= 1;
        result
    }

    fn statement(
        &mut self,
        first: &'a Stmt,
        rest: &'a [Stmt],
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>) -> R,
    ) -> R {
        match first {
            Stmt::Expr(e) => self.expr(e, f, &mut |s, f, v| {
                if matches!(v, Val::Bool(false)) {
                    Ok(false)
                } else {
                    s.body(rest, f, &mut *k)
                }
            }),
            Stmt::Not(inner) => {
                let found = self.body(std::slice::from_ref(inner), f, &mut |_, _| Ok(true))?;
                if found {
                    Ok(false)
                } else {
                    self.body(rest, f, k)
                }
            }
            Stmt::Assign(pattern, value) => self.expr(value, f, &mut |s, f, v| {
                s.unify(pattern, v, f, &mut |s, f| s.body(rest, f, &mut *k))
            }),
            Stmt::Unify(a, b) => {
                if self.has_unbound(a, f) {
                    self.expr(b, f, &mut |s, f, v| {
                        s.unify(a, v, f, &mut |s, f| s.body(rest, f, &mut *k))
                    })
                } else if self.has_unbound(b, f) {
                    self.expr(a, f, &mut |s, f, v| {
                        s.unify(b, v, f, &mut |s, f| s.body(rest, f, &mut *k))
                    })
                } else {
                    self.expr(a, f, &mut |s, f, va| {
                        s.expr(b, f, &mut |s, f, vb| {
                            if va == vb {
                                s.body(rest, f, &mut *k)
                            } else {
                                Ok(false)
                            }
                        })
                    })
                }
            }
            Stmt::SomeIn(key, value, collection) => self.expr(collection, f, &mut |s, f, c| {
                c.entries(s.ordered > 0, |ek, ev| match key {
                    Some(kp) => s.unify(kp, ek, f, &mut |s, f| {
                        s.unify(value, ev.clone(), f, &mut |s, f| s.body(rest, f, &mut *k))
                    }),
                    None => s.unify(value, ev, f, &mut |s, f| s.body(rest, f, &mut *k)),
                })
            }),
            Stmt::Every(key, value, domain, body) => self.expr(domain, f, &mut |s, f, d| {
                if !(d.is_array() || d.is_object() || d.is_set()) {
                    return Err(Stop::Fallback("every over a value that is no collection"));
                }
                let mut all = true;
                d.entries(false, |ek, ev| {
                    if let Some(ks) = key {
                        set_slot(f, *ks, Some(ek))?;
                    }
                    set_slot(f, *value, Some(ev))?;
                    let held = s.body(body, f, &mut |_, _| Ok(true))?;
                    if let Some(ks) = key {
                        set_slot(f, *ks, None)?;
                    }
                    set_slot(f, *value, None)?;
                    all &= held;
                    Ok(!held)
                })?;
                if all {
                    s.body(rest, f, &mut *k)
                } else {
                    Ok(false)
                }
            }),
            Stmt::Nothing => self.body(rest, f, k),
        }
    }

    /// Whether a pattern position of `e` (a variable, or one inside an array or object
    /// literal) is unbound.
    fn has_unbound(&self, e: &Expr, f: &Frame<'a>) -> bool {
        match e {
            Expr::Var(s) => matches!(f.get(*s), Some(None)),
            Expr::Array(items) => items.iter().any(|i| self.has_unbound(i, f)),
            Expr::Object(fields) => fields.iter().any(|(_, v)| self.has_unbound(v, f)),
            _ => false,
        }
    }

    /// Matches `pattern` with `v`, binding its unbound variables, and calls `k` if it does.
    fn unify(
        &mut self,
        pattern: &'a Expr,
        v: Val<'a>,
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>) -> R,
    ) -> R {
        match pattern {
            Expr::Var(s) => match slot(f, *s)? {
                Some(bound) => {
                    if *bound == v {
                        k(self, f)
                    } else {
                        Ok(false)
                    }
                }
                None => {
                    set_slot(f, *s, Some(v))?;
                    let r = k(self, f);
                    set_slot(f, *s, None)?;
                    r
                }
            },
            Expr::Array(items) if self.has_unbound(pattern, f) => {
                let Some(values) = v.array_items()? else {
                    return Ok(false);
                };
                if values.len() != items.len() {
                    return Ok(false);
                }
                self.unify_all(items, &values, f, k)
            }
            Expr::Object(fields) if self.has_unbound(pattern, f) => {
                if v.count() != Some(fields.len()) || !v.is_object() {
                    return Ok(false);
                }
                let mut patterns = Vec::with_capacity(fields.len());
                let mut values = Vec::with_capacity(fields.len());
                for (key, p) in fields {
                    let Expr::Lit(key @ (Lit::Null | Lit::Bool(_) | Lit::Num(_) | Lit::Str(_))) =
                        key
                    else {
                        return Err(Stop::Fallback("an object pattern with a computed key"));
                    };
                    match v.get(&lit(key))? {
                        Some(value) => values.push(value),
                        None => return Ok(false),
                    }
                    patterns.push(p);
                }
                self.unify_refs(&patterns, &values, f, k)
            }
            _ => self.expr(pattern, f, &mut |s, f, pv| {
                if pv == v { k(s, f) } else { Ok(false) }
            }),
        }
    }

    fn unify_all(
        &mut self,
        patterns: &'a [Expr],
        values: &[Val<'a>],
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>) -> R,
    ) -> R {
        match (patterns.split_first(), values.split_first()) {
            (Some((p, ps)), Some((v, vs))) => {
                self.unify(p, v.clone(), f, &mut |s, f| s.unify_all(ps, vs, f, &mut *k))
            }
            _ => k(self, f),
        }
    }

    fn unify_refs(
        &mut self,
        patterns: &[&'a Expr],
        values: &[Val<'a>],
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>) -> R,
    ) -> R {
        match (patterns.split_first(), values.split_first()) {
            (Some((p, ps)), Some((v, vs))) => self.unify(p, v.clone(), f, &mut |s, f| {
                s.unify_refs(ps, vs, f, &mut *k)
            }),
            _ => k(self, f),
        }
    }

    /// Calls `k` with each value of `e`.
    fn expr(
        &mut self,
        e: &'a Expr,
        f: &mut Frame<'a>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>, Val<'a>) -> R,
    ) -> R {
        match e {
            Expr::Lit(Lit::Inexact) => Err(Stop::Fallback("a number past 64 bits")),
            Expr::Lit(l) => k(self, f, lit(l)),
            Expr::Var(s) => match slot(f, *s)?.clone() {
                Some(v) => k(self, f, v),
                None => Err(unbound()),
            },
            Expr::Input => {
                let input = self.input.clone();
                k(self, f, input)
            }
            Expr::Data => {
                let data = self.data.clone();
                k(self, f, data)
            }
            Expr::Rule(id) => match self.rule_value(*id)? {
                Some(v) => k(self, f, v),
                None => Ok(false),
            },
            Expr::Index(base, index) => self.expr(base, f, &mut |s, f, b| match index.as_ref() {
                Expr::Lit(l) if !matches!(l, Lit::Inexact) => match b.get(&lit(l))? {
                    Some(v) => k(s, f, v),
                    None => Ok(false),
                },
                Expr::Var(i) if slot(f, *i)?.is_none() => {
                    let i = *i;
                    b.entries(s.ordered > 0, |key, value| {
                        set_slot(f, i, Some(key))?;
                        let r = k(s, f, value);
                        set_slot(f, i, None)?;
                        r
                    })
                }
                // A pattern with unbound variables (`rule[{"msg": msg}]`): every key it
                // matches.
                index if s.has_unbound(index, f) => b.entries(s.ordered > 0, |key, value| {
                    s.unify(index, key, f, &mut |s, f| k(s, f, value.clone()))
                }),
                index => s.expr(index, f, &mut |s, f, i| match b.get(&i)? {
                    Some(v) => k(s, f, v),
                    None => Ok(false),
                }),
            }),
            Expr::Array(items) => self.exprs(items, f, &mut Vec::new(), &mut |s, f, values| {
                k(s, f, Val::Array(Rc::new(values.to_vec())))
            }),
            Expr::Set(items) => self.exprs(items, f, &mut Vec::new(), &mut |s, f, values| {
                k(s, f, Val::Set(Rc::new(values.iter().cloned().collect())))
            }),
            Expr::Object(fields) => self.fields(fields, f, &mut Vec::new(), &mut |s, f, pairs| {
                let map: BTreeMap<Val<'a>, Val<'a>> = pairs.iter().cloned().collect();
                k(s, f, Val::Object(Rc::new(map)))
            }),
            Expr::ArrayCompr(term, body) => {
                let mut out = Vec::new();
                self.ordered += 1;
                let searched = self.body(body, f, &mut |s, f| {
                    s.expr(term, f, &mut |_, _, v| {
                        out.push(v);
                        Ok(false)
                    })
                });
                self.ordered -= 1;
                searched?;
                k(self, f, Val::Array(Rc::new(out)))
            }
            Expr::SetCompr(term, body) => {
                let mut out = Members::default();
                self.body(body, f, &mut |s, f| {
                    s.expr(term, f, &mut |_, _, v| {
                        out.insert(v);
                        Ok(false)
                    })
                })?;
                k(self, f, Val::Set(Rc::new(out)))
            }
            Expr::ObjectCompr(key, value, body) => {
                let mut out: BTreeMap<Val<'a>, Val<'a>> = BTreeMap::new();
                self.body(body, f, &mut |s, f| {
                    s.expr(key, f, &mut |s, f, kv| {
                        s.expr(value, f, &mut |_, _, vv| match out.get(&kv) {
                            Some(existing) if *existing != vv => Err(Stop::Fallback(
                                "an object comprehension with two values for one key",
                            )),
                            Some(_) => Ok(false),
                            None => {
                                out.insert(kv.clone(), vv);
                                Ok(false)
                            }
                        })
                    })
                })?;
                k(self, f, Val::Object(Rc::new(out)))
            }
            Expr::Call(callee, args) => {
                let callee = *callee;
                self.exprs(args, f, &mut Vec::new(), &mut |s, f, values| {
                    let result = match callee {
                        Callee::Builtin(b) => b.call(values)?,
                        Callee::Function(id, site) => s.call_function(id, site, values)?,
                    };
                    match result {
                        Some(v) => k(s, f, v),
                        None => Ok(false),
                    }
                })
            }
            Expr::Compare(op, a, b) => self.expr(a, f, &mut |s, f, va| {
                s.expr(b, f, &mut |s, f, vb| {
                    let c = va.cmp(&vb);
                    let holds = match op {
                        BoolOp::Eq => c == Ordering::Equal,
                        BoolOp::Ne => c != Ordering::Equal,
                        BoolOp::Lt => c == Ordering::Less,
                        BoolOp::Le => c != Ordering::Greater,
                        BoolOp::Gt => c == Ordering::Greater,
                        BoolOp::Ge => c != Ordering::Less,
                    };
                    k(s, f, Val::Bool(holds))
                })
            }),
            Expr::Arith(op, a, b) => self.expr(a, f, &mut |s, f, va| {
                s.expr(b, f, &mut |s, f, vb| match arith(op, &va, &vb)? {
                    Some(v) => k(s, f, v),
                    None => Ok(false),
                })
            }),
            Expr::SetOp(op, a, b) => self.expr(a, f, &mut |s, f, va| {
                s.expr(b, f, &mut |s, f, vb| {
                    let (Val::Set(x), Val::Set(y)) = (&va, &vb) else {
                        return Err(Stop::Fallback("| or & of values that are not sets"));
                    };
                    let out = match op {
                        BinOp::Union => x.union(y),
                        BinOp::Intersection => x.intersection(y),
                    };
                    k(s, f, Val::Set(Rc::new(out)))
                })
            }),
            Expr::Neg(a) => self.expr(a, f, &mut |s, f, v| match v {
                Val::Num(Num::Int(i)) => match i.checked_neg() {
                    Some(n) => k(s, f, Val::Num(Num::Int(n))),
                    None => Err(Stop::Fallback("an integer overflow")),
                },
                Val::Num(Num::Float(x)) => k(s, f, Val::Num(Num::Float(-x))),
                _ => Err(Stop::Fallback("the negation of a value that is no number")),
            }),
            Expr::Member(key, value, collection) => self.expr(value, f, &mut |s, f, v| {
                s.expr(collection, f, &mut |s, f, c| match key {
                    None => {
                        let mut found = false;
                        if c.is_set() {
                            found = c.get(&v)?.is_some();
                        } else {
                            c.entries(false, |_, e| {
                                found = e == v;
                                Ok(found)
                            })?;
                        }
                        k(s, f, Val::Bool(found))
                    }
                    Some(key) => s.expr(key, f, &mut |s, f, kv| {
                        if c.is_set() {
                            return Err(Stop::Fallback("key, value in a set"));
                        }
                        let found = c.get(&kv)?.is_some_and(|e| e == v);
                        k(s, f, Val::Bool(found))
                    }),
                })
            }),
        }
    }

    /// Calls `k` with each combination of the values of `items`.
    fn exprs(
        &mut self,
        items: &'a [Expr],
        f: &mut Frame<'a>,
        acc: &mut Vec<Val<'a>>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>, &[Val<'a>]) -> R,
    ) -> R {
        let Some(item) = items.get(acc.len()) else {
            return k(self, f, acc);
        };
        self.expr(item, f, &mut |s, f, v| {
            acc.push(v);
            let r = s.exprs(items, f, &mut *acc, &mut *k);
            acc.pop();
            r
        })
    }

    fn fields(
        &mut self,
        fields: &'a [(Expr, Expr)],
        f: &mut Frame<'a>,
        acc: &mut Vec<(Val<'a>, Val<'a>)>,
        k: &mut dyn FnMut(&mut Self, &mut Frame<'a>, &Fields<'a>) -> R,
    ) -> R {
        let Some((key, value)) = fields.get(acc.len()) else {
            return k(self, f, acc);
        };
        self.expr(key, f, &mut |s, f, kv| {
            s.expr(value, f, &mut |s, f, vv| {
                acc.push((kv.clone(), vv));
                let r = s.fields(fields, f, &mut *acc, &mut *k);
                acc.pop();
                r
            })
        })
    }
}

/// `a op b`: integers exactly, set difference; anything else (floats, whose printing must
/// match OPA's, division with a remainder, overflow, other kinds) is left to regorus.
fn arith<'a>(op: &ArithOp, a: &Val<'a>, b: &Val<'a>) -> Result<Option<Val<'a>>, Stop> {
    let inexact = || Stop::Fallback("arithmetic beyond the integers");
    match (a, b) {
        (Val::Set(x), Val::Set(y)) if matches!(op, ArithOp::Sub) => {
            Ok(Some(Val::Set(Rc::new(x.difference(y)))))
        }
        (Val::Num(x), Val::Num(y)) => {
            let (Some(x), Some(y)) = (int(*x), int(*y)) else {
                return Err(inexact());
            };
            let out = match op {
                ArithOp::Add => x.checked_add(y),
                ArithOp::Sub => x.checked_sub(y),
                ArithOp::Mul => x.checked_mul(y),
                ArithOp::Div if y != 0 && x.checked_rem(y) == Some(0) => x.checked_div(y),
                ArithOp::Mod if y != 0 => x.checked_rem(y),
                ArithOp::Div | ArithOp::Mod => None,
            };
            out.map(|n| Some(Val::Num(Num::Int(n)))).ok_or_else(inexact)
        }
        _ => Err(Stop::Fallback("arithmetic on values that are not numbers")),
    }
}

fn int(n: Num) -> Option<i64> {
    match n {
        Num::Int(i) => Some(i),
        Num::Float(_) => None,
    }
}
