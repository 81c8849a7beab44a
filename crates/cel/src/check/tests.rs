#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, Ordering};

use super::*;
use crate::library::{global, member};
use crate::syntax::ast::{ACCUMULATOR, Span};

// ----- AST builders (the parser is built elsewhere) -----

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

fn node(kind: ExprKind) -> Expr {
    Expr {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        span: Span::default(),
        kind,
    }
}

trait At {
    fn at(self, start: usize) -> Expr;
}

impl At for Expr {
    fn at(mut self, start: usize) -> Expr {
        self.span = Span::new(start, start + 1);
        self
    }
}

fn int(i: i64) -> Expr {
    node(ExprKind::Literal(Literal::Int(i)))
}
fn uint(u: u64) -> Expr {
    node(ExprKind::Literal(Literal::Uint(u)))
}
fn dbl(d: f64) -> Expr {
    node(ExprKind::Literal(Literal::Double(d)))
}
fn s(v: &str) -> Expr {
    node(ExprKind::Literal(Literal::String(v.into())))
}
fn b(v: bool) -> Expr {
    node(ExprKind::Literal(Literal::Bool(v)))
}
fn null() -> Expr {
    node(ExprKind::Literal(Literal::Null))
}
fn id(name: &str) -> Expr {
    node(ExprKind::Ident(name.into()))
}
fn sel(operand: Expr, field: &str) -> Expr {
    node(ExprKind::Select {
        operand: Box::new(operand),
        field: field.into(),
        test_only: false,
        optional: false,
    })
}
fn has(operand: Expr, field: &str) -> Expr {
    node(ExprKind::Select {
        operand: Box::new(operand),
        field: field.into(),
        test_only: true,
        optional: false,
    })
}
fn opt_sel(operand: Expr, field: &str) -> Expr {
    node(ExprKind::Select {
        operand: Box::new(operand),
        field: field.into(),
        test_only: false,
        optional: true,
    })
}
/// A dotted name as the parser builds it: `a.b.c` is `Select(Select(Ident a, b), c)`.
fn path(dotted: &str) -> Expr {
    let (first, rest) = match dotted.strip_prefix('.') {
        Some(r) => {
            let mut parts = r.split('.');
            let head = format!(".{}", parts.next().unwrap());
            (head, parts.map(str::to_string).collect::<Vec<_>>())
        }
        None => {
            let mut parts = dotted.split('.');
            let head = parts.next().unwrap().to_string();
            (head, parts.map(str::to_string).collect::<Vec<_>>())
        }
    };
    rest.iter().fold(id(&first), |acc, f| sel(acc, f))
}
fn call(function: &str, args: Vec<Expr>) -> Expr {
    node(ExprKind::Call {
        target: None,
        function: function.into(),
        args,
    })
}
fn mcall(target: Expr, function: &str, args: Vec<Expr>) -> Expr {
    node(ExprKind::Call {
        target: Some(Box::new(target)),
        function: function.into(),
        args,
    })
}
fn bin(op: &str, l: Expr, r: Expr) -> Expr {
    call(op, vec![l, r])
}
fn list(elements: Vec<Expr>) -> Expr {
    node(ExprKind::List {
        elements,
        optional_indices: vec![],
    })
}
fn opt_list(elements: Vec<Expr>, optional_indices: Vec<u32>) -> Expr {
    node(ExprKind::List {
        elements,
        optional_indices,
    })
}
fn map(entries: Vec<(Expr, Expr)>) -> Expr {
    node(ExprKind::Map {
        entries: entries
            .into_iter()
            .map(|(key, value)| MapEntry {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                key,
                value,
                optional: false,
            })
            .collect(),
    })
}
fn opt_entry_map(key: Expr, value: Expr) -> Expr {
    node(ExprKind::Map {
        entries: vec![MapEntry {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            key,
            value,
            optional: true,
        }],
    })
}
fn index(a: Expr, i: Expr) -> Expr {
    bin(ops::INDEX, a, i)
}
fn accu() -> Expr {
    id(ACCUMULATOR)
}
fn fold(range: Expr, var: &str, init: Expr, cond: Expr, step: Expr, result: Expr) -> Expr {
    node(ExprKind::Comprehension(Box::new(Comprehension {
        iter_var: var.into(),
        iter_var2: None,
        iter_range: range,
        accu_var: ACCUMULATOR.into(),
        accu_init: init,
        loop_condition: cond,
        loop_step: step,
        result,
    })))
}
/// `range.all(var, pred)` as the parser expands it.
fn all(range: Expr, var: &str, pred: Expr) -> Expr {
    fold(
        range,
        var,
        b(true),
        call(ops::NOT_STRICTLY_FALSE, vec![accu()]),
        bin(ops::LOGICAL_AND, accu(), pred),
        accu(),
    )
}
fn exists(range: Expr, var: &str, pred: Expr) -> Expr {
    fold(
        range,
        var,
        b(false),
        call(
            ops::NOT_STRICTLY_FALSE,
            vec![call(ops::LOGICAL_NOT, vec![accu()])],
        ),
        bin(ops::LOGICAL_OR, accu(), pred),
        accu(),
    )
}
fn exists_one(range: Expr, var: &str, pred: Expr) -> Expr {
    fold(
        range,
        var,
        int(0),
        b(true),
        call(
            ops::CONDITIONAL,
            vec![pred, bin(ops::ADD, accu(), int(1)), accu()],
        ),
        bin(ops::EQUALS, accu(), int(1)),
    )
}
/// `range.map(var, f)`.
fn map_macro(range: Expr, var: &str, f: Expr) -> Expr {
    fold(
        range,
        var,
        list(vec![]),
        b(true),
        bin(ops::ADD, accu(), list(vec![f])),
        accu(),
    )
}
/// `range.filter(var, p)`.
fn filter(range: Expr, var: &str, p: Expr) -> Expr {
    fold(
        range,
        var,
        list(vec![]),
        b(true),
        call(
            ops::CONDITIONAL,
            vec![p, bin(ops::ADD, accu(), list(vec![id(var)])), accu()],
        ),
        accu(),
    )
}

// ----- environments -----

/// The standard environment.
fn env() -> Env {
    Env::standard()
}

