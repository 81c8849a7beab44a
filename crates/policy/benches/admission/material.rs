//! What the admission benchmarks run: AdmissionReview bodies around the Pods of the cel bench
//! support, policy sets written as YAML text and loaded the way users load them, one request
//! from bytes to response bytes, and the checks that the engine decides what it should.

use celer_cel::Json;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::{Lookup, NoLookup};
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::{Outcome, ResultKind};
use sonic_rs::JsonValueTrait;

use crate::patch::{before_and_after, members_but, metadata_strings};

use crate::support::exprs;
use crate::support::handwritten::{COUNT, check_all};

/// The `uid` every benchmark request carries (the response echoes it).
pub const UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

/// An AdmissionReview v1 for creating `pod` (its JSON bytes), as kube-apiserver sends it to a
/// webhook: request attributes, the user, the object, `oldObject: null`, the create options.
pub fn review(pod: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pod.len() + 1024);
    out.extend_from_slice(
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":""#,
    );
    out.extend_from_slice(UID.as_bytes());
    out.extend_from_slice(
        br#"","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1","resource":"pods"},"name":"web-7d4b9c6f5-x2k8p","namespace":"production","operation":"CREATE","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller","uid":"9b2c5d1e-0f3a-4b6c-8d7e-1a2b3c4d5e6f","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},"object":"#,
    );
    out.extend_from_slice(pod);
    out.extend_from_slice(
        br#","oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}"#,
    );
    out
}

/// A ValidatingAdmissionPolicy on Pod creates with one validation, and its `Deny` binding.
fn validating_pair(out: &mut String, name: &str, rules: &str, expression: &str) {
    out.push_str(&format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n\
         metadata:\n  name: {name}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    \
         resourceRules:\n{rules}  validations:\n  - expression: |-\n      {expression}\n    \
         reason: Forbidden\n---\napiVersion: admissionregistration.k8s.io/v1\n\
         kind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: {name}-binding\nspec:\n  \
         policyName: {name}\n  validationActions: [Deny]\n"
    ));
}

/// A resource rule, indented for `matchConstraints.resourceRules`.
fn rule(groups: &str, resources: &str, operations: &str) -> String {
    format!(
        "    - apiGroups: [{groups}]\n      apiVersions: [\"*\"]\n      operations: [{operations}]\n      resources: [{resources}]\n"
    )
}

fn pods_rule() -> String {
    rule("\"\"", "\"pods\"", "\"CREATE\", \"UPDATE\"")
}

/// The name of the policy holding Pod Security check `check` (`hostPID` -> `psa-hostpid`).
pub fn psa_policy_name(check: &str) -> String {
    format!("psa-{}", check.to_ascii_lowercase())
}

/// The 16 Pod Security checks of the cel bench (`support::exprs`), one policy each.
pub fn pod_security_yaml() -> String {
    let mut out = String::new();
    for (check, expression) in exprs::expressions() {
        validating_pair(&mut out, &psa_policy_name(check), &pods_rule(), &expression);
    }
    out
}

/// `n` policies that match every Pod create and always pass, reading the object once.
pub fn always_true_yaml(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        validating_pair(
            &mut out,
            &format!("always-{i:04}"),
            &pods_rule(),
            "object.kind == 'Pod'",
        );
    }
    out
}

/// `n` policies that cannot match a Pod create: other resources of the core group, Pods of
/// other groups, other resources of other groups, and Pods on other operations, in turn.
pub fn non_matching_yaml(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let rules = match i % 4 {
            0 => rule("\"\"", &format!("\"things{i}\""), "\"*\""),
            1 => rule(&format!("\"g{i}.example.com\""), "\"pods\"", "\"*\""),
            2 => rule(
                "\"apps\", \"batch\"",
                "\"deployments\", \"statefulsets\", \"jobs\", \"cronjobs\"",
                "\"CREATE\", \"UPDATE\"",
            ),
            _ => rule("\"\"", "\"pods\"", "\"DELETE\", \"CONNECT\""),
        };
        validating_pair(&mut out, &format!("elsewhere-{i:04}"), &rules, "false");
    }
    out
}

