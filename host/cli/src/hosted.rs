//! A run that a cluster's worker makes for a submitter elsewhere
//! (`kaizen worker`): nobody is at the worker's terminal, the engine
//! journals the loop's steps and waits on people's answers, and the
//! events go to the session's stream.

use crate::cluster_asks::AskThroughCluster;
use anyhow::Context as _;
use kaizen_cluster::EventStream;
use kaizen_plugins::interaction::Interaction;
use kaizen_protocol::{Approver, Observer};
use kaizen_runtime::StepExecutor;
use kaizen_session_store::SessionStore;
use std::sync::Arc;

/// How a run differs when a cluster's worker runs it.
pub struct Hosted {
    /// The session's id: a new session is made with it.
    pub session_id: String,
    /// An earlier run of this turn made the session, and the worker took
    /// it back to its start: it is not made again.
    pub made_before: bool,
    /// The loop's step executor.
    pub steps: Arc<dyn StepExecutor>,
    /// Asks the submitter (or `kaizen approve`) through the engine.
    pub asker: Arc<kaizen_cluster::Asker>,
    /// The submitter's name for the turn, which tags its events.
    pub turn: String,
    /// The cluster's ingress as the submitter reached it.
    pub cluster: Option<String>,
}

impl Hosted {
    /// Who answers plugins' questions: the submitter, through the engine.
    pub fn interaction(&self) -> Arc<dyn Interaction> {
        Arc::new(AskThroughCluster(self.asker.clone()))
    }

    /// Who approves tool calls: the submitter, through the engine.
    pub fn approver(&self) -> Arc<dyn Approver> {
        self.asker.clone()
    }

    /// The session's event stream for this turn, where its questions are
    /// asked too; the session is marked as the cluster's.
    pub fn open_stream(&self, store: &SessionStore, id: &str) -> anyhow::Result<Arc<dyn Observer>> {
        let stream = Arc::new(
            EventStream::open(store, id, &self.turn)
                .context("opening the session's event stream")?,
        );
        self.asker.publish_to(stream.clone());
        if let Some(cluster) = &self.cluster {
            store.update_meta(id, |meta| meta.cluster = Some(cluster.clone()))?;
        }
        Ok(stream)
    }
}
