//! Parser unit tests: ASTs are compared through their S-expression rendering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::ast::{Expr, ExprKind, Literal};
use super::{parse, parse_with};
use crate::syntax::ParseOptions;

fn p(src: &str) -> String {
    match parse(src) {
        Ok(e) => e.to_string(),
        Err(e) => panic!("{src}: {e}"),
    }
}

fn err(src: &str) -> String {
    match parse(src) {
        Ok(e) => panic!("{src}: expected an error, got {e}"),
        Err(e) => e.to_string(),
    }
}

fn lit(src: &str) -> Literal {
    match parse(src).unwrap().kind {
        ExprKind::Literal(l) => l,
        k => panic!("{src}: not a literal: {k:?}"),
    }
}

#[test]
fn literals() {
    assert_eq!(lit("0"), Literal::Int(0));
    assert_eq!(lit("42"), Literal::Int(42));
    assert_eq!(lit("0xF"), Literal::Int(15));
    assert_eq!(lit("-1"), Literal::Int(-1));
    assert_eq!(lit("- 1"), Literal::Int(-1));
    assert_eq!(lit("-9223372036854775808"), Literal::Int(i64::MIN));
    assert_eq!(lit("-0x8000000000000000"), Literal::Int(i64::MIN));
    assert_eq!(lit("9223372036854775807"), Literal::Int(i64::MAX));
    assert_eq!(lit("1u"), Literal::Uint(1));
    assert_eq!(lit("1U"), Literal::Uint(1));
    assert_eq!(lit("0x1u"), Literal::Uint(1));
    assert_eq!(lit("18446744073709551615u"), Literal::Uint(u64::MAX));
    assert_eq!(lit("1.5"), Literal::Double(1.5));
    assert_eq!(lit(".5"), Literal::Double(0.5));
    assert_eq!(lit("-.5"), Literal::Double(-0.5));
    assert_eq!(lit("1e10"), Literal::Double(1e10));
    assert_eq!(lit("1.5e-3"), Literal::Double(1.5e-3));
    assert_eq!(lit("0e+0"), Literal::Double(0.0));
    assert_eq!(lit("true"), Literal::Bool(true));
    assert_eq!(lit("false"), Literal::Bool(false));
    assert_eq!(lit("null"), Literal::Null);
    assert_eq!(lit("'a'"), Literal::String("a".into()));
    assert_eq!(lit("\"\"\"a\nb\"\"\""), Literal::String("a\nb".into()));
    assert_eq!(lit(r"r'\d'"), Literal::String(r"\d".into()));
    assert_eq!(lit(r"R'''\d'''"), Literal::String(r"\d".into()));
    assert_eq!(lit(r"b'\xff'"), Literal::Bytes(vec![255]));
    assert_eq!(lit(r"br'\xff'"), Literal::Bytes(br"\xff".to_vec()));
    assert_eq!(
        lit(r#"'\u00e9\U0001F600\351'"#),
        Literal::String("é😀é".into())
    );
    // The sign belongs to int and double literals only.
    assert_eq!(p("-1u"), "(-_ 1u)");
    assert_eq!(p("-x"), "(-_ x)");
    assert_eq!(p("4--4"), "(_-_ 4 -4)");
    assert_eq!(p("4--4.1"), "(_-_ 4 -4.1)");
}

#[test]
fn literal_errors() {
    assert!(err("9223372036854775808").contains("invalid int literal"));
    assert!(err("0xFFFFFFFFFFFFFFFFF").contains("1:1: invalid int literal"));
    assert!(err("0xFFFFFFFFFFFFFFFFFu").contains("invalid uint literal"));
    assert!(err("18446744073709551616u").contains("invalid uint literal"));
    assert!(err("1.99e90000009").contains("invalid double literal"));
    // Bad escapes: reported at the literal's start with ANTLR's wording, as cel-go does.
    let e = err(r"'\s'");
    assert!(
        e.contains(r"1:1: Syntax error: token recognition error at: ''\s'"),
        "{e}"
    );
    let e = err(r#"x + "\xFh""#);
    assert!(
        e.contains(r#"1:5: Syntax error: token recognition error at: '"\xFh'"#),
        "{e}"
    );
    assert!(err(r"'\1'").contains(r"token recognition error at: ''\1''"));
    assert!(err(r"'ab\'").contains(r"token recognition error at: ''ab\'"));
    assert!(err(r"'\uD83D'").contains("1:1: invalid unicode code point"));
    assert!(err(r"b'\u00ff'").contains(r"invalid escape sequence in bytes literal: '\u'"));
    assert!(err("'abc").contains("token recognition error at: ''abc'"));
    assert!(err("'a\nb'").contains("token recognition error"));
    assert!(err("rb'a'").contains("Syntax error"));
}

#[test]
fn precedence() {
    assert_eq!(p("a + b * c"), "(_+_ a (_*_ b c))");
    assert_eq!(p("a * b + c"), "(_+_ (_*_ a b) c)");
    assert_eq!(p("a - b - c"), "(_-_ (_-_ a b) c)");
    assert_eq!(p("a / b % c"), "(_%_ (_/_ a b) c)");
    assert_eq!(p("a < b == c"), "(_==_ (_<_ a b) c)");
    assert_eq!(p("a + 1 in b"), "(@in (_+_ a 1) b)");
    assert_eq!(p("a && b || c && d"), "(_||_ (_&&_ a b) (_&&_ c d))");
    assert_eq!(p("a || b && c"), "(_||_ a (_&&_ b c))");
    assert_eq!(p("a ? b : c ? d : e"), "(_?_:_ a b (_?_:_ c d e))");
    assert_eq!(p("a || b ? c && d : e"), "(_?_:_ (_||_ a b) (_&&_ c d) e)");
    assert_eq!(p("!a && -b < c"), "(_&&_ (!_ a) (_<_ (-_ b) c))");
    assert_eq!(p("!!a"), "a");
    assert_eq!(p("!!!a"), "(!_ a)");
    assert_eq!(p("--a"), "a");
    assert_eq!(p("---a"), "(-_ a)");
    assert_eq!(p("--1"), "1");
    assert_eq!(p("!-1"), "(!_ -1)");
    assert_eq!(p("-a.b[0]"), "(-_ (_[_] (. a b) 0))");
    assert_eq!(p("(a + b) * c"), "(_*_ (_+_ a b) c)");
    assert_eq!(
        p("a >= b != c <= d > e"),
        "(_>_ (_<=_ (_!=_ (_>=_ a b) c) d) e)"
    );
}

#[test]
fn logical_chains_are_balanced_like_cel_go() {
    assert_eq!(
        p("a || b || c || d || e || f"),
        "(_||_ (_||_ (_||_ a b) c) (_||_ (_||_ d e) f))"
    );
    assert_eq!(
        p("a && b && c && d && e && f && g"),
        "(_&&_ (_&&_ (_&&_ a b) (_&&_ c d)) (_&&_ (_&&_ e f) g))"
    );
    // Ids as cel-go assigns them: terms first, then the operator.
    let e = parse("a || b || c || d || e || f").unwrap();
    assert_eq!(e.id, 7);
    let e = parse("a && b").unwrap();
    assert_eq!(e.id, 3);
}

#[test]
fn members_and_calls() {
    assert_eq!(p("a.b.c"), "(. (. a b) c)");
    assert_eq!(p("a.?b"), "(.? a b)");
    assert_eq!(p("a[b]"), "(_[_] a b)");
    assert_eq!(p("a[?b]"), "(_[?_] a b)");
    assert_eq!(p("f(x, y)"), "(f x y)");
    assert_eq!(p("f()"), "(f)");
    assert_eq!(p("a.b.c(x)"), "(.c (. a b) x)");
    assert_eq!(p("optional.none()"), "(.none optional)");
    assert_eq!(p(".a.b"), "(. .a b)");
    assert_eq!(p(".f(x)"), "(.f x)");
    assert_eq!(p("a.`b-c/d e`"), "(. a b-c/d e)");
    assert_eq!(p("a.as() || a.var"), "(_||_ (.as a) (. a var))");
    assert_eq!(p("{'if': 1}.if"), "(. {\"if\": 1} if)");
    assert_eq!(p("x.f(1).g[2].h"), "(. (_[_] (. (.f x 1) g) 2) h)");
}

#[test]
fn aggregates() {
    assert_eq!(p("[]"), "[]");
    assert_eq!(p("[1, 2,]"), "[1, 2]");
    assert_eq!(p("[a, ?b]"), "[a, ?b]");
    assert_eq!(p("{}"), "{}");
    assert_eq!(p("{'a': 1, ?b: 2,}"), "{\"a\": 1, ?b: 2}");
    assert_eq!(p("Foo{}"), "Foo{}");
    assert_eq!(p("a.b.C{f: 1, ?g: x,}"), "a.b.C{f: 1, ?g: x}");
    assert_eq!(p(".a.C{f: 1}"), ".a.C{f: 1}");
    assert_eq!(p("T{as: true, `x-y`: 1}"), "T{as: true, x-y: 1}");
    assert_eq!(p("Foo{}.x"), "(. Foo{} x)");
    // The grammar allows a lone comma in an empty aggregate.
    assert_eq!(p("[,]"), "[]");
    assert_eq!(p("{,}"), "{}");
    assert_eq!(p("T{,}"), "T{}");
    assert!(err("[,,]").contains("Syntax error"));
    assert!(err("f(,)").contains("Syntax error"));
    assert!(err("f(a,)").contains("Syntax error"));
}

#[test]
fn syntax_errors() {
    assert!(err("").contains("1:1: Syntax error: mismatched input '<EOF>' expecting {'['"));
    assert!(err("1 + +").contains("1:5: Syntax error: mismatched input '+'"));
    assert!(err("1 + $").contains("1:5: Syntax error: token recognition error at: '$'"));
    assert!(err("1 + 2\n3 +").contains("2:1: Syntax error: mismatched input '3' expecting <EOF>"));
    let e = err("a | b");
    assert!(
        e.contains("1:3: Syntax error: token recognition error at: '|'"),
        "{e}"
    );
    assert!(
        e.contains("1:5: Syntax error: extraneous input 'b' expecting <EOF>"),
        "{e}"
    );
    assert!(err("*a").contains("1:1: Syntax error: extraneous input '*' expecting {'['"));
    assert!(err("TestAllTypes(){}").contains("1:15:"));
    assert!(
        err("self.true == 1")
            .contains("1:6: Syntax error: mismatched input 'true' expecting IDENTIFIER")
    );
    assert!(err("(a").contains("expecting ')'"));
    assert!(err("[1, 2").contains("1:6:"));
    assert!(err("a.?b()").contains("Syntax error"));
    assert!(err("-!a").contains("Syntax error"));
    assert!(err("a ? b").contains("expecting ':'"));
    assert!(err("{1 2}").contains("expecting ':'"));
    assert!(err("in").contains("1:1: Syntax error: mismatched input 'in'"));
    for bad in [
        "'", "\"", "'''", "r'", "b'", "`", "`a", "1 = 2", "a & b", "a.", ".", "a.1", "é",
    ] {
        let _ = err(bad);
    }
}

#[test]
fn reserved_identifiers() {
    for w in [
        "as", "break", "const", "continue", "else", "for", "function", "if", "import",
    ] {
        assert!(err(w).contains(&format!("1:1: reserved identifier: {w}")));
        assert!(err(&format!("{w}(1)")).contains("reserved identifier"));
    }
    let e = err("[1, 2, 3].map(var, var * var)");
    assert!(e.contains("1:15: reserved identifier: var"), "{e}");
    assert!(e.contains("1:26: reserved identifier: var"), "{e}");
}

#[test]
fn positions() {
    let e = parse("a + b").unwrap();
    assert_eq!((e.id, e.span.start, e.span.end), (2, 2, 5));
    let e = parse("f(x)").unwrap();
    assert_eq!((e.id, e.span.start), (1, 1));
    let e = parse("a.b").unwrap();
    assert_eq!((e.id, e.span.start), (2, 1));
    let e = parse("  'x'").unwrap();
    assert_eq!((e.span.start, e.span.end), (2, 5));
    // Every id is unique.
    let e = parse("[a, {b: c}, T{f: d}, x.all(y, y > 1), g(h)[i] ? j : k]").unwrap();
    let mut ids = Vec::new();
    collect_ids(&e, &mut ids);
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

fn collect_ids(e: &Expr, out: &mut Vec<u32>) {
    out.push(e.id);
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        ExprKind::Select { operand, .. } => collect_ids(operand, out),
        ExprKind::Call { target, args, .. } => {
            if let Some(t) = target {
                collect_ids(t, out);
            }
            args.iter().for_each(|a| collect_ids(a, out));
        }
        ExprKind::List { elements, .. } => elements.iter().for_each(|a| collect_ids(a, out)),
        ExprKind::Map { entries } => entries.iter().for_each(|en| {
            out.push(en.id);
            collect_ids(&en.key, out);
            collect_ids(&en.value, out);
        }),
        ExprKind::Struct { fields, .. } => fields.iter().for_each(|f| {
            out.push(f.id);
            collect_ids(&f.value, out);
        }),
        ExprKind::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_condition,
                &c.loop_step,
                &c.result,
            ] {
                collect_ids(x, out);
            }
        }
    }
}

#[test]
fn macros() {
    assert_eq!(p("has(a.b)"), "(has a b)");
    assert!(err("has(m)").contains("1:5: invalid argument to has() macro"));
    assert!(err("has(a.?b)").contains("invalid argument to has() macro"));
    assert_eq!(p("has(a.b, c)"), "(has (. a b) c)");
    assert_eq!(p("x.has(a.b)"), "(.has x (. a b))");
    assert_eq!(
        p("e.all(x, p)"),
        "(fold x e @result true (@not_strictly_false @result) (_&&_ @result p) @result)"
    );
    assert_eq!(
        p("e.exists(x, p)"),
        "(fold x e @result false (@not_strictly_false (!_ @result)) (_||_ @result p) @result)"
    );
    assert_eq!(
        p("e.exists_one(x, p)"),
        "(fold x e @result 0 true (_?_:_ p (_+_ @result 1) @result) (_==_ @result 1))"
    );
    assert_eq!(p("e.existsOne(x, p)"), p("e.exists_one(x, p)"));
    assert_eq!(
        p("e.map(x, f)"),
        "(fold x e @result [] true (_+_ @result [f]) @result)"
    );
    assert_eq!(
        p("e.map(x, p, f)"),
        "(fold x e @result [] true (_?_:_ p (_+_ @result [f]) @result) @result)"
    );
    assert_eq!(
        p("e.filter(x, p)"),
        "(fold x e @result [] true (_?_:_ p (_+_ @result [x]) @result) @result)"
    );
    // Wrong arity or call style: ordinary calls.
    assert_eq!(p("all(x, p)"), "(all x p)");
    assert_eq!(p("e.all(x)"), "(.all e x)");
    assert_eq!(p("e.map(x, y, z, w)"), "(.map e x y z w)");
    assert!(err("1.all(2, 3)").contains("1:7: argument must be a simple name"));
    assert!(err("m.filter(a.b, false)").contains("1:11: argument is not an identifier"));
    assert!(
        err("m.map(__result__, __result__)")
            .contains("1:7: iteration variable overwrites accumulator variable")
    );
    // Ids as cel-go: m=1, v dropped (3), f=4, then generated nodes, the fold last.
    let e = parse("m.map(v, f)").unwrap();
    assert_eq!(e.id, 11);
    let e = parse("has(m.f)").unwrap();
    assert_eq!(e.id, 4);
    // Without macros, they are calls.
    let opts = ParseOptions {
        macros: false,
        ..ParseOptions::default()
    };
    assert_eq!(
        parse_with("has(a.b)", &opts).unwrap().to_string(),
        "(has (. a b))"
    );
    assert_eq!(
        parse_with("e.all(x, p)", &opts).unwrap().to_string(),
        "(.all e x p)"
    );
}

#[test]
fn code_point_limit() {
    let opts = ParseOptions {
        max_code_points: 2,
        ..ParseOptions::default()
    };
    let e = parse_with("aaa", &opts).unwrap_err().to_string();
    assert!(
        e.contains("expression code point size exceeds limit: size: 3, limit 2"),
        "{e}"
    );
    let opts = ParseOptions {
        max_code_points: 3,
        ..ParseOptions::default()
    };
    assert!(parse_with("'é'", &opts).is_ok());
}

fn nested(open: &str, mid: &str, close: &str, n: usize) -> String {
    format!("{}{mid}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn depth_limits() {
    let limit = "expression recursion limit exceeded: 250";
    // Within the limit: fine, deeper: an error, never a stack overflow.
    assert!(parse(&nested("(", "7", ")", 249)).is_ok());
    assert!(err(&nested("(", "7", ")", 250)).contains(limit));
    assert!(parse(&nested("[", "0", "]", 240)).is_ok());
    assert!(err(&nested("[", "0", "]", 300)).contains(limit));
    assert!(parse(&nested("{0: ", "0", "}", 240)).is_ok());
    assert!(err(&nested("{0: ", "0", "}", 300)).contains(limit));
    assert!(parse(&nested("f(", "0", ")", 240)).is_ok());
    assert!(err(&nested("f(", "0", ")", 5000)).contains(limit));
    assert!(err(&nested("a[", "0", "]", 5000)).contains(limit));
    assert!(err(&nested("x.all(y, ", "y", ")", 500)).contains(limit));
    assert!(err(&format!("a{}", ".b".repeat(300))).contains(limit));
    assert!(err(&format!("a{}", ".f()".repeat(300))).contains(limit));
    assert!(err(&format!("a{}", "[0]".repeat(300))).contains(limit));
    assert!(err(&format!("1{}", " + 1".repeat(300))).contains(limit));
    assert!(err(&format!("1{}", " < 1".repeat(300))).contains(limit));
    assert!(err(&format!("{}1", "true ? 1 : ".repeat(300))).contains(limit));
    // Unary runs collapse, as in cel-go.
    assert_eq!(p(&format!("{}x", "!".repeat(10_001))), "(!_ x)");
    assert_eq!(p(&format!("{}x", "-".repeat(10_000))), "x");
    // Logical chains are balanced, so long ones are fine.
    let long_and = format!("a{}", " && a".repeat(10_000));
    assert!(parse(&long_and).is_ok());
    let long_or = format!("a{}", " || a".repeat(15_000));
    assert!(parse(&long_or).is_ok());
    // Larger limits are capped, so "unlimited" cannot exhaust the stack either.
    let opts = ParseOptions {
        max_depth: usize::MAX,
        ..ParseOptions::default()
    };
    assert!(parse_with(&nested("(", "1", ")", 400), &opts).is_ok());
    let e = parse_with(&nested("(", "1", ")", 5000), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("expression recursion limit exceeded: 512"),
        "{e}"
    );
    // A smaller limit.
    let opts = ParseOptions {
        max_depth: 32,
        ..ParseOptions::default()
    };
    let e = parse_with(&nested("[", "'x'", "]", 32), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expression recursion limit exceeded: 32"), "{e}");
    assert!(parse_with(&nested("[", "'x'", "]", 30), &opts).is_ok());
}

#[test]
fn nesting_at_the_limit_fits_a_one_mib_stack() {
    // Guards the parser's frame sizes: every nesting shape, 249 deep, on a 1 MiB thread
    // (debug builds need up to ~600 KiB).
    let shapes = [
        ("(", "7", ")"),
        ("[", "0", "]"),
        ("f(", "0", ")"),
        ("{0: ", "0", "}"),
        ("x.all(y, ", "y", ")"),
        ("a[", "0", "]"),
        ("T{f: ", "0", "}"),
        ("true ? 1 : ", "1", ""),
        ("a.b(", "1", ")"),
        ("-(", "1", ")"),
        ("a && (", "b", ")"),
    ];
    let sources: Vec<String> = shapes
        .iter()
        .map(|(o, m, c)| nested(o, m, c, 249))
        .collect();
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            sources
                .iter()
                .map(|s| parse(s).map(|_| ()).map_err(|e| e.to_string()))
                .collect::<Vec<_>>()
        })
        .unwrap();
    for (shape, result) in shapes.iter().zip(handle.join().unwrap()) {
        match result {
            Ok(()) => {}
            // Macros add levels of their own: the tree, not the text, hits the limit.
            Err(e) if shape.0 == "x.all(y, " => {
                assert!(e.contains("recursion limit exceeded"), "{e}")
            }
            Err(e) => panic!("{shape:?}: {e}"),
        }
    }
}

#[test]
fn spec_nest_and_repeat_cases() {
    // cel-spec parse.textproto "nest" and "repeat" sections: all must parse.
    for src in [
        "a[a[a[a[a[a[a[a[a[a[a[a[0]]]]]]]]]]]]",
        "int(uint(int(uint(int(uint(int(uint(int(uint(int(uint(7))))))))))))",
        "size([[[[[[[[[[[[0]]]]]]]]]]]])",
        "size({0: {0: {0: {0: {0: {0: {0: {0: {0: {0: {0: {0: 'foo'}}}}}}}}}}}})",
        "((((((((((((((((((((((((((((((((7))))))))))))))))))))))))))))))))",
        "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!true",
        "--------------------------------19",
        "NestedTestAllTypes{}.child.child.child.child.child.child.child.child.child.child.payload.single_int32",
        "[[[[[[[[[[[['foo']]]]]]]]]]]][0][0][0][0][0][0][0][0][0][0][0][0]",
        "[ . cel. expr .conformance. proto3. TestAllTypes { single_int64 : int ( 17 ) } . single_int64 ] [ 0 ] == ( 18 - 1 ) && ! false ? 1 : 2",
        "[// @\n.// @\ncel.// @\nexpr// @\n.conformance.// @\nproto3.// @\nTestAllTypes// @\n{// @\nsingle_int64// @\n:// @\nint// @\n(// @\n17// @\n)// @\n}// @\n.// @\nsingle_int64// @\n]// @\n[// @\n0// @\n]// @\n==// @\n(// @\n18// @\n-// @\n1// @\n)// @\n&&// @\n!// @\nfalse// @\n?// @\n1// @\n:// @\n2",
        "[\r.\rcel.\rexpr\r.conformance.\rproto3.\rTestAllTypes\r{\rsingle_int64\r:\rint\r(\r17\r)\r}\r.\rsingle_int64\r]\r[\r0\r]\r==\r(\r18\r-\r1\r)\r&&\r!\rfalse\r?\r1\r:\r2",
    ] {
        p(src);
    }
    assert_eq!(p("--------------------------------19"), "19");
    assert_eq!(
        p(
            "[ . cel. expr .conformance. proto3. TestAllTypes { single_int64 : int ( 17 ) } . single_int64 ]"
        ),
        "[(. .cel.expr.conformance.proto3.TestAllTypes{single_int64: (int 17)} single_int64)]"
    );
}

#[test]
fn deep_accepted_trees_drop_in_a_small_stack() {
    // Trees near the height limit, rendered (1 MiB) and dropped (256 KiB) on threads with
    // small stacks.
    let exprs = vec![
        parse(&nested("[", "0", "]", 240)).unwrap(),
        parse(&format!("a{}", ".b".repeat(248))).unwrap(),
        parse(&format!("1{}", " + 1".repeat(248))).unwrap(),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let n: usize = exprs.iter().map(|e| e.to_string().len()).sum();
            (n, exprs)
        })
        .unwrap();
    let (n, exprs) = handle.join().unwrap();
    assert!(n > 0);
    let handle = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || drop(exprs))
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn two_variable_macros() {
    assert_eq!(
        p("m.all(k, v, k < v)"),
        "(fold k,v m @result true (@not_strictly_false @result) (_&&_ @result (_<_ k v)) @result)"
    );
    assert_eq!(
        p("m.exists(k, v, p)"),
        "(fold k,v m @result false (@not_strictly_false (!_ @result)) (_||_ @result p) @result)"
    );
    assert_eq!(p("m.existsOne(k, v, p)"), p("m.exists_one(k, v, p)"));
    assert_eq!(
        p("l.transformList(i, v, i * v)"),
        "(fold i,v l @result [] true (_+_ @result [(_*_ i v)]) @result)"
    );
    assert_eq!(
        p("l.transformList(i, v, p, f)"),
        "(fold i,v l @result [] true (_?_:_ p (_+_ @result [f]) @result) @result)"
    );
    assert_eq!(
        p("m.transformMap(k, v, f)"),
        "(fold k,v m @result {} true (cel.@mapInsert @result k f) @result)"
    );
    assert_eq!(
        p("m.transformMap(k, v, p, f)"),
        "(fold k,v m @result {} true (_?_:_ p (cel.@mapInsert @result k f) @result) @result)"
    );
    assert_eq!(
        p("m.transformMapEntry(k, v, {v: k})"),
        "(fold k,v m @result {} true (cel.@mapInsert @result {v: k}) @result)"
    );
    assert!(err("m.all(k, k, true)").contains("1:10: duplicate variable name: k"));
    assert!(err("m.all(k.a, v, true)").contains("1:8: argument must be a simple name"));
    assert!(err("m.transformList(k, 1, true)").contains("argument must be a simple name"));
    assert!(err("m.exists(__result__, v, true)").contains("overwrites accumulator"));
    assert_eq!(p("m.transformList(k, v)"), "(.transformList m k v)");
    assert_eq!(
        p("m.transformMap(a, b, c, d, e)"),
        "(.transformMap m a b c d e)"
    );
}

