//! Rego for celer, on regorus: a set of modules is compiled once into a [`Program`], which
//! any thread evaluates against an input converted once per request ([`value::from_json`]).
//!
//! A program keeps a prototype interpreter (modules parsed, rules prepared) and a small pool
//! of ready copies: an evaluation takes one, binds the input, evaluates one rule and gives it
//! back, so no evaluation parses or prepares anything and none waits on another. Every
//! evaluation is bounded in wall-clock time ([`Options::timeout`]): a hostile policy ends
//! with an error naming the limit, not a stuck worker.

#![forbid(unsafe_code)]

pub mod index;
pub mod native;
pub mod scan;
pub mod sprintf;
pub mod value;

use std::cell::RefCell;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value};

pub use regorus::Value as RegoValue;

/// One Rego source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// What errors name it by (a file path, or `template.yaml#targets[0].rego`).
    pub name: String,
    pub text: String,
}

/// How modules are compiled and evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Rego v0 syntax (`p[x] { ... }` without `if`/`contains`), as Gatekeeper's library and
    /// most OPA policies written before OPA 1.0 use.
    pub rego_v0: bool,
    /// Wall-clock bound of one evaluation.
    pub timeout: Duration,
    /// Builtins a module may not call; a call is a compile error naming it.
    pub disabled: &'static [&'static str],
    /// Functions the embedding engine gives Rego beside regorus's builtins, answered by the
    /// [`Host`] an evaluation is given ([`Program::eval_rule_with`]).
    pub extensions: &'static [Extension],
}

/// A function the embedding engine gives Rego by name (Gatekeeper's `external_data`): it is
/// declared at compile time, so that modules calling it compile, and answered per evaluation
/// by a [`Host`], so that compiled programs stay independent of what answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extension {
    /// The name modules call it by.
    pub name: &'static str,
    /// How many arguments it takes.
    pub args: u8,
}

/// What answers a program's [`Extension`]s during one evaluation. An error ends the
/// evaluation with it ([`EvalError::Failed`]).
pub trait Host: Send + Sync {
    fn call(&self, name: &str, args: Vec<Value>) -> Result<Value, String>;
}

thread_local! {
    /// The host of the evaluation running on this thread: regorus calls an extension from
    /// inside the evaluation, on the evaluating thread, with no way to pass it along.
    static HOST: RefCell<Option<Arc<dyn Host>>> = const { RefCell::new(None) };
}

/// Makes `host` this thread's host until dropped, then puts the previous one back.
struct HostScope(Option<Arc<dyn Host>>);

impl HostScope {
    fn enter(host: Option<Arc<dyn Host>>) -> HostScope {
        HostScope(HOST.with(|h| h.replace(host)))
    }
}

impl Drop for HostScope {
    fn drop(&mut self) {
        let previous = self.0.take();
        HOST.with(|h| *h.borrow_mut() = previous);
    }
}

/// Calls this thread's host for the extension `name`.
fn call_host(name: &'static str, args: Vec<Value>) -> anyhow::Result<Value> {
    let host = HOST.with(|h| h.borrow().clone());
    match host {
        Some(host) => host
            .call(name, args)
            .map_err(|e| anyhow::anyhow!("{name}: {e}")),
        None => Err(anyhow::anyhow!(
            "{name}: no host answers this function in this evaluation"
        )),
    }
}

/// Builtins that reach outside the process, which no admission policy may call unasked:
/// Gatekeeper ships `http.send` disabled.
pub const DISABLED_BUILTINS: &[&str] = &["http.send", "net.lookup_ip_addr", "opa.runtime"];

impl Default for Options {
    fn default() -> Self {
        Options {
            rego_v0: true,
            timeout: Duration::from_secs(1),
            disabled: DISABLED_BUILTINS,
            extensions: &[],
        }
    }
}

/// Modules that did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    /// The module the error is in, when regorus names one.
    pub module: Option<String>,
    /// regorus's text, which carries `file:line:col` and the offending line.
    pub message: String,
}

/// An evaluation that did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("rego evaluation exceeded its time limit of {0:?}")]
    Timeout(Duration),
    #[error("rego evaluation failed: {0}")]
    Failed(String),
}

