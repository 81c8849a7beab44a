//! The AdmissionReview, parsed once. Everything the engine reads of a request (matching
//! attributes, `object`, `oldObject`, the CEL `request` variable) borrows from this one parse.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation};
use crate::depth::Scan;

/// Deeper bodies are refused before the (recursive) parser sees them.
pub const MAX_DEPTH: usize = 128;

/// Why an AdmissionReview body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("request body is not valid JSON: {0}")]
    Json(String),
    #[error("request body is nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("expected kind AdmissionReview, got {0:?}")]
    Kind(String),
    #[error("unsupported AdmissionReview apiVersion {0:?} (admission.k8s.io/v1 and v1beta1 are)")]
    ApiVersion(String),
    #[error(
        "request body has the key {0:?} twice in one object: refused, as the API server would read the last and celer the first"
    )]
    DuplicateKey(String),
    #[error("AdmissionReview has no request")]
    NoRequest,
    #[error("AdmissionReview request.{field}: {problem}")]
    Field {
        field: &'static str,
        problem: &'static str,
    },
}

/// The AdmissionReview versions a webhook may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    pub fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "admission.k8s.io/v1",
            ReviewVersion::V1beta1 => "admission.k8s.io/v1beta1",
        }
    }
}

/// A parsed AdmissionReview.
#[derive(Debug, Clone)]
pub struct AdmissionReview {
    root: Json,
    version: ReviewVersion,
}

impl AdmissionReview {
    /// Parses an AdmissionReview body.
    pub fn parse(body: &[u8]) -> Result<AdmissionReview, ReviewError> {
        // One byte scan bounds the nesting and says whether any object may have a key twice;
        // only then does the tree walk look for it (and name it) after the parse.
        let scan = crate::depth::scan(body, MAX_DEPTH);
        if scan == Scan::TooDeep {
            return Err(ReviewError::TooDeep);
        }
        let root: Json = sonic_rs::from_slice(body).map_err(|e| {
            let text = e.to_string();
            ReviewError::Json(text.lines().next().unwrap_or_default().trim().to_string())
        })?;
        if scan == Scan::MaybeDuplicate
            && let Some(path) = crate::duplicates::find(&root)
        {
            return Err(ReviewError::DuplicateKey(path));
        }
        AdmissionReview::from_json(root)
    }

    /// Wraps an already parsed AdmissionReview.
    pub fn from_json(root: Json) -> Result<AdmissionReview, ReviewError> {
        let kind = root
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default();
        if kind != "AdmissionReview" {
            return Err(ReviewError::Kind(kind.to_string()));
        }
        let api_version = root
            .get("apiVersion")
            .and_then(|k| k.as_str())
            .unwrap_or_default();
        let version = match api_version {
            "admission.k8s.io/v1" => ReviewVersion::V1,
            "admission.k8s.io/v1beta1" => ReviewVersion::V1beta1,
            other => return Err(ReviewError::ApiVersion(other.to_string())),
        };
        if !root.get("request").is_some_and(|r| r.is_object()) {
            return Err(ReviewError::NoRequest);
        }
        let review = AdmissionReview { root, version };
        let raw = review.root.get("request").ok_or(ReviewError::NoRequest)?;
        Request::from_json(raw)?;
        Ok(review)
    }

    pub fn version(&self) -> ReviewVersion {
        self.version
    }

    pub fn json(&self) -> &Json {
        &self.root
    }

    /// The request's fields, borrowed. Their types were checked when the review was made
    /// ([`AdmissionReview::from_json`] is its only constructor, and its JSON cannot change), so
    /// they are not checked again.
    pub fn request(&self) -> Result<Request<'_>, ReviewError> {
        let raw = self.root.get("request").ok_or(ReviewError::NoRequest)?;
        Request::read(raw, false)
    }
}

/// `request.userInfo`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserInfo<'a> {
    pub username: &'a str,
    pub uid: &'a str,
    /// A JSON array of strings, when present.
    pub groups: Option<&'a Json>,
    /// A JSON object of string lists, when present.
    pub extra: Option<&'a Json>,
}

