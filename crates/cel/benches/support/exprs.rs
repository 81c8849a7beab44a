//! The 16 Pod Security checks as CEL, written the way ValidatingAdmissionPolicy authors write
//! them: `object` is the Pod, `has()` guards optional fields, container checks cover
//! `containers`, `initContainers` and `ephemeralContainers`, and allowed values are literal
//! lists tested with `in`. Each expression is true when the Pod passes the check.
//!
//! `support::handwritten` implements the same checks in Rust, in the same order.

/// Literal list of the capabilities the baseline profile lets containers add.
const BASELINE_CAPABILITIES: &str = "['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', \
    'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']";

/// Keys a volume may have under the restricted profile: its name and an allowed source.
const RESTRICTED_VOLUME_KEYS: &str = "['name', 'configMap', 'csi', 'downwardAPI', 'emptyDir', \
    'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']";

/// The sysctls both profiles consider safe.
const SAFE_SYSCTLS: &str = "['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', \
    'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', \
    'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', \
    'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']";

const APPARMOR_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// `pred` (over `c`) holds for every container, init container and ephemeral container.
fn every_container(pred: &str) -> String {
    format!(
        "object.spec.containers.all(c, {pred}) && \
         (!has(object.spec.initContainers) || object.spec.initContainers.all(c, {pred})) && \
         (!has(object.spec.ephemeralContainers) || object.spec.ephemeralContainers.all(c, {pred}))"
    )
}

/// A host namespace flag that must be absent or false.
fn host_namespace(field: &str) -> String {
    format!("!has(object.spec.{field}) || object.spec.{field} == false")
}

/// A Pod-level setting that containers may override: either the Pod sets it well and no
/// container sets it badly, or every container sets it well.
fn pod_or_every_container(pod_ok: &str, container_unset_or_ok: &str, container_ok: &str) -> String {
    format!(
        "({pod_ok}) ? ({}) : ({})",
        every_container(container_unset_or_ok),
        every_container(container_ok)
    )
}

/// The 16 checks, `(name, CEL source)`, in a fixed order.
pub fn expressions() -> Vec<(&'static str, String)> {
    vec![
        (
            "privileged",
            every_container(
                "!has(c.securityContext) || !has(c.securityContext.privileged) || \
                 c.securityContext.privileged == false",
            ),
        ),
        ("hostNetwork", host_namespace("hostNetwork")),
        ("hostPID", host_namespace("hostPID")),
        ("hostIPC", host_namespace("hostIPC")),
        (
            "hostPathVolumes",
            "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))".into(),
        ),
        (
            "capabilitiesAdd",
            every_container(&format!(
                "!has(c.securityContext) || !has(c.securityContext.capabilities) || \
                 !has(c.securityContext.capabilities.add) || \
                 c.securityContext.capabilities.add.all(cap, cap in {BASELINE_CAPABILITIES})"
            )),
        ),
        (
            "capabilitiesDropAll",
            every_container(
                "has(c.securityContext) && has(c.securityContext.capabilities) && \
                 has(c.securityContext.capabilities.drop) && \
                 c.securityContext.capabilities.drop.exists(cap, cap == 'ALL')",
            ),
        ),
        (
            "runAsNonRoot",
            pod_or_every_container(
                "has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && \
                 object.spec.securityContext.runAsNonRoot == true",
                "!has(c.securityContext) || !has(c.securityContext.runAsNonRoot) || \
                 c.securityContext.runAsNonRoot == true",
                "has(c.securityContext) && has(c.securityContext.runAsNonRoot) && \
                 c.securityContext.runAsNonRoot == true",
            ),
        ),
        (
            "seccompProfile",
            pod_or_every_container(
                "has(object.spec.securityContext) && has(object.spec.securityContext.seccompProfile) && \
                 object.spec.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']",
                "!has(c.securityContext) || !has(c.securityContext.seccompProfile) || \
                 c.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']",
                "has(c.securityContext) && has(c.securityContext.seccompProfile) && \
                 c.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']",
            ),
        ),
        (
            "volumeTypes",
            format!(
                "!has(object.spec.volumes) || \
                 object.spec.volumes.all(v, v.all(k, k in {RESTRICTED_VOLUME_KEYS}))"
            ),
        ),
        (
            "sysctls",
            format!(
                "!has(object.spec.securityContext) || !has(object.spec.securityContext.sysctls) || \
                 object.spec.securityContext.sysctls.all(s, s.name in {SAFE_SYSCTLS})"
            ),
        ),
        (
            "hostPorts",
            every_container("!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"),
        ),
        (
            "procMount",
            every_container(
                "!has(c.securityContext) || !has(c.securityContext.procMount) || \
                 c.securityContext.procMount == 'Default'",
            ),
        ),
        (
            "appArmor",
            format!(
                "!has(object.metadata.annotations) || object.metadata.annotations.all(k, \
                 !k.startsWith('{APPARMOR_PREFIX}') || \
                 object.metadata.annotations[k] == 'runtime/default' || \
                 object.metadata.annotations[k].startsWith('localhost/'))"
            ),
        ),
        (
            "allowPrivilegeEscalation",
            every_container(
                "has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && \
                 c.securityContext.allowPrivilegeEscalation == false",
            ),
        ),
        (
            "envSecretRefs",
            every_container(
                "!has(c.env) || c.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef))",
            ),
        ),
    ]
}
