#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn run(level: &str, version: &str, pod: &str) -> Vec<CheckResult> {
    let pod: sonic_rs::Value = sonic_rs::from_str(pod).unwrap_or_default();
    let lv = LevelVersion::parse(level, version).unwrap_or_else(|e| panic!("{e}"));
    let null = sonic_rs::Value::default();
    let metadata = pod.get("metadata").unwrap_or(&null);
    let spec = pod.get("spec").unwrap_or(&null);
    evaluate(&lv, metadata, spec).unwrap_or_else(|e| panic!("{e}"))
}

fn ids(results: &[CheckResult]) -> Vec<&'static str> {
    results.iter().map(|r| r.id).collect()
}

use sonic_rs::JsonValueTrait as _;

#[test]
fn a_privileged_container_fails_baseline_with_psa_wording_and_a_field_error() {
    let found = run(
        "baseline",
        "latest",
        r#"{"spec":{"containers":[{"name":"nginx","securityContext":{"privileged":true}}]}}"#,
    );
    assert_eq!(ids(&found), ["privileged"]);
    assert_eq!(found[0].forbidden_reason, "privileged");
    assert_eq!(
        found[0].forbidden_detail,
        "container \"nginx\" must not set securityContext.privileged=true"
    );
    assert_eq!(
        found[0].errors,
        [FieldError {
            error_type: FieldErrorType::Forbidden,
            field: "spec.containers[0].securityContext.privileged".into(),
            bad_value: BadValue::Bool(true),
            detail: String::new(),
        }]
    );
    assert_eq!(
        found[0].errors[0].to_string(),
        "spec.containers[0].securityContext.privileged: Forbidden"
    );
}

#[test]
fn restricted_runs_baseline_checks_too_without_pruning_overridden_ones() {
    let found = run(
        "restricted",
        "latest",
        r#"{"spec":{"volumes":[{"name":"h","hostPath":{"path":"/etc"}}],
            "containers":[{"name":"c"}]}}"#,
    );
    assert_eq!(
        ids(&found),
        [
            "allowPrivilegeEscalation",
            "capabilities_restricted",
            "hostPathVolumes",
            "restrictedVolumes",
            "runAsNonRoot",
            "seccompProfile_restricted",
        ]
    );
    let host_path = &found[2].errors[0];
    assert_eq!(host_path.field, "spec.volumes[0].hostPath");
    assert_eq!(host_path.bad_value, BadValue::String("/etc".into()));
    // restrictedVolumes reports the same field without a value.
    assert_eq!(found[3].errors[0].bad_value, BadValue::None);
    assert_eq!(
        found[3].forbidden_detail,
        "volume \"h\" uses restricted volume type \"hostPath\""
    );
    // An unset allowPrivilegeEscalation under no securityContext is required, not "nil".
    assert_eq!(found[0].errors[0].error_type, FieldErrorType::Required);
}

#[test]
fn baseline_runs_only_baseline_checks_and_privileged_runs_none() {
    let pod = r#"{"spec":{"containers":[{"name":"c","securityContext":{"runAsUser":0}}]}}"#;
    assert!(run("baseline", "latest", pod).is_empty());
    assert!(run("privileged", "latest", pod).is_empty());
    let restricted = run("restricted", "latest", pod);
    assert!(ids(&restricted).contains(&"runAsUser"));
}

#[test]
fn checks_pick_the_newest_version_not_newer_than_asked() {
    let pod = r#"{"spec":{"securityContext":{"sysctls":[{"name":"net.ipv4.tcp_rmem"}]},
        "containers":[{"name":"c"}]}}"#;
    assert_eq!(ids(&run("baseline", "v1.31", pod)), ["sysctls"]);
    assert!(run("baseline", "v1.32", pod).is_empty());
    assert!(run("baseline", "latest", pod).is_empty());
}

#[test]
fn a_check_newer_than_the_version_still_runs_its_first_version_as_kyverno_does() {
    // runAsUser arrived in 1.23 and Kyverno still runs it at v1.0.
    let pod = r#"{"spec":{"securityContext":{"runAsUser":0,"runAsNonRoot":true,
        "seccompProfile":{"type":"RuntimeDefault"}},
        "containers":[{"name":"c","securityContext":{"allowPrivilegeEscalation":false,
        "capabilities":{"drop":["ALL"]}}}]}}"#;
    assert_eq!(ids(&run("restricted", "v1.0", pod)), ["runAsUser"]);
    assert_eq!(
        run("restricted", "v1.0", pod)[0].forbidden_detail,
        "pod must not set runAsUser=0"
    );
}

