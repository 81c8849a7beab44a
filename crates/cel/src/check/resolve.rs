//! Name resolution shared by the checker and the compiler.
//!
//! The rules are cel-go's:
//!
//! - **Containers.** With container `a.b`, a name `x` is looked up as `a.b.x`, then `a.x`,
//!   then `x` ([`candidate_names`]); the first declared candidate wins. A leading dot (`.x`)
//!   makes the name absolute: only `x` is tried.
//! - **Qualified names.** `x.y.z` arrives as `Select(Select(Ident x, y), z)`. At each select
//!   whose operand chain is plain identifiers and field selections ([`qualified_name`]), the
//!   whole dotted name is looked up first, so the longest declared name wins: with `x.y`
//!   declared, `x.y.z` is the field `z` of variable `x.y`. [`resolve_select_chain`] does the
//!   walk in one call. `has(...)` selects and `.?` selects break a chain.
//! - **Locals shadow globals.** A comprehension variable (or `@result`) named like the first
//!   part of a name hides every global with that first part, qualified or not, unless the
//!   name starts with a dot.
//! - **What a name can be.** A declared variable, else one of the built-in type names
//!   ([`type_identifier`]: `int`, `list`, `google.protobuf.Timestamp`, ...), else a message
//!   type a library registered, else an extension type, checked in that order for each
//!   candidate.
//! - **Functions.** Function names go through the container the same way
//!   ([`resolve_function`]). For a receiver call `a.b.f(x)` whose target `a.b` is not a
//!   variable (neither a local nor a declared variable, by the rules above), if `a.b.f` names
//!   a global function (e.g. `optional.of`), the call is that global function with the
//!   arguments only and the target is never evaluated ([`namespaced_function`]). cel-go
//!   tries the namespaced function even when `a` is a variable; celer lets the variable win,
//!   as its compiler does.

use crate::env::Env;
use crate::library::Function;
use crate::syntax::ast::{Expr, ExprKind};
use crate::types::Type;

/// What a (possibly qualified) global name refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// A declared variable: its fully qualified name, slot and declared type.
    Variable { name: String, slot: usize, ty: Type },
    /// A type name used as a value, e.g. `int` of type `type(int)`.
    TypeName { name: String, ty: Type },
}

impl Resolution {
    /// The type of the name as an expression.
    pub fn ty(&self) -> &Type {
        match self {
            Resolution::Variable { ty, .. } | Resolution::TypeName { ty, .. } => ty,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Resolution::Variable { name, .. } | Resolution::TypeName { name, .. } => name,
        }
    }
}

/// The names tried for `name` in `container`, most qualified first (cel-go's
/// `ResolveCandidateNames`, without aliases).
pub fn candidate_names(container: &str, name: &str) -> Vec<String> {
    if let Some(absolute) = name.strip_prefix('.') {
        return vec![absolute.to_string()];
    }
    if container.is_empty() {
        return vec![name.to_string()];
    }
    let mut out = vec![format!("{container}.{name}")];
    let mut prefix = container;
    while let Some(i) = prefix.rfind('.') {
        prefix = prefix.get(..i).unwrap_or("");
        out.push(format!("{prefix}.{name}"));
    }
    out.push(name.to_string());
    out
}

/// The type of a built-in type name used as a value, such as `int` (`type(int)`).
pub fn type_identifier(name: &str) -> Option<Type> {
    let t = match name {
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "bool" => Type::Bool,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "null_type" => Type::Null,
        "type" => Type::type_of(Type::Dyn),
        "dyn" => Type::Dyn,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        "optional_type" => Type::optional(Type::Dyn),
        _ => return None,
    };
    Some(Type::type_of(t))
}

