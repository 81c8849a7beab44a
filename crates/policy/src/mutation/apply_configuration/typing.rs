//! Typing a value against the schema (SMD `typed.AsTyped`, `validate.go`): steps 2 and 4 of a
//! merge. The patch is typed strictly (undeclared fields and duplicate keys are errors), the
//! live object leniently; both are walked before the merge so that it can trust their shapes.

use celer_cel::Json;
use hashbrown::HashSet;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::MAX_DEPTH;
use super::atoms::{Handle, handle_of, invalid_atom, scalar_error, scalar_fits};
use super::entries::Entries;
use super::go_format::GoValue;
use super::keys::{ItemKey, KeyValue, Step, has_item_key, item_key, render};
use super::{ApplyConfigurationError, ValidationError, ValidationErrors};
use crate::mutation::schema::{self, ListKind, ListType, MapType, TypeRef};

/// Types the patch; whether some object in it repeats a key (Go's decoding keeps the last).
pub(super) fn type_patch(patch: &Json, root: TypeRef) -> Result<bool, ApplyConfigurationError> {
    if !patch.is_object() {
        return Err(ApplyConfigurationError::InvalidPatch(not_a_map(patch)));
    }
    let mut typer = Typer::new(true);
    typer.value(patch, root, 0);
    typer.finish().map_err(|e| match e {
        TypeError::TooDeep => ApplyConfigurationError::TooDeep,
        TypeError::Invalid(errors) => ApplyConfigurationError::InvalidPatch(errors),
    })
}

/// Types the live object; whether some object in it repeats a key.
pub(super) fn type_live(live: &Json, root: TypeRef) -> Result<bool, ApplyConfigurationError> {
    if !live.is_object() {
        return Err(ApplyConfigurationError::InvalidObject(not_a_map(live)));
    }
    let mut typer = Typer::new(false);
    typer.value(live, root, 0);
    typer.finish().map_err(|e| match e {
        TypeError::TooDeep => ApplyConfigurationError::TooDeep,
        TypeError::Invalid(errors) => ApplyConfigurationError::InvalidObject(errors),
    })
}

pub(super) fn not_a_map(v: &Json) -> ValidationErrors {
    ValidationErrors(vec![ValidationError {
        path: String::new(),
        message: format!("expected map, got {}", GoValue(v)),
    }])
}

enum TypeError {
    TooDeep,
    Invalid(ValidationErrors),
}

struct Typer<'a> {
    /// The patch: undeclared fields and duplicate keys are errors. The live object is typed
    /// leniently instead: duplicates are allowed as upstream, and undeclared fields (which a
    /// served object only has if this table is older than the server) are typed as deduced.
    strict: bool,
    /// Whether some object read repeats a key.
    repeated: bool,
    path: Vec<Step<'a>>,
    errors: Vec<ValidationError>,
    too_deep: bool,
}

impl<'a> Typer<'a> {
    fn new(strict: bool) -> Self {
        Typer {
            strict,
            repeated: false,
            path: Vec::with_capacity(16),
            errors: Vec::new(),
            too_deep: false,
        }
    }

    fn finish(self) -> Result<bool, TypeError> {
        if self.too_deep {
            Err(TypeError::TooDeep)
        } else if self.errors.is_empty() {
            Ok(self.repeated)
        } else {
            Err(TypeError::Invalid(ValidationErrors(self.errors)))
        }
    }

    fn error(&mut self, message: String) {
        self.errors.push(ValidationError {
            path: render(&self.path),
            message,
        });
    }

    fn value(&mut self, v: &'a Json, ty: TypeRef, depth: usize) {
        // The value's type, read once (as `too_deep`, `handle` and `scalar_error` read it).
        let t = v.get_type();
        if depth >= MAX_DEPTH && matches!(t, JsonType::Object | JsonType::Array) {
            self.too_deep = true;
            return;
        }
        match handle_of(ty.resolve(), t) {
            Handle::Scalar(scalar) => {
                if !scalar_fits(scalar, t)
                    && let Some(message) = scalar_error(scalar, v)
                {
                    self.error(message);
                }
            }
            Handle::List(list) => self.list(v, list, depth),
            Handle::Map(map, _) => self.map(v, map, depth),
            Handle::Invalid => self.error(invalid_atom(ty)),
        }
    }

