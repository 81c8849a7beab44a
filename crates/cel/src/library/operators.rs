//! Declarations of CEL's operators and of the optional-value functions.
//!
//! Only the typed signatures live here, with cel-go's overload ids; the evaluator implements
//! operators itself (and the optional functions are implemented by the evaluator's library).

use super::{Overload, Registry, global, member};
use crate::syntax::ast::ops;
use crate::types::Type;

/// The ordering overloads across numeric kinds (`1 < 2.5`). cel-go declares them but its
/// checker only offers them when cross-type numeric comparisons are enabled; see
/// [`crate::check::CheckOptions::cross_type_numeric_comparisons`].
pub const CROSS_TYPE_NUMERIC_COMPARISONS: &[&str] = &[
    "less_int64_double",
    "less_int64_uint64",
    "less_uint64_double",
    "less_uint64_int64",
    "less_double_int64",
    "less_double_uint64",
    "less_equals_int64_double",
    "less_equals_int64_uint64",
    "less_equals_uint64_double",
    "less_equals_uint64_int64",
    "less_equals_double_int64",
    "less_equals_double_uint64",
    "greater_int64_double",
    "greater_int64_uint64",
    "greater_uint64_double",
    "greater_uint64_int64",
    "greater_double_int64",
    "greater_double_uint64",
    "greater_equals_int64_double",
    "greater_equals_int64_uint64",
    "greater_equals_uint64_double",
    "greater_equals_uint64_int64",
    "greater_equals_double_int64",
    "greater_equals_double_uint64",
];

/// Name of the global `optional.of` function.
pub const OPTIONAL_OF: &str = "optional.of";
/// Name of the global `optional.ofNonZeroValue` function.
pub const OPTIONAL_OF_NON_ZERO_VALUE: &str = "optional.ofNonZeroValue";
/// Name of the global `optional.none` function.
pub const OPTIONAL_NONE: &str = "optional.none";
/// Name of the global `optional.unwrap` function.
pub const OPTIONAL_UNWRAP: &str = "optional.unwrap";

fn binary(id: &'static str, lhs: Type, rhs: Type, result: Type) -> Overload {
    global(id, vec![lhs, rhs], result)
}

/// Declares every standard operator overload and the optional-value functions.
pub fn declare(r: &mut Registry) {
    declare_logic(r);
    declare_arithmetic(r);
    declare_ordering(r);
    declare_containers(r);
    declare_optional(r);
}

fn declare_logic(r: &mut Registry) {
    let a = Type::param("A");
    r.declare(
        ops::CONDITIONAL,
        vec![global(
            "conditional",
            vec![Type::Bool, a.clone(), a.clone()],
            a.clone(),
        )],
    );
    r.declare(
        ops::LOGICAL_AND,
        vec![binary("logical_and", Type::Bool, Type::Bool, Type::Bool)],
    );
    r.declare(
        ops::LOGICAL_OR,
        vec![binary("logical_or", Type::Bool, Type::Bool, Type::Bool)],
    );
    r.declare(
        ops::LOGICAL_NOT,
        vec![global("logical_not", vec![Type::Bool], Type::Bool)],
    );
    r.declare(
        ops::NOT_STRICTLY_FALSE,
        vec![global("not_strictly_false", vec![Type::Bool], Type::Bool)],
    );
    r.declare(
        ops::EQUALS,
        vec![binary("equals", a.clone(), a.clone(), Type::Bool)],
    );
    r.declare(
        ops::NOT_EQUALS,
        vec![binary("not_equals", a.clone(), a, Type::Bool)],
    );
}

