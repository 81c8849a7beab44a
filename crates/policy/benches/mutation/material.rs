//! What the mutation bench runs: a synthesized ~50 KB Deployment in an AdmissionReview,
//! Kyverno MutatingPolicies (and MutatingAdmissionPolicies) that each add one label, by
//! ApplyConfiguration or by JSONPatch, loaded the way users load them, one request from bytes
//! to response bytes, and the check that the response's patch adds exactly those labels.

use celer_cel::Json;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::NoLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::{Outcome, ResultKind};
use sonic_rs::JsonValueTrait;

use crate::patch::{before_and_after, members_but, metadata_strings};

/// The `uid` every benchmark request carries (the response echoes it).
pub const UID: &str = "4d1c2b3a-6393-11e8-b7cc-42010a800002";

/// A container of the Deployment: `env` variables, ports, mounts, probes, resources.
fn container(out: &mut String, name: &str, env: usize, mounts: usize) {
    out.push_str(&format!(
        r#"{{"name":"{name}","image":"registry.example.com/platform/{name}:v1.24.3@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","imagePullPolicy":"IfNotPresent","command":["/usr/local/bin/{name}"],"args":["--config=/etc/{name}/config.yaml","--log-level=info","--metrics-addr=:9090"],"ports":[{{"name":"http","containerPort":8080,"protocol":"TCP"}},{{"name":"metrics","containerPort":9090,"protocol":"TCP"}}],"env":["#
    ));
    for e in 0..env {
        if e > 0 {
            out.push(',');
        }
        match e % 3 {
            0 => out.push_str(&format!(
                r#"{{"name":"{}_SETTING_{e:02}","value":"value-of-setting-{e}-for-{name}-with-some-length"}}"#,
                name.to_ascii_uppercase().replace('-', "_")
            )),
            1 => out.push_str(&format!(
                r#"{{"name":"CONFIG_REF_{e:02}","valueFrom":{{"configMapKeyRef":{{"name":"{name}-config","key":"key-{e}"}}}}}}"#
            )),
            _ => out.push_str(&format!(
                r#"{{"name":"POD_FIELD_{e:02}","valueFrom":{{"fieldRef":{{"apiVersion":"v1","fieldPath":"metadata.labels['app']"}}}}}}"#
            )),
        }
    }
    out.push_str(r#"],"resources":{"limits":{"cpu":"2","memory":"2Gi"},"requests":{"cpu":"500m","memory":"512Mi"}},"volumeMounts":["#);
    for m in 0..mounts {
        if m > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#"{{"name":"volume-{m:02}","mountPath":"/var/lib/{name}/data-{m:02}","readOnly":{}}}"#,
            m % 2 == 0
        ));
    }
    out.push_str(
        r#"],"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"initialDelaySeconds":10,"periodSeconds":10,"timeoutSeconds":2,"failureThreshold":3},"readinessProbe":{"httpGet":{"path":"/ready","port":"http"},"periodSeconds":5},"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"runAsNonRoot":true,"runAsUser":10001,"capabilities":{"drop":["ALL"]},"seccompProfile":{"type":"RuntimeDefault"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}"#,
    );
}

