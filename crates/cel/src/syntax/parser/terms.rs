//! Primary expressions: literals, identifiers and global calls, message construction,
//! parenthesized argument lists, list and map literals; and the node builders macros use.

use super::{
    ComprehensionParts, EXPECTING_EXPR, Node, PResult, Parser, RESERVED, Stop, starts_expr,
};
use crate::syntax::ast::{Comprehension, ExprId, ExprKind, Literal, MapEntry, Span, StructField};
use crate::syntax::lexer::{self, Tok, Token};
use crate::syntax::macros;

/// What may follow `[` (ANTLR's token order).
const LIST_START: &str = "{'[', ']', '{', '(', '.', ',', '-', '!', '?', 'true', 'false', \
     'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// What may follow `{` (ANTLR's token order).
const MAP_START: &str = "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', \
     'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

impl Parser<'_> {
    /// Literals, with the sign of `-1` / `-1.5` folded in as the grammar does. A bad escape
    /// is reported at the start of its literal, where cel-go reports it.
    pub(super) fn literal(&mut self) -> PResult {
        let t = self.tok();
        let literal = match t.kind {
            Tok::Minus if matches!(self.peek_at(1), Tok::Int | Tok::Float) => {
                self.bump();
                let n = self.bump();
                self.number(t.start, n, true)
            }
            Tok::Int | Tok::Uint | Tok::Float => {
                self.bump();
                self.number(t.start, t, false)
            }
            Tok::Str => {
                self.bump();
                lexer::string_value(self.text(t))
                    .map(Literal::String)
                    .map_err(|msg| (Span::new(t.start, t.end), msg))
            }
            Tok::Bytes => {
                self.bump();
                lexer::bytes_value(self.text(t))
                    .map(Literal::Bytes)
                    .map_err(|msg| (Span::new(t.start, t.end), msg))
            }
            Tok::True | Tok::False | Tok::Null => {
                self.bump();
                Ok(match t.kind {
                    Tok::True => Literal::Bool(true),
                    Tok::False => Literal::Bool(false),
                    _ => Literal::Null,
                })
            }
            _ => {
                let what = self.unexpected(1, starts_expr);
                self.syntax_error(t, what, EXPECTING_EXPR);
                return Err(Stop);
            }
        };
        let span = Span::new(t.start, self.prev_end());
        match literal {
            Ok(lit) => self.leaf(span, ExprKind::Literal(lit)),
            Err((at, msg)) => {
                self.error_at(at, msg);
                self.error_node(span)
            }
        }
    }

    fn number(&self, start: usize, t: Token, negative: bool) -> Result<Literal, (Span, String)> {
        let text = self.text(t);
        let value = match t.kind {
            Tok::Int => lexer::int_value(text, negative)
                .map(Literal::Int)
                .ok_or("invalid int literal"),
            Tok::Uint => lexer::uint_value(text)
                .map(Literal::Uint)
                .ok_or("invalid uint literal"),
            _ => lexer::double_value(text, negative)
                .map(Literal::Double)
                .ok_or("invalid double literal"),
        };
        value.map_err(|msg| (Span::new(start, t.end), msg.to_string()))
    }

    /// A placeholder for an expression that had a (non-fatal, reported) error.
    pub(super) fn error_node(&mut self, span: Span) -> PResult {
        self.leaf(span, ExprKind::Literal(Literal::Null))
    }

    /// `["."] IDENT`, `["."] IDENT "(" args ")"` or `["."] IDENT {"." IDENT} "{" fields "}"`.
    pub(super) fn ident_call_or_message(&mut self) -> PResult {
        let first = self.tok();
        let leading_dot = self.eat(Tok::Dot);
        let name = self.tok();
        if name.kind != Tok::Ident {
            self.syntax_error(name, "mismatched input", "IDENTIFIER");
            return Err(Stop);
        }
        self.bump();
        if let Some(segments) = self.message_ahead() {
            return self.named_message(leading_dot, name, segments);
        }
        if self.peek() == Tok::LParen {
            let open = self.bump().start;
            let id = self.new_id();
            let args = self.args()?;
            return self.global_call(first.start, leading_dot, name, open, id, args);
        }
        self.ident(first.start, leading_dot, name)
    }

    /// How many `.IDENT` segments follow if they lead to a message's `{`.
    fn message_ahead(&self) -> Option<usize> {
        let mut n = 0;
        while self.peek_at(n) == Tok::Dot && self.peek_at(n + 1) == Tok::Ident {
            n += 2;
        }
        (self.peek_at(n) == Tok::LBrace).then_some(n / 2)
    }

    fn named_message(&mut self, leading_dot: bool, first: Token, segments: usize) -> PResult {
        let type_name = self.message_name(leading_dot, first, segments);
        self.message(type_name)
    }

    fn message_name(&mut self, leading_dot: bool, first: Token, segments: usize) -> String {
        let mut type_name = String::new();
        if leading_dot {
            type_name.push('.');
        }
        type_name.push_str(self.text(first));
        for _ in 0..segments {
            self.bump();
            let seg = self.bump();
            type_name.push('.');
            type_name.push_str(self.text(seg));
        }
        type_name
    }

    fn reserved(&mut self, start: usize, name: Token) -> bool {
        let text = self.text(name);
        let reserved = RESERVED.contains(&text);
        if reserved {
            self.error_at(
                Span::new(start, name.end),
                format!("reserved identifier: {text}"),
            );
        }
        reserved
    }

    fn qualified(&self, leading_dot: bool, name: Token) -> String {
        let text = self.text(name);
        if leading_dot {
            format!(".{text}")
        } else {
            text.to_string()
        }
    }

    fn ident(&mut self, start: usize, leading_dot: bool, name: Token) -> PResult {
        let span = Span::new(name.start, name.end);
        if self.reserved(start, name) {
            return self.error_node(span);
        }
        let full = self.qualified(leading_dot, name);
        self.leaf(span, ExprKind::Ident(full))
    }

    fn global_call(
        &mut self,
        start: usize,
        leading_dot: bool,
        name: Token,
        open: usize,
        id: ExprId,
        args: Vec<Node>,
    ) -> PResult {
        let span = Span::new(open, self.prev_end());
        if self.reserved(start, name) {
            return self.error_node(span);
        }
        let full = self.qualified(leading_dot, name);
        macros::global_call_or_macro(self, id, span, &full, args)
    }

    /// Comma-separated expressions after `(`, up to and including `)`.
    pub(super) fn args(&mut self) -> Result<Vec<Node>, Stop> {
        let mut out = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            if !self.separator(Tok::RParen, "')'", false)? {
                return Ok(out);
            }
        }
    }

    /// After an element: a `,` (then, if `trailing`, possibly the closing token) or the
    /// closing token. Returns whether more elements follow.
    fn separator(&mut self, close: Tok, what: &str, trailing: bool) -> Result<bool, Stop> {
        let t = self.bump();
        if t.kind == close {
            return Ok(false);
        }
        if t.kind == Tok::Comma {
            return Ok(!(trailing && self.eat(close)));
        }
        self.syntax_error(t, "mismatched input", &format!("{{',', {what}}}"));
        Err(Stop)
    }

    /// Consumes the end of an empty aggregate: `close`, or `,` then `close` (the grammar
    /// allows a lone trailing comma: `[,]`, `{,}`, `T{,}`).
    fn empty(&mut self, close: Tok) -> bool {
        if self.peek() == Tok::Comma && self.peek_at(1) == close {
            self.bump();
        }
        self.eat(close)
    }

    /// After `[` or `{`: reports a token that can start neither an element nor the end with
    /// the set of tokens that could (as ANTLR words it).
    fn first_element(&mut self, expecting: &str) -> Result<(), Stop> {
        let k = self.peek();
        if starts_expr(k) || k == Tok::Question {
            return Ok(());
        }
        let t = self.tok();
        let what = self.unexpected(1, |k| starts_expr(k) || k == Tok::Question);
        self.syntax_error(t, what, expecting);
        Err(Stop)
    }

    /// `[` elements `]`, with optional `?` elements and a trailing comma.
    pub(super) fn list(&mut self) -> PResult {
        let open = self.bump().start;
        let id = self.new_id();
        let mut elements = Vec::new();
        let mut optional_indices = Vec::new();
        if !self.empty(Tok::RBracket) {
            self.first_element(LIST_START)?;
            loop {
                if self.eat(Tok::Question) {
                    optional_indices.push(u32::try_from(elements.len()).unwrap_or(u32::MAX));
                }
                elements.push(self.expr()?);
                if !self.separator(Tok::RBracket, "']'", true)? {
                    break;
                }
            }
        }
        self.finish_list(open, id, elements, optional_indices)
    }

    fn finish_list(
        &mut self,
        open: usize,
        id: ExprId,
        elements: Vec<Node>,
        optional_indices: Vec<u32>,
    ) -> PResult {
        let span = Span::new(open, self.prev_end());
        let h = elements.iter().map(|e| e.height).max().unwrap_or(0);
        let kind = ExprKind::List {
            elements: elements.into_iter().map(|e| *e.expr).collect(),
            optional_indices,
        };
        self.node(id, span, kind, h)
    }

    /// `{` entries `}`; cel-go numbers each entry (its `:`) before its key.
    pub(super) fn map(&mut self) -> PResult {
        let open = self.bump().start;
        let id = self.new_id();
        let mut entries = Vec::new();
        let mut h = 0;
        if !self.empty(Tok::RBrace) {
            self.first_element(MAP_START)?;
            loop {
                let optional = self.eat(Tok::Question);
                let entry_id = self.new_id();
                let key = self.expr()?;
                self.expect(Tok::Colon, "':'")?;
                let value = self.expr()?;
                h = h.max(key.height).max(value.height);
                entries.push(MapEntry {
                    id: entry_id,
                    key: *key.expr,
                    value: *value.expr,
                    optional,
                });
                if !self.separator(Tok::RBrace, "'}'", true)? {
                    break;
                }
            }
        }
        let span = Span::new(open, self.prev_end());
        self.node(id, span, ExprKind::Map { entries }, h)
    }

    /// `Name{field: value, ?field: value}`; the `{` is the current token.
    fn message(&mut self, type_name: String) -> PResult {
        let open = self.bump().start;
        let id = self.new_id();
        let mut fields = Vec::new();
        let mut h = 0;
        if !self.empty(Tok::RBrace) {
            loop {
                let optional = self.eat(Tok::Question);
                let name = self.field_name("{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}")?;
                self.expect(Tok::Colon, "':'")?;
                let field_id = self.new_id();
                let value = self.expr()?;
                h = h.max(value.height);
                fields.push(StructField {
                    id: field_id,
                    name: self.field_text(name),
                    value: *value.expr,
                    optional,
                });
                if !self.separator(Tok::RBrace, "'}'", true)? {
                    break;
                }
            }
        }
        let span = Span::new(open, self.prev_end());
        self.node(id, span, ExprKind::Struct { type_name, fields }, h)
    }

    // ---- builders for macro expansions ---------------------------------------------------

    /// A comprehension node, numbered after its parts (as cel-go does).
    pub(crate) fn comprehension(&mut self, span: Span, parts: ComprehensionParts) -> PResult {
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
            iter_range: *parts.iter_range.expr,
            accu_var: parts.accu_var,
            accu_init: *parts.accu_init.expr,
            loop_condition: *parts.loop_condition.expr,
            loop_step: *parts.loop_step.expr,
            result: *parts.result.expr,
        }));
        self.node(id, span, kind, h)
    }

    /// A fresh leaf.
    pub(crate) fn new_leaf(&mut self, span: Span, kind: ExprKind) -> PResult {
        self.leaf(span, kind)
    }

    /// A fresh empty map.
    pub(crate) fn new_map(&mut self, span: Span) -> PResult {
        let id = self.new_id();
        let kind = ExprKind::Map {
            entries: Vec::new(),
        };
        self.node(id, span, kind, 0)
    }

    /// A fresh list of `elements`.
    pub(crate) fn new_list(&mut self, span: Span, elements: Vec<Node>) -> PResult {
        let id = self.new_id();
        let h = elements.iter().map(|e| e.height).max().unwrap_or(0);
        let kind = ExprKind::List {
            elements: elements.into_iter().map(|e| *e.expr).collect(),
            optional_indices: Vec::new(),
        };
        self.node(id, span, kind, h)
    }
}
