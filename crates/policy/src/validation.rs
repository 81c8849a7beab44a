//! The API server's validation of policies and bindings
//! (`pkg/apis/admissionregistration/validation/validation.go`), for what a policy file can get
//! wrong: required fields, forbidden combinations, duplicate names. Texts follow
//! `field.ErrorList` (`spec.validationActions: Forbidden: ...`). Expressions are checked when
//! they compile, in [`crate::compiled`].

use std::collections::HashSet;

use crate::model::{
    MatchResources, MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ParamRef,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidationAction, Variable,
};

/// At most this many matchConditions (`validation.go`).
const MAX_MATCH_CONDITIONS: usize = 64;

fn required(errors: &mut Vec<String>, field: &str, detail: &str) {
    if detail.is_empty() {
        errors.push(format!("{field}: Required value"));
    } else {
        errors.push(format!("{field}: Required value: {detail}"));
    }
}

fn name(errors: &mut Vec<String>, name: &str) {
    if name.is_empty() {
        required(errors, "metadata.name", "name or generateName is required");
    }
}

fn match_resources(
    errors: &mut Vec<String>,
    field: &str,
    m: Option<&MatchResources>,
    policy: bool,
) {
    let Some(m) = m else {
        if policy {
            required(errors, field, "");
        }
        return;
    };
    if policy && m.resource_rules.is_empty() {
        required(errors, &format!("{field}.resourceRules"), "");
    }
    for (list, rules) in [
        ("resourceRules", &m.resource_rules),
        ("excludeResourceRules", &m.exclude_resource_rules),
    ] {
        for (i, r) in rules.iter().enumerate() {
            let at = format!("{field}.{list}[{i}]");
            for (part, values) in [
                ("operations", &r.operations),
                ("apiGroups", &r.api_groups),
                ("apiVersions", &r.api_versions),
                ("resources", &r.resources),
            ] {
                if values.is_empty() {
                    required(errors, &format!("{at}.{part}"), "");
                }
            }
            for (j, op) in r.operations.iter().enumerate() {
                if !matches!(
                    op.as_str(),
                    "*" | "CREATE" | "UPDATE" | "DELETE" | "CONNECT"
                ) {
                    errors.push(format!(
                        "{at}.operations[{j}]: Unsupported value: {op:?}: supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\""
                    ));
                }
            }
            if let Some(scope) = &r.scope
                && !matches!(scope.as_str(), "*" | "Cluster" | "Namespaced")
            {
                errors.push(format!(
                    "{at}.scope: Unsupported value: {scope:?}: supported values: \"*\", \"Cluster\", \"Namespaced\""
                ));
            }
        }
    }
}

fn variables(errors: &mut Vec<String>, vars: &[Variable]) {
    let mut seen = HashSet::new();
    for (i, v) in vars.iter().enumerate() {
        let at = format!("spec.variables[{i}]");
        if v.name.trim().is_empty() {
            required(errors, &format!("{at}.name"), "name is not specified");
        } else if !is_cel_identifier(&v.name) {
            errors.push(format!(
                "{at}.name: Invalid value: {:?}: name is not a valid CEL identifier",
                v.name
            ));
        } else if !seen.insert(v.name.as_str()) {
            errors.push(format!("{at}.name: Duplicate value: {:?}", v.name));
        }
        if v.expression.trim().is_empty() {
            required(
                errors,
                &format!("{at}.expression"),
                "expression is not specified",
            );
        }
    }
}

fn is_cel_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !celer_cel::syntax::is_reserved_word(s)
}

fn match_conditions(errors: &mut Vec<String>, conditions: &[crate::model::MatchCondition]) {
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errors.push(format!(
            "spec.matchConditions: Too many: {}: must have at most {MAX_MATCH_CONDITIONS} items",
            conditions.len()
        ));
    }
    let mut seen = HashSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("spec.matchConditions[{i}]");
        if c.name.is_empty() {
            required(errors, &format!("{at}.name"), "");
        } else if !seen.insert(c.name.as_str()) {
            errors.push(format!("{at}.name: Duplicate value: {:?}", c.name));
        }
        if c.expression.is_empty() {
            required(errors, &format!("{at}.expression"), "");
        }
    }
}

