//! `celer crds`: the CustomResourceDefinitions of the third-party kinds celer serves
//! (Kyverno's, Gatekeeper's), for a cluster that runs celer without those engines.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One YAML document per CRD.
    Yaml,
    /// One JSON `List` of the CRDs.
    Json,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  celer crds > crds.yaml                       every CRD, one YAML document each
  celer crds --group templates.gatekeeper.sh   only Gatekeeper's ConstraintTemplate
  celer crds --output json                     a JSON List, for tools that take JSON")]
pub struct CrdsArgs {
    /// Only the CRDs of this API group.
    #[arg(long, value_parser = celer_crds::GROUPS)]
    pub group: Option<String>,

    /// How to print them.
    #[arg(long, short, value_enum, default_value_t = Output::Yaml)]
    pub output: Output,
}

pub fn run(args: CrdsArgs) -> ExitCode {
    match print(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn print(args: &CrdsArgs) -> anyhow::Result<()> {
    let crds = celer_crds::for_group(args.group.as_deref())?;
    let mut text = String::new();
    match args.output {
        Output::Yaml => {
            for crd in &crds {
                text.push_str("---\n");
                text.push_str(&serde_yaml_ng::to_string(crd).context("writing a CRD as YAML")?);
            }
        }
        Output::Json => {
            let list = List {
                api_version: "v1",
                kind: "List",
                items: &crds,
            };
            text = sonic_rs::to_string_pretty(&list).context("writing the CRDs as JSON")?;
            text.push('\n');
        }
    }
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        // `celer crds | head`: the reader has what it wanted.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("writing to stdout"),
    }
}

/// A `v1` List, the shape `kubectl apply -f` takes several objects in as one JSON document.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct List<'a, T> {
    api_version: &'static str,
    kind: &'static str,
    items: &'a [T],
}
