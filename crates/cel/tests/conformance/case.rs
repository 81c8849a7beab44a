//! One cel-spec `SimpleTest`, converted into celer's terms.

use celer_cel::Type;
use celer_cel::library::{Overload, Registry};
use celer_cel::value::Value;

use crate::support::cel_values::{self, Unusable};
use crate::support::textproto::Message;

/// A conformance test ready to run.
#[derive(Debug)]
pub struct Case {
    pub expr: String,
    pub container: String,
    pub disable_check: bool,
    pub disable_macros: bool,
    pub check_only: bool,
    pub idents: Vec<(String, Type)>,
    pub functions: Vec<(String, Vec<Overload>)>,
    pub bindings: Vec<(String, Value<'static>)>,
    pub expect: Expect,
    /// Extension libraries the test's file exercises, registered on the standard library.
    pub extensions: &'static [fn(&mut Registry)],
}

/// What the test expects.
#[derive(Debug)]
pub enum Expect {
    /// Evaluates to this value (compared strictly).
    Value(Value<'static>),
    /// Evaluation fails; the messages are cel-go's and only reported, not required.
    Error(Vec<String>),
    /// The checker deduces this type, and evaluation gives the value when there is one.
    Typed {
        ty: Option<Type>,
        value: Option<Value<'static>>,
    },
    /// Unknown results: out of scope, so such cases are skipped.
    Unknown,
}

/// The `SimpleTest` fields this runner understands; any other field makes the test invalid
/// so a new cel-spec feature is noticed rather than silently ignored.
const KNOWN_FIELDS: &[&str] = &[
    "name",
    "description",
    "expr",
    "disable_macros",
    "disable_check",
    "check_only",
    "type_env",
    "container",
    "locale",
    "bindings",
    "value",
    "typed_result",
    "eval_error",
    "any_eval_errors",
    "unknown",
    "any_unknowns",
];

impl Case {
    /// Converts a `SimpleTest`. `Unusable::Unsupported` means the test needs something celer
    /// does not model (it is skipped with that reason).
    pub fn from_test(test: &Message) -> Result<Case, Unusable> {
        if let Some(f) = test.unknown_field(KNOWN_FIELDS) {
            return Err(Unusable::Invalid(format!(
                "unknown SimpleTest field '{}'",
                f.name
            )));
        }
        let mut idents = Vec::new();
        let mut functions = Vec::new();
        for decl in test.messages("type_env") {
            let decl = decl?;
            let name = decl.string("name")?;
            let context = format!("type_env '{name}'");
            if let Some(ident) = decl.message("ident")? {
                let ty = ident
                    .message("type")?
                    .ok_or_else(|| Unusable::Invalid("ident without a type".into()))?;
                let ty = cel_values::cel_type(ty).map_err(|e| e.context(&context))?;
                idents.push((name, ty));
            } else if let Some(function) = decl.message("function")? {
                let overloads = overloads(function).map_err(|e| e.context(&context))?;
                functions.push((name, overloads));
            } else {
                return Err(Unusable::Invalid(format!(
                    "{context}: neither ident nor function"
                )));
            }
        }
        let mut bindings = Vec::new();
        for binding in test.messages("bindings") {
            let (name, value) = binding_value(binding?)?;
            bindings.push((name, value));
        }
        Ok(Case {
            expr: test.string("expr")?,
            container: test.string("container")?,
            disable_check: test.bool("disable_check")?,
            disable_macros: test.bool("disable_macros")?,
            check_only: test.bool("check_only")?,
            idents,
            functions,
            bindings,
            expect: expectation(test)?,
            extensions: &[],
        })
    }
}

/// One `bindings` map entry: `key` and an `ExprValue` that must hold a value.
fn binding_value(entry: &Message) -> Result<(String, Value<'static>), Unusable> {
    let name = entry.string("key")?;
    let context = format!("binding '{name}'");
    let expr_value = entry
        .message("value")?
        .ok_or_else(|| Unusable::Invalid(format!("{context}: no value")))?;
    let Some(value) = expr_value.message("value")? else {
        return Err(Unusable::Unsupported(format!(
            "{context}: bound to an error or unknown, not a value"
        )));
    };
    let value = cel_values::value(value).map_err(|e| e.context(&context))?;
    Ok((name, value))
}

fn overloads(function: &Message) -> Result<Vec<Overload>, Unusable> {
    let mut out = Vec::new();
    for o in function.messages("overloads") {
        let o = o?;
        let params = o
            .messages("params")
            .map(|p| cel_values::cel_type(p?))
            .collect::<Result<Vec<_>, _>>()?;
        let result = match o.message("result_type")? {
            Some(t) => cel_values::cel_type(t)?,
            None => Type::Dyn,
        };
        // Overload ids are `&'static str` in the registry; a test process can afford to leak them.
        let id: &'static str = Box::leak(o.string("overload_id")?.into_boxed_str());
        out.push(Overload {
            id,
            receiver: o.bool("is_instance_function")?,
            params,
            result,
        });
    }
    Ok(out)
}

fn expectation(test: &Message) -> Result<Expect, Unusable> {
    if let Some(v) = test.message("value")? {
        let v = cel_values::value(v).map_err(|e| e.context("expected value"))?;
        return Ok(Expect::Value(v));
    }
    if let Some(errors) = test.message("eval_error")? {
        return Ok(Expect::Error(error_messages(errors)?));
    }
    if let Some(matcher) = test.message("any_eval_errors")? {
        let mut messages = Vec::new();
        for set in matcher.messages("errors") {
            messages.extend(error_messages(set?)?);
        }
        return Ok(Expect::Error(messages));
    }
    if let Some(typed) = test.message("typed_result")? {
        let ty = match typed.message("deduced_type")? {
            Some(t) => Some(cel_values::cel_type(t).map_err(|e| e.context("deduced type"))?),
            None => None,
        };
        let value = match typed.message("result")? {
            Some(v) => Some(cel_values::value(v).map_err(|e| e.context("expected value"))?),
            None => None,
        };
        return Ok(Expect::Typed { ty, value });
    }
    if test.has("unknown") || test.has("any_unknowns") {
        return Ok(Expect::Unknown);
    }
    // No matcher: the expression must evaluate to true.
    Ok(Expect::Value(Value::Bool(true)))
}

/// The messages of an `ErrorSet`.
fn error_messages(set: &Message) -> Result<Vec<String>, Unusable> {
    set.messages("errors")
        .map(|status| Ok(status?.string("message")?))
        .collect()
}
