//! Lowering regorus's parse of a set of modules into a [`Plan`]: names resolved once (a
//! body's variables into slots, rule and import names into rules, dotted calls into
//! builtins), only the rules the target reaches, and a refusal ([`Unsupported`]) for anything
//! the evaluator does not run exactly.

use std::collections::{HashMap, HashSet};

use regorus::Value;
use regorus::unstable::{
    AssignOp, Expr as Ast, Literal, LiteralStmt, Module, Query, Ref, Rule, RuleHead,
};

use super::builtins::Builtin;
use super::{Branch, Callee, Def, Expr, Kind, Lit, Num, Plan, RuleDef, Stmt};

/// Why a rule is left to regorus.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not lowered: {0}")]
pub struct Unsupported(pub String);

fn unsupported<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

/// Bodies longer than this, or expressions nested deeper, are left to regorus: the
/// evaluator recurses once per statement and per nesting level.
const MAX_STATEMENTS: usize = 256;
const MAX_DEPTH: usize = 64;

/// What a module's names mean.
struct ModuleScope {
    package: String,
    /// `import data.lib.x.f` as `f`, `import data.lib.x` as `x`: alias to path.
    imports: HashMap<String, String>,
}

pub(super) fn lower(modules: &[Ref<Module>], target: &str) -> Result<Plan, Unsupported> {
    let mut scopes = Vec::new();
    let mut by_path: HashMap<String, Vec<(usize, Ref<Rule>)>> = HashMap::new();
    for (m, module) in modules.iter().enumerate() {
        let package = format!("data.{}", dotted(&module.package.refr)?);
        let mut imports = HashMap::new();
        for import in &module.imports {
            let path = dotted(&import.refr)?;
            if path == "rego.v1" || path == "future.keywords" || path.starts_with("future.") {
                continue;
            }
            if !path.starts_with("data.") {
                return unsupported(format!("import {path}"));
            }
            let alias = match &import.r#as {
                Some(span) => span.text().to_string(),
                None => path.rsplit('.').next().unwrap_or_default().to_string(),
            };
            imports.insert(alias, path);
        }
        for rule in &module.policy {
            let name = rule_name(rule)?;
            by_path
                .entry(format!("{package}.{name}"))
                .or_default()
                .push((m, rule.clone()));
        }
        scopes.push(ModuleScope { package, imports });
    }
    let mut lowering = Lowering {
        scopes: &scopes,
        by_path: &by_path,
        ids: HashMap::new(),
        kinds: Vec::new(),
        pending: Vec::new(),
        conflicts: Vec::new(),
    };
    let target_id = lowering.rule_id(target)?;
    let mut rules: Vec<Option<RuleDef>> = Vec::new();
    while let Some(id) = lowering.pending.pop() {
        let rule = lowering.lower_rule(id)?;
        if rules.len() <= id {
            rules.resize_with(id + 1, || None);
        }
        rules[id] = Some(rule);
    }
    let rules: Vec<RuleDef> = rules.into_iter().flatten().collect();
    if rules.len() != lowering.kinds.len() {
        return unsupported("a rule was not lowered");
    }
    check_acyclic(&rules)?;
    Ok(Plan {
        rules,
        target: target_id,
        conflicts: lowering.conflicts,
    })
}

/// A rule's name, for the rules this lowering knows (`p`, `p[k]`, `f(x)`).
fn rule_name(rule: &Rule) -> Result<String, Unsupported> {
    let refr = match rule {
        Rule::Spec { head, .. } => match head {
            RuleHead::Compr { refr, .. }
            | RuleHead::Set { refr, .. }
            | RuleHead::Func { refr, .. } => refr,
        },
        Rule::Default { refr, .. } => refr,
    };
    match refr.as_ref() {
        Ast::Var { value, .. } => Ok(string(value)?.to_string()),
        Ast::RefBrack { refr, .. } => match refr.as_ref() {
            Ast::Var { value, .. } => Ok(string(value)?.to_string()),
            _ => unsupported("a rule head with a multi-part reference"),
        },
        _ => unsupported("a rule head with a multi-part reference"),
    }
}

fn string(value: &Value) -> Result<&str, Unsupported> {
    match value {
        Value::String(s) => Ok(s),
        _ => unsupported("a name that is not a string"),
    }
}

/// `a.b.c` of a reference made of a variable and fields.
fn dotted(expr: &Ast) -> Result<String, Unsupported> {
    match expr {
        Ast::Var { value, .. } => Ok(string(value)?.to_string()),
        Ast::RefDot { refr, field, .. } => Ok(format!("{}.{}", dotted(refr)?, string(&field.1)?)),
        Ast::RefBrack { refr, index, .. } => match index.as_ref() {
            Ast::String { value, .. } => Ok(format!("{}.{}", dotted(refr)?, string(value)?)),
            _ => unsupported("a path with a computed part"),
        },
        _ => unsupported("a path that is not a reference"),
    }
}

