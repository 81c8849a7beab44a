//! Kyverno's `math` library (`kyverno/sdk` `libs/math`): `math.round(value, precision)`.

use crate::error::EvalResult;
use crate::library::{Impl, Registry, global};
use crate::ops::overload;
use crate::types::Type;
use crate::value::Value;

pub fn register(r: &mut Registry) {
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

/// Go's `math.Round(v * 10^p) / 10^p`: halves away from zero, a negative precision rounds
/// to tens, hundreds...
fn round<'a>(v: Value<'a>, p: Value<'a>) -> EvalResult<'a> {
    let (Value::Double(v), Value::Int(p)) = (&v, &p) else {
        return Err(overload("math.round", &[&v, &p]));
    };
    let shift = 10f64.powf(*p as f64);
    Ok(Value::Double((v * shift).round() / shift))
}
