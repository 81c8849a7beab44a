//! The atomic check (`smd.go` `findAtomics`), step 3 of a merge: an ApplyConfiguration may not
//! set an atomic list, map or struct at any depth. Struct fields and list items are searched,
//! the values of granular maps are not.

use std::fmt::Write as _;

use celer_cel::Json;
use sonic_rs::JsonContainerTrait;

use super::ApplyConfigurationError;
use super::atoms::too_deep;
use super::entries::Entries;
use crate::mutation::schema::{ListKind, MapRelationship, TypeRef};

pub(super) fn find_atomics(
    patch: &Json,
    root: TypeRef,
) -> Result<Vec<String>, ApplyConfigurationError> {
    let mut finder = AtomicFinder {
        path: String::with_capacity(64),
        found: Vec::new(),
        too_deep: false,
    };
    finder.value(patch, root, 0);
    if finder.too_deep {
        return Err(ApplyConfigurationError::TooDeep);
    }
    Ok(finder.found)
}

struct AtomicFinder {
    path: String,
    found: Vec<String>,
    too_deep: bool,
}

impl AtomicFinder {
    fn value(&mut self, v: &Json, ty: TypeRef, depth: usize) {
        if too_deep(v, depth) {
            self.too_deep = true;
            return;
        }
        let resolved = ty.resolve();
        if let (Some(object), Some((map, relationship))) = (v.as_object(), resolved.map) {
            if relationship == MapRelationship::Atomic {
                self.found.push(self.path.clone());
            }
            // Only declared fields are searched, not the values of maps.
            for (key, item) in Entries::of(object).list {
                if let Some(field) = map.field(key) {
                    let len = self.path.len();
                    self.path.push('.');
                    self.path.push_str(key);
                    self.value(item, field.ty, depth + 1);
                    self.path.truncate(len);
                }
            }
        }
        if let (Some(items), Some(list)) = (v.as_array(), resolved.list) {
            if list.kind == ListKind::Atomic {
                self.found.push(self.path.clone());
            }
            for (i, item) in items.iter().enumerate() {
                let len = self.path.len();
                let _ = write!(self.path, "[{i}]");
                self.value(item, list.element, depth + 1);
                self.path.truncate(len);
            }
        }
    }
}
