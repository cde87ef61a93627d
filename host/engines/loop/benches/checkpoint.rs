//! What keeping a session costs: a 100-cycle session whose tool results
//! are real source text (4 to 16 KiB each, from this crate's files), run
//! through the loop with an instant model, once kept by a
//! `SessionRecorder` (log every entry, checkpoint every 10 cycles and at
//! the end, as by default) and once not kept at all. Prints the median
//! extra time per cycle, the checkpoint write time and size at the end
//! (compressed, and raw for comparison), and the log's size.
//!
//! `cargo bench -p kaizen-loop --bench checkpoint`

use kaizen_llm::{
    Block, CompletionFuture, EventSink, Provider, Request, Response, StopReason, Usage,
};
use kaizen_loop::{Agent, AgentConfig, CheckpointPolicy, Journal, SessionRecorder, SessionState};
use kaizen_protocol::{CancellationToken, Silent, Status};
use kaizen_session_store::{SessionMeta, SessionStore};
use kaizen_tools::{CallContext, Danger, Tool, ToolFuture, ToolOutput, ToolRegistry, ToolSpec};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const CYCLES: usize = 100;
const RUNS: usize = 7;

/// Calls `Read` until the last cycle, then answers.
struct Model(AtomicUsize);

impl Provider for Model {
    fn name(&self) -> &str {
        "bench"
    }
    fn complete<'a>(&'a self, _: &'a Request, _: EventSink<'a>) -> CompletionFuture<'a> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let mut content = vec![Block::Text {
                text: format!("Reading the next file ({n})."),
            }];
            let done = n + 1 >= CYCLES;
            if !done {
                content.push(Block::ToolUse {
                    id: format!("call_{n}"),
                    name: "Read".into(),
                    arguments: json!({"file_path": format!("/w/src/file_{n}.rs")}).to_string(),
                });
            }
            Ok(Response {
                content,
                usage: Usage {
                    input_tokens: 1000 + 400 * n as u64,
                    output_tokens: 60,
                    ..Usage::default()
                },
                stop_reason: if done {
                    StopReason::EndTurn
                } else {
                    StopReason::ToolUse
                },
                model: "bench-model".into(),
            })
        })
    }
}

/// Returns source text, as `Read` would.
struct Reader {
    spec: ToolSpec,
    texts: Vec<String>,
    next: AtomicUsize,
}

impl Tool for Reader {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn source(&self) -> &str {
        "bench"
    }
    fn call<'a>(&'a self, ctx: &'a CallContext, input: &'a serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let path = input["file_path"].as_str().unwrap_or_default();
            ctx.notes.note_file(
                path,
                kaizen_tools::FileRecord {
                    hash: blake3_like(n),
                    mtime_ms: n as u64,
                },
            );
            Ok(ToolOutput::text(self.texts[n % self.texts.len()].clone()))
        })
    }
}

fn blake3_like(n: usize) -> String {
    format!("{n:064x}")
}

/// Pieces of this crate's sources between 4 and 16 KiB, numbered as Read
/// numbers lines.
fn texts() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut sources = String::new();
    for entry in walk(std::path::Path::new(dir)) {
        sources.push_str(&std::fs::read_to_string(entry).unwrap_or_default());
    }
    let lines: Vec<&str> = sources.lines().collect();
    let mut texts = Vec::new();
    let mut at = 0;
    for size in [4 << 10, 8 << 10, 16 << 10, 6 << 10, 12 << 10]
        .iter()
        .cycle()
        .take(20)
    {
        let mut text = String::new();
        while text.len() < *size {
            let line = lines[at % lines.len()];
            text.push_str(&format!("{:>6}\t{line}\n", at % 2000 + 1));
            at += 1;
        }
        texts.push(text);
    }
    texts
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(Reader {
            spec: ToolSpec {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type": "object"}),
                danger: Danger::Safe,
                read_only: true,
            },
            texts: texts(),
            next: AtomicUsize::new(0),
        }))
        .unwrap();
    registry
}

