//! cel-go's `math` extension (`ext/math.go`, `ext.Math()`): `math.greatest`, `math.least`,
//! `math.ceil`, `math.floor`, `math.round`, `math.trunc`, `math.abs`, `math.sign`,
//! `math.isInf`, `math.isNaN`, `math.isFinite`, `math.sqrt`, `math.bitAnd`, `math.bitOr`,
//! `math.bitXor`, `math.bitNot`, `math.bitShiftLeft`, `math.bitShiftRight`. Not part of
//! [`Extensions`](crate::library::Extensions): an environment adds it as its own library,
//! [`Math`](crate::library::Math).
//!
//! cel-go expands `math.greatest` and `math.least` as macros over any number of arguments;
//! celer declares them as functions of one (a number or a list of numbers) to
//! [`MAX_ARGS`] numbers.
//!
//! `math.round(double)` is registered as a unary implementation, so that another library
//! can add overloads of other arities under the same name (each arity has its own
//! implementation).

use std::cmp::Ordering;

use crate::error::EvalError;
use crate::library::{Binary, Impl, Overload, Registry, Unary, global};
use crate::ops::{numeric_cmp, overload};
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

/// The most arguments `math.greatest` and `math.least` take.
pub const MAX_ARGS: usize = 16;

const NUMERIC: [Type; 3] = [Type::Int, Type::Uint, Type::Double];