fn declare_arithmetic(r: &mut Registry) {
    use Type::{Bytes, Double, Duration, Int, String, Timestamp, Uint};
    let list_a = Type::list(Type::param("A"));
    r.declare(
        ops::ADD,
        vec![
            binary("add_bytes", Bytes, Bytes, Bytes),
            binary("add_double", Double, Double, Double),
            binary("add_duration_duration", Duration, Duration, Duration),
            binary("add_duration_timestamp", Duration, Timestamp, Timestamp),
            binary("add_timestamp_duration", Timestamp, Duration, Timestamp),
            binary("add_int64", Int, Int, Int),
            binary("add_list", list_a.clone(), list_a.clone(), list_a),
            binary("add_string", String, String, String),
            binary("add_uint64", Uint, Uint, Uint),
        ],
    );
    r.declare(
        ops::SUBTRACT,
        vec![
            binary("subtract_double", Double, Double, Double),
            binary("subtract_duration_duration", Duration, Duration, Duration),
            binary("subtract_int64", Int, Int, Int),
            binary(
                "subtract_timestamp_duration",
                Timestamp,
                Duration,
                Timestamp,
            ),
            binary(
                "subtract_timestamp_timestamp",
                Timestamp,
                Timestamp,
                Duration,
            ),
            binary("subtract_uint64", Uint, Uint, Uint),
        ],
    );
    r.declare(
        ops::MULTIPLY,
        vec![
            binary("multiply_double", Double, Double, Double),
            binary("multiply_int64", Int, Int, Int),
            binary("multiply_uint64", Uint, Uint, Uint),
        ],
    );
    r.declare(
        ops::DIVIDE,
        vec![
            binary("divide_double", Double, Double, Double),
            binary("divide_int64", Int, Int, Int),
            binary("divide_uint64", Uint, Uint, Uint),
        ],
    );
    r.declare(
        ops::MODULO,
        vec![
            binary("modulo_int64", Int, Int, Int),
            binary("modulo_uint64", Uint, Uint, Uint),
        ],
    );
    r.declare(
        ops::NEGATE,
        vec![
            global("negate_double", vec![Double], Double),
            global("negate_int64", vec![Int], Int),
        ],
    );
}

