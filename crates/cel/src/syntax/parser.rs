//! Recursive-descent parser for CEL, producing the AST of [`super::ast`].
//!
//! Grammar (cel-spec `langdef.md`, cel-go's `CEL.g4`), lowest precedence first:
//!
//! ```text
//! expr     = or ["?" or ":" expr]
//! or       = and {"||" and}                 (balanced tree, as cel-go)
//! and      = rel {"&&" rel}                 (balanced tree, as cel-go)
//! rel      = add {("<"|"<="|">="|">"|"=="|"!="|"in") add}
//! add      = mul {("+"|"-") mul}
//! mul      = unary {("*"|"/"|"%") unary}
//! unary    = member | "!"+ member | "-"+ member     (pairs cancel out, as in cel-go)
//! member   = primary {"." ["?"] field | "." IDENT "(" [args] ")" | "[" ["?"] expr "]"}
//! primary  = ["."] IDENT ["(" [args] ")"] | ["."] IDENT {"." IDENT} "{" [fields] [","] "}"
//!          | "(" expr ")" | "[" [elems] [","] "]" | "{" [entries] [","] "}" | literal
//! literal  = ["-"] INT | UINT | ["-"] FLOAT | STRING | BYTES | true | false | null
//! ```
//!
//! Ids follow cel-go's numbering (operands before the operator for binary operators, the
//! operator first for calls, lists, maps and messages). A node's span starts where cel-go
//! reports its position (the operator token of an operator, the `(` of a call, the `.` of a
//! selection, the `[` of an index or list, the `{` of a map or message) and ends at the end
//! of the node's text.
//!
//! Limits: the nesting of sub-expressions (parentheses, arguments, elements, ...) and the
//! height of the produced tree are both bounded by `ParseOptions::max_depth`, so neither the
//! parser nor later recursive passes over the tree (including `Drop`) can overflow the stack.
//! Long `&&`/`||` chains become balanced trees (as in cel-go) and so stay shallow; long chains
//! of other binary operators or postfix operators make the tree deep and hit the limit, as
//! they do in cel-go (its visitor counts them).

use crate::env::ParseOptions;
use crate::error::Diagnostic;
use crate::syntax::ast::{
    Comprehension, Expr, ExprId, ExprKind, Literal, MapEntry, Span, StructField, ops,
};
use crate::syntax::lexer::{self, Tok, Token};

/// An expression with the height of its tree (a leaf has height 1).
pub(crate) struct Node {
    pub expr: Expr,
    pub height: u32,
}

/// Parsing stopped at a syntax error (already recorded).
pub(crate) struct Stop;

pub(crate) type PResult = Result<Node, Stop>;

const EXPECTING_EXPR: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', \
     NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// Words that are not identifiers (but may be field and receiver-function names).
const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

