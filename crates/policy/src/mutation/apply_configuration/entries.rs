//! An object's entries as Go's JSON decoding sees them (the last value of a repeated key wins),
//! the view every walk over the patch and the live object reads objects through.

use celer_cel::Json;
use hashbrown::HashMap;

/// An object's entries as Go's JSON decoding sees them: one per key, the last value of a
/// repeated key, at the key's first position.
pub(super) struct Entries<'a> {
    pub(super) list: Vec<(&'a str, &'a Json)>,
    index: Option<HashMap<&'a str, usize>>,
}

/// Objects up to this size are searched linearly.
const SMALL: usize = 16;

impl<'a> Entries<'a> {
    pub(super) fn of(object: &'a sonic_rs::Object) -> Self {
        let mut list: Vec<(&'a str, &'a Json)> = Vec::with_capacity(object.len());
        if object.len() <= SMALL {
            for (k, v) in object.iter() {
                match list.iter_mut().find(|(seen, _)| *seen == k) {
                    Some(entry) => entry.1 = v,
                    None => list.push((k, v)),
                }
            }
            return Entries { list, index: None };
        }
        let mut index: HashMap<&'a str, usize> = HashMap::with_capacity(object.len());
        for (k, v) in object.iter() {
            match index.get(k) {
                Some(&i) => {
                    if let Some(entry) = list.get_mut(i) {
                        entry.1 = v;
                    }
                }
                None => {
                    index.insert(k, list.len());
                    list.push((k, v));
                }
            }
        }
        Entries {
            list,
            index: Some(index),
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Json> {
        match &self.index {
            Some(index) => index
                .get(key)
                .and_then(|&i| self.list.get(i))
                .map(|&(_, v)| v),
            None => self.list.iter().find(|(k, _)| *k == key).map(|&(_, v)| v),
        }
    }
}