/// One admission request's fields, borrowed from the parse.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub uid: &'a str,
    pub attributes: Attributes<'a>,
    pub request_kind: GroupVersionKind<'a>,
    pub request_resource: GroupVersionResource<'a>,
    pub request_sub_resource: &'a str,
    pub user: UserInfo<'a>,
    pub dry_run: bool,
    pub options: Option<&'a Json>,
}

/// Where a request's members are looked up: a JSON object (`get`, a scan of its keys each
/// time) or an `AdmissionRequest`'s members read in one pass ([`Members`]).
trait Fields<'a>: Copy {
    fn field(self, key: &str) -> Option<&'a Json>;
}

impl<'a> Fields<'a> for &'a Json {
    fn field(self, key: &str) -> Option<&'a Json> {
        self.get(key)
    }
}

/// The members of an `AdmissionRequest` the engine reads, found in one pass over its keys
/// instead of one scan of them per field read (about thirty): each is the first member of its
/// name, as `get` finds it.
struct Members<'a> {
    slots: [Option<&'a Json>; MEMBERS],
}

const MEMBERS: usize = 15;

/// The slot of a member [`Members`] keeps.
fn member_slot(key: &str) -> Option<usize> {
    Some(match key {
        "uid" => 0,
        "kind" => 1,
        "resource" => 2,
        "subResource" => 3,
        "requestKind" => 4,
        "requestResource" => 5,
        "requestSubResource" => 6,
        "name" => 7,
        "namespace" => 8,
        "operation" => 9,
        "userInfo" => 10,
        "object" => 11,
        "oldObject" => 12,
        "dryRun" => 13,
        "options" => 14,
        _ => return None,
    })
}

impl<'a> Members<'a> {
    fn read(raw: &'a Json) -> Members<'a> {
        let mut slots = [None; MEMBERS];
        if let Some(object) = raw.as_object() {
            for (key, value) in object.iter() {
                if let Some(slot) = member_slot(key).and_then(|i| slots.get_mut(i))
                    && slot.is_none()
                {
                    *slot = Some(value);
                }
            }
        }
        Members { slots }
    }
}

impl<'a> Fields<'a> for &Members<'a> {
    fn field(self, key: &str) -> Option<&'a Json> {
        member_slot(key).and_then(|i| self.slots.get(i).copied().flatten())
    }
}

fn str_field<'a>(v: impl Fields<'a>, key: &str) -> &'a str {
    v.field(key).and_then(|s| s.as_str()).unwrap_or_default()
}

/// A field that must be a string when present (`null` reads as absent, as Go's decoder does).
fn typed_str<'a>(
    v: impl Fields<'a>,
    key: &str,
    field: &'static str,
) -> Result<&'a str, ReviewError> {
    match non_null(v.field(key)) {
        None => Ok(""),
        Some(s) => s.as_str().ok_or(ReviewError::Field {
            field,
            problem: "must be a string",
        }),
    }
}

/// Checks the type of a field when present: `object` must be a JSON object, `array` an array,
/// `bool` a boolean.
fn check_type<'a>(
    v: impl Fields<'a>,
    key: &str,
    field: &'static str,
    expected: &'static str,
) -> Result<(), ReviewError> {
    let Some(value) = non_null(v.field(key)) else {
        return Ok(());
    };
    let ok = match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => value.is_boolean(),
    };
    if ok {
        return Ok(());
    }
    Err(ReviewError::Field {
        field,
        problem: match expected {
            "object" => "must be a JSON object",
            "array" => "must be a JSON array",
            _ => "must be a boolean",
        },
    })
}

/// Checks the types of the top-level fields of an `AdmissionRequest` the engine reads, so a
/// wrongly typed field is refused rather than read as absent (docs/serve.md); the members of
/// the nested objects are checked as they are read ([`triple`], [`user_info`]).
fn check_request_types(raw: &Members<'_>) -> Result<(), ReviewError> {
    for (key, field) in [
        ("uid", "uid"),
        ("name", "name"),
        ("namespace", "namespace"),
        ("operation", "operation"),
        ("subResource", "subResource"),
        ("requestSubResource", "requestSubResource"),
    ] {
        typed_str(raw, key, field)?;
    }
    for (key, field) in [
        ("kind", "kind"),
        ("resource", "resource"),
        ("requestKind", "requestKind"),
        ("requestResource", "requestResource"),
        ("userInfo", "userInfo"),
        ("options", "options"),
    ] {
        check_type(raw, key, field, "object")?;
    }
    check_type(raw, "dryRun", "dryRun", "bool")?;
    Ok(())
}