fn param_ref(errors: &mut Vec<String>, p: Option<&ParamRef>) {
    let Some(p) = p else { return };
    let name = p.name.as_deref().filter(|n| !n.is_empty());
    if name.is_some() && p.selector.is_some() {
        errors.push(
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive".to_string(),
        );
    }
    if let Some(selector) = &p.selector {
        errors.extend(
            crate::matching::validate_selector(selector, "spec.paramRef.selector")
                .iter()
                .map(ToString::to_string),
        );
        if name.is_some() {
            errors.push(
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive"
                    .to_string(),
            );
        }
    }
    if name.is_none() && p.selector.is_none() {
        required(
            errors,
            "spec.paramRef",
            "one of name or selector must be specified",
        );
    }
    if p.parameter_not_found_action.is_none() {
        required(errors, "spec.paramRef.parameterNotFoundAction", "");
    }
}

pub fn validating_policy(p: &ValidatingAdmissionPolicy) -> Vec<String> {
    let mut errors = Vec::new();
    name(&mut errors, &p.metadata.name);
    let spec = &p.spec;
    match_resources(
        &mut errors,
        "spec.matchConstraints",
        spec.match_constraints.as_ref(),
        true,
    );
    if spec.validations.is_empty() && spec.audit_annotations.is_empty() {
        for field in ["spec.validations", "spec.auditAnnotations"] {
            required(
                &mut errors,
                field,
                "validations or auditAnnotations must contain at least one item",
            );
        }
    }
    for (i, v) in spec.validations.iter().enumerate() {
        if v.expression.trim().is_empty() {
            required(
                &mut errors,
                &format!("spec.validations[{i}].expression"),
                "expression is not specified",
            );
        }
        if let Some(m) = v.message_expression.as_deref()
            && !m.is_empty()
            && m.trim().is_empty()
        {
            errors.push(format!(
                "spec.validations[{i}].messageExpression: Invalid value: {m:?}: must be non-empty if specified"
            ));
        }
        if let Some(m) = &v.message {
            if m.trim().contains(['\n', '\r']) {
                errors.push(format!(
                    "spec.validations[{i}].message: Invalid value: {m:?}: message must not contain line breaks"
                ));
            } else if !m.is_empty() && m.trim().is_empty() {
                errors.push(format!(
                    "spec.validations[{i}].message: Invalid value: {m:?}: message must be non-empty if specified"
                ));
            }
        }
        if let Some(r) = &v.reason
            && !matches!(
                r.as_str(),
                "Unauthorized" | "Forbidden" | "Invalid" | "RequestEntityTooLarge"
            )
        {
            errors.push(format!(
                "spec.validations[{i}].reason: Unsupported value: {r:?}: supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\", \"Unauthorized\""
            ));
        }
    }
    let mut keys = HashSet::new();
    for (i, a) in spec.audit_annotations.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        if a.key.is_empty() {
            required(&mut errors, &format!("{at}.key"), "");
        } else if !keys.insert(a.key.as_str()) {
            errors.push(format!("{at}.key: Duplicate value: {:?}", a.key));
        }
        if a.value_expression.trim().is_empty() {
            required(
                &mut errors,
                &format!("{at}.valueExpression"),
                "valueExpression is not specified",
            );
        }
    }
    match_conditions(&mut errors, &spec.match_conditions);
    variables(&mut errors, &spec.variables);
    errors
}