/// Compiled modules, evaluated from any thread.
pub struct Program {
    prototype: Engine,
    ready: Mutex<Vec<Engine>>,
    packages: Vec<String>,
    options: Options,
    /// Whether a base document was given: data could then define rules' paths.
    has_data: bool,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("packages", &self.packages)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// How many ready interpreters a program keeps: one per worker thread is enough.
const POOL: usize = 16;

impl Program {
    /// Parses and prepares `modules`, with `data` as the base document (`data.*` beside the
    /// modules' packages).
    pub fn compile(
        modules: &[Module],
        data: Option<Value>,
        options: Options,
    ) -> Result<Program, CompileError> {
        let mut engine = Engine::new();
        engine.set_rego_v0(options.rego_v0);
        engine.set_strict_builtin_errors(false);
        if let Some(check_interval) = NonZeroU32::new(64) {
            engine.set_execution_timer_config(ExecutionTimerConfig {
                limit: options.timeout,
                check_interval,
            });
        }
        for extension in options.extensions {
            let name = extension.name;
            engine
                .add_extension(
                    name.to_string(),
                    extension.args,
                    Box::new(move |args: Vec<Value>| call_host(name, args)),
                )
                .map_err(|e| CompileError {
                    module: None,
                    message: format!("extension {name}: {e}"),
                })?;
        }
        // OPA's `sprintf` (Go's fmt) in place of regorus's: see [`sprintf`].
        engine
            .add_extension("sprintf".to_string(), 2, Box::new(sprintf::builtin))
            .map_err(|e| CompileError {
                module: None,
                message: format!("extension sprintf: {e}"),
            })?;
        let mut packages = Vec::new();
        for module in modules {
            if let Some(call) = scan::names(&module.text)
                .into_iter()
                .find(|n| n.called && options.disabled.contains(&n.path.as_str()))
            {
                return Err(CompileError {
                    module: Some(module.name.clone()),
                    message: format!(
                        "{}:{}: the builtin {} is disabled",
                        module.name, call.line, call.path
                    ),
                });
            }
            let text = scan::separate_parenthesized_lines(&module.text)
                .unwrap_or_else(|| module.text.clone());
            let text = match options.rego_v0 {
                true => scan::split_multi_body_rules(&text).unwrap_or(text),
                false => text,
            };
            let text = scan::hoist_negated_call_arguments(&text).unwrap_or(text);
            let package =
                engine
                    .add_policy(module.name.clone(), text)
                    .map_err(|e| CompileError {
                        module: Some(module.name.clone()),
                        message: e.to_string(),
                    })?;
            packages.push(package);
        }
        let has_data = data.is_some();
        if let Some(data) = data {
            engine.add_data(data).map_err(|e| CompileError {
                module: None,
                message: e.to_string(),
            })?;
        }
        // Prepares the rules (regorus does it on the first evaluation): a query that reads
        // nothing leaves the prototype ready, and reports errors the parser does not find.
        engine.set_input(Value::new_object());
        engine
            .eval_query("true".to_string(), false)
            .map_err(|e| CompileError {
                module: None,
                message: e.to_string(),
            })?;
        Ok(Program {
            prototype: engine,
            ready: Mutex::new(Vec::new()),
            packages,
            options,
            has_data,
        })
    }

    /// The packages the modules declare (`data.<package>`), in module order.
    pub fn packages(&self) -> &[String] {
        &self.packages
    }

    /// A program of the same modules with `data` as its base document instead: compiled
    /// state is shared, only the data differs.
    pub fn with_data(&self, data: Value) -> Result<Program, CompileError> {
        let mut engine = self.prototype.clone();
        engine.clear_data();
        engine.add_data(data).map_err(|e| CompileError {
            module: None,
            message: e.to_string(),
        })?;
        Ok(Program {
            prototype: engine,
            ready: Mutex::new(Vec::new()),
            packages: self.packages.clone(),
            options: self.options,
            has_data: true,
        })
    }

    /// Evaluates the rule at `path` (`data.k8srequiredlabels.violation`) with `input`.
    /// An undefined rule is `Value::Undefined`.
    pub fn eval_rule(&self, path: &str, input: &Value) -> Result<Value, EvalError> {
        self.eval_rule_with(path, input, None)
    }

    /// [`Program::eval_rule`] with `host` answering the program's extensions (without one,
    /// a call to an extension is an evaluation error naming it).
    pub fn eval_rule_with(
        &self,
        path: &str,
        input: &Value,
        host: Option<Arc<dyn Host>>,
    ) -> Result<Value, EvalError> {
        let mut engine = self
            .ready
            .lock()
            .pop()
            .unwrap_or_else(|| self.prototype.clone());
        engine.set_input(input.clone());
        let result = {
            let _scope = HostScope::enter(host);
            engine.eval_rule(path.to_string())
        };
        // Releases the input before the interpreter waits in the pool.
        engine.set_input(Value::Undefined);
        {
            let mut ready = self.ready.lock();
            if ready.len() < POOL {
                ready.push(engine);
            }
        }
        result.map_err(|e| {
            let message = e.to_string();
            if message.contains("execution exceeded") || message.contains("time limit") {
                EvalError::Timeout(self.options.timeout)
            } else {
                EvalError::Failed(message)
            }
        })
    }

    /// The index of the rule at `path` (`data.pkg.deny`), when its bodies open with guards
    /// on `input` that tell, before any evaluation, that none can succeed
    /// ([`index::RuleIndex::may_succeed`]). `None` when no such index is sound (see
    /// [`index`]), or when a base document was given.
    pub fn index(&self, path: &str) -> Option<index::RuleIndex> {
        if self.has_data {
            return None;
        }
        // regorus hands out its modules only from a mutable interpreter; a copy shares them.
        let mut engine = self.prototype.clone();
        index::RuleIndex::build(engine.get_modules(), path)
    }

    /// The rule at `path` lowered for celer's own evaluator ([`native`]), or why it is not.
    /// A program with a base document is not lowered (the plan reads no `data` but rules).
    pub fn native_plan(&self, path: &str) -> Result<native::Plan, native::Unsupported> {
        if self.has_data {
            return Err(native::Unsupported("a base document".to_string()));
        }
        let mut engine = self.prototype.clone();
        native::Plan::lower(engine.get_modules(), path)
    }

    /// The wall-clock bound of one evaluation.
    pub fn timeout(&self) -> Duration {
        self.options.timeout
    }

    /// Whether the module named `module` declares a rule at `rule` (`violation`) or under it.
    pub fn declares(&self, module: &str, rule: &str) -> bool {
        self.prototype
            .has_declared_rule_rooted_at(module, rule)
            .unwrap_or(false)
    }
}