fn non_null(v: Option<&Json>) -> Option<&Json> {
    v.filter(|v| !v.is_null())
}

/// `group`, `version` and `third` (`kind` or `resource`) of a kind or resource object, in one
/// pass over its members (the first of each name, as `get` finds it); with `check`, a member
/// that is neither a string nor `null` is refused under its name in `fields`.
fn triple<'a>(
    v: Option<&'a Json>,
    third: &str,
    fields: &[&'static str; 3],
    check: bool,
) -> Result<[&'a str; 3], ReviewError> {
    let mut out = [""; 3];
    let mut seen = [false; 3];
    let Some(object) = v.and_then(|v| v.as_object()) else {
        return Ok(out);
    };
    for (key, value) in object.iter() {
        let i = match key {
            "group" => 0,
            "version" => 1,
            k if k == third => 2,
            _ => continue,
        };
        let (Some(seen), Some(slot)) = (seen.get_mut(i), out.get_mut(i)) else {
            continue;
        };
        if *seen {
            continue;
        }
        *seen = true;
        match value.as_str() {
            Some(text) => *slot = text,
            None if check && !value.is_null() => {
                return Err(ReviewError::Field {
                    field: fields.get(i).copied().unwrap_or_default(),
                    problem: "must be a string",
                });
            }
            None => {}
        }
    }
    Ok(out)
}

fn gvk<'a>(
    v: Option<&'a Json>,
    fields: &[&'static str; 3],
    check: bool,
) -> Result<GroupVersionKind<'a>, ReviewError> {
    let [group, version, kind] = triple(v, "kind", fields, check)?;
    Ok(GroupVersionKind {
        group,
        version,
        kind,
    })
}

fn gvr<'a>(
    v: Option<&'a Json>,
    fields: &[&'static str; 3],
    check: bool,
) -> Result<GroupVersionResource<'a>, ReviewError> {
    let [group, version, resource] = triple(v, "resource", fields, check)?;
    Ok(GroupVersionResource {
        group,
        version,
        resource,
    })
}

/// `request.userInfo`, in one pass over its members; with `check`, wrongly typed members are
/// refused (`null` reads as absent).
fn user_info(u: &Json, check: bool) -> Result<UserInfo<'_>, ReviewError> {
    let mut user = UserInfo::default();
    let mut seen = [false; 4];
    let Some(object) = u.as_object() else {
        return Ok(user);
    };
    let wrong = |field, problem| Err(ReviewError::Field { field, problem });
    for (key, value) in object.iter() {
        let i = match key {
            "username" => 0,
            "uid" => 1,
            "groups" => 2,
            "extra" => 3,
            _ => continue,
        };
        let Some(seen) = seen.get_mut(i) else {
            continue;
        };
        if *seen {
            continue;
        }
        *seen = true;
        if value.is_null() {
            continue;
        }
        match i {
            0 | 1 => match value.as_str() {
                Some(text) if i == 0 => user.username = text,
                Some(text) => user.uid = text,
                None if !check => {}
                None if i == 0 => return wrong("userInfo.username", "must be a string"),
                None => return wrong("userInfo.uid", "must be a string"),
            },
            2 => match value.as_array() {
                Some(groups) => {
                    if check && groups.iter().any(|g| !g.is_str()) {
                        return wrong("userInfo.groups", "must be a list of strings");
                    }
                    user.groups = Some(value);
                }
                None if check => return wrong("userInfo.groups", "must be a JSON array"),
                None => {}
            },
            _ => {
                if value.is_object() {
                    user.extra = Some(value);
                } else if check {
                    return wrong("userInfo.extra", "must be a JSON object");
                }
            }
        }
    }
    Ok(user)
}

