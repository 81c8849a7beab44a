//! Kyverno's ClusterPolicy and Policy rules celer runs, matched with Kyverno's classic
//! `match` / `exclude` (kinds, names, namespaces, operations, selectors, annotations,
//! subjects):
//! - `validate.cel` (`pkg/engine/handlers/validation/validate_cel.go`): lowered into a
//!   compiled ValidatingPolicy (Kubernetes' validator: variables, messages, celPreconditions
//!   as matchConditions, params). The result is `fail` at the first denying validation
//!   (errors deny too, failurePolicy being Fail), `skip` when the celPreconditions do not
//!   hold, `pass` otherwise.
//! - `validate.podSecurity` (`validate_pss.go`): the Pod Security Standards, see
//!   [`super::pod_security`].
//! - `validate.pattern` and `validate.anyPattern` (`validate_resource.go`): overlay patterns,
//!   see [`super::pattern`] and `classic_pattern.rs`.
//!
//! `kyverno.io/v2` PolicyExceptions that name a rule and match the resource skip it (for
//! podSecurity rules, exempt the controls they list). Pod rules get Kyverno's autogen rules
//! ([`super::autogen::cluster_policy_rules`]).

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use celer_cel::{ActivationBuffers, Json};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::compile::KyvernoPolicies;
use crate::attributes::Attributes;
use crate::compiled::{PolicyCommon, ValidatingPolicy};
use crate::engine::RequestContext;
use crate::error::{ConfigurationError, EngineError};
use crate::family::{self, FamilyRequest, Mode, Selection, ValidatingFamily};
use crate::index::Candidates;
use crate::invocation::Inputs;
use crate::kind_index::KindKey;
use crate::load::{LoadError, Source};
use crate::lookup::ParamScope;
use crate::matching::{FieldErrors, MatchConstraints, Selector};
use crate::model::{self, FailurePolicy};
use crate::name::Name;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind};
use crate::validating::{self, Decision};

use super::classic_model::{ClassicException, ClusterPolicy, Filter, LeftOut, MatchBlock, Subject};
use super::pattern::PatternRule;
use super::pod_security::{self, Exclusion, PodSecurityRule, Verdict};

#[path = "classic_compile.rs"]
mod compile_rules;
#[path = "classic_jmespath.rs"]
mod jmes;
#[path = "classic_pattern.rs"]
mod pattern_rule;

pub use jmes::RuleJmes;

pub use compile_rules::{LeftOutRule, compile, compile_exception};

/// One part of a `kinds` entry: `Kind`, `version/Kind` or `group/version/Kind`, each part a
/// glob; `Kind/subresource` names a subresource.
#[derive(Debug, Clone)]
struct KindPattern {
    group: Option<String>,
    version: Option<String>,
    kind: String,
    subresource: Option<String>,
}

impl KindPattern {
    fn parse(s: &str) -> KindPattern {
        let parts: Vec<&str> = s.split('/').collect();
        let mut p = KindPattern {
            group: None,
            version: None,
            kind: String::new(),
            subresource: None,
        };
        match parts.as_slice() {
            [kind] => p.kind = kind.to_string(),
            [a, b] if b.starts_with(|c: char| c.is_ascii_lowercase()) => {
                p.kind = a.to_string();
                p.subresource = Some(b.to_string());
            }
            [version, kind] => {
                p.version = Some(version.to_string());
                p.kind = kind.to_string();
            }
            [group, version, kind] => {
                p.group = Some(group.to_string());
                p.version = Some(version.to_string());
                p.kind = kind.to_string();
            }
            [group, version, kind, sub, ..] => {
                p.group = Some(group.to_string());
                p.version = Some(version.to_string());
                p.kind = kind.to_string();
                p.subresource = Some(sub.to_string());
            }
            [] => {}
        }
        p
    }

