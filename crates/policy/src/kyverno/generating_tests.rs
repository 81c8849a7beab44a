#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::lookup::NoLookup;

fn load_text(text: &str) -> Loaded {
    let mut manifests = Manifests::default();
    manifests.add_text("test.yaml", text);
    assert!(manifests.errors.is_empty(), "{:?}", manifests.errors);
    load(&manifests)
}

fn one(text: &str) -> GeneratingPolicy {
    let mut loaded = load_text(text);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.policies.len(), 1);
    loaded.policies.remove(0)
}

fn object(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

const NETPOL: &str = r#"
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: default-deny}
spec:
  evaluation:
    generateExisting: {enabled: true}
    synchronize: {enabled: true}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [namespaces]
  matchConditions:
  - name: not-system
    expression: "!object.metadata.name.startsWith('kube-')"
  variables:
  - name: ns
    expression: object.metadata.name
  generate:
  - expression: >
      generator.Apply(variables.ns, [{
        "apiVersion": dyn("networking.k8s.io/v1"),
        "kind": dyn("NetworkPolicy"),
        "metadata": dyn({"name": "default-deny"}),
        "spec": dyn({"podSelector": dyn({}), "policyTypes": dyn(["Ingress"])})
      }])
  - expression: >
      generator.Apply(variables.ns, [{
        "apiVersion": dyn("v1"),
        "kind": dyn("ResourceQuota"),
        "metadata": dyn({"name": "quota"}),
        "spec": dyn({"hard": dyn({"pods": "10"})})
      }])
"#;

#[test]
fn a_selected_trigger_generates_every_object_in_order() {
    let policy = one(NETPOL);
    assert!(policy.evaluation.generate_existing && policy.evaluation.synchronize);
    assert!(policy.evaluation.admission && policy.evaluation.skip_background_requests);
    let ns = object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}"#);
    let Generation::Generated(objects, _) =
        policy.generate_for_object(&ns, None, &NoLookup, &EvalOptions::default())
    else {
        panic!("nothing generated");
    };
    assert_eq!(objects.len(), 2);
    assert!(objects.iter().all(|g| g.namespace == "team-a"));
    let kinds: Vec<&str> = (objects.iter())
        .map(|g| g.object["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["NetworkPolicy", "ResourceQuota"]);
}

#[test]
fn a_false_match_condition_skips_and_other_kinds_are_not_selected() {
    let policy = one(NETPOL);
    let options = EvalOptions::default();
    let system =
        object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-public"}}"#);
    assert_eq!(
        policy.generate_for_object(&system, None, &NoLookup, &options),
        Generation::Skipped
    );
    let cm =
        object(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"x"}}"#);
    assert_eq!(
        policy.generate_for_object(&cm, None, &NoLookup, &options),
        Generation::NotSelected
    );
}

#[test]
fn a_failing_expression_is_an_error_and_drops_what_was_generated() {
    let policy = one(r#"
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: needs-uid}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  generate:
  - expression: >
      generator.Apply('x', [{"apiVersion": dyn("v1"), "kind": dyn("Secret"), "metadata": dyn({"name": "s"})}])
  - expression: >
      generator.Apply('x', [{"apiVersion": dyn("v1"), "kind": dyn("Secret"), "metadata": dyn({"name": object.metadata.uid})}])
"#);
    let cm =
        object(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"x"}}"#);
    match policy.generate_for_object(&cm, None, &NoLookup, &EvalOptions::default()) {
        Generation::Error(e) => {
            assert!(e.contains("uid"), "{e}");
            assert!(
                !e.contains("].size() == 1"),
                "the expression as written: {e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_templates_and_specs_are_refused_with_their_paths() {
    let loaded = load_text(
        r#"
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: templated}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]
  generate:
  - template: {value: "- a list, not a resource"}
---
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: bad-cel}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]
  generate:
  - expression: "generator.Apply("
---
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: nothing}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]
"#,
    );
    assert!(loaded.policies.is_empty());
    let errors: Vec<String> = (loaded.errors.iter())
        .map(|e| format!("{}: {}", e.what, e.message))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].contains(
            "spec.generate[0].template.value: Invalid value: document 1: must be a mapping"
        ),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("spec.generate[0].expression"),
        "{errors:?}"
    );
    assert!(
        errors[2].contains("spec.generate: Required value"),
        "{errors:?}"
    );
}

#[test]
fn a_list_stands_for_its_items() {
    let collecting = Collecting::new(None);
    let list = object(r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"A"},{"kind":"B"}]}"#);
    collecting.generate("ns", vec![list]).unwrap();
    assert_eq!(collecting.take().len(), 2);
    assert!(collecting.take().is_empty(), "taken once");
}

