//! The CEL lexer: source text to tokens, and the decoding of literal tokens.
//!
//! The lexer follows the lexical grammar of cel-spec's `langdef.md` (and cel-go's ANTLR lexer
//! where the spec is silent): longest match, `//` comments, whitespace `[\t\n\f\r ]`.
//! Characters that start no token are reported (`token recognition error`) and skipped, as
//! ANTLR does, so that the parser can still report what follows.
//!
//! Literal tokens keep only their byte range; their values are decoded on demand by
//! [`int_value`], [`uint_value`], [`double_value`], [`string_value`] and [`bytes_value`].

use crate::error::Diagnostic;
use crate::syntax::ast::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    Ident,
    /// A backquoted identifier: `` `a-b.c` `` (allowed as a field name only).
    EscIdent,
    Int,
    Uint,
    Float,
    Str,
    Bytes,
    True,
    False,
    Null,
    In,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Bang,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    EqEq,
    NotEq,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    AndAnd,
    OrOr,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: usize,
    pub end: usize,
}

/// Tokenizes `src`. The result always ends with one `Eof` token; lexical errors are pushed
/// onto `diags` and the offending characters skipped.
pub(crate) fn lex(src: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        out: Vec::new(),
        diags,
    };
    lx.run();
    let end = src.len();
    lx.out.push(Token {
        kind: Tok::Eof,
        start: end,
        end,
    });
    lx.out
}

struct Lexer<'s, 'd> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    out: Vec<Token>,
    diags: &'d mut Vec<Diagnostic>,
}

