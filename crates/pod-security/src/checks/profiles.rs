//! Security profiles: AppArmor, seccomp, SELinux and procMount.

use std::collections::BTreeSet;

use super::{Failure, containers_phrase, join_quote, pluralize, sorted};
use crate::field::{BadValue, FieldError};
use crate::pod::{Pod, SeLinux};

/// Who set a forbidden value ("pod", `containers "a"`, "annotations") and the field errors
/// that go with them, in the order PSA collects them.
#[derive(Default)]
struct Setters {
    data: Vec<String>,
    errors: Vec<FieldError>,
}

impl Setters {
    fn add(&mut self, who: String, errors: impl IntoIterator<Item = FieldError>) {
        self.data.push(who);
        self.errors.extend(errors);
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn joined(&self) -> String {
        self.data.join(" and ")
    }
}

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn apparmor_annotation_allowed(value: &str) -> bool {
    value.is_empty() || value == "runtime/default" || value.starts_with("localhost/")
}

fn apparmor_type_allowed(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

/// appArmorProfile 1.0: profile types and the beta annotations may only name the runtime
/// default or a localhost profile.
pub(crate) fn app_armor_1_0(pod: &Pod) -> Option<Failure> {
    let mut setters = Setters::default();
    let mut bad_values = BTreeSet::new();
    if let Some(t) = pod
        .security
        .as_ref()
        .and_then(|s| s.app_armor_type.as_ref())
        && !apparmor_type_allowed(t)
    {
        let error = FieldError::forbidden(
            "spec.securityContext.appArmorProfile.type",
            BadValue::String(t.clone()),
        );
        setters.add("pod".to_string(), [error]);
        bad_values.insert(t.clone());
    }
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        if let Some(t) = c.security.as_ref().and_then(|s| s.app_armor_type.as_ref())
            && !apparmor_type_allowed(t)
        {
            names.push(c.name.clone());
            errors.push(FieldError::forbidden(
                format!("{}.securityContext.appArmorProfile.type", c.path),
                BadValue::String(t.clone()),
            ));
            bad_values.insert(t.clone());
        }
    }
    if !names.is_empty() {
        setters.add(containers_phrase(&names), errors);
    }
    let mut annotations = Vec::new();
    let mut annotation_errors = Vec::new();
    for (key, value) in &pod.annotations {
        if key.starts_with(APPARMOR_ANNOTATION_PREFIX) && !apparmor_annotation_allowed(value) {
            annotations.push(format!("{key}={}", crate::field::go_quote(value)));
            annotation_errors.push(FieldError::forbidden(
                format!("metadata.annotations[{key}]"),
                BadValue::String(value.clone()),
            ));
        }
    }
    let mut listed = sorted(&bad_values);
    if !annotations.is_empty() {
        annotations.sort();
        let word = pluralize("annotation", "annotations", annotations.len());
        listed.extend(annotations);
        setters.add(word.to_string(), annotation_errors);
    }
    if setters.is_empty() {
        return None;
    }
    Some(Failure {
        reason: pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            listed.len(),
        )
        .to_string(),
        detail: format!(
            "{} must not set AppArmor profile type to {}",
            setters.joined(),
            join_quote(&listed)
        ),
        errors: setters.errors,
    })
}

/// procMount 1.0: containers may only use the default proc mount. Kyverno does not relax this
/// for user-namespace pods (PSA's `RelaxPolicyForUserNamespacePods` stays off there).
pub(crate) fn proc_mount_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut errors = Vec::new();
    let mut types = BTreeSet::new();
    for c in &pod.containers {
        let Some(mount) = c.security.as_ref().and_then(|s| s.proc_mount.as_ref()) else {
            continue;
        };
        if mount != "Default" {
            names.push(c.name.clone());
            errors.push(FieldError::forbidden(
                format!("{}.securityContext.procMount", c.path),
                BadValue::String(mount.clone()),
            ));
            types.insert(mount.clone());
        }
    }
    (!names.is_empty()).then(|| Failure {
        reason: "procMount".to_string(),
        detail: format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&names),
            join_quote(&sorted(&types))
        ),
        errors,
    })
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

