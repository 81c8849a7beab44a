//! Gatekeeper's location syntax (`pkg/mutation/path/parser`): where a mutator writes, as
//! dotted field names, each optionally followed by one list selector `[key: value]` (the
//! element whose `key` field is `value`, a string or an integer) or `[key: *]` (every
//! element). Names that are not plain (`[A-Za-z0-9_-]+`) are quoted with `"` or `'`, with
//! `\` escaping the next character: `metadata.annotations."example.com/owner"`.
//!
//! The grammar is Gatekeeper's, token for token, so a location Gatekeeper refuses is
//! refused here (at load, with the position) and one it accepts means the same path.

use std::fmt;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A field of an object.
    Object(String),
    /// An element (or every element) of a list of objects, selected by a key field.
    List(ListSpec),
}

/// `[key_field: key]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListSpec {
    pub key_field: String,
    pub key: Key,
}

/// What a list selector selects by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// `*`: every element.
    Glob,
    Str(String),
    Int(i64),
}

/// A parsed location: its nodes, from the object's root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Path(pub Vec<Node>);

/// Why a location does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocationError {
    #[error("error at position {position}: unterminated string")]
    UnterminatedString { position: usize },
    #[error("error at position {position}: invalid character {found:?}")]
    InvalidCharacter { position: usize, found: char },
    #[error("trailing separator")]
    TrailingSeparator,
    #[error("unexpected token: expected {expected}, got: {found}")]
    Unexpected {
        expected: &'static str,
        found: String,
    },
    #[error("invalid integer {0:?}: overflow")]
    Overflow(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Int(String),
    Dot,
    LBracket,
    RBracket,
    Glob,
    Colon,
    Eof,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(s) => write!(f, "IDENT {s:?}"),
            Token::Int(s) => write!(f, "INT {s}"),
            Token::Dot => f.write_str("'.'"),
            Token::LBracket => f.write_str("'['"),
            Token::RBracket => f.write_str("']'"),
            Token::Glob => f.write_str("'*'"),
            Token::Colon => f.write_str("':'"),
            Token::Eof => f.write_str("EOF"),
        }
    }
}

fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Every token of `input`, or the first lexical error.
fn tokens(input: &str) -> Result<Vec<Token>, LocationError> {
    let mut out = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(position, c)) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                chars.next();
            }
            // Digits first: a run of them is an integer even when letters follow.
            '0'..='9' => {
                let mut s = String::new();
                while let Some(&(_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                    s.push(d);
                    chars.next();
                }
                out.push(Token::Int(s));
            }
            c if is_plain(c) => {
                let mut s = String::new();
                while let Some(&(_, d)) = chars.peek().filter(|(_, d)| is_plain(*d)) {
                    s.push(d);
                    chars.next();
                }
                out.push(Token::Ident(s));
            }
            '"' | '\'' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => return Err(LocationError::UnterminatedString { position }),
                        Some((_, q)) if q == c => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, escaped)) => s.push(escaped),
                            None => return Err(LocationError::UnterminatedString { position }),
                        },
                        Some((_, other)) => s.push(other),
                    }
                }
                out.push(Token::Ident(s));
            }
            _ => {
                chars.next();
                out.push(match c {
                    '.' => Token::Dot,
                    '[' => Token::LBracket,
                    ']' => Token::RBracket,
                    '*' => Token::Glob,
                    ':' => Token::Colon,
                    found => return Err(LocationError::InvalidCharacter { position, found }),
                });
            }
        }
    }
    out.push(Token::Eof);
    Ok(out)
}

/// Parses a location. The empty string is the empty path (which mutators then refuse).
pub fn parse(input: &str) -> Result<Path, LocationError> {
    let tokens = tokens(input)?;
    let mut at = 0usize;
    let token = |i: usize| tokens.get(i).unwrap_or(&Token::Eof);
    let unexpected = |expected: &'static str, found: &Token| LocationError::Unexpected {
        expected,
        found: found.to_string(),
    };
    let mut nodes = Vec::new();
    while let Token::Ident(name) = token(at) {
        nodes.push(Node::Object(name.clone()));
        at += 1;
        if *token(at) == Token::LBracket {
            let Token::Ident(key_field) = token(at + 1) else {
                return Err(unexpected("keyField in listSpec", token(at + 1)));
            };
            if *token(at + 2) != Token::Colon {
                return Err(unexpected("':' following keyField", token(at + 2)));
            }
            let key = match token(at + 3) {
                Token::Glob => Key::Glob,
                Token::Ident(s) => Key::Str(s.clone()),
                Token::Int(digits) => Key::Int(
                    digits
                        .parse::<i64>()
                        .map_err(|_| LocationError::Overflow(digits.clone()))?,
                ),
                other => return Err(unexpected("key value or glob in listSpec", other)),
            };
            if *token(at + 4) != Token::RBracket {
                return Err(unexpected("']' following listSpec", token(at + 4)));
            }
            nodes.push(Node::List(ListSpec {
                key_field: key_field.clone(),
                key,
            }));
            at += 5;
        }
        match token(at) {
            Token::Dot if *token(at + 1) == Token::Eof => {
                return Err(LocationError::TrailingSeparator);
            }
            Token::Dot => at += 1,
            Token::Eof => {}
            other => return Err(unexpected("'.' or eof", other)),
        }
    }
    match token(at) {
        Token::Eof => Ok(Path(nodes)),
        other => Err(unexpected("field name or eof", other)),
    }
}

