//! Sysctls: only the namespaced, safe set, which grew over releases.

use super::Failure;
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

const ALLOWED_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const ADDED_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const ADDED_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const ADDED_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

pub(crate) fn sysctls_1_0(pod: &Pod) -> Option<Failure> {
    sysctls(pod, &[ALLOWED_1_0])
}

pub(crate) fn sysctls_1_27(pod: &Pod) -> Option<Failure> {
    sysctls(pod, &[ALLOWED_1_0, ADDED_1_27])
}

pub(crate) fn sysctls_1_29(pod: &Pod) -> Option<Failure> {
    sysctls(pod, &[ALLOWED_1_0, ADDED_1_27, ADDED_1_29])
}

pub(crate) fn sysctls_1_32(pod: &Pod) -> Option<Failure> {
    sysctls(pod, &[ALLOWED_1_0, ADDED_1_27, ADDED_1_29, ADDED_1_32])
}

fn sysctls(pod: &Pod, allowed: &[&[&str]]) -> Option<Failure> {
    let security = pod.security.as_ref()?;
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for (i, name) in security.sysctls.iter().enumerate() {
        if !allowed.iter().any(|set| set.contains(&name.as_str())) {
            names.push(name.clone());
            errors.push(FieldError::forbidden(
                format!("spec.securityContext.sysctls[{i}].name"),
                BadValue::String(name.clone()),
            ));
        }
    }
    (!names.is_empty()).then(|| Failure {
        reason: "forbidden sysctls".to_string(),
        detail: names.join(", "),
        errors,
    })
}
