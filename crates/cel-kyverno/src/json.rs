//! Kyverno's `json` and `yaml` libraries (`kyverno/sdk` `libs/json`, `libs/yaml`): the
//! variables `json` and `yaml` and their methods `json.unmarshal(string) -> dyn`,
//! `json.marshal(dyn) -> string`, `yaml.parse(string) -> dyn`.
//!
//! As with Go's decoders into `any`, every number becomes a `double`. `json.marshal` writes
//! what Go's `json.Marshal` writes (sorted keys, Go's number and escape forms). YAML is read
//! as YAML 1.2 (the first document only). Kyverno's reader (`sigs.k8s.io/yaml`) keeps some
//! YAML 1.1 forms that celer reads differently: the plain scalars `yes`, `no`, `on`, `off`,
//! `y`, `n` are booleans there and strings here, `012` is octal 10 there and 12 here, and
//! `1_000` is 1000 there and a string here. Infinite numbers are an error in both.

use std::sync::Arc;

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, LibraryVariable, Registry, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, OwnedMap, Str, Value};

use super::convert::{MAX_DEPTH, Numbers, go_json, parse_json};
use super::hash::traversal_cost;

pub const JSON_TYPE: &str = "json.Json";
pub const YAML_TYPE: &str = "yaml.Yaml";
pub const JSON_VAR: &str = "json";
pub const YAML_VAR: &str = "yaml";

/// The most bytes `yaml.parse` reads (a ConfigMap holds at most 1 MiB).
pub const MAX_YAML: usize = 1 << 20;

macro_rules! unit_handle {
    ($t:ident, $name:expr) => {
        #[derive(Debug, Clone, Copy, Default)]
        pub(crate) struct $t;
        impl celer_cel::value::Opaque for $t {
            fn type_name(&self) -> &'static str {
                $name
            }
            fn equals(&self, other: &dyn celer_cel::value::Opaque) -> bool {
                other.as_any().is::<$t>()
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
        }
    };
}

unit_handle!(JsonHandle, JSON_TYPE);
unit_handle!(YamlHandle, YAML_TYPE);

fn json_type() -> Type {
    Type::Abstract(Arc::from(JSON_TYPE), Vec::new())
}
fn yaml_type() -> Type {
    Type::Abstract(Arc::from(YAML_TYPE), Vec::new())
}

pub fn variables(out: &mut Vec<LibraryVariable>) {
    out.push(LibraryVariable {
        name: JSON_VAR,
        ty: json_type(),
        default: Value::Opaque(Arc::new(JsonHandle)),
    });
    out.push(LibraryVariable {
        name: YAML_VAR,
        ty: yaml_type(),
        default: Value::Opaque(Arc::new(YamlHandle)),
    });
}

pub fn register(r: &mut Registry) {
    r.add(
        "unmarshal",
        vec![member(
            "unmarshal_string_dyn",
            vec![json_type(), Type::Dyn],
            Type::Dyn,
        )],
        Impl::Binary(unmarshal),
    );
    r.add(
        "marshal",
        vec![member(
            "marshal_dyn_string",
            vec![json_type(), Type::Dyn],
            Type::String,
        )],
        Impl::Binary(marshal),
    );
    r.add(
        "parse",
        vec![member(
            "parse_string_dyn",
            vec![yaml_type(), Type::String],
            Type::Dyn,
        )],
        Impl::Binary(parse_yaml),
    );
    for name in ["unmarshal", "marshal", "parse"] {
        r.set_cost(name, true, 2, |args, result| {
            let input = args.get(1).cloned().unwrap_or(Value::Null);
            traversal_cost(&[input], result)
                .max(traversal_cost(std::slice::from_ref(result), result))
        });
    }
}

fn unmarshal<'a>(handle: Value<'a>, text: Value<'a>) -> EvalResult<'a> {
    let (Some(_), Some(s)) = (handle.downcast::<JsonHandle>(), text.as_str()) else {
        return Err(overload("unmarshal", &[&handle, &text]));
    };
    parse_json(s, Numbers::Double)
}

fn marshal<'a>(handle: Value<'a>, value: Value<'a>) -> EvalResult<'a> {
    if handle.downcast::<JsonHandle>().is_none() {
        return Err(overload("marshal", &[&handle, &value]));
    }
    go_json(&value).map(Value::string)
}