    fn list(&mut self, v: &'a Json, list: &'static ListType, depth: usize) {
        if v.is_null() {
            return;
        }
        let Some(items) = v.as_array() else {
            self.error(format!("expected list, got {}", GoValue(v)));
            return;
        };
        let mut seen: HashSet<ItemKey<'a>> = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let step = if list.kind == ListKind::Atomic {
                Step::Index(i)
            } else {
                // The live object may repeat keys (`AllowDuplicates`): only whether an item
                // has a key matters.
                let checked = match self.strict {
                    true => item_key(list, item),
                    false if has_item_key(list, item) => Ok(ItemKey::Value(KeyValue::Null)),
                    false => item_key(list, item),
                };
                match checked {
                    Ok(key) if self.strict => {
                        if seen.contains(&key) {
                            self.error(format!("duplicate entries for key {key}"));
                        } else {
                            seen.insert(key);
                        }
                    }
                    Ok(_) => {}
                    Err(message) => {
                        // Without a key the item cannot be named: SMD stops here.
                        self.error(format!("element {i}: {message}"));
                        return;
                    }
                }
                Step::Item(item, list)
            };
            self.path.push(step);
            self.value(item, list.element, depth + 1);
            self.path.pop();
            if self.too_deep {
                return;
            }
        }
    }

    fn map(&mut self, v: &'a Json, map: &'static MapType, depth: usize) {
        if v.is_null() {
            return;
        }
        let Some(object) = v.as_object() else {
            self.error(format!("expected map, got {}", GoValue(v)));
            return;
        };
        if object.len() <= SMALL {
            // Read once into place, searched for a repeated key there.
            let mut entries: [Option<(&'a str, &'a Json)>; SMALL] = [None; SMALL];
            for (slot, entry) in entries.iter_mut().zip(object.iter()) {
                *slot = Some(entry);
            }
            let entries = entries.get(..object.len()).unwrap_or_default();
            let repeats = entries.iter().enumerate().any(|(i, a)| {
                let key = a.map(|(k, _)| k);
                entries
                    .get(i + 1..)
                    .unwrap_or_default()
                    .iter()
                    .any(|b| b.map(|(k, _)| k) == key)
            });
            if !repeats {
                for &(key, item) in entries.iter().flatten() {
                    if !self.field(map, key, item, depth) {
                        return;
                    }
                }
                return;
            }
        } else if !repeats_a_key(object) {
            for (key, item) in object.iter() {
                if !self.field(map, key, item, depth) {
                    return;
                }
            }
            return;
        }
        // As Go decodes it: the last value of a repeated key, at the key's first place.
        self.repeated = true;
        for (key, item) in Entries::of(object).list {
            if !self.field(map, key, item, depth) {
                return;
            }
        }
    }

    /// Types a map's entry; whether to go on with the map's other entries.
    fn field(&mut self, map: &'static MapType, key: &'a str, item: &'a Json, depth: usize) -> bool {
        let ty = match map.field(key).map(|f| f.ty).or(map.element) {
            Some(ty) => ty,
            None if self.strict => {
                self.path.push(Step::Field(key));
                self.error("field not declared in schema".to_owned());
                self.path.pop();
                // SMD stops reading this map at the first undeclared field.
                return false;
            }
            None => TypeRef::Named(&schema::DEDUCED),
        };
        self.path.push(Step::Field(key));
        self.value(item, ty, depth + 1);
        self.path.pop();
        !self.too_deep
    }
}

/// Objects up to this size are read into place and searched pairwise for a repeated key,
/// without allocating.
const SMALL: usize = 16;

/// Whether an object larger than [`SMALL`] repeats a key.
fn repeats_a_key(object: &sonic_rs::Object) -> bool {
    let mut seen: HashSet<&str> = HashSet::with_capacity(object.len());
    object.iter().any(|(key, _)| !seen.insert(key))
}
