//! The syntax errors of Go's `encoding/json` (its `checkValid` scanner), which `parse_json`
//! returns as Kyverno does: `invalid character 'x' looking for beginning of value`,
//! `unexpected end of JSON input`, ... The scanner reads bytes, so a non-ASCII character is
//! named by its first byte (`'Ã'` for `ß`), and the end of input is a space where a number
//! or a literal is unfinished. Used only once a document failed to parse.

use crate::go::quote;

/// Go's `quoteChar`.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        c => {
            let q = quote(&char::from(c).to_string());
            format!("'{}'", q.get(1..q.len() - 1).unwrap_or_default())
        }
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

const END: &str = "unexpected end of JSON input";
const MAX_DEPTH: usize = 10_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Object,
    Array,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's error for a document that does not parse (`None` if Go would accept it).
pub(crate) fn syntax_error(text: &str) -> Option<String> {
    check(text).err()
}

fn check(text: &str) -> Result<(), String> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<Frame> = Vec::new();
    let at = |i: usize| b.get(i).copied();
    // After a value: what may follow depends on the enclosing frame.
    'value: loop {
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        let Some(c) = at(i) else {
            return Err(END.into());
        };
        match c {
            b'{' | b'[' => {
                if stack.len() >= MAX_DEPTH {
                    return Err("exceeded max depth".into());
                }
                i += 1;
                while at(i).is_some_and(is_space) {
                    i += 1;
                }
                if c == b'{' {
                    stack.push(Frame::Object);
                    match at(i) {
                        None => return Err(END.into()),
                        Some(b'}') => i += 1,
                        Some(b'"') => {
                            i = string(b, i)?;
                            i = colon(b, i)?;
                            continue 'value;
                        }
                        Some(x) => {
                            return Err(invalid(x, "looking for beginning of object key string"));
                        }
                    }
                } else {
                    stack.push(Frame::Array);
                    match at(i) {
                        None => return Err(END.into()),
                        Some(b']') => i += 1,
                        Some(_) => continue 'value,
                    }
                }
                stack.pop();
            }
            b'"' => i = string(b, i)?,
            b'-' | b'0'..=b'9' => i = number(b, i)?,
            b't' => i = literal(b, i, "true")?,
            b'f' => i = literal(b, i, "false")?,
            b'n' => i = literal(b, i, "null")?,
            x => return Err(invalid(x, "looking for beginning of value")),
        }
        // The value is complete: close frames or move to the next element.
        loop {
            while at(i).is_some_and(is_space) {
                i += 1;
            }
            let Some(frame) = stack.last().copied() else {
                return match at(i) {
                    Some(x) => Err(invalid(x, "after top-level value")),
                    None => Ok(()),
                };
            };
            let Some(x) = at(i) else {
                return Err(END.into());
            };
            match (frame, x) {
                (Frame::Object, b',') => {
                    i += 1;
                    while at(i).is_some_and(is_space) {
                        i += 1;
                    }
                    match at(i) {
                        None => return Err(END.into()),
                        Some(b'"') => {
                            i = string(b, i)?;
                            i = colon(b, i)?;
                            continue 'value;
                        }
                        Some(y) => {
                            return Err(invalid(y, "looking for beginning of object key string"));
                        }
                    }
                }
                (Frame::Array, b',') => {
                    i += 1;
                    continue 'value;
                }
                (Frame::Object, b'}') | (Frame::Array, b']') => {
                    i += 1;
                    stack.pop();
                }
                (Frame::Object, y) => return Err(invalid(y, "after object key:value pair")),
                (Frame::Array, y) => return Err(invalid(y, "after array element")),
            }
        }
    }
}

/// Past an object key, the `:`; the index after it.
fn colon(b: &[u8], mut i: usize) -> Result<usize, String> {
    while b.get(i).copied().is_some_and(is_space) {
        i += 1;
    }
    match b.get(i) {
        None => Err(END.into()),
        Some(b':') => Ok(i + 1),
        Some(&x) => Err(invalid(x, "after object key")),
    }
}

