//! The matcher against Kyverno's behaviour, case by case: each anchor, operators, wildcards,
//! lists, nil values, and the paths and texts of the errors.

use super::*;

fn yaml(text: &str) -> Json {
    crate::document::parse_document(text, crate::document::Syntax::Yaml).unwrap()
}

/// Matches `resource` against `pattern` (both YAML): `Ok`, or (skip, path, message).
fn check(resource: &str, pattern: &str) -> Result<(), (bool, String, String)> {
    let node = compile(&yaml(pattern), false).unwrap();
    match_pattern(&yaml(resource), &node).map_err(|m| (m.skip, m.path, m.message))
}

fn fails_at(resource: &str, pattern: &str, path: &str, message: &str) {
    assert_eq!(
        check(resource, pattern),
        Err((false, path.to_string(), message.to_string())),
        "{pattern}"
    );
}

fn skips(resource: &str, pattern: &str, message: &str) {
    assert_eq!(
        check(resource, pattern),
        Err((true, String::new(), message.to_string())),
        "{pattern}"
    );
}

const POD: &str = "
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  hostNetwork: false
  containers:
  - name: a
    image: nginx:1.27
    resources: {limits: {memory: 512Mi, cpu: 500m}}
  - name: b
    image: envoy:latest
    securityContext: {privileged: true}
    ports: [{containerPort: 8080}, {containerPort: 80}]
";

#[test]
fn plain_keys_and_leaves() {
    assert_eq!(check(POD, "metadata: {name: web}"), Ok(()));
    assert_eq!(check(POD, "metadata: {name: 'w*'}"), Ok(()));
    fails_at(
        POD,
        "metadata: {name: api}",
        "/metadata/name/",
        "resource value 'web' does not match 'api' at path /metadata/name/",
    );
    // A missing key is nil.
    fails_at(
        POD,
        "metadata: {namespace: '?*'}",
        "/metadata/namespace/",
        "resource value '<nil>' does not match '?*' at path /metadata/namespace/",
    );
    // `*` asks for any value, and says so when there is none.
    assert_eq!(check(POD, "metadata: {name: '*'}"), Ok(()));
    fails_at(
        POD,
        "metadata: {namespace: '*'}",
        "/metadata/",
        "/metadata//namespace not found",
    );
    // Structures that differ.
    fails_at(
        POD,
        "metadata: {name: {first: a}}",
        "/metadata/name/",
        "pattern and resource have different structures. Path: /metadata/name/. Expected map[string]interface {}, found string",
    );
    fails_at(
        POD,
        "spec: {nodeSelector: {a: b}}",
        "/spec/nodeSelector/",
        "pattern and resource have different structures. Path: /spec/nodeSelector/. Expected map[string]interface {}, found <nil>",
    );
    fails_at(
        POD,
        "metadata: {labels: [a]}",
        "/metadata/labels/",
        "validation rule failed at path /metadata/labels/, resource does not satisfy the expected overlay pattern",
    );
    assert_eq!(check(POD, "spec: {hostNetwork: false}"), Ok(()));
    // A missing value is nil: only `null` (and the patterns nil reads as 0 for) match it.
    assert_eq!(check(POD, "spec: {hostPID: null}"), Ok(()));
    fails_at(
        POD,
        "spec: {hostPID: false}",
        "/spec/hostPID/",
        "resource value '<nil>' does not match 'false' at path /spec/hostPID/",
    );
}

#[test]
fn lists_apply_their_element_to_every_element() {
    assert_eq!(check(POD, "spec: {containers: [{name: '?*'}]}"), Ok(()));
    fails_at(
        POD,
        "spec: {containers: [{image: '!*:latest'}]}",
        "/spec/containers/1/image/",
        "resource value 'envoy:latest' does not match '!*:latest' at path /spec/containers/1/image/",
    );
    // Only the first element of a list pattern counts.
    assert_eq!(
        check(POD, "spec: {containers: [{name: '?*'}, {name: nothing}]}"),
        Ok(())
    );
    // A leaf list pattern applies to every element of a leaf list.
    assert_eq!(check("a: [1, 2, 3]", "a: ['>0']"), Ok(()));
    fails_at(
        "a: [1, 2, 3]",
        "a: ['<3']",
        "/a/",
        "resource value '[1 2 3]' does not match '<3' at path /a/",
    );
    // A leaf against a list checks every element.
    assert_eq!(check("a: [x1, x2]", "a: 'x*'"), Ok(()));
    // An empty resource list matches any list of maps.
    assert_eq!(check("a: []", "a: [{b: c}]"), Ok(()));
    fails_at("a: [1]", "a: []", "/a/", "pattern Array empty");
    // Lists of lists go position by position.
    assert_eq!(check("a: [[1], [2]]", "a: [['>0'], ['>1']]"), Ok(()));
    assert_eq!(
        check("a: [[1]]", "a: [['>0'], ['>1']]"),
        Err((
            false,
            String::new(),
            "validate Array failed, array length mismatch, resource Array len is 1 and pattern Array len is 2".to_string()
        ))
    );
}

