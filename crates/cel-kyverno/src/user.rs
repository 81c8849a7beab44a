//! Kyverno's `user` library (`kyverno/sdk` `libs/user`): `parseServiceAccount(username)`
//! and `user.parseServiceAccount(username)`.
//!
//! Kyverno returns a native Go struct `user.ServiceAccount` whose fields read as `Name` and
//! `Namespace`; celer returns a `map(string, string)` with those two keys, so that the
//! same selections (`parseServiceAccount(u).Namespace`) check and evaluate.

use celer_cel::library::{Impl, Registry, global};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, OwnedMap, Value};

use super::convert::string_arg;

const PREFIX: &str = "system:serviceaccount:";

pub fn register(r: &mut Registry) {
    let result = Type::map(Type::String, Type::String);
    for (name, id) in [
        (
            "parseServiceAccount",
            "parse_service_account_string_non_prefixed",
        ),
        (
            "user.parseServiceAccount",
            "parse_service_account_string_prefixed",
        ),
    ] {
        r.add(
            name,
            vec![global(id, vec![Type::String], result.clone())],
            Impl::Unary(parse_service_account),
        );
    }
}

/// `system:serviceaccount:<namespace>:<name>` split at the first `:` after the prefix;
/// anything else gives empty strings.
fn parse_service_account(v: Value<'_>) -> EvalResult<'_> {
    let user = string_arg("parseServiceAccount", &v)?;
    let (namespace, name) = user
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split_once(':'))
        .unwrap_or(("", ""));
    let mut m = OwnedMap::with_capacity(2);
    m.insert(Key::String("Name".into()), Value::string(name));
    m.insert(Key::String("Namespace".into()), Value::string(namespace));
    Ok(Value::map(m))
}
