//! Properties of `mutation::diff` and `mutation::json_patch` over generated documents:
//! - the diff of two documents, applied to the first, gives the second, both through
//!   [`apply`] and through a strict RFC 6902 applier written here (kube-apiserver applies a
//!   webhook's patch with RFC 6902 semantics, so the diff must not lean on evanphx's leniency);
//! - applying random patches never panics, and is atomic: a patch applies as a whole exactly
//!   when its operations apply one by one, to the same result.
//!
//! `diff_speed_on_a_large_pod` measures diff and apply on 51 KB Pods; run it in release:
//! `cargo test -p celer-policy --release --test json_patch -- --ignored --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use celer_cel::Json;
use celer_policy::mutation::diff::{diff, to_json, to_text};
use celer_policy::mutation::json_patch::{Applied, PatchOp, apply, from_json};
use proptest::prelude::*;
use sonic_rs::{JsonNumberTrait, ValueRef};

/// A JSON document the tests build and edit (objects keep unique keys in order).
#[derive(Clone, Debug, PartialEq)]
enum T {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<T>),
    Obj(Vec<(String, T)>),
}

impl T {
    fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            T::Null => out.push_str("null"),
            T::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            T::Int(i) => out.push_str(&i.to_string()),
            T::Float(f) => out.push_str(&sonic_rs::to_string(f).unwrap()),
            T::Str(s) => out.push_str(&sonic_rs::to_string(s).unwrap()),
            T::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            T::Obj(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&sonic_rs::to_string(k).unwrap());
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    fn json(&self) -> Json {
        sonic_rs::from_str(&self.text()).unwrap()
    }

