//! The one wasmtime engine of a process, and the epoch ticker that bounds
//! how long guest code runs.

use anyhow::Context as _;
use std::time::Duration;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances. Deadlines are counted in these ticks, so a
/// CPU limit is enforced to within one tick.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Settings that shape the engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The largest linear memory any plugin may be granted.
    pub max_memory_bytes: u64,
    /// Try the pooling allocator first (falls back when virtual memory is
    /// too limited to reserve the pool).
    pub pooling: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            max_memory_bytes: crate::limits::DEFAULT_MAX_MEMORY_MIB << 20,
            pooling: true,
        }
    }
}

/// The engine plus the thread that advances its epoch. The thread runs as
/// long as any clone of the engine lives (every loaded plugin holds one),
/// so CPU limits keep working after the `PluginEngine` itself is dropped.
pub struct PluginEngine {
    engine: Engine,
    pooling: bool,
    compatibility_key: String,
}

impl PluginEngine {
    /// Builds the engine, with the pooling allocator when the system allows
    /// it, and starts the epoch ticker.
    pub fn new(options: &EngineOptions) -> anyhow::Result<Self> {
        let (engine, pooling) = if options.pooling {
            match Engine::new(&config(Some(options))) {
                Ok(engine) => (engine, true),
                Err(err) => {
                    tracing::info!(
                        "the pooling allocator is unavailable ({err:#}); falling back to on-demand allocation"
                    );
                    (Engine::new(&config(None))?, false)
                }
            }
        } else {
            (Engine::new(&config(None))?, false)
        };
        spawn_ticker(&engine).context("starting the epoch ticker")?;
        let compatibility_key = kaizen_wasm_config::compatibility_key(&engine);
        Ok(Self {
            engine,
            pooling,
            compatibility_key,
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// True when instances come from the pooling allocator.
    pub fn uses_pooling(&self) -> bool {
        self.pooling
    }

    /// A stable identifier of everything that makes compiled code
    /// compatible with this engine (wasmtime version, target, settings).
    pub fn compatibility_key(&self) -> &str {
        &self.compatibility_key
    }

    /// Epoch ticks covering `time`, rounded up, at least one.
    pub fn ticks_for(time: Duration) -> u64 {
        let tick = EPOCH_TICK.as_nanos();
        (time.as_nanos().div_ceil(tick)).max(1) as u64
    }
}

/// The shared settings ([`kaizen_wasm_config::config`]: the built-ins were
/// precompiled with them), plus the instance allocator, which does not
/// change compiled code.
fn config(pooling: Option<&EngineOptions>) -> Config {
    let mut config = kaizen_wasm_config::config();
    if let Some(options) = pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(256);
        pool.total_core_instances(2048);
        pool.total_memories(512);
        pool.total_tables(1024);
        pool.total_stacks(256);
        pool.max_core_instances_per_component(64);
        pool.max_memories_per_component(16);
        pool.max_tables_per_component(32);
        pool.max_memories_per_module(2);
        pool.table_elements(100_000);
        pool.max_core_instance_size(1 << 20);
        pool.max_component_instance_size(1 << 20);
        pool.max_memory_size(options.max_memory_bytes as usize);
        // Keep a few slots warm so a fresh instance reuses paged-in memory.
        pool.max_unused_warm_slots(16);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

fn spawn_ticker(engine: &Engine) -> std::io::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("kaizen-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                let Some(engine) = weak.upgrade() else {
                    break;
                };
                engine.increment_epoch();
            }
        })
        .map(drop)
}
