//! A top-down operator-precedence (Pratt) parser with go-jmespath's binding powers, so that
//! expressions group exactly as Kyverno's engine groups them (for example `!a.b` is
//! `(!a).b`, and `&` takes everything up to a `,` or `)`).
//!
//! Bounded: the parser's recursion and the height of the tree it builds are both limited to
//! [`MAX_EXPRESSION_DEPTH`], so neither parsing nor evaluating can exhaust the stack.

use crate::MAX_EXPRESSION_DEPTH;
use sonic_rs::JsonValueTrait;

use crate::ast::{Comparator, Node};
use crate::error::{ParseError, ParseErrorKind};
use crate::functions::FunctionRegistry;
use crate::lexer::{Tok, Token, tokenize};

/// Parses `src`, resolving function names against `registry`.
pub(crate) fn parse(src: &str, registry: &FunctionRegistry) -> Result<Node, ParseError> {
    let tokens = tokenize(src)?;
    let mut parser = Parser {
        tokens,
        index: 0,
        depth: 0,
        registry,
    };
    let ast = parser.expression(0)?;
    if !matches!(parser.current(), Tok::Eof) {
        return Err(parser.unexpected("end of expression"));
    }
    Ok(ast.node)
}

/// A node and the height of the tree under it (a leaf is 1).
struct Ast {
    node: Node,
    height: usize,
}

struct Parser<'s, 'r> {
    tokens: Vec<Token<'s>>,
    index: usize,
    /// Current recursion depth of `expression`.
    depth: usize,
    registry: &'r FunctionRegistry,
}

/// How strongly a token binds to its left (go-jmespath's table; 0 for tokens that end an
/// expression).
fn binding_power(tok: &Tok<'_>) -> usize {
    match tok {
        Tok::Pipe => 1,
        Tok::Or => 2,
        Tok::And => 3,
        Tok::Eq | Tok::Ne | Tok::Lt | Tok::Lte | Tok::Gt | Tok::Gte => 5,
        Tok::Flatten => 9,
        Tok::Star => 20,
        Tok::Filter => 21,
        Tok::Dot => 40,
        Tok::Not => 45,
        Tok::LBrace => 50,
        Tok::LBracket => 55,
        Tok::LParen => 60,
        _ => 0,
    }
}

const BP_PIPE: usize = 1;
const BP_OR: usize = 2;
const BP_AND: usize = 3;
const BP_COMPARE: usize = 5;
const BP_FLATTEN: usize = 9;
const BP_STAR: usize = 20;
const BP_FILTER: usize = 21;
const BP_DOT: usize = 40;
const BP_NOT: usize = 45;
/// Tokens binding at least this strongly continue a projection's right-hand side.
const BP_PROJECTION_STOP: usize = 10;

fn leaf(node: Node) -> Ast {
    Ast { node, height: 1 }
}

fn boxed(ast: Ast) -> Box<Node> {
    Box::new(ast.node)
}