/// Looks `name` up among the globals (declared variables, then type names) through the
/// container. Locals are the caller's business (see [`resolve_select_chain`]).
pub fn resolve_name(env: &Env, name: &str) -> Option<Resolution> {
    let vars = env.variables();
    for candidate in candidate_names(env.container(), name) {
        if let Some(slot) = vars.slot(&candidate) {
            let ty = vars.get(slot).map_or(Type::Dyn, |(_, t)| t.clone());
            return Some(Resolution::Variable {
                name: candidate,
                slot,
                ty,
            });
        }
        if let Some(ty) = type_identifier(&candidate) {
            return Some(Resolution::TypeName {
                name: candidate,
                ty,
            });
        }
        if env.registry().has_message_type(&candidate) {
            let ty = Type::type_of(Type::Message(candidate.as_str().into()));
            return Some(Resolution::TypeName {
                name: candidate,
                ty,
            });
        }
        if env.registry().has_type(&candidate) {
            let ty = Type::type_of(Type::Abstract(candidate.as_str().into(), Vec::new()));
            return Some(Resolution::TypeName {
                name: candidate,
                ty,
            });
        }
    }
    None
}

/// The dotted name spelled by an identifier or a chain of plain field selections
/// (`a.b.c`), or `None` when the chain contains anything else (cel-go's `ToQualifiedName`;
/// `has()` and `.?` selects are not names).
pub fn qualified_name(expr: &Expr) -> Option<String> {
    match &expr.kind {
        ExprKind::Ident(name) => Some(name.clone()),
        ExprKind::Select {
            operand,
            field,
            test_only: false,
            optional: false,
        } => {
            let mut q = qualified_name(operand)?;
            q.push('.');
            q.push_str(field);
            Some(q)
        }
        _ => None,
    }
}

/// The first part of a dotted name.
fn root_part(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// Resolves the global name spelled by exactly this node (an identifier or a select chain),
/// honouring local shadowing: `is_local(n)` says whether `n` is a comprehension variable in
/// scope. Returns `None` for locals too; the caller resolves a bare local identifier itself.
pub fn resolve_qualified(
    env: &Env,
    expr: &Expr,
    is_local: &dyn Fn(&str) -> bool,
) -> Option<Resolution> {
    let name = qualified_name(expr)?;
    if !name.starts_with('.') && is_local(root_part(&name)) {
        return None;
    }
    resolve_name(env, &name)
}

/// Walks a select chain from the outside in and resolves the longest global name: for
/// `a.b.c.d` with `a.b` declared, returns the resolution of `a.b` and `2` (the number of
/// field selections, `c` and `d`, still to apply on top of it). `None` when no prefix of the
/// chain is a global name (an undeclared name, or a local variable at the root).
pub fn resolve_select_chain(
    env: &Env,
    expr: &Expr,
    is_local: &dyn Fn(&str) -> bool,
) -> Option<(Resolution, usize)> {
    let mut node = expr;
    let mut remaining = 0;
    loop {
        if let Some(r) = resolve_qualified(env, node, is_local) {
            return Some((r, remaining));
        }
        match &node.kind {
            ExprKind::Select {
                operand,
                test_only: false,
                optional: false,
                ..
            } => {
                node = operand;
                remaining += 1;
            }
            _ => return None,
        }
    }
}

/// Finds a declared function by name through the container; returns its fully qualified name.
pub fn resolve_function<'e>(env: &'e Env, name: &str) -> Option<(String, &'e Function)> {
    candidate_names(env.container(), name)
        .into_iter()
        .find_map(|candidate| {
            let f = env.registry().get(&candidate)?;
            Some((candidate, f))
        })
}

/// For a receiver call `target.function(...)`: if `target` spells a qualified name `q` that
/// is not a variable (no local is its root and no prefix of it is a declared variable; a type
/// name does not count) and `q.function` is a declared global function (like
/// `optional.of`), returns that function.
pub fn namespaced_function<'e>(
    env: &'e Env,
    target: &Expr,
    function: &str,
    is_local: &dyn Fn(&str) -> bool,
) -> Option<(String, &'e Function)> {
    let prefix = qualified_name(target)?;
    if !prefix.starts_with('.') && is_local(root_part(&prefix)) {
        return None;
    }
    if let Some((Resolution::Variable { .. }, _)) = resolve_select_chain(env, target, is_local) {
        return None;
    }
    resolve_function(env, &format!("{prefix}.{function}"))
}