    fn from_json(json: &Json) -> T {
        match json.as_ref() {
            ValueRef::Null => T::Null,
            ValueRef::Bool(b) => T::Bool(b),
            ValueRef::Number(n) => match n.as_i64() {
                Some(i) => T::Int(i),
                None => T::Float(n.as_f64().unwrap()),
            },
            ValueRef::String(s) => T::Str(s.to_string()),
            ValueRef::Array(items) => T::Arr(items.iter().map(T::from_json).collect()),
            ValueRef::Object(fields) => T::Obj(
                fields
                    .iter()
                    .map(|(k, v)| (k.to_string(), T::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Equality with objects compared regardless of member order.
    fn same(&self, other: &T) -> bool {
        match (self, other) {
            (T::Arr(a), T::Arr(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y)),
            (T::Obj(a), T::Obj(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(k, v)| {
                        b.iter()
                            .find(|(kb, _)| kb == k)
                            .is_some_and(|(_, w)| v.same(w))
                    })
            }
            (a, b) => a == b,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Generation

/// Keys that need escaping, look like indices or like `-`, collide often.
const KEYS: &[&str] = &["a", "b", "c", "a/b", "~", "~1", "", "-", "0", "1"];

fn leaf() -> impl Strategy<Value = T> {
    prop_oneof![
        Just(T::Null),
        any::<bool>().prop_map(T::Bool),
        (-3i64..4).prop_map(T::Int),
        prop::sample::select(vec![0.5, -2.25, 1e300]).prop_map(T::Float),
        prop::sample::select(vec!["x", "y", "", "<&>"]).prop_map(|s| T::Str(s.to_string())),
    ]
}

fn tree() -> impl Strategy<Value = T> {
    leaf().prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(T::Arr),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|entries| {
                let mut unique: Vec<(String, T)> = Vec::new();
                for (k, v) in entries {
                    if !unique.iter().any(|(u, _)| u == k) {
                        unique.push((k.to_string(), v));
                    }
                }
                T::Obj(unique)
            }),
        ]
    })
}

/// One edit somewhere in a tree: `route` picks the way down, `kind` what to do there.
#[derive(Clone, Debug)]
struct Edit {
    route: Vec<usize>,
    kind: u8,
    value: T,
    key: &'static str,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        prop::collection::vec(0usize..8, 0..5),
        0u8..6,
        tree(),
        prop::sample::select(KEYS),
    )
        .prop_map(|(route, kind, value, key)| Edit {
            route,
            kind,
            value,
            key,
        })
}

fn apply_edit(tree: &mut T, edit: &Edit) {
    edit_at(tree, &edit.route, edit);
}

fn edit_at(node: &mut T, route: &[usize], edit: &Edit) {
    if let Some((&step, rest)) = route.split_first() {
        match node {
            T::Arr(items) if !items.is_empty() => {
                let len = items.len();
                return edit_at(&mut items[step % len], rest, edit);
            }
            T::Obj(entries) if !entries.is_empty() => {
                let len = entries.len();
                return edit_at(&mut entries[step % len].1, rest, edit);
            }
            _ => {}
        }
    }
    let at = edit.route.last().copied().unwrap_or(0);
    match (node, edit.kind) {
        (T::Arr(items), 1) => {
            let len = items.len();
            items.insert(at % (len + 1), edit.value.clone());
        }
        (T::Arr(items), 2) if !items.is_empty() => {
            let len = items.len();
            items.remove(at % len);
        }
        (T::Arr(items), 3) => items.push(edit.value.clone()),
        (T::Obj(entries), 1 | 3) => match entries.iter_mut().find(|(k, _)| k == edit.key) {
            Some((_, v)) => *v = edit.value.clone(),
            None => entries.push((edit.key.to_string(), edit.value.clone())),
        },
        (T::Obj(entries), 2) if !entries.is_empty() => {
            let len = entries.len();
            entries.remove(at % len);
        }
        (node, 0) => *node = edit.value.clone(),
        _ => {}
    }
}

/// A document: an object at the root, as Kubernetes objects are (evanphx cannot replace the
/// root by a scalar).
fn object_root(tree: T) -> T {
    match tree {
        T::Obj(_) => tree,
        other => T::Obj(vec![("a".to_string(), other)]),
    }
}

fn document() -> impl Strategy<Value = T> {
    tree().prop_map(object_root)
}

/// Two documents, the second mostly an edited copy of the first (sometimes unrelated).
fn pair() -> impl Strategy<Value = (T, T)> {
    prop_oneof![
        4 => (document(), prop::collection::vec(edit(), 0..5)).prop_map(|(from, edits)| {
            let mut to = from.clone();
            for e in &edits {
                apply_edit(&mut to, e);
            }
            (from, object_root(to))
        }),
        1 => (document(), document()),
    ]
}

// ---------------------------------------------------------------------------------------------
// A strict RFC 6902 applier for add/remove/replace, independent of the crate

fn tokens(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or_else(|| format!("pointer {pointer:?} does not start with /"))?;
    rest.split('/')
        .map(|raw| {
            let mut out = String::new();
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                if c == '~' {
                    match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return Err(format!("bad escape in {raw:?}")),
                    }
                } else {
                    out.push(c);
                }
            }
            Ok(out)
        })
        .collect()
}

fn rfc_index(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if token == "-" && allow_end {
        return Ok(len);
    }
    let valid = token == "0"
        || (!token.is_empty()
            && !token.starts_with('0')
            && token.bytes().all(|b| b.is_ascii_digit()));
    let index: usize = if valid {
        token.parse().map_err(|_| format!("index {token:?}"))?
    } else {
        return Err(format!("index {token:?}"));
    };
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if index > max || (!allow_end && len == 0) {
        return Err(format!("index {index} out of bounds for {len}"));
    }
    Ok(index)
}

fn rfc_apply(doc: &mut T, op: &PatchOp) -> Result<(), String> {
    let (path, value) = match op {
        PatchOp::Add { path, value } | PatchOp::Replace { path, value } => {
            (path, Some(T::from_json(value)))
        }
        PatchOp::Remove { path } => (path, None),
        other => return Err(format!("diff produced {other:?}")),
    };
    let mut tokens = tokens(path)?;
    let Some(last) = tokens.pop() else {
        return match (op, value) {
            (PatchOp::Replace { .. }, Some(v)) => {
                *doc = v;
                Ok(())
            }
            _ => Err(format!("{} of the root", op.name())),
        };
    };
    let mut node = doc;
    for token in &tokens {
        node = match node {
            T::Obj(entries) => entries
                .iter_mut()
                .find(|(k, _)| k == token)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("no member {token:?}"))?,
            T::Arr(items) => {
                let i = rfc_index(token, items.len(), false)?;
                &mut items[i]
            }
            _ => return Err(format!("{token:?} inside a scalar")),
        };
    }
    match (node, op, value) {
        (T::Obj(entries), PatchOp::Add { .. }, Some(v)) => {
            match entries.iter_mut().find(|(k, _)| *k == last) {
                Some((_, slot)) => *slot = v,
                None => entries.push((last, v)),
            }
        }
        (T::Obj(entries), PatchOp::Replace { .. }, Some(v)) => {
            let (_, slot) = entries
                .iter_mut()
                .find(|(k, _)| *k == last)
                .ok_or_else(|| format!("replace of missing member {last:?}"))?;
            *slot = v;
        }
        (T::Obj(entries), PatchOp::Remove { .. }, None) => {
            let at = entries
                .iter()
                .position(|(k, _)| *k == last)
                .ok_or_else(|| format!("remove of missing member {last:?}"))?;
            entries.remove(at);
        }
        (T::Arr(items), PatchOp::Add { .. }, Some(v)) => {
            let i = rfc_index(&last, items.len(), true)?;
            items.insert(i, v);
        }
        (T::Arr(items), PatchOp::Replace { .. }, Some(v)) => {
            let i = rfc_index(&last, items.len(), false)?;
            items[i] = v;
        }
        (T::Arr(items), PatchOp::Remove { .. }, None) => {
            let i = rfc_index(&last, items.len(), false)?;
            items.remove(i);
        }
        _ => return Err(format!("{} at {path:?} in a scalar", op.name())),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Random patches

/// Paths over the key vocabulary, with the index forms evanphx reads.
fn pointer() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "a",
        "b",
        "c",
        "a~1b",
        "~0",
        "~01",
        "",
        "-",
        "0",
        "1",
        "2",
        "-1",
        "-2",
        "01",
        "+1",
        "x",
        "99999999999",
        "99999999999999999999",
    ]);
    prop_oneof![
        8 => prop::collection::vec(token, 1..4).prop_map(|t| format!("/{}", t.join("/"))),
        1 => Just(String::new()),
        1 => Just("a/b".to_string()),
    ]
}

