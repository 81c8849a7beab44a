//! cel-go's extension libraries: strings, lists, sets, math, encoders, regex, and the
//! two-variable comprehensions (whose macros the parser expands; their runtime helper,
//! [`comprehensions`], is part of the standard library since the parser always expands them).

use super::Registry;

pub mod comprehensions;
pub mod encoders;
pub mod lists;
pub mod math;
pub mod regex;
pub mod sets;
pub mod string_format;
pub mod strings;

/// Registers the extensions of [`Extensions`](super::Extensions): strings, lists, sets
/// ([`math`], [`encoders`] and [`regex`] are libraries of their own).
pub fn register(r: &mut Registry) {
    strings::register(r);
    lists::register(r);
    sets::register(r);
}