#[test]
fn numbers_booleans_and_nil() {
    let r = "a: 80\nb: '80'\nc: 1.5\nd: true\ne: ''\nf: 0";
    assert_eq!(check(r, "a: 80"), Ok(()));
    assert_eq!(check(r, "b: 80"), Ok(()));
    assert_eq!(check(r, "a: '80'"), Ok(()));
    assert_eq!(check(r, "c: 1.5"), Ok(()));
    assert_eq!(check(r, "c: '>1'"), Ok(()));
    assert_eq!(check(r, "d: true"), Ok(()));
    assert_eq!(check(r, "d: 'true'"), Ok(()));
    assert_eq!(check(r, "e: null"), Ok(()));
    assert_eq!(check(r, "f: null"), Ok(()));
    assert_eq!(check(r, "missing: null"), Ok(()));
    fails_at(
        r,
        "a: null",
        "/a/",
        "resource value '80' does not match '<nil>' at path /a/",
    );
    fails_at(
        r,
        "c: 2.25",
        "/c/",
        "resource value '1.5' does not match '2.25' at path /c/",
    );
    fails_at(
        r,
        "d: false",
        "/d/",
        "resource value 'true' does not match 'false' at path /d/",
    );
}

#[test]
fn operators_on_quantities_durations_and_ranges() {
    assert_eq!(
        check(
            POD,
            "spec: {containers: [{=(resources): {=(limits): {=(memory): '<=1Gi'}}}]}"
        ),
        Ok(())
    );
    fails_at(
        POD,
        "spec: {containers: [{=(resources): {=(limits): {=(memory): '<256Mi'}}}]}",
        "/spec/containers/0/resources/limits/memory/",
        "resource value '512Mi' does not match '<256Mi' at path /spec/containers/0/resources/limits/memory/",
    );
    assert_eq!(check("t: 90s", "t: '>1m'"), Ok(()));
    assert_eq!(check("t: 90s", "t: '1m-2m'"), Ok(()));
    assert_eq!(check("t: 90s", "t: '2m!-3m'"), Ok(()));
    assert_eq!(check("n: 5", "n: '1-10'"), Ok(()));
    assert_eq!(check("n: 5", "n: '>1 & <10'"), Ok(()));
    assert_eq!(check("n: 5", "n: '<1 | 5'"), Ok(()));
    assert_eq!(check("n: nginx", "n: 'envoy | ngin?'"), Ok(()));
}

#[test]
fn conditional_anchor_skips_when_it_does_not_hold() {
    // The condition holds: the rest must match.
    assert_eq!(
        check(POD, "metadata: {labels: {(app): web, tier: front}}"),
        Ok(())
    );
    fails_at(
        POD,
        "metadata: {labels: {(app): web, tier: back}}",
        "/metadata/labels/tier/",
        "resource value 'front' does not match 'back' at path /metadata/labels/tier/",
    );
    // It does not: skip.
    skips(
        POD,
        "metadata: {labels: {(app): db, tier: back}}",
        "conditional anchor mismatch: resource value 'web' does not match 'db' at path /metadata/labels/app/",
    );
    skips(
        POD,
        "metadata: {labels: {(team): a, tier: back}}",
        "conditional anchor mismatch: conditional anchor key doesn't exist in the resource",
    );
    // In a list: elements whose condition does not hold are left alone.
    fails_at(
        POD,
        "spec: {containers: [{(name): b, image: 'nginx:*'}]}",
        "/spec/containers/1/image/",
        "resource value 'envoy:latest' does not match 'nginx:*' at path /spec/containers/1/image/",
    );
    assert_eq!(
        check(POD, "spec: {containers: [{(name): a, image: 'nginx:*'}]}"),
        Ok(())
    );
    // No element satisfies the condition: skip, with every element's reason.
    skips(
        POD,
        "spec: {containers: [{(name): c, image: x}]}",
        "conditional anchor mismatch: resource value 'a' does not match 'c' at path /spec/containers/0/name/; conditional anchor mismatch: resource value 'b' does not match 'c' at path /spec/containers/1/name/",
    );
    // Two conditions, one skipping: the map skips though the other applied.
    skips(
        POD,
        "metadata: {labels: {(app): web, (tier): back, x: y}}",
        "conditional anchor mismatch: resource value 'front' does not match 'back' at path /metadata/labels/tier/",
    );
}

