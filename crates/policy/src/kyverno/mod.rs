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

pub mod admission;
pub mod autogen;
pub mod classic;
pub mod classic_model;
pub mod classic_values;
pub mod compile;
pub mod deleting;
pub mod generating;
mod generation_template;
pub mod load;
mod lowered;
pub mod model;
pub mod mutate;
pub mod mutate_existing;
pub mod pattern;
pub mod pod_security;
pub mod validate;
pub mod webhook;

pub use classic_values::ClassicValues;

use std::sync::OnceLock;

use celer_cel::{Activation, Env, Json, Type, Value};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kyverno::{ContextValues, KyvernoEnv};

use crate::environment::{PolicyEnv, Slots};

/// The name of the variable holding the exceptions' allowed images and values.
pub const EXCEPTIONS_VAR: &str = "exceptions";

/// The CEL environment of a Kyverno policy: Kubernetes' libraries and Kyverno's (`image()`,
/// `json`, `resource`, `http`...: the context-backed ones read the variables that `Extra`
/// binds), `object`, `oldObject`, `request`, `namespaceObject` and
/// `exceptions` (no `params`, no `authorizer`), then the policy's `variables`.
pub fn kyverno_env(mutating: bool) -> (PolicyEnv, usize) {
    static BASE: OnceLock<Env> = OnceLock::new();
    let mut env = BASE
        .get_or_init(|| {
            let mut env = Env::kubernetes();
            // Kyverno's libraries (`image()`, `json`, `resource`, `http`...), with its
            // `orValue` compatibility (`x.orValue(y)` on a value that is not an optional
            // gives `x`).
            env.enable_kyverno_libraries();
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
        reads_authorizer: Default::default(),
        reads_request: Default::default(),
    };
    (env, exceptions)
}

/// The environment of a ClusterPolicy `validate.cel` rule: Kubernetes' validating policy
/// environment (with `params` when the rule has a paramKind, and the authorizer), with
/// Kyverno's libraries and its `orValue` compatibility.
pub fn classic_env(has_params: bool) -> PolicyEnv {
    let mut env = PolicyEnv::new(has_params, false);
    env.env.enable_kyverno_libraries();
    env
}

/// Whether an expression may read `request.object` or `request.oldObject`, which Kyverno's
/// `request` (the whole AdmissionRequest) has and Kubernetes' does not: any `request` that is
/// not followed by a selection of another field counts. Decided on the text, conservatively.
pub fn reads_request_object(source: &str) -> bool {
    let ident = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    let bytes = source.as_bytes();
    let mut from = 0;
    while let Some(i) = source.get(from..).and_then(|s| s.find("request")) {
        let start = from + i;
        let end = start + "request".len();
        from = end;
        let before = start.checked_sub(1).and_then(|j| bytes.get(j)).copied();
        if before.is_some_and(|b| ident(b) || b == b'.') {
            continue;
        }
        if bytes.get(end).copied().is_some_and(ident) {
            continue;
        }
        let rest = source.get(end..).unwrap_or_default().trim_start();
        let Some(field) = rest.strip_prefix(".?").or_else(|| rest.strip_prefix('.')) else {
            return true;
        };
        let field = field.trim_start();
        let name: String = field
            .chars()
            .take_while(|c| *c == '_' || c.is_ascii_alphanumeric())
            .collect();
        if name == "object" || name == "oldObject" {
            return true;
        }
    }
    false
}

/// Kyverno's `request`: Kubernetes' with `object` and `oldObject`.
pub(crate) fn request_with_objects(
    base: &celer_cel::Json,
    object: Option<&celer_cel::Json>,
    old_object: Option<&celer_cel::Json>,
) -> celer_cel::Json {
    use sonic_rs::JsonValueMutTrait;
    let mut request = base.clone();
    if let Some(r) = request.as_object_mut() {
        for (key, value) in [("object", object), ("oldObject", old_object)] {
            r.insert(&key, value.cloned().unwrap_or_default());
        }
    }
    request
}

/// What a Kyverno policy's activations hold besides the invocation's inputs: the
/// `exceptions` variable and the context-backed functions' variables.
#[derive(Clone, Copy)]
pub(crate) struct Extra<'e> {
    pub exceptions_slot: usize,
    pub exceptions: &'e Json,
    pub context: Option<&'e ContextValues>,
}

impl<'e> Extra<'e> {
    pub(crate) fn bind<'a>(&self, activation: &mut Activation<'a>)
    where
        'e: 'a,
    {
        activation.set(self.exceptions_slot, Value::from_json(self.exceptions));
        bind_context(activation, self.context);
    }
}

/// Binds the context-backed functions' variables, when the host gave a context.
pub(crate) fn bind_context(activation: &mut Activation<'_>, context: Option<&ContextValues>) {
    if let Some(values) = context {
        values.bind(activation);
    }
}

#[cfg(test)]
mod tests;
