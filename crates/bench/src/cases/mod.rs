//! The correctness phase: cases sent once each before the load and compared with what they
//! expect. A case is one JSONL line:
//! `{"name", "path"?, "review", "expect": {"allowed", "code"?, "message_contains"?,
//! "warnings"?, "patched"?, "annotations"?}}`.
//! [`contract`] makes the 180 cases of the contract policies (policies/bench-contract).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait, Value};

use crate::BenchError;
use crate::bodies::{self, Mode};
use crate::client::{Conn, Connector, Failure, Reply};
use crate::run::{self, Api};

pub mod contract;

/// What a case expects.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub allowed: bool,
    /// `status.code` of the response (the HTTP status in API mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// A part of `status.message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_contains: Option<String>,
    /// As many warnings as listed, each containing the text at its position... in any order:
    /// every text is a part of some warning. `[]`: no warning at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    /// Whether the response carries a non-empty patch (webhook mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patched: Option<bool>,
    /// Annotations of the object after the patch (webhook) or as returned (API): a value, or
    /// `null` for absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, Option<String>>>,
}

/// One case.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    /// The webhook path (`/validate`, `/mutate`); the target's path when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub review: Value,
    pub expect: Expectation,
}

/// Reads a cases file (JSONL; blank and `#` lines skipped).
pub fn read(path: &Path) -> Result<Vec<Case>, BenchError> {
    let bytes = crate::read_file(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let case: Case = sonic_rs::from_str(line).map_err(|e| BenchError::Input {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        cases.push(case);
    }
    Ok(cases)
}

/// One case as a JSONL line.
pub fn to_line(case: &Case) -> String {
    sonic_rs::to_string(case).unwrap_or_default()
}

/// What an answer said, in either API.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub allowed: bool,
    pub code: Option<u16>,
    pub message: String,
    pub warnings: Vec<String>,
    /// The decoded JSON Patch (webhook).
    pub patch: Option<Value>,
    /// The object the API returned.
    pub object: Option<Value>,
}

/// Reads a webhook's AdmissionReview response.
pub fn webhook_answer(reply: &Reply) -> Result<Answer, String> {
    if reply.status != 200 {
        return Err(format!(
            "HTTP {}: {}",
            reply.status,
            run::snippet(&reply.body)
        ));
    }
    let value: Value = sonic_rs::from_slice(&reply.body).map_err(|e| format!("not JSON: {e}"))?;
    let response = value
        .get("response")
        .ok_or_else(|| format!("no response: {}", run::snippet(&reply.body)))?;
    let allowed = response
        .get("allowed")
        .as_bool()
        .ok_or("no response.allowed")?;
    let status = response.get("status");
    let patch = match response.get("patch").as_str() {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("response.patch is not base64: {e}"))?;
            Some(
                sonic_rs::from_slice::<Value>(&bytes)
                    .map_err(|e| format!("response.patch: {e}"))?,
            )
        }
        None => None,
    };
    Ok(Answer {
        allowed,
        code: status
            .get("code")
            .as_u64()
            .and_then(|c| u16::try_from(c).ok()),
        message: status.get("message").as_str().unwrap_or("").to_string(),
        warnings: strings(response.get("warnings")),
        patch,
        object: None,
    })
}

/// Reads the API server's answer: the object (2xx) or a `Status` (denied), and `Warning`
/// headers (`299 - "text"`).
pub fn api_answer(reply: &Reply) -> Result<Answer, String> {
    let warnings = reply
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|h| h.to_str().ok())
        .map(warning_text)
        .collect();
    let value: Value = sonic_rs::from_slice(&reply.body).unwrap_or_default();
    match reply.status {
        200..=299 => Ok(Answer {
            allowed: true,
            code: Some(reply.status),
            warnings,
            object: Some(value),
            ..Answer::default()
        }),
        400..=499 if value.get("kind").as_str() == Some("Status") => Ok(Answer {
            allowed: false,
            code: Some(reply.status),
            message: value.get("message").as_str().unwrap_or("").to_string(),
            warnings,
            ..Answer::default()
        }),
        status => Err(format!("HTTP {status}: {}", run::snippet(&reply.body))),
    }
}