    /// The index key of this pattern: a group or kind with a wildcard is any.
    fn key(&self) -> KindKey<'_> {
        let exact = |s: &str| !s.contains(['*', '?']);
        KindKey {
            group: self.group.as_deref().filter(|g| exact(g)),
            kind: Some(self.kind.as_str()).filter(|k| exact(k)),
        }
    }

    /// Kyverno's `CheckKind` with ephemeral containers allowed (as its engine and exceptions
    /// call it): a plain `Pod` also matches `pods/ephemeralcontainers`.
    fn matches(&self, a: &Attributes<'_>) -> bool {
        if !a.sub_resource.is_empty() {
            return self.matches_subresource(a);
        }
        let kind = a.kind;
        self.subresource.is_none()
            && glob(&self.kind, kind.kind)
            && self.group.as_deref().is_none_or(|g| glob(g, kind.group))
            && self
                .version
                .as_deref()
                .is_none_or(|v| glob(v, kind.version))
    }

    /// A subresource request is matched by the kind of its resource, as Kyverno's webhook
    /// finds it through discovery (`withTopLevelGVK`): `StatefulSet/scale` matches
    /// `apps/v1 statefulsets/scale`, whose object is an `autoscaling/v1 Scale`. Without
    /// discovery here, a kind is its resource when its plural (the built-in table, else the
    /// regular plural) is that resource; a kind glob is matched against the resource name.
    fn matches_subresource(&self, a: &Attributes<'_>) -> bool {
        let r = a.resource;
        let kind_is_resource = if self.kind.contains(['*', '?']) {
            let pattern = self.kind.to_ascii_lowercase();
            glob(&pattern, r.resource)
                || r.resource
                    .strip_suffix('s')
                    .is_some_and(|s| glob(&pattern, s))
        } else {
            let api_version = match r.group {
                "" => r.version.to_string(),
                group => format!("{group}/{}", r.version),
            };
            crate::kinds::kind_info(&api_version, &self.kind).resource == r.resource
        };
        let subresource = match &self.subresource {
            Some(s) => glob(s, a.sub_resource),
            None => {
                a.sub_resource == "ephemeralcontainers"
                    && r.group.is_empty()
                    && r.version == "v1"
                    && r.resource == "pods"
                    && self.kind == "Pod"
            }
        };
        subresource
            && kind_is_resource
            && self.group.as_deref().is_none_or(|g| glob(g, r.group))
            && self.version.as_deref().is_none_or(|v| glob(v, r.version))
    }
}

/// `*` and `?` wildcards (`wildcard.Match`).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with backtracking on the last `*`.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.iter().skip(pi).all(|c| *c == '*')
}

#[derive(Debug)]
struct CompiledFilter {
    kinds: Vec<KindPattern>,
    names: Vec<String>,
    namespaces: Vec<String>,
    operations: Vec<String>,
    annotations: Option<BTreeMap<String, String>>,
    selector: Option<Selector>,
    namespace_selector: Option<Selector>,
    subjects: Vec<Subject>,
    roles: Vec<String>,
    cluster_roles: Vec<String>,
}

fn compile_filter(f: &Filter, errors: &mut Vec<String>, at: &str) -> CompiledFilter {
    let r = f.resources.clone().unwrap_or_default();
    let selector = |s: &Option<model::LabelSelector>, field: &str, errors: &mut Vec<String>| {
        s.as_ref().and_then(
            |s| match Selector::compile(s, &format!("{at}.resources.{field}")) {
                Ok(s) => Some(s),
                Err(e) => {
                    errors.extend(e.iter().map(ToString::to_string));
                    None
                }
            },
        )
    };
    let mut names = r.names.clone();
    names.extend(r.name.clone());
    CompiledFilter {
        kinds: r.kinds.iter().map(|k| KindPattern::parse(k)).collect(),
        names,
        namespaces: r.namespaces.clone(),
        operations: r.operations.clone(),
        annotations: r.annotations.clone(),
        selector: selector(&r.selector, "selector", errors),
        namespace_selector: selector(&r.namespace_selector, "namespaceSelector", errors),
        subjects: f.subjects.clone(),
        roles: f.roles.clone(),
        cluster_roles: f.cluster_roles.clone(),
    }
}

/// `match` or `exclude`, compiled: any of `any`, or all of `all`.
#[derive(Debug)]
struct CompiledMatch {
    any: Vec<CompiledFilter>,
    all: Vec<CompiledFilter>,
}

fn compile_match(m: &MatchBlock, errors: &mut Vec<String>, at: &str) -> CompiledMatch {
    let mut all: Vec<CompiledFilter> = m
        .all
        .iter()
        .enumerate()
        .map(|(i, f)| compile_filter(f, errors, &format!("{at}.all[{i}]")))
        .collect();
    if !m.inline.is_empty() {
        all.push(compile_filter(&m.inline, errors, at));
    }
    CompiledMatch {
        any: m
            .any
            .iter()
            .enumerate()
            .map(|(i, f)| compile_filter(f, errors, &format!("{at}.any[{i}]")))
            .collect(),
        all,
    }
}

/// What a filter is checked against.
struct Subjects<'a> {
    attributes: &'a Attributes<'a>,
    object: Option<&'a Json>,
    namespace_labels: Option<&'a Json>,
    username: &'a str,
    groups: &'a [&'a str],
}

fn str_at<'j>(v: Option<&'j Json>, keys: &[&str]) -> &'j str {
    let mut cur = v;
    for k in keys {
        cur = cur.and_then(|c| c.get(*k));
    }
    cur.and_then(|c| c.as_str()).unwrap_or_default()
}