#[test]
fn field_paths_follow_psa_container_order_and_kinds() {
    let found = run(
        "baseline",
        "latest",
        r#"{"spec":{
            "initContainers":[{"name":"i","ports":[{"hostPort":80},{"containerPort":1},{"hostPort":8080}]}],
            "containers":[{"name":"c","securityContext":{"capabilities":{"add":["SYS_ADMIN","CHOWN","NET_ADMIN"]}}}],
            "ephemeralContainers":[{"name":"e","securityContext":{"privileged":true}}]}}"#,
    );
    assert_eq!(
        ids(&found),
        ["capabilities_baseline", "hostPorts", "privileged"]
    );
    assert_eq!(
        found[0].errors[0].field,
        "spec.containers[0].securityContext.capabilities.add"
    );
    assert_eq!(
        found[0].errors[0].bad_value,
        BadValue::Strings(vec!["NET_ADMIN".into(), "SYS_ADMIN".into()])
    );
    assert_eq!(
        found[0].forbidden_detail,
        "container \"c\" must not include \"NET_ADMIN\", \"SYS_ADMIN\" in securityContext.capabilities.add"
    );
    let ports: Vec<&str> = found[1].errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        ports,
        [
            "spec.initContainers[0].ports[0].hostPort",
            "spec.initContainers[0].ports[2].hostPort"
        ]
    );
    assert_eq!(found[1].errors[1].bad_value, BadValue::Int(8080));
    assert_eq!(
        found[1].forbidden_detail,
        "container \"i\" uses hostPorts 80, 8080"
    );
    assert_eq!(
        found[2].errors[0].field,
        "spec.ephemeralContainers[0].securityContext.privileged"
    );
}

#[test]
fn pod_and_container_setters_are_joined_with_and() {
    let found = run(
        "baseline",
        "latest",
        r#"{"metadata":{"annotations":{"container.apparmor.security.beta.kubernetes.io/c":"unconfined"}},
            "spec":{"securityContext":{"appArmorProfile":{"type":"Unconfined"},
              "seLinuxOptions":{"type":"spc_t","user":"root"}},
            "containers":[{"name":"c","securityContext":{"appArmorProfile":{"type":"Unconfined"},
              "seLinuxOptions":{"role":"sysadm_r"}}},{"name":"d"}]}}"#,
    );
    assert_eq!(ids(&found), ["appArmorProfile", "seLinuxOptions"]);
    assert_eq!(found[0].forbidden_reason, "forbidden AppArmor profiles");
    assert_eq!(
        found[0].forbidden_detail,
        "pod and container \"c\" and annotation must not set AppArmor profile type to \
         \"Unconfined\", \"container.apparmor.security.beta.kubernetes.io/c=\"unconfined\"\""
    );
    assert_eq!(found[0].errors.len(), 3);
    assert_eq!(
        found[0].errors[2].field,
        "metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]"
    );
    assert_eq!(
        found[1].forbidden_detail,
        "pod and container \"c\" set forbidden securityContext.seLinuxOptions: type \"spc_t\"; \
         user may not be set; role may not be set"
    );
    let fields: Vec<&str> = found[1].errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.securityContext.seLinuxOptions.type",
            "spec.securityContext.seLinuxOptions.user",
            "spec.containers[0].securityContext.seLinuxOptions.role",
        ]
    );
}

