//! Policy documents that do not come from files: a cluster's policy objects and labelled
//! ConfigMaps (`celer serve --policies-from-cluster`, `--policy-configmaps`). The webhook
//! knows them through this trait only, so it needs no Kubernetes client to be tested; the CLI
//! plugs in `celer_cluster::sources`.
//!
//! A fed document stands alone: one that cannot be read, is invalid or does not compile is
//! left out of the set and reported ([`crate::policies::Policies::rejected`]), and every
//! other policy keeps serving. (A policy *file* that is broken refuses the whole reload
//! instead: a file is one edit by one operator, a cluster is many objects by many teams.)

use std::sync::Arc;

use celer_cel::Json;
use tokio::sync::watch;

/// One fed document.
#[derive(Debug, Clone)]
pub enum FeedDocument {
    /// An object, named for messages and metrics (`ValidatingPolicy "p"`).
    Object { origin: String, json: Arc<Json> },
    /// A file's text (a ConfigMap's data entry), named `configmap ns/name key`.
    File { origin: String, text: String },
}

impl FeedDocument {
    pub fn origin(&self) -> &str {
        match self {
            FeedDocument::Object { origin, .. } | FeedDocument::File { origin, .. } => origin,
        }
    }
}

/// A receiver of a feed's changes (the value is a counter).
pub type Changes = watch::Receiver<u64>;

/// Where fed documents come from.
pub trait PolicyFeed: Send + Sync + std::fmt::Debug {
    /// Every document now, in a stable order.
    fn documents(&self) -> Vec<FeedDocument>;
    /// Sees every change of the documents (the value is a counter).
    fn subscribe(&self) -> Changes;
    /// Whether every source has been read once (until then the set would be partial).
    fn is_synced(&self) -> bool;
}
