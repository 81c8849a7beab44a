//! The result of evaluating a request, and the AdmissionReview response it becomes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use crate::attributes::Attributes;
use crate::engine::{json_string, push_json_string};
use crate::mutating::MutationState;
use crate::mutation::json_patch::PatchOp;
use crate::name::Name;
use crate::request::ReviewVersion;

/// `metav1.Status` of a denied request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub details: Option<Box<StatusDetails>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusDetails {
    pub group: String,
    /// The resource (`admission.NewForbidden` puts it under `kind`).
    pub kind: String,
    pub name: String,
    pub causes: Vec<String>,
}

/// `reasonToCode`.
fn reason_to_code(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

/// `extractResourceName`: the request's name, else the object's name or generateName, else
/// `Unknown`.
fn resource_name(attributes: &Attributes<'_>, object: Option<&Json>) -> String {
    if !attributes.name.is_empty() {
        return attributes.name.to_string();
    }
    let meta = object.and_then(|o| o.get("metadata"));
    for key in ["name", "generateName"] {
        if let Some(n) = meta
            .and_then(|m| m.get(key))
            .and_then(|n| n.as_str())
            .filter(|n| !n.is_empty())
        {
            return n.to_string();
        }
    }
    "Unknown".to_string()
}

impl Status {
    /// A denial as `admission.NewForbidden` words it, with the code taken from the reason:
    /// `<resource>[.<group>] "<name>" is forbidden: <message>`.
    pub fn forbidden(
        attributes: &Attributes<'_>,
        object: Option<&Json>,
        message: &str,
        reason: &str,
    ) -> Status {
        let reason = if reason.is_empty() { "Invalid" } else { reason };
        let name = resource_name(attributes, object);
        let r = attributes.resource;
        let qualified = if r.group.is_empty() {
            r.resource.to_string()
        } else {
            format!("{}.{}", r.resource, r.group)
        };
        Status {
            code: reason_to_code(reason),
            reason: reason.to_string(),
            message: format!("{qualified} {} is forbidden: {message}", json_string(&name)),
            details: Some(Box::new(StatusDetails {
                group: r.group.to_string(),
                kind: r.resource.to_string(),
                name,
                causes: vec![message.to_string()],
            })),
        }
    }

    /// A mutating policy's error (`generic.PolicyError`): code 403, the given reason, the
    /// message without the resource prefix, every error as a cause.
    pub fn policy_errors(
        attributes: &Attributes<'_>,
        object: Option<&Json>,
        errors: Vec<String>,
        reason: &str,
    ) -> Status {
        let mut status = Status::forbidden(attributes, object, "", "Forbidden");
        status.reason = reason.to_string();
        status.message = errors.first().cloned().unwrap_or_default();
        if let Some(d) = &mut status.details {
            d.causes = errors;
        }
        status
    }

    /// An engine failure that bypasses failurePolicy (as a failed namespace lookup does);
    /// engine errors come here through `From<&EngineError>` only (`error.rs`).
    pub(crate) fn internal(message: &str) -> Status {
        Status {
            code: 500,
            reason: "InternalError".to_string(),
            message: format!("Internal error occurred: {message}"),
            details: None,
        }
    }
}

/// The kinds of policies results are reported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Validating,
    Mutating,
    /// A Gatekeeper Constraint (the result's policy is its template, its binding the
    /// Constraint).
    GatekeeperConstraint,
    /// A Gatekeeper mutator (Assign, AssignMetadata, ModifySet, AssignImage; the result's
    /// message is its kind when it applied).
    GatekeeperMutator,
    /// Kyverno's ValidatingPolicy and NamespacedValidatingPolicy.
    KyvernoValidating,
    /// Kyverno's MutatingPolicy and NamespacedMutatingPolicy.
    KyvernoMutating,
    /// Kyverno's ClusterPolicy and Policy `validate.cel` rules (the binding is the rule).
    KyvernoClusterPolicy,
}

impl PolicyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyKind::Validating => "ValidatingAdmissionPolicy",
            PolicyKind::Mutating => "MutatingAdmissionPolicy",
            PolicyKind::GatekeeperConstraint => "ConstraintTemplate",
            PolicyKind::GatekeeperMutator => "GatekeeperMutator",
            PolicyKind::KyvernoValidating => "ValidatingPolicy",
            PolicyKind::KyvernoMutating => "MutatingPolicy",
            PolicyKind::KyvernoClusterPolicy => "ClusterPolicy",
        }
    }
}

/// What one (policy, binding) did to the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// Evaluated, nothing failed (or, for mutations, applied).
    Pass,
    /// A validation failed and the binding denies.
    Fail,
    /// A validation failed and the binding only warns.
    Warn,
    /// A validation failed and the binding only audits.
    Audit,
    /// An expression or the configuration failed.
    Error,
    /// Matched, but matchConditions or missing params kept it from running.
    Skip,
}