/// Every rule, with its id, its kind and its definitions' ASTs.
struct Lowering<'m> {
    scopes: &'m [ModuleScope],
    by_path: &'m HashMap<String, Vec<(usize, Ref<Rule>)>>,
    ids: HashMap<String, usize>,
    kinds: Vec<Kind>,
    pending: Vec<usize>,
    conflicts: Vec<String>,
}

impl Lowering<'_> {
    fn rule_id(&mut self, path: &str) -> Result<usize, Unsupported> {
        if let Some(id) = self.ids.get(path) {
            return Ok(*id);
        }
        let Some(rules) = self.by_path.get(path) else {
            return unsupported(format!("{path} is not a rule"));
        };
        let mut kind = None;
        for (_, rule) in rules {
            let this = match rule.as_ref() {
                Rule::Spec { head, .. } => match head {
                    RuleHead::Set {
                        key: Some(_), refr, ..
                    } if matches!(refr.as_ref(), Ast::Var { .. }) => Kind::PartialSet,
                    RuleHead::Set { .. } => return unsupported("a set rule without a key"),
                    RuleHead::Compr { refr, assign, .. } => match refr.as_ref() {
                        Ast::Var { .. } => Kind::Complete,
                        Ast::RefBrack { .. } if assign.is_some() => Kind::PartialObject,
                        _ => return unsupported("a rule head of this shape"),
                    },
                    RuleHead::Func { args, .. } => Kind::Function(args.len()),
                },
                Rule::Default { args, .. } if args.is_empty() => continue,
                Rule::Default { args, .. } => Kind::Function(args.len()),
            };
            match kind {
                None => kind = Some(this),
                Some(k) if k == this => {}
                Some(_) => return unsupported(format!("{path} is defined with different heads")),
            }
        }
        let kind = kind.unwrap_or(Kind::Complete);
        let id = self.kinds.len();
        self.kinds.push(kind);
        self.ids.insert(path.to_string(), id);
        self.pending.push(id);
        Ok(id)
    }

    fn lower_rule(&mut self, id: usize) -> Result<RuleDef, Unsupported> {
        let path = self
            .ids
            .iter()
            .find(|(_, i)| **i == id)
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        let kind = self.kinds[id];
        let asts = self.by_path.get(&path).cloned().unwrap_or_default();
        let mut defs = Vec::new();
        let mut default = None;
        for (m, rule) in &asts {
            let scope = &self.scopes[*m];
            match rule.as_ref() {
                Rule::Default { value, .. } => {
                    if default.is_some() {
                        return unsupported("two defaults");
                    }
                    let mut body = BodyLowering::new(self, scope);
                    default = Some(body.expr(value, 0)?);
                }
                Rule::Spec { head, bodies, .. } => {
                    defs.extend(self.lower_def(scope, head, bodies)?);
                }
            }
        }
        Ok(RuleDef {
            path,
            kind,
            defs,
            default,
        })
    }

    /// A rule's bodies: each body not marked `else` starts a definition; `else` bodies
    /// continue the chain of the one before.
    fn lower_def(
        &mut self,
        scope: &ModuleScope,
        head: &RuleHead,
        bodies: &[regorus::unstable::RuleBody],
    ) -> Result<Vec<Def>, Unsupported> {
        let (args, key, head_value) = match head {
            RuleHead::Set { key, .. } => (&[][..], key.clone(), None),
            RuleHead::Compr { refr, assign, .. } => {
                let key = match refr.as_ref() {
                    Ast::RefBrack { index, .. } => Some(index.clone()),
                    _ => None,
                };
                (&[][..], key, assign.as_ref().map(|a| a.value.clone()))
            }
            RuleHead::Func { args, assign, .. } => (
                args.as_slice(),
                None,
                assign.as_ref().map(|a| a.value.clone()),
            ),
        };
        let mut defs: Vec<Def> = Vec::new();
        let mut body = BodyLowering::new(self, scope);
        let mut lowered_args = Vec::new();
        for arg in args {
            lowered_args.push(body.pattern(arg, 0)?);
        }
        let mut chain = Vec::new();
        let mut key_expr = None;
        let no_body = bodies.is_empty();
        for (i, b) in bodies.iter().enumerate() {
            if i > 0 && !b.is_else {
                // Another definition with the same head.
                return unsupported("several bodies for one head");
            }
            body.push_scope();
            let stmts = body.query(&b.query, 0)?;
            let value = match (&b.assign, &head_value, i) {
                (Some(a), _, _) => Some(body.expr(&a.value, 0)?),
                (None, Some(v), 0) => Some(body.expr(v, 0)?),
                (None, _, _) => None,
            };
            if i == 0
                && let Some(k) = &key
            {
                key_expr = Some(body.expr(k, 0)?);
            }
            body.pop_scope();
            chain.push(Branch { value, body: stmts });
        }
        if no_body {
            body.push_scope();
            let value = match &head_value {
                Some(v) => Some(body.expr(v, 0)?),
                None => None,
            };
            if let Some(k) = &key {
                key_expr = Some(body.expr(k, 0)?);
            }
            body.pop_scope();
            chain.push(Branch {
                value,
                body: Vec::new(),
            });
        }
        let slots = body.slots;
        defs.push(Def {
            args: lowered_args,
            key: key_expr,
            chain,
            slots,
        });
        Ok(defs)
    }
}

