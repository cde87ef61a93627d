//! Recall with 10 000 entries: what a session start pays to find the
//! entries most relevant to its task (BM25 over FTS5, then the most
//! recent, within the default budget), from a store on disk, warm. Prints
//! the median against the 5 ms budget of docs/budgets.md; asserts nothing
//! about time.
//!
//! Run with `cargo bench -p kaizen-memory --bench recall`.

use kaizen_memory::{Kind, MemoryStore, Scope, recall};
use std::time::{Duration, Instant};

const ENTRIES: usize = 10_000;
const RUNS: usize = 101;
const BUDGET: Duration = Duration::from_millis(5);

/// Distinct words in the store's vocabulary.
const VOCABULARY: usize = 5_000;

/// A deterministic entry: a few common English words and a dozen from the
/// vocabulary, drawn log-uniformly (a few words are everywhere, most are
/// rare), as real notes are.
fn text(i: usize) -> String {
    let mut x = (i as u64).wrapping_mul(2_654_435_761) % 1_000_003 + 1;
    let mut words = vec!["the", "build", "with"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    for _ in 0..12 {
        x = x * 48_271 % 2_147_483_647;
        let u = x as f64 / 2_147_483_647.0;
        let rank = (VOCABULARY as f64).powf(u) as usize;
        words.push(format!("term{rank}"));
    }
    words.join(" ")
}

fn main() {
    let dir = tempfile::tempdir().expect("dir");
    let store = MemoryStore::open(&dir.path().join("memory.sqlite")).expect("store");
    let filled = Instant::now();
    for i in 0..ENTRIES {
        // A tenth the user's, the rest spread over ten projects.
        let scope = match i % 10 {
            0 => Scope::User,
            n => Scope::Project(format!("/projects/{n}")),
        };
        let kind = [
            Kind::Fact,
            Kind::Procedure,
            Kind::Preference,
            Kind::Correction,
        ][i % 4];
        store
            .save(&scope, kind, &format!("{} #{i}", text(i)), None)
            .expect("save");
    }
    let filled = filled.elapsed();
    // Common and rarer words, as a task mentions them.
    let task = "Fix the build: the term3 step fails with term42 and term777 after the term1500 change to term4100";
    let mut times = Vec::with_capacity(RUNS);
    let mut recalled = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        recalled = recall(&store, task, "/projects/3", 4_000)
            .expect("recall")
            .entries
            .len();
        times.push(start.elapsed());
    }
    times.sort();
    let median = times[RUNS / 2];
    let mut searches: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            store.search(task, Some("/projects/3"), 40).expect("search");
            start.elapsed()
        })
        .collect();
    searches.sort();
    println!(
        "search alone (40 best of the user's and the project's): median {:.2} ms",
        searches[RUNS / 2].as_secs_f64() * 1e3
    );
    println!(
        "recall: {ENTRIES} entries (filled in {:.1} s), {recalled} recalled: median {:.2} ms, p90 {:.2} ms (budget {} ms, {:.2}x)",
        filled.as_secs_f64(),
        median.as_secs_f64() * 1e3,
        times[RUNS * 9 / 10].as_secs_f64() * 1e3,
        BUDGET.as_millis(),
        median.as_secs_f64() / BUDGET.as_secs_f64(),
    );
}