fn ty(env: &Env, e: &Expr) -> Type {
    match check(env, "", e) {
        Ok(t) => t,
        Err(err) => panic!("unexpected check error: {err}"),
    }
}

/// The messages of a failed check.
fn errs(env: &Env, e: &Expr) -> Vec<String> {
    match check(env, "", e) {
        Ok(t) => panic!("expected an error, got type {t}"),
        Err(err) => {
            assert_eq!(err.kind, CompileErrorKind::Check);
            err.diagnostics.into_iter().map(|d| d.message).collect()
        }
    }
}

fn err1(env: &Env, e: &Expr) -> String {
    let e = errs(env, e);
    assert_eq!(e.len(), 1, "{e:?}");
    e.into_iter().next().unwrap()
}

fn dyn_(e: Expr) -> Expr {
    call("dyn", vec![e])
}
fn opt_of(e: Expr) -> Expr {
    mcall(id("optional"), "of", vec![e])
}
fn opt_none() -> Expr {
    mcall(id("optional"), "none", vec![])
}

// ----- literals and aggregates -----

#[test]
fn literal_types() {
    let env = env();
    assert_eq!(ty(&env, &b(true)), Type::Bool);
    assert_eq!(ty(&env, &int(42)), Type::Int);
    assert_eq!(ty(&env, &uint(42)), Type::Uint);
    assert_eq!(ty(&env, &dbl(0.1)), Type::Double);
    assert_eq!(ty(&env, &s("test")), Type::String);
    assert_eq!(
        ty(
            &env,
            &node(ExprKind::Literal(Literal::Bytes(b"x".to_vec())))
        ),
        Type::Bytes
    );
    assert_eq!(ty(&env, &null()), Type::Null);
}

#[test]
fn list_and_map_literals() {
    let env = env();
    assert_eq!(ty(&env, &list(vec![int(1)])), Type::list(Type::Int));
    assert_eq!(
        ty(&env, &map(vec![(s("abc"), int(123))])),
        Type::map(Type::String, Type::Int)
    );
    // Mixed elements give dyn, cel-go's default.
    assert_eq!(ty(&env, &list(vec![int(1), s("a")])), Type::list(Type::Dyn));
    assert_eq!(
        ty(&env, &map(vec![(s("a"), int(1)), (int(2), s("b"))])),
        Type::map(Type::Dyn, Type::Dyn)
    );
    // Empty aggregates have unbound parameters, reported as dyn.
    assert_eq!(ty(&env, &list(vec![])), Type::list(Type::Dyn));
    assert_eq!(ty(&env, &map(vec![])), Type::map(Type::Dyn, Type::Dyn));
    // A dyn element keeps the list dyn, a later int does not narrow it.
    assert_eq!(
        ty(&env, &list(vec![dyn_(int(1)), int(2)])),
        Type::list(Type::Dyn)
    );
    // An int then dyn: dyn is more general.
    assert_eq!(
        ty(&env, &list(vec![int(1), dyn_(int(2))])),
        Type::list(Type::Dyn)
    );
}

#[test]
fn homogeneous_aggregate_literals() {
    let mut env = env();
    env.check_options_mut().homogeneous_aggregate_literals = true;
    assert_eq!(
        err1(&env, &list(vec![int(1), s("a")])),
        "expected type 'int' but found 'string'"
    );
    // dyn is not int: cel-go's validator compares the checked types exactly.
    assert_eq!(
        err1(&env, &list(vec![int(1), dyn_(s("a"))])),
        "expected type 'int' but found 'dyn'"
    );
    assert_eq!(
        err1(&env, &map(vec![(s("a"), int(1)), (s("b"), null())])),
        "expected type 'int' but found 'null'"
    );
    assert_eq!(
        errs(&env, &map(vec![(s("a"), int(1)), (int(2), s("b"))])),
        vec![
            "expected type 'string' but found 'int'",
            "expected type 'int' but found 'string'"
        ]
    );
    // Empty lists take the element type they are joined with.
    assert_eq!(
        ty(&env, &list(vec![list(vec![]), list(vec![int(1)])])),
        Type::list(Type::list(Type::Int))
    );
    assert_eq!(
        ty(&env, &list(vec![opt_none(), opt_of(int(1))])),
        Type::list(Type::optional(Type::Int))
    );
    // Optional elements are compared by their value type.
    assert_eq!(
        ty(&env, &opt_list(vec![int(1), opt_of(int(2))], vec![1])),
        Type::list(Type::Int)
    );
    // Nested literals are checked too, except inside exempt calls.
    assert_eq!(
        err1(&env, &list(vec![list(vec![int(1), s("a")])])),
        "expected type 'int' but found 'string'"
    );
    let mut env2 = env.clone();
    env2.registry_mut().declare(
        "format",
        vec![member(
            "string_format",
            vec![Type::String, Type::list(Type::Dyn)],
            Type::String,
        )],
    );
    let e = mcall(s("%d %s"), "format", vec![list(vec![int(1), s("a")])]);
    assert_eq!(ty(&env2, &e), Type::String);
}

#[test]
fn nested_empty_lists() {
    let env = env();
    fn nest(depth: usize) -> Expr {
        (0..depth).fold(list(vec![]), |acc, _| list(vec![acc]))
    }
    fn list_n(depth: usize) -> Type {
        (0..depth).fold(Type::Dyn, |acc, _| Type::list(acc))
    }
    // [[], [[]], [[[]]], [[[[]]]]]
    let e = list(vec![nest(0), nest(1), nest(2), nest(3)]);
    assert_eq!(ty(&env, &e), list_n(5));
    // [[[[[]]]], [], [[[]]]]
    let e = list(vec![nest(3), nest(0), nest(2)]);
    assert_eq!(ty(&env, &e), list_n(5));
}

#[test]
fn indexing() {
    let env = env();
    assert_eq!(ty(&env, &index(list(vec![s("foo")]), int(0))), Type::String);
    assert_eq!(
        ty(&env, &index(map(vec![(s("abc"), int(123))]), s("abc"))),
        Type::Int
    );
    assert_eq!(
        err1(&env, &index(list(vec![s("foo")]), s("x"))),
        "found no matching overload for '_[_]' applied to '(list(string), string)'"
    );
    let mut env = env;
    env.declare("d", Type::Dyn);
    assert_eq!(ty(&env, &index(id("d"), s("x"))), Type::Dyn);
}

