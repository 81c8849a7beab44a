//! A small reader for the protobuf text format, enough for cel-spec's conformance files.
//!
//! There is no schema: the result is a generic tree of messages whose fields hold either a
//! nested message or a scalar kept as written (a string's bytes, a number's text, an
//! identifier). The caller knows the schema and asks for the types it expects.
//!
//! Supported: `#` comments; field names and `[extension.or/any.type]` names; `name: value`,
//! `name { ... }`, `name: { ... }` and `name < ... >`; repeated fields written either by
//! repetition or as `name: [a, b]`; optional `,` or `;` after a field; strings in either
//! quote style with every escape (`\n \t \r \a \b \f \v \\ \' \" \?`, octal, `\x`, `\u`,
//! `\U`) and adjacent strings concatenated; decimal, hex and octal integers; floats with
//! exponents, an `f` suffix, `inf`, `infinity` and `nan`; signed values.

use std::fmt;

/// Where something went wrong: 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A message: its fields in the order written. Repeated fields appear once per element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name, or for an extension or expanded `Any` the bracketed name without
    /// brackets, e.g. `type.googleapis.com/google.protobuf.Duration`.
    pub name: String,
    /// True for a `[...]` name.
    pub bracketed: bool,
    pub value: Node,
    /// Line of the field name, for error messages.
    pub line: usize,
}

/// A field's value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Message(Message),
    /// A string literal's bytes (after escapes and concatenation).
    String(Vec<u8>),
    /// A number's text, sign included (`-1.5e3`, `0x1F`, `10u` is not valid textproto).
    Number(String),
    /// An identifier, possibly signed (`true`, `NULL_VALUE`, `-inf`).
    Ident(String),
}

/// A value that does not have the type the caller asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch(pub String);

impl fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TypeMismatch {}

impl Message {
    /// Every value of a (repeated) field, in order.
    pub fn all<'m>(&'m self, name: &'m str) -> impl Iterator<Item = &'m Node> + 'm {
        self.fields
            .iter()
            .filter(move |f| !f.bracketed && f.name == name)
            .map(|f| &f.value)
    }

    /// The value of a singular field; for a field written twice the last one wins, as in
    /// protobuf.
    pub fn get(&self, name: &str) -> Option<&Node> {
        self.fields
            .iter()
            .rev()
            .find(|f| !f.bracketed && f.name == name)
            .map(|f| &f.value)
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every message value of a repeated message field.
    pub fn messages<'m>(
        &'m self,
        name: &'m str,
    ) -> impl Iterator<Item = Result<&'m Message, TypeMismatch>> + 'm {
        self.all(name).map(Node::as_message)
    }

    pub fn message(&self, name: &str) -> Result<Option<&Message>, TypeMismatch> {
        self.get(name).map(Node::as_message).transpose()
    }

    /// A string field; absent means empty, as in proto3.
    pub fn string(&self, name: &str) -> Result<String, TypeMismatch> {
        self.get(name)
            .map_or(Ok(String::new()), |n| n.as_str().map(str::to_string))
    }

    /// A bool field; absent means false.
    pub fn bool(&self, name: &str) -> Result<bool, TypeMismatch> {
        self.get(name).map_or(Ok(false), Node::as_bool)
    }

    /// The first field whose name is not in `known`, if any: lets callers notice shapes
    /// they do not understand instead of silently ignoring them.
    pub fn unknown_field(&self, known: &[&str]) -> Option<&Field> {
        self.fields
            .iter()
            .find(|f| f.bracketed || !known.contains(&f.name.as_str()))
    }
}

