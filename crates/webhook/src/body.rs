//! Reading a request body under its own budget, before any evaluation permit is taken.
//!
//! A body is read by one *reader*: readers at once are bounded ([`BodyBudget::readers`]), and
//! so are the bytes of every body being read or waiting for evaluation ([`BodyBudget::bytes`],
//! taken as the bytes arrive, not as `Content-Length` announces them). Each body must arrive
//! within a total time and keep a minimum rate: after a grace period, the bytes received must
//! stay at or above `min_rate` bytes per second of the time elapsed past the grace period. A
//! client that sends one byte a second is cut off a little after the grace period; it never
//! holds an evaluation permit, so requests whose body is complete keep being evaluated.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Body;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// What limits the reading of one body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// Largest body accepted.
    pub max_body: usize,
    /// Time allowed for the whole body once the headers are in.
    pub total: Duration,
    /// Bytes per second a body must keep after `grace` (0: no minimum).
    pub min_rate: u64,
    /// Time before the minimum rate applies.
    pub grace: Duration,
}

/// The budget shared by every body being read.
#[derive(Debug)]
pub struct BodyBudget {
    readers: Arc<Semaphore>,
    bytes: Arc<Semaphore>,
    max_readers: usize,
    max_bytes: usize,
}

impl BodyBudget {
    /// `max_readers` bodies read at once; `max_bytes` of body held at once (raised to
    /// `max_body` so one largest body always fits).
    pub fn new(max_readers: usize, max_bytes: usize, max_body: usize) -> BodyBudget {
        let max_readers = max_readers.clamp(1, Semaphore::MAX_PERMITS);
        let max_bytes = max_bytes.max(max_body).clamp(1, Semaphore::MAX_PERMITS);
        BodyBudget {
            readers: Arc::new(Semaphore::new(max_readers)),
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_readers,
            max_bytes,
        }
    }

    /// Bodies that could start being read now.
    pub fn readers_available(&self) -> usize {
        self.readers.available_permits()
    }

    /// Body bytes that could be taken now.
    pub fn bytes_available(&self) -> usize {
        self.bytes.available_permits()
    }

    pub fn max_readers(&self) -> usize {
        self.max_readers
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
}

/// A complete body. Its bytes stay counted in the budget until it is dropped.
#[derive(Debug)]
pub struct ReadBody {
    pub bytes: Vec<u8>,
    _held: Option<OwnedSemaphorePermit>,
}

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("request body is larger than the limit of {max} bytes")]
    TooLarge { max: usize },
    #[error(
        "request body too slow: {received} bytes in {elapsed:?}, below the minimum of {min_rate} bytes/s"
    )]
    TooSlow {
        received: usize,
        elapsed: Duration,
        min_rate: u64,
    },
    #[error("request body not received within {0:?}")]
    Timeout(Duration),
    #[error("too many request bodies being read at once ({0}), retry later")]
    Readers(usize),
    #[error("request bodies in memory at their limit ({0} bytes), retry later")]
    Bytes(usize),
    #[error("could not read the request body: {0}")]
    Read(String),
}

/// Reads `body` whole within `limits`, its bytes counted in `budget`. `declared` is the
/// `Content-Length`, used only to size the buffer (up to 64 KiB ahead of the bytes).
pub async fn read<B>(
    body: B,
    declared: Option<u64>,
    limits: BodyLimits,
    budget: &BodyBudget,
) -> Result<ReadBody, BodyError>
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let start = Instant::now();
    let Ok(_reader) = Arc::clone(&budget.readers).try_acquire_owned() else {
        return Err(BodyError::Readers(budget.max_readers));
    };
    let total_deadline = start + limits.total;
    let ahead = declared
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
        .min(64 * 1024)
        .min(limits.max_body);
    let mut buffer = Vec::with_capacity(ahead);
    let mut held: Option<OwnedSemaphorePermit> = None;
    let mut body = std::pin::pin!(body);
    loop {
        let rate_deadline = rate_deadline(start, buffer.len(), limits);
        let deadline = rate_deadline.map_or(total_deadline, |r| r.min(total_deadline));
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => return Err(BodyError::Read(e.to_string())),
            Ok(None) => break,
            Err(_) => return Err(late(start, buffer.len(), deadline, total_deadline, limits)),
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if data.is_empty() {
            continue;
        }
        if buffer.len().saturating_add(data.len()) > limits.max_body {
            return Err(BodyError::TooLarge {
                max: limits.max_body,
            });
        }
        let Ok(n) = u32::try_from(data.len()) else {
            return Err(BodyError::TooLarge {
                max: limits.max_body,
            });
        };
        let bytes = Arc::clone(&budget.bytes);
        let permit = match tokio::time::timeout_at(deadline, bytes.acquire_many_owned(n)).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) | Err(_) => return Err(BodyError::Bytes(budget.max_bytes)),
        };
        match held.as_mut() {
            Some(h) => h.merge(permit),
            None => held = Some(permit),
        }
        buffer.extend_from_slice(&data);
    }
    Ok(ReadBody {
        bytes: buffer,
        _held: held,
    })
}

