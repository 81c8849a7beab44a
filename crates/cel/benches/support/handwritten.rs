//! The 16 Pod Security checks of `support::exprs`, hand-written in Rust over `sonic_rs::Value`:
//! the yardstick every engine figure is compared with.
//!
//! Each function mirrors its CEL expression: "field absent" is `has()` false, `== false` is
//! true only for a JSON `false`, `x in [...]` is true only for a string in the list. Inputs
//! that would make the CEL expression raise an error (a `securityContext` that is not an
//! object, a missing `containers`) are out of scope: the benchmark Pods never have them.

use sonic_rs::{JsonContainerTrait, JsonValueTrait, Value};

/// Number of checks; the CEL table has the same length and order.
pub const COUNT: usize = 16;

pub type Check = fn(&Value) -> bool;

/// The checks, named like their CEL counterparts.
pub const CHECKS: [(&str, Check); COUNT] = [
    ("privileged", privileged),
    ("hostNetwork", host_network),
    ("hostPID", host_pid),
    ("hostIPC", host_ipc),
    ("hostPathVolumes", host_path_volumes),
    ("capabilitiesAdd", capabilities_add),
    ("capabilitiesDropAll", capabilities_drop_all),
    ("runAsNonRoot", run_as_non_root),
    ("seccompProfile", seccomp_profile),
    ("volumeTypes", volume_types),
    ("sysctls", sysctls),
    ("hostPorts", host_ports),
    ("procMount", proc_mount),
    ("appArmor", app_armor),
    ("allowPrivilegeEscalation", allow_privilege_escalation),
    ("envSecretRefs", env_secret_refs),
];

/// Runs all 16 checks on one Pod.
#[inline(never)]
pub fn check_all(pod: &Value) -> [bool; COUNT] {
    CHECKS.map(|(_, check)| check(pod))
}

const BASELINE_CAPABILITIES: [&str; 13] = [
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

const RESTRICTED_VOLUME_KEYS: [&str; 9] = [
    "name",
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

const SAFE_SYSCTLS: [&str; 10] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];

const SECCOMP_ALLOWED: [&str; 2] = ["RuntimeDefault", "Localhost"];

const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key)
}

fn spec(pod: &Value) -> Option<&Value> {
    field(pod, "spec")
}

fn is_false(v: &Value) -> bool {
    v.as_bool() == Some(false)
}

fn is_true(v: &Value) -> bool {
    v.as_bool() == Some(true)
}

fn is_zero(v: &Value) -> bool {
    v.as_i64() == Some(0) || v.as_u64() == Some(0) || v.as_f64() == Some(0.0)
}

fn str_in(v: &Value, allowed: &[&str]) -> bool {
    v.as_str().is_some_and(|s| allowed.contains(&s))
}

/// `list` absent, or `pred` holds for every element.
fn all_or_absent(parent: &Value, list: &str, pred: impl Fn(&Value) -> bool) -> bool {
    match field(parent, list) {
        None => true,
        Some(items) => items.as_array().is_some_and(|a| a.iter().all(pred)),
    }
}

/// `pred` holds for every container, init container and ephemeral container.
fn every_container(pod: &Value, pred: impl Fn(&Value) -> bool) -> bool {
    let Some(spec) = spec(pod) else {
        return false;
    };
    let containers = field(spec, "containers")
        .and_then(|c| c.as_array())
        .is_some_and(|a| a.iter().all(&pred));
    containers
        && all_or_absent(spec, "initContainers", &pred)
        && all_or_absent(spec, "ephemeralContainers", &pred)
}

/// `c.securityContext.<key>`, or `None` when either is absent.
fn container_setting<'a>(c: &'a Value, key: &str) -> Option<&'a Value> {
    field(c, "securityContext").and_then(|sc| field(sc, key))
}

fn privileged(pod: &Value) -> bool {
    every_container(pod, |c| {
        container_setting(c, "privileged").is_none_or(is_false)
    })
}

fn host_namespace(pod: &Value, key: &str) -> bool {
    spec(pod).and_then(|s| field(s, key)).is_none_or(is_false)
}

