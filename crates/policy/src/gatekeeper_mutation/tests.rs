//! Mutators from YAML through the engine to the mutated object and the patch.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;

use crate::attributes::Operation;
use crate::engine::{EvalOptions, evaluate};
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, review_for};
use crate::response::{Outcome, PolicyKind, ResultKind};

fn set(text: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("mutators.yaml", text);
    assert!(m.errors.is_empty(), "{:?}", m.errors);
    PolicySet::build(&m)
}

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

fn run_with(set: &PolicySet, object: &Json, op: Operation, lookup: &ObjectLookup) -> Outcome {
    let old = (op == Operation::Update).then_some(object);
    let body = review_for(Some(object), old, op, &RequestUser::default(), "uid-1").unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(set, &request, lookup, &EvalOptions::default())
}

fn run(set: &PolicySet, object: &Json) -> Outcome {
    run_with(
        set,
        object,
        Operation::Create,
        &ObjectLookup::new(Vec::new()),
    )
}

/// The mutated object as compact JSON, or `None` when nothing changed.
fn patched(o: &Outcome) -> Option<String> {
    assert!(o.allowed, "{:?}", o.status);
    o.patched.as_ref().map(|p| sonic_rs::to_string(p).unwrap())
}

fn errors(s: &PolicySet) -> Vec<String> {
    s.errors.iter().map(ToString::to_string).collect()
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"prod"},"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"gcr.io/x/y:1","securityContext":{"runAsUser":0}}]}}"#;

fn assign(name: &str, location: &str, params: &str) -> String {
    format!(
        "---\napiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {{name: {name}}}\nspec:\n  applyTo: [{{groups: [''], kinds: [Pod], versions: [v1]}}]\n  location: '{location}'\n  parameters:\n{params}"
    )
}

#[test]
fn assign_sets_a_field_in_every_element_and_path_tests_keep_what_exists() {
    let s = set(&assign(
        "run-as-user",
        "spec.containers[name:*].securityContext.runAsUser",
        "    pathTests: [{subPath: 'spec.containers[name:*].securityContext.runAsUser', condition: MustNotExist}]\n    assign: {value: 1000}\n",
    ));
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let o = run(&s, &json(POD));
    assert_eq!(
        patched(&o).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"prod"},"spec":{"containers":[{"name":"a","image":"nginx","securityContext":{"runAsUser":1000}},{"name":"b","image":"gcr.io/x/y:1","securityContext":{"runAsUser":0}}]}}"#
    );
    let patch = crate::mutation::diff::to_text(o.patch.as_ref().unwrap()).unwrap();
    assert_eq!(
        patch,
        r#"[{"op":"add","path":"/spec/containers/0/securityContext","value":{"runAsUser":1000}}]"#
    );
    assert_eq!(o.results.len(), 1);
    assert_eq!(o.results[0].kind, PolicyKind::GatekeeperMutator);
    assert_eq!(o.results[0].policy.as_str(), "run-as-user");
    assert_eq!(o.results[0].result, ResultKind::Pass);
}