impl<'s> Parser<'s, '_> {
    fn token(&self, ahead: usize) -> Option<&Token<'s>> {
        self.tokens.get(self.index + ahead)
    }

    fn current(&self) -> &Tok<'s> {
        self.token(0).map_or(&Tok::Eof, |t| &t.tok)
    }

    fn position(&self) -> usize {
        self.token(0).or(self.tokens.last()).map_or(0, |t| t.pos)
    }

    fn advance(&mut self) -> Token<'s> {
        let token = self.token(0).cloned();
        self.index += 1;
        token.unwrap_or(Token {
            tok: Tok::Eof,
            pos: self.position(),
        })
    }

    fn unexpected(&self, expected: &'static str) -> ParseError {
        ParseError::unexpected(self.position(), expected, self.current().describe())
    }

    /// Consumes the current token if `is` accepts it, else fails naming `expected`.
    fn expect(
        &mut self,
        is: fn(&Tok<'_>) -> bool,
        expected: &'static str,
    ) -> Result<(), ParseError> {
        if is(self.current()) {
            self.index += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// A node over children of the given heights, refused when the tree grows too tall.
    fn join(&self, node: Node, heights: &[usize]) -> Result<Ast, ParseError> {
        let height = 1 + heights.iter().copied().max().unwrap_or(0);
        if height > MAX_EXPRESSION_DEPTH {
            return Err(self.too_deep());
        }
        Ok(Ast { node, height })
    }

    fn too_deep(&self) -> ParseError {
        ParseError::new(
            self.position(),
            ParseErrorKind::TooDeep {
                limit: MAX_EXPRESSION_DEPTH,
            },
        )
    }

    fn expression(&mut self, rbp: usize) -> Result<Ast, ParseError> {
        if self.depth >= MAX_EXPRESSION_DEPTH {
            return Err(self.too_deep());
        }
        self.depth += 1;
        let result = self.expression_inner(rbp);
        self.depth -= 1;
        result
    }

    fn expression_inner(&mut self, rbp: usize) -> Result<Ast, ParseError> {
        let token = self.advance();
        let mut left = self.nud(token)?;
        while rbp < binding_power(self.current()) {
            let token = self.advance();
            left = self.led(token, left)?;
        }
        Ok(left)
    }

    /// A token at the start of an expression.
    fn nud(&mut self, token: Token<'s>) -> Result<Ast, ParseError> {
        match token.tok {
            Tok::Literal(value) => Ok(leaf(Node::Literal(value))),
            Tok::RawString(text) => Ok(leaf(Node::Str(text.into()))),
            Tok::Ident(name) => Ok(leaf(Node::Field(name.into()))),
            Tok::QuotedIdent(name) => {
                if matches!(self.current(), Tok::LParen) {
                    return Err(ParseError::unexpected(
                        token.pos,
                        "an unquoted function name",
                        format!("quoted identifier {name:?}"),
                    ));
                }
                Ok(leaf(Node::Field(name.into())))
            }
            Tok::Star => {
                let right = if matches!(self.current(), Tok::RBracket) {
                    leaf(Node::Identity)
                } else {
                    self.projection_rhs(BP_STAR)?
                };
                let height = right.height;
                self.join(
                    Node::ValueProjection(Box::new(Node::Identity), boxed(right)),
                    &[height],
                )
            }
            Tok::Filter => self.filter(leaf(Node::Identity)),
            Tok::LBrace => self.multi_hash(),
            Tok::Flatten => {
                let right = self.projection_rhs(BP_FLATTEN)?;
                let height = right.height;
                let flatten = Node::Flatten(Box::new(Node::Identity));
                self.join(
                    Node::Projection(Box::new(flatten), boxed(right)),
                    &[2, height],
                )
            }
            Tok::LBracket => match (self.current(), self.token(1).map(|t| &t.tok)) {
                (Tok::Number(_) | Tok::Colon, _) => {
                    let index = self.index_expression()?;
                    self.project_if_slice(leaf(Node::Identity), index)
                }
                (Tok::Star, Some(Tok::RBracket)) => {
                    self.index += 2;
                    let right = self.projection_rhs(BP_STAR)?;
                    let height = right.height;
                    self.join(
                        Node::Projection(Box::new(Node::Identity), boxed(right)),
                        &[height],
                    )
                }
                _ => self.multi_list(),
            },
            Tok::Current => Ok(leaf(Node::Identity)),
            Tok::Expref => {
                let inner = self.expression(0)?;
                let height = inner.height;
                self.join(Node::ExprRef(boxed(inner)), &[height])
            }
            Tok::Not => {
                let inner = self.expression(BP_NOT)?;
                let height = inner.height;
                self.join(Node::Not(boxed(inner)), &[height])
            }
            Tok::LParen => {
                let inner = self.expression(0)?;
                self.expect(|t| matches!(t, Tok::RParen), "')'")?;
                Ok(inner)
            }
            other => Err(ParseError::unexpected(
                token.pos,
                "an expression",
                other.describe(),
            )),
        }
    }

    /// A token after a complete left-hand expression.
    fn led(&mut self, token: Token<'s>, left: Ast) -> Result<Ast, ParseError> {
        let lh = left.height;
        match token.tok {
            Tok::Dot => {
                if matches!(self.current(), Tok::Star) {
                    self.index += 1;
                    let right = self.projection_rhs(BP_DOT)?;
                    let rh = right.height;
                    self.join(Node::ValueProjection(boxed(left), boxed(right)), &[lh, rh])
                } else {
                    let right = self.dot_rhs(BP_DOT)?;
                    let rh = right.height;
                    self.join(Node::Sub(boxed(left), boxed(right)), &[lh, rh])
                }
            }
            Tok::Pipe => self.binary(left, BP_PIPE, Node::Pipe),
            Tok::Or => self.binary(left, BP_OR, Node::Or),
            Tok::And => self.binary(left, BP_AND, Node::And),
            Tok::Eq => self.binary(left, BP_COMPARE, |l, r| Node::Compare(Comparator::Eq, l, r)),
            Tok::Ne => self.binary(left, BP_COMPARE, |l, r| Node::Compare(Comparator::Ne, l, r)),
            Tok::Lt => self.binary(left, BP_COMPARE, |l, r| Node::Compare(Comparator::Lt, l, r)),
            Tok::Lte => self.binary(left, BP_COMPARE, |l, r| {
                Node::Compare(Comparator::Lte, l, r)
            }),
            Tok::Gt => self.binary(left, BP_COMPARE, |l, r| Node::Compare(Comparator::Gt, l, r)),
            Tok::Gte => self.binary(left, BP_COMPARE, |l, r| {
                Node::Compare(Comparator::Gte, l, r)
            }),
            Tok::LParen => self.call(token.pos, left),
            Tok::Filter => self.filter(left),
            Tok::Flatten => {
                let right = self.projection_rhs(BP_FLATTEN)?;
                let rh = right.height;
                let flatten = Node::Flatten(boxed(left));
                self.join(
                    Node::Projection(Box::new(flatten), boxed(right)),
                    &[lh + 1, rh],
                )
            }
            Tok::LBracket => {
                if matches!(self.current(), Tok::Number(_) | Tok::Colon) {
                    let index = self.index_expression()?;
                    return self.project_if_slice(left, index);
                }
                self.expect(|t| matches!(t, Tok::Star), "'*', a number or ':' after '['")?;
                self.expect(|t| matches!(t, Tok::RBracket), "']' after '[*'")?;
                let right = self.projection_rhs(BP_STAR)?;
                let rh = right.height;
                self.join(Node::Projection(boxed(left), boxed(right)), &[lh, rh])
            }
            other => Err(ParseError::unexpected(
                token.pos,
                "an operator",
                other.describe(),
            )),
        }
    }

    fn binary(
        &mut self,
        left: Ast,
        rbp: usize,
        make: impl FnOnce(Box<Node>, Box<Node>) -> Node,
    ) -> Result<Ast, ParseError> {
        let right = self.expression(rbp)?;
        let heights = [left.height, right.height];
        self.join(make(boxed(left), boxed(right)), &heights)
    }

    /// `name(args...)`. As in go-jmespath, a comma between arguments may be left out and one
    /// may trail.
    fn call(&mut self, pos: usize, left: Ast) -> Result<Ast, ParseError> {
        // go-jmespath calls whatever string the left node holds: a name, and also a raw
        // string or a string literal (`'length'(@)`).
        let name: Box<str> = match left.node {
            Node::Field(name) | Node::Str(name) => name,
            Node::Literal(v) if v.is_str() => v.as_str().unwrap_or_default().into(),
            _ => {
                return Err(ParseError::unexpected(
                    pos,
                    "a function name before '('",
                    "'('".into(),
                ));
            }
        };
        let mut args = Vec::new();
        let mut height = 0;
        while !matches!(self.current(), Tok::RParen) {
            let arg = self.expression(0)?;
            if matches!(self.current(), Tok::Comma) {
                self.index += 1;
            }
            height = height.max(arg.height);
            args.push(arg.node);
        }
        self.index += 1;
        let function = self.registry.slot(&name);
        self.join(
            Node::Call {
                name,
                function,
                args,
            },
            &[height],
        )
    }

    /// `[?condition]` and what follows it, projected over `left`.
    fn filter(&mut self, left: Ast) -> Result<Ast, ParseError> {
        let condition = self.expression(0)?;
        self.expect(|t| matches!(t, Tok::RBracket), "']' after a filter")?;
        let right = if matches!(self.current(), Tok::Flatten) {
            leaf(Node::Identity)
        } else {
            self.projection_rhs(BP_FILTER)?
        };
        let heights = [left.height, right.height, condition.height];
        let node = Node::Filter {
            left: boxed(left),
            right: boxed(right),
            condition: boxed(condition),
        };
        self.join(node, &heights)
    }

    /// What may follow a `.`: an identifier (or `*`), a multi-select list or hash.
    fn dot_rhs(&mut self, rbp: usize) -> Result<Ast, ParseError> {
        match self.current() {
            Tok::Ident(_) | Tok::QuotedIdent(_) | Tok::Star => self.expression(rbp),
            Tok::LBracket => {
                self.index += 1;
                self.multi_list()
            }
            Tok::LBrace => {
                self.index += 1;
                self.multi_hash()
            }
            _ => Err(self.unexpected("an identifier, '[' or '{' after '.'")),
        }
    }

    /// The expression a projection applies to each element: empty (identity) when the next
    /// token binds weakly.
    fn projection_rhs(&mut self, rbp: usize) -> Result<Ast, ParseError> {
        let current = self.current();
        if binding_power(current) < BP_PROJECTION_STOP {
            return Ok(leaf(Node::Identity));
        }
        match current {
            Tok::LBracket | Tok::Filter => self.expression(rbp),
            Tok::Dot => {
                self.index += 1;
                self.dot_rhs(rbp)
            }
            _ => Err(self.unexpected("'.', '[' or '[?' after a projection")),
        }
    }

    /// After `[`: an index or a slice, through the closing `]`.
    fn index_expression(&mut self) -> Result<Ast, ParseError> {
        let slice = matches!(self.current(), Tok::Colon)
            || matches!(self.token(1).map(|t| &t.tok), Some(Tok::Colon));
        if slice {
            return self.slice();
        }
        let index = self.number()?;
        self.expect(|t| matches!(t, Tok::RBracket), "']' after an index")?;
        Ok(leaf(Node::Index(index)))
    }

    fn number(&mut self) -> Result<i64, ParseError> {
        let pos = self.position();
        match self.current() {
            Tok::Number(text) => {
                let text = *text;
                self.index += 1;
                text.parse::<i64>().map_err(|_| {
                    ParseError::new(pos, ParseErrorKind::InvalidNumber(text.to_owned()))
                })
            }
            _ => Err(self.unexpected("a number")),
        }
    }

    /// `[start:stop:step]` after the `[`. As in go-jmespath, a later number in the same part
    /// replaces an earlier one and a fourth `:` right before `]` is accepted.
    fn slice(&mut self) -> Result<Ast, ParseError> {
        let mut parts: [Option<i64>; 3] = [None; 3];
        let mut part = 0;
        while part < 3 && !matches!(self.current(), Tok::RBracket) {
            match self.current() {
                Tok::Colon => {
                    part += 1;
                    self.index += 1;
                }
                Tok::Number(_) => {
                    let n = self.number()?;
                    if let Some(slot) = parts.get_mut(part) {
                        *slot = Some(n);
                    }
                }
                _ => return Err(self.unexpected("':' or a number in a slice")),
            }
        }
        self.expect(|t| matches!(t, Tok::RBracket), "']' after a slice")?;
        let [start, stop, step] = parts;
        Ok(leaf(Node::Slice { start, stop, step }))
    }

    /// `left[index]`, or for a slice the projection over `left[slice]`.
    fn project_if_slice(&mut self, left: Ast, index: Ast) -> Result<Ast, ParseError> {
        let is_slice = matches!(index.node, Node::Slice { .. });
        let heights = [left.height, index.height];
        let indexed = self.join(Node::Sub(boxed(left), boxed(index)), &heights)?;
        if !is_slice {
            return Ok(indexed);
        }
        let right = self.projection_rhs(BP_STAR)?;
        let heights = [indexed.height, right.height];
        self.join(Node::Projection(boxed(indexed), boxed(right)), &heights)
    }

    /// `[a, b, ...]` after the `[`.
    fn multi_list(&mut self) -> Result<Ast, ParseError> {
        let mut items = Vec::new();
        let mut height = 0;
        loop {
            let item = self.expression(0)?;
            height = height.max(item.height);
            items.push(item.node);
            if matches!(self.current(), Tok::RBracket) {
                break;
            }
            self.expect(
                |t| matches!(t, Tok::Comma),
                "',' or ']' in a multi-select list",
            )?;
        }
        self.index += 1;
        self.join(Node::MultiList(items), &[height])
    }

    /// `{k: a, l: b}` after the `{`. As in go-jmespath, the comma between pairs may be left
    /// out.
    fn multi_hash(&mut self) -> Result<Ast, ParseError> {
        let mut pairs = Vec::new();
        let mut height = 0;
        loop {
            let key: Box<str> = match self.current() {
                Tok::Ident(name) => (*name).into(),
                Tok::QuotedIdent(name) => name.as_str().into(),
                _ => return Err(self.unexpected("a key in a multi-select hash")),
            };
            self.index += 1;
            self.expect(
                |t| matches!(t, Tok::Colon),
                "':' after a multi-select hash key",
            )?;
            let value = self.expression(0)?;
            height = height.max(value.height);
            pairs.push((key, value.node));
            match self.current() {
                Tok::Comma => self.index += 1,
                Tok::RBrace => {
                    self.index += 1;
                    break;
                }
                _ => {}
            }
        }
        self.join(Node::MultiHash(pairs), &[height])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::ast::Node::*;

    fn p(src: &str) -> Node {
        parse(src, FunctionRegistry::builtins()).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    fn err(src: &str) -> ParseError {
        parse(src, FunctionRegistry::builtins()).expect_err(src)
    }

    fn f(name: &str) -> Box<Node> {
        Box::new(Field(name.into()))
    }

    #[test]
    fn sub_expressions_and_indexes() {
        assert_eq!(p("a.b"), Sub(f("a"), f("b")));
        assert_eq!(p("a[0]"), Sub(f("a"), Box::new(Index(0))));
        assert_eq!(p("[-1]"), Sub(Box::new(Identity), Box::new(Index(-1))));
        assert_eq!(p("\"a b\".c"), Sub(f("a b"), f("c")));
    }

    #[test]
    fn projections() {
        assert_eq!(p("a[*].b"), Projection(f("a"), f("b")));
        assert_eq!(p("a.*"), ValueProjection(f("a"), Box::new(Identity)));
        assert_eq!(
            p("a[]"),
            Projection(Box::new(Flatten(f("a"))), Box::new(Identity))
        );
        let slice = Slice {
            start: None,
            stop: Some(2),
            step: Some(-1),
        };
        assert_eq!(
            p("a[:2:-1].b"),
            Projection(Box::new(Sub(f("a"), Box::new(slice))), f("b"))
        );
        assert_eq!(
            p("a[?b]"),
            Filter {
                left: f("a"),
                right: Box::new(Identity),
                condition: f("b")
            }
        );
        // A projection stops at a pipe.
        assert_eq!(
            p("a[*] | b"),
            Pipe(Box::new(Projection(f("a"), Box::new(Identity))), f("b"))
        );
    }

    #[test]
    fn binding_powers_follow_go_jmespath() {
        assert_eq!(p("!a.b"), Sub(Box::new(Not(f("a"))), f("b")));
        assert_eq!(p("a || b && c"), Or(f("a"), Box::new(And(f("b"), f("c")))));
        assert_eq!(
            p("a == b || c"),
            Or(Box::new(Compare(Comparator::Eq, f("a"), f("b"))), f("c"))
        );
        let Call {
            name,
            function,
            args,
        } = p("sort_by(@, &a.b)")
        else {
            panic!()
        };
        assert_eq!(&*name, "sort_by");
        assert!(function.is_some());
        assert_eq!(args[1], ExprRef(Box::new(Sub(f("a"), f("b")))));
    }

    #[test]
    fn multi_selects_and_literals() {
        assert_eq!(
            p("[a, b]"),
            MultiList(vec![Field("a".into()), Field("b".into())])
        );
        assert_eq!(
            p("{x: a, \"y\": b}"),
            MultiHash(vec![
                ("x".into(), Field("a".into())),
                ("y".into(), Field("b".into()))
            ])
        );
        assert_eq!(
            p("a.[b]"),
            Sub(f("a"), Box::new(MultiList(vec![Field("b".into())])))
        );
        assert_eq!(p("'x'"), Str("x".into()));
        assert_eq!(p("`1`"), Literal(sonic_rs::json!(1)));
    }

    #[test]
    fn go_jmespath_leniencies() {
        assert_eq!(p("f(a b)"), p("f(a, b)"));
        assert_eq!(p("f(a,)"), p("f(a)"));
        assert_eq!(p("{a: b c: d}"), p("{a: b, c: d}"));
        assert_eq!(p("'length'(@)"), p("length(@)"));
        assert_eq!(p("`\"length\"`(@)"), p("length(@)"));
        let Call { function, .. } = p("no_such_function(@)") else {
            panic!()
        };
        assert_eq!(
            function, None,
            "unknown functions fail when called, not when compiled"
        );
    }

    #[test]
    fn syntax_errors_name_position_and_expectation() {
        let e = err("a.");
        assert_eq!(e.position, 2);
        assert!(
            matches!(e.kind, ParseErrorKind::Unexpected { found, .. } if found == "end of expression")
        );
        let e = err("a ]");
        assert_eq!(e.position, 2);
        assert_eq!(
            e.to_string(),
            "syntax error at position 2: expected end of expression, found ']'"
        );
        assert!(matches!(
            err("a[b]").kind,
            ParseErrorKind::Unexpected { .. }
        ));
        assert!(matches!(
            err("[99999999999999999999]").kind,
            ParseErrorKind::InvalidNumber(_)
        ));
        assert!(matches!(
            err("\"f\"(a)").kind,
            ParseErrorKind::Unexpected { .. }
        ));
        assert!(matches!(
            err("@(a)").kind,
            ParseErrorKind::Unexpected { .. }
        ));
        for bad in [
            "", "[", "{", "{a}", "a[", "a[?", "(a", "f(a", "[a,]", "a.1", "1", "*x", "a |",
        ] {
            err(bad);
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "(".repeat(10_000) + "a" + &")".repeat(10_000);
        assert!(matches!(
            err(&deep).kind,
            ParseErrorKind::TooDeep { limit: 256 }
        ));
        let long_path = vec!["a"; 1000].join(".");
        assert!(matches!(
            err(&long_path).kind,
            ParseErrorKind::TooDeep { .. }
        ));
        let nots = "!".repeat(100_000) + "a";
        assert!(matches!(err(&nots).kind, ParseErrorKind::TooDeep { .. }));
        let pipes = vec!["a"; 200].join(" | ");
        p(&pipes);
        let path = vec!["a"; 200].join(".");
        p(&path);
    }
}