impl ResultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Pass => "pass",
            ResultKind::Fail => "fail",
            ResultKind::Warn => "warn",
            ResultKind::Audit => "audit",
            ResultKind::Error => "error",
            ResultKind::Skip => "skip",
        }
    }

    /// Severity, for picking the one result of a binding with several decisions.
    pub fn rank(self) -> u8 {
        match self {
            ResultKind::Skip => 0,
            ResultKind::Pass => 1,
            ResultKind::Audit => 2,
            ResultKind::Warn => 3,
            ResultKind::Error => 4,
            ResultKind::Fail => 5,
        }
    }
}

/// The policy and binding names are shared with the policy set ([`Name`] reads and compares
/// like a string), and the fixed messages of skipped bindings are static texts, so a result
/// costs no allocation unless it carries a message made for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyResult {
    pub kind: PolicyKind,
    pub policy: Name,
    pub binding: Option<Name>,
    pub result: ResultKind,
    pub message: Option<Cow<'static, str>>,
    /// What policy reports add to the result (a podSecurity rule's failed controls); empty
    /// for most, without an allocation.
    pub properties: ReportProperties,
}

/// Report properties a result carries (name, value): celer's own names (a podSecurity rule's
/// controls) or a rule's `reportProperties`.
pub type ReportProperties = Vec<(Cow<'static, str>, String)>;

impl PolicyResult {
    pub fn new(
        kind: PolicyKind,
        policy: &str,
        binding: Option<&str>,
        result: ResultKind,
        message: Option<String>,
    ) -> PolicyResult {
        PolicyResult {
            kind,
            policy: Name::from(policy),
            binding: binding.map(Name::from),
            result,
            message: message.map(Cow::Owned),
            properties: Vec::new(),
        }
    }

    /// A result for names the policy set already holds.
    pub fn named(
        kind: PolicyKind,
        policy: &Name,
        binding: Option<&Name>,
        result: ResultKind,
        message: Option<String>,
    ) -> PolicyResult {
        PolicyResult {
            kind,
            policy: policy.clone(),
            binding: binding.cloned(),
            result,
            message: message.map(Cow::Owned),
            properties: Vec::new(),
        }
    }

    /// A result with a fixed text for names the policy set already holds (a skipped binding's
    /// `"matchConditions not met"`): no allocation.
    pub fn fixed(
        kind: PolicyKind,
        policy: &Name,
        binding: Option<&Name>,
        result: ResultKind,
        message: &'static str,
    ) -> PolicyResult {
        PolicyResult {
            kind,
            policy: policy.clone(),
            binding: binding.cloned(),
            result,
            message: Some(Cow::Borrowed(message)),
            properties: Vec::new(),
        }
    }
}

/// Everything an evaluation decided.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub allowed: bool,
    pub status: Option<Status>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
    /// The RFC 6902 patch from the request's object to the mutated one, when it changed.
    pub patch: Option<Vec<PatchOp>>,
    /// The mutated object, when it changed.
    pub patched: Option<Json>,
    /// One entry per (policy, binding) that matched, in evaluation order.
    pub results: Vec<PolicyResult>,
    /// In a probe ([`crate::family::Mode::probe`]): how many policies are candidates.
    pub candidates: usize,
}

impl Outcome {
    pub fn allowed() -> Outcome {
        Outcome {
            allowed: true,
            ..Outcome::default()
        }
    }

    /// Denies with `status`; the first denial stands.
    pub fn deny(&mut self, status: Status) {
        if self.allowed {
            self.allowed = false;
            self.status = Some(status);
        }
    }

    /// Records the mutation's patch, and the mutated object `with_object`; denies when the
    /// object could not be written out (not expected to happen).
    pub(crate) fn set_patch(&mut self, state: MutationState<'_>, with_object: bool) {
        match state.into_patch(with_object) {
            Ok(Some((patch, patched))) => {
                self.patch = Some(patch);
                self.patched = patched;
            }
            Ok(None) => {}
            Err(status) => self.deny(status),
        }
    }

    /// The AdmissionReview response body for this outcome (`uid` echoed, `apiVersion` as
    /// the request's). A denied request carries no patch.
    pub fn review_json(&self, uid: &str, version: ReviewVersion) -> String {
        let mut out = String::with_capacity(256);
        out.push_str("{\"apiVersion\":\"");
        out.push_str(version.api_version());
        out.push_str("\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
        push_json_string(&mut out, uid);
        out.push_str(",\"allowed\":");
        out.push_str(if self.allowed { "true" } else { "false" });
        if let Some(s) = &self.status {
            out.push_str(",\"status\":");
            status_json(&mut out, s);
        }
        if self.allowed
            && let Some(patch) = &self.patch
            && !patch.is_empty()
            && let Ok(text) = crate::mutation::diff::to_text(patch)
        {
            out.push_str(",\"patchType\":\"JSONPatch\",\"patch\":\"");
            base64(&mut out, text.as_bytes());
            out.push('"');
        }
        if !self.warnings.is_empty() {
            out.push_str(",\"warnings\":[");
            for (i, w) in self.warnings.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(&mut out, w);
            }
            out.push(']');
        }
        if !self.audit_annotations.is_empty() {
            out.push_str(",\"auditAnnotations\":{");
            for (i, (k, v)) in self.audit_annotations.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(&mut out, k);
                out.push(':');
                push_json_string(&mut out, v);
            }
            out.push('}');
        }
        out.push_str("}}");
        out
    }
}

