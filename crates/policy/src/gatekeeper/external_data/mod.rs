//! Gatekeeper's external data: `Provider` objects name HTTPS services that answer keys with
//! values ([`provider`]), called by the Rego builtin `external_data` (a celer-rego extension
//! answered by [`Providers`]) and by mutators' `assign.externalData`.
//!
//! One call POSTs a `ProviderRequest` `{"apiVersion": "externaldata.gatekeeper.sh/v1beta1",
//! "kind": "ProviderRequest", "request": {"keys": [...]}}` and reads a `ProviderResponse`
//! `{"response": {"idempotent", "items": [{"key", "value", "error"}], "systemError"}}`.
//! Values of idempotent answers are cached by provider and key ([`cache`]); only the keys
//! not cached are sent. A call is bounded in keys ([`MAX_KEYS`]), time (the Provider's
//! timeout) and response size ([`client::MAX_RESPONSE`]); every failure names the provider.
//! A client certificate is presented when one is set ([`present_client_certificate`]).

pub mod cache;
pub mod client;
mod identity;
pub mod provider;

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use celer_cel::Json;
use celer_rego::{Extension, RegoValue, value};
use hashbrown::HashMap;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

pub use client::CallError;
pub use identity::present_client_certificate;
pub use provider::{Provider, ProviderManifest};

use crate::load::{LoadError, Manifest, Source};

/// The most keys one call may send.
pub const MAX_KEYS: usize = 1000;

/// The API version of the requests celer sends.
pub const REQUEST_VERSION: &str = "externaldata.gatekeeper.sh/v1beta1";

/// The Rego builtin, `external_data({"provider": name, "keys": [...]})`.
pub const EXTERNAL_DATA: Extension = Extension {
    name: "external_data",
    args: 1,
};

/// The extensions Gatekeeper's templates may call.
pub const EXTENSIONS: &[Extension] = &[EXTERNAL_DATA];

/// Answers kept across requests and reloads (an unchanged Provider keeps its fingerprint).
static RESPONSES: LazyLock<cache::ResponseCache> =
    LazyLock::new(|| cache::ResponseCache::new(cache::TTL, cache::CAPACITY));

/// Why a call to a provider gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("external data provider {0:?} is not loaded (no Provider of that name)")]
    Missing(String),
    #[error(
        "external data provider {provider:?}: {count} keys in one call, more than the {MAX_KEYS} allowed"
    )]
    TooManyKeys { provider: String, count: usize },
    #[error("external data provider {provider:?}: {source}")]
    Call {
        provider: String,
        #[source]
        source: CallError,
    },
    #[error("external data provider {provider:?} answered with an invalid ProviderResponse: {why}")]
    Malformed { provider: String, why: String },
    #[error("external data provider {provider:?} answered with a system error: {message}")]
    System { provider: String, message: String },
}

impl ProviderError {
    /// The HTTP status Rego's `status_code` reports, as Gatekeeper's: 400 for a request
    /// celer refuses, the provider's own when it answered with one, 500 otherwise.
    pub fn status_code(&self) -> u16 {
        match self {
            ProviderError::Missing(_) | ProviderError::TooManyKeys { .. } => 400,
            ProviderError::Call {
                source: CallError::Status(code),
                ..
            } => *code,
            _ => 500,
        }
    }
}

/// A provider's answer for one key: its value or its error.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    pub value: Result<Json, String>,
}

/// A provider's answers, in the order of the keys asked (a key it did not answer is absent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub items: Vec<Item>,
    /// Whether every answer came from an idempotent response (cached ones did).
    pub idempotent: bool,
}

impl Answer {
    pub fn get(&self, key: &str) -> Option<&Result<Json, String>> {
        self.items.iter().find(|i| i.key == key).map(|i| &i.value)
    }
}

/// The loaded Providers, by name.
#[derive(Debug, Default)]
pub struct Providers {
    by_name: HashMap<String, Arc<Provider>>,
}

