//! `celer test`: find and run policy test suites (celer's own format and Kyverno's).

use celer_policy::gatekeeper::rego::oracle;
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use celer_cel_kyverno::KyvernoContext;
use celer_cluster::Cluster;
use celer_offline::suite::{self, SuiteOutcome};
use clap::{Args, ValueEnum};
use sonic_rs::{JsonValueMutTrait as _, JsonValueTrait as _};

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;

const TEST_EXAMPLES: &str = "\
Examples:
  celer test                         (every test under the current directory)
  celer test policies/ tests/
  celer test kyverno-test.yaml --output json
  celer test . --junit report.xml

Test files: celer's own (apiVersion celer.dev/v1alpha1, kind Test; see docs/cli.md) and
Kyverno's kyverno-test.yaml for ValidatingAdmissionPolicy and MutatingAdmissionPolicy.

Exit status: 0 every expectation holds; 1 some expectation failed or a suite could not be
loaded; 2 bad flags or no test found.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestOutput {
    Text,
    Json,
}

#[derive(Debug, Args)]
#[command(after_help = TEST_EXAMPLES)]
pub struct TestArgs {
    /// Test files, or directories searched for them (default: the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// How to print the results.
    #[arg(long, short, value_enum, default_value_t = TestOutput::Text)]
    pub output: TestOutput,

    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Print every check, not only the failed ones.
    #[arg(long, short)]
    pub verbose: bool,

    /// Send the requests of celer test files that do not name one for a subresource, as the
    /// API server would: RESOURCE/SUBRESOURCE, e.g. pods/ephemeralcontainers, pods/exec,
    /// deployments/scale (Kyverno and Gatekeeper suites are run as they are written).
    #[arg(long, value_name = "RESOURCE/SUBRESOURCE")]
    pub subresource: Option<String>,

    /// Read Kyverno's context functions (`resource.*`, `globalContext.Get`,
    /// `image.GetMetadata`, `http.*`) from the cluster of this kubeconfig, as `celer serve`
    /// reads them, instead of a suite's mocks: the objects its `context` and
    /// `clusterResources` list must be in the cluster (e2e/context-suites.sh applies them).
    #[arg(long, value_name = "PATH", env = "CELER_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,

    /// With --kubeconfig: what the context functions may read and call.
    #[command(flatten)]
    pub context: super::context_args::ContextArgs,

    /// Also run regorus beside celer's own Rego evaluator on every Rego evaluation, and
    /// report on stderr how many each answered and every answer where they differ (a
    /// difference fails the run): a check of celer's evaluator on your own suites.
    #[arg(long)]
    pub rego_oracle: bool,

    /// With --kubeconfig: bounds each read of the cluster.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = super::serve::parse_duration)]
    pub lookup_timeout: std::time::Duration,
}

