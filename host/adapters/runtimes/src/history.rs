//! Recent runs per runtime, kept in a JSON-lines file, for the selector to
//! weigh cost and latency by.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs kept per file; older lines are dropped when it grows past twice
/// this.
const KEPT: usize = 200;

/// How many of a runtime's latest runs count.
const RECENT: usize = 20;

/// One finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastRun {
    /// The runtime.
    pub runtime: String,
    /// The model it used.
    pub model: String,
    /// Its status.
    pub status: String,
    /// What it cost (reported or estimated).
    pub cost_usd: f64,
    /// How long it took.
    pub duration_ms: u64,
}

/// A runtime's recent record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    /// Runs counted.
    pub runs: usize,
    /// Median cost of those that completed.
    pub median_cost_usd: f64,
    /// Median duration of those that completed.
    pub median_duration_ms: u64,
}

/// The recent runs, read from a file.
#[derive(Debug, Clone, Default)]
pub struct History {
    path: Option<PathBuf>,
    runs: Vec<PastRun>,
}

impl History {
    /// The runs in `path`; none when it is missing. Lines that do not
    /// parse are left out: the history only ranks, it is never needed.
    pub fn load(path: &Path) -> Self {
        let runs = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        Self {
            path: Some(path.to_path_buf()),
            runs,
        }
    }

    /// A history of `runs`, kept nowhere.
    pub fn of(runs: Vec<PastRun>) -> Self {
        Self { path: None, runs }
    }

    /// `runtime`'s completed recent runs on `model` (on any model when
    /// `None`), if it has any.
    pub fn record(&self, runtime: &str, model: Option<&str>) -> Option<Record> {
        let mut recent: Vec<&PastRun> = self
            .runs
            .iter()
            .rev()
            .filter(|run| run.runtime == runtime && run.status == "complete")
            .filter(|run| model.is_none_or(|model| run.model == model))
            .take(RECENT)
            .collect();
        if recent.is_empty() {
            return None;
        }
        recent.sort_by(|a, b| a.cost_usd.total_cmp(&b.cost_usd));
        let median_cost_usd = recent[recent.len() / 2].cost_usd;
        recent.sort_by_key(|run| run.duration_ms);
        Some(Record {
            runs: recent.len(),
            median_cost_usd,
            median_duration_ms: recent[recent.len() / 2].duration_ms,
        })
    }

    /// Adds `run`, to the file too when there is one.
    pub fn add(&mut self, run: PastRun) -> std::io::Result<()> {
        self.runs.push(run.clone());
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if self.runs.len() > 2 * KEPT {
            self.runs.drain(..self.runs.len() - KEPT);
            let text: String = self
                .runs
                .iter()
                .filter_map(|run| serde_json::to_string(run).ok())
                .map(|line| line + "\n")
                .collect();
            return std::fs::write(path, text);
        }
        let mut line = serde_json::to_vec(&run)?;
        line.push(b'\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?
            .write_all(&line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(runtime: &str, status: &str, cost: f64, ms: u64) -> PastRun {
        PastRun {
            runtime: runtime.into(),
            model: "m".into(),
            status: status.into(),
            cost_usd: cost,
            duration_ms: ms,
        }
    }

    #[test]
    fn medians_count_only_completed_runs() {
        let history = History::of(vec![
            run("a", "complete", 0.3, 30),
            run("a", "complete", 0.1, 10),
            run("a", "error", 9.0, 1),
            run("a", "complete", 0.2, 90),
        ]);
        let record = history.record("a", None).unwrap();
        assert_eq!(record.runs, 3);
        assert_eq!(record.median_cost_usd, 0.2);
        assert_eq!(record.median_duration_ms, 30);
        assert_eq!(history.record("b", None), None);
        assert_eq!(history.record("a", Some("other")), None);
    }

    #[test]
    fn runs_are_kept_in_the_file_and_bad_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h/history.jsonl");
        let mut history = History::load(&path);
        history.add(run("a", "complete", 0.5, 5)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"not json\n")
            .unwrap();
        let again = History::load(&path);
        assert_eq!(again.record("a", None).unwrap().median_cost_usd, 0.5);
    }
}