#[test]
fn equality_anchor_checks_only_present_keys() {
    assert_eq!(
        check(
            POD,
            "spec: {containers: [{=(securityContext): {=(privileged): true}}]}"
        ),
        Ok(())
    );
    fails_at(
        POD,
        "spec: {containers: [{=(securityContext): {=(privileged): false}}]}",
        "/spec/containers/1/securityContext/privileged/",
        "resource value 'true' does not match 'false' at path /spec/containers/1/securityContext/privileged/",
    );
    assert_eq!(check(POD, "spec: {=(hostPID): true}"), Ok(()));
}

#[test]
fn existence_anchor_needs_one_matching_element() {
    assert_eq!(check(POD, "spec: {^(containers): [{name: b}]}"), Ok(()));
    assert_eq!(
        check(POD, "spec: {^(containers): [{name: a}, {name: b}]}"),
        Ok(())
    );
    fails_at(
        POD,
        "spec: {^(containers): [{name: c}]}",
        "/spec/containers/",
        "existence anchor validation failed at path /spec/containers/",
    );
    // Absent: nothing to check.
    assert_eq!(check(POD, "spec: {^(volumes): [{name: c}]}"), Ok(()));
    fails_at(
        POD,
        "spec: {^(hostNetwork): [{name: c}]}",
        "/spec/hostNetwork/",
        "invalid resource type bool: Existence ^ () anchor can be used only on list/array type resource",
    );
}

#[test]
fn negation_anchor_refuses_the_key() {
    assert_eq!(check(POD, "spec: {X(hostPID): null}"), Ok(()));
    fails_at(
        POD,
        "spec: {X(hostNetwork): null}",
        "/spec/hostNetwork/",
        "negation anchor matched in resource: /spec/hostNetwork/ is not allowed",
    );
    fails_at(
        POD,
        "spec: {containers: [{X(securityContext): null}]}",
        "/spec/containers/1/securityContext/",
        "negation anchor matched in resource: /spec/containers/1/securityContext/ is not allowed",
    );
}

#[test]
fn global_anchor_skips_the_whole_rule() {
    // The global condition holds for container b only, which then fails.
    fails_at(
        POD,
        "spec: {containers: [{<(image): 'envoy:*', name: a}]}",
        "/spec/containers/1/name/",
        "resource value 'b' does not match 'a' at path /spec/containers/1/name/",
    );
    // A global condition that fails skips the rule...
    skips(
        POD,
        "spec: {<(hostNetwork): true}\nmetadata: {name: x}",
        "global anchor mismatch: resource value 'false' does not match 'true' at path /spec/hostNetwork/",
    );
    // ... except in a list where it held for another element: that element applied.
    fails_at(
        POD,
        "spec: {containers: [{<(image): 'nginx:*'}]}\nmetadata: {name: x}",
        "/metadata/name/",
        "resource value 'web' does not match 'x' at path /metadata/name/",
    );
}

#[test]
fn a_missing_anchor_key_turns_a_failure_into_an_error() {
    assert_eq!(
        check(
            POD,
            "spec: {^(containers): [{(livenessProbe): {periodSeconds: 10}}]}"
        ),
        Err((
            false,
            String::new(),
            "existence anchor validation failed at path /spec/containers/".to_string()
        ))
    );
}

