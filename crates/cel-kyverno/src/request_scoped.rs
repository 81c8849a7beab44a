//! One request's view of a [`KyvernoContext`]: a read made by several policies (or several
//! times by one) while the same admission request is decided is made once, and its answer,
//! or its error, given to every caller. Reads only: `resource.Get`, `resource.List`,
//! `resource.ToGVR`, `http.Get` and `image.GetMetadata`; `resource.Post` and `http.Post`
//! (which may change something) and `globalContext.Get` (already in memory) always go
//! through.

use std::collections::HashMap;
use std::sync::Arc;

use celer_cel::time::Timestamp;
use celer_cel::value::Json;
use parking_lot::Mutex;

use crate::context::{ContextError, Gvr, HttpRequest, KyvernoContext};

type Answer<T> = Result<T, ContextError>;

/// The reads of one request, by what was asked (its arguments joined by newlines, which no
/// Kubernetes name or version contains: one allocation per lookup).
#[derive(Debug, Default)]
struct Reads {
    get: HashMap<String, Answer<Option<Json>>>,
    list: HashMap<String, Answer<Vec<Json>>>,
    gvr: HashMap<String, Answer<Gvr>>,
    http: HashMap<String, Answer<Json>>,
    image: HashMap<String, Answer<Json>>,
}

/// A context whose reads are made once per request; made per request, dropped with it.
#[derive(Debug)]
pub struct RequestScoped {
    inner: Arc<dyn KyvernoContext>,
    reads: Mutex<Reads>,
}

impl RequestScoped {
    pub fn new(inner: Arc<dyn KyvernoContext>) -> RequestScoped {
        RequestScoped {
            inner,
            reads: Mutex::new(Reads::default()),
        }
    }
}

/// The answer kept under `key` in the map `pick` chooses, else `read`'s, kept. The lock is
/// not held while reading, so a slow read does not hold up another policy's different one.
fn once<K, T>(
    reads: &Mutex<Reads>,
    pick: impl Fn(&mut Reads) -> &mut HashMap<K, Answer<T>>,
    key: K,
    read: impl FnOnce() -> Answer<T>,
) -> Answer<T>
where
    K: std::hash::Hash + Eq,
    T: Clone,
{
    if let Some(answer) = pick(&mut reads.lock()).get(&key) {
        return answer.clone();
    }
    let answer = read();
    pick(&mut reads.lock()).insert(key, answer.clone());
    answer
}

impl KyvernoContext for RequestScoped {
    /// Generation is a write: it always goes through.
    fn generate(&self, namespace: &str, objects: Vec<Json>) -> Result<(), ContextError> {
        self.inner.generate(namespace, objects)
    }

    fn get_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Json>, ContextError> {
        let key = format!("{api_version}\n{resource}\n{namespace}\n{name}");
        once(
            &self.reads,
            |r| &mut r.get,
            key,
            || {
                self.inner
                    .get_resource(api_version, resource, namespace, name)
            },
        )
    }

    fn list_resources(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        labels: &[(String, String)],
    ) -> Result<Vec<Json>, ContextError> {
        let key = format!("{api_version}\n{resource}\n{namespace}\n{labels:?}");
        once(
            &self.reads,
            |r| &mut r.list,
            key,
            || {
                self.inner
                    .list_resources(api_version, resource, namespace, labels)
            },
        )
    }

    fn post_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        body: &Json,
    ) -> Result<Json, ContextError> {
        self.inner
            .post_resource(api_version, resource, namespace, body)
    }

    fn to_gvr(&self, api_version: &str, kind: &str) -> Result<Gvr, ContextError> {
        let key = format!("{api_version}\n{kind}");
        once(
            &self.reads,
            |r| &mut r.gvr,
            key,
            || self.inner.to_gvr(api_version, kind),
        )
    }

    fn http(&self, request: &HttpRequest) -> Result<Json, ContextError> {
        if request.method != "GET" || request.body.is_some() {
            return self.inner.http(request);
        }
        let key = format!(
            "{}\n{:?}\n{:?}\n{:?}",
            request.url, request.headers, request.ca_bundle, request.namespace
        );
        once(
            &self.reads,
            |r| &mut r.http,
            key,
            || self.inner.http(request),
        )
    }

    fn global_context(&self, name: &str, projection: &str) -> Result<Option<Json>, ContextError> {
        self.inner.global_context(name, projection)
    }

    fn image_metadata(&self, image: &str) -> Result<Json, ContextError> {
        once(
            &self.reads,
            |r| &mut r.image,
            image.to_string(),
            || self.inner.image_metadata(image),
        )
    }

    fn now(&self) -> Option<Timestamp> {
        self.inner.now()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts the reads that reach it.
    #[derive(Debug, Default)]
    struct Counting(AtomicUsize);

    impl KyvernoContext for Counting {
        fn get_resource(&self, _: &str, _: &str, _: &str, name: &str) -> Answer<Option<Json>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            match name {
                "missing" => Ok(None),
                "broken" => Err(ContextError::Other("timed out".to_string())),
                _ => Ok(Some(Json::from(name))),
            }
        }
        fn post_resource(&self, _: &str, _: &str, _: &str, body: &Json) -> Answer<Json> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(body.clone())
        }
        fn http(&self, request: &HttpRequest) -> Answer<Json> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Json::from(request.url.as_str()))
        }
    }

    #[test]
    fn reads_are_made_once_per_request_and_writes_always() {
        let inner = Arc::new(Counting::default());
        let scoped = RequestScoped::new(inner.clone());
        let calls = || inner.0.load(Ordering::SeqCst);
        for _ in 0..3 {
            assert_eq!(
                scoped.get_resource("v1", "configmaps", "a", "x"),
                Ok(Some(Json::from("x")))
            );
            assert_eq!(
                scoped.get_resource("v1", "configmaps", "a", "missing"),
                Ok(None)
            );
            // An error is the answer for the request too: a slow read is not waited for twice.
            assert!(
                scoped
                    .get_resource("v1", "configmaps", "a", "broken")
                    .is_err()
            );
        }
        assert_eq!(calls(), 3);
        assert!(scoped.get_resource("v1", "configmaps", "b", "x").is_ok());
        assert_eq!(calls(), 4);
        let get = HttpRequest::new("GET", "http://svc.ns.svc/a".to_string());
        let post = HttpRequest::new("POST", "http://svc.ns.svc/a".to_string());
        for _ in 0..2 {
            scoped.http(&get).unwrap();
            scoped.http(&post).unwrap();
            scoped
                .post_resource("v1", "configmaps", "a", &Json::from("o"))
                .unwrap();
        }
        // One GET, two POSTs, two resource.Posts.
        assert_eq!(calls(), 4 + 1 + 2 + 2);
        // Another request starts afresh.
        let next = RequestScoped::new(inner.clone());
        next.get_resource("v1", "configmaps", "a", "x").unwrap();
        assert_eq!(calls(), 10);
    }
}
