//! The type checker: resolves names and overloads and deduces the type of every node, with
//! cel-go's semantics (`checker/checker.go`).
//!
//! Choices where celer differs from, or has less than, cel-go:
//! - **Messages** are not modelled. `Name{...}` is accepted for any name and has type
//!   `Type::Message` of the name qualified by the container (or of the type a declared
//!   `type(...)`-typed name refers to); selecting a field of a message gives `dyn`. The
//!   well-known types build their CEL types (`google.protobuf.Int64Value{...}` is an `int`,
//!   `google.protobuf.Struct{...}` a `map(string, dyn)`, ...). Two message types are
//!   modelled: the lazy variables' `variables` object ([`crate::env`]) and, in an
//!   environment where a library registered message types
//!   ([`MessageTypes`](crate::value::MessageTypes)), those types, where any other message
//!   name is an undeclared reference.
//! - There are no protobuf wrapper types (a wrapper is its primitive, so it does not accept
//!   `null`), no enums and no `google.protobuf.Any` type.
//! - Container aliases (`cel.Abbrevs`) are not supported.
//! - In a receiver call `ns.f(x)`, a variable `ns` wins over a global function `ns.f`
//!   (cel-go prefers the function); see
//!   [`namespaced_function`].
//! - Joining `null` with a nullable type gives the nullable type in either order
//!   (cel-spec's `legacy_nullable_types` tests; cel-go skips them).
//!
//! Name resolution lives in small public functions ([`resolve_select_chain`],
//! [`resolve_name`], [`namespaced_function`], ...) so that the compiler resolves exactly
//! as the checker does; [`check_ast`] also returns what every node resolved to.

mod homogeneous;
mod literals;
pub mod resolve;
mod string_format;
mod unify;

#[cfg(test)]
mod source_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

pub use resolve::{
    Resolution, candidate_names, namespaced_function, qualified_name, resolve_function,
    resolve_name, resolve_qualified, resolve_select_chain, type_identifier,
};
pub use unify::format_type;

use crate::env::Env;
use crate::error::{CompileError, CompileErrorKind, Diagnostic};
use crate::library::Function;
use crate::library::operators::CROSS_TYPE_NUMERIC_COMPARISONS;
use crate::syntax::ast::{
    Comprehension, Expr, ExprId, ExprKind, Literal, MapEntry, StructField, ops,
};
use crate::types::Type;
use unify::Mapping;

/// cel-go stops reporting after this many errors.
const MAX_ERRORS: usize = 100;

pub use crate::env::CheckOptions;

/// What a checked node refers to, for the compiler.
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    /// A comprehension variable or accumulator in scope.
    Local { name: String },
    /// A global name; on a `Select` node this replaces the whole chain (the operands are not
    /// evaluated and were not checked).
    Global(Resolution),
    /// A call: the function's fully qualified name, whether the call passes the receiver
    /// (`false` for a namespaced call like `optional.of(x)`, whose target is not evaluated), and
    /// the ids of the overloads that match the argument types.
    Function {
        name: String,
        receiver: bool,
        overloads: Vec<&'static str>,
    },
}

/// The result of checking an expression.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The type of the whole expression.
    pub result_type: Type,
    /// The type of every checked node, with type parameters resolved (unbound ones are `dyn`).
    pub types: HashMap<ExprId, Type>,
    /// What identifiers, qualified names and calls refer to.
    pub references: HashMap<ExprId, Reference>,
}

/// Checks `expr` against `env` and returns its type.
pub fn check(env: &Env, source: &str, expr: &Expr) -> Result<Type, CompileError> {
    check_ast(env, source, expr).map(|c| c.result_type)
}

/// Checks `expr` against `env`; returns every node's type and reference, or all the errors.
pub fn check_ast(env: &Env, source: &str, expr: &Expr) -> Result<Checked, CompileError> {
    let mut c = Checker {
        env,
        mapping: Mapping::default(),
        next_var: 0,
        scopes: Vec::new(),
        diagnostics: Vec::new(),
        types: HashMap::new(),
        references: HashMap::new(),
    };
    let root = c.check(expr);
    let mut diags = c.diagnostics;
    let mut types = HashMap::new();
    if diags.is_empty() {
        types = c
            .types
            .iter()
            .map(|(id, t)| (*id, unify::substitute(&c.mapping, t, true)))
            .collect();
        // Like cel-go's validators, this runs only on a successfully checked expression.
        let options = env.check_options();
        if options.homogeneous_aggregate_literals {
            homogeneous::validate(expr, &types, options, &mut diags);
        }
        if options.validate_literals {
            literals::validate(expr, &mut diags);
        }
        // The strings extension's check of `format` calls with literal arguments.
        string_format::validate(expr, &types, &c.references, &mut diags);
    }
    if !diags.is_empty() {
        diags.sort_by_key(|d| d.span.start);
        diags.truncate(MAX_ERRORS);
        return Err(CompileError::new(CompileErrorKind::Check, source, diags));
    }
    Ok(Checked {
        result_type: unify::substitute(&c.mapping, &root, true),
        types,
        references: c.references,
    })
}

