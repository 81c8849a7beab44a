//! Rule indexing, OPA's way: before evaluating a rule, look at the guards its bodies open
//! with (`input.spec.resourceAttributes.resource == "pods"`,
//! `startswith(input.review.object.metadata.namespace, "team-")`) and skip the evaluation,
//! and the conversion of the input, when no body can succeed on this input.
//!
//! A guard is a top-level statement of a body (no `not`, no `with`) that compares a ground
//! reference into `input` with a constant. A body succeeds only if all its statements do, so
//! a failed guard proves the body fails, whatever the other statements are; like OPA's
//! indexer, a body skipped this way cannot raise the errors its other statements might have.
//! The index is built only when every body of the rule has a guard and nothing else can
//! give the rule a value (a `default` other than `false`, `else` chains, a rule without a
//! body, functions, a package or rule above the path, a module rebinding `input` or the
//! guard builtins); otherwise there is no index and every evaluation runs.

use regorus::unstable::{
    AssignOp, BoolOp, Expr, Import, Literal, LiteralStmt, Module, Ref, Rule, RuleBody, RuleHead,
};

/// A constant a guard compares with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constant {
    String(String),
    Bool(bool),
}

/// What a guard requires of the value at its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// `==` (or `=`) with a constant.
    Equals(Constant),
    /// `startswith(value, prefix)`.
    StartsWith(String),
}

/// One guard: the path below `input` and what it requires there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub path: Vec<String>,
    pub test: Test,
}

/// The value an input holds at a guard's path, as far as guards care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found<'a> {
    /// Nothing there: a reference to it is undefined.
    Missing,
    String(&'a str),
    Bool(bool),
    /// Something else (a number, null, an object, an array).
    Other,
    /// The input cannot tell without being converted: the guard may hold.
    Unknown,
}

/// An input the index can read without converting it to a Rego value.
pub trait Lookup {
    fn find(&self, path: &[String]) -> Found<'_>;
}

impl Guard {
    /// Whether the guard may hold: `false` proves the statement fails on this input.
    fn may_hold(&self, input: &dyn Lookup) -> bool {
        match (input.find(&self.path), &self.test) {
            (Found::Unknown, _) => true,
            (Found::Missing, _) => false,
            (Found::String(s), Test::Equals(Constant::String(c))) => s == c,
            (Found::Bool(b), Test::Equals(Constant::Bool(c))) => b == *c,
            (Found::String(s), Test::StartsWith(prefix)) => s.starts_with(prefix.as_str()),
            // Values of different kinds are never equal.
            (Found::String(_) | Found::Bool(_) | Found::Other, Test::Equals(_)) => false,
            // A builtin given the wrong type may raise an error rather than fail: left to
            // the interpreter.
            (Found::Bool(_) | Found::Other, Test::StartsWith(_)) => true,
        }
    }
}

/// The guards of every body of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleIndex {
    /// One entry per body, each non-empty.
    bodies: Vec<Vec<Guard>>,
}

impl RuleIndex {
    /// Whether some body of the rule may succeed on `input`. `false` proves the rule is
    /// undefined (or its `default false`) on this input.
    pub fn may_succeed(&self, input: &dyn Lookup) -> bool {
        self.bodies
            .iter()
            .any(|guards| guards.iter().all(|g| g.may_hold(input)))
    }

    /// The guards of each body, for diagnostics and tests.
    pub fn bodies(&self) -> &[Vec<Guard>] {
        &self.bodies
    }

