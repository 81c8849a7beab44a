//! Request bodies: read from a JSONL file (AdmissionReviews or objects) or made by the built-in
//! Pod generator, each turned once into a [`Template`] (method, path, serialized body) so the
//! load phase only copies bytes. In webhook mode every request gets a fresh `request.uid`,
//! written into the template's fixed-width uid slot.

use std::path::Path;

use bytes::{Bytes, BytesMut};
use http::Method;
use sonic_rs::{JsonValueMutTrait, JsonValueTrait, Value};

use crate::BenchError;

/// The uid written into templates; replaced per request.
pub const UID_SLOT: &str = "00000000-0000-4000-8000-000000000000";

/// The namespace, label and annotations of the contract policies (policies/bench-contract).
pub const CONTRACT_NAMESPACE: &str = "policy-bench";
pub const SUBJECT_LABEL: &str = "policy-bench-subject";
pub const TEAM_ANNOTATION: &str = "policy-bench-team";
pub const INJECTED_ANNOTATION: &str = "policy-bench-injected";

/// Where requests go, which decides their shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// POST AdmissionReviews to this path of the target.
    Webhook { path: String },
    /// POST (or PUT, for UPDATE) objects to the API server with `dryRun=All`.
    Kube {
        /// The server URL's path prefix ("" for most).
        prefix: String,
        /// For objects that name no namespace.
        namespace: String,
    },
}

/// One prepared request.
#[derive(Debug, Clone)]
pub struct Template {
    pub method: Method,
    pub path: String,
    pub body: Bytes,
    /// Where [`UID_SLOT`] is in `body` (webhook mode).
    pub uid_at: Option<usize>,
}

impl Template {
    /// The body of request `n` of run `run`: the template with its own uid.
    pub fn body_for(&self, run: u32, n: u64) -> Bytes {
        match self.uid_at {
            Some(at) if at + UID_SLOT.len() <= self.body.len() => {
                let mut body = BytesMut::from(&self.body[..]);
                if let Some(slot) = body.get_mut(at..at + UID_SLOT.len()) {
                    slot.copy_from_slice(&uid(run, n));
                }
                body.freeze()
            }
            _ => self.body.clone(),
        }
    }
}

/// The uid of request `n` of run `run`: 36 characters, UUID-shaped.
pub fn uid(run: u32, n: u64) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = *b"00000000-0000-4000-8000-000000000000";
    let mut put = |range: std::ops::Range<usize>, mut value: u64| {
        for i in range.rev() {
            if let (Some(o), Some(h)) = (out.get_mut(i), HEX.get((value & 0xf) as usize)) {
                *o = *h;
            }
            value >>= 4;
        }
    };
    put(0..8, u64::from(run));
    put(24..36, n);
    out
}

/// Pod sizes of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodSize {
    /// One container, about 1 KB.
    Small,
    /// 12 containers and 2 init containers with env, mounts and 50 annotations, about 50 KB.
    Large,
}

/// A generated Pod: in the contract's namespace, labelled as its subject, with the team
/// annotation; compliant with Pod Security `restricted` unless `noncompliant` (then privileged,
/// with `hostPID`, and without the team annotation).
pub fn pod(size: PodSize, noncompliant: bool, n: usize) -> Value {
    let containers = match size {
        PodSize::Small => 1,
        PodSize::Large => 12,
    };
    let init = match size {
        PodSize::Small => 0,
        PodSize::Large => 2,
    };
    let env = match size {
        PodSize::Small => 2,
        PodSize::Large => 22,
    };
    let container = |i: usize, prefix: &str| {
        let privileged = noncompliant && i == 0 && prefix == "app";
        let vars: Vec<Value> = (0..env)
            .map(|e| {
                sonic_rs::json!({"name": format!("BENCH_SETTING_{e}"), "value": format!("value-{i}-{e}-{}", "x".repeat(80 + e % 7))})
            })
            .collect();
        sonic_rs::json!({
            "name": format!("{prefix}-{i}"),
            "image": format!("registry.example/bench/{prefix}:1.{i}.{n}"),
            "ports": [{"containerPort": 8080 + i, "protocol": "TCP"}],
            "env": vars,
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "securityContext": {
                "privileged": privileged,
                "allowPrivilegeEscalation": privileged,
                "runAsNonRoot": true,
                "capabilities": {"drop": ["ALL"]},
                "seccompProfile": {"type": "RuntimeDefault"}
            }
        })
    };
    let mut annotations = sonic_rs::Object::new();
    if !noncompliant {
        annotations.insert(&TEAM_ANNOTATION, "platform");
    }
    if size == PodSize::Large {
        for a in 0..50 {
            annotations.insert(
                &format!("bench.celer.dev/note-{a}"),
                format!("annotation {a} of a large Pod {}", "y".repeat(60 + a % 13)).as_str(),
            );
        }
    }
    let mut spec = sonic_rs::json!({
        "containers": (0..containers).map(|i| container(i, "app")).collect::<Vec<_>>(),
        "volumes": [{"name": "data", "emptyDir": {}}],
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}
    });
    if init > 0 {
        spec.as_object_mut().map(|s| {
            s.insert(
                &"initContainers",
                (0..init).map(|i| container(i, "init")).collect::<Vec<_>>(),
            )
        });
    }
    if noncompliant {
        spec.as_object_mut().map(|s| s.insert(&"hostPID", true));
    }
    sonic_rs::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("bench-{n}"),
            "namespace": CONTRACT_NAMESPACE,
            "labels": {SUBJECT_LABEL: "true", "app": "bench"},
            "annotations": annotations
        },
        "spec": spec
    })
}