fn status_json(out: &mut String, s: &Status) {
    out.push_str("{\"metadata\":{},\"status\":\"Failure\",\"message\":");
    push_json_string(out, &s.message);
    // A webhook's own denial (Kyverno's) may carry no reason and no code.
    if !s.reason.is_empty() {
        out.push_str(",\"reason\":");
        push_json_string(out, &s.reason);
    }
    if let Some(d) = &s.details {
        out.push_str(",\"details\":{");
        let mut parts = Vec::new();
        if !d.name.is_empty() {
            parts.push(format!("\"name\":{}", json_string(&d.name)));
        }
        if !d.group.is_empty() {
            parts.push(format!("\"group\":{}", json_string(&d.group)));
        }
        if !d.kind.is_empty() {
            parts.push(format!("\"kind\":{}", json_string(&d.kind)));
        }
        if !d.causes.is_empty() {
            let causes: Vec<String> = d
                .causes
                .iter()
                .map(|c| format!("{{\"message\":{}}}", json_string(c)))
                .collect();
            parts.push(format!("\"causes\":[{}]", causes.join(",")));
        }
        out.push_str(&parts.join(","));
        out.push('}');
    }
    if s.code != 0 {
        out.push_str(",\"code\":");
        out.push_str(&s.code.to_string());
    }
    out.push('}');
}

/// Standard base64 with padding: how `[]byte` fields travel in JSON.
fn base64(out: &mut String, bytes: &[u8]) {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let index = ((n >> (18 - 6 * i)) & 63) as usize;
                out.push(char::from(TABLE.get(index).copied().unwrap_or(b'A')));
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::attributes::{GroupVersionKind, GroupVersionResource, Operation};

    fn attributes(name: &'static str, group: &'static str) -> Attributes<'static> {
        Attributes {
            kind: GroupVersionKind::default(),
            resource: GroupVersionResource {
                group,
                version: "v1",
                resource: "deployments",
            },
            sub_resource: "",
            operation: Operation::Create,
            name,
            namespace: "default",
            object: None,
            old_object: None,
        }
    }

    #[test]
    fn base64_pads_like_go() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("[{\"op\":\"add\"}]", "W3sib3AiOiJhZGQifV0="),
        ] {
            let mut out = String::new();
            base64(&mut out, input.as_bytes());
            assert_eq!(out, want, "{input}");
        }
    }

    #[test]
    fn forbidden_words_and_codes() {
        let s = Status::forbidden(&attributes("web", "apps"), None, "no", "");
        assert_eq!(s.message, "deployments.apps \"web\" is forbidden: no");
        assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
        let s = Status::forbidden(&attributes("", ""), None, "no", "Forbidden");
        assert_eq!(s.message, "deployments \"Unknown\" is forbidden: no");
        assert_eq!(s.code, 403);
        let object: Json = sonic_rs::from_str(r#"{"metadata":{"generateName":"web-"}}"#).unwrap();
        let s = Status::forbidden(&attributes("", ""), Some(&object), "no", "Unauthorized");
        assert_eq!(s.message, "deployments \"web-\" is forbidden: no");
        assert_eq!(s.code, 401);
        assert_eq!(
            Status::forbidden(&attributes("a", ""), None, "x", "RequestEntityTooLarge").code,
            413
        );
    }

    #[test]
    fn review_json_echoes_uid_and_version() {
        let mut o = Outcome::allowed();
        o.warnings.push("careful".into());
        o.audit_annotations.insert("p/k".into(), "v".into());
        assert_eq!(
            o.review_json("abc", ReviewVersion::V1beta1),
            r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"abc","allowed":true,"warnings":["careful"],"auditAnnotations":{"p/k":"v"}}}"#
        );
        o.deny(Status::forbidden(
            &attributes("web", ""),
            None,
            "no",
            "Forbidden",
        ));
        let text = o.review_json("abc", ReviewVersion::V1);
        let v: Json = sonic_rs::from_str(&text).unwrap();
        assert_eq!(v["response"]["allowed"].as_bool(), Some(false));
        assert_eq!(v["response"]["status"]["code"].as_u64(), Some(403));
        assert_eq!(
            v["response"]["status"]["details"]["causes"][0]["message"].as_str(),
            Some("no")
        );
    }
}
