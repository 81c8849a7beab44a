//! Bounds on what one evaluation may build, so that no expression can exhaust memory even
//! where its cost stays low (list concatenation costs 1 whatever the lengths, as in cel-go).

use crate::error::EvalError;

/// The longest string or bytes value an evaluation may build.
pub const MAX_STRING_BYTES: usize = 8 << 20;
/// The longest list or map an evaluation may build.
pub const MAX_ELEMENTS: usize = 1 << 20;

/// An error unless a string or bytes value of `len` bytes may be built.
pub fn check_string_len(len: usize) -> Result<(), EvalError> {
    if len > MAX_STRING_BYTES {
        Err(EvalError::new(format!(
            "string size limit exceeded: {len} bytes (limit {MAX_STRING_BYTES})"
        )))
    } else {
        Ok(())
    }
}

/// An error unless a list or map of `len` elements may be built.
pub fn check_elements(len: usize) -> Result<(), EvalError> {
    if len > MAX_ELEMENTS {
        Err(EvalError::new(format!(
            "list size limit exceeded: {len} elements (limit {MAX_ELEMENTS})"
        )))
    } else {
        Ok(())
    }
}
