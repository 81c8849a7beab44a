//! Kyverno's `validate.podSecurity` rules (`pkg/engine/handlers/validation/validate_pss.go`,
//! `pkg/pss`): the Pod Security Standards at a level and version, run by
//! [`celer_pod_security`] on a Pod or a workload's Pod template, less the controls the rule's
//! `exclude` and matching PolicyExceptions' `podSecurity` exempt.
//!
//! Exemption is Kyverno's, field by field: an exclusion is evaluated on a reduced Pod (the
//! Pod-level spec only, or only the containers whose image it names), and each field error it
//! finds, if the exclusion's `restrictedField` and `values` allow it, removes one field error
//! of the same field (and container) from the full Pod's results. A check left with no field
//! errors passes.

use std::fmt::Write as _;

use celer_cel::Json;
use celer_pod_security::{self as pss, BadValue, CheckResult, FieldErrorType, LevelVersion};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use super::classic::glob;
use super::classic_model::{PodSecurity, PodSecurityStandard};

/// Control names (as `controlName` spells them) and the checks each stands for
/// (`pkg/pss/utils/mapping.go`).
const CONTROLS: &[(&str, &[&str])] = &[
    (
        "Capabilities",
        &["capabilities_baseline", "capabilities_restricted"],
    ),
    (
        "Seccomp",
        &["seccompProfile_baseline", "seccompProfile_restricted"],
    ),
    ("Privileged Containers", &["privileged"]),
    ("Host Ports", &["hostPorts"]),
    ("/proc Mount Type", &["procMount"]),
    ("HostProcess", &["windowsHostProcess"]),
    ("SELinux", &["seLinuxOptions"]),
    ("Host Namespaces", &["hostNamespaces"]),
    ("HostPath Volumes", &["hostPathVolumes"]),
    ("Sysctls", &["sysctls"]),
    ("AppArmor", &["appArmorProfile"]),
    ("Privilege Escalation", &["allowPrivilegeEscalation"]),
    ("Running as Non-root", &["runAsNonRoot"]),
    ("Running as Non-root user", &["runAsUser"]),
    ("Volume Types", &["restrictedVolumes"]),
];

/// Controls an exclusion names with `images` (container fields) ...
const CONTAINER_LEVEL: [&str; 5] = [
    "Capabilities",
    "Privileged Containers",
    "Host Ports",
    "/proc Mount Type",
    "Privilege Escalation",
];
/// ... and those it names without (Pod fields).
const POD_LEVEL: [&str; 4] = [
    "Host Namespaces",
    "HostPath Volumes",
    "Sysctls",
    "Volume Types",
];

/// The kinds whose `spec.template` is a Pod template.
const WORKLOADS: [&str; 6] = [
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
];

/// One exempted control (a rule's `exclude` entry or an exception's `podSecurity` entry).
#[derive(Debug, Clone)]
pub struct Exclusion {
    control: String,
    checks: &'static [&'static str],
    images: Vec<String>,
    restricted_field: String,
    values: Vec<String>,
}

impl Exclusion {
    pub fn new(s: &PodSecurityStandard) -> Exclusion {
        Exclusion {
            control: s.control_name.clone(),
            checks: CONTROLS
                .iter()
                .find(|(name, _)| *name == s.control_name)
                .map(|(_, ids)| *ids)
                .unwrap_or(&[]),
            images: s.images.clone(),
            restricted_field: s.restricted_field.clone(),
            values: s.values.clone(),
        }
    }