#[test]
fn struct_construction_is_lenient() {
    let mut env = env();
    env.set_container("cel.expr.conformance.proto3");
    let e = node(ExprKind::Struct {
        type_name: "TestAllTypes".into(),
        fields: vec![StructField {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: "single_int64".into(),
            value: int(1),
            optional: false,
        }],
    });
    assert_eq!(
        ty(&env, &e),
        Type::Message("cel.expr.conformance.proto3.TestAllTypes".into())
    );
    // Fields of messages are dynamic.
    assert_eq!(ty(&env, &sel(e, "single_int64")), Type::Dyn);
}

// ----- identifiers, containers, qualified names -----

#[test]
fn undeclared_identifier() {
    let env = env();
    assert_eq!(
        err1(&env, &id("x")),
        "undeclared reference to 'x' (in container '')"
    );
    let mut env = env;
    env.set_container("a.b");
    assert_eq!(
        err1(&env, &path("x.y")),
        "undeclared reference to 'x' (in container 'a.b')"
    );
}

#[test]
fn container_candidates() {
    assert_eq!(candidate_names("", "x"), vec!["x"]);
    assert_eq!(candidate_names("a.b", "x"), vec!["a.b.x", "a.x", "x"]);
    assert_eq!(
        candidate_names("a.b", "x.y"),
        vec!["a.b.x.y", "a.x.y", "x.y"]
    );
    assert_eq!(candidate_names("a.b", ".x"), vec!["x"]);
    assert_eq!(candidate_names("a", "x"), vec!["a.x", "x"]);
}

#[test]
fn container_resolution() {
    let mut env = env();
    env.declare("x", Type::Int);
    env.declare("a.x", Type::String);
    env.declare("a.b.y", Type::Bool);
    env.set_container("a.b");
    // `x` finds `a.x` before `x`.
    assert_eq!(ty(&env, &id("x")), Type::String);
    // A leading dot is absolute.
    assert_eq!(ty(&env, &id(".x")), Type::Int);
    assert_eq!(ty(&env, &id("y")), Type::Bool);
    let checked = check_ast(&env, "", &id("y")).unwrap();
    let r = checked.references.values().next().unwrap();
    assert!(
        matches!(r, Reference::Global(Resolution::Variable { name, .. }) if name == "a.b.y"),
        "{r:?}"
    );
}

#[test]
fn qualified_names_resolve_longest() {
    let mut env = env();
    env.declare("a", Type::map(Type::String, Type::Int));
    env.declare("a.b", Type::map(Type::String, Type::String));
    env.declare("a.b.c.d", Type::Bool);
    // `a.b.c`: `a.b` is declared, `c` is a field of it.
    let e = path("a.b.c");
    assert_eq!(ty(&env, &e), Type::String);
    let checked = check_ast(&env, "", &e).unwrap();
    let ExprKind::Select { operand, .. } = &e.kind else {
        panic!()
    };
    assert!(matches!(
        checked.references.get(&operand.id),
        Some(Reference::Global(Resolution::Variable { name, .. })) if name == "a.b"
    ));
    // The whole name when declared.
    assert_eq!(ty(&env, &path("a.b.c.d")), Type::Bool);
    // `a.x`: only `a` is declared.
    assert_eq!(ty(&env, &path("a.x")), Type::Int);
    // The shared helper agrees.
    let (r, rest) = resolve_select_chain(&env, &path("a.b.c.x.y"), &|_| false).unwrap();
    assert_eq!((r.name(), rest), ("a.b", 3));
    let (r, rest) = resolve_select_chain(&env, &path("a.b.c.d"), &|_| false).unwrap();
    assert_eq!((r.name(), rest), ("a.b.c.d", 0));
    assert!(resolve_select_chain(&env, &path("z.b"), &|_| false).is_none());
    // A local root shadows every global starting with it.
    assert!(resolve_select_chain(&env, &path("a.b"), &|n| n == "a").is_none());
    assert!(resolve_select_chain(&env, &path(".a.b"), &|n| n == "a").is_some());
}

#[test]
fn qualified_names_with_container() {
    let mut env = env();
    env.declare("pkg.obj", Type::map(Type::String, Type::Int));
    env.set_container("pkg");
    assert_eq!(ty(&env, &path("obj.field")), Type::Int);
    assert_eq!(ty(&env, &path(".pkg.obj.field")), Type::Int);
    assert_eq!(
        err1(&env, &path(".obj.field")),
        "undeclared reference to '.obj' (in container 'pkg')"
    );
}

#[test]
fn type_identifiers() {
    let env = env();
    for (name, t) in [
        ("int", Type::Int),
        ("uint", Type::Uint),
        ("double", Type::Double),
        ("bool", Type::Bool),
        ("string", Type::String),
        ("bytes", Type::Bytes),
        ("null_type", Type::Null),
        ("dyn", Type::Dyn),
        ("list", Type::list(Type::Dyn)),
        ("map", Type::map(Type::Dyn, Type::Dyn)),
        ("google.protobuf.Timestamp", Type::Timestamp),
        ("google.protobuf.Duration", Type::Duration),
        ("optional_type", Type::optional(Type::Dyn)),
    ] {
        assert_eq!(ty(&env, &path(name)), Type::type_of(t), "{name}");
    }
    // type(1) == int
    assert_eq!(
        ty(
            &env,
            &bin(ops::EQUALS, call("type", vec![int(1)]), id("int"))
        ),
        Type::Bool
    );
    assert_eq!(
        ty(&env, &call("type", vec![int(1)])),
        Type::type_of(Type::Int)
    );
}

// ----- selection -----