/// A string starting at `i` (a `"`); the index after it.
fn string(b: &[u8], i: usize) -> Result<usize, String> {
    let mut i = i + 1;
    loop {
        let Some(&c) = b.get(i) else {
            return Err(END.into());
        };
        i += 1;
        match c {
            b'"' => return Ok(i),
            b'\\' => {
                // The end of input reads as a space inside an escape.
                let e = b.get(i).copied().unwrap_or(b' ');
                i += 1;
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            let h = b.get(i).copied().unwrap_or(b' ');
                            if !h.is_ascii_hexdigit() {
                                return Err(invalid(h, "in \\u hexadecimal character escape"));
                            }
                            i += 1;
                        }
                    }
                    x => return Err(invalid(x, "in string escape code")),
                }
            }
            c if c < 0x20 => return Err(invalid(c, "in string literal")),
            _ => {}
        }
    }
}

/// A number starting at `i`; the index after it. The end of input reads as a space.
fn number(b: &[u8], mut i: usize) -> Result<usize, String> {
    let at = |i: usize| b.get(i).copied().unwrap_or(b' ');
    if at(i) == b'-' {
        i += 1;
        if !at(i).is_ascii_digit() {
            return Err(invalid(at(i), "in numeric literal"));
        }
    }
    if at(i) == b'0' {
        i += 1;
    } else {
        while at(i).is_ascii_digit() && i < b.len() {
            i += 1;
        }
    }
    if at(i) == b'.' && i < b.len() {
        i += 1;
        if !at(i).is_ascii_digit() || i >= b.len() {
            return Err(invalid(at(i), "after decimal point in numeric literal"));
        }
        while at(i).is_ascii_digit() && i < b.len() {
            i += 1;
        }
    }
    if matches!(at(i), b'e' | b'E') && i < b.len() {
        i += 1;
        if matches!(at(i), b'+' | b'-') && i < b.len() {
            i += 1;
        }
        if !at(i).is_ascii_digit() || i >= b.len() {
            return Err(invalid(at(i), "in exponent of numeric literal"));
        }
        while at(i).is_ascii_digit() && i < b.len() {
            i += 1;
        }
    }
    Ok(i)
}

/// The literal `word` at `i`; the index after it.
fn literal(b: &[u8], i: usize, word: &str) -> Result<usize, String> {
    for (k, expected) in word.bytes().enumerate().skip(1) {
        let c = b.get(i + k).copied().unwrap_or(b' ');
        if c != expected {
            let context = format!("in literal {word} (expecting {})", quote_char(expected));
            return Err(invalid(c, &context));
        }
    }
    Ok(i + word.len())
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    #[test]
    fn errors_are_go_texts() {
        for (input, want) in [
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            ("1 2", "invalid character '2' after top-level value"),
            ("ß", "invalid character 'Ã' looking for beginning of value"),
            ("-", "invalid character ' ' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            ("1e", "invalid character ' ' in exponent of numeric literal"),
            (
                "tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            (
                "nul!",
                "invalid character '!' in literal null (expecting 'l')",
            ),
            (
                "{1}",
                "invalid character '1' looking for beginning of object key string",
            ),
            ("{\"a\" 1}", "invalid character '1' after object key"),
            (
                "{\"a\":1 2}",
                "invalid character '2' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("\"a\\x\"", "invalid character 'x' in string escape code"),
            ("\"a\\", "invalid character ' ' in string escape code"),
            (
                "\"\\u00",
                "invalid character ' ' in \\u hexadecimal character escape",
            ),
            ("\"\u{1}\"", "invalid character '\\x01' in string literal"),
            ("01", "invalid character '1' after top-level value"),
            (
                "[1,]",
                "invalid character ']' looking for beginning of value",
            ),
        ] {
            assert_eq!(syntax_error(input).as_deref(), Some(want), "{input:?}");
        }
        for ok in [
            "1",
            " {\"a\": [1, -2.5e+3, true, null, \"x\\u00e9\"]} ",
            "[]",
            "{}",
            "0",
        ] {
            assert_eq!(syntax_error(ok), None, "{ok}");
        }
    }
}
