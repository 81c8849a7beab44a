//! Compiling ClusterPolicy and Policy rules and `kyverno.io/v2` PolicyExceptions into
//! [`ClassicRule`]s and [`ClassicExceptionRule`]s: match and exclude, the rule body
//! (`validate.cel`, `validate.podSecurity`, `validate.pattern`, `validate.anyPattern`), the
//! failure action; rules celer does not run are reported with their reason ([`LeftOutRule`]).

use super::*;

/// Compiles a PolicyException. One with `conditions` (JMESPath) is reported and left out,
/// as is one that does not validate.
pub fn compile_exception(
    e: &ClassicException,
    source: &Source,
    errors: &mut Vec<LoadError>,
) -> Option<ClassicExceptionRule> {
    let what = format!("PolicyException {:?}", e.metadata.name);
    let mut problems = Vec::new();
    if e.spec.exceptions.is_empty() {
        problems.push("spec.exceptions: Required value".to_string());
    }
    for (i, x) in e.spec.exceptions.iter().enumerate() {
        if x.policy_name.is_empty() {
            problems.push(format!(
                "spec.exceptions[{i}].policyName: Required value: An exception requires a policy name"
            ));
        }
    }
    let block = MatchBlock {
        any: e.spec.match_resources.any.clone(),
        all: e.spec.match_resources.all.clone(),
        inline: Filter::default(),
    };
    let matches = compile_match(&block, &mut problems, "spec.match");
    if matches.is_empty() {
        problems.push("spec.match: Required value: any or all is required".to_string());
    }
    let pod_security: Vec<Exclusion> = e.spec.pod_security.iter().map(Exclusion::new).collect();
    for (i, x) in pod_security.iter().enumerate() {
        problems.extend(x.problems(&format!("spec.podSecurity[{i}]")));
    }
    if !problems.is_empty() {
        for message in problems {
            errors.push(LoadError::new(source, what.clone(), message));
        }
        return None;
    }
    let key = match e.metadata.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{}", e.metadata.name),
        None => e.metadata.name.clone(),
    };
    Some(ClassicExceptionRule {
        key,
        refs: e
            .spec
            .exceptions
            .iter()
            .map(|x| (x.policy_name.clone(), x.rule_names.clone()))
            .collect(),
        matches,
        pod_security,
        conditions: e.spec.conditions_json.clone(),
    })
}

fn enforce(action: Option<&str>) -> bool {
    action.is_some_and(|a| a.eq_ignore_ascii_case("enforce"))
}

/// A rule of a ClusterPolicy or Policy that celer does not run, and why.
#[derive(Debug, Clone)]
pub struct LeftOutRule {
    pub policy: Name,
    /// The namespace of a `Policy`.
    pub namespace: Option<String>,
    pub rule: String,
    pub reason: LeftOut,
    /// The load error that reports it.
    pub error: LoadError,
}

