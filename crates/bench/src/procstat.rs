//! CPU and memory of a process (`--pid`), sampled from `/proc` once a second during a phase.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

/// Clock ticks per second of `utime`/`stime` (Linux's USER_HZ, 100 on every mainstream
/// architecture; reading `sysconf` would need unsafe code).
pub const CLOCK_TICKS: f64 = 100.0;

/// One reading: CPU time so far (seconds) and resident memory (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub cpu_s: f64,
    pub rss_bytes: u64,
}

/// Reads `/proc/PID/stat` (utime + stime) and `/proc/PID/status` (VmRSS).
pub fn read(pid: u32) -> Option<Reading> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(Reading {
        cpu_s: cpu_seconds(&stat)?,
        rss_bytes: rss_bytes(&status)?,
    })
}

/// utime + stime of a `stat` line, in seconds. The command name in parentheses may hold
/// spaces, so fields are counted after its closing parenthesis.
pub fn cpu_seconds(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // After ")": state is field 3 of the line; utime and stime are fields 14 and 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / CLOCK_TICKS)
}

/// `VmRSS` of a `status` file, in bytes.
pub fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Mean and p95 of the per-second samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MeanP95 {
    pub mean: f64,
    pub p95: f64,
}

/// What the samples of a phase say.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Resources {
    pub pid: u32,
    /// One-second intervals sampled.
    pub samples: usize,
    /// CPU time per second of wall time (1.0 = one core busy).
    pub cpu_cores: MeanP95,
    pub rss_mib: MeanP95,
}

/// Sums up `(cpu cores, rss bytes)` samples.
pub fn summarize(pid: u32, samples: &[(f64, u64)]) -> Resources {
    let cpu: Vec<f64> = samples.iter().map(|s| s.0).collect();
    let rss: Vec<f64> = samples
        .iter()
        .map(|s| s.1 as f64 / (1024.0 * 1024.0))
        .collect();
    Resources {
        pid,
        samples: samples.len(),
        cpu_cores: mean_p95(&cpu, 1000.0),
        rss_mib: mean_p95(&rss, 10.0),
    }
}

fn mean_p95(values: &[f64], round: f64) -> MeanP95 {
    if values.is_empty() {
        return MeanP95::default();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    // Nearest rank.
    let rank = ((0.95 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    let p95 = sorted.get(rank - 1).copied().unwrap_or(mean);
    MeanP95 {
        mean: (mean * round).round() / round,
        p95: (p95 * round).round() / round,
    }
}

/// A thread sampling a process once a second until stopped.
#[derive(Debug)]
pub struct Sampler {
    pid: u32,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<(f64, u64)>>>,
}

impl Sampler {
    /// Starts sampling; `None` when the process cannot be read.
    pub fn start(pid: u32) -> Option<Sampler> {
        let first = read(pid)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("celer-bench-procstat".into())
            .spawn(move || {
                let mut samples = Vec::new();
                let (mut last, mut at) = (first, Instant::now());
                let mut next = at + Duration::from_secs(1);
                while !flag.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep((next - now).min(Duration::from_millis(50)));
                        continue;
                    }
                    let Some(reading) = read(pid) else { break };
                    let now = Instant::now();
                    let secs = (now - at).as_secs_f64();
                    if secs > 0.0 {
                        samples.push((
                            (reading.cpu_s - last.cpu_s).max(0.0) / secs,
                            reading.rss_bytes,
                        ));
                    }
                    (last, at) = (reading, now);
                    next += Duration::from_secs(1);
                }
                // A phase shorter than a second still gets one sample, over what it lasted.
                if samples.is_empty()
                    && let Some(reading) = read(pid)
                {
                    let secs = at.elapsed().as_secs_f64();
                    if secs >= 0.1 {
                        samples.push((
                            (reading.cpu_s - last.cpu_s).max(0.0) / secs,
                            reading.rss_bytes,
                        ));
                    }
                }
                samples
            })
            .ok()?;
        Some(Sampler {
            pid,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops and sums up the seconds sampled (a phase under a second: one sample over what
    /// it lasted, if at least 0.1 s).
    pub fn finish(mut self) -> Resources {
        self.stop.store(true, Ordering::Relaxed);
        let samples = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        summarize(self.pid, &samples)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        let stat = "1234 (my (odd) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 4 0 100 1000 500";
        assert_eq!(cpu_seconds(stat), Some(4.0));
        let status = "Name:\tceler\nVmPeak:\t  9000 kB\nVmRSS:\t   20480 kB\nThreads: 4\n";
        assert_eq!(rss_bytes(status), Some(20 * 1024 * 1024));
        assert_eq!(rss_bytes("Name: x\n"), None);
        assert_eq!(cpu_seconds("garbage"), None);
    }

    #[test]
    fn reads_this_process() {
        let r = read(std::process::id()).unwrap();
        assert!(r.rss_bytes > 0);
        assert!(r.cpu_s >= 0.0);
    }

    #[test]
    fn mean_and_p95() {
        let samples: Vec<(f64, u64)> = (1..=20)
            .map(|i| (i as f64 / 100.0, 1024 * 1024 * i))
            .collect();
        let r = summarize(7, &samples);
        assert_eq!(r.samples, 20);
        assert_eq!(r.cpu_cores.mean, 0.105);
        assert_eq!(r.cpu_cores.p95, 0.19);
        assert_eq!(r.rss_mib.p95, 19.0);
        assert_eq!(summarize(1, &[]).samples, 0);
    }
}
