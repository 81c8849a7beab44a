//! Kyverno's semantics end to end: manifests to outcome.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use crate::attributes::Operation;
use crate::engine::{EvalOptions, evaluate};
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, review_for};
use crate::response::{Outcome, PolicyKind, ResultKind};

use crate::family::Mode;

fn set(yaml: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("test.yaml", yaml);
    let set = PolicySet::build(&m);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set
}

fn json(text: &str) -> Json {
    crate::document::parse_document(text, crate::document::Syntax::Yaml).unwrap()
}

fn run(set: &PolicySet, object: &str, operation: Operation, offline: bool) -> Outcome {
    let object = json(object);
    let (new, old) = match operation {
        Operation::Delete => (None, Some(&object)),
        Operation::Update => (Some(&object), Some(&object)),
        _ => (Some(&object), None),
    };
    let body = review_for(new, old, operation, &RequestUser::default(), "uid").unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    let lookup = ObjectLookup::new(Vec::new());
    let options = EvalOptions {
        kyverno: Mode {
            offline,
            ..Mode::default()
        },
        ..EvalOptions::default()
    };
    evaluate(set, &request, &lookup, &options)
}

fn result(o: &Outcome, policy: &str) -> Option<(ResultKind, String)> {
    o.results
        .iter()
        .find(|r| {
            r.policy == policy
                && matches!(
                    r.kind,
                    PolicyKind::KyvernoValidating | PolicyKind::KyvernoMutating
                )
        })
        .map(|r| {
            (
                r.result,
                r.message.as_deref().unwrap_or_default().to_string(),
            )
        })
}

const POD_POLICY: &str = "apiVersion: policies.kyverno.io/v1beta1
kind: ValidatingPolicy
metadata: {name: no-host-path}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  variables:
  - {name: volumes, expression: 'object.spec.?volumes.orValue([])'}
  validations:
  - expression: 'variables.volumes.all(v, !has(v.hostPath))'
    message: hostPath is forbidden
  - expression: \"object.metadata.?labels[?'app'].orValue('') != ''\"
    messageExpression: \"'pod ' + object.metadata.name + ' needs an app label'\"
  - expression: 'object.spec.containers.all(c, c.name != \"forbidden\")'
";

const BAD_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: team}
spec:
  volumes: [{name: h, hostPath: {path: /}}]
  containers: [{name: c, image: nginx}]
";

const UNLABELLED_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: team}
spec:
  containers: [{name: forbidden, image: nginx}]
";

#[test]
fn validations_stop_at_the_first_failure_and_deny_with_kyvernos_text() {
    let set = set(POD_POLICY);
    let o = run(&set, BAD_POD, Operation::Create, false);
    assert_eq!(
        result(&o, "no-host-path"),
        Some((ResultKind::Fail, "hostPath is forbidden".to_string()))
    );
    assert!(!o.allowed);
    let status = o.status.as_ref().unwrap();
    assert_eq!(
        status.message,
        "Policy no-host-path failed: hostPath is forbidden"
    );
    assert_eq!(status.code, 0);
    // messageExpression gives the message of the second validation.
    let o = run(&set, UNLABELLED_POD, Operation::Create, false);
    assert_eq!(
        result(&o, "no-host-path").unwrap().1,
        "pod plain needs an app label"
    );
}

#[test]
fn an_empty_message_is_kyvernos_default() {
    let set = set(POD_POLICY);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team, labels: {app: a}}\nspec:\n  containers: [{name: forbidden, image: nginx}]\n";
    let o = run(&set, pod, Operation::Create, false);
    assert_eq!(
        result(&o, "no-host-path"),
        Some((
            ResultKind::Fail,
            "CEL expression validation failed at index 2".to_string()
        ))
    );
}

#[test]
fn warn_and_audit_actions_admit() {
    let warn = POD_POLICY.replace(
        "spec:\n  matchConstraints",
        "spec:\n  validationActions: [Warn]\n  matchConstraints",
    );
    let o = run(&set(&warn), BAD_POD, Operation::Create, false);
    assert!(o.allowed);
    assert_eq!(
        o.warnings,
        ["Policy no-host-path failed: hostPath is forbidden"]
    );
    let audit = POD_POLICY.replace(
        "spec:\n  matchConstraints",
        "spec:\n  validationActions: [Audit]\n  matchConstraints",
    );
    let o = run(&set(&audit), BAD_POD, Operation::Create, false);
    assert!(o.allowed && o.warnings.is_empty());
    assert_eq!(result(&o, "no-host-path").unwrap().0, ResultKind::Fail);
}

