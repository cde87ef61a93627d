//! What a plugin's store holds: its WASI context, the limits and the
//! clock that bound a call, and the call's state (with each capability's
//! part).

use crate::call::CallState;
use crate::caps::{EffectiveGrant, LoadedCaps, StoreContext};
use crate::tail_output::TailOutput;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

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

/// Measures the guest's share of a call: wall time minus time spent
/// waiting on the person at the terminal. Shared with the call's watchdog,
/// which stops calls stuck in a host wait (an HTTP response that never
/// comes) where the epoch deadline cannot reach them.
pub(crate) struct CallClock {
    shared: Arc<ClockShared>,
    /// Set when the limit stopped the call.
    pub exceeded: bool,
}

/// The part of a [`CallClock`] the watchdog reads.
pub(crate) struct ClockShared {
    limit: Duration,
    times: Mutex<ClockTimes>,
}

struct ClockTimes {
    started: Instant,
    excluded: Duration,
    waiting_since: Option<Instant>,
}

impl CallClock {
    fn new(limit: Duration) -> Self {
        Self {
            shared: Arc::new(ClockShared {
                limit,
                times: Mutex::new(ClockTimes {
                    started: Instant::now(),
                    excluded: Duration::ZERO,
                    waiting_since: None,
                }),
            }),
            exceeded: false,
        }
    }

    /// Starts timing a new call.
    pub fn restart(&mut self) {
        let mut times = self.shared.lock();
        times.started = Instant::now();
        times.excluded = Duration::ZERO;
        times.waiting_since = None;
        self.exceeded = false;
    }

    /// From now until [`Self::end_wait`], time does not count.
    pub fn begin_wait(&self) {
        self.shared.lock().waiting_since = Some(Instant::now());
    }

    /// Ends a wait begun with [`Self::begin_wait`].
    pub fn end_wait(&self) {
        let mut times = self.shared.lock();
        if let Some(since) = times.waiting_since.take() {
            times.excluded += since.elapsed();
        }
    }

    /// The limit.
    pub fn limit(&self) -> Duration {
        self.shared.limit
    }

    /// Time left, or `None` once the limit is spent.
    pub fn remaining(&self) -> Option<Duration> {
        self.shared.remaining()
    }

    /// A handle for the watchdog.
    pub fn shared(&self) -> Arc<ClockShared> {
        self.shared.clone()
    }
}

impl ClockShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, ClockTimes> {
        self.times.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The limit.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Time left, or `None` once the limit is spent. While a wait is in
    /// progress the clock stands still.
    pub fn remaining(&self) -> Option<Duration> {
        let times = self.lock();
        let now = times.waiting_since.unwrap_or_else(Instant::now);
        let used = now
            .saturating_duration_since(times.started)
            .saturating_sub(times.excluded);
        self.limit.checked_sub(used).filter(|left| !left.is_zero())
    }
}