pub fn register(r: &mut Registry) {
    r.add(
        "math.round",
        vec![global(
            "math_round_double",
            vec![Type::Double],
            Type::Double,
        )],
        Impl::Unary(round),
    );
    let doubles: [(&str, &'static str, Type, Unary); 6] = [
        ("math.ceil", "math_ceil_double", Type::Double, ceil),
        ("math.floor", "math_floor_double", Type::Double, floor),
        ("math.trunc", "math_trunc_double", Type::Double, trunc),
        ("math.isInf", "math_isInf_double", Type::Bool, is_inf),
        ("math.isNaN", "math_isNaN_double", Type::Bool, is_nan),
        (
            "math.isFinite",
            "math_isFinite_double",
            Type::Bool,
            is_finite,
        ),
    ];
    for (name, id, result, imp) in doubles {
        r.add(
            name,
            vec![global(id, vec![Type::Double], result)],
            Impl::Unary(imp),
        );
    }
    let numeric_unary = |ids: [&'static str; 3], same: bool| -> Vec<Overload> {
        NUMERIC
            .iter()
            .zip(ids)
            .map(|(t, id)| {
                global(
                    id,
                    vec![t.clone()],
                    if same { t.clone() } else { Type::Double },
                )
            })
            .collect()
    };
    r.add(
        "math.abs",
        numeric_unary(["math_abs_int", "math_abs_uint", "math_abs_double"], true),
        Impl::Unary(abs),
    );
    r.add(
        "math.sign",
        numeric_unary(
            ["math_sign_int", "math_sign_uint", "math_sign_double"],
            true,
        ),
        Impl::Unary(sign),
    );
    r.add(
        "math.sqrt",
        numeric_unary(
            ["math_sqrt_int", "math_sqrt_uint", "math_sqrt_double"],
            false,
        ),
        Impl::Unary(sqrt),
    );
    let bits: [(&str, [&'static str; 2], Binary); 3] = [
        (
            "math.bitAnd",
            ["math_bitAnd_int_int", "math_bitAnd_uint_uint"],
            bit_and,
        ),
        (
            "math.bitOr",
            ["math_bitOr_int_int", "math_bitOr_uint_uint"],
            bit_or,
        ),
        (
            "math.bitXor",
            ["math_bitXor_int_int", "math_bitXor_uint_uint"],
            bit_xor,
        ),
    ];
    for (name, [int, uint], imp) in bits {
        r.add(
            name,
            vec![
                global(int, vec![Type::Int, Type::Int], Type::Int),
                global(uint, vec![Type::Uint, Type::Uint], Type::Uint),
            ],
            Impl::Binary(imp),
        );
    }
    r.add(
        "math.bitNot",
        vec![
            global("math_bitNot_int_int", vec![Type::Int], Type::Int),
            global("math_bitNot_uint_uint", vec![Type::Uint], Type::Uint),
        ],
        Impl::Unary(bit_not),
    );
    for (name, [int, uint], imp) in [
        (
            "math.bitShiftLeft",
            ["math_bitShiftLeft_int_int", "math_bitShiftLeft_uint_int"],
            shift_left as Binary,
        ),
        (
            "math.bitShiftRight",
            ["math_bitShiftRight_int_int", "math_bitShiftRight_uint_int"],
            shift_right,
        ),
    ] {
        r.add(
            name,
            vec![
                global(int, vec![Type::Int, Type::Int], Type::Int),
                global(uint, vec![Type::Uint, Type::Int], Type::Uint),
            ],
            Impl::Binary(imp),
        );
    }
    r.add(
        "math.greatest",
        extremum_overloads(&GREATEST_IDS),
        Impl::Nary(greatest),
    );
    r.add(
        "math.least",
        extremum_overloads(&LEAST_IDS),
        Impl::Nary(least),
    );
}

/// One overload per arity: a number or a list of numbers, then 2 to [`MAX_ARGS`] numbers.
fn extremum_overloads(ids: &[&'static str; MAX_ARGS]) -> Vec<Overload> {
    ids.iter()
        .enumerate()
        .map(|(i, id)| global(id, vec![Type::Dyn; i + 1], Type::Dyn))
        .collect()
}

const GREATEST_IDS: [&str; MAX_ARGS] = [
    "math_greatest_1",
    "math_greatest_2",
    "math_greatest_3",
    "math_greatest_4",
    "math_greatest_5",
    "math_greatest_6",
    "math_greatest_7",
    "math_greatest_8",
    "math_greatest_9",
    "math_greatest_10",
    "math_greatest_11",
    "math_greatest_12",
    "math_greatest_13",
    "math_greatest_14",
    "math_greatest_15",
    "math_greatest_16",
];
const LEAST_IDS: [&str; MAX_ARGS] = [
    "math_least_1",
    "math_least_2",
    "math_least_3",
    "math_least_4",
    "math_least_5",
    "math_least_6",
    "math_least_7",
    "math_least_8",
    "math_least_9",
    "math_least_10",
    "math_least_11",
    "math_least_12",
    "math_least_13",
    "math_least_14",
    "math_least_15",
    "math_least_16",
];

/// `math.round(v)`: halves away from zero, as Go's `math.Round`.
fn round(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Double(double("math.round", &v)?.round()))
}

fn double(name: &str, v: &Value<'_>) -> Result<f64, EvalError> {
    match v {
        Value::Double(d) => Ok(*d),
        other => Err(overload(name, &[other])),
    }
}

fn ceil(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Double(double("math.ceil", &v)?.ceil()))
}
fn floor(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Double(double("math.floor", &v)?.floor()))
}
fn trunc(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Double(double("math.trunc", &v)?.trunc()))
}
fn is_inf(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(double("math.isInf", &v)?.is_infinite()))
}
fn is_nan(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(double("math.isNaN", &v)?.is_nan()))
}
fn is_finite(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(double("math.isFinite", &v)?.is_finite()))
}

fn abs(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| EvalError::overflow("integer")),
        Value::Uint(u) => Ok(Value::Uint(u)),
        Value::Double(d) => Ok(Value::Double(d.abs())),
        other => Err(overload("math.abs", &[&other])),
    }
}

fn sign(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Int(i) => Ok(Value::Int(i.signum())),
        Value::Uint(u) => Ok(Value::Uint(u64::from(u > 0))),
        Value::Double(d) if d.is_nan() => Ok(Value::Double(d)),
        Value::Double(d) => Ok(Value::Double(if d > 0.0 {
            1.0
        } else if d < 0.0 {
            -1.0
        } else {
            0.0
        })),
        other => Err(overload("math.sign", &[&other])),
    }
}

fn sqrt(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Int(i) => Ok(Value::Double((i as f64).sqrt())),
        Value::Uint(u) => Ok(Value::Double((u as f64).sqrt())),
        Value::Double(d) => Ok(Value::Double(d.sqrt())),
        other => Err(overload("math.sqrt", &[&other])),
    }
}