impl Node {
    fn kind(&self) -> &'static str {
        match self {
            Node::Message(_) => "a message",
            Node::String(_) => "a string",
            Node::Number(_) => "a number",
            Node::Ident(_) => "an identifier",
        }
    }

    fn mismatch(&self, wanted: &str) -> TypeMismatch {
        TypeMismatch(format!("expected {wanted}, found {} {self}", self.kind()))
    }

    pub fn as_message(&self) -> Result<&Message, TypeMismatch> {
        match self {
            Node::Message(m) => Ok(m),
            other => Err(other.mismatch("a message")),
        }
    }

    pub fn as_bytes(&self) -> Result<&[u8], TypeMismatch> {
        match self {
            Node::String(b) => Ok(b),
            other => Err(other.mismatch("a string")),
        }
    }

    /// A string field's text; must be valid UTF-8.
    pub fn as_str(&self) -> Result<&str, TypeMismatch> {
        let bytes = self.as_bytes()?;
        std::str::from_utf8(bytes)
            .map_err(|e| TypeMismatch(format!("string field is not valid UTF-8: {e}")))
    }

    /// An enum value written as its name.
    pub fn as_ident(&self) -> Result<&str, TypeMismatch> {
        match self {
            Node::Ident(s) => Ok(s),
            other => Err(other.mismatch("an identifier")),
        }
    }

    pub fn as_bool(&self) -> Result<bool, TypeMismatch> {
        match self {
            Node::Ident(s) if matches!(s.as_str(), "true" | "True" | "t") => Ok(true),
            Node::Ident(s) if matches!(s.as_str(), "false" | "False" | "f") => Ok(false),
            Node::Number(s) if s == "1" => Ok(true),
            Node::Number(s) if s == "0" => Ok(false),
            other => Err(other.mismatch("a bool")),
        }
    }

    pub fn as_i64(&self) -> Result<i64, TypeMismatch> {
        let Node::Number(text) = self else {
            return Err(self.mismatch("an integer"));
        };
        let (negative, magnitude) = split_sign(text);
        let m = parse_unsigned(magnitude).ok_or_else(|| self.mismatch("an integer"))?;
        let value = if negative {
            0i128 - i128::from(m)
        } else {
            i128::from(m)
        };
        i64::try_from(value).map_err(|_| self.mismatch("an int64"))
    }

    pub fn as_i32(&self) -> Result<i32, TypeMismatch> {
        i32::try_from(self.as_i64()?).map_err(|_| self.mismatch("an int32"))
    }

    pub fn as_u64(&self) -> Result<u64, TypeMismatch> {
        match self {
            Node::Number(text) if !text.starts_with('-') => {
                parse_unsigned(text).ok_or_else(|| self.mismatch("an unsigned integer"))
            }
            other => Err(other.mismatch("an unsigned integer")),
        }
    }

    pub fn as_f64(&self) -> Result<f64, TypeMismatch> {
        match self {
            Node::Number(text) => parse_float(text).ok_or_else(|| self.mismatch("a float")),
            Node::Ident(name) => {
                let (negative, magnitude) = split_sign(name);
                let value = match magnitude.to_ascii_lowercase().as_str() {
                    "inf" | "infinity" => f64::INFINITY,
                    "nan" => f64::NAN,
                    _ => return Err(self.mismatch("a float")),
                };
                Ok(if negative { -value } else { value })
            }
            other => Err(other.mismatch("a float")),
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Message(_) => f.write_str("{...}"),
            Node::String(b) => write!(f, "{:?}", String::from_utf8_lossy(b)),
            Node::Number(s) | Node::Ident(s) => f.write_str(s),
        }
    }
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// Decimal, `0x` hex or leading-zero octal, as textproto writes integers.
fn parse_unsigned(text: &str) -> Option<u64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    if text.len() > 1 && text.starts_with('0') {
        return u64::from_str_radix(&text[1..], 8).ok();
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    None
}

fn parse_float(text: &str) -> Option<f64> {
    let (negative, magnitude) = split_sign(text);
    let body = magnitude
        .strip_suffix(['f', 'F'])
        .filter(|b| !b.starts_with("0x") && !b.starts_with("0X"))
        .unwrap_or(magnitude);
    let value = match parse_unsigned(body) {
        // Integers are valid floats; hex and octal are read as such.
        Some(u) if !body.contains(['.', 'e', 'E']) => u as f64,
        _ => {
            let ok = body
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
            if !ok || body.is_empty() {
                return None;
            }
            body.parse::<f64>().ok()?
        }
    };
    Some(if negative { -value } else { value })
}

/// Parses a whole document: the fields of the top-level message.
pub fn parse(text: &str) -> Result<Message, ParseError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        depth: 0,
    };
    let message = parser.fields(None)?;
    match parser.peek() {
        None => Ok(message),
        Some(t) => Err(t.error(format!("unexpected {}", t.kind))),
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    Ident(String),
    Number(String),
    String(Vec<u8>),
    Punct(char),
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(s) => write!(f, "identifier '{s}'"),
            TokenKind::Number(s) => write!(f, "number '{s}'"),
            TokenKind::String(b) => write!(f, "string {:?}", String::from_utf8_lossy(b)),
            TokenKind::Punct(c) => write!(f, "'{c}'"),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    kind: TokenKind,
    line: usize,
    col: usize,
}