#[test]
fn autogen_runs_pod_policies_on_controllers_with_rewritten_paths() {
    let set = set(POD_POLICY);
    let deployment = "apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: team}
spec:
  template:
    metadata: {labels: {app: a}}
    spec:
      volumes: [{name: h, hostPath: {path: /}}]
      containers: [{name: c, image: nginx}]
";
    let o = run(&set, deployment, Operation::Create, false);
    assert_eq!(
        result(&o, "no-host-path"),
        Some((ResultKind::Fail, "hostPath is forbidden".to_string()))
    );
    let cronjob = "apiVersion: batch/v1
kind: CronJob
metadata: {name: c, namespace: team}
spec:
  schedule: '* * * * *'
  jobTemplate:
    spec:
      template:
        metadata: {labels: {app: a}}
        spec:
          containers: [{name: c, image: nginx}]
";
    let o = run(&set, cronjob, Operation::Create, false);
    assert_eq!(result(&o, "no-host-path").unwrap().0, ResultKind::Pass);
    // An empty controller list turns autogen off.
    let off = POD_POLICY.replace(
        "spec:\n  matchConstraints",
        "spec:\n  autogen: {podControllers: {controllers: []}}\n  matchConstraints",
    );
    let o = run(&self::set(&off), deployment, Operation::Create, false);
    assert_eq!(result(&o, "no-host-path"), None);
}

const EXCEPTIONS: &str = "
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: partial, namespace: team}
spec:
  policyRefs: [{name: images, kind: ValidatingPolicy}]
  images: ['nginx:*']
  allowedValues: [special]
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: full, namespace: team}
spec:
  policyRefs: [{name: images, kind: ValidatingPolicy}]
  matchConditions:
  - {name: exempt, expression: \"object.metadata.name == 'exempt'\"}
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: pass, namespace: team, labels: {polex.kyverno.io/priority: '5'}}
spec:
  policyRefs: [{name: images, kind: ValidatingPolicy}]
  reportResult: pass
  matchConditions:
  - {name: exempt, expression: \"object.metadata.name == 'passed'\"}
";

const IMAGES_POLICY: &str = "apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: images}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: \"object.spec.containers.all(c, c.image in exceptions.allowedImages || c.name in exceptions.allowedValues)\"
    message: not allowed
";

fn pod(name: &str, container: &str, image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: team}}\nspec:\n  containers: [{{name: {container}, image: '{image}'}}]\n"
    )
}

#[test]
fn exceptions_exempt_or_lend_their_images_and_values() {
    let set = set(&format!("{IMAGES_POLICY}{EXCEPTIONS}"));
    // The partial exception lends its values to the expressions.
    let o = run(
        &set,
        &pod("p", "special", "busybox"),
        Operation::Create,
        false,
    );
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Pass);
    let o = run(&set, &pod("p", "c", "nginx:*"), Operation::Create, false);
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Pass);
    let o = run(&set, &pod("p", "c", "busybox"), Operation::Create, false);
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Fail);
    // A full exception skips, naming every exception that matched.
    let o = run(
        &set,
        &pod("exempt", "c", "busybox"),
        Operation::Create,
        false,
    );
    assert_eq!(
        result(&o, "images"),
        Some((
            ResultKind::Skip,
            "rule is skipped due to policy exception: team/partial, team/full".to_string()
        ))
    );
    assert!(o.allowed);
    // reportResult: pass.
    let o = run(
        &set,
        &pod("passed", "c", "busybox"),
        Operation::Create,
        false,
    );
    assert_eq!(
        result(&o, "images"),
        Some((
            ResultKind::Pass,
            "rule is passed due to policy exception: team/partial, team/pass".to_string()
        ))
    );
}

