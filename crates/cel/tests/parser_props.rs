//! Property tests for the parser: no input makes it panic, generated well-formed
//! expressions parse, and printing a parsed tree back to CEL and parsing that gives the
//! same tree.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::fmt::Write as _;

use celer_cel::ParseOptions;
use celer_cel::syntax::ast::{Expr, ExprKind, Literal, ops};
use celer_cel::syntax::{parse, parse_with};
use proptest::prelude::*;

/// Every diagnostic must point inside the source.
fn check_no_panic(src: &str) {
    if let Err(e) = parse(src) {
        assert!(!e.diagnostics.is_empty());
        for d in &e.diagnostics {
            assert!(d.span.start as usize <= src.len(), "{src:?}: {d:?}");
        }
        let _ = e.to_string();
    }
}

const SOUP: &[&str] = &[
    "a",
    "b.c",
    "_x1",
    "true",
    "false",
    "null",
    "in",
    "as",
    "var",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "optional",
    "1",
    "0x1F",
    "1u",
    "0xFFu",
    "1.5",
    ".5",
    "1e10",
    "9223372036854775808",
    "18446744073709551616u",
    "1e999",
    "'s'",
    "\"s\"",
    "'''m'''",
    "r'\\d'",
    "b'\\xff'",
    "br'x'",
    "'\\u00e9'",
    "'\\uD800'",
    "'\\q'",
    "'",
    "\"",
    "'''",
    "`f`",
    "`",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ".",
    ".?",
    "[?",
    "?",
    ":",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "=",
    "&",
    "|",
    "$",
    "#",
    "é",
    "😀",
    "//c\n",
    "\n",
    "\t",
    " ",
];

/// An identifier that is neither a keyword nor reserved.
fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("x".to_string()),
        Just("_y".to_string()),
        Just("size".to_string()),
        "[a-z][a-z0-9_]{0,6}".prop_filter("keyword or reserved", |s| {
            !celer_cel::syntax::is_reserved_word(s) && s != "has"
        }),
    ]
}

fn string_literal() -> impl Strategy<Value = String> {
    let body = "[a-zA-Z0-9 _é😀]{0,8}";
    prop_oneof![
        body.prop_map(|s| format!("'{s}'")),
        body.prop_map(|s| format!("\"{s}\"")),
        body.prop_map(|s| format!("'''{s}\n'''")),
        body.prop_map(|s| format!("r\"{s}\\d\"")),
        body.prop_map(|s| format!("b'{s}\\xff\\000'")),
        body.prop_map(|s| format!("'{s}\\n\\t\\\\\\'\\u00e9\\U0001F600\\x41\\101'")),
    ]
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        ident(),
        ident().prop_map(|s| format!(".{s}")),
        any::<i64>().prop_map(|i| i.to_string()),
        any::<u64>().prop_map(|u| format!("{u}u")),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        (0u32..100, -20i32..20).prop_map(|(a, e)| format!("{a}e{e}")),
        any::<u32>().prop_map(|u| format!("0x{u:X}")),
        string_literal(),
        Just("true".to_string()),
        Just("null".to_string()),
    ]
}

