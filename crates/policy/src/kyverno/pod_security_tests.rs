use super::*;

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

fn standard(control: &str, images: &[&str], field: &str, values: &[&str]) -> PodSecurityStandard {
    PodSecurityStandard {
        control_name: control.to_string(),
        images: images.iter().map(|s| s.to_string()).collect(),
        restricted_field: field.to_string(),
        values: values.iter().map(|s| s.to_string()).collect(),
    }
}

fn rule(level: &str, version: &str, exclude: Vec<PodSecurityStandard>) -> PodSecurityRule {
    PodSecurityRule::compile(&PodSecurity {
        level: level.to_string(),
        version: version.to_string(),
        exclude,
    })
    .unwrap()
}

const PRIVILEGED_POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
  "spec":{"containers":[
    {"name":"a","image":"nginx","securityContext":{"privileged":true}},
    {"name":"b","image":"busybox","securityContext":{"privileged":true}}]}}"#;

#[test]
fn fields_lose_their_indexes_and_name_their_container() {
    let f = parse_field("spec.initContainers[12].ports[3].hostPort");
    assert_eq!(f.starred, "spec.initContainers[*].ports[*].hostPort");
    assert_eq!(f.container, Some(("initContainers".to_string(), 12)));
    let f = parse_field("spec.securityContext.sysctls[0].name");
    assert_eq!(f.starred, "spec.securityContext.sysctls[*].name");
    assert_eq!(f.container, None);
    let f = parse_field("metadata.annotations[container.apparmor.security.beta.kubernetes.io/c1]");
    assert!(f.starred.ends_with("/c*]"), "{}", f.starred);
    assert_eq!(f.container, None);
    assert_eq!(parse_field("").starred, "");
}

#[test]
fn bad_values_as_exclusions_compare_them() {
    assert!(bad_values(&BadValue::None).is_empty());
    assert!(bad_values(&BadValue::String(String::new())).is_empty());
    assert_eq!(bad_values(&BadValue::Bool(true)), ["true"]);
    assert_eq!(bad_values(&BadValue::Int(8080)), ["8080"]);
    assert_eq!(
        bad_values(&BadValue::Strings(vec![
            "NET_ADMIN".into(),
            "SYS_TIME".into()
        ])),
        ["NET_ADMIN", "SYS_TIME"]
    );
}

#[test]
fn exclusion_entries_are_checked_as_kyverno_does() {
    let problems = |s: PodSecurityStandard| Exclusion::new(&s).problems("spec.podSecurity[0]");
    assert!(problems(standard("Capabilities", &["nginx"], "", &[])).is_empty());
    assert_eq!(
        problems(standard("Capabilities", &[], "", &[])),
        [
            "spec.podSecurity[0].controlName: Invalid value: \"Capabilities\": exclude.images must be specified for the container level control"
        ]
    );
    assert_eq!(
        problems(standard("Host Namespaces", &["nginx"], "", &[])),
        [
            "spec.podSecurity[0].controlName: Invalid value: \"Host Namespaces\": exclude.images must not be specified for the pod level control"
        ]
    );
    assert_eq!(
        problems(standard(
            "Sysctls",
            &[],
            "spec.securityContext.sysctls[*].name",
            &[]
        )),
        ["spec.podSecurity[0].values: Forbidden: values is required"]
    );
    assert_eq!(
        problems(standard("Seccomp", &[], "", &["Unconfined"])),
        ["spec.podSecurity[0].restrictedField: Forbidden: restrictedField is required"]
    );
    let unknown = problems(standard("Host Probes", &[], "", &[]));
    assert_eq!(unknown.len(), 1);
    assert!(
        unknown[0].contains("Unsupported value: \"Host Probes\""),
        "{unknown:?}"
    );
}

#[test]
fn a_bad_version_is_a_problem_of_the_rule() {
    let bad = PodSecurityRule::compile(&PodSecurity {
        level: "baseline".into(),
        version: "1.2.3".into(),
        exclude: vec![],
    });
    assert!(bad.is_err());
    let bad = PodSecurityRule::compile(&PodSecurity {
        level: "strict".into(),
        version: String::new(),
        exclude: vec![],
    });
    assert!(bad.is_err());
}

