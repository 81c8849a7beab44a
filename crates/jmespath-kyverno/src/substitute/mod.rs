//! Kyverno's `{{ ... }}` variable substitution (`pkg/engine/variables`, `SubstituteAll`),
//! over a JSON document and a context document.
//!
//! Every string value and every object key is scanned with Kyverno's variable pattern:
//! `{{` ... `}}` at the start of the string or after any character but `\`, whose inside
//! holds no braces except single-brace groups (`{{ {a: b} }}`, JMESPath multi-select
//! hashes). Each variable's text (braces removed, trimmed) is a JMESPath expression,
//! searched in the context document with the registry's functions:
//!
//! - a string that is exactly one variable becomes the result with its JSON type (`5`,
//!   `true`, an object, `null`); a variable inside a longer string is replaced by the result
//!   as text: strings as they are, anything else as Go's `json.Marshal` writes it (sorted
//!   keys, `1e+21`, `<` as `\u003c`);
//! - nested variables resolve inside out: `{{ request.object.{{ key }} }}` first replaces
//!   `{{ key }}`, then reads the outer variable, which keeps its type if it is the whole
//!   string; after each round the string is scanned again, until no variable is left;
//! - `\{{` escapes a variable; the backslash is removed at the end (not when the string was
//!   a whole variable);
//! - `{{- ... }}` is a shallow substitution: the (string) result's own `{{` are escaped
//!   and the string is not scanned again;
//! - `{{@}}` is the value at the current position in the resource: `request.object`, or
//!   `target` when the context has one, followed by the path of the string in the document
//!   (see [`Substitution::at_path`]);
//! - when the context's `request.operation` is `DELETE`, `request.object` in a variable
//!   reads `request.oldObject`;
//! - a result that is itself an object or array is scanned in turn (Kyverno's traversal
//!   continues into substituted values); a key must substitute to a string (or `null`, which
//!   keeps the key).
//!
//! # Errors
//!
//! Any failure stops the substitution with Kyverno's text, naming the variable and the
//! document path: `failed to resolve request.object.spec.x at path /spec: JMESPath query
//! failed: Unknown key "x" in path`. Kyverno's context wraps every search error, so a
//! missing key is an error here exactly as for any other failure, in patterns, messages and
//! conditions alike ([`SubstitutionError::is_not_found`] tells it apart, for callers that
//! treat it specially as Kyverno's foreach lists do). Expressions that do not compile read
//! `incorrect query ...`; an empty one `invalid query (nil)`.
//!
//! # Where celer differs
//!
//! - Kyverno renames a key inside the Go map it is iterating, so a renamed key may be
//!   visited again (substituted twice, its `\{{` escapes undone), or not, as Go's map
//!   order decides; here every key is substituted once, in document order, a later key
//!   overwriting an earlier one of the same name.
//! - A shallow variable (`{{- x }}`) inside a longer string whose value is not a string
//!   makes Kyverno panic; here it is [`SubstitutionError::ShallowNotString`].
//! - Messages of expressions that do not compile are `celer-jmespath`'s, after Kyverno's
//!   `incorrect query <expr>: ` prefix.
//!
//! # References
//!
//! Before variables, `$(...)` references to other fields of the same document are
//! resolved as Kyverno's `substituteReferences` does: a string with
//! `$(` that is not a resolvable reference is an error, as in Kyverno (`echo $(date)` in a
//! generated ConfigMap must be written `echo \$(date)`).

mod jsonpointer;
mod references;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use celer_jmespath::{Expression, FunctionRegistry, ParseError, RuntimeError};
use parking_lot::Mutex;
use regex::Regex;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait, Value};

/// How deep substitution follows a document (and the values substituted into it).
pub const MAX_DEPTH: usize = 256;

/// How many rounds of nested variables one string may take.
pub const MAX_ROUNDS: usize = 64;

