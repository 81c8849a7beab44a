//! Variable values for one evaluation: an [`Activation`] binds an environment's slots,
//! and keeps the lazy variables' results once read (see [`crate::env`]).

use std::sync::{Arc, OnceLock};

use crate::env::{Env, VARIABLES, Variables};
use crate::eval::program::Program;
use crate::value::{EvalResult, Json, Value};

/// Variable values for one evaluation, by slot, and the lazy variables with the values they
/// took once read.
#[derive(Debug, Clone)]
pub struct Activation<'a> {
    variables: Arc<Variables>,
    values: Vec<Option<Value<'a>>>,
    lazy: Vec<LazyVariable<'a>>,
}

/// A lazy variable in an activation: the program that computes it and, once read, its
/// result.
#[derive(Debug, Clone, Default)]
pub(crate) struct LazyVariable<'a> {
    pub(crate) program: Option<&'a Program>,
    /// A lock only in name: activations are meant for one thread, but staying `Sync` costs
    /// one atomic load per read. Two threads reading a variable first at the same time would
    /// both evaluate it, and keep one result.
    pub(crate) result: OnceLock<EvalResult<'a>>,
}

/// The memory of an activation without its values, so that one request's many evaluations
/// (each policy has its own environment) need not allocate an activation each:
///
/// ```
/// use celer_cel::{Activation, ActivationBuffers, Env, Type, Value};
/// let mut env = Env::standard();
/// env.declare("x", Type::Int);
/// let program = env.compile("x + 1").unwrap();
/// let mut buffers = ActivationBuffers::default();
/// for i in 0..3 {
///     let mut act = Activation::with_buffers(&env, std::mem::take(&mut buffers));
///     act.bind("x", Value::Int(i)).unwrap();
///     assert!(matches!(program.eval(&act), Ok(Value::Int(n)) if n == i + 1));
///     buffers = act.into_buffers();
/// }
/// ```
#[derive(Debug, Default)]
pub struct ActivationBuffers {
    values: Vec<Option<Value<'static>>>,
    lazy: Vec<LazyVariable<'static>>,
}

/// An emptied vector of another element lifetime over the same allocation: an in-place
/// `collect` (the element types differ only in lifetime, so size and alignment agree).
fn recycle<T, U>(v: Vec<T>) -> Vec<U> {
    v.into_iter().filter_map(|_| None).collect()
}

/// A variable name the environment does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("undeclared variable '{0}'")]
pub struct UndeclaredVariable(pub String);

impl<'a> Activation<'a> {
    pub fn new(env: &Env) -> Activation<'a> {
        Activation {
            variables: env.variables.clone(),
            values: vec![None; env.variables.len()],
            lazy: (0..env.variables.lazy_len())
                .map(|_| LazyVariable::default())
                .collect(),
        }
    }

    /// An activation for `env` that reuses the memory of an earlier one (see
    /// [`ActivationBuffers`]): no allocation when the buffers are large enough.
    pub fn with_buffers(env: &Env, buffers: ActivationBuffers) -> Activation<'a> {
        let ActivationBuffers { values, lazy } = buffers;
        let mut values = recycle(values);
        values.resize(env.variables.len(), None);
        let mut lazy = recycle(lazy);
        lazy.resize_with(env.variables.lazy_len(), LazyVariable::default);
        Activation {
            variables: env.variables.clone(),
            values,
            lazy,
        }
    }

    /// Drops the values (and lazy results) and keeps the memory for [`Activation::with_buffers`].
    pub fn into_buffers(self) -> ActivationBuffers {
        ActivationBuffers {
            values: recycle(self.values),
            lazy: recycle(self.lazy),
        }
    }

    /// An activation with no variables (for constant expressions).
    pub fn empty() -> Activation<'a> {
        Activation {
            variables: Arc::new(Variables::default()),
            values: Vec::new(),
            lazy: Vec::new(),
        }
    }

    pub fn bind(&mut self, name: &str, value: Value<'a>) -> Result<(), UndeclaredVariable> {
        let slot = self
            .variables
            .slot(name)
            .ok_or_else(|| UndeclaredVariable(name.to_string()))?;
        self.set(slot, value);
        Ok(())
    }

    /// Binds a JSON document without copying it.
    pub fn bind_json(&mut self, name: &str, json: &'a Json) -> Result<(), UndeclaredVariable> {
        self.bind(name, Value::from_json(json))
    }

    pub fn set(&mut self, slot: usize, value: Value<'a>) {
        if slot >= self.values.len() {
            self.values.resize(slot + 1, None);
        }
        if let Some(v) = self.values.get_mut(slot) {
            *v = Some(value);
        }
    }

    /// The value bound to `slot`, else the default it was declared with
    /// ([`Env::declare_with_default`]): read from the environment, not copied into every
    /// activation (a request evaluates many).
    pub fn get(&self, slot: usize) -> Option<&Value<'a>> {
        match self.values.get(slot) {
            Some(Some(value)) => Some(value),
            _ => self
                .variables
                .defaults
                .iter()
                .find(|(s, _)| *s == slot)
                .map(|(_, value)| value),
        }
    }

    /// Binds the lazy variable `variables.<name>` to the program that computes it.
    pub fn bind_lazy(
        &mut self,
        name: &str,
        program: &'a Program,
    ) -> Result<(), UndeclaredVariable> {
        let slot = self
            .variables
            .lazy_slot(name)
            .ok_or_else(|| UndeclaredVariable(format!("{VARIABLES}.{name}")))?;
        self.set_lazy(slot, program);
        Ok(())
    }

    /// Binds a lazy slot (from [`Env::declare_lazy`]) to the program that computes it, and
    /// forgets any value it had taken.
    pub fn set_lazy(&mut self, slot: usize, program: &'a Program) {
        if slot >= self.lazy.len() {
            self.lazy.resize_with(slot + 1, LazyVariable::default);
        }
        if let Some(v) = self.lazy.get_mut(slot) {
            *v = LazyVariable {
                program: Some(program),
                ..LazyVariable::default()
            };
        }
    }

    /// The result of a lazy variable if some evaluation has read it.
    pub fn lazy_result(&self, slot: usize) -> Option<&EvalResult<'a>> {
        self.lazy.get(slot).and_then(|v| v.result.get())
    }

    pub(crate) fn lazy(&self, slot: usize) -> Option<&LazyVariable<'a>> {
        self.lazy.get(slot)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod buffer_tests {
    use super::*;
    use crate::types::Type;

    #[test]
    fn buffers_keep_their_memory_across_lifetimes() {
        let mut env = Env::standard();
        for name in ["a", "b", "c", "d", "e"] {
            env.declare(name, Type::Dyn);
        }
        let act = Activation::new(&env);
        let pointer = act.values.as_ptr() as usize;
        let buffers = act.into_buffers();
        assert_eq!(buffers.values.as_ptr() as usize, pointer);
        assert!(buffers.values.is_empty() && buffers.values.capacity() >= 5);
        let text = String::from("x");
        let mut act = Activation::with_buffers(&env, buffers);
        assert_eq!(act.values.as_ptr() as usize, pointer);
        act.bind("a", Value::String(crate::value::Str::Borrowed(&text)))
            .unwrap();
        assert!(act.get(0).is_some() && act.get(1).is_none());
        let again = Activation::with_buffers(&env, act.into_buffers());
        assert!(again.get(0).is_none(), "values do not survive recycling");
    }
}