#[test]
fn field_selection() {
    let mut env = env();
    env.declare("m", Type::map(Type::String, Type::Int));
    env.declare("d", Type::Dyn);
    env.declare("i", Type::Int);
    env.declare("l", Type::list(Type::Int));
    assert_eq!(ty(&env, &sel(id("m"), "f")), Type::Int);
    assert_eq!(ty(&env, &sel(sel(id("d"), "f"), "g")), Type::Dyn);
    assert_eq!(
        err1(&env, &sel(id("i"), "f")),
        "type 'int' does not support field selection"
    );
    assert_eq!(
        err1(&env, &sel(id("l"), "f")),
        "type 'list(int)' does not support field selection"
    );
    assert_eq!(ty(&env, &has(id("m"), "f")), Type::Bool);
    assert_eq!(ty(&env, &has(sel(id("d"), "f"), "g")), Type::Bool);
    assert_eq!(
        err1(&env, &has(id("i"), "f")),
        "type 'int' does not support field selection"
    );
}

#[test]
fn has_does_not_resolve_qualified_names() {
    let mut env = env();
    env.declare("a", Type::map(Type::String, Type::Int));
    env.declare("a.b", Type::String);
    // has(a.b) tests the field `b` of `a`, it is not the variable `a.b`.
    let e = has(id("a"), "b");
    assert_eq!(ty(&env, &e), Type::Bool);
    let checked = check_ast(&env, "", &e).unwrap();
    assert!(!checked.references.contains_key(&e.id));
}

// ----- calls and overloads -----

#[test]
fn arithmetic_and_logic() {
    let env = env();
    assert_eq!(ty(&env, &bin(ops::ADD, int(1), int(2))), Type::Int);
    assert_eq!(ty(&env, &bin(ops::ADD, s("a"), s("b"))), Type::String);
    assert_eq!(
        ty(&env, &bin(ops::ADD, list(vec![int(1)]), list(vec![]))),
        Type::list(Type::Int)
    );
    assert_eq!(ty(&env, &bin(ops::MODULO, uint(1), uint(2))), Type::Uint);
    assert_eq!(
        err1(&env, &bin(ops::MODULO, dbl(1.0), dbl(2.0))),
        "found no matching overload for '_%_' applied to '(double, double)'"
    );
    assert_eq!(
        err1(&env, &bin(ops::ADD, int(1), s("a")).at(2)),
        "found no matching overload for '_+_' applied to '(int, string)'"
    );
    assert_eq!(ty(&env, &call(ops::NEGATE, vec![dbl(1.0)])), Type::Double);
    assert_eq!(ty(&env, &call(ops::LOGICAL_NOT, vec![b(true)])), Type::Bool);
    assert_eq!(
        ty(&env, &bin(ops::LOGICAL_AND, b(true), b(false))),
        Type::Bool
    );
    assert_eq!(
        ty(&env, &bin(ops::LOGICAL_OR, dyn_(int(1)), b(false))),
        Type::Bool
    );
    // cel-go checks && and || argument by argument.
    assert_eq!(
        err1(&env, &bin(ops::LOGICAL_AND, int(1), b(true))),
        "expected type 'bool' but found 'int'"
    );
    assert_eq!(
        ty(&env, &call(ops::CONDITIONAL, vec![b(true), int(1), int(2)])),
        Type::Int
    );
    assert_eq!(
        err1(&env, &call(ops::CONDITIONAL, vec![b(true), int(1), s("a")])),
        "found no matching overload for '_?_:_' applied to '(bool, int, string)'"
    );
    assert_eq!(
        ty(
            &env,
            &call(ops::CONDITIONAL, vec![b(true), int(1), dyn_(s("a"))])
        ),
        Type::Dyn
    );
}

#[test]
fn equality_and_ordering() {
    let env = env();
    assert_eq!(ty(&env, &bin(ops::EQUALS, int(1), int(2))), Type::Bool);
    assert_eq!(
        ty(&env, &bin(ops::NOT_EQUALS, dyn_(int(1)), s("a"))),
        Type::Bool
    );
    assert_eq!(
        err1(&env, &bin(ops::EQUALS, int(1), uint(1))),
        "found no matching overload for '_==_' applied to '(int, uint)'"
    );
    assert_eq!(
        ty(&env, &bin(ops::EQUALS, list(vec![]), list(vec![int(1)]))),
        Type::Bool
    );
    assert_eq!(ty(&env, &bin(ops::LESS, s("a"), s("b"))), Type::Bool);
    // Cross-type numeric ordering is on by default, and can be turned off.
    assert_eq!(ty(&env, &bin(ops::LESS, int(1), dbl(2.0))), Type::Bool);
    assert_eq!(
        ty(&env, &bin(ops::GREATER_EQUALS, uint(1), int(2))),
        Type::Bool
    );
    let mut strict = env.clone();
    strict.check_options_mut().cross_type_numeric_comparisons = false;
    assert_eq!(
        err1(&strict, &bin(ops::LESS, int(1), dbl(2.0))),
        "found no matching overload for '_<_' applied to '(int, double)'"
    );
    assert_eq!(
        err1(&env, &bin(ops::LESS, b(true), int(1))),
        "found no matching overload for '_<_' applied to '(bool, int)'"
    );
}

#[test]
fn time_arithmetic() {
    let env = env();
    let ts = || call("timestamp", vec![s("2024-01-01T00:00:00Z")]);
    let du = || call("duration", vec![s("1s")]);
    assert_eq!(ty(&env, &bin(ops::SUBTRACT, ts(), ts())), Type::Duration);
    assert_eq!(ty(&env, &bin(ops::ADD, ts(), du())), Type::Timestamp);
    assert_eq!(ty(&env, &bin(ops::ADD, du(), ts())), Type::Timestamp);
    assert_eq!(ty(&env, &bin(ops::SUBTRACT, ts(), du())), Type::Timestamp);
    assert_eq!(
        err1(&env, &bin(ops::ADD, ts(), ts())),
        "found no matching overload for '_+_' applied to '(timestamp, timestamp)'"
    );
}

#[test]
fn membership() {
    let mut env = env();
    env.declare("m", Type::map(Type::String, Type::Int));
    assert_eq!(
        ty(&env, &bin(ops::IN, int(1), list(vec![int(1), int(2)]))),
        Type::Bool
    );
    assert_eq!(ty(&env, &bin(ops::IN, s("k"), id("m"))), Type::Bool);
    assert_eq!(
        err1(&env, &bin(ops::IN, int(1), id("m"))),
        "found no matching overload for '@in' applied to '(int, map(string, int))'"
    );
}

