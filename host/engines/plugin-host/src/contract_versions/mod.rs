//! Components built against older contracts, adapted to the newest, so
//! that the instances call every component in one shape.
//!
//! The host's bindings ([`crate::bindings`]) are the newest contract's.
//! Its imports serve components of every supported version (wasmtime links
//! imports by semver, and they have not changed since 0.1.0), and so does
//! its `tools` export. The `hooks` export changed in 0.1.1: a component of
//! an older version is called through its own version's bindings, and
//! what goes in and out is converted to and from the newest's types.
//!
//! Each older version whose `hooks` differ is a file here holding its
//! bindings and conversions, and a line in [`OLDER_HOOKS`]. When a new
//! version changes `hooks` again, the one it replaces becomes such a file,
//! and the files already here convert to the new types. Exports older
//! versions had only as drafts are not adapted but refused at load
//! ([`PLANNING_SINCE`]; an import's draft is refused by its capability's
//! `SINCE`).

mod v0_1_0;

use crate::bindings::guest_hooks as newest;
use crate::linking::at_least;
use crate::state::PluginState;
use futures::future::BoxFuture;
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

/// The first contract version whose `planning` export the host calls:
/// older ones had only a draft.
pub(crate) const PLANNING_SINCE: &str = "0.1.4";

/// How to find the `hooks` export of a component of one older shape.
type FindHooks = fn(&InstancePre<PluginState>) -> Option<Box<dyn LoadHooks>>;

/// The older shapes of `hooks`, oldest first, each with the newest
/// version that has it: a component's export takes the first whose
/// version is not older than its own, else the newest's bindings.
const OLDER_HOOKS: &[(&str, FindHooks)] = &[("0.1.0", v0_1_0::find_hooks)];

/// Where a component's `hooks` export is, found once per plugin.
trait LoadHooks: Send + Sync {
    /// The export of `instance`, a new instance in `store`.
    fn load_export(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Arc<dyn CallHooks>>;
}

/// A component's `hooks` export, called with the newest contract's types.
trait CallHooks: Send + Sync {
    /// The subscriptions it declares.
    fn subscriptions<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
    ) -> BoxFuture<'a, wasmtime::Result<Vec<newest::Subscription>>>;

    /// Its answer to `event`; `None` when its version has no such event
    /// (it never subscribed to it).
    #[expect(clippy::ptr_arg, reason = "the generated bindings take `&String`")]
    fn handle<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
        event: newest::HookEvent,
        payload: &'a String,
    ) -> Option<BoxFuture<'a, wasmtime::Result<newest::HookDecision>>>;
}

/// Where a component's `hooks` export is, whatever version it was built
/// against.
pub(crate) struct HooksIndices(Box<dyn LoadHooks>);

impl HooksIndices {
    /// The export of the component `pre` prepares, if it has one.
    pub fn find(pre: &InstancePre<PluginState>) -> Option<Self> {
        // Looked up by semver, a newer name finds a 0.1.0 export too, whose
        // types do not match: the version comes from the export's own name.
        let version = hooks_export_version(pre)?;
        let older = OLDER_HOOKS
            .iter()
            .find(|(through, _)| at_least(through, &version));
        let found = match older {
            Some((_, find)) => find(pre),
            None => newest::GuestIndices::new(pre)
                .ok()
                .map(|indices| Box::new(indices) as Box<dyn LoadHooks>),
        };
        found.map(Self)
    }

    /// The export of `instance`, a new instance in `store`.
    pub fn load(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<HooksExport> {
        self.0.load_export(store, instance).map(HooksExport)
    }
}

/// A component's `hooks` export, in the newest contract's types.
#[derive(Clone)]
pub(crate) struct HooksExport(Arc<dyn CallHooks>);

impl HooksExport {
    /// The subscriptions the component declares.
    pub fn subscriptions<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
    ) -> BoxFuture<'a, wasmtime::Result<Vec<newest::Subscription>>> {
        self.0.subscriptions(store)
    }

    /// The component's answer to `event`; `None` when its version has no
    /// such event.
    pub fn handle<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
        event: newest::HookEvent,
        payload: &'a String,
    ) -> Option<BoxFuture<'a, wasmtime::Result<newest::HookDecision>>> {
        self.0.handle(store, event, payload)
    }
}

impl LoadHooks for newest::GuestIndices {
    fn load_export(
        &self,
        store: &mut Store<PluginState>,
        instance: &Instance,
    ) -> wasmtime::Result<Arc<dyn CallHooks>> {
        Ok(Arc::new(self.load(store, instance)?))
    }
}

impl CallHooks for newest::Guest {
    fn subscriptions<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
    ) -> BoxFuture<'a, wasmtime::Result<Vec<newest::Subscription>>> {
        Box::pin(self.call_subscriptions(store))
    }

    fn handle<'a>(
        &'a self,
        store: &'a mut Store<PluginState>,
        event: newest::HookEvent,
        payload: &'a String,
    ) -> Option<BoxFuture<'a, wasmtime::Result<newest::HookDecision>>> {
        Some(Box::pin(self.call_handle(store, event, payload)))
    }
}

/// The contract version of the component's `hooks` export, if it has one.
fn hooks_export_version(pre: &InstancePre<PluginState>) -> Option<String> {
    let engine = pre.engine();
    pre.component()
        .component_type()
        .exports(engine)
        .find_map(|(name, _)| {
            name.strip_prefix("kaizen:plugin/hooks@")
                .map(str::to_string)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{CONTRACT_VERSION, SUPPORTED_CONTRACTS};

    #[test]
    fn older_shapes_are_older_supported_versions_oldest_first() {
        let versions: Vec<&str> = OLDER_HOOKS.iter().map(|(version, _)| *version).collect();
        for pair in versions.windows(2) {
            assert!(!at_least(pair[0], pair[1]), "{pair:?} is out of order");
        }
        for version in versions {
            assert!(SUPPORTED_CONTRACTS.contains(&version), "{version}");
            assert!(!at_least(version, CONTRACT_VERSION), "{version}");
        }
    }
}
