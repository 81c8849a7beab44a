//! A compiled, immutable program: `Send + Sync`, shared across threads.

use crate::error::EvalError;
use crate::eval::activation::Activation;
use crate::eval::{Ctx, Node};
use crate::library::cost;
use crate::types::Type;
use crate::value::EvalResult;

#[derive(Debug)]
pub struct Program {
    pub(crate) root: Node,
    pub(crate) result_type: Type,
    pub(crate) presence_test_cost: u64,
}

/// The outcome of one evaluation with its runtime cost.
#[derive(Debug)]
pub struct Evaluation<'a> {
    pub result: EvalResult<'a>,
    /// The cost as cel-go's runtime cost tracker counts it (when the limit was exceeded, the
    /// cost at the moment evaluation stopped), plus `variables_cost`: what a policy's budget
    /// pays for this evaluation.
    pub cost: u64,
    /// The part of `cost` spent on the lazy variables this evaluation was the first to read
    /// (their composition cost). The limit applies to `cost - variables_cost` and to
    /// each variable's own evaluation, separately.
    pub variables_cost: u64,
}

impl Program {
    /// Evaluates against one activation, without a cost limit.
    pub fn eval<'a>(&self, activation: &Activation<'a>) -> EvalResult<'a> {
        self.evaluate(activation, None).result
    }

    /// Evaluates and reports the cost. With a limit, evaluation stops once the cost exceeds
    /// it and the result is cel-go's `operation cancelled: actual cost limit exceeded`,
    /// whatever `&&`, `||` or a comprehension would otherwise have absorbed.
    pub fn evaluate<'a>(&self, activation: &Activation<'a>, limit: Option<u64>) -> Evaluation<'a> {
        let ctx = Ctx::new(
            activation,
            limit.unwrap_or(u64::MAX),
            self.presence_test_cost,
        );
        let result = self.root.eval(&ctx);
        let result = if ctx.exceeded() {
            Err(EvalError::new(cost::LIMIT_EXCEEDED))
        } else {
            result
        };
        let variables_cost = ctx.lazy_cost.get();
        Evaluation {
            result,
            cost: ctx.cost.get().saturating_add(variables_cost),
            variables_cost,
        }
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
