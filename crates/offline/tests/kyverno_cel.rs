//! Kyverno's CEL policy kinds (ValidatingPolicy, MutatingPolicy, PolicyException) against
//! the corpus: the kyverno-policies library's `*-vpol` and `*-mpol` suites and Kyverno's own
//! CLI suites for them. Every row is run; a failing row must be listed, with its reason, in
//! `kyverno_cel.known_failures`, and the passing count may not fall below
//! `kyverno_cel.ratchet`.

use celer_test_support::{KnownFailures, Ratchet, require};

mod kyverno_suites;

use kyverno_suites::{Format, family};

fn run_family(name: &str, relative: &str, suffix: &str) {
    run_family_as(name, relative, suffix, Format::KyvernoTest);
}

fn run_family_as(name: &str, relative: &str, suffix: &str, format: Format) {
    let Some(root) = require(relative) else {
        return;
    };
    let ratchet = Ratchet::load("kyverno_cel.ratchet", include_str!("kyverno_cel.ratchet"));
    let known = KnownFailures::load(
        "kyverno_cel.known_failures",
        include_str!("kyverno_cel.known_failures"),
        2,
    );
    let suites = family(&root, suffix, format.file_name());
    kyverno_suites::run(name, &root, &suites, format, &ratchet, &known);
}

#[test]
fn kyverno_policies_vpol() {
    run_family("kyverno-policies/*-vpol", "kyverno-policies", "-vpol");
}

#[test]
fn kyverno_policies_mpol() {
    run_family("kyverno-policies/*-mpol", "kyverno-policies", "-mpol");
}

#[test]
fn kyverno_cli_validating_policy() {
    run_family(
        "kyverno/test/cli/test-validating-policy",
        "kyverno/test/cli/test-validating-policy",
        "",
    );
}

#[test]
fn kyverno_cli_mutating_policy() {
    run_family(
        "kyverno/test/cli/test-mutating-policy",
        "kyverno/test/cli/test-mutating-policy",
        "",
    );
}

/// Kyverno's chainsaw conformance tests for ValidatingPolicy and NamespacedValidatingPolicy:
/// requests admitted or refused, with Kyverno's webhook message.
#[test]
fn kyverno_chainsaw_validating_policies() {
    run_family_as(
        "kyverno/test/conformance/chainsaw/validating-policies",
        "kyverno/test/conformance/chainsaw",
        "=validating-policies|namespaced-validating-policies",
        Format::Chainsaw,
    );
}

/// Kyverno's chainsaw conformance tests for MutatingPolicy and NamespacedMutatingPolicy:
/// requests admitted or refused, and the stored objects' asserted fields.
#[test]
fn kyverno_chainsaw_mutating_policies() {
    run_family_as(
        "kyverno/test/conformance/chainsaw/mutating-policies",
        "kyverno/test/conformance/chainsaw",
        "=mutating-policies|namespaced-mutating-policies",
        Format::Chainsaw,
    );
}