/// When the bytes received so far stop meeting the minimum rate, if there is one.
fn rate_deadline(start: Instant, received: usize, limits: BodyLimits) -> Option<Instant> {
    if limits.min_rate == 0 {
        return None;
    }
    let received = u64::try_from(received).unwrap_or(u64::MAX);
    let millis = received.saturating_mul(1000) / limits.min_rate;
    let allowed = limits.grace.saturating_add(Duration::from_millis(millis));
    start.checked_add(allowed)
}

fn late(
    start: Instant,
    received: usize,
    deadline: Instant,
    total_deadline: Instant,
    limits: BodyLimits,
) -> BodyError {
    if deadline >= total_deadline {
        BodyError::Timeout(limits.total)
    } else {
        BodyError::TooSlow {
            received,
            elapsed: start.elapsed(),
            min_rate: limits.min_rate,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use http_body_util::Full;
    use hyper::body::Frame;

    fn limits() -> BodyLimits {
        BodyLimits {
            max_body: 1024,
            total: Duration::from_secs(5),
            min_rate: 100,
            grace: Duration::from_millis(200),
        }
    }

    #[tokio::test]
    async fn a_whole_body_is_read_and_its_bytes_held_until_dropped() {
        let budget = BodyBudget::new(4, 2048, 1024);
        let read = read(
            Full::new(Bytes::from_static(b"hello")),
            Some(5),
            limits(),
            &budget,
        )
        .await
        .unwrap();
        assert_eq!(read.bytes, b"hello");
        assert_eq!(budget.bytes_available(), 2043);
        assert_eq!(budget.readers_available(), 4);
        drop(read);
        assert_eq!(budget.bytes_available(), 2048);
    }

    #[tokio::test]
    async fn too_large_and_no_readers_left_are_refused() {
        let budget = BodyBudget::new(1, 2048, 1024);
        let big = Full::new(Bytes::from(vec![b'x'; 2000]));
        assert_eq!(
            read(big, None, limits(), &budget).await.unwrap_err(),
            BodyError::TooLarge { max: 1024 }
        );
        let _reader = Arc::clone(&budget.readers).try_acquire_owned().unwrap();
        let small = Full::new(Bytes::from_static(b"x"));
        assert_eq!(
            read(small, None, limits(), &budget).await.unwrap_err(),
            BodyError::Readers(1)
        );
    }

    #[tokio::test]
    async fn a_body_below_the_minimum_rate_is_cut_after_the_grace_period() {
        let budget = BodyBudget::new(4, 2048, 1024);
        // One byte a second, where 100 bytes a second are asked for.
        let stream = futures_stream(|i| (i < 100).then(|| Bytes::from_static(b"x")));
        let started = Instant::now();
        let err = read(stream, Some(100), limits(), &budget)
            .await
            .unwrap_err();
        assert!(matches!(err, BodyError::TooSlow { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(budget.bytes_available(), 2048);
        assert_eq!(budget.readers_available(), 4);
    }

    /// A body of chunks produced one a second by `next` (until it answers `None`).
    fn futures_stream(
        next: impl FnMut(usize) -> Option<Bytes> + Send + Unpin + 'static,
    ) -> impl Body<Data = Bytes, Error = std::convert::Infallible> {
        struct Slow<F> {
            next: F,
            i: usize,
            sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
        }
        impl<F: FnMut(usize) -> Option<Bytes> + Unpin> Body for Slow<F> {
            type Data = Bytes;
            type Error = std::convert::Infallible;
            fn poll_frame(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
                use std::future::Future;
                if self.sleep.as_mut().poll(cx).is_pending() {
                    return std::task::Poll::Pending;
                }
                let i = self.i;
                self.i += 1;
                let deadline = Instant::now() + Duration::from_secs(1);
                self.sleep.as_mut().reset(deadline);
                std::task::Poll::Ready((self.next)(i).map(|b| Ok(Frame::data(b))))
            }
        }
        Slow {
            next,
            i: 0,
            sleep: Box::pin(tokio::time::sleep(Duration::ZERO)),
        }
    }
}