#[test]
fn a_keyed_selector_creates_the_element_and_must_exist_stops_it() {
    let s = set(&assign(
        "sidecar-env",
        "spec.containers[name: c].env",
        "    assign: {value: [{name: X, value: '1'}]}\n",
    ));
    let o = run(&s, &json(POD));
    let out = patched(&o).unwrap();
    assert!(
        out.ends_with(r#"{"name":"b","image":"gcr.io/x/y:1","securityContext":{"runAsUser":0}},{"name":"c","env":[{"name":"X","value":"1"}]}]}}"#),
        "{out}"
    );
    let s = set(&assign(
        "sidecar-env",
        "spec.containers[name: c].env",
        "    pathTests: [{subPath: 'spec.containers[name: c]', condition: MustExist}]\n    assign: {value: []}\n",
    ));
    assert_eq!(patched(&run(&s, &json(POD))), None);
}

#[test]
fn assign_replaces_or_appends_a_keyed_list_element() {
    let s = set(&assign(
        "replace-b",
        "spec.containers[name: b]",
        "    assign: {value: {name: b, image: busybox}}\n",
    ));
    let out = patched(&run(&s, &json(POD))).unwrap();
    assert!(
        out.contains(r#"[{"name":"a","image":"nginx"},{"name":"b","image":"busybox"}]"#),
        "{out}"
    );
}

#[test]
fn from_metadata_assigns_the_namespace_and_assign_if_tests_the_current_value() {
    let s = set(&format!(
        "{}{}",
        assign(
            "ns-env",
            "spec.nodeName",
            "    assign: {fromMetadata: {field: namespace}}\n"
        ),
        assign(
            "only-root",
            "spec.containers[name:*].securityContext.runAsUser",
            "    assignIf: {in: [0]}\n    assign: {value: 7}\n"
        )
    ));
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let out = patched(&run(&s, &json(POD))).unwrap();
    assert!(out.contains(r#""nodeName":"prod""#), "{out}");
    // Only the container whose runAsUser was 0; the other has none, which `in` refuses.
    assert!(out.contains(r#"{"name":"a","image":"nginx"},"#), "{out}");
    assert!(
        out.contains(r#""securityContext":{"runAsUser":7}"#),
        "{out}"
    );
}

#[test]
fn assign_metadata_only_adds() {
    let s = set(
        "apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {name: owner}\nspec:\n  match: {kinds: [{apiGroups: ['*'], kinds: [Pod]}]}\n  location: metadata.labels.owner\n  parameters: {assign: {value: admin}}\n---\napiVersion: mutations.gatekeeper.sh/v1beta1\nkind: AssignMetadata\nmetadata: {name: note}\nspec:\n  location: 'metadata.annotations.\"example.com/note\"'\n  parameters: {assign: {value: hi}}\n",
    );
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let o = run(
        &s,
        &json(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"x"}}}"#),
    );
    assert_eq!(
        patched(&o).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"x","owner":"admin"},"annotations":{"example.com/note":"hi"}}}"#
    );
    let o = run(
        &s,
        &json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"owner":"me"},"annotations":{"example.com/note":"mine"}}}"#,
        ),
    );
    assert_eq!(patched(&o), None);
    // `match` applies: a ConfigMap gets the annotation, not the label.
    let o = run(
        &s,
        &json(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#),
    );
    assert_eq!(
        patched(&o).unwrap(),
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"example.com/note":"hi"}}}"#
    );
}