impl Token {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            col: self.col,
            message: message.into(),
        }
    }
}

/// Walks the text by character, tracking the position.
struct Cursor<'t> {
    chars: std::iter::Peekable<std::str::Chars<'t>>,
    line: usize,
    col: usize,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            col: self.col,
            message: message.into(),
        }
    }

    /// Consumes characters while `keep` holds.
    fn take_while(&mut self, out: &mut String, keep: impl Fn(char) -> bool) {
        while let Some(c) = self.peek() {
            if !keep(c) {
                break;
            }
            out.push(c);
            self.bump();
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut cur = Cursor {
        chars: text.chars().peekable(),
        line: 1,
        col: 1,
    };
    let mut tokens = Vec::new();
    while let Some(c) = cur.peek() {
        let (line, col) = (cur.line, cur.col);
        let kind = if c.is_whitespace() {
            cur.bump();
            continue;
        } else if c == '#' {
            while cur.peek().is_some_and(|c| c != '\n') {
                cur.bump();
            }
            continue;
        } else if c == '"' || c == '\'' {
            TokenKind::String(lex_string(&mut cur)?)
        } else if c.is_ascii_digit() || (c == '.' && next_is_digit(&cur)) {
            TokenKind::Number(lex_number(&mut cur))
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            cur.take_while(&mut s, |c| c.is_ascii_alphanumeric() || c == '_');
            TokenKind::Ident(s)
        } else if "{}<>[]:,;-./".contains(c) {
            cur.bump();
            TokenKind::Punct(c)
        } else {
            return Err(cur.error(format!("unexpected character {c:?}")));
        };
        tokens.push(Token { kind, line, col });
    }
    Ok(tokens)
}

fn next_is_digit(cur: &Cursor<'_>) -> bool {
    let mut ahead = cur.chars.clone();
    ahead.next();
    ahead.next().is_some_and(|c| c.is_ascii_digit())
}

/// A number's text; validated when the caller reads it as a particular type.
fn lex_number(cur: &mut Cursor<'_>) -> String {
    let mut s = String::new();
    while let Some(c) = cur.peek() {
        let exponent_sign = (c == '+' || c == '-')
            && s.ends_with(['e', 'E'])
            && !s.starts_with("0x")
            && !s.starts_with("0X");
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' || exponent_sign {
            s.push(c);
            cur.bump();
        } else {
            break;
        }
    }
    s
}

