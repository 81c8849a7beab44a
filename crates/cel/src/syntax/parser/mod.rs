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
//! Limits. cel-go (default 250) has two: an ANTLR listener that bounds how deeply each grammar
//! rule nests (parentheses, arguments, list/map/message elements; and, because `relation`,
//! `calc` and `member` are left-recursive rules, the length of `<`/`+`/`*` and postfix
//! chains), reported as `expression recursion limit exceeded: N`; and a visitor counter over
//! nested relation, arithmetic, ternary, select, member-call and index nodes
//! (`max recursion depth exceeded`). `&&`/`||` chains are loops in its grammar and become
//! balanced trees, so 10,000 `a && a && ...` terms parse (depth ~14).
//!
//! Here, `ParseOptions::max_depth` (capped at [`MAX_DEPTH_CAP`], 512) bounds (1) the
//! nesting of sub-expressions (`expr` entries) and (2) the height of the produced tree, every
//! node kind counted; both report `expression recursion limit exceeded: N` at the position
//! where the limit was hit. `&&`/`||` chains are balanced exactly as cel-go does; long chains
//! of other binary or postfix operators make the tree tall and hit the limit, as in cel-go;
//! `!!!!x`/`--x` runs cancel in pairs, so they never deepen the tree. Counting every node
//! kind (including the nodes macros generate: a nested `all`/`exists` costs about two
//! levels) is slightly stricter than cel-go on exotic inputs (200 nested lists around a
//! 60-term sum; more than ~120 nested comprehensions) and guarantees that accepted trees are
//! at most `max_depth` high, so the parser and any later recursive pass (checker, compiler,
//! `Drop`) stay within a small stack. The functions on the parser's recursive path keep
//! small frames: about 2.5 KiB per nesting level in debug builds (the worst shape, nested
//! message literals, needs ~600 KiB for 249 levels), so the default limit fits well within
//! a 2 MiB thread; release builds need far less.

use crate::error::Diagnostic;
use crate::syntax::ParseOptions;
use crate::syntax::ast::{Expr, ExprId, ExprKind, Span, ops};
use crate::syntax::lexer::{self, Tok, Token};
use crate::syntax::macros;

mod terms;

/// An expression with the height of its tree (a leaf has height 1).
///
/// The expression is boxed to keep parser stack frames small: debug builds give every
/// temporary its own slot, and nesting depth multiplies frame sizes.
pub(crate) struct Node {
    pub expr: Box<Expr>,
    pub height: u32,
}

/// Parsing stopped at a syntax error (already recorded).
pub(crate) struct Stop;

pub(crate) type PResult = Result<Node, Stop>;

const EXPECTING_EXPR: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', \
     NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// Tokens that can start an expression.
fn starts_expr(t: Tok) -> bool {
    matches!(
        t,
        Tok::LBracket
            | Tok::LBrace
            | Tok::LParen
            | Tok::Dot
            | Tok::Minus
            | Tok::Bang
            | Tok::True
            | Tok::False
            | Tok::Null
            | Tok::Int
            | Tok::Uint
            | Tok::Float
            | Tok::Str
            | Tok::Bytes
            | Tok::Ident
    )
}

/// Words that are not identifiers (but may be field and receiver-function names).
pub(crate) const RESERVED: &[&str] = &[
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
    /// `opts.max_depth`, capped at [`MAX_DEPTH_CAP`].
    depth_limit: usize,
}

