//! Function signatures: how many arguments a function takes and of which types, checked
//! before its body runs (JMESPath's `invalid-arity` and `invalid-type` errors).

use std::fmt;
use std::ops::BitOr;

use crate::error::RuntimeError;
use crate::value::Val;

/// The types an argument may have: one of the constants, or several joined with `|`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgType(u16);

impl ArgType {
    /// `null`
    pub const NULL: ArgType = ArgType(1);
    /// `true` or `false`
    pub const BOOLEAN: ArgType = ArgType(1 << 1);
    /// A number.
    pub const NUMBER: ArgType = ArgType(1 << 2);
    /// A string.
    pub const STRING: ArgType = ArgType(1 << 3);
    /// Any array.
    pub const ARRAY: ArgType = ArgType(1 << 4);
    /// An object.
    pub const OBJECT: ArgType = ArgType(1 << 5);
    /// An array of numbers only (an empty array qualifies).
    pub const ARRAY_NUMBER: ArgType = ArgType(1 << 6);
    /// An array of strings only (an empty array qualifies).
    pub const ARRAY_STRING: ArgType = ArgType(1 << 7);
    /// An expression reference, `&expr`.
    pub const EXPREF: ArgType = ArgType(1 << 8);
    /// Anything, an expression reference included (as go-jmespath's `any`).
    pub const ANY: ArgType = ArgType(0b1_0011_1111);

    const NAMES: [(ArgType, &'static str); 9] = [
        (ArgType::NULL, "null"),
        (ArgType::BOOLEAN, "boolean"),
        (ArgType::NUMBER, "number"),
        (ArgType::STRING, "string"),
        (ArgType::ARRAY, "array"),
        (ArgType::OBJECT, "object"),
        (ArgType::ARRAY_NUMBER, "array[number]"),
        (ArgType::ARRAY_STRING, "array[string]"),
        (ArgType::EXPREF, "expref"),
    ];

    /// `self | other`, usable in constants.
    pub const fn union(self, other: ArgType) -> ArgType {
        ArgType(self.0 | other.0)
    }

    /// Whether every type of `other` is one of these.
    pub fn contains(self, other: ArgType) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether `value` has one of these types.
    pub(crate) fn accepts(self, value: &Val<'_>) -> bool {
        let direct = match value {
            Val::Null => ArgType::NULL,
            Val::Bool(_) => ArgType::BOOLEAN,
            Val::Num(_) => ArgType::NUMBER,
            Val::Str(_) => ArgType::STRING,
            Val::JsonArray(..) | Val::Array(_) => ArgType::ARRAY,
            Val::JsonObject(..) | Val::Object(_) => ArgType::OBJECT,
            Val::ExprRef(_) => ArgType::EXPREF,
        };
        if self.contains(direct) {
            return true;
        }
        let Some(mut items) = value.elements() else {
            return false;
        };
        if self.contains(ArgType::ARRAY_NUMBER) && items.clone().all(|v| v.as_num().is_some()) {
            return true;
        }
        self.contains(ArgType::ARRAY_STRING) && items.all(|v| v.as_str().is_some())
    }
}

impl BitOr for ArgType {
    type Output = ArgType;
    fn bitor(self, rhs: ArgType) -> ArgType {
        ArgType(self.0 | rhs.0)
    }
}

impl fmt::Display for ArgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == ArgType::ANY {
            return f.write_str("any");
        }
        let mut first = true;
        for (t, name) in ArgType::NAMES {
            if self.contains(t) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for ArgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgType({self})")
    }
}

/// The arguments a function takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    params: Vec<ArgType>,
    variadic: bool,
    checked: bool,
}

impl Signature {
    /// Exactly these arguments, each of one of its types.
    pub fn new(params: impl IntoIterator<Item = ArgType>) -> Signature {
        Signature {
            params: params.into_iter().collect(),
            variadic: false,
            checked: true,
        }
    }

    /// The last parameter repeats: it is required once and may be given any number of
    /// times more (like `merge(object, ...)`).
    pub fn variadic(mut self) -> Signature {
        self.variadic = !self.params.is_empty();
        self
    }