    /// What makes the entry at `path` invalid (`PodSecurityStandard.Validate`, and the
    /// control-name enum of Kyverno's schema), as field errors.
    pub fn problems(&self, path: &str) -> Vec<String> {
        let mut out = Vec::new();
        let control = &self.control;
        if !CONTROLS.iter().any(|(name, _)| name == control) {
            let names: Vec<String> = CONTROLS.iter().map(|(n, _)| format!("{n:?}")).collect();
            out.push(format!(
                "{path}.controlName: Unsupported value: {control:?}: supported values: {}",
                names.join(", ")
            ));
        } else if CONTAINER_LEVEL.contains(&control.as_str()) && self.images.is_empty() {
            out.push(format!(
                "{path}.controlName: Invalid value: {control:?}: exclude.images must be specified for the container level control"
            ));
        } else if POD_LEVEL.contains(&control.as_str()) && !self.images.is_empty() {
            out.push(format!(
                "{path}.controlName: Invalid value: {control:?}: exclude.images must not be specified for the pod level control"
            ));
        }
        if !self.restricted_field.is_empty() && self.values.is_empty() {
            out.push(format!("{path}.values: Forbidden: values is required"));
        }
        if self.restricted_field.is_empty() && !self.values.is_empty() {
            out.push(format!(
                "{path}.restrictedField: Forbidden: restrictedField is required"
            ));
        }
        out
    }
}

/// A `validate.podSecurity` rule, compiled.
#[derive(Debug, Clone)]
pub struct PodSecurityRule {
    level_version: LevelVersion,
    /// `level` and `version` as written: Kyverno's messages print them so.
    level: String,
    version: String,
    excludes: Vec<Exclusion>,
}

impl PodSecurityRule {
    /// The rule, or what is wrong with it (field errors under `validate.podSecurity`).
    pub fn compile(p: &PodSecurity) -> Result<PodSecurityRule, Vec<String>> {
        let mut problems = Vec::new();
        let level_version = match LevelVersion::parse(&p.level, &p.version) {
            Ok(lv) => Some(lv),
            Err(e) => {
                problems.push(format!("validate.podSecurity: Invalid value: {e}"));
                None
            }
        };
        let excludes: Vec<Exclusion> = p.exclude.iter().map(Exclusion::new).collect();
        for (i, e) in excludes.iter().enumerate() {
            problems.extend(e.problems(&format!("validate.podSecurity.exclude[{i}]")));
        }
        match level_version {
            Some(level_version) if problems.is_empty() => Ok(PodSecurityRule {
                level_version,
                level: p.level.clone(),
                version: p.version.clone(),
                excludes,
            }),
            _ => Err(problems),
        }
    }
}

/// A podSecurity rule's result on one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Failing checks remained, and matched PolicyExceptions exempted all of them.
    Exempted,
    /// Kyverno's message: the rule, the level, the failing checks and their field errors;
    /// and the report properties naming them ([`failure_properties`]).
    Fail(String, crate::response::ReportProperties),
    Error(String),
}

/// The Pod metadata and spec of `object` (`getSpec`): a Pod's own, a workload's
/// `spec.template`, a CronJob's job template spec with the Job's metadata (as Kyverno reads
/// it). Missing parts are empty, as Go's decoding leaves them.
fn pod_of(kind: &str, object: &Json) -> Option<(Json, Json)> {
    let at = |path: &[&str]| -> Json {
        let mut cur = Some(object);
        for key in path {
            cur = cur.and_then(|c| c.get(*key));
        }
        cur.filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(Json::new_object)
    };
    match kind {
        "Pod" => Some((at(&["metadata"]), at(&["spec"]))),
        k if WORKLOADS.contains(&k) => Some((
            at(&["spec", "template", "metadata"]),
            at(&["spec", "template", "spec"]),
        )),
        "CronJob" => Some((
            at(&["spec", "jobTemplate", "metadata"]),
            at(&["spec", "jobTemplate", "spec", "template", "spec"]),
        )),
        _ => None,
    }
}

