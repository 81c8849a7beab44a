//! Types of `admissionregistration.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static APPLY_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ApplyConfiguration",
    [field!("expression", STRING),]
);

pub static AUDIT_ANNOTATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.AuditAnnotation",
    [field!("key", STRING), field!("valueExpression", STRING),]
);

pub static EXPRESSION_WARNING: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ExpressionWarning",
    [field!("fieldRef", STRING), field!("warning", STRING),]
);

pub static JSON_PATCH: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.JSONPatch",
    [field!("expression", STRING),]
);

pub static MATCH_CONDITION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MatchCondition",
    [field!("expression", STRING), key!("name", STRING, str ""),]
);

pub static MATCH_RESOURCES: NamedType = atomic_structure!(
    "io.k8s.api.admissionregistration.v1.MatchResources",
    [
        field!(
            "excludeResourceRules",
            list_atomic!(named!(NAMED_RULE_WITH_OPERATIONS))
        ),
        field!("matchPolicy", STRING),
        field!("namespaceSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("objectSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!(
            "resourceRules",
            list_atomic!(named!(NAMED_RULE_WITH_OPERATIONS))
        ),
    ]
);

pub static MUTATING_ADMISSION_POLICY: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicy",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(MUTATING_ADMISSION_POLICY_SPEC)),
    ]
);

pub static MUTATING_ADMISSION_POLICY_BINDING: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicyBinding",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(MUTATING_ADMISSION_POLICY_BINDING_SPEC)),
    ]
);

pub static MUTATING_ADMISSION_POLICY_BINDING_SPEC: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicyBindingSpec",
    [
        field!("matchResources", named!(MATCH_RESOURCES)),
        field!("paramRef", named!(PARAM_REF)),
        field!("policyName", STRING),
    ]
);

pub static MUTATING_ADMISSION_POLICY_SPEC: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicySpec",
    [
        field!("failurePolicy", STRING),
        field!(
            "matchConditions",
            list_map!(named!(MATCH_CONDITION), ["name"])
        ),
        field!("matchConstraints", named!(MATCH_RESOURCES)),
        field!("mutations", list_atomic!(named!(MUTATION))),
        field!("paramKind", named!(PARAM_KIND)),
        field!("reinvocationPolicy", STRING),
        field!("variables", list_atomic!(named!(VARIABLE))),
    ]
);

pub static MUTATING_WEBHOOK: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingWebhook",
    [
        field!("admissionReviewVersions", list_atomic!(STRING)),
        field!("clientConfig", named!(WEBHOOK_CLIENT_CONFIG)),
        field!("failurePolicy", STRING),
        field!(
            "matchConditions",
            list_map!(named!(MATCH_CONDITION), ["name"])
        ),
        field!("matchPolicy", STRING),
        key!("name", STRING, str ""),
        field!("namespaceSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("objectSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("reinvocationPolicy", STRING),
        field!("rules", list_atomic!(named!(RULE_WITH_OPERATIONS))),
        field!("sideEffects", STRING),
        field!("timeoutSeconds", NUMERIC),
    ]
);

pub static MUTATING_WEBHOOK_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("webhooks", list_map!(named!(MUTATING_WEBHOOK), ["name"])),
    ]
);

pub static MUTATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.Mutation",
    [
        field!("applyConfiguration", named!(APPLY_CONFIGURATION)),
        field!("jsonPatch", named!(JSON_PATCH)),
        field!("patchType", STRING),
    ]
);

pub static NAMED_RULE_WITH_OPERATIONS: NamedType = atomic_structure!(
    "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations",
    [
        field!("apiGroups", list_atomic!(STRING)),
        field!("apiVersions", list_atomic!(STRING)),
        field!("operations", list_atomic!(STRING)),
        field!("resourceNames", list_atomic!(STRING)),
        field!("resources", list_atomic!(STRING)),
        field!("scope", STRING),
    ]
);

pub static PARAM_KIND: NamedType = atomic_structure!(
    "io.k8s.api.admissionregistration.v1.ParamKind",
    [field!("apiVersion", STRING), field!("kind", STRING),]
);