pub(crate) fn se_linux_1_0(pod: &Pod) -> Option<Failure> {
    se_linux(pod, SELINUX_TYPES_1_0)
}

/// seLinuxOptions 1.31 also allows `container_engine_t`.
pub(crate) fn se_linux_1_31(pod: &Pod) -> Option<Failure> {
    se_linux(pod, SELINUX_TYPES_1_31)
}

/// What one `seLinuxOptions` got wrong.
#[derive(Default)]
struct SeLinuxFindings {
    bad_types: BTreeSet<String>,
    set_user: bool,
    set_role: bool,
}

impl SeLinuxFindings {
    /// Records the problems of `options` at `prefix` (`...securityContext.seLinuxOptions`);
    /// true when there were none.
    fn check(
        &mut self,
        options: &SeLinux,
        prefix: &str,
        allowed: &[&str],
        errors: &mut Vec<FieldError>,
    ) -> bool {
        let mut valid = true;
        if !allowed.contains(&options.type_.as_str()) {
            valid = false;
            self.bad_types.insert(options.type_.clone());
            errors.push(FieldError::forbidden(
                format!("{prefix}.type"),
                BadValue::String(options.type_.clone()),
            ));
        }
        if !options.user.is_empty() {
            valid = false;
            self.set_user = true;
            errors.push(FieldError::forbidden(
                format!("{prefix}.user"),
                BadValue::String(options.user.clone()),
            ));
        }
        if !options.role.is_empty() {
            valid = false;
            self.set_role = true;
            errors.push(FieldError::forbidden(
                format!("{prefix}.role"),
                BadValue::String(options.role.clone()),
            ));
        }
        valid
    }
}

fn se_linux(pod: &Pod, allowed: &[&str]) -> Option<Failure> {
    let mut findings = SeLinuxFindings::default();
    let mut setters = Setters::default();
    if let Some(options) = pod.security.as_ref().and_then(|s| s.se_linux.as_ref()) {
        let mut errors = Vec::new();
        let prefix = "spec.securityContext.seLinuxOptions";
        if !findings.check(options, prefix, allowed, &mut errors) {
            setters.add("pod".to_string(), errors);
        }
    }
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        if let Some(options) = c.security.as_ref().and_then(|s| s.se_linux.as_ref()) {
            let prefix = format!("{}.securityContext.seLinuxOptions", c.path);
            if !findings.check(options, &prefix, allowed, &mut errors) {
                names.push(c.name.clone());
            }
        }
    }
    if !names.is_empty() {
        setters.add(containers_phrase(&names), errors);
    }
    if setters.is_empty() {
        return None;
    }
    let mut bad = Vec::new();
    if !findings.bad_types.is_empty() {
        bad.push(format!(
            "{} {}",
            pluralize("type", "types", findings.bad_types.len()),
            join_quote(&sorted(&findings.bad_types))
        ));
    }
    if findings.set_user {
        bad.push("user may not be set".to_string());
    }
    if findings.set_role {
        bad.push("role may not be set".to_string());
    }
    Some(Failure {
        reason: "seLinuxOptions".to_string(),
        detail: format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.joined(),
            bad.join("; ")
        ),
        errors: setters.errors,
    })
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

fn seccomp_annotation_allowed(value: &str) -> bool {
    value == "runtime/default" || value == "docker/default" || value.starts_with("localhost/")
}

fn seccomp_type_allowed(t: &str) -> bool {
    matches!(t, "RuntimeDefault" | "Localhost")
}

