//! Kyverno's classic-engine JMESPath layer for celer, on [`celer_jmespath`]: the custom
//! functions Kyverno v1.19.1 registers, its `{{ ... }}` variable substitution and its
//! `preconditions` / `deny.conditions` operators.
//!
//! ```
//! use celer_jmespath_kyverno::{evaluate_conditions, registry, substitute_str};
//! use sonic_rs::json;
//! let context = json!({"request": {"operation": "CREATE", "object": {
//!     "metadata": {"name": "web", "labels": {"app": "shop"}},
//!     "spec": {"containers": [{"image": "nginx"}, {"image": "ghcr.io/x/y:1"}]}}}});
//! let r = registry();
//! assert_eq!(
//!     substitute_str("{{ request.object.metadata.name }}-{{ to_upper(request.object.metadata.labels.app) }}", &context, r).unwrap(),
//!     json!("web-SHOP"),
//! );
//! let conditions = json!({"any": [{
//!     "key": "{{ request.object.spec.containers[].image | [?starts_with(@, 'ghcr.io')] | length(@) }}",
//!     "operator": "GreaterThan", "value": 0}]});
//! assert!(evaluate_conditions(&conditions, &context, r).unwrap().passed);
//! ```
//!
//! # Functions
//!
//! [`registry`] holds JMESPath's built-ins plus every function of Kyverno's `GetFunctions`
//! (`pkg/engine/jmespath`), with `sum` replaced as Kyverno replaces it: strings (`compare`,
//! `equal_fold`, `replace`, `replace_all`, `to_upper`, `to_lower`, `trim`, `trim_prefix`,
//! `split`, `truncate`, `to_boolean`, `base64_decode`, `base64_encode`,
//! `path_canonicalize`), regular expressions and wildcards (`regex_replace_all`,
//! `regex_replace_all_literal`, `regex_match`, `pattern_match`), `label_match`, arithmetic
//! over numbers, quantities and durations (`add`, `sum`, `subtract`, `multiply`, `divide`,
//! `modulo`, `round`), `semver_compare`, `parse_json`, `parse_yaml`, `lookup`, `items`,
//! `object_from_lists`, `random`, `x509_decode`, the `time_*` functions,
//! `image_normalize`, `is_external_url`, `sha256`, `sha1`, `md5`. See [`functions`] for
//! how errors are worded. [`registry_with`] takes [`Options`]: a fixed clock, a random
//! source and a resolver for tests, Kyverno's default-registry settings.
//!
//! # Substitution
//!
//! [`substitute()`] replaces `{{ ... }}` in the strings and keys of a JSON document as
//! Kyverno's `SubstituteAll` does; see [`substitute`](mod@substitute) for the rules.
//!
//! # Conditions
//!
//! [`evaluate_conditions`] evaluates `any`/`all` condition blocks as Kyverno's
//! `EvaluateConditions` does; see [`conditions`] for the operators and their coercions.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod conditions;
mod duration;
pub mod functions;
mod go;
mod json;
mod quantity;
pub mod substitute;
mod wildcard;

use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, LazyLock};

use celer_jmespath::FunctionRegistry;

pub use conditions::{ConditionError, ConditionResult, evaluate_conditions};
pub use functions::{kyverno_message, parse_rfc3339};
pub use substitute::{Substitution, SubstitutionError, substitute, substitute_str};

/// An instant and the UTC offset it is shown in: what the time functions read and write
/// (a Go `time.Time` in a fixed zone).
pub use functions::GoTime as Time;

/// Where "now" comes from (`time_now`, `time_now_utc`, `time_since` with no end). The offset
/// of the returned time is the zone `time_now` prints in (Kyverno prints the process's
/// local zone, UTC in its containers).
pub type Clock = Arc<dyn Fn() -> Time + Send + Sync>;

/// Where `random` draws its numbers from.
pub type RandomSource = Arc<dyn Fn() -> u64 + Send + Sync>;

/// How `is_external_url` resolves a host name.
pub type Resolver = Arc<dyn Fn(&str) -> Result<Vec<IpAddr>, String> + Send + Sync>;

/// What a registry's functions depend on beyond their arguments.
#[derive(Clone)]
pub struct Options {
    /// "Now".
    pub clock: Clock,
    /// `random`'s numbers.
    pub random: RandomSource,
    /// `is_external_url`'s name resolution.
    pub resolver: Resolver,
    /// Kyverno's `defaultRegistry` (`docker.io`), added by `image_normalize`.
    pub default_registry: String,
    /// Kyverno's `enableDefaultRegistryMutation` (`true`).
    pub enable_default_registry_mutation: bool,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("default_registry", &self.default_registry)
            .field(
                "enable_default_registry_mutation",
                &self.enable_default_registry_mutation,
            )
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            clock: Arc::new(system_now),
            random: Arc::new(system_random),
            resolver: Arc::new(functions::system_resolver),
            default_registry: "docker.io".into(),
            enable_default_registry_mutation: true,
        }
    }
}

impl Options {
    /// These options with a clock that always reads `now`.
    pub fn with_fixed_clock(mut self, now: Time) -> Self {
        self.clock = Arc::new(move || now);
        self
    }

    /// These options with `random` drawing from `source`.
    pub fn with_random(mut self, source: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.random = Arc::new(source);
        self
    }

