//! Matching cost per request: time per `MatchConstraints::matches` call and the allocations it
//! makes (there must be none).
//!
//! ```text
//! cargo bench -p celer-policy --bench matching            # timings
//! cargo bench -p celer-policy --bench matching -- --quick # fewer iterations
//! ```
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it only checks outcomes and that
//! no call allocates, and exits non-zero otherwise.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use celer_cel::Json;
use celer_policy::attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation};
use celer_policy::lookup::LookupError;
use celer_policy::matching::{EquivalentResources, MatchConstraints, Owner};
use celer_policy::model::MatchResources;

/// Counts heap allocations.
///
/// Why `unsafe`: a global allocator must implement the `unsafe` trait `GlobalAlloc`, and
/// forwarding to `System` calls its `unsafe` methods. This module only forwards every call
/// unchanged to `System` and bumps a relaxed atomic counter; it adds no other unsafety. It
/// lives in this bench binary only.
#[allow(
    unsafe_code,
    reason = "a counting global allocator; see the module documentation"
)]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, Ordering};

    static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

    pub struct Counting;

    // SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
    // `GlobalAlloc` contract; counting has no effect on the memory returned.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller's `layout` obligations pass straight through to `System`.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: as for `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation is).
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: as for `dealloc`; `new_size` obligations pass through to `System`.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    pub fn allocations() -> u64 {
        ALLOCATIONS.load(Ordering::Relaxed)
    }
}

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

struct Case {
    name: &'static str,
    constraints: &'static str,
    owner: Owner,
    gvr: (&'static str, &'static str, &'static str),
    kind: &'static str,
    sub: &'static str,
    op: Operation,
    namespace: &'static str,
    object: Option<&'static str>,
    matches: bool,
}

const POD: &str = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "prod",
  "labels": {"app": "web", "tier": "frontend", "team": "a", "env": "prod"}},
  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}"#;
const NAMESPACE: &str = r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod", "kubernetes.io/metadata.name": "prod"}}}"#;

const CASES: &[Case] = &[
    Case {
        name: "pods rule, selectors on object and namespace",
        constraints: "namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod, staging]}]}\n\
                      objectSelector: {matchLabels: {app: web}, matchExpressions: [{key: skip, operator: DoesNotExist}]}\n\
                      resourceRules:\n- {operations: [CREATE, UPDATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}\n",
        owner: Owner::ValidatingPolicy,
        gvr: ("", "v1", "pods"),
        kind: "Pod",
        sub: "",
        op: Operation::Create,
        namespace: "prod",
        object: Some(POD),
        matches: true,
    },
    Case {
        name: "wildcard rule with exclusions, a miss",
        constraints: "resourceRules:\n- {operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}\n\
                      excludeResourceRules:\n- {operations: ['*'], apiGroups: [''], apiVersions: ['*'], resources: [pods, configmaps]}\n",
        owner: Owner::ValidatingPolicy,
        gvr: ("", "v1", "pods"),
        kind: "Pod",
        sub: "",
        op: Operation::Create,
        namespace: "prod",
        object: Some(POD),
        matches: false,
    },
    Case {
        name: "HPA v1 request, v2 rule: equivalent match",
        constraints: "resourceRules:\n- {operations: ['*'], apiGroups: [autoscaling], apiVersions: [v2], resources: [horizontalpodautoscalers]}\n",
        owner: Owner::ValidatingPolicy,
        gvr: ("autoscaling", "v1", "horizontalpodautoscalers"),
        kind: "HorizontalPodAutoscaler",
        sub: "",
        op: Operation::Update,
        namespace: "prod",
        object: None,
        matches: true,
    },
    Case {
        name: "rule for another resource, equivalents tried",
        constraints: "resourceRules:\n- {operations: ['*'], apiGroups: [apps], apiVersions: [v1], resources: [deployments, deployments/scale]}\n",
        owner: Owner::ValidatingPolicy,
        gvr: ("", "v1", "events"),
        kind: "Event",
        sub: "",
        op: Operation::Create,
        namespace: "prod",
        object: None,
        matches: false,
    },
    Case {
        name: "binding without rules, namespace selector",
        constraints: "namespaceSelector: {matchLabels: {env: prod}}\n",
        owner: Owner::ValidatingBinding,
        gvr: ("apps", "v1", "deployments"),
        kind: "Scale",
        sub: "scale",
        op: Operation::Update,
        namespace: "prod",
        object: None,
        matches: true,
    },
];

fn attrs<'a>(case: &'a Case, object: Option<&'a Json>) -> Attributes<'a> {
    Attributes {
        kind: GroupVersionKind {
            group: case.gvr.0,
            version: case.gvr.1,
            kind: case.kind,
        },
        resource: GroupVersionResource {
            group: case.gvr.0,
            version: case.gvr.1,
            resource: case.gvr.2,
        },
        sub_resource: case.sub,
        operation: case.op,
        name: "web",
        namespace: case.namespace,
        object,
        old_object: None,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let iterations: u32 = if args.iter().any(|a| a == "--quick") {
        200_000
    } else {
        2_000_000
    };
    let equivalents = EquivalentResources::builtin_latest();
    let namespace: Arc<Json> = match sonic_rs::from_str(NAMESPACE) {
        Ok(ns) => Arc::new(ns),
        Err(e) => {
            eprintln!("namespace: {e}");
            return ExitCode::FAILURE;
        }
    };
    let lookup = || -> Result<Option<Arc<Json>>, LookupError> { Ok(Some(namespace.clone())) };
    let mut ok = true;
    for case in CASES {
        let resources: MatchResources = match serde_yaml_ng::from_str(case.constraints) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}: {e}", case.name);
                return ExitCode::FAILURE;
            }
        };
        let constraints = match MatchConstraints::compile(Some(&resources), case.owner, "spec") {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{}: {e}", case.name);
                return ExitCode::FAILURE;
            }
        };
        let object: Option<Json> = case.object.and_then(|o| sonic_rs::from_str(o).ok());
        let a = attrs(case, object.as_ref());
        let run = || {
            matches!(
                constraints.matches(black_box(&a), &equivalents, &lookup),
                Ok(Some(_))
            )
        };
        if run() != case.matches {
            eprintln!("{}: expected matches = {}", case.name, case.matches);
            ok = false;
        }
        let before = counting::allocations();
        for _ in 0..1000 {
            black_box(run());
        }
        let allocations = counting::allocations() - before;
        if allocations != 0 {
            eprintln!("{}: {allocations} allocations in 1000 matches", case.name);
            ok = false;
        }
        if bench {
            let start = Instant::now();
            for _ in 0..iterations {
                black_box(run());
            }
            let per = start.elapsed().as_nanos() as f64 / f64::from(iterations);
            println!("{:<50} {per:>7.1} ns/match  0 allocations", case.name);
        }
    }
    if ok {
        if !bench {
            println!("matching: outcomes as expected, no allocations");
        }
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
