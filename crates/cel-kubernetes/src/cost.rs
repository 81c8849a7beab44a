//! Kubernetes' cost limits for CEL: the per-expression limit and the budgets that
//! kube-apiserver shares across a binding's validations and its match conditions.

use celer_cel::{Activation, Evaluation, Program};

/// Kubernetes' per-expression cost limit (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;

// The core refuses regex searches estimated above the same limit before they run.
const _: () = assert!(PER_CALL_LIMIT == celer_cel::library::cost::MAX_SEARCH_COST);
/// Kubernetes' budget per policy, binding and param (`RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// Kubernetes' budget shared by all match conditions of one evaluation.
pub const MATCH_CONDITIONS_BUDGET: u64 = 2_500_000;

/// A cost budget shared by several evaluations, as Kubernetes shares `RuntimeCELCostBudget`
/// across one binding's validations and `RuntimeCELCostBudgetMatchConditions` across its
/// match conditions. Each evaluation is still bounded by the per-expression limit; its actual
/// cost is then drawn from the budget, and an evaluation that costs more than what is left
/// exhausts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    remaining: u64,
    per_call_limit: u64,
}

/// The budget ran out: Kubernetes stops evaluating and reports one error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "validation failed due to running out of cost budget, no further validation rules will be run"
)]
pub struct BudgetExhausted;

impl Budget {
    pub fn new(total: u64, per_call_limit: u64) -> Budget {
        Budget {
            remaining: total,
            per_call_limit,
        }
    }

    /// The budget of one binding's validations (`RuntimeCELCostBudget`).
    pub fn validations() -> Budget {
        Budget::new(RUNTIME_BUDGET, PER_CALL_LIMIT)
    }

    /// The budget of one evaluation's match conditions.
    pub fn match_conditions() -> Budget {
        Budget::new(MATCH_CONDITIONS_BUDGET, PER_CALL_LIMIT)
    }

    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Evaluates `program` within the per-expression limit and charges its cost.
    pub fn evaluate<'a>(
        &mut self,
        program: &Program,
        activation: &Activation<'a>,
    ) -> Result<Evaluation<'a>, BudgetExhausted> {
        let evaluation = program.evaluate(activation, Some(self.per_call_limit));
        match self.remaining.checked_sub(evaluation.cost) {
            Some(left) => {
                self.remaining = left;
                Ok(evaluation)
            }
            None => {
                self.remaining = 0;
                Err(BudgetExhausted)
            }
        }
    }
}
