//! celer's admission webhook server: the routes ([`router`]), the policies it serves
//! ([`policies`], with the embedded defaults of [`embedded`]), metrics, TLS, hot reload and
//! graceful shutdown ([`server`]). It logs through `tracing` and never installs a subscriber.
#![forbid(unsafe_code)]

pub mod body;
pub mod embedded;
pub mod feed;
pub mod lookup;
pub mod metrics;
pub mod policies;
pub mod router;
pub mod server;
pub mod tls;

/// Stack size of the runtime's threads, the blocking pool's included (where requests are
/// parsed and evaluated). sonic-rs parses recursively and, in debug builds, uses tens of KB of
/// stack per nesting level; the evaluator recurses over nested values too. Only the pages
/// actually touched are committed.
pub const THREAD_STACK: usize = 64 << 20;

/// Most blocking threads (evaluations at once beyond the workers).
pub const MAX_BLOCKING_THREADS: usize = 64;

/// A multi-threaded tokio runtime with the stacks evaluation needs.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("celer-webhook")
        .thread_stack_size(THREAD_STACK)
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
}

/// The policy set is shared across threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<celer_policy::policy_set::PolicySet>();
    shared::<router::State>();
};
