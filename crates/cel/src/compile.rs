//! Lowers a parsed (and checked) AST into the executable [`Node`] tree.
//!
//! Work that does not depend on the input happens here, once: names are resolved to
//! activation slots or comprehension locals, functions to their implementations, constant
//! subexpressions are folded, constant string lists on the right of `in` become hash sets,
//! and constant `matches` patterns are compiled.

use std::sync::Arc;

use crate::check::resolve::{self, Resolution};
use crate::env::Env;
use crate::error::{CompileError, EvalError};
use crate::eval::activation::Activation;
use crate::eval::program::Program;
use crate::eval::{
    Arith, Comprehension as CompNode, Ctx, LazyRead, LocalVar, MEMO_SLOTS, MapEntryNode, Node,
    Step, StrTest, StringSet, StructFieldNode, StructNode,
};
use crate::library::Impl;
use crate::ops::Relation;
use crate::syntax::ast::{self, Expr, ExprKind, Literal, ops};
use crate::types::Type;
use crate::value::{TypeValue, Value};

/// Compiles a parsed expression. `result_type` is what the checker deduced (or `dyn`).
pub fn compile(
    env: &Env,
    _source: &str,
    expr: &Expr,
    result_type: Type,
) -> Result<Program, CompileError> {
    let mut c = Compiler {
        env,
        scopes: Vec::new(),
        global_memo: Vec::new(),
        nondeterministic: std::cell::Cell::new(false),
    };
    let root = c.lower(expr);
    Ok(Program {
        root,
        result_type,
        presence_test_cost: u64::from(env.presence_test_has_cost),
    })
}

/// Names visible inside one comprehension.
struct Frame<'e> {
    iter: Option<&'e str>,
    iter2: Option<&'e str>,
    accu: &'e str,
    /// Field paths on this comprehension's variables that have a memo slot.
    memo: Vec<(LocalVar, Vec<Box<str>>)>,
    /// The range as a dotted name, for a one-variable fold over a plain path.
    range_path: Option<String>,
    /// The body reads `range[iter]`.
    needs_value: bool,
}

struct Compiler<'e> {
    env: &'e Env,
    scopes: Vec<Frame<'e>>,
    /// Field paths on declared variables that have a slot in the evaluation's memo.
    global_memo: Vec<(usize, Vec<Box<str>>)>,
    /// Set by [`Compiler::call`] when it lowers a call to a nondeterministic function, which
    /// [`Compiler::lower`] then leaves unfolded.
    nondeterministic: std::cell::Cell<bool>,
}

/// Memo slots for each prefix of `fields` on `key`, first come first served.
fn assign_slots<K: PartialEq + Copy>(
    registry: &mut Vec<(K, Vec<Box<str>>)>,
    key: K,
    fields: &[Box<str>],
) -> Box<[Option<u8>]> {
    (1..=fields.len())
        .map(|n| {
            let prefix = fields.get(..n).unwrap_or(&[]);
            let at = registry
                .iter()
                .position(|(k, p)| *k == key && p.as_slice() == prefix);
            let at = match at {
                Some(at) => Some(at),
                None if registry.len() < MEMO_SLOTS => {
                    registry.push((key, prefix.to_vec()));
                    Some(registry.len() - 1)
                }
                None => None,
            };
            at.and_then(|i| u8::try_from(i).ok())
        })
        .collect()
}

fn boxed(n: Node) -> Box<Node> {
    Box::new(n)
}

impl<'e> Compiler<'e> {
    fn lower(&mut self, e: &'e Expr) -> Node {
        let node = self.lower_inner(e);
        if self.nondeterministic.take() {
            return node;
        }
        fold(node)
    }

