//! What a cluster does beside admission, emulated by the chainsaw runner on the objects a test
//! holds: the Kyverno context `resource.*` and GlobalContextEntries read, and the mutation of
//! existing resources.

use celer_cel::Json;
use celer_cel_kyverno::MemoryContext;
use celer_policy::attributes::Operation;
use celer_policy::engine::EvalOptions;
use celer_policy::kyverno::mutate_existing::{Existing, TargetResources, Targets};
use celer_policy::lookup::ObjectLookup;
use celer_policy::request::{AdmissionReview, review_for};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::{State, key, str_of};

impl State {
    /// The evaluation options of a request: `resource.*` reads the objects held.
    pub(super) fn options(&self) -> EvalOptions {
        let mut context = MemoryContext::new();
        for o in &self.objects {
            // An object without apiVersion or kind cannot be looked up: left out.
            let _ = context.add_object(o.clone());
        }
        for (name, value) in self.global_context_entries() {
            context.set_global_context(&name, value);
        }
        EvalOptions {
            kyverno_context: Some(context.into_shared()),
            ..EvalOptions::default()
        }
    }

    /// The GlobalContextEntries the test created, filled as Kyverno's global context
    /// controller fills them, from the objects held: a `kubernetesResource` entry is the
    /// list of that resource's objects, an `apiCall` entry the list (`{"items": [...]}`) or
    /// object its `urlPath` names on the API (its query is not read). With projections the
    /// value is an object of each projection's name to its JMESPath result (what
    /// `globalContext.Get(name, projection)` reads); an entry that cannot be filled is left
    /// out (it reads as null).
    fn global_context_entries(&self) -> Vec<(String, Json)> {
        let mut out = Vec::new();
        for entry in &self.objects {
            if str_of(entry, "kind") != "GlobalContextEntry" {
                continue;
            }
            let Some(spec) = entry.get("spec") else {
                continue;
            };
            let (_, _, name) = key(entry);
            let data = if let Some(r) = spec.get("kubernetesResource") {
                let group = str_of(r, "group");
                let version = str_of(r, "version");
                let api_version = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                let items =
                    self.objects_of(&api_version, str_of(r, "resource"), str_of(r, "namespace"));
                Json::from(items.into_iter().collect::<sonic_rs::Array>())
            } else if let Some(call) = spec.get("apiCall") {
                match self.api_path(str_of(call, "urlPath")) {
                    Some(value) => value,
                    None => continue,
                }
            } else {
                continue;
            };
            let projections = spec.get("projections").and_then(|p| p.as_array());
            let value = match projections {
                Some(list) if !list.is_empty() => {
                    let mut object = sonic_rs::Object::new();
                    for p in list.iter() {
                        let Ok(query) = celer_jmespath::Expression::compile_with(
                            str_of(p, "jmesPath"),
                            celer_jmespath_kyverno::registry(),
                        ) else {
                            continue;
                        };
                        if let Ok(v) = query.search(&data) {
                            object.insert(&str_of(p, "name"), v);
                        }
                    }
                    object.into_value()
                }
                _ => data,
            };
            out.push((name, value));
        }
        out
    }

    /// The objects held of one resource (`api_version`, plural), in `namespace` (all if empty).
    fn objects_of(&self, api_version: &str, resource: &str, namespace: &str) -> Vec<Json> {
        (self.objects.iter())
            .filter(|o| {
                let info =
                    celer_policy::kinds::kind_info(str_of(o, "apiVersion"), str_of(o, "kind"));
                let (_, ns, _) = key(o);
                str_of(o, "apiVersion") == api_version
                    && info.resource == resource
                    && (namespace.is_empty() || ns == namespace)
            })
            .cloned()
            .collect()
    }

