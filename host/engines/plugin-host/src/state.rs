//! What a plugin's store holds: its WASI context, the limits and the
//! clock that bound a call, and the call's state (with each capability's
//! part). The capabilities link against it through [`CapStore`].

use crate::call::CallSetup;
use crate::caps::http::{self, Http};
use crate::caps::{
    CapStates, CapStore, CapView, EffectiveGrant, HostCapability, LoadedCaps, Slot, StoreContext,
};
use crate::clock::CallClock;
use crate::tail_output::TailOutput;
use kaizen_tools::{FileHistoryLink, SessionNotes};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

/// How much of a plugin's output (stdout and stderr) is kept for error
/// messages.
const OUTPUT_CAPACITY: usize = 64 << 10;

/// Per-plugin facts every store of that plugin shares.
pub(crate) struct PluginIdentity {
    /// The plugin's name, for logs and messages.
    pub name: Arc<str>,
    /// What it may use.
    pub grant: Arc<EffectiveGrant>,
    /// Its environment: the variables it was granted, read at load, and
    /// those its capabilities set.
    pub env: Vec<(String, String)>,
    /// What its capabilities share.
    pub caps: LoadedCaps,
}

/// The data of one plugin store.
pub(crate) struct PluginState {
    /// The plugin's name.
    pub name: Arc<str>,
    /// What the plugin may use.
    pub grant: Arc<EffectiveGrant>,
    /// WASI as the plugin sees it: only granted env, preopens, captured
    /// stdio, no sockets.
    pub wasi: WasiCtx,
    /// The store's resources.
    pub table: ResourceTable,
    /// Bounds its memory.
    pub limiter: MemoryLimiter,
    /// Bounds the current call's time.
    pub clock: CallClock,
    /// The tail of its output, for crash reports.
    pub stderr: TailOutput,
    /// The current call's state.
    pub call: CallState,
}

impl PluginState {
    /// A fresh state: no args, only the plugin's env, stdio captured, and
    /// what each capability adds (preopens at their own paths, `.` for
    /// `cwd` when a granted directory holds it).
    pub fn new(identity: &PluginIdentity, cwd: Option<&Path>) -> anyhow::Result<Self> {
        let grant = &identity.grant;
        let stderr = TailOutput::new(OUTPUT_CAPACITY);
        let mut builder = WasiCtx::builder();
        builder
            .stdout(stderr.clone())
            .stderr(stderr.clone())
            .allow_blocking_current_thread(true)
            .envs(&identity.env);
        let caps = identity.caps.new_state(&mut StoreContext {
            plugin: &identity.name,
            grant,
            wasi: &mut builder,
            cwd,
        })?;
        Ok(Self {
            name: identity.name.clone(),
            grant: grant.clone(),
            wasi: builder.build(),
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(grant.limits.memory_bytes),
            clock: CallClock::new(grant.limits.cpu_time),
            stderr,
            call: CallState::new(caps, cwd),
        })
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl CapStore for PluginState {
    type Caps = CapStates;

    fn view<C: HostCapability>(&mut self) -> CapView<'_, C>
    where
        CapStates: Slot<C>,
    {
        let Self {
            name,
            wasi,
            table,
            clock,
            call,
            ..
        } = self;
        CapView {
            plugin: name,
            call_id: &call.id,
            cwd: call.cwd.as_deref(),
            clock,
            wasi,
            table,
            state: call.caps.slot_mut(),
        }
    }
}

impl WasiHttpView for PluginState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        http::ctx_view(self.view::<Http>())
    }
}

/// The per-call part of a plugin's store: what the always-linked `session`
/// interface serves and each capability's own part.
pub(crate) struct CallState {
    /// The model's id for the current tool call.
    pub id: String,
    /// The directory the current call works in.
    pub cwd: Option<PathBuf>,
    /// The notes of the session whose call the store serves.
    pub notes: Arc<SessionNotes>,
    /// Where files are kept before the current call changes them.
    pub history: FileHistoryLink,
    caps: CapStates,
}

impl CallState {
    /// The state of a new store whose first call works in `cwd`.
    fn new(caps: CapStates, cwd: Option<&Path>) -> Self {
        Self {
            id: String::new(),
            cwd: cwd.map(Path::to_path_buf),
            notes: Arc::default(),
            history: FileHistoryLink::default(),
            caps,
        }
    }

    /// Takes in what `call` brings.
    pub fn begin(&mut self, loaded: &LoadedCaps, call: &CallSetup<'_>) {
        if let Some(ctx) = call.tool {
            self.id.clone_from(&ctx.call_id);
            self.cwd = Some(ctx.cwd.clone());
            self.history = ctx.history.clone();
        }
        if let Some(notes) = call.notes {
            self.notes = notes.clone();
        }
        self.caps.begin_call(loaded, call);
    }

    /// What the capabilities refused during the call (taken: the next
    /// call starts with none).
    pub fn take_refusals(&self) -> Vec<String> {
        self.caps.take_refusals()
    }
}

/// Bounds the plugin's linear memory, summed over all its memories (a
/// component may have several), and counts of instances and tables. A
/// refused growth is recorded so the error can name the limit.
pub(crate) struct MemoryLimiter {
    max_bytes: u64,
    total_bytes: u64,
    /// The total a refused growth asked for.
    pub refused: Option<u64>,
}

impl MemoryLimiter {
    fn new(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            total_bytes: 0,
            refused: None,
        }
    }

    /// The limit in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.total_bytes + (desired.saturating_sub(current)) as u64;
        if total > self.max_bytes {
            // Refuse rather than trap: a guest that can handle a failed
            // allocation gets the chance to.
            self.refused = Some(total);
            return Ok(false);
        }
        self.total_bytes = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }

    fn instances(&self) -> usize {
        64
    }

    fn tables(&self) -> usize {
        64
    }

    fn memories(&self) -> usize {
        16
    }
}