/// The ordering overloads: for each ordered kind (and the cross-type numeric pairs, in
/// cel-go's declaration order) the ids for `<`, `<=`, `>`, `>=` and the operand types.
fn ordering_table() -> Vec<([&'static str; 4], Type, Type)> {
    use Type::{Bool, Bytes, Double, Duration, Int, String, Timestamp, Uint};
    vec![
        (
            [
                "less_bool",
                "less_equals_bool",
                "greater_bool",
                "greater_equals_bool",
            ],
            Bool,
            Bool,
        ),
        (
            [
                "less_int64",
                "less_equals_int64",
                "greater_int64",
                "greater_equals_int64",
            ],
            Int,
            Int,
        ),
        (
            [
                "less_int64_double",
                "less_equals_int64_double",
                "greater_int64_double",
                "greater_equals_int64_double",
            ],
            Int,
            Double,
        ),
        (
            [
                "less_int64_uint64",
                "less_equals_int64_uint64",
                "greater_int64_uint64",
                "greater_equals_int64_uint64",
            ],
            Int,
            Uint,
        ),
        (
            [
                "less_uint64",
                "less_equals_uint64",
                "greater_uint64",
                "greater_equals_uint64",
            ],
            Uint,
            Uint,
        ),
        (
            [
                "less_uint64_double",
                "less_equals_uint64_double",
                "greater_uint64_double",
                "greater_equals_uint64_double",
            ],
            Uint,
            Double,
        ),
        (
            [
                "less_uint64_int64",
                "less_equals_uint64_int64",
                "greater_uint64_int64",
                "greater_equals_uint64_int64",
            ],
            Uint,
            Int,
        ),
        (
            [
                "less_double",
                "less_equals_double",
                "greater_double",
                "greater_equals_double",
            ],
            Double,
            Double,
        ),
        (
            [
                "less_double_int64",
                "less_equals_double_int64",
                "greater_double_int64",
                "greater_equals_double_int64",
            ],
            Double,
            Int,
        ),
        (
            [
                "less_double_uint64",
                "less_equals_double_uint64",
                "greater_double_uint64",
                "greater_equals_double_uint64",
            ],
            Double,
            Uint,
        ),
        (
            [
                "less_string",
                "less_equals_string",
                "greater_string",
                "greater_equals_string",
            ],
            String,
            String,
        ),
        (
            [
                "less_bytes",
                "less_equals_bytes",
                "greater_bytes",
                "greater_equals_bytes",
            ],
            Bytes,
            Bytes,
        ),
        (
            [
                "less_timestamp",
                "less_equals_timestamp",
                "greater_timestamp",
                "greater_equals_timestamp",
            ],
            Timestamp,
            Timestamp,
        ),
        (
            [
                "less_duration",
                "less_equals_duration",
                "greater_duration",
                "greater_equals_duration",
            ],
            Duration,
            Duration,
        ),
    ]
}

/// The overloads of one ordering operator; `column` picks `<` (0), `<=` (1), `>` (2), `>=` (3).
fn ordering(column: usize) -> Vec<Overload> {
    ordering_table()
        .into_iter()
        .filter_map(|(ids, lhs, rhs)| {
            let id = ids.get(column).copied()?;
            Some(binary(id, lhs, rhs, Type::Bool))
        })
        .collect()
}

fn declare_ordering(r: &mut Registry) {
    r.declare(ops::LESS, ordering(0));
    r.declare(ops::LESS_EQUALS, ordering(1));
    r.declare(ops::GREATER, ordering(2));
    r.declare(ops::GREATER_EQUALS, ordering(3));
}

fn declare_containers(r: &mut Registry) {
    let a = Type::param("A");
    let b = Type::param("B");
    let list_a = Type::list(a.clone());
    let map_ab = Type::map(a.clone(), b.clone());
    r.declare(
        ops::INDEX,
        vec![
            binary("index_list", list_a.clone(), Type::Int, a.clone()),
            binary("index_map", map_ab.clone(), a.clone(), b),
        ],
    );
    r.declare(
        ops::IN,
        vec![
            binary("in_list", a.clone(), list_a, Type::Bool),
            binary("in_map", a, map_ab, Type::Bool),
        ],
    );
}

/// cel-go's optional library (latest version).
fn declare_optional(r: &mut Registry) {
    let k = Type::param("K");
    let v = Type::param("V");
    let opt_v = Type::optional(v.clone());
    let list_v = Type::list(v.clone());
    let map_kv = Type::map(k.clone(), v.clone());
    let list_opt_v = Type::list(opt_v.clone());

    r.declare(
        OPTIONAL_OF,
        vec![global("optional_of", vec![v.clone()], opt_v.clone())],
    );
    r.declare(
        OPTIONAL_OF_NON_ZERO_VALUE,
        vec![global(
            "optional_ofNonZeroValue",
            vec![v.clone()],
            opt_v.clone(),
        )],
    );
    r.declare(
        OPTIONAL_NONE,
        vec![global("optional_none", vec![], opt_v.clone())],
    );
    r.declare(
        "value",
        vec![member("optional_value", vec![opt_v.clone()], v.clone())],
    );
    r.declare(
        "hasValue",
        vec![member("optional_hasValue", vec![opt_v.clone()], Type::Bool)],
    );
    r.declare(
        "or",
        vec![member(
            "optional_or_optional",
            vec![opt_v.clone(), opt_v.clone()],
            opt_v.clone(),
        )],
    );
    r.declare(
        "orValue",
        vec![member(
            "optional_orValue_value",
            vec![opt_v.clone(), v.clone()],
            v.clone(),
        )],
    );
    r.declare(
        ops::OPT_INDEX,
        vec![
            binary(
                "list_optindex_optional_int",
                list_v.clone(),
                Type::Int,
                opt_v.clone(),
            ),
            binary(
                "optional_list_optindex_optional_int",
                Type::optional(list_v.clone()),
                Type::Int,
                opt_v.clone(),
            ),
            binary(
                "map_optindex_optional_value",
                map_kv.clone(),
                k.clone(),
                opt_v.clone(),
            ),
            binary(
                "optional_map_optindex_optional_value",
                Type::optional(map_kv.clone()),
                k.clone(),
                opt_v.clone(),
            ),
        ],
    );
    r.declare(
        ops::INDEX,
        vec![
            binary(
                "optional_list_index_int",
                Type::optional(list_v.clone()),
                Type::Int,
                opt_v.clone(),
            ),
            binary(
                "optional_map_index_value",
                Type::optional(map_kv),
                k,
                opt_v.clone(),
            ),
        ],
    );
    r.declare(
        "last",
        vec![member("list_last", vec![list_v.clone()], opt_v.clone())],
    );
    r.declare(
        "first",
        vec![member("list_first", vec![list_v.clone()], opt_v)],
    );
    r.declare(
        OPTIONAL_UNWRAP,
        vec![global(
            "optional_unwrap",
            vec![list_opt_v.clone()],
            list_v.clone(),
        )],
    );
    r.declare(
        "unwrapOpt",
        vec![member("optional_unwrapOpt", vec![list_opt_v], list_v)],
    );
}
