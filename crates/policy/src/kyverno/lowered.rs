//! Kyverno kinds that select resources as a ValidatingPolicy does and only act differently
//! (DeletingPolicy, GeneratingPolicy) are lowered into a ValidatingPolicy alone in a policy
//! set, and so run on the one driver: matching, exceptions, variables, namespaced scope and
//! Kyverno's context functions are the validating family's. The kind's own expressions
//! become the lowered policy's validations; what its result means is the kind's business.

use celer_cel::Json;
use sonic_rs::{JsonValueMutTrait, JsonValueTrait};

use super::model::{KyvernoManifest, PolicyException};
use crate::load::{LoadError, Manifest, Manifests, PolicyManifest, Source};
use crate::policy_set::PolicySet;

/// What a lowered policy keeps of its source document.
pub(crate) struct Lowering<'a> {
    pub name: &'a str,
    /// A namespaced kind's namespace: the lowered policy is then a
    /// NamespacedValidatingPolicy, confined to it.
    pub namespace: Option<&'a str>,
    /// The source's kind, as PolicyExceptions name it in `policyRefs`.
    pub kind: &'a str,
    /// `spec.matchConstraints`.
    pub constraints: &'a Json,
    /// Every resource rule matches every operation (a kind that runs outside admission).
    pub widen_operations: bool,
    pub match_conditions: Option<&'a Json>,
    pub variables: Option<&'a Json>,
    /// `spec.auditAnnotations`: their values come back as the result's properties.
    pub audit_annotations: Option<&'a Json>,
    /// An exception's `reportResult: pass` kept: the result is then a pass that names the
    /// exceptions (a kind whose pass means "act" must not keep it).
    pub exception_pass: bool,
}

impl Lowering<'_> {
    fn lowered_kind(&self) -> &'static str {
        if self.namespace.is_some() {
            "NamespacedValidatingPolicy"
        } else {
            "ValidatingPolicy"
        }
    }

    /// The set of the lowered policy with these validations, and the exceptions that name
    /// the source; or the loader's errors, as the validating family words them.
    pub(crate) fn build(
        &self,
        source: &Source,
        validations: &[String],
        exceptions: &[&PolicyException],
    ) -> Result<PolicySet, Vec<String>> {
        let mut manifests = Manifests::default();
        manifests.add_json(source.clone(), self.document(validations));
        for e in exceptions {
            let names_it =
                (e.spec.policy_refs.iter()).any(|r| r.name == self.name && r.kind == self.kind);
            if !names_it {
                continue;
            }
            // The exception exempts the lowered policy; unless the kind reads it,
            // `reportResult: pass` would turn the exemption into the kind's action.
            let mut e = (*e).clone();
            for r in &mut e.spec.policy_refs {
                if r.name == self.name && r.kind == self.kind {
                    r.kind = self.lowered_kind().to_string();
                }
            }
            if !self.exception_pass {
                e.spec.report_result = None;
            }
            let manifest = PolicyManifest::new(KyvernoManifest::Exception(Box::new(e)));
            manifests
                .items
                .push((source.clone(), Manifest::Policy(manifest)));
        }
        let set = PolicySet::build(&manifests);
        let errors: Vec<String> = (manifests.errors.iter().chain(&set.errors))
            .map(|e| e.message.clone())
            .collect();
        if errors.is_empty() {
            Ok(set)
        } else {
            Err(errors)
        }
    }

    /// The ValidatingPolicy document: Audit only, background processing on, no autogen.
    fn document(&self, validations: &[String]) -> Json {
        let text = |s: &str| Json::from(s);
        let mut constraints = self.constraints.clone();
        if self.widen_operations
            && let Some(rules) = constraints
                .get_mut("resourceRules")
                .and_then(|r| r.as_array_mut())
        {
            for rule in rules.iter_mut() {
                if let Some(rule) = rule.as_object_mut() {
                    rule.insert("operations", array(vec![text("*")]));
                }
            }
        }
        let mut metadata = Json::new_object();
        metadata.insert("name", text(self.name));
        if let Some(ns) = self.namespace {
            metadata.insert("namespace", text(ns));
        }
        let validations = array(
            (validations.iter())
                .map(|expression| {
                    let mut v = Json::new_object();
                    v.insert("expression", text(expression));
                    v
                })
                .collect(),
        );
        let mut background = Json::new_object();
        background.insert("enabled", Json::from(true));
        let mut evaluation = Json::new_object();
        evaluation.insert("background", background);
        let mut controllers = Json::new_object();
        controllers.insert("controllers", Json::new_array());
        let mut autogen = Json::new_object();
        autogen.insert("podControllers", controllers);
        let mut spec = Json::new_object();
        spec.insert("matchConstraints", constraints);
        for (key, value) in [
            ("matchConditions", self.match_conditions),
            ("variables", self.variables),
            ("auditAnnotations", self.audit_annotations),
        ] {
            if let Some(v) = value.filter(|v| !v.is_null()) {
                spec.insert(key, v.clone());
            }
        }
        spec.insert("validations", validations);
        spec.insert("validationActions", array(vec![text("Audit")]));
        spec.insert("evaluation", evaluation);
        spec.insert("autogen", autogen);
        let mut doc = Json::new_object();
        doc.insert("apiVersion", text("policies.kyverno.io/v1"));
        doc.insert("kind", text(self.lowered_kind()));
        doc.insert("metadata", metadata);
        doc.insert("spec", spec);
        doc
    }
}

