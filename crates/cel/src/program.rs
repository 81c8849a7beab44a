//! A compiled, immutable program: `Send + Sync`, shared across threads.

use crate::env::Activation;
use crate::error::EvalResult;
use crate::types::Type;

#[derive(Debug)]
pub struct Program {
    pub(crate) root: crate::compile::Node,
    pub(crate) result_type: Type,
}

impl Program {
    /// Evaluates against one activation.
    pub fn eval<'a>(&self, activation: &Activation<'a>) -> EvalResult<'a> {
        crate::compile::eval(&self.root, activation)
    }

    /// The checked type of the result (`dyn` when unchecked or unknown).
    pub fn result_type(&self) -> &Type {
        &self.result_type
    }
}