impl Lexer<'_, '_> {
    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: Tok, start: usize) {
        self.out.push(Token {
            kind,
            start,
            end: self.pos,
        });
    }

    fn error(&mut self, start: usize, end: usize) {
        let text = self.src.get(start..end).unwrap_or("");
        self.diags.push(Diagnostic {
            span: Span::new(start, end),
            message: format!("Syntax error: token recognition error at: '{text}'"),
        });
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let c = self.at(start);
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => self.pos += 1,
                b'/' if self.at(start + 1) == b'/' => {
                    while self.pos < self.bytes.len() && self.at(self.pos) != b'\n' {
                        self.pos += 1;
                    }
                }
                b'0'..=b'9' => self.number(start),
                b'.' if self.at(start + 1).is_ascii_digit() => self.number(start),
                b'"' | b'\'' => self.string(start, start, false, Tok::Str),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.ident_or_prefixed_string(start),
                b'`' => self.escaped_ident(start),
                _ => self.punct(start, c),
            }
        }
    }

    fn punct(&mut self, start: usize, c: u8) {
        let next = self.at(start + 1);
        let (kind, len) = match (c, next) {
            (b'=', b'=') => (Some(Tok::EqEq), 2),
            (b'!', b'=') => (Some(Tok::NotEq), 2),
            (b'<', b'=') => (Some(Tok::LessEq), 2),
            (b'>', b'=') => (Some(Tok::GreaterEq), 2),
            (b'&', b'&') => (Some(Tok::AndAnd), 2),
            (b'|', b'|') => (Some(Tok::OrOr), 2),
            (b'<', _) => (Some(Tok::Less), 1),
            (b'>', _) => (Some(Tok::Greater), 1),
            (b'!', _) => (Some(Tok::Bang), 1),
            (b'[', _) => (Some(Tok::LBracket), 1),
            (b']', _) => (Some(Tok::RBracket), 1),
            (b'{', _) => (Some(Tok::LBrace), 1),
            (b'}', _) => (Some(Tok::RBrace), 1),
            (b'(', _) => (Some(Tok::LParen), 1),
            (b')', _) => (Some(Tok::RParen), 1),
            (b'.', _) => (Some(Tok::Dot), 1),
            (b',', _) => (Some(Tok::Comma), 1),
            (b'-', _) => (Some(Tok::Minus), 1),
            (b'?', _) => (Some(Tok::Question), 1),
            (b':', _) => (Some(Tok::Colon), 1),
            (b'+', _) => (Some(Tok::Plus), 1),
            (b'*', _) => (Some(Tok::Star), 1),
            (b'/', _) => (Some(Tok::Slash), 1),
            (b'%', _) => (Some(Tok::Percent), 1),
            _ => (None, 1),
        };
        match kind {
            Some(kind) => {
                self.pos = start + len;
                self.push(kind, start);
            }
            None => {
                // Skip one whole character, never part of one.
                let width = self
                    .src
                    .get(start..)
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                self.pos = start + width;
                self.error(start, self.pos);
            }
        }
    }

    fn digits(&mut self, hex: bool) -> usize {
        let begin = self.pos;
        while self.pos < self.bytes.len() {
            let c = self.at(self.pos);
            if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.pos - begin
    }

    /// `DIGIT+ ('.' DIGIT+)? EXPONENT?`, `'.' DIGIT+ EXPONENT?`, `0x HEX+`, with `u`/`U`
    /// making an integer a uint.
    fn number(&mut self, start: usize) {
        self.pos = start;
        // Only a lowercase `0x` starts a hex literal (`0X1` is `0` then `X1`, as in cel-go).
        if self.at(start) == b'0'
            && self.at(start + 1) == b'x'
            && self.at(start + 2).is_ascii_hexdigit()
        {
            self.pos = start + 2;
            self.digits(true);
            self.int_suffix(start);
            return;
        }
        let mut float = false;
        if self.at(start) != b'.' {
            self.digits(false);
        }
        if self.at(self.pos) == b'.' && self.at(self.pos + 1).is_ascii_digit() {
            self.pos += 1;
            self.digits(false);
            float = true;
        }
        if matches!(self.at(self.pos), b'e' | b'E') {
            let mut p = self.pos + 1;
            if matches!(self.at(p), b'+' | b'-') {
                p += 1;
            }
            if self.at(p).is_ascii_digit() {
                self.pos = p;
                self.digits(false);
                float = true;
            }
        }
        if float {
            self.push(Tok::Float, start);
        } else {
            self.int_suffix(start);
        }
    }

    fn int_suffix(&mut self, start: usize) {
        if matches!(self.at(self.pos), b'u' | b'U') {
            self.pos += 1;
            self.push(Tok::Uint, start);
        } else {
            self.push(Tok::Int, start);
        }
    }

    fn ident_or_prefixed_string(&mut self, start: usize) {
        while self.pos < self.bytes.len() {
            let c = self.at(self.pos);
            if c.is_ascii_alphanumeric() || c == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        let text = self.src.get(start..self.pos).unwrap_or("");
        let quote = matches!(self.at(self.pos), b'"' | b'\'');
        if quote {
            let (raw, kind) = match text {
                "r" | "R" => (true, Tok::Str),
                "b" | "B" => (false, Tok::Bytes),
                "br" | "bR" | "Br" | "BR" => (true, Tok::Bytes),
                _ => (false, Tok::Ident),
            };
            if kind != Tok::Ident || raw {
                let quote_at = self.pos;
                self.string(start, quote_at, raw, kind);
                return;
            }
        }
        let kind = match text {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "in" => Tok::In,
            _ => Tok::Ident,
        };
        self.push(kind, start);
    }

    fn escaped_ident(&mut self, start: usize) {
        let mut p = start + 1;
        while p < self.bytes.len() {
            let c = self.at(p);
            if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/' | b' ') {
                p += 1;
            } else {
                break;
            }
        }
        if p > start + 1 && self.at(p) == b'`' {
            self.pos = p + 1;
            self.push(Tok::EscIdent, start);
        } else {
            self.pos = start + 1;
            self.error(start, self.pos);
        }
    }

    /// A quoted literal whose (optional) prefix starts at `start` and whose first quote is at
    /// `quote_at`. Escapes are only skipped here; [`string_value`] validates them.
    fn string(&mut self, start: usize, quote_at: usize, raw: bool, kind: Tok) {
        let q = self.at(quote_at);
        let triple = self.at(quote_at + 1) == q && self.at(quote_at + 2) == q;
        let mut p = if triple { quote_at + 3 } else { quote_at + 1 };
        loop {
            if p >= self.bytes.len() {
                // Unterminated: everything to the end of input belongs to the bad token.
                self.pos = self.bytes.len();
                self.error(start, self.pos);
                return;
            }
            let c = self.at(p);
            if c == b'\\' && !raw {
                p += 2;
                continue;
            }
            if c == q {
                if !triple {
                    p += 1;
                    break;
                }
                if self.at(p + 1) == q && self.at(p + 2) == q {
                    p += 3;
                    break;
                }
            }
            if !triple && (c == b'\n' || c == b'\r') {
                self.pos = p;
                self.error(start, p);
                return;
            }
            p += 1;
        }
        self.pos = p.min(self.bytes.len());
        self.push(kind, start);
    }
}