/// Compiles the rules of a ClusterPolicy or Policy that celer runs (`validate.cel`,
/// `validate.podSecurity`, `validate.pattern`, `validate.anyPattern`); the others are
/// reported as left out, each with a load error and in `left_out`.
pub fn compile(
    p: &ClusterPolicy,
    namespaced: bool,
    source: &Source,
    errors: &mut Vec<LoadError>,
    left_out: &mut Vec<LeftOutRule>,
) -> Vec<ClassicRule> {
    let kind = if namespaced {
        "Policy"
    } else {
        "ClusterPolicy"
    };
    let what = format!("{kind} {:?}", p.metadata.name);
    let policy_namespace = namespaced.then(|| {
        p.metadata
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string())
    });
    let mut push = |message: String| {
        let error = LoadError {
            location: source.clone(),
            what: what.clone(),
            message,
        };
        errors.push(error.clone());
        error
    };
    for (i, r) in p.spec.rules.iter().enumerate() {
        if let Some(reason) = r.left_out() {
            let error = push(format!(
                "spec.rules[{i}] ({}): {}; the rule is left out",
                r.name,
                reason.reason()
            ));
            left_out.push(LeftOutRule {
                policy: Name::from(p.metadata.name.as_str()),
                namespace: policy_namespace.clone(),
                rule: r.name.clone(),
                reason,
                error,
            });
        }
    }
    let policy_action = p.spec.validation_failure_action.as_deref();
    let mut out = Vec::new();
    for rule in crate::kyverno::autogen::cluster_policy_rules(p) {
        if rule.left_out().is_some() {
            continue;
        }
        let Some(validate) = rule.validate.as_ref() else {
            continue;
        };
        let mut problems = Vec::new();
        let matches = compile_match(&rule.match_resources, &mut problems, "match");
        let excludes = rule
            .exclude_resources
            .as_ref()
            .map(|e| compile_match(e, &mut problems, "exclude"))
            .filter(|e| !e.is_empty());
        if matches.is_empty() {
            problems.push(
                "match: Required value: a match block with resources is required".to_string(),
            );
        }
        let body = if let Some(cel) = &validate.cel {
            RuleBody::Cel(Box::new(CelRule {
                validate: compile_cel(p, &rule, cel, &mut problems),
                param_ref: cel.param_ref.clone(),
                param_selector: crate::compiled::Binding::param_selector_of(cel.param_ref.as_ref()),
            }))
        } else if rule.is_deny() {
            RuleBody::Deny(Box::new(DenyRule {
                deny: validate.deny_json.clone(),
                message: validate.message.clone(),
            }))
        } else if rule.is_pattern() && rule.substitutes() {
            if validate.pattern.is_some() && validate.any_pattern.is_some() {
                if !rule.name.starts_with("autogen-") {
                    push(format!(
                        "rule {}: only one of pattern, anyPattern, deny, foreach, cel can be specified; the rule is left out",
                        rule.name
                    ));
                }
                continue;
            }
            RuleBody::PatternTemplate(Box::new(PatternTemplate {
                pattern: validate.pattern.clone(),
                any_pattern: validate.any_pattern.clone(),
                message: validate.message.clone(),
            }))
        } else if rule.is_pattern() {
            let compiled = if validate.pattern.is_some() && validate.any_pattern.is_some() {
                Err(
                    "only one of pattern, anyPattern, deny, foreach, cel can be specified"
                        .to_string(),
                )
            } else {
                PatternRule::compile(
                    validate.pattern.as_ref(),
                    validate.any_pattern.as_ref(),
                    validate.message.as_deref(),
                )
                .map_err(|e| e.to_string())
            };
            match compiled {
                Ok(Some(r)) => RuleBody::Pattern(Box::new(r)),
                Ok(None) => continue,
                Err(e) => {
                    if !rule.name.starts_with("autogen-") {
                        push(format!("rule {}: {e}; the rule is left out", rule.name));
                    }
                    continue;
                }
            }
        } else if let Some(pss) = &validate.pod_security {
            match PodSecurityRule::compile(pss) {
                Ok(r) => RuleBody::PodSecurity(Box::new(r)),
                Err(e) => {
                    if !rule.name.starts_with("autogen-") {
                        for e in e {
                            push(format!("rule {}: {e}; the rule is left out", rule.name));
                        }
                    }
                    continue;
                }
            }
        } else {
            continue;
        };
        if !problems.is_empty() && !rule.name.starts_with("autogen-") {
            for e in problems {
                push(format!("rule {}: {e}", rule.name));
            }
        }
        let action = validate.failure_action.as_deref().or(policy_action);
        out.push(ClassicRule {
            policy: Name::from(p.metadata.name.as_str()),
            kind,
            namespace: policy_namespace.clone(),
            rule: Name::from(rule.name.as_str()),
            body,
            matches,
            excludes,
            enforce: enforce(action),
            admission: p.spec.admission.unwrap_or(true),
            background: p.spec.background.unwrap_or(true),
            allow_existing_violations: validate.allow_existing_violations.unwrap_or(true),
            jmes: rule.reads_json_context().then(|| {
                let body = [
                    validate.message.as_deref().unwrap_or_default().to_string(),
                    validate
                        .pattern
                        .as_ref()
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    (validate.any_pattern.as_ref())
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    (validate.deny_json.as_ref())
                        .map(|d| d.to_string())
                        .unwrap_or_default(),
                    (rule.report_properties.values())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n"),
                ]
                .join("\n");
                Box::new(RuleJmes::new(
                    rule.preconditions_json.as_ref(),
                    rule.context_json.as_ref(),
                    body,
                ))
            }),
            report_properties: (rule.report_properties.iter())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        });
    }
    out
}

/// A `validate.cel` rule as a ValidatingPolicy; expressions that do not compile are problems.
fn compile_cel(
    p: &ClusterPolicy,
    rule: &crate::kyverno::classic_model::Rule,
    cel: &crate::kyverno::classic_model::CelValidation,
    problems: &mut Vec<String>,
) -> ValidatingPolicy {
    let rule_message = rule.validate.as_ref().and_then(|v| v.message.clone());
    let spec = model::ValidatingAdmissionPolicySpec {
        param_kind: cel.param_kind.clone(),
        match_constraints: None,
        validations: cel
            .expressions
            .iter()
            .map(|e| model::Validation {
                message: e
                    .message
                    .clone()
                    .filter(|m| !m.is_empty())
                    .or_else(|| rule_message.clone()),
                ..e.clone()
            })
            .collect(),
        failure_policy: Some(FailurePolicy::Fail),
        audit_annotations: cel.audit_annotations.clone(),
        match_conditions: rule.cel_preconditions.clone(),
        variables: cel.variables.clone(),
    };
    let common = PolicyCommon::with_env(
        crate::kyverno::classic_env(spec.param_kind.is_some()),
        &p.metadata.name,
        spec.failure_policy,
        spec.param_kind.as_ref(),
        MatchConstraints::everything(),
        &spec.match_conditions,
        &spec.variables,
    );
    let validate = ValidatingPolicy::compile_validations(common, &spec);
    for v in &validate.validations {
        if let Err(e) = &v.expression.program {
            problems.push(format!(
                "rule {}: validate.cel.expressions: Invalid value: {:?}: {e}",
                rule.name, v.expression.source
            ));
        }
    }
    validate
}
