//! Gatekeeper's ExpansionTemplates (`expansion.gatekeeper.sh`): an admitted object that an
//! ExpansionTemplate applies to (a Deployment) also stands for the object at its
//! `templateSource` (`spec.template`, as a Pod), and Constraints judge that one too, as
//! Gatekeeper's webhook does (`pkg/expansion`): the resultant is named
//! `<parent name>-<kind>` (lowercased), is in the request's namespace, has the parent as an
//! owner, is reviewed with the request's operation and no user, and is expanded again (at
//! most 30 levels). Gatekeeper's mutators run on each resultant (`source: Generated`) before
//! it is judged or expanded further. Its violations read `[Implied by <template>] <message>`,
//! with the template's `enforcementAction` when it sets one.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use super::model::{ApplyTo, ExpansionTemplate};
use crate::model::ValidationAction;

/// How deep expansion recurses before it fails (Gatekeeper's `maxRecursionDepth`).
pub const MAX_DEPTH: usize = 30;

/// A compiled ExpansionTemplate.
#[derive(Debug, Clone)]
pub struct CompiledExpansion {
    pub name: String,
    apply_to: Vec<ApplyTo>,
    source: Vec<String>,
    group: String,
    version: String,
    kind: String,
    /// The validation actions of its `enforcementAction`, overriding the Constraints'.
    pub actions: Option<Vec<ValidationAction>>,
}

fn listed(values: &[String], value: &str) -> bool {
    values.iter().any(|v| v == value || v == "*")
}

fn applies(apply_to: &[ApplyTo], group: &str, version: &str, kind: &str) -> bool {
    apply_to
        .iter()
        .any(|a| listed(&a.groups, group) && listed(&a.versions, version) && listed(&a.kinds, kind))
}

/// Validates a template as Gatekeeper does (`ValidateTemplate`).
pub fn compile(t: &ExpansionTemplate) -> Result<CompiledExpansion, Vec<String>> {
    let name = &t.metadata.name;
    let spec = &t.spec;
    let gvk = &spec.generated_gvk;
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push("ExpansionTemplate has empty name field".to_string());
    } else if name.len() >= 64 {
        errors.push("ExpansionTemplate name must be less than 64 characters".to_string());
    }
    if spec.template_source.is_empty() {
        errors.push(format!("ExpansionTemplate {name} has empty source field"));
    }
    if gvk.group.is_empty() && gvk.version.is_empty() && gvk.kind.is_empty() {
        errors.push(format!(
            "ExpansionTemplate {name} has empty generatedGVK field"
        ));
    }
    if spec.apply_to.is_empty() {
        errors.push(format!("ExpansionTemplate {name} must specify ApplyTo"));
    } else if applies(&spec.apply_to, &gvk.group, &gvk.version, &gvk.kind) {
        errors.push(format!(
            "ExpansionTemplate {name} generates GVK {}/{}, Kind={}, but also applies to that same GVK",
            gvk.group, gvk.version, gvk.kind
        ));
    }
    let actions = match spec.enforcement_action.as_deref() {
        None | Some("") => None,
        Some("deny") => Some(vec![ValidationAction::Deny]),
        Some("warn") => Some(vec![ValidationAction::Warn]),
        Some("dryrun") => Some(vec![ValidationAction::Audit]),
        Some(other) => {
            errors.push(format!(
                "spec.enforcementAction: Unsupported value: {other:?}: supported values: \"deny\", \"dryrun\", \"warn\""
            ));
            None
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CompiledExpansion {
        name: name.clone(),
        apply_to: spec.apply_to.clone(),
        source: spec
            .template_source
            .split('.')
            .map(str::to_string)
            .collect(),
        group: gvk.group.clone(),
        version: gvk.version.clone(),
        kind: gvk.kind.clone(),
        actions,
    })
}

/// One object an expansion made: the index of its template, its kind, and the object.
#[derive(Debug, Clone)]
pub struct Resultant {
    pub template: usize,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub object: Json,
}

fn str_at<'j>(v: &'j Json, path: &[&str]) -> &'j str {
    let mut v = v;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return "",
        }
    }
    v.as_str().unwrap_or_default()
}

