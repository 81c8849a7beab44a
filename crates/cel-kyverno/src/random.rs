//! Kyverno's `random` library (`kyverno/sdk` `libs/random`): `random()` (eight characters
//! of `[0-9a-z]`) and `random(pattern)`, a string matching a regular expression, also as
//! `random.random`.
//!
//! The functions are marked nondeterministic so that the compiler never folds a call into
//! a constant. Unbounded repetitions (`*`, `+`, `{n,}`) repeat at most ten more times, as
//! Kyverno's generator does; an output longer than [`MAX_OUTPUT`] characters is an error.
//! The generator is a small xorshift seeded from the process's random hasher state and
//! the clock: not for secrets, as in Kyverno.

use std::cell::Cell;
use std::hash::{BuildHasher as _, Hasher as _};

use regex_syntax::hir::{Class, Hir, HirKind};

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

use super::convert::string_arg;

/// The longest string `random` produces.
pub const MAX_OUTPUT: usize = 4096;
/// How many extra repetitions an unbounded repetition makes at most.
const MAX_UNBOUNDED: u32 = 10;
const DEFAULT_PATTERN: &str = "[0-9a-z]{8}";

pub fn register(r: &mut Registry) {
    for (name, suffix) in [("random", "non_prefixed"), ("random.random", "prefixed")] {
        let (with, without): (&'static str, &'static str) = if suffix == "prefixed" {
            (
                "random_string_prefixed",
                "random_string_default_expr_prefixed",
            )
        } else {
            (
                "random_string_non_prefixed",
                "random_string_default_expr_non_prefixed",
            )
        };
        r.add(
            name,
            vec![
                global(with, vec![Type::String], Type::String),
                global(without, vec![], Type::String),
            ],
            Impl::Nary(random),
        );
        r.set_nondeterministic(name);
    }
}

fn random(args: Vec<Value<'_>>) -> EvalResult<'_> {
    let pattern = match args.first() {
        Some(p) => string_arg("random", p)?,
        None => DEFAULT_PATTERN,
    };
    generate(pattern, &mut next_u64).map(Value::string)
}

thread_local! {
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// xorshift64*, seeded per thread on first use.
fn next_u64() -> u64 {
    STATE.with(|state| {
        let mut x = state.get();
        if x == 0 {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            h.write_u128(nanos);
            x = h.finish() | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// A string matching `pattern`, drawing numbers from `rng`.
pub fn generate(pattern: &str, rng: &mut dyn FnMut() -> u64) -> Result<String, EvalError> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| EvalError::new(format!("random: {e}")))?;
    let mut out = String::new();
    emit(&hir, rng, &mut out, 0)?;
    Ok(out)
}

fn below(rng: &mut dyn FnMut() -> u64, n: u64) -> u64 {
    if n == 0 { 0 } else { rng() % n }
}

fn too_long() -> EvalError {
    EvalError::new(format!(
        "random: the output would exceed {MAX_OUTPUT} characters"
    ))
}

fn emit(
    hir: &Hir,
    rng: &mut dyn FnMut() -> u64,
    out: &mut String,
    depth: usize,
) -> Result<(), EvalError> {
    if depth > 100 {
        return Err(EvalError::new("random: the pattern nests too deeply"));
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => out.push_str(&String::from_utf8_lossy(&lit.0)),
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges();
            let total: u64 = ranges
                .iter()
                .map(|r| u64::from(r.end()) - u64::from(r.start()) + 1)
                .sum();
            let mut pick = below(rng, total);
            for r in ranges {
                let size = u64::from(r.end()) - u64::from(r.start()) + 1;
                if pick < size {
                    let c = u32::from(r.start()) + u32::try_from(pick).unwrap_or(0);
                    out.push(char::from_u32(c).unwrap_or(r.start()));
                    break;
                }
                pick -= size;
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges = class.ranges();
            let total: u64 = ranges
                .iter()
                .map(|r| u64::from(r.end() - r.start()) + 1)
                .sum();
            let mut pick = below(rng, total);
            for r in ranges {
                let size = u64::from(r.end() - r.start()) + 1;
                if pick < size {
                    out.push(char::from(r.start() + u8::try_from(pick).unwrap_or(0)));
                    break;
                }
                pick -= size;
            }
        }
        HirKind::Repetition(rep) => {
            let max = rep.max.unwrap_or(rep.min.saturating_add(MAX_UNBOUNDED));
            let count =
                rep.min + u32::try_from(below(rng, u64::from(max - rep.min) + 1)).unwrap_or(0);
            for _ in 0..count {
                emit(&rep.sub, rng, out, depth + 1)?;
                if out.len() > MAX_OUTPUT {
                    return Err(too_long());
                }
            }
        }
        HirKind::Capture(cap) => emit(&cap.sub, rng, out, depth + 1)?,
        HirKind::Concat(items) => {
            for item in items {
                emit(item, rng, out, depth + 1)?;
            }
        }
        HirKind::Alternation(items) => {
            let n = u64::try_from(items.len()).unwrap_or(1);
            let i = usize::try_from(below(rng, n)).unwrap_or(0);
            if let Some(item) = items.get(i) {
                emit(item, rng, out, depth + 1)?;
            }
        }
    }
    if out.len() > MAX_OUTPUT {
        return Err(too_long());
    }
    Ok(())
}
