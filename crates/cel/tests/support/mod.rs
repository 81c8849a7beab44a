//! Helpers of the cel-spec conformance runner (`mod support;`): reading textproto and
//! converting its values. Corpus location, ratchets and known failures come from
//! `celer-test-support`.
#![allow(dead_code)]

pub mod cel_values;
pub mod textproto;
