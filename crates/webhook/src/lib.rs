//! celer's admission webhook server: the routes ([`router`]), the policies it serves
//! ([`policies`], with the embedded defaults of [`embedded`]), metrics, TLS, hot reload and
//! graceful shutdown ([`server`]). It logs through `tracing` and never installs a subscriber.
#![forbid(unsafe_code)]

pub mod body;
pub mod embedded;
pub mod feed;
pub mod inline;
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

thread_local! {
    /// Whether this thread is one of [`runtime`]'s, with [`THREAD_STACK`]: requests are only
    /// evaluated on an I/O thread that has it (a runtime driven from another thread's
    /// `block_on` runs its root future on that thread's stack).
    static ON_LARGE_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the current thread has the stack evaluation needs (see [`THREAD_STACK`]).
pub(crate) fn on_large_stack() -> bool {
    ON_LARGE_STACK.get()
}

/// I/O threads `celer serve` starts by default. One costs least per request: with two, tokio
/// wakes the idle one for requests it then has nothing to do for (work-stealing
/// notifications): 167-177 µs of CPU per small review at 400/s against 142-157 µs with one
/// (`e2e/serve-cpu.sh`, docs/benchmarks.md). Large requests and slow policy sets are
/// evaluated on the blocking pool whatever the count.
pub const DEFAULT_IO_THREADS: usize = 1;

/// [`runtime_with`] with [`DEFAULT_IO_THREADS`].
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    runtime_with(DEFAULT_IO_THREADS)
}

/// A multi-threaded tokio runtime with `io_threads` workers and the stacks evaluation needs.
pub fn runtime_with(io_threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(io_threads.max(1))
        .enable_all()
        .thread_name("celer-webhook")
        .thread_stack_size(THREAD_STACK)
        .on_thread_start(|| ON_LARGE_STACK.set(true))
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
}

/// The policy set is shared across threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<celer_policy::policy_set::PolicySet>();
    shared::<router::State>();
};