impl Providers {
    /// The Providers among `items`; invalid ones and duplicates are left out with an error.
    pub fn build(items: &[(Source, Manifest)], errors: &mut Vec<LoadError>) -> Providers {
        let mut by_name = HashMap::new();
        for (source, item) in items {
            let Some(super::GatekeeperManifest::Provider(m)) = item.downcast() else {
                continue;
            };
            let what = format!("Provider {:?}", m.metadata.name);
            if by_name.contains_key(&m.metadata.name) {
                errors.push(LoadError::new(
                    source,
                    what,
                    "a Provider of this name is already loaded; this one is ignored".to_string(),
                ));
                continue;
            }
            match provider::compile(m) {
                Ok(p) => {
                    by_name.insert(p.name.clone(), Arc::new(p));
                }
                Err(e) => errors.push(LoadError::new(source, what, e)),
            }
        }
        Providers { by_name }
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The values of `keys` from the provider `name`: cached ones, and one call for the rest.
    pub fn fetch(&self, name: &str, keys: &[String]) -> Result<Answer, ProviderError> {
        let provider = self
            .by_name
            .get(name)
            .ok_or_else(|| ProviderError::Missing(name.to_string()))?;
        let mut unique: Vec<&String> = Vec::with_capacity(keys.len());
        for k in keys {
            if !unique.contains(&k) {
                unique.push(k);
            }
        }
        if unique.len() > MAX_KEYS {
            return Err(ProviderError::TooManyKeys {
                provider: name.to_string(),
                count: unique.len(),
            });
        }
        let now = Instant::now();
        let mut found: HashMap<&str, Result<Json, String>> = HashMap::new();
        let mut missing: Vec<&str> = Vec::new();
        for k in &unique {
            match RESPONSES.get(provider.fingerprint, k, now) {
                Some(v) => {
                    found.insert(k.as_str(), Ok(v));
                }
                None => missing.push(k.as_str()),
            }
        }
        let mut idempotent = true;
        if !missing.is_empty() {
            let response = call(provider, &missing)?;
            idempotent = response.idempotent;
            for item in response.items {
                let Some(&k) = missing.iter().find(|m| **m == item.key) else {
                    continue;
                };
                if idempotent && let Ok(v) = &item.value {
                    RESPONSES.insert(provider.fingerprint, item.key.clone(), v.clone(), now);
                }
                found.insert(k, item.value);
            }
        }
        let items = unique
            .iter()
            .filter_map(|k| {
                found.remove(k.as_str()).map(|value| Item {
                    key: k.to_string(),
                    value,
                })
            })
            .collect();
        Ok(Answer { items, idempotent })
    }

    /// `external_data`'s answer, as Gatekeeper's: `{"responses": [[key, value]...], "errors":
    /// [[key, error]...], "status_code": 200, "system_error": ""}`; a failed call is a
    /// `system_error` and its status, for the template to decide on.
    fn rego_answer(&self, request: &RegoValue) -> RegoValue {
        let outcome = rego_request(request).and_then(|(name, keys)| {
            self.fetch(&name, &keys)
                .map_err(|e| (e.status_code(), e.to_string()))
        });
        let (mut responses, mut errors) = (Vec::new(), Vec::new());
        let (status, system_error) = match outcome {
            Ok(answer) => {
                for item in answer.items {
                    let key = RegoValue::from(item.key.as_str());
                    match item.value {
                        Ok(v) => {
                            let v = value::from_json(&v).unwrap_or(RegoValue::Null);
                            responses.push(RegoValue::from(vec![key, v]));
                        }
                        Err(e) => errors.push(RegoValue::from(vec![key, RegoValue::from(e)])),
                    }
                }
                (200, String::new())
            }
            Err((status, message)) => (status, message),
        };
        let mut out = BTreeMap::new();
        out.insert(RegoValue::from("responses"), RegoValue::from(responses));
        out.insert(RegoValue::from("errors"), RegoValue::from(errors));
        out.insert(
            RegoValue::from("status_code"),
            RegoValue::from(u64::from(status)),
        );
        out.insert(
            RegoValue::from("system_error"),
            RegoValue::from(system_error),
        );
        RegoValue::from(out)
    }
}

impl celer_rego::Host for Providers {
    fn call(&self, name: &str, args: Vec<RegoValue>) -> Result<RegoValue, String> {
        if name != EXTERNAL_DATA.name {
            return Err(format!("no such function {name}"));
        }
        let request = args.first().unwrap_or(&RegoValue::Undefined);
        Ok(self.rego_answer(request))
    }
}

/// The provider and keys of `external_data`'s argument, or the 400 answer for a bad one.
fn rego_request(request: &RegoValue) -> Result<(String, Vec<String>), (u16, String)> {
    let bad = |why: &str| (400, format!("external_data: {why}"));
    let name = value::member(request, "provider")
        .and_then(value::as_str)
        .ok_or_else(|| bad("the request needs \"provider\", a string"))?;
    let keys = match value::member(request, "keys") {
        Some(RegoValue::Array(keys)) => keys.iter().collect::<Vec<_>>(),
        Some(RegoValue::Set(keys)) => keys.iter().collect::<Vec<_>>(),
        _ => return Err(bad("the request needs \"keys\", an array of strings")),
    };
    let keys = keys
        .into_iter()
        .map(|k| value::as_str(k).map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("every key must be a string"))?;
    Ok((name.to_string(), keys))
}

/// A `ProviderResponse`'s useful part.
struct Response {
    idempotent: bool,
    items: Vec<Item>,
}

/// One call with `keys`, its response checked.
fn call(provider: &Arc<Provider>, keys: &[&str]) -> Result<Response, ProviderError> {
    let name = &provider.name;
    let body = format!(
        r#"{{"apiVersion":"{REQUEST_VERSION}","kind":"ProviderRequest","request":{{"keys":{}}}}}"#,
        sonic_rs::to_string(keys).unwrap_or_else(|_| "[]".to_string())
    );
    let bytes =
        client::post(provider, body.into_bytes()).map_err(|source| ProviderError::Call {
            provider: name.clone(),
            source,
        })?;
    parse_response(name, &bytes)
}

fn parse_response(name: &str, bytes: &[u8]) -> Result<Response, ProviderError> {
    let malformed = |why: String| ProviderError::Malformed {
        provider: name.to_string(),
        why,
    };
    let doc: Json = sonic_rs::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
    let Some(response) = doc.get("response").filter(|r| r.is_object()) else {
        return Err(malformed("no \"response\" object".to_string()));
    };
    if let Some(message) = response
        .get("systemError")
        .and_then(|e| e.as_str())
        .filter(|e| !e.is_empty())
    {
        return Err(ProviderError::System {
            provider: name.to_string(),
            message: message.to_string(),
        });
    }
    let idempotent = response
        .get("idempotent")
        .and_then(|i| i.as_bool())
        .unwrap_or(false);
    let mut items = Vec::new();
    if let Some(list) = response.get("items").and_then(|i| i.as_array()) {
        for (i, item) in list.iter().enumerate() {
            let Some(key) = item.get("key").and_then(|k| k.as_str()) else {
                return Err(malformed(format!("items[{i}] has no string \"key\"")));
            };
            let error = item
                .get("error")
                .and_then(|e| e.as_str())
                .filter(|e| !e.is_empty());
            let value = match error {
                Some(e) => Err(e.to_string()),
                None => Ok(item.get("value").cloned().unwrap_or_default()),
            };
            items.push(Item {
                key: key.to_string(),
                value,
            });
        }
    }
    Ok(Response { idempotent, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_read_with_per_key_errors_and_system_errors() {
        let ok = parse_response(
            "p",
            br#"{"apiVersion":"externaldata.gatekeeper.sh/v1beta1","kind":"ProviderResponse","response":{"idempotent":true,"items":[{"key":"a","value":"A"},{"key":"b","error":"no b"}]}}"#,
        );
        let Ok(ok) = ok else {
            unreachable!("a valid response")
        };
        assert!(ok.idempotent);
        assert_eq!(
            ok.items,
            [
                Item {
                    key: "a".to_string(),
                    value: Ok(Json::from("A"))
                },
                Item {
                    key: "b".to_string(),
                    value: Err("no b".to_string())
                }
            ]
        );
        let system = parse_response("p", br#"{"response":{"systemError":"down"}}"#).err();
        assert_eq!(
            system.map(|e| e.to_string()),
            Some("external data provider \"p\" answered with a system error: down".to_string())
        );
        let bad = parse_response("p", b"<html>").err().map(|e| e.to_string());
        assert!(bad.is_some_and(|e| e.starts_with(
            "external data provider \"p\" answered with an invalid ProviderResponse"
        )));
    }

    #[test]
    fn a_missing_provider_and_bad_requests_are_answers_not_evaluation_errors() {
        let providers = Providers::default();
        let request = |text: &str| {
            let json: Json = sonic_rs::from_str(text).unwrap_or_default();
            value::from_json(&json).unwrap_or(RegoValue::Undefined)
        };
        let answer = providers.rego_answer(&request(r#"{"provider":"nope","keys":["a"]}"#));
        let answer = value::to_json(&answer).map(|j| j.to_string());
        assert_eq!(
            answer.ok().as_deref(),
            Some(
                r#"{"errors":[],"responses":[],"status_code":400,"system_error":"external data provider \"nope\" is not loaded (no Provider of that name)"}"#
            )
        );
        let answer = providers.rego_answer(&request(r#"{"provider":"p","keys":[1]}"#));
        assert_eq!(
            value::member(&answer, "system_error").and_then(value::as_str),
            Some("external_data: every key must be a string")
        );
    }
}