#[test]
fn function_calls() {
    let mut env = env();
    env.registry_mut().declare(
        "fn",
        vec![global(
            "fn_string_int",
            vec![Type::String, Type::Int],
            Type::String,
        )],
    );
    assert_eq!(
        ty(&env, &call("fn", vec![s("abc"), int(123)])),
        Type::String
    );
    assert_eq!(
        err1(&env, &call("fn", vec![s("abc")])),
        "found no matching overload for 'fn' applied to '(string)'"
    );
    // ('foo' + 'bar').startsWith('foo')
    let e = mcall(
        bin(ops::ADD, s("foo"), s("bar")),
        "startsWith",
        vec![s("foo")],
    );
    assert_eq!(ty(&env, &e), Type::Bool);
    assert_eq!(
        err1(&env, &mcall(int(1), "startsWith", vec![s("foo")])),
        "found no matching overload for 'startsWith' applied to 'int.(string)'"
    );
    // A member-only function called globally, and the reverse.
    assert_eq!(
        err1(&env, &call("startsWith", vec![s("a"), s("b")])),
        "found no matching overload for 'startsWith' applied to '(string, string)'"
    );
    assert_eq!(
        err1(&env, &call("undefined", vec![])),
        "undeclared reference to 'undefined' (in container '')"
    );
    assert_eq!(
        err1(&env, &mcall(s("a"), "undefined", vec![])),
        "undeclared reference to 'undefined' (in container '')"
    );
    assert_eq!(ty(&env, &call("size", vec![list(vec![s("a")])])), Type::Int);
    assert_eq!(ty(&env, &mcall(list(vec![]), "size", vec![])), Type::Int);
}

#[test]
fn overload_references() {
    let mut env = env();
    env.declare("d", Type::Dyn);
    let e = bin(ops::ADD, id("d"), int(1));
    let checked = check_ast(&env, "", &e).unwrap();
    assert_eq!(checked.result_type, Type::Int);
    let Some(Reference::Function {
        name,
        receiver,
        overloads,
    }) = checked.references.get(&e.id)
    else {
        panic!()
    };
    assert_eq!((name.as_str(), *receiver), ("_+_", false));
    assert_eq!(overloads, &vec!["add_int64"]);
    // Several matching overloads with different results give dyn.
    let e = bin(ops::ADD, id("d"), id("d"));
    let checked = check_ast(&env, "", &e).unwrap();
    assert_eq!(checked.result_type, Type::Dyn);
    let Some(Reference::Function { overloads, .. }) = checked.references.get(&e.id) else {
        panic!()
    };
    assert_eq!(overloads.len(), 9);
}

#[test]
fn namespaced_functions_in_containers() {
    let mut env = env();
    env.registry_mut().declare(
        "a.b.f",
        vec![global("a_b_f", vec![Type::Int], Type::String)],
    );
    env.set_container("a");
    // `b.f(1)` finds `a.b.f` through the container.
    let e = mcall(id("b"), "f", vec![int(1)]);
    let checked = check_ast(&env, "", &e).unwrap();
    assert_eq!(checked.result_type, Type::String);
    assert!(matches!(
        checked.references.get(&e.id),
        Some(Reference::Function { name, receiver: false, .. }) if name == "a.b.f"
    ));
    // `f(1)` alone does not.
    assert_eq!(
        err1(&env, &call("f", vec![int(1)])),
        "undeclared reference to 'f' (in container 'a')"
    );
}

#[test]
fn user_functions_with_type_parameters() {
    let mut env = env();
    let t = Type::param("T");
    env.registry_mut().declare(
        "first",
        vec![global("first_list", vec![Type::list(t.clone())], t.clone())],
    );
    env.registry_mut().declare(
        "pair",
        vec![global(
            "pair_t",
            vec![t.clone(), t.clone()],
            Type::map(Type::String, t),
        )],
    );
    assert_eq!(
        ty(&env, &call("first", vec![list(vec![int(1)])])),
        Type::Int
    );
    assert_eq!(
        ty(&env, &call("pair", vec![int(1), int(2)])),
        Type::map(Type::String, Type::Int)
    );
    assert_eq!(
        ty(&env, &call("pair", vec![int(1), dyn_(int(2))])),
        Type::map(Type::String, Type::Dyn)
    );
    assert_eq!(
        err1(&env, &call("pair", vec![int(1), s("x")])),
        "found no matching overload for 'pair' applied to '(int, string)'"
    );
    // Each call gets fresh parameters.
    let e = list(vec![
        call("pair", vec![int(1), int(2)]),
        call("pair", vec![s("a"), s("b")]),
    ]);
    assert_eq!(ty(&env, &e), Type::list(Type::Dyn));
}

fn tuple_env() -> Env {
    let mut env = env();
    let tuple = |a: Type, b: Type, c: Type| Type::Abstract("tuple".into(), vec![a, b, c]);
    let (t, u, v) = (Type::param("T"), Type::param("U"), Type::param("V"));
    env.registry_mut().declare(
        "tuple",
        vec![global(
            "tuple_T_U_V",
            vec![t.clone(), u.clone(), v.clone()],
            tuple(t.clone(), u, v),
        )],
    );
    env.registry_mut().declare(
        "sort",
        vec![global(
            "sort_tuple_T_T_T",
            vec![tuple(t.clone(), t.clone(), t.clone())],
            tuple(t.clone(), t.clone(), t),
        )],
    );
    env
}

