//! `celer cel ...`: working with CEL expressions directly, outside any policy.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use celer_cel::format::{to_cel, to_json_pretty};
use celer_cel::{Activation, Env, Json, Type};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::cost::PER_CALL_LIMIT;
use clap::{Args, Subcommand, ValueEnum};

use celer_policy::document::{Syntax, parse_document};

/// Exit status: evaluation failed (the expression was fine, its value is an error).
const EXIT_EVAL_ERROR: u8 = 1;
/// Exit status: bad flags, unreadable input, or an expression that does not parse or check.
const EXIT_USAGE: u8 = 2;

#[derive(Debug, Subcommand)]
pub enum CelCommand {
    /// Evaluate one CEL expression and print its value.
    #[command(after_help = EVAL_EXAMPLES)]
    Eval(EvalArgs),
}

const EVAL_EXAMPLES: &str = "\
Examples:
  celer cel eval '1 + 2'
  celer cel eval 'x.items.map(i, i * 2)' --var 'x={\"items\": [1, 2, 3]}'
  celer cel eval 'object.spec.containers.all(c, c.image.startsWith(\"registry.example/\"))' \\
      --var object=@examples/pod.yaml
  celer cel eval --output cel '{\"b\": 1u, \"a\": 2u}'
  celer cel eval --env standard '[1, \"mixed\", true]'
  celer cel eval -- '-1 + 2'        (an expression starting with '-' goes after --)

Exit status: 0 a value was printed; 1 evaluation failed (e.g. 1/0); 2 bad flags or
input, or the expression does not parse or type-check.";

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The CEL expression.
    #[arg(value_name = "EXPR")]
    pub expr: String,

    /// Declare variable NAME (type dyn) and bind it. NAME=@FILE reads FILE as JSON, or as
    /// YAML if it is not JSON or is named *.yaml/*.yml (exactly one document). NAME=VALUE
    /// reads VALUE the same way: --var n=42, --var 'o={"a":1}', --var s=text. Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE|NAME=@FILE", value_parser = parse_var)]
    pub vars: Vec<VarSpec>,

    /// How to print the value.
    #[arg(long, short, value_enum, default_value_t = OutputFormat::Json)]
    pub output: OutputFormat,

    /// The CEL environment: functions available and checking rules.
    #[arg(long, value_enum, default_value_t = Environment::Kubernetes)]
    pub env: Environment,

    /// Print the evaluation's runtime cost (as Kubernetes counts it) on stderr as `cost: N`.
    #[arg(long)]
    pub cost: bool,

    /// Stop the evaluation once its cost exceeds N. Default: Kubernetes' per-expression
    /// limit (1000000) with --env kubernetes, no limit with --env standard.
    #[arg(long, value_name = "N")]
    pub cost_limit: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Environment {
    /// As in Kubernetes admission policies: the standard library plus the CEL extension and
    /// Kubernetes libraries; list and map literals must not mix element types.
    Kubernetes,
    /// The CEL standard library only.
    Standard,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Pretty-printed JSON (see docs/cli.md for how CEL values map to JSON).
    Json,
    /// A CEL literal that evaluates back to the same value.
    Cel,
}

/// One `--var` flag.
#[derive(Debug, Clone)]
pub struct VarSpec {
    pub name: String,
    pub source: VarSource,
}

#[derive(Debug, Clone)]
pub enum VarSource {
    File(PathBuf),
    Inline(String),
}

fn parse_var(spec: &str) -> Result<VarSpec, String> {
    let Some((name, value)) = spec.split_once('=') else {
        return Err("expected NAME=VALUE or NAME=@FILE".to_string());
    };
    let mut chars = name.chars();
    let valid_name = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_name {
        return Err(format!(
            "'{name}' is not a variable name (letters, digits and '_', not starting with a digit)"
        ));
    }
    if celer_cel::syntax::is_reserved_word(name) {
        return Err(format!("'{name}' is a reserved word in CEL"));
    }
    let source = match value.strip_prefix('@') {
        Some("") => return Err("expected a file name after '@'".to_string()),
        Some(path) => VarSource::File(PathBuf::from(path)),
        None if value.is_empty() => {
            return Err("the value is empty (to pass an empty string, use '\"\"')".to_string());
        }
        None => VarSource::Inline(value.to_string()),
    };
    Ok(VarSpec {
        name: name.to_string(),
        source,
    })
}

