//! The cluster's policy objects and labelled ConfigMaps as the loader's feed: the kinds celer
//! serves for `celer serve`, and those plus the native admission policies for scans.

use std::sync::Arc;

use celer_cluster::sources::{Document, PolicyObjects};
use celer_webhook::feed::{Changes, FeedDocument, PolicyFeed};

#[derive(Debug)]
pub struct ClusterFeed {
    objects: Arc<PolicyObjects>,
    /// Also the kinds celer only reads (ValidatingAdmissionPolicy and its bindings).
    read_only_too: bool,
}

impl ClusterFeed {
    /// What `celer serve` enforces.
    pub fn served(objects: Arc<PolicyObjects>) -> ClusterFeed {
        ClusterFeed {
            objects,
            read_only_too: false,
        }
    }

    /// What background scans evaluate.
    pub fn scanned(objects: Arc<PolicyObjects>) -> ClusterFeed {
        ClusterFeed {
            objects,
            read_only_too: true,
        }
    }
}

impl PolicyFeed for ClusterFeed {
    fn documents(&self) -> Vec<FeedDocument> {
        let documents = if self.read_only_too {
            self.objects.scan_documents()
        } else {
            self.objects.documents()
        };
        (documents.into_iter())
            .map(|d| match d {
                Document::Object { origin, json } => FeedDocument::Object { origin, json },
                Document::File { origin, text } => FeedDocument::File { origin, text },
            })
            .collect()
    }

    fn subscribe(&self) -> Changes {
        self.objects.subscribe()
    }

    fn is_synced(&self) -> bool {
        self.objects.is_synced()
    }
}