/// Every pointer into the document, plus one past each array's end and a new member of each
/// object.
fn pointers(tree: &T) -> Vec<String> {
    fn walk(node: &T, at: &str, out: &mut Vec<String>) {
        out.push(at.to_string());
        match node {
            T::Arr(items) => {
                out.push(format!("{at}/-"));
                out.push(format!("{at}/{}", items.len()));
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}/{i}"), out);
                }
            }
            T::Obj(entries) => {
                out.push(format!("{at}/new"));
                for (k, v) in entries {
                    let escaped = k.replace('~', "~0").replace('/', "~1");
                    walk(v, &format!("{at}/{escaped}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(tree, "", &mut out);
    out
}

fn patch_op(existing: Vec<String>) -> impl Strategy<Value = PatchOp> {
    let path = prop_oneof![3 => prop::sample::select(existing), 1 => pointer()];
    (0u8..6, path.clone(), path, tree()).prop_map(|(kind, path, from, value)| {
        let value = value.json();
        match kind {
            0 => PatchOp::Add { path, value },
            1 => PatchOp::Remove { path },
            2 => PatchOp::Replace { path, value },
            3 => PatchOp::Move { from, path },
            4 => PatchOp::Copy { from, path },
            _ => PatchOp::Test { path, value },
        }
    })
}

/// A document and a patch for it, mostly on locations that exist.
fn doc_and_patch() -> impl Strategy<Value = (T, Vec<PatchOp>)> {
    tree().prop_flat_map(|doc| {
        let existing = pointers(&doc);
        (Just(doc), prop::collection::vec(patch_op(existing), 1..5))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn diff_turns_one_document_into_the_other((from, to) in pair()) {
        let (from_json, to_json_doc) = (from.json(), to.json());
        let ops = diff(&from_json, &to_json_doc);

        // Through the crate's own apply.
        let mut patched = from_json.clone();
        prop_assert_eq!(apply(&mut patched, &ops), Ok(Applied::Patched));
        prop_assert!(T::from_json(&patched).same(&to), "patch {}", to_text(&ops).unwrap());

        // Through a strict RFC 6902 applier.
        let mut strict = from.clone();
        for op in &ops {
            if let Err(e) = rfc_apply(&mut strict, op) {
                return Err(TestCaseError::fail(format!("{e}: patch {}", to_text(&ops).unwrap())));
            }
        }
        prop_assert!(strict.same(&to), "strict: patch {}", to_text(&ops).unwrap());

        // The text form reads back as the same patch.
        prop_assert_eq!(from_json_ops(&ops), ops.clone());

        // Nothing to do between equal documents.
        prop_assert!(diff(&to_json_doc, &to_json_doc).is_empty());
        prop_assert!(diff(&to_json_doc, &to.json()).is_empty());
    }

    #[test]
    fn patches_apply_atomically((doc, ops) in doc_and_patch()) {
        let original = doc.json();
        let mut whole = original.clone();
        let result = apply(&mut whole, &ops);

        // One by one, stopping at the first failure.
        let mut stepwise = original.clone();
        let mut outcome = Ok(Applied::Patched);
        for op in &ops {
            match apply(&mut stepwise, std::slice::from_ref(op)) {
                Ok(Applied::Patched) => {}
                other => {
                    outcome = other;
                    break;
                }
            }
        }
        prop_assert_eq!(&result, &outcome);
        match result {
            Ok(Applied::Patched) => {
                prop_assert!(T::from_json(&whole).same(&T::from_json(&stepwise)));
            }
            _ => prop_assert_eq!(&whole, &original, "a failed patch changed the document"),
        }
    }
}

fn from_json_ops(ops: &[PatchOp]) -> Vec<PatchOp> {
    from_json(&to_json(ops).unwrap()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Speed

/// A Pod of about 51 KB shaped like the project's benchmark Pod
/// (`crates/cel/benches/support/pods.rs`): 12 containers and 2 init containers with 22 env
/// vars each, probes, security contexts, 26 volumes, and `annotations` annotations (51 there).
fn reference_pod(annotations: usize) -> String {
    let annotations: Vec<String> = (0..annotations)
        .map(|k| {
            format!(
                r#""example.com/annotation-{k:02}": "owner=team-{k:02},tier=backend,zone=a,revision={}""#,
                1000 + k
            )
        })
        .collect();
    let container = |kind: &str, i: usize| {
        let name = format!("{kind}-{i:02}");
        let env: Vec<String> = (0..22)
            .map(|j| match j % 11 {
                3 => r#"{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}"#.to_string(),
                7 => format!(
                    r#"{{"name": "APP_SETTING_{j:02}", "valueFrom": {{"configMapKeyRef": {{"name": "app-settings", "key": "{name}.setting-{j:02}"}}}}}}"#
                ),
                _ => format!(
                    r#"{{"name": "APP_SETTING_{j:02}", "value": "{name}.settings.example.internal/v{j:02}/value"}}"#
                ),
            })
            .collect();
        format!(
            r#"{{"name": "{name}", "image": "registry.example.com/platform/{name}:v1.{i}.3",
                "imagePullPolicy": "IfNotPresent", "command": ["/usr/local/bin/server"],
                "args": ["--listen=:8080", "--metrics=:9090", "--log-format=json"],
                "ports": [{{"name": "http", "containerPort": {port}, "protocol": "TCP"}},
                          {{"name": "metrics", "containerPort": 9090, "protocol": "TCP"}}],
                "env": [{env}],
                "resources": {{"requests": {{"cpu": "100m", "memory": "128Mi"}},
                               "limits": {{"cpu": "500m", "memory": "256Mi"}}}},
                "volumeMounts": [{{"name": "vol-{i:02}", "mountPath": "/var/run/app/vol-{i:02}", "readOnly": true}}],
                "livenessProbe": {{"httpGet": {{"path": "/healthz", "port": 8080}}, "periodSeconds": 10}},
                "readinessProbe": {{"httpGet": {{"path": "/readyz", "port": 8080}}, "periodSeconds": 5}},
                "startupProbe": {{"httpGet": {{"path": "/startupz", "port": 8080}}, "failureThreshold": 30, "periodSeconds": 2}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "securityContext": {{"allowPrivilegeEscalation": false, "privileged": false,
                    "readOnlyRootFilesystem": true, "runAsNonRoot": true, "runAsUser": 10001,
                    "capabilities": {{"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
                    "seccompProfile": {{"type": "RuntimeDefault"}}, "procMount": "Default"}}}}"#,
            port = 8080 + i,
            env = env.join(", "),
        )
    };
    let containers: Vec<String> = (0..12).map(|i| container("app", i)).collect();
    let init: Vec<String> = (0..2).map(|i| container("init", i)).collect();
    let volumes: Vec<String> = (0..26)
        .map(|i| match i % 4 {
            0 => format!(
                r#"{{"name": "vol-{i:02}", "configMap": {{"name": "app-config-{i:02}", "defaultMode": 420, "items": [{{"key": "settings.yaml", "path": "settings.yaml"}}]}}}}"#
            ),
            1 => format!(r#"{{"name": "vol-{i:02}", "secret": {{"secretName": "app-tls-{i:02}", "defaultMode": 256}}}}"#),
            2 => format!(
                r#"{{"name": "vol-{i:02}", "projected": {{"defaultMode": 420, "sources": [
                    {{"serviceAccountToken": {{"expirationSeconds": 3607, "path": "token"}}}},
                    {{"configMap": {{"name": "kube-root-ca.crt", "items": [{{"key": "ca.crt", "path": "ca.crt"}}]}}}},
                    {{"downwardAPI": {{"items": [{{"path": "namespace", "fieldRef": {{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}]}}}}]}}}}"#
            ),
            _ => format!(r#"{{"name": "vol-{i:02}", "emptyDir": {{"sizeLimit": "512Mi"}}}}"#),
        })
        .collect();
    format!(
        r#"{{"apiVersion": "v1", "kind": "Pod",
            "metadata": {{"name": "big", "namespace": "prod", "uid": "0c7e6a7b-6d0e-4a39-9c61-1b2f1f7b9a10",
                "labels": {{"app": "big", "tier": "backend"}},
                "annotations": {{{annotations}}}}},
            "spec": {{"serviceAccountName": "app", "automountServiceAccountToken": false,
                "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
                "hostNetwork": false, "hostPID": false, "hostIPC": false,
                "nodeSelector": {{"kubernetes.io/os": "linux"}},
                "tolerations": [{{"key": "dedicated", "operator": "Equal", "value": "apps", "effect": "NoSchedule"}}],
                "securityContext": {{"runAsNonRoot": true, "runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001,
                    "seccompProfile": {{"type": "RuntimeDefault"}}}},
                "initContainers": [{init}],
                "containers": [{containers}],
                "volumes": [{volumes}]}}}}"#,
        annotations = annotations.join(", "),
        init = init.join(", "),
        containers = containers.join(", "),
        volumes = volumes.join(", "),
    )
}

/// A denser Pod of about 51 KB: 19 containers with 40 small env vars each (more, smaller
/// nodes per KB than `reference_pod`).
fn dense_pod(annotations: usize) -> String {
    let annotations: Vec<String> = (0..annotations)
        .map(|i| format!(r#""sidecar.example.com/setting-{i}": "value-{i}-abcdefghijklmnop""#))
        .collect();
    let containers: Vec<String> = (0..19)
        .map(|c| {
            let env: Vec<String> = (0..40)
                .map(|e| format!(r#"{{"name": "ENV_{c}_{e}", "value": "some-config-value-{e}"}}"#))
                .collect();
            format!(
                r#"{{"name": "c{c}", "image": "registry.example.com/team/app-{c}:1.2.{c}",
                    "ports": [{{"containerPort": {port}, "protocol": "TCP"}}],
                    "env": [{env}],
                    "resources": {{"limits": {{"cpu": "500m", "memory": "256Mi"}},
                                   "requests": {{"cpu": "100m", "memory": "128Mi"}}}},
                    "volumeMounts": [{{"name": "data", "mountPath": "/data/{c}"}}],
                    "securityContext": {{"runAsNonRoot": true, "readOnlyRootFilesystem": true}}}}"#,
                port = 8000 + c,
                env = env.join(", "),
            )
        })
        .collect();
    format!(
        r#"{{"apiVersion": "v1", "kind": "Pod",
            "metadata": {{"name": "big", "namespace": "prod", "uid": "0c7e6a7b-6d0e-4a39-9c61-1b2f1f7b9a10",
                "labels": {{"app": "big", "tier": "backend"}},
                "annotations": {{{annotations}}}}},
            "spec": {{"containers": [{containers}],
                "volumes": [{{"name": "data", "emptyDir": {{}}}}],
                "nodeSelector": {{"kubernetes.io/os": "linux"}}}}}}"#,
        annotations = annotations.join(", "),
        containers = containers.join(", "),
    )
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
fn a_large_pod_diffs_to_one_add_per_annotation() {
    for (from, to) in [
        (reference_pod(51), reference_pod(115)),
        (dense_pod(2), dense_pod(66)),
    ] {
        let from: Json = sonic_rs::from_str(&from).unwrap();
        let to: Json = sonic_rs::from_str(&to).unwrap();
        let ops = diff(&from, &to);
        assert_eq!(ops.len(), 64);
        assert!(ops.iter().all(|op| matches!(op, PatchOp::Add { .. })));
        let mut patched = from.clone();
        assert_eq!(apply(&mut patched, &ops), Ok(Applied::Patched));
        assert!(T::from_json(&patched).same(&T::from_json(&to)));
    }
}

/// Median time of `f` over `rounds` runs (`ROUNDS` in the environment overrides).
fn time<R>(rounds: usize, mut f: impl FnMut() -> R) -> Duration {
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(rounds);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        std::hint::black_box(f());
        times.push(start.elapsed());
    }
    median(times)
}

#[test]
#[ignore = "timing; run in release"]
fn diff_speed_on_a_large_pod() {
    for (shape, from_text, to_text_) in [
        ("reference", reference_pod(51), reference_pod(115)),
        ("dense", dense_pod(2), dense_pod(66)),
    ] {
        let from: Json = sonic_rs::from_str(&from_text).unwrap();
        let to: Json = sonic_rs::from_str(&to_text_).unwrap();
        let ops = diff(&from, &to);
        assert_eq!(ops.len(), 64);
        println!(
            "{shape} Pod, {} bytes, 64 annotations added ({} bytes):",
            from_text.len(),
            to_text_.len()
        );
        let diff_time = time(2000, || diff(&from, &to));
        println!("  diff: {diff_time:?}");
        println!(
            "  diff of equal documents: {:?}",
            time(2000, || diff(&from, &from))
        );
        println!(
            "  to_text of the 64 operations: {:?}",
            time(2000, || to_text(&ops).unwrap())
        );
        let one = vec![PatchOp::Add {
            path: "/metadata/annotations/x".into(),
            value: sonic_rs::from_str(r#""y""#).unwrap(),
        }];
        let apply_one = time(2000, || {
            let mut doc = from.clone();
            apply(&mut doc, &one).unwrap();
            doc
        });
        println!("  apply of one add: {apply_one:?}");
        let apply_all = time(2000, || {
            let mut doc = from.clone();
            apply(&mut doc, &ops).unwrap();
            doc
        });
        println!("  apply of the 64 adds: {apply_all:?}");
        println!(
            "  parse of the Pod: {:?}",
            time(2000, || sonic_rs::from_str::<Json>(&from_text).unwrap())
        );
        if shape == "reference" && !cfg!(debug_assertions) {
            assert!(diff_time < Duration::from_micros(50), "{diff_time:?}");
        }
    }
}
