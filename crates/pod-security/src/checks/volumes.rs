//! Volumes: hostPath volumes (baseline) and the restricted level's volume source allow-list.

use std::collections::BTreeSet;

use super::{Failure, join_quote, pluralize, sorted};
use crate::field::{BadValue, FieldError};
use crate::pod::Pod;

/// hostPathVolumes 1.0: no hostPath volumes.
pub(crate) fn host_path_volumes_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut errors = Vec::new();
    for (i, volume) in pod.volumes.iter().enumerate() {
        if let Some(path) = &volume.host_path {
            names.push(volume.name.clone());
            errors.push(FieldError::forbidden(
                format!("spec.volumes[{i}].hostPath"),
                BadValue::String(path.clone()),
            ));
        }
    }
    (!names.is_empty()).then(|| Failure {
        reason: "hostPath volumes".to_string(),
        detail: format!(
            "{} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names)
        ),
        errors,
    })
}

/// restrictedVolumes 1.0: only the allowed volume sources.
pub(crate) fn restricted_volumes_1_0(pod: &Pod) -> Option<Failure> {
    let mut names = Vec::new();
    let mut errors = Vec::new();
    let mut types = BTreeSet::new();
    for (i, volume) in pod.volumes.iter().enumerate() {
        let Some(source) = volume.restricted_type else {
            continue;
        };
        names.push(volume.name.clone());
        types.insert(source.to_string());
        // The fork reports these without a bad value.
        errors.push(FieldError::forbidden(
            format!("spec.volumes[{i}].{source}"),
            BadValue::None,
        ));
    }
    (!names.is_empty()).then(|| Failure {
        reason: "restricted volume types".to_string(),
        detail: format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names),
            pluralize("uses", "use", names.len()),
            pluralize(
                "restricted volume type",
                "restricted volume types",
                types.len()
            ),
            join_quote(&sorted(&types)),
        ),
        errors,
    })
}
