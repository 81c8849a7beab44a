//! Kubernetes Pod Security Standards checks reporting field errors.
//!
//! The checks are those of Kyverno's fork of `k8s.io/pod-security-admission` (release 1.34),
//! which Kyverno's `validate.podSecurity` rules run with `policy.WithFieldErrors()`: every
//! failing check comes with PSA's reason and detail and with one field error per offending
//! field, which Kyverno's exclusions then match on. Checks run the way Kyverno's `evaluatePSS`
//! runs them: in registry order, baseline checks only at `baseline`, every check at
//! `restricted`, each at its newest version not newer than the one asked for, and without
//! PSA's restricted-overrides-baseline pruning (Kyverno reports both).
#![forbid(unsafe_code)]

mod checks;
mod field;
mod level;
mod pod;

pub use field::{BadValue, FieldError, FieldErrorType};
pub use level::{Level, LevelVersion, ParseError, Version};
pub use pod::DecodeError;

use checks::{CheckFn, host, privileges, profiles, sysctls, users, volumes, windows};

/// One failing check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// PSA's check ID, e.g. `capabilities_baseline`.
    pub id: &'static str,
    pub forbidden_reason: String,
    pub forbidden_detail: String,
    pub errors: Vec<FieldError>,
}

/// A check: its ID, the level it belongs to, and its versions, oldest first.
struct Check {
    id: &'static str,
    level: Level,
    versions: &'static [(Version, CheckFn)],
    /// The baseline check PSA drops when this restricted check applies.
    overrides: Option<&'static str>,
}

const fn v(minor: u32) -> Version {
    Version::new(1, minor)
}

/// The checks in the order PSA registers them (its source files, alphabetically).
static CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        versions: &[
            (v(8), privileges::allow_privilege_escalation_1_8),
            (v(25), privileges::allow_privilege_escalation_1_25),
        ],
        overrides: None,
    },
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        versions: &[(v(0), profiles::app_armor_1_0)],
        overrides: None,
    },
    Check {
        id: "capabilities_baseline",
        level: Level::Baseline,
        versions: &[(v(0), privileges::capabilities_baseline_1_0)],
        overrides: None,
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        versions: &[
            (v(22), privileges::capabilities_restricted_1_22),
            (v(25), privileges::capabilities_restricted_1_25),
        ],
        overrides: None,
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        versions: &[(v(0), host::host_namespaces_1_0)],
        overrides: None,
    },
    Check {
        id: "hostPathVolumes",
        level: Level::Baseline,
        versions: &[(v(0), volumes::host_path_volumes_1_0)],
        overrides: None,
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        versions: &[(v(0), host::host_ports_1_0)],
        overrides: None,
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        level: Level::Baseline,
        versions: &[(v(34), host::host_probes_1_34)],
        overrides: None,
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        versions: &[(v(0), privileges::privileged_1_0)],
        overrides: None,
    },
    Check {
        id: "procMount",
        level: Level::Baseline,
        versions: &[(v(0), profiles::proc_mount_1_0)],
        overrides: None,
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        versions: &[(v(0), volumes::restricted_volumes_1_0)],
        overrides: Some("hostPathVolumes"),
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        versions: &[(v(0), users::run_as_non_root_1_0)],
        overrides: None,
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        versions: &[(v(23), users::run_as_user_1_23)],
        overrides: None,
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        versions: &[
            (v(0), profiles::se_linux_1_0),
            (v(31), profiles::se_linux_1_31),
        ],
        overrides: None,
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        versions: &[
            (v(0), profiles::seccomp_baseline_1_0),
            (v(19), profiles::seccomp_baseline_1_19),
        ],
        overrides: None,
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        versions: &[
            (v(19), profiles::seccomp_restricted_1_19),
            (v(25), profiles::seccomp_restricted_1_25),
        ],
        overrides: Some("seccompProfile_baseline"),
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        versions: &[
            (v(0), sysctls::sysctls_1_0),
            (v(27), sysctls::sysctls_1_27),
            (v(29), sysctls::sysctls_1_29),
            (v(32), sysctls::sysctls_1_32),
        ],
        overrides: None,
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        versions: &[(v(0), windows::host_process_1_0)],
        overrides: None,
    },
];

/// The IDs of every check, in registry order.
pub fn check_ids() -> impl Iterator<Item = &'static str> {
    CHECKS.iter().map(|c| c.id)
}

/// The restricted check that displaces `id` under [`Selection::Admission`], if any.
pub fn overridden_by(id: &str) -> Option<&'static str> {
    CHECKS
        .iter()
        .find(|c| c.overrides == Some(id))
        .map(|c| c.id)
}

/// How checks are picked for a policy version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Kyverno's `evaluatePSS`: a check whose first version is newer than the one asked for
    /// still runs that first version, and restricted checks do not displace the baseline
    /// checks they supersede (both are reported).
    Kyverno,
    /// Pod Security Admission's evaluator: such a check does not run, and a restricted
    /// check that applies drops the baseline check it overrides.
    Admission,
}

/// Runs the checks of `level_version` on a Pod's `metadata` and `spec` (JSON, `null` for
/// absent) as Kyverno does, and returns the failing ones in registry order. `privileged`
/// runs nothing.
pub fn evaluate(
    level_version: &LevelVersion,
    metadata: &sonic_rs::Value,
    spec: &sonic_rs::Value,
) -> Result<Vec<CheckResult>, DecodeError> {
    evaluate_with(Selection::Kyverno, level_version, metadata, spec)
}

/// [`evaluate`] with the check selection of `selection`.
pub fn evaluate_with(
    selection: Selection,
    level_version: &LevelVersion,
    metadata: &sonic_rs::Value,
    spec: &sonic_rs::Value,
) -> Result<Vec<CheckResult>, DecodeError> {
    if level_version.level == Level::Privileged {
        return Ok(Vec::new());
    }
    let pod = pod::decode(metadata, spec)?;
    let applies =
        |check: &Check| level_version.level == Level::Restricted || check.level == Level::Baseline;
    let pick = |check: &Check| -> Option<CheckFn> {
        let newest = check
            .versions
            .iter()
            .rev()
            .find(|(min, _)| *min <= level_version.version)
            .map(|&(_, f)| f);
        match selection {
            Selection::Admission => newest,
            Selection::Kyverno => newest.or_else(|| check.versions.first().map(|&(_, f)| f)),
        }
    };
    let overridden: Vec<&str> = match selection {
        Selection::Kyverno => Vec::new(),
        Selection::Admission => CHECKS
            .iter()
            .filter(|c| applies(c) && pick(c).is_some())
            .filter_map(|c| c.overrides)
            .collect(),
    };
    let mut failing = Vec::new();
    for check in CHECKS {
        if !applies(check) || overridden.contains(&check.id) {
            continue;
        }
        let Some(selected) = pick(check) else {
            continue;
        };
        if let Some(failure) = selected(&pod) {
            failing.push(CheckResult {
                id: check.id,
                forbidden_reason: failure.reason,
                forbidden_detail: failure.detail,
                errors: failure.errors,
            });
        }
    }
    Ok(failing)
}

#[cfg(test)]
mod tests;
