//! Windows: HostProcess containers.

use super::{Failure, containers_phrase};
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

/// windowsHostProcess 1.0: neither the pod nor a container may set `hostProcess: true`.
pub(crate) fn host_process_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut container_errors = Vec::new();
    for c in &pod.containers {
        if c.security.as_ref().and_then(|s| s.host_process) == Some(true) {
            names.push(c.name.clone());
            container_errors.push(FieldError::forbidden(
                format!("{}.securityContext.windowsOptions.hostProcess", c.path),
                BadValue::Bool(true),
            ));
        }
    }
    let mut setters = Vec::new();
    let mut errors = Vec::new();
    if pod.security.as_ref().and_then(|s| s.host_process) == Some(true) {
        setters.push("pod".to_string());
        errors.push(FieldError::forbidden(
            "spec.securityContext.windowsOptions.hostProcess",
            BadValue::Bool(true),
        ));
    }
    if !names.is_empty() {
        setters.push(containers_phrase(&names));
        errors.extend(container_errors);
    }
    (!setters.is_empty()).then(|| Failure {
        reason: "hostProcess".to_string(),
        detail: format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
        errors,
    })
}