#[test]
fn match_conditions_skip_and_their_errors_fail_or_skip_by_failure_policy() {
    let with = |extra: &str| {
        set(&IMAGES_POLICY.replace(
            "  validations:",
            &format!(
                "  matchConditions:\n  - {{name: c, expression: \"{extra}\"}}\n  validations:"
            ),
        ))
    };
    let o = run(
        &with("object.metadata.name == 'other'"),
        &pod("p", "c", "x"),
        Operation::Create,
        false,
    );
    // Kyverno says `skip`; fixed texts are not carried.
    assert_eq!(
        result(&o, "images"),
        Some((ResultKind::Skip, String::new()))
    );
    let o = run(
        &with("object.metadata.missing == 'x'"),
        &pod("p", "c", "x"),
        Operation::Create,
        false,
    );
    let (kind, message) = result(&o, "images").unwrap();
    assert_eq!(kind, ResultKind::Error);
    assert!(message.starts_with("failed to load context: "), "{message}");
    // In admission the API server evaluates the conditions Kyverno puts in its webhook
    // configuration, and refuses the request itself.
    let status = o.status.unwrap();
    assert!(
        status.message.starts_with(
            "pods \"p\" is forbidden: expression 'object.metadata.missing == 'x'' resulted in error"
        ),
        "{}",
        status.message
    );
    assert_eq!(status.code, 403);
    // Offline, as Kyverno's CLI, the policy's result is the error.
    let o = run(
        &with("object.metadata.missing == 'x'"),
        &pod("p", "c", "x"),
        Operation::Create,
        true,
    );
    assert!(
        o.status
            .unwrap()
            .message
            .starts_with("Policy images error: failed to load context")
    );
    // Under failurePolicy Ignore the error skips.
    let policy = IMAGES_POLICY.replace(
        "  validations:",
        "  failurePolicy: Ignore\n  matchConditions:\n  - {name: c, expression: \"object.metadata.missing == 'x'\"}\n  validations:",
    );
    let o = run(&set(&policy), &pod("p", "c", "x"), Operation::Create, false);
    assert!(o.allowed);
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Skip);
}

#[test]
fn kyvernos_request_carries_the_objects() {
    assert!(super::reads_request_object(
        "request.object.metadata.name == 'x'"
    ));
    assert!(super::reads_request_object("has(request.?oldObject.spec)"));
    assert!(super::reads_request_object("variables.r == request"));
    assert!(!super::reads_request_object(
        "request.operation == 'CREATE' && c.resources.requests.cpu != ''"
    ));
    assert!(!super::reads_request_object("object.spec.requests"));
    let policy = IMAGES_POLICY.replace(
        "object.spec.containers.all(c, c.image in exceptions.allowedImages || c.name in exceptions.allowedValues)",
        "request.object.metadata.name == object.metadata.name && request.oldObject == null",
    );
    let o = run(&set(&policy), &pod("p", "c", "x"), Operation::Create, false);
    assert_eq!(
        result(&o, "images").unwrap().0,
        ResultKind::Pass,
        "{:?}",
        o.results
    );
}

#[test]
fn namespaced_policies_apply_in_their_namespace_only() {
    let policy = IMAGES_POLICY
        .replace("kind: ValidatingPolicy", "kind: NamespacedValidatingPolicy")
        .replace(
            "metadata: {name: images}",
            "metadata: {name: images, namespace: other}",
        );
    let set = set(&policy);
    let o = run(&set, &pod("p", "c", "x"), Operation::Create, false);
    assert_eq!(result(&o, "images"), None);
    let o = run(
        &set,
        &pod("p", "c", "x").replace("namespace: team", "namespace: other"),
        Operation::Create,
        false,
    );
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Fail);
}

#[test]
fn admission_switched_off_runs_only_offline() {
    let policy = IMAGES_POLICY.replace(
        "spec:\n  matchConstraints",
        "spec:\n  evaluation: {admission: {enabled: false}}\n  matchConstraints",
    );
    let set = set(&policy);
    let o = run(&set, &pod("p", "c", "x"), Operation::Create, false);
    assert!(o.allowed);
    assert_eq!(result(&o, "images"), None);
    let o = run(&set, &pod("p", "c", "x"), Operation::Create, true);
    assert_eq!(result(&o, "images").unwrap().0, ResultKind::Fail);
}

