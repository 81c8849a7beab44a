//! Kyverno's `time` library (`kyverno/sdk` `libs/time`): `time.now()`, `time.toCron(ts)`,
//! `time.truncate(ts, duration)`.
//!
//! celer declares `time` as a variable holding a clock (the host's [`KyvernoContext::now`]
//! when one is bound with [`super::ContextValues`], the system clock otherwise), so that
//! `time.now()` is read per evaluation, never folded into a constant at compile time, and
//! tests can fix it. The three functions are its methods; the spelling is Kyverno's.

use std::sync::Arc;

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, LibraryVariable, Registry, member};
use celer_cel::ops::overload;
use celer_cel::time::{TimeZone, Timestamp, civil};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

use super::context::KyvernoContext;

pub const CLOCK_TYPE: &str = "kyverno.time";
pub const CLOCK_VAR: &str = "time";

/// Seconds from Go's zero time (0001-01-01T00:00:00Z) to the Unix epoch; `Time.Truncate`
/// rounds relative to the zero time.
const ZERO_TO_UNIX_SECS: i128 = 62_135_596_800;

/// The value of `time`: where `time.now()` reads the time.
#[derive(Debug, Clone, Default)]
pub(crate) struct Clock(pub(crate) Option<Arc<dyn KyvernoContext>>);

impl Opaque for Clock {
    fn type_name(&self) -> &'static str {
        CLOCK_TYPE
    }
    fn equals(&self, _other: &dyn Opaque) -> bool {
        false
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn clock_type() -> Type {
    Type::Abstract(Arc::from(CLOCK_TYPE), Vec::new())
}

pub fn variables(out: &mut Vec<LibraryVariable>) {
    out.push(LibraryVariable {
        name: CLOCK_VAR,
        ty: clock_type(),
        default: Value::Opaque(Arc::new(Clock(None))),
    });
}

pub fn register(r: &mut Registry) {
    r.add(
        "now",
        vec![member("time_now", vec![clock_type()], Type::Timestamp)],
        Impl::Unary(now),
    );
    r.add(
        "toCron",
        vec![member(
            "time_to_cron",
            vec![clock_type(), Type::Timestamp],
            Type::String,
        )],
        Impl::Binary(to_cron),
    );
    r.add(
        "truncate",
        vec![member(
            "time_truncate",
            vec![clock_type(), Type::Timestamp, Type::Duration],
            Type::Timestamp,
        )],
        Impl::Ternary(truncate),
    );
}

/// The system clock as a CEL timestamp.
pub fn system_now() -> Result<Timestamp, EvalError> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| EvalError::new("time.now: the system clock is before 1970"))?;
    let secs = i64::try_from(since.as_secs()).map_err(|_| EvalError::new("time.now: overflow"))?;
    Timestamp::new(secs, since.subsec_nanos())
}

fn now(clock: Value<'_>) -> EvalResult<'_> {
    let Some(c) = clock.downcast::<Clock>() else {
        return Err(overload("now", &[&clock]));
    };
    let ts = match c.0.as_ref().and_then(|ctx| ctx.now()) {
        Some(ts) => ts,
        None => system_now()?,
    };
    Ok(Value::Timestamp(ts))
}

/// `minute hour day-of-month month day-of-week` of the timestamp in UTC (`0 = Sunday`).
fn to_cron<'a>(clock: Value<'a>, ts: Value<'a>) -> EvalResult<'a> {
    let (Some(_), Value::Timestamp(t)) = (clock.downcast::<Clock>(), &ts) else {
        return Err(overload("toCron", &[&clock, &ts]));
    };
    let c = civil(*t, &TimeZone::Utc)?;
    Ok(Value::string(format!(
        "{} {} {} {} {}",
        c.minute,
        c.hour,
        c.day,
        c.month0 + 1,
        c.day_of_week
    )))
}

/// Go's `Time.Truncate`: rounds down to a multiple of `d` since the zero time; `d <= 0`
/// leaves the time as it is.
fn truncate<'a>(clock: Value<'a>, ts: Value<'a>, d: Value<'a>) -> EvalResult<'a> {
    let (Some(_), Value::Timestamp(t), Value::Duration(d)) = (clock.downcast::<Clock>(), &ts, &d)
    else {
        return Err(overload("truncate", &[&clock, &ts, &d]));
    };
    let step = d.total_nanos();
    if step <= 0 {
        return Ok(Value::Timestamp(*t));
    }
    let since_zero = t.total_nanos() + ZERO_TO_UNIX_SECS * 1_000_000_000;
    let truncated = t.total_nanos() - since_zero.rem_euclid(step);
    let secs = i64::try_from(truncated.div_euclid(1_000_000_000))
        .map_err(|_| celer_cel::time::timestamp_overflow())?;
    let nanos = u32::try_from(truncated.rem_euclid(1_000_000_000))
        .map_err(|_| celer_cel::time::timestamp_overflow())?;
    Ok(Value::Timestamp(Timestamp::new(secs, nanos)?))
}
