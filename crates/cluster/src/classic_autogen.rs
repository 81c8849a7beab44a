//! A ClusterPolicy's (or Policy's) `status.autogen.rules` and `status.rulecount`, as Kyverno's
//! webhook controller writes them (`autogen.Default.ComputeRules`, `pkg/autogen/v1`): for each
//! rule matching Pods, `autogen-<rule>` on the pod controllers and `autogen-cronjob-<rule>` on
//! CronJobs, built from the rule as stored, kinds as full `group/version/Kind`, patterns and
//! strategic-merge patches nested under the pod template, and `object.spec`/`object.metadata`
//! (`request.object...` outside CEL) moved to the template by text replacement over the whole
//! rule, as Kyverno does. Which controllers, and whether autogen applies at all, is celer's
//! engine's own decision ([`celer_policy::kyverno::autogen::controllers_of`]).

use celer_cel::Json;
use serde_json::{Map, Value, json};

/// `PodControllerGVKMap`.
fn gvk(kind: &str) -> String {
    match kind {
        "DaemonSet" | "Deployment" | "StatefulSet" | "ReplicaSet" => format!("apps/v1/{kind}"),
        "Job" | "CronJob" => format!("batch/v1/{kind}"),
        "ReplicationController" | "Pod" => format!("v1/{kind}"),
        other => other.to_string(),
    }
}

/// The rules autogen adds to a ClusterPolicy or Policy (`doc` as stored), in Kyverno's order.
pub fn autogen_rules(doc: &Json) -> Vec<Value> {
    let (controllers, cronjob) = celer_policy::kyverno::autogen::controllers_of(doc);
    if controllers.is_empty() && !cronjob {
        return Vec::new();
    }
    let Ok(policy) = serde_json::from_str::<Value>(&doc.to_string()) else {
        return Vec::new();
    };
    let rules = policy
        .pointer("/spec/rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for rule in &rules {
        let name = rule.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.starts_with("autogen-") || !applies_to_pods(rule) {
            continue;
        }
        let rule = with_defaults(rule);
        if !controllers.is_empty()
            && let Some(generated) = generate(
                &rule,
                &rule_name("autogen", name),
                "template",
                &controllers,
                false,
            )
        {
            out.push(convert(&generated, false));
        }
        if cronjob {
            // Kyverno derives it from the controllers' rule (or, for CronJob alone, the same
            // rule with CronJob kinds).
            let first: Vec<&str> = if controllers.is_empty() {
                vec!["CronJob"]
            } else {
                controllers.clone()
            };
            let cron = generate(
                &rule,
                &rule_name("autogen", name),
                "template",
                &first,
                false,
            )
            .and_then(|r| {
                generate(
                    &r,
                    &rule_name("autogen-cronjob", name),
                    "jobTemplate",
                    &["CronJob"],
                    true,
                )
            });
            if let Some(cron) = cron {
                out.push(convert(&cron, true));
            }
        }
    }
    out
}

