//! Kyverno's CEL libraries (`kyverno/sdk` `extensions/cel/libs`) for `celer-cel`, enabled on
//! a Kubernetes environment with [`KyvernoEnv::enable_kyverno_libraries`] (the
//! [`Kyverno`] library and its variables):
//!
//! | library | functions |
//! |---|---|
//! | [`image`] | `parseImageReference(s)`, `image(s)` (deprecated), `isImage(s)`; on the result `registry()`, `repository()`, `identifier()`, `tag()`, `digest()`, `containsDigest()` |
//! | [`user`] | `parseServiceAccount(s)`, `user.parseServiceAccount(s)` → `{Name, Namespace}` |
//! | [`json`] | `json.unmarshal(s)`, `json.marshal(v)`, `yaml.parse(s)` |
//! | [`x509`] | `x509.decode(pem)` |
//! | [`hash`] | `sha1`, `sha256`, `md5` and `hash.sha1`, `hash.sha256`, `hash.md5` |
//! | [`math`] | `math.round(double, int)`; and it adds the core's [`Math`](celer_cel::library::Math), cel-go's math extension, which Kyverno's environment includes: `math.greatest`, `math.least`, `ceil`, `floor`, `round`, `trunc`, `abs`, `sign`, `sqrt`, `isInf`, `isNaN`, `isFinite`, `bitAnd`, `bitOr`, `bitXor`, `bitNot`, `bitShiftLeft`, `bitShiftRight` |
//! | [`random`] | `random()`, `random(pattern)`, `random.random(...)` |
//! | [`time`] | `time.now()`, `time.toCron(ts)`, `time.truncate(ts, d)` |
//! | [`transform`] | `listObjToMap(keys, values, keyField, valueField)`, `transform.listObjToMap` |
//! | [`gzip`] | `gzip.compress(s)`, `gzip.decompress(b)`; and it adds the core's [`Encoders`](celer_cel::library::Encoders), cel-go's `base64.encode`, `base64.decode`, which Kyverno's environment includes |
//! | `orValue` | on a value that is not an optional, returns it (Kyverno's compatibility with cel-go 0.27) |
//! | the core's [`Regex`](celer_cel::library::Regex) | cel-go's `regex.replace`, `regex.extract`, `regex.extractAll` (Kyverno's environment includes them) |
//! | [`context`] | `resource.Get/List/Post/ToGVR`, `http.Get/Post/Client`, `globalContext.Get`, `image.GetMetadata`, each also camelCase |
//!
//! The context-backed functions read a [`KyvernoContext`] that the host binds per
//! evaluation with [`ContextValues`]; [`MemoryContext`] is one held in memory, filled from
//! the mocks of Kyverno's test files. Without one they return an error naming the function.
//!
//! ```
//! use std::sync::Arc;
//! use celer_cel::{Activation, Env, Value};
//! use celer_cel_kubernetes::KubernetesEnv;
//! use celer_cel_kyverno::{ContextValues, KyvernoEnv, MemoryContext};
//! let mut env = Env::kubernetes();
//! env.enable_kyverno_libraries();
//! let program = env
//!     .compile("resource.Get('v1', 'configmaps', 'default', 'settings').data.mode")
//!     .unwrap();
//! // No context: a clear error.
//! let act = Activation::new(&env);
//! let e = program.eval(&act).unwrap_err();
//! assert!(e.message().starts_with("resource.Get: no context was supplied"));
//! // A context from the test's mocks.
//! let mut ctx = MemoryContext::new();
//! let cm = sonic_rs::from_str(
//!     r#"{"apiVersion": "v1", "kind": "ConfigMap",
//!         "metadata": {"name": "settings", "namespace": "default"}, "data": {"mode": "strict"}}"#,
//! ).unwrap();
//! ctx.add_object(cm).unwrap();
//! let values = ContextValues::new(Arc::new(ctx));
//! let mut act = Activation::new(&env);
//! values.bind(&mut act);
//! assert_eq!(program.eval(&act).unwrap().as_str(), Some("strict"));
//! ```

#![forbid(unsafe_code)]

use celer_cel::Env;
use celer_cel::library::{Library, LibraryVariable, Registry};

pub mod context;
pub mod convert;
pub mod gzip;
pub mod hash;
pub mod image;
pub mod json;
pub mod math;
pub mod memory;
pub mod random;
pub mod request_scoped;
pub mod time;
pub mod transform;
pub mod user;
pub mod x509;

pub use context::{ContextError, ContextValues, Gvr, HttpRequest, KyvernoContext};
pub use image::ImageReference;
pub use memory::{MemoryContext, MockError};
pub use request_scoped::RequestScoped;

/// Registers every Kyverno function.
pub fn register(r: &mut Registry) {
    image::register(r);
    user::register(r);
    json::register(r);
    x509::register(r);
    hash::register(r);
    math::register(r);
    random::register(r);
    time::register(r);
    transform::register(r);
    gzip::register(r);
    r.add_library(&celer_cel::library::Regex);
    context::register(r);
    // Kyverno compiles ValidatingPolicy and MutatingPolicy with its `orValue` compatibility
    // (`OrValueCompatEnvOptions`, for cel-go 0.28): `x.orValue(y)` on a value that is not an
    // optional returns the value, where plain CEL has no such overload.
    r.implement(
        "orValue",
        true,
        2,
        celer_cel::library::Impl::Binary(or_value_compat),
    );
}

fn or_value_compat<'a>(
    receiver: celer_cel::value::Value<'a>,
    fallback: celer_cel::value::Value<'a>,
) -> celer_cel::value::EvalResult<'a> {
    use celer_cel::value::Value;
    match receiver {
        Value::Optional(Some(v)) => Ok((*v).clone()),
        Value::Optional(None) => Ok(fallback),
        other => Ok(other),
    }
}

/// Kyverno's variables, each with a default value: `json`, `yaml`, `time` (the clock),
/// `resource`, `http`, `globalContext` and `image` (without a context).
pub fn variables() -> Vec<LibraryVariable> {
    let mut out = Vec::new();
    json::variables(&mut out);
    time::variables(&mut out);
    context::variables(&mut out);
    out
}

/// Kyverno's libraries as one [`Library`]: its functions and the variables they read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kyverno;

impl Library for Kyverno {
    fn name(&self) -> &'static str {
        "kyverno"
    }

    fn register(&self, registry: &mut Registry) {
        register(registry);
    }

    fn variables(&self) -> Vec<LibraryVariable> {
        variables()
    }
}

/// Kyverno's environment on [`Env`], as its policies compile.
pub trait KyvernoEnv {
    /// Kyverno's CEL libraries (`kyverno/sdk` `extensions/cel/libs`): image references,
    /// json, yaml, x509, hash, math, random, time, transform, gzip, base64, user, and the
    /// context-backed `resource`, `http`, `globalContext` and `image` variables (see the
    /// [crate documentation](crate)). Call it on
    /// [`Env::kubernetes`](celer_cel_kubernetes::KubernetesEnv::kubernetes). Idempotent.
    fn enable_kyverno_libraries(&mut self);
}

impl KyvernoEnv for Env {
    fn enable_kyverno_libraries(&mut self) {
        self.add_library(&Kyverno);
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
#[path = "../../cel/src/library/test_support.rs"]
mod cel_test_support;

#[cfg(test)]
#[allow(dead_code)] // only for the shared helpers this crate does not call
fn test_env() -> Env {
    use celer_cel_kubernetes::KubernetesEnv;
    Env::kubernetes()
}