#[test]
fn a_failing_pod_gets_kyvernos_message() {
    let r = rule("baseline", "latest", vec![]);
    let Verdict::Fail(message, properties) =
        evaluate(&r, "baseline", "Pod", &json(PRIVILEGED_POD), None)
    else {
        panic!("not a failure");
    };
    assert_eq!(properties[0], ("controls".into(), "privileged".to_string()));
    assert_eq!(
        message,
        (
            "Validation rule 'baseline' failed. It violates PodSecurity \"baseline:latest\": \
             (Forbidden reason: privileged, field error list: [spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true, spec.containers[1].securityContext.privileged is forbidden, forbidden values found: true])"
                .to_string()
        )
    );
}

#[test]
fn a_workload_reports_its_template_fields() {
    let pod = json(PRIVILEGED_POD);
    let mut deployment = json(r#"{"kind":"Deployment","spec":{"template":{}}}"#);
    let template = deployment.pointer_mut(&["spec", "template"]).unwrap();
    *template = pod.clone();
    let r = rule("baseline", "", vec![]);
    let Verdict::Fail(message, _) = evaluate(&r, "x", "Deployment", &deployment, None) else {
        panic!("a privileged template fails")
    };
    assert!(message.contains("PodSecurity \"baseline:\""), "{message}");
    assert!(
        message.contains("spec.template.spec.containers[0].securityContext.privileged"),
        "{message}"
    );
    let mut cronjob = json(r#"{"kind":"CronJob","spec":{"jobTemplate":{"spec":{"template":{}}}}}"#);
    *cronjob
        .pointer_mut(&["spec", "jobTemplate", "spec", "template"])
        .unwrap() = pod;
    let Verdict::Fail(message, _) = evaluate(&r, "x", "CronJob", &cronjob, None) else {
        panic!("a privileged CronJob fails")
    };
    assert!(
        message.contains(
            "spec.jobTemplate.spec.template.spec.containers[1].securityContext.privileged"
        ),
        "{message}"
    );
    assert!(matches!(
        evaluate(&r, "x", "ConfigMap", &json("{}"), None),
        Verdict::Error(_)
    ));
}

#[test]
fn exclusions_exempt_the_containers_of_their_images() {
    let pod = json(PRIVILEGED_POD);
    let one = rule(
        "baseline",
        "latest",
        vec![standard("Privileged Containers", &["nginx"], "", &[])],
    );
    let Verdict::Fail(message, _) = evaluate(&one, "r", "Pod", &pod, None) else {
        panic!("busybox is still privileged")
    };
    assert!(message.contains("spec.containers[1]"), "{message}");
    assert!(!message.contains("spec.containers[0]"), "{message}");
    let both = rule(
        "baseline",
        "latest",
        vec![standard(
            "Privileged Containers",
            &["nginx", "busy*"],
            "",
            &[],
        )],
    );
    assert_eq!(evaluate(&both, "r", "Pod", &pod, None), Verdict::Pass);
}

#[test]
fn restricted_field_and_values_narrow_an_exclusion() {
    let pod = json(
        r#"{"kind":"Pod","metadata":{"name":"p"},"spec":{"securityContext":{"sysctls":[
            {"name":"kernel.shm_rmid_forced","value":"0"},{"name":"net.core.somaxconn","value":"1"}]},
            "containers":[{"name":"a","image":"nginx"}]}}"#,
    );
    let field = "spec.securityContext.sysctls[*].name";
    let partial = rule(
        "baseline",
        "latest",
        vec![standard("Sysctls", &[], field, &["net.core.somaxconn"])],
    );
    assert_eq!(evaluate(&partial, "r", "Pod", &pod, None), Verdict::Pass);
    let wrong_value = rule(
        "baseline",
        "latest",
        vec![standard("Sysctls", &[], field, &["kernel.*"])],
    );
    assert!(matches!(
        evaluate(&wrong_value, "r", "Pod", &pod, None),
        Verdict::Fail(..)
    ));
    let wrong_field = rule(
        "baseline",
        "latest",
        vec![standard("Sysctls", &[], "spec.hostNetwork", &["true"])],
    );
    assert!(matches!(
        evaluate(&wrong_field, "r", "Pod", &pod, None),
        Verdict::Fail(..)
    ));
}

