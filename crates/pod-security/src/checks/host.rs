//! Host access: host namespaces, host ports, and probe / lifecycle hosts.

use std::collections::BTreeSet;

use super::{Failure, containers_phrase, join_quote, pluralize, sorted};
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

/// hostNamespaces 1.0: hostNetwork, hostPID and hostIPC must be unset or false.
pub(crate) fn host_namespaces_1_0(pod: &Pod) -> Option<Failure> {
    let mut data = Vec::new();
    let mut errors = Vec::new();
    for (on, name) in [
        (pod.host_network, "hostNetwork"),
        (pod.host_pid, "hostPID"),
        (pod.host_ipc, "hostIPC"),
    ] {
        if on {
            data.push(format!("{name}=true"));
            errors.push(FieldError::forbidden(
                format!("spec.{name}"),
                BadValue::Bool(true),
            ));
        }
    }
    (!data.is_empty()).then(|| Failure {
        reason: "host namespaces".to_string(),
        detail: data.join(", "),
        errors,
    })
}

/// hostPorts 1.0: no container may set a non-zero hostPort.
pub(crate) fn host_ports_1_0(pod: &Pod) -> Option<Failure> {
    let mut bad_containers = Vec::new();
    let mut ports = BTreeSet::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        let mut bad = false;
        for (i, &port) in c.host_ports.iter().enumerate() {
            if port != 0 {
                bad = true;
                ports.insert(port.to_string());
                errors.push(FieldError::forbidden(
                    format!("{}.ports[{i}].hostPort", c.path),
                    BadValue::Int(port),
                ));
            }
        }
        if bad {
            bad_containers.push(c.name.clone());
        }
    }
    if bad_containers.is_empty() {
        return None;
    }
    Some(Failure {
        reason: "hostPort".to_string(),
        detail: format!(
            "{} {} {} {}",
            containers_phrase(&bad_containers),
            pluralize("uses", "use", bad_containers.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            sorted(&ports).join(", "),
        ),
        errors,
    })
}

/// hostProbesAndHostLifecycle 1.34: probes and lifecycle handlers must not set `host`.
/// The fork reports no field errors for this check, so neither do we.
pub(crate) fn host_probes_1_34(pod: &Pod) -> Option<Failure> {
    let mut containers = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for c in &pod.containers {
        if !c.probe_hosts.is_empty() {
            containers.insert(c.name.clone());
            hosts.extend(c.probe_hosts.iter().cloned());
        }
    }
    if containers.is_empty() {
        return None;
    }
    Some(Failure {
        reason: "probe or lifecycle host".to_string(),
        detail: format!(
            "{} {} {} {}",
            containers_phrase(&sorted(&containers)),
            pluralize("uses", "use", containers.len()),
            pluralize(
                "probe or lifecycle host",
                "probe or lifecycle hosts",
                hosts.len()
            ),
            join_quote(&sorted(&hosts)),
        ),
        errors: Vec::new(),
    })
}