/// The growth shape of `e2e/growth.py` at engine level (case (g)): one policy that matches
/// every Pod create and passes, and `n` that do not: even ones for ConfigMaps, odd ones for
/// Pods but bound (by `kubernetes.io/metadata.name`) to tenant namespaces the request is not
/// in, so the resource index alone cannot leave them out.
pub fn pinned_elsewhere_yaml(n: usize) -> String {
    let mut out = always_true_yaml(1);
    for i in 0..n {
        let name = format!("tenant-{i:04}");
        let rules = if i % 2 == 0 {
            rule("\"\"", "\"configmaps\"", "\"CREATE\", \"UPDATE\"")
        } else {
            pods_rule()
        };
        validating_pair(&mut out, &name, &rules, "false");
        out.push_str(&format!(
            "  matchResources:\n    namespaceSelector:\n      matchLabels:\n        \
             kubernetes.io/metadata.name: {name}\n"
        ));
    }
    out
}

/// The Namespace of the bench reviews, labelled as the API server labels it.
pub fn review_namespace() -> Result<celer_cel::Json, String> {
    sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"production","labels":{"kubernetes.io/metadata.name":"production"}}}"#,
    )
    .map_err(|e| e.to_string())
}

/// `n` Kyverno ClusterPolicy `validate.cel` rules (ten per policy, `Enforce`) for kinds other
/// than Pod: other core kinds, kinds of other groups, and Pod controllers (which autogen
/// does not touch, as no rule names Pod). None can match a Pod create, and none would pass.
pub fn cluster_policy_rules_yaml(n: usize) -> String {
    const PER_POLICY: usize = 10;
    let mut out = String::new();
    for p in 0..n.div_ceil(PER_POLICY) {
        out.push_str(&format!(
            "---\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: elsewhere-{p:03}\n\
             spec:\n  validationFailureAction: Enforce\n  rules:\n"
        ));
        for r in (p * PER_POLICY)..((p + 1) * PER_POLICY).min(n) {
            let kinds = match r % 4 {
                0 => format!("Thing{r}"),
                1 => format!("g{r}.example.com/v1/Pod"),
                2 => "Deployment, StatefulSet, apps/v1/DaemonSet".to_string(),
                _ => "ConfigMap, v1/Secret".to_string(),
            };
            out.push_str(&format!(
                "  - name: rule-{r:04}\n    match:\n      any:\n      - resources: {{kinds: [{kinds}]}}\n\
                 \x20   validate:\n      cel:\n        expressions:\n        - expression: \"false\"\n"
            ));
        }
    }
    out
}

/// Loads ClusterPolicy rules from YAML text; any load error, or another count of rules than
/// `rules`, is a broken benchmark.
pub fn build_cluster_policies(yaml: &str, rules: usize) -> Result<PolicySet, String> {
    let mut manifests = Manifests::default();
    manifests.add_text("bench.yaml", yaml);
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!("{} load errors, the first: {e}", set.errors.len()));
    }
    if set.kyverno().classic.len() != rules {
        return Err(format!(
            "expected {rules} ClusterPolicy rules, got {}",
            set.kyverno().classic.len()
        ));
    }
    Ok(set)
}

/// The annotation mutation `i` adds.
pub fn annotation(i: usize) -> (String, String) {
    (
        format!("bench.celer.dev/mutated-{i:02}"),
        format!("value-{i}"),
    )
}

/// How a mutation's expression adds its annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Annotate {
    /// `[JSONPatch{op: "add", path: "/metadata/annotations/<key>", value: ...}]`: the
    /// expression does not read the object.
    Add,
    /// The same behind `has(object.metadata.annotations) ? ... : <add the whole map>`, as
    /// policies write it when they cannot know that annotations exist: it reads the object.
    Guarded,
}

/// `n` MutatingAdmissionPolicies that each add one annotation to Pods by JSONPatch, with
/// their bindings.
pub fn annotating_yaml(n: usize, how: Annotate) -> String {
    let mut out = String::new();
    for i in 0..n {
        let (key, value) = annotation(i);
        let add = format!(
            "[JSONPatch{{op: \"add\", path: \"/metadata/annotations/\" + jsonpatch.escapeKey(\"{key}\"), value: \"{value}\"}}]"
        );
        let expression = match how {
            Annotate::Add => add,
            Annotate::Guarded => format!(
                "has(object.metadata.annotations) ? {add} : [JSONPatch{{op: \"add\", path: \"/metadata/annotations\", value: {{\"{key}\": \"{value}\"}}}}]"
            ),
        };
        out.push_str(&format!(
            "---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\n\
             metadata:\n  name: annotate-{i:02}\nspec:\n  failurePolicy: Fail\n  \
             reinvocationPolicy: Never\n  matchConstraints:\n    resourceRules:\n{}  mutations:\n  \
             - patchType: JSONPatch\n    jsonPatch:\n      expression: |-\n        {expression}\n\
             ---\napiVersion: admissionregistration.k8s.io/v1beta1\n\
             kind: MutatingAdmissionPolicyBinding\nmetadata:\n  name: annotate-{i:02}-binding\n\
             spec:\n  policyName: annotate-{i:02}\n",
            pods_rule()
        ));
    }
    out
}