impl CompiledFilter {
    /// `ResourceFilter.IsEmpty`: a filter that names nothing.
    fn is_empty(&self) -> bool {
        self.kinds.is_empty()
            && self.names.is_empty()
            && self.namespaces.is_empty()
            && self.operations.is_empty()
            && self.annotations.is_none()
            && self.selector.is_none()
            && self.namespace_selector.is_none()
            && self.subjects.is_empty()
            && self.roles.is_empty()
            && self.cluster_roles.is_empty()
    }

    /// Whether a rule's filter selects the request. An exception's filter (`exception`)
    /// reads no operations and checks no namespaceSelector on Namespaces
    /// (`checkResourceDescription`).
    fn matches(&self, s: &Subjects<'_>, exception: bool) -> bool {
        let a = s.attributes;
        let object = s.object.or(a.old_object);
        if !self.kinds.is_empty() && !self.kinds.iter().any(|k| k.matches(a)) {
            return false;
        }
        let name = match str_at(object, &["metadata", "name"]) {
            "" => a.name,
            n => n,
        };
        if !self.names.is_empty() && !self.names.iter().any(|p| glob(p, name)) {
            return false;
        }
        if !self.namespaces.is_empty() {
            // A Namespace is in the namespace of its own name.
            let ns = if a.kind.kind == "Namespace" && a.kind.group.is_empty() {
                name
            } else {
                a.namespace
            };
            if !self.namespaces.iter().any(|p| glob(p, ns)) {
                return false;
            }
        }
        if !exception
            && !self.operations.is_empty()
            && !self.operations.iter().any(|o| o == a.operation.as_str())
        {
            return false;
        }
        if let Some(want) = &self.annotations {
            let have = object
                .and_then(|o| o.get("metadata"))
                .and_then(|m| m.get("annotations"));
            let ok = want.iter().all(|(k, v)| {
                have.and_then(|h| h.as_object()).is_some_and(|h| {
                    h.iter()
                        .any(|(hk, hv)| glob(k, hk) && hv.as_str().is_some_and(|hv| glob(v, hv)))
                })
            });
            if !ok {
                return false;
            }
        }
        if let Some(sel) = &self.selector
            && !object.is_some_and(|o| sel.matches_labels(o))
        {
            return false;
        }
        if let Some(sel) = &self.namespace_selector {
            let labels = s
                .namespace_labels
                .and_then(|n| n.get("metadata"))
                .and_then(|m| m.get("labels"))
                .and_then(|l| l.as_object());
            if exception {
                if a.kind.kind != "Namespace" && !sel.matches_label_map(labels) {
                    return false;
                }
            } else if a.namespace.is_empty() || !sel.matches_label_map(labels) {
                return false;
            }
        }
        if !self.subjects.is_empty() && !self.subjects.iter().any(|sub| subject_matches(sub, s)) {
            return false;
        }
        // Roles are not known offline or from an AdmissionReview: a filter on them selects
        // nothing.
        if !self.roles.is_empty() || !self.cluster_roles.is_empty() {
            return false;
        }
        true
    }
}

fn subject_matches(sub: &Subject, s: &Subjects<'_>) -> bool {
    match sub.kind.as_str() {
        "ServiceAccount" => {
            s.username
                == format!(
                    "system:serviceaccount:{}:{}",
                    sub.namespace.as_deref().unwrap_or_default(),
                    sub.name
                )
        }
        "User" => glob(&sub.name, s.username),
        "Group" => s.groups.iter().any(|g| glob(&sub.name, g)),
        _ => false,
    }
}

impl CompiledFilter {
    /// The kinds this filter can match; `None` when it does not restrict kinds.
    fn kind_keys(&self) -> Option<Vec<KindKey<'_>>> {
        (!self.kinds.is_empty()).then(|| self.kinds.iter().map(KindPattern::key).collect())
    }
}

impl CompiledMatch {
    fn is_empty(&self) -> bool {
        self.any.is_empty() && self.all.is_empty()
    }