    /// What a GET of an API path (`/api/v1/namespaces/x/configmaps`,
    /// `/apis/apps/v1/deployments/name`) answers from the objects held.
    fn api_path(&self, path: &str) -> Option<Json> {
        let path = path.split('?').next().unwrap_or(path);
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (api_version, rest) = match parts.as_slice() {
            ["api", version, rest @ ..] => (version.to_string(), rest),
            ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
            _ => return None,
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (*ns, rest),
            _ => ("", rest),
        };
        match rest {
            [resource] => {
                let items = self.objects_of(&api_version, resource, namespace);
                let mut list = sonic_rs::Object::new();
                list.insert(
                    &"items",
                    Json::from(items.into_iter().collect::<sonic_rs::Array>()),
                );
                Some(list.into_value())
            }
            [resource, name] => self
                .objects_of(&api_version, resource, namespace)
                .into_iter()
                .find(|o| key(o).2 == *name),
            _ => None,
        }
    }

    /// Runs a mutate-existing policy on its targets among the objects held, for a trigger
    /// (the index of the object admitted, and its operation) or for the policy's creation.
    pub(super) fn mutate_existing(
        &mut self,
        policy: &Existing,
        trigger: Option<(usize, Operation)>,
    ) {
        let targets = self.targets(policy, trigger);
        for i in targets {
            let Some(target) = self.objects.get(i).cloned() else {
                continue;
            };
            let Ok(body) = review_for(
                Some(&target),
                Some(&target),
                Operation::Update,
                &self.user,
                "chainsaw",
            ) else {
                continue;
            };
            let Ok(review) = AdmissionReview::parse(body.as_bytes()) else {
                continue;
            };
            let Ok(request) = review.request() else {
                continue;
            };
            let lookup = ObjectLookup::new(self.objects.iter().cloned());
            if let Ok(Some(patched)) = policy.mutate(&request, &lookup, &self.options())
                && let Some(slot) = self.objects.get_mut(i)
            {
                *slot = patched;
            }
        }
    }

    /// The indices of a policy's targets among the objects held.
    fn targets(&self, policy: &Existing, trigger: Option<(usize, Operation)>) -> Vec<usize> {
        let selected_by = |resources: &TargetResources| -> Vec<usize> {
            (self.objects.iter().enumerate())
                .filter(|(_, o)| {
                    let info =
                        celer_policy::kinds::kind_info(str_of(o, "apiVersion"), str_of(o, "kind"));
                    let (_, namespace, _) = key(o);
                    if policy
                        .namespace
                        .as_deref()
                        .is_some_and(|ns| ns != namespace)
                    {
                        return false;
                    }
                    let ns_object = (!namespace.is_empty())
                        .then(|| {
                            self.objects.iter().find(|n| {
                                key(n)
                                    == ("Namespace".to_string(), String::new(), namespace.clone())
                            })
                        })
                        .flatten();
                    let absent_namespace = Json::new();
                    let ns_object = match (namespace.is_empty(), ns_object) {
                        (true, _) => None,
                        (false, Some(n)) => Some(n),
                        (false, None) => Some(&absent_namespace),
                    };
                    resources.selects((&info.group, &info.version, &info.resource), o, ns_object)
                })
                .map(|(i, _)| i)
                .collect()
        };
        let select = |trigger: &Json, operation: Operation| -> Vec<usize> {
            let old = (operation == Operation::Update).then_some(trigger);
            let Ok(body) = review_for(Some(trigger), old, operation, &self.user, "chainsaw") else {
                return Vec::new();
            };
            let Ok(review) = AdmissionReview::parse(body.as_bytes()) else {
                return Vec::new();
            };
            let Ok(request) = review.request() else {
                return Vec::new();
            };
            let lookup = ObjectLookup::new(self.objects.iter().cloned());
            let selected = policy
                .select(&request, &lookup, &self.options())
                .unwrap_or_default();
            (self.objects.iter().enumerate())
                .filter(|(_, o)| selected.iter().any(|s| key(s) == key(o)))
                .map(|(i, _)| i)
                .collect()
        };
        match (&policy.targets, trigger) {
            (Targets::Resources(resources), _) => selected_by(resources),
            (Targets::Expression { .. }, Some((i, operation))) => match self.objects.get(i) {
                Some(t) => select(t, operation),
                None => Vec::new(),
            },
            (Targets::Expression { triggers, .. }, None) => {
                let mut out = Vec::new();
                for i in selected_by(triggers) {
                    if let Some(t) = self.objects.get(i) {
                        out.extend(select(t, Operation::Update));
                    }
                }
                out.sort_unstable();
                out.dedup();
                out
            }
        }
    }
}