#[test]
fn cel_go_locations() {
    // `a.b(c)`: a at 0, the call at its `(` (3), c at 4.
    let e = parse("a.b(c)").unwrap();
    let ExprKind::Call { target, args, .. } = &e.kind else {
        panic!()
    };
    assert_eq!(e.span.start, 3);
    assert_eq!(target.as_ref().unwrap().span.start, 0);
    assert_eq!(args[0].span.start, 4);
    // `has(m.f)`: the presence test at the call's `(` (3), m at 4.
    let e = parse("has(m.f)").unwrap();
    let ExprKind::Select { operand, .. } = &e.kind else {
        panic!()
    };
    assert_eq!((e.span.start, operand.span.start), (3, 4));
    // Comprehension nodes take the call's position.
    let e = parse("xs.all(x, x)").unwrap();
    assert_eq!(e.span.start, 6);
}

#[test]
fn optional_macros() {
    assert_eq!(
        p("o.optMap(x, x + 1)"),
        "(_?_:_ (.hasValue o) (optional.of (fold #unused [] x (.value o) false x (_+_ x 1))) (optional.none))"
    );
    assert_eq!(
        p("a.?b.optFlatMap(k, k.?c)"),
        "(_?_:_ (.hasValue (.? a b)) (fold #unused [] k (.value (.? a b)) false k (.? k c)) (optional.none))"
    );
    assert!(err("o.optMap(a.b, 1)").contains("optMap() variable name must be a simple identifier"));
    assert!(
        err("o.optFlatMap(1, 1)")
            .contains("optFlatMap() variable name must be a simple identifier")
    );
    assert_eq!(p("o.optMap(x)"), "(.optMap o x)");
    // The target is copied with fresh ids.
    let e = parse("{'k': [1]}.?k.optMap(x, x)").unwrap();
    let mut ids = Vec::new();
    collect_ids(&e, &mut ids);
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

#[test]
fn bind_macro() {
    assert_eq!(
        p("cel.bind(x, 1, x + x)"),
        "(fold #unused [] x 1 false x (_+_ x x))"
    );
    assert_eq!(
        p("cel.bind(a, true, cel.bind(b, a, a && b))"),
        "(fold #unused [] a true false a (fold #unused [] b a false b (_&&_ a b)))"
    );
    assert!(
        err("cel.bind(a.b, 1, 2)").contains("cel.bind() variable names must be simple identifiers")
    );
    // Only on the `cel` namespace and with three arguments.
    assert_eq!(p("x.bind(a, 1, 2)"), "(.bind x a 1 2)");
    assert_eq!(p(".cel.bind(a, 1, 2)"), "(.bind .cel a 1 2)");
    assert_eq!(p("cel.bind(a, 1)"), "(.bind cel a 1)");
}