#[test]
fn mutating_policies_patch_pods_and_their_controllers() {
    let policy = |expression: &str| {
        set(&format!(
            "apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {{name: m}}
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: \"{expression}\"
"
        ))
    };
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: x}]\n";
    let spec = policy("Object{spec: Object.spec{priorityClassName: 'high'}}");
    let o = run(&spec, &pod("p", "c", "x"), Operation::Create, false);
    assert_eq!(result(&o, "m").unwrap().0, ResultKind::Pass);
    assert_eq!(
        o.patched.unwrap()["spec"]["priorityClassName"].as_str(),
        Some("high")
    );
    let o = run(&spec, deployment, Operation::Create, false);
    assert_eq!(
        result(&o, "m").map(|r| r.0),
        Some(ResultKind::Pass),
        "{:?}",
        o.results
    );
    let patched = o.patched.unwrap();
    assert_eq!(
        patched["spec"]["template"]["spec"]["priorityClassName"].as_str(),
        Some("high")
    );
    // As upstream, autogen wraps the root but leaves `Object.metadata{...}` as written, which
    // the ApplyConfiguration type-name check then refuses under the template.
    let metadata = policy("Object{metadata: Object.metadata{labels: {'managed': 'yes'}}}");
    let o = run(&metadata, &pod("p", "c", "x"), Operation::Create, false);
    assert_eq!(
        sonic_rs::to_string(&o.patched.unwrap()["metadata"]["labels"]).unwrap(),
        r#"{"managed":"yes"}"#
    );
    let o = run(&metadata, deployment, Operation::Create, false);
    let (kind, message) = result(&o, "m").unwrap();
    assert_eq!(kind, ResultKind::Error);
    assert!(message.contains("unexpected type name"), "{message}");
    // Under failurePolicy Fail (the default) the error refuses the request.
    let refusal = o.status.unwrap().message;
    assert!(
        refusal.starts_with("Resource: team/d, Kind: Deployment, Errors: [Policy m: "),
        "{refusal}"
    );
}

#[test]
fn unsupported_modes_and_invalid_policies_are_reported() {
    let mut m = Manifests::default();
    m.add_text(
        "p.yaml",
        "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: j}\nspec:\n  evaluation: {mode: JSON}\n  validations: [{expression: 'true'}]\n---\napiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: nothing}\nspec: {}\n---\napiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {name: e}\nspec: {}\n",
    );
    let set = PolicySet::build(&m);
    let text: Vec<String> = set.errors.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(text[0].contains("spec.policyRefs"), "{text:?}");
    assert!(
        text[1].contains("spec.evaluation.mode: Unsupported value: \"JSON\""),
        "{text:?}"
    );
    assert!(
        text[2].contains("spec.matchConstraints: Required value"),
        "{text:?}"
    );
    assert!(set.kyverno().is_empty());
}

fn run_with_context(
    set: &PolicySet,
    object: &str,
    context: Option<std::sync::Arc<dyn celer_cel_kyverno::KyvernoContext>>,
) -> Outcome {
    let object = json(object);
    let body = review_for(
        Some(&object),
        None,
        Operation::Create,
        &RequestUser::default(),
        "uid",
    )
    .unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    let lookup = ObjectLookup::new(Vec::new());
    let options = EvalOptions {
        kyverno: Mode {
            offline: true,
            ..Mode::default()
        },
        kyverno_context: context,
        ..EvalOptions::default()
    };
    evaluate(set, &request, &lookup, &options)
}

const CONFIGMAP_LOOKUPS: &str = "apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: cluster-lookup}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  variables:
  - {name: cm, expression: \"resource.Get('v1', 'configmaps', 'team', 'settings')\"}
  validations:
  - expression: \"variables.cm.data.mode == 'strict'\"
    message: not strict
---
apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata: {name: namespaced-lookup, namespace: team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: \"resource.List('v1', 'configmaps').items.size() == 1\"
    message: one configmap expected in the policy's namespace
---
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: label-from-lookup}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {'mode':
        resource.Get('v1', 'configmaps', 'team', 'settings').data.mode}}}
";

const TEAM_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec:
  containers: [{name: c, image: nginx}]
";