/// A realistic Deployment of about 50 KB: labels and annotations, 10 containers and 2 init
/// containers with 24 env vars and 8 mounts each, 24 volumes of several kinds, affinity,
/// tolerations, topology spread. Deterministic: the same bytes every run.
pub fn deployment() -> Vec<u8> {
    let mut out = String::with_capacity(64 << 10);
    out.push_str(r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"checkout","namespace":"production","uid":"0c7e2a9d-3f1b-4a6e-9d2c-5b8f7e6a1c3d","resourceVersion":"48213377","generation":17,"creationTimestamp":"2026-11-30T08:12:44Z","labels":{"#);
    for l in 0..12 {
        if l > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#""app.kubernetes.io/part-{l:02}":"checkout-{l}""#
        ));
    }
    out.push_str(r#"},"annotations":{"#);
    for a in 0..24 {
        if a > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            r#""team.example.com/annotation-{a:02}":"an annotation value of moderate length, number {a}, as tools write them""#
        ));
    }
    out.push_str(r#"}},"spec":{"replicas":6,"revisionHistoryLimit":10,"progressDeadlineSeconds":600,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},"selector":{"matchLabels":{"app":"checkout","tier":"backend"}},"template":{"metadata":{"labels":{"app":"checkout","tier":"backend","version":"v1.24.3"},"annotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9090","sidecar.istio.io/inject":"true"}},"spec":{"serviceAccountName":"checkout","automountServiceAccountToken":false,"terminationGracePeriodSeconds":45,"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{"runAsNonRoot":true,"fsGroup":10001,"seccompProfile":{"type":"RuntimeDefault"}},"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"checkout"}},"topologyKey":"kubernetes.io/hostname"}}]}},"tolerations":[{"key":"dedicated","operator":"Equal","value":"checkout","effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app":"checkout"}}}],"initContainers":["#);
    for i in 0..2 {
        if i > 0 {
            out.push(',');
        }
        container(&mut out, &format!("init-{i}"), 24, 8);
    }
    out.push_str(r#"],"containers":["#);
    for c in 0..10 {
        if c > 0 {
            out.push(',');
        }
        container(&mut out, &format!("worker-{c}"), 24, 8);
    }
    out.push_str(r#"],"volumes":["#);
    for v in 0..24 {
        if v > 0 {
            out.push(',');
        }
        let source = match v % 4 {
            0 => format!(r#""configMap":{{"name":"checkout-config-{v}","defaultMode":420}}"#),
            1 => format!(r#""secret":{{"secretName":"checkout-secret-{v}","defaultMode":256}}"#),
            2 => r#""emptyDir":{"sizeLimit":"1Gi"}"#.to_string(),
            _ => format!(r#""persistentVolumeClaim":{{"claimName":"checkout-data-{v}"}}"#),
        };
        out.push_str(&format!(r#"{{"name":"volume-{v:02}",{source}}}"#));
    }
    out.push_str(r#"]}}},"status":{}}"#);
    out.into_bytes()
}

/// An AdmissionReview v1 for creating the Deployment `object` (its JSON bytes).
pub fn review(object: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(object.len() + 1024);
    out.extend_from_slice(
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""#,
    );
    out.extend_from_slice(UID.as_bytes());
    out.extend_from_slice(
        br#"","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"requestKind":{"group":"apps","version":"v1","kind":"Deployment"},"requestResource":{"group":"apps","version":"v1","resource":"deployments"},"name":"checkout","namespace":"production","operation":"CREATE","userInfo":{"username":"system:serviceaccount:kube-system:deployment-controller","uid":"9b2c5d1e-0f3a-4b6c-8d7e-1a2b3c4d5e6f","groups":["system:serviceaccounts","system:authenticated"]},"object":"#,
    );
    out.extend_from_slice(object);
    out.extend_from_slice(
        br#","oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}"#,
    );
    out
}

/// The label mutation `i` adds.
pub fn label(i: usize) -> (String, String) {
    (
        format!("bench.celer.dev/label-{i:02}"),
        format!("value-{i}"),
    )
}

/// How a policy adds its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `Object{metadata: Object.metadata{labels: {"k": "v"}}}`.
    ApplyConfiguration,
    /// `[JSONPatch{op: "add", path: "/metadata/labels/<k>", value: "v"}]`.
    JsonPatch,
}

fn rules() -> &'static str {
    "    resourceRules:\n    - apiGroups: [apps]\n      apiVersions: [v1]\n      operations: [CREATE, UPDATE]\n      resources: [deployments]\n"
}

fn mutation(i: usize, how: How) -> String {
    let (key, value) = label(i);
    match how {
        How::ApplyConfiguration => format!(
            "  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: >-\n        Object{{metadata: Object.metadata{{labels: {{\"{key}\": \"{value}\"}}}}}}\n"
        ),
        How::JsonPatch => format!(
            "  - patchType: JSONPatch\n    jsonPatch:\n      expression: >-\n        [JSONPatch{{op: \"add\", path: \"/metadata/labels/\" + jsonpatch.escapeKey(\"{key}\"), value: \"{value}\"}}]\n"
        ),
    }
}

/// `n` Kyverno MutatingPolicies on Deployments, each adding one label.
pub fn kyverno_yaml(n: usize, how: How) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!(
            "---\napiVersion: policies.kyverno.io/v1\nkind: MutatingPolicy\nmetadata:\n  name: label-{i:02}\nspec:\n  matchConstraints:\n{}  mutations:\n{}",
            rules(),
            mutation(i, how)
        ));
    }
    out
}

/// `n` MutatingAdmissionPolicies on Deployments, each adding one label, with their bindings.
pub fn native_yaml(n: usize, how: How) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!(
            "---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata:\n  name: label-{i:02}\nspec:\n  failurePolicy: Fail\n  reinvocationPolicy: Never\n  matchConstraints:\n{}  mutations:\n{}---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicyBinding\nmetadata:\n  name: label-{i:02}-binding\nspec:\n  policyName: label-{i:02}\n",
            rules(),
            mutation(i, how)
        ));
    }
    out
}

