//! Kyverno's `math` library (`kyverno/sdk` `libs/math`): `math.round(value, precision)`.
//!
//! Kyverno's environment also includes cel-go's `math` extension (`ext.Math`), which the
//! core provides ([`celer_cel::library::Math`]); [`register`] adds it first. Its
//! `math.round(value)` shares the name: the core registers that arity's implementation,
//! this library the two-argument one, and both overloads are declared under one function.

use celer_cel::library::{Impl, Registry, global};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

pub fn register(r: &mut Registry) {
    r.add_library(&celer_cel::library::Math);
    r.add(
        "math.round",
        vec![global(
            "math_round_float_int",
            vec![Type::Double, Type::Int],
            Type::Double,
        )],
        Impl::Binary(round),
    );
}

/// Kyverno's `math.round(v, p)`: Go's `math.Round(v * 10^p) / 10^p` (halves away from
/// zero; a negative precision rounds to tens, hundreds...).
fn round<'a>(v: Value<'a>, p: Value<'a>) -> EvalResult<'a> {
    match (&v, &p) {
        (Value::Double(v), Value::Int(p)) => {
            let shift = 10f64.powf(*p as f64);
            Ok(Value::Double((v * shift).round() / shift))
        }
        _ => Err(overload("math.round", &[&v, &p])),
    }
}
