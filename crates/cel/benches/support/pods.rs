//! Deterministic Pods for the Pod Security benchmarks.
//!
//! The compliant Pods satisfy the Pod Security `restricted` profile, so every `all()` in the
//! checks runs to the end of its list: the worst case for an evaluator. The violating variants
//! break chosen checks so the agreement between celer and the hand-written checks is also
//! tested on `false` results.
//!
//! Shapes (see `PodShape::large` and `PodShape::small`): the large Pod has 12 containers and
//! 2 init containers (14 in all) with 22 env vars each, 26 volumes and 51 annotations, about
//! 51 KB of JSON; the small Pod has one container, about 2.7 KB.

use super::ordered_json::{J, j};

/// Ways a generated Pod breaks the restricted profile; all false means compliant.
#[derive(Debug, Clone, Copy, Default)]
pub struct Violations {
    pub privileged: bool,
    pub host_network: bool,
    pub host_pid: bool,
    pub host_ipc: bool,
    pub host_path_volume: bool,
    pub nfs_volume: bool,
    pub add_sys_admin: bool,
    pub no_drop_all: bool,
    pub run_as_root: bool,
    pub no_pod_security_context: bool,
    pub seccomp_unconfined: bool,
    pub unsafe_sysctl: bool,
    pub host_port: bool,
    pub proc_mount_unmasked: bool,
    pub apparmor_unconfined: bool,
    pub privilege_escalation: bool,
    pub env_from_secret: bool,
}

/// Which container carries the container-level violations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    FirstApp,
    LastInit,
    FirstEphemeral,
}

/// How big a Pod to generate, and what it breaks.
#[derive(Debug, Clone, Copy)]
pub struct PodShape {
    pub containers: usize,
    pub init_containers: usize,
    pub ephemeral_containers: usize,
    pub env_per_container: usize,
    pub volumes: usize,
    pub annotations: usize,
    pub violations: Violations,
    pub violating: Where,
}

impl PodShape {
    /// About 51 KB: 14 containers (12 + 2 init) x 22 env vars, 26 volumes, 51 annotations.
    pub fn large() -> PodShape {
        PodShape {
            containers: 12,
            init_containers: 2,
            ephemeral_containers: 0,
            env_per_container: 22,
            volumes: 26,
            annotations: 51,
            violations: Violations::default(),
            violating: Where::FirstApp,
        }
    }

    /// About 2.7 KB: one container.
    pub fn small() -> PodShape {
        PodShape {
            containers: 1,
            init_containers: 0,
            ephemeral_containers: 0,
            env_per_container: 4,
            volumes: 2,
            annotations: 1,
            violations: Violations::default(),
            violating: Where::FirstApp,
        }
    }

    pub fn with(mut self, violations: Violations) -> PodShape {
        self.violations = violations;
        self
    }

    pub fn violating_in(mut self, place: Where) -> PodShape {
        self.violating = place;
        self
    }
}

/// The volume sources the restricted profile allows, cycled through by the generator.
const VOLUME_KINDS: [&str; 8] = [
    "configMap",
    "secret",
    "emptyDir",
    "projected",
    "downwardAPI",
    "persistentVolumeClaim",
    "csi",
    "ephemeral",
];

/// Sysctls from the restricted/baseline safe set.
const POD_SYSCTLS: [(&str, &str); 3] = [
    ("net.ipv4.ip_local_port_range", "1024 65535"),
    ("net.ipv4.tcp_keepalive_time", "600"),
    ("kernel.shm_rmid_forced", "1"),
];

fn container_name(kind: &str, i: usize) -> String {
    format!("{kind}-{i:02}")
}

fn volume(i: usize, v: &Violations) -> J {
    let name = format!("vol-{i:02}");
    if i == 0 && v.host_path_volume {
        return j!({"name": name, "hostPath": {"path": "/var/lib/node-data", "type": "Directory"}});
    }
    if i == 1 && v.nfs_volume {
        return j!({"name": name, "nfs": {"server": "nfs.storage.svc", "path": "/exports/data"}});
    }
    match VOLUME_KINDS
        .get(i % VOLUME_KINDS.len())
        .copied()
        .unwrap_or("emptyDir")
    {
        "configMap" => j!({"name": name, "configMap": {
            "name": (format!("app-config-{i:02}")), "defaultMode": 420,
            "items": [{"key": "settings.yaml", "path": "settings.yaml"}]
        }}),
        "secret" => j!({"name": name, "secret": {
            "secretName": (format!("app-tls-{i:02}")), "defaultMode": 256
        }}),
        "projected" => j!({"name": name, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]}}),
        "downwardAPI" => j!({"name": name, "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}
        ]}}),
        "persistentVolumeClaim" => j!({"name": name, "persistentVolumeClaim": {
            "claimName": (format!("data-claim-{i:02}")), "readOnly": false
        }}),
        "csi" => j!({"name": name, "csi": {
            "driver": "secrets-store.csi.k8s.io", "readOnly": true,
            "volumeAttributes": {"secretProviderClass": (format!("provider-{i:02}"))}
        }}),
        "ephemeral" => j!({"name": name, "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"type": "scratch"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                     "resources": {"requests": {"storage": "1Gi"}}}
        }}}),
        _ => j!({"name": name, "emptyDir": {"sizeLimit": "512Mi"}}),
    }
}