fn lex_string(cur: &mut Cursor<'_>) -> Result<Vec<u8>, ParseError> {
    let quote = cur.bump();
    let mut out = Vec::new();
    loop {
        match cur.bump() {
            None | Some('\n') => return Err(cur.error("unterminated string")),
            Some(c) if Some(c) == quote => return Ok(out),
            Some('\\') => lex_escape(cur, &mut out)?,
            Some(c) => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

fn lex_escape(cur: &mut Cursor<'_>, out: &mut Vec<u8>) -> Result<(), ParseError> {
    let Some(c) = cur.bump() else {
        return Err(cur.error("unterminated escape"));
    };
    let simple = match c {
        'n' => Some(b'\n'),
        't' => Some(b'\t'),
        'r' => Some(b'\r'),
        'a' => Some(0x07),
        'b' => Some(0x08),
        'f' => Some(0x0c),
        'v' => Some(0x0b),
        '\\' | '\'' | '"' | '?' => Some(c as u8),
        _ => None,
    };
    if let Some(b) = simple {
        out.push(b);
        return Ok(());
    }
    match c {
        '0'..='7' => {
            let mut value = u32::from(c as u8 - b'0');
            for _ in 0..2 {
                match cur.peek().and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        value = value * 8 + d;
                        cur.bump();
                    }
                    None => break,
                }
            }
            let byte = u8::try_from(value).map_err(|_| cur.error("octal escape above \\377"))?;
            out.push(byte);
        }
        'x' | 'X' => {
            let value = hex_digits(cur, 1, 2)?;
            out.push(u8::try_from(value).map_err(|_| cur.error("bad hex escape"))?);
        }
        'u' | 'U' => {
            let width = if c == 'u' { 4 } else { 8 };
            let value = hex_digits(cur, width, width)?;
            let ch = char::from_u32(value).ok_or_else(|| {
                cur.error(format!("\\{c}{value:X} is not a Unicode scalar value"))
            })?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        other => return Err(cur.error(format!("unknown escape \\{other}"))),
    }
    Ok(())
}

/// Reads between `min` and `max` hex digits.
fn hex_digits(cur: &mut Cursor<'_>, min: usize, max: usize) -> Result<u32, ParseError> {
    let mut value = 0u32;
    let mut n = 0;
    while n < max {
        match cur.peek().and_then(|d| d.to_digit(16)) {
            Some(d) => {
                value = value * 16 + d;
                cur.bump();
                n += 1;
            }
            None => break,
        }
    }
    if n < min {
        return Err(cur.error(format!("expected {min} hex digits")));
    }
    Ok(value)
}

// ---------------------------------------------------------------------------------------------
// Parser

/// Deeper nesting than this is an error rather than a risk to the stack.
const MAX_DEPTH: usize = 200;

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_punct(&self, c: char) -> bool {
        self.peek().is_some_and(|t| t.kind == TokenKind::Punct(c))
    }

    fn next(&mut self) -> Result<Token, ParseError> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or_else(|| self.eof())?;
        self.at += 1;
        Ok(token)
    }

    fn eof(&self) -> ParseError {
        let (line, col) = self.tokens.last().map_or((1, 1), |t| (t.line, t.col));
        ParseError {
            line,
            col,
            message: "unexpected end of input".into(),
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), ParseError> {
        let t = self.next()?;
        if t.kind == TokenKind::Punct(c) {
            Ok(())
        } else {
            Err(t.error(format!("expected '{c}', found {}", t.kind)))
        }
    }

    /// Fields up to `close` (or the end of input for the top level).
    fn fields(&mut self, close: Option<char>) -> Result<Message, ParseError> {
        let mut message = Message::default();
        loop {
            match (self.peek(), close) {
                (None, None) => return Ok(message),
                (None, Some(c)) => {
                    return Err(self.eof_expecting(c));
                }
                (Some(t), Some(c)) if t.kind == TokenKind::Punct(c) => {
                    self.at += 1;
                    return Ok(message);
                }
                _ => {}
            }
            self.field(&mut message)?;
            if self.peek_punct(',') || self.peek_punct(';') {
                self.at += 1;
            }
        }
    }

    fn eof_expecting(&self, c: char) -> ParseError {
        let mut e = self.eof();
        e.message = format!("unexpected end of input, expected '{c}'");
        e
    }

    fn field(&mut self, message: &mut Message) -> Result<(), ParseError> {
        let t = self.next()?;
        let line = t.line;
        let (name, bracketed) = match t.kind {
            TokenKind::Ident(name) => (name, false),
            TokenKind::Punct('[') => (self.bracketed_name()?, true),
            ref other => return Err(t.error(format!("expected a field name, found {other}"))),
        };
        let colon = self.peek_punct(':');
        if colon {
            self.at += 1;
        }
        if self.peek_punct('[') {
            // `name: [a, b, c]`: a repeated field written as a list.
            self.at += 1;
            while !self.peek_punct(']') {
                let value = self.value(colon)?;
                message.fields.push(Field {
                    name: name.clone(),
                    bracketed,
                    value,
                    line,
                });
                if self.peek_punct(',') {
                    self.at += 1;
                } else if !self.peek_punct(']') {
                    return Err(self.unexpected("',' or ']'"));
                }
            }
            self.at += 1;
            return Ok(());
        }
        let value = self.value(colon)?;
        message.fields.push(Field {
            name,
            bracketed,
            value,
            line,
        });
        Ok(())
    }

    fn unexpected(&self, wanted: &str) -> ParseError {
        match self.peek() {
            Some(t) => t.error(format!("expected {wanted}, found {}", t.kind)),
            None => self.eof(),
        }
    }

    /// `[type.googleapis.com/pkg.Type]` after the `[`: the name without brackets.
    fn bracketed_name(&mut self) -> Result<String, ParseError> {
        let mut name = String::new();
        loop {
            let t = self.next()?;
            match t.kind {
                TokenKind::Punct(']') if !name.is_empty() => return Ok(name),
                TokenKind::Ident(s) => name.push_str(&s),
                TokenKind::Punct(c @ ('.' | '/')) => name.push(c),
                ref other => return Err(t.error(format!("unexpected {other} in a [...] name"))),
            }
        }
    }

    /// A message (`{...}` or `<...>`) or, after a colon, a scalar.
    fn value(&mut self, colon: bool) -> Result<Node, ParseError> {
        let t = self.next()?;
        match t.kind {
            TokenKind::Punct(open @ ('{' | '<')) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(t.error("messages nested too deeply"));
                }
                let close = if open == '{' { '}' } else { '>' };
                let message = self.fields(Some(close))?;
                self.depth -= 1;
                Ok(Node::Message(message))
            }
            _ if !colon => Err(t.error(format!("expected ':' or '{{', found {}", t.kind))),
            TokenKind::String(mut bytes) => {
                while let Some(TokenKind::String(more)) = self.peek().map(|t| &t.kind) {
                    bytes.extend_from_slice(more);
                    self.at += 1;
                }
                Ok(Node::String(bytes))
            }
            TokenKind::Number(n) => Ok(Node::Number(n)),
            TokenKind::Ident(i) => Ok(Node::Ident(i)),
            TokenKind::Punct('-') => {
                let next = self.next()?;
                match next.kind {
                    TokenKind::Number(n) => Ok(Node::Number(format!("-{n}"))),
                    TokenKind::Ident(i) => Ok(Node::Ident(format!("-{i}"))),
                    ref other => {
                        Err(next.error(format!("expected a number after '-', found {other}")))
                    }
                }
            }
            ref other => Err(t.error(format!("expected a value, found {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn one(text: &str) -> Node {
        let m = parse(text).unwrap();
        assert_eq!(m.fields.len(), 1, "{m:?}");
        m.fields[0].value.clone()
    }

    fn string(text: &str) -> Vec<u8> {
        one(&format!("s: {text}")).as_bytes().unwrap().to_vec()
    }

    #[test]
    fn scalars_and_messages() {
        let m = parse(
            "# a comment\nname: \"basic\" # trailing\nsection { name: 'a' test: { n: 1 } }\n\
             section < name: \"b\" >",
        )
        .unwrap();
        assert_eq!(m.string("name").unwrap(), "basic");
        let sections: Vec<_> = m.messages("section").map(Result::unwrap).collect();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].string("name").unwrap(), "a");
        assert_eq!(sections[1].string("name").unwrap(), "b");
        let test = sections[0].message("test").unwrap().unwrap();
        assert_eq!(test.get("n").unwrap().as_i64().unwrap(), 1);
        assert_eq!(m.string("missing").unwrap(), "");
        assert!(!m.bool("missing").unwrap());
    }

    #[test]
    fn separators_and_list_syntax() {
        let m = parse("a: 1, a: 2; a: [3, 4] b {}").unwrap();
        let a: Vec<i64> = m.all("a").map(|n| n.as_i64().unwrap()).collect();
        assert_eq!(a, [1, 2, 3, 4]);
        assert!(m.message("b").unwrap().unwrap().fields.is_empty());
    }

    #[test]
    fn string_escapes() {
        assert_eq!(
            string(r#""\a\b\f\n\r\t\v\"'\\\?""#),
            b"\x07\x08\x0c\n\r\t\x0b\"'\\?"
        );
        assert_eq!(string(r#"'\'\"'"#), b"'\"");
        assert_eq!(string(r#""\000\377\123\7x""#), b"\x00\xff\x53\x07x");
        assert_eq!(
            string(r#""\x00 \x4a\X4B \xFF\x7""#),
            b"\x00 \x4a\x4b \xff\x07"
        );
        assert_eq!(string(r#""\u00E1\U0001F600""#), "á😀".as_bytes());
        assert_eq!(string("\"flambé\""), "flambé".as_bytes());
        assert_eq!(string(r#""\303\277""#), b"\xc3\xbf");
    }

    #[test]
    fn adjacent_strings_concatenate() {
        assert_eq!(string("\"a\" 'b'\n  \"c\""), b"abc");
    }

    #[test]
    fn bad_strings_are_errors() {
        assert!(parse("s: \"abc").is_err());
        assert!(parse("s: \"a\nb\"").is_err());
        assert!(parse(r#"s: "\q""#).is_err());
        assert!(parse(r#"s: "\u12""#).is_err());
        assert!(parse(r#"s: "\400""#).is_err());
        assert!(parse(r#"s: "\uD800""#).is_err());
    }

    #[test]
    fn integers() {
        assert_eq!(one("n: 0").as_i64().unwrap(), 0);
        assert_eq!(one("n: -42").as_i64().unwrap(), -42);
        assert_eq!(one("n: 0x1F").as_i64().unwrap(), 31);
        assert_eq!(one("n: 017").as_i64().unwrap(), 15);
        assert_eq!(one("n: -9223372036854775808").as_i64().unwrap(), i64::MIN);
        assert!(one("n: 9223372036854775808").as_i64().is_err());
        assert_eq!(one("n: 18446744073709551615").as_u64().unwrap(), u64::MAX);
        assert!(one("n: -1").as_u64().is_err());
        assert!(one("n: 1.5").as_i64().is_err());
        assert_eq!(one("n: 7").as_i32().unwrap(), 7);
    }

    #[test]
    fn floats() {
        let f = |t: &str| one(&format!("d: {t}")).as_f64().unwrap();
        assert_eq!(f("0"), 0.0);
        assert_eq!(f("1.5"), 1.5);
        assert_eq!(f(".5"), 0.5);
        assert_eq!(f("1e10"), 1e10);
        assert_eq!(f("-5.43e-21"), -5.43e-21);
        assert_eq!(f("1.8446744073709551615e19"), 1.844_674_407_370_955_2e19);
        assert_eq!(f("2.5f"), 2.5);
        assert_eq!(f("1E+3"), 1000.0);
        assert_eq!(f("inf"), f64::INFINITY);
        assert_eq!(f("-inf"), f64::NEG_INFINITY);
        assert_eq!(f("Infinity"), f64::INFINITY);
        assert!(f("nan").is_nan());
        let neg_zero = f("-0");
        assert_eq!(neg_zero, 0.0);
        assert!(neg_zero.is_sign_negative());
        assert!(f("-0.0").is_sign_negative());
        assert!(one("d: foo").as_f64().is_err());
        assert!(one("d: 1.2.3").as_f64().is_err());
    }

    #[test]
    fn bools_and_enums() {
        assert!(one("b: true").as_bool().unwrap());
        assert!(!one("b: false").as_bool().unwrap());
        assert!(one("b: 1").as_bool().unwrap());
        assert!(one("b: maybe").as_bool().is_err());
        assert_eq!(one("e: NULL_VALUE").as_ident().unwrap(), "NULL_VALUE");
    }

    #[test]
    fn any_extension_names() {
        let m = parse(
            "object_value { [type.googleapis.com/google.protobuf.Duration] { seconds: 123 } }\n\
             other: { [type.googleapis.com/a.B]: { x: 1 } }",
        )
        .unwrap();
        let any = m.message("object_value").unwrap().unwrap();
        let field = &any.fields[0];
        assert!(field.bracketed);
        assert_eq!(field.name, "type.googleapis.com/google.protobuf.Duration");
        let body = field.value.as_message().unwrap();
        assert_eq!(body.get("seconds").unwrap().as_i64().unwrap(), 123);
        let other = m.message("other").unwrap().unwrap();
        assert_eq!(other.fields[0].name, "type.googleapis.com/a.B");
        // A bracketed field is not found by plain name lookup.
        assert!(
            any.get("type.googleapis.com/google.protobuf.Duration")
                .is_none()
        );
        assert!(any.unknown_field(&["type_url", "value"]).is_some());
    }

    #[test]
    fn structural_errors_have_positions() {
        let e = parse("a {\n  b: 1\n").unwrap_err();
        assert!(e.message.contains("expected '}'"), "{e}");
        let e = parse("a: 1\n  : 2").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3), "{e}");
        assert!(parse("a 1").is_err());
        assert!(parse("a: }").is_err());
        assert!(parse("a: {>").is_err());
        assert!(parse("a: - {").is_err());
        assert!(parse("a: @").is_err());
        assert!(parse("[]: 1").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = format!("{}{}", "a {".repeat(10_000), "}".repeat(10_000));
        assert!(parse(&text).is_err());
    }

    #[test]
    fn type_mismatches_are_reported() {
        let m = parse("s: 'x' n: 1 m {}").unwrap();
        assert!(m.get("s").unwrap().as_i64().is_err());
        assert!(m.get("n").unwrap().as_str().is_err());
        assert!(m.message("s").is_err());
        assert!(m.get("m").unwrap().as_bool().is_err());
    }
}
