//! Arithmetic over numbers, Kubernetes quantities and Go durations: `add`, `sum` (replacing
//! the built-in), `subtract`, `multiply`, `divide`, `modulo`, `round`.
//!
//! An operand is a number (a scalar), or a string that parses as a quantity (`"1Gi"`,
//! `"500m"`, also `"10"` and `"1m"`, which is a milli-quantity, not a minute), or else as a
//! duration (`"1h30m"`). Kyverno's rules:
//!
//! | | result |
//! |---|---|
//! | quantity ± quantity | quantity (string) |
//! | duration ± duration | duration (string) |
//! | scalar ± scalar, *, /, % | number |
//! | quantity × scalar, scalar × quantity | quantity |
//! | duration × scalar, scalar × duration | duration |
//! | quantity ÷ quantity, duration ÷ duration | number |
//! | quantity ÷ scalar | quantity, truncated at the larger of the operands' decimal scales |
//! | duration ÷ scalar | duration |
//! | quantity % quantity, duration % duration | quantity, duration (integers only) |
//!
//! Every other pairing is `Types mismatch`.

use celer_jmespath::{Function, RuntimeError};
use sonic_rs::{JsonContainerTrait, JsonValueTrait, Value};

use super::{A, ANY, N, fail, num_arg, number, raw, sig};
use crate::duration;
use crate::quantity::{self, ParsedQuantity};

enum Operand {
    Scalar(f64),
    Quantity(Box<ParsedQuantity>),
    Duration(i64),
}

fn operand(op: &str, v: Option<&Value>) -> Result<Operand, RuntimeError> {
    if let Some(f) = v.and_then(crate::go::as_f64) {
        return Ok(Operand::Scalar(f));
    }
    if let Some(s) = v.and_then(|v| v.as_str()) {
        if let Ok(q) = quantity::parse(s) {
            return Ok(Operand::Quantity(Box::new(q)));
        }
        if let Ok(d) = duration::parse(s) {
            return Ok(Operand::Duration(d));
        }
    }
    Err(fail(op, "invalid operand"))
}

fn operands(op: &str, args: &[Value]) -> Result<(Operand, Operand), RuntimeError> {
    Ok((operand(op, args.first())?, operand(op, args.get(1))?))
}

fn mismatch(op: &str) -> RuntimeError {
    fail(op, "Types mismatch")
}

fn zero_division(op: &str) -> RuntimeError {
    fail(op, "Zero divisor passed")
}

fn text(s: String) -> Value {
    Value::from(s.as_str())
}

fn add(op: &str, x: Operand, y: Operand) -> Result<Value, RuntimeError> {
    match (x, y) {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let sum = a
                .quantity
                .add(&b.quantity)
                .map_err(|_| fail(op, quantity_too_large()))?;
            Ok(text(sum.to_string()))
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            Ok(text(duration::format(a.wrapping_add(b))))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => number(op, a + b),
        _ => Err(mismatch(op)),
    }
}

fn quantity_too_large() -> &'static str {
    celer_cel_kubernetes::quantity::TOO_LARGE
}

fn subtract(x: Operand, y: Operand) -> Result<Value, RuntimeError> {
    const OP: &str = "subtract";
    match (x, y) {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let diff = a
                .quantity
                .sub(&b.quantity)
                .map_err(|_| fail(OP, quantity_too_large()))?;
            Ok(text(diff.to_string()))
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            Ok(text(duration::format(a.wrapping_sub(b))))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => number(OP, a - b),
        _ => Err(mismatch(OP)),
    }
}

/// The quantity `resource.ParseQuantity(fmt.Sprintf("%v", f))` gives, or its error.
fn scalar_quantity(f: f64) -> Result<ParsedQuantity, RuntimeError> {
    quantity::parse(&crate::go::sprint_float(f)).map_err(raw)
}

