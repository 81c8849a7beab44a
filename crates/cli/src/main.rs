//! The `celer` binary: argument parsing and wiring only.
#![forbid(unsafe_code)]

mod commands;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "celer",
    version,
    about = "A Kubernetes policy engine for CEL policies"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Work with CEL expressions directly.
    #[command(subcommand)]
    Cel(commands::cel::CelCommand),
    /// Evaluate resources against admission policies offline, as admission requests.
    Apply(commands::apply::ApplyArgs),
    /// Run policy test suites (celer's format and Kyverno's kyverno-test.yaml).
    Test(commands::test::TestArgs),
    /// Scan existing objects (files, or a cluster's, read only) with the validating policies,
    /// as background scans do: results, policy reports, JUnit.
    Scan(commands::scan::ScanArgs),
    /// Serve the policies as a validating and mutating admission webhook and an authorization
    /// webhook (HTTPS).
    Serve(commands::serve::ServeArgs),
    /// Background scans, policy reports and Gatekeeper audit status on a cluster, as a
    /// leader-elected controller.
    Controller(commands::controller::ControllerArgs),
    /// Open-loop load generator for admission webhooks and the Kubernetes API.
    Bench(commands::bench::BenchArgs),
    /// Authorization policies offline: answer SubjectAccessReviews, print the API server's
    /// AuthorizationConfiguration entry.
    #[command(subcommand)]
    Authz(commands::authz::AuthzCommand),
    /// Print the CustomResourceDefinitions of the Kyverno and Gatekeeper kinds celer serves,
    /// and of its own AuthorizationPolicy.
    Crds(commands::crds::CrdsArgs),
}

/// Stack for the thread that does the work. sonic-rs parses recursively and, in debug builds,
/// uses tens of KB of stack per nesting level; the evaluator recurses over nested values too.
/// Only the pages actually touched are committed.
const WORKER_STACK: usize = 256 << 20;

fn main() -> ExitCode {
    let worker = std::thread::Builder::new()
        .name("celer".to_string())
        .stack_size(WORKER_STACK)
        .spawn(run);
    match worker {
        Ok(handle) => handle.join().unwrap_or_else(|_| {
            let _ = writeln!(
                std::io::stderr(),
                "error: internal error (the worker panicked)"
            );
            ExitCode::from(70)
        }),
        // No thread available: do the work here, on the main thread's stack.
        Err(_) => run(),
    }
}

fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout with status 0; usage errors to stderr with 2.
            let _ = err.print();
            let _ = std::io::stdout().flush();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        Command::Cel(command) => commands::cel::run(command),
        Command::Apply(args) => commands::apply::run(args),
        Command::Controller(args) => commands::controller::run(args),
        Command::Test(args) => commands::test::run(args),
        Command::Scan(args) => commands::scan::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Crds(args) => commands::crds::run(args),
        Command::Authz(command) => commands::authz::run(command),
    }
}
