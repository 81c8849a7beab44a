//! A small harness for the engine tests: policy manifests as YAML text, a request built from a
//! few fields, and the [`Outcome`] of `engine::evaluate` (plus the AdmissionReview response it
//! writes). Every test file includes it with `mod support;`, so not every helper is used by all.
#![allow(dead_code)]

use celer_cel::Json;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::{Manifest, Manifests};
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::{Outcome, ResultKind};
use sonic_rs::JsonValueTrait;

/// Everything from one set of manifests: the compiled policy set and a lookup over the other
/// objects (Namespaces, params).
pub struct Harness {
    pub set: PolicySet,
    pub lookup: ObjectLookup,
    pub options: EvalOptions,
}

impl Harness {
    /// Loads YAML documents (policies, bindings, Namespaces, params).
    pub fn new(yaml: &str) -> Harness {
        let mut manifests = Manifests::default();
        manifests.add_text("policies.yaml", yaml);
        let objects: Vec<Json> = manifests
            .items
            .iter()
            .filter_map(|(_, m)| match m {
                Manifest::Object(o) => Some(o.clone()),
                _ => None,
            })
            .collect();
        Harness {
            set: PolicySet::build(&manifests),
            lookup: ObjectLookup::new(objects),
            options: EvalOptions::default(),
        }
    }

    /// Like [`Harness::new`], failing the test if loading reported anything.
    #[track_caller]
    pub fn clean(yaml: &str) -> Harness {
        let h = Harness::new(yaml);
        assert!(h.set.errors.is_empty(), "load errors: {:#?}", h.errors());
        h
    }

    pub fn errors(&self) -> Vec<String> {
        self.set.errors.iter().map(ToString::to_string).collect()
    }

    /// Evaluates a request.
    pub fn eval(&self, request: &Req) -> Outcome {
        let body = request.review();
        let review = AdmissionReview::parse(body.as_bytes())
            .unwrap_or_else(|e| panic!("bad review {body}: {e}"));
        let r = review.request().unwrap_or_else(|e| panic!("{e}"));
        engine::evaluate(&self.set, &r, &self.lookup, &self.options)
    }

    /// Evaluates a request and returns the AdmissionReview response body.
    pub fn review_json(&self, request: &Req) -> Json {
        let body = request.review();
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let r = review.request().unwrap();
        let outcome = engine::evaluate(&self.set, &r, &self.lookup, &self.options);
        let text = outcome.review_json(r.uid, review.version());
        sonic_rs::from_str(&text).unwrap_or_else(|e| panic!("bad response {text}: {e}"))
    }
}

