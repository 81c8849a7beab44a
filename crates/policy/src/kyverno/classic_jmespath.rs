//! The JMESPath side of classic rules (`pkg/engine/engine.go` `invokeRuleHandler`,
//! `pkg/engine/context`, `pkg/engine/context/loaders`): the JSON context a rule's variables
//! read, its `context` entries loaded in order, its `preconditions`, `validate.deny`
//! conditions and the `{{ }}` variables of a pattern rule's pattern and message.
//!
//! The context is built once per request, on the first rule that reads it: `request` (the
//! AdmissionRequest: `uid`, `kind`, `resource`, `name`, `namespace`, `operation`, `userInfo`,
//! `object`, `oldObject`, `dryRun`, `options`...), `serviceAccountName` and
//! `serviceAccountNamespace`. Where celer differs: `request.roles` and
//! `request.clusterRoles` are absent (roles are not resolved), and `images` is not filled.
//! Context entries load in order and deferred, as Kyverno defers them: the entries the
//! preconditions read (and those before them) load before the preconditions, those the
//! rule's body reads only when the preconditions hold, and an entry nothing reads never
//! loads (Kyverno loads each entry when a variable first reads it; celer decides from the
//! rule's text).

use std::borrow::Cow;
use std::sync::Arc;

use celer_cel::Json;
use celer_cel_kyverno::{ContextError, HttpRequest, KyvernoContext};
use celer_jmespath_kyverno::{Substitution, evaluate_conditions, registry};
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use super::ClassicRule;
use crate::family::FamilyRequest;
use crate::kyverno::classic_values::{add_variable, set_path};
use crate::response::ResultKind;

/// A rule's `preconditions` and `context` entries.
#[derive(Debug, Default)]
pub struct RuleJmes {
    pub preconditions: Option<Json>,
    pub context: Vec<Json>,
    /// What the rule's body reads (its message, pattern and deny conditions, as text): the
    /// context entries it names are the ones loaded after the preconditions.
    pub body: String,
}

impl RuleJmes {
    pub(super) fn new(
        preconditions: Option<&Json>,
        context: Option<&Json>,
        body: String,
    ) -> RuleJmes {
        RuleJmes {
            preconditions: preconditions.cloned(),
            context: context
                .and_then(|c| c.as_array())
                .map(|a| a.iter().cloned().collect())
                .unwrap_or_default(),
            body,
        }
    }
}

fn object_with(members: Vec<(&str, Json)>) -> Json {
    let mut o = Json::new_object();
    if let Some(m) = o.as_object_mut() {
        for (k, v) in members {
            m.insert(&k, v);
        }
    }
    o
}

/// The request's JSON context (`newJsonContext`).
pub(super) fn base_context(request: &FamilyRequest<'_>) -> Json {
    let ctx = request.ctx;
    let mut req = ctx.default_cel_request().clone();
    if let Some(o) = req.as_object_mut() {
        o.insert(&"uid", Json::from(ctx.request.uid));
        o.insert(&"object", request.object.cloned().unwrap_or_default());
        o.insert(
            &"oldObject",
            request.attributes.old_object.cloned().unwrap_or_default(),
        );
    }
    // `AddServiceAccount`: `system:serviceaccount:<namespace>:<name>`.
    let username = ctx.request.user.username;
    let (sa_namespace, sa_name) = username
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| {
            let mut parts = rest.split(':');
            Some((parts.next()?, parts.next()?))
        })
        .unwrap_or(("", ""));
    object_with(vec![
        ("request", req),
        ("serviceAccountName", Json::from(sa_name)),
        ("serviceAccountNamespace", Json::from(sa_namespace)),
    ])
}

