//! An AuthorizationPolicy lowered into what a request runs: its CEL compiled once against an
//! environment of `request` (the SubjectAccessReview spec) and the policy's `variables`.
//! Anything that does not compile is a load error naming its field; such a policy is left out.

use celer_cel::env::ObjectTypes;
use celer_cel::{Env, Type};
use celer_cel_kubernetes::KubernetesEnv;

use super::model::{AuthorizationMatch, AuthorizationPolicy, RuleDecision};
use crate::compiled::{CompiledVariable, Expression, NamedExpression};
use crate::environment::{ExpressionKind, compile_in};
use crate::name::Name;

/// The CEL environment of one policy: `request`, then its variables, lazily.
#[derive(Debug, Clone)]
pub struct AuthorizationEnv {
    pub env: Env,
    pub request: usize,
}

/// The type of `request`, as kube-apiserver declares it for its authorizers' CEL.
const REQUEST_TYPE: &str = "kubernetes.SubjectAccessReviewSpec";

/// The SubjectAccessReview spec's object types, with the fields and names kube-apiserver
/// declares (its authorizer CEL compiler): a misspelt field is refused when the policy
/// loads, as the API server refuses it in an AuthorizationConfiguration.
#[derive(Debug)]
struct RequestTypes;

impl ObjectTypes for RequestTypes {
    fn field_type(&self, object: &str, field: &str) -> Option<Option<Type>> {
        let object_type = |name: &str| Type::Message(name.into());
        let strings = || Type::list(Type::String);
        let selector_fields = |field: &str| match field {
            "rawSelector" => Some(Type::String),
            "requirements" => Some(Type::list(object_type("kubernetes.SelectorRequirement"))),
            _ => None,
        };
        Some(match object {
            REQUEST_TYPE => match field {
                "resourceAttributes" => Some(object_type("kubernetes.ResourceAttributes")),
                "nonResourceAttributes" => Some(object_type("kubernetes.NonResourceAttributes")),
                "user" | "uid" => Some(Type::String),
                "groups" => Some(strings()),
                "extra" => Some(Type::map(Type::String, strings())),
                _ => None,
            },
            "kubernetes.ResourceAttributes" => match field {
                "namespace" | "verb" | "group" | "version" | "resource" | "subresource"
                | "name" => Some(Type::String),
                "fieldSelector" => Some(object_type("kubernetes.FieldSelectorAttributes")),
                "labelSelector" => Some(object_type("kubernetes.LabelSelectorAttributes")),
                _ => None,
            },
            "kubernetes.FieldSelectorAttributes" | "kubernetes.LabelSelectorAttributes" => {
                selector_fields(field)
            }
            "kubernetes.SelectorRequirement" => match field {
                "key" | "operator" => Some(Type::String),
                "values" => Some(strings()),
                _ => None,
            },
            "kubernetes.NonResourceAttributes" => match field {
                "path" | "verb" => Some(Type::String),
                _ => None,
            },
            _ => return None,
        })
    }
}

impl AuthorizationEnv {
    pub fn new() -> AuthorizationEnv {
        let mut env = Env::kubernetes();
        env.set_object_types(&RequestTypes);
        let request = env.declare("request", Type::Message(REQUEST_TYPE.into()));
        env.enable_lazy_variables();
        AuthorizationEnv { env, request }
    }
}

impl Default for AuthorizationEnv {
    fn default() -> Self {
        AuthorizationEnv::new()
    }
}

#[derive(Debug)]
pub struct CompiledRule {
    pub name: String,
    pub expression: Expression,
    pub decision: RuleDecision,
    pub message: Option<String>,
    pub message_expression: Option<Expression>,
}

/// A compiled AuthorizationPolicy.
#[derive(Debug)]
pub struct CompiledAuthorizationPolicy {
    pub name: Name,
    pub r#match: Option<AuthorizationMatch>,
    pub match_conditions: Vec<NamedExpression>,
    pub variables: Vec<CompiledVariable>,
    pub rules: Vec<CompiledRule>,
    /// `spec.rego`, compiled, instead of rules.
    pub rego: Option<super::rego::RegoModule>,
    pub env: AuthorizationEnv,
}