    fn lower_inner(&mut self, e: &'e Expr) -> Node {
        match &e.kind {
            ExprKind::Literal(l) => Node::Const(literal(l)),
            ExprKind::Ident(name) => self.lower_name(e, name),
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                if !*test_only
                    && !*optional
                    && let Some(n) = self.resolve_global_chain(e)
                {
                    return n;
                }
                let operand = self.lower(operand);
                if !*test_only && !*optional {
                    return self.selects(operand, &[field.as_str()]);
                }
                if let Node::LazyAll(_) = operand {
                    let read = if *test_only {
                        LazyRead::Has
                    } else {
                        LazyRead::Optional
                    };
                    return self.lazy(field, read);
                }
                if *test_only {
                    match operand {
                        base @ (Node::Var { .. } | Node::Local { .. }) => {
                            return self.has_path(base, Vec::new(), field);
                        }
                        Node::Path { base, fields, .. } => {
                            return self.has_path(*base, fields.into_vec(), field);
                        }
                        _ => {}
                    }
                }
                let operand = boxed(operand);
                let field: Box<str> = field.as_str().into();
                if *test_only {
                    Node::Has { operand, field }
                } else if *optional {
                    Node::OptSelect { operand, field }
                } else {
                    Node::Select { operand, field }
                }
            }
            ExprKind::Call {
                target,
                function,
                args,
            } => self.lower_call(target.as_deref(), function, args),
            ExprKind::List {
                elements,
                optional_indices,
            } => {
                let elements: Vec<Node> = elements.iter().map(|x| self.lower(x)).collect();
                let optional = if optional_indices.is_empty() {
                    Vec::new()
                } else {
                    let mut mask = vec![false; elements.len()];
                    for &i in optional_indices {
                        if let Some(m) = mask.get_mut(i as usize) {
                            *m = true;
                        }
                    }
                    mask
                };
                Node::List { elements, optional }
            }
            ExprKind::Map { entries } => Node::Map(
                entries
                    .iter()
                    .map(|en| MapEntryNode {
                        key: self.lower(&en.key),
                        value: self.lower(&en.value),
                        optional: en.optional,
                    })
                    .collect(),
            ),
            ExprKind::Struct { type_name, fields } => self.lower_struct(type_name, fields),
            ExprKind::Comprehension(c) => self.lower_comprehension(c),
        }
    }

    /// `Name{...}`: messages of the types a library registered ([`MessageTypes`]) are
    /// built; any other message is an error at run time.
    ///
    /// [`MessageTypes`]: crate::value::MessageTypes
    fn lower_struct(&mut self, type_name: &str, fields: &'e [ast::StructField]) -> Node {
        let resolved = self.env.registry().message_types().and_then(|types| {
            resolve::candidate_names(self.env.container(), type_name)
                .into_iter()
                .find(|c| types.has_type(c))
                .map(|name| (types, name))
        });
        let Some((types, name)) = resolved else {
            return Node::Fail(EvalError::new(format!(
                "unknown type: {type_name} (message construction is not supported)"
            )));
        };
        let fields = fields
            .iter()
            .map(|f| StructFieldNode {
                name: f.name.as_str().into(),
                value: self.lower(&f.value),
                optional: f.optional,
            })
            .collect();
        Node::Struct(Box::new(StructNode {
            types,
            type_name: name.into(),
            fields,
        }))
    }

    /// A bare identifier: a comprehension variable, a declared variable, or a type name.
    fn lower_name(&mut self, e: &'e Expr, name: &'e str) -> Node {
        if !name.starts_with('.')
            && let Some(local) = self.local(name)
        {
            return local;
        }
        if let Some(n) = self.resolve_global_chain(e) {
            return n;
        }
        Node::Fail(EvalError::new(format!(
            "undeclared reference to '{}' (in container '{}')",
            name.trim_start_matches('.'),
            self.env.container()
        )))
    }

    /// Resolves an identifier or plain select chain whose longest prefix is a global name
    /// (the checker's rules, `check::resolve`), applying the remaining fields as selections.
    fn resolve_global_chain(&mut self, e: &Expr) -> Option<Node> {
        let is_local = |n: &str| self.local(n).is_some();
        let (resolution, remaining) = resolve::resolve_select_chain(self.env, e, &is_local)?;
        let mut fields = Vec::with_capacity(remaining);
        let mut node = e;
        for _ in 0..remaining {
            match &node.kind {
                ExprKind::Select { operand, field, .. } => {
                    fields.push(field.as_str());
                    node = operand;
                }
                _ => return None,
            }
        }
        fields.reverse();
        let base = match resolution {
            Resolution::Variable { ty, .. } if self.env.is_lazy_namespace(&ty) => {
                return Some(match fields.split_first() {
                    Some((first, rest)) => {
                        let base = self.lazy(first, LazyRead::Value);
                        self.selects(base, rest)
                    }
                    None => Node::LazyAll(
                        self.env
                            .variables()
                            .lazy_iter()
                            .map(|(n, _)| n.into())
                            .collect(),
                    ),
                });
            }
            Resolution::Variable { name, slot, .. } => Node::Var {
                slot,
                name: name.into(),
            },
            Resolution::TypeName { name, .. } => match type_constant(&name).or_else(|| {
                let named = self.env.registry().has_type(&name)
                    || self.env.registry().has_message_type(&name);
                named.then(|| TypeValue::Named(name.as_str().into()))
            }) {
                Some(t) => Node::Const(Value::Type(t)),
                None => Node::Fail(EvalError::new(format!("unknown variable: {name}"))),
            },
        };
        Some(self.selects(base, &fields))
    }

    /// A read of the lazy variable `variables.<name>`.
    fn lazy(&self, name: &str, read: LazyRead) -> Node {
        match self.env.variables().lazy_slot(name) {
            Some(slot) => Node::Lazy {
                slot,
                name: name.into(),
                read,
            },
            None => Node::Fail(EvalError::no_such_key(name)),
        }
    }

    /// Field selections on `node`: one path node over a variable (extending an existing
    /// path), or plain selections on anything else.
    fn selects(&mut self, node: Node, fields: &[&str]) -> Node {
        if fields.is_empty() {
            return node;
        }
        let (base, all) = match node {
            base @ (Node::Var { .. } | Node::Local { .. }) => {
                (base, fields.iter().map(|f| Box::<str>::from(*f)).collect())
            }
            Node::Path {
                base, fields: head, ..
            } => (
                *base,
                head.iter()
                    .cloned()
                    .chain(fields.iter().map(|f| Box::<str>::from(*f)))
                    .collect::<Vec<_>>(),
            ),
            mut node => {
                for f in fields {
                    node = Node::Select {
                        operand: boxed(node),
                        field: (*f).into(),
                    };
                }
                return node;
            }
        };
        let memo = self.memo_slots(&base, &all);
        Node::Path {
            base: boxed(base),
            fields: all.into_boxed_slice(),
            memo,
        }
    }

    fn has_path(&mut self, base: Node, mut fields: Vec<Box<str>>, last: &str) -> Node {
        fields.push(last.into());
        let memo = self.memo_slots(&base, &fields);
        Node::HasPath {
            base: boxed(base),
            fields: fields.into_boxed_slice(),
            memo,
        }
    }

    /// Memo slots for each prefix of a path on a comprehension variable (first come, first
    /// served, up to `MEMO_SLOTS` per comprehension).
    fn memo_slots(&mut self, base: &Node, fields: &[Box<str>]) -> Box<[Option<u8>]> {
        if let Node::Var { slot, .. } = base {
            return assign_slots(&mut self.global_memo, *slot, fields);
        }
        let Node::Local {
            up,
            var: var @ (LocalVar::Iter | LocalVar::Iter2),
        } = base
        else {
            return Box::new([]);
        };
        let depth = self.scopes.len();
        let Some(frame) = depth
            .checked_sub(1 + *up as usize)
            .and_then(|i| self.scopes.get_mut(i))
        else {
            return Box::new([]);
        };
        assign_slots(&mut frame.memo, *var, fields)
    }

    fn local(&self, name: &str) -> Option<Node> {
        for (up, frame) in self.scopes.iter().rev().enumerate() {
            let up = u32::try_from(up).unwrap_or(u32::MAX);
            if frame.iter == Some(name) {
                return Some(Node::Local {
                    up,
                    var: LocalVar::Iter,
                });
            }
            if frame.iter2 == Some(name) {
                return Some(Node::Local {
                    up,
                    var: LocalVar::Iter2,
                });
            }
            if frame.accu == name {
                return Some(Node::Local {
                    up,
                    var: LocalVar::Accu,
                });
            }
        }
        None
    }

    fn lower_call(
        &mut self,
        target: Option<&'e Expr>,
        function: &'e str,
        args: &'e [Expr],
    ) -> Node {
        if target.is_none()
            && let Some(n) = self.lower_operator(function, args)
        {
            return n;
        }
        // `ns.f(x)`: a namespaced global function, unless `ns` is a variable.
        if let Some(t) = target {
            let is_local = |n: &str| self.local(n).is_some();
            if let Some((full, _)) = resolve::namespaced_function(self.env, t, function, &is_local)
            {
                let nodes: Vec<Node> = args.iter().map(|a| self.lower(a)).collect();
                return self.call(&full, false, nodes);
            }
        }
        if let Some(n) = self.lower_string_test(target, function, args) {
            return n;
        }
        if function == "matches"
            && let Some(n) = self.lower_matches(target, args)
        {
            return n;
        }
        let mut nodes = Vec::with_capacity(args.len() + 1);
        if let Some(t) = target {
            nodes.push(self.lower(t));
        }
        nodes.extend(args.iter().map(|a| self.lower(a)));
        if target.is_none()
            && let Some((full, _)) = resolve::resolve_function(self.env, function)
        {
            return self.call(&full, false, nodes);
        }
        self.call(function, target.is_some(), nodes)
    }

    /// `s.startsWith('lit')` and friends: borrowed operands, no call overhead.
    fn lower_string_test(
        &mut self,
        target: Option<&'e Expr>,
        function: &str,
        args: &'e [Expr],
    ) -> Option<Node> {
        let test = match function {
            "startsWith" => StrTest::StartsWith,
            "endsWith" => StrTest::EndsWith,
            "contains" => StrTest::Contains,
            _ => return None,
        };
        let (Some(subject), [arg]) = (target, args) else {
            return None;
        };
        let ExprKind::Literal(Literal::String(literal)) = &arg.kind else {
            return None;
        };
        Some(Node::StrTest(
            test,
            boxed(self.lower(subject)),
            literal.as_str().into(),
        ))
    }

    /// `s.matches('lit')` or `matches(s, 'lit')`: compile the pattern now.
    fn lower_matches(&mut self, target: Option<&'e Expr>, args: &'e [Expr]) -> Option<Node> {
        let (subject, pattern) = match (target, args) {
            (Some(t), [p]) => (t, p),
            (None, [s, p]) => (s, p),
            _ => return None,
        };
        let ExprKind::Literal(Literal::String(pattern)) = &pattern.kind else {
            return None;
        };
        match crate::library::re2::compile_regex(pattern) {
            Ok(re) => {
                let pattern_len = u64::try_from(pattern.chars().count()).unwrap_or(u64::MAX);
                Some(Node::Matches(
                    boxed(self.lower(subject)),
                    Arc::new(re),
                    pattern_len,
                ))
            }
            Err(_) => None,
        }
    }

    fn call(&self, function: &str, receiver: bool, mut args: Vec<Node>) -> Node {
        let key = (receiver, args.len());
        let declared = self.env.registry().get(function);
        let imp = declared.and_then(|f| f.impls.get(&key).copied());
        let cost = declared.and_then(|f| f.costs.get(&key).copied());
        if declared.is_some_and(|f| f.nondeterministic) {
            self.nondeterministic.set(true);
        }
        let Some(imp) = imp else {
            return Node::Fail(EvalError::new(format!(
                "no such overload: {function}/{}{}",
                if receiver { "receiver/" } else { "" },
                args.len()
            )));
        };
        match (imp, args.len()) {
            (Impl::Unary(f), 1) => match args.pop() {
                Some(a) => Node::Call1(f, cost, boxed(a)),
                None => Node::Fail(EvalError::new("internal error: arity")),
            },
            (Impl::Binary(f), 2) => match <[Node; 2]>::try_from(args) {
                Ok(a) => Node::Call2(f, cost, Box::new(a)),
                Err(_) => Node::Fail(EvalError::new("internal error: arity")),
            },
            (Impl::Ternary(f), 3) => match <[Node; 3]>::try_from(args) {
                Ok(a) => Node::Call3(f, cost, Box::new(a)),
                Err(_) => Node::Fail(EvalError::new("internal error: arity")),
            },
            (Impl::Nary(f), _) => Node::CallN(f, cost, args),
            _ => Node::Fail(EvalError::new(format!(
                "no such overload: {function}/{}",
                args.len()
            ))),
        }
    }

    fn lower_operator(&mut self, function: &str, args: &'e [Expr]) -> Option<Node> {
        let n = match (function, args) {
            (ops::LOGICAL_AND, [a, b]) => Node::And(self.chain(ops::LOGICAL_AND, a, b)),
            (ops::LOGICAL_OR, [a, b]) => Node::Or(self.chain(ops::LOGICAL_OR, a, b)),
            (ops::LOGICAL_NOT, [a]) => Node::Not(boxed(self.lower(a))),
            (ops::NOT_STRICTLY_FALSE, [a]) => Node::NotStrictlyFalse(boxed(self.lower(a))),
            (ops::CONDITIONAL, [c, t, f]) => {
                Node::Cond(Box::new([self.lower(c), self.lower(t), self.lower(f)]))
            }
            (ops::EQUALS, [a, b]) => Node::Eq(boxed(self.lower(a)), boxed(self.lower(b))),
            (ops::NOT_EQUALS, [a, b]) => Node::Ne(boxed(self.lower(a)), boxed(self.lower(b))),
            (ops::LESS, [a, b]) => self.rel(Relation::Less, a, b),
            (ops::LESS_EQUALS, [a, b]) => self.rel(Relation::LessEquals, a, b),
            (ops::GREATER, [a, b]) => self.rel(Relation::Greater, a, b),
            (ops::GREATER_EQUALS, [a, b]) => self.rel(Relation::GreaterEquals, a, b),
            (ops::ADD, [a, b]) => self.arith(Arith::Add, a, b),
            (ops::SUBTRACT, [a, b]) => self.arith(Arith::Subtract, a, b),
            (ops::MULTIPLY, [a, b]) => self.arith(Arith::Multiply, a, b),
            (ops::DIVIDE, [a, b]) => self.arith(Arith::Divide, a, b),
            (ops::MODULO, [a, b]) => self.arith(Arith::Modulo, a, b),
            (ops::NEGATE, [a]) => Node::Neg(boxed(self.lower(a))),
            (ops::INDEX, [a, b]) => self.lower_index(a, b),
            (ops::OPT_INDEX, [a, b]) => Node::OptIndex(boxed(self.lower(a)), boxed(self.lower(b))),
            (ops::IN, [a, b]) => self.lower_in(a, b),
            _ => return None,
        };
        Some(n)
    }

    /// `a[b]`; inside a one-variable fold over `a` keyed by its own variable `b`, the value
    /// being visited (see `Node::RangeValue`).
    fn lower_index(&mut self, a: &'e Expr, b: &'e Expr) -> Node {
        let index = Node::Index(boxed(self.lower(a)), boxed(self.lower(b)));
        let reads_range = match (self.scopes.last(), &b.kind) {
            (Some(frame), ExprKind::Ident(key)) => {
                frame.iter == Some(key.as_str())
                    && frame.range_path.is_some()
                    && resolve::qualified_name(a) == frame.range_path
            }
            _ => false,
        };
        if !reads_range {
            return index;
        }
        // What the index costs: the path, the key variable, the `_[_]` call.
        let path_cost = match &index {
            Node::Index(c, _) => match &**c {
                Node::Path { fields, .. } => 1 + fields.len() as u64,
                Node::Var { .. } | Node::Local { .. } => 1,
                _ => return index,
            },
            _ => return index,
        };
        if let Some(frame) = self.scopes.last_mut() {
            frame.needs_value = true;
        }
        Node::RangeValue {
            index: boxed(index),
            cost: path_cost + 2,
        }
    }

    /// The terms of a chain of one logical operator (`a && b && c`, however the parser
    /// grouped it), in source order.
    fn chain(&mut self, op: &str, a: &'e Expr, b: &'e Expr) -> Box<[Node]> {
        let mut terms = Vec::new();
        self.chain_terms(op, a, &mut terms);
        self.chain_terms(op, b, &mut terms);
        terms.into_boxed_slice()
    }

    fn chain_terms(&mut self, op: &str, e: &'e Expr, terms: &mut Vec<Node>) {
        if let Some([a, b]) = call_args(e, op) {
            self.chain_terms(op, a, terms);
            self.chain_terms(op, b, terms);
            return;
        }
        terms.push(self.lower(e));
    }

    fn rel(&mut self, r: Relation, a: &'e Expr, b: &'e Expr) -> Node {
        Node::Rel(r, boxed(self.lower(a)), boxed(self.lower(b)))
    }

    fn arith(&mut self, op: Arith, a: &'e Expr, b: &'e Expr) -> Node {
        Node::Arith(op, boxed(self.lower(a)), boxed(self.lower(b)))
    }

    fn lower_in(&mut self, a: &'e Expr, b: &'e Expr) -> Node {
        let elem = boxed(self.lower(a));
        let container = self.lower(b);
        if let Node::Const(Value::List(list))
        | Node::Folded {
            value: Value::List(list),
            ..
        } = &container
        {
            let strings: Option<StringSet> = list
                .iter()
                .map(|v| v.as_str().map(Box::<str>::from))
                .collect();
            if let Some(set) = strings
                && !set.is_empty()
            {
                return Node::InStrings(elem, Arc::new(set), boxed(container));
            }
        }
        Node::In(elem, boxed(container))
    }

    fn lower_comprehension(&mut self, c: &'e ast::Comprehension) -> Node {
        let iter_range = self.lower(&c.iter_range);
        let accu_init = self.lower(&c.accu_init);
        self.scopes.push(Frame {
            iter: Some(c.iter_var.as_str()),
            iter2: c.iter_var2.as_deref(),
            accu: c.accu_var.as_str(),
            memo: Vec::new(),
            range_path: range_path(c),
            needs_value: false,
        });
        if let Some(quantifier) = self.lower_quantifier(c) {
            let (memo_used, needs_value) = self
                .scopes
                .pop()
                .map_or((0, false), |f| (f.memo.len(), f.needs_value));
            return Node::Comprehension(Box::new(CompNode {
                iter_range,
                two_vars: c.iter_var2.is_some(),
                memo_used,
                needs_value,
                accu_init,
                loop_condition: None,
                step: quantifier,
                result: Node::Const(Value::Null),
            }));
        }
        let loop_condition = match &c.loop_condition.kind {
            ExprKind::Literal(Literal::Bool(true)) => None,
            _ => Some(self.lower(&c.loop_condition)),
        };
        let step = self.lower_step(
            &c.loop_step,
            &c.accu_var,
            &c.iter_var,
            c.iter_var2.as_deref(),
        );
        let (memo_used, needs_value) = self
            .scopes
            .pop()
            .map_or((0, false), |f| (f.memo.len(), f.needs_value));
        self.scopes.push(Frame {
            iter: None,
            iter2: None,
            accu: c.accu_var.as_str(),
            memo: Vec::new(),
            range_path: None,
            needs_value: false,
        });
        let result = self.lower(&c.result);
        self.scopes.pop();
        Node::Comprehension(Box::new(CompNode {
            iter_range,
            two_vars: c.iter_var2.is_some(),
            memo_used,
            needs_value,
            accu_init,
            loop_condition,
            step,
            result,
        }))
    }

    /// Recognises the folds of `all` and `exists` (one or two variables), which then run as
    /// short-circuiting loops with the same results and costs.
    fn lower_quantifier(&mut self, c: &'e ast::Comprehension) -> Option<Step> {
        let accu = c.accu_var.as_str();
        if c.iter_var == accu || c.iter_var2.as_deref() == Some(accu) || !is_ident(&c.result, accu)
        {
            return None;
        }
        let (init, op) = match &c.accu_init.kind {
            ExprKind::Literal(Literal::Bool(true)) => (true, ops::LOGICAL_AND),
            ExprKind::Literal(Literal::Bool(false)) => (false, ops::LOGICAL_OR),
            _ => return None,
        };
        // all: @not_strictly_false(@result); exists: @not_strictly_false(!@result).
        let Some([cond_arg]) = call_args(&c.loop_condition, ops::NOT_STRICTLY_FALSE) else {
            return None;
        };
        let cond_ok = if init {
            is_ident(cond_arg, accu)
        } else {
            matches!(call_args(cond_arg, ops::LOGICAL_NOT), Some([a]) if is_ident(a, accu))
        };
        if !cond_ok {
            return None;
        }
        let Some([left, predicate]) = call_args(&c.loop_step, op) else {
            return None;
        };
        if !is_ident(left, accu) {
            return None;
        }
        let predicate = self.lower(predicate);
        Some(if init {
            Step::All(predicate)
        } else {
            Step::Exists(predicate)
        })
    }

    /// Recognises `@result + [e]` and `c ? @result + [e] : @result`.
    fn lower_step(&mut self, step: &'e Expr, accu: &str, iter: &str, iter2: Option<&str>) -> Step {
        let shadowed = iter == accu || iter2 == Some(accu);
        if !shadowed {
            if let Some(elem) = append_of(step, accu) {
                return Step::Append(self.lower(elem));
            }
            if let Some([c, t, f]) = call_args(step, ops::CONDITIONAL)
                && is_ident(f, accu)
                && let Some(elem) = append_of(t, accu)
            {
                return Step::AppendIf(self.lower(c), self.lower(elem));
            }
            if let Some((filter, key, value)) = map_insert_of(step, accu) {
                return Step::MapInsert {
                    filter: filter.map(|f| self.lower(f)),
                    key: key.map(|k| self.lower(k)),
                    value: self.lower(value),
                };
            }
        }
        Step::Generic(self.lower(step))
    }
}