#[test]
fn modify_set_merges_and_prunes() {
    let doc = |op: &str| {
        format!(
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: ModifySet\nmetadata: {{name: args}}\nspec:\n  applyTo: [{{groups: [''], kinds: [Pod], versions: [v1]}}]\n  location: 'spec.containers[name: a].args'\n  parameters: {{operation: {op}, values: {{fromList: [-v, -q, -v]}}}}\n"
        )
    };
    let pod = |args: &str| {
        json(&format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p"}},"spec":{{"containers":[{{"name":"a"{args}}}]}}}}"#
        ))
    };
    let merge = set(&doc("merge"));
    assert_eq!(
        patched(&run(&merge, &pod(r#","args":["-q","x"]"#))).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","args":["-q","x","-v"]}]}}"#
    );
    // A missing list is the values as given.
    assert!(
        patched(&run(&merge, &pod("")))
            .unwrap()
            .contains(r#""args":["-v","-q","-v"]"#)
    );
    let prune = set(&doc("prune"));
    assert_eq!(
        patched(&run(&prune, &pod(r#","args":["-q","x","-v"]"#))).unwrap(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","args":["x"]}]}}"#
    );
    assert_eq!(patched(&run(&prune, &pod(""))), None);
    // Not a list: the request fails, as Gatekeeper's webhook answers.
    let o = run(&merge, &pod(r#","args":"-v""#));
    assert!(!o.allowed);
    let status = o.status.unwrap();
    assert_eq!(status.code, 500);
    assert!(
        status
            .message
            .starts_with("mutation for mutator ModifySet/args failed for  Pod default p: "),
        "{}",
        status.message
    );
}

#[test]
fn assign_image_replaces_parts_of_every_image() {
    let s = set(
        "apiVersion: mutations.gatekeeper.sh/v1alpha1\nkind: AssignImage\nmetadata: {name: mirror}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1]}]\n  location: 'spec.containers[name:*].image'\n  parameters: {assignDomain: mirror.local:5000, assignTag: ':stable'}\n",
    );
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let out = patched(&run(&s, &json(POD))).unwrap();
    assert!(
        out.contains(r#"{"name":"a","image":"mirror.local:5000/nginx:stable"}"#),
        "{out}"
    );
    assert!(
        out.contains(r#""image":"mirror.local:5000/x/y:stable""#),
        "{out}"
    );
}

#[test]
fn mutators_run_in_id_order_until_stable() {
    // ModifySet "b" appends to the list Assign "a" creates: the second pass sees it. By ID,
    // Assign sorts before ModifySet whatever the file order.
    let s = set(&format!(
        "apiVersion: mutations.gatekeeper.sh/v1\nkind: ModifySet\nmetadata: {{name: b}}\nspec:\n  applyTo: [{{groups: [''], kinds: [Pod], versions: [v1]}}]\n  location: spec.tolerations\n  parameters: {{values: {{fromList: [{{key: x}}]}}}}\n{}",
        assign(
            "a",
            "spec.tolerations",
            "    pathTests: [{subPath: spec.tolerations, condition: MustNotExist}]\n    assign: {value: [{key: first}]}\n"
        )
    ));
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let names: Vec<_> = s
        .gatekeeper_mutators()
        .mutators
        .iter()
        .map(|m| m.id())
        .collect();
    assert_eq!(names, ["Assign/a", "ModifySet/b"]);
    let out = patched(&run(&s, &json(POD))).unwrap();
    assert!(
        out.contains(r#""tolerations":[{"key":"first"},{"key":"x"}]"#),
        "{out}"
    );
}

#[test]
fn mutators_that_undo_each_other_do_not_converge() {
    // c -> a, b -> c, a -> b, in ID order: every pass moves the value one step on.
    let step = |name: &str, from: &str, to: &str| {
        assign(
            name,
            "spec.nodeName",
            &format!("    assignIf: {{in: [{from}]}}\n    assign: {{value: {to}}}\n"),
        )
    };
    let s = set(&format!(
        "{}{}{}",
        step("m1", "c", "a"),
        step("m2", "b", "c"),
        step("m3", "a", "b")
    ));
    assert!(s.errors.is_empty(), "{:?}", errors(&s));
    let o = run(
        &s,
        &json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"a"}}"#,
        ),
    );
    assert!(!o.allowed);
    let status = o.status.unwrap();
    assert_eq!(status.code, 500);
    assert_eq!(
        status.message,
        "mutation not converging: mutation not converging for  Pod ns p after 4 iterations; still changing it: Assign/m2"
    );
    // Two that undo each other within one pass converge: the pass ends where it began.
    let s = set(&format!("{}{}", step("m1", "b", "a"), step("m2", "a", "b")));
    let o = run(
        &s,
        &json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"a"}}"#,
        ),
    );
    assert!(patched(&o).unwrap().contains(r#""nodeName":"b""#));
}

#[test]
fn operations_and_kinds_outside_apply_to_are_left_alone() {
    let s = set(&assign("x", "spec.nodeName", "    assign: {value: n}\n"));
    let lookup = ObjectLookup::new(Vec::new());
    let o = run_with(&s, &json(POD), Operation::Update, &lookup);
    assert!(patched(&o).is_some());
    let cm = json(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#);
    assert_eq!(patched(&run(&s, &cm)), None);
    let only_create = set(
        "apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: x}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1], operations: [CREATE]}]\n  location: spec.nodeName\n  parameters: {assign: {value: n}}\n",
    );
    let o = run_with(&only_create, &json(POD), Operation::Update, &lookup);
    assert_eq!(patched(&o), None);
}

#[test]
fn what_gatekeeper_refuses_is_a_load_error_naming_the_object_and_field() {
    let cases: &[(&str, &str)] = &[
        (
            &assign("m", "metadata.labels.x", "    assign: {value: v}\n"),
            "spec.location: assign m can't change metadata",
        ),
        (
            &assign(
                "m",
                "spec.containers[name: a].name",
                "    assign: {value: v}\n",
            ),
            "spec.location: invalid path format: changing the item key is not allowed",
        ),
        (
            &assign("m", "spec..x", "    assign: {value: v}\n"),
            "spec.location: invalid location format `spec..x` for Assign m: unexpected token",
        ),
        (
            &assign("m", "spec.x", "    assign: {}\n"),
            "spec.parameters.assign: assign must set one of",
        ),
        (
            &assign(
                "m",
                "spec.x",
                "    assign: {value: 1, fromMetadata: {field: name}}\n",
            ),
            "assign must only set one of",
        ),
        (
            &assign(
                "m",
                "spec.x",
                "    assign: {externalData: {dataSource: Username}}\n",
            ),
            "spec.parameters.assign.externalData.provider: Required value",
        ),
        (
            &assign(
                "m",
                "spec.x",
                "    assign: {externalData: {provider: p, failurePolicy: UseDefault}}\n",
            ),
            "spec.parameters.assign.externalData.default: Required value: failurePolicy UseDefault needs a default",
        ),
        (
            &assign(
                "m",
                "spec.x",
                "    assign: {externalData: {provider: p, dataSource: Annotation}}\n",
            ),
            "spec.parameters.assign.externalData.dataSource: Unsupported value: \"Annotation\"",
        ),
        (
            &assign(
                "m",
                "spec.c[name: a]",
                "    assign: {externalData: {provider: p}}\n",
            ),
            "external data assigns strings, not list elements",
        ),
        (
            &assign("m", "spec.x", "    assign: {fromMetadata: {field: uid}}\n"),
            "field uid is not recognized",
        ),
        (
            &assign("m", "spec.c[name: *]", "    assign: {value: {name: a}}\n"),
            "can't append to a globbed list",
        ),
        (
            &assign("m", "spec.c[name: a]", "    assign: {value: {name: b}}\n"),
            "adding object to list with different key name",
        ),
        (
            &assign("m", "spec.c[name: a]", "    assign: {value: 3}\n"),
            "only objects can be added to keyed lists",
        ),
        (
            &assign(
                "m",
                "spec.x.y",
                "    pathTests: [{subPath: spec.z, condition: MustExist}]\n    assign: {value: 1}\n",
            ),
            "spec.parameters.pathTests[0].subPath: all subpaths must be a prefix",
        ),
        (
            &assign(
                "m",
                "spec.x.y",
                "    pathTests: [{subPath: spec, condition: MustNotExist}, {subPath: spec.x, condition: MustExist}]\n    assign: {value: 1}\n",
            ),
            "marked MustExist but its parent MustNotExist",
        ),
        (
            &assign(
                "m",
                "spec.x",
                "    pathTests: [{subPath: spec.x, condition: Maybe}]\n    assign: {value: 1}\n",
            ),
            "spec.parameters.pathTests[0].condition: Unsupported value: \"Maybe\"",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: m}\nspec:\n  location: spec.x\n  parameters: {assign: {value: 1}}\n",
            "spec.applyTo: applyTo required for Assign mutator m",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod]}]\n  location: spec.x\n  parameters: {assign: {value: 1}}\n",
            "spec.applyTo[0]: invalid applyTo for Assign mutator m, all of group, version and kind must be specified",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: Assign\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1], operations: [DELETE]}]\n  location: spec.x\n  parameters: {assign: {value: 1}}\n",
            "invalid operation \"DELETE\"",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {name: m}\nspec:\n  location: metadata.name\n  parameters: {assign: {value: x}}\n",
            "spec.location: invalid location for assignmetadata m: metadata.name",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {name: m}\nspec:\n  location: spec.labels.x\n  parameters: {assign: {value: x}}\n",
            "invalid location for assignmetadata m",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {name: m}\nspec:\n  location: metadata.labels.x\n  parameters: {assign: {value: 3}}\n",
            "spec.parameters.assign.value field must be a string for AssignMetadata \"m\"",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: ModifySet\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1]}]\n  location: 'spec.c[name: a]'\n  parameters: {values: {fromList: [1]}}\n",
            "final node in a modifyset location cannot be a keyed list",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: ModifySet\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1]}]\n  location: spec.args\n  parameters: {operation: replace}\n",
            "spec.parameters.operation: Unsupported value: \"replace\"",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1alpha1\nkind: AssignImage\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1]}]\n  location: 'spec.containers[name:*].image'\n  parameters: {assignTag: latest}\n",
            "assignImage m has invalid parameters: assignTag \"latest\" must be a valid docker image tag",
        ),
        (
            "apiVersion: mutations.gatekeeper.sh/v1alpha1\nkind: AssignImage\nmetadata: {name: m}\nspec:\n  applyTo: [{groups: [''], kinds: [Pod], versions: [v1]}]\n  location: 'spec.containers[name:*]'\n  parameters: {assignTag: ':v1'}\n",
            "assignImage m cannot mutate list-type fields",
        ),
        (
            &assign(
                "a-name-that-is-far-too-long-for-gatekeeper-which-allows-63-chars",
                "spec.x",
                "    assign: {value: 1}\n",
            ),
            "metadata.name: maximum name length is 63 characters",
        ),
    ];
    for (doc, expected) in cases {
        let s = set(doc);
        let found = errors(&s);
        assert_eq!(found.len(), 1, "{doc}: {found:?}");
        assert!(
            found[0].starts_with("mutators.yaml (document 1): "),
            "{found:?}"
        );
        assert!(
            found[0].contains(expected),
            "{doc}\nwanted {expected:?} in {found:?}"
        );
        assert!(s.gatekeeper_mutators().is_empty());
    }
}

