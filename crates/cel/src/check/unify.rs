//! Type assignability, unification of type parameters and substitution, following cel-go's
//! checker (`checker/types.go`) rule for rule.
//!
//! Type parameters (`Type::Param`) are bound in a [`Mapping`]. A binding may be widened later
//! to a more general type (`list(int)` then `list(dyn)` gives `list(dyn)`); the occurs check
//! keeps the mapping acyclic. Nesting is bounded by the parser's depth limit; the recursive
//! walks here also stop at [`MAX_DEPTH`] so that no mapping can make them spin.

use std::collections::HashMap;
use std::sync::Arc;

use crate::types::Type;

/// Far beyond anything the parser's nesting limit lets through.
const MAX_DEPTH: usize = 1024;

/// Bindings of type parameters, by name.
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    bindings: HashMap<Arc<str>, Type>,
}

impl Mapping {
    pub fn find(&self, param: &str) -> Option<&Type> {
        self.bindings.get(param)
    }

    fn add(&mut self, param: &Arc<str>, to: Type) {
        self.bindings.insert(param.clone(), to);
    }
}

pub fn is_dyn(t: &Type) -> bool {
    matches!(t, Type::Dyn)
}

pub fn is_dyn_or_error(t: &Type) -> bool {
    matches!(t, Type::Dyn | Type::Error)
}

/// `optional_type(T)` gives `(T, true)`; anything else is returned as is with `false`.
pub fn unwrap_optional(t: Type) -> (Type, bool) {
    match t {
        Type::Optional(inner) => (*inner, true),
        other => (other, false),
    }
}

/// Whether a value of type `t1` may be used where `t2` is expected (the relation is symmetric
/// for most types), binding type parameters in `m` as needed. On failure `m` may hold partial
/// bindings: callers work on a copy (see [`is_assignable`]).
fn assignable(m: &mut Mapping, t1: &Type, t2: &Type, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if let Type::Param(p2) = t2 {
        let (valid, has_sub) = valid_substitution(m, t1, p2, t2, depth);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
        // Otherwise t1 may still be a valid substitution for t2.
    }
    if let Type::Param(p1) = t1 {
        return valid_substitution(m, t2, p1, t1, depth).0;
    }
    if is_dyn_or_error(t1) || is_dyn_or_error(t2) {
        return true;
    }
    // The legacy checker's nullness rules.
    if matches!(t1, Type::Null) {
        return is_nullable(t2);
    }
    if matches!(t2, Type::Null) {
        return is_nullable(t1);
    }
    match (t1, t2) {
        (Type::Message(a), Type::Message(b)) => a == b,
        (Type::Type(_), Type::Type(_)) => true,
        (Type::List(a), Type::List(b)) | (Type::Optional(a), Type::Optional(b)) => {
            assignable(m, a, b, depth + 1)
        }
        (Type::Map(k1, v1), Type::Map(k2, v2)) => {
            assignable(m, k1, k2, depth + 1) && assignable(m, v1, v2, depth + 1)
        }
        (Type::Abstract(n1, p1), Type::Abstract(n2, p2)) => {
            n1 == n2 && assignable_list(m, p1, p2, depth + 1)
        }
        (
            Type::Bool
            | Type::Int
            | Type::Uint
            | Type::Double
            | Type::String
            | Type::Bytes
            | Type::Timestamp
            | Type::Duration,
            _,
        ) => t1 == t2,
        _ => false,
    }
}

fn assignable_list(m: &mut Mapping, l1: &[Type], l2: &[Type], depth: usize) -> bool {
    l1.len() == l2.len()
        && l1
            .iter()
            .zip(l2)
            .all(|(a, b)| assignable(m, a, b, depth + 1))
}

/// Types that accept `null` for historical reasons (cel-go's `isLegacyNullable`), and null.
fn is_nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Null
            | Type::Optional(_)
            | Type::Abstract(..)
            | Type::Message(_)
            | Type::Timestamp
            | Type::Duration
    )
}