/// A kind's compiler: its document (with source and kind) and the PolicyExceptions, or the
/// problems found.
pub(crate) type Compile<P> =
    fn(&Source, &Json, &str, &[&PolicyException]) -> Result<P, Vec<String>>;

/// Compiles every document of `manifests` that `is_kind` accepts (plain objects to the
/// admission loader) with `compile`, given the PolicyExceptions among them; a second policy
/// of the same `identity` (name, namespace, kind) is refused.
pub(crate) fn load_kind<P>(
    manifests: &Manifests,
    is_kind: fn(&str, &str) -> bool,
    compile: Compile<P>,
    identity: fn(&P) -> (String, Option<String>, &'static str),
) -> (Vec<P>, Vec<LoadError>) {
    let exceptions: Vec<&PolicyException> = (manifests.items.iter())
        .filter_map(|(_, m)| match m.downcast::<KyvernoManifest>() {
            Some(KyvernoManifest::Exception(e)) => Some(&**e),
            _ => None,
        })
        .collect();
    let (mut policies, mut errors) = (Vec::new(), Vec::new());
    let mut seen = Vec::new();
    for (source, item) in &manifests.items {
        let Manifest::Object(doc) = item else {
            continue;
        };
        let field = |key: &str| doc.get(key).and_then(|v| v.as_str()).unwrap_or_default();
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        if !is_kind(api_version, kind) {
            continue;
        }
        let name = (doc.get("metadata").and_then(|m| m.get("name")))
            .and_then(|n| n.as_str())
            .unwrap_or_default();
        let what = format!("{kind} {name:?}");
        match compile(source, doc, kind, &exceptions) {
            Ok(policy) => {
                let key = identity(&policy);
                if seen.contains(&key) {
                    errors.push(LoadError::new(
                        source,
                        what,
                        "a policy of this name is already loaded; this one is ignored".to_string(),
                    ));
                    continue;
                }
                seen.push(key);
                policies.push(policy);
            }
            Err(problems) => errors.push(LoadError::new(source, what, problems.join("; "))),
        }
    }
    (policies, errors)
}

pub(crate) fn array(items: Vec<Json>) -> Json {
    let mut out = Json::new_array();
    if let Some(a) = out.as_array_mut() {
        for item in items {
            a.push(item);
        }
    }
    out
}