/// The context a rule reads: the request's, with the test's values for the resource and the
/// rule (its context entries are loaded by [`load_entries`]).
pub(super) fn rule_context(
    r: &ClassicRule,
    base: &Json,
    request: &FamilyRequest<'_>,
) -> Result<Json, String> {
    let mut context = base.clone();
    if let Some(values) = request.ctx.classic_values() {
        let name = request
            .object
            .or(request.attributes.old_object)
            .and_then(|o| o.get("metadata"))
            .and_then(|m| m.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or(request.attributes.name);
        for (k, v) in values.for_resource(r.policy.as_str(), name) {
            add_variable(&mut context, k, v);
        }
        for (k, v) in values.for_rule(r.policy.as_str(), r.rule.as_str()) {
            add_variable(&mut context, k, v);
        }
    }
    Ok(context)
}

/// Loads the rule's context entries from `*loaded` up to `upto` (exclusive), in order, as
/// Kyverno's deferred loading does when a variable first reads one: an entry no variable
/// reads before the rule ends (its preconditions not met, say) is never loaded and cannot
/// fail the rule.
pub(super) fn load_entries(
    r: &ClassicRule,
    jmes: &RuleJmes,
    context: &mut Json,
    loaded: &mut usize,
    upto: usize,
    request: &FamilyRequest<'_>,
) -> Result<(), String> {
    let offline = request.mode.offline && !request.mode.live_context;
    let kyverno = request.ctx.kyverno_context();
    while *loaded < upto.min(jmes.context.len()) {
        let entry = &jmes.context[*loaded];
        *loaded += 1;
        load_entry(entry, context, kyverno, r, offline)
            .map_err(|e| format!("failed to load context: {e}"))?;
    }
    Ok(())
}

/// How many of the rule's context entries the preconditions need loaded: up to the last one
/// whose name they read (entries are loaded in order, since one may read an earlier one).
pub(super) fn entries_for_preconditions(jmes: &RuleJmes) -> usize {
    let text = jmes
        .preconditions
        .as_ref()
        .map(|p| p.to_string())
        .unwrap_or_default();
    entries_read_by(jmes, &text)
}

/// How many entries the rule needs loaded in all: up to the last one its preconditions or
/// its body read.
pub(super) fn entries_for_rule(jmes: &RuleJmes) -> usize {
    entries_for_preconditions(jmes).max(entries_read_by(jmes, &jmes.body))
}

fn entries_read_by(jmes: &RuleJmes, text: &str) -> usize {
    jmes.context
        .iter()
        .rposition(|e| reads_variable(text, str_at(e, "name")))
        .map_or(0, |i| i + 1)
}

/// Whether `text` reads the variable `name` (a JMESPath identifier at the start of a path).
fn reads_variable(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let word = |b: u8| b == b'_' || b == b'-' || b.is_ascii_alphanumeric();
    let bytes = text.as_bytes();
    text.match_indices(name).any(|(i, _)| {
        let before = i.checked_sub(1).and_then(|j| bytes.get(j)).copied();
        let after = bytes.get(i + name.len()).copied();
        !before.is_some_and(|b| word(b) || b == b'.') && !after.is_some_and(word)
    })
}

fn str_at<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

/// A string field substituted (`SubstituteAll` on a string that must stay one).
fn substituted_str(text: &str, context: &Json, what: &str) -> Result<String, String> {
    let v = Substitution::new(registry())
        .run_str(text, context)
        .map_err(|e| format!("failed to substitute variables in {what}: {e}"))?;
    match v.as_str() {
        Some(s) => Ok(s.to_string()),
        None => Err(format!(
            "failed to substitute variables in {what}: expected string"
        )),
    }
}

fn search(expression: &str, data: &Json) -> Result<Json, String> {
    celer_jmespath_kyverno::substitute::query(registry(), expression, data)
        .map_err(|e| e.to_string())
}

/// Sets entry `name` of the context (`ReplaceContextEntry`).
fn replace_entry(context: &mut Json, name: &str, value: Json) {
    let parts = crate::kyverno::classic_values::key_parts(name);
    if let Some(o) = context.as_object_mut()
        && parts.len() == 1
    {
        o.insert(&name, value);
        return;
    }
    set_path(context, &parts, &value);
}

/// Loads one context entry.
fn load_entry(
    entry: &Json,
    context: &mut Json,
    kyverno: Option<&Arc<dyn KyvernoContext>>,
    r: &ClassicRule,
    offline: bool,
) -> Result<(), String> {
    let name = str_at(entry, "name");
    if let Some(variable) = entry.get("variable").filter(|v| !v.is_null()) {
        let value = load_variable(name, variable, context)?;
        replace_entry(context, name, value);
        return Ok(());
    }
    if let Some(cm) = entry.get("configMap").filter(|v| !v.is_null()) {
        return load_config_map(name, cm, context, kyverno, r, offline);
    }
    if let Some(call) = entry.get("apiCall").filter(|v| !v.is_null()) {
        return load_api_call(name, call, context, kyverno, offline);
    }
    if let Some(global) = entry.get("globalReference").filter(|v| !v.is_null()) {
        let Some(kyverno) = kyverno else {
            // Kyverno without a global context store does not load the entry.
            return Ok(());
        };
        if r.namespace.is_some() {
            return Err(format!(
                "context entry {name}: globalReference is not allowed in namespaced policies"
            ));
        }
        let key = substituted_str(str_at(global, "name"), context, "globalReference.name")?;
        // `entry.projection`, as Kyverno splits it.
        let mut parts = key.split('.');
        let entry_name = parts.next().unwrap_or_default();
        let projection = parts.next().unwrap_or_default();
        let failed =
            |why: String| format!("failed to marshal APICall data for context entry {name}: {why}");
        let data = match kyverno.global_context(entry_name, projection) {
            Ok(Some(d)) => d,
            Ok(None) => return Err(failed(format!("failed to fetch entry key={entry_name}"))),
            Err(ContextError::Unsupported) => return Ok(()),
            Err(e) => return Err(failed(e.to_string())),
        };
        let value = match str_at(global, "jmesPath") {
            "" => data,
            path => {
                let path = substituted_str(path, context, "globalReference.jmesPath")?;
                search(&path, &data)?
            }
        };
        replace_entry(context, name, value);
        return Ok(());
    }
    if let Some(image) = entry.get("imageRegistry").filter(|v| !v.is_null()) {
        let Some(kyverno) = kyverno else {
            return Err(format!(
                "context entry {name}: imageRegistry needs a registry, which this run has none of"
            ));
        };
        let value = load_image_registry(name, image, context, kyverno.as_ref())?;
        replace_entry(context, name, value);
        return Ok(());
    }
    Err(format!(
        "missing ConfigMap|APICall|ImageRegistry|Variable in context entry {name}"
    ))
}

/// An `imageRegistry` entry (`loaders/imagedata.go`): the image's data as the classic
/// engine shapes it (`manifestList` and `configData` where `image.GetMetadata` says
/// `imageIndex` and `config`), then the entry's `jmesPath`. The registry is reached with the
/// credentials `celer serve` was given; an entry's own `imageRegistryCredentials` are not read.
fn load_image_registry(
    name: &str,
    image: &Json,
    context: &Json,
    kyverno: &dyn KyvernoContext,
) -> Result<Json, String> {
    let reference = match image.get("reference") {
        Some(r) => Substitution::new(registry())
            .run(r, context)
            .map_err(|e| format!("failed to substitute variables in context entry {name}: {e}"))?,
        None => Json::new(),
    };
    let Some(reference) = reference.as_str() else {
        return Err(format!(
            "invalid image reference {reference}, image reference must be a string"
        ));
    };
    let data = kyverno
        .image_metadata(reference)
        .map_err(|e| format!("failed to fetch image descriptor: {reference}, error: {e}"))?;
    let field = |key: &str| data.get(key).cloned().unwrap_or_default();
    let mut out = sonic_rs::Object::new();
    for key in [
        "image",
        "resolvedImage",
        "registry",
        "repository",
        "identifier",
    ] {
        out.insert(&key, field(key));
    }
    out.insert(&"manifestList", field("imageIndex"));
    out.insert(&"manifest", field("manifest"));
    out.insert(&"configData", field("config"));
    let value = Json::from(out);
    match str_at(image, "jmesPath") {
        "" => Ok(value),
        path => {
            let path = substituted_str(path, context, "imageRegistry.jmesPath")?;
            search(&path, &value).map_err(|e| {
                format!(
                    "failed to apply JMESPath ({path}) results to context entry {name}, error: {e}"
                )
            })
        }
    }
}

/// A `variable` entry (`loaders/variable.go`).
fn load_variable(name: &str, variable: &Json, context: &Json) -> Result<Json, String> {
    let s = Substitution::new(registry());
    let path = match str_at(variable, "jmesPath") {
        "" => String::new(),
        p => {
            let v = s.run_str(p, context).map_err(|e| {
                format!("failed to substitute variables in context entry {name} {p}: {e}")
            })?;
            match v.as_str() {
                Some(p) => p.to_string(),
                None => return Err(format!("jmespath value must be a string {name} {p}")),
            }
        }
    };
    let default = match variable.get("default").filter(|d| !d.is_null()) {
        Some(d) => Some(s.run(d, context).map_err(|e| {
            format!("failed to substitute variables in context entry {name} default: {e}")
        })?),
        None => None,
    };
    let mut output = default.clone();
    if let Some(value) = variable.get("value").filter(|v| !v.is_null()) {
        let value = s.run(value, context).map_err(|e| {
            format!("failed to substitute variables in context entry {name} value: {e}")
        })?;
        if path.is_empty() {
            output = Some(value);
        } else {
            match search(&path, &value) {
                Ok(v) => output = Some(v),
                Err(e) if default.is_none() => {
                    return Err(format!(
                        "failed to apply jmespath {path} to variable {}: {e}",
                        sonic_rs::to_string(&value).unwrap_or_default()
                    ));
                }
                Err(_) => {}
            }
        }
    } else if !path.is_empty() {
        match search(&path, context) {
            Ok(v) if !v.is_null() => output = Some(v),
            Ok(_) => {}
            Err(e) if default.is_none() => {
                return Err(format!(
                    "failed to apply jmespath {path} to variable <nil>: {e}"
                ));
            }
            Err(_) => {}
        }
    }
    match output {
        Some(v) if !v.is_null() => Ok(v),
        _ => Err(format!(
            "failed to add context entry for variable {name} since it evaluated to nil"
        )),
    }
}

/// A `configMap` entry (`loaders/configmap.go`): `{data, metadata}` of the ConfigMap.
fn load_config_map(
    name: &str,
    cm: &Json,
    context: &mut Json,
    kyverno: Option<&Arc<dyn KyvernoContext>>,
    r: &ClassicRule,
    offline: bool,
) -> Result<(), String> {
    let Some(kyverno) = kyverno else {
        // No resolver: Kyverno does not load the entry.
        return Ok(());
    };
    let what = |field: &str| format!("context {name} configMap.{field} {}", str_at(cm, field));
    let cm_name = substituted_str(str_at(cm, "name"), context, &what("name"))?;
    let mut namespace = substituted_str(str_at(cm, "namespace"), context, &what("namespace"))?;
    let policy_namespace = r.namespace.as_deref().unwrap_or_default();
    if namespace.is_empty() {
        namespace = match policy_namespace {
            "" => "default".to_string(),
            ns => ns.to_string(),
        };
    }
    if !policy_namespace.is_empty() && namespace != policy_namespace {
        return Err(format!(
            "context entry {name}: configMap namespace {namespace:?} is different from policy namespace {policy_namespace:?}"
        ));
    }
    let failed = |e: String| {
        format!(
            "failed to retrieve config map for context entry {name}: failed to get configmap {namespace}/{cm_name} : {e}"
        )
    };
    let object = match kyverno.get_resource("v1", "configmaps", &namespace, &cm_name) {
        Ok(Some(o)) => o,
        // Kyverno's CLI without cluster resources has no resolver and skips the entry.
        Ok(None) | Err(ContextError::Unsupported) if offline => return Ok(()),
        Ok(None) => return Err(failed(format!("configmaps \"{cm_name}\" not found"))),
        Err(e) => return Err(failed(e.to_string())),
    };
    let value = object_with(vec![
        (
            "data",
            object.get("data").cloned().unwrap_or_else(Json::new_object),
        ),
        (
            "metadata",
            object
                .get("metadata")
                .cloned()
                .unwrap_or_else(Json::new_object),
        ),
    ]);
    replace_entry(context, name, value);
    Ok(())
}

/// An `apiCall` entry (`loaders/apicall.go`): a `urlPath` read through the context (GET of an
/// object or a list of the API), or, offline, a mocked response.
fn load_api_call(
    name: &str,
    call: &Json,
    context: &mut Json,
    kyverno: Option<&Arc<dyn KyvernoContext>>,
    offline: bool,
) -> Result<(), String> {
    let Some(kyverno) = kyverno else {
        return Ok(());
    };
    let s = Substitution::new(registry());
    let call = s.run(call, context).map_err(|e| {
        format!("failed to substitute variables in apiCall context entry {name:?}: {e}")
    })?;
    let method = match str_at(&call, "method") {
        "" => "GET",
        "POST" => "POST",
        "GET" => "GET",
        m => {
            return Err(format!(
                "context entry {name}: unsupported apiCall method {m}"
            ));
        }
    };
    let url = match call.get("service").map(|s| str_at(s, "url")) {
        Some(u) if !u.is_empty() => u.to_string(),
        _ => str_at(&call, "urlPath").to_string(),
    };
    let data = if offline {
        let request = HttpRequest::new(method, url.clone());
        match kyverno.http(&request) {
            Ok(mut body) => {
                let status = body.get("statusCode").and_then(|s| s.as_i64());
                if let Some(status) = status {
                    if !(200..300).contains(&status) {
                        return Err(format!(
                            "HTTP {status} from apiCall mock for context entry {name:?} (v1 apiCall treats non-2xx as failure)"
                        ));
                    }
                    if let Some(o) = body.as_object_mut() {
                        o.remove(&"statusCode");
                    }
                }
                body.get("body")
                    .filter(|_| body.as_object().is_some_and(|o| o.len() == 1))
                    .cloned()
                    .unwrap_or(body)
            }
            // Not mocked: Kyverno's CLI has no client and does not load the entry.
            Err(_) => return Ok(()),
        }
    } else {
        if call.get("service").is_some_and(|s| !s.is_null()) || method != "GET" {
            return Err(format!(
                "context entry {name}: only GET apiCalls on urlPath are supported by celer"
            ));
        }
        get_url_path(kyverno.as_ref(), &url)
            .map_err(|e| format!("failed to load data for context entry {name}: {e}"))?
    };
    let value = match str_at(&call, "jmesPath") {
        "" => data,
        path => search(path, &data).map_err(|e| {
            format!("failed to apply JMESPath {path} for context entry {name}: {e}")
        })?,
    };
    replace_entry(context, name, value);
    Ok(())
}

/// A GET of an API path: `/api/v1[/namespaces/<ns>]/<resource>[/<name>]` or
/// `/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>]`; a list is returned as
/// the API server returns it (`items`).
fn get_url_path(kyverno: &dyn KyvernoContext, url: &str) -> Result<Json, String> {
    let path = url.split('?').next().unwrap_or_default();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (api_version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return Err(format!("unsupported urlPath {url}")),
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (*ns, rest),
        _ => ("", rest),
    };
    match rest {
        [resource] => {
            let items = kyverno
                .list_resources(&api_version, resource, namespace, &[])
                .map_err(|e| e.to_string())?;
            let mut list = Json::new_array();
            if let Some(a) = list.as_array_mut() {
                for item in items {
                    a.push(item);
                }
            }
            Ok(object_with(vec![
                ("apiVersion", Json::from(api_version.as_str())),
                ("kind", Json::from("List")),
                ("items", list),
            ]))
        }
        [resource, name] => match kyverno.get_resource(&api_version, resource, namespace, name) {
            Ok(Some(o)) => Ok(o),
            Ok(None) => Err(format!("{resource} \"{name}\" not found")),
            Err(e) => Err(e.to_string()),
        },
        _ => Err(format!("unsupported urlPath {url}")),
    }
}

/// `CheckPreconditions`: `None` when they hold, else the rule's result (skip, or error).
pub(super) fn preconditions(jmes: &RuleJmes, context: &Json) -> Option<(ResultKind, String)> {
    let conditions = jmes.preconditions.as_ref()?;
    match evaluate_conditions(conditions, context, registry()) {
        Ok(r) if r.passed => None,
        Ok(r) => {
            let message = if r.message.is_empty() {
                "preconditions not met".to_string()
            } else {
                format!("preconditions not met; {}", r.message)
            };
            Some((ResultKind::Skip, message))
        }
        Err(e) => Some((
            ResultKind::Error,
            format!("failed to evaluate preconditions: {e}"),
        )),
    }
}

/// Whether an exception's `conditions` hold (an error is a no, as in `MatchesException`).
pub(super) fn exception_conditions_hold(conditions: &Json, context: &Json) -> bool {
    matches!(evaluate_conditions(conditions, context, registry()), Ok(r) if r.passed)
}

/// A `validate.deny` rule's result (`validateDeny`, `getDenyMessage`).
pub(super) fn deny(
    rule: &str,
    deny: Option<&Json>,
    message: Option<&str>,
    context: &Json,
) -> (ResultKind, String) {
    let conditions = deny
        .and_then(|d| d.get("conditions"))
        .cloned()
        .unwrap_or_default();
    let result = match evaluate_conditions(&conditions, context, registry()) {
        Ok(r) => r,
        Err(e) => {
            return (
                ResultKind::Error,
                format!("failed to check deny conditions: {e}"),
            );
        }
    };
    if !result.passed {
        return (
            ResultKind::Pass,
            format!("validation rule '{rule}' passed."),
        );
    }
    let message = message.unwrap_or_default();
    if message.is_empty() && result.message.is_empty() {
        return (
            ResultKind::Fail,
            format!("validation error: rule {rule} failed"),
        );
    }
    let joined: Vec<&str> = [message, result.message.as_str()]
        .into_iter()
        .filter(|m| !m.is_empty())
        .collect();
    let text = joined.join("; ");
    let message = match Substitution::new(registry()).run_str(&text, context) {
        Ok(v) => match v.as_str() {
            Some(s) => s.to_string(),
            None => {
                "the produced message didn't resolve to a string, check your policy definition."
                    .to_string()
            }
        },
        Err(_) => result.message,
    };
    (ResultKind::Fail, message)
}

/// A rule's `reportProperties` for its result: substituted in `context` when there is one
/// (the rule's context loaded, its preconditions met); as written otherwise, or when any
/// value fails to substitute (Kyverno then logs and keeps them all as written).
pub(super) fn report_properties(
    written: &[(String, String)],
    context: Option<&Json>,
) -> crate::response::ReportProperties {
    let as_written = || {
        (written.iter())
            .map(|(k, v)| (Cow::Owned(k.clone()), v.clone()))
            .collect()
    };
    let Some(context) = context else {
        return as_written();
    };
    let s = Substitution::new(registry());
    let substituted: Result<crate::response::ReportProperties, _> = (written.iter())
        .map(|(k, v)| {
            if !v.contains("{{") {
                return Ok((Cow::Owned(k.clone()), v.clone()));
            }
            let value = s.run_str(v, context)?;
            let text = match value.as_str() {
                Some(text) => text.to_string(),
                None => value.to_string(),
            };
            Ok::<_, celer_jmespath_kyverno::SubstitutionError>((Cow::Owned(k.clone()), text))
        })
        .collect();
    substituted.unwrap_or_else(|_| as_written())
}

/// A pattern, an anyPattern and a message, substituted.
pub(super) type Substituted = (Option<Json>, Option<Json>, Option<String>);

/// A pattern rule's pattern(s) and message with their variables substituted.
pub(super) fn substitute_pattern(
    pattern: Option<&Json>,
    any_pattern: Option<&Json>,
    message: Option<&str>,
    context: &Json,
) -> Result<Substituted, String> {
    let s = Substitution::new(registry());
    let sub = |p: Option<&Json>| -> Result<Option<Json>, String> {
        p.map(|p| s.run(p, context))
            .transpose()
            .map_err(|e| format!("variable substitution failed: {e}"))
    };
    let pattern = sub(pattern)?;
    let any_pattern = if pattern.is_none() {
        sub(any_pattern)?
    } else {
        None
    };
    // A message that does not substitute stays as written.
    let message = message.map(|m| match s.run_str(m, context) {
        Ok(v) => v
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| m.to_string()),
        Err(_) => m.to_string(),
    });
    Ok((pattern, any_pattern, message))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(s: &str) -> Json {
        sonic_rs::from_str(s).unwrap()
    }

    #[test]
    fn deny_messages() {
        let ctx = json(r#"{"request":{"object":{"metadata":{"name":"web"}}}}"#);
        let d = json(
            r#"{"conditions":{"any":[{"key":"{{request.object.metadata.name}}","operator":"Equals","value":"web"}]}}"#,
        );
        let (kind, message) = deny(
            "r",
            Some(&d),
            Some("{{request.object.metadata.name}} is denied"),
            &ctx,
        );
        assert_eq!(kind, ResultKind::Fail);
        assert_eq!(message, "web is denied");
        let (kind, message) = deny("r", Some(&d), None, &ctx);
        assert_eq!(
            (kind, message.as_str()),
            (ResultKind::Fail, "validation error: rule r failed")
        );
        let pass = json(
            r#"{"conditions":{"any":[{"key":"{{request.object.metadata.name}}","operator":"Equals","value":"db"}]}}"#,
        );
        let (kind, message) = deny("r", Some(&pass), None, &ctx);
        assert_eq!(
            (kind, message.as_str()),
            (ResultKind::Pass, "validation rule 'r' passed.")
        );
        let bad = json(
            r#"{"conditions":{"any":[{"key":"{{request.object.spec.x}}","operator":"Equals","value":"db"}]}}"#,
        );
        let (kind, message) = deny("r", Some(&bad), None, &ctx);
        assert_eq!(kind, ResultKind::Error);
        assert!(
            message.starts_with("failed to check deny conditions: "),
            "{message}"
        );
    }

    #[test]
    fn preconditions_skip_with_message() {
        let ctx = json(r#"{"request":{"operation":"CREATE"}}"#);
        let jmes = RuleJmes::new(
            Some(&json(
                r#"{"all":[{"key":"{{request.operation}}","operator":"Equals","value":"UPDATE","message":"not an update"}]}"#,
            )),
            None,
            String::new(),
        );
        let (kind, message) = preconditions(&jmes, &ctx).unwrap();
        assert_eq!(kind, ResultKind::Skip);
        assert_eq!(message, "preconditions not met; not an update");
    }

    #[test]
    fn entries_load_as_far_as_the_preconditions_then_the_body_read_them() {
        let jmes = RuleJmes::new(
            Some(&json(
                r#"{"all":[{"key":"{{ first.count }}","operator":"GreaterThan","value":0}]}"#,
            )),
            Some(&json(
                r#"[{"name":"first","variable":{"value":1}},{"name":"second","variable":{"value":2}},{"name":"unused","configMap":{"name":"missing","namespace":"x"}}]"#,
            )),
            "{{ second }} is wrong".to_string(),
        );
        assert_eq!(entries_for_preconditions(&jmes), 1);
        // The body reads `second`; `unused` is never loaded.
        assert_eq!(entries_for_rule(&jmes), 2);
        assert!(reads_variable("{{ request.object.spec }}", "request"));
        assert!(!reads_variable("{{ request.object.first }}", "first"));
        assert!(!reads_variable("{{ firstone }}", "first"));
        assert!(reads_variable("{{first[0]}}", "first"));
    }

    #[test]
    fn variable_entries() {
        let ctx = json(r#"{"request":{"object":{"metadata":{"labels":{"app":"a"}}}}}"#);
        let v = load_variable(
            "app",
            &json(r#"{"jmesPath":"request.object.metadata.labels.app"}"#),
            &ctx,
        )
        .unwrap();
        assert_eq!(v.as_str(), Some("a"));
        let v = load_variable(
            "x",
            &json(r#"{"jmesPath":"request.object.metadata.labels.none","default":"d"}"#),
            &ctx,
        )
        .unwrap();
        assert_eq!(v.as_str(), Some("d"));
        let v = load_variable(
            "y",
            &json(r#"{"value":{"a":"{{request.object.metadata.labels.app}}"}}"#),
            &ctx,
        )
        .unwrap();
        assert_eq!(sonic_rs::to_string(&v).unwrap(), r#"{"a":"a"}"#);
        assert!(load_variable("z", &json(r#"{"jmesPath":"request.nothing"}"#), &ctx).is_err());
    }

    #[test]
    fn pattern_substitution() {
        let ctx = json(r#"{"request":{"object":{"metadata":{"name":"web"}}}}"#);
        let (p, _, m) = substitute_pattern(
            Some(&json(
                r#"{"metadata":{"name":"{{request.object.metadata.name}}"}}"#,
            )),
            None,
            Some("name {{request.object.metadata.name}}"),
            &ctx,
        )
        .unwrap();
        assert_eq!(
            sonic_rs::to_string(&p.unwrap()).unwrap(),
            r#"{"metadata":{"name":"web"}}"#
        );
        assert_eq!(m.as_deref(), Some("name web"));
    }
}
