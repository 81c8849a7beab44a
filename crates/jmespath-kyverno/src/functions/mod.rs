//! Kyverno's custom JMESPath functions (`pkg/engine/jmespath` of Kyverno v1.19.1), registered
//! on a [`FunctionRegistry`] of JMESPath's built-ins, with `sum` replaced as Kyverno replaces
//! it.
//!
//! Argument types are declared as Kyverno declares them, so the registry's checks refuse
//! what go-jmespath refuses before a function body runs. A body's own failures carry
//! Kyverno's text (`JMESPath function 'divide': Zero divisor passed`, or the Go library's
//! error, such as `time: invalid duration "x"`) as the message of
//! [`RuntimeError::Function`]; [`kyverno_message`] gives that text back.

mod arithmetic;
mod calendar;
mod data;
mod gojson;
mod golayout;
mod image;
mod net;
mod regexes;
mod semver;
mod strings;
mod time;
mod x509;
mod x509_fields;

use std::sync::Arc;

use celer_jmespath::{ArgType, Function, FunctionRegistry, RuntimeError, Signature};
use sonic_rs::{JsonValueTrait, Value};

use crate::Options;

pub use golayout::GoTime;
pub(crate) use net::system_resolver;
pub(crate) use strings::clean_path;

/// `time.Parse(time.RFC3339, s)`, with Go's error text: for building a fixed clock.
pub fn parse_rfc3339(s: &str) -> Result<GoTime, String> {
    golayout::parse(golayout::RFC3339, s)
}

/// Kyverno's wording of a failure: `JMESPath function '<name>': <message>`.
pub(crate) fn fail(function: &str, message: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::function_failed(format!("JMESPath function '{function}': {message}"))
}

/// A Go library's error, passed through as Kyverno passes it.
pub(crate) fn raw(message: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::function_failed(message)
}

/// Kyverno's text for an error of a search: a custom function's message as Kyverno words
/// it, other errors as `celer-jmespath` words them.
pub fn kyverno_message(error: &RuntimeError) -> String {
    match error {
        RuntimeError::Function { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The string at `position` (the signature guarantees it; empty otherwise).
pub(crate) fn str_arg(args: &[Value], position: usize) -> &str {
    args.get(position)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// The number at `position` as Go's `float64`.
pub(crate) fn num_arg(args: &[Value], position: usize) -> f64 {
    args.get(position)
        .and_then(crate::go::as_f64)
        .unwrap_or(0.0)
}

/// A JSON number for a Go `float64` result, or Go's marshalling error.
pub(crate) fn number(function: &str, f: f64) -> Result<Value, RuntimeError> {
    crate::go::number(f).ok_or_else(|| {
        fail(
            function,
            format!("json: unsupported value: {}", crate::go::sprint_float(f)),
        )
    })
}

pub(crate) const S: ArgType = ArgType::STRING;
pub(crate) const N: ArgType = ArgType::NUMBER;
pub(crate) const O: ArgType = ArgType::OBJECT;
pub(crate) const A: ArgType = ArgType::ARRAY;
pub(crate) const ANY: ArgType = ArgType::ANY;

/// Every function Kyverno v1.19.1 registers for its classic engine, in Kyverno's order.
pub(crate) fn all(options: &Options) -> Vec<Function> {
    let mut out = Vec::with_capacity(64);
    strings::functions(&mut out);
    regexes::functions(&mut out);
    data::functions(&mut out, options);
    arithmetic::functions(&mut out);
    time::functions(&mut out, options);
    semver::functions(&mut out);
    x509::functions(&mut out);
    image::functions(&mut out, options);
    net::functions(&mut out, options);
    out
}

/// A registry of JMESPath's built-ins and Kyverno's functions.
pub(crate) fn build(options: &Options) -> Arc<FunctionRegistry> {
    let mut registry = FunctionRegistry::new();
    for function in all(options) {
        // `sum` overrides the built-in, as in Kyverno; every other name is new.
        if registry.replace(function).is_err() {
            // Names are fixed identifiers: unreachable.
        }
    }
    Arc::new(registry)
}

/// Shorthand for a fixed signature.
pub(crate) fn sig<const K: usize>(types: [ArgType; K]) -> Signature {
    Signature::new(types)
}
