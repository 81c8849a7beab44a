//! cel-go's homogeneous aggregate literal validation: after a successful check, every list
//! literal's elements, and every map literal's keys and values, must have exactly the same
//! type (`dyn` is not `int`). Literals inside calls to exempt functions (`format`) are skipped.

use std::collections::HashMap;

use super::{CheckOptions, format_type};
use crate::error::Diagnostic;
use crate::syntax::ast::{Expr, ExprId, ExprKind};
use crate::types::Type;

pub(super) fn validate(
    root: &Expr,
    types: &HashMap<ExprId, Type>,
    options: &CheckOptions,
    diags: &mut Vec<Diagnostic>,
) {
    let mut v = Validator {
        types,
        exempt: &options.homogeneous_exempt_functions,
        diags,
    };
    v.walk(root, false);
}

struct Validator<'a> {
    types: &'a HashMap<ExprId, Type>,
    exempt: &'a [String],
    diags: &'a mut Vec<Diagnostic>,
}

impl Validator<'_> {
    /// The checked type of a node; `None` for nodes the checker replaced (never elements).
    fn ty(&self, e: &Expr, optional: bool) -> Option<Type> {
        let t = self.types.get(&e.id)?.clone();
        Some(match t {
            Type::Optional(inner) if optional => *inner,
            other => other,
        })
    }

    fn mismatch(&mut self, e: &Expr, expected: &Type, found: &Type) {
        self.diags.push(Diagnostic {
            span: e.span,
            message: format!(
                "expected type '{}' but found '{}'",
                format_type(expected),
                format_type(found)
            ),
        });
    }

    fn walk(&mut self, e: &Expr, exempt: bool) {
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select { operand, .. } => self.walk(operand, exempt),
            ExprKind::Call {
                target,
                function,
                args,
            } => {
                let exempt = exempt || self.exempt.iter().any(|f| f == function);
                if let Some(t) = target {
                    self.walk(t, exempt);
                }
                for a in args {
                    self.walk(a, exempt);
                }
            }
            ExprKind::List {
                elements,
                optional_indices,
            } => {
                if !exempt {
                    self.check_list(elements, optional_indices);
                }
                for el in elements {
                    self.walk(el, exempt);
                }
            }
            ExprKind::Map { entries } => {
                if !exempt {
                    let mut first: Option<(Type, Type)> = None;
                    for entry in entries {
                        let (Some(kt), Some(vt)) = (
                            self.ty(&entry.key, false),
                            self.ty(&entry.value, entry.optional),
                        ) else {
                            continue;
                        };
                        match &first {
                            None => first = Some((kt, vt)),
                            Some((k0, v0)) => {
                                let (k0, v0) = (k0.clone(), v0.clone());
                                if k0 != kt {
                                    self.mismatch(&entry.key, &k0, &kt);
                                }
                                if v0 != vt {
                                    self.mismatch(&entry.value, &v0, &vt);
                                }
                            }
                        }
                    }
                }
                for entry in entries {
                    self.walk(&entry.key, exempt);
                    self.walk(&entry.value, exempt);
                }
            }
            ExprKind::Struct { fields, .. } => {
                for f in fields {
                    self.walk(&f.value, exempt);
                }
            }
            ExprKind::Comprehension(c) => {
                for part in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_condition,
                    &c.loop_step,
                    &c.result,
                ] {
                    self.walk(part, exempt);
                }
            }
        }
    }

    fn check_list(&mut self, elements: &[Expr], optional_indices: &[u32]) {
        let mut first: Option<Type> = None;
        for (i, el) in elements.iter().enumerate() {
            let optional = optional_indices.iter().any(|&o| o as usize == i);
            let Some(t) = self.ty(el, optional) else {
                continue;
            };
            match &first {
                None => first = Some(t),
                Some(t0) if *t0 != t => {
                    let t0 = t0.clone();
                    self.mismatch(el, &t0, &t);
                    return;
                }
                Some(_) => {}
            }
        }
    }
}
