//! A mutator compiled from its document with the checks Gatekeeper's webhook and controller
//! make (`MutatorForAssign`, `MutatorForAssignMetadata`, `MutatorForModifySet`,
//! `MutatorForAssignImage`, `core.NewValidatedBindings`, the path tester), and what matching
//! and applying it need. Errors name the field and say what Gatekeeper says.

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::apply::{Condition, Setter, Tester};
use super::location::{self, Key, Node, Path};
use super::model::{ApplyTo, MutatorKind, MutatorManifest, Parameters};
use super::tree::{Tree, equals_json};
use crate::gatekeeper::ConstraintMatch;
use crate::name::Name;

/// `fromMetadata.field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataField {
    Name,
    Namespace,
}

/// What `parameters.assign` assigns.
#[derive(Debug, Clone)]
pub enum AssignValue {
    Value(Json),
    FromMetadata(MetadataField),
    /// What a Provider answers (`assign.externalData`).
    External(ExternalData),
}

/// `assign.externalData`: which Provider is asked, with what key, and what a failure does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalData {
    pub provider: String,
    pub data_source: DataSource,
    pub failure_policy: FailurePolicy,
    /// The value `UseDefault` assigns.
    pub default: String,
}

/// `externalData.dataSource`: the key sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataSource {
    /// The string at the location (each one, for a `*` selector).
    ValueAtLocation,
    /// The requesting user's name.
    Username,
}

/// `externalData.failurePolicy`: what a provider's error (for a key, or for the call) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The request fails with the error.
    Fail,
    /// The location is left as it is.
    Ignore,
    /// `default` is assigned.
    UseDefault,
}

/// `parameters.assignIf`: the value already at the location must be one of `in` (when
/// given; a missing value is not) and none of `not_in` (a missing value is none).
#[derive(Debug, Clone, Default)]
pub struct ValueTest {
    pub r#in: Vec<Json>,
    pub not_in: Vec<Json>,
}

impl ValueTest {
    pub fn allows(&self, current: Option<&Tree>) -> bool {
        let member = |list: &[Json], v: &Tree| list.iter().any(|j| equals_json(v, j));
        if !self.r#in.is_empty() && !current.is_some_and(|v| member(&self.r#in, v)) {
            return false;
        }
        !current.is_some_and(|v| member(&self.not_in, v))
    }
}

/// What a mutator does at its location.
#[derive(Debug, Clone)]
pub enum Action {
    Assign {
        value: AssignValue,
        assign_if: Option<ValueTest>,
    },
    ModifySet {
        merge: bool,
        values: Vec<Json>,
    },
    Image {
        domain: String,
        path: String,
        tag: String,
    },
}

/// One compiled mutator.
#[derive(Debug, Clone)]
pub struct Mutator {
    pub kind: MutatorKind,
    pub name: Name,
    pub path: Path,
    pub tester: Tester,
    /// Empty for AssignMetadata, which applies to every kind its match allows.
    pub apply_to: Vec<ApplyTo>,
    pub matcher: ConstraintMatch,
    pub action: Action,
}

/// Gatekeeper's longest mutator name.
const MAX_NAME: usize = 63;

impl Mutator {
    /// `Kind/name`, as messages name a mutator.
    pub fn id(&self) -> String {
        format!("{}/{}", self.kind.as_str(), self.name.as_str())
    }

    /// The setter for one application; `from_metadata` is the object's name or namespace
    /// when the value comes from there ([`Mutator::metadata_field`]).
    pub fn setter<'a>(&'a self, from_metadata: &'a Json) -> Setter<'a> {
        match &self.action {
            Action::Assign { value, assign_if } => Setter::Assign {
                value: match value {
                    AssignValue::Value(v) => v,
                    // The system resolves external data with its own setter
                    // (`external::setter`); this one never runs.
                    AssignValue::FromMetadata(_) | AssignValue::External(_) => from_metadata,
                },
                assign_if: assign_if.as_ref(),
            },
            Action::ModifySet { merge, values } => Setter::ModifySet {
                merge: *merge,
                values,
            },
            Action::Image { domain, path, tag } => Setter::Image { domain, path, tag },
        }
    }

    /// The `fromMetadata` field, when the value comes from the object.
    pub fn metadata_field(&self) -> Option<MetadataField> {
        match &self.action {
            Action::Assign {
                value: AssignValue::FromMetadata(f),
                ..
            } => Some(*f),
            _ => None,
        }
    }

