//! Gatekeeper's Constraint kinds, made from their templates as Gatekeeper's controller makes
//! them (issue 16 item 2): for each ConstraintTemplate celer serves, a CRD
//! `<plural>.constraints.gatekeeper.sh` whose kind and names come from `spec.crd.spec.names`
//! and whose `spec.parameters` schema is the template's `openAPIV3Schema`; removed with its
//! template. Without it a cluster running celer alone accepts ConstraintTemplates but refuses
//! their Constraints.
//!
//! The CRDs celer makes carry the label [`TEMPLATE_LABEL`] naming their template; only those
//! are ever deleted. A template whose schema the API server refuses (not structural) gets its
//! CRD with parameters kept as written instead, as Gatekeeper's `legacySchema` does.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

/// The group of every Constraint kind.
pub const GROUP: &str = "constraints.gatekeeper.sh";

/// On the CRDs celer makes: the name of the template each was made from.
pub const TEMPLATE_LABEL: &str = "constraints.celer.dev/template";

/// The field manager of celer's writes of Constraint CRDs.
const FIELD_MANAGER: &str = "celer";

/// The Constraint kind a template declares: `(kind, plural)`, the plural lower-cased from the
/// kind as Gatekeeper does. `None` when the template names no kind.
pub fn constraint_kind(template: &Value) -> Option<(String, String)> {
    let kind = template
        .pointer("/spec/crd/spec/names/kind")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())?;
    Some((kind.to_string(), kind.to_ascii_lowercase()))
}

/// The CRD for a template's Constraints. `typed`: the template's parameter schema is used;
/// else parameters are kept as written.
pub fn constraint_crd(template: &Value, typed: bool) -> Option<Value> {
    let (kind, plural) = constraint_kind(template)?;
    let name = template
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut parameters = match template.pointer("/spec/crd/spec/validation/openAPIV3Schema") {
        Some(schema) if typed && schema.is_object() => schema.clone(),
        _ => json!({"x-kubernetes-preserve-unknown-fields": true}),
    };
    if let Some(p) = parameters.as_object_mut() {
        p.entry("type").or_insert_with(|| json!("object"));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "enforcementAction": {"type": "string"},
                    "scopedEnforcementActions": {
                        "type": "array",
                        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    },
                    "match": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "parameters": parameters,
                },
            },
            "status": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"byPod": celer_crds::schema::by_pod_schema()}
            },
        },
    });
    let version = |name: &str, storage: bool| {
        json!({
            "name": name,
            "served": true,
            "storage": storage,
            "schema": {"openAPIV3Schema": schema},
            "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"name": "enforcement-action", "type": "string", "jsonPath": ".spec.enforcementAction"},
                {"name": "total-violations", "type": "integer", "jsonPath": ".status.totalViolations"},
            ],
        })
    };
    Some(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{plural}.{GROUP}"),
            "labels": {
                "gatekeeper.sh/constraint": "yes",
                TEMPLATE_LABEL: name,
            },
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": plural,
                "categories": ["constraint", "constraints"],
            },
            "scope": "Cluster",
            "versions": [version("v1beta1", true), version("v1alpha1", false), version("v1", false)],
        },
    }))
}

/// Makes the CRDs of `templates` (name -> object, each a template celer serves) and deletes
/// those celer made for templates no longer there. Returns, per template, why its CRD could
/// not be made.
pub async fn reconcile(
    client: &Client,
    templates: &BTreeMap<String, Value>,
) -> BTreeMap<String, String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut problems = BTreeMap::new();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for (name, template) in templates {
        let Some(typed) = constraint_crd(template, true) else {
            problems.insert(
                name.clone(),
                "spec.crd.spec.names.kind is required".to_string(),
            );
            continue;
        };
        let crd_name = typed
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let applied = match api.patch(&crd_name, &params, &Patch::Apply(&typed)).await {
            Ok(_) => Ok(()),
            // Not a structural schema, most often: keep the parameters as written.
            Err(kube::Error::Api(status)) if status.code == 422 => {
                let loose = constraint_crd(template, false).unwrap_or(Value::Null);
                tracing::info!(template = %name, reason = %status.message, "constraint parameters kept as written: the template's schema is not structural");
                api.patch(&crd_name, &params, &Patch::Apply(&loose))
                    .await
                    .map(|_| ())
            }
            Err(e) => Err(e),
        };
        if let Err(e) = applied {
            problems.insert(name.clone(), format!("constraint CRD {crd_name}: {e}"));
        }
    }
    match api
        .list(&ListParams::default().labels(TEMPLATE_LABEL))
        .await
    {
        Ok(made) => {
            for crd in made.items {
                let of = crd
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(TEMPLATE_LABEL))
                    .cloned()
                    .unwrap_or_default();
                let Some(crd_name) = crd.metadata.name else {
                    continue;
                };
                let current = templates
                    .get(&of)
                    .and_then(constraint_kind)
                    .map(|(_, plural)| format!("{plural}.{GROUP}"));
                if current.as_deref() == Some(crd_name.as_str()) {
                    continue;
                }
                match api.delete(&crd_name, &DeleteParams::default()).await {
                    Ok(_) => {
                        tracing::info!(crd = %crd_name, template = %of, "constraint CRD removed with its template")
                    }
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(e) => {
                        tracing::warn!(crd = %crd_name, error = %e, "constraint CRD not removed")
                    }
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "constraint CRDs not listed"),
    }
    problems
}