#[test]
fn a_template_generates_like_the_expression_it_stands_for() {
    let policy = one(r#"
apiVersion: policies.kyverno.io/v1
kind: NamespacedGeneratingPolicy
metadata: {name: templated, namespace: team-a}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  variables:
  - {name: labels, expression: "{'team': 'a'}"}
  generate:
  - template:
      interpolate: cel
      value: |
        apiVersion: v1
        kind: Secret
        metadata:
          name: (( object.metadata.name ))-copy
          labels: (( variables.labels ))
        data: {size: (( size(object.data) ))}
"#);
    let cm = object(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"team-a"},"data":{"a":"1","b":"2"}}"#,
    );
    let Generation::Generated(objects, _) =
        policy.generate_for_object(&cm, None, &NoLookup, &EvalOptions::default())
    else {
        panic!("nothing generated");
    };
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].namespace, "team-a", "the policy's namespace");
    let secret = &objects[0].object;
    assert_eq!(secret["metadata"]["name"].as_str(), Some("c-copy"));
    assert_eq!(secret["metadata"]["labels"]["team"].as_str(), Some("a"));
    assert_eq!(
        secret["data"]["size"].as_i64(),
        Some(2),
        "a whole-value placeholder keeps its type"
    );
}

#[test]
fn a_report_result_names_what_was_generated_and_the_audit_annotations() {
    let text = NETPOL.replace(
        "  generate:\n",
        "  auditAnnotations:\n  - key: team\n    valueExpression: object.metadata.name\n  - key: empty\n    valueExpression: \"''\"\n  generate:\n",
    );
    let policy = one(&text);
    let ns = object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}"#);
    let generation = policy.generate_for_object(&ns, None, &NoLookup, &EvalOptions::default());
    let result = policy.report_result(&generation, None).unwrap();
    assert!(
        matches!(generation, Generation::Generated(..)),
        "{generation:?}"
    );
    assert_eq!(result.source, "KyvernoGeneratingPolicy");
    assert_eq!(
        (result.policy.as_str(), result.rule.as_str()),
        ("default-deny", "default-deny")
    );
    assert_eq!(result.result, Status::Pass);
    assert_eq!(result.message, "policy evaluated successfully");
    let properties: Vec<(&str, &str)> = (result.properties.iter())
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        properties,
        [
            (
                "generated-resources",
                "networking.k8s.io/v1, Kind=NetworkPolicy Name=default-deny Namespace=team-a; /v1, Kind=ResourceQuota Name=quota Namespace=team-a"
            ),
            ("process", "admission review"),
            ("team", "team-a"),
        ]
    );
    // A write that failed turns the result into an error; not selected, no result.
    let failed = policy
        .report_result(&generation, Some("forbidden"))
        .unwrap();
    assert_eq!(failed.result, Status::Error);
    assert_eq!(failed.message, "failed to evaluate policy: forbidden");
    assert_eq!(policy.report_result(&Generation::NotSelected, None), None);
    assert_eq!(policy.report_result(&Generation::Skipped, None), None);
}

#[test]
fn an_exception_is_reported_as_skip_or_pass_and_generates_nothing() {
    for (report, status) in [("", Status::Skip), ("  reportResult: pass\n", Status::Pass)] {
        let text = format!(
            "{NETPOL}---\napiVersion: policies.kyverno.io/v1\nkind: PolicyException\nmetadata: {{name: team-b-out, namespace: kyverno}}\nspec:\n  policyRefs:\n  - {{name: default-deny, kind: GeneratingPolicy}}\n  matchConditions:\n  - {{name: b, expression: \"object.metadata.name == 'team-b'\"}}\n{report}"
        );
        let policy = one(&text);
        let options = EvalOptions::default();
        let b = object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"}}"#);
        let generation = policy.generate_for_object(&b, None, &NoLookup, &options);
        assert_eq!(
            generation,
            Generation::Excepted {
                exceptions: vec!["team-b-out".to_string()],
                pass: status == Status::Pass
            }
        );
        let result = policy.report_result(&generation, None).unwrap();
        assert_eq!((result.rule.as_str(), result.result), ("exception", status));
        assert_eq!(result.properties["exceptions"], "team-b-out");
        // Others still generate.
        let a = object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}"#);
        assert!(matches!(
            policy.generate_for_object(&a, None, &NoLookup, &options),
            Generation::Generated(objects, _) if objects.len() == 2
        ));
    }
}