/// A request, built from the fields that matter to policies.
#[derive(Debug, Clone)]
pub struct Req {
    pub api_version: &'static str,
    pub operation: &'static str,
    /// (group, version, kind)
    pub kind: (&'static str, &'static str, &'static str),
    /// (group, version, resource)
    pub resource: (&'static str, &'static str, &'static str),
    pub sub_resource: &'static str,
    /// The original request's kind and resource, when they differ (equivalent matching).
    pub request_kind: Option<(&'static str, &'static str, &'static str)>,
    pub request_resource: Option<(&'static str, &'static str, &'static str)>,
    pub name: String,
    pub namespace: String,
    pub object: Option<String>,
    pub old_object: Option<String>,
    pub username: &'static str,
    pub uid: &'static str,
}

impl Req {
    /// A Pod request in namespace `default`; `object` is the Pod's JSON.
    pub fn pod(operation: &'static str, name: &str, object: Option<&str>) -> Req {
        Req {
            api_version: "admission.k8s.io/v1",
            operation,
            kind: ("", "v1", "Pod"),
            resource: ("", "v1", "pods"),
            sub_resource: "",
            request_kind: None,
            request_resource: None,
            name: name.to_string(),
            namespace: "default".to_string(),
            object: object.map(str::to_string),
            old_object: None,
            username: "alice",
            uid: "req-1",
        }
    }

    /// CREATE of a Pod called `name` in `default` with these labels (a JSON object).
    pub fn create_pod(name: &str, labels: &str) -> Req {
        let object = pod_json(name, "default", labels);
        Req::pod("CREATE", name, Some(&object))
    }

    /// CREATE of this object (a Pod), named as its metadata says.
    pub fn create(object: &str) -> Req {
        let v: Json = sonic_rs::from_str(object).unwrap();
        let name = v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Req::pod("CREATE", &name, Some(object))
    }

    pub fn in_namespace(mut self, ns: &str) -> Req {
        self.namespace = ns.to_string();
        self
    }

    pub fn with_old(mut self, old: &str) -> Req {
        self.old_object = Some(old.to_string());
        self
    }

    /// The AdmissionReview body.
    pub fn review(&self) -> String {
        let gvk = |(g, v, k): (&str, &str, &str)| {
            format!(r#"{{"group":{},"version":{},"kind":{}}}"#, q(g), q(v), q(k))
        };
        let gvr = |(g, v, r): (&str, &str, &str)| {
            format!(
                r#"{{"group":{},"version":{},"resource":{}}}"#,
                q(g),
                q(v),
                q(r)
            )
        };
        let mut out = format!(
            r#"{{"apiVersion":{},"kind":"AdmissionReview","request":{{"uid":{},"kind":{},"resource":{},"requestKind":{},"requestResource":{},"operation":{},"userInfo":{{"username":{},"groups":["system:authenticated"]}}"#,
            q(self.api_version),
            q(self.uid),
            gvk(self.kind),
            gvr(self.resource),
            gvk(self.request_kind.unwrap_or(self.kind)),
            gvr(self.request_resource.unwrap_or(self.resource)),
            q(self.operation),
            q(self.username),
        );
        if !self.sub_resource.is_empty() {
            out.push_str(&format!(r#","subResource":{}"#, q(self.sub_resource)));
        }
        if !self.name.is_empty() {
            out.push_str(&format!(r#","name":{}"#, q(&self.name)));
        }
        if !self.namespace.is_empty() {
            out.push_str(&format!(r#","namespace":{}"#, q(&self.namespace)));
        }
        if let Some(o) = &self.object {
            out.push_str(&format!(r#","object":{o}"#));
        }
        if let Some(o) = &self.old_object {
            out.push_str(&format!(r#","oldObject":{o}"#));
        }
        out.push_str(r#","dryRun":false}}"#);
        out
    }
}

/// A JSON string literal.
pub fn q(s: &str) -> String {
    sonic_rs::to_string(s).unwrap()
}

pub fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap_or_else(|e| panic!("bad test JSON {text}: {e}"))
}

/// A Pod with one container.
pub fn pod_json(name: &str, namespace: &str, labels: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":{},"namespace":{},"labels":{labels}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}}}}"#,
        q(name),
        q(namespace)
    )
}

/// Match constraints for CREATE and UPDATE of Pods.
pub const PODS: &str = r#"{resourceRules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;

/// A ValidatingAdmissionPolicy on Pods; `spec` is more flow-YAML spec fields
/// (`validations: [...], failurePolicy: Ignore`).
pub fn vap(name: &str, spec: &str) -> String {
    vap_matching(name, PODS, spec)
}

pub fn vap_matching(name: &str, constraints: &str, spec: &str) -> String {
    format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {{name: {name}}}\nspec: {{matchConstraints: {constraints}, {spec}}}\n"
    )
}

/// A ValidatingAdmissionPolicyBinding; `spec` is more flow-YAML spec fields.
pub fn binding(name: &str, policy: &str, actions: &str, spec: &str) -> String {
    let more = if spec.is_empty() {
        String::new()
    } else {
        format!(", {spec}")
    };
    format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {{name: {name}}}\nspec: {{policyName: {policy}, validationActions: {actions}{more}}}\n"
    )
}

/// A Deny binding `<policy>-binding`.
pub fn deny_binding(policy: &str) -> String {
    binding(&format!("{policy}-binding"), policy, "[Deny]", "")
}

/// A MutatingAdmissionPolicy on Pods.
pub fn map(name: &str, spec: &str) -> String {
    let constraints = r#"{resourceRules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}"#;
    format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\nmetadata: {{name: {name}}}\nspec: {{matchConstraints: {constraints}, {spec}}}\n"
    )
}

pub fn map_binding(name: &str, policy: &str, spec: &str) -> String {
    let more = if spec.is_empty() {
        String::new()
    } else {
        format!(", {spec}")
    };
    format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {{name: {name}}}\nspec: {{policyName: {policy}{more}}}\n"
    )
}

/// A Namespace with labels (a flow-YAML mapping).
pub fn namespace(name: &str, labels: &str) -> String {
    format!("---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {labels}}}\n")
}

/// A ConfigMap param in a namespace, with labels and data (flow-YAML mappings).
pub fn config_map(name: &str, namespace: &str, labels: &str, data: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {namespace}, labels: {labels}}}\ndata: {data}\n"
    )
}

/// The denial of an outcome: (code, reason, message).
#[track_caller]
pub fn denial(outcome: &Outcome) -> (u16, String, String) {
    assert!(!outcome.allowed, "expected a denial, got {outcome:#?}");
    let s = outcome.status.as_ref().unwrap();
    (s.code, s.reason.clone(), s.message.clone())
}

/// The denial message, or `allowed`.
pub fn verdict(outcome: &Outcome) -> String {
    match &outcome.status {
        None if outcome.allowed => "allowed".to_string(),
        None => "denied without status".to_string(),
        Some(s) => s.message.clone(),
    }
}

/// The results recorded for a policy, as (binding, kind) pairs.
pub fn results(outcome: &Outcome, policy: &str) -> Vec<(Option<String>, ResultKind)> {
    outcome
        .results
        .iter()
        .filter(|r| r.policy == policy)
        .map(|r| (r.binding.as_deref().map(str::to_string), r.result))
        .collect()
}

/// The text every VAP denial of a Pod named `name` starts with.
pub fn forbidden(name: &str, policy: &str, binding: &str, message: &str) -> String {
    format!(
        "pods \"{name}\" is forbidden: ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {message}"
    )
}
