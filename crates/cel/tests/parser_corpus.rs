//! Every expression in cel-spec's conformance suites (`../shared/corpus`) must parse.
//!
//! Only the parser is exercised here (no checking or evaluation), so this holds for the
//! suites whose messages or extensions celer does not support too, except `block_ext`:
//! its expressions pass `cel.iterVar(i, j)` calls as comprehension variables, which only
//! cel-go's block extension macros accept (and which the Kubernetes environment lacks). In CI (`CI=true`) a
//! missing corpus is a failure; elsewhere the test skips with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::syntax::parse;
use celer_test_support::{require, walk};

/// Decodes a textproto string literal body (C-style escapes over bytes).
fn unescape_textproto(body: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let b = body.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = b.get(i) else { break };
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match b.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match b.get(i).and_then(|&d| char::from(d).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let n = if e == b'u' { 4 } else { 8 };
                let hex = std::str::from_utf8(&b[i..i + n]).unwrap();
                let ch = char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap();
                out.extend_from_slice(ch.to_string().as_bytes());
                i += n;
            }
            other => out.push(other),
        }
    }
    out
}

/// `expr: "..."` / `expr: '...'` values of one file.
fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("expr:") else {
            continue;
        };
        let rest = rest.trim();
        let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        // Find the closing quote, skipping escapes.
        let bytes = rest.as_bytes();
        let mut i = 1;
        while i < bytes.len() && bytes[i] != q as u8 {
            i += if bytes[i] == b'\\' { 2 } else { 1 };
        }
        let body = &rest[1..i.min(rest.len())];
        out.push(String::from_utf8(unescape_textproto(body)).unwrap());
    }
    out
}

#[test]
fn every_conformance_expression_parses() {
    let Some(dir) = require("cel-spec/tests/simple/testdata") else {
        return;
    };
    let files: Vec<_> = walk::entries(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "textproto"))
        .filter(|p| !p.ends_with("block_ext.textproto"))
        .collect();
    let mut total = 0;
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for expr in expressions(&text) {
            total += 1;
            if let Err(e) = parse(&expr) {
                let name = file.file_name().unwrap().to_string_lossy();
                failures.push(format!("{name}: {expr}\n{e}"));
            }
        }
    }
    assert!(total > 2000, "only {total} expressions found");
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