/// Runs `celer cel ...`.
pub fn run(command: CelCommand) -> ExitCode {
    match command {
        CelCommand::Eval(args) => eval(&args),
    }
}

fn eval(args: &EvalArgs) -> ExitCode {
    // The documents must outlive the activation: values borrow from them.
    let documents = match load_vars(&args.vars) {
        Ok(documents) => documents,
        Err(message) => return fail(EXIT_USAGE, &message),
    };

    let mut env = match args.env {
        Environment::Kubernetes => Env::kubernetes(),
        Environment::Standard => Env::standard(),
    };
    for (name, _) in &documents {
        env.declare(name, Type::Dyn);
    }
    let program = match env.compile(&args.expr) {
        Ok(program) => program,
        Err(err) => {
            // Already rendered as `ERROR: <input>:line:col: message`, source line and caret.
            let _ = writeln!(std::io::stderr(), "{err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };

    let mut activation = Activation::new(&env);
    for (name, json) in &documents {
        if let Err(err) = activation.bind_json(name, json) {
            return fail(EXIT_USAGE, &err.to_string());
        }
    }
    let limit = args.cost_limit.or(match args.env {
        Environment::Kubernetes => Some(PER_CALL_LIMIT),
        Environment::Standard => None,
    });
    let evaluation = program.evaluate(&activation, limit);
    if args.cost {
        let _ = writeln!(std::io::stderr(), "cost: {}", evaluation.cost);
    }
    let value = match evaluation.result {
        Ok(value) => value,
        Err(err) => return fail(EXIT_EVAL_ERROR, err.message()),
    };

    let text = match args.output {
        OutputFormat::Cel => to_cel(&value),
        OutputFormat::Json => match to_json_pretty(&value) {
            Ok(text) => text,
            Err(err) => {
                return fail(
                    EXIT_EVAL_ERROR,
                    &format!("the value has no JSON form: {err}; try --output cel"),
                );
            }
        },
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        return fail(EXIT_EVAL_ERROR, &format!("cannot write the output: {err}"));
    }
    ExitCode::SUCCESS
}

/// Reads every `--var`, in order; a name given twice is an error.
fn load_vars(vars: &[VarSpec]) -> Result<Vec<(String, Json)>, String> {
    let mut documents: Vec<(String, Json)> = Vec::with_capacity(vars.len());
    for var in vars {
        if documents.iter().any(|(name, _)| *name == var.name) {
            return Err(format!("--var {}: given more than once", var.name));
        }
        let json = match &var.source {
            VarSource::File(path) => {
                read_file(path).map_err(|e| format!("--var {}: {e}", var.name))?
            }
            VarSource::Inline(text) => parse_document(text, Syntax::JsonOrYaml)
                .map_err(|e| format!("--var {}: {e}", var.name))?,
        };
        documents.push((var.name.clone(), json));
    }
    Ok(documents)
}

fn read_file(path: &Path) -> Result<Json, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read file {}: {e}", path.display()))?;
    let is_yaml = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
    let syntax = if is_yaml {
        Syntax::Yaml
    } else {
        Syntax::JsonOrYaml
    };
    parse_document(&text, syntax).map_err(|e| format!("file {}: {e}", path.display()))
}

fn fail(code: u8, message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(code)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn var_specs() {
        let v = parse_var("object=@pod.yaml").unwrap();
        assert_eq!(v.name, "object");
        assert!(matches!(v.source, VarSource::File(p) if p == Path::new("pod.yaml")));
        let v = parse_var(r#"o={"a":1}"#).unwrap();
        assert!(matches!(v.source, VarSource::Inline(t) if t == r#"{"a":1}"#));
        let v = parse_var("x=a=b").unwrap();
        assert!(matches!(v.source, VarSource::Inline(t) if t == "a=b"));
        assert!(parse_var("_x1=1").is_ok());
    }

    #[test]
    fn bad_var_specs() {
        for bad in ["x", "=1", "1x=1", "a.b=1", "in=1", "x=@", "x=", "é=1"] {
            assert!(parse_var(bad).is_err(), "{bad}");
        }
    }
}
