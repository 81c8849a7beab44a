//! The CEL language for celer: parse, check, compile once; evaluate many times over values
//! that borrow from the input JSON.
//!
//! ```
//! use celer_cel::{Activation, Env, Type, Value};
//! let mut env = Env::standard();
//! env.declare("x", Type::Int);
//! let program = env.compile("x * 2 + 1").unwrap();
//! let mut act = Activation::new(&env);
//! act.bind("x", Value::Int(20)).unwrap();
//! assert!(matches!(program.eval(&act), Ok(Value::Int(41))));
//! ```
//!
//! # Layers
//!
//! This crate is the language alone: syntax, checker, compiler, evaluator, values, the
//! standard library and cel-go's extensions ([`library::Extensions`], [`library::Math`],
//! [`library::Encoders`]). Other libraries are not here (Kubernetes' are in
//! `celer-cel-kubernetes`, Kyverno's in `celer-cel-kyverno`): they plug in through the
//! [`Library`](library::Library) trait with [`Env::add_library`], and message types (such as
//! those a mutation builds with `Object{...}`) through [`MessageTypes`](value::MessageTypes). Top-level modules
//! depend on each other without cycles (`tests/module_graph.rs` checks it):
//!
//! ```text
//! error, types  <-  limits, time  <-  value  <-  format  <-  ops  <-  syntax, library
//!               <-  env  <-  check  <-  eval (activation, program)  <-  compile
//! ```
//!
//! A policy's `spec.variables` become lazy variables, read as `variables.<name>` and
//! evaluated at most once per activation ([`env`](mod@env) describes the semantics).
#![forbid(unsafe_code)]

// Lets test helpers shared with the library crates (by `#[path]`) name this crate alike.
#[cfg(test)]
extern crate self as celer_cel;

pub mod check;
pub mod compile;
pub mod env;
pub mod error;
pub mod eval;
pub mod format;
pub mod library;
pub mod limits;
pub mod ops;
pub mod syntax;
pub mod time;
pub mod types;
pub mod value;

pub use env::{CheckOptions, Env};
pub use error::{CompileError, CompileErrorKind, EvalError};
pub use eval::activation::{Activation, ActivationBuffers, UndeclaredVariable};
pub use eval::program::{Evaluation, Program};
pub use syntax::ParseOptions;
pub use types::Type;
pub use value::{EvalResult, Json, Value};