/// Keeps the Constraint CRDs in step with the templates: [`ConstraintCrds::desire`] hands it
/// the templates of each load; a task reconciles the latest.
#[derive(Debug)]
pub struct ConstraintCrds {
    desired: tokio::sync::watch::Sender<Option<BTreeMap<String, Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ConstraintCrds {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ConstraintCrds {
    /// `made`: called after each reconcile that changed something (discovery then looks for
    /// the new kinds at once).
    pub fn spawn(client: Client, made: impl Fn() + Send + 'static) -> ConstraintCrds {
        let (desired, mut rx) = tokio::sync::watch::channel(None::<BTreeMap<String, Value>>);
        let task = tokio::spawn(async move {
            let mut last: Option<BTreeMap<String, Value>> = None;
            while rx.changed().await.is_ok() {
                let Some(templates) = rx.borrow_and_update().clone() else {
                    continue;
                };
                if last.as_ref() == Some(&templates) {
                    continue;
                }
                let problems = reconcile(&client, &templates).await;
                for (template, problem) in &problems {
                    tracing::warn!(template = %template, problem = %problem, "constraint CRD not made");
                }
                made();
                last = Some(templates);
            }
        });
        ConstraintCrds { desired, task }
    }

    /// The templates of the latest load that loaded (by name).
    pub fn desire(&self, templates: BTreeMap<String, std::sync::Arc<celer_cel::Json>>) {
        let templates = (templates.into_iter())
            .filter_map(|(name, t)| {
                let text = sonic_rs::to_string(t.as_ref()).ok()?;
                Some((name, serde_json::from_str(&text).ok()?))
            })
            .collect();
        self.desired.send_replace(Some(templates));
    }
}

/// A template's CRD name, for messages.
pub fn crd_name(template: &Value) -> Option<String> {
    constraint_kind(template).map(|(_, plural)| format!("{plural}.{GROUP}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn template() -> Value {
        json!({
            "apiVersion": "templates.gatekeeper.sh/v1",
            "kind": "ConstraintTemplate",
            "metadata": {"name": "k8srequiredlabels"},
            "spec": {"crd": {"spec": {
                "names": {"kind": "K8sRequiredLabels"},
                "validation": {"openAPIV3Schema": {"properties": {"labels": {"type": "array", "items": {"type": "string"}}}}},
            }}},
        })
    }

    #[test]
    fn a_template_gives_its_constraint_kind_and_schema() {
        let crd = constraint_crd(&template(), true).unwrap();
        assert_eq!(
            crd["metadata"]["name"],
            "k8srequiredlabels.constraints.gatekeeper.sh"
        );
        assert_eq!(
            crd["metadata"]["labels"][TEMPLATE_LABEL],
            "k8srequiredlabels"
        );
        assert_eq!(crd["spec"]["names"]["kind"], "K8sRequiredLabels");
        assert_eq!(crd["spec"]["names"]["plural"], "k8srequiredlabels");
        assert_eq!(crd["spec"]["scope"], "Cluster");
        let versions: Vec<&str> = crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(versions, ["v1beta1", "v1alpha1", "v1"]);
        let parameters = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"]["parameters"];
        // The template's schema, given the `type: object` a structural schema needs.
        assert_eq!(parameters["type"], "object");
        assert_eq!(parameters["properties"]["labels"]["type"], "array");
        let loose = constraint_crd(&template(), false).unwrap();
        let parameters = &loose["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"]["parameters"];
        assert_eq!(parameters["x-kubernetes-preserve-unknown-fields"], true);
        assert!(parameters.get("properties").is_none());
    }

    #[test]
    fn a_template_without_a_kind_gives_no_crd() {
        let mut t = template();
        t["spec"]["crd"]["spec"]["names"] = json!({});
        assert!(constraint_crd(&t, true).is_none());
        assert_eq!(
            crd_name(&template()).unwrap(),
            "k8srequiredlabels.constraints.gatekeeper.sh"
        );
    }
}