/// The plural resource of a kind, as the API names it (lower case plus `s`, `es` or `ies`).
pub fn resource_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// `(group, version)` of an `apiVersion`.
pub fn group_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// An AdmissionReview v1 for `object` (`operation` CREATE or UPDATE with `old` as oldObject),
/// with [`UID_SLOT`] as its uid.
pub fn review_for(object: &Value, operation: &str, old: Option<&Value>) -> Value {
    let api_version = object
        .get("apiVersion")
        .as_str()
        .unwrap_or("v1")
        .to_string();
    let kind = object.get("kind").as_str().unwrap_or("Pod").to_string();
    let (group, version) = group_version(&api_version);
    let resource = resource_of(&kind);
    let name = object
        .pointer(&["metadata", "name"])
        .as_str()
        .unwrap_or("")
        .to_string();
    let namespace = object
        .pointer(&["metadata", "namespace"])
        .as_str()
        .unwrap_or("")
        .to_string();
    let options_kind = if operation == "UPDATE" {
        "UpdateOptions"
    } else {
        "CreateOptions"
    };
    // Written as text in kube-apiserver's order (the uid first, the objects last) and parsed,
    // which keeps that order: objects built with `json!` are hash maps whose order changes
    // from one process to the next, and a server that reads only the start of a review (the
    // serving floor) then did different work in each run.
    let text = |v: &Value| sonic_rs::to_string(v).unwrap_or_else(|_| "null".to_string());
    let quoted = |s: &str| text(&Value::from(s));
    let gv = format!(r#""group":{},"version":{}"#, quoted(group), quoted(version));
    let gvk = format!(r#"{{{gv},"kind":{}}}"#, quoted(&kind));
    let gvr = format!(r#"{{{gv},"resource":{}}}"#, quoted(&resource));
    let review = format!(
        concat!(
            r#"{{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{{"#,
            r#""uid":{uid},"kind":{gvk},"resource":{gvr},"requestKind":{gvk},"#,
            r#""requestResource":{gvr},"name":{name},"namespace":{namespace},"#,
            r#""operation":{operation},"#,
            r#""userInfo":{{"username":"celer-bench","groups":["system:authenticated"]}},"#,
            r#""object":{object},"oldObject":{old},"dryRun":false,"#,
            r#""options":{{"kind":{options},"apiVersion":"meta.k8s.io/v1"}}}}}}"#
        ),
        uid = quoted(UID_SLOT),
        gvk = gvk,
        gvr = gvr,
        name = quoted(&name),
        namespace = quoted(&namespace),
        operation = quoted(operation),
        object = text(object),
        old = old.map_or_else(|| "null".to_string(), text),
        options = quoted(options_kind),
    );
    sonic_rs::from_str(&review).unwrap_or_default()
}

/// Prepares one template from an AdmissionReview or an object; a SubjectAccessReview (for an
/// authorization webhook's `/authorize`) is sent as it is: it has no uid.
pub fn template(value: &Value, mode: &Mode) -> Result<Template, String> {
    let is_review = value.get("kind").as_str() == Some("AdmissionReview");
    if let Mode::Webhook { path } = mode
        && value.get("kind").as_str() == Some("SubjectAccessReview")
    {
        let body = sonic_rs::to_vec(value).map_err(|e| e.to_string())?;
        return Ok(Template {
            method: Method::POST,
            path: path.clone(),
            body: Bytes::from(body),
            uid_at: None,
        });
    }
    match mode {
        Mode::Webhook { path } => {
            let mut review = if is_review {
                value.clone()
            } else {
                if !value.is_object() {
                    return Err("not a JSON object".to_string());
                }
                review_for(value, "CREATE", None)
            };
            // A review made here has the slot already, and is left untouched: changing a
            // parsed object makes it a hash map, whose member order differs per process.
            if review.pointer(&["request", "uid"]).as_str() != Some(UID_SLOT) {
                let request = review
                    .get_mut("request")
                    .and_then(|r| r.as_object_mut())
                    .ok_or("an AdmissionReview without a request")?;
                request.insert(&"uid", UID_SLOT);
            }
            let body = sonic_rs::to_vec(&review).map_err(|e| e.to_string())?;
            let uid_at = find(&body, UID_SLOT.as_bytes());
            Ok(Template {
                method: Method::POST,
                path: path.clone(),
                body: Bytes::from(body),
                uid_at,
            })
        }
        Mode::Kube { prefix, namespace } => {
            let (object, operation) = if is_review {
                let op = str_at(value, &["request", "operation"]).unwrap_or("CREATE");
                let object = value
                    .pointer(&["request", "object"])
                    .filter(|o| o.is_object())
                    .ok_or("an AdmissionReview without request.object")?;
                (object, op)
            } else {
                (value, "CREATE")
            };
            let (method, path) = api_path(object, operation, prefix, namespace)?;
            let body = sonic_rs::to_vec(object).map_err(|e| e.to_string())?;
            Ok(Template {
                method,
                path,
                body: Bytes::from(body),
                uid_at: None,
            })
        }
    }
}

/// The API request for an object: `POST .../namespaces/NS/RESOURCE?dryRun=All` to create,
/// `PUT .../RESOURCE/NAME?dryRun=All` to update.
pub fn api_path(
    object: &Value,
    operation: &str,
    prefix: &str,
    namespace: &str,
) -> Result<(Method, String), String> {
    let api_version = str_at(object, &["apiVersion"]).ok_or("no apiVersion")?;
    let kind = str_at(object, &["kind"]).ok_or("no kind")?;
    let ns = str_at(object, &["metadata", "namespace"])
        .filter(|n| !n.is_empty())
        .unwrap_or(namespace);
    let (group, version) = group_version(api_version);
    let root = if group.is_empty() {
        format!("{prefix}/api/{version}")
    } else {
        format!("{prefix}/apis/{group}/{version}")
    };
    let collection = format!("{root}/namespaces/{ns}/{}", resource_of(kind));
    match operation {
        "CREATE" => Ok((Method::POST, format!("{collection}?dryRun=All"))),
        "UPDATE" => {
            let name = str_at(object, &["metadata", "name"])
                .ok_or("an UPDATE of an object without metadata.name")?;
            Ok((Method::PUT, format!("{collection}/{name}?dryRun=All")))
        }
        other => Err(format!(
            "operation {other} cannot be sent to the API in this mode"
        )),
    }
}

/// The string at a path of a JSON value.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    value.pointer(path).and_then(|v| v.as_str())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads a JSONL file of AdmissionReviews or objects (blank lines and `#` lines skipped).
pub fn read_jsonl(path: &Path) -> Result<Vec<Value>, BenchError> {
    let bytes = crate::read_file(path)?;
    let text = String::from_utf8(bytes).map_err(|_| BenchError::Input {
        path: path.to_path_buf(),
        line: 0,
        message: "not UTF-8".to_string(),
    })?;
    let mut values = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let value: Value = sonic_rs::from_str(line).map_err(|e| BenchError::Input {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        values.push(value);
    }
    if values.is_empty() {
        return Err(BenchError::Input {
            path: path.to_path_buf(),
            line: 0,
            message: "no request in the file".to_string(),
        });
    }
    Ok(values)
}

/// Templates from a `--requests` file.
pub fn from_file(path: &Path, mode: &Mode) -> Result<Vec<Template>, BenchError> {
    read_jsonl(path)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            template(v, mode).map_err(|message| BenchError::Input {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            })
        })
        .collect()
}

/// `count` generated Pods (distinct names) as templates.
pub fn generated(
    size: PodSize,
    noncompliant: bool,
    count: usize,
    mode: &Mode,
) -> Result<Vec<Template>, BenchError> {
    (0..count.max(1))
        .map(|n| template(&pod(size, noncompliant, n), mode).map_err(BenchError::Invalid))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn reviews_keep_the_api_servers_member_order() {
        let object = pod(PodSize::Small, false, 0);
        let t = template(
            &object,
            &Mode::Webhook {
                path: "/validate".into(),
            },
        )
        .unwrap();
        let body = std::str::from_utf8(&t.body).unwrap();
        let at = |key: &str| body.find(&format!("\"{key}\":")).unwrap();
        assert!(
            body.starts_with(r#"{"kind":"AdmissionReview","apiVersion""#),
            "{body}"
        );
        assert!(at("request") < at("uid"), "{body}");
        assert!(
            at("uid") < at("operation") && at("operation") < at("object"),
            "{body}"
        );
        assert!(
            at("object") < at("oldObject") && at("oldObject") < at("options"),
            "{body}"
        );
        assert_eq!(t.uid_at, Some(at("uid") + "\"uid\":\"".len()));
        assert!(
            body.contains(r#""requestResource":{"group":"","version":"v1","resource":"pods"}"#),
            "{body}"
        );
    }

    #[test]
    fn subject_access_reviews_are_sent_as_they_are() {
        let sar: Value = sonic_rs::from_str(
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"a","nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#,
        )
        .unwrap();
        let t = template(
            &sar,
            &Mode::Webhook {
                path: "/authorize".into(),
            },
        )
        .unwrap();
        assert_eq!((t.path.as_str(), t.uid_at), ("/authorize", None));
        assert_eq!(t.body_for(1, 2), t.body);
        let back: Value = sonic_rs::from_slice(&t.body).unwrap();
        assert_eq!(back, sar);
    }

    #[test]
    fn uids_are_fixed_width_and_distinct() {
        assert_eq!(&uid(0, 0), UID_SLOT.as_bytes());
        assert_eq!(&uid(0xabc, 0x1f), b"00000abc-0000-4000-8000-00000000001f");
        let t = template(
            &pod(PodSize::Small, false, 3),
            &Mode::Webhook {
                path: "/validate".into(),
            },
        )
        .unwrap();
        let a = t.body_for(7, 1);
        let b = t.body_for(7, 2);
        assert_ne!(a, b);
        assert_eq!(a.len(), t.body.len());
        let v: Value = sonic_rs::from_slice(&b).unwrap();
        assert_eq!(
            v.pointer(&["request", "uid"]).as_str(),
            Some("00000007-0000-4000-8000-000000000002")
        );
        assert_eq!(
            v.pointer(&["request", "resource", "resource"]).as_str(),
            Some("pods")
        );
        assert_eq!(
            v.pointer(&["request", "object", "metadata", "name"])
                .as_str(),
            Some("bench-3")
        );
    }

    #[test]
    fn pod_sizes() {
        let small = sonic_rs::to_string(&pod(PodSize::Small, false, 0)).unwrap();
        let large = sonic_rs::to_string(&pod(PodSize::Large, false, 0)).unwrap();
        assert!((500..3000).contains(&small.len()), "{}", small.len());
        assert!((30_000..70_000).contains(&large.len()), "{}", large.len());
        assert!(small.contains("\"policy-bench-team\":\"platform\""));
        let bad = sonic_rs::to_string(&pod(PodSize::Small, true, 0)).unwrap();
        assert!(bad.contains("\"privileged\":true") && bad.contains("\"hostPID\":true"));
        assert!(!bad.contains("policy-bench-team"));
    }

    #[test]
    fn api_paths() {
        let pod = pod(PodSize::Small, false, 1);
        let (m, p) = api_path(&pod, "CREATE", "", "x").unwrap();
        assert_eq!(
            (m, p.as_str()),
            (
                Method::POST,
                "/api/v1/namespaces/policy-bench/pods?dryRun=All"
            )
        );
        let (m, p) = api_path(&pod, "UPDATE", "/k", "x").unwrap();
        assert_eq!(
            (m, p.as_str()),
            (
                Method::PUT,
                "/k/api/v1/namespaces/policy-bench/pods/bench-1?dryRun=All"
            )
        );
        let deploy: Value = sonic_rs::from_str(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}"#,
        )
        .unwrap();
        let (_, p) = api_path(&deploy, "CREATE", "", "ns1").unwrap();
        assert_eq!(p, "/apis/apps/v1/namespaces/ns1/deployments?dryRun=All");
        assert!(api_path(&deploy, "DELETE", "", "ns1").is_err());
        assert_eq!(resource_of("NetworkPolicy"), "networkpolicies");
        assert_eq!(resource_of("Ingress"), "ingresses");
        assert_eq!(resource_of("Gateway"), "gateways");
    }

    #[test]
    fn kube_mode_takes_the_object_of_a_review() {
        let review = review_for(&pod(PodSize::Small, false, 2), "CREATE", None);
        let t = template(
            &review,
            &Mode::Kube {
                prefix: String::new(),
                namespace: "default".into(),
            },
        )
        .unwrap();
        assert_eq!(t.uid_at, None);
        let v: Value = sonic_rs::from_slice(&t.body).unwrap();
        assert_eq!(v.get("kind").as_str(), Some("Pod"));
        assert!(t.path.ends_with("/pods?dryRun=All"));
    }
}
