//! The in-place merge against the merge on JSON values (`merge_typed`, written out and parsed
//! again, and `!=` against the live object), on generated Pods and Deployments and on
//! sequences of merges into one patch tree: the same objects (key order included), the same
//! errors, the same "did it change".

use super::*;
use crate::mutation::patched::Patched;

/// What a merge did before it was done in place: every step on JSON values.
fn reference(
    live: &Json,
    patch: &Json,
    kind: (&str, &str, &str),
) -> Result<Json, ApplyConfigurationError> {
    let root = kind_type(kind);
    let stamped = stamp_kind(patch, kind)?;
    let patch = stamped.as_ref().unwrap_or(patch);
    type_patch(patch, root)?;
    let atomics = find_atomics(patch, root)?;
    if !atomics.is_empty() {
        return Err(ApplyConfigurationError::AtomicMutation(atomics));
    }
    type_live(live, root)?;
    merge_typed(live, patch, root)
}

/// A kind, and a generator of its objects.
type KindAndObjects = (
    (&'static str, &'static str, &'static str),
    fn(&mut Rng) -> String,
);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.below(of.len())]
    }

    /// Sometimes one of the values every field may meet (null, empty containers, a scalar
    /// of the wrong kind), mostly `f()`.
    fn or_odd(&mut self, f: impl FnOnce(&mut Rng) -> String) -> String {
        match self.below(12) {
            0 => "null".into(),
            1 => "{}".into(),
            2 => "[]".into(),
            3 => r#""odd""#.into(),
            _ => f(self),
        }
    }

    /// An object of some of `fields` (distinct, in a random order), each `value(name)`.
    fn object(
        &mut self,
        fields: &[&str],
        value: &mut dyn FnMut(&mut Rng, &str) -> String,
    ) -> String {
        let mut names: Vec<&str> = fields.to_vec();
        for i in (1..names.len()).rev() {
            names.swap(i, self.below(i + 1));
        }
        let keep = self.below(names.len() + 1);
        let parts: Vec<String> = names[..keep]
            .iter()
            .map(|name| format!(r#""{name}":{}"#, value(self, name)))
            .collect();
        format!("{{{}}}", parts.join(","))
    }

    fn list(&mut self, max: usize, item: &mut dyn FnMut(&mut Rng) -> String) -> String {
        let items: Vec<String> = (0..self.below(max + 1)).map(|_| item(self)).collect();
        format!("[{}]", items.join(","))
    }

    fn string_map(&mut self, keys: &[&str]) -> String {
        self.object(keys, &mut |r, _| {
            format!(r#""{}""#, r.pick(&["x", "y", "z"]))
        })
    }

    fn container(&mut self) -> String {
        self.object(
            &[
                "name",
                "image",
                "ports",
                "env",
                "args",
                "tty",
                "volumeMounts",
            ],
            &mut |r, field| match field {
                "name" => format!(r#""{}""#, r.pick(&["a", "b", "c"])),
                "image" => format!(r#""{}""#, r.pick(&["i1", "i2"])),
                "tty" => r.pick(&["true", "false"]).into(),
                "args" => {
                    r.or_odd(|r| r.list(2, &mut |r| format!(r#""{}""#, r.pick(&["-v", "-q"]))))
                }
                "ports" => r.or_odd(|r| {
                    r.list(3, &mut |r| {
                        r.object(
                            &["containerPort", "protocol", "name"],
                            &mut |r, f| match f {
                                "containerPort" => r.pick(&["80", "443", "80.0"]).into(),
                                "protocol" => format!(r#""{}""#, r.pick(&["TCP", "UDP"])),
                                _ => format!(r#""{}""#, r.pick(&["http", "https"])),
                            },
                        )
                    })
                }),
                "env" => r.or_odd(|r| {
                    r.list(3, &mut |r| {
                        r.object(&["name", "value"], &mut |r, f| match f {
                            "name" => format!(r#""{}""#, r.pick(&["A", "B", "C"])),
                            _ => format!(r#""{}""#, r.pick(&["1", "2"])),
                        })
                    })
                }),
                _ => r.or_odd(|r| {
                    r.list(2, &mut |r| {
                        r.object(&["mountPath", "name"], &mut |r, f| match f {
                            "mountPath" => format!(r#""/{}""#, r.pick(&["p", "q"])),
                            _ => format!(r#""{}""#, r.pick(&["v", "w"])),
                        })
                    })
                }),
            },
        )
    }

    fn pod_spec(&mut self) -> String {
        self.object(
            &[
                "containers",
                "nodeSelector",
                "tolerations",
                "hostname",
                "volumes",
                "priority",
            ],
            &mut |r, field| match field {
                "containers" => r.or_odd(|r| r.list(4, &mut |r| r.container())),
                "nodeSelector" => r.or_odd(|r| r.string_map(&["zone", "disk"])),
                "tolerations" => r.or_odd(|r| {
                    r.list(2, &mut |r| {
                        r.object(&["key", "operator"], &mut |r, _| {
                            format!(r#""{}""#, r.pick(&["k", "Exists"]))
                        })
                    })
                }),
                "hostname" => format!(r#""{}""#, r.pick(&["h1", "h2"])),
                "priority" => r.pick(&["1", "2", "null"]).into(),
                _ => r.or_odd(|r| {
                    r.list(3, &mut |r| {
                        r.object(&["name", "emptyDir", "configMap"], &mut |r, f| match f {
                            "name" => format!(r#""{}""#, r.pick(&["v", "w"])),
                            "emptyDir" => "{}".into(),
                            _ => r.object(&["name"], &mut |_, _| r#""cm""#.into()),
                        })
                    })
                }),
            },
        )
    }

    fn metadata(&mut self) -> String {
        self.object(
            &["name", "labels", "annotations", "finalizers"],
            &mut |r, field| match field {
                "name" => r#""n""#.into(),
                "labels" => r.or_odd(|r| r.string_map(&["app", "tier", "k"])),
                "annotations" => r.or_odd(|r| r.string_map(&["a", "b"])),
                _ => r.or_odd(|r| {
                    r.list(3, &mut |r| format!(r#""{}""#, r.pick(&["f1", "f2", "f3"])))
                }),
            },
        )
    }

    fn pod(&mut self) -> String {
        self.object(&["metadata", "spec"], &mut |r, field| match field {
            "metadata" => r.metadata(),
            _ => r.pod_spec(),
        })
    }

    fn deployment(&mut self) -> String {
        self.object(&["metadata", "spec"], &mut |r, field| match field {
            "metadata" => r.metadata(),
            _ => r.object(&["replicas", "template", "paused"], &mut |r, f| match f {
                "replicas" => r.pick(&["1", "3"]).into(),
                "paused" => "false".into(),
                _ => r.object(&["metadata", "spec"], &mut |r, f| match f {
                    "metadata" => r.metadata(),
                    _ => r.pod_spec(),
                }),
            }),
        })
    }

    /// A kind and a generator of its objects.
    fn kind(&mut self) -> KindAndObjects {
        match self.below(3) {
            0 => (("", "v1", "Pod"), Rng::pod),
            1 => (("apps", "v1", "Deployment"), Rng::deployment),
            // Without a schema: typed as deduced.
            _ => (("example.com", "v1", "Widget"), Rng::pod),
        }
    }
}

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap_or_else(|e| panic!("bad generated JSON {text}: {e}"))
}

fn text(v: &Json) -> String {
    sonic_rs::to_string(v).unwrap()
}

fn outcome(r: &Result<Json, ApplyConfigurationError>) -> Result<String, String> {
    r.as_ref().map(text).map_err(|e| e.to_string())
}

#[test]
fn one_merge_agrees_with_the_merge_on_json() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut merged, mut refused) = (0, 0);
    for _ in 0..4000 {
        let (kind, object) = rng.kind();
        let (live, patch) = (json(&object(&mut rng)), json(&object(&mut rng)));
        let want = reference(&live, &patch, kind);
        let got = merge(&live, &patch, kind);
        assert_eq!(
            outcome(&got),
            outcome(&want),
            "\n  live:  {}\n  patch: {}",
            text(&live),
            text(&patch)
        );
        let root = kind_type(kind);
        let got = structured_merge(&live, &patch, root);
        let want = type_patch(&patch, root)
            .and_then(|_| type_live(&live, root))
            .and_then(|_| merge_typed(&live, &patch, root));
        assert_eq!(
            outcome(&got),
            outcome(&want),
            "\n  live:  {}\n  patch: {}",
            text(&live),
            text(&patch)
        );
        match want {
            Ok(_) => merged += 1,
            Err(_) => refused += 1,
        }
    }
    // Both paths are exercised.
    assert!(
        merged > 1000 && refused > 200,
        "{merged} merged, {refused} refused"
    );
}

#[test]
fn merges_in_turn_on_one_tree_agree_with_the_merge_on_json() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut changes = 0;
    for _ in 0..1500 {
        let (kind, object) = rng.kind();
        let mut current = json(&object(&mut rng));
        let mut doc = Patched::new(&current);
        for step in 0..4 {
            let patch = json(&object(&mut rng));
            let version = doc.version();
            let want = reference(&current, &patch, kind);
            let got = doc.apply_configuration(&patch, kind);
            match (&want, got) {
                (Ok(next), Ok(())) => {
                    let changed = *next != current;
                    assert_eq!(
                        doc.version() > version,
                        changed,
                        "step {step}: changed?\n  live:  {}\n  patch: {}",
                        text(&current),
                        text(&patch)
                    );
                    changes += usize::from(changed);
                    if changed {
                        current = next.clone();
                    }
                }
                (Err(w), Err(ApplyError::Merge(g))) => {
                    assert_eq!(w.to_string(), g.to_string());
                    assert_eq!(doc.version(), version);
                }
                (w, g) => panic!(
                    "step {step}: want {w:?}, got {g:?}\n  live:  {}\n  patch: {}",
                    text(&current),
                    text(&patch)
                ),
            }
            // The tree, as CEL reads it and written out, is that object.
            assert_eq!(
                text(doc.json().unwrap()),
                text(&current),
                "after step {step}"
            );
        }
    }
    assert!(changes > 1000, "{changes} changes");
}

#[test]
fn objects_that_repeat_keys_are_merged_on_json() {
    let kind = ("", "v1", "Pod");
    // Repeated keys in the live object (not from a request, which refuses them): the merge
    // written out keeps the last of each, everywhere, as before.
    let live = json(
        r#"{"metadata":{"labels":{"a":"1","a":"2"},"name":"n","name":"m"},"spec":{"hostname":"h"}}"#,
    );
    let patch = json(r#"{"spec":{"hostname":"g"}}"#);
    let want = reference(&live, &patch, kind);
    assert_eq!(outcome(&merge(&live, &patch, kind)), outcome(&want));
    let mut doc = Patched::new(&live);
    doc.apply_configuration(&patch, kind).unwrap();
    assert_eq!(text(doc.json().unwrap()), text(want.as_ref().unwrap()));
    // And in the patch.
    let live = json(r#"{"metadata":{"labels":{"a":"1"}}}"#);
    let patch = json(r#"{"metadata":{"labels":{"b":"1","b":"2"}}}"#);
    let want = reference(&live, &patch, kind);
    assert_eq!(outcome(&merge(&live, &patch, kind)), outcome(&want));
}

/// A random patch of string entries in maps under `metadata`: mostly labels and annotations
/// with keys some objects have, sometimes a field that is no map, a repeated field or key, or
/// no entries at all (which the fast path must leave to the general one).
fn metadata_strings(rng: &mut Rng) -> MetadataStrings {
    let mut maps = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let field = match rng.below(10) {
            0 => "name",
            1 => "finalizers",
            2..=5 => "labels",
            _ => "annotations",
        };
        let entries = (0..rng.below(4))
            .map(|_| {
                let key = rng.pick(&["a", "b", "app", "k", "tier", "new", "with \"quote\""]);
                (key.to_owned(), rng.pick(&["x", "y", "z", "w"]).to_owned())
            })
            .collect();
        maps.push((field.to_owned(), entries));
    }
    MetadataStrings { maps }
}

#[test]
fn metadata_strings_agree_with_their_merge_as_json() {
    let mut rng = Rng(0x51af_d7ed_558c_cd1b);
    let (mut fast, mut changes) = (0, 0);
    for round in 0..4000 {
        let (kind, object) = rng.kind();
        let live = json(&object(&mut rng));
        let (mut taken, mut general) = match round % 2 {
            0 => (Patched::new(&live), Patched::new(&live)),
            _ => (Patched::served(&live), Patched::served(&live)),
        };
        for step in 0..3 {
            let patch = metadata_strings(&mut rng);
            let as_json = patch.to_json().unwrap();
            let version = general.version();
            let want = general.apply_configuration(&as_json, kind);
            let got = match taken.apply_metadata_strings(&patch, kind) {
                Some(()) => {
                    fast += 1;
                    Ok(())
                }
                None => taken.apply_configuration(&as_json, kind),
            };
            let context = || format!("round {round} step {step}: {patch:?} on {}", text(&live));
            match (&want, &got) {
                (Ok(()), Ok(())) => {}
                (Err(ApplyError::Merge(w)), Err(ApplyError::Merge(g))) => {
                    assert_eq!(w.to_string(), g.to_string(), "{}", context())
                }
                _ => panic!("want {want:?}, got {got:?}: {}", context()),
            }
            assert_eq!(taken.version(), general.version(), "{}", context());
            changes += usize::from(general.version() > version);
            assert_eq!(
                text(taken.json().unwrap()),
                text(general.json().unwrap()),
                "{}",
                context()
            );
            // The response's patch too.
            assert_eq!(
                taken.diff_from(&live).unwrap(),
                general.diff_from(&live).unwrap(),
                "{}",
                context()
            );
        }
    }
    // The fast path is taken often, and changes objects.
    assert!(
        fast > 800 && changes > 2000,
        "{fast} fast, {changes} changes"
    );
}

#[test]
fn large_metadata_maps_go_the_general_way() {
    let kind = ("", "v1", "Pod");
    let live =
        json(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"n","labels":{"a":"1"}}}"#);
    let entries: Vec<(String, String)> = (0..40)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    let patch = MetadataStrings {
        maps: vec![("labels".to_owned(), entries)],
    };
    // Too many entries for the pairwise check: the tree is left as it was.
    let mut taken = Patched::served(&live);
    assert_eq!(taken.apply_metadata_strings(&patch, kind), None);
    assert_eq!(taken.version(), 0);
    // The general path merges the same patch.
    taken
        .apply_configuration(&patch.to_json().unwrap(), kind)
        .unwrap();
    let labels = &taken.json().unwrap()["metadata"]["labels"];
    assert_eq!(labels.as_object().map(|o| o.len()), Some(41));
    // At the limit the new path takes it, with the same result.
    let patch = MetadataStrings {
        maps: vec![(
            "labels".to_owned(),
            (0..32)
                .map(|i| (format!("k{i}"), format!("v{i}")))
                .collect(),
        )],
    };
    let (mut fast, mut general) = (Patched::served(&live), Patched::served(&live));
    assert_eq!(fast.apply_metadata_strings(&patch, kind), Some(()));
    general
        .apply_configuration(&patch.to_json().unwrap(), kind)
        .unwrap();
    assert_eq!(text(fast.json().unwrap()), text(general.json().unwrap()));
}
