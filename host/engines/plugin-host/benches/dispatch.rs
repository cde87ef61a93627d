//! Plugin host benchmark: tool dispatch (warm instance and fresh instance),
//! cold start of loading every test plugin from the compile cache versus
//! compiling, and resident memory. Prints medians against the budgets in
//! docs/budgets.md. Run with `cargo bench -p kaizen-plugin-host --bench dispatch`.

use kaizen_plugin_host::{
    GrantPolicy, HostOptions, Location, Origin, Pin, PluginHost, PluginSet, PluginSource,
};
use kaizen_tools::{CallContext, ToolRegistry};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PLUGINS: &[&str] = &["hello", "counter", "fs-probe", "hostile", "py-echo"];

fn sources(names: &[&str]) -> Vec<PluginSource> {
    names
        .iter()
        .map(|name| PluginSource {
            origin: Origin::Flag,
            location: Location::Dir(kaizen_test_artifacts::plugin_dir(name)),
            pin: Pin::Unpinned,
        })
        .collect()
}

fn host(cache: Option<&Path>) -> PluginHost {
    PluginHost::new(HostOptions {
        cache_dir: cache.map(Path::to_path_buf),
        ..HostOptions::default()
    })
    .expect("engine")
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    samples[((samples.len() - 1) as f64 * p) as usize]
}

async fn time_calls(
    registry: &ToolRegistry,
    ctx: &CallContext,
    tool: &str,
    args: &str,
    n: usize,
) -> Vec<Duration> {
    // Warm up: first instantiation, page faults, caches.
    for _ in 0..200 {
        registry.call(ctx, tool, args).await.expect("call");
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        registry.call(ctx, tool, args).await.expect("call");
        samples.push(start.elapsed());
    }
    samples.sort_unstable();
    samples
}

fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn report(label: &str, samples: &[Duration], budget: Option<Duration>) {
    let med = samples[samples.len() / 2];
    let line = format!(
        "{label:<44} median {:>9.2} µs   p90 {:>9.2} µs",
        med.as_secs_f64() * 1e6,
        percentile(samples, 0.9).as_secs_f64() * 1e6
    );
    match budget {
        Some(budget) => println!(
            "{line}   budget {:.0} µs → {:.2}× of budget",
            budget.as_secs_f64() * 1e6,
            med.as_secs_f64() / budget.as_secs_f64()
        ),
        None => println!("{line}"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let cache = scratch.path().join("cache");
    let workspace: PathBuf = scratch.path().canonicalize().expect("workspace");
    let policy = GrantPolicy::new(&workspace);
    let ctx = CallContext {
        session_id: "bench".into(),
        call_id: "c".into(),
        workspace: workspace.clone(),
        cwd: workspace.clone(),
        notes: Default::default(),
        sub_agents: Default::default(),
        completions: Default::default(),
        history: Default::default(),
    };

    println!(
        "kaizen-plugin-host dispatch benchmark (plugins: {})",
        PLUGINS.join(", ")
    );

    // Cold start: compile everything (first run fills the cache).
    let mut compile = Vec::new();
    for i in 0..3 {
        let dir = scratch.path().join(format!("compile-{i}"));
        let start = Instant::now();
        let host = host(Some(&dir));
        let set = PluginSet::load(&host, &sources(PLUGINS), &policy).await;
        compile.push(start.elapsed());
        assert!(
            set.failed.is_empty(),
            "load failures: {:?}",
            set.failed
                .iter()
                .map(|f| &f.error.message)
                .collect::<Vec<_>>()
        );
    }
    {
        let host = host(Some(&cache));
        PluginSet::load(&host, &sources(PLUGINS), &policy).await;
    }
    // The steady state of a later session: files settled, then verified
    // once and remembered (the cache keeps no record of a file changed in
    // the last second).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    {
        let host = host(Some(&cache));
        PluginSet::load(&host, &sources(PLUGINS), &policy).await;
    }
    let mut cached = Vec::new();
    for _ in 0..21 {
        let start = Instant::now();
        let host = host(Some(&cache));
        let set = PluginSet::load(&host, &sources(PLUGINS), &policy).await;
        cached.push(start.elapsed());
        assert!(set.failed.is_empty());
    }
    let compile_med = median(&mut compile);
    let cached_med = median(&mut cached);
    println!(
        "cold start, {} plugins, compiling                 median {:>9.2} ms",
        PLUGINS.len(),
        compile_med.as_secs_f64() * 1e3
    );
    println!(
        "cold start, {} plugins, from the cache            median {:>9.2} ms   budget 30 ms → {:.2}× of budget; {:.0}× faster than compiling",
        PLUGINS.len(),
        cached_med.as_secs_f64() * 1e3,
        cached_med.as_secs_f64() / 0.030,
        compile_med.as_secs_f64() / cached_med.as_secs_f64()
    );
    let rust_only = ["hello", "counter", "fs-probe", "hostile"];
    let mut rust_cached = Vec::new();
    for _ in 0..21 {
        let start = Instant::now();
        let host = host(Some(&cache));
        PluginSet::load(&host, &sources(&rust_only), &policy).await;
        rust_cached.push(start.elapsed());
    }
    println!(
        "cold start, {} Rust plugins, from the cache       median {:>9.2} ms",
        rust_only.len(),
        median(&mut rust_cached).as_secs_f64() * 1e3
    );

    // One component alone: remembered (mapped, no hashing), and checked
    // again (the records removed before each load: read, hash, check, as
    // every load did before the records).
    let verified = std::fs::read_dir(&cache)
        .expect("cache")
        .map(|entry| entry.expect("entry").path().join("verified"))
        .find(|dir| dir.is_dir())
        .expect("the cache's records");
    for (name, budget) in [("py-echo", 10.0), ("hello", 1.0)] {
        let mut remembered = Vec::new();
        let mut checked = Vec::new();
        // The engine is made once per process: only the load is timed.
        let host = host(Some(&cache));
        for _ in 0..21 {
            let start = Instant::now();
            PluginSet::load(&host, &sources(&[name]), &policy).await;
            remembered.push(start.elapsed());
        }
        for _ in 0..11 {
            std::fs::remove_dir_all(&verified).expect("removing the records");
            let start = Instant::now();
            PluginSet::load(&host, &sources(&[name]), &policy).await;
            checked.push(start.elapsed());
        }
        let remembered = median(&mut remembered).as_secs_f64() * 1e3;
        println!(
            "cold start, {name:<8} from the cache, remembered     median {remembered:>9.2} ms   budget {budget} ms → {:.2}× of budget",
            remembered / budget
        );
        println!(
            "cold start, {name:<8} from the cache, checked again  median {:>9.2} ms",
            median(&mut checked).as_secs_f64() * 1e3
        );
    }

    // Dispatch.
    let host = host(Some(&cache));
    let set = PluginSet::load(&host, &sources(PLUGINS), &policy).await;
    let n = 20_000;
    let warm = time_calls(&set.registry, &ctx, "Noop", "{}", n).await;
    report(
        "dispatch, trivial tool, warm instance",
        &warm,
        Some(Duration::from_micros(20)),
    );
    let fresh = time_calls(&set.registry, &ctx, "Greet", r#"{"name":"x"}"#, n / 4).await;
    report("dispatch, trivial tool, fresh instance", &fresh, None);
    let python = time_calls(&set.registry, &ctx, "PyEcho", r#"{"text":"x"}"#, 500).await;
    report("dispatch, Python tool, fresh instance", &python, None);

    let (rss, hwm) = rss_kib();
    println!(
        "memory with {} plugins loaded: RSS {:.1} MiB, peak {:.1} MiB (pooling allocator: {})",
        PLUGINS.len(),
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
        host.engine().uses_pooling()
    );
}