/// The text of a `Warning` header: `299 - "text"` gives `text`.
fn warning_text(header: &str) -> String {
    let rest = header.trim();
    let rest = rest.strip_prefix("299").map_or(rest, str::trim_start);
    let rest = rest.strip_prefix('-').map_or(rest, str::trim_start);
    match rest
        .strip_prefix('"')
        .and_then(|r| r.rfind('"').map(|end| &r[..end]))
    {
        Some(quoted) => quoted.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => rest.to_string(),
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Compares an answer with a case's expectation: the problems found, none when it matches.
pub fn compare(case: &Case, api: Api, answer: &Answer) -> Vec<String> {
    let e = &case.expect;
    let mut problems = Vec::new();
    if answer.allowed != e.allowed {
        problems.push(format!(
            "allowed is {}, expected {} (code {:?}, message {:?})",
            answer.allowed, e.allowed, answer.code, answer.message
        ));
    }
    if let Some(code) = e.code
        && api == Api::Webhook
        && answer.code != Some(code)
    {
        problems.push(format!("code is {:?}, expected {code}", answer.code));
    }
    if let Some(text) = &e.message_contains
        && !answer.message.contains(text.as_str())
    {
        problems.push(format!(
            "message {:?} does not contain {text:?}",
            answer.message
        ));
    }
    if let Some(expected) = &e.warnings {
        let missing: Vec<&String> = expected
            .iter()
            .filter(|w| !answer.warnings.iter().any(|a| a.contains(w.as_str())))
            .collect();
        if answer.warnings.len() != expected.len() || !missing.is_empty() {
            problems.push(format!(
                "warnings are {:?}, expected {expected:?}",
                answer.warnings
            ));
        }
    }
    if api == Api::Webhook {
        let patched = answer
            .patch
            .as_ref()
            .and_then(|p| p.as_array())
            .is_some_and(|ops| !ops.is_empty());
        if let Some(want) = e.patched
            && patched != want
        {
            problems.push(format!(
                "patched is {patched}, expected {want} (patch {})",
                answer
                    .patch
                    .as_ref()
                    .and_then(|p| sonic_rs::to_string(p).ok())
                    .unwrap_or_else(|| "none".into())
            ));
        }
    }
    if let Some(want) = &e.annotations {
        let object = match api {
            Api::Webhook => {
                let mut object = case
                    .review
                    .pointer(&["request", "object"])
                    .cloned()
                    .unwrap_or_default();
                match &answer.patch {
                    Some(patch) => apply_patch(&mut object, patch).map(|()| object),
                    None => Ok(object),
                }
            }
            Api::Kube => answer
                .object
                .clone()
                .ok_or_else(|| "no object in the answer".to_string()),
        };
        match object {
            Err(e) => problems.push(format!("cannot read the patched object: {e}")),
            Ok(object) => {
                let annotations = object.pointer(&["metadata", "annotations"]);
                for (key, value) in want {
                    let got = annotations
                        .and_then(|a| a.get(key.as_str()))
                        .and_then(|v| v.as_str());
                    if got != value.as_deref() {
                        problems.push(format!(
                            "annotation {key:?} is {got:?}, expected {:?}",
                            value.as_deref()
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// Applies an RFC 6902 JSON Patch (add, remove, replace, test, copy, move).
pub fn apply_patch(doc: &mut Value, patch: &Value) -> Result<(), String> {
    let ops = patch.as_array().ok_or("the patch is not an array")?;
    for op in ops.iter() {
        let path = pointer(op.get("path").as_str().ok_or("an operation without path")?)?;
        match op.get("op").as_str() {
            Some("add") => add(
                doc,
                &path,
                op.get("value").cloned().ok_or("add without value")?,
            )?,
            Some("remove") => {
                remove(doc, &path)?;
            }
            Some("replace") => {
                remove(doc, &path)?;
                add(
                    doc,
                    &path,
                    op.get("value").cloned().ok_or("replace without value")?,
                )?;
            }
            Some("test") => {
                let at = get(doc, &path).ok_or("test: no such path")?;
                if Some(at) != op.get("value") {
                    return Err("test failed".into());
                }
            }
            Some(kind @ ("copy" | "move")) => {
                let from = pointer(op.get("from").as_str().ok_or("no from")?)?;
                let value = if kind == "move" {
                    remove(doc, &from)?
                } else {
                    get(doc, &from).cloned().ok_or("copy: no such path")?
                };
                add(doc, &path, value)?;
            }
            other => return Err(format!("unknown op {other:?}")),
        }
    }
    Ok(())
}

fn pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text
        .strip_prefix('/')
        .ok_or_else(|| format!("{text:?} is not a JSON pointer"))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn get<'a>(doc: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, token| {
        if let Some(a) = v.as_array() {
            token.parse::<usize>().ok().and_then(|i| a.get(i))
        } else {
            v.get(token.as_str())
        }
    })
}

fn parent<'a>(doc: &'a mut Value, path: &'a [String]) -> Result<(&'a mut Value, &'a str), String> {
    let (last, init) = path.split_last().ok_or("the root cannot be changed here")?;
    let mut at = doc;
    for token in init {
        at = if at.is_array() {
            let i: usize = token.parse().map_err(|_| format!("bad index {token:?}"))?;
            at.as_array_mut()
                .and_then(|a| a.get_mut(i))
                .ok_or_else(|| format!("no element {i}"))?
        } else {
            at.get_mut(token.as_str())
                .ok_or_else(|| format!("no member {token:?}"))?
        };
    }
    Ok((at, last.as_str()))
}

fn add(doc: &mut Value, path: &[String], value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (at, last) = parent(doc, path)?;
    if let Some(a) = at.as_array_mut() {
        let i = if last == "-" {
            a.len()
        } else {
            last.parse::<usize>()
                .map_err(|_| format!("bad index {last:?}"))?
        };
        if i > a.len() {
            return Err(format!("index {i} out of range"));
        }
        a.insert(i, value);
        Ok(())
    } else if let Some(o) = at.as_object_mut() {
        o.insert(&last, value);
        Ok(())
    } else {
        Err(format!("cannot add {last:?} to a scalar"))
    }
}

fn remove(doc: &mut Value, path: &[String]) -> Result<Value, String> {
    let (at, last) = parent(doc, path)?;
    if let Some(a) = at.as_array_mut() {
        let i: usize = last.parse().map_err(|_| format!("bad index {last:?}"))?;
        let value = a.get(i).cloned().ok_or_else(|| format!("no element {i}"))?;
        a.remove(i);
        Ok(value)
    } else if let Some(o) = at.as_object_mut() {
        o.remove(&last).ok_or_else(|| format!("no member {last:?}"))
    } else {
        Err(format!("cannot remove {last:?} from a scalar"))
    }
}

/// A case's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub name: String,
    pub problems: Vec<String>,
}

/// The correctness phase's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Correctness {
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    pub mismatches: Vec<Mismatch>,
}

/// Sends each case once, in order, over one connection, and compares.
pub async fn run_cases(
    connector: &Connector,
    api: Api,
    mode: &Mode,
    cases: &[Case],
    timeout: Duration,
) -> Correctness {
    let mut result = Correctness {
        cases: cases.len(),
        ..Correctness::default()
    };
    let mut conn: Option<Conn> = None;
    for case in cases {
        let problems = match one_case(connector, api, mode, case, &mut conn, timeout).await {
            Ok(problems) => problems,
            Err(e) => {
                conn = None;
                vec![e]
            }
        };
        if problems.is_empty() {
            result.passed += 1;
        } else {
            result.failed += 1;
            result.mismatches.push(Mismatch {
                name: case.name.clone(),
                problems,
            });
        }
    }
    result
}

async fn one_case(
    connector: &Connector,
    api: Api,
    mode: &Mode,
    case: &Case,
    conn: &mut Option<Conn>,
    timeout: Duration,
) -> Result<Vec<String>, String> {
    let (method, path, body) = match mode {
        Mode::Webhook { path } => (
            http::Method::POST,
            case.path.clone().unwrap_or_else(|| path.clone()),
            bytes::Bytes::from(sonic_rs::to_vec(&case.review).map_err(|e| e.to_string())?),
        ),
        Mode::Kube { .. } => {
            let t = bodies::template(&case.review, mode)?;
            (t.method, t.path, t.body)
        }
    };
    let uri = connector.uri(&path).map_err(|e| e.to_string())?;
    let request = connector.request(method, uri, body);
    let exchange = async {
        if conn.as_ref().is_none_or(Conn::is_closed) {
            *conn = Some(connector.connect().await?);
        }
        match conn {
            Some(c) => c.send(request).await,
            None => Err(Failure::new(
                crate::client::ErrorKind::Connect,
                "no connection",
            )),
        }
    };
    let reply = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| "timeout".to_string())?
        .map_err(|f| format!("{}: {}", f.kind.name(), f.message))?;
    let answer = match api {
        Api::Webhook => webhook_answer(&reply)?,
        Api::Kube => api_answer(&reply)?,
    };
    Ok(compare(case, api, &answer))
}

/// Gives a review object a field value (used by the case builders).
pub(crate) fn set(value: &mut Value, key: &str, field: Value) {
    if let Some(o) = value.as_object_mut() {
        o.insert(&key, field);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn case(expect: &str) -> Case {
        sonic_rs::from_str(&format!(
            r#"{{"name":"c","path":"/mutate","review":{{"request":{{"object":{{"metadata":{{"name":"p","annotations":{{"a":"1"}}}}}}}}}},"expect":{expect}}}"#
        ))
        .unwrap()
    }

    fn answer(json: &str) -> Answer {
        webhook_answer(&Reply {
            status: 200,
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::from(json.to_string()),
        })
        .unwrap()
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn allowed_code_message_and_warnings() {
        let a = answer(
            r#"{"response":{"uid":"x","allowed":false,"status":{"code":403,"message":"ValidatingAdmissionPolicy 'p' denied request: team must be platform"},"warnings":["w1 text","w2"]}}"#,
        );
        assert!(!a.allowed);
        assert_eq!(a.code, Some(403));
        let ok = case(
            r#"{"allowed":false,"code":403,"message_contains":"team must be","warnings":["w2","w1"]}"#,
        );
        assert_eq!(compare(&ok, Api::Webhook, &a), Vec::<String>::new());
        let bad = case(r#"{"allowed":true,"code":400,"message_contains":"nope","warnings":[]}"#);
        let problems = compare(&bad, Api::Webhook, &a);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].starts_with("allowed is false"));
    }

    #[test]
    fn patched_and_annotations() {
        let patch = b64(
            r#"[{"op":"add","path":"/metadata/annotations/policy-bench-injected","value":"true"}]"#,
        );
        let a = answer(&format!(
            r#"{{"response":{{"uid":"x","allowed":true,"patchType":"JSONPatch","patch":"{patch}"}}}}"#
        ));
        let ok = case(
            r#"{"allowed":true,"patched":true,"annotations":{"policy-bench-injected":"true","a":"1","b":null}}"#,
        );
        assert_eq!(compare(&ok, Api::Webhook, &a), Vec::<String>::new());
        let bad = case(
            r#"{"allowed":true,"patched":false,"annotations":{"policy-bench-injected":null}}"#,
        );
        assert_eq!(compare(&bad, Api::Webhook, &a).len(), 2);
        let none = answer(r#"{"response":{"uid":"x","allowed":true}}"#);
        let want = case(r#"{"allowed":true,"patched":true}"#);
        assert_eq!(compare(&want, Api::Webhook, &none).len(), 1);
        assert!(
            compare(
                &case(r#"{"allowed":true,"patched":false,"annotations":{"a":"1"}}"#),
                Api::Webhook,
                &none
            )
            .is_empty()
        );
    }

    #[test]
    fn json_patch() {
        let mut doc: Value = sonic_rs::from_str(r#"{"a":{"b":[1,2]},"c":"x"}"#).unwrap();
        let patch: Value = sonic_rs::from_str(
            r#"[{"op":"add","path":"/a/b/1","value":9},{"op":"add","path":"/a/b/-","value":3},
               {"op":"replace","path":"/c","value":"y"},{"op":"add","path":"/d~1e","value":{}},
               {"op":"test","path":"/c","value":"y"},{"op":"copy","from":"/c","path":"/f"},
               {"op":"move","from":"/f","path":"/g"},{"op":"remove","path":"/a/b/0"}]"#,
        )
        .unwrap();
        apply_patch(&mut doc, &patch).unwrap();
        let want: Value =
            sonic_rs::from_str(r#"{"a":{"b":[9,2,3]},"c":"y","d/e":{},"g":"y"}"#).unwrap();
        assert_eq!(doc, want);
        let bad: Value = sonic_rs::from_str(r#"[{"op":"remove","path":"/zz"}]"#).unwrap();
        assert!(apply_patch(&mut doc, &bad).is_err());
        let bad: Value = sonic_rs::from_str(r#"[{"op":"add","path":"/a/b/9","value":1}]"#).unwrap();
        assert!(apply_patch(&mut doc, &bad).is_err());
        let bad: Value = sonic_rs::from_str(r#"[{"op":"test","path":"/c","value":"n"}]"#).unwrap();
        assert!(apply_patch(&mut doc, &bad).is_err());
    }

    #[test]
    fn api_answers_and_warning_headers() {
        let mut headers = http::HeaderMap::new();
        headers.append(
            "warning",
            "299 - \"would violate \\\"x\\\"\"".parse().unwrap(),
        );
        let a = api_answer(&Reply {
            status: 201,
            headers,
            body: bytes::Bytes::from(r#"{"kind":"Pod","metadata":{"annotations":{"k":"v"}}}"#),
        })
        .unwrap();
        assert!(a.allowed);
        assert_eq!(a.warnings, vec!["would violate \"x\"".to_string()]);
        let want = case(r#"{"allowed":true,"warnings":["violate"],"annotations":{"k":"v"}}"#);
        assert!(compare(&want, Api::Kube, &a).is_empty());
        let d = api_answer(&Reply {
            status: 403,
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::from(r#"{"kind":"Status","code":403,"message":"denied: x"}"#),
        })
        .unwrap();
        assert!(!d.allowed);
        assert_eq!(d.message, "denied: x");
        assert!(
            api_answer(&Reply {
                status: 500,
                headers: http::HeaderMap::new(),
                body: bytes::Bytes::new()
            })
            .is_err()
        );
    }

    #[test]
    fn unknown_expectation_fields_are_refused() {
        let r: Result<Case, _> =
            sonic_rs::from_str(r#"{"name":"x","review":{},"expect":{"allowed":true,"alowed":1}}"#);
        assert!(r.is_err());
    }
}
