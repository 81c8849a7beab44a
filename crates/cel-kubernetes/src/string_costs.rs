//! Kubernetes' runtime costs for cel-go's `strings` extension (`library/cost.go`,
//! `CostEstimator.CallCost`), which replace cel-go's for these functions in Kubernetes'
//! environment: a traversal (`ceil(0.1 * size)`) for `lowerAscii`, `upperAscii`,
//! `substring`, `trim`; two traversals for `replace` and `split` (the traversal plus the
//! construction of the result); two traversals of the result for `join`. Kubernetes charges
//! by function name, whatever the overload. `indexOf` and `lastIndexOf` cost the lists
//! library's traversal ([`crate::lists`]), for their string overloads as well; `format`,
//! `strings.quote` and `charAt` keep the core's costs.

use celer_cel::library::{Registry, cost};
use celer_cel::value::Value;

pub fn register(r: &mut Registry) {
    for arity in [2, 3] {
        r.set_cost("substring", true, arity, first_arg_traversal);
        r.set_cost("split", true, arity, first_arg_double_traversal);
    }
    for arity in [3, 4] {
        r.set_cost("replace", true, arity, first_arg_double_traversal);
    }
    for name in ["lowerAscii", "upperAscii", "trim"] {
        r.set_cost(name, true, 1, first_arg_traversal);
    }
    r.set_cost("join", true, 1, result_double_traversal);
    r.set_cost("join", true, 2, result_double_traversal);
}

/// `ceil(0.1 * size(args[0]))`.
fn first_arg_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first()
        .map_or(1, |s| cost::traversal(cost::actual_size(s)))
}

/// `ceil(0.2 * size(args[0]))`: "the traversal plus the construction of the result".
fn first_arg_double_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first().map_or(1, |s| {
        cost::scaled(
            cost::actual_size(s).saturating_mul(2),
            cost::STRING_TRAVERSAL_FACTOR,
        )
    })
}

/// `ceil(0.2 * size(result))`, for `join`.
fn result_double_traversal(_: &[Value<'_>], result: &Value<'_>) -> u64 {
    cost::scaled(
        cost::actual_size(result).saturating_mul(2),
        cost::STRING_TRAVERSAL_FACTOR,
    )
}

#[cfg(test)]
#[path = "string_costs_tests.rs"]
mod tests;