/// Loads policies from YAML text: no load error, `kyverno` Kyverno MutatingPolicies and
/// `native` MutatingAdmissionPolicies, or the bench is broken.
pub fn build(yaml: &str, kyverno: usize, native: usize) -> Result<PolicySet, String> {
    let mut manifests = Manifests::default();
    manifests.add_text("bench.yaml", yaml);
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!("{} load errors, the first: {e}", set.errors.len()));
    }
    if set.kyverno().mutating.len() != kyverno || set.native().mutating.policies.len() != native {
        return Err(format!(
            "expected {kyverno} Kyverno and {native} native mutating policies, got {} and {}",
            set.kyverno().mutating.len(),
            set.native().mutating.policies.len()
        ));
    }
    Ok(set)
}

/// One request through the engine, bytes in, response bytes out, as the webhook serves it.
#[inline(never)]
pub fn admit(set: &PolicySet, body: &[u8]) -> Result<String, String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    // As `celer serve` evaluates: the response carries the patch, not the mutated object.
    let options = EvalOptions {
        patch_only: true,
        ..EvalOptions::default()
    };
    let outcome = engine::evaluate(set, &request, &NoLookup, &options);
    Ok(outcome.review_json(request.uid, review.version()))
}

fn admit_with_outcome(set: &PolicySet, body: &[u8]) -> Result<(Outcome, String), String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, &NoLookup, &EvalOptions::default());
    let response = outcome.review_json(request.uid, review.version());
    Ok((outcome, response))
}

/// The response allows the Deployment with a JSONPatch that, applied to it, adds exactly the
/// `n` labels and changes nothing else; every policy passed. Returns the patch's text.
pub fn check_labelled(set: &PolicySet, object: &[u8], n: usize) -> Result<String, String> {
    let (outcome, response) = admit_with_outcome(set, &review(object))?;
    let v: Json = sonic_rs::from_str(&response).map_err(|e| format!("response: {e}"))?;
    let response = v.get("response").ok_or("no response")?;
    if response.get("uid").and_then(|u| u.as_str()) != Some(UID)
        || response.get("allowed").and_then(|a| a.as_bool()) != Some(true)
    {
        return Err(format!("not allowed: {:?}", outcome.status));
    }
    if response.get("patchType").and_then(|t| t.as_str()) != Some("JSONPatch") {
        return Err("no JSONPatch in the response".into());
    }
    let patch = response
        .get("patch")
        .and_then(|p| p.as_str())
        .ok_or("no patch")?;
    let (original, patched, patch_text) = before_and_after(object, patch)?;
    let labels = |v: &Json| metadata_strings(v, "labels");
    let mut want = labels(&original);
    want.extend((0..n).map(label));
    let got = labels(&patched);
    if got != want {
        return Err(format!(
            "patched labels: {} (want {}, in order)",
            got.len(),
            want.len()
        ));
    }
    if members_but(&patched, "labels") != members_but(&original, "labels") {
        return Err("the patch changes more than the labels".into());
    }
    if outcome.results.len() != n || outcome.results.iter().any(|r| r.result != ResultKind::Pass) {
        return Err(format!("{} results, not {n} passes", outcome.results.len()));
    }
    String::from_utf8(patch_text).map_err(|e| e.to_string())
}