macro_rules! bitwise {
    ($f:ident, $name:expr, $op:tt) => {
        fn $f<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
            match (&a, &b) {
                (Value::Int(x), Value::Int(y)) => Ok(Value::Int(x $op y)),
                (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x $op y)),
                _ => Err(overload($name, &[&a, &b])),
            }
        }
    };
}

bitwise!(bit_and, "math.bitAnd", &);
bitwise!(bit_or, "math.bitOr", |);
bitwise!(bit_xor, "math.bitXor", ^);

fn bit_not(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Int(i) => Ok(Value::Int(!i)),
        Value::Uint(u) => Ok(Value::Uint(!u)),
        other => Err(overload("math.bitNot", &[&other])),
    }
}

/// Go's shifts: past the width the result is 0; a right shift of an int is logical.
fn shift<'a>(name: &str, left: bool, a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let Value::Int(bits) = b else {
        return Err(overload(name, &[&a, &b]));
    };
    if bits < 0 {
        return Err(EvalError::new(format!("{name}() negative offset: {bits}")));
    }
    let apply = |x: u64| -> u64 {
        match u32::try_from(bits).ok().filter(|s| *s < 64) {
            Some(s) if left => x << s,
            Some(s) => x >> s,
            None => 0,
        }
    };
    match a {
        Value::Int(i) => Ok(Value::Int(apply(i as u64) as i64)),
        Value::Uint(u) => Ok(Value::Uint(apply(u))),
        other => Err(overload(name, &[&other, &b])),
    }
}

fn shift_left<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    shift("math.bitShiftLeft", true, a, b)
}

fn shift_right<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    shift("math.bitShiftRight", false, a, b)
}

/// The greatest (`want = Greater`) or least number, the first of equals; one list
/// argument is searched instead.
fn extremum<'a>(name: &str, args: Vec<Value<'a>>, want: Ordering) -> EvalResult<'a> {
    let items: Vec<Value<'a>> = match args.as_slice() {
        [Value::List(l)] => {
            if l.is_empty() {
                return Err(EvalError::new(format!(
                    "{name}(list) argument must not be empty"
                )));
            }
            l.iter().collect()
        }
        _ => args,
    };
    let mut best: Option<Value<'a>> = None;
    for v in items {
        if !matches!(v, Value::Int(_) | Value::Uint(_) | Value::Double(_)) {
            return Err(overload(name, &[&v]));
        }
        best = Some(match best {
            None => v,
            Some(b) => match numeric_cmp(&v, &b) {
                Some(o) if o == want => v,
                _ => b,
            },
        });
    }
    best.ok_or_else(|| EvalError::new(format!("{name}: no arguments")))
}

fn greatest(args: Vec<Value<'_>>) -> EvalResult<'_> {
    extremum("math.greatest", args, Ordering::Greater)
}

fn least(args: Vec<Value<'_>>) -> EvalResult<'_> {
    extremum("math.least", args, Ordering::Less)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use crate::library::{Encoders, Extensions, Math};
    use crate::{Activation, Env, Value};

    #[test]
    fn math_and_encoders_are_libraries_of_their_own() {
        let mut env = Env::standard();
        env.add_library(&Extensions);
        assert!(env.check("math.greatest(1, 2)").is_err());
        assert!(env.check("base64.encode(b'a')").is_err());
        env.add_library(&Math);
        env.add_library(&Encoders);
        for expr in [
            "math.greatest(1, 2.5, 3u) == 3u",
            "math.round(2.5) == 3.0 && math.round(-2.5) == -3.0",
            "base64.decode(base64.encode(b'hi')) == b'hi'",
            "base64.decode('aGk') == b'hi'",
        ] {
            let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
            let got = program.eval(&Activation::empty());
            assert!(matches!(got, Ok(Value::Bool(true))), "{expr}: {got:?}");
        }
        // Only the one-argument round is cel-go's.
        assert!(env.check("math.round(1.25, 1)").is_err());
    }
}