/// Runs `rule` on `object` (of `kind`). `exceptions` holds the podSecurity entries of the
/// PolicyExceptions that matched, when some did (all of them with entries).
pub fn evaluate(
    rule: &PodSecurityRule,
    rule_name: &str,
    kind: &str,
    object: &Json,
    exceptions: Option<&[&Exclusion]>,
) -> Verdict {
    let Some((metadata, spec)) = pod_of(kind, object) else {
        return Verdict::Error(
            "Error while getting new resource: could not find correct resource type".to_string(),
        );
    };
    let lv = &rule.level_version;
    let checks = match pss::evaluate(lv, &metadata, &spec) {
        Ok(c) => c,
        Err(e) => return Verdict::Error(format!("Error while getting new resource: {e}")),
    };
    let excludes: Vec<&Exclusion> = rule.excludes.iter().collect();
    let mut checks = match exempt_all(lv, &excludes, checks, &metadata, &spec) {
        Ok(c) => c,
        Err(e) => return Verdict::Error(format!("Error while getting new resource: {e}")),
    };
    if checks.is_empty() {
        return Verdict::Pass;
    }
    if let Some(exceptions) = exceptions {
        checks = match exempt_all(lv, exceptions, checks, &metadata, &spec) {
            Ok(c) => c,
            Err(e) => return Verdict::Error(format!("Error while getting new resource: {e}")),
        };
        if checks.is_empty() {
            return Verdict::Exempted;
        }
    }
    convert_fields(&mut checks, kind);
    let properties = failure_properties(rule, &checks, &spec);
    Verdict::Fail(
        format!(
            "Validation rule '{rule_name}' failed. It violates PodSecurity \"{}:{}\": {}",
            rule.level,
            rule.version,
            format_checks(&checks)
        ),
        properties,
    )
}

/// The report properties of a failure, as Kyverno adds them (`addPodSecurityProperties`):
/// `standard` and `version`, `controls` (the failing checks' IDs) and `controlsJSON` (each
/// with its control's name and the images of the containers its detail names).
fn failure_properties(
    rule: &PodSecurityRule,
    checks: &[CheckResult],
    spec: &Json,
) -> crate::response::ReportProperties {
    let mut json = String::from("[");
    for (i, check) in checks.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        let name = (CONTROLS.iter())
            .find(|(_, ids)| ids.contains(&check.id))
            .map(|(name, _)| *name)
            .unwrap_or_default();
        json.push_str("{\"ID\":");
        crate::engine::push_json_string(&mut json, check.id);
        json.push_str(",\"Name\":");
        crate::engine::push_json_string(&mut json, name);
        json.push_str(",\"Images\":");
        match detail_containers(&check.forbidden_detail) {
            None => json.push_str("null"),
            Some(names) => {
                json.push('[');
                for (j, container) in names.iter().enumerate() {
                    if j > 0 {
                        json.push(',');
                    }
                    let image = container_image(spec, container)
                        .map(kyverno_image)
                        .unwrap_or_else(|| container.to_string());
                    crate::engine::push_json_string(&mut json, &image);
                }
                json.push(']');
            }
        }
        json.push('}');
    }
    json.push(']');
    let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
    vec![
        ("controls".into(), ids.join(",")),
        ("controlsJSON".into(), json),
        ("standard".into(), rule.level.clone()),
        ("version".into(), rule.version.clone()),
    ]
}

/// The containers a check's detail names (`container "a"`, `containers "a", "b"`, `pod or
/// container "a"`): the text between `container(s)` and `must`, quotes and spaces removed.
fn detail_containers(detail: &str) -> Option<Vec<String>> {
    let at = detail.find("container")?;
    let rest = &detail[at + "container".len()..];
    let rest = rest.strip_prefix('s').unwrap_or(rest);
    let end = rest.find("must")?;
    let names: String = rest[..end]
        .chars()
        .filter(|c| *c != '"' && *c != ' ')
        .collect();
    Some(names.split(',').map(str::to_string).collect())
}

/// The image of the container (or init or ephemeral container) of that name.
fn container_image<'j>(spec: &'j Json, name: &str) -> Option<&'j str> {
    ["containers", "initContainers", "ephemeralContainers"]
        .iter()
        .filter_map(|list| spec.get(list).and_then(|l| l.as_array()))
        .flat_map(|l| l.iter())
        .find(|c| c.get("name").and_then(|n| n.as_str()) == Some(name))
        .and_then(|c| c.get("image").and_then(|i| i.as_str()))
}

