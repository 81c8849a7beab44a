//! Kubernetes' cost budgets: one budget shared by several evaluations, each still bounded by
//! the per-expression limit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::{Activation, Env};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::cost::{Budget, BudgetExhausted};

#[test]
fn a_budget_is_shared_by_evaluations() {
    let env = Env::kubernetes();
    let act = Activation::new(&env);
    let cheap = env.compile("[1, 2, 3].exists(x, x == 2)").unwrap(); // 26
    let mut budget = Budget::new(60, 1_000);
    assert!(budget.evaluate(&cheap, &act).unwrap().result.is_ok());
    assert!(budget.evaluate(&cheap, &act).unwrap().result.is_ok());
    assert_eq!(budget.remaining(), 8);
    assert_eq!(budget.evaluate(&cheap, &act).unwrap_err(), BudgetExhausted);
    assert_eq!(
        BudgetExhausted.to_string(),
        "validation failed due to running out of cost budget, no further validation rules will be run"
    );
    // The per-expression limit still applies within a large budget.
    let mut budget = Budget::new(1_000_000, 10);
    let eval = budget.evaluate(&cheap, &act).unwrap();
    assert_eq!(
        eval.result.unwrap_err().message(),
        "operation cancelled: actual cost limit exceeded"
    );
    assert_eq!(Budget::validations().remaining(), 10_000_000);
    assert_eq!(Budget::match_conditions().remaining(), 2_500_000);
}