/// The largest depth limit honoured, whatever `ParseOptions::max_depth` says: deeper trees
/// could exhaust a thread's stack here or in later recursive passes (cel-go's default is 250).
pub(crate) const MAX_DEPTH_CAP: usize = 512;

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
            depth_limit: opts.max_depth.min(MAX_DEPTH_CAP),
        }
    }

    /// Parses the whole input as one expression.
    pub fn parse_all(&mut self) -> Option<Expr> {
        let node = self.expr().ok()?;
        if self.peek() != Tok::Eof {
            let t = self.tok();
            let what = self.unexpected(1, |k| k == Tok::Eof);
            self.syntax_error(t, what, "<EOF>");
            return None;
        }
        Some(*node.expr)
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

    /// ANTLR's wording: an unexpected token is "extraneous" when dropping it would let the
    /// parse go on (the token `n` ahead fits), else "mismatched".
    fn unexpected(&self, n: usize, fits: impl Fn(Tok) -> bool) -> &'static str {
        if fits(self.peek_at(n)) {
            "extraneous input"
        } else {
            "mismatched input"
        }
    }

    fn depth_error(&mut self, at: usize) -> Stop {
        let limit = self.depth_limit;
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
        if height as usize > self.depth_limit {
            return Err(self.depth_error(span.start as usize));
        }
        Ok(Node {
            expr: Box::new(Expr { id, span, kind }),
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
                *a.expr
            })
            .collect();
        let kind = ExprKind::Call {
            target: target.map(|t| t.expr),
            function: function.to_string(),
            args,
        };
        self.node(id, span, kind, h)
    }

    // ---- grammar ---------------------------------------------------------------------------

    /// `expr = or ["?" or ":" expr]`. Every sub-expression goes through here, so this is
    /// where nesting is counted.
    ///
    /// The functions on the recursive path (`expr`, `logical`, `binary`, `unary`, `primary`
    /// and the bracketed forms) keep their own locals few and small and leave the rest to
    /// helpers, because debug builds give each temporary a stack slot and the nesting limit
    /// multiplies these frames. After an error the parse is abandoned, so the nesting count
    /// is not restored on error paths.
    pub fn expr(&mut self) -> PResult {
        self.nesting += 1;
        if self.nesting > self.depth_limit {
            return Err(self.depth_error_here());
        }
        let cond = self.logical()?;
        let out = if self.peek() == Tok::Question {
            self.ternary(cond)?
        } else {
            cond
        };
        self.nesting -= 1;
        Ok(out)
    }

    /// `? if_true : if_false` after the condition.
    fn ternary(&mut self, cond: Node) -> PResult {
        let q = self.bump();
        let id = self.new_id();
        let if_true = self.logical()?;
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

    /// `||` chains of `&&` chains, each turned into cel-go's balanced tree. Ids as cel-go:
    /// an operator is numbered after its right-hand term.
    fn logical(&mut self) -> PResult {
        let first = self.binary()?;
        if matches!(self.peek(), Tok::AndAnd | Tok::OrOr) {
            self.logical_chains(first)
        } else {
            Ok(first)
        }
    }

    fn logical_chains(&mut self, first: Node) -> PResult {
        let mut and_chain = Chain::new(first);
        let mut or_chain: Option<Chain> = None;
        let mut or_start = 0;
        loop {
            if self.peek() == Tok::AndAnd {
                let t = self.bump();
                let term = self.binary()?;
                and_chain.push(t.start, term);
                and_chain.number_last(self.new_id());
                continue;
            }
            let done = self.balance(ops::LOGICAL_AND, and_chain)?;
            match or_chain.as_mut() {
                None => or_chain = Some(Chain::new(done)),
                Some(c) => {
                    c.push(or_start, done);
                    c.number_last(self.new_id());
                }
            }
            if self.peek() != Tok::OrOr {
                break;
            }
            or_start = self.bump().start;
            and_chain = Chain::new(self.binary()?);
        }
        let chain = or_chain.ok_or(Stop)?;
        self.balance(ops::LOGICAL_OR, chain)
    }

    /// Relations, additions and multiplications (left-associative), by operator precedence
    /// in one loop rather than one recursion level per precedence.
    fn binary(&mut self) -> PResult {
        let first = self.unary()?;
        if binary_op(self.peek()).is_some() {
            self.binary_chain(first)
        } else {
            Ok(first)
        }
    }

    fn binary_chain(&mut self, first: Node) -> PResult {
        let mut operands = vec![first];
        let mut pending: Vec<PendingOp> = Vec::new();
        while let Some((prec, function)) = binary_op(self.peek()) {
            while pending.last().is_some_and(|top| top.prec >= prec) {
                self.reduce(&mut operands, &mut pending)?;
            }
            let start = self.bump().start;
            let id = self.new_id();
            pending.push(PendingOp {
                prec,
                function,
                start,
                id,
            });
            operands.push(self.unary()?);
        }
        while !pending.is_empty() {
            self.reduce(&mut operands, &mut pending)?;
        }
        operands.pop().ok_or(Stop)
    }

    /// `!`/`-` runs, then a primary and its postfix operators (`.f`, `.?f`, `.f(...)`,
    /// `[e]`, `[?e]`).
    fn unary(&mut self) -> PResult {
        let prefix = self.prefix_ops();
        let mut operand = self.primary()?;
        loop {
            operand = match self.peek() {
                Tok::Dot => self.select_or_call(operand)?,
                Tok::LBracket => self.index(operand)?,
                _ => break,
            };
        }
        match prefix {
            Some(prefix) => self.apply_prefix(prefix, operand),
            None => Ok(operand),
        }
    }

    fn primary(&mut self) -> PResult {
        match self.peek() {
            Tok::Dot | Tok::Ident => self.ident_call_or_message(),
            Tok::LParen => self.paren(),
            Tok::LBracket => self.list(),
            Tok::LBrace => self.map(),
            _ => self.literal(),
        }
    }

    fn paren(&mut self) -> PResult {
        self.bump();
        let inner = self.expr()?;
        self.expect(Tok::RParen, "')'")?;
        Ok(inner)
    }

    fn index(&mut self, operand: Node) -> PResult {
        let open = self.bump();
        let optional = self.eat(Tok::Question);
        let id = self.new_id();
        let index = self.expr()?;
        self.expect(Tok::RBracket, "']'")?;
        let span = Span::new(open.start, self.prev_end());
        let function = if optional { ops::OPT_INDEX } else { ops::INDEX };
        self.call(id, span, function, None, vec![operand, index])
    }

    fn select_or_call(&mut self, operand: Node) -> PResult {
        let dot = self.bump();
        let optional = self.eat(Tok::Question);
        let name_tok = self.field_name("IDENTIFIER")?;
        if name_tok.kind == Tok::Ident && !optional && self.peek() == Tok::LParen {
            let open = self.bump().start;
            let id = self.new_id();
            let args = self.args()?;
            return self.receiver_call(open, id, name_tok, operand, args);
        }
        self.select(dot.start, optional, name_tok, operand)
    }

    // ---- helpers of the recursive path (kept out of its frames) --------------------------

    fn eat(&mut self, kind: Tok) -> bool {
        let found = self.peek() == kind;
        if found {
            self.bump();
        }
        found
    }

    fn depth_error_here(&mut self) -> Stop {
        let at = self.tok().start;
        self.depth_error(at)
    }

    fn reduce(
        &mut self,
        operands: &mut Vec<Node>,
        pending: &mut Vec<PendingOp>,
    ) -> Result<(), Stop> {
        let (Some(op), Some(rhs), Some(lhs)) = (pending.pop(), operands.pop(), operands.pop())
        else {
            return Err(Stop);
        };
        let end = (rhs.expr.span.end as usize).max(op.start);
        let node = self.call(
            op.id,
            Span::new(op.start, end),
            op.function,
            None,
            vec![lhs, rhs],
        )?;
        operands.push(node);
        Ok(())
    }

    /// Turns `t0 op t1 op t2 ...` into cel-go's balanced tree.
    fn balance(&mut self, function: &'static str, chain: Chain) -> PResult {
        let Chain {
            terms,
            ops: operators,
        } = chain;
        if operators.is_empty() {
            return terms.into_iter().next().ok_or(Stop);
        }
        let mut terms: Vec<Option<Node>> = terms.into_iter().map(Some).collect();
        let hi = operators.len() - 1;
        self.balanced(function, &operators, &mut terms, 0, hi)
    }

    fn balanced(
        &mut self,
        function: &'static str,
        operators: &[(usize, ExprId)],
        terms: &mut [Option<Node>],
        lo: usize,
        hi: usize,
    ) -> PResult {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            terms.get_mut(mid).and_then(Option::take)
        } else {
            Some(self.balanced(function, operators, terms, lo, mid - 1)?)
        };
        let right = if mid == hi {
            terms.get_mut(mid + 1).and_then(Option::take)
        } else {
            Some(self.balanced(function, operators, terms, mid + 1, hi)?)
        };
        let (Some(left), Some(right), Some(&(start, id))) = (left, right, operators.get(mid))
        else {
            return Err(Stop);
        };
        let end = (right.expr.span.end as usize).max(start);
        self.call(id, Span::new(start, end), function, None, vec![left, right])
    }

    /// Consumes a run of `!` or `-` (but not a `-` that signs a number literal). Returns the
    /// operator, its position and its id when the run has odd length; even runs cancel out,
    /// as in cel-go.
    fn prefix_ops(&mut self) -> Option<(Tok, usize, ExprId)> {
        let op = self.peek();
        let signed_number = op == Tok::Minus && matches!(self.peek_at(1), Tok::Int | Tok::Float);
        if (op != Tok::Bang && op != Tok::Minus) || signed_number {
            return None;
        }
        let start = self.bump().start;
        let mut count = 1usize;
        while self.peek() == op {
            self.bump();
            count += 1;
        }
        (count % 2 == 1).then(|| (op, start, self.new_id()))
    }

    fn apply_prefix(&mut self, (op, start, id): (Tok, usize, ExprId), operand: Node) -> PResult {
        let function = if op == Tok::Bang {
            ops::LOGICAL_NOT
        } else {
            ops::NEGATE
        };
        let span = Span::new(start, self.prev_end());
        self.call(id, span, function, None, vec![operand])
    }

    /// A field or function name after `.`: an identifier or a backquoted one.
    fn field_name(&mut self, expecting: &str) -> Result<Token, Stop> {
        let t = self.tok();
        if matches!(t.kind, Tok::Ident | Tok::EscIdent) {
            self.bump();
            Ok(t)
        } else {
            let what = self.unexpected(1, |k| {
                matches!(k, Tok::Ident | Tok::EscIdent | Tok::RBrace | Tok::Comma)
            });
            self.syntax_error(t, what, expecting);
            Err(Stop)
        }
    }

    fn field_text(&self, t: Token) -> String {
        if t.kind == Tok::EscIdent {
            unescape_ident(self.text(t))
        } else {
            self.text(t).to_string()
        }
    }

    fn select(&mut self, start: usize, optional: bool, name: Token, operand: Node) -> PResult {
        let id = self.new_id();
        let span = Span::new(start, self.prev_end());
        let h = operand.height;
        let kind = ExprKind::Select {
            operand: operand.expr,
            field: self.field_text(name),
            test_only: false,
            optional,
        };
        self.node(id, span, kind, h)
    }

    fn receiver_call(
        &mut self,
        open: usize,
        id: ExprId,
        name: Token,
        operand: Node,
        args: Vec<Node>,
    ) -> PResult {
        let span = Span::new(open, self.prev_end());
        let name = self.text(name);
        macros::receiver_call_or_macro(self, id, span, name, operand, args)
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

/// A `&&` or `||` chain being collected: terms and (operator position, id) pairs.
struct Chain {
    terms: Vec<Node>,
    ops: Vec<(usize, ExprId)>,
}

impl Chain {
    fn new(first: Node) -> Chain {
        Chain {
            terms: vec![first],
            ops: Vec::new(),
        }
    }

    /// Adds an operator (numbered later, see [`Chain::number_last`]) and its right term.
    fn push(&mut self, op_start: usize, term: Node) {
        self.terms.push(term);
        self.ops.push((op_start, 0));
    }

    fn number_last(&mut self, id: ExprId) {
        if let Some(op) = self.ops.last_mut() {
            op.1 = id;
        }
    }
}

struct PendingOp {
    prec: u8,
    function: &'static str,
    start: usize,
    id: ExprId,
}

fn binary_op(t: Tok) -> Option<(u8, &'static str)> {
    Some(match t {
        Tok::Less => (0, ops::LESS),
        Tok::LessEq => (0, ops::LESS_EQUALS),
        Tok::Greater => (0, ops::GREATER),
        Tok::GreaterEq => (0, ops::GREATER_EQUALS),
        Tok::EqEq => (0, ops::EQUALS),
        Tok::NotEq => (0, ops::NOT_EQUALS),
        Tok::In => (0, ops::IN),
        Tok::Plus => (1, ops::ADD),
        Tok::Minus => (1, ops::SUBTRACT),
        Tok::Star => (2, ops::MULTIPLY),
        Tok::Slash => (2, ops::DIVIDE),
        Tok::Percent => (2, ops::MODULO),
        _ => return None,
    })
}

fn unescape_ident(text: &str) -> String {
    text.get(1..text.len().saturating_sub(1))
        .unwrap_or("")
        .to_string()
}
