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
//!
//! External data `Provider`s are Gatekeeper documents of both phases ([`external_data`]):
//! Rego templates call them through `external_data`, mutators through `assign.externalData`.

pub mod constraint_match;
mod evaluate;
pub mod expansion;
pub mod external_data;
pub mod inventory;
mod lower;
pub mod model;
pub mod rego;

use hashbrown::HashMap;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use celer_cel::Json;

pub use constraint_match::{ConstraintMatch, Subject};
pub(crate) use evaluate::validate;
pub use lower::{CompiledConstraint, CompiledTemplate, ENGINE_ANNOTATION, TemplateEngine};
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

/// The namespaces Gatekeeper's Config excludes, by process (`webhook`, `audit`, `sync`,
/// `mutation-webhook`, or `*` for all), names or globs with `*` at either end.
#[derive(Debug, Default, Clone)]
pub struct Exclusions {
    entries: Vec<(Vec<String>, Vec<String>)>,
}

impl Exclusions {
    /// Whether `process` leaves `namespace` alone.
    pub fn excludes(&self, process: &str, namespace: &str) -> bool {
        !namespace.is_empty()
            && self.entries.iter().any(|(processes, namespaces)| {
                processes.iter().any(|p| p == process || p == "*")
                    && namespaces
                        .iter()
                        .any(|n| constraint_match::wildcard_matches(n, namespace))
            })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

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
    /// The kinds Gatekeeper's Config (`spec.sync.syncOnly`) and SyncSets name for
    /// `data.inventory`, as `apiVersion` + `kind`; a cluster syncs these.
    pub sync: Vec<crate::model::ParamKind>,
    /// The Config's `spec.match[]` exclusions.
    pub exclusions: Exclusions,
    /// ExpansionTemplates, by name.
    pub expansions: Vec<expansion::CompiledExpansion>,
    /// The external data Providers, which `external_data` calls.
    pub providers: Arc<external_data::Providers>,
    /// The last synced list as `data.inventory`, so that an unchanged list gives the same one
    /// back (templates key their programs by it) and a changed one is made from it.
    inventory: parking_lot::Mutex<Option<Arc<inventory::Inventory>>>,
}

impl GatekeeperSet {
    /// Whether no Constraint is enforced.
    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }

    /// The synced objects as `data.inventory` reads them (without those in namespaces the
    /// Config excludes from `sync`), made once per list for every template, and from the
    /// previous list's inventory when there is one.
    pub fn inventory(&self, objects: inventory::SyncedList) -> Arc<inventory::Inventory> {
        // Under the lock: requests that meet a new list wait for one inventory rather than
        // each making its own.
        let mut last = self.inventory.lock();
        if let Some(seen) = last.as_ref()
            && Arc::ptr_eq(&seen.listed, &objects)
        {
            return Arc::clone(seen);
        }
        let excluded =
            |o: &inventory::SyncedObject| self.exclusions.excludes("sync", o.namespace());
        let kept = match !self.exclusions.is_empty() && objects.iter().any(|o| excluded(o)) {
            false => Arc::clone(&objects),
            true => Arc::new(objects.iter().filter(|o| !excluded(o)).cloned().collect()),
        };
        let data = match last.as_ref() {
            Some(previous) => previous.data.next(kept),
            None => inventory::InventoryData::new(kept),
        };
        let made = Arc::new(inventory::Inventory {
            listed: objects,
            data,
        });
        *last = Some(Arc::clone(&made));
        made
    }
}

impl CompiledFamily for GatekeeperSet {
    fn is_empty(&self) -> bool {
        GatekeeperSet::is_empty(self)
    }

    fn validates(&self) -> bool {
        !self.constraints.is_empty()
    }

    fn validate(
        &self,
        set: &PolicySet,
        ctx: &RequestContext<'_>,
        object: Option<&Json>,
        outcome: &mut Outcome,
        mode: Mode,
    ) {
        validate(self, set.gatekeeper_mutators(), ctx, object, outcome, mode);
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
    /// Gatekeeper's `Config`: excluded namespaces, synced kinds.
    Config(Box<model::GatekeeperConfig>),
    /// A `SyncSet`: more synced kinds.
    SyncSet(Box<model::SyncSet>),
    /// An `ExpansionTemplate`.
    Expansion(Box<model::ExpansionTemplate>),
    /// An external data `Provider`.
    Provider(Box<external_data::ProviderManifest>),
}

impl FamilyManifest for GatekeeperManifest {
    fn kind(&self) -> &str {
        match self {
            GatekeeperManifest::Template(_) => "ConstraintTemplate",
            GatekeeperManifest::Constraint(c) => &c.kind,
            GatekeeperManifest::Config(_) => "Config",
            GatekeeperManifest::SyncSet(_) => "SyncSet",
            GatekeeperManifest::Expansion(_) => "ExpansionTemplate",
            GatekeeperManifest::Provider(_) => "Provider",
        }
    }

    fn name(&self) -> &str {
        match self {
            GatekeeperManifest::Template(t) => &t.metadata.name,
            GatekeeperManifest::Constraint(c) => &c.spec.metadata.name,
            GatekeeperManifest::Config(c) => &c.metadata.name,
            GatekeeperManifest::SyncSet(s) => &s.metadata.name,
            GatekeeperManifest::Expansion(e) => &e.metadata.name,
            GatekeeperManifest::Provider(p) => &p.metadata.name,
        }
    }