/// The lowering of one definition: its variables' scopes and slots.
struct BodyLowering<'l, 'm> {
    rules: &'l mut Lowering<'m>,
    module: &'l ModuleScope,
    scopes: Vec<Scope>,
    slots: usize,
}

/// The variables a query declared, and the names queries nested in it declared implicitly:
/// OPA would bind those from this query if it binds them anywhere, reordering; a query that
/// declares such a name after the nested one is left to regorus.
#[derive(Default)]
struct Scope {
    vars: HashMap<String, usize>,
    nested: HashSet<String>,
    /// Every slot made in this scope (named or `_`).
    own: Vec<usize>,
}

impl<'l, 'm> BodyLowering<'l, 'm> {
    fn new(rules: &'l mut Lowering<'m>, module: &'l ModuleScope) -> Self {
        BodyLowering {
            rules,
            module,
            scopes: vec![Scope::default()],
            slots: 0,
        }
    }

    fn push_scope(&mut self) {
        self.scopes.push(Scope::default());
    }

    /// Pops a query's scope; the names it and its nested queries declared implicitly
    /// (`implicit`) become the enclosing query's hazards.
    fn pop_scope_with(&mut self, implicit: &[String]) {
        if let Some(scope) = self.scopes.pop()
            && let Some(parent) = self.scopes.last_mut()
        {
            parent.nested.extend(scope.nested);
            parent.nested.extend(implicit.iter().cloned());
        }
    }

    fn pop_scope(&mut self) {
        self.pop_scope_with(&[]);
    }

    fn pop_nested(&mut self, implicit: &[String]) {
        self.pop_scope_with(implicit);
    }

    fn fresh(&mut self) -> usize {
        let slot = self.slots;
        self.slots += 1;
        if let Some(scope) = self.scopes.last_mut() {
            scope.own.push(slot);
        }
        slot
    }

