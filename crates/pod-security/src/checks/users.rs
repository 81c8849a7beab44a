//! Users: runAsNonRoot and runAsUser. Kyverno does not relax either for user-namespace pods.

use super::{Failure, containers_phrase};
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

/// runAsNonRoot 1.0: the pod or every container must set `runAsNonRoot: true`, and none may
/// set it to false.
pub(crate) fn run_as_non_root_1_0(pod: &Pod) -> Option<Failure> {
    let mut setters = Vec::new();
    let mut setter_errors = Vec::new();
    let mut pod_non_root = false;
    match pod.security.as_ref().and_then(|s| s.run_as_non_root) {
        Some(false) => {
            setters.push("pod".to_string());
            setter_errors.push(FieldError::forbidden(
                "spec.securityContext.runAsNonRoot",
                BadValue::Bool(false),
            ));
        }
        Some(true) => pod_non_root = true,
        None => {}
    }
    let mut explicit = Vec::new();
    let mut explicit_errors = Vec::new();
    let mut implicit = Vec::new();
    let mut implicit_errors = Vec::new();
    for c in &pod.containers {
        let path = format!("{}.securityContext.runAsNonRoot", c.path);
        match c.security.as_ref().and_then(|s| s.run_as_non_root) {
            Some(false) => {
                explicit.push(c.name.clone());
                explicit_errors.push(FieldError::forbidden(path, BadValue::Bool(false)));
            }
            Some(true) => {}
            None if !pod_non_root => {
                implicit.push(c.name.clone());
                implicit_errors.push(FieldError::required(path));
            }
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
        setter_errors.extend(explicit_errors);
    }
    let mut details = Vec::new();
    if !setters.is_empty() {
        details.push(format!(
            "{} must not set securityContext.runAsNonRoot=false",
            setters.join(" and ")
        ));
    }
    if !implicit.is_empty() {
        details.push(format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&implicit)
        ));
    }
    if details.is_empty() {
        return None;
    }
    setter_errors.extend(implicit_errors);
    Some(Failure {
        reason: "runAsNonRoot != true".to_string(),
        detail: details.join("\n"),
        errors: setter_errors,
    })
}

/// runAsUser 1.23: neither the pod nor a container may set `runAsUser: 0`.
pub(crate) fn run_as_user_1_23(pod: &Pod) -> Option<Failure> {
    let mut setters = Vec::new();
    let mut errors = Vec::new();
    if pod.security.as_ref().and_then(|s| s.run_as_user) == Some(0) {
        setters.push("pod".to_string());
        errors.push(FieldError::forbidden(
            "spec.securityContext.runAsUser",
            BadValue::Int(0),
        ));
    }
    let mut names = Vec::new();
    for c in &pod.containers {
        if c.security.as_ref().and_then(|s| s.run_as_user) == Some(0) {
            names.push(c.name.clone());
            errors.push(FieldError::forbidden(
                format!("{}.securityContext.runAsUser", c.path),
                BadValue::Int(0),
            ));
        }
    }
    if !names.is_empty() {
        setters.push(containers_phrase(&names));
    }
    (!setters.is_empty()).then(|| Failure {
        reason: "runAsUser=0".to_string(),
        detail: format!("{} must not set runAsUser=0", setters.join(" and ")),
        errors,
    })
}
