//! Go's `strconv` quoting, which Kubernetes' and cel-go's error texts and OPA's `sprintf`
//! print values with: one copy for every crate that must match them byte for byte.

#![forbid(unsafe_code)]

use std::fmt::Write as _;

/// `strconv.Quote`: double quotes, `\"` and `\\`, the C escapes, `\xHH` for other control
/// bytes, `\uHHHH`/`\UHHHHHHHH` for code points Go does not consider printable ([`is_print`]).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    quote_into(&mut out, s, false);
    out
}

/// [`quote`] appended to `out`; `ascii_only` is `strconv.QuoteToASCII` (every non-ASCII code
/// point escaped).
pub fn quote_into(out: &mut String, s: &str, ascii_only: bool) {
    out.push('"');
    for c in s.chars() {
        escape_into(out, c, '"', ascii_only);
    }
    out.push('"');
}

/// `strconv.QuoteRune` (`ascii_only`: `QuoteRuneToASCII`) appended to `out`: `'x'`, `'\''`.
pub fn quote_rune_into(out: &mut String, c: char, ascii_only: bool) {
    out.push('\'');
    escape_into(out, c, '\'', ascii_only);
    out.push('\'');
}

/// One code point as it appears between `quote` characters (strconv's `appendEscapedRune`).
fn escape_into(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    let literal = if ascii_only {
        c.is_ascii() && is_print(c)
    } else {
        is_print(c)
    };
    if literal {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if u32::from(c) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if u32::from(c) < 0x10000 => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\U{:08x}", u32::from(c));
        }
    }
}

/// Go's `strconv.IsPrint` (letters, marks, numbers, punctuation, symbols and the ASCII
/// space), approximated without Unicode category tables: control, format, separator (other
/// than the space), private-use and noncharacter code points are not printable; other
/// unassigned ones count as printable here, where Go escapes them.
pub fn is_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = u32::from(c);
    let format_char = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private_use = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let noncharacter = u & 0xFFFE == 0xFFFE || (0xFDD0..=0xFDEF).contains(&u);
    !(format_char || private_use || noncharacter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_go_escapes() {
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(
            quote("\u{7}\u{8}\u{c}\n\r\t\u{b}\u{1}\u{7f}"),
            r#""\a\b\f\n\r\t\v\x01\x7f""#
        );
        assert_eq!(quote("é\u{a0}😀"), r#""é\u00a0😀""#);
        assert_eq!(
            quote("\u{200b}\u{feff}\u{e000}\u{10fffd}"),
            r#""\u200b\ufeff\ue000\U0010fffd""#
        );
        let mut ascii = String::new();
        quote_into(&mut ascii, "é😀", true);
        assert_eq!(ascii, r#""\u00e9\U0001f600""#);
        let mut rune = String::new();
        quote_rune_into(&mut rune, '\'', false);
        quote_rune_into(&mut rune, '"', false);
        assert_eq!(rune, r#"'\'''"'"#);
    }
}