    fn declare(&mut self, name: &str) -> Result<usize, Unsupported> {
        if self.scopes.last().is_some_and(|s| s.nested.contains(name)) {
            return unsupported(format!(
                "variable {name} is bound after a nested query that uses it"
            ));
        }
        let slot = self.fresh();
        if let Some(scope) = self.scopes.last_mut() {
            scope.vars.insert(name.to_string(), slot);
        }
        Ok(slot)
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.vars.get(name).copied())
    }

    /// A name that is no variable of the body: a rule of the module's package, or an import.
    fn global(&self, name: &str) -> Option<String> {
        let local = format!("{}.{name}", self.module.package);
        if self.rules.by_path.contains_key(&local) || self.is_package_prefix(&local) {
            return Some(local);
        }
        self.module.imports.get(name).cloned()
    }

    fn is_package_prefix(&self, path: &str) -> bool {
        let prefix = format!("{path}.");
        self.rules.by_path.keys().any(|p| p.starts_with(&prefix))
    }

    fn query(&mut self, query: &Query, depth: usize) -> Result<Vec<Stmt>, Unsupported> {
        if query.stmts.len() > MAX_STATEMENTS {
            return unsupported("a body of too many statements");
        }
        let start = self.slots;
        let stmts = query
            .stmts
            .iter()
            .map(|s| self.stmt(s, depth))
            .collect::<Result<Vec<_>, _>>()?;
        // The query's own variables; those made before it (`every`'s) are bound on entry.
        let (own, bound): (HashSet<usize>, HashSet<usize>) = match self.scopes.last() {
            Some(scope) => (
                scope.own.iter().copied().filter(|s| *s >= start).collect(),
                scope.own.iter().copied().filter(|s| *s < start).collect(),
            ),
            None => Default::default(),
        };
        Ok(reorder(stmts, &own, bound))
    }

    fn stmt(&mut self, stmt: &LiteralStmt, depth: usize) -> Result<Stmt, Unsupported> {
        if !stmt.with_mods.is_empty() {
            return unsupported("with");
        }
        match &stmt.literal {
            Literal::SomeVars { vars, .. } => {
                for var in vars {
                    self.declare(var.text())?;
                }
                Ok(Stmt::Nothing)
            }
            Literal::SomeIn {
                key,
                value,
                collection,
                ..
            } => {
                let collection = self.expr(collection, depth + 1)?;
                let key = match key {
                    Some(k) => Some(self.pattern(k, depth + 1)?),
                    None => None,
                };
                let value = self.pattern(value, depth + 1)?;
                Ok(Stmt::SomeIn(key, value, collection))
            }
            Literal::Expr { expr, .. } => self.expr_stmt(expr, depth),
            Literal::NotExpr { expr, .. } => {
                self.push_scope();
                let inner = self.expr_stmt(expr, depth + 1);
                let implicit: Vec<String> = self
                    .scopes
                    .last()
                    .map(|s| s.vars.keys().cloned().collect())
                    .unwrap_or_default();
                self.pop_nested(&implicit);
                Ok(Stmt::Not(Box::new(inner?)))
            }
            Literal::Every {
                key,
                value,
                domain,
                query,
                ..
            } => {
                let domain = self.expr(domain, depth + 1)?;
                self.push_scope();
                let key = match key {
                    Some(k) => Some(self.declare(k.text())?),
                    None => None,
                };
                let value = self.declare(value.text())?;
                let body = self.query(query, depth + 1);
                self.pop_scope();
                Ok(Stmt::Every(key, value, domain, body?))
            }
        }
    }

    fn expr_stmt(&mut self, expr: &Ast, depth: usize) -> Result<Stmt, Unsupported> {
        match expr {
            Ast::AssignExpr { op, lhs, rhs, .. } => match op {
                AssignOp::ColEq => {
                    let value = self.expr(rhs, depth + 1)?;
                    let pattern = self.pattern(lhs, depth + 1)?;
                    Ok(Stmt::Assign(pattern, value))
                }
                AssignOp::Eq => {
                    let a = self.expr(lhs, depth + 1)?;
                    let b = self.expr(rhs, depth + 1)?;
                    Ok(Stmt::Unify(a, b))
                }
            },
            _ => Ok(Stmt::Expr(self.expr(expr, depth)?)),
        }
    }

    /// The left side of `:=`, an argument of a function head, or a `some ... in` variable:
    /// its variables are declared here.
    fn pattern(&mut self, expr: &Ast, depth: usize) -> Result<Expr, Unsupported> {
        if depth > MAX_DEPTH {
            return unsupported("expressions nested too deep");
        }
        match expr {
            Ast::Var { value, .. } => {
                let name = string(value)?;
                if name == "_" {
                    return Ok(Expr::Var(self.fresh()));
                }
                Ok(Expr::Var(self.declare(name)?))
            }
            Ast::Array { items, .. } => Ok(Expr::Array(
                items
                    .iter()
                    .map(|i| self.pattern(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            )),
            Ast::Object { fields, .. } => Ok(Expr::Object(
                fields
                    .iter()
                    .map(|(_, k, v)| Ok((self.expr(k, depth + 1)?, self.pattern(v, depth + 1)?)))
                    .collect::<Result<_, Unsupported>>()?,
            )),
            Ast::String { .. }
            | Ast::RawString { .. }
            | Ast::Number { .. }
            | Ast::Bool { .. }
            | Ast::Null { .. } => self.expr(expr, depth),
            _ => unsupported("a pattern of this shape"),
        }
    }

    fn expr(&mut self, expr: &Ast, depth: usize) -> Result<Expr, Unsupported> {
        if depth > MAX_DEPTH {
            return unsupported("expressions nested too deep");
        }
        let d = depth + 1;
        Ok(match expr {
            Ast::String { value, .. } | Ast::RawString { value, .. } => {
                Expr::Lit(Lit::Str(string(value)?.into()))
            }
            Ast::Number { value, .. } => Expr::Lit(number(value)?),
            Ast::Bool { value, .. } => Expr::Lit(Lit::Bool(matches!(value, Value::Bool(true)))),
            Ast::Null { .. } => Expr::Lit(Lit::Null),
            Ast::Var { .. } | Ast::RefDot { .. } | Ast::RefBrack { .. } => {
                self.reference(expr, d)?
            }
            Ast::Array { items, .. } => Expr::Array(self.exprs(items, d)?),
            Ast::Set { items, .. } => Expr::Set(self.exprs(items, d)?),
            Ast::Object { fields, .. } => Expr::Object(
                fields
                    .iter()
                    .map(|(_, k, v)| Ok((self.expr(k, d)?, self.expr(v, d)?)))
                    .collect::<Result<_, Unsupported>>()?,
            ),
            Ast::ArrayCompr { term, query, .. } => {
                let (term, body) = self.comprehension(&[term], query, d)?;
                let [term] =
                    <[Expr; 1]>::try_from(term).map_err(|_| Unsupported("compr".into()))?;
                Expr::ArrayCompr(Box::new(term), body)
            }
            Ast::SetCompr { term, query, .. } => {
                let (term, body) = self.comprehension(&[term], query, d)?;
                let [term] =
                    <[Expr; 1]>::try_from(term).map_err(|_| Unsupported("compr".into()))?;
                Expr::SetCompr(Box::new(term), body)
            }
            Ast::ObjectCompr {
                key, value, query, ..
            } => {
                let (terms, body) = self.comprehension(&[key, value], query, d)?;
                let [k, v] =
                    <[Expr; 2]>::try_from(terms).map_err(|_| Unsupported("compr".into()))?;
                Expr::ObjectCompr(Box::new(k), Box::new(v), body)
            }
            Ast::Call {
                span, fcn, params, ..
            } => {
                let callee = match self.callee(fcn, params.len())? {
                    Callee::Function(id, _) => {
                        self.rules.conflicts.push(span.message(
                            "error",
                            "functions must not produce multiple outputs for same inputs",
                        ));
                        Callee::Function(id, Some(self.rules.conflicts.len() - 1))
                    }
                    builtin => builtin,
                };
                Expr::Call(callee, self.exprs(params, d)?)
            }
            Ast::UnaryExpr { expr, .. } => Expr::Neg(Box::new(self.expr(expr, d)?)),
            Ast::BinExpr { op, lhs, rhs, .. } => Expr::SetOp(
                op.clone(),
                Box::new(self.expr(lhs, d)?),
                Box::new(self.expr(rhs, d)?),
            ),
            Ast::BoolExpr { op, lhs, rhs, .. } => Expr::Compare(
                op.clone(),
                Box::new(self.expr(lhs, d)?),
                Box::new(self.expr(rhs, d)?),
            ),
            Ast::ArithExpr { op, lhs, rhs, .. } => Expr::Arith(
                op.clone(),
                Box::new(self.expr(lhs, d)?),
                Box::new(self.expr(rhs, d)?),
            ),
            Ast::Membership {
                key,
                value,
                collection,
                ..
            } => {
                let key = match key {
                    Some(k) => Some(Box::new(self.expr(k, d)?)),
                    None => None,
                };
                Expr::Member(
                    key,
                    Box::new(self.expr(value, d)?),
                    Box::new(self.expr(collection, d)?),
                )
            }
            Ast::AssignExpr { .. } => return unsupported("an assignment inside an expression"),
            #[allow(unreachable_patterns)]
            _ => return unsupported("an expression of this kind"),
        })
    }

    fn exprs(&mut self, items: &[Ref<Ast>], depth: usize) -> Result<Vec<Expr>, Unsupported> {
        items.iter().map(|i| self.expr(i, depth)).collect()
    }

    /// A comprehension's terms and body, in a scope of its own.
    fn comprehension(
        &mut self,
        terms: &[&Ref<Ast>],
        query: &Query,
        depth: usize,
    ) -> Result<(Vec<Expr>, Vec<Stmt>), Unsupported> {
        self.push_scope();
        let explicit_before = self.explicit_names(query);
        let result = (|| {
            let body = self.query(query, depth)?;
            let terms = terms
                .iter()
                .map(|t| self.expr(t, depth))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((terms, body))
        })();
        let implicit: Vec<String> = self
            .scopes
            .last()
            .map(|s| {
                s.vars
                    .keys()
                    .filter(|k| !explicit_before.contains(*k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        self.pop_nested(&implicit);
        result
    }

    /// The names a query declares with `:=` or `some` at its top level: local to it
    /// whatever the enclosing body binds.
    fn explicit_names(&self, query: &Query) -> HashSet<String> {
        let mut names = HashSet::new();
        for stmt in &query.stmts {
            match &stmt.literal {
                Literal::SomeVars { vars, .. } => {
                    names.extend(vars.iter().map(|v| v.text().to_string()));
                }
                Literal::Expr { expr, .. } => {
                    if let Ast::AssignExpr {
                        op: AssignOp::ColEq,
                        lhs,
                        ..
                    } = expr.as_ref()
                    {
                        pattern_names(lhs, &mut names);
                    }
                }
                Literal::SomeIn { key, value, .. } => {
                    if let Some(k) = key {
                        pattern_names(k, &mut names);
                    }
                    pattern_names(value, &mut names);
                }
                _ => {}
            }
        }
        names
    }

    /// A reference: a variable, `input...`, a rule (`p`, `data.lib.x.p`, an import), and the
    /// indexes after it.
    fn reference(&mut self, expr: &Ast, depth: usize) -> Result<Expr, Unsupported> {
        // Unwinds the chain into its root and its steps.
        let mut steps: Vec<Step<'_>> = Vec::new();
        let mut root = expr;
        loop {
            match root {
                Ast::RefDot { refr, field, .. } => {
                    steps.push(Step::Field(string(&field.1)?.to_string()));
                    root = refr;
                }
                Ast::RefBrack { refr, index, .. } => {
                    steps.push(match index.as_ref() {
                        Ast::String { value, .. } => Step::Field(string(value)?.to_string()),
                        other => Step::Index(other),
                    });
                    root = refr;
                }
                _ => break,
            }
        }
        steps.reverse();
        let mut steps = steps.into_iter().peekable();
        let base = match root {
            Ast::Var { value, .. } => {
                let name = string(value)?;
                if name == "_" {
                    Expr::Var(self.fresh())
                } else if let Some(slot) = self.lookup(name) {
                    Expr::Var(slot)
                } else if name == "input" {
                    Expr::Input
                } else if name == "data"
                    && matches!(steps.peek(), Some(Step::Field(f)) if f == "inventory")
                {
                    // Gatekeeper's synced objects, the one document templates may read.
                    Expr::Data
                } else if name == "data" || self.global(name).is_some() {
                    let mut path = match name {
                        "data" => "data".to_string(),
                        _ => self.global(name).unwrap_or_default(),
                    };
                    // Fields until the path names a rule.
                    loop {
                        if self.rules.by_path.contains_key(&path) {
                            break;
                        }
                        match steps.next() {
                            Some(Step::Field(f)) => path = format!("{path}.{f}"),
                            _ => {
                                return unsupported(format!(
                                    "a reference to {path}, which is no rule"
                                ));
                            }
                        }
                    }
                    let id = self.rules.rule_id(&path)?;
                    match self.rules.kinds[id] {
                        // `f() = x { ... }` read as `f`: its one value.
                        Kind::Function(0) => Expr::Call(Callee::Function(id, None), Vec::new()),
                        Kind::Function(_) => {
                            return unsupported(format!("the function {path} as a value"));
                        }
                        _ => Expr::Rule(id),
                    }
                } else {
                    Expr::Var(self.declare(name)?)
                }
            }
            other => self.expr(other, depth)?,
        };
        let mut out = base;
        for step in steps {
            let index = match step {
                Step::Field(f) => Expr::Lit(Lit::Str(f.into())),
                Step::Index(e) => self.expr(e, depth + 1)?,
            };
            out = Expr::Index(Box::new(out), Box::new(index));
        }
        Ok(out)
    }

    fn callee(&mut self, fcn: &Ast, arity: usize) -> Result<Callee, Unsupported> {
        let name = dotted(fcn)?;
        let (first, rest) = match name.split_once('.') {
            Some((f, r)) => (f, Some(r)),
            None => (name.as_str(), None),
        };
        let path = if first == "data" {
            Some(name.clone())
        } else if self.lookup(first).is_some() {
            return unsupported(format!("a call through the variable {first}"));
        } else {
            self.global(first).map(|p| match rest {
                Some(r) => format!("{p}.{r}"),
                None => p,
            })
        };
        if let Some(path) = path.filter(|p| self.rules.by_path.contains_key(p)) {
            let id = self.rules.rule_id(&path)?;
            return match self.rules.kinds[id] {
                Kind::Function(n) if n == arity => Ok(Callee::Function(id, None)),
                _ => unsupported(format!("a call of {path} with {arity} arguments")),
            };
        }
        match Builtin::named(&name) {
            Some(b) if b.arity() == arity => Ok(Callee::Builtin(b)),
            Some(_) => unsupported(format!("{name} with {arity} arguments")),
            None => unsupported(format!("the builtin {name}")),
        }
    }
}

/// OPA's reordering for safety: each statement runs once the variables it reads are bound,
/// in the written order wherever that already holds (`[s | s = concat(":", [k, v]); v =
/// o[k]]` runs its second statement first). A body no order makes safe stays as written;
/// evaluating it then leaves it to regorus.
fn reorder(stmts: Vec<Stmt>, own: &HashSet<usize>, mut bound: HashSet<usize>) -> Vec<Stmt> {
    let needs: Vec<Vec<Needs>> = stmts.iter().map(needs).collect();
    let mut placed = vec![false; stmts.len()];
    let mut order = Vec::with_capacity(stmts.len());
    while order.len() < stmts.len() {
        let ready = (0..stmts.len()).find(|&i| {
            !placed[i]
                && needs[i].iter().any(|n| {
                    n.reads
                        .iter()
                        .all(|v| !own.contains(v) || bound.contains(v))
                })
        });
        let Some(i) = ready else {
            // No order makes the rest safe: as written.
            order.extend((0..stmts.len()).filter(|&i| !placed[i]));
            break;
        };
        placed[i] = true;
        order.push(i);
        for n in &needs[i] {
            bound.extend(n.binds.iter().copied());
        }
    }
    if order.iter().enumerate().all(|(at, &i)| at == i) {
        return stmts;
    }
    let mut slots: Vec<Option<Stmt>> = stmts.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// One way a statement can run: the variables it must find bound, and those it binds.
#[derive(Default)]
struct Needs {
    reads: Vec<usize>,
    binds: Vec<usize>,
}

fn needs(stmt: &Stmt) -> Vec<Needs> {
    let mut n = Needs::default();
    match stmt {
        Stmt::Expr(e) => uses(e, &mut n),
        Stmt::Not(inner) => every_var_stmt(inner, &mut n.reads),
        Stmt::Assign(pattern, value) => {
            uses(value, &mut n);
            pattern_uses(pattern, &mut n);
        }
        Stmt::Unify(a, b) => {
            // Either side may be the pattern the other binds.
            let mut one = Needs::default();
            uses(b, &mut one);
            pattern_uses(a, &mut one);
            let mut other = Needs::default();
            uses(a, &mut other);
            pattern_uses(b, &mut other);
            let mut binds = one.binds.clone();
            binds.extend(other.binds.iter().copied());
            one.binds.clone_from(&binds);
            other.binds = binds;
            return vec![one, other];
        }
        Stmt::SomeIn(key, value, collection) => {
            uses(collection, &mut n);
            if let Some(k) = key {
                pattern_uses(k, &mut n);
            }
            pattern_uses(value, &mut n);
        }
        Stmt::Every(_, _, domain, body) => {
            every_var(domain, &mut n.reads);
            body.iter().for_each(|s| every_var_stmt(s, &mut n.reads));
        }
        Stmt::Nothing => {}
    }
    vec![n]
}

/// A pattern's variables are bound by matching; anything else in it is read.
fn pattern_uses(e: &Expr, n: &mut Needs) {
    match e {
        Expr::Var(s) => n.binds.push(*s),
        Expr::Array(items) => items.iter().for_each(|i| pattern_uses(i, n)),
        Expr::Object(fields) => fields.iter().for_each(|(k, v)| {
            uses(k, n);
            pattern_uses(v, n);
        }),
        other => uses(other, n),
    }
}

/// The variables an expression reads, and those it binds by iterating (`x[i]`).
fn uses(e: &Expr, n: &mut Needs) {
    match e {
        Expr::Var(s) => n.reads.push(*s),
        Expr::Index(base, index) => {
            uses(base, n);
            match index.as_ref() {
                Expr::Var(_) | Expr::Array(_) | Expr::Object(_) => pattern_uses(index, n),
                other => uses(other, n),
            }
        }
        Expr::Lit(_) | Expr::Input | Expr::Data | Expr::Rule(_) => {}
        Expr::Array(items) | Expr::Set(items) | Expr::Call(_, items) => {
            items.iter().for_each(|i| uses(i, n))
        }
        Expr::Object(fields) => fields.iter().for_each(|(k, v)| {
            uses(k, n);
            uses(v, n);
        }),
        Expr::Compare(_, a, b) | Expr::Arith(_, a, b) | Expr::SetOp(_, a, b) => {
            uses(a, n);
            uses(b, n);
        }
        Expr::Neg(a) => uses(a, n),
        Expr::Member(k, v, c) => {
            if let Some(k) = k {
                uses(k, n);
            }
            uses(v, n);
            uses(c, n);
        }
        Expr::ArrayCompr(..) | Expr::SetCompr(..) | Expr::ObjectCompr(..) => {
            every_var(e, &mut n.reads)
        }
    }
}

/// Every variable an expression mentions (a nested query reads what it shares).
fn every_var(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Var(s) => out.push(*s),
        Expr::Lit(_) | Expr::Input | Expr::Data | Expr::Rule(_) => {}
        Expr::Index(a, b)
        | Expr::Compare(_, a, b)
        | Expr::Arith(_, a, b)
        | Expr::SetOp(_, a, b) => {
            every_var(a, out);
            every_var(b, out);
        }
        Expr::Array(items) | Expr::Set(items) | Expr::Call(_, items) => {
            items.iter().for_each(|i| every_var(i, out))
        }
        Expr::Object(fields) => fields.iter().for_each(|(k, v)| {
            every_var(k, out);
            every_var(v, out);
        }),
        Expr::Neg(a) => every_var(a, out),
        Expr::Member(k, v, c) => {
            if let Some(k) = k {
                every_var(k, out);
            }
            every_var(v, out);
            every_var(c, out);
        }
        Expr::ArrayCompr(t, body) | Expr::SetCompr(t, body) => {
            every_var(t, out);
            body.iter().for_each(|s| every_var_stmt(s, out));
        }
        Expr::ObjectCompr(k, v, body) => {
            every_var(k, out);
            every_var(v, out);
            body.iter().for_each(|s| every_var_stmt(s, out));
        }
    }
}

fn every_var_stmt(stmt: &Stmt, out: &mut Vec<usize>) {
    match stmt {
        Stmt::Expr(e) => every_var(e, out),
        Stmt::Not(inner) => every_var_stmt(inner, out),
        Stmt::Assign(a, b) | Stmt::Unify(a, b) => {
            every_var(a, out);
            every_var(b, out);
        }
        Stmt::SomeIn(k, v, c) => {
            for e in k.iter().chain([v, c]) {
                every_var(e, out);
            }
        }
        Stmt::Every(_, _, d, body) => {
            every_var(d, out);
            body.iter().for_each(|s| every_var_stmt(s, out));
        }
        Stmt::Nothing => {}
    }
}

enum Step<'a> {
    Field(String),
    Index(&'a Ast),
}

fn pattern_names(expr: &Ast, names: &mut HashSet<String>) {
    match expr {
        Ast::Var {
            value: Value::String(s),
            ..
        } => {
            names.insert(s.to_string());
        }
        Ast::Array { items, .. } => items.iter().for_each(|i| pattern_names(i, names)),
        Ast::Object { fields, .. } => fields.iter().for_each(|(_, _, v)| pattern_names(v, names)),
        _ => {}
    }
}

fn number(value: &Value) -> Result<Lit, Unsupported> {
    let Value::Number(n) = value else {
        return unsupported("a number literal that is not a number");
    };
    Ok(if n.is_integer() {
        match n.as_i64() {
            Some(i) => Lit::Num(Num::Int(i)),
            None => Lit::Inexact,
        }
    } else {
        match n.as_f64() {
            Some(f) if f.is_finite() => Lit::Num(Num::Float(f)),
            _ => Lit::Inexact,
        }
    })
}

/// OPA refuses recursive rules; regorus decides what such modules do.
fn check_acyclic(rules: &[RuleDef]) -> Result<(), Unsupported> {
    let edges: Vec<Vec<usize>> = rules.iter().map(references).collect();
    // 0: unseen, 1: on the path, 2: done.
    let mut state = vec![0u8; rules.len()];
    fn visit(n: usize, edges: &[Vec<usize>], state: &mut [u8]) -> bool {
        match state.get(n) {
            Some(1) => return false,
            Some(2) | None => return true,
            _ => {}
        }
        state[n] = 1;
        for &m in &edges[n] {
            if !visit(m, edges, state) {
                return false;
            }
        }
        state[n] = 2;
        true
    }
    for n in 0..rules.len() {
        if !visit(n, &edges, &mut state) {
            return unsupported("recursive rules");
        }
    }
    Ok(())
}

fn references(rule: &RuleDef) -> Vec<usize> {
    let mut out = Vec::new();
    for def in &rule.defs {
        for e in def.args.iter().chain(def.key.iter()) {
            expr_refs(e, &mut out);
        }
        for b in &def.chain {
            if let Some(v) = &b.value {
                expr_refs(v, &mut out);
            }
            for s in &b.body {
                stmt_refs(s, &mut out);
            }
        }
    }
    if let Some(d) = &rule.default {
        expr_refs(d, &mut out);
    }
    out
}

fn stmt_refs(stmt: &Stmt, out: &mut Vec<usize>) {
    match stmt {
        Stmt::Expr(e) => expr_refs(e, out),
        Stmt::Not(s) => stmt_refs(s, out),
        Stmt::Assign(a, b) | Stmt::Unify(a, b) => {
            expr_refs(a, out);
            expr_refs(b, out);
        }
        Stmt::SomeIn(k, v, c) => {
            for e in k.iter().chain([v, c]) {
                expr_refs(e, out);
            }
        }
        Stmt::Every(_, _, d, body) => {
            expr_refs(d, out);
            body.iter().for_each(|s| stmt_refs(s, out));
        }
        Stmt::Nothing => {}
    }
}

fn expr_refs(expr: &Expr, out: &mut Vec<usize>) {
    match expr {
        Expr::Rule(id) => out.push(*id),
        Expr::Call(callee, args) => {
            if let Callee::Function(id, _) = callee {
                out.push(*id);
            }
            args.iter().for_each(|a| expr_refs(a, out));
        }
        Expr::Lit(_) | Expr::Var(_) | Expr::Input | Expr::Data => {}
        Expr::Index(a, b)
        | Expr::Compare(_, a, b)
        | Expr::Arith(_, a, b)
        | Expr::SetOp(_, a, b) => {
            expr_refs(a, out);
            expr_refs(b, out);
        }
        Expr::Array(items) | Expr::Set(items) => items.iter().for_each(|a| expr_refs(a, out)),
        Expr::Object(fields) => fields.iter().for_each(|(k, v)| {
            expr_refs(k, out);
            expr_refs(v, out);
        }),
        Expr::ArrayCompr(t, body) | Expr::SetCompr(t, body) => {
            expr_refs(t, out);
            body.iter().for_each(|s| stmt_refs(s, out));
        }
        Expr::ObjectCompr(k, v, body) => {
            expr_refs(k, out);
            expr_refs(v, out);
            body.iter().for_each(|s| stmt_refs(s, out));
        }
        Expr::Neg(a) => expr_refs(a, out),
        Expr::Member(k, v, c) => {
            if let Some(k) = k {
                expr_refs(k, out);
            }
            expr_refs(v, out);
            expr_refs(c, out);
        }
    }
}
