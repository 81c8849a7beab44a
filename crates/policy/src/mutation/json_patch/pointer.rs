//! JSON Pointer tokens as evanphx/json-patch v4 reads them: object keys escaped and unescaped
//! (`~0`, `~1`), and array indices read with Go's `strconv.Atoi` (a sign, leading zeros,
//! negative indices counted from the end). Kept apart because index reading decides most of
//! the library's error texts.

use std::borrow::Cow;

use super::ContainerError;

/// Escapes one object key for a JSON Pointer: `~` as `~0`, `/` as `~1` (CEL's
/// `jsonpatch.escapeKey`).
pub fn escape_key(key: &str) -> Cow<'_, str> {
    if !key.bytes().any(|b| b == b'~' || b == b'/') {
        return Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Undoes [`escape_key`] as evanphx does: `~1` and `~0`, left to right; a `~` before anything
/// else stays.
pub(super) fn unescape_key(token: &str) -> Cow<'_, str> {
    if !token.contains('~') {
        return Cow::Borrowed(token);
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.peek() {
                Some('1') => {
                    out.push('/');
                    chars.next();
                }
                Some('0') => {
                    out.push('~');
                    chars.next();
                }
                _ => out.push('~'),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Go's `strconv.Atoi`, with its error texts.
fn atoi(token: &str) -> Result<i64, ContainerError> {
    let syntax = || ContainerError::IndexSyntax(token.to_string());
    let (negative, digits) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() {
        return Err(syntax());
    }
    // As ParseUint: a bad digit is a syntax error unless an overflow was reported first.
    let mut n: u64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return Err(syntax());
        }
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
        {
            Some(n) => n,
            None => return Err(ContainerError::IndexRange(token.to_string())),
        };
    }
    const LIMIT: u64 = 1 << 63;
    match (negative, n) {
        (false, n) if n < LIMIT => Ok(n as i64),
        (true, n) if n < LIMIT => Ok(-(n as i64)),
        (true, LIMIT) => Ok(i64::MIN),
        _ => Err(ContainerError::IndexRange(token.to_string())),
    }
}

/// An index into an array of `len` that must exist (evanphx's `get`, `set`, `remove`).
pub(in crate::mutation) fn existing_index(
    token: &str,
    len: usize,
) -> Result<usize, ContainerError> {
    let index = atoi(token)?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let mut adjusted = index;
    if index < 0 {
        if index < -len {
            return Err(ContainerError::InvalidIndex(index));
        }
        adjusted += len;
    }
    if adjusted >= len {
        return Err(ContainerError::InvalidIndex(adjusted));
    }
    usize::try_from(adjusted).map_err(|_| ContainerError::InvalidIndex(adjusted))
}

/// Where `add` inserts into an array of `len` (evanphx's `partialArray.add`).
pub(super) fn insert_index(token: &str, len: usize) -> Result<usize, ContainerError> {
    if token == "-" {
        return Ok(len);
    }
    let index = atoi(token).map_err(|source| ContainerError::NotAnIndex {
        token: token.to_string(),
        source: Box::new(source),
    })?;
    let size = i64::try_from(len).unwrap_or(i64::MAX).saturating_add(1);
    if index >= size {
        return Err(ContainerError::InvalidIndex(index));
    }
    let mut adjusted = index;
    if index < 0 {
        if index < -size {
            return Err(ContainerError::InvalidIndex(index));
        }
        adjusted += size;
    }
    usize::try_from(adjusted).map_err(|_| ContainerError::InvalidIndex(adjusted))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "pointer_tests.rs"]
mod tests;