    /// A superset of the kinds the block can match, for the index: the kinds of one `all`
    /// filter (each must match), else the union of the `any` filters' when each names kinds,
    /// else any kind.
    fn kind_keys(&self) -> Vec<KindKey<'_>> {
        if let Some(keys) = self.all.iter().find_map(CompiledFilter::kind_keys) {
            return keys;
        }
        if !self.any.is_empty() {
            let mut keys = Vec::new();
            for f in &self.any {
                match f.kind_keys() {
                    Some(k) => keys.extend(k),
                    None => return vec![KindKey::ANY],
                }
            }
            return keys;
        }
        vec![KindKey::ANY]
    }

    fn matches(&self, s: &Subjects<'_>) -> bool {
        if !self.any.is_empty() && !self.any.iter().any(|f| f.matches(s, false)) {
            return false;
        }
        self.all.iter().all(|f| f.matches(s, false))
    }

    /// An exception's `match` (`checkMatchesResources`): any of `any`, else all of `all`,
    /// else nothing; an empty filter matches nothing.
    fn matches_exception(&self, s: &Subjects<'_>) -> bool {
        let one = |f: &CompiledFilter| !f.is_empty() && f.matches(s, true);
        if !self.any.is_empty() {
            self.any.iter().any(one)
        } else if !self.all.is_empty() {
            self.all.iter().all(one)
        } else {
            false
        }
    }
}

/// What a rule does.
#[derive(Debug)]
pub enum RuleBody {
    /// `validate.cel`, as a ValidatingPolicy, with its params.
    Cel(Box<CelRule>),
    /// `validate.podSecurity`.
    PodSecurity(Box<PodSecurityRule>),
    /// `validate.pattern` or `validate.anyPattern`.
    Pattern(Box<PatternRule>),
    /// `validate.pattern` or `validate.anyPattern` with `{{ }}` variables (or `$()`
    /// references) in the pattern or message: substituted, then compiled, per request.
    PatternTemplate(Box<PatternTemplate>),
    /// `validate.deny`: its conditions and the rule's message.
    Deny(Box<DenyRule>),
}

/// A pattern rule whose pattern or message has variables.
#[derive(Debug)]
pub struct PatternTemplate {
    pub pattern: Option<Json>,
    pub any_pattern: Option<Json>,
    pub message: Option<String>,
}

/// A `validate.deny` rule.
#[derive(Debug)]
pub struct DenyRule {
    /// `validate.deny` (its `conditions`).
    pub deny: Option<Json>,
    /// `validate.message`.
    pub message: Option<String>,
}

/// A `validate.cel` rule: its expressions as a ValidatingPolicy, and where its params come
/// from when it has a `paramKind` (the rule is its own binding).
#[derive(Debug)]
pub struct CelRule {
    pub validate: ValidatingPolicy,
    pub param_ref: Option<model::ParamRef>,
    /// `paramRef.selector`, compiled at load.
    pub param_selector: Option<Result<Selector, FieldErrors>>,
}

/// A rule celer runs (or one autogen made), compiled.
#[derive(Debug)]
pub struct ClassicRule {
    pub policy: Name,
    /// `ClusterPolicy` or `Policy`.
    pub kind: &'static str,
    /// The namespace of a `Policy`: it applies to requests in it only.
    pub namespace: Option<String>,
    pub rule: Name,
    pub body: RuleBody,
    matches: CompiledMatch,
    excludes: Option<CompiledMatch>,
    /// `Enforce`: a failure refuses the request.
    pub enforce: bool,
    /// `spec.admission` (default true).
    pub admission: bool,
    /// `spec.background` (default true): whether background scans run it.
    pub background: bool,
    /// `validate.allowExistingViolations` (default true).
    allow_existing_violations: bool,
    /// `preconditions` and `context`, when the rule reads the JSON context.
    pub jmes: Option<Box<RuleJmes>>,
    /// `reportProperties`, by name, as written.
    pub report_properties: Vec<(String, String)>,
}

impl ClassicRule {
    /// Where the rule goes in the index: the kinds its `match` can name.
    pub fn kind_keys(&self) -> Vec<KindKey<'_>> {
        self.matches.kind_keys()
    }

    /// The subresources the rule's `match` can select, as (resource, subresource) webhook
    /// rules name them (`*` for a glob): `Deployment/scale` gives (`*`, `scale`), and a `Pod`
    /// kind (or a glob a Pod fits) gives (`pods`, `ephemeralcontainers`), which Kyverno's
    /// kind check and webhook rules add to Pods.
    pub fn subresources(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        let filters = (self.matches.any.iter()).chain(&self.matches.all);
        for kind in filters.flat_map(|f| &f.kinds) {
            match kind.subresource.as_deref() {
                Some(sub) if sub.contains(['*', '?']) => out.push(("*", "*")),
                Some(sub) => out.push(("*", sub)),
                None if glob(&kind.kind, "Pod") => out.push(("pods", "ephemeralcontainers")),
                None => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How PolicyExceptions name the rule's policy: `name`, or `namespace/name` for a Policy.
    pub fn exception_key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.policy),
            None => self.policy.to_string(),
        }
    }
}