pub static PARAM_REF: NamedType = atomic_structure!(
    "io.k8s.api.admissionregistration.v1.ParamRef",
    [
        field!("name", STRING),
        field!("namespace", STRING),
        field!("parameterNotFoundAction", STRING),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
    ]
);

pub static RULE_WITH_OPERATIONS: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.RuleWithOperations",
    [
        field!("apiGroups", list_atomic!(STRING)),
        field!("apiVersions", list_atomic!(STRING)),
        field!("operations", list_atomic!(STRING)),
        field!("resources", list_atomic!(STRING)),
        field!("scope", STRING),
    ]
);

pub static SERVICE_REFERENCE: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ServiceReference",
    [
        field!("name", STRING),
        field!("namespace", STRING),
        field!("path", STRING),
        field!("port", NUMERIC),
    ]
);

pub static TYPE_CHECKING: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.TypeChecking",
    [field!(
        "expressionWarnings",
        list_atomic!(named!(EXPRESSION_WARNING))
    ),]
);

pub static VALIDATING_ADMISSION_POLICY: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(VALIDATING_ADMISSION_POLICY_SPEC)),
        field!("status", named!(VALIDATING_ADMISSION_POLICY_STATUS)),
    ]
);

pub static VALIDATING_ADMISSION_POLICY_BINDING: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(VALIDATING_ADMISSION_POLICY_BINDING_SPEC)),
    ]
);

pub static VALIDATING_ADMISSION_POLICY_BINDING_SPEC: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec",
    [
        field!("matchResources", named!(MATCH_RESOURCES)),
        field!("paramRef", named!(PARAM_REF)),
        field!("policyName", STRING),
        field!("validationActions", list_set!(STRING)),
    ]
);

pub static VALIDATING_ADMISSION_POLICY_SPEC: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec",
    [
        field!("auditAnnotations", list_atomic!(named!(AUDIT_ANNOTATION))),
        field!("failurePolicy", STRING),
        field!(
            "matchConditions",
            list_map!(named!(MATCH_CONDITION), ["name"])
        ),
        field!("matchConstraints", named!(MATCH_RESOURCES)),
        field!("paramKind", named!(PARAM_KIND)),
        field!("validations", list_atomic!(named!(VALIDATION))),
        field!("variables", list_map!(named!(VARIABLE), ["name"])),
    ]
);

pub static VALIDATING_ADMISSION_POLICY_STATUS: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus",
    [
        field!(
            "conditions",
            list_map!(named!(apimachinery::CONDITION), ["type"])
        ),
        field!("observedGeneration", NUMERIC),
        field!("typeChecking", named!(TYPE_CHECKING)),
    ]
);

pub static VALIDATING_WEBHOOK: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook",
    [
        field!("admissionReviewVersions", list_atomic!(STRING)),
        field!("clientConfig", named!(WEBHOOK_CLIENT_CONFIG)),
        field!("failurePolicy", STRING),
        field!(
            "matchConditions",
            list_map!(named!(MATCH_CONDITION), ["name"])
        ),
        field!("matchPolicy", STRING),
        key!("name", STRING, str ""),
        field!("namespaceSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("objectSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("rules", list_atomic!(named!(RULE_WITH_OPERATIONS))),
        field!("sideEffects", STRING),
        field!("timeoutSeconds", NUMERIC),
    ]
);

pub static VALIDATING_WEBHOOK_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("webhooks", list_map!(named!(VALIDATING_WEBHOOK), ["name"])),
    ]
);

pub static VALIDATION: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.Validation",
    [
        field!("expression", STRING),
        field!("message", STRING),
        field!("messageExpression", STRING),
        field!("reason", STRING),
    ]
);

pub static VARIABLE: NamedType = atomic_structure!(
    "io.k8s.api.admissionregistration.v1.Variable",
    [field!("expression", STRING), key!("name", STRING, str ""),]
);

pub static WEBHOOK_CLIENT_CONFIG: NamedType = structure!(
    "io.k8s.api.admissionregistration.v1.WebhookClientConfig",
    [
        field!("caBundle", STRING),
        field!("service", named!(SERVICE_REFERENCE)),
        field!("url", STRING),
    ]
);
