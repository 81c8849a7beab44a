use super::*;

/// The CRD of `kind`, or of `group/Kind` where two groups have a kind of that name.
fn find(kind: &str) -> CustomResourceDefinition {
    let (group, kind) = kind.rsplit_once('/').unwrap_or(("", kind));
    let crds = all();
    let found = crds
        .into_iter()
        .find(|crd| crd.spec.names.kind == kind && (group.is_empty() || crd.spec.group == group));
    assert!(found.is_some(), "no CRD for {group}/{kind}");
    found.unwrap_or_else(|| unreachable!())
}

fn versions(crd: &CustomResourceDefinition) -> Vec<(&str, bool)> {
    crd.spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage))
        .collect()
}

/// (kind, group, plural, scope, short names, versions with the stored one marked)
type Expected = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, bool)],
);

#[test]
fn each_kind_has_its_group_names_scope_and_versions() {
    let expected: [Expected; 18] = [
        (
            "ValidatingPolicy",
            "policies.kyverno.io",
            "validatingpolicies",
            "Cluster",
            &["vpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedValidatingPolicy",
            "policies.kyverno.io",
            "namespacedvalidatingpolicies",
            "Namespaced",
            &["nvpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "MutatingPolicy",
            "policies.kyverno.io",
            "mutatingpolicies",
            "Cluster",
            &["mpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedMutatingPolicy",
            "policies.kyverno.io",
            "namespacedmutatingpolicies",
            "Namespaced",
            &["nmpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "policies.kyverno.io/PolicyException",
            "policies.kyverno.io",
            "policyexceptions",
            "Namespaced",
            &[],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "ClusterPolicy",
            "kyverno.io",
            "clusterpolicies",
            "Cluster",
            &["cpol"],
            &[("v1", true), ("v2beta1", false)],
        ),
        (
            "Policy",
            "kyverno.io",
            "policies",
            "Namespaced",
            &["pol"],
            &[("v1", true), ("v2beta1", false)],
        ),
        (
            "kyverno.io/PolicyException",
            "kyverno.io",
            "policyexceptions",
            "Namespaced",
            &["polex"],
            &[("v2", true), ("v2beta1", false)],
        ),
        (
            "GlobalContextEntry",
            "kyverno.io",
            "globalcontextentries",
            "Cluster",
            &["gctxentry"],
            &[("v2beta1", true), ("v2alpha1", false), ("v2", false)],
        ),
        (
            "ConstraintTemplate",
            "templates.gatekeeper.sh",
            "constrainttemplates",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "Config",
            "config.gatekeeper.sh",
            "configs",
            "Namespaced",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "SyncSet",
            "syncset.gatekeeper.sh",
            "syncsets",
            "Cluster",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "Provider",
            "externaldata.gatekeeper.sh",
            "providers",
            "Cluster",
            &[],
            &[("v1beta1", true), ("v1alpha1", false)],
        ),
        (
            "Assign",
            "mutations.gatekeeper.sh",
            "assign",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "AssignMetadata",
            "mutations.gatekeeper.sh",
            "assignmetadata",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "ModifySet",
            "mutations.gatekeeper.sh",
            "modifyset",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "AssignImage",
            "mutations.gatekeeper.sh",
            "assignimage",
            "Cluster",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "AuthorizationPolicy",
            "authorization.celer.dev",
            "authorizationpolicies",
            "Cluster",
            &["authzpol"],
            &[("v1alpha1", true)],
        ),
    ];
    assert_eq!(all().len(), expected.len());
    for (kind, group, plural, scope, short, served) in expected {
        let crd = find(kind);
        assert_eq!(crd.spec.group, group, "{kind}");
        assert_eq!(crd.spec.names.plural, plural, "{kind}");
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some(format!("{plural}.{group}").as_str()),
            "{kind}"
        );
        assert_eq!(crd.spec.scope, scope, "{kind}");
        let short_names = crd.spec.names.short_names.clone().unwrap_or_default();
        assert_eq!(short_names, short, "{kind}");
        assert_eq!(versions(&crd), served, "{kind}");
        assert_eq!(
            crd.spec.versions.iter().filter(|v| v.storage).count(),
            1,
            "{kind}: one storage version"
        );
    }
}

#[test]
fn status_subresource_and_columns_as_upstream_has_them() {
    for kind in [
        "ValidatingPolicy",
        "NamespacedValidatingPolicy",
        "MutatingPolicy",
        "NamespacedMutatingPolicy",
        "ClusterPolicy",
        "Policy",
        "ConstraintTemplate",
        "Assign",
        "AssignMetadata",
        "ModifySet",
        "AssignImage",
    ] {
        for version in find(kind).spec.versions {
            let status = version.subresources.and_then(|s| s.status);
            assert!(
                status.is_some(),
                "{kind} {}: status subresource",
                version.name
            );
        }
    }
    for exception in [
        find("policies.kyverno.io/PolicyException"),
        find("kyverno.io/PolicyException"),
    ] {
        assert!(
            exception
                .spec
                .versions
                .iter()
                .all(|v| v.subresources.is_none())
        );
    }
    let classic = find("kyverno.io/PolicyException");
    assert_eq!(
        classic
            .spec
            .versions
            .iter()
            .map(|v| v.deprecated)
            .collect::<Vec<_>>(),
        [None, Some(true)],
        "v2beta1 deprecated"
    );
    let vpol = find("ValidatingPolicy");
    let columns: Vec<_> = vpol.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("AGE", ".metadata.creationTimestamp"),
            ("READY", ".status.conditionStatus.ready")
        ]
    );
    let cpol = find("ClusterPolicy");
    let names: Vec<_> = cpol.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "ADMISSION",
            "BACKGROUND",
            "READY",
            "AGE",
            "FAILURE POLICY",
            "VALIDATE",
            "MUTATE",
            "GENERATE",
            "VERIFY IMAGES",
            "MESSAGE"
        ]
    );
}

#[test]
fn deprecated_versions_are_marked() {
    let vpol = find("ValidatingPolicy");
    let marked: Vec<_> = vpol
        .spec
        .versions
        .iter()
        .filter(|v| v.deprecated == Some(true))
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(marked, ["v1alpha1"]);
}

#[test]
fn groups_filter() {
    let Ok(gatekeeper) = for_group(Some("templates.gatekeeper.sh")) else {
        unreachable!("a known group")
    };
    assert_eq!(gatekeeper.len(), 1);
    let Ok(kyverno) = for_group(Some("kyverno.io")) else {
        unreachable!("a known group")
    };
    assert_eq!(kyverno.len(), 4);
    assert_eq!(for_group(None).map(|c| c.len()).ok(), Some(18));
    assert_eq!(
        for_group(Some("mutations.gatekeeper.sh"))
            .map(|c| c.len())
            .ok(),
        Some(4)
    );
    let err = for_group(Some("example.com")).err();
    assert!(err.is_some_and(|e| e.to_string().contains("example.com")));
}

#[test]
fn the_authorization_examples_are_valid_authorization_policies() {
    let text = [
        include_str!("../../../examples/authz/policies.yaml"),
        "---\n",
        include_str!("../../../examples/authz/rego-policies.yaml"),
    ]
    .concat();
    let mut count = 0;
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let policy =
            <authorization::AuthorizationPolicy as serde::Deserialize>::deserialize(document);
        assert!(policy.is_ok(), "{policy:?}");
        count += 1;
    }
    assert_eq!(count, 4);
}
