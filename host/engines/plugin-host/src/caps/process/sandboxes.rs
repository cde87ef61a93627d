//! The sandboxes of a plugin granted `process`: one per session, shaped by
//! the plugin's effective grant (its directories, its network flag, its
//! environment) within the session's [`Containment`].

use super::ProcessCapability;
use super::host::ProcessAccess;
use crate::caps::EffectiveGrant;
use crate::caps::filesystem::{Access, dirs_with};
use kaizen_sandbox::{Containment, Policy, Sandbox, Scope};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The sandboxes of one plugin, one per session, created on first use and
/// dropped (with everything they started) when the session ends.
pub(crate) struct SessionSandboxes {
    policy: Policy,
    containment: Containment,
    programs: Arc<[String]>,
    sessions: Mutex<HashMap<String, Arc<Sandbox>>>,
}

impl SessionSandboxes {
    /// The sandboxes for a plugin with `grant`, if it may run programs.
    pub fn for_grant(
        grant: &EffectiveGrant,
        containment: &Containment,
        env: &[(String, String)],
    ) -> Option<Self> {
        let ProcessCapability { programs, network } = grant.process.clone()?;
        let scope = Scope {
            writable: dirs_with(grant, Access::ReadWrite),
            readable: dirs_with(grant, Access::ReadOnly),
            network,
            env: env.to_vec(),
        };
        let policy = containment.policy(scope, &[]);
        Some(Self {
            policy,
            containment: containment.clone(),
            programs: programs.into(),
            sessions: Mutex::default(),
        })
    }

    /// What a store serving `session` reaches the sandbox through.
    pub fn access(&self, session: &str) -> ProcessAccess {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let sandbox = match sessions.get(session) {
            Some(sandbox) => Ok(sandbox.clone()),
            // A failure is not kept: the next call tries again.
            None => Sandbox::new(self.policy_now()).map(|sandbox| {
                let sandbox = Arc::new(sandbox);
                sessions.insert(session.to_string(), sandbox.clone());
                sandbox
            }),
        };
        ProcessAccess::new(
            sandbox.map_err(|err| err.to_string()),
            self.programs.clone(),
        )
    }

    /// The policy for a session starting now: the configuration that
    /// exists now at the top of each writable directory is protected.
    fn policy_now(&self) -> Policy {
        let mut policy = self.policy.clone();
        self.containment.protect_now(&mut policy);
        policy
    }

    /// Ends everything `session` started.
    pub fn end_session(&self, session: &str) {
        let removed = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session);
        // Dropping the last handle kills what is left.
        drop(removed);
    }
}
