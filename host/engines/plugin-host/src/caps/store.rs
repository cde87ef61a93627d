//! What a capability's host functions reach of the store that serves a
//! call. The store holds every capability's part, so a capability that
//! named it would import what imports it; it sees the store through
//! [`CapStore`] instead (as wasmtime-wasi's interfaces see any store
//! through `WasiView`), and its host functions run on a [`CapView`]: its
//! own part and what they need of the rest, borrowed apart.

use super::HostCapability;
use crate::clock::CallClock;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;
use wasmtime::component::{HasData, ResourceTable};
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi_http::WasiHttpView;

/// Typed access to capability `C`'s part of a store's state.
pub(crate) trait Slot<C: HostCapability> {
    /// `C`'s state, to change.
    fn slot_mut(&mut self) -> &mut C::State;
}

/// A plugin's store, as the capabilities link against it. `wasi:http`
/// reaches the store through its own view, which the store provides with
/// [`super::http::ctx_view`].
pub(crate) trait CapStore: WasiHttpView + Send + 'static {
    /// Every capability's part of the store.
    type Caps;

    /// What capability `C`'s host functions reach.
    fn view<C: HostCapability>(&mut self) -> CapView<'_, C>
    where
        Self::Caps: Slot<C>;
}

/// What capability `C`'s host functions reach of the store: its own part,
/// the call's facts, the clock they stop while they wait on the host's
/// behalf, and WASI's context and resources.
pub(crate) struct CapView<'a, C: HostCapability> {
    /// The plugin's name.
    pub plugin: &'a Arc<str>,
    /// The model's id for the current tool call.
    pub call_id: &'a str,
    /// The directory the current call works in.
    pub cwd: Option<&'a Path>,
    /// Bounds the current call's time.
    pub clock: &'a CallClock,
    /// WASI as the plugin sees it.
    pub wasi: &'a mut WasiCtx,
    /// The store's resources.
    pub table: &'a mut ResourceTable,
    /// `C`'s part.
    pub state: &'a mut C::State,
}

/// The [`HasData`] of capability `C`'s interfaces: their host functions
/// run on a [`CapView`].
pub(crate) struct HasCap<C>(PhantomData<C>);

impl<C: HostCapability> HasData for HasCap<C> {
    type Data<'a> = CapView<'a, C>;
}