impl CompiledExpansion {
    /// The object this template makes of `parent` (of the given kind), in `namespace` (the
    /// request's; the parent's own when empty).
    fn expand(&self, parent: &Json, namespace: &str) -> Result<Json, String> {
        let mut source = parent;
        for key in &self.source {
            source = source.get(key).ok_or_else(|| {
                format!(
                    "could not find source field {:?} in resource {}",
                    self.source.join("."),
                    str_at(parent, &["metadata", "name"])
                )
            })?;
        }
        if !source.is_object() {
            return Err(format!(
                "could not extract source field from unstructured: {:?} is not an object",
                self.source.join(".")
            ));
        }
        let mut out = source.clone();
        let api_version = match self.group.as_str() {
            "" => self.version.clone(),
            g => format!("{g}/{}", self.version),
        };
        let parent_name = str_at(parent, &["metadata", "name"]);
        let name = match self.kind.as_str() {
            "" => parent_name.to_lowercase(),
            k => format!("{parent_name}-{k}").to_lowercase(),
        };
        let namespace = match namespace {
            "" => str_at(parent, &["metadata", "namespace"]),
            ns => ns,
        }
        .to_string();
        let owner = sonic_rs::json!({
            "apiVersion": str_at(parent, &["apiVersion"]),
            "kind": str_at(parent, &["kind"]),
            "name": parent_name,
        });
        let Some(fields) = out.as_object_mut() else {
            return Err("the source is not an object".to_string());
        };
        fields.insert("apiVersion", Json::from(api_version.as_str()));
        fields.insert("kind", Json::from(self.kind.as_str()));
        if !fields.get(&"metadata").is_some_and(|m| m.is_object()) {
            fields.insert("metadata", Json::new_object());
        }
        let Some(metadata) = fields.get_mut(&"metadata").and_then(|m| m.as_object_mut()) else {
            return Err("the source's metadata is not an object".to_string());
        };
        metadata.insert("name", Json::from(name.as_str()));
        if !namespace.is_empty() {
            metadata.insert("namespace", Json::from(namespace.as_str()));
        }
        let has_owner = metadata
            .get(&"ownerReferences")
            .and_then(|r| r.as_array())
            .is_some_and(|refs| {
                refs.iter().any(|r| {
                    ["apiVersion", "kind", "name"]
                        .iter()
                        .all(|k| str_at(r, &[k]) == str_at(&owner, &[k]))
                })
            });
        if !has_owner && !parent_name.is_empty() && !str_at(parent, &["kind"]).is_empty() {
            if !metadata
                .get(&"ownerReferences")
                .is_some_and(|r| r.is_array())
            {
                metadata.insert("ownerReferences", Json::new_array());
            }
            if let Some(refs) = metadata
                .get_mut(&"ownerReferences")
                .and_then(|r| r.as_array_mut())
            {
                refs.push(owner);
            }
        }
        Ok(out)
    }
}

/// What runs the mutators on a resultant (Gatekeeper's mutation system, `source:
/// Generated`): the object as they leave it, or their error.
pub type Mutate<'m> = dyn FnMut(&Json) -> Result<Json, String> + 'm;

/// Every object the templates make of `parent` (of kind `group`/`version`/`kind`), each
/// mutated by `mutate`, and of those in turn, children before their parents' siblings as
/// Gatekeeper lists them.
pub fn resultants(
    templates: &[CompiledExpansion],
    parent: &Json,
    (group, version, kind): (&str, &str, &str),
    namespace: &str,
    mutate: &mut Mutate<'_>,
) -> Result<Vec<Resultant>, String> {
    let mut out = Vec::new();
    expand_into(
        templates,
        parent,
        (group, version, kind),
        namespace,
        0,
        mutate,
        &mut out,
    )?;
    Ok(out)
}

