//! The Kubernetes CEL libraries (`k8s.io/apiserver/pkg/cel/library`) and environment for
//! `celer-cel`, as kube-apiserver's base environment configures them: quantity, IP and
//! CIDR, URL, semver, the authorizer, lists, format, regex, the costs Kubernetes charges
//! for cel-go's strings extension ([`string_costs`]), the cost budgets of admission,
//! and the `Object{...}`/`JSONPatch{...}` types of MutatingAdmissionPolicy ([`mutation`]).
//!
//! The core knows none of it: [`Kubernetes`] and [`MutationTypes`] are
//! [`Library`]s, and [`KubernetesEnv`] gives [`Env`] its Kubernetes constructor.
//!
//! ```
//! use celer_cel::{Activation, Env, Type, format};
//! use celer_cel_kubernetes::{KubernetesEnv, cost, mutation};
//! let mut env = Env::kubernetes();
//! env.declare("object", Type::Dyn);
//! env.enable_mutation_types(); // MutatingAdmissionPolicy only
//! env.enable_lazy_variables(); // `variables` exists, empty, for the first variable
//! // spec.variables, in order: each compiled with the ones before it, then declared.
//! let name = env.compile("object.metadata.name").unwrap();
//! env.declare_lazy("name", name.result_type().clone());
//! let labels = env.compile(r#"{"app": variables.name}"#).unwrap();
//! env.declare_lazy("labels", labels.result_type().clone());
//! let apply = env
//!     .compile("Object{metadata: Object.metadata{labels: variables.labels}}")
//!     .unwrap();
//! assert_eq!(apply.result_type(), &mutation::object_type());
//!
//! // Per request: one activation for the policy's expressions.
//! let object: sonic_rs::Value = sonic_rs::from_str(r#"{"metadata": {"name": "web"}}"#).unwrap();
//! let mut act = Activation::new(&env);
//! act.bind_json("object", &object).unwrap();
//! act.set_lazy(0, &name);
//! act.set_lazy(1, &labels);
//! let eval = apply.evaluate(&act, Some(cost::PER_CALL_LIMIT));
//! let patch = eval.result.unwrap();
//! assert_eq!(mutation::check_type_names(&patch), Ok(()));
//! assert_eq!(format::to_json(&patch).unwrap(), r#"{"metadata":{"labels":{"app":"web"}}}"#);
//! assert!(eval.variables_cost > 0 && eval.cost > eval.variables_cost);
//! ```
#![forbid(unsafe_code)]

use celer_cel::Env;
use celer_cel::library::{Extensions, Library, Registry};

pub mod authz;
#[cfg(test)]
#[path = "../../cel/src/library/test_support.rs"]
mod cel_test_support;
pub mod cidr;
pub mod cost;
pub mod format;
pub mod gourl;
pub mod ip;
pub mod jsonpatch;
pub mod lists;
pub mod mutation;
pub mod netip;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod shared;
pub mod string_costs;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod test_support;
pub mod urls;

/// Registers every Kubernetes library.
pub fn register(r: &mut Registry) {
    authz::register(r);
    cidr::register(r);
    format::register(r);
    ip::register(r);
    jsonpatch::register(r);
    lists::register(r);
    quantity::register(r);
    regex::register(r);
    semver::register(r);
    string_costs::register(r);
    urls::register(r);
}

/// The Kubernetes libraries as one [`Library`]: what kube-apiserver adds to cel-go's
/// standard library and extensions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kubernetes;

impl Library for Kubernetes {
    fn name(&self) -> &'static str {
        "kubernetes"
    }

    fn register(&self, registry: &mut Registry) {
        register(registry);
    }
}

/// MutatingAdmissionPolicy's `Object`, `Object.<field>...` and `JSONPatch` types, as a
/// [`Library`] that registers them as the environment's message types ([`mutation`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct MutationTypes;

impl Library for MutationTypes {
    fn name(&self) -> &'static str {
        "kubernetes mutation types"
    }

    fn register(&self, registry: &mut Registry) {
        registry.set_message_types(&mutation::TYPES);
    }
}

/// The type of `variables`, the object of a policy's variables (composition), as
/// Kubernetes names it.
pub const VARIABLES_TYPE: &str = "kubernetes.variables";

/// Kubernetes' environments on [`Env`], so that hosts write `Env::kubernetes()` as they
/// would read it in kube-apiserver.
pub trait KubernetesEnv {
    /// The environment of Kubernetes admission policies: the standard library plus the
    /// extensions and Kubernetes libraries, homogeneous aggregate literals, literal
    /// validation (durations, timestamps, regexes), free presence tests, and `variables`
    /// typed [`VARIABLES_TYPE`], as kube-apiserver's base environment configures them.
    fn kubernetes() -> Env;

    /// Makes `Object`, `Object.<field>...` and `JSONPatch` types that expressions construct
    /// (`Object{spec: Object.spec{replicas: 3}}`, `JSONPatch{op: "add", ...}`), as
    /// Kubernetes' MutatingAdmissionPolicy environment does; any other message name then is
    /// an undeclared reference. See [`mutation`].
    fn enable_mutation_types(&mut self);
}

impl KubernetesEnv for Env {
    fn kubernetes() -> Env {
        let mut env = Env::standard();
        env.add_library(&Extensions);
        env.add_library(&Kubernetes);
        let options = env.check_options_mut();
        options.homogeneous_aggregate_literals = true;
        options.validate_literals = true;
        env.set_presence_test_has_cost(false);
        env.set_lazy_variables_type(VARIABLES_TYPE);
        env
    }

    fn enable_mutation_types(&mut self) {
        self.add_library(&MutationTypes);
    }
}

#[cfg(test)]
fn test_env() -> Env {
    Env::kubernetes()
}
