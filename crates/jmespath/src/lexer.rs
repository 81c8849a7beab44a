//! Tokens of a JMESPath expression, each with its byte offset.
//!
//! The token set and the lexical rules are go-jmespath's: unquoted identifiers are ASCII
//! `[A-Za-z_][A-Za-z0-9_]*`; quoted identifiers are JSON strings; raw strings `'...'` know
//! one escape, `\'`; backtick literals are JSON once `` \` `` is unescaped (no elided quotes:
//! `` `foo` `` is an error, as in go-jmespath); a number is `-?[0-9]*`, read as an integer by
//! the parser where the grammar wants one.

use sonic_rs::Value;

use crate::error::{ParseError, ParseErrorKind};

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'s> {
    Star,
    Dot,
    /// `[?`
    Filter,
    /// `[]`
    Flatten,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    /// `||`
    Or,
    /// `|`
    Pipe,
    /// `-?[0-9]*`, kept as written.
    Number(&'s str),
    Ident(&'s str),
    QuotedIdent(String),
    Comma,
    Colon,
    Lt,
    Lte,
    Gt,
    Gte,
    Eq,
    Ne,
    /// A backtick JSON literal, parsed.
    Literal(Value),
    /// A raw string `'...'`, unescaped.
    RawString(String),
    /// `@`
    Current,
    /// `&`
    Expref,
    /// `&&`
    And,
    /// `!`
    Not,
    Eof,
}

impl Tok<'_> {
    /// How a token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        let fixed = match self {
            Tok::Star => "'*'",
            Tok::Dot => "'.'",
            Tok::Filter => "'[?'",
            Tok::Flatten => "'[]'",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBracket => "'['",
            Tok::RBracket => "']'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::Or => "'||'",
            Tok::Pipe => "'|'",
            Tok::Comma => "','",
            Tok::Colon => "':'",
            Tok::Lt => "'<'",
            Tok::Lte => "'<='",
            Tok::Gt => "'>'",
            Tok::Gte => "'>='",
            Tok::Eq => "'=='",
            Tok::Ne => "'!='",
            Tok::Current => "'@'",
            Tok::Expref => "'&'",
            Tok::And => "'&&'",
            Tok::Not => "'!'",
            Tok::Eof => "end of expression",
            Tok::Number(n) => return format!("number {n}"),
            Tok::Ident(name) => return format!("identifier {name}"),
            Tok::QuotedIdent(name) => return format!("identifier {name:?}"),
            Tok::Literal(_) => "a literal",
            Tok::RawString(_) => "a raw string",
        };
        fixed.to_owned()
    }
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'s> {
    pub(crate) tok: Tok<'s>,
    pub(crate) pos: usize,
}

/// Splits `src` into tokens, ending with [`Tok::Eof`] at `src.len()`.
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token<'_>>, ParseError> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        tokens: Vec::new(),
    };
    lexer.run()?;
    lexer.tokens.push(Token {
        tok: Tok::Eof,
        pos: src.len(),
    });
    Ok(lexer.tokens)
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    tokens: Vec<Token<'s>>,
}

impl<'s> Lexer<'s> {
    fn peek(&self) -> Option<char> {
        self.src
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
    }

    fn push(&mut self, tok: Tok<'s>, start: usize) {
        self.tokens.push(Token { tok, pos: start });
    }

    /// Pushes `double` if the next character is `second` (consuming it), else `single`.
    fn one_or_two(&mut self, start: usize, second: char, double: Tok<'s>, single: Tok<'s>) {
        if self.peek() == Some(second) {
            self.pos += second.len_utf8();
            self.push(double, start);
        } else {
            self.push(single, start);
        }
    }