#[test]
fn context_backed_functions_read_the_options_context() {
    use celer_cel_kyverno::MemoryContext;
    let set = set(CONFIGMAP_LOOKUPS);
    let mut ctx = MemoryContext::new();
    for (ns, mode) in [("team", "strict"), ("other", "loose")] {
        ctx.add_object(json(&format!(
            "{{apiVersion: v1, kind: ConfigMap, metadata: {{name: settings, namespace: {ns}}}, data: {{mode: {mode}}}}}"
        )))
        .unwrap();
    }
    let o = run_with_context(&set, TEAM_POD, Some(ctx.into_shared()));
    assert_eq!(result(&o, "cluster-lookup").unwrap().0, ResultKind::Pass);
    // A namespaced policy's resource.List without a namespace lists in its own.
    assert_eq!(result(&o, "namespaced-lookup").unwrap().0, ResultKind::Pass);
    assert_eq!(result(&o, "label-from-lookup").unwrap().0, ResultKind::Pass);
    let patched = o.patched.as_ref().expect("the mutation applies");
    assert_eq!(
        patched
            .pointer(["metadata", "labels", "mode"])
            .and_then(|v| v.as_str()),
        Some("strict")
    );
    assert!(o.allowed);

    // Without a context the calls fail with the library's error, through failurePolicy: the
    // mutation's error refuses the request (failurePolicy Fail) before validation...
    let o = run_with_context(&set, TEAM_POD, None);
    let (kind, message) = result(&o, "label-from-lookup").unwrap();
    assert_eq!(kind, ResultKind::Error);
    assert!(message.contains("no context was supplied"), "{message}");
    assert!(!o.allowed);
    // ...and a validation's error is the policy's result.
    let validating = CONFIGMAP_LOOKUPS.split("---\n").next().unwrap();
    let o = run_with_context(&self::set(validating), TEAM_POD, None);
    let (kind, message) = result(&o, "cluster-lookup").unwrap();
    assert_eq!(kind, ResultKind::Error);
    assert!(message.contains("no context was supplied"), "{message}");
    assert!(!o.allowed);
}

/// A ClusterPolicy reading an image's data with an `imageRegistry` context entry, in the
/// classic engine's shape (`configData`, `manifestList`) and through its `jmesPath`.
const IMAGE_REGISTRY: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-root-images}
spec:
  validationFailureAction: Enforce
  rules:
  - name: user
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: imageData
      imageRegistry: {reference: '{{ request.object.spec.containers[0].image }}'}
    - name: user
      imageRegistry:
        reference: '{{ request.object.spec.containers[0].image }}'
        jmesPath: configData.config.User
    validate:
      message: 'image {{ imageData.resolvedImage }} runs as {{ user }}'
      deny:
        conditions:
          any:
          - {key: '{{ user }}', operator: Equals, value: '0'}
          - {key: '{{ imageData.manifestList.mediaType }}', operator: Equals, value: forbidden}
";

#[test]
fn image_registry_context_entries_read_the_image_in_the_classic_shape() {
    use celer_cel_kyverno::MemoryContext;
    let set = set(IMAGE_REGISTRY);
    let mut ctx = MemoryContext::new();
    for (image, user) in [
        ("registry.local/root:1", "0"),
        ("registry.local/app:1", "1000"),
    ] {
        ctx.add_image(
            image,
            json(&format!(
                "{{image: '{image}', resolvedImage: '{image}@sha256:abc', registry: registry.local, config: {{config: {{User: '{user}'}}}}, imageIndex: {{mediaType: index}}}}"
            )),
        );
    }
    let ctx = ctx.into_shared();
    let pod = |image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: team}}\nspec: {{containers: [{{name: c, image: '{image}'}}]}}\n"
        )
    };
    let denied = run_with_context(&set, &pod("registry.local/root:1"), Some(ctx.clone()));
    assert!(!denied.allowed);
    let message = denied.status.map(|s| s.message).unwrap_or_default();
    assert!(
        message.contains("image registry.local/root:1@sha256:abc runs as 0"),
        "{message}"
    );
    let admitted = run_with_context(&set, &pod("registry.local/app:1"), Some(ctx.clone()));
    assert!(admitted.allowed, "{:?}", admitted.status);
    // An image the registry does not have fails the rule, naming it as Kyverno does.
    let missing = run_with_context(&set, &pod("registry.local/none:1"), Some(ctx));
    assert!(!missing.allowed);
    let message = missing.status.map(|s| s.message).unwrap_or_default();
    assert!(
        message.contains("failed to fetch image descriptor: registry.local/none:1"),
        "{message}"
    );
}