/// Whether the parameter `param` (the type `param_ty`), or its current binding, is a valid
/// substitution for `t1`; and whether `param` already had a binding.
fn valid_substitution(
    m: &mut Mapping,
    t1: &Type,
    param: &Arc<str>,
    param_ty: &Type,
    depth: usize,
) -> (bool, bool) {
    if t1 == param_ty {
        return (true, true);
    }
    if let Some(sub) = m.find(param).cloned() {
        if *t1 == sub {
            return (true, true);
        }
        if assignable(m, t1, &sub, depth + 1) {
            let general = most_general(t1, &sub);
            if not_referenced_in(m, param_ty, &general, 0) {
                m.add(param, general);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, param_ty, t1, 0) {
        m.add(param, t1.clone());
        return (true, false);
    }
    (false, false)
}

/// Whether `t1` is the same as `t2` or less specific (dyn or a parameter where `t2` is concrete).
pub fn is_equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    less_specific(t1, t2, 0)
}

fn less_specific(t1: &Type, t2: &Type, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if matches!(t1, Type::Dyn | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Param(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Abstract(n1, p1), Type::Abstract(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2)
                    .all(|(a, b)| less_specific(a, b, depth + 1))
        }
        (Type::List(a), Type::List(b)) | (Type::Optional(a), Type::Optional(b)) => {
            less_specific(a, b, depth + 1)
        }
        (Type::Map(k1, v1), Type::Map(k2, v2)) => {
            less_specific(k1, k2, depth + 1) && less_specific(v1, v2, depth + 1)
        }
        (Type::Type(_), Type::Type(_)) => true,
        _ => t1 == t2,
    }
}

/// The more general of two types known to unify.
///
/// Joining `null` with a nullable type (a timestamp, an optional, ...) gives the nullable
/// type whichever comes first, as cel-spec's `legacy_nullable_types` tests expect; cel-go
/// (which skips those tests) gives `null` when `null` comes second.
pub fn most_general(t1: &Type, t2: &Type) -> Type {
    if is_equal_or_less_specific(t1, t2) || matches!(t2, Type::Null) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// The occurs check: whether the parameter `t` does not appear in `within`, directly or
/// through bindings.
fn not_referenced_in(m: &Mapping, t: &Type, within: &Type, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if t == within {
        return false;
    }
    match within {
        Type::Param(p) => match m.find(p) {
            None => true,
            Some(sub) => not_referenced_in(m, t, sub, depth + 1),
        },
        Type::List(a) | Type::Optional(a) | Type::Type(a) => not_referenced_in(m, t, a, depth + 1),
        Type::Map(k, v) => {
            not_referenced_in(m, t, k, depth + 1) && not_referenced_in(m, t, v, depth + 1)
        }
        Type::Abstract(_, ps) => ps.iter().all(|p| not_referenced_in(m, t, p, depth + 1)),
        _ => true,
    }
}

/// Replaces bound type parameters by their bindings, transitively; unbound ones become `dyn`
/// when `params_to_dyn`.
pub fn substitute(m: &Mapping, t: &Type, params_to_dyn: bool) -> Type {
    subst(m, t, params_to_dyn, 0)
}

fn subst(m: &Mapping, t: &Type, to_dyn: bool, depth: usize) -> Type {
    if depth > MAX_DEPTH {
        return Type::Dyn;
    }
    let d = depth + 1;
    match t {
        Type::Param(p) => match m.find(p) {
            Some(sub) => subst(m, sub, to_dyn, d),
            None if to_dyn => Type::Dyn,
            None => t.clone(),
        },
        Type::List(a) => Type::list(subst(m, a, to_dyn, d)),
        Type::Optional(a) => Type::optional(subst(m, a, to_dyn, d)),
        Type::Type(a) => Type::type_of(subst(m, a, to_dyn, d)),
        Type::Map(k, v) => Type::map(subst(m, k, to_dyn, d), subst(m, v, to_dyn, d)),
        Type::Abstract(name, ps) => Type::Abstract(
            name.clone(),
            ps.iter().map(|p| subst(m, p, to_dyn, d)).collect(),
        ),
        _ => t.clone(),
    }
}

/// Whether `t` mentions a type parameter; without one, assignability never binds anything.
fn has_params(t: &Type) -> bool {
    match t {
        Type::Param(_) => true,
        Type::List(a) | Type::Optional(a) | Type::Type(a) => has_params(a),
        Type::Map(k, v) => has_params(k) || has_params(v),
        Type::Abstract(_, ps) => ps.iter().any(has_params),
        _ => false,
    }
}

/// Whether `t1` is assignable to `t2`; on success `m` takes the new bindings, on failure it is
/// left as it was.
pub fn is_assignable(m: &mut Mapping, t1: &Type, t2: &Type) -> bool {
    if !has_params(t1) && !has_params(t2) {
        // Nothing can be bound: no copy of the mapping to roll back to is needed.
        return assignable(m, t1, t2, 0);
    }
    let mut copy = m.clone();
    if assignable(&mut copy, t1, t2, 0) {
        *m = copy;
        true
    } else {
        false
    }
}

/// [`is_assignable`] element-wise; the lists must have the same length.
pub fn is_assignable_list(m: &mut Mapping, l1: &[Type], l2: &[Type]) -> bool {
    if !l1.iter().chain(l2).any(has_params) {
        return assignable_list(m, l1, l2, 0);
    }
    let mut copy = m.clone();
    if assignable_list(&mut copy, l1, l2, 0) {
        *m = copy;
        true
    } else {
        false
    }
}

/// Renames every type parameter in `t` through `renames` (used to give an overload's
/// parameters fresh names for one call).
pub fn rename_params(t: &Type, renames: &HashMap<Arc<str>, Type>) -> Type {
    match t {
        Type::Param(p) => renames.get(p).cloned().unwrap_or_else(|| t.clone()),
        Type::List(a) => Type::list(rename_params(a, renames)),
        Type::Optional(a) => Type::optional(rename_params(a, renames)),
        Type::Type(a) => Type::type_of(rename_params(a, renames)),
        Type::Map(k, v) => Type::map(rename_params(k, renames), rename_params(v, renames)),
        Type::Abstract(name, ps) => Type::Abstract(
            name.clone(),
            ps.iter().map(|p| rename_params(p, renames)).collect(),
        ),
        _ => t.clone(),
    }
}

/// Collects the names of the type parameters in `t`, in order of first appearance.
pub fn collect_params(t: &Type, out: &mut Vec<Arc<str>>) {
    match t {
        Type::Param(p) if !out.contains(p) => out.push(p.clone()),
        Type::List(a) | Type::Optional(a) | Type::Type(a) => collect_params(a, out),
        Type::Map(k, v) => {
            collect_params(k, out);
            collect_params(v, out);
        }
        Type::Abstract(_, ps) => ps.iter().for_each(|p| collect_params(p, out)),
        _ => {}
    }
}

/// Renders a type as cel-go does in checker messages (`FormatCELType`): `list(int)`,
/// `map(string, dyn)`, `timestamp`, `null`, `optional_type(int)`, `!error!`.
///
/// This differs from `Type`'s `Display`, which uses the runtime type names
/// (`google.protobuf.Timestamp`, `null_type`).
pub fn format_type(t: &Type) -> String {
    let mut out = String::new();
    write_type(t, &mut out);
    out
}

fn write_type(t: &Type, out: &mut String) {
    let name = match t {
        Type::Dyn => "dyn",
        Type::Null => "null",
        Type::Bool => "bool",
        Type::Int => "int",
        Type::Uint => "uint",
        Type::Double => "double",
        Type::String => "string",
        Type::Bytes => "bytes",
        Type::Timestamp => "timestamp",
        Type::Duration => "duration",
        Type::Error => "!error!",
        Type::Param(p) | Type::Message(p) => p,
        Type::List(e) => return write_params(out, "list", [&**e]),
        Type::Map(k, v) => return write_params(out, "map", [&**k, &**v]),
        Type::Type(e) => return write_params(out, "type", [&**e]),
        Type::Optional(e) => return write_params(out, "optional_type", [&**e]),
        Type::Abstract(name, ps) => {
            if ps.is_empty() {
                name
            } else {
                return write_params(out, name, ps.iter());
            }
        }
    };
    out.push_str(name);
}

fn write_params<'t>(out: &mut String, name: &str, params: impl IntoIterator<Item = &'t Type>) {
    out.push_str(name);
    out.push('(');
    for (i, p) in params.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_type(p, out);
    }
    out.push(')');
}
