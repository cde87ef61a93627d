//! Round-trip latency of a sandboxed `true`: through the persistent shell
//! (`shell_run("bash", "true")`) and as a plain program (`run(true)`).
//! Prints the median and spread over 50 runs after a warm-up.
//!
//! `cargo bench -p kaizen-sandbox --bench shell`

use std::time::{Duration, Instant};

use kaizen_sandbox::{Command, Sandbox};

#[path = "../tests/common/mod.rs"]
mod common;

const RUNS: usize = 50;

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<28} median {:>7.3} ms   min {:>7.3} ms   p90 {:>7.3} ms   ({} runs)",
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() * 9 / 10]),
        samples.len()
    );
}

async fn measure<F, Fut>(mut f: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..5 {
        f().await;
    }
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        f().await;
        samples.push(start.elapsed());
    }
    samples
}

/// Runs `true` as a plain program in `sb`.
async fn run_true(sb: &Sandbox) {
    let out = sb
        .run(Command {
            program: "true".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let sb = Sandbox::new(common::policy(ws.path())).unwrap();
    rt.block_on(async {
        let shell = measure(|| async {
            let out = sb.shell_run("bash", "true", None).await.unwrap();
            assert_eq!(out.exit_code, Some(0));
        })
        .await;
        report("shell_run(\"bash\", \"true\")", shell);
        report("run(true)", measure(|| run_true(&sb)).await);
    });
    // The same with network granted: no network namespace to create.
    let mut policy = common::policy(ws.path());
    policy.network = true;
    let net = Sandbox::new(policy).unwrap();
    rt.block_on(async {
        report(
            "run(true), network granted",
            measure(|| run_true(&net)).await,
        );
    });
    let check = {
        let mut samples = Vec::new();
        for _ in 0..10 {
            let start = Instant::now();
            assert!(kaizen_sandbox::check().complete());
            samples.push(start.elapsed());
        }
        samples
    };
    report("check()", check);
}