#[test]
fn run_as_non_root_reports_explicit_and_implicit_containers_on_two_lines() {
    let found = run(
        "restricted",
        "latest",
        r#"{"spec":{"containers":[
            {"name":"a","securityContext":{"runAsNonRoot":false}},
            {"name":"b","securityContext":{}}]}}"#,
    );
    let check = found
        .iter()
        .find(|r| r.id == "runAsNonRoot")
        .unwrap_or_else(|| panic!("runAsNonRoot should fail: {found:?}"));
    assert_eq!(
        check.forbidden_detail,
        "container \"a\" must not set securityContext.runAsNonRoot=false\n\
         pod or container \"b\" must set securityContext.runAsNonRoot=true"
    );
    assert_eq!(check.errors[0].bad_value, BadValue::Bool(false));
    assert_eq!(check.errors[1].error_type, FieldErrorType::Required);
    let escalation = &found[0];
    assert_eq!(escalation.id, "allowPrivilegeEscalation");
    // A securityContext without the field: the fork's "nil".
    assert_eq!(
        escalation.errors[1].bad_value,
        BadValue::String("nil".into())
    );
}

#[test]
fn windows_pods_skip_the_linux_only_restricted_checks() {
    let found = run(
        "restricted",
        "latest",
        r#"{"spec":{"os":{"name":"windows"},"securityContext":{"runAsNonRoot":true},
            "containers":[{"name":"c"}]}}"#,
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn seccomp_annotations_count_only_before_1_19() {
    let pod = r#"{"metadata":{"annotations":{"seccomp.security.alpha.kubernetes.io/pod":"unconfined"}},
        "spec":{"containers":[{"name":"c"}]}}"#;
    let old = run("baseline", "v1.18", pod);
    assert_eq!(ids(&old), ["seccompProfile_baseline"]);
    assert_eq!(
        old[0].forbidden_detail,
        "forbidden annotation seccomp.security.alpha.kubernetes.io/pod=\"unconfined\""
    );
    assert!(run("baseline", "v1.19", pod).is_empty());
}

#[test]
fn wrongly_typed_fields_are_decode_errors_naming_the_field() {
    let lv = LevelVersion::parse("baseline", "").unwrap_or_else(|e| panic!("{e}"));
    let spec: sonic_rs::Value = sonic_rs::from_str(
        r#"{"containers":[{"name":"c","securityContext":{"privileged":"yes"}}]}"#,
    )
    .unwrap_or_default();
    let err = evaluate(&lv, &sonic_rs::Value::default(), &spec).err();
    assert_eq!(
        err.map(|e| e.to_string()),
        Some(
            "spec.containers[0].securityContext.privileged: expected a boolean, found a string"
                .to_string()
        )
    );
}

#[test]
fn levels_and_versions_parse_as_psa_does() {
    assert!(LevelVersion::parse("baseline", "v1.29").is_ok());
    assert!(LevelVersion::parse("restricted", "latest").is_ok());
    assert!(LevelVersion::parse("Baseline", "").is_err());
    assert!(LevelVersion::parse("baseline", "v1.029").is_err());
    assert!(LevelVersion::parse("baseline", "1.29").is_err());
    assert!(Version::parse("v1.9").unwrap_or(Version::LATEST) < Version::new(1, 10));
    assert!(Version::new(1, 99) < Version::LATEST);
}

#[test]
fn admission_selection_skips_checks_newer_than_the_version_and_applies_overrides() {
    let lv = LevelVersion::parse("restricted", "v1.0").unwrap_or_else(|e| panic!("{e}"));
    let pod: sonic_rs::Value = sonic_rs::from_str(
        r#"{"spec":{"securityContext":{"runAsUser":0,"runAsNonRoot":true},
            "volumes":[{"name":"h","hostPath":{"path":"/"}}],"containers":[{"name":"c"}]}}"#,
    )
    .unwrap_or_default();
    let null = sonic_rs::Value::default();
    let spec = pod.get("spec").unwrap_or(&null);
    let psa = evaluate_with(Selection::Admission, &lv, &null, spec).unwrap_or_default();
    // No runAsUser (1.23), allowPrivilegeEscalation (1.8), capabilities (1.22) or seccomp
    // (1.19) at v1.0, and restrictedVolumes displaces hostPathVolumes.
    assert_eq!(ids(&psa), ["restrictedVolumes"]);
    let kyverno = evaluate_with(Selection::Kyverno, &lv, &null, spec).unwrap_or_default();
    assert_eq!(
        ids(&kyverno),
        [
            "allowPrivilegeEscalation",
            "capabilities_restricted",
            "hostPathVolumes",
            "restrictedVolumes",
            "runAsUser",
            "seccompProfile_restricted",
        ]
    );
}