/// The param object of the (f) policies: a ConfigMap in the request's namespace.
pub const PARAM_NAME: &str = "bench-limits";

/// What the (f) policies read besides the request: the ConfigMap they take as params, and
/// the request's Namespace (the only other object a ValidatingAdmissionPolicy can read).
pub fn feature_objects() -> Vec<Json> {
    [
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"production","labels":{"kubernetes.io/metadata.name":"production","team":"web"}}}"#,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench-limits","namespace":"production"},"data":{"maxContainers":"64","maxNameLength":"63","allowedRuntimeClass":"gvisor"}}"#,
    ]
    .iter()
    .filter_map(|text| sonic_rs::from_str(text).ok())
    .collect()
}

/// An authorizer that allows every check, answering at once (what it costs is the engine's
/// part: building the `authorizer` values and the checks, not a round trip to the API server).
#[derive(Debug)]
pub struct AllowAll;

impl celer_cel_kubernetes::authz::Authorizer for AllowAll {
    fn authorize(
        &self,
        _attributes: &celer_cel_kubernetes::authz::AuthzAttributes,
    ) -> celer_cel_kubernetes::authz::AuthzDecision {
        celer_cel_kubernetes::authz::AuthzDecision {
            decision: celer_cel_kubernetes::authz::Decision::Allow,
            ..Default::default()
        }
    }
}

/// The validation of (f) policy `i` and of its plain twin (the param's value written as a
/// literal, `true` for the authorizer check): `(with features, plain)`.
fn feature_validation(i: usize) -> (&'static str, &'static str) {
    match i % 4 {
        0 => (
            "authorizer.group('').resource('pods').subresource('exec').namespace(request.namespace).check('create').allowed() || object.spec.containers.all(c, !has(c.stdin) || !c.stdin)",
            "true || object.spec.containers.all(c, !has(c.stdin) || !c.stdin)",
        ),
        1 => (
            "object.spec.containers.size() <= int(params.data.maxContainers)",
            "object.spec.containers.size() <= 64",
        ),
        2 => (
            "object.metadata.name.size() <= int(params.data.maxNameLength)",
            "object.metadata.name.size() <= 63",
        ),
        _ => (
            "!has(object.spec.runtimeClassName) || object.spec.runtimeClassName == params.data.allowedRuntimeClass",
            "!has(object.spec.runtimeClassName) || object.spec.runtimeClassName == 'gvisor'",
        ),
    }
}

/// `n` policies as they are written with the features of issue 13: each takes a ConfigMap
/// as `paramKind`, its binding names it by `paramRef` (`parameterNotFoundAction: Deny`), and
/// two matchConditions (the Kubernetes documentation's: leave the kubelet's requests alone, and
/// a check on the object) gate it; every fourth policy asks the authorizer (may the user exec
/// into Pods here?). With `plain`, the same policies without any of that: no params (their
/// values as literals), no matchConditions, no authorizer: the reference of (f).
pub fn features_yaml(n: usize, plain: bool) -> String {
    let mut out = String::new();
    for i in 0..n {
        let (with, without) = feature_validation(i);
        let name = format!("{}-{i:02}", if plain { "plain" } else { "featured" });
        let (param_kind, conditions, param_ref, expression) = if plain {
            (String::new(), String::new(), String::new(), without)
        } else {
            (
                "  paramKind:\n    apiVersion: v1\n    kind: ConfigMap\n".to_string(),
                "  matchConditions:\n  - name: exclude-kubelet-requests\n    expression: \"!('system:nodes' in request.userInfo.groups)\"\n  - name: has-containers\n    expression: \"has(object.spec.containers)\"\n".to_string(),
                format!(
                    "  paramRef:\n    name: {PARAM_NAME}\n    namespace: production\n    parameterNotFoundAction: Deny\n"
                ),
                with,
            )
        };
        out.push_str(&format!(
            "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n\
             metadata:\n  name: {name}\nspec:\n  failurePolicy: Fail\n{param_kind}  matchConstraints:\n    \
             resourceRules:\n{rules}{conditions}  validations:\n  - expression: |-\n      {expression}\n    \
             reason: Forbidden\n---\napiVersion: admissionregistration.k8s.io/v1\n\
             kind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: {name}-binding\nspec:\n  \
             policyName: {name}\n{param_ref}  validationActions: [Deny]\n",
            rules = pods_rule(),
        ));
    }
    out
}

