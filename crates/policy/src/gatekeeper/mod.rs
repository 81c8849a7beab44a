//! Gatekeeper's policies: a `ConstraintTemplate` whose `K8sNativeValidation` (CEL) engine holds
//! the checks, and the Constraints that instantiate it (kind named by the template, its
//! `spec.parameters` the template's input, `spec.match` where it applies, and
//! `spec.enforcementAction` what a violation does).
//!
//! Lowering, as Gatekeeper's own ValidatingAdmissionPolicy generation does it
//! (`pkg/drivers/k8scel/transform`): each template compiles into one
//! [`ValidatingPolicy`](crate::compiled::ValidatingPolicy) whose `paramKind` is the
//! Constraint kind and whose variables start with `anyObject` (`object`, or `oldObject` on
//! DELETE) and `params` (the Constraint's `spec.parameters`); each Constraint becomes one
//! implicit [`Binding`](crate::compiled::Binding) whose param is the Constraint object itself,
//! with deny / warn / dryrun as the Deny / Warn / Audit validation actions. Gatekeeper's match
//! criteria are not a resource rule, so each Constraint keeps its own
//! [`ConstraintMatch`], checked before its template runs.
//!
//! A template without the CEL engine runs its Rego ([`rego`]): the legacy `rego` + `libs`, or
//! a `Rego` entry of `code[]`, compiled once with regorus; when both engines are present CEL
//! is the one used, as in Gatekeeper. A template with neither loads with a diagnostic and its
//! Constraints are not enforced.

pub mod constraint_match;
mod evaluate;
mod lower;
pub mod model;
pub mod rego;

use hashbrown::HashMap;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use celer_cel::Json;

pub use constraint_match::{ConstraintMatch, Subject};
pub(crate) use evaluate::validate;
pub use lower::{CompiledConstraint, CompiledTemplate, TemplateEngine};
pub use model::{Constraint, ConstraintTemplate};

use crate::kind_index::KindKey;
use std::sync::{Arc, LazyLock};

use crate::compile_cache::CompileCache;

use crate::engine::RequestContext;
use crate::family::Mode;
use crate::family::load::{CompiledFamily, Lowering};
use crate::load::{FamilyManifest, LoadError, Manifest, Phases, PolicyManifest, ReadError, Source};
use crate::policy_set::PolicySet;
use crate::response::Outcome;

/// The loaded templates and Constraints of a policy set.
#[derive(Debug, Default)]
pub struct GatekeeperSet {
    pub templates: Vec<Arc<CompiledTemplate>>,
    /// In load order, each naming its template by index.
    pub constraints: Vec<CompiledConstraint>,
    /// Non-fatal notes: templates celer cannot run (Rego) and the Constraints left unenforced
    /// because of them. Unlike load errors, these never refuse a load.
    pub diagnostics: Vec<LoadError>,
    /// `constraints` by the kinds they can match.
    pub index: crate::kind_index::KindIndex,
}

impl GatekeeperSet {
    /// Whether no Constraint is enforced.
    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }
}

impl CompiledFamily for GatekeeperSet {
    fn is_empty(&self) -> bool {
        GatekeeperSet::is_empty(self)
    }

    fn validate(
        &self,
        _set: &PolicySet,
        ctx: &RequestContext<'_>,
        object: Option<&Json>,
        outcome: &mut Outcome,
        mode: Mode,
    ) {
        validate(self, ctx, object, outcome, mode);
    }
}

impl PolicySet {
    /// Gatekeeper ConstraintTemplates and their Constraints.
    pub fn gatekeeper(&self) -> &GatekeeperSet {
        static NONE: LazyLock<GatekeeperSet> = LazyLock::new(GatekeeperSet::default);
        self.family().unwrap_or(&NONE)
    }
}

/// A Gatekeeper document.
#[derive(Debug, Clone)]
pub enum GatekeeperManifest {
    Template(ConstraintTemplate),
    /// A Constraint (`constraints.gatekeeper.sh`, any kind).
    Constraint(Box<Constraint>),
}

impl FamilyManifest for GatekeeperManifest {
    fn kind(&self) -> &str {
        match self {
            GatekeeperManifest::Template(_) => "ConstraintTemplate",
            GatekeeperManifest::Constraint(c) => &c.kind,
        }
    }

    fn name(&self) -> &str {
        match self {
            GatekeeperManifest::Template(t) => &t.metadata.name,
            GatekeeperManifest::Constraint(c) => &c.spec.metadata.name,
        }
    }

    fn phases(&self) -> Phases {
        Phases::Validating
    }
}

/// ConstraintTemplates and Constraints as a loading family.
pub(crate) struct Gatekeeper;

impl crate::family::load::LoadingFamily for Gatekeeper {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>> {
        read_manifest(api_version, kind, doc).map(|read| read.map(PolicyManifest::new))
    }