/// A `kyverno.io/v2` PolicyException, compiled.
#[derive(Debug)]
pub struct ClassicExceptionRule {
    /// `namespace/name`, as Kyverno's messages name it.
    pub key: String,
    /// (policy key, rule name patterns).
    refs: Vec<(String, Vec<String>)>,
    matches: CompiledMatch,
    /// `spec.podSecurity`: the controls exempted in podSecurity rules; none exempts the
    /// whole rule.
    pod_security: Vec<Exclusion>,
    /// `spec.conditions`: JMESPath conditions that must hold too.
    conditions: Option<Json>,
}

impl ClassicExceptionRule {
    /// `Exception.Contains`: the policy by its key, the rule by a glob of its name.
    fn names(&self, rule: &ClassicRule, policy_key: &str) -> bool {
        self.refs.iter().any(|(policy, rules)| {
            policy == policy_key && rules.iter().any(|p| glob(p, rule.rule.as_str()))
        })
    }
}

/// Runs the rules that match the request through the family driver; records a result per
/// rule (`binding` is the rule's name) and, for failures of `Enforce` rules, Kyverno's
/// blocked-resource message.
pub fn run(
    set: &KyvernoPolicies,
    ctx: &RequestContext<'_>,
    object: Option<&Json>,
    outcome: &mut Outcome,
    mode: Mode,
) {
    let request = FamilyRequest::on_object(ctx, object, mode);
    family::run(&ClusterPolicyRules(set), &request, outcome);
}

/// ClusterPolicy and Policy `validate.cel` rules as a validating family.
struct ClusterPolicyRules<'s>(&'s super::compile::KyvernoPolicies);

/// What the rules read once per request, and the failures that block.
struct RulesState<'a> {
    namespace: Option<Arc<Json>>,
    /// The request's groups, for `subjects`, read when a filter asks.
    groups: OnceCell<Vec<&'a str>>,
    /// Kyverno's JSON context of the request, built for the first rule that reads it.
    json_base: OnceCell<Json>,
    /// (policy, rule, message) of the failures that block.
    blocked: Vec<(String, String, String)>,
    buffers: ActivationBuffers,
    result: validating::ValidateResult,
}

