#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

#[test]
fn group_version_resources() {
    let core = Gvr::new("v1", "pods");
    assert_eq!((core.group.as_str(), core.version.as_str()), ("", "v1"));
    assert_eq!(core.api_version(), "v1");
    let apps = Gvr::new("apps/v1", "deployments");
    assert_eq!(apps.group, "apps");
    assert_eq!(apps.api_version(), "apps/v1");
    assert!(apps.equals(&Gvr::new("apps/v1", "deployments")));
    assert!(!apps.equals(&core));
}

#[test]
fn failures_keep_kyverno_words() {
    let e = failure(
        "resource.Get",
        "failed to get resource",
        ContextError::Forbidden("no".into()),
    );
    assert_eq!(e.message(), "failed to get resource: permission denied: no");
    let e = failure("http.Get", "request failed", ContextError::Unsupported);
    assert!(e.message().starts_with("http.Get: no context was supplied"));
}