/// The range of a one-variable fold as a dotted name, when it is a plain path whose root is
/// not one of the fold's own variables.
fn range_path(c: &ast::Comprehension) -> Option<String> {
    if c.iter_var2.is_some() {
        return None;
    }
    let name = resolve::qualified_name(&c.iter_range)?;
    let root = name.split('.').next().unwrap_or(&name);
    (root != c.iter_var && root != c.accu_var).then_some(name)
}

fn is_ident(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == name)
}

/// The arguments of `e` when it is a global call of `function` (operators included).
fn call_args<'x>(e: &'x Expr, function: &str) -> Option<&'x [Expr]> {
    match &e.kind {
        ExprKind::Call {
            target: None,
            function: f,
            args,
        } if f == function => Some(args),
        _ => None,
    }
}

/// The step of `transformMap`/`transformMapEntry`: `cel.@mapInsert(accu, k, v)` or
/// `cel.@mapInsert(accu, e)`, possibly as `f ? cel.@mapInsert(...) : accu`; gives the
/// filter, the key (absent in the entry-map form) and the value.
#[allow(clippy::type_complexity)]
fn map_insert_of<'x>(
    e: &'x Expr,
    accu: &str,
) -> Option<(Option<&'x Expr>, Option<&'x Expr>, &'x Expr)> {
    let insert = |e: &'x Expr| -> Option<(Option<&'x Expr>, &'x Expr)> {
        match call_args(e, crate::library::ext::comprehensions::MAP_INSERT)? {
            [a, k, v] if is_ident(a, accu) => Some((Some(k), v)),
            [a, m] if is_ident(a, accu) => Some((None, m)),
            _ => None,
        }
    };
    if let Some((k, v)) = insert(e) {
        return Some((None, k, v));
    }
    let Some([c, t, f]) = call_args(e, ops::CONDITIONAL) else {
        return None;
    };
    if !is_ident(f, accu) {
        return None;
    }
    let (k, v) = insert(t)?;
    Some((Some(c), k, v))
}