impl ValidatingFamily for ClusterPolicyRules<'_> {
    type Policy<'a>
        = &'a ClassicRule
    where
        Self: 'a;
    type Matched<'a>
        = ()
    where
        Self: 'a;
    type State<'a>
        = RulesState<'a>
    where
        Self: 'a;

    fn is_empty(&self) -> bool {
        self.0.classic.is_empty()
    }

    fn policy(&self, id: u32) -> Option<&ClassicRule> {
        self.0.classic.get(id as usize).map(|r| &**r)
    }

    fn start<'a>(&'a self, request: &FamilyRequest<'a>) -> Result<RulesState<'a>, EngineError> {
        Ok(RulesState {
            namespace: request.ctx.namespace()?,
            groups: OnceCell::new(),
            json_base: OnceCell::new(),
            blocked: Vec::new(),
            buffers: ActivationBuffers::default(),
            result: validating::ValidateResult::default(),
        })
    }

    /// The rules whose kinds can match the request's.
    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        let a = &request.attributes;
        let mut out = Vec::new();
        if a.sub_resource.is_empty() {
            (self.0.classic_index).candidates(a.kind.group, a.kind.kind, &mut out);
        } else {
            // Matched by its resource's kind, which only the rules' own match can tell.
            (self.0.classic_index).candidates_in_group(a.resource.group, &mut out);
        }
        family::merged(out)
    }

    fn matches<'a>(
        &'a self,
        r: &'a ClassicRule,
        state: &RulesState<'a>,
        request: &FamilyRequest<'a>,
    ) -> Selection<()> {
        let attributes = &request.attributes;
        if !request.mode.runs(r.admission, r.background)
            || r.namespace
                .as_deref()
                .is_some_and(|ns| ns != attributes.namespace)
        {
            return Selection::Skip;
        }
        let subjects = Subjects {
            attributes,
            object: request.object,
            namespace_labels: state.namespace.as_deref(),
            username: request.ctx.request.user.username,
            groups: state
                .groups
                .get_or_init(|| request.ctx.request.groups().collect()),
        };
        if !r.matches.matches(&subjects)
            || r.excludes.as_ref().is_some_and(|e| e.matches(&subjects))
        {
            return Selection::Skip;
        }
        Selection::Run(())
    }

    fn evaluate<'a>(
        &'a self,
        r: &'a ClassicRule,
        _matched: Result<(), ConfigurationError>,
        state: &mut RulesState<'a>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) -> Result<(), EngineError> {
        // `invokeRuleHandler`: context entries, then preconditions, then exceptions.
        let context = match &r.jmes {
            Some(jmes) => {
                let base = state.json_base.get_or_init(|| jmes::base_context(request));
                // Deferred loading: the entries the preconditions read, the preconditions,
                // then the rest.
                let mut loaded = 0;
                let prepared = jmes::rule_context(r, base, request)
                    .and_then(|mut c| {
                        let upto = jmes::entries_for_preconditions(jmes);
                        jmes::load_entries(r, jmes, &mut c, &mut loaded, upto, request)?;
                        Ok(c)
                    })
                    .map_err(|m| (ResultKind::Error, m))
                    .and_then(|c| match jmes::preconditions(jmes, &c) {
                        Some(result) => Err(result),
                        None => Ok(c),
                    })
                    .and_then(|mut c| {
                        let upto = jmes::entries_for_rule(jmes);
                        jmes::load_entries(r, jmes, &mut c, &mut loaded, upto, request)
                            .map_err(|m| (ResultKind::Error, m))?;
                        Ok(c)
                    });
                match prepared {
                    Ok(c) => Some(c),
                    Err((kind, message)) => {
                        record(r, kind, message, state, outcome);
                        // Kyverno's early results carry the properties as written.
                        if let Some(last) = outcome.results.last_mut() {
                            last.properties = jmes::report_properties(&r.report_properties, None);
                        }
                        return Ok(());
                    }
                }
            }
            None => None,
        };
        let exceptions = self.matched_exceptions(r, state, request, context.as_ref());
        let mut properties = Vec::new();
        let result = match &r.body {
            RuleBody::Cel(_)
            | RuleBody::Pattern(_)
            | RuleBody::PatternTemplate(_)
            | RuleBody::Deny(_)
                if !exceptions.is_empty() =>
            {
                // `validate_cel.go` and `validate_resource.go` join the keys with no space
                // after "exceptions".
                let keys: Vec<&str> = exceptions.iter().map(|e| e.key.as_str()).collect();
                Some((
                    ResultKind::Skip,
                    format!(
                        "rule is skipped due to policy exceptions{}",
                        keys.join(", ")
                    ),
                ))
            }
            RuleBody::Cel(cel) => Some(evaluate_cel(cel, r.rule.as_str(), state, request)),
            RuleBody::PodSecurity(rule) => {
                match evaluate_pod_security(r, rule, &exceptions, request) {
                    Some((kind, message, found)) => {
                        properties = found;
                        Some((kind, message))
                    }
                    None => None,
                }
            }
            RuleBody::Pattern(rule) => {
                pattern_rule::evaluate(r, rule, request, state.namespace.as_deref())
            }
            RuleBody::PatternTemplate(t) => {
                let empty = Json::new_object();
                let context = context.as_ref().unwrap_or(&empty);
                pattern_rule::evaluate_template(r, t, context, request, state.namespace.as_deref())
            }
            RuleBody::Deny(d) => {
                let empty = Json::new_object();
                let context = context.as_ref().unwrap_or(&empty);
                Some(pattern_rule::evaluate_deny(
                    r,
                    d,
                    context,
                    request,
                    state.namespace.as_deref(),
                ))
            }
        };
        let Some((kind, message)) = result else {
            return Ok(());
        };
        record(r, kind, message, state, outcome);
        if !r.report_properties.is_empty() {
            properties.extend(jmes::report_properties(
                &r.report_properties,
                context.as_ref(),
            ));
        }
        if let Some(last) = outcome.results.last_mut() {
            last.properties = properties;
        }
        Ok(())
    }

    fn finish<'a>(
        &'a self,
        state: RulesState<'a>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) {
        if !state.blocked.is_empty() {
            outcome.deny(super::validate::denial(blocked_message(
                &request.attributes,
                request.object,
                &state.blocked,
            )));
        }
    }
}

/// Records a rule's result, and the failure that blocks for an `Enforce` rule.
fn record(
    r: &ClassicRule,
    kind: ResultKind,
    message: String,
    state: &mut RulesState<'_>,
    outcome: &mut Outcome,
) {
    if matches!(kind, ResultKind::Fail | ResultKind::Error) && r.enforce {
        state
            .blocked
            .push((r.policy.to_string(), r.rule.to_string(), message.clone()));
    }
    outcome.results.push(PolicyResult::named(
        PolicyKind::KyvernoClusterPolicy,
        &r.policy,
        Some(&r.rule),
        kind,
        Some(message),
    ));
}

