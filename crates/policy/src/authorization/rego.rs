//! Rego authorization modules, OPA's way: `deny[reason]` (a set of reasons) and an optional
//! `allow`, over `input` = the SubjectAccessReview as the webhook is sent it. Compiled once
//! with celer-rego (regorus); the input is converted once per request, only when a Rego
//! policy is a candidate.

use std::sync::Arc;

use celer_cel::Json;
use celer_rego::{Module, Options, Program, RegoValue, value};
use sonic_rs::JsonValueMutTrait;

use super::review::{SarVersion, SubjectAccessReview};

/// A policy's compiled module and the rules it declares.
#[derive(Debug)]
pub struct RegoModule {
    program: Arc<Program>,
    /// `data.<package>.deny`, when declared.
    deny: Option<String>,
    /// `data.<package>.allow`, when declared.
    allow: Option<String>,
}

/// What a module decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegoDecision {
    /// `deny` is non-empty (its reasons, sorted) or `true`.
    Deny(Vec<String>),
    /// Nothing denied and `allow` is `true`.
    Allow,
    NoOpinion,
}

/// The module's name in errors.
const MODULE: &str = "spec.rego";

/// Compiles `spec.rego` (v0 syntax unless `v1`).
pub fn compile(text: &str, v1: bool) -> Result<RegoModule, Vec<String>> {
    let options = Options {
        rego_v0: !v1,
        ..Options::default()
    };
    let module = Module {
        name: MODULE.to_string(),
        text: text.to_string(),
    };
    let program = Program::compile(&[module], None, options)
        .map_err(|e| vec![format!("{MODULE}: Invalid value: {}", e.message)])?;
    let Some(package) = program.packages().first().cloned() else {
        return Err(vec![format!("{MODULE}: Required value: a package")]);
    };
    let declared = |rule: &str| {
        program
            .declares(MODULE, rule)
            .then(|| format!("{package}.{rule}"))
    };
    let (deny, allow) = (declared("deny"), declared("allow"));
    if deny.is_none() && allow.is_none() {
        return Err(vec![format!(
            "{MODULE}: Invalid value: the module must define a rule named \"deny\" or \"allow\""
        )]);
    }
    Ok(RegoModule {
        program: Arc::new(program),
        deny,
        allow,
    })
}

impl RegoModule {
    /// Evaluates `deny`, then `allow` when nothing denied.
    pub fn decide(&self, input: &RegoValue) -> Result<RegoDecision, String> {
        if let Some(deny) = &self.deny {
            match self
                .program
                .eval_rule(deny, input)
                .map_err(|e| e.to_string())?
            {
                RegoValue::Set(reasons) if !reasons.is_empty() => {
                    let mut reasons: Vec<String> = reasons.iter().map(text).collect();
                    reasons.sort();
                    return Ok(RegoDecision::Deny(reasons));
                }
                RegoValue::Bool(true) => return Ok(RegoDecision::Deny(Vec::new())),
                RegoValue::Set(_) | RegoValue::Bool(false) | RegoValue::Undefined => {}
                other => {
                    return Err(format!(
                        "{deny}: expected a set of reasons or a boolean, got {}",
                        text(&other)
                    ));
                }
            }
        }
        if let Some(allow) = &self.allow {
            match self
                .program
                .eval_rule(allow, input)
                .map_err(|e| e.to_string())?
            {
                RegoValue::Bool(true) => return Ok(RegoDecision::Allow),
                RegoValue::Bool(false) | RegoValue::Undefined => {}
                other => {
                    return Err(format!("{allow}: expected a boolean, got {}", text(&other)));
                }
            }
        }
        Ok(RegoDecision::NoOpinion)
    }
}

/// A reason as text: a string as it is, anything else as JSON.
fn text(v: &RegoValue) -> String {
    match value::as_str(v) {
        Some(s) => s.to_string(),
        None => value::to_json(v)
            .map(|j| j.to_string())
            .unwrap_or_else(|e| e.to_string()),
    }
}

/// `input`: the review in the request's apiVersion (v1beta1's groups back in `group`).
pub fn input(review: &SubjectAccessReview) -> Result<RegoValue, String> {
    let mut spec: Json = review.spec.clone();
    if review.version == SarVersion::V1beta1
        && let Some(object) = spec.as_object_mut()
        && let Some(groups) = object.remove(&"groups")
    {
        object.insert("group", groups);
    }
    let mut root = sonic_rs::Object::new();
    root.insert("apiVersion", review.version.api_version());
    root.insert("kind", "SubjectAccessReview");
    root.insert("spec", spec);
    value::from_json(&root.into_value()).map_err(|e| format!("the Rego input: {e}"))
}
