#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn policy(text: &str) -> Arc<GeneratingPolicy> {
    let mut manifests = Manifests::default();
    manifests.add_text("p.yaml", text);
    assert!(manifests.errors.is_empty(), "{:?}", manifests.errors);
    let mut loaded = generating::load(&manifests);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    Arc::new(loaded.policies.remove(0))
}

const POLICY: &str = r#"
apiVersion: policies.kyverno.io/v1
kind: NamespacedGeneratingPolicy
metadata: {name: copy, namespace: team-a}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  generate:
  - expression: >
      generator.Apply([{"apiVersion": dyn("v1"), "kind": dyn("Secret"), "metadata": dyn({"name": "s"})}])
"#;

#[test]
fn downstream_objects_carry_kyvernos_labels_and_nothing_the_server_owns() {
    let policy = policy(POLICY);
    let target = Target {
        group: String::new(),
        version: "v1".to_string(),
        resource: "configmaps".to_string(),
        kind: "ConfigMap".to_string(),
        namespaced: true,
    };
    let trigger: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"team-a","uid":"t-1"}}"#,
    )
    .unwrap();
    let generated = Generated {
        namespace: "team-a".to_string(),
        object: sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"source","uid":"src-1","resourceVersion":"7","labels":{"own":"x"},"ownerReferences":[{"uid":"o"}]},"status":{"x":1}}"#,
        )
        .unwrap(),
    };
    let object = downstream(&policy, &target, &trigger, &generated);
    let labels = &object["metadata"]["labels"];
    for (k, v) in [
        (MANAGED_BY, "kyverno"),
        (POLICY_LABEL, "copy"),
        (POLICY_NAMESPACE_LABEL, "team-a"),
        (TRIGGER_NAME, "cm"),
        (TRIGGER_NAMESPACE, "team-a"),
        (TRIGGER_UID, "t-1"),
        (TRIGGER_KIND, "ConfigMap"),
        (TRIGGER_VERSION, "v1"),
        (SOURCE_UID, "src-1"),
        ("own", "x"),
    ] {
        assert_eq!(labels[k].as_str(), Some(v), "{k}");
    }
    let meta = &object["metadata"];
    assert_eq!(meta["namespace"].as_str(), Some("team-a"));
    for gone in ["uid", "resourceVersion", "ownerReferences"] {
        assert!(meta.get(gone).is_none(), "{gone}");
    }
    assert!(object.get("status").is_none());
}

#[test]
fn an_equal_object_is_not_written_again() {
    let existing: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "resourceVersion": "9", "labels": {"a": "1", "extra": "kept"}},
        "data": {"k": "v"}
    }))
    .unwrap();
    let desired: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"a": "1"}},
        "data": {"k": "v"}
    }))
    .unwrap();
    assert!(same(&existing, &desired));
    let changed: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"a": "1"}},
        "data": {"k": "other"}
    }))
    .unwrap();
    assert!(!same(&existing, &changed));
}

#[test]
fn a_trigger_always_lands_in_the_same_queue() {
    let (tx, _rx) = mpsc::channel::<Work>(1);
    let queues = vec![tx; WORKERS];
    let a = queue_of(&queues, "uid-a");
    assert_eq!(a, queue_of(&queues, "uid-a"));
    assert!(a < WORKERS);
}

#[test]
fn generated_objects_are_recognised_as_such() {
    let policy = policy(POLICY);
    let target = Target {
        group: String::new(),
        version: "v1".to_string(),
        resource: "configmaps".to_string(),
        kind: "ConfigMap".to_string(),
        namespaced: true,
    };
    let trigger: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"team-a","uid":"t-1"}}"#,
    )
    .unwrap();
    assert!(!is_downstream(&trigger));
    let generated = Generated {
        namespace: "team-a".to_string(),
        object: sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"copy"}}"#,
        )
        .unwrap(),
    };
    assert!(is_downstream(&downstream(
        &policy, &target, &trigger, &generated
    )));
}