fn expand_into(
    templates: &[CompiledExpansion],
    parent: &Json,
    (group, version, kind): (&str, &str, &str),
    namespace: &str,
    depth: usize,
    mutate: &mut Mutate<'_>,
    out: &mut Vec<Resultant>,
) -> Result<(), String> {
    if depth >= MAX_DEPTH {
        return Err(format!("maximum recursion depth of {MAX_DEPTH} reached"));
    }
    let mut made = Vec::new();
    for (i, t) in templates.iter().enumerate() {
        if applies(&t.apply_to, group, version, kind) {
            made.push(Resultant {
                template: i,
                group: t.group.clone(),
                version: t.version.clone(),
                kind: t.kind.clone(),
                object: t.expand(parent, namespace)?,
            });
        }
    }
    for r in &mut made {
        r.object = mutate(&r.object).map_err(|e| {
            format!(
                "failed to mutate resultant resource {}: {e}",
                str_at(&r.object, &["metadata", "name"])
            )
        })?;
    }
    for r in &made {
        expand_into(
            templates,
            &r.object,
            (&r.group, &r.version, &r.kind),
            namespace,
            depth + 1,
            mutate,
            out,
        )?;
    }
    out.extend(made);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unchanged(object: &Json) -> Result<Json, String> {
        Ok(object.clone())
    }

    fn template(yaml: &str) -> Result<CompiledExpansion, Vec<String>> {
        let doc: Json = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(yaml)
            .ok()
            .and_then(|v| sonic_rs::to_string(&v).ok())
            .and_then(|t| sonic_rs::from_str(&t).ok())
            .unwrap_or_default();
        let t: ExpansionTemplate = crate::load::read(&doc).map_err(|e| vec![e.to_string()])?;
        compile(&t)
    }

    const DEPLOYMENTS: &str = "metadata: {name: expand-deployments}\nspec:\n  applyTo:\n  - {groups: [apps], kinds: [Deployment], versions: [v1]}\n  templateSource: spec.template\n  generatedGVK: {kind: Pod, group: '', version: v1}\n";

    #[test]
    fn a_deployment_stands_for_its_pod() {
        let Ok(t) = template(DEPLOYMENTS) else {
            return;
        };
        let deployment: Json = sonic_rs::from_str(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"Web","namespace":"prod"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}"#,
        )
        .unwrap_or_default();
        let made = resultants(
            &[t],
            &deployment,
            ("apps", "v1", "Deployment"),
            "",
            &mut unchanged,
        );
        let made = made.unwrap_or_default();
        assert_eq!(made.len(), 1);
        let pod = &made[0].object;
        let expected: Json = sonic_rs::from_str(
            r#"{"metadata":{"labels":{"app":"web"},"name":"web-pod","namespace":"prod","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"Web"}]},"spec":{"containers":[{"name":"c","image":"nginx"}]},"apiVersion":"v1","kind":"Pod"}"#,
        )
        .unwrap_or_default();
        assert_eq!(pod, &expected);
        // Other kinds are not expanded.
        let other = resultants(
            &[template(DEPLOYMENTS).unwrap_or_else(|_| unreachable!())],
            &deployment,
            ("apps", "v1", "StatefulSet"),
            "",
            &mut unchanged,
        );
        assert!(other.is_ok_and(|o| o.is_empty()));
    }

    #[test]
    fn gatekeepers_template_checks() {
        let errors = |yaml: &str| template(yaml).err().unwrap_or_default();
        assert_eq!(
            errors(
                "metadata: {name: e}\nspec:\n  applyTo: [{groups: ['*'], kinds: ['*'], versions: ['*']}]\n  templateSource: spec\n  generatedGVK: {kind: Pod, version: v1}\n"
            ),
            ["ExpansionTemplate e generates GVK /v1, Kind=Pod, but also applies to that same GVK"]
        );
        assert_eq!(
            errors("metadata: {name: e}\nspec: {}\n"),
            [
                "ExpansionTemplate e has empty source field",
                "ExpansionTemplate e has empty generatedGVK field",
                "ExpansionTemplate e must specify ApplyTo"
            ]
        );
    }

    #[test]
    fn a_missing_source_is_an_error_naming_it() {
        let Ok(t) = template(DEPLOYMENTS) else {
            return;
        };
        let bare: Json = sonic_rs::from_str(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            resultants(
                &[t],
                &bare,
                ("apps", "v1", "Deployment"),
                "",
                &mut unchanged
            )
            .err(),
            Some("could not find source field \"spec.template\" in resource d".to_string())
        );
    }
}
