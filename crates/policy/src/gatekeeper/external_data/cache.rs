//! Answers kept between requests, as Gatekeeper's provider cache keeps them: by provider and
//! key, for a fixed time (Gatekeeper's default, 3 minutes), and only the values of answers
//! the provider marked idempotent (an error is never kept). Bounded: when full, expired
//! entries go first, then everything.

use std::time::{Duration, Instant};

use celer_cel::Json;
use hashbrown::HashMap;
use parking_lot::Mutex;

/// How long an answer is reused.
pub const TTL: Duration = Duration::from_secs(180);

/// The most entries kept.
pub const CAPACITY: usize = 10_000;

/// Values by (provider fingerprint, key), each with when it was fetched.
pub struct ResponseCache {
    entries: Mutex<HashMap<(u64, String), (Instant, Json)>>,
    ttl: Duration,
    capacity: usize,
}

impl ResponseCache {
    pub fn new(ttl: Duration, capacity: usize) -> ResponseCache {
        ResponseCache {
            entries: Mutex::new(HashMap::new()),
            ttl,
            capacity,
        }
    }

    /// The value fetched for `key` less than the TTL before `now`.
    pub fn get(&self, provider: u64, key: &str, now: Instant) -> Option<Json> {
        let mut entries = self.entries.lock();
        let k = (provider, key.to_string());
        match entries.get(&k) {
            Some((at, value)) if now.saturating_duration_since(*at) < self.ttl => {
                Some(value.clone())
            }
            Some(_) => {
                entries.remove(&k);
                None
            }
            None => None,
        }
    }

    pub fn insert(&self, provider: u64, key: String, value: Json, now: Instant) {
        let mut entries = self.entries.lock();
        if entries.len() >= self.capacity {
            let ttl = self.ttl;
            entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < ttl);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert((provider, key), (now, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_the_ttl_and_the_cache_stays_bounded() {
        let cache = ResponseCache::new(Duration::from_secs(10), 2);
        let t0 = Instant::now();
        cache.insert(1, "a".to_string(), Json::from("A"), t0);
        assert_eq!(
            cache.get(1, "a", t0 + Duration::from_secs(9)),
            Some(Json::from("A"))
        );
        // Another provider's fingerprint does not see it.
        assert_eq!(cache.get(2, "a", t0), None);
        assert_eq!(cache.get(1, "a", t0 + Duration::from_secs(10)), None);
        cache.insert(1, "b".to_string(), Json::from("B"), t0);
        cache.insert(1, "c".to_string(), Json::from("C"), t0);
        cache.insert(1, "d".to_string(), Json::from("D"), t0);
        assert!(cache.entries.lock().len() <= 2);
        assert_eq!(cache.get(1, "d", t0), Some(Json::from("D")));
    }
}