#[test]
fn exceptions_exempt_after_the_rules_own_exclusions() {
    let pod = json(PRIVILEGED_POD);
    let r = rule("baseline", "latest", vec![]);
    let nginx = Exclusion::new(&standard("Privileged Containers", &["nginx"], "", &[]));
    let busybox = Exclusion::new(&standard("Privileged Containers", &["busybox"], "", &[]));
    assert!(matches!(
        evaluate(&r, "r", "Pod", &pod, Some(&[&nginx])),
        Verdict::Fail(..)
    ));
    assert_eq!(
        evaluate(&r, "r", "Pod", &pod, Some(&[&nginx, &busybox])),
        Verdict::Exempted
    );
}

#[test]
fn pod_fields_are_renamed_under_the_template_for_every_kind() {
    let mut checks = vec![CheckResult {
        id: "appArmorProfile",
        forbidden_reason: "r".into(),
        forbidden_detail: "d".into(),
        errors: vec![pss::FieldError {
            error_type: FieldErrorType::Forbidden,
            field: "metadata.annotations[x]".into(),
            bad_value: BadValue::String("unconfined".into()),
            detail: String::new(),
        }],
    }];
    convert_fields(&mut checks, "Pod");
    assert_eq!(
        checks[0].errors[0].field,
        "spec.template.metadata.annotations[x]"
    );
    assert_eq!(
        format_checks(&checks),
        "(Forbidden reason: r, field error list: [spec.template.metadata.annotations[x] is forbidden, forbidden values found: unconfined])"
    );
}

#[test]
fn exceptions_with_fields_and_values_exempt_init_and_app_containers() {
    let pod = json(
        r#"{"kind":"Pod","metadata":{"name":"p","namespace":"staging"},"spec":{
            "containers":[{"name":"a","image":"nginx","securityContext":{"privileged":true}}],
            "initContainers":[{"name":"b","image":"nginx","securityContext":{"privileged":true}}]}}"#,
    );
    let r = rule("baseline", "latest", vec![]);
    let app = Exclusion::new(&standard(
        "Privileged Containers",
        &["nginx"],
        "spec.containers[*].securityContext.privileged",
        &["true"],
    ));
    let init = Exclusion::new(&standard(
        "Privileged Containers",
        &["nginx"],
        "spec.initContainers[*].securityContext.privileged",
        &["true"],
    ));
    assert!(matches!(
        evaluate(&r, "r", "Pod", &pod, Some(&[&app])),
        Verdict::Fail(..)
    ));
    assert_eq!(
        evaluate(&r, "r", "Pod", &pod, Some(&[&app, &init])),
        Verdict::Exempted
    );
}

#[test]
fn images_are_written_as_kyverno_writes_them() {
    assert_eq!(kyverno_image("nginx"), "docker.io/nginx:latest");
    assert_eq!(kyverno_image("nginx:1.25"), "docker.io/nginx:1.25");
    assert_eq!(
        kyverno_image("public.ecr.aws/docker/library/nginx"),
        "public.ecr.aws/docker/library/nginx:latest"
    );
    assert_eq!(
        kyverno_image("localhost:5000/a/b:1"),
        "localhost:5000/a/b:1"
    );
    assert_eq!(
        kyverno_image("repo/app@sha256:abc"),
        "docker.io/repo/app@sha256:abc"
    );
    assert_eq!(
        detail_containers(
            r#"containers "a", "b" must set securityContext.allowPrivilegeEscalation=false"#
        ),
        Some(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(detail_containers("hostNetwork=true"), None);
}