    /// Any number of arguments of any type (go-jmespath's function entry with no argument
    /// specs: nothing is checked).
    pub fn any() -> Signature {
        Signature {
            params: Vec::new(),
            variadic: false,
            checked: false,
        }
    }

    /// The parameters, in order.
    pub fn params(&self) -> &[ArgType] {
        &self.params
    }

    /// Whether the last parameter repeats.
    pub fn is_variadic(&self) -> bool {
        self.variadic
    }

    fn arity(&self) -> String {
        if self.variadic {
            format!("at least {}", self.params.len())
        } else {
            self.params.len().to_string()
        }
    }

    /// Checks arity, then each argument's type.
    pub(crate) fn check(&self, function: &str, args: &[Val<'_>]) -> Result<(), RuntimeError> {
        if !self.checked {
            return Ok(());
        }
        let arity_ok = if self.variadic {
            args.len() >= self.params.len()
        } else {
            args.len() == self.params.len()
        };
        if !arity_ok {
            return Err(RuntimeError::InvalidArity {
                function: function.to_owned(),
                expected: self.arity(),
                actual: args.len(),
            });
        }
        let last = self.params.last().copied();
        for (i, arg) in args.iter().enumerate() {
            let Some(expected) = self.params.get(i).copied().or(last) else {
                continue;
            };
            if !expected.accepts(arg) {
                return Err(RuntimeError::InvalidType {
                    function: function.to_owned(),
                    position: i + 1,
                    expected: expected.to_string(),
                    actual: describe(arg),
                });
            }
        }
        Ok(())
    }
}

/// An argument's type for an error message; for arrays, what their elements are.
fn describe(arg: &Val<'_>) -> String {
    let Some(items) = arg.elements() else {
        return arg.type_name().to_owned();
    };
    let mut kinds: Vec<&str> = Vec::new();
    for item in items {
        let name = item.type_name();
        if !kinds.contains(&name) {
            kinds.push(name);
        }
    }
    if kinds.is_empty() {
        "array".to_owned()
    } else {
        format!("array[{}]", kinds.join("|"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::value::{Num, Val};
    use sonic_rs::json;

    #[test]
    fn type_sets_display_and_accept() {
        assert_eq!(
            (ArgType::STRING | ArgType::ARRAY).to_string(),
            "string|array"
        );
        assert_eq!(ArgType::ANY.to_string(), "any");
        let nums = json!([1, 2.5]);
        let mixed = json!([1, "a"]);
        let empty = json!([]);
        assert!(ArgType::ARRAY_NUMBER.accepts(&Val::from_json(&nums)));
        assert!(!ArgType::ARRAY_NUMBER.accepts(&Val::from_json(&mixed)));
        assert!(ArgType::ARRAY_STRING.accepts(&Val::from_json(&empty)));
        assert!(ArgType::ANY.accepts(&Val::Null));
        assert!(ArgType::ANY.accepts(&Val::ExprRef(&crate::ast::Node::Identity)));
        assert!(!ArgType::OBJECT.accepts(&Val::ExprRef(&crate::ast::Node::Identity)));
        assert_eq!(describe(&Val::from_json(&mixed)), "array[number|string]");
    }

    #[test]
    fn arity_and_variadics() {
        let sig = Signature::new([ArgType::OBJECT]).variadic();
        let obj = json!({});
        let o = Val::from_json(&obj);
        assert!(
            sig.check("merge", &[o.clone(), o.clone(), o.clone()])
                .is_ok()
        );
        let err = sig.check("merge", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid-arity: merge() takes at least 1 argument(s), got 0"
        );
        let err = sig.check("merge", &[o, Val::Num(Num::Int(1))]).unwrap_err();
        assert!(matches!(err, RuntimeError::InvalidType { position: 2, .. }));
        assert!(
            Signature::any()
                .check("x", &[Val::Null, Val::Bool(true)])
                .is_ok()
        );
    }
}