/// Value of an int token, with an optional leading minus sign (the grammar folds `-` into
/// int literals). `None` on overflow.
pub(crate) fn int_value(text: &str, negative: bool) -> Option<i64> {
    let (digits, radix) = match text.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude == 1u64 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(magnitude).ok().map(|v| -v)
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Value of a uint token (text includes the `u` suffix). `None` on overflow.
pub(crate) fn uint_value(text: &str) -> Option<u64> {
    let text = text.get(..text.len().saturating_sub(1)).unwrap_or("");
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Value of a float token; `None` if it overflows to infinity (as Go's `ParseFloat` would
/// report out of range).
pub(crate) fn double_value(text: &str, negative: bool) -> Option<f64> {
    let v: f64 = text.parse().ok()?;
    if v.is_infinite() {
        return None;
    }
    Some(if negative { -v } else { v })
}

/// Why a literal could not be decoded (reported at the start of the literal, as cel-go does).
pub(crate) type DecodeError = String;

/// Decodes a string token (`'...'`, `"""..."""`, `r'...'`, ...).
pub(crate) fn string_value(token: &str) -> Result<String, DecodeError> {
    let mut out = String::new();
    decode(token, 0, &mut |piece| match piece {
        Piece::Char(c) => out.push(c),
        Piece::Byte(b) => out.push(char::from(b)),
    })?;
    Ok(out)
}

/// Decodes a bytes token (`b'...'`, `br"..."`, ...).
pub(crate) fn bytes_value(token: &str) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    decode(token, 1, &mut |piece| match piece {
        Piece::Char(c) => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Piece::Byte(b) => out.push(b),
    })?;
    Ok(out)
}

enum Piece {
    Char(char),
    /// An octet from a `\x`/octal escape in a bytes literal.
    Byte(u8),
}

/// Walks the body of a quoted literal. `token` is the whole token; from `skip` (1 after a
/// bytes `b`) it holds an optional `r`/`R` then the quotes.
fn decode(token: &str, skip: usize, emit: &mut dyn FnMut(Piece)) -> Result<(), DecodeError> {
    let bytes = skip > 0;
    let text = token.get(skip..).unwrap_or("");
    let raw = text.starts_with(['r', 'R']);
    let quoted = if raw {
        text.get(1..).unwrap_or("")
    } else {
        text
    };
    let delim = if quoted.starts_with("'''") || quoted.starts_with("\"\"\"") {
        3
    } else {
        1
    };
    let body_start = skip + (text.len() - quoted.len()) + delim;
    let body_end = token.len().saturating_sub(delim).max(body_start);
    let body = token.get(body_start..body_end).unwrap_or("");
    // ANTLR's message for an escape its lexer does not accept: the token up to the
    // offending character.
    let unrecognized = |end: usize| {
        let shown = token.get(..body_start + end).unwrap_or(token);
        format!("Syntax error: token recognition error at: '{shown}'")
    };
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        // Newlines in (triple-quoted) literals are normalized to '\n', as cel-go does.
        if c == '\r' {
            if chars.peek().is_some_and(|&(_, n)| n == '\n') {
                chars.next();
            }
            emit(Piece::Char('\n'));
            continue;
        }
        if c != '\\' || raw {
            emit(Piece::Char(c));
            continue;
        }
        // Running out of body means the closing quote is the offending character.
        let Some((j, e)) = chars.next() else {
            return Err(unrecognized(body.len() + 1));
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            emit(Piece::Char(s));
            continue;
        }
        let (count, radix) = match e {
            'x' | 'X' => (2, 16),
            'u' | 'U' if bytes => {
                let shown = body.get(i..j + 1).unwrap_or("\\u");
                return Err(format!(
                    "invalid escape sequence in bytes literal: '{shown}' (\\u and \\U are for strings)"
                ));
            }
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='3' => (2, 8),
            _ => return Err(unrecognized(j + e.len_utf8())),
        };
        let mut value: u32 = if radix == 8 { e as u32 - '0' as u32 } else { 0 };
        for _ in 0..count {
            let digit = chars.peek().and_then(|&(_, d)| d.to_digit(radix));
            match digit {
                Some(d) => {
                    chars.next();
                    value = value * radix + d;
                }
                None => {
                    let end = chars
                        .next()
                        .map_or(body.len() + 1, |(k, c)| k + c.len_utf8());
                    return Err(unrecognized(end));
                }
            }
        }
        let byte_escape = matches!(e, 'x' | 'X' | '0'..='3');
        if bytes && byte_escape {
            emit(Piece::Byte(u8::try_from(value).unwrap_or(u8::MAX)));
        } else {
            match char::from_u32(value) {
                Some(ch) => emit(Piece::Char(ch)),
                None => return Err("invalid unicode code point".to_string()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        let mut d = Vec::new();
        let toks = lex(src, &mut d);
        assert!(d.is_empty(), "{src}: {d:?}");
        toks.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn numbers() {
        use Tok::*;
        assert_eq!(
            kinds("1 0x1F 1u 0x1fU 1.5 .5 1e10 1.5e-3 0e+0"),
            vec![Int, Int, Uint, Uint, Float, Float, Float, Float, Float, Eof]
        );
        // `1.` is not a float, `1e` is not an exponent, `0x` needs a digit.
        assert_eq!(kinds("1.e"), vec![Int, Dot, Ident, Eof]);
        assert_eq!(kinds("0x"), vec![Int, Ident, Eof]);
        assert_eq!(kinds("0X1F"), vec![Int, Ident, Eof]);
        assert_eq!(kinds("1.5u"), vec![Float, Ident, Eof]);
        assert_eq!(int_value("9223372036854775808", true), Some(i64::MIN));
        assert_eq!(int_value("9223372036854775808", false), None);
        assert_eq!(int_value("0x1F", false), Some(31));
        assert_eq!(uint_value("18446744073709551615u"), Some(u64::MAX));
        assert_eq!(uint_value("18446744073709551616u"), None);
        assert_eq!(uint_value("0xFFu"), Some(255));
        assert_eq!(double_value("1.99e90000009", false), None);
        assert_eq!(double_value(".5", true), Some(-0.5));
    }

    #[test]
    fn identifiers_keywords_prefixes() {
        use Tok::*;
        assert_eq!(
            kinds("truex true in int null"),
            vec![Ident, True, In, Ident, Null, Eof]
        );
        assert_eq!(
            kinds("r'a' R\"a\" b'a' B'a' br'a' BR'a'"),
            vec![Str, Str, Bytes, Bytes, Bytes, Bytes, Eof]
        );
        // `rb` is not a prefix (cel-go's lexer has only b, r and br).
        assert_eq!(kinds("rb'a'"), vec![Ident, Str, Eof]);
        assert_eq!(kinds("a.`b-c/d e`"), vec![Ident, Dot, EscIdent, Eof]);
        assert_eq!(kinds("a // comment\n b"), vec![Ident, Ident, Eof]);
    }

    #[test]
    fn operators() {
        use Tok::*;
        assert_eq!(
            kinds("== != <= >= < > && || ! - ? : + * / % . ,"),
            vec![
                EqEq, NotEq, LessEq, GreaterEq, Less, Greater, AndAnd, OrOr, Bang, Minus, Question,
                Colon, Plus, Star, Slash, Percent, Dot, Comma, Eof
            ]
        );
    }

    #[test]
    fn recognition_errors() {
        for src in ["$", "a | b", "'abc", "'ab\nc'", "\"\"\"abc", "`", "é", "="] {
            let mut d = Vec::new();
            let toks = lex(src, &mut d);
            assert!(!d.is_empty(), "{src}");
            assert_eq!(toks.last().map(|t| t.kind), Some(Tok::Eof));
        }
    }

    #[test]
    fn strings() {
        assert_eq!(string_value("'abc'").unwrap(), "abc");
        assert_eq!(string_value("'''a'b'''").unwrap(), "a'b");
        assert_eq!(
            string_value(r#"" \\ \? \" \' \` ""#).unwrap(),
            " \\ ? \" ' ` "
        );
        assert_eq!(
            string_value(r"'\a\b\f\n\r\t\v'").unwrap(),
            "\u{7}\u{8}\u{c}\n\r\t\u{b}"
        );
        assert_eq!(
            string_value(r"'\000\012\177\377'").unwrap(),
            "\0\n\u{7f}\u{ff}"
        );
        assert_eq!(
            string_value(r"'\x4a\X4B\u01aB\U0001F62C'").unwrap(),
            "JK\u{1ab}\u{1f62c}"
        );
        assert_eq!(string_value(r"r'\n\x'").unwrap(), r"\n\x");
        assert_eq!(string_value("'''a\r\nb\rc'''").unwrap(), "a\nb\nc");
        assert!(string_value(r"'\s'").is_err());
        assert!(string_value(r"'\uD83D'").is_err());
        assert!(string_value(r"'\U00110000'").is_err());
        assert!(string_value(r"'\xF'").is_err());
        assert!(string_value(r"'\400'").is_err());
        assert!(string_value(r"'\08'").is_err());
    }

    #[test]
    fn bytes() {
        assert_eq!(bytes_value("b'abc'").unwrap(), b"abc");
        assert_eq!(bytes_value("b'\u{ff}'").unwrap(), vec![0xc3, 0xbf]);
        assert_eq!(bytes_value(r"b'\303\277'").unwrap(), vec![0xc3, 0xbf]);
        assert_eq!(bytes_value(r"B'\xff\377'").unwrap(), vec![0xff, 0xff]);
        assert_eq!(bytes_value(r"br'\xff'").unwrap(), br"\xff");
        assert!(bytes_value(r"b'\u00ff'").is_err());
        assert!(bytes_value(r"b'\U000000ff'").is_err());
    }
}
