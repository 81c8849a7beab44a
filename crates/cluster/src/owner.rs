//! The owner of what celer makes at run time (its webhook configurations, its TLS Secret): a
//! ClusterRole of its installation, so that deleting the installation (`helm uninstall`,
//! `kubectl delete -f`) deletes them too, through the API server's garbage collection. A
//! cluster-scoped owner is the only kind both cluster-scoped and namespaced objects may name,
//! and the ClusterRole lives exactly as long as the installation's permissions.

use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::Client;
use kube::api::Api;
use serde_json::{Value, json};

use crate::ClusterError;

/// An owner reference, as objects carry it in `metadata.ownerReferences`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

impl Owner {
    /// The ClusterRole `name`, read for its uid (an owner reference must name the object's
    /// uid: a ClusterRole deleted and made again is another owner).
    pub async fn cluster_role(client: &Client, name: &str) -> Result<Owner, ClusterError> {
        let api: Api<ClusterRole> = Api::all(client.clone());
        let what = || format!("ClusterRole {name} (the owner of celer's webhook configurations)");
        let role = api.get(name).await.map_err(|e| ClusterError::Api {
            what: what(),
            message: e.to_string(),
        })?;
        let uid = role.metadata.uid.ok_or_else(|| ClusterError::Api {
            what: what(),
            message: "the API server gave it no uid".to_string(),
        })?;
        Ok(Owner {
            api_version: "rbac.authorization.k8s.io/v1".to_string(),
            kind: "ClusterRole".to_string(),
            name: name.to_string(),
            uid,
        })
    }

    /// The entry of `metadata.ownerReferences`. Not a controller reference, and it does not
    /// block the owner's deletion (that would need rights on the ClusterRole's finalizers).
    pub fn reference(&self) -> Value {
        json!({
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_names_the_owner_by_uid() {
        let owner = Owner {
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: "ClusterRole".into(),
            name: "celer-admission".into(),
            uid: "1234".into(),
        };
        assert_eq!(
            owner.reference(),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "name": "celer-admission", "uid": "1234"})
        );
    }
}