/// `celer test` on a Kyverno test file written here: ValidatingPolicy rows on Pods and on the
/// Deployments autogen covers, an exception, an UPDATE row, and a MutatingPolicy row with its
/// patched resource. Every row must hold, and a wrong expectation must fail.
#[test]
#[allow(clippy::unwrap_used, clippy::panic)]
fn celer_test_reads_kyverno_rows_for_the_cel_kinds() {
    let dir = std::env::temp_dir().join(format!("celer-kyverno-cel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write(
        "policy.yaml",
        "apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: no-latest}
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  matchConditions:
  - {name: not-system, expression: \"object.metadata.namespace != 'kube-system'\"}
  validations:
  - expression: \"object.spec.containers.all(c, !c.image.endsWith(':latest') || c.name in exceptions.allowedValues)\"
    messageExpression: \"'latest tag in ' + object.metadata.name\"
  - expression: \"request.operation != 'UPDATE' || has(object.metadata.labels)\"
    message: updates need labels
---
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata: {name: add-team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: \"[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'team': 'a'}}]\"
",
    );
    write(
        "exception.yaml",
        "apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: sidecars, namespace: default}
spec:
  policyRefs: [{name: no-latest, kind: ValidatingPolicy}]
  allowedValues: [sidecar]
---
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {name: legacy, namespace: default}
spec:
  policyRefs: [{name: no-latest, kind: ValidatingPolicy}]
  matchConditions:
  - {name: legacy, expression: \"object.metadata.name.startsWith('legacy')\"}
",
    );
    write(
        "resources.yaml",
        "apiVersion: v1
kind: Pod
metadata: {name: bad}
spec: {containers: [{name: app, image: 'nginx:latest'}]}
---
apiVersion: v1
kind: Pod
metadata: {name: good, labels: {a: b}}
spec: {containers: [{name: app, image: 'nginx:1.27'}, {name: sidecar, image: 'envoy:latest'}]}
---
apiVersion: v1
kind: Pod
metadata: {name: legacy-app}
spec: {containers: [{name: app, image: 'nginx:latest'}]}
---
apiVersion: v1
kind: Pod
metadata: {name: system, namespace: kube-system}
spec: {containers: [{name: app, image: 'nginx:latest'}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: app, image: 'nginx:latest'}]}
",
    );
    write(
        "patched.yaml",
        "apiVersion: v1
kind: Pod
metadata: {name: good, namespace: default, labels: {a: b}, annotations: {team: a}}
spec: {containers: [{name: app, image: 'nginx:1.27'}, {name: sidecar, image: 'envoy:latest'}]}
",
    );
    let rows = "- {isValidatingPolicy: true, policy: no-latest, kind: Pod, resources: [bad], result: fail}
- {isValidatingPolicy: true, policy: no-latest, kind: Pod, resources: [default/good], result: pass}
- {isValidatingPolicy: true, policy: no-latest, kind: Pod, resources: [legacy-app], result: skip}
- {isValidatingPolicy: true, policy: no-latest, kind: Pod, resources: [system], result: skip}
- {isValidatingPolicy: true, policy: no-latest, kind: Deployment, resources: [web], result: fail}
- {isValidatingPolicy: true, policy: no-latest, kind: Pod, resources: [good], result: pass, operation: UPDATE}
- {isMutatingPolicy: true, policy: add-team, kind: Pod, resources: [good], patchedResources: patched.yaml, result: pass}
";
    let test = format!(
        "apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {{name: t}}
policies: [policy.yaml]
resources: [resources.yaml]
exceptions: [exception.yaml]
results:
{rows}"
    );
    write("kyverno-test.yaml", &test);
    let found = celer_offline::suite::discover(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(found.len(), 1);
    let (path, format, doc) = &found[0];
    let outcome = celer_offline::suite::run(path, *format, doc);
    let failures: Vec<String> = outcome
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: expected {}, got {}", c.name, c.expected, c.actual))
        .chain(outcome.errors.iter().cloned())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(outcome.checks.len(), 7);
    // A wrong expectation fails.
    write(
        "kyverno-test.yaml",
        &test.replace(
            "resources: [bad], result: fail",
            "resources: [bad], result: pass",
        ),
    );
    let outcome = celer_offline::suite::run(path, *format, doc);
    let failed: Vec<&str> = outcome
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.actual.as_str())
        .collect();
    assert_eq!(failed, ["fail (latest tag in bad)"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kyverno_policies_cel_cluster_policies() {
    run_family("kyverno-policies/*-cel", "kyverno-policies", "-cel");
}

/// Kyverno's CLI suites for ClusterPolicies with `validate.cel` rules.
#[test]
fn kyverno_cli_cel_cluster_policies() {
    run_family(
        "kyverno/test/cli/test (validate.cel)",
        "kyverno/test/cli/test",
        "=cel-preconditions|cel-preconditions-deprecated|check-deployment-namespace-cel",
    );
}

/// Kyverno's CLI suites for ValidatingPolicy and MutatingPolicy context (ConfigMaps and API
/// calls the test supplies).
#[test]
fn kyverno_cli_context() {
    run_family(
        "kyverno/test/cli/test-context-*-{vpol,mpol}",
        "kyverno/test/cli",
        "=test-context-apicall-vpol|test-context-configmap-vpol|test-context-apicall-mpol|test-context-configmap-mpol",
    );
}

/// Kyverno's CLI suites for GeneratingPolicies: what a policy generates for a trigger.
#[test]
fn kyverno_cli_generating_policy() {
    run_family(
        "kyverno/test/cli/test-generating-policy",
        "kyverno/test/cli/test-generating-policy",
        "",
    );
}

/// Kyverno's CLI suites for GeneratingPolicy context and custom resources.
#[test]
fn kyverno_cli_context_generating() {
    run_family(
        "kyverno/test/cli/test-context-*-gpol, test-gpol-custom-crd",
        "kyverno/test/cli",
        "=test-context-apicall-gpol|test-context-configmap-gpol|test-gpol-custom-crd",
    );
}

/// Kyverno's CLI suites for DeletingPolicies: which resources a policy would delete.
#[test]
fn kyverno_cli_deleting_policy() {
    run_family(
        "kyverno/test/cli/test-deleting-policy",
        "kyverno/test/cli/test-deleting-policy",
        "",
    );
}

/// Kyverno's CLI suites for DeletingPolicy context (ConfigMaps and API calls the test
/// supplies).
#[test]
fn kyverno_cli_context_deleting() {
    run_family(
        "kyverno/test/cli/test-context-*-dpol",
        "kyverno/test/cli",
        "=test-context-apicall-dpol|test-context-configmap-dpol",
    );
}

/// Kyverno's chainsaw conformance tests for ClusterPolicy `validate.podSecurity` rules.
#[test]
fn kyverno_chainsaw_pod_security() {
    run_family_as(
        "kyverno/test/conformance/chainsaw/validate/clusterpolicy/standard/psa*",
        "kyverno/test/conformance/chainsaw/validate/clusterpolicy/standard",
        "=psa|psa-deprecated",
        Format::Chainsaw,
    );
}

/// Kyverno's chainsaw conformance tests for ClusterPolicy `validate.cel` rules.
#[test]
fn kyverno_chainsaw_cel_cluster_policies() {
    run_family_as(
        "kyverno/test/conformance/chainsaw/validate/clusterpolicy/standard/cel*",
        "kyverno/test/conformance/chainsaw/validate/clusterpolicy/standard",
        "=cel|cel-deprecated",
        Format::Chainsaw,
    );
}

/// Kyverno's chainsaw conformance tests for `kyverno.io/v2` PolicyExceptions, most of them
/// exempting podSecurity controls.
#[test]
fn kyverno_chainsaw_exceptions() {
    run_family_as(
        "kyverno/test/conformance/chainsaw/exceptions",
        "kyverno/test/conformance/chainsaw",
        "=exceptions",
        Format::Chainsaw,
    );
}

/// The podSecurity subrule policies of kyverno-policies, and Kyverno's CLI suites for
/// PolicyExceptions.
#[test]
fn kyverno_cli_pod_security_and_exceptions() {
    run_family(
        "kyverno-policies/pod-security/subrule",
        "kyverno-policies/pod-security",
        "=subrule",
    );
    run_family(
        "kyverno/test/cli/test-exceptions",
        "kyverno/test/cli/test-exceptions",
        "",
    );
}