    fn phases(&self) -> Phases {
        match self {
            // The mutation webhook reads the Config's exclusions too, and its mutators call
            // Providers.
            GatekeeperManifest::Config(_) | GatekeeperManifest::Provider(_) => Phases::Both,
            _ => Phases::Validating,
        }
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
    if api_version == model::CONFIG_VERSION && kind == "Config" {
        return Some(crate::load::read(doc).map(|c| GatekeeperManifest::Config(Box::new(c))));
    }
    if model::EXPANSION_VERSIONS.contains(&api_version) && kind == "ExpansionTemplate" {
        return Some(crate::load::read(doc).map(|e| GatekeeperManifest::Expansion(Box::new(e))));
    }
    if external_data::provider::VERSIONS.contains(&api_version) && kind == "Provider" {
        return Some(crate::load::read(doc).map(|p| GatekeeperManifest::Provider(Box::new(p))));
    }
    if api_version == model::SYNCSET_VERSION && kind == "SyncSet" {
        return Some(crate::load::read(doc).map(|s| GatekeeperManifest::SyncSet(Box::new(s))));
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
            Err(e) => errors.push(LoadError::new(source, what, e.join("; "))),
            Ok((template, compile_errors)) => {
                if by_name.insert(t.metadata.name.clone(), ()).is_some()
                    || by_kind.contains_key(&template.kind)
                {
                    errors.push(LoadError::new(
                        source,
                        what,
                        "a template of this name or kind is already loaded; this one is ignored"
                            .to_string(),
                    ));
                    continue;
                }
                for e in compile_errors {
                    errors.push(LoadError::new(source, what.clone(), e.clone()));
                }
                if let TemplateEngine::Unsupported(why) = &template.engine {
                    set.diagnostics
                        .push(LoadError::new(source, what.clone(), why.clone()));
                }
                by_kind.insert(template.kind.clone(), set.templates.len());
                set.templates.push(Arc::clone(template));
            }
        }
    }
    read_config(items, errors, &mut set);
    set.providers = Arc::new(external_data::Providers::build(items, errors));
    let mut constraint_names: HashMap<(String, String), ()> = HashMap::new();
    for (source, item) in items {
        let Some(GatekeeperManifest::Constraint(c)) = item.downcast() else {
            continue;
        };
        let name = &c.spec.metadata.name;
        let what = format!("{} {name:?}", c.kind);
        let Some(&template) = by_kind.get(&c.kind) else {
            errors.push(LoadError::new(
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
                errors.push(LoadError::new(source, what, e.join("; ")));
                continue;
            }
        };
        if constraint_names
            .insert((c.kind.clone(), name.clone()), ())
            .is_some()
        {
            errors.push(LoadError::new(
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
            set.diagnostics.push(LoadError::new(
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

/// The Config named `config` and every SyncSet: the synced kinds and the exclusions. A Config
/// of another name is a diagnostic (Gatekeeper reads only `config`).
fn read_config(items: &[(Source, Manifest)], errors: &mut Vec<LoadError>, set: &mut GatekeeperSet) {
    let add = |set: &mut GatekeeperSet,
               errors: &mut Vec<LoadError>,
               source: &Source,
               what: &str,
               k: &model::SyncKind| {
        if k.version.is_empty() || k.kind.is_empty() {
            errors.push(LoadError::new(
                source,
                what.to_string(),
                format!(
                    "a synced kind needs a version and a kind: {{group: {:?}, version: {:?}, kind: {:?}}}",
                    k.group, k.version, k.kind
                ),
            ));
            return;
        }
        let api_version = match k.group.as_str() {
            "" => k.version.clone(),
            g => format!("{g}/{}", k.version),
        };
        let kind = crate::model::ParamKind {
            api_version,
            kind: k.kind.clone(),
        };
        if !set.sync.contains(&kind) {
            set.sync.push(kind);
        }
    };
    for (source, item) in items {
        match item.downcast() {
            Some(GatekeeperManifest::Config(c)) => {
                let what = format!("Config {:?}", c.metadata.name);
                if c.metadata.name != model::CONFIG_NAME {
                    set.diagnostics.push(LoadError::new(
                        source,
                        what,
                        format!(
                            "ignored: Gatekeeper reads only the Config named {:?}",
                            model::CONFIG_NAME
                        ),
                    ));
                    continue;
                }
                for m in &c.spec.match_ {
                    set.exclusions
                        .entries
                        .push((m.processes.clone(), m.excluded_namespaces.clone()));
                }
                for k in &c.spec.sync.sync_only {
                    add(set, errors, source, &what, k);
                }
            }
            Some(GatekeeperManifest::Expansion(e)) => {
                let what = format!("ExpansionTemplate {:?}", e.metadata.name);
                if set.expansions.iter().any(|x| x.name == e.metadata.name) {
                    errors.push(LoadError::new(
                        source,
                        what,
                        "an ExpansionTemplate of this name is already loaded; this one is ignored"
                            .to_string(),
                    ));
                    continue;
                }
                match expansion::compile(e) {
                    Ok(compiled) => set.expansions.push(compiled),
                    Err(e) => errors.push(LoadError::new(source, what, e.join("; "))),
                }
            }
            Some(GatekeeperManifest::SyncSet(s)) => {
                let what = format!("SyncSet {:?}", s.metadata.name);
                for k in &s.spec.gvks {
                    add(set, errors, source, &what, k);
                }
            }
            _ => {}
        }
    }
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