/// A substitution that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubstitutionError {
    /// A variable could not be resolved (Kyverno's `failed to resolve ...`).
    #[error("failed to resolve {variable} at path {path}: {reason}")]
    Resolve {
        /// The variable's expression (after `{{@}}` and DELETE rewriting).
        variable: String,
        /// The document path of the string, as Kyverno writes it (`/spec/containers/0`).
        path: String,
        /// Why.
        reason: Box<QueryError>,
    },
    /// A `$(...)` reference could not be resolved (Kyverno's text in `reason`).
    #[error("{reason}")]
    Reference {
        /// The reference as written.
        reference: String,
        /// The document path of the string.
        path: String,
        /// Kyverno's message.
        reason: String,
    },
    /// A key substituted to something other than a string.
    #[error("expected string after substituting variables in key \"{key}\"")]
    KeyNotString {
        /// The key as written.
        key: String,
    },
    /// A shallow variable (`{{- ... }}`) inside a longer string gave a value that is not a
    /// string (Kyverno panics here).
    #[error(
        "failed to resolve {variable} at path {path}: shallow substitution needs a string, got {got}"
    )]
    ShallowNotString {
        /// The variable.
        variable: String,
        /// The document path.
        path: String,
        /// The JSON type of the result.
        got: &'static str,
    },
    /// The document, or values substituted into it, nest deeper than [`MAX_DEPTH`], or a
    /// string kept producing variables for more than [`MAX_ROUNDS`] rounds.
    #[error("variable substitution at path {path} exceeds its bounds")]
    TooDeep {
        /// Where.
        path: String,
    },
}

impl SubstitutionError {
    /// Whether the failure is a missing key (`Unknown key "x" in path`), which Kyverno tells
    /// apart in some places by looking for that text.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            SubstitutionError::Resolve {
                reason,
                ..
            } if matches!(&**reason, QueryError::Search(e) if e.is_not_found())
        )
    }
}

/// Why a query failed, worded as Kyverno's context words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// An empty expression.
    #[error("invalid query (nil)")]
    Empty,
    /// An expression that does not compile.
    #[error("incorrect query {query}: {error}")]
    Compile {
        /// The expression.
        query: String,
        /// The parser's error.
        error: ParseError,
    },
    /// A search that failed.
    #[error("JMESPath query failed: {}", crate::functions::kyverno_message(.0))]
    Search(RuntimeError),
}

/// How many compiled expressions the shared cache keeps before starting over.
const CACHE_LIMIT: usize = 4096;

type CacheKey = (usize, Box<str>);

/// Compiled expressions by registry and text. An entry holds its registry alive (the
/// expression owns an `Arc` of it), so a registry's address cannot be reused while cached.
static CACHE: LazyLock<Mutex<HashMap<CacheKey, Expression>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Compiles `text` with `registry`, once per text.
pub(crate) fn compile(
    registry: &Arc<FunctionRegistry>,
    text: &str,
) -> Result<Expression, ParseError> {
    let key: CacheKey = (Arc::as_ptr(registry) as usize, text.into());
    if let Some(e) = CACHE.lock().get(&key) {
        return Ok(e.clone());
    }
    let expression = Expression::compile_with(text, registry)?;
    let mut cache = CACHE.lock();
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(key, expression.clone());
    Ok(expression)
}

/// Kyverno's `context.Query`: the expression trimmed, compiled (cached) and searched.
pub fn query(
    registry: &Arc<FunctionRegistry>,
    expression: &str,
    context: &Value,
) -> Result<Value, QueryError> {
    let text = expression.trim();
    if text.is_empty() {
        return Err(QueryError::Empty);
    }
    let compiled = compile(registry, text).map_err(|error| QueryError::Compile {
        query: text.to_owned(),
        error,
    })?;
    compiled.search(context).map_err(QueryError::Search)
}

static VARIABLE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})").ok());

static VARIABLE_AT_START: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\{\{(\{[^{}]*\}|[^{}])*\}\}").ok());

/// Whether `s` contains a variable Kyverno would substitute.
pub fn has_variables(s: &str) -> bool {
    VARIABLE.as_ref().is_some_and(|r| r.is_match(s))
}

fn find_variables(s: &str) -> Vec<String> {
    VARIABLE
        .as_ref()
        .map(|r| r.find_iter(s).map(|m| m.as_str().to_owned()).collect())
        .unwrap_or_default()
}