pub fn validating_binding(b: &ValidatingAdmissionPolicyBinding) -> Vec<String> {
    let mut errors = Vec::new();
    name(&mut errors, &b.metadata.name);
    let spec = &b.spec;
    if spec.policy_name.is_empty() {
        required(&mut errors, "spec.policyName", "");
    }
    let actions = &spec.validation_actions;
    if actions.is_empty() {
        required(
            &mut errors,
            "spec.validationActions",
            "at least one validation action is required",
        );
    }
    let mut seen = HashSet::new();
    for (i, a) in actions.iter().enumerate() {
        if !seen.insert(*a) {
            errors.push(format!(
                "spec.validationActions[{i}]: Duplicate value: \"{a:?}\""
            ));
        }
    }
    if actions.contains(&ValidationAction::Deny) && actions.contains(&ValidationAction::Warn) {
        // The whole list, as JSON.
        let list: Vec<String> = actions.iter().map(|a| format!("\"{a:?}\"")).collect();
        errors.push(format!("spec.validationActions: Invalid value: [{}]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)", list.join(",")));
    }
    match_resources(
        &mut errors,
        "spec.matchResources",
        spec.match_resources.as_ref(),
        false,
    );
    param_ref(&mut errors, spec.param_ref.as_ref());
    errors
}

pub fn mutating_policy(p: &MutatingAdmissionPolicy) -> Vec<String> {
    let mut errors = Vec::new();
    name(&mut errors, &p.metadata.name);
    let spec = &p.spec;
    match_resources(
        &mut errors,
        "spec.matchConstraints",
        spec.match_constraints.as_ref(),
        true,
    );
    if let Some(m) = &spec.match_constraints {
        for (i, r) in m.resource_rules.iter().enumerate() {
            for (j, op) in r.operations.iter().enumerate() {
                if op == "DELETE" || op == "*" {
                    errors.push(format!("spec.matchConstraints.resourceRules[{i}].operations[{j}]: Unsupported value: {op:?}: supported values: \"CONNECT\", \"CREATE\", \"UPDATE\""));
                }
            }
        }
    }
    if spec.mutations.is_empty() {
        required(
            &mut errors,
            "spec.mutations",
            "mutations must contain at least one item",
        );
    }
    for (i, m) in spec.mutations.iter().enumerate() {
        let at = format!("spec.mutations[{i}]");
        match m.patch_type.as_str() {
            "ApplyConfiguration" => {
                if m.apply_configuration.is_none() {
                    required(
                        &mut errors,
                        &format!("{at}.applyConfiguration"),
                        "must be specified when patchType is ApplyConfiguration",
                    );
                }
                if m.json_patch.is_some() {
                    errors.push(format!("{at}.jsonPatch: Forbidden: must not be specified when patchType is ApplyConfiguration"));
                }
            }
            "JSONPatch" => {
                if m.json_patch.is_none() {
                    required(
                        &mut errors,
                        &format!("{at}.jsonPatch"),
                        "must be specified when patchType is JSONPatch",
                    );
                }
                if m.apply_configuration.is_some() {
                    errors.push(format!("{at}.applyConfiguration: Forbidden: must not be specified when patchType is JSONPatch"));
                }
            }
            "" => required(&mut errors, &format!("{at}.patchType"), ""),
            other => errors.push(format!("{at}.patchType: Unsupported value: {other:?}: supported values: \"ApplyConfiguration\", \"JSONPatch\"")),
        }
    }
    if spec.reinvocation_policy.is_none() {
        required(&mut errors, "spec.reinvocationPolicy", "");
    }
    match_conditions(&mut errors, &spec.match_conditions);
    variables(&mut errors, &spec.variables);
    errors
}

pub fn mutating_binding(b: &MutatingAdmissionPolicyBinding) -> Vec<String> {
    let mut errors = Vec::new();
    name(&mut errors, &b.metadata.name);
    if b.spec.policy_name.is_empty() {
        required(&mut errors, "spec.policyName", "");
    }
    match_resources(
        &mut errors,
        "spec.matchResources",
        b.spec.match_resources.as_ref(),
        false,
    );
    param_ref(&mut errors, b.spec.param_ref.as_ref());
    errors
}
