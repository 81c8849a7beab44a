//! Types of `batch/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CRON_JOB: NamedType = structure!(
    "io.k8s.api.batch.v1.CronJob",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(CRON_JOB_SPEC)),
        field!("status", named!(CRON_JOB_STATUS)),
    ]
);

pub static CRON_JOB_SPEC: NamedType = structure!(
    "io.k8s.api.batch.v1.CronJobSpec",
    [
        field!("concurrencyPolicy", STRING),
        field!("failedJobsHistoryLimit", NUMERIC),
        field!("jobTemplate", named!(JOB_TEMPLATE_SPEC)),
        field!("schedule", STRING),
        field!("startingDeadlineSeconds", NUMERIC),
        field!("successfulJobsHistoryLimit", NUMERIC),
        field!("suspend", BOOLEAN),
        field!("timeZone", STRING),
    ]
);

pub static CRON_JOB_STATUS: NamedType = structure!(
    "io.k8s.api.batch.v1.CronJobStatus",
    [
        field!("active", list_atomic!(named!(core_v1::OBJECT_REFERENCE))),
        field!("lastScheduleTime", named!(apimachinery::TIME)),
        field!("lastSuccessfulTime", named!(apimachinery::TIME)),
    ]
);

pub static JOB: NamedType = structure!(
    "io.k8s.api.batch.v1.Job",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(JOB_SPEC)),
        field!("status", named!(JOB_STATUS)),
    ]
);

pub static JOB_CONDITION: NamedType = structure!(
    "io.k8s.api.batch.v1.JobCondition",
    [
        field!("lastProbeTime", named!(apimachinery::TIME)),
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        field!("type", STRING),
    ]
);

pub static JOB_SPEC: NamedType = structure!(
    "io.k8s.api.batch.v1.JobSpec",
    [
        field!("activeDeadlineSeconds", NUMERIC),
        field!("backoffLimit", NUMERIC),
        field!("backoffLimitPerIndex", NUMERIC),
        field!("completionMode", STRING),
        field!("completions", NUMERIC),
        field!("managedBy", STRING),
        field!("manualSelector", BOOLEAN),
        field!("maxFailedIndexes", NUMERIC),
        field!("parallelism", NUMERIC),
        field!("podFailurePolicy", named!(POD_FAILURE_POLICY)),
        field!("podReplacementPolicy", STRING),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("successPolicy", named!(SUCCESS_POLICY)),
        field!("suspend", BOOLEAN),
        field!("template", named!(core_v1::POD_TEMPLATE_SPEC)),
        field!("ttlSecondsAfterFinished", NUMERIC),
    ]
);

pub static JOB_STATUS: NamedType = structure!(
    "io.k8s.api.batch.v1.JobStatus",
    [
        field!("active", NUMERIC),
        field!("completedIndexes", STRING),
        field!("completionTime", named!(apimachinery::TIME)),
        field!("conditions", list_atomic!(named!(JOB_CONDITION))),
        field!("failed", NUMERIC),
        field!("failedIndexes", STRING),
        field!("ready", NUMERIC),
        field!("startTime", named!(apimachinery::TIME)),
        field!("succeeded", NUMERIC),
        field!("terminating", NUMERIC),
        field!("uncountedTerminatedPods", named!(UNCOUNTED_TERMINATED_PODS)),
    ]
);

pub static JOB_TEMPLATE_SPEC: NamedType = structure!(
    "io.k8s.api.batch.v1.JobTemplateSpec",
    [
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(JOB_SPEC)),
    ]
);

pub static POD_FAILURE_POLICY: NamedType = structure!(
    "io.k8s.api.batch.v1.PodFailurePolicy",
    [field!(
        "rules",
        list_atomic!(named!(POD_FAILURE_POLICY_RULE))
    ),]
);

pub static POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT: NamedType = structure!(
    "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
    [
        field!("containerName", STRING),
        field!("operator", STRING),
        field!("values", list_set!(NUMERIC)),
    ]
);

pub static POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN: NamedType = structure!(
    "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern",
    [field!("status", STRING), field!("type", STRING),]
);

pub static POD_FAILURE_POLICY_RULE: NamedType = structure!(
    "io.k8s.api.batch.v1.PodFailurePolicyRule",
    [
        field!("action", STRING),
        field!(
            "onExitCodes",
            named!(POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT)
        ),
        field!(
            "onPodConditions",
            list_atomic!(named!(POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN))
        ),
    ]
);

pub static SUCCESS_POLICY: NamedType = structure!(
    "io.k8s.api.batch.v1.SuccessPolicy",
    [field!("rules", list_atomic!(named!(SUCCESS_POLICY_RULE))),]
);

pub static SUCCESS_POLICY_RULE: NamedType = structure!(
    "io.k8s.api.batch.v1.SuccessPolicyRule",
    [
        field!("succeededCount", NUMERIC),
        field!("succeededIndexes", STRING),
    ]
);

pub static UNCOUNTED_TERMINATED_PODS: NamedType = structure!(
    "io.k8s.api.batch.v1.UncountedTerminatedPods",
    [
        field!("failed", list_set!(STRING)),
        field!("succeeded", list_set!(STRING)),
    ]
);