/// Loads policies from YAML text; any load error is a broken benchmark.
pub fn build(yaml: &str, validating: usize, mutating: usize) -> Result<PolicySet, String> {
    let mut manifests = Manifests::default();
    manifests.add_text("bench.yaml", yaml);
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!("{} load errors, the first: {e}", set.errors.len()));
    }
    let bound = |bindings: &[Vec<_>]| bindings.iter().all(|b: &Vec<_>| b.len() == 1);
    if set.native().validating.policies.len() != validating
        || set.native().mutating.policies.len() != mutating
        || !bound(&set.native().validating.bindings)
        || !bound(&set.native().mutating.bindings)
    {
        return Err(format!(
            "expected {validating} validating and {mutating} mutating policies with one \
             binding each, got {} and {}",
            set.native().validating.policies.len(),
            set.native().mutating.policies.len()
        ));
    }
    Ok(set)
}

/// One request through the engine, bytes in, response bytes out, as the webhook serves it:
/// parse the AdmissionReview once, evaluate, write the response.
#[inline(never)]
pub fn admit(set: &PolicySet, body: &[u8]) -> Result<String, String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, &NoLookup, &EvalOptions::default());
    Ok(outcome.review_json(request.uid, review.version()))
}

/// [`admit`] with a lookup (params, namespaces) and options (the authorizer).
#[inline(never)]
pub fn admit_with(
    set: &PolicySet,
    body: &[u8],
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> Result<String, String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, lookup, options);
    Ok(outcome.review_json(request.uid, review.version()))
}

/// The same as [`admit`], keeping the outcome for checks.
pub fn admit_with_outcome(set: &PolicySet, body: &[u8]) -> Result<(Outcome, String), String> {
    admit_with_outcome_in(set, body, &NoLookup, &EvalOptions::default())
}

/// The same as [`admit_with`], keeping the outcome for checks.
pub fn admit_with_outcome_in(
    set: &PolicySet,
    body: &[u8],
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> Result<(Outcome, String), String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, lookup, options);
    let response = outcome.review_json(request.uid, review.version());
    Ok((outcome, response))
}

/// The floor: what a hand-written webhook must do at least for the 16 checks, parse the same
/// bytes and run the hand-written checks on `request.object`.
#[inline(never)]
pub fn floor(body: &[u8]) -> Result<[bool; COUNT], String> {
    let review: Json = sonic_rs::from_slice(body).map_err(|e| e.to_string())?;
    let pod = review
        .get("request")
        .and_then(|r| r.get("object"))
        .ok_or("the review has no request.object")?;
    Ok(check_all(pod))
}

/// Reads a response body back: `(uid, allowed, the whole response object)`.
pub fn read_response(text: &str) -> Result<(String, bool, Json), String> {
    let v: Json = sonic_rs::from_str(text).map_err(|e| format!("response is not JSON: {e}"))?;
    let response = v.get("response").ok_or("no response")?.clone();
    let uid = response
        .get("uid")
        .and_then(|u| u.as_str())
        .unwrap_or_default()
        .to_string();
    let allowed = response
        .get("allowed")
        .and_then(|a| a.as_bool())
        .ok_or("no allowed")?;
    Ok((uid, allowed, response))
}