/// One session; its wall time and final state.
async fn session(journal: Option<Arc<dyn Journal>>, id: &str) -> (Duration, SessionState) {
    let tools = registry();
    let provider = Model(AtomicUsize::new(0));
    let pricing = |_: &str, _: &Usage| 0.0;
    let mut config = AgentConfig::new("bench-model", "/w");
    config.max_cycles = CYCLES as u32 + 1;
    let agent = Agent {
        provider: &provider,
        tools: &tools,
        pricing: &pricing,
        config,
        observer: &Silent,
        journal,
        guard: Arc::new(kaizen_loop::Guard::allow_all()),
    };
    let mut state = SessionState::new(id, "bench-model");
    let started = Instant::now();
    let result = agent
        .run(&mut state, "Read every file.", &CancellationToken::new())
        .await;
    let took = started.elapsed();
    assert_eq!(result.status, Status::Complete);
    assert_eq!(result.cycles_used as usize, CYCLES);
    (took, state)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("run with `cargo bench -p kaizen-loop --bench checkpoint`");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::open(home.path().join("sessions")).unwrap();
    let (mut bare, mut kept) = (Vec::new(), Vec::new());
    let mut last = None;
    // Taking turns, so that load from elsewhere falls on both alike.
    for run in 0..=RUNS {
        let (took, _) = rt.block_on(session(None, "bare"));
        let id = format!("kept-{run}");
        store
            .create(&SessionMeta::new(&id, "bench", "bench-model", "/w"))
            .unwrap();
        let state = SessionState::new(&id, "bench-model");
        let recorder =
            SessionRecorder::new(store.clone(), &id, 0, CheckpointPolicy::default(), &state)
                .unwrap();
        let (took_kept, state) = rt.block_on(session(Some(Arc::new(recorder)), &id));
        if run > 0 {
            bare.push(took);
            kept.push(took_kept);
        }
        last = Some((id, state));
    }
    let (id, state) = last.unwrap();
    let per_cycle = |d: Duration| ms(d) / CYCLES as f64;
    let (bare, kept) = (median(bare), median(kept));
    println!("session of {CYCLES} cycles, tool results 4-16 KiB of source ({RUNS} runs, medians)");
    println!(
        "  loop alone        {:>8.2} ms   {:.3} ms/cycle",
        ms(bare),
        per_cycle(bare)
    );
    println!(
        "  loop, kept        {:>8.2} ms   {:.3} ms/cycle   (+{:.3} ms/cycle for the log and 11 checkpoints)",
        ms(kept),
        per_cycle(kept),
        per_cycle(kept.saturating_sub(bare))
    );

    let dir = store.dir(&id).unwrap();
    let log = std::fs::metadata(dir.join("events.jsonl")).unwrap().len();
    let raw_json = serde_json::to_vec(&state).unwrap().len();
    let mut writes = Vec::new();
    let mut size = 0;
    for _ in 0..11 {
        let started = Instant::now();
        size = store.write_checkpoint(&id, 1, &state).unwrap();
        writes.push(started.elapsed());
    }
    let raw_store = store.clone().with_checkpoints(5, usize::MAX);
    let mut raw_writes = Vec::new();
    let mut raw_size = 0;
    for _ in 0..11 {
        let started = Instant::now();
        raw_size = raw_store.write_checkpoint(&id, 1, &state).unwrap();
        raw_writes.push(started.elapsed());
    }
    println!(
        "  final checkpoint  {:>8.2} ms   {:>8.1} KiB zstd   (state {:.1} KiB as JSON)",
        ms(median(writes)),
        size as f64 / 1024.0,
        raw_json as f64 / 1024.0
    );
    println!(
        "  uncompressed      {:>8.2} ms   {:>8.1} KiB",
        ms(median(raw_writes)),
        raw_size as f64 / 1024.0
    );
    println!("  event log         {:>8.1} KiB", log as f64 / 1024.0);
}