#[test]
fn multiple_type_parameters() {
    let env = tuple_env();
    let dyn3 = Type::Abstract("tuple".into(), vec![Type::Dyn, Type::Dyn, Type::Dyn]);
    // [tuple(1, 2u, 3.0), tuple(dyn(1), dyn(2u), dyn(3.0))][0]
    let e = index(
        list(vec![
            call("tuple", vec![int(1), uint(2), dbl(3.0)]),
            call("tuple", vec![dyn_(int(1)), dyn_(uint(2)), dyn_(dbl(3.0))]),
        ]),
        int(0),
    );
    assert_eq!(ty(&env, &e), dyn3);
    // sort(tuple(dyn(1), 2u, 3.0))
    let e = call(
        "sort",
        vec![call("tuple", vec![dyn_(int(1)), uint(2), dbl(3.0)])],
    );
    assert_eq!(ty(&env, &e), dyn3);
    // tuple(1, 2u, 3.0) == tuple(1, dyn(2u), dyn(3.0))
    let e = bin(
        ops::EQUALS,
        call("tuple", vec![int(1), uint(2), dbl(3.0)]),
        call("tuple", vec![int(1), dyn_(uint(2)), dyn_(dbl(3.0))]),
    );
    assert_eq!(ty(&env, &e), Type::Bool);
    let e = bin(
        ops::EQUALS,
        call("tuple", vec![dyn_(int(1)), dyn_(uint(2)), dbl(3.0)]),
        call("tuple", vec![int(1), uint(2), dbl(3.0)]),
    );
    assert_eq!(ty(&env, &e), Type::Bool);
    assert_eq!(
        format_type(&Type::Abstract(
            "tuple".into(),
            vec![Type::Int, Type::Timestamp]
        )),
        "tuple(int, timestamp)"
    );
}

// ----- comprehensions -----

#[test]
fn comprehension_macros() {
    let mut env = env();
    env.declare("l", Type::list(Type::Int));
    env.declare("m", Type::map(Type::String, Type::Int));
    env.declare("d", Type::Dyn);
    let gt0 = |v: &str| bin(ops::GREATER, id(v), int(0));
    assert_eq!(ty(&env, &all(id("l"), "x", gt0("x"))), Type::Bool);
    assert_eq!(ty(&env, &exists(id("l"), "x", gt0("x"))), Type::Bool);
    assert_eq!(ty(&env, &exists_one(id("l"), "x", gt0("x"))), Type::Bool);
    // Iteration over a map binds the keys.
    assert_eq!(
        ty(
            &env,
            &all(id("m"), "k", mcall(id("k"), "startsWith", vec![s("a")]))
        ),
        Type::Bool
    );
    assert_eq!(ty(&env, &exists(id("d"), "x", gt0("x"))), Type::Bool);
    assert_eq!(
        ty(
            &env,
            &map_macro(id("l"), "x", bin(ops::MULTIPLY, id("x"), int(2)))
        ),
        Type::list(Type::Int)
    );
    assert_eq!(
        ty(&env, &map_macro(id("m"), "k", call("size", vec![id("k")]))),
        Type::list(Type::Int)
    );
    assert_eq!(
        ty(&env, &map_macro(id("d"), "x", id("x"))),
        Type::list(Type::Dyn)
    );
    assert_eq!(
        ty(&env, &filter(id("l"), "x", gt0("x"))),
        Type::list(Type::Int)
    );
    assert_eq!(
        ty(
            &env,
            &map_macro(filter(id("l"), "x", gt0("x")), "y", s("a"))
        ),
        Type::list(Type::String)
    );
    // The predicate must be bool (cel-go reports it on the && argument).
    assert_eq!(
        err1(&env, &all(id("l"), "x", id("x"))),
        "expected type 'bool' but found 'int'"
    );
    // Iteration variables are in scope only inside the loop.
    assert_eq!(
        err1(
            &env,
            &bin(ops::LOGICAL_AND, all(id("l"), "x", gt0("x")), gt0("x"))
        ),
        "undeclared reference to 'x' (in container '')"
    );
    assert_eq!(
        err1(&env, &all(int(1), "x", b(true))),
        "expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)"
    );
}

#[test]
fn comprehension_variables_shadow_globals() {
    let mut env = env();
    env.declare("x", Type::String);
    env.declare("x.y", Type::String);
    env.declare("l", Type::list(Type::map(Type::String, Type::Int)));
    // Inside the loop `x` is the element, and `x.y` its field, not the global `x.y`.
    assert_eq!(
        ty(&env, &map_macro(id("l"), "x", path("x.y"))),
        Type::list(Type::Int)
    );
    assert_eq!(
        ty(&env, &map_macro(id("l"), "x", id("x"))),
        Type::list(Type::map(Type::String, Type::Int))
    );
    // A leading dot reaches the global.
    assert_eq!(
        ty(&env, &map_macro(id("l"), "x", path(".x.y"))),
        Type::list(Type::String)
    );
    assert_eq!(
        ty(&env, &map_macro(id("l"), "x", id(".x"))),
        Type::list(Type::String)
    );
    // With a container, a local still wins over a qualified global.
    let mut env2 = env.clone();
    env2.declare("c.x", Type::Bool);
    env2.set_container("c");
    assert_eq!(
        ty(&env2, &map_macro(id("l"), "x", id("x"))),
        Type::list(Type::map(Type::String, Type::Int))
    );
    assert_eq!(ty(&env2, &id("x")), Type::Bool);
}

#[test]
fn two_variable_comprehensions() {
    let mut env = env();
    env.declare("l", Type::list(Type::String));
    env.declare("m", Type::map(Type::String, Type::Bool));
    let two = |range: Expr, step: Expr| {
        node(ExprKind::Comprehension(Box::new(Comprehension {
            iter_var: "i".into(),
            iter_var2: Some("v".into()),
            iter_range: range,
            accu_var: ACCUMULATOR.into(),
            accu_init: list(vec![]),
            loop_condition: b(true),
            loop_step: bin(ops::ADD, accu(), list(vec![step])),
            result: accu(),
        })))
    };
    assert_eq!(ty(&env, &two(id("l"), id("i"))), Type::list(Type::Int));
    assert_eq!(ty(&env, &two(id("l"), id("v"))), Type::list(Type::String));
    assert_eq!(ty(&env, &two(id("m"), id("i"))), Type::list(Type::String));
    assert_eq!(ty(&env, &two(id("m"), id("v"))), Type::list(Type::Bool));
}

#[test]
fn unconstrained_type_var_as_dyn() {
    let env = env();
    // ([].map(x, x))[0].foo
    let e = sel(index(map_macro(list(vec![]), "x", id("x")), int(0)), "foo");
    assert_eq!(ty(&env, &e), Type::Dyn);
}

