//! cel-go's `strings` extension library.

use crate::library::Registry;

pub fn register(r: &mut Registry) {
    let _ = r;
}
