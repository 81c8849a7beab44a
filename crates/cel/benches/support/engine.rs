//! The 16 checks compiled with celer, and their evaluation into the same `[bool; 16]` the
//! hand-written checks return.

use celer_cel::{Activation, Env, Json, Program, Type, Value};

use super::exprs::expressions;
use super::handwritten::COUNT;

/// The compiled checks with the environment they were compiled in.
pub struct Suite {
    pub env: Env,
    pub programs: Vec<(&'static str, Program)>,
}

/// The environment the checks compile in: the standard library and `object` as `dyn`.
pub fn env() -> Env {
    let mut env = Env::standard();
    env.declare("object", Type::Dyn);
    env
}

/// Compiles every check; the error names the first one that does not compile.
pub fn compile_all(
    env: &Env,
    exprs: &[(&'static str, String)],
) -> Result<Vec<(&'static str, Program)>, String> {
    exprs
        .iter()
        .map(|(name, src)| {
            env.compile(src).map(|p| (*name, p)).map_err(|e| {
                let first_line = e.to_string().lines().next().unwrap_or_default().to_string();
                format!("{name}: {first_line}")
            })
        })
        .collect()
}

impl Suite {
    pub fn compile() -> Result<Suite, String> {
        let env = env();
        let programs = compile_all(&env, &expressions())?;
        if programs.len() != COUNT {
            return Err(format!("expected {COUNT} checks, got {}", programs.len()));
        }
        Ok(Suite { env, programs })
    }

    /// An activation with `object` bound to the Pod (no copy: values borrow from `pod`).
    pub fn activation<'a>(&self, pod: &'a Json) -> Result<Activation<'a>, String> {
        let mut act = Activation::new(&self.env);
        act.bind_json("object", pod).map_err(|e| e.to_string())?;
        Ok(act)
    }

    /// Evaluates the 16 checks. Allocates nothing itself, so allocations counted around it
    /// are the evaluator's.
    #[inline(never)]
    pub fn eval_all(&self, act: &Activation<'_>) -> Result<[bool; COUNT], String> {
        let mut out = [false; COUNT];
        for ((name, program), slot) in self.programs.iter().zip(out.iter_mut()) {
            match program.eval(act) {
                Ok(Value::Bool(b)) => *slot = b,
                Ok(other) => return Err(format!("{name}: not a bool: {other:?}")),
                Err(e) => return Err(format!("{name}: {e}")),
            }
        }
        Ok(out)
    }

    /// From bytes: parse with sonic-rs, bind, evaluate the 16.
    #[inline(never)]
    pub fn end_to_end(&self, bytes: &[u8]) -> Result<[bool; COUNT], String> {
        let pod: Json = sonic_rs::from_slice(bytes).map_err(|e| e.to_string())?;
        let act = self.activation(&pod)?;
        self.eval_all(&act)
    }
}