    /// These options with `is_external_url` resolving through `resolver`.
    pub fn with_resolver(
        mut self,
        resolver: impl Fn(&str) -> Result<Vec<IpAddr>, String> + Send + Sync + 'static,
    ) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }
}

/// The system clock, in UTC.
pub fn system_now() -> Time {
    let now = std::time::SystemTime::now();
    let (secs, nanos) = match now.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Err(_) => (0, 0),
    };
    Time {
        secs,
        nanos,
        offset: 0,
    }
}

/// A xorshift generator seeded from the process's hasher keys and the clock: not for
/// secrets, as Kyverno's `random` is not.
fn system_random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: LazyLock<AtomicU64> = LazyLock::new(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(u64::from(system_now().nanos) ^ system_now().secs.unsigned_abs());
        AtomicU64::new(h.finish() | 1)
    });
    let mut x = STATE.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

static DEFAULT: LazyLock<Arc<FunctionRegistry>> =
    LazyLock::new(|| functions::build(&Options::default()));

/// JMESPath's built-ins and Kyverno's functions with the default [`Options`] (system clock,
/// system resolver, `docker.io`), built once.
pub fn registry() -> &'static Arc<FunctionRegistry> {
    &DEFAULT
}

/// JMESPath's built-ins and Kyverno's functions with these options (a new registry each
/// call: build it once and share it).
pub fn registry_with(options: &Options) -> Arc<FunctionRegistry> {
    functions::build(options)
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use sonic_rs::Value;

    pub(crate) fn eval(expr: &str, data: Value) -> Value {
        registry()
            .compile(expr)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .search(&data)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    pub(crate) fn eval_err(expr: &str, data: Value) -> String {
        let e = registry()
            .compile(expr)
            .unwrap()
            .search(&data)
            .expect_err(expr);
        kyverno_message(&e)
    }

    /// With the clock fixed at an RFC 3339 time.
    pub(crate) fn eval_with(expr: &str, data: Value, now: &str) -> Value {
        let now = functions::parse_rfc3339(now).unwrap();
        let r = registry_with(&Options::default().with_fixed_clock(now));
        r.compile(expr).unwrap().search(&data).unwrap()
    }

    mod properties {
        use proptest::prelude::*;

        use crate::registry;

        const FUNCTIONS: [&str; 45] = [
            "compare",
            "equal_fold",
            "replace",
            "replace_all",
            "to_upper",
            "trim",
            "split",
            "regex_replace_all",
            "regex_match",
            "pattern_match",
            "label_match",
            "to_boolean",
            "add",
            "sum",
            "subtract",
            "multiply",
            "divide",
            "modulo",
            "round",
            "base64_decode",
            "time_since",
            "path_canonicalize",
            "truncate",
            "semver_compare",
            "parse_json",
            "parse_yaml",
            "lookup",
            "items",
            "object_from_lists",
            "random",
            "x509_decode",
            "time_to_cron",
            "time_add",
            "time_parse",
            "time_utc",
            "time_diff",
            "time_before",
            "time_between",
            "time_truncate",
            "image_normalize",
            "sha256",
            "md5",
            "to_lower",
            "trim_prefix",
            "regex_replace_all_literal",
        ];

        fn argument() -> impl Strategy<Value = String> {
            prop_oneof![
                r"[0-9a-zA-Z.:/_*?()\[\]{}|+ -]{0,20}".prop_map(|s| format!("'{s}'")),
                any::<i32>().prop_map(|i| format!("`{i}`")),
                (-1e12f64..1e12).prop_map(|f| format!("`{f}`")),
                Just("`[1, \"2Gi\", \"1h\"]`".to_owned()),
                Just("`{\"a\": 1}`".to_owned()),
                Just("`null`".to_owned()),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4096))]

            #[test]
            fn functions_never_panic(
                f in 0..FUNCTIONS.len(),
                args in prop::collection::vec(argument(), 0..4),
            ) {
                let name = FUNCTIONS.get(f).copied().unwrap_or("add");
                let expr = format!("{name}({})", args.join(", "));
                if let Ok(e) = registry().compile(&expr) {
                    let _ = e.search(&sonic_rs::json!({}));
                }
            }
        }
    }

    #[test]
    fn every_kyverno_function_is_registered() {
        let names = [
            "compare",
            "equal_fold",
            "replace",
            "replace_all",
            "to_upper",
            "to_lower",
            "trim",
            "trim_prefix",
            "split",
            "regex_replace_all",
            "regex_replace_all_literal",
            "regex_match",
            "pattern_match",
            "label_match",
            "to_boolean",
            "add",
            "sum",
            "subtract",
            "multiply",
            "divide",
            "modulo",
            "round",
            "base64_decode",
            "base64_encode",
            "time_since",
            "time_now",
            "time_now_utc",
            "path_canonicalize",
            "truncate",
            "semver_compare",
            "parse_json",
            "parse_yaml",
            "lookup",
            "items",
            "object_from_lists",
            "random",
            "x509_decode",
            "time_to_cron",
            "time_add",
            "time_parse",
            "time_utc",
            "time_diff",
            "time_before",
            "time_after",
            "time_between",
            "time_truncate",
            "image_normalize",
            "is_external_url",
            "sha256",
            "sha1",
            "md5",
        ];
        let r = registry();
        for name in names {
            assert!(r.contains(name), "{name}");
        }
        assert!(!r.is_builtin("sum"));
        assert_eq!(r.names().len(), 26 + names.len() - 1);
    }
}