fn multiply(x: Operand, y: Operand) -> Result<Value, RuntimeError> {
    const OP: &str = "multiply";
    match (x, y) {
        (Operand::Quantity(q), Operand::Scalar(s)) | (Operand::Scalar(s), Operand::Quantity(q)) => {
            let factor = scalar_quantity(s)?;
            let product = q.dec.mul(factor.dec).map_err(|e| fail(OP, e))?;
            let out = quantity::format(product, q.quantity.format()).map_err(|e| fail(OP, e))?;
            Ok(text(out))
        }
        (Operand::Duration(d), Operand::Scalar(s)) | (Operand::Scalar(s), Operand::Duration(d)) => {
            let secs = duration::seconds(d) * s;
            Ok(text(duration::format(duration::from_float_seconds(secs))))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => number(OP, a * b),
        _ => Err(mismatch(OP)),
    }
}

fn divide(x: Operand, y: Operand) -> Result<Value, RuntimeError> {
    const OP: &str = "divide";
    match (x, y) {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let divisor = b.quantity.as_approximate_f64();
            if divisor == 0.0 {
                return Err(zero_division(OP));
            }
            number(OP, a.quantity.as_approximate_f64() / divisor)
        }
        (Operand::Quantity(q), Operand::Scalar(s)) => {
            if s == 0.0 {
                return Err(zero_division(OP));
            }
            let divisor = scalar_quantity(s)?;
            let scale = q.dec.scale.max(divisor.dec.scale);
            let quotient = q
                .dec
                .quo_round_down(divisor.dec, scale)
                .map_err(|e| fail(OP, e))?;
            let out = quantity::format(quotient, q.quantity.format()).map_err(|e| fail(OP, e))?;
            Ok(text(out))
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            let divisor = duration::seconds(b);
            if divisor == 0.0 {
                return Err(zero_division(OP));
            }
            number(OP, duration::seconds(a) / divisor)
        }
        (Operand::Duration(d), Operand::Scalar(s)) => {
            if s == 0.0 {
                return Err(zero_division(OP));
            }
            let secs = duration::seconds(d) / s;
            Ok(text(duration::format(duration::from_float_seconds(secs))))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => {
            if b == 0.0 {
                return Err(zero_division(OP));
            }
            number(OP, a / b)
        }
        _ => Err(mismatch(OP)),
    }
}

/// `int64(f)` when `f` is a whole number that converts exactly, as Kyverno checks it.
fn whole(f: f64) -> Option<i64> {
    let i = crate::go::int64(f);
    (i as f64 == f).then_some(i)
}

fn modulo(x: Operand, y: Operand) -> Result<Value, RuntimeError> {
    const OP: &str = "modulo";
    let non_int = || fail(OP, "Non-integer argument(s) passed for modulo");
    match (x, y) {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let i1 = whole(a.quantity.as_approximate_f64()).ok_or_else(non_int)?;
            let i2 = whole(b.quantity.as_approximate_f64()).ok_or_else(non_int)?;
            if i2 == 0 {
                return Err(zero_division(OP));
            }
            let out = quantity::format_int(i1.wrapping_rem(i2), a.quantity.format())
                .map_err(|e| fail(OP, e))?;
            Ok(text(out))
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            if b == 0 {
                return Err(zero_division(OP));
            }
            Ok(text(duration::format(a.wrapping_rem(b))))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => {
            let i1 = whole(a).ok_or_else(non_int)?;
            let i2 = whole(b).ok_or_else(non_int)?;
            if i2 == 0 {
                return Err(zero_division(OP));
            }
            number(OP, i1.wrapping_rem(i2) as f64)
        }
        _ => Err(mismatch(OP)),
    }
}

fn round(args: &[Value]) -> Result<Value, RuntimeError> {
    const OP: &str = "round";
    let value = num_arg(args, 0);
    let places = num_arg(args, 1);
    let Some(places) = whole(places).filter(|_| places.is_finite()) else {
        return Err(fail(OP, "Non-integer argument(s) passed for round off"));
    };
    if places < 0 {
        // Kyverno's format string expects two more values than it is given.
        return Err(fail(
            OP,
            "%!d(MISSING) argument is out of bounds (%!d(MISSING))",
        ));
    }
    #[allow(clippy::cast_precision_loss)]
    let shift = 10f64.powf(places as f64);
    // Go's math.Round: half away from zero, as Rust's f64::round.
    number(OP, (value * shift).round() / shift)
}

pub(super) fn functions(out: &mut Vec<Function>) {
    out.push(Function::new("add", sig([ANY, ANY]), |a| {
        let (x, y) = operands("add", a)?;
        add("add", x, y)
    }));
    out.push(Function::new("sum", sig([A]), |a| {
        let items = a
            .first()
            .and_then(|v| v.as_array())
            .ok_or_else(|| mismatch("sum"))?;
        let mut iter = items.iter();
        let Some(first) = iter.next() else {
            return Err(fail("sum", "at least one element in the array is required"));
        };
        let mut total = first.clone();
        for item in iter {
            let (x, y) = (operand("sum", Some(&total))?, operand("sum", Some(item))?);
            total = add("sum", x, y)?;
        }
        Ok(total)
    }));
    out.push(Function::new("subtract", sig([ANY, ANY]), |a| {
        let (x, y) = operands("subtract", a)?;
        subtract(x, y)
    }));
    out.push(Function::new("multiply", sig([ANY, ANY]), |a| {
        let (x, y) = operands("multiply", a)?;
        multiply(x, y)
    }));
    out.push(Function::new("divide", sig([ANY, ANY]), |a| {
        let (x, y) = operands("divide", a)?;
        divide(x, y)
    }));
    out.push(Function::new("modulo", sig([ANY, ANY]), |a| {
        let (x, y) = operands("modulo", a)?;
        modulo(x, y)
    }));
    out.push(Function::new("round", sig([N, N]), round));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err};
    use sonic_rs::json;

    #[test]
    fn scalars() {
        assert_eq!(eval("add(`1`, `2.5`)", json!({})), json!(3.5));
        assert_eq!(eval("subtract(`5`, `7`)", json!({})), json!(-2));
        assert_eq!(eval("multiply(`3`, `4`)", json!({})), json!(12));
        assert_eq!(eval("divide(`7`, `2`)", json!({})), json!(3.5));
        assert_eq!(eval("modulo(`7`, `-3`)", json!({})), json!(1));
        assert_eq!(eval("modulo(`-7`, `3`)", json!({})), json!(-1));
        assert_eq!(eval("round(`2.71828`, `2`)", json!({})), json!(2.72));
        assert_eq!(eval("round(`2.5`, `0`)", json!({})), json!(3));
        assert_eq!(eval("sum(`[1, 2, 3]`)", json!({})), json!(6));
    }

    #[test]
    fn quantities() {
        assert_eq!(eval("add('1Gi', '512Mi')", json!({})), json!("1536Mi"));
        assert_eq!(eval("add('1m', '1m')", json!({})), json!("2m"));
        assert_eq!(eval("subtract('1', '250m')", json!({})), json!("750m"));
        assert_eq!(eval("multiply('500m', `3`)", json!({})), json!("1500m"));
        assert_eq!(eval("multiply(`2`, '1Gi')", json!({})), json!("2Gi"));
        assert_eq!(eval("divide('10Gi', `3`)", json!({})), json!("3579139413"));
        assert_eq!(eval("divide('1.50', `7`)", json!({})), json!("210m"));
        assert_eq!(eval("divide('1Gi', '512Mi')", json!({})), json!(2));
        assert_eq!(eval("modulo('10', '3')", json!({})), json!("1"));
        assert_eq!(
            eval("sum(['1Gi', '1Gi', '512Mi'])", json!({})),
            json!("2560Mi")
        );
    }

    #[test]
    fn durations() {
        assert_eq!(eval("add('1h', '30m0s')", json!({})), json!("1h30m0s"));
        assert_eq!(eval("subtract('1h', '2h')", json!({})), json!("-1h0m0s"));
        assert_eq!(eval("multiply('1h', `1.5`)", json!({})), json!("1h30m0s"));
        assert_eq!(eval("divide('1h', '30m0s')", json!({})), json!(2));
        assert_eq!(eval("divide('1h', `4`)", json!({})), json!("15m0s"));
        assert_eq!(eval("modulo('1h10m', '1h')", json!({})), json!("10m0s"));
    }

    #[test]
    fn errors() {
        assert_eq!(
            eval_err("divide(`1`, `0`)", json!({})),
            "JMESPath function 'divide': Zero divisor passed"
        );
        assert_eq!(
            eval_err("add('1Gi', `1`)", json!({})),
            "JMESPath function 'add': Types mismatch"
        );
        assert_eq!(
            eval_err("sum(['1Gi', `1`])", json!({})),
            "JMESPath function 'sum': Types mismatch"
        );
        assert_eq!(
            eval_err("add('x', `1`)", json!({})),
            "JMESPath function 'add': invalid operand"
        );
        assert_eq!(
            eval_err("modulo(`1.5`, `1`)", json!({})),
            "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"
        );
        assert_eq!(
            eval_err("sum(`[]`)", json!({})),
            "JMESPath function 'sum': at least one element in the array is required"
        );
        assert_eq!(
            eval_err("round(`1`, `1.5`)", json!({})),
            "JMESPath function 'round': Non-integer argument(s) passed for round off"
        );
    }
}