#[test]
fn wildcard_keys_in_labels_take_the_resource_key() {
    assert_eq!(check(POD, "metadata: {labels: {'ap*': web}}"), Ok(()));
    fails_at(
        POD,
        "metadata: {labels: {'ap*': db}}",
        "/metadata/labels/app/",
        "resource value 'web' does not match 'db' at path /metadata/labels/app/",
    );
    // Anchors keep their kind.
    assert_eq!(check(POD, "metadata: {labels: {'=(ti*)': front}}"), Ok(()));
    // No resource key matches: the key stays as written.
    fails_at(
        POD,
        "metadata: {labels: {'team*': '?*'}}",
        "/metadata/labels/team*/",
        "resource value '<nil>' does not match '?*' at path /metadata/labels/team*/",
    );
    // Under an anchored metadata key too.
    assert_eq!(check(POD, "(metadata): {labels: {'ap*': web}}"), Ok(()));
    // Elsewhere, keys are literal.
    fails_at(
        POD,
        "spec: {'host*': false}",
        "/spec/host*/",
        "resource value '<nil>' does not match 'false' at path /spec/host*/",
    );
}

#[test]
fn anchors_go_first_sorted_then_nested_anchors() {
    // `(name)` fails first (anchors before plain keys); the skip wins over the later failure.
    skips(
        POD,
        "metadata: {(name): api, labels: {app: x}}",
        "conditional anchor mismatch: resource value 'web' does not match 'api' at path /metadata/name/",
    );
    // Keys with anchors below go before plain keys: `spec` (anchors inside) is checked before
    // `metadata`.
    skips(
        POD,
        "metadata: {name: api}\nspec: {(hostNetwork): true}",
        "conditional anchor mismatch: resource value 'false' does not match 'true' at path /spec/hostNetwork/",
    );
    // Plain keys in key order.
    fails_at(
        POD,
        "metadata: {name: api}\nspec: {hostNetwork: true}",
        "/metadata/name/",
        "resource value 'web' does not match 'api' at path /metadata/name/",
    );
}

#[test]
fn any_pattern_numbers_are_floats() {
    let node = compile(&yaml("a: 1000000"), true).unwrap();
    let m = match_pattern(&yaml("a: 5"), &node).unwrap_err();
    assert_eq!(
        m.message,
        "resource value '5' does not match '1e+06' at path /a/"
    );
    assert!(match_pattern(&yaml("a: 1000000"), &node).is_ok());
}

#[test]
fn load_checks() {
    assert!(matches!(
        compile(&yaml("a: {+(b): c}"), false),
        Err(CompileError::UnsupportedAnchor { .. })
    ));
    assert!(matches!(
        compile(&yaml("a: {^(b): c}"), false),
        Err(CompileError::ExistenceNotList { .. })
    ));
    assert!(matches!(
        compile(&yaml("a: {^(b): []}"), false),
        Err(CompileError::ExistenceEmpty { .. })
    ));
    // Built without the parser (whose own limit is the same).
    let mut deep = Json::from(1);
    for _ in 0..MAX_DEPTH + 2 {
        let mut o = sonic_rs::Object::new();
        o.insert(&"a", deep);
        deep = Json::from(o);
    }
    assert!(matches!(
        compile(&deep, false),
        Err(CompileError::TooDeep { .. })
    ));
    assert_eq!(
        substitution_in_json(&yaml("a: {b: '{{ request.object.x }}'}")),
        Some(Substitution::Variables)
    );
    assert_eq!(
        substitution_in_json(&yaml("a: {'$(./../x)': b}")),
        Some(Substitution::References)
    );
    assert_eq!(substitution_in_json(&yaml("a: {b: c}")), None);
}

#[test]
fn deep_resources_and_wide_lists_are_bounded_by_the_pattern() {
    let mut deep = String::from("1");
    for _ in 0..60 {
        deep = format!("{{\"a\":{deep}}}");
    }
    let resource: Json = sonic_rs::from_str(&deep).unwrap();
    assert!(check_json(&resource, "a: {a: {a: '*'}}").is_ok());
    let wide = format!("{{\"a\":[{}]}}", vec!["{\"b\":1}"; 10_000].join(","));
    let resource: Json = sonic_rs::from_str(&wide).unwrap();
    assert!(check_json(&resource, "a: [{b: '>0'}]").is_ok());
}

fn check_json(resource: &Json, pattern: &str) -> Result<(), Mismatch> {
    match_pattern(resource, &compile(&yaml(pattern), false).unwrap())
}