// ----- optionals -----

#[test]
fn optional_functions() {
    let mut env = env();
    env.declare("m", Type::map(Type::String, Type::Int));
    env.declare("l", Type::list(Type::Int));
    assert_eq!(ty(&env, &opt_of(int(1))), Type::optional(Type::Int));
    assert_eq!(ty(&env, &opt_none()), Type::optional(Type::Dyn));
    assert_eq!(
        ty(&env, &mcall(id("optional"), "ofNonZeroValue", vec![s("")])),
        Type::optional(Type::String)
    );
    assert_eq!(
        ty(&env, &mcall(opt_of(int(1)), "hasValue", vec![])),
        Type::Bool
    );
    assert_eq!(ty(&env, &mcall(opt_of(int(1)), "value", vec![])), Type::Int);
    assert_eq!(
        ty(&env, &mcall(opt_of(int(1)), "or", vec![opt_none()])),
        Type::optional(Type::Int)
    );
    assert_eq!(
        ty(&env, &mcall(opt_none(), "orValue", vec![s("x")])),
        Type::String
    );
    assert_eq!(
        err1(&env, &mcall(opt_of(int(1)), "orValue", vec![s("x")])),
        "found no matching overload for 'orValue' applied to 'optional_type(int).(string)'"
    );
    assert_eq!(
        ty(&env, &mcall(id("l"), "first", vec![])),
        Type::optional(Type::Int)
    );
    assert_eq!(
        ty(
            &env,
            &mcall(
                id("optional"),
                "unwrap",
                vec![list(vec![opt_of(int(1)), opt_none()])]
            )
        ),
        Type::list(Type::Int)
    );
    // A variable named `optional` hides the namespaced function (cel-go would call
    // `optional.of`; celer's compiler evaluates the variable, so the checker does too).
    let mut env2 = env.clone();
    env2.declare("optional", Type::map(Type::String, Type::Int));
    assert_eq!(
        err1(&env2, &opt_of(int(1))),
        "undeclared reference to 'of' (in container '')"
    );
    assert_eq!(ty(&env2, &sel(id("optional"), "of")), Type::Int);
    // So does a comprehension variable.
    let e = map_macro(list(vec![int(1)]), "optional", opt_of(int(1)));
    assert_eq!(
        err1(&env, &e),
        "undeclared reference to 'of' (in container '')"
    );
}

#[test]
fn optional_selection_and_indexing() {
    let mut env = env();
    env.declare("m", Type::map(Type::String, Type::Int));
    env.declare(
        "mm",
        Type::map(Type::String, Type::map(Type::String, Type::Int)),
    );
    env.declare("l", Type::list(Type::String));
    env.declare("d", Type::Dyn);
    assert_eq!(ty(&env, &opt_sel(id("m"), "k")), Type::optional(Type::Int));
    assert_eq!(ty(&env, &opt_sel(id("d"), "k")), Type::optional(Type::Dyn));
    // Selection on an optional stays optional.
    assert_eq!(
        ty(&env, &sel(opt_sel(id("mm"), "a"), "b")),
        Type::optional(Type::Int)
    );
    assert_eq!(
        ty(&env, &bin(ops::OPT_INDEX, id("l"), int(0))),
        Type::optional(Type::String)
    );
    assert_eq!(
        ty(&env, &bin(ops::OPT_INDEX, id("m"), s("k"))),
        Type::optional(Type::Int)
    );
    assert_eq!(
        ty(&env, &index(opt_sel(id("mm"), "a"), s("b"))),
        Type::optional(Type::Int)
    );
    assert_eq!(
        ty(&env, &bin(ops::OPT_INDEX, opt_sel(id("mm"), "a"), s("b"))),
        Type::optional(Type::Int)
    );
    assert_eq!(
        err1(&env, &opt_sel(int(1), "k")),
        "type 'int' does not support field selection"
    );
}

#[test]
fn optional_literal_elements() {
    let env = env();
    assert_eq!(
        ty(&env, &opt_list(vec![int(1), opt_of(int(2))], vec![1])),
        Type::list(Type::Int)
    );
    assert_eq!(
        ty(&env, &opt_list(vec![dyn_(int(2))], vec![0])),
        Type::list(Type::Dyn)
    );
    assert_eq!(
        err1(&env, &opt_list(vec![int(1)], vec![0])),
        "expected type 'optional_type(int)' but found 'int'"
    );
    assert_eq!(
        ty(&env, &opt_entry_map(s("k"), opt_of(int(1)))),
        Type::map(Type::String, Type::Int)
    );
    assert_eq!(
        err1(&env, &opt_entry_map(s("k"), int(1))),
        "expected type 'optional_type(int)' but found 'int'"
    );
}

#[test]
fn optional_type_deduction() {
    let env = env();
    let opt_int = Type::list(Type::optional(Type::Int));
    let opt_dyn = Type::list(Type::optional(Type::Dyn));
    assert_eq!(ty(&env, &list(vec![opt_none(), opt_of(int(1))])), opt_int);
    assert_eq!(ty(&env, &list(vec![opt_of(int(1)), opt_none()])), opt_int);
    assert_eq!(
        ty(&env, &list(vec![opt_of(int(1)), opt_of(dyn_(int(1)))])),
        opt_dyn
    );
    assert_eq!(
        ty(&env, &list(vec![opt_of(dyn_(int(1))), opt_of(int(1))])),
        opt_dyn
    );
    let e = call(
        ops::CONDITIONAL,
        vec![b(true), opt_of(dyn_(int(1))), opt_of(int(1))],
    );
    assert_eq!(ty(&env, &e), Type::optional(Type::Dyn));
    // [optional.of(1), null][0]: null is assignable to optional types, and the joined type
    // is the optional one in either order (cel-spec; cel-go deduces null here).
    let e = index(list(vec![opt_of(int(1)), null()]), int(0));
    assert_eq!(ty(&env, &e), Type::optional(Type::Int));
    let e = index(list(vec![null(), opt_of(int(1))]), int(0));
    assert_eq!(ty(&env, &e), Type::optional(Type::Int));
    let ts = call("timestamp", vec![s("2024-01-01T00:00:00Z")]);
    assert_eq!(
        ty(&env, &call(ops::CONDITIONAL, vec![b(true), null(), ts])),
        Type::Timestamp
    );
    // ... but not to int.
    assert_eq!(ty(&env, &list(vec![int(1), null()])), Type::list(Type::Dyn));
}

