//! Kubernetes' `jsonpatch` CEL library (`k8s.io/apiserver/pkg/cel/library/jsonpatch.go`),
//! Kubernetes 1.32+ (MutatingAdmissionPolicy): `jsonpatch.escapeKey(s)` escapes a key for use
//! in a JSON Pointer (RFC 6901): `~` becomes `~0`, then `/` becomes `~1`.

use super::shared::string_arg;
use celer_cel::library::{Impl, Registry, global};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

pub fn register(r: &mut Registry) {
    r.add(
        "jsonpatch.escapeKey",
        vec![global(
            "string_jsonpatch_escapeKey_string",
            vec![Type::String],
            Type::String,
        )],
        Impl::Unary(escape_key),
    );
    // cost.go: a traversal of the string.
    r.set_cost(
        "jsonpatch.escapeKey",
        false,
        1,
        super::ip::string_traversal_cost,
    );
}

fn escape_key(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("jsonpatch.escapeKey", &v)?;
    if !s.contains(['~', '/']) {
        return Ok(v);
    }
    Ok(Value::string(s.replace('~', "~0").replace('/', "~1")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::test_support::{assert_costs, assert_errors, assert_values};
    use celer_cel::Value;

    #[test]
    fn escapes_tilde_then_slash() {
        assert_values(&[
            (
                "jsonpatch.escapeKey('k8s.io/my~label')",
                Value::string("k8s.io~1my~0label"),
            ),
            ("jsonpatch.escapeKey('plain')", Value::string("plain")),
            ("jsonpatch.escapeKey('')", Value::string("")),
            ("jsonpatch.escapeKey('~1')", Value::string("~01")),
            ("jsonpatch.escapeKey('//~~')", Value::string("~1~1~0~0")),
        ]);
        assert_errors(&[(
            "jsonpatch.escapeKey(dyn(1))",
            "no such overload: jsonpatch.escapeKey(int)",
        )]);
        // ceil(15 * 0.1)
        assert_costs(&[("jsonpatch.escapeKey('k8s.io/my~label')", 2)]);
    }
}