/// `accu + [elem]` → `elem`.
fn append_of<'x>(e: &'x Expr, accu: &str) -> Option<&'x Expr> {
    let Some([a, b]) = call_args(e, ops::ADD) else {
        return None;
    };
    if !is_ident(a, accu) {
        return None;
    }
    match &b.kind {
        ExprKind::List {
            elements,
            optional_indices,
        } if optional_indices.is_empty() => match elements.as_slice() {
            [elem] => Some(elem),
            _ => None,
        },
        _ => None,
    }
}

/// Type names usable as values (`type(1) == int`).
pub fn type_constant(name: &str) -> Option<TypeValue> {
    Some(match name {
        "int" => TypeValue::Int,
        "uint" => TypeValue::Uint,
        "double" => TypeValue::Double,
        "bool" => TypeValue::Bool,
        "string" => TypeValue::String,
        "bytes" => TypeValue::Bytes,
        "list" => TypeValue::List,
        "map" => TypeValue::Map,
        "null_type" => TypeValue::Null,
        "type" => TypeValue::Type,
        "google.protobuf.Timestamp" => TypeValue::Timestamp,
        "google.protobuf.Duration" => TypeValue::Duration,
        "optional_type" => TypeValue::Optional,
        _ => return None,
    })
}

fn literal(l: &Literal) -> Value<'static> {
    match l {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(i) => Value::Int(*i),
        Literal::Uint(u) => Value::Uint(*u),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::string(s.clone()),
        Literal::Bytes(b) => Value::bytes(b.clone()),
    }
}

