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
//! # Admission policies: variables and mutations
//!
//! A policy's `spec.variables` become lazy variables, read as `variables.<name>` and
//! evaluated at most once per activation ([`env`](mod@env) describes the semantics). A
//! MutatingAdmissionPolicy's environment also builds `Object{...}` and `JSONPatch{...}`
//! values ([`mutation`]).
//!
//! ```
//! use celer_cel::{Activation, Env, Type, format, library::cost, mutation};
//! let mut env = Env::kubernetes();
//! env.declare("object", Type::Dyn);
//! env.enable_mutation_types(); // MutatingAdmissionPolicy only
//! env.enable_lazy_variables(); // `variables` exists, empty, for the first variable
//! // spec.variables, in order: each compiled with the ones before it, then declared.
//! let name = env.compile("object.metadata.name").unwrap();
//! env.declare_lazy("name", name.result_type().clone());
//! let labels = env.compile(r#"{"app": variables.name}"#).unwrap();
//! env.declare_lazy("labels", labels.result_type().clone());
//! let apply = env
//!     .compile("Object{metadata: Object.metadata{labels: variables.labels}}")
//!     .unwrap();
//! assert_eq!(apply.result_type(), &mutation::object_type());
//!
//! // Per request: one activation for the policy's expressions.
//! let object: sonic_rs::Value = sonic_rs::from_str(r#"{"metadata": {"name": "web"}}"#).unwrap();
//! let mut act = Activation::new(&env);
//! act.bind_json("object", &object).unwrap();
//! act.set_lazy(0, &name);
//! act.set_lazy(1, &labels);
//! let eval = apply.evaluate(&act, Some(cost::PER_CALL_LIMIT));
//! let patch = eval.result.unwrap();
//! assert_eq!(mutation::check_type_names(&patch), Ok(()));
//! assert_eq!(format::to_json(&patch).unwrap(), r#"{"metadata":{"labels":{"app":"web"}}}"#);
//! assert!(eval.variables_cost > 0 && eval.cost > eval.variables_cost);
//! ```
#![forbid(unsafe_code)]

pub mod check;
pub mod compile;
pub mod env;
pub mod error;
pub mod eval;
pub mod format;
pub mod library;
pub mod limits;
pub mod mutation;
pub mod ops;
pub mod program;
pub mod syntax;
pub mod time;
pub mod types;
pub mod value;

pub use env::{Activation, ActivationBuffers, Env, ParseOptions};
pub use error::{CompileError, CompileErrorKind, EvalError, EvalResult};
pub use program::{Evaluation, Program};
pub use types::Type;
pub use value::{Json, Value};