/// An image as Kyverno's `ImageInfo.String()` writes it: the registry (`docker.io` when the
/// reference names none), the path as written, then `@digest` or `:tag` (`latest` when none).
fn kyverno_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let (domain, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            (first, rest)
        }
        _ => ("docker.io", name),
    };
    let last_slash = path.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match path[last_slash..].rfind(':') {
        Some(i) => (&path[..last_slash + i], &path[last_slash + i + 1..]),
        None => (path, "latest"),
    };
    match digest {
        Some(d) => format!("{domain}/{path}@{d}"),
        None => format!("{domain}/{path}:{tag}"),
    }
}

/// `ApplyPodSecurityExclusion`: each exclusion in turn.
fn exempt_all(
    lv: &LevelVersion,
    excludes: &[&Exclusion],
    mut checks: Vec<CheckResult>,
    metadata: &Json,
    spec: &Json,
) -> Result<Vec<CheckResult>, pss::DecodeError> {
    for exclude in excludes {
        if checks.is_empty() {
            break;
        }
        if exclude.images.is_empty() {
            // Pod-level: the spec with one bare container, so that only Pod fields fail.
            let mut reduced = spec.clone();
            if let Some(obj) = reduced.as_object_mut() {
                obj.remove(&"initContainers");
                obj.remove(&"ephemeralContainers");
                let fake: Json = sonic_rs::json!([{"name": "fake"}]);
                obj.insert("containers", fake);
            }
            let found = pss::evaluate(lv, metadata, &reduced)?;
            exempt(&mut checks, &found, exclude, spec, None);
        } else {
            // Container-level: only the containers of matching images, and a metadata with
            // no annotations (Kyverno's matching Pod has its name and namespace only).
            let mut matching = Json::new_object();
            for list in ["initContainers", "containers", "ephemeralContainers"] {
                let kept: Vec<Json> = spec
                    .get(list)
                    .and_then(|l| l.as_array())
                    .map(|l| {
                        l.iter()
                            .filter(|c| {
                                let image = c.get("image").and_then(|i| i.as_str()).unwrap_or("");
                                exclude.images.iter().any(|p| glob(p, image))
                            })
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if !kept.is_empty()
                    && let Some(m) = matching.as_object_mut()
                {
                    m.insert(list, Json::from(kept));
                }
            }
            let mut meta = Json::new_object();
            for key in ["name", "namespace"] {
                if let Some(v) = metadata.get(key).and_then(|v| v.as_str())
                    && let Some(m) = meta.as_object_mut()
                {
                    m.insert(key, v);
                }
            }
            let found = pss::evaluate(lv, &meta, &matching)?;
            exempt(&mut checks, &found, exclude, spec, Some(&matching));
        }
    }
    Ok(checks)
}

/// `exemptExclusions`: each field error the exclusion's reduced Pod has, when the exclusion's
/// field and values cover it, removes one field error of the same (index-free) field, and for
/// container fields of the same container name, from `checks`.
fn exempt(
    checks: &mut Vec<CheckResult>,
    found: &[CheckResult],
    exclude: &Exclusion,
    spec: &Json,
    matching: Option<&Json>,
) {
    for result in found.iter().filter(|r| exclude.checks.contains(&r.id)) {
        for error in &result.errors {
            let field = parse_field(&error.field);
            let container = match (matching, &field.container) {
                (Some(m), Some((list, index))) => container_name(m, list, *index),
                _ => "",
            };
            if !exclude.restricted_field.is_empty() && field.starred != exclude.restricted_field {
                continue;
            }
            if !exclude.values.is_empty()
                && !bad_values(&error.bad_value)
                    .iter()
                    .all(|v| exclude.values.iter().any(|p| glob(p, v)))
            {
                continue;
            }
            let Some(at) = checks.iter().position(|c| c.id == result.id) else {
                continue;
            };
            let check = &mut checks[at];
            let same = check.errors.iter().position(|e| {
                let other = parse_field(&e.field);
                if other.starred != field.starred {
                    return false;
                }
                match (matching, &other.container) {
                    (Some(_), Some((list, index))) => {
                        container_name(spec, list, *index) == container
                    }
                    _ => true,
                }
            });
            if let Some(i) = same {
                check.errors.swap_remove(i);
                if check.errors.is_empty() {
                    checks.remove(at);
                }
            }
        }
    }
}

/// A field path with every run of digits made `*`, and the container it is in, if any.
struct ParsedField {
    starred: String,
    /// (`containers` | `initContainers` | `ephemeralContainers`, index).
    container: Option<(String, usize)>,
}

/// `parseField`: the second word of the path says whether it is a container's field, the
/// first number which container.
fn parse_field(field: &str) -> ParsedField {
    let mut starred = String::with_capacity(field.len());
    let mut first_index: Option<usize> = None;
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = String::from(c);
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                n.push(d);
                chars.next();
            }
            if first_index.is_none() {
                first_index = n.parse().ok();
            }
            starred.push('*');
        } else {
            starred.push(c);
        }
    }
    let second_word = field
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .nth(1)
        .unwrap_or("");
    let container = matches!(
        second_word,
        "containers" | "initContainers" | "ephemeralContainers"
    )
    .then_some(())
    .and(first_index)
    .map(|i| (second_word.to_string(), i));
    ParsedField { starred, container }
}