/// Well-formed CEL source. Sub-expressions are parenthesized where the grammar needs it.
fn expr_source() -> impl Strategy<Value = String> {
    leaf().prop_recursive(6, 48, 4, |inner| {
        let bin = prop_oneof![
            Just("+"),
            Just("-"),
            Just("*"),
            Just("/"),
            Just("%"),
            Just("=="),
            Just("!="),
            Just("<"),
            Just("<="),
            Just(">"),
            Just(">="),
            Just("in"),
            Just("&&"),
            Just("||"),
        ];
        prop_oneof![
            (inner.clone(), bin, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("!({a})")),
            inner.clone().prop_map(|a| format!("-({a})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a}) ? ({b}) : ({c})")),
            (inner.clone(), ident()).prop_map(|(a, f)| format!("({a}).{f}")),
            (inner.clone(), ident()).prop_map(|(a, f)| format!("({a}).?{f}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})[{b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a})[?{b}]")),
            (ident(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (
                inner.clone(),
                ident(),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(t, f, args)| format!("({t}).{f}({})", args.join(", "))),
            (
                prop::collection::vec((any::<bool>(), inner.clone()), 0..4),
                any::<bool>()
            )
                .prop_map(|(elems, trailing)| {
                    let parts: Vec<_> = elems
                        .into_iter()
                        .map(|(opt, e)| if opt { format!("?{e}") } else { e })
                        .collect();
                    let comma = if trailing && !parts.is_empty() {
                        ","
                    } else {
                        ""
                    };
                    format!("[{}{comma}]", parts.join(", "))
                }),
            prop::collection::vec((any::<bool>(), inner.clone(), inner.clone()), 0..3).prop_map(
                |entries| {
                    let parts: Vec<_> = entries
                        .into_iter()
                        .map(|(opt, k, v)| format!("{}{k}: {v}", if opt { "?" } else { "" }))
                        .collect();
                    format!("{{{}}}", parts.join(", "))
                }
            ),
            (
                ident(),
                prop::collection::vec((ident(), inner.clone()), 0..3)
            )
                .prop_map(|(t, fields)| {
                    let parts: Vec<_> = fields
                        .into_iter()
                        .map(|(f, v)| format!("{f}: {v}"))
                        .collect();
                    format!("pkg.{t}{{{}}}", parts.join(", "))
                }),
            (inner.clone(), ident()).prop_map(|(a, f)| format!("has(({a}).{f})")),
            (inner.clone(), ident(), inner.clone())
                .prop_map(|(r, v, p)| format!("({r}).all({v}, {p})")),
            (inner.clone(), ident(), inner.clone())
                .prop_map(|(r, v, p)| format!("({r}).exists_one({v}, {p})")),
            (inner.clone(), ident(), inner.clone(), inner.clone())
                .prop_map(|(r, v, p, f)| format!("({r}).map({v}, {p}, {f})")),
            (inner.clone(), ident(), ident(), inner.clone())
                .prop_map(|(r, k, v, f)| format!("({r}).transformMap({k}, {v}, {f})")),
            (inner.clone(), ident(), inner.clone())
                .prop_map(|(r, v, f)| format!("({r}).optMap({v}, {f})")),
            (ident(), inner.clone(), inner)
                .prop_map(|(v, a, b)| format!("cel.bind({v}, {a}, {b})")),
        ]
    })
}

/// Prints a tree (without comprehensions) back to CEL, fully parenthesized.
fn unparse(e: &Expr, out: &mut String) -> bool {
    match &e.kind {
        ExprKind::Literal(l) => {
            match l {
                Literal::Null => out.push_str("null"),
                Literal::Bool(b) => write!(out, "{b}").unwrap(),
                Literal::Int(i) => write!(out, "{i}").unwrap(),
                Literal::Uint(u) => write!(out, "{u}u").unwrap(),
                Literal::Double(d) => write!(out, "{d:?}").unwrap(),
                Literal::String(s) => {
                    out.push('"');
                    for c in s.chars() {
                        match c {
                            '"' => out.push_str("\\\""),
                            '\\' => out.push_str("\\\\"),
                            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                                write!(out, "\\x{:02x}", c as u32).unwrap();
                            }
                            c => out.push(c),
                        }
                    }
                    out.push('"');
                }
                Literal::Bytes(b) => {
                    out.push_str("b\"");
                    for &byte in b {
                        write!(out, "\\x{byte:02x}").unwrap();
                    }
                    out.push('"');
                }
            }
            true
        }
        ExprKind::Ident(name) => {
            out.push_str(name);
            true
        }
        ExprKind::Select {
            operand,
            field,
            test_only,
            optional,
        } => {
            if *test_only {
                out.push_str("has(");
            }
            out.push('(');
            let ok = unparse(operand, out);
            out.push_str(if *optional { ").?" } else { ")." });
            let plain = field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                out.push_str(field);
            } else {
                write!(out, "`{field}`").unwrap();
            }
            if *test_only {
                out.push(')');
            }
            ok
        }
        ExprKind::Call {
            target,
            function,
            args,
        } => unparse_call(target.as_deref(), function, args, out),
        ExprKind::List {
            elements,
            optional_indices,
        } => {
            out.push('[');
            let mut ok = true;
            for (i, el) in elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if optional_indices.iter().any(|&o| o as usize == i) {
                    out.push('?');
                }
                ok &= unparse(el, out);
            }
            out.push(']');
            ok
        }
        ExprKind::Map { entries } => {
            out.push('{');
            let mut ok = true;
            for (i, en) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if en.optional {
                    out.push('?');
                }
                ok &= unparse(&en.key, out);
                out.push_str(": ");
                ok &= unparse(&en.value, out);
            }
            out.push('}');
            ok
        }
        ExprKind::Struct { type_name, fields } => {
            write!(out, "{type_name}{{").unwrap();
            let mut ok = true;
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if f.optional {
                    out.push('?');
                }
                write!(out, "{}: ", f.name).unwrap();
                ok &= unparse(&f.value, out);
            }
            out.push('}');
            ok
        }
        ExprKind::Comprehension(_) => false,
    }
}