/// seccompProfile_baseline 1.0: the alpha annotations, for the pod and each container, may
/// only name the runtime default or a localhost profile.
pub(crate) fn seccomp_baseline_1_0(pod: &Pod) -> Option<Failure> {
    // Keyed by `annotation="value"`; sorted, so errors come out in a stable order.
    let mut forbidden: std::collections::BTreeMap<String, Vec<FieldError>> = Default::default();
    let mut note = |key: &str| {
        if let Some(value) = pod.annotations.get(key)
            && !seccomp_annotation_allowed(value)
        {
            forbidden
                .entry(format!("{key}={}", crate::field::go_quote(value)))
                .or_default()
                .push(FieldError::forbidden(
                    format!("metadata.annotations[{key}]"),
                    BadValue::String(value.clone()),
                ));
        }
    };
    note(SECCOMP_POD_ANNOTATION);
    for c in &pod.containers {
        note(&format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", c.name));
    }
    if forbidden.is_empty() {
        return None;
    }
    let values: Vec<String> = forbidden.keys().cloned().collect();
    Some(Failure {
        reason: "seccompProfile".to_string(),
        detail: format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", values.len()),
            values.join(", ")
        ),
        errors: forbidden.into_values().flatten().collect(),
    })
}

/// Explicitly bad seccomp types: the pod's and the containers', as setters.
fn seccomp_explicit(pod: &Pod) -> (Setters, BTreeSet<String>, bool) {
    let mut setters = Setters::default();
    let mut bad_values = BTreeSet::new();
    let mut pod_set = false;
    if let Some(t) = pod.security.as_ref().and_then(|s| s.seccomp_type.as_ref()) {
        if seccomp_type_allowed(t) {
            pod_set = true;
        } else {
            let error = FieldError::forbidden(
                "spec.securityContext.seccompProfile.type",
                BadValue::String(t.clone()),
            );
            setters.add("pod".to_string(), [error]);
            bad_values.insert(t.clone());
        }
    }
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        if let Some(t) = c.security.as_ref().and_then(|s| s.seccomp_type.as_ref())
            && !seccomp_type_allowed(t)
        {
            names.push(c.name.clone());
            errors.push(FieldError::forbidden(
                format!("{}.securityContext.seccompProfile.type", c.path),
                BadValue::String(t.clone()),
            ));
            bad_values.insert(t.clone());
        }
    }
    if !names.is_empty() {
        setters.add(containers_phrase(&names), errors);
    }
    (setters, bad_values, pod_set)
}

fn seccomp_explicit_failure(setters: Setters, bad_values: &BTreeSet<String>) -> Failure {
    Failure {
        reason: "seccompProfile".to_string(),
        detail: format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.joined(),
            join_quote(&sorted(bad_values))
        ),
        errors: setters.errors,
    }
}

/// seccompProfile_baseline 1.19: seccomp profile types, where set, must be RuntimeDefault or
/// Localhost.
pub(crate) fn seccomp_baseline_1_19(pod: &Pod) -> Option<Failure> {
    let (setters, bad_values, _) = seccomp_explicit(pod);
    (!setters.is_empty()).then(|| seccomp_explicit_failure(setters, &bad_values))
}

/// seccompProfile_restricted 1.19: as baseline, and every container must get an allowed
/// type from itself or the pod.
pub(crate) fn seccomp_restricted_1_19(pod: &Pod) -> Option<Failure> {
    let (setters, bad_values, pod_set) = seccomp_explicit(pod);
    if !setters.is_empty() {
        return Some(seccomp_explicit_failure(setters, &bad_values));
    }
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for c in &pod.containers {
        let own = c.security.as_ref().and_then(|s| s.seccomp_type.as_ref());
        if own.is_none() && !pod_set {
            names.push(c.name.clone());
            errors.push(FieldError::required(format!(
                "{}.securityContext.seccompProfile.type",
                c.path
            )));
        }
    }
    (!names.is_empty()).then(|| Failure {
        reason: "seccompProfile".to_string(),
        detail: format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&names)
        ),
        errors,
    })
}

/// seccompProfile_restricted 1.25: as 1.19, but Windows pods are exempt.
pub(crate) fn seccomp_restricted_1_25(pod: &Pod) -> Option<Failure> {
    if pod.windows {
        return None;
    }
    seccomp_restricted_1_19(pod)
}
