//! Errors: [`ParseError`] when an expression does not compile, [`RuntimeError`] when a search
//! fails, [`RegistryError`] when a custom function cannot be registered.
//!
//! Runtime errors name the JMESPath error kind ([`RuntimeError::kind`]: `invalid-type`,
//! `invalid-arity`, `unknown-function`, `invalid-value`) so callers and the compliance suite
//! can match on it; [`RuntimeError::NotFound`] is the kyverno/go-jmespath fork's own
//! `NotFoundError` (see the crate docs).

use std::fmt;

/// An expression that does not compile: where (a byte offset into the expression) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("syntax error at position {position}: {kind}")]
pub struct ParseError {
    /// Byte offset into the expression where the problem was found.
    pub position: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A token the grammar does not allow here.
    #[error("expected {expected}, found {found}")]
    Unexpected {
        /// What the grammar allows at this position.
        expected: &'static str,
        /// The token found instead, as written (or "end of expression").
        found: String,
    },
    /// A character that starts no token.
    #[error("unknown character {0:?}")]
    UnknownCharacter(char),
    /// A quoted identifier, raw string or literal without its closing delimiter.
    #[error("unclosed {0}")]
    Unclosed(&'static str),
    /// A backtick literal that is not JSON.
    #[error("invalid JSON literal: {0}")]
    InvalidLiteral(String),
    /// A quoted identifier that is not a JSON string.
    #[error("invalid quoted identifier: {0}")]
    InvalidQuotedIdentifier(String),
    /// An index or slice bound that is not a 64-bit integer.
    #[error("invalid number {0:?}")]
    InvalidNumber(String),
    /// The expression nests deeper than the parser accepts.
    #[error("expression nested deeper than {limit} levels")]
    TooDeep {
        /// The limit ([`crate::MAX_EXPRESSION_DEPTH`]).
        limit: usize,
    },
}

impl ParseError {
    pub(crate) fn new(position: usize, kind: ParseErrorKind) -> Self {
        ParseError { position, kind }
    }

    pub(crate) fn unexpected(position: usize, expected: &'static str, found: String) -> Self {
        ParseError::new(position, ParseErrorKind::Unexpected { expected, found })
    }
}

/// A search that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// kyverno/go-jmespath's `NotFoundError`: a field path named a key the object does not
    /// have, and nothing on the way up turned that into `null` (see the crate docs). The
    /// message is the fork's, word for word, because Kyverno shows it to users.
    #[error("Unknown key \"{key}\" in path")]
    NotFound {
        /// The missing key.
        key: String,
    },
    /// `invalid-type`: a function argument of the wrong type.
    #[error("invalid-type: {function}() argument {position} must be {expected}, got {actual}")]
    InvalidType {
        /// The function called.
        function: String,
        /// 1-based argument position.
        position: usize,
        /// The types the signature accepts, e.g. `string|array`.
        expected: String,
        /// What the argument was, e.g. `number`, or a short description.
        actual: String,
    },
    /// `invalid-arity`: a function called with the wrong number of arguments.
    #[error("invalid-arity: {function}() takes {expected} argument(s), got {actual}")]
    InvalidArity {
        /// The function called.
        function: String,
        /// What the signature accepts, e.g. `2` or `at least 1`.
        expected: String,
        /// How many arguments the call had.
        actual: usize,
    },
    /// `unknown-function`: no function of that name is registered.
    #[error("unknown-function: {name}()")]
    UnknownFunction {
        /// The name called.
        name: String,
    },
    /// `invalid-value`: a value no operation accepts, e.g. a slice step of 0.
    #[error("invalid-value: {message}")]
    InvalidValue {
        /// What was wrong.
        message: String,
    },
    /// A custom function failed for its own reasons.
    #[error("{function}(): {message}")]
    Function {
        /// The function that failed (filled in by the evaluator when the function left it
        /// empty).
        function: String,
        /// Its message.
        message: String,
    },
    /// A value nested deeper than the evaluator follows (see [`crate::MAX_VALUE_DEPTH`]).
    #[error("value nested deeper than {limit} levels")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
}

impl RuntimeError {
    /// The error a custom function returns when it fails: the evaluator fills in the
    /// function's name.
    pub fn function_failed(message: impl fmt::Display) -> Self {
        RuntimeError::Function {
            function: String::new(),
            message: message.to_string(),
        }
    }

    /// The JMESPath error kind: `invalid-type`, `invalid-arity`, `unknown-function`,
    /// `invalid-value`; `not-found` for the fork's `NotFoundError`, `function-error` for a
    /// custom function's failure and `too-deep` for the nesting bound.
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeError::NotFound { .. } => "not-found",
            RuntimeError::InvalidType { .. } => "invalid-type",
            RuntimeError::InvalidArity { .. } => "invalid-arity",
            RuntimeError::UnknownFunction { .. } => "unknown-function",
            RuntimeError::InvalidValue { .. } => "invalid-value",
            RuntimeError::Function { .. } => "function-error",
            RuntimeError::TooDeep { .. } => "too-deep",
        }
    }

    /// Whether this is the fork's `NotFoundError` (Kyverno treats it apart from other
    /// failures).
    pub fn is_not_found(&self) -> bool {
        matches!(self, RuntimeError::NotFound { .. })
    }

    /// Names `function` as the failing function if the error does not name one yet.
    pub(crate) fn in_function(mut self, name: &str) -> Self {
        if let RuntimeError::Function { function, .. } = &mut self
            && function.is_empty()
        {
            name.clone_into(function);
        }
        self
    }
}

/// A custom function that could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is a JMESPath built-in; [`crate::FunctionRegistry::replace`] overrides it.
    #[error("{0}() is a built-in JMESPath function; replace() overrides it explicitly")]
    Builtin(String),
    /// The name is already registered; [`crate::FunctionRegistry::replace`] overrides it.
    #[error("{0}() is already registered; replace() overrides it explicitly")]
    Duplicate(String),
    /// The name could never be called: function names are unquoted identifiers.
    #[error("{0:?} is not a JMESPath identifier ([A-Za-z_][A-Za-z0-9_]*)")]
    InvalidName(String),
}
