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

pub use env::{Activation, Env, ParseOptions};
pub use error::{CompileError, CompileErrorKind, EvalError, EvalResult};
pub use program::{Evaluation, Program};
pub use types::Type;
pub use value::{Json, Value};