fn env_var(container: &str, j: usize, secret: bool) -> J {
    let name = format!("APP_SETTING_{j:02}");
    if secret {
        return j!({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-credentials", "key": "password"}}});
    }
    match j % 11 {
        3 => {
            j!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}})
        }
        7 => {
            j!({"name": name, "valueFrom": {"configMapKeyRef": {"name": "app-settings", "key": (format!("{container}.setting-{j:02}"))}}})
        }
        _ => {
            j!({"name": name, "value": (format!("{container}.settings.example.internal/v{j:02}/value"))})
        }
    }
}

fn security_context(violating: bool, v: &Violations) -> J {
    let v = if violating { *v } else { Violations::default() };
    let add: &[&str] = if v.add_sys_admin {
        &["NET_BIND_SERVICE", "SYS_ADMIN"]
    } else {
        &["NET_BIND_SERVICE"]
    };
    let drop = if v.no_drop_all { "NET_RAW" } else { "ALL" };
    let seccomp = if v.seccomp_unconfined {
        "Unconfined"
    } else {
        "RuntimeDefault"
    };
    let proc_mount = if v.proc_mount_unmasked {
        "Unmasked"
    } else {
        "Default"
    };
    j!({
        "allowPrivilegeEscalation": (v.privilege_escalation),
        "privileged": (v.privileged),
        "readOnlyRootFilesystem": true,
        "runAsNonRoot": (!v.run_as_root),
        "runAsUser": 10001,
        "capabilities": {"drop": [drop], "add": add},
        "seccompProfile": {"type": seccomp},
        "procMount": proc_mount
    })
}

fn container(kind: &str, i: usize, shape: &PodShape, violating: bool) -> J {
    let v = &shape.violations;
    let name = container_name(kind, i);
    let env: Vec<J> = (0..shape.env_per_container)
        .map(|j| {
            let secret = violating && v.env_from_secret && j + 1 == shape.env_per_container;
            env_var(&name, j, secret)
        })
        .collect();
    let metrics = if violating && v.host_port {
        j!({"name": "metrics", "containerPort": 9090, "hostPort": 9090, "protocol": "TCP"})
    } else {
        j!({"name": "metrics", "containerPort": 9090, "protocol": "TCP"})
    };
    let ports = j!([{"name": "http", "containerPort": (8080 + i), "protocol": "TCP"}, metrics]);
    let mounts: Vec<J> = (0..shape.volumes.min(2))
        .map(|m| {
            let vol = (i + m) % shape.volumes.max(1);
            j!({"name": (format!("vol-{vol:02}")), "mountPath": (format!("/var/run/app/vol-{vol:02}")), "readOnly": true})
        })
        .collect();
    j!({
        "name": (name.as_str()),
        "image": (format!("registry.example.com/platform/{name}:v1.{i}.3")),
        "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/local/bin/server"],
        "args": ["--listen=:8080", "--metrics=:9090", "--log-format=json"],
        "ports": ports,
        "env": env,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "volumeMounts": mounts,
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 5},
        "startupProbe": {"httpGet": {"path": "/startupz", "port": 8080}, "failureThreshold": 30, "periodSeconds": 2},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "securityContext": (security_context(violating, v))
    })
}

