//! Kyverno test rows on ClusterPolicies and Policies: a rule's result (or autogen's), and the
//! rows that cannot be checked because celer leaves their rule out (mutate, generate,
//! verifyImages, foreach, manifests), skipped with the reason.

use celer_cel::Json;
use celer_policy::policy_set::PolicySet;
use celer_policy::response::{Outcome, PolicyKind};
use sonic_rs::JsonValueTrait;

/// Whether a result row says which kind of policy it checks (`isValidatingPolicy`...); rows
/// for ClusterPolicies and Policies do not.
pub(crate) fn has_type_flag(row: &Json) -> bool {
    [
        "isValidatingAdmissionPolicy",
        "isMutatingAdmissionPolicy",
        "isValidatingPolicy",
        "isMutatingPolicy",
        "isGeneratingPolicy",
        "isDeletingPolicy",
        "isImageValidatingPolicy",
    ]
    .iter()
    .any(|flag| row.get(flag).and_then(|b| b.as_bool()) == Some(true))
}

/// The load errors that report ClusterPolicy and Policy rules left out, as text.
pub fn left_out_errors(set: &PolicySet) -> Vec<String> {
    set.kyverno()
        .classic_left_out
        .iter()
        .map(|l| l.error.to_string())
        .collect()
}

/// Why a row on a ClusterPolicy or Policy cannot be checked: the rule it names (or, when it
/// names none, some rule of the policy) is left out. Rows may name the rule as autogen does.
pub(crate) fn left_out_reason(
    classic: &[celer_policy::kyverno::load::ClassicRules],
    policy: &str,
    rule: &str,
) -> Option<String> {
    let p = classic.iter().find(|p| p.policy == policy)?;
    let named = |name: &str| {
        rule.is_empty()
            || rule == name
            || rule.strip_prefix("autogen-") == Some(name)
            || rule.strip_prefix("autogen-cronjob-") == Some(name)
    };
    p.rules.iter().find_map(|(name, why)| match why {
        Some(why) if named(name) => Some(format!("rule {name} is left out: {}", why.reason())),
        _ => None,
    })
}

/// A ClusterPolicy rule's result (every rule's, the worst, when the row names none); a rule
/// that did not match the resource gives none: `excluded`.
pub(crate) fn classic_result(
    policy: &str,
    rule: &str,
    outcome: &Outcome,
) -> (String, Option<String>) {
    let worst = super::kyverno::results_of(policy, PolicyKind::KyvernoClusterPolicy, outcome)
        // `lookupRuleResponses`: the rule or what autogen made of it.
        .filter(|r| {
            let name = r.binding.as_deref().unwrap_or_default();
            rule.is_empty()
                || name == rule
                || name.strip_prefix("autogen-") == Some(rule)
                || name.strip_prefix("autogen-cronjob-") == Some(rule)
        })
        .max_by_key(|r| r.result.rank());
    match worst {
        None => (super::kyverno::EXCLUDED.to_string(), None),
        Some(r) => (
            r.result.as_str().to_string(),
            r.message.as_deref().map(str::to_string),
        ),
    }
}