fn parse_yaml<'a>(handle: Value<'a>, text: Value<'a>) -> EvalResult<'a> {
    let (Some(_), Some(s)) = (handle.downcast::<YamlHandle>(), text.as_str()) else {
        return Err(overload("parse", &[&handle, &text]));
    };
    parse_yaml_text(s)
}

/// The first YAML document of `text` as Kyverno reads it (`sigs.k8s.io/yaml`: YAML to JSON,
/// then JSON into `any`): numbers are doubles, keys become strings, an empty document is
/// null.
pub fn parse_yaml_text(text: &str) -> EvalResult<'static> {
    if text.len() > MAX_YAML {
        return Err(EvalError::new(format!(
            "yaml: input exceeds {MAX_YAML} bytes"
        )));
    }
    if flow_depth(text) > MAX_DEPTH {
        return Err(EvalError::new(format!(
            "yaml: exceeded max depth of {MAX_DEPTH}"
        )));
    }
    use serde::Deserialize as _;
    let Some(doc) = serde_yaml_ng::Deserializer::from_str(text).next() else {
        return Ok(Value::Null);
    };
    let yaml =
        serde_yaml_ng::Value::deserialize(doc).map_err(|e| EvalError::new(format!("yaml: {e}")))?;
    yaml_to_value(&yaml, 0)
}

/// The deepest nesting of flow collections (`[`, `{`) outside quoted scalars and comments.
/// Checked before parsing: the YAML parser's time grows with the square of this depth, and
/// deeper documents are refused by the deserializer anyway.
fn flow_depth(text: &str) -> usize {
    #[derive(PartialEq)]
    enum In {
        Plain,
        Double,
        Single,
        Comment,
    }
    let mut state = In::Plain;
    let (mut depth, mut deepest) = (0usize, 0usize);
    // Whether the previous character ends a token, so a quote or `#` may start one.
    let mut boundary = true;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            In::Double => match c {
                '\\' => {
                    chars.next();
                }
                '"' => state = In::Plain,
                _ => {}
            },
            In::Single => {
                if c == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                    } else {
                        state = In::Plain;
                    }
                }
            }
            In::Comment => {
                if c == '\n' {
                    state = In::Plain;
                }
            }
            In::Plain => match c {
                '"' if boundary => state = In::Double,
                '\'' if boundary => state = In::Single,
                '#' if boundary => state = In::Comment,
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        boundary = c.is_whitespace() || matches!(c, '[' | '{' | ',' | ':' | '-' | '?');
    }
    deepest
}

fn yaml_to_value(y: &serde_yaml_ng::Value, depth: usize) -> EvalResult<'static> {
    use serde_yaml_ng::Value as Y;
    if depth > MAX_DEPTH {
        return Err(EvalError::new(format!(
            "yaml: exceeded max depth of {MAX_DEPTH}"
        )));
    }
    Ok(match y {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if !f.is_finite() {
                // JSON cannot hold it: Kyverno's YAML-to-JSON step fails.
                let why = super::convert::write_go_float(&mut String::new(), f)
                    .err()
                    .map(|e| e.message().to_string())
                    .unwrap_or_default();
                return Err(EvalError::new(format!(
                    "error converting YAML to JSON: {why}"
                )));
            }
            Value::Double(f)
        }
        Y::String(s) => Value::string(s.clone()),
        Y::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(yaml_to_value(item, depth + 1)?);
            }
            Value::list(out)
        }
        Y::Mapping(m) => {
            let mut out = OwnedMap::with_capacity(m.len());
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s.clone(),
                    Y::Bool(b) => b.to_string(),
                    Y::Number(n) => n.to_string(),
                    Y::Null => "null".to_string(),
                    _ => {
                        return Err(EvalError::new("yaml: unsupported map key (a list or map)"));
                    }
                };
                out.insert(
                    Key::String(Str::Owned(Arc::from(key))),
                    yaml_to_value(v, depth + 1)?,
                );
            }
            Value::map(out)
        }
        Y::Tagged(t) => yaml_to_value(&t.value, depth + 1)?,
    })
}