    /// The index of the rule at `path` (`data.pkg.deny`) over `modules`, when one is sound.
    pub(crate) fn build(modules: &[Ref<Module>], path: &str) -> Option<RuleIndex> {
        let target: Vec<&str> = path.split('.').collect();
        if target.first() != Some(&"data") || target.len() < 3 {
            return None;
        }
        let mut bodies = Vec::new();
        for module in modules {
            if module.imports.iter().any(rebinds_a_root) {
                return None;
            }
            let package = static_path(&module.package.refr)?;
            let mut base = vec!["data".to_string()];
            base.extend(package.segments);
            if package.dynamic || starts_with(&base, &target) {
                return None;
            }
            for rule in &module.policy {
                let (refr, specs) = match rule.as_ref() {
                    Rule::Spec { head, bodies, .. } => (head_ref(head), Some((head, bodies))),
                    Rule::Default { refr, .. } => (refr.as_ref(), None),
                };
                let head = static_path(refr)?;
                let mut full = base.clone();
                full.extend(head.segments);
                if full.last().is_some_and(|n| n == "startswith") {
                    return None;
                }
                if !starts_with(&full, &target) {
                    if starts_with(&target, &full) {
                        // A rule above the path gives it a value.
                        return None;
                    }
                    continue;
                }
                let Some((head, rule_bodies)) = specs else {
                    // `default deny := false` leaves the rule as good as undefined.
                    match rule.as_ref() {
                        Rule::Default { value, args, .. } if args.is_empty() && is_false(value) => {
                            continue;
                        }
                        _ => return None,
                    }
                };
                if matches!(head, RuleHead::Func { .. }) || head_binds_input(head) {
                    return None;
                }
                if rule_bodies.is_empty() {
                    return None;
                }
                for body in rule_bodies {
                    bodies.push(body_guards(body)?);
                }
            }
        }
        (!bodies.is_empty()).then_some(RuleIndex { bodies })
    }
}

/// A reference's leading static segments, and whether a dynamic part follows.
struct StaticPath {
    segments: Vec<String>,
    dynamic: bool,
}

/// `a.b["c"][x]` → `[a, b, c]`, dynamic. `None` when the root is not a variable.
fn static_path(expr: &Expr) -> Option<StaticPath> {
    let mut segments = Vec::new();
    let mut dynamic = false;
    let mut node = expr;
    loop {
        match node {
            Expr::Var { value, .. } => {
                segments.push(value.as_string().ok()?.to_string());
                break;
            }
            Expr::RefDot { refr, field, .. } => {
                segments.push(field.1.as_string().ok()?.to_string());
                node = refr;
            }
            Expr::RefBrack { refr, index, .. } => {
                match index.as_ref() {
                    Expr::String { value, .. } | Expr::RawString { value, .. } => {
                        segments.push(value.as_string().ok()?.to_string());
                    }
                    _ => {
                        // Everything after this bracket is below a dynamic part.
                        segments.clear();
                        dynamic = true;
                    }
                }
                node = refr;
            }
            _ => return None,
        }
    }
    segments.reverse();
    Some(StaticPath { segments, dynamic })
}

fn starts_with(path: &[impl AsRef<str>], prefix: &[impl AsRef<str>]) -> bool {
    path.len() >= prefix.len()
        && path
            .iter()
            .zip(prefix)
            .all(|(a, b)| a.as_ref() == b.as_ref())
}

fn head_ref(head: &RuleHead) -> &Expr {
    match head {
        RuleHead::Compr { refr, .. } | RuleHead::Set { refr, .. } | RuleHead::Func { refr, .. } => {
            refr
        }
    }
}

/// An import that makes `input` or `startswith` mean something else in the module.
fn rebinds_a_root(import: &Import) -> bool {
    let name = match &import.r#as {
        Some(alias) => alias.text().to_string(),
        None => match static_path(&import.refr) {
            Some(path) => path.segments.last().cloned().unwrap_or_default(),
            None => return true,
        },
    };
    let plain_input = matches!(import.refr.as_ref(), Expr::Var { value, .. }
        if value.as_string().is_ok_and(|v| v.as_ref() == "input"));
    name == "startswith" || (name == "input" && !plain_input)
}

