//! What the Kubernetes libraries share: member functions that several types define under one
//! name, and Go's string quoting for error texts.
//!
//! # Member functions with the same name on several types
//!
//! The registry keeps one runtime implementation per (name, receiver style, arity), but
//! Kubernetes declares `isLessThan`, `isGreaterThan` and `compareTo` on both `Semver` and
//! `Quantity`. Each library therefore registers its overloads with the shared dispatcher
//! here ([`IS_LESS_THAN`], ...), which looks at the receiver's opaque type name and calls that
//! type's handler from [`BINARY_MEMBERS`]. Registering the same dispatcher twice is harmless,
//! so the libraries can register in any order.
//!
//! To add a type: write its [`Compare`] function, add one [`BinaryMembers`] line to
//! [`BINARY_MEMBERS`], and register its overloads with the dispatchers.

use celer_cel::error::EvalError;
use celer_cel::library::Impl;
use celer_cel::ops::overload;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

/// How two values of one type order, or `None` when the argument is not of that type.
pub type Compare = for<'v> fn(&Value<'v>, &Value<'v>) -> Option<std::cmp::Ordering>;

/// One type's entry in the dispatch table.
pub struct BinaryMembers {
    /// The opaque type name of the receiver (`kubernetes.Semver`).
    pub type_name: &'static str,
    pub compare: Compare,
}

/// Every type that implements shared binary members.
pub const BINARY_MEMBERS: &[BinaryMembers] = &[
    BinaryMembers {
        type_name: super::semver::TYPE_NAME,
        compare: super::semver::compare_values,
    },
    BinaryMembers {
        type_name: super::quantity::TYPE_NAME,
        compare: super::quantity::compare_values,
    },
];

fn dispatch<'a>(method: &str, receiver: Value<'a>, arg: Value<'a>) -> EvalResult<'a> {
    use std::cmp::Ordering;
    let ordering = match &receiver {
        Value::Opaque(o) => BINARY_MEMBERS
            .iter()
            .find(|e| e.type_name == o.type_name())
            .and_then(|e| (e.compare)(&receiver, &arg)),
        _ => None,
    };
    let Some(ordering) = ordering else {
        return Err(overload(method, &[&receiver, &arg]));
    };
    match method {
        "isLessThan" => Ok(Value::Bool(ordering == Ordering::Less)),
        "isGreaterThan" => Ok(Value::Bool(ordering == Ordering::Greater)),
        "compareTo" => Ok(Value::Int(match ordering {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        })),
        _ => Err(overload(method, &[&receiver, &arg])),
    }
}

fn is_less_than<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    dispatch("isLessThan", a, b)
}

fn is_greater_than<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    dispatch("isGreaterThan", a, b)
}

fn compare_to<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    dispatch("compareTo", a, b)
}

/// `<T>.isLessThan(<T>)` for every type in [`BINARY_MEMBERS`].
pub const IS_LESS_THAN: Impl = Impl::Binary(is_less_than);
/// `<T>.isGreaterThan(<T>)` for every type in [`BINARY_MEMBERS`].
pub const IS_GREATER_THAN: Impl = Impl::Binary(is_greater_than);
/// `<T>.compareTo(<T>)` for every type in [`BINARY_MEMBERS`].
pub const COMPARE_TO: Impl = Impl::Binary(compare_to);

/// Go's `strconv.Quote`, shared with the strings extension's formatter.
pub use celer_cel::library::ext::string_format::go_quote;

/// The string argument of a function, or the "no such overload" error.
pub fn string_arg<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v str, EvalError> {
    v.as_str().ok_or_else(|| overload(function, &[v]))
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::KubernetesEnv;
    use celer_cel::types::Type;

    /// Every receiver type declared for a shared member name must have a handler in
    /// [`BINARY_MEMBERS`]; otherwise the dispatcher (registered last wins) would answer "no
    /// matching overload" for it at run time. This catches a library that declares
    /// `isLessThan` & co. without joining the table.
    #[test]
    fn every_declared_receiver_has_a_handler() {
        let registry = celer_cel::Env::kubernetes().registry().clone();
        for name in ["isLessThan", "isGreaterThan", "compareTo"] {
            let Some(function) = registry.get(name) else {
                continue;
            };
            for o in function.overloads.iter().filter(|o| o.receiver) {
                let receiver = match o.params.first() {
                    Some(Type::Abstract(n, _) | Type::Message(n)) => n.to_string(),
                    other => panic!("{name}: unexpected receiver {other:?}"),
                };
                assert!(
                    BINARY_MEMBERS.iter().any(|e| e.type_name == receiver),
                    "{name} is declared on {receiver} but {receiver} has no entry in BINARY_MEMBERS"
                );
            }
        }
    }

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("tab\there\n"), r#""tab\there\n""#);
        assert_eq!(go_quote("\u{1}é"), r#""\x01é""#);
        assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
        assert_eq!(go_quote(""), r#""""#);
    }
}
