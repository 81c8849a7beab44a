//! The gatekeeper-library mutation samples from ../shared/corpus, run as `celer apply` runs
//! them: every file under a `samples/` folder is counted. Each mutation file is loaded with
//! the example objects of its folder and the patch `celer apply` gives is compared with the
//! one Gatekeeper's documented semantics give (upstream ships no expected objects, so the
//! expectations are stated here, in `CASES`). Example objects count as used when a case
//! reads them; anything else (the README) is skipped with its reason. A sample that no case
//! covers fails, so that new corpus files are noticed. `gatekeeper_mutation.ratchet` holds
//! the passing floor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use celer_offline::apply::{ApplyInput, apply};
use celer_policy::attributes::Operation;
use celer_policy::request::RequestUser;
use celer_test_support::{Ratchet, fail, require, walk};

/// One expectation: mutation files (relative to the corpus's `mutation` folder), the
/// example object, and the JSON Patch `celer apply` must report (`None`: unchanged).
struct Case {
    mutations: &'static [&'static str],
    example: &'static str,
    patch: Option<&'static str>,
}

const PSP: &str = "pod-security-policy";

const CASES: &[Case] = &[
    // Containers get `allowPrivilegeEscalation: false` where unset; the Pod has no init or
    // ephemeral containers, so those two mutators find no element and change nothing.
    Case {
        mutations: &["allow-privilege-escalation/samples/mutation.yaml"],
        example: "allow-privilege-escalation/samples/default-allow-privilege-escalation/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"allowPrivilegeEscalation":false}}]"#,
        ),
    },
    // Assign: the whole capabilities.add list is the value.
    Case {
        mutations: &["capabilities/samples/mutation-assign.yaml"],
        example: "capabilities/samples/default-add-capabilities/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"capabilities":{"add":["NEW_CAPABILITY"]}}}]"#,
        ),
    },
    // ModifySet merge on a missing list: the list of values (the Pod is created in a
    // namespace, `default`, so `scope: Namespaced` matches).
    Case {
        mutations: &["capabilities/samples/mutation-modifyset.yaml"],
        example: "capabilities/samples/default-add-capabilities/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"capabilities":{"add":["NEW_CAPABILITY"]}}}]"#,
        ),
    },
    Case {
        mutations: &["read-only-root-filesystem/samples/mutation.yaml"],
        example: "read-only-root-filesystem/samples/read-only-root-filesystem/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"readOnlyRootFilesystem":true}}]"#,
        ),
    },
    // The Pod-level securityContext is created to hold the profile.
    Case {
        mutations: &["seccomp/samples/mutation.yaml"],
        example: "seccomp/samples/default-seccomp/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/securityContext","value":{"seccompProfile":{"type":"RuntimeDefault"}}}]"#,
        ),
    },
    Case {
        mutations: &["selinux/samples/mutation.yaml"],
        example: "selinux/samples/default-selinux/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"seLinuxOptions":{"level":"s1:c234,c567","user":"sysadm_u","role":"sysadm_r","type":"svirt_lxc_net_t"}}}]"#,
        ),
    },
    // users: each mutator on the Pod without any setting, and on the one that sets
    // runAsUser: 0 and runAsNonRoot: false in its container (which MustNotExist keeps).
    Case {
        mutations: &["users/samples/mutation-fsGroup.yaml"],
        example: "users/samples/users/example.yaml",
        patch: Some(r#"[{"op":"add","path":"/spec/securityContext","value":{"fsGroup":3000}}]"#),
    },
    Case {
        mutations: &["users/samples/mutation-fsGroup.yaml"],
        example: "users/samples/users/example-nomutation.yaml",
        patch: Some(r#"[{"op":"add","path":"/spec/securityContext","value":{"fsGroup":3000}}]"#),
    },
    Case {
        mutations: &["users/samples/mutation-mustRunAsNonRoot.yaml"],
        example: "users/samples/users/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"runAsNonRoot":true}}]"#,
        ),
    },
    Case {
        mutations: &["users/samples/mutation-mustRunAsNonRoot.yaml"],
        example: "users/samples/users/example-nomutation.yaml",
        patch: None,
    },
    Case {
        mutations: &["users/samples/mutation-runAsGroup.yaml"],
        example: "users/samples/users/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"runAsGroup":2000}}]"#,
        ),
    },
    Case {
        mutations: &["users/samples/mutation-runAsGroup.yaml"],
        example: "users/samples/users/example-nomutation.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext/runAsGroup","value":2000}]"#,
        ),
    },
    Case {
        mutations: &["users/samples/mutation-runAsUser.yaml"],
        example: "users/samples/users/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"runAsUser":1000}}]"#,
        ),
    },
    Case {
        mutations: &["users/samples/mutation-runAsUser.yaml"],
        example: "users/samples/users/example-nomutation.yaml",
        patch: None,
    },
    Case {
        mutations: &["users/samples/mutation-supplementalGroups.yaml"],
        example: "users/samples/users/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/securityContext","value":{"supplementalGroups":[3000]}}]"#,
        ),
    },
    Case {
        mutations: &["users/samples/mutation-supplementalGroups.yaml"],
        example: "users/samples/users/example-nomutation.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/securityContext","value":{"supplementalGroups":[3000]}}]"#,
        ),
    },
    // All five together, in ID order: k8spspfsGroup, k8spsprunasgroup(-init),
    // k8spsprunasnonroot(-init), k8spsprunasuser(-init), k8spspsupplementalgroups.
    Case {
        mutations: &[
            "users/samples/mutation-fsGroup.yaml",
            "users/samples/mutation-mustRunAsNonRoot.yaml",
            "users/samples/mutation-runAsGroup.yaml",
            "users/samples/mutation-runAsUser.yaml",
            "users/samples/mutation-supplementalGroups.yaml",
        ],
        example: "users/samples/users/example.yaml",
        patch: Some(
            r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"runAsGroup":2000,"runAsNonRoot":true,"runAsUser":1000}},{"op":"add","path":"/spec/securityContext","value":{"fsGroup":3000,"supplementalGroups":[3000]}}]"#,
        ),
    },
];