fn head_binds_input(head: &RuleHead) -> bool {
    match head {
        RuleHead::Set { key: Some(key), .. } => binds_input(key),
        RuleHead::Compr { refr, .. } => match refr.as_ref() {
            Expr::RefBrack { index, .. } => binds_input(index),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `expr`, in a binding position, binds a local named `input` (regorus looks
/// locals up before `input`).
fn binds_input(expr: &Expr) -> bool {
    match expr {
        Expr::Var { value, .. } => value.as_string().is_ok_and(|v| v.as_ref() == "input"),
        Expr::Array { items, .. } | Expr::Set { items, .. } => {
            items.iter().any(|item| binds_input(item))
        }
        Expr::Object { fields, .. } => fields
            .iter()
            .any(|(_, key, value)| binds_input(key) || binds_input(value)),
        _ => false,
    }
}

fn is_false(expr: &Expr) -> bool {
    matches!(expr, Expr::Bool { value, .. } if value.as_bool().is_ok_and(|b| !*b))
}

/// The guards of one body; `None` when it has none, is an `else`, or binds `input`.
fn body_guards(body: &RuleBody) -> Option<Vec<Guard>> {
    if body.is_else {
        return None;
    }
    let mut guards = Vec::new();
    for stmt in &body.query.stmts {
        if statement_binds_input(stmt) {
            return None;
        }
        if let Some(guard) = guard(stmt) {
            guards.push(guard);
        }
    }
    (!guards.is_empty()).then_some(guards)
}

fn statement_binds_input(stmt: &LiteralStmt) -> bool {
    match &stmt.literal {
        Literal::SomeVars { vars, .. } => vars.iter().any(|v| v.text() == "input"),
        Literal::SomeIn { key, value, .. } => {
            key.as_ref().is_some_and(|k| binds_input(k)) || binds_input(value)
        }
        Literal::Every { key, value, .. } => {
            key.as_ref().is_some_and(|k| k.text() == "input") || value.text() == "input"
        }
        Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => match expr.as_ref() {
            Expr::AssignExpr { op, lhs, rhs, .. } => {
                binds_input(lhs) || (*op == AssignOp::Eq && binds_input(rhs))
            }
            _ => false,
        },
    }
}

/// The guard `stmt` is, if it is one.
fn guard(stmt: &LiteralStmt) -> Option<Guard> {
    if !stmt.with_mods.is_empty() {
        return None;
    }
    let Literal::Expr { expr, .. } = &stmt.literal else {
        return None;
    };
    match expr.as_ref() {
        Expr::BoolExpr {
            op: BoolOp::Eq,
            lhs,
            rhs,
            ..
        }
        | Expr::AssignExpr {
            op: AssignOp::Eq,
            lhs,
            rhs,
            ..
        } => {
            let (path, constant) = match (input_path(lhs), constant(rhs)) {
                (Some(path), Some(constant)) => (path, constant),
                _ => (input_path(rhs)?, constant(lhs)?),
            };
            Some(Guard {
                path,
                test: Test::Equals(constant),
            })
        }
        Expr::Call { fcn, params, .. } if is_var(fcn, "startswith") && params.len() == 2 => {
            let path = input_path(params.first()?)?;
            let Some(Constant::String(prefix)) = constant(params.get(1)?) else {
                return None;
            };
            Some(Guard {
                path,
                test: Test::StartsWith(prefix),
            })
        }
        _ => None,
    }
}

fn is_var(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Var { value, .. } if value.as_string().is_ok_and(|v| v.as_ref() == name))
}

/// `input.a["b"].c` → `[a, b, c]`; `None` for anything not a ground reference into input.
fn input_path(expr: &Expr) -> Option<Vec<String>> {
    if !matches!(expr, Expr::RefDot { .. } | Expr::RefBrack { .. }) {
        return None;
    }
    let path = static_path(expr)?;
    if path.dynamic || path.segments.first().map(String::as_str) != Some("input") {
        return None;
    }
    Some(path.segments.into_iter().skip(1).collect())
}

fn constant(expr: &Expr) -> Option<Constant> {
    match expr {
        Expr::String { value, .. } | Expr::RawString { value, .. } => {
            Some(Constant::String(value.as_string().ok()?.to_string()))
        }
        Expr::Bool { value, .. } => Some(Constant::Bool(*value.as_bool().ok()?)),
        _ => None,
    }
}

/// A Rego value read by path, for inputs already converted.
impl Lookup for regorus::Value {
    fn find(&self, path: &[String]) -> Found<'_> {
        let mut node = self;
        for segment in path {
            // Rego's own indexing: a missing field, or a field of a non-object, is undefined.
            node = &node[segment.as_str()];
        }
        match node {
            regorus::Value::Undefined => Found::Missing,
            regorus::Value::String(s) => Found::String(s),
            regorus::Value::Bool(b) => Found::Bool(*b),
            _ => Found::Other,
        }
    }
}