/// Generates a Pod as an ordered JSON tree.
pub fn pod(shape: &PodShape) -> J {
    let v = &shape.violations;
    let mut annotations = Vec::new();
    let all_names: Vec<String> = (0..shape.containers)
        .map(|i| container_name("app", i))
        .chain((0..shape.init_containers).map(|i| container_name("init", i)))
        .collect();
    for (n, cname) in all_names.iter().enumerate().take(shape.annotations) {
        let value = if n == 0 && v.apparmor_unconfined {
            "unconfined".to_string()
        } else if n % 3 == 2 {
            format!("localhost/k8s-{cname}")
        } else {
            "runtime/default".to_string()
        };
        annotations.push((
            format!("container.apparmor.security.beta.kubernetes.io/{cname}"),
            J::Str(value),
        ));
    }
    for k in 0..shape.annotations.saturating_sub(annotations.len()) {
        annotations.push((
            format!("example.com/annotation-{k:02}"),
            J::Str(format!(
                "owner=team-{k:02},tier=backend,zone=a,revision={}",
                1000 + k
            )),
        ));
    }

    let containers: Vec<J> = (0..shape.containers)
        .map(|i| {
            container(
                "app",
                i,
                shape,
                shape.violating == Where::FirstApp && i == 0,
            )
        })
        .collect();
    let volumes: Vec<J> = (0..shape.volumes).map(|i| volume(i, v)).collect();
    let mut sysctls: Vec<J> = POD_SYSCTLS
        .iter()
        .map(|&(name, value)| j!({"name": name, "value": value}))
        .collect();
    if v.unsafe_sysctl {
        sysctls.push(j!({"name": "kernel.msgmax", "value": "65536"}));
    }

    let mut spec = j!({
        "serviceAccountName": "app",
        "automountServiceAccountToken": false,
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
        "hostNetwork": (v.host_network),
        "hostPID": (v.host_pid),
        "hostIPC": (v.host_ipc),
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "apps", "effect": "NoSchedule"}]
    });
    if !v.no_pod_security_context {
        spec.push(
            "securityContext",
            j!({
                "runAsNonRoot": true,
                "runAsUser": 10001,
                "runAsGroup": 10001,
                "fsGroup": 10001,
                "seccompProfile": {"type": "RuntimeDefault"},
                "sysctls": sysctls
            }),
        );
    }
    if shape.init_containers > 0 {
        let init: Vec<J> = (0..shape.init_containers)
            .map(|i| {
                let violating =
                    shape.violating == Where::LastInit && i + 1 == shape.init_containers;
                container("init", i, shape, violating)
            })
            .collect();
        spec.push("initContainers", J::Arr(init));
    }
    spec.push("containers", J::Arr(containers));
    if shape.ephemeral_containers > 0 {
        let eph: Vec<J> = (0..shape.ephemeral_containers)
            .map(|i| {
                let violating = shape.violating == Where::FirstEphemeral && i == 0;
                container("debug", i, shape, violating)
            })
            .collect();
        spec.push("ephemeralContainers", J::Arr(eph));
    }
    spec.push("volumes", J::Arr(volumes));

    j!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-7d4b9c6f5-x2k8p",
            "namespace": "production",
            "uid": "3f1e2d4c-5b6a-4789-8a9b-0c1d2e3f4a5b",
            "labels": {"app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop", "pod-template-hash": "7d4b9c6f5"},
            "annotations": (J::Obj(annotations))
        },
        "spec": spec
    })
}

/// Generates a Pod and serializes it to JSON bytes (what a webhook receives).
pub fn pod_bytes(shape: &PodShape) -> Vec<u8> {
    pod(shape).to_bytes()
}

/// The checks that fail when every container-level violation is present in one container.
const CONTAINER_CHECKS: &[&str] = &[
    "privileged",
    "capabilitiesAdd",
    "capabilitiesDropAll",
    "runAsNonRoot",
    "seccompProfile",
    "hostPorts",
    "procMount",
    "allowPrivilegeEscalation",
    "envSecretRefs",
];

/// A Pod used to check that celer and the hand-written checks agree.
pub struct AgreementPod {
    pub label: &'static str,
    pub shape: PodShape,
    /// The names of the checks this Pod must fail; every other check must pass.
    pub fails: &'static [&'static str],
}

/// The two compliant Pods and violating variants that make every check fail at least once.
pub fn agreement_pods() -> Vec<AgreementPod> {
    let all_container_violations = Violations {
        privileged: true,
        add_sys_admin: true,
        no_drop_all: true,
        run_as_root: true,
        seccomp_unconfined: true,
        host_port: true,
        proc_mount_unmasked: true,
        privilege_escalation: true,
        env_from_secret: true,
        ..Violations::default()
    };
    vec![
        AgreementPod {
            label: "large compliant",
            shape: PodShape::large(),
            fails: &[],
        },
        AgreementPod {
            label: "small compliant",
            shape: PodShape::small(),
            fails: &[],
        },
        AgreementPod {
            label: "large, host namespaces and volumes",
            shape: PodShape::large().with(Violations {
                host_network: true,
                host_pid: true,
                host_ipc: true,
                host_path_volume: true,
                nfs_volume: true,
                unsafe_sysctl: true,
                apparmor_unconfined: true,
                ..Violations::default()
            }),
            fails: &[
                "hostNetwork",
                "hostPID",
                "hostIPC",
                "hostPathVolumes",
                "volumeTypes",
                "sysctls",
                "appArmor",
            ],
        },
        AgreementPod {
            label: "small, container settings",
            shape: PodShape::small().with(all_container_violations),
            fails: CONTAINER_CHECKS,
        },
        AgreementPod {
            label: "large, container settings, no Pod securityContext",
            shape: PodShape::large().with(Violations {
                no_pod_security_context: true,
                ..all_container_violations
            }),
            fails: CONTAINER_CHECKS,
        },
        AgreementPod {
            label: "small, no Pod securityContext (containers set everything)",
            shape: PodShape::small().with(Violations {
                no_pod_security_context: true,
                ..Violations::default()
            }),
            fails: &[],
        },
        AgreementPod {
            label: "large, container settings in the last init container",
            shape: PodShape::large()
                .with(all_container_violations)
                .violating_in(Where::LastInit),
            fails: CONTAINER_CHECKS,
        },
        AgreementPod {
            label: "small with an ephemeral container, which is privileged",
            shape: PodShape {
                ephemeral_containers: 1,
                ..PodShape::small()
            }
            .with(Violations {
                privileged: true,
                ..Violations::default()
            })
            .violating_in(Where::FirstEphemeral),
            fails: &["privileged"],
        },
    ]
}