/// Kyverno's `replaceBracesAndTrimSpaces`: the expression, and whether it is shallow.
fn expression_of(v: &str) -> (String, bool) {
    let inner = v.replace("{{", "").replace("}}", "");
    let inner = inner.trim();
    match inner.strip_prefix('-') {
        Some(rest) => (rest.trim().to_owned(), true),
        None => (inner.to_owned(), false),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v.get_type() {
        JsonType::Null => "null",
        JsonType::Boolean => "boolean",
        JsonType::Number => "number",
        JsonType::String => "string",
        JsonType::Array => "array",
        JsonType::Object => "object",
    }
}

/// A configured substitution: the registry, where the document sits, and how results are
/// typed.
#[derive(Clone)]
pub struct Substitution<'r> {
    registry: &'r Arc<FunctionRegistry>,
    path: String,
    float_results: bool,
}

impl std::fmt::Debug for Substitution<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Substitution")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<'r> Substitution<'r> {
    /// A substitution with `registry`'s functions, of a document at the root.
    pub fn new(registry: &'r Arc<FunctionRegistry>) -> Self {
        Substitution {
            registry,
            path: String::new(),
            float_results: false,
        }
    }

    /// The document sits at `path` of a larger one (Kyverno's path, `/validate/pattern`):
    /// error messages and `{{@}}` count from there. `{{@}}` skips any `foreach` and the two
    /// components after the root (or after `foreach/<n>`), as Kyverno does when it
    /// substitutes a whole rule.
    pub fn at_path(mut self, path: &str) -> Self {
        path.clone_into(&mut self.path);
        self
    }

    /// Numbers that come from variables become doubles (Go's `float64`), so that callers
    /// can tell them from literal integers of the policy, as Kyverno's operators do.
    pub(crate) fn float_results(mut self) -> Self {
        self.float_results = true;
        self
    }

    /// Substitutes every variable in `document`.
    pub fn run(&self, document: &Value, context: &Value) -> Result<Value, SubstitutionError> {
        let env = Env {
            s: self,
            context,
            delete: context
                .get("request")
                .and_then(|r| r.get("operation"))
                .and_then(|o| o.as_str())
                == Some("DELETE"),
            at_prefix: if context.get("target").is_some() {
                "target"
            } else {
                "request.object"
            },
        };
        let document = references::resolve(document, &self.path)?;
        env.node(&document, &self.path, 0)
    }

    /// Substitutes the variables of one string.
    pub fn run_str(&self, text: &str, context: &Value) -> Result<Value, SubstitutionError> {
        self.run(&Value::from(text), context)
    }
}

/// [`Substitution::run`] with `registry`, at the root.
pub fn substitute(
    document: &Value,
    context: &Value,
    registry: &Arc<FunctionRegistry>,
) -> Result<Value, SubstitutionError> {
    Substitution::new(registry).run(document, context)
}

/// [`Substitution::run_str`] with `registry`, at the root.
pub fn substitute_str(
    text: &str,
    context: &Value,
    registry: &Arc<FunctionRegistry>,
) -> Result<Value, SubstitutionError> {
    Substitution::new(registry).run_str(text, context)
}

struct Env<'a> {
    s: &'a Substitution<'a>,
    context: &'a Value,
    delete: bool,
    at_prefix: &'static str,
}

