//! Matching a request against match constraints: resource rules, selectors, equivalents.