/// Replaces a node whose inputs are all constants by its value, when evaluating it cannot
/// fail. Failing subexpressions stay as they are so the error surfaces at run time, where
/// `&&`, `||` and `?:` may still absorb it.
fn fold(node: Node) -> Node {
    let foldable = match &node {
        Node::Const(_)
        | Node::Folded { .. }
        | Node::Var { .. }
        | Node::Local { .. }
        | Node::Lazy { .. }
        | Node::LazyAll(_)
        | Node::Fail(_) => false,
        Node::Comprehension(_) | Node::InStrings(..) => false,
        // `has()` is left alone: its cost depends on the environment's presence-test setting.
        Node::Has { .. } => false,
        Node::Select { operand, .. } | Node::OptSelect { operand, .. } => is_const(operand),
        Node::Path { .. } | Node::HasPath { .. } | Node::RangeValue { .. } => false,
        Node::And(terms) | Node::Or(terms) => terms.iter().all(is_const),
        Node::Index(a, b)
        | Node::OptIndex(a, b)
        | Node::Eq(a, b)
        | Node::Ne(a, b)
        | Node::Rel(_, a, b)
        | Node::Arith(_, a, b)
        | Node::In(a, b) => is_const(a) && is_const(b),
        Node::Not(a) | Node::NotStrictlyFalse(a) | Node::Neg(a) | Node::Call1(_, _, a) => {
            is_const(a)
        }
        Node::Matches(a, ..) | Node::StrTest(_, a, _) => is_const(a),
        Node::Cond(p) => p.iter().all(is_const),
        Node::Call2(_, _, p) => p.iter().all(is_const),
        Node::Call3(_, _, p) => p.iter().all(is_const),
        Node::CallN(_, _, args) | Node::List { elements: args, .. } => args.iter().all(is_const),
        Node::Map(entries) => entries
            .iter()
            .all(|e| is_const(&e.key) && is_const(&e.value)),
        Node::Struct(s) => s.fields.iter().all(|f| is_const(&f.value)),
    };
    if !foldable {
        return node;
    }
    let act: Activation<'static> = Activation::empty();
    let ctx = Ctx::new(&act, u64::MAX, 1);
    match node.eval(&ctx) {
        Ok(value) => match ctx.cost.get() {
            0 => Node::Const(value),
            cost => Node::Folded { value, cost },
        },
        Err(_) => node,
    }
}

fn is_const(n: &Node) -> bool {
    matches!(n, Node::Const(_) | Node::Folded { .. })
}

impl Env {
    /// Parses, checks and compiles.
    pub fn compile(&self, source: &str) -> Result<Program, CompileError> {
        let expr = self.parse(source)?;
        let ty = crate::check::check(self, source, &expr)?;
        compile(self, source, &expr, ty)
    }

    /// Parses and compiles without type-checking (cel-spec's `disable_check`): type errors
    /// surface at run time instead.
    pub fn compile_unchecked(&self, source: &str) -> Result<Program, CompileError> {
        let expr = self.parse(source)?;
        compile(self, source, &expr, Type::Dyn)
    }
}
