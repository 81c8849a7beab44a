//! The parts of a Pod the checks read, decoded once from JSON. Decoding up front keeps the
//! checks free of JSON plumbing and gives one place that rejects input that cannot be a Pod
//! (a field of the wrong JSON type), as Go's decoding into `corev1.Pod` would. `null` means
//! unset, as it does in Go.

use std::collections::BTreeMap;

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait, Value};

/// Input that cannot be decoded as a Pod: `field` names where, `problem` what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct DecodeError {
    pub field: String,
    pub problem: String,
}

#[derive(Debug, Default)]
pub(crate) struct Pod {
    /// `metadata.annotations`, sorted so results never depend on map order.
    pub annotations: BTreeMap<String, String>,
    pub host_network: bool,
    pub host_pid: bool,
    pub host_ipc: bool,
    /// `spec.os.name == "windows"`.
    pub windows: bool,
    /// `spec.securityContext`, if set.
    pub security: Option<Security>,
    pub volumes: Vec<Volume>,
    /// initContainers, containers, then ephemeralContainers, as PSA visits them.
    pub containers: Vec<Container>,
}

/// A container's or the pod's security context; fields the level does not have stay unset.
#[derive(Debug, Default)]
pub(crate) struct Security {
    pub privileged: Option<bool>,
    pub allow_privilege_escalation: Option<bool>,
    pub capabilities: Option<Capabilities>,
    pub proc_mount: Option<String>,
    pub run_as_non_root: Option<bool>,
    pub run_as_user: Option<i64>,
    /// `seccompProfile.type` when `seccompProfile` is set (empty when it has no type).
    pub seccomp_type: Option<String>,
    pub se_linux: Option<SeLinux>,
    /// `windowsOptions.hostProcess`.
    pub host_process: Option<bool>,
    /// `appArmorProfile.type` when `appArmorProfile` is set.
    pub app_armor_type: Option<String>,
    /// Pod level only: `sysctls[*].name`.
    pub sysctls: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Capabilities {
    pub add: Vec<String>,
    pub drop: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct SeLinux {
    pub type_: String,
    pub user: String,
    pub role: String,
}

#[derive(Debug, Default)]
pub(crate) struct Container {
    /// Where the container is, e.g. `spec.initContainers[1]`.
    pub path: String,
    pub name: String,
    /// `ports[*].hostPort`, 0 where unset.
    pub host_ports: Vec<i64>,
    pub security: Option<Security>,
    /// Non-empty `host` of the probes' and lifecycle handlers' httpGet / tcpSocket, in order.
    pub probe_hosts: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Volume {
    pub name: String,
    /// `hostPath.path` when the volume is a hostPath volume.
    pub host_path: Option<String>,
    /// The volume source the restricted level forbids, `"unknown"` when none is recognised,
    /// `None` for an allowed source.
    pub restricted_type: Option<&'static str>,
}

/// Sources the restricted level allows.
const ALLOWED_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// Restricted sources, in the order PSA tests for them (the first present one is reported).
const RESTRICTED_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

/// Decodes the Pod's `metadata` and `spec`.
pub(crate) fn decode(metadata: &Value, spec: &Value) -> Result<Pod, DecodeError> {
    let mut pod = Pod::default();
    if let Some(meta) = object(Some(metadata), "metadata")? {
        let path = "metadata.annotations";
        if let Some(annotations) = object(meta.get(&"annotations"), path)? {
            for (key, value) in annotations.iter() {
                let value = string(Some(value), &format!("{path}[{key}]"))?.unwrap_or_default();
                pod.annotations.insert(key.to_string(), value);
            }
        }
    }
    let Some(spec) = object(Some(spec), "spec")? else {
        return Ok(pod);
    };
    pod.host_network = boolean(spec.get(&"hostNetwork"), "spec.hostNetwork")?.unwrap_or(false);
    pod.host_pid = boolean(spec.get(&"hostPID"), "spec.hostPID")?.unwrap_or(false);
    pod.host_ipc = boolean(spec.get(&"hostIPC"), "spec.hostIPC")?.unwrap_or(false);
    // Read only to reject a wrongly typed value: Kyverno never relaxes checks for
    // user-namespace pods.
    boolean(spec.get(&"hostUsers"), "spec.hostUsers")?;
    if let Some(os) = object(spec.get(&"os"), "spec.os")? {
        pod.windows = string(os.get(&"name"), "spec.os.name")?.as_deref() == Some("windows");
    }
    if let Some(sc) = object(spec.get(&"securityContext"), "spec.securityContext")? {
        pod.security = Some(security(sc, "spec.securityContext", true)?);
    }
    for (i, volume) in array(spec.get(&"volumes"), "spec.volumes")?
        .iter()
        .enumerate()
    {
        pod.volumes
            .push(decode_volume(volume, &format!("spec.volumes[{i}]"))?);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let list_path = format!("spec.{list}");
        for (i, c) in array(spec.get(&list), &list_path)?.iter().enumerate() {
            pod.containers
                .push(container(c, format!("{list_path}[{i}]"))?);
        }
    }
    Ok(pod)
}

fn container(value: &Value, path: String) -> Result<Container, DecodeError> {
    let mut c = Container::default();
    let Some(obj) = object(Some(value), &path)? else {
        c.path = path;
        return Ok(c);
    };
    c.name = string(obj.get(&"name"), &format!("{path}.name"))?.unwrap_or_default();
    let ports_path = format!("{path}.ports");
    for (i, port) in array(obj.get(&"ports"), &ports_path)?.iter().enumerate() {
        let port_path = format!("{ports_path}[{i}]");
        let host_port = match object(Some(port), &port_path)? {
            Some(p) => int(p.get(&"hostPort"), &format!("{port_path}.hostPort"))?.unwrap_or(0),
            None => 0,
        };
        c.host_ports.push(host_port);
    }
    let sc_path = format!("{path}.securityContext");
    if let Some(sc) = object(obj.get(&"securityContext"), &sc_path)? {
        c.security = Some(security(sc, &sc_path, false)?);
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        handler_hosts(
            obj.get(&probe),
            &format!("{path}.{probe}"),
            &mut c.probe_hosts,
        )?;
    }
    let lifecycle_path = format!("{path}.lifecycle");
    if let Some(lifecycle) = object(obj.get(&"lifecycle"), &lifecycle_path)? {
        for hook in ["postStart", "preStop"] {
            let hook_path = format!("{lifecycle_path}.{hook}");
            handler_hosts(lifecycle.get(&hook), &hook_path, &mut c.probe_hosts)?;
        }
    }
    c.path = path;
    Ok(c)
}

/// Appends the non-empty `httpGet.host` and `tcpSocket.host` of a probe or lifecycle handler.
fn handler_hosts(
    value: Option<&Value>,
    path: &str,
    hosts: &mut Vec<String>,
) -> Result<(), DecodeError> {
    let Some(handler) = object(value, path)? else {
        return Ok(());
    };
    for action in ["httpGet", "tcpSocket"] {
        let action_path = format!("{path}.{action}");
        if let Some(a) = object(handler.get(&action), &action_path)? {
            let host = string(a.get(&"host"), &format!("{action_path}.host"))?;
            if let Some(host) = host.filter(|h| !h.is_empty()) {
                hosts.push(host);
            }
        }
    }
    Ok(())
}

fn security(sc: &sonic_rs::Object, path: &str, pod_level: bool) -> Result<Security, DecodeError> {
    let at = |name: &str| format!("{path}.{name}");
    let mut s = Security {
        run_as_non_root: boolean(sc.get(&"runAsNonRoot"), &at("runAsNonRoot"))?,
        run_as_user: int(sc.get(&"runAsUser"), &at("runAsUser"))?,
        ..Security::default()
    };
    if let Some(p) = object(sc.get(&"seccompProfile"), &at("seccompProfile"))? {
        let t = string(p.get(&"type"), &at("seccompProfile.type"))?;
        s.seccomp_type = Some(t.unwrap_or_default());
    }
    if let Some(p) = object(sc.get(&"appArmorProfile"), &at("appArmorProfile"))? {
        let t = string(p.get(&"type"), &at("appArmorProfile.type"))?;
        s.app_armor_type = Some(t.unwrap_or_default());
    }
    if let Some(o) = object(sc.get(&"seLinuxOptions"), &at("seLinuxOptions"))? {
        let field = |name: &str| -> Result<String, DecodeError> {
            let value = string(o.get(&name), &at(&format!("seLinuxOptions.{name}")))?;
            Ok(value.unwrap_or_default())
        };
        s.se_linux = Some(SeLinux {
            type_: field("type")?,
            user: field("user")?,
            role: field("role")?,
        });
    }
    if let Some(w) = object(sc.get(&"windowsOptions"), &at("windowsOptions"))? {
        s.host_process = boolean(w.get(&"hostProcess"), &at("windowsOptions.hostProcess"))?;
    }
    if pod_level {
        let sysctls_path = at("sysctls");
        for (i, sysctl) in array(sc.get(&"sysctls"), &sysctls_path)?.iter().enumerate() {
            let item_path = format!("{sysctls_path}[{i}]");
            let name = match object(Some(sysctl), &item_path)? {
                Some(o) => string(o.get(&"name"), &format!("{item_path}.name"))?,
                None => None,
            };
            s.sysctls.push(name.unwrap_or_default());
        }
        return Ok(s);
    }
    s.privileged = boolean(sc.get(&"privileged"), &at("privileged"))?;
    s.allow_privilege_escalation = boolean(
        sc.get(&"allowPrivilegeEscalation"),
        &at("allowPrivilegeEscalation"),
    )?;
    s.proc_mount = string(sc.get(&"procMount"), &at("procMount"))?;
    if let Some(caps) = object(sc.get(&"capabilities"), &at("capabilities"))? {
        s.capabilities = Some(Capabilities {
            add: strings(caps.get(&"add"), &at("capabilities.add"))?,
            drop: strings(caps.get(&"drop"), &at("capabilities.drop"))?,
        });
    }
    Ok(s)
}

fn decode_volume(value: &Value, path: &str) -> Result<Volume, DecodeError> {
    let mut volume = Volume {
        name: String::new(),
        host_path: None,
        restricted_type: Some("unknown"),
    };
    let Some(obj) = object(Some(value), path)? else {
        return Ok(volume);
    };
    volume.name = string(obj.get(&"name"), &format!("{path}.name"))?.unwrap_or_default();
    let present = |source: &str| -> Result<bool, DecodeError> {
        Ok(object(obj.get(&source), &format!("{path}.{source}"))?.is_some())
    };
    let mut allowed = false;
    for source in ALLOWED_SOURCES {
        allowed |= present(source)?;
    }
    let mut first_restricted = None;
    for source in RESTRICTED_SOURCES {
        if present(source)? && first_restricted.is_none() {
            first_restricted = Some(*source);
        }
    }
    volume.restricted_type = if allowed {
        None
    } else {
        Some(first_restricted.unwrap_or("unknown"))
    };
    let host_path_field = format!("{path}.hostPath");
    if let Some(hp) = object(obj.get(&"hostPath"), &host_path_field)? {
        let p = string(hp.get(&"path"), &format!("{host_path_field}.path"))?;
        volume.host_path = Some(p.unwrap_or_default());
    }
    Ok(volume)
}

fn type_name(value: &Value) -> &'static str {
    match value.get_type() {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

fn mismatch(path: &str, expected: &str, value: &Value) -> DecodeError {
    DecodeError {
        field: path.to_string(),
        problem: format!("expected {expected}, found {}", type_name(value)),
    }
}

fn object<'v>(
    value: Option<&'v Value>,
    path: &str,
) -> Result<Option<&'v sonic_rs::Object>, DecodeError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_object()
            .map(Some)
            .ok_or_else(|| mismatch(path, "an object", v)),
    }
}

fn array<'v>(value: Option<&'v Value>, path: &str) -> Result<&'v [Value], DecodeError> {
    match value {
        None => Ok(&[]),
        Some(v) if v.is_null() => Ok(&[]),
        Some(v) => v
            .as_array()
            .map(|a| &a[..])
            .ok_or_else(|| mismatch(path, "an array", v)),
    }
}

fn string(value: Option<&Value>, path: &str) -> Result<Option<String>, DecodeError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_str()
            .map(|s| Some(s.to_string()))
            .ok_or_else(|| mismatch(path, "a string", v)),
    }
}

fn boolean(value: Option<&Value>, path: &str) -> Result<Option<bool>, DecodeError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| mismatch(path, "a boolean", v)),
    }
}

fn int(value: Option<&Value>, path: &str) -> Result<Option<i64>, DecodeError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| mismatch(path, "an integer", v)),
    }
}

fn strings(value: Option<&Value>, path: &str) -> Result<Vec<String>, DecodeError> {
    let mut out = Vec::new();
    for (i, item) in array(value, path)?.iter().enumerate() {
        out.push(string(Some(item), &format!("{path}[{i}]"))?.unwrap_or_default());
    }
    Ok(out)
}