    fn run(&mut self) -> Result<(), ParseError> {
        while let Some(c) = self.peek() {
            let start = self.pos;
            self.pos += c.len_utf8();
            match c {
                'a'..='z' | 'A'..='Z' | '_' => {
                    let end = self.scan_while(|c| c.is_ascii_alphanumeric() || c == '_');
                    let name = self.slice(start, end);
                    self.push(Tok::Ident(name), start);
                }
                '-' | '0'..='9' => {
                    let end = self.scan_while(|c| c.is_ascii_digit());
                    let text = self.slice(start, end);
                    self.push(Tok::Number(text), start);
                }
                '.' => self.push(Tok::Dot, start),
                '*' => self.push(Tok::Star, start),
                ',' => self.push(Tok::Comma, start),
                ':' => self.push(Tok::Colon, start),
                '{' => self.push(Tok::LBrace, start),
                '}' => self.push(Tok::RBrace, start),
                ']' => self.push(Tok::RBracket, start),
                '(' => self.push(Tok::LParen, start),
                ')' => self.push(Tok::RParen, start),
                '@' => self.push(Tok::Current, start),
                '[' => match self.peek() {
                    Some('?') => {
                        self.pos += 1;
                        self.push(Tok::Filter, start);
                    }
                    Some(']') => {
                        self.pos += 1;
                        self.push(Tok::Flatten, start);
                    }
                    _ => self.push(Tok::LBracket, start),
                },
                '"' => {
                    let body = self.delimited('"', start, "quoted identifier")?;
                    let name = unescape_json_string(body).map_err(|message| {
                        ParseError::new(start, ParseErrorKind::InvalidQuotedIdentifier(message))
                    })?;
                    self.push(Tok::QuotedIdent(name), start);
                }
                '\'' => {
                    let text = self.raw_string(start)?;
                    self.push(Tok::RawString(text), start);
                }
                '`' => {
                    let body = self.delimited('`', start, "literal")?;
                    let value = parse_literal(body).map_err(|message| {
                        ParseError::new(start, ParseErrorKind::InvalidLiteral(message))
                    })?;
                    self.push(Tok::Literal(value), start);
                }
                '|' => self.one_or_two(start, '|', Tok::Or, Tok::Pipe),
                '<' => self.one_or_two(start, '=', Tok::Lte, Tok::Lt),
                '>' => self.one_or_two(start, '=', Tok::Gte, Tok::Gt),
                '!' => self.one_or_two(start, '=', Tok::Ne, Tok::Not),
                '&' => self.one_or_two(start, '&', Tok::And, Tok::Expref),
                '=' => {
                    if self.peek() == Some('=') {
                        self.pos += 1;
                        self.push(Tok::Eq, start);
                    } else {
                        let found = match self.peek() {
                            Some(c) => format!("{c:?}"),
                            None => "end of expression".to_owned(),
                        };
                        return Err(ParseError::unexpected(self.pos, "'=' after '='", found));
                    }
                }
                ' ' | '\t' | '\n' | '\r' => {}
                other => {
                    return Err(ParseError::new(
                        start,
                        ParseErrorKind::UnknownCharacter(other),
                    ));
                }
            }
        }
        Ok(())
    }

    fn slice(&self, start: usize, end: usize) -> &'s str {
        self.src.get(start..end).unwrap_or_default()
    }

    /// Advances over characters matching `keep`; returns the new position.
    fn scan_while(&mut self, keep: impl Fn(char) -> bool) -> usize {
        while let Some(c) = self.peek() {
            if !keep(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        self.pos
    }

    /// The text up to the next unescaped `end` (a backslash escapes any one character), with
    /// the position moved past `end`.
    fn delimited(
        &mut self,
        end: char,
        start: usize,
        what: &'static str,
    ) -> Result<&'s str, ParseError> {
        let body_start = self.pos;
        let mut escaped = false;
        while let Some(c) = self.peek() {
            let at = self.pos;
            self.pos += c.len_utf8();
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == end {
                return Ok(self.slice(body_start, at));
            }
        }
        Err(ParseError::new(start, ParseErrorKind::Unclosed(what)))
    }

    /// A raw string: `\'` is a quote, every other character (backslashes included) is itself.
    fn raw_string(&mut self, start: usize) -> Result<String, ParseError> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += c.len_utf8();
            match c {
                '\'' => return Ok(out),
                '\\' if self.peek() == Some('\'') => {
                    self.pos += 1;
                    out.push('\'');
                }
                other => out.push(other),
            }
        }
        Err(ParseError::new(
            start,
            ParseErrorKind::Unclosed("raw string"),
        ))
    }
}

/// A backtick literal's JSON, once `` \` `` became a backtick.
fn parse_literal(body: &str) -> Result<Value, String> {
    let text = if body.contains("\\`") {
        body.replace("\\`", "`")
    } else {
        body.to_owned()
    };
    sonic_rs::from_str::<Value>(&text).map_err(|e| e.to_string())
}

/// Decodes the inside of a JSON string (without its quotes) as encoding/json does: the JSON
/// escapes, raw control characters refused, a lone UTF-16 surrogate read as U+FFFD.
pub(crate) fn unescape_json_string(body: &str) -> Result<String, String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escape = chars.next().ok_or("unfinished escape at the end")?;
                match escape {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '/' => out.push('/'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let unit = hex4(&mut chars)?;
                        out.push(decode_utf16_escape(unit, &mut chars)?);
                    }
                    other => return Err(format!("invalid escape \\{other}")),
                }
            }
            c if u32::from(c) < 0x20 => {
                return Err(format!("control character {c:?} must be escaped"));
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let mut unit = 0u32;
    for _ in 0..4 {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or("\\u must be followed by 4 hex digits")?;
        unit = unit * 16 + digit;
    }
    Ok(unit)
}

