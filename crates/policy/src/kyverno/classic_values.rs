//! Values for classic rules' variables that Kyverno's CLI takes from a test's values file
//! (`cli.kyverno.io/v1alpha1` `Values`): `globalValues`, `policies[].resources[].values`
//! (per resource name) and `policies[].rules[].values` (per rule, added before the rule's
//! context entries load). Keys are dotted paths into the JSON context (`request.operation`,
//! `dictionary.data.env`); a part in double quotes may hold dots.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

/// The values of a test, read once.
#[derive(Debug, Clone, Default)]
pub struct ClassicValues {
    /// `globalValues`.
    pub global: Vec<(String, Json)>,
    /// `policies[]`.
    pub policies: Vec<PolicyValues>,
}

/// One policy's values.
#[derive(Debug, Clone, Default)]
pub struct PolicyValues {
    pub name: String,
    /// (resource name, values).
    pub resources: Vec<(String, Vec<(String, Json)>)>,
    /// (rule name, values).
    pub rules: Vec<(String, Vec<(String, Json)>)>,
}

fn pairs(v: Option<&Json>) -> Vec<(String, Json)> {
    v.and_then(|v| v.as_object())
        .map(|o| o.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
        .unwrap_or_default()
}

fn named(list: Option<&Json>) -> Vec<(String, Vec<(String, Json)>)> {
    list.and_then(|l| l.as_array())
        .map(|l| {
            l.iter()
                .map(|e| {
                    let name = e.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                    (name.to_string(), pairs(e.get("values")))
                })
                .collect()
        })
        .unwrap_or_default()
}

impl ClassicValues {
    /// Reads a values document.
    pub fn from_document(doc: &Json) -> ClassicValues {
        let policies = doc
            .get("policies")
            .and_then(|p| p.as_array())
            .map(|l| {
                l.iter()
                    .map(|p| PolicyValues {
                        name: p
                            .get("name")
                            .and_then(|n| n.as_str())
                            .unwrap_or_default()
                            .to_string(),
                        resources: named(p.get("resources")),
                        rules: named(p.get("rules")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        ClassicValues {
            global: pairs(doc.get("globalValues")),
            policies,
        }
    }

    /// Whether there is nothing to add.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty() && self.policies.is_empty()
    }

    /// The values for a resource under a policy: the global ones, then the resource's.
    pub(crate) fn for_resource<'a>(
        &'a self,
        policy: &'a str,
        resource: &'a str,
    ) -> impl Iterator<Item = &'a (String, Json)> + 'a {
        self.global.iter().chain(
            self.policies
                .iter()
                .filter(move |p| p.name == policy)
                .flat_map(|p| p.resources.iter())
                .filter(move |(name, _)| name == resource)
                .flat_map(|(_, v)| v.iter()),
        )
    }

    /// The values of a rule.
    pub(crate) fn for_rule<'a>(
        &'a self,
        policy: &'a str,
        rule: &'a str,
    ) -> impl Iterator<Item = &'a (String, Json)> + 'a {
        self.policies
            .iter()
            .filter(move |p| p.name == policy)
            .flat_map(|p| p.rules.iter())
            .filter(move |(name, _)| name == rule)
            .flat_map(|(_, v)| v.iter())
    }
}

/// The parts of a dotted key, as Go's CSV reader with `.` as separator reads it: a part in
/// double quotes keeps its dots (`""` inside is one quote).
pub(crate) fn key_parts(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' if quoted => quoted = false,
            '"' if cur.is_empty() => quoted = true,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    parts.push(cur);
    parts
}

/// Kyverno's `AddVariable`: `value` set at the dotted `key` of `context`, objects made on the
/// way (a non-object on the way is replaced), objects merged into an object already there.
pub(crate) fn add_variable(context: &mut Json, key: &str, value: &Json) {
    let parts = key_parts(key);
    set_path(context, &parts, value);
}

/// `value` set at `path` of `context`; objects merge into objects (`mergeMaps`).
pub(crate) fn set_path(context: &mut Json, path: &[String], value: &Json) {
    let Some((first, rest)) = path.split_first() else {
        merge(context, value);
        return;
    };
    if !context.is_object() {
        *context = Json::new_object();
    }
    let Some(o) = context.as_object_mut() else {
        return;
    };
    if o.get(&first.as_str()).is_none() {
        o.insert(&first.as_str(), Json::new_object());
        if rest.is_empty() {
            o.insert(&first.as_str(), value.clone());
            return;
        }
    }
    if let Some(child) = o.get_mut(&first.as_str()) {
        set_path(child, rest, value);
    }
}

/// Objects merge key by key; anything else replaces.
fn merge(into: &mut Json, value: &Json) {
    match (into.as_object_mut(), value.as_object()) {
        (Some(dst), Some(src)) => {
            for (k, v) in src.iter() {
                match dst.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        dst.insert(&k, v.clone());
                    }
                }
            }
        }
        _ => *into = value.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn dotted_keys_and_quotes() {
        assert_eq!(key_parts("a.b.c"), ["a", "b", "c"]);
        assert_eq!(key_parts(r#"a."b.c".d"#), ["a", "b.c", "d"]);
    }

    #[test]
    fn variables_nest_and_merge() {
        let mut ctx: Json = sonic_rs::from_str(r#"{"request":{"operation":"CREATE"}}"#).unwrap();
        add_variable(&mut ctx, "request.operation", &Json::from("UPDATE"));
        add_variable(&mut ctx, "dictionary.data.env", &Json::from("prod"));
        let obj: Json = sonic_rs::from_str(r#"{"x":1}"#).unwrap();
        add_variable(&mut ctx, "request", &obj);
        let want: Json = sonic_rs::from_str(
            r#"{"request":{"operation":"UPDATE","x":1},"dictionary":{"data":{"env":"prod"}}}"#,
        )
        .unwrap();
        assert_eq!(ctx, want);
    }

    #[test]
    fn values_document() {
        let doc: Json = sonic_rs::from_str(
            r#"{"globalValues":{"a":1},"policies":[{"name":"p","rules":[{"name":"r","values":{"b":2}}],"resources":[{"name":"x","values":{"c":3}}]}]}"#,
        )
        .unwrap();
        let v = ClassicValues::from_document(&doc);
        assert_eq!(v.for_resource("p", "x").count(), 2);
        assert_eq!(v.for_resource("q", "x").count(), 1);
        assert_eq!(v.for_rule("p", "r").count(), 1);
    }
}