    /// `assign.externalData`, when the value comes from a Provider.
    pub fn external_data(&self) -> Option<&ExternalData> {
        match &self.action {
            Action::Assign {
                value: AssignValue::External(e),
                ..
            } => Some(e),
            _ => None,
        }
    }

    /// Whether `applyTo` names this group, version, kind and operation.
    pub fn applies_to(&self, group: &str, version: &str, kind: &str, operation: &str) -> bool {
        if self.kind == MutatorKind::AssignMetadata {
            return true;
        }
        self.apply_to.iter().any(|a| {
            a.groups.iter().any(|g| g == group)
                && a.versions.iter().any(|v| v == version)
                && a.kinds.iter().any(|k| k == kind)
                && (a.operations.is_empty()
                    || a.operations.iter().any(|o| o == "*" || o == operation))
        })
    }

    /// The (group, version, kind) triples of `applyTo`.
    fn gvks(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.apply_to.iter().flat_map(|a| {
            a.groups.iter().flat_map(move |g| {
                a.versions.iter().flat_map(move |v| {
                    a.kinds
                        .iter()
                        .map(move |k| (g.as_str(), v.as_str(), k.as_str()))
                })
            })
        })
    }

    /// What the location ends in, for schema conflicts: ModifySet a list of values,
    /// AssignImage a string, Assign anything.
    fn terminal(&self) -> Terminal {
        match self.kind {
            MutatorKind::ModifySet => Terminal::Set,
            MutatorKind::AssignImage => Terminal::String,
            _ => Terminal::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminal {
    Unknown,
    Set,
    String,
}

/// Compiles a mutator document; `Err` holds every problem, each naming its field.
pub fn compile(m: &MutatorManifest) -> Result<Mutator, Vec<String>> {
    let kind = m.kind;
    let name = m.object.metadata.name.as_str();
    let spec = &m.object.spec;
    let params = &spec.parameters;
    let mut errors = Vec::new();
    if name.len() > MAX_NAME {
        errors.push(format!(
            "metadata.name: maximum name length is {MAX_NAME} characters"
        ));
    }
    let matcher = match ConstraintMatch::compile(spec.match_.as_ref()) {
        Ok(matcher) => Some(matcher),
        Err(e) => {
            errors.extend(e);
            None
        }
    };
    let path = match location::parse(&spec.location) {
        Ok(path) => Some(path),
        Err(e) => {
            errors.push(format!(
                "spec.location: invalid location format `{}` for {} {name}: {e}",
                spec.location,
                kind.as_str()
            ));
            None
        }
    };
    let apply_to = if kind == MutatorKind::AssignMetadata {
        Vec::new()
    } else {
        check_apply_to(kind, name, spec.apply_to.as_deref(), &mut errors);
        spec.apply_to.clone().unwrap_or_default()
    };
    let mut tester = Tester::default();
    let mut action = None;
    if let Some(path) = &path {
        let checked = match kind {
            MutatorKind::AssignMetadata => check_metadata(name, &spec.location, path, params),
            MutatorKind::Assign => check_assign(name, path, params),
            MutatorKind::ModifySet => check_modify_set(name, path, params),
            MutatorKind::AssignImage => check_image(name, path, params),
        };
        match checked {
            Ok(a) => action = Some(a),
            Err(e) => errors.push(e),
        }
        tester = if kind == MutatorKind::AssignMetadata {
            // It only adds: the key must not exist yet.
            Tester(vec![(2, Condition::MustNotExist)])
        } else {
            match path_tester(kind, name, path, params) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(e);
                    Tester::default()
                }
            }
        };
    }
    match (errors.is_empty(), path, matcher, action) {
        (true, Some(path), Some(matcher), Some(action)) => Ok(Mutator {
            kind,
            name: Name::from(name),
            path,
            tester,
            apply_to,
            matcher,
            action,
        }),
        _ => Err(errors),
    }
}

fn check_apply_to(
    kind: MutatorKind,
    name: &str,
    apply_to: Option<&[ApplyTo]>,
    errors: &mut Vec<String>,
) {
    let kind = kind.as_str();
    let Some(apply_to) = apply_to.filter(|a| !a.is_empty()) else {
        errors.push(format!(
            "spec.applyTo: applyTo required for {kind} mutator {name}"
        ));
        return;
    };
    for (i, a) in apply_to.iter().enumerate() {
        if a.groups.is_empty() || a.versions.is_empty() || a.kinds.is_empty() {
            errors.push(format!(
                "spec.applyTo[{i}]: invalid applyTo for {kind} mutator {name}, all of group, version and kind must be specified"
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for op in &a.operations {
            if seen.contains(&op.as_str()) {
                errors.push(format!(
                    "spec.applyTo[{i}].operations: duplicate operation {op:?}"
                ));
            }
            seen.push(op);
            if !matches!(op.as_str(), "CREATE" | "UPDATE" | "*") {
                errors.push(format!(
                    "spec.applyTo[{i}].operations: invalid operation {op:?}: must be one of CREATE, UPDATE, *"
                ));
            }
        }
        if seen.contains(&"*") && seen.len() > 1 {
            errors.push(format!(
                "spec.applyTo[{i}].operations: wildcard \"*\" must not be combined with other operations"
            ));
        }
    }
}

/// The path tests: each subPath parsed, a prefix of the location, one condition per depth,
/// and no `MustExist` below a `MustNotExist`.
fn path_tester(
    kind: MutatorKind,
    name: &str,
    path: &Path,
    params: &Parameters,
) -> Result<Tester, String> {
    let mut tests: Vec<(usize, Condition)> = Vec::new();
    for (i, t) in params.path_tests.iter().enumerate() {
        let field = format!("spec.parameters.pathTests[{i}]");
        let sub = location::parse(&t.sub_path).map_err(|e| {
            format!(
                "{field}.subPath: problem parsing sub path `{}` for {} {name}: {e}",
                t.sub_path,
                kind.as_str()
            )
        })?;
        if !sub.is_prefix_of(path) {
            return Err(format!(
                "{field}.subPath: all subpaths must be a prefix of the `location` value of the mutation: subpath {:?} is not a prefix of location {:?}",
                sub.to_string(),
                path.to_string()
            ));
        }
        let condition = match t.condition.as_str() {
            "MustExist" => Condition::MustExist,
            "MustNotExist" => Condition::MustNotExist,
            other => {
                return Err(format!(
                    "{field}.condition: Unsupported value: {other:?}: supported values: \"MustExist\", \"MustNotExist\""
                ));
            }
        };
        let Some(depth) = sub.len().checked_sub(1) else {
            return Err(format!("{field}.subPath: empty sub path"));
        };
        if tests.iter().any(|&(d, c)| d == depth && c != condition) {
            return Err(format!(
                "{field}: conflicting path test conditions: path {:?} is marked both MustExist and MustNotExist",
                sub.to_string()
            ));
        }
        tests.push((depth, condition));
    }
    let deepest_must = tests
        .iter()
        .filter(|t| t.1 == Condition::MustExist)
        .map(|t| t.0)
        .max();
    let shallowest_must_not = tests
        .iter()
        .filter(|t| t.1 == Condition::MustNotExist)
        .map(|t| t.0)
        .min();
    if let (Some(must), Some(must_not)) = (deepest_must, shallowest_must_not)
        && must > must_not
    {
        return Err(
            "spec.parameters.pathTests: conflicting path test conditions: a path is marked MustExist but its parent MustNotExist"
                .to_string(),
        );
    }
    tests.dedup();
    Ok(Tester(tests))
}

/// `core.CheckKeyNotChanged`: a location may not end in the key field of the list element
/// it selects.
fn check_key_not_changed(path: &Path) -> Result<(), String> {
    let n = path.0.len();
    if n == 0 {
        return Err("spec.location: empty path".to_string());
    }
    if n >= 2
        && let (Node::List(list), Node::Object(field)) = (&path.0[n - 2], &path.0[n - 1])
        && *field == list.key_field
    {
        return Err(
            "spec.location: invalid path format: changing the item key is not allowed".to_string(),
        );
    }
    Ok(())
}

/// `parameters.assign`: exactly one of value, fromMetadata, externalData.
fn assign_value(name: &str, kind: MutatorKind, params: &Parameters) -> Result<AssignValue, String> {
    let field = "spec.parameters.assign";
    let Some(a) = &params.assign else {
        return Err(format!(
            "{field}: assign must set one of `externalData`, `value` or `fromMetadata`"
        ));
    };
    let set = [
        a.value.is_some(),
        a.from_metadata.is_some(),
        a.external_data.is_some(),
    ]
    .iter()
    .filter(|s| **s)
    .count();
    if set == 0 {
        return Err(format!(
            "{field}: assign must set one of `externalData`, `value` or `fromMetadata`"
        ));
    }
    if set > 1 {
        return Err(format!(
            "{field}: assign must only set one of `externalData`, `value` or `fromMetadata`"
        ));
    }
    if let Some(raw) = &a.external_data {
        return external_data(&format!("{field}.externalData"), kind, name, raw)
            .map(AssignValue::External);
    }
    if let Some(from) = &a.from_metadata {
        return match from.field.as_str() {
            "name" => Ok(AssignValue::FromMetadata(MetadataField::Name)),
            "namespace" => Ok(AssignValue::FromMetadata(MetadataField::Namespace)),
            other => Err(format!(
                "{field}.fromMetadata.field: field {other} is not recognized: valid fields are `namespace` and `name`"
            )),
        };
    }
    match &a.value {
        Some(v) => Ok(AssignValue::Value(v.clone())),
        None => Err(format!("{field}.value: missing")),
    }
}

/// `assign.externalData`, with Gatekeeper's checks: a provider, a known dataSource and
/// failurePolicy, and a `default` for `UseDefault`.
fn external_data(
    field: &str,
    kind: MutatorKind,
    name: &str,
    raw: &Json,
) -> Result<ExternalData, String> {
    let text = |key: &str| -> Result<String, String> {
        match raw.get(key) {
            None => Ok(String::new()),
            Some(v) if v.is_null() => Ok(String::new()),
            Some(v) => v
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{field}.{key}: Invalid value: must be a string")),
        }
    };
    let provider = text("provider")?;
    if provider.is_empty() {
        return Err(format!(
            "{field}.provider: Required value: the Provider to ask ({} {name})",
            kind.as_str()
        ));
    }
    let data_source = match text("dataSource")?.as_str() {
        "" | "ValueAtLocation" => DataSource::ValueAtLocation,
        "Username" => DataSource::Username,
        other => {
            return Err(format!(
                "{field}.dataSource: Unsupported value: {other:?}: supported values: \"ValueAtLocation\", \"Username\""
            ));
        }
    };
    let failure_policy = match text("failurePolicy")?.as_str() {
        "" | "Fail" => FailurePolicy::Fail,
        "Ignore" => FailurePolicy::Ignore,
        "UseDefault" => FailurePolicy::UseDefault,
        other => {
            return Err(format!(
                "{field}.failurePolicy: Unsupported value: {other:?}: supported values: \"Fail\", \"Ignore\", \"UseDefault\""
            ));
        }
    };
    let default = text("default")?;
    if failure_policy == FailurePolicy::UseDefault && default.is_empty() {
        return Err(format!(
            "{field}.default: Required value: failurePolicy UseDefault needs a default"
        ));
    }
    Ok(ExternalData {
        provider,
        data_source,
        failure_policy,
        default,
    })
}

fn check_metadata(
    name: &str,
    location: &str,
    path: &Path,
    params: &Parameters,
) -> Result<Action, String> {
    let valid = matches!(
        path.0.as_slice(),
        [Node::Object(m), Node::Object(section), Node::Object(_)]
            if m == "metadata" && (section == "labels" || section == "annotations")
    );
    if !valid {
        return Err(format!(
            "spec.location: invalid location for assignmetadata {name}: {location} (only metadata.labels.<key> and metadata.annotations.<key>)"
        ));
    }
    let value = assign_value(name, MutatorKind::AssignMetadata, params)?;
    if let AssignValue::Value(v) = &value
        && !v.is_str()
    {
        return Err(format!(
            "spec.parameters.assign.value: spec.parameters.assign.value field must be a string for AssignMetadata {name:?}"
        ));
    }
    Ok(Action::Assign {
        value,
        assign_if: None,
    })
}

fn check_assign(name: &str, path: &Path, params: &Parameters) -> Result<Action, String> {
    if path.starts_with_field("metadata") {
        return Err(format!(
            "spec.location: assign {name} can't change metadata"
        ));
    }
    check_key_not_changed(path)?;
    let value = assign_value(name, MutatorKind::Assign, params)?;
    if let Some(Node::List(list)) = path.0.last() {
        match &value {
            AssignValue::External(_) => {
                return Err(
                    "spec.parameters.assign.externalData: external data assigns strings, not list elements"
                        .to_string(),
                );
            }
            AssignValue::FromMetadata(_) => {
                return Err(
                    "spec.parameters.assign.fromMetadata: cannot assign a metadata field to a list"
                        .to_string(),
                );
            }
            AssignValue::Value(v) => {
                if list.key == Key::Glob {
                    return Err("spec.location: can't append to a globbed list".to_string());
                }
                let key_ok = v.get(&list.key_field).is_some_and(|k| match &list.key {
                    Key::Str(s) => k.as_str() == Some(s.as_str()),
                    Key::Int(n) => !k.is_f64() && k.as_i64() == Some(*n),
                    Key::Glob => false,
                });
                if !v.is_object() {
                    return Err(format!(
                        "spec.parameters.assign.value: invalid value: `{}`, only objects can be added to keyed lists",
                        sonic_rs::to_string(v).unwrap_or_default()
                    ));
                }
                if !key_ok {
                    return Err(format!(
                        "spec.parameters.assign.value: adding object to list with different key {}: list key {}",
                        list.key_field, path
                    ));
                }
            }
        }
    }
    let assign_if = params.assign_if.as_ref().map(|t| ValueTest {
        r#in: t.r#in.clone(),
        not_in: t.not_in.clone(),
    });
    Ok(Action::Assign { value, assign_if })
}

fn check_modify_set(name: &str, path: &Path, params: &Parameters) -> Result<Action, String> {
    if path.starts_with_field("metadata") {
        return Err(format!(
            "spec.location: modifyset {name} can't change metadata"
        ));
    }
    if path.is_empty() {
        return Err("spec.location: empty path".to_string());
    }
    if matches!(path.0.last(), Some(Node::List(_))) {
        return Err(
            "spec.location: final node in a modifyset location cannot be a keyed list".to_string(),
        );
    }
    let merge = match params.operation.as_deref().unwrap_or("merge") {
        "merge" => true,
        "prune" => false,
        other => {
            return Err(format!(
                "spec.parameters.operation: Unsupported value: {other:?}: supported values: \"merge\", \"prune\""
            ));
        }
    };
    let values = params
        .values
        .as_ref()
        .map(|v| v.from_list.clone())
        .unwrap_or_default();
    Ok(Action::ModifySet { merge, values })
}

fn check_image(name: &str, path: &Path, params: &Parameters) -> Result<Action, String> {
    if path.starts_with_field("metadata") {
        return Err(format!(
            "spec.location: assignImage {name} can't change metadata"
        ));
    }
    if matches!(path.0.last(), Some(Node::List(_))) {
        return Err(format!(
            "spec.location: assignImage {name} cannot mutate list-type fields"
        ));
    }
    check_key_not_changed(path)?;
    let part = |p: &Option<String>| p.clone().unwrap_or_default();
    let (domain, image_path, tag) = (
        part(&params.assign_domain),
        part(&params.assign_path),
        part(&params.assign_tag),
    );
    super::image::validate(&domain, &image_path, &tag)
        .map_err(|e| format!("spec.parameters: assignImage {name} has invalid parameters: {e}"))?;
    Ok(Action::Image {
        domain,
        path: image_path,
        tag,
    })
}

/// Why two mutators disagree on the shape of an object they both apply to, if they do:
/// one walks a field as an object where the other walks it as a list, two list selectors
/// use different key fields, or a path continues below a ModifySet's list of values or an
/// AssignImage's string. Gatekeeper runs neither while they conflict.
pub fn conflict(a: &Mutator, b: &Mutator) -> Option<String> {
    if a.kind == MutatorKind::AssignMetadata || b.kind == MutatorKind::AssignMetadata {
        return None;
    }
    let shared = a.gvks().find(|gvk| b.gvks().any(|other| other == *gvk))?;
    let (pa, pb) = (&a.path.0, &b.path.0);
    let describe = |why: String| {
        Some(format!(
            "conflicting schemas with {} for {}/{} {}: {why}",
            b.id(),
            shared.0,
            shared.1,
            shared.2
        ))
    };
    for i in 0..pa.len().min(pb.len()) {
        match (&pa[i], &pb[i]) {
            (Node::Object(x), Node::Object(y)) if x != y => return None,
            (Node::Object(_), Node::Object(_)) => {}
            (Node::List(x), Node::List(y)) if x.key_field != y.key_field => {
                return describe(format!(
                    "list keyed by {:?} and by {:?}",
                    x.key_field, y.key_field
                ));
            }
            (Node::List(_), Node::List(_)) => {}
            _ => {
                return describe(format!(
                    "{} and {} disagree on whether a field is a list or an object",
                    a.path, b.path
                ));
            }
        }
    }
    let (ta, tb) = (a.terminal(), b.terminal());
    let below = |shorter: Terminal| shorter != Terminal::Unknown;
    match pa.len().cmp(&pb.len()) {
        std::cmp::Ordering::Equal
            if ta != tb && ta != Terminal::Unknown && tb != Terminal::Unknown =>
        {
            describe(format!("{} is both a list of values and a string", a.path))
        }
        std::cmp::Ordering::Less if below(ta) => {
            describe(format!("{} continues below {}", b.path, a.path))
        }
        std::cmp::Ordering::Greater if below(tb) => {
            describe(format!("{} continues below {}", a.path, b.path))
        }
        _ => None,
    }
}
