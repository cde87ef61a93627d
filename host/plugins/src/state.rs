//! What a plugin's store holds: its WASI context built from the effective
//! grant, the HTTP policy, limits, and the clock that bounds a call.

use crate::capability::Access;
use crate::fan_out::FanOut;
use crate::fs_guard::FsGuard;
use crate::grant::EffectiveGrant;
use crate::guarded_fs::GuardedFs;
use crate::http_credential::InjectedHeader;
use crate::http_policy::HttpPolicy;
use crate::interaction::Interaction;
use crate::process_host::ProcessAccess;
use crate::tail_output::TailOutput;
use kaizen_tools::{CompletionLink, FileHistoryLink, SessionNotes, SubAgentLink};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime_wasi::filesystem::WasiFilesystemCtxView;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// How much of a plugin's output (stdout and stderr) is kept for error
/// messages.
const OUTPUT_CAPACITY: usize = 64 << 10;

/// Per-plugin facts every store of that plugin shares.
pub(crate) struct PluginIdentity {
    /// The plugin's name, for logs and messages.
    pub name: Arc<str>,
    /// What it may use.
    pub grant: Arc<EffectiveGrant>,
    /// Values of the environment variables it was granted, read at load.
    pub env: Vec<(String, String)>,
    /// Headers the HTTP filter adds to its requests, secrets read at load.
    pub http_credentials: Arc<[InjectedHeader]>,
    /// Who answers `interaction` calls.
    pub interaction: Arc<dyn Interaction>,
    /// What its `wasi:filesystem` calls may not touch.
    pub fs_guard: Arc<FsGuard>,
}

/// The data of one plugin store.
pub(crate) struct PluginState {
    pub name: Arc<str>,
    wasi: WasiCtx,
    table: ResourceTable,
    http_ctx: WasiHttpCtx,
    http_policy: HttpPolicy,
    pub limiter: MemoryLimiter,
    pub clock: CallClock,
    pub stderr: TailOutput,
    pub interaction: Arc<dyn Interaction>,
    /// The notes of the session whose call the store serves; set for each
    /// call.
    pub notes: Arc<SessionNotes>,
    /// Where the current call may start sub-agents; set for each call.
    pub sub_agents: SubAgentLink,
    /// Where the current call may ask for completions; set for each call.
    pub completions: CompletionLink,
    /// Where files are kept before the current call changes them; set
    /// for each call.
    pub history: FileHistoryLink,
    /// What the plugin may use.
    pub grant: Arc<EffectiveGrant>,
    /// How the current call may fan out (`parallel`); none for calls made
    /// that way.
    pub fan_out: Option<FanOut>,
    /// The model's id for the current call.
    pub call_id: String,
    /// The directory the current call works in.
    pub cwd: Option<PathBuf>,
    /// The session's sandbox, when the plugin may run programs; set for
    /// each call.
    pub process: Option<ProcessAccess>,
    /// What its `wasi:filesystem` calls may not touch.
    fs_guard: Arc<FsGuard>,
}

impl PluginState {
    /// A fresh state: no args, only granted env, preopens at their own
    /// paths, stdio captured, no sockets. When `cwd` lies inside a granted
    /// directory it is also preopened as `.`, which is how WASI programs
    /// resolve relative paths.
    pub fn new(identity: &PluginIdentity, cwd: Option<&Path>) -> anyhow::Result<Self> {
        let grant = &identity.grant;
        let stderr = TailOutput::new(OUTPUT_CAPACITY);
        let mut builder = WasiCtx::builder();
        builder
            .stdout(stderr.clone())
            .stderr(stderr.clone())
            .allow_blocking_current_thread(true)
            .envs(&identity.env);
        for preopen in &grant.filesystem {
            let guest = preopen.path.to_string_lossy();
            builder
                .preopened_dir(&preopen.path, guest.as_ref(), perms_for(preopen.access))
                .map_err(|err| {
                    anyhow::anyhow!(
                        "cannot open granted directory {}: {err}",
                        preopen.path.display()
                    )
                })?;
        }
        if let Some(dir) = &grant.data_dir {
            builder
                .preopened_dir(
                    dir,
                    dir.to_string_lossy().as_ref(),
                    perms_for(Access::ReadWrite),
                )
                .map_err(|err| {
                    anyhow::anyhow!(
                        "cannot open the plugin's data directory {}: {err}",
                        dir.display()
                    )
                })?;
        }
        let cwd_grant = cwd.and_then(|cwd| {
            grant
                .filesystem
                .iter()
                .find(|p| cwd.starts_with(&p.path))
                .map(|p| (cwd, p.access))
        });
        if let Some((cwd, access)) = cwd_grant {
            builder
                .preopened_dir(cwd, ".", perms_for(access))
                .map_err(|err| {
                    anyhow::anyhow!("cannot open the working directory {}: {err}", cwd.display())
                })?;
            builder.initial_cwd(cwd.to_string_lossy());
        }
        Ok(Self {
            name: identity.name.clone(),
            wasi: builder.build(),
            table: ResourceTable::new(),
            http_ctx: WasiHttpCtx::new(),
            http_policy: HttpPolicy::new(
                identity.name.clone(),
                grant.http.clone(),
                identity.http_credentials.clone(),
            ),
            limiter: MemoryLimiter::new(grant.limits.memory_bytes),
            clock: CallClock::new(grant.limits.cpu_time),
            stderr,
            interaction: identity.interaction.clone(),
            notes: Arc::default(),
            sub_agents: SubAgentLink::default(),
            completions: CompletionLink::default(),
            history: FileHistoryLink::default(),
            grant: grant.clone(),
            fan_out: None,
            call_id: String::new(),
            cwd: cwd.map(Path::to_path_buf),
            process: None,
            fs_guard: identity.fs_guard.clone(),
        })
    }

    /// The filesystem as the plugin reaches it: wasmtime-wasi's, behind
    /// the plugin's guard.
    pub fn guarded_fs(&mut self) -> GuardedFs<'_> {
        GuardedFs {
            inner: WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            guard: &self.fs_guard,
        }
    }

    /// Reasons the HTTP policy refused requests during this call (taken:
    /// the next call starts with none).
    pub fn http_refusals(&self) -> Vec<String> {
        self.http_policy.refusals()
    }
}

fn perms_for(access: Access) -> FsPerms {
    match access {
        Access::ReadOnly => FsPerms::ReadOnly,
        Access::ReadWrite => FsPerms::ReadWrite,
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

impl WasiHttpView for PluginState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http_policy,
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
