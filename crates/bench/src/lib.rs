//! `celer bench`: an open-loop load generator for admission webhooks and the Kubernetes API.
//!
//! Every request has an absolute scheduled send time (`start + i / rate`); a dispatcher hands
//! due requests to at most `max_concurrency` workers, and a request that finds them all busy
//! waits, its queue delay growing: nothing is dropped or rescheduled, so a stalled server shows
//! in the latencies instead of hiding behind a slower client (no coordinated omission).
//!
//! - [`target`]: where requests go (a webhook URL, or the API server of a kubeconfig) and TLS;
//! - [`kubeconfig`]: the fields of a kubeconfig the API mode needs;
//! - [`client`]: HTTP/1.1 keep-alive and HTTP/2 connections (hyper over tokio-rustls);
//! - [`bodies`]: request bodies, from a JSONL file or the built-in Pod generator;
//! - [`mix`]: the authorization mix (reads and writes, as SubjectAccessReviews or API calls);
//! - [`schedule`] and [`run`]: the open-loop phases and the rate sweep;
//! - [`stats`]: HDR histograms and the summaries;
//! - [`cases`]: the correctness phase and the contract's cases;
//! - [`procstat`]: CPU and RSS of a process, from `/proc`;
//! - [`report`] and [`plot`]: the table, the JSON document, the SVG;
//! - [`execute`]: one invocation from its [`execute::Options`] (what the CLI calls).
#![forbid(unsafe_code)]

pub mod bodies;
pub mod cases;
pub mod client;
pub mod execute;
pub mod kubeconfig;
pub mod mix;
pub mod plot;
pub mod procstat;
pub mod report;
pub mod run;
pub mod schedule;
pub mod stats;
pub mod target;

/// Why a bench could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Target(String),
    #[error("kubeconfig {path}: {message}")]
    Kubeconfig {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("TLS: {0}")]
    Tls(String),
    #[error("{path}:{line}: {message}")]
    Input {
        path: std::path::PathBuf,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("plot: {0}")]
    Plot(String),
}

pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>, BenchError> {
    std::fs::read(path).map_err(|source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    })
}