    fn lower(
        &self,
        items: &[(Source, Manifest)],
        load: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily> {
        Box::new(build(items, load.errors, load.cache))
    }
}

/// Reads a document if it is a Gatekeeper kind: `None` when it is not one.
pub fn read_manifest(
    api_version: &str,
    kind: &str,
    doc: &Json,
) -> Option<Result<GatekeeperManifest, ReadError>> {
    if model::TEMPLATE_VERSIONS.contains(&api_version) && kind == "ConstraintTemplate" {
        return Some(crate::load::read::<ConstraintTemplate>(doc).map(|mut t| {
            let targets = doc
                .get("spec")
                .and_then(|s| s.get("targets"))
                .and_then(|t| t.as_array());
            for (i, target) in t.spec.targets.iter_mut().enumerate() {
                let code = targets
                    .and_then(|a| a.get(i))
                    .and_then(|t| t.get("code"))
                    .and_then(|c| c.as_array());
                for (j, c) in target.code.iter_mut().enumerate() {
                    c.source = code
                        .and_then(|a| a.get(j))
                        .and_then(|c| c.get("source"))
                        .filter(|s| !s.is_null())
                        .cloned();
                }
            }
            GatekeeperManifest::Template(t)
        }));
    }
    let (group, _) = crate::kinds::split_api_version(api_version);
    if group == model::CONSTRAINT_GROUP && !kind.is_empty() {
        return Some(crate::load::read(doc).map(|spec| {
            GatekeeperManifest::Constraint(Box::new(Constraint {
                kind: kind.to_string(),
                spec,
                object: doc.clone(),
            }))
        }));
    }
    None
}

fn load_error(source: &Source, what: String, message: String) -> LoadError {
    LoadError {
        location: source.clone(),
        what,
        message,
    }
}

/// Compiles the templates and Constraints among `items`. Invalid ones are left out with an
/// error in `errors`; expressions that do not compile are reported there too and run through
/// failurePolicy; templates celer cannot run are noted in [`GatekeeperSet::diagnostics`].
pub(crate) fn build(
    items: &[(Source, Manifest)],
    errors: &mut Vec<LoadError>,
    cache: &mut CompileCache,
) -> GatekeeperSet {
    let mut set = GatekeeperSet::default();
    // Constraint kind -> template index.
    let mut by_kind: HashMap<String, usize> = HashMap::new();
    let mut by_name: HashMap<String, ()> = HashMap::new();
    for (source, item) in items {
        let (Some(GatekeeperManifest::Template(t)), Some(manifest)) =
            (item.downcast(), item.policy())
        else {
            continue;
        };
        let what = format!("ConstraintTemplate {:?}", t.metadata.name);
        let compiled = cache.get_or_compile(&[manifest], || {
            lower::compile_template(t).map(|(template, errors)| (Arc::new(template), errors))
        });
        match &*compiled {
            Err(e) => errors.push(load_error(source, what, e.join("; "))),
            Ok((template, compile_errors)) => {
                if by_name.insert(t.metadata.name.clone(), ()).is_some()
                    || by_kind.contains_key(&template.kind)
                {
                    errors.push(load_error(
                        source,
                        what,
                        "a template of this name or kind is already loaded; this one is ignored"
                            .to_string(),
                    ));
                    continue;
                }
                for e in compile_errors {
                    errors.push(load_error(source, what.clone(), e.clone()));
                }
                if let TemplateEngine::Unsupported(why) = &template.engine {
                    set.diagnostics
                        .push(load_error(source, what.clone(), why.clone()));
                }
                by_kind.insert(template.kind.clone(), set.templates.len());
                set.templates.push(Arc::clone(template));
            }
        }
    }
    let mut constraint_names: HashMap<(String, String), ()> = HashMap::new();
    for (source, item) in items {
        let Some(GatekeeperManifest::Constraint(c)) = item.downcast() else {
            continue;
        };
        let name = &c.spec.metadata.name;
        let what = format!("{} {name:?}", c.kind);
        let Some(&template) = by_kind.get(&c.kind) else {
            errors.push(load_error(
                source,
                what,
                format!(
                    "no ConstraintTemplate defines kind {:?}; the constraint is ignored",
                    c.kind
                ),
            ));
            continue;
        };
        let compiled = match lower::compile_constraint(c, template) {
            Ok(compiled) => compiled,
            Err(e) => {
                errors.push(load_error(source, what, e.join("; ")));
                continue;
            }
        };
        if constraint_names
            .insert((c.kind.clone(), name.clone()), ())
            .is_some()
        {
            errors.push(load_error(
                source,
                what,
                "a constraint of this kind and name is already loaded; this one is ignored"
                    .to_string(),
            ));
            continue;
        }
        if let Some(t) = set.templates.get(template)
            && let TemplateEngine::Unsupported(why) = &t.engine
        {
            set.diagnostics.push(load_error(
                source,
                what,
                format!("not enforced: its template {:?}: {why}", t.name.as_str()),
            ));
            continue;
        }
        set.index.insert(
            set.constraints.len() as u32,
            &kind_keys(compiled.matcher.kinds()),
        );
        set.constraints.push(compiled);
    }
    set
}

/// The index keys of a Constraint's `spec.match.kinds`: no `kinds`, or `*` (or nothing) on
/// either side, is any.
pub(crate) fn kind_keys(kinds: &[model::Kinds]) -> Vec<KindKey<'_>> {
    fn values(v: &[String]) -> Vec<Option<&str>> {
        if v.is_empty() || v.iter().any(|v| v == "*") {
            vec![None]
        } else {
            v.iter().map(|v| Some(v.as_str())).collect()
        }
    }
    if kinds.is_empty() {
        return vec![KindKey::ANY];
    }
    let mut keys = Vec::new();
    for k in kinds {
        let kind_names = values(&k.kinds);
        for group in values(&k.api_groups) {
            keys.extend(kind_names.iter().map(|&kind| KindKey { group, kind }));
        }
    }
    keys
}

#[cfg(test)]
mod tests;
