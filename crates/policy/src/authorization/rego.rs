//! Rego authorization modules, OPA's way: `deny[reason]` (a set of reasons) and an optional
//! `allow`, over `input` = the SubjectAccessReview as the webhook is sent it. Compiled once
//! with celer-rego (regorus); each rule's index ([`celer_rego::index`]) is checked against
//! the review as it was parsed, and the input is converted once per request, only when some
//! Rego rule may succeed on it.

use std::sync::Arc;

use celer_cel::Json;
use celer_rego::index::{Found, Lookup, RuleIndex};
use celer_rego::{Module, Options, Program, RegoValue, value};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait};

use super::review::{SarVersion, SubjectAccessReview};

/// A policy's compiled module and the rules it declares.
#[derive(Debug)]
pub struct RegoModule {
    program: Arc<Program>,
    /// `data.<package>.deny`, when declared.
    deny: Option<Rule>,
    /// `data.<package>.allow`, when declared.
    allow: Option<Rule>,
}

/// A rule to evaluate, and its index when one is sound.
#[derive(Debug)]
struct Rule {
    path: String,
    index: Option<RuleIndex>,
}

impl Rule {
    /// Whether the rule may have a value on `review`: `false` proves it has none.
    fn may_succeed(&self, review: &SubjectAccessReview) -> bool {
        self.index
            .as_ref()
            .is_none_or(|index| index.may_succeed(&ReviewInput(review)))
    }
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
        program.declares(MODULE, rule).then(|| {
            let path = format!("{package}.{rule}");
            Rule {
                index: program.index(&path),
                path,
            }
        })
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
    /// Whether the rule `deny` / `allow` has an index, for tests and diagnostics.
    pub fn indexed(&self, rule: &str) -> bool {
        let rule = if rule == "deny" {
            &self.deny
        } else {
            &self.allow
        };
        rule.as_ref().is_some_and(|r| r.index.is_some())
    }

    /// Whether deciding `review` may evaluate a rule: `false` when every rule's index rules
    /// it out.
    pub fn may_run(&self, review: &SubjectAccessReview) -> bool {
        [&self.deny, &self.allow]
            .into_iter()
            .flatten()
            .any(|r| r.may_succeed(review))
    }

    /// Evaluates `deny`, then `allow` when nothing denied. A rule whose index rules it out
    /// on `review` is not evaluated, and `input` (the review converted) is asked for only
    /// when some rule is.
    pub fn decide<'i>(
        &self,
        review: &SubjectAccessReview,
        input: impl Fn() -> Result<&'i RegoValue, String>,
    ) -> Result<RegoDecision, String> {
        if let Some(deny) = self.deny.as_ref().filter(|r| r.may_succeed(review)) {
            match self
                .program
                .eval_rule(&deny.path, input()?)
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
                        "{}: expected a set of reasons or a boolean, got {}",
                        deny.path,
                        text(&other)
                    ));
                }
            }
        }
        if let Some(allow) = self.allow.as_ref().filter(|r| r.may_succeed(review)) {
            match self
                .program
                .eval_rule(&allow.path, input()?)
                .map_err(|e| e.to_string())?
            {
                RegoValue::Bool(true) => return Ok(RegoDecision::Allow),
                RegoValue::Bool(false) | RegoValue::Undefined => {}
                other => {
                    return Err(format!(
                        "{}: expected a boolean, got {}",
                        allow.path,
                        text(&other)
                    ));
                }
            }
        }
        Ok(RegoDecision::NoOpinion)
    }
}

/// The review as [`input`] would convert it, read in place.
struct ReviewInput<'a>(&'a SubjectAccessReview);

impl Lookup for ReviewInput<'_> {
    fn find(&self, path: &[String]) -> Found<'_> {
        let review = self.0;
        let Some((root, rest)) = path.split_first() else {
            return Found::Other;
        };
        match root.as_str() {
            "apiVersion" if rest.is_empty() => Found::String(review.version.api_version()),
            "kind" if rest.is_empty() => Found::String("SubjectAccessReview"),
            "apiVersion" | "kind" => Found::Missing,
            "spec" => {
                // v1beta1's groups move to `group` in the input: left to the conversion.
                if review.version == SarVersion::V1beta1
                    && rest
                        .first()
                        .is_some_and(|k| k.as_str() == "group" || k.as_str() == "groups")
                {
                    return Found::Unknown;
                }
                let mut node = &review.spec;
                for key in rest {
                    match node.get(key.as_str()) {
                        Some(next) => node = next,
                        None => return Found::Missing,
                    }
                }
                if let Some(s) = node.as_str() {
                    Found::String(s)
                } else if let Some(b) = node.as_bool() {
                    Found::Bool(b)
                } else {
                    Found::Other
                }
            }
            _ => Found::Missing,
        }
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
