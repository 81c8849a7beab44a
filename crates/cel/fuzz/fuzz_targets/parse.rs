//! Feeds arbitrary UTF-8 to the CEL parser: it must never panic or overflow its stack, and
//! every error must point inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|src: &str| {
    if let Err(e) = celer_cel::syntax::parse(src) {
        for d in &e.diagnostics {
            assert!(d.span.start as usize <= src.len());
        }
        let _ = e.to_string();
    }
});