/// The character of a `\uXXXX` escape, reading a following low surrogate when `unit` is a
/// high one.
fn decode_utf16_escape(unit: u32, chars: &mut std::str::Chars<'_>) -> Result<char, String> {
    if !(0xD800..0xDC00).contains(&unit) {
        return Ok(char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    let mut lookahead = chars.clone();
    if lookahead.next() == Some('\\') && lookahead.next() == Some('u') {
        let low = hex4(&mut lookahead)?;
        if (0xDC00..0xE000).contains(&low) {
            *chars = lookahead;
            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            return Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    }
    Ok(char::REPLACEMENT_CHARACTER)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn punctuation_and_operators() {
        assert_eq!(
            toks("a.b[?c]|d||e&&!f[]&g"),
            vec![
                Tok::Ident("a"),
                Tok::Dot,
                Tok::Ident("b"),
                Tok::Filter,
                Tok::Ident("c"),
                Tok::RBracket,
                Tok::Pipe,
                Tok::Ident("d"),
                Tok::Or,
                Tok::Ident("e"),
                Tok::And,
                Tok::Not,
                Tok::Ident("f"),
                Tok::Flatten,
                Tok::Expref,
                Tok::Ident("g"),
                Tok::Eof,
            ]
        );
        assert_eq!(
            toks("< <= > >= == !="),
            vec![
                Tok::Lt,
                Tok::Lte,
                Tok::Gt,
                Tok::Gte,
                Tok::Eq,
                Tok::Ne,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn numbers_identifiers_positions() {
        let tokens = tokenize("foo_1[-12]").unwrap();
        assert_eq!(
            tokens[0],
            Token {
                tok: Tok::Ident("foo_1"),
                pos: 0
            }
        );
        assert_eq!(
            tokens[2],
            Token {
                tok: Tok::Number("-12"),
                pos: 6
            }
        );
        assert_eq!(
            tokens[4],
            Token {
                tok: Tok::Eof,
                pos: 10
            }
        );
        assert_eq!(toks("-"), vec![Tok::Number("-"), Tok::Eof]);
    }

    #[test]
    fn quoted_identifiers_decode_json_escapes() {
        assert_eq!(
            toks(r#""a\"b""#),
            vec![Tok::QuotedIdent("a\"b".into()), Tok::Eof]
        );
        assert_eq!(
            toks(r#""\u00e9\ud83d\ude00""#),
            vec![Tok::QuotedIdent("é😀".into()), Tok::Eof]
        );
        assert_eq!(
            toks(r#""\ud800x""#),
            vec![Tok::QuotedIdent("\u{fffd}x".into()), Tok::Eof]
        );
        assert!(tokenize(r#""\q""#).is_err());
        assert!(tokenize("\"a\u{1}\"").is_err());
        let err = tokenize(r#""abc"#).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::Unclosed("quoted identifier"));
    }

    #[test]
    fn raw_strings_know_only_the_quote_escape() {
        assert_eq!(
            toks(r"'a\'b'"),
            vec![Tok::RawString("a'b".into()), Tok::Eof]
        );
        assert_eq!(
            toks(r"'a\nb'"),
            vec![Tok::RawString(r"a\nb".into()), Tok::Eof]
        );
        assert_eq!(toks("''"), vec![Tok::RawString(String::new()), Tok::Eof]);
        assert!(tokenize("'abc").is_err());
    }

    #[test]
    fn literals_are_json() {
        let tokens = toks(r#"`{"a": "b\`c"}`"#);
        let Tok::Literal(v) = &tokens[0] else {
            panic!("{tokens:?}")
        };
        assert_eq!(v, &sonic_rs::json!({"a": "b`c"}));
        assert!(
            tokenize("`foo`").is_err(),
            "no elided quotes, as in go-jmespath"
        );
        assert!(tokenize("`[1,`").is_err());
        assert!(tokenize("`1").is_err());
    }

    #[test]
    fn unknown_characters_and_lone_equals() {
        let err = tokenize("a # b").unwrap_err();
        assert_eq!(
            err,
            ParseError::new(2, ParseErrorKind::UnknownCharacter('#'))
        );
        assert!(tokenize("a = b").is_err());
        assert!(tokenize("a=").is_err());
    }
}
