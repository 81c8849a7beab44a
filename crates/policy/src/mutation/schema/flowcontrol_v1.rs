//! Types of `flowcontrol.apiserver.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static EXEMPT_PRIORITY_LEVEL_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration",
    [
        field!("lendablePercent", NUMERIC),
        field!("nominalConcurrencyShares", NUMERIC),
    ]
);

pub static FLOW_DISTINGUISHER_METHOD: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.FlowDistinguisherMethod",
    [field!("type", STRING),]
);

pub static FLOW_SCHEMA: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.FlowSchema",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(FLOW_SCHEMA_SPEC)),
        field!("status", named!(FLOW_SCHEMA_STATUS)),
    ]
);

pub static FLOW_SCHEMA_CONDITION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.FlowSchemaCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        field!("type", STRING),
    ]
);

pub static FLOW_SCHEMA_SPEC: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.FlowSchemaSpec",
    [
        field!("distinguisherMethod", named!(FLOW_DISTINGUISHER_METHOD)),
        field!("matchingPrecedence", NUMERIC),
        field!(
            "priorityLevelConfiguration",
            named!(PRIORITY_LEVEL_CONFIGURATION_REFERENCE)
        ),
        field!("rules", list_atomic!(named!(POLICY_RULES_WITH_SUBJECTS))),
    ]
);

pub static FLOW_SCHEMA_STATUS: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.FlowSchemaStatus",
    [field!(
        "conditions",
        list_map!(named!(FLOW_SCHEMA_CONDITION), ["type"])
    ),]
);

pub static GROUP_SUBJECT: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.GroupSubject",
    [field!("name", STRING),]
);

pub static LIMIT_RESPONSE: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.LimitResponse",
    [
        field!("queuing", named!(QUEUING_CONFIGURATION)),
        field!("type", STRING),
    ]
);

pub static LIMITED_PRIORITY_LEVEL_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration",
    [
        field!("borrowingLimitPercent", NUMERIC),
        field!("lendablePercent", NUMERIC),
        field!("limitResponse", named!(LIMIT_RESPONSE)),
        field!("nominalConcurrencyShares", NUMERIC),
    ]
);

pub static NON_RESOURCE_POLICY_RULE: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.NonResourcePolicyRule",
    [
        field!("nonResourceURLs", list_set!(STRING)),
        field!("verbs", list_set!(STRING)),
    ]
);

pub static POLICY_RULES_WITH_SUBJECTS: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects",
    [
        field!(
            "nonResourceRules",
            list_atomic!(named!(NON_RESOURCE_POLICY_RULE))
        ),
        field!("resourceRules", list_atomic!(named!(RESOURCE_POLICY_RULE))),
        field!("subjects", list_atomic!(named!(SUBJECT))),
    ]
);

pub static PRIORITY_LEVEL_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(PRIORITY_LEVEL_CONFIGURATION_SPEC)),
        field!("status", named!(PRIORITY_LEVEL_CONFIGURATION_STATUS)),
    ]
);

pub static PRIORITY_LEVEL_CONFIGURATION_CONDITION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        field!("type", STRING),
    ]
);

pub static PRIORITY_LEVEL_CONFIGURATION_REFERENCE: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationReference",
    [field!("name", STRING),]
);

pub static PRIORITY_LEVEL_CONFIGURATION_SPEC: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec",
    [
        field!("exempt", named!(EXEMPT_PRIORITY_LEVEL_CONFIGURATION)),
        field!("limited", named!(LIMITED_PRIORITY_LEVEL_CONFIGURATION)),
        field!("type", STRING),
    ]
);

pub static PRIORITY_LEVEL_CONFIGURATION_STATUS: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus",
    [field!(
        "conditions",
        list_map!(named!(PRIORITY_LEVEL_CONFIGURATION_CONDITION), ["type"])
    ),]
);

pub static QUEUING_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.QueuingConfiguration",
    [
        field!("handSize", NUMERIC),
        field!("queueLengthLimit", NUMERIC),
        field!("queues", NUMERIC),
    ]
);

pub static RESOURCE_POLICY_RULE: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.ResourcePolicyRule",
    [
        field!("apiGroups", list_set!(STRING)),
        field!("clusterScope", BOOLEAN),
        field!("namespaces", list_set!(STRING)),
        field!("resources", list_set!(STRING)),
        field!("verbs", list_set!(STRING)),
    ]
);

pub static SERVICE_ACCOUNT_SUBJECT: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.ServiceAccountSubject",
    [field!("name", STRING), field!("namespace", STRING),]
);

pub static SUBJECT: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.Subject",
    [
        field!("group", named!(GROUP_SUBJECT)),
        field!("kind", STRING),
        field!("serviceAccount", named!(SERVICE_ACCOUNT_SUBJECT)),
        field!("user", named!(USER_SUBJECT)),
    ]
);

pub static USER_SUBJECT: NamedType = structure!(
    "io.k8s.api.flowcontrol.v1.UserSubject",
    [field!("name", STRING),]
);