/// Sample files that are not mutators or objects, with why.
const NOT_SAMPLES: &[(&str, &str)] = &[(
    "capabilities/samples/README.md",
    "documentation, not a sample",
)];

fn under(base: &Path, relative: &str) -> PathBuf {
    base.join(PSP).join(relative)
}

/// The patch `celer apply` reports for `case`, as JSON text (`None`: unchanged).
fn run(base: &Path, case: &Case) -> Result<Option<String>, String> {
    let input = ApplyInput {
        policies: case.mutations.iter().map(|m| under(base, m)).collect(),
        resources: vec![under(base, case.example)],
        params: Vec::new(),
        namespaces: Vec::new(),
        old_resources: Vec::new(),
        operation: Operation::Create,
        user: RequestUser::default(),
        sub_resource: None,
    };
    let reports = apply(&input).map_err(|e| e.to_string())?;
    let [report] = reports.as_slice() else {
        return Err(format!("{} reports, expected one", reports.len()));
    };
    let outcome = &report.outcome;
    if !outcome.allowed {
        return Err(format!("denied: {:?}", outcome.status));
    }
    outcome
        .patch
        .as_ref()
        .map(|p| celer_policy::mutation::diff::to_text(p).map_err(|e| e.to_string()))
        .transpose()
}

#[test]
fn gatekeeper_library_mutation_samples() {
    let Some(base) = require("gatekeeper-library/mutation") else {
        return;
    };
    let psp = base.join(PSP);
    let files = walk::files_under(&base, &|p| {
        p.components().any(|c| c.as_os_str() == "samples")
    });
    assert!(!files.is_empty(), "no samples under {}", base.display());
    let ratchet = Ratchet::load(
        "gatekeeper_mutation.ratchet",
        include_str!("gatekeeper_mutation.ratchet"),
    );
    let (mut passed, mut failed) = (0usize, BTreeMap::new());
    let mut used: BTreeSet<String> = BTreeSet::new();
    for (i, case) in CASES.iter().enumerate() {
        used.extend(case.mutations.iter().map(|m| m.to_string()));
        used.insert(case.example.to_string());
        let key = format!("{i}: {} on {}", case.mutations.join(" + "), case.example);
        match run(&base, case) {
            Ok(patch) if patch.as_deref() == case.patch => passed += 1,
            Ok(patch) => {
                failed.insert(
                    key,
                    format!("expected patch {:?}, got {patch:?}", case.patch),
                );
            }
            Err(e) => {
                failed.insert(key, e);
            }
        }
    }
    let (mut mutation_files, mut examples, mut skipped, mut uncovered) = (0, 0, 0, Vec::new());
    for file in &files {
        let relative = file
            .strip_prefix(&psp)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| file.display().to_string());
        if let Some((_, why)) = NOT_SAMPLES.iter().find(|(f, _)| *f == relative) {
            skipped += 1;
            println!("  skipped {relative}: {why}");
        } else if !used.contains(&relative) {
            uncovered.push(relative);
        } else if file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("mutation"))
        {
            mutation_files += 1;
        } else {
            examples += 1;
        }
    }
    println!(
        "gatekeeper-library mutation: {} sample files ({mutation_files} mutation files, {examples} example objects, {skipped} skipped, {} uncovered); {} cases: {passed} passed, {} failed",
        files.len(),
        uncovered.len(),
        CASES.len(),
        failed.len()
    );
    let mut problems: Vec<String> = failed.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    problems.extend(
        uncovered
            .iter()
            .map(|f| format!("{f}: a sample no case covers (add its expectation to CASES)")),
    );
    if !problems.is_empty() {
        fail(problems.join("\n"));
    }
    ratchet.enforce("passing cases", passed);
}