pub(crate) struct Parser<'a> {
    pub src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    next_id: ExprId,
    pub diags: Vec<Diagnostic>,
    pub opts: &'a ParseOptions,
    nesting: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, opts: &'a ParseOptions) -> Parser<'a> {
        let mut diags = Vec::new();
        let toks = lexer::lex(src, &mut diags);
        Parser {
            src,
            toks,
            pos: 0,
            next_id: 1,
            diags,
            opts,
            nesting: 0,
        }
    }

    /// Parses the whole input as one expression.
    pub fn parse_all(&mut self) -> Option<Expr> {
        let node = self.expr().ok()?;
        if self.peek() != Tok::Eof {
            let t = self.tok();
            self.syntax_error(t, "extraneous input", "<EOF>");
            return None;
        }
        Some(node.expr)
    }

    // ---- tokens --------------------------------------------------------------------------

    fn tok(&self) -> Token {
        self.toks.get(self.pos).copied().unwrap_or(Token {
            kind: Tok::Eof,
            start: self.src.len(),
            end: self.src.len(),
        })
    }

    fn peek(&self) -> Tok {
        self.tok().kind
    }

    fn peek_at(&self, n: usize) -> Tok {
        self.toks.get(self.pos + n).map_or(Tok::Eof, |t| t.kind)
    }

    fn bump(&mut self) -> Token {
        let t = self.tok();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'a str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.end)
    }

    fn expect(&mut self, kind: Tok, what: &str) -> Result<Token, Stop> {
        if self.peek() == kind {
            Ok(self.bump())
        } else {
            let t = self.tok();
            self.syntax_error(t, "mismatched input", what);
            Err(Stop)
        }
    }

    // ---- diagnostics ---------------------------------------------------------------------

    pub fn error_at(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic {
            span,
            message: message.into(),
        });
    }

    fn syntax_error(&mut self, t: Token, what: &str, expecting: &str) {
        let shown = if t.kind == Tok::Eof {
            "<EOF>"
        } else {
            self.text(t)
        };
        self.error_at(
            Span::new(t.start, t.end),
            format!("Syntax error: {what} '{shown}' expecting {expecting}"),
        );
    }

    fn depth_error(&mut self, at: usize) -> Stop {
        let limit = self.opts.max_depth;
        self.error_at(
            Span::new(at, at),
            format!("expression recursion limit exceeded: {limit}"),
        );
        Stop
    }

    // ---- node construction ---------------------------------------------------------------

    pub fn new_id(&mut self) -> ExprId {
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(1);
        id
    }

    /// Wraps `kind` into a node of the given children's height plus one, failing if that
    /// exceeds the depth limit.
    pub fn node(&mut self, id: ExprId, span: Span, kind: ExprKind, child_height: u32) -> PResult {
        let height = child_height.saturating_add(1);
        if height as usize > self.opts.max_depth {
            return Err(self.depth_error(span.start as usize));
        }
        Ok(Node {
            expr: Expr { id, span, kind },
            height,
        })
    }

    fn leaf(&mut self, span: Span, kind: ExprKind) -> PResult {
        let id = self.new_id();
        self.node(id, span, kind, 0)
    }

    pub fn call(
        &mut self,
        id: ExprId,
        span: Span,
        function: &str,
        target: Option<Node>,
        args: Vec<Node>,
    ) -> PResult {
        let mut h = target.as_ref().map_or(0, |t| t.height);
        let args: Vec<Expr> = args
            .into_iter()
            .map(|a| {
                h = h.max(a.height);
                a.expr
            })
            .collect();
        let kind = ExprKind::Call {
            target: target.map(|t| Box::new(t.expr)),
            function: function.to_string(),
            args,
        };
        self.node(id, span, kind, h)
    }

    /// A placeholder for an expression that had a (non-fatal, reported) error.
    fn error_node(&mut self, span: Span) -> PResult {
        self.leaf(span, ExprKind::Literal(Literal::Null))
    }

    // ---- grammar ---------------------------------------------------------------------------

    /// `expr = or ["?" or ":" expr]`; every call nests one level deeper.
    pub fn expr(&mut self) -> PResult {
        self.nesting += 1;
        let at = self.tok().start;
        let out = if self.nesting > self.opts.max_depth {
            Err(self.depth_error(at))
        } else {
            self.conditional()
        };
        self.nesting -= 1;
        out
    }

    fn conditional(&mut self) -> PResult {
        let cond = self.logical(Tok::OrOr)?;
        if self.peek() != Tok::Question {
            return Ok(cond);
        }
        let q = self.bump();
        let id = self.new_id();
        let if_true = self.logical(Tok::OrOr)?;
        self.expect(Tok::Colon, "':'")?;
        let if_false = self.expr()?;
        let span = Span::new(q.start, self.prev_end());
        self.call(
            id,
            span,
            ops::CONDITIONAL,
            None,
            vec![cond, if_true, if_false],
        )
    }

    /// `||` chains (of `&&` chains), balanced like cel-go's.
    fn logical(&mut self, op: Tok) -> PResult {
        let (function, sub) = if op == Tok::OrOr {
            (ops::LOGICAL_OR, Tok::AndAnd)
        } else {
            (ops::LOGICAL_AND, Tok::Eof)
        };
        let first = if sub == Tok::AndAnd {
            self.logical(Tok::AndAnd)?
        } else {
            self.binary(0)?
        };
        if self.peek() != op {
            return Ok(first);
        }
        let start = first.expr.span.start as usize;
        let mut terms = vec![first];
        let mut op_ids = Vec::new();
        let mut op_starts = Vec::new();
        while self.peek() == op {
            let t = self.bump();
            let term = if sub == Tok::AndAnd {
                self.logical(Tok::AndAnd)?
            } else {
                self.binary(0)?
            };
            terms.push(term);
            op_ids.push(self.new_id());
            op_starts.push(t.start);
        }
        let end = self.prev_end();
        let mut terms: Vec<Option<Node>> = terms.into_iter().map(Some).collect();
        let ctx = Balance {
            function,
            op_ids: &op_ids,
            op_starts: &op_starts,
            start,
            end,
        };
        self.balanced(&ctx, &mut terms, 0, op_ids.len().saturating_sub(1))
    }

    fn balanced(
        &mut self,
        ctx: &Balance<'_>,
        terms: &mut [Option<Node>],
        lo: usize,
        hi: usize,
    ) -> PResult {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            terms.get_mut(mid).and_then(Option::take)
        } else {
            Some(self.balanced(ctx, terms, lo, mid - 1)?)
        };
        let right = if mid == hi {
            terms.get_mut(mid + 1).and_then(Option::take)
        } else {
            Some(self.balanced(ctx, terms, mid + 1, hi)?)
        };
        let (Some(left), Some(right)) = (left, right) else {
            return Err(Stop);
        };
        let id = ctx.op_ids.get(mid).copied().unwrap_or(0);
        let start = ctx.op_starts.get(mid).copied().unwrap_or(ctx.start);
        let end = (right.expr.span.end as usize).max(start);
        let _ = ctx.end;
        self.call(
            id,
            Span::new(start, end),
            ctx.function,
            None,
            vec![left, right],
        )
    }

    /// Precedence climbing over relations (level 0), additions (1), multiplications (2).
    fn binary(&mut self, level: u8) -> PResult {
        if level > 2 {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let function = match (level, self.peek()) {
                (0, Tok::Less) => ops::LESS,
                (0, Tok::LessEq) => ops::LESS_EQUALS,
                (0, Tok::Greater) => ops::GREATER,
                (0, Tok::GreaterEq) => ops::GREATER_EQUALS,
                (0, Tok::EqEq) => ops::EQUALS,
                (0, Tok::NotEq) => ops::NOT_EQUALS,
                (0, Tok::In) => ops::IN,
                (1, Tok::Plus) => ops::ADD,
                (1, Tok::Minus) => ops::SUBTRACT,
                (2, Tok::Star) => ops::MULTIPLY,
                (2, Tok::Slash) => ops::DIVIDE,
                (2, Tok::Percent) => ops::MODULO,
                _ => return Ok(lhs),
            };
            let t = self.bump();
            let id = self.new_id();
            let rhs = self.binary(level + 1)?;
            let span = Span::new(t.start, self.prev_end());
            lhs = self.call(id, span, function, None, vec![lhs, rhs])?;
        }
    }

    /// `!`/`-` runs; an even number cancels out (as cel-go does), and a single `-` directly
    /// before a number is part of the literal.
    fn unary(&mut self) -> PResult {
        let op = self.peek();
        let signed_number = matches!(self.peek_at(1), Tok::Int | Tok::Float);
        if (op != Tok::Bang && op != Tok::Minus) || (op == Tok::Minus && signed_number) {
            return self.member();
        }
        let first = self.bump();
        let mut count = 1usize;
        while self.peek() == op {
            self.bump();
            count += 1;
        }
        let id = (count % 2 == 1).then(|| self.new_id());
        let operand = self.member()?;
        let Some(id) = id else {
            return Ok(operand);
        };
        let function = if op == Tok::Bang {
            ops::LOGICAL_NOT
        } else {
            ops::NEGATE
        };
        let span = Span::new(first.start, self.prev_end());
        self.call(id, span, function, None, vec![operand])
    }

    fn member(&mut self) -> PResult {
        let mut operand = self.primary()?;
        let start = operand.expr.span.start as usize;
        loop {
            match self.peek() {
                Tok::Dot => {
                    let dot = self.bump();
                    let optional = self.peek() == Tok::Question;
                    if optional {
                        self.bump();
                    }
                    let name_tok = self.tok();
                    let name = match name_tok.kind {
                        Tok::Ident => self.text(name_tok).to_string(),
                        Tok::EscIdent => unescape_ident(self.text(name_tok)),
                        _ => {
                            self.syntax_error(name_tok, "mismatched input", "IDENTIFIER");
                            return Err(Stop);
                        }
                    };
                    self.bump();
                    if name_tok.kind == Tok::Ident && !optional && self.peek() == Tok::LParen {
                        let open = self.bump();
                        let id = self.new_id();
                        let args = self.args(Tok::RParen, "')'")?;
                        let span = Span::new(open.start, self.prev_end());
                        let _ = start;
                        operand = crate::syntax::macros::receiver_call_or_macro(
                            self, id, span, &name, operand, args,
                        )?;
                    } else {
                        let id = self.new_id();
                        let span = Span::new(dot.start, self.prev_end());
                        let h = operand.height;
                        let kind = ExprKind::Select {
                            operand: Box::new(operand.expr),
                            field: name,
                            test_only: false,
                            optional,
                        };
                        operand = self.node(id, span, kind, h)?;
                    }
                }
                Tok::LBracket => {
                    let open = self.bump();
                    let optional = self.peek() == Tok::Question;
                    if optional {
                        self.bump();
                    }
                    let id = self.new_id();
                    let index = self.expr()?;
                    self.expect(Tok::RBracket, "']'")?;
                    let span = Span::new(open.start, self.prev_end());
                    let function = if optional { ops::OPT_INDEX } else { ops::INDEX };
                    operand = self.call(id, span, function, None, vec![operand, index])?;
                }
                _ => return Ok(operand),
            }
        }
    }

    fn primary(&mut self) -> PResult {
        let t = self.tok();
        match t.kind {
            Tok::Dot | Tok::Ident => self.ident_call_or_message(),
            Tok::LParen => {
                self.bump();
                let inner = self.expr()?;
                self.expect(Tok::RParen, "')'")?;
                Ok(inner)
            }
            Tok::LBracket => self.list(),
            Tok::LBrace => self.map(),
            Tok::Minus if matches!(self.peek_at(1), Tok::Int | Tok::Float) => self.number(),
            Tok::Int | Tok::Uint | Tok::Float => self.number(),
            Tok::Str => {
                self.bump();
                let span = Span::new(t.start, t.end);
                match lexer::string_value(self.text(t)) {
                    Ok(s) => self.leaf(span, ExprKind::Literal(Literal::String(s))),
                    Err((off, msg)) => {
                        self.error_at(Span::new(t.start + off, t.start + off + 1), msg);
                        self.error_node(span)
                    }
                }
            }
            Tok::Bytes => {
                self.bump();
                let span = Span::new(t.start, t.end);
                match lexer::bytes_value(self.text(t)) {
                    Ok(b) => self.leaf(span, ExprKind::Literal(Literal::Bytes(b))),
                    Err((off, msg)) => {
                        self.error_at(Span::new(t.start + off, t.start + off + 1), msg);
                        self.error_node(span)
                    }
                }
            }
            Tok::True | Tok::False | Tok::Null => {
                self.bump();
                let lit = match t.kind {
                    Tok::True => Literal::Bool(true),
                    Tok::False => Literal::Bool(false),
                    _ => Literal::Null,
                };
                self.leaf(Span::new(t.start, t.end), ExprKind::Literal(lit))
            }
            _ => {
                self.syntax_error(t, "mismatched input", EXPECTING_EXPR);
                Err(Stop)
            }
        }
    }

    fn number(&mut self) -> PResult {
        let first = self.bump();
        let (negative, t) = if first.kind == Tok::Minus {
            (true, self.bump())
        } else {
            (false, first)
        };
        let text = self.text(t);
        let span = Span::new(first.start, t.end);
        let lit = match t.kind {
            Tok::Int => lexer::int_value(text, negative)
                .map(Literal::Int)
                .ok_or("invalid int literal"),
            Tok::Uint => lexer::uint_value(text)
                .map(Literal::Uint)
                .ok_or("invalid uint literal"),
            Tok::Float => lexer::double_value(text, negative)
                .map(Literal::Double)
                .ok_or("invalid double literal"),
            _ => {
                self.syntax_error(t, "mismatched input", EXPECTING_EXPR);
                return Err(Stop);
            }
        };
        match lit {
            Ok(lit) => self.leaf(span, ExprKind::Literal(lit)),
            Err(msg) => {
                self.error_at(span, msg);
                self.error_node(span)
            }
        }
    }

    /// `["."] IDENT`, `["."] IDENT "(" args ")"` or `["."] IDENT {"." IDENT} "{" fields "}"`.
    fn ident_call_or_message(&mut self) -> PResult {
        let first = self.tok();
        let leading_dot = first.kind == Tok::Dot;
        if leading_dot {
            self.bump();
        }
        let name_tok = self.tok();
        if name_tok.kind != Tok::Ident {
            self.syntax_error(name_tok, "mismatched input", "IDENTIFIER");
            return Err(Stop);
        }
        self.bump();
        let name = self.text(name_tok);
        // A qualified message name: look ahead for `.IDENT`* `{`.
        let mut n = 0;
        while self.peek_at(n) == Tok::Dot && self.peek_at(n + 1) == Tok::Ident {
            n += 2;
        }
        if self.peek_at(n) == Tok::LBrace {
            let mut type_name = String::new();
            if leading_dot {
                type_name.push('.');
            }
            type_name.push_str(name);
            for _ in 0..n / 2 {
                self.bump();
                let seg = self.bump();
                type_name.push('.');
                type_name.push_str(self.text(seg));
            }
            return self.message(type_name);
        }
        let reserved = RESERVED.contains(&name);
        let full = if leading_dot {
            format!(".{name}")
        } else {
            name.to_string()
        };
        if self.peek() == Tok::LParen {
            let open = self.bump();
            let id = self.new_id();
            let args = self.args(Tok::RParen, "')'")?;
            let span = Span::new(open.start, self.prev_end());
            if reserved {
                self.error_at(
                    Span::new(first.start, name_tok.end),
                    format!("reserved identifier: {name}"),
                );
                return self.error_node(span);
            }
            return crate::syntax::macros::global_call_or_macro(self, id, span, &full, args);
        }
        let span = Span::new(name_tok.start, name_tok.end);
        if reserved {
            self.error_at(
                Span::new(first.start, name_tok.end),
                format!("reserved identifier: {name}"),
            );
            return self.error_node(span);
        }
        self.leaf(span, ExprKind::Ident(full))
    }

    /// Comma-separated expressions up to `close` (consumed).
    fn args(&mut self, close: Tok, what: &str) -> Result<Vec<Node>, Stop> {
        let mut out = Vec::new();
        if self.peek() == close {
            self.bump();
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                k if k == close => {
                    self.bump();
                    return Ok(out);
                }
                _ => {
                    let t = self.tok();
                    let expecting = format!("{{',', {what}}}");
                    self.syntax_error(t, "mismatched input", &expecting);
                    return Err(Stop);
                }
            }
        }
    }

    /// Skips an optional trailing comma before `close`; reports whether the list goes on.
    fn list_continues(&mut self, close: Tok, what: &str) -> Result<bool, Stop> {
        match self.peek() {
            Tok::Comma => {
                self.bump();
                if self.peek() == close {
                    self.bump();
                    return Ok(false);
                }
                Ok(true)
            }
            k if k == close => {
                self.bump();
                Ok(false)
            }
            _ => {
                let t = self.tok();
                let expecting = format!("{{',', {what}}}");
                self.syntax_error(t, "mismatched input", &expecting);
                Err(Stop)
            }
        }
    }

    fn list(&mut self) -> PResult {
        let open = self.bump();
        let id = self.new_id();
        let mut elements = Vec::new();
        let mut optional_indices = Vec::new();
        let mut h = 0;
        if self.peek() == Tok::RBracket {
            self.bump();
        } else {
            loop {
                if self.peek() == Tok::Question {
                    self.bump();
                    optional_indices.push(u32::try_from(elements.len()).unwrap_or(u32::MAX));
                }
                let e = self.expr()?;
                h = h.max(e.height);
                elements.push(e.expr);
                if !self.list_continues(Tok::RBracket, "']'")? {
                    break;
                }
            }
        }
        let span = Span::new(open.start, self.prev_end());
        let kind = ExprKind::List {
            elements,
            optional_indices,
        };
        self.node(id, span, kind, h)
    }

    fn map(&mut self) -> PResult {
        let open = self.bump();
        let id = self.new_id();
        let mut entries = Vec::new();
        let mut h = 0;
        if self.peek() == Tok::RBrace {
            self.bump();
        } else {
            loop {
                let optional = self.peek() == Tok::Question;
                if optional {
                    self.bump();
                }
                let entry_id_at = self.pos;
                let _ = entry_id_at;
                // cel-go numbers the entry (its ':') before the key.
                let entry_id = self.new_id();
                let key = self.expr()?;
                self.expect(Tok::Colon, "':'")?;
                let value = self.expr()?;
                h = h.max(key.height).max(value.height);
                entries.push(MapEntry {
                    id: entry_id,
                    key: key.expr,
                    value: value.expr,
                    optional,
                });
                if !self.list_continues(Tok::RBrace, "'}'")? {
                    break;
                }
            }
        }
        let span = Span::new(open.start, self.prev_end());
        self.node(id, span, ExprKind::Map { entries }, h)
    }

    fn message(&mut self, type_name: String) -> PResult {
        let open = self.bump();
        let id = self.new_id();
        let mut fields = Vec::new();
        let mut h = 0;
        if self.peek() == Tok::RBrace {
            self.bump();
        } else {
            loop {
                let optional = self.peek() == Tok::Question;
                if optional {
                    self.bump();
                }
                let t = self.tok();
                let name = match t.kind {
                    Tok::Ident => self.text(t).to_string(),
                    Tok::EscIdent => unescape_ident(self.text(t)),
                    _ => {
                        self.syntax_error(
                            t,
                            "mismatched input",
                            "{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}",
                        );
                        return Err(Stop);
                    }
                };
                self.bump();
                self.expect(Tok::Colon, "':'")?;
                let field_id = self.new_id();
                let value = self.expr()?;
                h = h.max(value.height);
                fields.push(StructField {
                    id: field_id,
                    name,
                    value: value.expr,
                    optional,
                });
                if !self.list_continues(Tok::RBrace, "'}'")? {
                    break;
                }
            }
        }
        let span = Span::new(open.start, self.prev_end());
        self.node(id, span, ExprKind::Struct { type_name, fields }, h)
    }

    /// Builds a comprehension node (for macros).
    pub fn comprehension(&mut self, span: Span, parts: ComprehensionParts) -> PResult {
        let h = [
            &parts.iter_range,
            &parts.accu_init,
            &parts.loop_condition,
            &parts.loop_step,
            &parts.result,
        ]
        .iter()
        .map(|n| n.height)
        .max()
        .unwrap_or(0);
        let id = self.new_id();
        let kind = ExprKind::Comprehension(Box::new(Comprehension {
            iter_var: parts.iter_var,
            iter_var2: parts.iter_var2,
            iter_range: parts.iter_range.expr,
            accu_var: parts.accu_var,
            accu_init: parts.accu_init.expr,
            loop_condition: parts.loop_condition.expr,
            loop_step: parts.loop_step.expr,
            result: parts.result.expr,
        }));
        self.node(id, span, kind, h)
    }

    /// A fresh leaf for macro expansions.
    pub fn new_leaf(&mut self, span: Span, kind: ExprKind) -> PResult {
        self.leaf(span, kind)
    }

    /// A fresh list node for macro expansions.
    pub fn new_list(&mut self, span: Span, elements: Vec<Node>) -> PResult {
        let id = self.new_id();
        let h = elements.iter().map(|e| e.height).max().unwrap_or(0);
        let kind = ExprKind::List {
            elements: elements.into_iter().map(|e| e.expr).collect(),
            optional_indices: Vec::new(),
        };
        self.node(id, span, kind, h)
    }
}

pub(crate) struct ComprehensionParts {
    pub iter_var: String,
    pub iter_var2: Option<String>,
    pub iter_range: Node,
    pub accu_var: String,
    pub accu_init: Node,
    pub loop_condition: Node,
    pub loop_step: Node,
    pub result: Node,
}

struct Balance<'b> {
    function: &'static str,
    op_ids: &'b [ExprId],
    op_starts: &'b [usize],
    start: usize,
    end: usize,
}

fn unescape_ident(text: &str) -> String {
    text.get(1..text.len().saturating_sub(1))
        .unwrap_or("")
        .to_string()
}
