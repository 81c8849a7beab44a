//! Privilege: privileged containers, privilege escalation, Linux capabilities.

use std::collections::BTreeSet;

use super::{Failure, containers_phrase, join_quote, sorted};
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

/// privileged 1.0: no container may set `privileged: true`.
pub(crate) fn privileged_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        if c.security.as_ref().and_then(|s| s.privileged) == Some(true) {
            names.push(c.name.clone());
            errors.push(FieldError::forbidden(
                format!("{}.securityContext.privileged", c.path),
                BadValue::Bool(true),
            ));
        }
    }
    (!names.is_empty()).then(|| Failure {
        reason: "privileged".to_string(),
        detail: format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&names)
        ),
        errors,
    })
}

/// allowPrivilegeEscalation 1.8: every container must set it to false.
pub(crate) fn allow_privilege_escalation_1_8(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        let path = format!("{}.securityContext.allowPrivilegeEscalation", c.path);
        let error = match &c.security {
            None => FieldError::required(path),
            // The fork reports an unset value as the string "nil".
            Some(s) => match s.allow_privilege_escalation {
                None => FieldError::forbidden(path, BadValue::String("nil".to_string())),
                Some(true) => FieldError::forbidden(path, BadValue::Bool(true)),
                Some(false) => continue,
            },
        };
        names.push(c.name.clone());
        errors.push(error);
    }
    (!names.is_empty()).then(|| Failure {
        reason: "allowPrivilegeEscalation != false".to_string(),
        detail: format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&names)
        ),
        errors,
    })
}

/// allowPrivilegeEscalation 1.25: as 1.8, but Windows pods are exempt.
pub(crate) fn allow_privilege_escalation_1_25(pod: &Pod) -> Option<Failure> {
    if pod.windows {
        return None;
    }
    allow_privilege_escalation_1_8(pod)
}

/// The capabilities a container runtime grants by default.
const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// capabilities_baseline 1.0: `capabilities.add` may only hold default capabilities.
pub(crate) fn capabilities_baseline_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut all_bad = BTreeSet::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        let Some(caps) = c.security.as_ref().and_then(|s| s.capabilities.as_ref()) else {
            continue;
        };
        let bad: BTreeSet<String> = caps
            .add
            .iter()
            .filter(|cap| !DEFAULT_CAPABILITIES.contains(&cap.as_str()))
            .cloned()
            .collect();
        if bad.is_empty() {
            continue;
        }
        names.push(c.name.clone());
        all_bad.extend(bad.iter().cloned());
        errors.push(FieldError::forbidden(
            format!("{}.securityContext.capabilities.add", c.path),
            BadValue::Strings(sorted(&bad)),
        ));
    }
    (!names.is_empty()).then(|| Failure {
        reason: "non-default capabilities".to_string(),
        detail: format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&names),
            join_quote(&sorted(&all_bad))
        ),
        errors,
    })
}

/// capabilities_restricted 1.22: drop must include ALL; add may only hold NET_BIND_SERVICE.
pub(crate) fn capabilities_restricted_1_22(pod: &Pod) -> Option<Failure> {
    let mut missing_drop = Vec::new();
    let mut missing_drop_errors = Vec::new();
    let mut adding = Vec::new();
    let mut adding_errors = Vec::new();
    let mut all_added = BTreeSet::new();
    for c in &pod.containers {
        let drop_path = format!("{}.securityContext.capabilities.drop", c.path);
        let Some(caps) = c.security.as_ref().and_then(|s| s.capabilities.as_ref()) else {
            missing_drop.push(c.name.clone());
            missing_drop_errors.push(FieldError::required(drop_path));
            continue;
        };
        if !caps.drop.iter().any(|d| d == "ALL") {
            missing_drop.push(c.name.clone());
            missing_drop_errors.push(if caps.drop.is_empty() {
                FieldError::required(drop_path)
            } else {
                let dropped: BTreeSet<String> = caps.drop.iter().cloned().collect();
                FieldError::forbidden(drop_path, BadValue::Strings(sorted(&dropped)))
            });
        }
        let added: BTreeSet<String> = caps
            .add
            .iter()
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .cloned()
            .collect();
        if !added.is_empty() {
            adding.push(c.name.clone());
            all_added.extend(added.iter().cloned());
            adding_errors.push(FieldError::forbidden(
                format!("{}.securityContext.capabilities.add", c.path),
                BadValue::Strings(sorted(&added)),
            ));
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&sorted(&all_added))
        ));
    }
    if details.is_empty() {
        return None;
    }
    missing_drop_errors.extend(adding_errors);
    Some(Failure {
        reason: "unrestricted capabilities".to_string(),
        detail: details.join("; "),
        errors: missing_drop_errors,
    })
}

/// capabilities_restricted 1.25: as 1.22, but Windows pods are exempt.
pub(crate) fn capabilities_restricted_1_25(pod: &Pod) -> Option<Failure> {
    if pod.windows {
        return None;
    }
    capabilities_restricted_1_22(pod)
}
