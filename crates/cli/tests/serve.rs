//! `celer serve` end to end: the built binary, its environment variables, its logs, SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn help_lists_every_flag_with_its_environment_variable() {
    let out = Command::new(env!("CARGO_BIN_EXE_celer"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for (flag, env) in [
        ("--policies", "CELER_POLICIES"),
        ("--listen", "CELER_LISTEN"),
        ("--tls-cert", "CELER_TLS_CERT"),
        ("--tls-key", "CELER_TLS_KEY"),
        ("--tls-dir", "CELER_TLS_DIR"),
        ("--tls-san", "CELER_TLS_SAN"),
        ("--metrics-listen", "CELER_METRICS_LISTEN"),
        ("--log-format", "CELER_LOG_FORMAT"),
        ("--max-body", "CELER_MAX_BODY"),
        ("--drain-timeout", "CELER_DRAIN_TIMEOUT"),
    ] {
        assert!(
            help.contains(flag) && help.contains(env),
            "{flag} / {env} in\n{help}"
        );
    }
}

#[test]
fn broken_policies_exit_2_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("celer-cli-serve-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.yaml"), "a: [\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_celer"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("CELER_POLICIES", &dir)
        .env("CELER_TLS_DIR", dir.join("tls"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("bad.yaml (document 1)"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of `"key":"..."` in a JSON log line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let rest = line.get(start..)?;
    rest.get(..rest.find('"')?)
}

#[cfg(unix)]
#[test]
fn serves_from_environment_settings_and_exits_0_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("celer-cli-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_celer"))
        .current_dir(root())
        .arg("serve")
        .env("CELER_LISTEN", "127.0.0.1:0")
        .env("CELER_METRICS_LISTEN", "127.0.0.1:0")
        .env("CELER_TLS_DIR", &dir)
        .env("CELER_LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut metrics = None;
    let mut webhook = None;
    let mut ca = None;
    let mut log = Vec::new();
    while metrics.is_none() || webhook.is_none() {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("celer serve did not start: {log:#?}")
            });
        if line.contains("serving metrics") {
            metrics = field(&line, "addr").map(str::to_string);
        } else if line.contains("serving admission webhook") {
            webhook = field(&line, "addr").map(str::to_string);
        } else if line.contains("self-signed") {
            ca = field(&line, "ca").map(str::to_string);
        }
        log.push(line);
    }
    assert!(
        log.iter().all(|l| l.starts_with('{')),
        "JSON logs: {log:#?}"
    );
    assert_eq!(ca.map(PathBuf::from), Some(dir.join("ca.crt")));
    assert!(dir.join("ca.crt").is_file() && dir.join("tls.key").is_file());
    assert!(webhook.unwrap().starts_with("127.0.0.1:"));

    let mut stream = TcpStream::connect(metrics.unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("ready\n"), "{response}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(code) = child.try_wait().unwrap() {
            break code;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "celer serve did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
