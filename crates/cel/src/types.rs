//! Static types used by declarations and the checker.

use std::fmt;
use std::sync::Arc;

/// A CEL type as the checker sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    /// Unknown until run time; accepted wherever any type is.
    Dyn,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Timestamp,
    Duration,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// The type of a type value: `type(int)` is `Type(Int)`.
    Type(Box<Type>),
    Optional(Box<Type>),
    /// A type parameter in an overload signature (`A` in `list(A) -> A`).
    Param(Arc<str>),
    /// A message or other named type (not otherwise modelled here).
    Message(Arc<str>),
    /// A named, parameterised type of an extension (cel-spec's `abstract_type`, cel-go's
    /// opaque types), e.g. `tuple(int, string)`. `optional_type` is [`Type::Optional`], not this.
    Abstract(Arc<str>, Vec<Type>),
    /// The result of a failed check; suppresses follow-on errors.
    Error,
}

impl Type {
    pub fn list(elem: Type) -> Type {
        Type::List(Box::new(elem))
    }

    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Box::new(key), Box::new(value))
    }

    pub fn optional(inner: Type) -> Type {
        Type::Optional(Box::new(inner))
    }

    pub fn type_of(inner: Type) -> Type {
        Type::Type(Box::new(inner))
    }

    pub fn param(name: &str) -> Type {
        Type::Param(Arc::from(name))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Type(t) => write!(f, "type({t})"),
            Type::Optional(t) => write!(f, "optional_type({t})"),
            Type::Param(p) => f.write_str(p),
            Type::Message(m) => f.write_str(m),
            Type::Abstract(name, params) => {
                f.write_str(name)?;
                if !params.is_empty() {
                    f.write_str("(")?;
                    for (i, p) in params.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{p}")?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            Type::Error => f.write_str("*error*"),
        }
    }
}