/// Compiles a policy, or gives every problem as `field: message`.
pub fn compile(policy: &AuthorizationPolicy) -> Result<CompiledAuthorizationPolicy, Vec<String>> {
    let spec = &policy.spec;
    let mut env = AuthorizationEnv::new();
    let mut errors = Vec::new();
    if policy.metadata.name.is_empty() {
        errors.push("metadata.name: Required value: name is required".to_string());
    }
    let mut expression = |env: &Env, field: String, source: &str, kind: ExpressionKind| {
        if source.trim().is_empty() {
            errors.push(format!(
                "{field}: Required value: an expression is required"
            ));
        }
        let program = compile_in(env, source, kind);
        if let Err(e) = &program {
            errors.push(format!("{field}: Invalid value: {source:?}: {e}"));
        }
        Expression {
            source: source.into(),
            program,
            variable_errors: Vec::new().into(),
        }
    };
    // Match conditions see no variables, as the API server's.
    let match_conditions = (spec.match_conditions.iter().enumerate())
        .map(|(i, c)| NamedExpression {
            name: c.name.clone(),
            expression: expression(
                &env.env,
                format!("spec.matchConditions[{i}].expression"),
                &c.expression,
                ExpressionKind::Condition,
            ),
        })
        .collect();
    let mut variables = Vec::with_capacity(spec.variables.len());
    for (i, v) in spec.variables.iter().enumerate() {
        let compiled = expression(
            &env.env,
            format!("spec.variables[{i}].expression"),
            &v.expression,
            ExpressionKind::Variable,
        );
        let ty = compiled
            .program
            .as_ref()
            .map_or(Type::Dyn, |p| p.result_type().clone());
        let slot = env.env.declare_lazy(&v.name, ty);
        variables.push(CompiledVariable {
            name: v.name.clone(),
            expression: compiled,
            slot,
        });
    }
    let mut rules = Vec::with_capacity(spec.rules.len());
    for (i, r) in spec.rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let rule_expression = expression(
            &env.env,
            format!("{at}.expression"),
            &r.expression,
            ExpressionKind::Condition,
        );
        let message_expression = r.message_expression.as_ref().map(|m| {
            expression(
                &env.env,
                format!("{at}.messageExpression"),
                m,
                ExpressionKind::Message,
            )
        });
        rules.push(CompiledRule {
            name: if r.name.is_empty() {
                format!("rules[{i}]")
            } else {
                r.name.clone()
            },
            expression: rule_expression,
            decision: r.decision,
            message: r.message.clone(),
            message_expression,
        });
    }
    let rego = match &spec.rego {
        Some(_) if !spec.rules.is_empty() => {
            errors.push("spec.rego: Forbidden: a policy has rules or rego, not both".to_string());
            None
        }
        Some(text) => {
            let v1 = spec.rego_version == Some(super::model::RegoVersion::V1);
            match super::rego::compile(text, v1) {
                Ok(module) => Some(module),
                Err(e) => {
                    errors.extend(e);
                    None
                }
            }
        }
        None => {
            if spec.rules.is_empty() {
                errors.push(
                    "spec.rules: Required value: at least one rule (or spec.rego) is required"
                        .to_string(),
                );
            }
            None
        }
    };
    if let Some(m) = &spec.r#match {
        for (i, r) in m.resources.iter().enumerate() {
            for (field, list) in [
                ("apiGroups", &r.api_groups),
                ("resources", &r.resources),
                ("verbs", &r.verbs),
            ] {
                if list.is_empty() {
                    errors.push(format!(
                        "spec.match.resources[{i}].{field}: Required value: list at least one (\"*\" for all)"
                    ));
                }
            }
        }
        for (i, r) in m.non_resource_urls.iter().enumerate() {
            for (field, list) in [("paths", &r.paths), ("verbs", &r.verbs)] {
                if list.is_empty() {
                    errors.push(format!(
                        "spec.match.nonResourceURLs[{i}].{field}: Required value: list at least one (\"*\" for all)"
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CompiledAuthorizationPolicy {
        name: Name::from(policy.metadata.name.as_str()),
        r#match: spec.r#match.clone(),
        match_conditions,
        variables,
        rules,
        rego,
        env,
    })
}
