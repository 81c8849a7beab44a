//! Kyverno's CEL policies (`policies.kyverno.io`): ValidatingPolicy, MutatingPolicy, their
//! namespaced variants and PolicyException, lowered into the engine's compiled model
//! ([`crate::compiled::ValidatingPolicy`], [`crate::compiled::MutatingPolicy`]) and evaluated
//! with Kyverno's semantics:
//!
//! - a policy has no binding: its `validationActions` (default `[Deny]`) act as an implicit
//!   binding's;
//! - PolicyExceptions are checked before the policy's matchConditions; a matching exception
//!   without `images` and `allowedValues` exempts the resource (result `skip`, or `pass` with
//!   `reportResult: pass`), the others lend their images and values to the expressions as
//!   `exceptions.allowedImages` and `exceptions.allowedValues`;
//! - validations run in order and stop at the first that fails or errs: one result per
//!   policy, `pass`, `fail`, `skip` or `error`, with Kyverno's messages;
//! - pod policies also run on the pod controllers (autogen, [`autogen`]);
//! - a denial reads `Policy <name> failed: <message>`, errors `Policy <name> error: ...`,
//!   several joined with `; `; Warn gives the same texts as warnings.

pub mod autogen;
pub mod compile;
pub mod load;
pub mod model;
pub mod mutate;
pub mod validate;

use std::sync::OnceLock;

use celer_cel::library::Impl;
use celer_cel::{Env, EvalResult, Type, Value};

use crate::environment::{PolicyEnv, Slots};

/// The name of the variable holding the exceptions' allowed images and values.
pub const EXCEPTIONS_VAR: &str = "exceptions";

/// The CEL environment of a Kyverno policy: Kubernetes' libraries, `object`, `oldObject`,
/// `request`, `namespaceObject` and `exceptions` (no `params`, no `authorizer`), then the
/// policy's `variables`. The one place Kyverno's environment is built: Kyverno's own CEL
/// libraries (`image()`, `json`, `resource`, `http`...) are to be enabled here.
pub fn kyverno_env(mutating: bool) -> (PolicyEnv, usize) {
    static BASE: OnceLock<Env> = OnceLock::new();
    let mut env = BASE
        .get_or_init(|| {
            let mut env = Env::kubernetes();
            // Kyverno's compatibility with cel-go before 0.28 (`OrValueCompatEnvOptions`):
            // `x.orValue(y)` on a value that is not an optional gives `x`.
            env.registry_mut()
                .implement("orValue", true, 2, Impl::Binary(or_value_compat));
            env
        })
        .clone();
    if mutating {
        env.enable_mutation_types();
    }
    let object = env.declare("object", Type::Dyn);
    let old_object = env.declare("oldObject", Type::Dyn);
    let request = env.declare("request", Type::Dyn);
    let namespace_object = env.declare("namespaceObject", Type::Dyn);
    let exceptions = env.declare(EXCEPTIONS_VAR, Type::Dyn);
    env.enable_lazy_variables();
    let env = PolicyEnv {
        env,
        slots: Slots {
            object,
            old_object,
            request,
            namespace_object,
            params: None,
            authorizer: usize::MAX,
            request_resource: usize::MAX,
        },
        variable_errors: std::sync::Arc::from(Vec::new()),
    };
    (env, exceptions)
}

/// `orValue` as Kyverno's `__orValueCompat__`: an optional's value or the default; any other
/// value as it is.
fn or_value_compat<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match a {
        Value::Optional(Some(x)) => Ok((*x).clone()),
        Value::Optional(None) => Ok(b),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests;