impl Env<'_> {
    fn node(&self, v: &Value, path: &str, depth: usize) -> Result<Value, SubstitutionError> {
        if depth > MAX_DEPTH {
            return Err(SubstitutionError::TooDeep { path: path.into() });
        }
        match v.get_type() {
            JsonType::String => {
                let out = self.string(v.as_str().unwrap_or_default(), path)?;
                // The traversal continues into what a variable gave.
                if out.is_array() || out.is_object() {
                    self.node(&out, path, depth + 1)
                } else {
                    Ok(out)
                }
            }
            JsonType::Array => {
                let mut items = Vec::new();
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    items.push(self.node(item, &format!("{path}/{i}"), depth + 1)?);
                }
                Ok(Value::from(items))
            }
            JsonType::Object => {
                let mut out = sonic_rs::Object::new();
                for (key, item) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                    let new_key = self.key(key, path, depth)?;
                    let child = format!("{path}/{}", key.replace('/', "\\/"));
                    let value = self.node(item, &child, depth + 1)?;
                    out.insert(&new_key, value);
                }
                Ok(Value::from(out))
            }
            _ => Ok(v.clone()),
        }
    }

    fn key(&self, key: &str, path: &str, depth: usize) -> Result<String, SubstitutionError> {
        if !key.contains("{{") {
            return Ok(key.to_owned());
        }
        let out = self.string(key, path)?;
        let out = if out.is_array() || out.is_object() {
            self.node(&out, path, depth + 1)?
        } else {
            out
        };
        if out.is_null() {
            return Ok(key.to_owned());
        }
        out.as_str()
            .map(str::to_owned)
            .ok_or_else(|| SubstitutionError::KeyNotString { key: key.into() })
    }

    fn resolve(&self, variable: &str, path: &str) -> Result<Value, SubstitutionError> {
        let found = query(self.s.registry, variable, self.context).map_err(|reason| {
            SubstitutionError::Resolve {
                variable: variable.into(),
                path: path.into(),
                reason: Box::new(reason),
            }
        })?;
        Ok(if self.s.float_results {
            floats(&found, 0)
        } else {
            found
        })
    }

    /// Kyverno's `substituteVariablesIfAny` for one string.
    fn string(&self, text: &str, path: &str) -> Result<Value, SubstitutionError> {
        if !text.contains("{{") {
            return Ok(Value::from(text));
        }
        let mut value = text.to_owned();
        let mut vars = find_variables(&value);
        let mut rounds = 0;
        while !vars.is_empty() {
            rounds += 1;
            if rounds > MAX_ROUNDS {
                return Err(SubstitutionError::TooDeep { path: path.into() });
            }
            let original = value.clone();
            let mut shallow = false;
            for found in vars {
                let initial = VARIABLE_AT_START
                    .as_ref()
                    .is_some_and(|r| r.is_match(&found));
                let (prefix, v) = if initial {
                    ("", found.as_str())
                } else {
                    let mut chars = found.chars();
                    let first = chars.next().map_or(0, char::len_utf8);
                    found.split_at(first)
                };
                let (mut variable, is_shallow) = if prefix.len() > 1 {
                    // Kyverno strips one byte, not one character: the rest of a
                    // multi-byte character stays in front of the expression (and fails
                    // to compile), as in Kyverno.
                    let raw = v.replace("{{", "").replace("}}", "");
                    let lead = "\u{fffd}".repeat(prefix.len() - 1);
                    (format!("{lead}{}", raw.trim_end()), false)
                } else {
                    expression_of(v)
                };
                shallow = is_shallow;
                if variable == "@" {
                    variable = jsonpointer::at_expression(path, self.at_prefix);
                }
                if self.delete {
                    variable = variable.replace("request.object", "request.oldObject");
                }
                let resolved = self.resolve(&variable, path)?;
                if original == v {
                    return Ok(resolved);
                }
                let replacement = match resolved.as_str() {
                    Some(s) if shallow => s.replace("{{", "\\{{"),
                    Some(s) => s.to_owned(),
                    None if shallow && !resolved.is_null() => {
                        return Err(SubstitutionError::ShallowNotString {
                            variable,
                            path: path.into(),
                            got: type_name(&resolved),
                        });
                    }
                    None => {
                        crate::go::marshal(&resolved).map_err(|e| SubstitutionError::Resolve {
                            variable: variable.clone(),
                            path: path.into(),
                            reason: Box::new(QueryError::Search(RuntimeError::function_failed(e))),
                        })?
                    }
                };
                value = value.replacen(
                    &format!("{prefix}{v}"),
                    &format!("{prefix}{replacement}"),
                    1,
                );
            }
            vars = if shallow {
                Vec::new()
            } else {
                find_variables(&value)
            };
        }
        Ok(Value::from(value.replace("\\{{", "{{").as_str()))
    }
}

/// The value with every number a double, as Go holds the results of a search.
fn floats(v: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return v.clone();
    }
    match v.get_type() {
        JsonType::Number => crate::go::as_f64(v).map_or_else(|| v.clone(), crate::go::float),
        JsonType::Array => Value::from(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|i| floats(i, depth + 1))
                .collect::<Vec<_>>(),
        ),
        JsonType::Object => {
            let mut o = sonic_rs::Object::new();
            for (k, i) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                o.insert(&k, floats(i, depth + 1));
            }
            Value::from(o)
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests;