fn unparse_call(target: Option<&Expr>, function: &str, args: &[Expr], out: &mut String) -> bool {
    let binary = [
        (ops::LOGICAL_AND, "&&"),
        (ops::LOGICAL_OR, "||"),
        (ops::EQUALS, "=="),
        (ops::NOT_EQUALS, "!="),
        (ops::LESS, "<"),
        (ops::LESS_EQUALS, "<="),
        (ops::GREATER, ">"),
        (ops::GREATER_EQUALS, ">="),
        (ops::ADD, "+"),
        (ops::SUBTRACT, "-"),
        (ops::MULTIPLY, "*"),
        (ops::DIVIDE, "/"),
        (ops::MODULO, "%"),
        (ops::IN, "in"),
    ];
    let mut ok = true;
    let mut arg = |i: usize, out: &mut String| {
        out.push('(');
        ok &= args.get(i).is_some_and(|a| unparse(a, out));
        out.push(')');
    };
    if target.is_none() {
        if let Some((_, sym)) = binary.iter().find(|(f, _)| *f == function) {
            arg(0, out);
            write!(out, " {sym} ").unwrap();
            arg(1, out);
            return ok;
        }
        match function {
            f if f == ops::NEGATE || f == ops::LOGICAL_NOT => {
                out.push_str(if f == ops::NEGATE { "-" } else { "!" });
                arg(0, out);
                return ok;
            }
            f if f == ops::CONDITIONAL => {
                arg(0, out);
                out.push_str(" ? ");
                arg(1, out);
                out.push_str(" : ");
                arg(2, out);
                return ok;
            }
            f if f == ops::INDEX || f == ops::OPT_INDEX => {
                arg(0, out);
                out.push_str(if f == ops::INDEX { "[" } else { "[?" });
                arg(1, out);
                out.push(']');
                return ok;
            }
            _ => {}
        }
    }
    if let Some(t) = target {
        out.push('(');
        ok &= unparse(t, out);
        out.push_str(").");
    }
    write!(out, "{function}(").unwrap();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        ok &= unparse(a, out);
    }
    out.push(')');
    ok
}

fn ids(e: &Expr, seen: &mut HashSet<u32>) {
    assert!(seen.insert(e.id), "duplicate id {}", e.id);
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        ExprKind::Select { operand, .. } => ids(operand, seen),
        ExprKind::Call { target, args, .. } => {
            if let Some(t) = target {
                ids(t, seen);
            }
            args.iter().for_each(|a| ids(a, seen));
        }
        ExprKind::List { elements, .. } => elements.iter().for_each(|a| ids(a, seen)),
        ExprKind::Map { entries } => entries.iter().for_each(|en| {
            assert!(seen.insert(en.id));
            ids(&en.key, seen);
            ids(&en.value, seen);
        }),
        ExprKind::Struct { fields, .. } => fields.iter().for_each(|f| {
            assert!(seen.insert(f.id));
            ids(&f.value, seen);
        }),
        ExprKind::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_condition,
                &c.loop_step,
                &c.result,
            ] {
                ids(x, seen);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        check_no_panic(&src);
    }

    #[test]
    fn cel_like_strings_never_panic(src in "[a-z0-9 .,:?!()\\[\\]{}'\"`\\\\+*/%<>=&|_-]{0,60}") {
        check_no_panic(&src);
    }

    #[test]
    fn token_soups_never_panic(toks in prop::collection::vec(prop::sample::select(SOUP), 0..40),
                               sep in prop::sample::select(&["", " ", "\n"][..])) {
        check_no_panic(&toks.join(sep));
    }

    #[test]
    fn well_formed_expressions_parse(src in expr_source()) {
        let e = match parse(&src) {
            Ok(e) => e,
            Err(err) => {
                // Two-variable macros with the same name twice are the only reason a
                // generated expression may be rejected.
                let msg = err.to_string();
                prop_assert!(msg.contains("duplicate variable name"), "{src}\n{msg}");
                return Ok(());
            }
        };
        ids(&e, &mut HashSet::new());
    }

    #[test]
    fn print_parse_round_trip(src in expr_source()) {
        let opts = ParseOptions { macros: false, ..ParseOptions::default() };
        let Ok(first) = parse_with(&src, &opts) else { return Ok(()) };
        let mut printed = String::new();
        prop_assert!(unparse(&first, &mut printed));
        let second = parse_with(&printed, &opts)
            .map_err(|e| TestCaseError::fail(format!("{src}\nprinted: {printed}\n{e}")))?;
        prop_assert_eq!(first.to_string(), second.to_string(), "printed: {}", printed);
    }
}