impl<'a> Request<'a> {
    /// Reads the fields of an `AdmissionRequest` object.
    pub fn from_json(raw: &'a Json) -> Result<Request<'a>, ReviewError> {
        Request::read(raw, true)
    }

    /// Reads the fields; `check`: check the typed fields' types first (not needed for a request
    /// already read with them checked).
    fn read(raw: &'a Json, check: bool) -> Result<Request<'a>, ReviewError> {
        if !raw.is_object() {
            return Err(ReviewError::NoRequest);
        }
        // Every read of a request member below goes through one pass over its keys.
        let members = Members::read(raw);
        let raw = &members;
        if check {
            check_request_types(raw)?;
        }
        // Read in the order the checks were always made: kind, resource, requestKind,
        // requestResource, userInfo, then the operation.
        let kind = gvk(
            raw.field("kind"),
            &["kind.group", "kind.version", "kind.kind"],
            check,
        )?;
        let resource = gvr(
            raw.field("resource"),
            &["resource.group", "resource.version", "resource.resource"],
            check,
        )?;
        let request_kind = match raw.field("requestKind") {
            Some(v) if v.is_object() => gvk(
                Some(v),
                &[
                    "requestKind.group",
                    "requestKind.version",
                    "requestKind.kind",
                ],
                check,
            )?,
            _ => kind,
        };
        let request_resource = match raw.field("requestResource") {
            Some(v) if v.is_object() => gvr(
                Some(v),
                &[
                    "requestResource.group",
                    "requestResource.version",
                    "requestResource.resource",
                ],
                check,
            )?,
            _ => resource,
        };
        let user = match raw.field("userInfo") {
            Some(u) => user_info(u, check)?,
            None => UserInfo::default(),
        };
        let operation =
            Operation::parse(str_field(raw, "operation")).ok_or(ReviewError::Field {
                field: "operation",
                problem: "must be one of CREATE, UPDATE, DELETE, CONNECT",
            })?;
        if kind.kind.is_empty() || kind.version.is_empty() {
            return Err(ReviewError::Field {
                field: "kind",
                problem: "must name a version and kind",
            });
        }
        if resource.resource.is_empty() || resource.version.is_empty() {
            return Err(ReviewError::Field {
                field: "resource",
                problem: "must name a version and resource",
            });
        }
        let sub_resource = str_field(raw, "subResource");
        let request_sub_resource = match raw.field("requestSubResource").and_then(|v| v.as_str()) {
            Some(s) => s,
            None => sub_resource,
        };
        let object = non_null(raw.field("object"));
        let old_object = non_null(raw.field("oldObject"));
        for (field, value) in [("object", object), ("oldObject", old_object)] {
            if value.is_some_and(|v| !v.is_object()) {
                return Err(ReviewError::Field {
                    field: if field == "object" {
                        "object"
                    } else {
                        "oldObject"
                    },
                    problem: "must be a JSON object",
                });
            }
        }
        Ok(Request {
            uid: str_field(raw, "uid"),
            attributes: Attributes {
                kind,
                resource,
                sub_resource,
                operation,
                name: str_field(raw, "name"),
                namespace: str_field(raw, "namespace"),
                object,
                old_object,
            },
            request_kind,
            request_resource,
            request_sub_resource,
            user,
            dry_run: raw
                .field("dryRun")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            options: non_null(raw.field("options")),
        })
    }

    /// The value of the CEL `request` variable: the fields kube-apiserver exposes
    /// (`CreateAdmissionRequest`, then converted to unstructured, so `omitempty` fields that are
    /// empty are absent: `has(request.name)` is false for a generated name), with
    /// `kind`/`resource` set to what the policy matched (an equivalent resource may differ from
    /// the request's own).
    pub fn cel_request(
        &self,
        kind: GroupVersionKind<'_>,
        resource: GroupVersionResource<'_>,
    ) -> Json {
        let mut out = String::with_capacity(512);
        out.push('{');
        push_gvk(&mut out, "kind", kind);
        out.push(',');
        push_gvr(&mut out, "resource", resource);
        push_opt_str(&mut out, "subResource", self.attributes.sub_resource);
        out.push(',');
        push_gvk(&mut out, "requestKind", self.request_kind);
        out.push(',');
        push_gvr(&mut out, "requestResource", self.request_resource);
        push_opt_str(&mut out, "requestSubResource", self.request_sub_resource);
        push_opt_str(&mut out, "name", self.attributes.name);
        push_opt_str(&mut out, "namespace", self.attributes.namespace);
        out.push(',');
        push_str(&mut out, "operation", self.attributes.operation.as_str());
        out.push_str(",\"userInfo\":{");
        // Each member is written with a leading comma; the first one's comma goes.
        let user = out.len();
        push_opt_str(&mut out, "username", self.user.username);
        push_opt_str(&mut out, "uid", self.user.uid);
        push_opt_json(
            &mut out,
            "groups",
            self.user
                .groups
                .filter(|g| !g.as_array().is_some_and(|a| a.is_empty())),
        );
        push_opt_json(
            &mut out,
            "extra",
            self.user
                .extra
                .filter(|e| !e.as_object().is_some_and(|o| o.is_empty())),
        );
        if out.as_bytes().get(user) == Some(&b',') {
            out.remove(user);
        }
        out.push_str("},\"dryRun\":");
        out.push_str(if self.dry_run { "true" } else { "false" });
        push_opt_json(&mut out, "options", self.options);
        out.push('}');
        // Every part above is valid JSON, so this parse cannot fail; fall back to null anyway.
        sonic_rs::from_str(&out).unwrap_or_default()
    }

    /// The groups of the requesting user.
    pub fn groups(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.user
            .groups
            .and_then(|g| g.as_array())
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|g| g.as_str())
    }
}

/// Who makes a request built offline.
#[derive(Debug, Clone, Default)]
pub struct RequestUser {
    pub username: String,
    pub uid: String,
    pub groups: Vec<String>,
}

/// Builds the AdmissionReview kube-apiserver would send for writing `object` (or deleting
/// `old_object`), for offline evaluation. The resource and scope come from [`crate::kinds`]; a
/// namespaced object without a namespace is taken to be in `default`.
pub fn review_for(
    object: Option<&Json>,
    old_object: Option<&Json>,
    operation: Operation,
    user: &RequestUser,
    uid: &str,
) -> Result<String, ReviewError> {
    review_for_subresource(object, old_object, operation, user, uid, None)
}

/// [`review_for`] for a subresource, as the API server sends it: `subresource` is
/// `RESOURCE/SUBRESOURCE` (`pods/ephemeralcontainers`, `pods/exec`, `deployments/scale`). The
/// request's `resource` is then RESOURCE (its group from the built-in kinds, else the object's)
/// and `subResource` SUBRESOURCE, while `kind` stays the object's (a `Scale` for `scale`).
pub fn review_for_subresource(
    object: Option<&Json>,
    old_object: Option<&Json>,
    operation: Operation,
    user: &RequestUser,
    uid: &str,
    subresource: Option<&str>,
) -> Result<String, ReviewError> {
    let subresource = match subresource {
        None => None,
        Some(text) => match text.split_once('/') {
            Some((r, s)) if !r.is_empty() && !s.is_empty() && !s.contains('/') => Some((r, s)),
            _ => {
                return Err(ReviewError::Field {
                    field: "subResource",
                    problem: "must be RESOURCE/SUBRESOURCE, e.g. pods/exec",
                });
            }
        },
    };
    let subject = object.or(old_object).ok_or(ReviewError::Field {
        field: "object",
        problem: "an object or an old object is required",
    })?;
    let api_version = str_field(subject, "apiVersion");
    let kind = str_field(subject, "kind");
    if api_version.is_empty() || kind.is_empty() {
        return Err(ReviewError::Field {
            field: "object",
            problem: "must have apiVersion and kind",
        });
    }
    let mut info = crate::kinds::kind_info(api_version, kind);
    if let Some((resource, _)) = subresource {
        let (group, namespaced) =
            crate::kinds::resource_group(resource).unwrap_or((info.group.clone(), info.namespaced));
        if group != info.group {
            info.version = "v1".to_string();
        }
        info.group = group;
        info.resource = resource.to_string();
        info.namespaced = namespaced;
    }
    write_review(
        object,
        old_object,
        operation,
        user,
        uid,
        &info,
        subresource.map(|(_, s)| s),
    )
}

/// The AdmissionReview a background scan evaluates `object` in: a `CREATE` by nobody.
/// `info`: the object's resource as discovery names it; `None` guesses it from the kind.
pub fn background_review(
    object: &Json,
    info: Option<crate::kinds::KindInfo>,
    uid: &str,
) -> Result<String, ReviewError> {
    let info = match info {
        Some(info) => info,
        None => crate::kinds::kind_info(str_field(object, "apiVersion"), str_field(object, "kind")),
    };
    write_review(
        Some(object),
        None,
        Operation::Create,
        &RequestUser::default(),
        uid,
        &info,
        None,
    )
}

fn write_review(
    object: Option<&Json>,
    old_object: Option<&Json>,
    operation: Operation,
    user: &RequestUser,
    uid: &str,
    info: &crate::kinds::KindInfo,
    subresource: Option<&str>,
) -> Result<String, ReviewError> {
    let Some(subject) = object.or(old_object) else {
        return Err(ReviewError::Field {
            field: "object",
            problem: "an object or an old object is required",
        });
    };
    let kind = str_field(subject, "kind");
    if str_field(subject, "apiVersion").is_empty() || kind.is_empty() {
        return Err(ReviewError::Field {
            field: "object",
            problem: "must have apiVersion and kind",
        });
    }
    let meta = subject.get("metadata");
    let name = meta.map(|m| str_field(m, "name")).unwrap_or_default();
    let mut namespace = meta.map(|m| str_field(m, "namespace")).unwrap_or_default();
    if info.namespaced && namespace.is_empty() {
        namespace = "default";
    }
    if !info.namespaced {
        namespace = "";
    }
    let mut out = String::with_capacity(1024);
    out.push_str(
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{",
    );
    push_str(&mut out, "uid", uid);
    out.push(',');
    let kind_gvk = GroupVersionKind {
        group: &info.group,
        version: &info.version,
        kind,
    };
    let gvr_value = GroupVersionResource {
        group: &info.group,
        version: &info.version,
        resource: &info.resource,
    };
    push_gvk(&mut out, "kind", kind_gvk);
    out.push(',');
    push_gvr(&mut out, "resource", gvr_value);
    out.push(',');
    push_gvk(&mut out, "requestKind", kind_gvk);
    out.push(',');
    push_gvr(&mut out, "requestResource", gvr_value);
    if let Some(sub) = subresource {
        out.push(',');
        push_str(&mut out, "subResource", sub);
        out.push(',');
        push_str(&mut out, "requestSubResource", sub);
    }
    push_opt_str(&mut out, "name", name);
    push_opt_str(&mut out, "namespace", namespace);
    out.push(',');
    push_str(&mut out, "operation", operation.as_str());
    out.push_str(",\"userInfo\":{");
    push_str(&mut out, "username", &user.username);
    push_opt_str(&mut out, "uid", &user.uid);
    out.push_str(",\"groups\":");
    out.push_str(&sonic_rs::to_string(&user.groups).unwrap_or_else(|_| "[]".to_string()));
    out.push('}');
    let mut with_namespace = |key: &str, v: Option<&Json>| {
        let Some(v) = v else { return };
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":");
        out.push_str(&sonic_rs::to_string(v).unwrap_or_else(|_| "null".to_string()));
    };
    with_namespace("object", object);
    with_namespace("oldObject", old_object);
    out.push_str(",\"dryRun\":false}}");
    Ok(out)
}

fn push_str(out: &mut String, key: &str, value: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
    crate::engine::push_json_string(out, value);
}

fn push_gvk(out: &mut String, key: &str, v: GroupVersionKind<'_>) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":{");
    push_str(out, "group", v.group);
    out.push(',');
    push_str(out, "version", v.version);
    out.push(',');
    push_str(out, "kind", v.kind);
    out.push('}');
}

fn push_gvr(out: &mut String, key: &str, v: GroupVersionResource<'_>) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":{");
    push_str(out, "group", v.group);
    out.push(',');
    push_str(out, "version", v.version);
    out.push(',');
    push_str(out, "resource", v.resource);
    out.push('}');
}

/// `,"key":"value"`, or nothing when the value is empty (Go's `omitempty`).
fn push_opt_str(out: &mut String, key: &str, value: &str) {
    if !value.is_empty() {
        out.push(',');
        push_str(out, key, value);
    }
}

/// `,"key":<json>`, or nothing when absent.
fn push_opt_json(out: &mut String, key: &str, v: Option<&Json>) {
    if let Some(text) = v.and_then(|v| sonic_rs::to_string(v).ok()) {
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":");
        out.push_str(&text);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const REVIEW: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
      "request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},
      "resource":{"group":"","version":"v1","resource":"pods"},
      "name":"p","namespace":"ns","operation":"CREATE",
      "userInfo":{"username":"alice","groups":["g1","system:authenticated"]},
      "object":{"metadata":{"name":"p"}},"oldObject":null,"dryRun":true}}"#;

    #[test]
    fn duplicate_keys_and_wrongly_typed_fields_are_refused() {
        let dup = REVIEW.replace(
            "\"name\":\"p\",\"namespace\"",
            "\"name\":\"p\",\"name\":\"q\",\"namespace\"",
        );
        assert_eq!(
            AdmissionReview::parse(dup.as_bytes()).unwrap_err(),
            ReviewError::DuplicateKey("request.name".to_string())
        );
        let deep = REVIEW.replace("{\"name\":\"p\"}}", "{\"name\":\"p\",\"name\":\"x\"}}");
        assert_eq!(
            AdmissionReview::parse(deep.as_bytes()).unwrap_err(),
            ReviewError::DuplicateKey("request.object.metadata.name".to_string())
        );
        for (from, to, field) in [
            (
                "\"namespace\":\"ns\"",
                "\"namespace\":[\"ns\"]",
                "namespace",
            ),
            ("\"dryRun\":true", "\"dryRun\":\"true\"", "dryRun"),
            (
                "\"username\":\"alice\"",
                "\"username\":1",
                "userInfo.username",
            ),
            ("[\"g1\",", "[1,", "userInfo.groups"),
            (
                "\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"",
                "\"group\":[],\"version\":\"v1\",\"kind\":\"Pod\"",
                "kind.group",
            ),
        ] {
            let text = REVIEW.replace(from, to);
            assert_ne!(text, REVIEW, "{from}");
            let error = match AdmissionReview::parse(text.as_bytes()) {
                Ok(review) => review.request().map(|_| ()).unwrap_err(),
                Err(e) => e,
            };
            match error {
                ReviewError::Field { field: f, .. } => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        // null reads as absent, as in Go.
        let null = REVIEW.replace("\"namespace\":\"ns\"", "\"namespace\":null");
        let review = AdmissionReview::parse(null.as_bytes()).unwrap();
        assert_eq!(review.request().unwrap().attributes.namespace, "");
    }

    #[test]
    fn reads_the_request_fields() {
        let review = AdmissionReview::parse(REVIEW.as_bytes()).unwrap();
        assert_eq!(review.version(), ReviewVersion::V1);
        let r = review.request().unwrap();
        assert_eq!(r.uid, "u-1");
        assert_eq!(r.attributes.resource.resource, "pods");
        assert_eq!(r.attributes.operation, Operation::Create);
        assert_eq!(r.request_kind.kind, "Pod");
        assert!(r.attributes.object.is_some());
        assert!(r.attributes.old_object.is_none());
        assert!(r.dry_run);
        assert_eq!(
            r.groups().collect::<Vec<_>>(),
            ["g1", "system:authenticated"]
        );
    }

    #[test]
    fn the_cel_request_has_every_field() {
        let review = AdmissionReview::parse(REVIEW.as_bytes()).unwrap();
        let r = review.request().unwrap();
        let v = r.cel_request(r.attributes.kind, r.attributes.resource);
        let text = sonic_rs::to_string(&v).unwrap();
        assert_eq!(
            text,
            r#"{"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1","resource":"pods"},"name":"p","namespace":"ns","operation":"CREATE","userInfo":{"username":"alice","groups":["g1","system:authenticated"]},"dryRun":true}"#
        );
    }

    #[test]
    fn bad_reviews_are_named() {
        let cases: &[(&str, &str)] = &[
            ("{", "not valid JSON"),
            (r#"{"kind":"Pod"}"#, "expected kind AdmissionReview"),
            (
                r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v2"}"#,
                "unsupported AdmissionReview apiVersion",
            ),
            (
                r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}"#,
                "has no request",
            ),
            (
                r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"operation":"PATCH"}}"#,
                "request.operation",
            ),
        ];
        for (body, want) in cases {
            let err = AdmissionReview::parse(body.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{body}: {err}");
        }
        let deep = "[".repeat(10_000);
        assert_eq!(
            AdmissionReview::parse(deep.as_bytes()).unwrap_err(),
            ReviewError::TooDeep
        );
    }
}