struct Checker<'e> {
    env: &'e Env,
    mapping: Mapping,
    next_var: usize,
    /// Comprehension scopes, innermost last.
    scopes: Vec<HashMap<String, Type>>,
    diagnostics: Vec<Diagnostic>,
    types: HashMap<ExprId, Type>,
    references: HashMap<ExprId, Reference>,
}

impl Checker<'_> {
    fn check(&mut self, e: &Expr) -> Type {
        let t = match &e.kind {
            ExprKind::Literal(lit) => literal_type(lit),
            ExprKind::Ident(name) => self.check_ident(e, name),
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => self.check_select(e, operand, field, *test_only, *optional),
            ExprKind::Call {
                target,
                function,
                args,
            } => self.check_call(e, target.as_deref(), function, args),
            ExprKind::List {
                elements,
                optional_indices,
            } => self.check_list(elements, optional_indices),
            ExprKind::Map { entries } => self.check_map(entries),
            ExprKind::Struct { type_name, fields } => self.check_struct(e, type_name, fields),
            ExprKind::Comprehension(comp) => self.check_comprehension(comp),
        };
        self.types.insert(e.id, t.clone());
        t
    }

    // ----- diagnostics -----

    fn error(&mut self, e: &Expr, message: String) {
        self.diagnostics.push(Diagnostic {
            span: e.span,
            message,
        });
    }

    fn undeclared(&mut self, e: &Expr, name: &str) {
        let container = self.env.container().to_string();
        self.error(
            e,
            format!("undeclared reference to '{name}' (in container '{container}')"),
        );
    }

    fn type_mismatch(&mut self, e: &Expr, expected: &Type, found: &Type) {
        self.error(
            e,
            format!(
                "expected type '{}' but found '{}'",
                format_type(expected),
                format_type(found)
            ),
        );
    }

    // ----- scopes and type variables -----

    fn lookup_local(&self, name: &str) -> Option<&Type> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn new_type_var(&mut self) -> Type {
        let t = Type::Param(Arc::from(format!("_var{}", self.next_var)));
        self.next_var += 1;
        t
    }

    fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        unify::is_assignable(&mut self.mapping, t1, t2)
    }

    fn substitute(&self, t: &Type) -> Type {
        unify::substitute(&self.mapping, t, false)
    }

    // ----- identifiers and selection -----

    fn check_ident(&mut self, e: &Expr, name: &str) -> Type {
        if !name.starts_with('.')
            && let Some(t) = self.lookup_local(name).cloned()
        {
            self.references.insert(
                e.id,
                Reference::Local {
                    name: name.to_string(),
                },
            );
            return t;
        }
        if let Some(r) = resolve_name(self.env, name) {
            let t = r.ty().clone();
            self.references.insert(e.id, Reference::Global(r));
            return t;
        }
        self.undeclared(e, name);
        Type::Error
    }

    fn check_select(
        &mut self,
        e: &Expr,
        operand: &Expr,
        field: &str,
        test_only: bool,
        optional: bool,
    ) -> Type {
        // Before descending, try the whole chain as a qualified name.
        if !test_only
            && !optional
            && matches!(operand.kind, ExprKind::Ident(_) | ExprKind::Select { .. })
        {
            let scopes = &self.scopes;
            let is_local = |n: &str| scopes.iter().any(|s| s.contains_key(n));
            if let Some(r) = resolve_qualified(self.env, e, &is_local) {
                let t = r.ty().clone();
                self.references.insert(e.id, Reference::Global(r));
                return t;
            }
        }
        let result = self.check_select_field(e, operand, field, optional);
        let result = if test_only { Type::Bool } else { result };
        self.substitute(&result)
    }

    fn check_select_field(
        &mut self,
        e: &Expr,
        operand: &Expr,
        field: &str,
        optional: bool,
    ) -> Type {
        let operand_type = self.check(operand);
        let operand_type = self.substitute(&operand_type);
        let (target, was_optional) = unify::unwrap_optional(operand_type);
        let result = match target {
            Type::Map(_, v) => *v,
            Type::Message(name) => match self.message_field_type(&name, field) {
                Some(t) => t,
                None => {
                    self.error(e, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Param(_) => {
                // Pin the parameter to dyn so it cannot later be bound to something else.
                self.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            Type::Dyn | Type::Error => Type::Dyn,
            other => {
                self.error(
                    e,
                    format!(
                        "type '{}' does not support field selection",
                        format_type(&other)
                    ),
                );
                Type::Dyn
            }
        };
        if was_optional || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    /// The type of a message's field, `None` when the message has no such field. Messages
    /// are not modelled, so their fields are `dyn`, except the lazy variables' object
    /// (`variables`, whose fields are the declared lazy variables) and the message types a
    /// library registered ([`MessageTypes::field_type`](crate::value::MessageTypes::field_type)).
    fn message_field_type(&self, message: &str, field: &str) -> Option<Type> {
        if message == self.env.lazy_variables_type() {
            let vars = self.env.variables();
            return vars
                .lazy_slot(field)
                .and_then(|slot| vars.lazy_get(slot))
                .map(|(_, t)| t.clone());
        }
        if let Some(known) = self
            .env
            .object_types()
            .and_then(|types| types.field_type(message, field))
        {
            return known;
        }
        if let Some(types) = self.env.registry().message_types() {
            return types.field_type(message, field);
        }
        Some(Type::Dyn)
    }

    // ----- calls -----

    fn check_call(
        &mut self,
        e: &Expr,
        target: Option<&Expr>,
        function: &str,
        args: &[Expr],
    ) -> Type {
        let arg_types: Vec<Type> = args.iter().map(|a| self.check(a)).collect();
        let env = self.env;
        let Some(target) = target else {
            return match resolve_function(env, function) {
                Some((name, f)) => self.resolve_overload(e, &name, f, None, args, arg_types),
                None => {
                    self.undeclared(e, function);
                    Type::Error
                }
            };
        };
        // `a.b.f(x)` where `a.b.f` is a global function: call it without a receiver.
        let scopes = &self.scopes;
        let is_local = |n: &str| scopes.iter().any(|s| s.contains_key(n));
        if let Some((name, f)) = namespaced_function(env, target, function, &is_local) {
            return self.resolve_overload(e, &name, f, None, args, arg_types);
        }
        let target_type = self.check(target);
        match resolve_function(env, function) {
            Some((name, f)) => {
                self.resolve_overload(e, &name, f, Some(target_type), args, arg_types)
            }
            None => {
                self.undeclared(e, function);
                Type::Error
            }
        }
    }

    fn overload_enabled(&self, id: &str) -> bool {
        self.env.check_options().cross_type_numeric_comparisons
            || !CROSS_TYPE_NUMERIC_COMPARISONS.contains(&id)
    }

    fn resolve_overload(
        &mut self,
        call: &Expr,
        name: &str,
        function: &Function,
        target: Option<Type>,
        args: &[Expr],
        arg_types: Vec<Type>,
    ) -> Type {
        let receiver = target.is_some();
        let mut all_types = Vec::with_capacity(arg_types.len() + 1);
        all_types.extend(target);
        all_types.extend(arg_types);

        // cel-go checks the logical operators argument by argument.
        if !receiver
            && (name == ops::LOGICAL_AND || name == ops::LOGICAL_OR)
            && let Some(o) = function.overloads.iter().find(|o| !o.receiver)
        {
            let mut ok = true;
            for (arg, t) in args.iter().zip(&all_types) {
                if !self.is_assignable(t, &Type::Bool) {
                    self.type_mismatch(arg, &Type::Bool, t);
                    ok = false;
                }
            }
            self.references.insert(
                call.id,
                Reference::Function {
                    name: name.to_string(),
                    receiver,
                    overloads: vec![o.id],
                },
            );
            return if ok { Type::Bool } else { Type::Error };
        }

        let mut result: Option<Type> = None;
        let mut matched = Vec::new();
        for o in &function.overloads {
            if o.receiver != receiver || !self.overload_enabled(o.id) {
                continue;
            }
            if o.params.len() != all_types.len() {
                continue;
            }
            // Instantiate the overload's type parameters with fresh variables.
            let mut names = Vec::new();
            for p in &o.params {
                unify::collect_params(p, &mut names);
            }
            unify::collect_params(&o.result, &mut names);
            let (params, result_type) = if names.is_empty() {
                (o.params.clone(), o.result.clone())
            } else {
                let renames: HashMap<Arc<str>, Type> = names
                    .into_iter()
                    .map(|n| (n, self.new_type_var()))
                    .collect();
                (
                    o.params
                        .iter()
                        .map(|p| unify::rename_params(p, &renames))
                        .collect::<Vec<_>>(),
                    unify::rename_params(&o.result, &renames),
                )
            };
            if unify::is_assignable_list(&mut self.mapping, &all_types, &params) {
                matched.push(o.id);
                let r = self.substitute(&result_type);
                result = Some(match result {
                    None => r,
                    Some(prev) if !unify::is_dyn(&prev) && prev != r => Type::Dyn,
                    Some(prev) => prev,
                });
            }
        }
        match result {
            Some(t) => {
                self.references.insert(
                    call.id,
                    Reference::Function {
                        name: name.to_string(),
                        receiver,
                        overloads: matched,
                    },
                );
                t
            }
            None => {
                let shown: Vec<String> = all_types
                    .iter()
                    .map(|t| format_type(&unify::substitute(&self.mapping, t, true)))
                    .collect();
                let signature = match shown.split_first() {
                    Some((first, rest)) if receiver => format!("{first}.({})", rest.join(", ")),
                    _ => format!("({})", shown.join(", ")),
                };
                self.error(
                    call,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                );
                Type::Error
            }
        }
    }

    // ----- aggregate literals -----

    /// The common type of aggregate literal elements so far and the next one.
    fn join_types(&mut self, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.is_assignable(&previous, &current) {
            return unify::most_general(&previous, &current);
        }
        // Mixed elements are dyn; homogeneity is checked afterwards, when asked for.
        Type::Dyn
    }

    /// For `?x` elements and entries: the type `T` of an `optional_type(T)` value.
    fn unwrap_optional_element(&mut self, e: &Expr, t: Type) -> Type {
        let (inner, was_optional) = unify::unwrap_optional(t);
        if !was_optional && !unify::is_dyn(&inner) {
            self.type_mismatch(e, &Type::optional(inner.clone()), &inner);
        }
        inner
    }

    fn check_list(&mut self, elements: &[Expr], optional_indices: &[u32]) -> Type {
        let mut elem: Option<Type> = None;
        for (i, el) in elements.iter().enumerate() {
            let mut t = self.check(el);
            if optional_indices.iter().any(|&o| o as usize == i) {
                t = self.unwrap_optional_element(el, t);
            }
            elem = Some(self.join_types(elem, t));
        }
        let elem = match elem {
            Some(t) => t,
            None => self.new_type_var(),
        };
        Type::list(elem)
    }

    fn check_map(&mut self, entries: &[MapEntry]) -> Type {
        let mut key: Option<Type> = None;
        let mut value: Option<Type> = None;
        for entry in entries {
            let kt = self.check(&entry.key);
            key = Some(self.join_types(key, kt));
            let mut vt = self.check(&entry.value);
            if entry.optional {
                vt = self.unwrap_optional_element(&entry.value, vt);
            }
            value = Some(self.join_types(value, vt));
        }
        match (key, value) {
            (Some(k), Some(v)) => Type::map(k, v),
            _ => {
                let k = self.new_type_var();
                let v = self.new_type_var();
                Type::map(k, v)
            }
        }
    }

    fn check_struct(&mut self, e: &Expr, type_name: &str, fields: &[StructField]) -> Type {
        if let Some(types) = self.env.registry().message_types() {
            return self.check_library_struct(types, e, type_name, fields);
        }
        for f in fields {
            let t = self.check(&f.value);
            if f.optional {
                self.unwrap_optional_element(&f.value, t);
            }
        }
        // A well-known protobuf type, then a declared name of type `type(T)` naming a message;
        // otherwise the container-qualified name.
        for candidate in candidate_names(self.env.container(), type_name) {
            if let Some(t) = well_known_struct(&candidate) {
                return t;
            }
        }
        if let Some(r) = resolve_name(self.env, type_name)
            && let Type::Type(inner) = r.ty()
            && let Type::Message(_) = **inner
        {
            return (**inner).clone();
        }
        let name = match type_name.strip_prefix('.') {
            Some(absolute) => absolute.to_string(),
            None if self.env.container().is_empty() => type_name.to_string(),
            None => format!("{}.{type_name}", self.env.container()),
        };
        Type::Message(Arc::from(name))
    }

    /// `Name{...}` in an environment with library message types: a well-known type, one of
    /// the library's types (whose fields are checked), or an undeclared reference, as
    /// cel-go's `checkCreateStruct` does with a custom type provider.
    fn check_library_struct(
        &mut self,
        types: &dyn crate::value::MessageTypes,
        e: &Expr,
        type_name: &str,
        fields: &[StructField],
    ) -> Type {
        let candidates = candidate_names(self.env.container(), type_name);
        let well_known = candidates.iter().find_map(|c| well_known_struct(c));
        let resolved = candidates.into_iter().find(|c| types.has_type(c));
        if well_known.is_none() && resolved.is_none() {
            // Like cel-go, the fields of an unknown type are not checked.
            self.undeclared(e, type_name.trim_start_matches('.'));
            return Type::Error;
        }
        let mut field_types = Vec::with_capacity(fields.len());
        for f in fields {
            let mut t = self.check(&f.value);
            if f.optional {
                t = self.unwrap_optional_element(&f.value, t);
            }
            field_types.push(t);
        }
        let (Some(name), None) = (resolved, well_known.as_ref()) else {
            return well_known.unwrap_or(Type::Error);
        };
        for (f, value_type) in fields.iter().zip(field_types) {
            let Some(field_type) = types.field_type(&name, &f.name) else {
                self.error(&f.value, format!("undefined field '{}'", f.name));
                continue;
            };
            if !self.is_assignable(&field_type, &value_type) {
                let found = self.substitute(&value_type);
                self.error(
                    &f.value,
                    format!(
                        "expected type of field '{}' is '{}' but provided type is '{}'",
                        f.name,
                        format_type(&field_type),
                        format_type(&found)
                    ),
                );
            }
        }
        Type::Message(Arc::from(name))
    }

    // ----- comprehensions -----

    fn check_comprehension(&mut self, comp: &Comprehension) -> Type {
        let range_type = self.check(&comp.iter_range);
        let accu_type = self.check(&comp.accu_init);
        let range_type = self.substitute(&range_type);

        let two_vars = comp.iter_var2.is_some();
        let (var_type, var2_type) = match &range_type {
            Type::List(elem) if two_vars => (Type::Int, (**elem).clone()),
            Type::List(elem) => ((**elem).clone(), Type::Dyn),
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::Dyn | Type::Error | Type::Param(_) => {
                self.is_assignable(&Type::Dyn, &range_type);
                (Type::Dyn, Type::Dyn)
            }
            other => {
                let message = format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    format_type(other)
                );
                self.error(&comp.iter_range, message);
                (Type::Error, Type::Error)
            }
        };

        // The accumulator's scope covers the loop and the result.
        self.scopes
            .push(HashMap::from([(comp.accu_var.clone(), accu_type.clone())]));
        // The loop's scope holds the iteration variables.
        let mut loop_scope = HashMap::from([(comp.iter_var.clone(), var_type)]);
        if let Some(v2) = &comp.iter_var2 {
            loop_scope.insert(v2.clone(), var2_type);
        }
        self.scopes.push(loop_scope);

        let cond = self.check(&comp.loop_condition);
        if !self.is_assignable(&Type::Bool, &cond) {
            self.type_mismatch(&comp.loop_condition, &Type::Bool, &cond);
        }
        let step = self.check(&comp.loop_step);
        if !self.is_assignable(&accu_type, &step) {
            self.type_mismatch(&comp.loop_step, &accu_type, &step);
        }
        self.scopes.pop();
        let result = self.check(&comp.result);
        self.scopes.pop();
        self.substitute(&result)
    }
}

/// The CEL type of a well-known protobuf message built with `Name{...}`. Wrappers are their
/// primitive (celer has no wrapper types), JSON types are their CEL shapes.
fn well_known_struct(name: &str) -> Option<Type> {
    Some(match name {
        "google.protobuf.BoolValue" => Type::Bool,
        "google.protobuf.BytesValue" => Type::Bytes,
        "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => Type::Double,
        "google.protobuf.Int32Value" | "google.protobuf.Int64Value" => Type::Int,
        "google.protobuf.UInt32Value" | "google.protobuf.UInt64Value" => Type::Uint,
        "google.protobuf.StringValue" => Type::String,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Value" | "google.protobuf.Any" => Type::Dyn,
        "google.protobuf.Struct" => Type::map(Type::String, Type::Dyn),
        "google.protobuf.ListValue" => Type::list(Type::Dyn),
        _ => return None,
    })
}

fn literal_type(lit: &Literal) -> Type {
    match lit {
        Literal::Null => Type::Null,
        Literal::Bool(_) => Type::Bool,
        Literal::Int(_) => Type::Int,
        Literal::Uint(_) => Type::Uint,
        Literal::Double(_) => Type::Double,
        Literal::String(_) => Type::String,
        Literal::Bytes(_) => Type::Bytes,
    }
}

impl Env {
    /// Parses and type-checks, returning the expression's type.
    pub fn check(&self, source: &str) -> Result<Type, CompileError> {
        let expr = self.parse(source)?;
        check(self, source, &expr)
    }
}