fn container_name<'j>(spec: &'j Json, list: &str, index: usize) -> &'j str {
    spec.get(list)
        .and_then(|l| l.as_array())
        .and_then(|l| l.get(index))
        .and_then(|c| c.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("")
}

/// `extractBadValues`: the values an exclusion's `values` must all cover.
fn bad_values(v: &BadValue) -> Vec<String> {
    match v {
        BadValue::None => Vec::new(),
        BadValue::String(s) if s.is_empty() => Vec::new(),
        BadValue::String(s) => vec![s.clone()],
        BadValue::Bool(b) => vec![b.to_string()],
        BadValue::Int(i) => vec![i.to_string()],
        BadValue::Strings(list) => list.clone(),
    }
}

/// `convertChecks`: field paths of a workload's Pod template, written as Kyverno rewrites
/// them (every `spec` and `metadata` in the path, Pods' metadata included).
fn convert_fields(checks: &mut [CheckResult], kind: &str) {
    let spec = if WORKLOADS.contains(&kind) {
        Some("spec.template.spec")
    } else if kind == "CronJob" {
        Some("spec.jobTemplate.spec.template.spec")
    } else {
        None
    };
    for error in checks.iter_mut().flat_map(|c| c.errors.iter_mut()) {
        if let Some(spec) = spec {
            error.field = error.field.replace("spec", spec);
        }
        error.field = error.field.replace("metadata", "spec.template.metadata");
    }
}

/// `FormatChecksPrint`.
fn format_checks(checks: &[CheckResult]) -> String {
    let mut out = String::new();
    for check in checks {
        let _ = write!(
            out,
            "(Forbidden reason: {}, field error list: [",
            check.forbidden_reason
        );
        for (i, error) in check.errors.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let value = match &error.bad_value {
                BadValue::None => None,
                BadValue::String(s) if s.is_empty() => None,
                BadValue::String(s) => Some(s.clone()),
                BadValue::Bool(b) => Some(b.to_string()),
                BadValue::Int(n) => Some(n.to_string()),
                BadValue::Strings(list) => Some(format!("[{}]", list.join(" "))),
            };
            match value {
                Some(v) if error.error_type == FieldErrorType::Forbidden => {
                    let _ = write!(
                        out,
                        "{} is forbidden, forbidden values found: {v}",
                        error.field
                    );
                }
                _ => {
                    let _ = write!(out, "{error}");
                }
            }
        }
        out.push_str("])");
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "pod_security_tests.rs"]
mod tests;
