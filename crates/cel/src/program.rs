//! A compiled, immutable program: `Send + Sync`, shared across threads.

use crate::env::Activation;
use crate::error::EvalResult;
use crate::eval::{Ctx, Node};
use crate::types::Type;

#[derive(Debug)]
pub struct Program {
    pub(crate) root: Node,
    pub(crate) result_type: Type,
}

impl Program {
    /// Evaluates against one activation.
    pub fn eval<'a>(&self, activation: &Activation<'a>) -> EvalResult<'a> {
        self.root.eval(&Ctx { activation })
    }

    /// The checked type of the result (`dyn` when unchecked or unknown).
    pub fn result_type(&self) -> &Type {
        &self.result_type
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn program_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<super::Program>();
    }
}
