//! The `celer` binary: argument parsing and wiring only.
#![forbid(unsafe_code)]

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "celer",
    version,
    about = "A Kubernetes policy engine for CEL policies"
)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