#[test]
fn conflicting_schemas_leave_both_out_and_duplicates_the_second() {
    let s = set(&format!(
        "{}{}{}",
        assign("list", "spec.x[name: a].y", "    assign: {value: 1}\n"),
        assign("object", "spec.x.y", "    assign: {value: 1}\n"),
        assign("other", "spec.z", "    assign: {value: 1}\n"),
    ));
    let found = errors(&s);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("Assign \"list\": conflicting schemas with Assign/object for /v1 Pod"),
        "{found:?}"
    );
    assert!(found[1].contains("Assign \"object\""), "{found:?}");
    assert_eq!(s.gatekeeper_mutators().mutators.len(), 1);
    let s = set(&format!(
        "{}{}",
        assign("same", "spec.x", "    assign: {value: 1}\n"),
        assign("same", "spec.y", "    assign: {value: 1}\n"),
    ));
    let found = errors(&s);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("already loaded"), "{found:?}");
    // A ModifySet's list of values cannot have fields below it.
    let s = set(&format!(
        "{}---\napiVersion: mutations.gatekeeper.sh/v1\nkind: ModifySet\nmetadata: {{name: set}}\nspec:\n  applyTo: [{{groups: [''], kinds: [Pod], versions: [v1]}}]\n  location: spec.x\n  parameters: {{values: {{fromList: [1]}}}}\n",
        assign("below", "spec.x.y", "    assign: {value: 1}\n"),
    ));
    assert_eq!(errors(&s).len(), 2, "{:?}", errors(&s));
}

#[test]
fn a_mismatched_object_fails_the_request() {
    let s = set(&assign(
        "m",
        "spec.containers.x",
        "    assign: {value: 1}\n",
    ));
    let o = run(&s, &json(POD));
    assert!(!o.allowed);
    let message = o.status.unwrap().message;
    assert!(
        message.contains(
            "mismatch between path entry (type: object) and received object (type: list)"
        ),
        "{message}"
    );
}
