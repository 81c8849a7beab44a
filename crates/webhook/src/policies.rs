//! Loading the policies the server runs: the embedded Pod Security Standards, or files and
//! directories. One load reads and compiles everything into two sets, one of validating and one
//! of mutating policies (so `/validate` and `/mutate` each run only their own kind), sharing the
//! other objects read (Namespaces, params) through one lookup.

use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use celer_policy::compile_cache::CompileCache;
use celer_policy::load::Source;
use celer_policy::load::{Manifest, Manifests};
use celer_policy::policy_set::PolicySet;

use crate::embedded;
use crate::lookup::ServeLookup;

/// Where the policies come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The Pod Security Standards embedded in the binary.
    Embedded,
    /// Files and directories (searched recursively for `.yaml`, `.yml` and `.json`).
    Paths(Vec<PathBuf>),
}

impl PolicySource {
    /// A short description for logs.
    pub fn describe(&self) -> String {
        match self {
            PolicySource::Embedded => {
                "embedded Pod Security Standards (baseline: Deny, restricted: Warn)".to_string()
            }
            PolicySource::Paths(paths) => paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// A compiled policy load: what requests are evaluated against.
#[derive(Debug)]
pub struct Policies {
    /// The ValidatingAdmissionPolicies and their bindings only.
    pub validating: PolicySet,
    /// The MutatingAdmissionPolicies and their bindings only.
    pub mutating: PolicySet,
    /// Namespaces and params from the same files.
    pub lookup: ServeLookup,
    /// What each file contributed: its policies (`Kind "name"`), in document order.
    pub files: BTreeMap<String, Vec<String>>,
    /// Policies (not other objects) read from each path of the source, in its order.
    pub per_path: Vec<(PathBuf, usize)>,
    /// What each fed document (a cluster object, a ConfigMap's file) contributed, by origin.
    pub fed: BTreeMap<String, Vec<String>>,
    /// Fed documents left out of the set, each with every reason (unreadable, invalid, not
    /// compiling): the rest of the set serves without them.
    pub rejected: BTreeMap<String, Vec<String>>,
}

/// How many policies a load holds, by what they answer: admission (validating, mutating) and
/// authorization (SubjectAccessReviews).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PolicyCounts {
    pub validating: usize,
    pub mutating: usize,
    pub authorization: usize,
}

impl Policies {
    /// How many policies were loaded. Each enforced Gatekeeper Constraint counts as a
    /// validating policy, each Gatekeeper mutator as a mutating one.
    pub fn counts(&self) -> PolicyCounts {
        // Kyverno's policies count once, without the variants autogen derives.
        let kyverno_v = (self.validating.kyverno().validating.iter())
            .filter(|p| p.extras.autogen.is_none())
            .count();
        // ClusterPolicies count once, whatever their rules.
        let mut classic: Vec<(&str, Option<&str>)> = (self.validating.kyverno().classic.iter())
            .map(|r| (r.policy.as_str(), r.namespace.as_deref()))
            .collect();
        classic.sort_unstable();
        classic.dedup();
        let kyverno_v = kyverno_v + classic.len();
        let kyverno_m = (self.mutating.kyverno().mutating.iter())
            .filter(|p| p.extras.autogen.is_none())
            .count();
        PolicyCounts {
            validating: self.validating.native().validating.policies.len()
                + self.validating.gatekeeper().constraints.len()
                + kyverno_v,
            mutating: self.mutating.native().mutating.policies.len()
                + kyverno_m
                + self.mutating.gatekeeper_mutators().mutators.len(),
            authorization: self.validating.authorization().policies.len(),
        }
    }
}

impl Policies {
    /// The policy names results carry, validating and mutating: a metric series of any other
    /// name belongs to a policy this set no longer has.
    pub fn result_names(&self) -> (HashSet<&str>, HashSet<&str>) {
        let v = &self.validating;
        let validating = (v
            .native()
            .validating
            .policies
            .iter()
            .map(|p| p.common.name.as_str()))
        .chain(v.gatekeeper().templates.iter().map(|t| t.name.as_str()))
        .chain((v.kyverno().validating.iter()).map(|k| k.policy.common.name.as_str()))
        .chain(v.kyverno().classic.iter().map(|r| r.policy.as_str()))
        .collect();
        let m = &self.mutating;
        let mutating = (m
            .native()
            .mutating
            .policies
            .iter()
            .map(|p| p.common.name.as_str()))
        .chain((m.kyverno().mutating.iter()).map(|k| k.policy.common.name.as_str()))
        .chain((m.gatekeeper_mutators().mutators.iter()).map(|g| g.name.as_str()))
        .collect();
        (validating, mutating)
    }
}

/// Why a load was refused: every problem, each naming its file and document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policies not loaded: {}", .0.join("; "))]
pub struct LoadFailure(pub Vec<String>);

/// Reads and compiles the policies of `source`. Any unreadable file, invalid document or
/// policy, or expression that does not compile refuses the whole load.
pub fn load(source: &PolicySource) -> Result<Policies, LoadFailure> {
    load_with_feed(source, None)
}

/// How many times a load is rebuilt without the fed documents found broken. Leaving one out
/// can break another (a Constraint without its template), so it may take more than one
/// round; a bound keeps a pathological feed from looping.
const FEED_ROUNDS: usize = 4;

/// [`load`], plus the documents of `feed`, each standing alone: one that cannot be read or
/// compiled is left out and named in [`Policies::rejected`]; problems of the files still
/// refuse the whole load.
pub fn load_with_feed(
    source: &PolicySource,
    feed: Option<&dyn crate::feed::PolicyFeed>,
) -> Result<Policies, LoadFailure> {
    load_with_feed_cached(source, feed, &mut LoadCache::default())
}

/// What one load keeps for the next, so that when one fed object changes the next load reads
/// and compiles that object only: the fed documents as read (by the identity of the feed's
/// object, which the feed keeps while the object is unchanged, or by a file's text), and what
/// was compiled from them ([`CompileCache`]). Entries the latest load did not use are dropped.
#[derive(Debug, Default)]
pub struct LoadCache {
    objects: HashMap<usize, (Arc<celer_cel::Json>, Manifests)>,
    files: HashMap<String, (String, Manifests)>,
    compiled: CompileCache,
}

impl LoadCache {
    /// How many compiled outputs the last load took from the cache and how many it compiled.
    pub fn last_load(&self) -> (u64, u64) {
        self.compiled.stats()
    }

    /// The feed's documents, read (or taken as read before).
    fn read(&mut self, feed: &dyn crate::feed::PolicyFeed) -> Manifests {
        let mut fed = Manifests::default();
        let mut objects = HashMap::new();
        let mut files = HashMap::new();
        for document in feed.documents() {
            let read = match document {
                crate::feed::FeedDocument::Object { origin, json } => {
                    let key = Arc::as_ptr(&json) as usize;
                    let read = match self.objects.remove(&key) {
                        Some((_, read)) => read,
                        None => {
                            let mut read = Manifests::default();
                            let source = Source {
                                file: origin,
                                document: 0,
                            };
                            read.add_json(source, celer_cel::Json::clone(&json));
                            read
                        }
                    };
                    objects.insert(key, (json, read.clone()));
                    read
                }
                crate::feed::FeedDocument::File { origin, text } => {
                    let read = match self.files.remove(&origin) {
                        Some((before, read)) if before == text => read,
                        _ => {
                            let mut read = Manifests::default();
                            read.add_text(&origin, &text);
                            read
                        }
                    };
                    files.insert(origin, (text, read.clone()));
                    read
                }
            };
            fed.items.extend(read.items);
            fed.errors.extend(read.errors);
        }
        self.objects = objects;
        self.files = files;
        fed
    }
}

/// [`load_with_feed`], reusing what earlier loads read and compiled (see [`LoadCache`]).
pub fn load_with_feed_cached(
    source: &PolicySource,
    feed: Option<&dyn crate::feed::PolicyFeed>,
    cache: &mut LoadCache,
) -> Result<Policies, LoadFailure> {
    let fed = match feed {
        Some(feed) => cache.read(feed),
        None => Manifests::default(),
    };
    cache.compiled.begin();
    let loaded = load_rounds(source, fed, &mut cache.compiled);
    if loaded.is_ok() {
        let (reused, compiled) = cache.compiled.stats();
        tracing::debug!(reused, compiled, "policies compiled");
        cache.compiled.sweep();
    }
    loaded
}

fn load_rounds(
    source: &PolicySource,
    mut fed: Manifests,
    compiled: &mut CompileCache,
) -> Result<Policies, LoadFailure> {
    let mut rejected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for error in std::mem::take(&mut fed.errors) {
        rejected
            .entry(error.location.file.clone())
            .or_default()
            .push(shorten_quoted(&error.to_string(), QUOTE_MAX));
    }
    let mut round = 0;
    loop {
        round += 1;
        fed.items.retain(|(s, _)| !rejected.contains_key(&s.file));
        match load_files_and(source, &fed, compiled) {
            Ok(mut policies) => {
                policies.rejected = rejected;
                return Ok(policies);
            }
            Err(Refused::Files(failure)) => return Err(failure),
            Err(Refused::Fed(errors)) => {
                for error in errors {
                    rejected
                        .entry(error.location.file.clone())
                        .or_default()
                        .push(shorten_quoted(&error.to_string(), QUOTE_MAX));
                }
                if round >= FEED_ROUNDS {
                    // Leave every fed document out rather than serve a set with errors.
                    for (s, _) in &fed.items {
                        rejected.entry(s.file.clone()).or_default().push(format!(
                            "{s}: left out: the fed policies did not load without errors after {FEED_ROUNDS} rounds"
                        ));
                    }
                }
            }
        }
    }
}

/// Why [`load_files_and`] did not give a set.
enum Refused {
    /// The files are broken: the whole load is refused.
    Files(LoadFailure),
    /// Only fed documents are: these errors name them.
    Fed(Vec<celer_policy::load::LoadError>),
}

/// The files' policies and `fed`'s, compiled into one set.
fn load_files_and(
    source: &PolicySource,
    fed: &Manifests,
    compiled: &mut CompileCache,
) -> Result<Policies, Refused> {
    let mut manifests = Manifests::default();
    let mut per_path = Vec::new();
    let mut empty_files = Vec::new();
    match source {
        PolicySource::Embedded => {
            for (name, text) in embedded::POD_SECURITY {
                manifests.add_text(name, text);
            }
        }
        PolicySource::Paths(paths) => {
            for path in paths {
                let before = manifests.items.len();
                let errors_before = manifests.errors.len();
                celer_offline::files::read_into(&mut manifests, path);
                let added = manifests.items.get(before..).unwrap_or_default();
                let policies = added
                    .iter()
                    .filter(|(_, m)| !matches!(m, Manifest::Object(_)))
                    .count();
                per_path.push((path.clone(), policies));
                // A file that yields no document at all (empty, truncated, only comments or
                // `---`) is refused like a broken one: an operator's mistake is far likelier
                // than a policy file meant to say nothing.
                if manifests.errors.len() == errors_before
                    && let Ok(files) = celer_offline::files::manifest_files(path)
                {
                    for file in files {
                        let name = file.display().to_string();
                        if !added.iter().any(|(s, _)| s.file == name) {
                            empty_files.push(name);
                        }
                    }
                }
            }
        }
    }
    for file in empty_files {
        manifests.errors.push(celer_policy::load::LoadError {
            location: Source { file, document: 0 },
            what: "file".to_string(),
            message: "no documents (empty, or only comments and separators): refused like a broken file; delete the file to remove its policies".to_string(),
        });
    }
    if !manifests.errors.is_empty() {
        return Err(Refused::Files(LoadFailure(
            manifests
                .errors
                .iter()
                .map(|e| shorten_quoted(&e.to_string(), QUOTE_MAX))
                .collect(),
        )));
    }
    let fed_origins: HashSet<&str> = fed.items.iter().map(|(s, _)| s.file.as_str()).collect();
    let mut fed_what: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (source, item) in &fed.items {
        let entry = fed_what.entry(source.file.clone()).or_default();
        entry.extend(item.describe());
    }
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (source, item) in &manifests.items {
        let entry = files.entry(source.file.clone()).or_default();
        entry.extend(item.describe());
    }
    manifests.items.extend(fed.items.iter().cloned());
    let by_phase = manifests.by_phase();
    let (validating, mutating, objects) =
        (by_phase.validating, by_phase.mutating, by_phase.objects);
    let validating = PolicySet::build_cached(&validating, compiled);
    let mutating = PolicySet::build_cached(&mutating, compiled);
    // Templates celer cannot run (Rego) do not refuse the load: their constraints are skipped.
    for d in &validating.gatekeeper().diagnostics {
        tracing::warn!(diagnostic = %d, "gatekeeper policy not enforced");
    }
    let (fed_errors, file_errors): (Vec<_>, Vec<_>) = (validating.errors.iter())
        .chain(&mutating.errors)
        .partition(|e| fed_origins.contains(e.location.file.as_str()));
    if !file_errors.is_empty() {
        return Err(Refused::Files(LoadFailure(
            (file_errors.iter())
                .map(|e| shorten_quoted(&e.to_string(), QUOTE_MAX))
                .collect(),
        )));
    }
    if !fed_errors.is_empty() {
        return Err(Refused::Fed(fed_errors.into_iter().cloned().collect()));
    }
    Ok(Policies {
        validating,
        mutating,
        lookup: ServeLookup::new(objects),
        files,
        per_path,
        fed: fed_what,
        rejected: BTreeMap::new(),
    })
}

/// Longest quoted value (an expression, a field's value) kept whole in a load error.
const QUOTE_MAX: usize = 200;

/// Cuts every double-quoted part of `text` longer than `max` bytes to its start, followed by
/// `...` and its length, so an error quoting a 1 MiB expression stays a readable log line.
pub fn shorten_quoted(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let (before, after) = rest.split_at(open + 1);
        out.push_str(before);
        // The closing quote: the next one not escaped by a backslash.
        let mut escaped = false;
        let close = after.char_indices().find_map(|(i, c)| {
            if escaped {
                escaped = false;
                None
            } else if c == '\\' {
                escaped = true;
                None
            } else {
                (c == '"').then_some(i)
            }
        });
        let Some(close) = close else {
            rest = after;
            break;
        };
        let (quoted, tail) = after.split_at(close);
        if quoted.len() > max {
            let mut end = max.min(120);
            while !quoted.is_char_boundary(end) {
                end -= 1;
            }
            out.push_str(quoted.get(..end).unwrap_or_default());
            out.push_str(&format!("...({} bytes)", quoted.len()));
        } else {
            out.push_str(quoted);
        }
        out.push('"');
        rest = tail.get(1..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// What a reload changes that an operator must hear of, or why it is refused.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReloadCheck {
    /// Files gone since the serving set, each with the policies it removes.
    pub removed_files: Vec<(String, Vec<String>)>,
}

/// Checks a newly loaded set against the one serving: a path of the source that had policies
/// and now has none is refused (an emptied directory, or every file of it truncated), as a
/// broken file is. Files that disappeared are reported: a deliberate removal, logged at WARN.
pub fn check_reload(serving: &Policies, next: &Policies) -> Result<ReloadCheck, LoadFailure> {
    let mut refused = Vec::new();
    for (path, count) in &next.per_path {
        let before = serving
            .per_path
            .iter()
            .find(|(p, _)| p == path)
            .map_or(0, |(_, n)| *n);
        if *count == 0 && before > 0 {
            refused.push(format!(
                "{}: the reload would remove every policy it served ({before}): refused; the previous policies keep serving",
                path.display()
            ));
        }
    }
    if !refused.is_empty() {
        return Err(LoadFailure(refused));
    }
    let removed_files = serving
        .files
        .iter()
        .filter(|(file, policies)| !next.files.contains_key(*file) && !policies.is_empty())
        .map(|(file, policies)| (file.clone(), policies.clone()))
        .collect();
    Ok(ReloadCheck { removed_files })
}

/// What a reload watches: each manifest file under the paths with its modification time and
/// size (or the error listing or reading it). A change of any of it means a reload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, Stamp)>);

/// A file's modification time and size, or why they could not be read.
type Stamp = Result<(SystemTime, u64), String>;

impl Fingerprint {
    pub fn of(source: &PolicySource) -> Fingerprint {
        let mut out = Vec::new();
        if let PolicySource::Paths(paths) = source {
            for path in paths {
                match celer_offline::files::manifest_files(path) {
                    Ok(files) => out.extend(files.into_iter().map(|f| {
                        let stamp = stamp(&f);
                        (f, stamp)
                    })),
                    Err(e) => out.push((path.clone(), Err(e.to_string()))),
                }
            }
        }
        Fingerprint(out)
    }

    /// Fingerprint of single files (TLS certificate and key).
    pub fn of_files(files: &[&Path]) -> Fingerprint {
        Fingerprint(files.iter().map(|f| (f.to_path_buf(), stamp(f))).collect())
    }
}

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    let modified = meta.modified().map_err(|e| e.to_string())?;
    Ok((modified, meta.len()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn embedded_policies_load_into_the_validating_set() {
        let p = load(&PolicySource::Embedded).unwrap();
        assert_eq!((p.counts().validating, p.counts().mutating), (19, 0));
        assert!(p.mutating.is_empty());
    }

    #[test]
    fn kyverno_policies_load_and_deny_with_kyvernos_message() {
        let dir =
            std::env::temp_dir().join(format!("celer-webhook-kyverno-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("vpol.yaml"),
            "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: no-latest}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n  validations:\n  - expression: \"object.spec.containers.all(c, !c.image.endsWith(':latest'))\"\n    message: no latest\n---\napiVersion: policies.kyverno.io/v1\nkind: MutatingPolicy\nmetadata: {name: label}\nspec:\n  matchConstraints:\n    resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]\n  mutations:\n  - patchType: JSONPatch\n    jsonPatch: {expression: \"[JSONPatch{op: 'add', path: '/metadata/labels', value: {'m': 'y'}}]\"}\n",
        )
        .unwrap();
        let p = load(&PolicySource::Paths(vec![dir.clone()])).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((p.counts().validating, p.counts().mutating), (1, 1));
        // Autogen adds the pod controllers' variants.
        assert_eq!(p.validating.kyverno().validating.len(), 3);
        let body = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"a"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx:latest"}]}}}}"#;
        let review = celer_policy::request::AdmissionReview::parse(body).unwrap();
        let request = review.request().unwrap();
        let options = celer_policy::engine::EvalOptions::default();
        let denied = celer_policy::engine::evaluate(&p.validating, &request, &p.lookup, &options);
        assert!(!denied.allowed);
        let text = denied.review_json("u1", review.version());
        assert!(
            text.contains(r#""status":{"metadata":{},"status":"Failure","message":"Policy no-latest failed: no latest"}"#),
            "{text}"
        );
        let mutated = celer_policy::engine::evaluate(&p.mutating, &request, &p.lookup, &options);
        assert!(mutated.allowed);
        assert_eq!(
            mutated
                .patched
                .as_ref()
                .map(
                    |o| sonic_rs::JsonValueTrait::as_str(&o["metadata"]["labels"]["m"])
                        .map(str::to_string)
                ),
            Some(Some("y".to_string()))
        );
    }

    #[test]
    fn gatekeeper_templates_and_constraints_are_served() {
        use celer_policy::attributes::Operation;
        use celer_policy::engine::{EvalOptions, evaluate};
        use celer_policy::request::{AdmissionReview, RequestUser, review_for};

        let dir = std::env::temp_dir().join(format!("celer-webhook-gk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("template.yaml"),
            "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8snolatest}\nspec:\n  crd: {spec: {names: {kind: K8sNoLatest}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source:\n        validations:\n        - {expression: 'variables.anyObject.spec.containers.all(c, !c.image.endsWith(\":latest\"))', message: no latest}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("constraint.yaml"),
            "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sNoLatest\nmetadata: {name: no-latest}\nspec:\n  match: {kinds: [{apiGroups: [''], kinds: [Pod]}]}\n",
        )
        .unwrap();
        // A template whose engine celer does not run is logged, not a reason to refuse the load.
        std::fs::write(
            dir.join("other-engine.yaml"),
            "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8sother}\nspec:\n  crd: {spec: {names: {kind: K8sOther}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code: [{engine: Wasm, source: {}}]\n",
        )
        .unwrap();
        let p = load(&PolicySource::Paths(vec![dir.clone()])).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((p.counts().validating, p.counts().mutating), (1, 0));
        assert_eq!(p.validating.gatekeeper().diagnostics.len(), 1);
        let pod: celer_cel::Json = sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"prod"},"spec":{"containers":[{"name":"a","image":"nginx:latest"}]}}"#,
        )
        .unwrap();
        let body = review_for(
            Some(&pod),
            None,
            Operation::Create,
            &RequestUser::default(),
            "u",
        )
        .unwrap();
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let outcome = evaluate(
            &p.validating,
            &review.request().unwrap(),
            &p.lookup,
            &EvalOptions::default(),
        );
        assert!(!outcome.allowed);
        assert_eq!(outcome.status.unwrap().message, "[no-latest] no latest");
    }

    #[test]
    fn long_quoted_values_are_cut_with_their_length() {
        let long = "x".repeat(1000);
        let text = format!("a: Invalid value: \"{long}\": compilation failed: \"short\" \"un");
        let cut = shorten_quoted(&text, 200);
        assert_eq!(
            cut,
            format!(
                "a: Invalid value: \"{}...(1000 bytes)\": compilation failed: \"short\" \"un",
                "x".repeat(120)
            )
        );
        assert_eq!(shorten_quoted("say \"a\\\"b\"", 200), "say \"a\\\"b\"");
    }

    #[test]
    fn broken_files_name_file_and_document() {
        let dir = std::env::temp_dir().join(format!("celer-webhook-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("bad.yaml"),
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: a}\nspec:\n  failurePolicy: Sometimes\n",
        )
        .unwrap();
        let err = load(&PolicySource::Paths(vec![dir.clone()])).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("bad.yaml (document 1)"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