fn host_network(pod: &Value) -> bool {
    host_namespace(pod, "hostNetwork")
}

fn host_pid(pod: &Value) -> bool {
    host_namespace(pod, "hostPID")
}

fn host_ipc(pod: &Value) -> bool {
    host_namespace(pod, "hostIPC")
}

fn host_path_volumes(pod: &Value) -> bool {
    spec(pod).is_some_and(|s| all_or_absent(s, "volumes", |v| field(v, "hostPath").is_none()))
}

fn capabilities_add(pod: &Value) -> bool {
    every_container(pod, |c| {
        container_setting(c, "capabilities")
            .and_then(|caps| field(caps, "add"))
            .is_none_or(|add| {
                add.as_array()
                    .is_some_and(|a| a.iter().all(|cap| str_in(cap, &BASELINE_CAPABILITIES)))
            })
    })
}

fn capabilities_drop_all(pod: &Value) -> bool {
    every_container(pod, |c| {
        container_setting(c, "capabilities")
            .and_then(|caps| field(caps, "drop"))
            .and_then(|d| d.as_array())
            .is_some_and(|d| d.iter().any(|cap| cap.as_str() == Some("ALL")))
    })
}

/// The Pod sets `key` well and no container sets it badly, or every container sets it well.
fn pod_or_every_container(pod: &Value, key: &str, ok: impl Fn(&Value) -> bool) -> bool {
    let pod_ok = spec(pod)
        .and_then(|s| field(s, "securityContext"))
        .and_then(|sc| field(sc, key))
        .is_some_and(&ok);
    if pod_ok {
        every_container(pod, |c| container_setting(c, key).is_none_or(&ok))
    } else {
        every_container(pod, |c| container_setting(c, key).is_some_and(&ok))
    }
}

fn run_as_non_root(pod: &Value) -> bool {
    pod_or_every_container(pod, "runAsNonRoot", is_true)
}

fn seccomp_profile(pod: &Value) -> bool {
    pod_or_every_container(pod, "seccompProfile", |p| {
        field(p, "type").is_some_and(|t| str_in(t, &SECCOMP_ALLOWED))
    })
}

fn volume_types(pod: &Value) -> bool {
    spec(pod).is_some_and(|s| {
        all_or_absent(s, "volumes", |v| {
            v.as_object()
                .is_some_and(|o| o.iter().all(|(k, _)| RESTRICTED_VOLUME_KEYS.contains(&k)))
        })
    })
}

fn sysctls(pod: &Value) -> bool {
    match spec(pod).and_then(|s| field(s, "securityContext")) {
        None => true,
        Some(sc) => all_or_absent(sc, "sysctls", |s| {
            field(s, "name").is_some_and(|n| str_in(n, &SAFE_SYSCTLS))
        }),
    }
}

fn host_ports(pod: &Value) -> bool {
    every_container(pod, |c| {
        all_or_absent(c, "ports", |p| field(p, "hostPort").is_none_or(is_zero))
    })
}

fn proc_mount(pod: &Value) -> bool {
    every_container(pod, |c| {
        container_setting(c, "procMount").is_none_or(|m| m.as_str() == Some("Default"))
    })
}

fn app_armor(pod: &Value) -> bool {
    let Some(annotations) = field(pod, "metadata").and_then(|m| field(m, "annotations")) else {
        return true;
    };
    annotations.as_object().is_some_and(|o| {
        o.iter().all(|(k, v)| {
            !k.starts_with(APPARMOR_PREFIX)
                || v.as_str()
                    .is_some_and(|s| s == "runtime/default" || s.starts_with("localhost/"))
        })
    })
}

fn allow_privilege_escalation(pod: &Value) -> bool {
    every_container(pod, |c| {
        container_setting(c, "allowPrivilegeEscalation").is_some_and(is_false)
    })
}

fn env_secret_refs(pod: &Value) -> bool {
    every_container(pod, |c| {
        all_or_absent(c, "env", |e| {
            field(e, "valueFrom").is_none_or(|from| field(from, "secretKeyRef").is_none())
        })
    })
}
