//! What the CLI's integration tests share: the built `celer`, run in a directory, and what it
//! answered.
#![allow(dead_code, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// An exit status and the two streams.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The repository's root (examples/, e2e/ are under it).
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs `celer ARGS` in `dir`; a run killed by a signal, or writing other than UTF-8, fails
/// the test.
pub fn celer_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_celer"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run celer");
    Run {
        code: out
            .status
            .code()
            .expect("exit code (not killed by a signal)"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}