/// A name as a location writes it: bare when plain and not starting with a digit, quoted
/// otherwise (so that what is written parses back to the same name).
fn quoted(s: &str) -> String {
    let plain = s.chars().all(is_plain) && s.chars().next().is_some_and(|c| !c.is_ascii_digit());
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, node) in self.0.iter().enumerate() {
            match node {
                Node::Object(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(&quoted(name))?;
                }
                Node::List(l) => {
                    let key = match &l.key {
                        Key::Glob => "*".to_string(),
                        Key::Str(s) => quoted(s),
                        Key::Int(n) => n.to_string(),
                    };
                    write!(f, "[{}: {key}]", quoted(&l.key_field))?;
                }
            }
        }
        Ok(())
    }
}

impl Path {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `self` is `other` or a path above it (node by node equal).
    pub fn is_prefix_of(&self, other: &Path) -> bool {
        self.0.len() <= other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }

    /// Whether the first node is the field `name`.
    pub fn starts_with_field(&self, name: &str) -> bool {
        matches!(self.0.first(), Some(Node::Object(n)) if n == name)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn obj(s: &str) -> Node {
        Node::Object(s.to_string())
    }

    fn list(field: &str, key: Key) -> Node {
        Node::List(ListSpec {
            key_field: field.to_string(),
            key,
        })
    }

    #[test]
    fn parses_fields_lists_globs_and_quotes() {
        assert_eq!(parse("").unwrap(), Path(vec![]));
        assert_eq!(
            parse("spec.containers[name:*].securityContext.runAsUser").unwrap(),
            Path(vec![
                obj("spec"),
                obj("containers"),
                list("name", Key::Glob),
                obj("securityContext"),
                obj("runAsUser"),
            ])
        );
        assert_eq!(
            parse(" spec.ports[ port : 80 ].name").unwrap().0[2],
            list("port", Key::Int(80))
        );
        assert_eq!(
            parse("spec.containers[name: foo]").unwrap().0[2],
            list("name", Key::Str("foo".into()))
        );
        assert_eq!(
            parse(r#"metadata.annotations."example.com/owner""#)
                .unwrap()
                .0[2],
            obj("example.com/owner")
        );
        assert_eq!(
            parse(r#"a.'it\'s'.b[k: "*"]"#).unwrap(),
            Path(vec![
                obj("a"),
                obj("it's"),
                obj("b"),
                list("k", Key::Str("*".into()))
            ])
        );
    }

    #[test]
    fn refuses_what_gatekeeper_refuses() {
        for bad in [
            ".spec",
            "spec.",
            "spec..x",
            "spec[name:foo][name:bar]",
            "spec[name]",
            "spec[:foo]",
            "spec[name:foo",
            "spec[name:]",
            "[name:foo]",
            "1abc",
            "spec.1x",
            "spec/x",
            "spec.\"open",
            "spec[name:99999999999999999999]",
            "spec x",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        assert_eq!(
            parse("spec.").unwrap_err(),
            LocationError::TrailingSeparator
        );
        assert_eq!(
            parse("spec/x").unwrap_err().to_string(),
            "error at position 4: invalid character '/'"
        );
    }

    #[test]
    fn writes_locations_that_parse_back() {
        let p = parse(r#"spec.containers[name: "my app"].env[name: *].x."0y""#).unwrap();
        assert_eq!(
            p.to_string(),
            r#"spec.containers[name: "my app"].env[name: *].x."0y""#
        );
        assert_eq!(parse(&p.to_string()).unwrap(), p);
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof!["[a-zA-Z_-][a-zA-Z0-9_-]{0,8}", "[ -~]{0,6}", "\\PC{0,4}",]
    }

    fn key() -> impl Strategy<Value = Key> {
        prop_oneof![
            Just(Key::Glob),
            name().prop_map(Key::Str),
            (0i64..=i64::MAX).prop_map(Key::Int),
        ]
    }

    fn path() -> impl Strategy<Value = Path> {
        proptest::collection::vec((name(), proptest::option::of((name(), key()))), 0..6).prop_map(
            |steps| {
                let mut nodes = Vec::new();
                for (field, selector) in steps {
                    nodes.push(Node::Object(field));
                    if let Some((key_field, key)) = selector {
                        nodes.push(Node::List(ListSpec { key_field, key }));
                    }
                }
                Path(nodes)
            },
        )
    }

    proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panicking(s in "\\PC{0,40}") {
            let _ = parse(&s);
        }

        #[test]
        fn a_written_path_parses_back_to_itself(p in path()) {
            let text = p.to_string();
            prop_assert_eq!(parse(&text), Ok(p), "{}", text);
        }

        #[test]
        fn a_parsed_location_written_out_parses_to_the_same_path(
            s in "[a-z\\[\\]:*. \"'0-9]{0,24}"
        ) {
            if let Ok(p) = parse(&s) {
                prop_assert_eq!(parse(&p.to_string()), Ok(p));
            }
        }
    }
}
