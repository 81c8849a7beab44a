#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::value::Value;
use celer_cel::{Activation, Env};

use crate::KubernetesEnv;
use crate::lists::traversal_cost;

/// The runtime cost of `expr` in the Kubernetes environment.
fn costs(expr: &str, want: u64) {
    let env = Env::kubernetes();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let eval = program.evaluate(&Activation::empty(), None);
    assert!(eval.result.is_ok(), "{expr}: {:?}", eval.result);
    assert_eq!(eval.cost, want, "cost of {expr}");
}

#[test]
fn kubernetes_costs() {
    let s100 = format!("'{}'", "a".repeat(100));
    let s95 = format!("'{}'", "é".repeat(95)); // 95 code points, 190 bytes
    // charAt: cel-go's default 1.
    costs(&format!("{s100}.charAt(3)"), 1);
    // indexOf/lastIndexOf: Kubernetes' traversal, floor(0.1 * bytes).
    costs(&format!("{s100}.indexOf('b')"), 10);
    costs(&format!("{s100}.indexOf('b', 2)"), 10);
    costs(&format!("{s100}.lastIndexOf('b')"), 10);
    costs(&format!("{s95}.lastIndexOf('b', 2)"), 19);
    costs("'abcdefghi'.indexOf('b')", 0);
    // lowerAscii, upperAscii, substring, trim: ceil(0.1 * code points).
    costs(&format!("{s95}.upperAscii()"), 10);
    costs(&format!("{s100}.lowerAscii()"), 10);
    costs(&format!("{s100}.substring(3)"), 10);
    costs(&format!("{s100}.substring(3, 4)"), 10);
    costs(&format!("{s95}.trim()"), 10);
    costs("''.trim()", 0);
    // replace, split: ceil(0.2 * code points).
    costs(&format!("{s95}.replace('a', 'b')"), 19);
    costs(&format!("{s100}.replace('a', 'b', 1)"), 20);
    costs(&format!("{s100}.split('a')"), 20);
    costs(&format!("{s100}.split('a', 2)"), 20);
    // join: ceil(0.2 * size of the result); the list literal costs 10.
    costs("['abc', 'def'].join()", 10 + 2);
    costs("['abc', 'def'].join('-----')", 10 + 3);
    costs("[].join()", 10);
    // format and strings.quote: cel-go's traversal of the first argument.
    costs(&format!("{s100}.format([])"), 10 + 10);
    costs(&format!("strings.quote({s95})"), 10);
}

#[test]
fn kubernetes_traversal_cost_of_values() {
    assert_eq!(traversal_cost(&Value::string("x".repeat(19))), 1);
    assert_eq!(traversal_cost(&Value::string("é".repeat(10))), 2);
    assert_eq!(traversal_cost(&Value::Int(5)), 1);
    let json: celer_cel::value::Json =
        sonic_rs::from_str(r#"{"aaaaaaaaaa": ["bbbbbbbbbbbbbbbbbbbb", 1, {"k": null}]}"#).unwrap();
    // key 1 + (string 2 + int 1 + (key 0 + null 1)).
    assert_eq!(traversal_cost(&Value::from_json(&json)), 5);
    let mut deep = Value::string("x".repeat(30));
    for _ in 0..100_000 {
        deep = Value::list(vec![deep]);
    }
    assert_eq!(traversal_cost(&deep), 3);
    // Drop the deep list iteratively: its recursive drop is not what is tested here.
    let mut v = deep;
    while let Value::List(celer_cel::value::List::Owned(items)) = v {
        v = match std::sync::Arc::try_unwrap(items) {
            Ok(mut items) => items.pop().unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
    }
}

/// cel-go's strings extension is at version 2 in Kubernetes' environment: no `reverse()`
/// on strings.
#[test]
fn reverse_is_not_in_the_kubernetes_version() {
    let env = Env::kubernetes();
    assert!(env.check("'abc'.reverse()").is_err());
}