/// The 16 policies decide each agreement Pod as the hand-written checks do: one result per
/// policy, `pass` where the check holds and `fail` where it does not; the request allowed only
/// when all hold, denied with 403 (`reason: Forbidden`) naming the first failing policy
/// otherwise; the floor gives the same 16 results from the same bytes.
pub fn check_pod_security(set: &PolicySet, label: &str, pod: &[u8]) -> Result<(), String> {
    let body = review(pod);
    let pod_json: Json = sonic_rs::from_slice(pod).map_err(|e| e.to_string())?;
    let expected = check_all(&pod_json);
    if floor(&body)? != expected {
        return Err(format!(
            "{label}: the floor disagrees with the hand-written checks"
        ));
    }
    let (outcome, response) = admit_with_outcome(set, &body)?;
    let names = exprs::expressions();
    if outcome.results.len() != names.len() {
        return Err(format!(
            "{label}: {} results for {} policies",
            outcome.results.len(),
            names.len()
        ));
    }
    let mut problems = Vec::new();
    for ((check, _), want) in names.iter().zip(expected) {
        let policy = psa_policy_name(check);
        let got = outcome
            .results
            .iter()
            .find(|r| r.policy == policy)
            .map(|r| r.result);
        let want_kind = if want {
            ResultKind::Pass
        } else {
            ResultKind::Fail
        };
        if got != Some(want_kind) {
            problems.push(format!("{check}: engine {got:?}, hand-written {want}"));
        }
    }
    let all = expected.iter().all(|ok| *ok);
    let (uid, allowed, response) = read_response(&response)?;
    if uid != UID || allowed != all || outcome.allowed != all {
        problems.push(format!(
            "response uid {uid:?} allowed {allowed}, want {all}"
        ));
    }
    if !all {
        let first = names
            .iter()
            .zip(expected)
            .find(|(_, ok)| !ok)
            .map(|((check, _), _)| psa_policy_name(check))
            .unwrap_or_default();
        let status = response.get("status");
        let code = status.and_then(|s| s.get("code")).and_then(|c| c.as_u64());
        let message = status
            .and_then(|s| s.get("message"))
            .and_then(|m| m.as_str())
            .unwrap_or_default();
        if code != Some(403) || !message.contains(&format!("'{first}'")) {
            problems.push(format!(
                "denial: code {code:?}, message {message:?}, want 403 naming '{first}'"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{label}:\n  {}", problems.join("\n  ")))
    }
}

/// Every policy of an always-true set passes and the request is allowed; a set that cannot
/// match leaves no result at all.
pub fn check_allowed(set: &PolicySet, body: &[u8], results: usize) -> Result<(), String> {
    check_allowed_in(set, body, results, &NoLookup, &EvalOptions::default())
}

/// [`check_allowed`] with a lookup and options.
pub fn check_allowed_in(
    set: &PolicySet,
    body: &[u8],
    results: usize,
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> Result<(), String> {
    let (outcome, response) = admit_with_outcome_in(set, body, lookup, options)?;
    let (uid, allowed, _) = read_response(&response)?;
    let passes = outcome
        .results
        .iter()
        .filter(|r| r.result == ResultKind::Pass)
        .count();
    if !allowed || uid != UID || outcome.results.len() != results || passes != results {
        return Err(format!(
            "expected {results} passing results and an allowed response, got {} results \
             ({passes} pass), allowed {allowed}",
            outcome.results.len()
        ));
    }
    Ok(())
}

/// The response of the annotating set allows the Pod with a JSONPatch; applied to the Pod,
/// that patch adds exactly the `n` annotations, and leaves the rest of the Pod as it was.
pub fn check_annotated(set: &PolicySet, pod: &[u8], n: usize) -> Result<(), String> {
    let (outcome, response) = admit_with_outcome(set, &review(pod))?;
    let (uid, allowed, response) = read_response(&response)?;
    if !allowed || uid != UID {
        return Err(format!("not allowed: {:?}", outcome.status));
    }
    if response.get("patchType").and_then(|t| t.as_str()) != Some("JSONPatch") {
        return Err("no JSONPatch in the response".into());
    }
    let patch = response
        .get("patch")
        .and_then(|p| p.as_str())
        .ok_or("no patch")?;
    let (original, patched, _) = before_and_after(pod, patch)?;
    let annotations = |v: &Json| metadata_strings(v, "annotations");
    let mut want = annotations(&original);
    want.extend((0..n).map(annotation));
    let mut got = annotations(&patched);
    want.sort();
    got.sort();
    if got != want {
        return Err(format!(
            "patched annotations: {} (want {})",
            got.len(),
            want.len()
        ));
    }
    // Everything else is untouched: the same members, and the same metadata but annotations.
    if members_but(&patched, "annotations") != members_but(&original, "annotations") {
        return Err("the patch changes more than the annotations".into());
    }
    if outcome.results.len() != n || outcome.results.iter().any(|r| r.result != ResultKind::Pass) {
        return Err(format!("{} results, not {n} passes", outcome.results.len()));
    }
    Ok(())
}