pub fn run(args: TestArgs) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let found = match suite::discover(&paths) {
        Ok(f) => f,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if found.is_empty() {
        let _ = writeln!(std::io::stderr(), "error: no test files found");
        return ExitCode::from(EXIT_USAGE);
    }
    // Kept for the whole run: the live context's reads run on it.
    let live = match &args.kubeconfig {
        None => None,
        Some(kubeconfig) => match live_context(kubeconfig, &args) {
            Ok(live) => Some(live),
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "error: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
    };
    let run_options = suite::RunOptions {
        context: live.as_ref().map(|(_, _, context)| Arc::clone(context)),
    };
    if args.rego_oracle {
        oracle::start();
    }
    let progress = std::io::stderr().is_terminal() && found.len() > 1;
    let mut outcomes: Vec<SuiteOutcome> = Vec::with_capacity(found.len());
    for (i, (path, format, doc)) in found.iter().enumerate() {
        if progress {
            let _ = write!(
                std::io::stderr(),
                "\r\x1b[2K[{}/{}] {}",
                i + 1,
                found.len(),
                path.display()
            );
        }
        let with_subresource = match (&args.subresource, format) {
            (Some(sub), suite::Format::Celer) if doc.get("subResource").is_none() => {
                let mut doc = doc.clone();
                if let Some(object) = doc.as_object_mut() {
                    object.insert("subResource", sub.as_str());
                }
                Some(doc)
            }
            _ => None,
        };
        outcomes.push(suite::run_with(
            path,
            *format,
            with_subresource.as_ref().unwrap_or(doc),
            &run_options,
        ));
    }
    if progress {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    let mut assumed: Vec<&str> = outcomes
        .iter()
        .flat_map(|o| o.assumed_namespaces.iter().map(String::as_str))
        .collect();
    assumed.sort_unstable();
    assumed.dedup();
    if !assumed.is_empty() {
        // Said once, on stderr, so JSON and JUnit reports stay parseable.
        let _ = writeln!(
            std::io::stderr(),
            "note: Namespace {} not supplied (namespaces:): assumed to exist with only the label kubernetes.io/metadata.name",
            assumed.join(", ")
        );
    }
    let disagreed = args.rego_oracle && !report_oracle(oracle::stop());
    if let Some(file) = &args.junit
        && let Err(e) = std::fs::write(file, suite::report_junit(&outcomes))
    {
        let _ = writeln!(std::io::stderr(), "error: {}: {e}", file.display());
        return ExitCode::from(EXIT_USAGE);
    }
    let text = match args.output {
        TestOutput::Json => suite::report_json(&outcomes) + "\n",
        TestOutput::Text => summary_text(&outcomes, args.verbose),
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    if suite::summarize(&outcomes).failed == 0 && !disagreed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// Writes what the Rego oracle saw on stderr; `false` when the evaluators disagreed.
fn report_oracle(log: oracle::Log) -> bool {
    let mut err = std::io::stderr();
    let _ = writeln!(
        err,
        "rego oracle: {} evaluations answered by celer's evaluator (each also regorus's answer), {} left to regorus, {} disagreements",
        log.agreed,
        log.fell_back.len(),
        log.disagreed.len()
    );
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for (rule, why) in &log.fell_back {
        *reasons.entry(format!("{rule}: {why}")).or_default() += 1;
    }
    for (why, n) in reasons {
        let _ = writeln!(err, "  left to regorus {n}x: {why}");
    }
    for d in &log.disagreed {
        let _ = writeln!(err, "  disagreement: {d}");
    }
    log.disagreed.is_empty()
}

/// The cluster's context, read as `celer serve` reads it, with the runtime and watches it
/// runs on.
fn live_context(
    kubeconfig: &std::path::Path,
    args: &TestArgs,
) -> Result<(tokio::runtime::Runtime, Cluster, Arc<dyn KyvernoContext>), String> {
    let runtime = celer_webhook::runtime().map_err(|e| format!("cannot start the runtime: {e}"))?;
    let settings = args.context.settings();
    let (cluster, context) = runtime.block_on(async {
        let client = celer_cluster::client(Some(kubeconfig))
            .await
            .map_err(|e| e.to_string())?;
        let cluster = Cluster::start(client, args.lookup_timeout);
        let context: Arc<dyn KyvernoContext> = Arc::new(cluster.kyverno_context(&settings));
        Ok::<_, String>((cluster, context))
    })?;
    Ok((runtime, cluster, context))
}

fn summary_text(outcomes: &[SuiteOutcome], verbose: bool) -> String {
    let mut out = String::new();
    for o in outcomes {
        let verdict = if o.failed() == 0 { "ok  " } else { "FAIL" };
        out.push_str(&format!(
            "{verdict} {} ({} passed, {} failed, {} skipped)\n",
            o.path.display(),
            o.passed(),
            o.failed(),
            o.skipped.len()
        ));
        for e in &o.errors {
            out.push_str(&format!("     error: {e}\n"));
        }
        for c in &o.checks {
            if !c.passed {
                out.push_str(&format!(
                    "     FAIL {}: expected {}, got {}\n",
                    c.name, c.expected, c.actual
                ));
            } else if verbose {
                out.push_str(&format!("     ok   {}\n", c.name));
            }
        }
        if verbose {
            for (n, why) in &o.skipped {
                out.push_str(&format!("     skip {n}: {why}\n"));
            }
        }
    }
    let s = suite::summarize(outcomes);
    out.push_str(&format!(
        "\n{} suites: {} passed, {} failed, {} skipped\n",
        outcomes.len(),
        s.passed,
        s.failed,
        s.skipped
    ));
    out
}