/// `status.rulecount` over the rules Kyverno computes (the policy's and autogen's).
pub fn rule_count(doc: &Json, autogen: &[Value]) -> Value {
    let rules: Vec<Value> = serde_json::from_str::<Value>(&doc.to_string())
        .ok()
        .and_then(|p| p.pointer("/spec/rules").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    // With autogen rules, the policy's own rules named `autogen-` give way to them.
    let own = rules.iter().filter(|r| {
        autogen.is_empty()
            || !(r.get("name").and_then(Value::as_str)).is_some_and(|n| n.starts_with("autogen-"))
    });
    let all = own.chain(autogen);
    let (mut validate, mut mutate, mut generate, mut verify) = (0, 0, 0, 0);
    for r in all {
        let has = |k: &str| r.get(k).is_some_and(|v| !v.is_null());
        validate += i64::from(has("validate"));
        mutate += i64::from(has("mutate"));
        generate += i64::from(has("generate"));
        verify += i64::from(
            r.get("verifyImages")
                .and_then(Value::as_array)
                .is_some_and(|v| !v.is_empty()),
        );
    }
    json!({"validate": validate, "mutate": mutate, "generate": generate, "verifyimages": verify})
}

/// `getAutogenRuleName`: at most 63 bytes.
fn rule_name(prefix: &str, name: &str) -> String {
    let mut full = format!("{prefix}-{name}");
    if full.len() > 63 {
        let mut end = 63;
        while !full.is_char_boundary(end) {
            end -= 1;
        }
        full.truncate(end);
    }
    full
}

/// The CRD's defaults, which the stored rule Kyverno reads has.
fn with_defaults(rule: &Value) -> Value {
    let mut rule = rule.clone();
    if let Some(r) = rule.as_object_mut() {
        r.entry("skipBackgroundRequests")
            .or_insert(Value::Bool(true));
        if let Some(v) = r.get_mut("validate").and_then(Value::as_object_mut) {
            v.entry("allowExistingViolations")
                .or_insert(Value::Bool(true));
        }
    }
    rule
}

/// The kinds a match or exclude block names (`GetKinds`: any, all and inline).
fn kinds(block: Option<&Value>) -> Vec<String> {
    let Some(block) = block else {
        return Vec::new();
    };
    let of = |f: &Value| -> Vec<String> {
        (f.pointer("/resources/kinds").and_then(Value::as_array))
            .map(|k| {
                k.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = of(block);
    for list in ["any", "all"] {
        for f in block
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(of(f));
        }
    }
    out
}

/// `generateRuleForControllers`' test: the rule matches Pods, and excludes Pods if it
/// excludes kinds at all.
fn applies_to_pods(rule: &Value) -> bool {
    let is_pod = |k: &String| k == "Pod" || k.ends_with("/Pod");
    let matched = kinds(rule.get("match"));
    let excluded = kinds(rule.get("exclude"));
    matched.iter().any(is_pod) && (excluded.is_empty() || excluded.iter().any(is_pod))
}

/// Replaces the kinds of a block's filters (those naming Pods, or all of them), or of its
/// inline `resources` when it has no filters (`only_if_kinds`: when it names kinds).
fn replace_kinds(block: &mut Value, kinds: &[String], every: bool, only_if_kinds: bool) {
    let list = ["any", "all"].into_iter().find(|l| {
        block
            .get(*l)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    });
    let new = Value::Array(kinds.iter().cloned().map(Value::String).collect());
    match list {
        Some(l) => {
            for f in block
                .get_mut(l)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                let names_pod = (f.pointer("/resources/kinds").and_then(Value::as_array))
                    .is_some_and(|k| {
                        k.iter().any(|k| {
                            k.as_str()
                                .is_some_and(|k| k == "Pod" || k.ends_with("/Pod"))
                        })
                    });
                if (every || names_pod)
                    && let Some(r) = f.get_mut("resources").and_then(Value::as_object_mut)
                {
                    r.insert("kinds".to_string(), new.clone());
                }
            }
        }
        None => {
            let has_kinds = (block.pointer("/resources/kinds").and_then(Value::as_array))
                .is_some_and(|k| !k.is_empty());
            if (!only_if_kinds || has_kinds)
                && let Some(b) = block.as_object_mut()
            {
                let resources = b
                    .entry("resources")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(r) = resources.as_object_mut() {
                    r.insert("kinds".to_string(), new);
                }
            }
        }
    }
}

/// `{spec: {<key>: value}}`.
fn under(key: &str, value: Value) -> Value {
    json!({"spec": {key: value}})
}

/// `generateRule`: the rule for `kinds`, its actions nested under `tpl` (`template` or
/// `jobTemplate`); `None` when it has nothing autogen carries over.
fn generate(rule: &Value, name: &str, tpl: &str, kinds: &[&str], every: bool) -> Option<Value> {
    let mut r = rule.clone();
    let gvks: Vec<String> = kinds.iter().map(|k| gvk(k)).collect();
    let o = r.as_object_mut()?;
    o.insert("name".to_string(), Value::String(name.to_string()));
    if let Some(m) = o.get_mut("match") {
        replace_kinds(m, &gvks, every, false);
    }
    if let Some(e) = o.get_mut("exclude").filter(|e| !e.is_null()) {
        replace_kinds(e, &gvks, every, true);
    }
    if let Some(mutate) = o.get("mutate").filter(|m| !m.is_null()).cloned() {
        if let Some(patch) = mutate.get("patchStrategicMerge").filter(|p| !p.is_null()) {
            o.insert(
                "mutate".to_string(),
                json!({"patchStrategicMerge": under(tpl, patch.clone())}),
            );
            return Some(r);
        }
        if let Some(each) = mutate
            .get("foreach")
            .and_then(Value::as_array)
            .filter(|f| !f.is_empty())
        {
            let each: Vec<Value> = each
                .iter()
                .map(|f| {
                    let mut out = Map::new();
                    for key in ["list", "context", "preconditions"] {
                        if let Some(v) = f.get(key).filter(|v| !v.is_null()) {
                            out.insert(key.to_string(), v.clone());
                        }
                    }
                    if let Some(p) = f.get("patchStrategicMerge").filter(|p| !p.is_null()) {
                        out.insert("patchStrategicMerge".to_string(), under(tpl, p.clone()));
                    }
                    Value::Object(out)
                })
                .collect();
            o.insert("mutate".to_string(), json!({"foreach": each}));
            return Some(r);
        }
    }
    if let Some(validate) = o.get("validate").filter(|v| !v.is_null()).cloned() {
        // What every rewritten validate keeps.
        let mut base = Map::new();
        for key in [
            "message",
            "failureAction",
            "failureActionOverrides",
            "allowExistingViolations",
        ] {
            if let Some(v) = validate.get(key).filter(|v| !v.is_null()) {
                base.insert(key.to_string(), v.clone());
            }
        }
        let present = |k: &str| validate.get(k).filter(|v| !v.is_null());
        let rewritten = if let Some(pattern) = present("pattern") {
            base.insert("pattern".to_string(), under(tpl, pattern.clone()));
            Some(base)
        } else if let Some(deny) = present("deny") {
            base.insert("deny".to_string(), deny.clone());
            Some(base)
        } else if let Some(pss) = present("podSecurity") {
            let mut p = Map::new();
            for key in ["level", "version"] {
                if let Some(v) = pss.get(key).filter(|v| !v.is_null()) {
                    p.insert(key.to_string(), v.clone());
                }
            }
            p.insert(
                "exclude".to_string(),
                pss.get("exclude")
                    .cloned()
                    .unwrap_or(Value::Array(Vec::new())),
            );
            base.insert("podSecurity".to_string(), Value::Object(p));
            Some(base)
        } else if let Some(any) = present("anyPattern").and_then(Value::as_array) {
            let nested: Vec<Value> = any.iter().map(|p| under(tpl, p.clone())).collect();
            base.insert("anyPattern".to_string(), Value::Array(nested));
            Some(base)
        } else if let Some(each) = present("foreach")
            .and_then(Value::as_array)
            .filter(|f| !f.is_empty())
        {
            base.insert("foreach".to_string(), Value::Array(each.clone()));
            Some(base)
        } else if present("cel").is_some() {
            return Some(r);
        } else {
            None
        };
        if let Some(v) = rewritten {
            o.insert("validate".to_string(), Value::Object(v));
            return Some(r);
        }
    }
    if o.get("verifyImages").is_some_and(|v| !v.is_null()) {
        return Some(r);
    }
    None
}

/// `createRule` then `convertRule`: the fields Kyverno's rule keeps, `match` with its inline
/// `resources` (a Go struct, never omitted), and the text replacements over the whole rule.
fn convert(rule: &Value, cronjob: bool) -> Value {
    let mut out = Map::new();
    for key in [
        "name",
        "match",
        "exclude",
        "context",
        "preconditions",
        "celPreconditions",
        "mutate",
        "validate",
        "verifyImages",
        "skipBackgroundRequests",
        "reportProperties",
    ] {
        if let Some(v) = rule.get(key).filter(|v| !v.is_null()) {
            out.insert(key.to_string(), v.clone());
        }
    }
    for key in ["match", "exclude"] {
        if let Some(b) = out.get_mut(key).and_then(Value::as_object_mut) {
            b.entry("resources")
                .or_insert_with(|| Value::Object(Map::new()));
        }
    }
    let cel = rule.pointer("/validate/cel").is_some_and(|c| !c.is_null());
    let text = celer_policy::kyverno::autogen::move_to_template(
        &Value::Object(out).to_string(),
        cronjob,
        cel,
    );
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn doc(yaml: &str) -> Json {
        celer_policy::document::parse_document(yaml, celer_policy::document::Syntax::Yaml).unwrap()
    }

    const CEL: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  rules:
  - name: privilege-escalation
    match:
      any:
      - resources: {kinds: [Pod], operations: [CREATE, UPDATE]}
    celPreconditions:
    - {name: prod, expression: \"has(object.metadata.labels) && object.metadata.labels.prod == 'true'\"}
    validate:
      failureAction: Enforce
      cel:
        expressions:
        - {expression: 'object.spec.containers.all(c, has(c.securityContext))', message: 'spec.containers[*] must say'}
";

    #[test]
    fn cel_rules_move_to_the_template_with_kyvernos_kinds_and_defaults() {
        let rules = autogen_rules(&doc(CEL));
        assert_eq!(rules.len(), 2);
        let first = &rules[0];
        assert_eq!(first["name"], "autogen-privilege-escalation");
        assert_eq!(
            first["match"]["any"][0]["resources"]["kinds"],
            json!([
                "apps/v1/DaemonSet",
                "apps/v1/Deployment",
                "batch/v1/Job",
                "apps/v1/ReplicaSet",
                "v1/ReplicationController",
                "apps/v1/StatefulSet"
            ])
        );
        assert_eq!(
            first["match"]["any"][0]["resources"]["operations"],
            json!(["CREATE", "UPDATE"])
        );
        assert_eq!(first["match"]["resources"], json!({}));
        assert_eq!(first["skipBackgroundRequests"], true);
        assert_eq!(first["validate"]["allowExistingViolations"], true);
        assert_eq!(
            first["celPreconditions"][0]["expression"],
            "has(object.spec.template.metadata.labels) && object.spec.template.metadata.labels.prod == 'true'"
        );
        assert_eq!(
            first["validate"]["cel"]["expressions"][0]["expression"],
            "object.spec.template.spec.containers.all(c, has(c.securityContext))"
        );
        // A message without `object.` stays as written.
        assert_eq!(
            first["validate"]["cel"]["expressions"][0]["message"],
            "spec.containers[*] must say"
        );
        let cron = &rules[1];
        assert_eq!(cron["name"], "autogen-cronjob-privilege-escalation");
        assert_eq!(
            cron["match"]["any"][0]["resources"]["kinds"],
            json!(["batch/v1/CronJob"])
        );
        assert_eq!(
            cron["validate"]["cel"]["expressions"][0]["expression"],
            "object.spec.jobTemplate.spec.template.spec.containers.all(c, has(c.securityContext))"
        );
        let count = rule_count(&doc(CEL), &rules);
        assert_eq!(count["validate"], 3);
        assert_eq!(count["mutate"], 0);
    }

    #[test]
    fn patterns_nest_under_the_template_and_the_annotation_picks_controllers() {
        let policy = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p, annotations: {pod-policies.kyverno.io/autogen-controllers: 'Deployment,CronJob'}}
spec:
  rules:
  - name: r
    match: {resources: {kinds: [Pod]}}
    validate:
      message: 'bad {{request.object.metadata.name}}'
      pattern: {spec: {hostNetwork: false}}
";
        let rules = autogen_rules(&doc(policy));
        assert_eq!(rules.len(), 2);
        assert_eq!(
            rules[0]["match"]["resources"]["kinds"],
            json!(["apps/v1/Deployment"])
        );
        assert_eq!(
            rules[0]["validate"]["pattern"],
            json!({"spec": {"template": {"spec": {"hostNetwork": false}}}})
        );
        assert_eq!(
            rules[0]["validate"]["message"],
            "bad {{request.object.spec.template.metadata.name}}"
        );
        assert_eq!(
            rules[1]["validate"]["pattern"],
            json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"hostNetwork": false}}}}}})
        );
        assert_eq!(
            rules[1]["match"]["resources"]["kinds"],
            json!(["batch/v1/CronJob"])
        );
    }

    #[test]
    fn policies_autogen_leaves_alone_have_no_autogen_rules() {
        let none = CEL.replace(
            "metadata: {name: p}",
            "metadata: {name: p, annotations: {pod-policies.kyverno.io/autogen-controllers: none}}",
        );
        assert!(autogen_rules(&doc(&none)).is_empty());
        let deployments = CEL.replace("kinds: [Pod]", "kinds: [Deployment]");
        assert!(autogen_rules(&doc(&deployments)).is_empty());
        assert_eq!(rule_count(&doc(&deployments), &[])["validate"], 1);
    }
}
