//! Kubernetes extension values print as JSON strings and as CEL that rebuilds them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::format::{to_cel, to_json};
use celer_cel::{Activation, Env};
use celer_cel_kubernetes::KubernetesEnv;

#[test]
fn extension_values_print_and_round_trip() {
    let env = Env::kubernetes();
    let act = Activation::new(&env);
    for (expr, json) in [
        ("ip('10.0.0.1')", r#""10.0.0.1""#),
        ("ip('2001:db8::1')", r#""2001:db8::1""#),
        ("cidr('10.0.0.0/8')", r#""10.0.0.0/8""#),
        ("quantity('1.5Gi')", r#""1536Mi""#),
        ("semver('1.2.3-rc.1+b5')", r#""1.2.3-rc.1+b5""#),
        ("url('https://x/y?a=b')", r#""https://x/y?a=b""#),
    ] {
        let value = env.compile(expr).unwrap().eval(&act).unwrap();
        assert_eq!(to_json(&value).unwrap(), json, "{expr}");
        let again = to_cel(&value);
        let rebuilt = env.compile(&again).unwrap().eval(&act).unwrap();
        let same = env
            .compile(&format!("{again} == {expr}"))
            .unwrap()
            .eval(&act)
            .unwrap();
        assert!(
            matches!(same, celer_cel::Value::Bool(true)),
            "{expr} -> {again}"
        );
        assert_eq!(to_cel(&rebuilt), again, "{expr}");
    }
}