// ----- errors -----

#[test]
fn errors_are_collected_sorted_and_rendered() {
    let env = env();
    let source = "x + y.z";
    let e = bin(ops::ADD, id("x").at(0), sel(id("y").at(4), "z").at(5)).at(2);
    let err = check(&env, source, &e).unwrap_err();
    let messages: Vec<(u32, &str)> = err
        .diagnostics
        .iter()
        .map(|d| (d.span.start, d.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (0, "undeclared reference to 'x' (in container '')"),
            (4, "undeclared reference to 'y' (in container '')"),
        ]
    );
    assert_eq!(
        err.to_string(),
        "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x + y.z\n | ^\n\
         ERROR: <input>:1:5: undeclared reference to 'y' (in container '')\n | x + y.z\n | ....^"
    );
}

#[test]
fn errors_do_not_cascade() {
    let env = env();
    // The undeclared operand is an error type, which matches any overload.
    let e = bin(ops::ADD, bin(ops::MULTIPLY, id("x"), int(1)), int(2));
    assert_eq!(
        errs(&env, &e),
        vec!["undeclared reference to 'x' (in container '')"]
    );
    let e = sel(sel(id("x"), "a"), "b");
    assert_eq!(
        errs(&env, &e),
        vec!["undeclared reference to 'x' (in container '')"]
    );
}

#[test]
fn error_position_is_the_node_span() {
    let env = env();
    let e = bin(ops::ADD, int(1), s("a")).at(2);
    let err = check(&env, "1 + 'a'", &e).unwrap_err();
    assert_eq!(err.diagnostics[0].span.start, 2);
    assert!(
        err.to_string()
            .starts_with("ERROR: <input>:1:3: found no matching overload")
    );
}

#[test]
fn checked_types_have_no_parameters() {
    let env = env();
    let e = list(vec![list(vec![]), map(vec![])]);
    let checked = check_ast(&env, "", &e).unwrap();
    fn has_param(t: &Type) -> bool {
        match t {
            Type::Param(_) => true,
            Type::List(a) | Type::Optional(a) | Type::Type(a) => has_param(a),
            Type::Map(k, v) => has_param(k) || has_param(v),
            Type::Abstract(_, ps) => ps.iter().any(has_param),
            _ => false,
        }
    }
    assert!(checked.types.values().all(|t| !has_param(t)));
    assert_eq!(checked.types.len(), 3);
    assert_eq!(checked.result_type, Type::list(Type::Dyn));
}

#[test]
fn standard_registry_declares_operators() {
    let r = crate::library::standard();
    let count = |name: &str| r.get(name).map_or(0, |f| f.overloads.len());
    assert_eq!(count(ops::ADD), 9);
    assert_eq!(count(ops::SUBTRACT), 6);
    assert_eq!(count(ops::LESS), 14);
    assert_eq!(count(ops::GREATER_EQUALS), 14);
    assert_eq!(count(ops::INDEX), 4);
    assert_eq!(count(ops::OPT_INDEX), 4);
    assert_eq!(count(ops::IN), 2);
    assert_eq!(count("optional.of"), 1);
    let ids = |name: &str| -> Vec<&'static str> {
        r.get(name)
            .map(|f| f.overloads.iter().map(|o| o.id).collect())
            .unwrap_or_default()
    };
    assert!(ids(ops::LESS_EQUALS).contains(&"less_equals_uint64_double"));
    let ordering: Vec<&str> = [
        ops::LESS,
        ops::LESS_EQUALS,
        ops::GREATER,
        ops::GREATER_EQUALS,
    ]
    .iter()
    .flat_map(|op| ids(op))
    .collect();
    assert!(
        crate::library::operators::CROSS_TYPE_NUMERIC_COMPARISONS
            .iter()
            .all(|id| ordering.contains(id))
    );
}

#[test]
fn large_expressions_check_quickly() {
    let mut env = env();
    env.declare("l", Type::list(Type::Int));
    env.declare("m", Type::map(Type::String, Type::Dyn));
    // 400 generic calls (`_[_]`, `_==_`, `@in`) chained with `&&`, as policies do.
    let mut e = b(true);
    for i in 0..200 {
        let eq = bin(ops::EQUALS, index(id("l"), int(i)), int(i));
        let inn = bin(ops::IN, s("k"), sel(id("m"), "f"));
        e = bin(ops::LOGICAL_AND, e, bin(ops::LOGICAL_OR, eq, inn));
    }
    let start = std::time::Instant::now();
    assert_eq!(ty(&env, &e), Type::Bool);
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}

/// Runs `f` on a thread with a small stack, as a guard against deep recursion.
fn with_stack(bytes: usize, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(bytes)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deepest_parser_trees_check_in_a_small_stack() {
    // The parser limits nesting to 250; check such trees on a 1 MiB stack.
    with_stack(1 << 20, || {
        let env = env();
        let deep_list = (0..250).fold(int(1), |acc, _| list(vec![acc]));
        let t = ty(&env, &deep_list);
        assert!(matches!(t, Type::List(_)));
        let deep_neg = (0..250).fold(int(1), |acc, _| call(ops::NEGATE, vec![acc]));
        assert_eq!(ty(&env, &deep_neg), Type::Int);
        let deep_add = (0..250).fold(int(1), |acc, i| bin(ops::ADD, acc, int(i)));
        assert_eq!(ty(&env, &deep_add), Type::Int);
        let mut env2 = env.clone();
        env2.declare("m", Type::Dyn);
        let deep_sel = (0..250).fold(id("m"), |acc, _| sel(acc, "f"));
        assert_eq!(ty(&env2, &deep_sel), Type::Dyn);
        let deep_map = (0..80).fold(int(1), |acc, _| map_macro(list(vec![int(1)]), "x", acc));
        assert!(matches!(ty(&env, &deep_map), Type::List(_)));
    });
}