impl ClusterPolicyRules<'_> {
    /// The PolicyExceptions that name `r` and match the request (`MatchesException`), their
    /// `conditions` holding in the rule's JSON context (the request's when the rule reads
    /// none).
    fn matched_exceptions<'a>(
        &'a self,
        r: &ClassicRule,
        state: &RulesState<'a>,
        request: &FamilyRequest<'a>,
        context: Option<&Json>,
    ) -> Vec<&'a ClassicExceptionRule> {
        if self.0.classic_exceptions.is_empty() {
            return Vec::new();
        }
        let policy_key = r.exception_key();
        let subjects = Subjects {
            attributes: &request.attributes,
            object: request.object,
            namespace_labels: state.namespace.as_deref(),
            username: request.ctx.request.user.username,
            groups: state
                .groups
                .get_or_init(|| request.ctx.request.groups().collect()),
        };
        self.0
            .classic_exceptions
            .iter()
            .filter(|e| e.names(r, &policy_key) && e.matches.matches_exception(&subjects))
            .filter(|e| match &e.conditions {
                None => true,
                Some(conditions) => {
                    let context = match context {
                        Some(c) => c,
                        None => state.json_base.get_or_init(|| jmes::base_context(request)),
                    };
                    jmes::exception_conditions_hold(conditions, context)
                }
            })
            .map(|e| &**e)
            .collect()
    }
}

/// A `validate.cel` rule's result (`validate_cel.go`): with params, the rule runs once per
/// param object and the first failure or error is its result; no params is a pass.
fn evaluate_cel<'a>(
    cel: &CelRule,
    rule: &str,
    state: &mut RulesState<'a>,
    request: &FamilyRequest<'a>,
) -> (ResultKind, String) {
    let validate = &cel.validate;
    // `CEL.HasParam`: params only with both paramKind and paramRef; no allocation otherwise.
    let params: std::borrow::Cow<'static, [Option<Arc<Json>>]> =
        match (&validate.common.param_kind, &cel.param_ref) {
            (Some(kind), Some(param_ref)) => {
                match rule_params(kind, param_ref, cel.param_selector.as_ref(), request) {
                    Ok(params) => params.into_iter().map(Some).collect(),
                    Err(e) => {
                        return (
                            ResultKind::Error,
                            format!("error in parameterized resource: {e}"),
                        );
                    }
                }
            }
            _ => std::borrow::Cow::Borrowed(&[None]),
        };
    for param in params.iter() {
        let inputs = Inputs {
            object: request.object,
            old_object: request.attributes.old_object,
            request: request.ctx.default_cel_request(),
            namespace_object: state.namespace.as_deref(),
            params: param.as_deref(),
            authorizer: request.ctx.authorizer_for(&validate.common),
        };
        match crate::engine::match_conditions(&validate.common, &inputs, &mut state.buffers) {
            Ok(false) => return (ResultKind::Skip, "cel preconditions not met".to_string()),
            Err(e) => return (ResultKind::Fail, e.to_string()),
            Ok(true) => {
                let result = &mut state.result;
                validating::validate_into(validate, &inputs, &mut state.buffers, result);
                let first = result
                    .decisions
                    .iter()
                    .find(|d| !matches!(d, Decision::Admit));
                match first {
                    None => {}
                    Some(Decision::Error {
                        enforced: false,
                        message,
                    }) => return (ResultKind::Error, message.clone()),
                    Some(d) => return (ResultKind::Fail, d.message().to_string()),
                }
            }
        }
    }
    (
        ResultKind::Pass,
        format!("Validation rule '{rule}' passed."),
    )
}

/// Kyverno's `CollectParams`: a namespaced param kind is read in `paramRef.namespace`, else in
/// the request's namespace (none for a Namespace request); a cluster-scoped one takes no
/// namespace. A named param that does not exist is an error, as its GET is in Kyverno.
fn rule_params(
    kind: &model::ParamKind,
    param_ref: &model::ParamRef,
    selector: Option<&Result<Selector, FieldErrors>>,
    request: &FamilyRequest<'_>,
) -> Result<Vec<Arc<Json>>, String> {
    let lookup = request.ctx.lookup();
    let a = &request.attributes;
    let Some(scope) = lookup.param_scope(kind) else {
        return Err(format!(
            "failed to check if resource is namespaced or not (the kind {} {} is not served)",
            kind.api_version, kind.kind
        ));
    };
    let ref_namespace = param_ref.namespace.as_deref().filter(|n| !n.is_empty());
    let namespace = match scope {
        ParamScope::Namespaced => {
            let own = if a.kind.group.is_empty() && a.kind.kind == "Namespace" {
                ""
            } else {
                a.namespace
            };
            match ref_namespace {
                Some(ns) => Some(ns),
                None if own.is_empty() => {
                    return Err(
                        "can't use namespaced paramRef to match cluster-scoped resources"
                            .to_string(),
                    );
                }
                None => Some(own),
            }
        }
        ParamScope::Cluster if ref_namespace.is_some() => {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                    .to_string(),
            );
        }
        ParamScope::Cluster => None,
    };
    let mut params = Vec::new();
    if let Some(name) = param_ref.name.as_deref().filter(|n| !n.is_empty()) {
        return match lookup.param(kind, namespace, name) {
            Ok(Some(p)) => Ok(vec![p]),
            Ok(None) => {
                let info = crate::kinds::kind_info(&kind.api_version, &kind.kind);
                let resource = if info.group.is_empty() {
                    info.resource
                } else {
                    format!("{}.{}", info.resource, info.group)
                };
                Err(format!("{resource} \"{name}\" not found"))
            }
            Err(e) => Err(e.to_string()),
        };
    } else if let Some(selector) = selector {
        let selector = selector.as_ref().map_err(|e| e.to_string())?;
        for p in lookup.params(kind, namespace).map_err(|e| e.to_string())? {
            if selector.matches_labels(&p) {
                params.push(p);
            }
        }
    }
    if params.is_empty()
        && param_ref.parameter_not_found_action == Some(model::ParameterNotFoundAction::Deny)
    {
        return Err("no params found".to_string());
    }
    Ok(params)
}

/// A `validate.podSecurity` rule's result (`validate_pss.go`); none on DELETE.
fn evaluate_pod_security(
    r: &ClassicRule,
    rule: &PodSecurityRule,
    exceptions: &[&ClassicExceptionRule],
    request: &FamilyRequest<'_>,
) -> Option<(ResultKind, String, crate::response::ReportProperties)> {
    let a = &request.attributes;
    if a.operation == crate::attributes::Operation::Delete {
        return None;
    }
    // An exception with no podSecurity controls exempts the whole rule.
    if let Some(e) = exceptions.iter().find(|e| e.pod_security.is_empty()) {
        return Some((
            ResultKind::Skip,
            format!("rule is skipped due to policy exception {}", e.key),
            Vec::new(),
        ));
    }
    let controls: Vec<&Exclusion> = exceptions
        .iter()
        .flat_map(|e| e.pod_security.iter())
        .collect();
    let matched = (!exceptions.is_empty()).then_some(controls.as_slice());
    let object = request.object.or(a.old_object)?;
    let kind = object
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or(a.kind.kind);
    let verdict = pod_security::evaluate(rule, r.rule.as_str(), kind, object, matched);
    Some(match verdict {
        Verdict::Pass => (
            ResultKind::Pass,
            format!("Validation rule '{}' passed.", r.rule),
            Vec::new(),
        ),
        Verdict::Exempted => {
            let keys: Vec<&str> = exceptions.iter().map(|e| e.key.as_str()).collect();
            (
                ResultKind::Skip,
                format!(
                    "rule is skipped due to policy exceptions {}",
                    keys.join(", ")
                ),
                Vec::new(),
            )
        }
        Verdict::Error(m) => (ResultKind::Error, m, Vec::new()),
        Verdict::Fail(m, properties) => {
            // An UPDATE of an object that already failed is not refused by an Enforce rule
            // that allows existing violations.
            let old_fails = r.enforce
                && r.allow_existing_violations
                && a.operation == crate::attributes::Operation::Update
                && request.object.is_some()
                && a.old_object.is_some_and(|old| {
                    matches!(
                        pod_security::evaluate(rule, r.rule.as_str(), kind, old, matched),
                        Verdict::Fail(..)
                    )
                });
            if old_fails {
                (
                    ResultKind::Skip,
                    "skipping the rule evaluation as pre-existing violations are allowed"
                        .to_string(),
                    Vec::new(),
                )
            } else {
                (ResultKind::Fail, m, properties)
            }
        }
    })
}

/// `GetBlockedMessages`: the failures as YAML, policies and rules sorted.
fn blocked_message(
    a: &Attributes<'_>,
    object: Option<&Json>,
    blocked: &[(String, String, String)],
) -> String {
    let mut by_policy: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for (p, r, m) in blocked {
        by_policy.entry(p).or_default().insert(r, m);
    }
    let yaml = serde_yaml_ng::to_string(&by_policy).unwrap_or_default();
    let name = match str_at(object.or(a.old_object), &["metadata", "name"]) {
        "" => a.name,
        n => n,
    };
    format!(
        "\n\nresource {}/{}/{} was blocked due to the following policies \n\n{}",
        a.kind.kind, a.namespace, name, yaml
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "classic_tests.rs"]
mod tests;
