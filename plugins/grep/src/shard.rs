//! Splitting a search over many files across instances of this plugin:
//! the calling instance walks the tree, then hands contiguous runs of the
//! files to `GrepShard` calls that the host runs at once (the contract's
//! `parallel` interface), one per core, and merges what they found in the
//! walk's order. Only the files and count modes split: content mode's
//! output is ordered line by line and usually small.
//!
//! Natively (in the unit tests) the shards run one after another in the
//! same process, which exercises the same splitting and merging.

use kaizen_sdk::prelude::*;
use kaizen_sdk::serde::Serialize;
use kaizen_sdk::serde_json;

use crate::fs::Fs;
use crate::search::{self, Mode, Options};

/// Fewest files worth splitting: below this, a fresh instance per shard
/// costs more than it saves.
pub(crate) const MIN_FILES: usize = 512;

/// The internal tool each shard is.
pub(crate) const TOOL: &str = "GrepShard";

/// One shard's job.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "kaizen_sdk::serde")]
pub(crate) struct Job {
    /// The regex.
    pattern: String,
    /// `-i`.
    case_insensitive: bool,
    /// `-U`.
    multiline: bool,
    /// Count matching lines (else: find files with a match).
    count: bool,
    /// Absolute paths of the files to search, in walk order.
    files: Vec<String>,
}

/// What one shard found.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(crate = "kaizen_sdk::serde")]
pub(crate) struct Found {
    /// Files mode: each file with a match and its modification time (ms).
    pub files: Vec<(String, u64)>,
    /// Count mode: each file with matches and how many.
    pub counts: Vec<(String, u64)>,
    /// Files that could not be read.
    pub unreadable: usize,
}

/// The shards' jobs for `files`: one contiguous run per shard.
pub(crate) fn jobs(
    pattern: &str,
    options: &Options,
    files: &[String],
    width: usize,
) -> Vec<String> {
    let shards = width.min(files.len()).max(1);
    (0..shards)
        .map(|i| {
            let run = &files[i * files.len() / shards..(i + 1) * files.len() / shards];
            let job = Job {
                pattern: pattern.to_owned(),
                case_insensitive: options.case_insensitive,
                multiline: options.multiline,
                count: options.mode == Mode::Count,
                files: run.to_vec(),
            };
            serde_json::to_string(&job).expect("a job serializes")
        })
        .collect()
}

/// Runs one shard's job: what `GrepShard` does.
pub(crate) fn serve(job: Job) -> Result<Found, ToolError> {
    let options = Options {
        mode: if job.count {
            Mode::Count
        } else {
            Mode::FilesWithMatches
        },
        case_insensitive: job.case_insensitive,
        multiline: job.multiline,
        ..Options::default()
    };
    search::search_files(&Fs::new(), &job.pattern, &options, &job.files)
}

/// The internal tool a shard runs as: never listed, so no model sees it.
pub(crate) struct GrepShard;

impl Tool for GrepShard {
    const NAME: &'static str = TOOL;
    const DESCRIPTION: &'static str = "One part of a Grep split across instances.";
    const READ_ONLY: bool = true;
    const DANGER: Danger = Danger::Safe;
    const INTERNAL: bool = true;
    type Input = Job;

    fn call(_ctx: &CallContext, job: Job) -> Result<Output, ToolError> {
        let found = serve(job)?;
        Ok(Output::text(
            serde_json::to_string(&found).expect("a shard's result serializes"),
        ))
    }
}

/// How many shards run at once; 1 when the host does not split work.
pub(crate) fn width() -> usize {
    host::width()
}

/// Runs the jobs, at once where the host can; each shard's result.
pub(crate) fn run(jobs: Vec<String>) -> Vec<Result<Found, String>> {
    host::call_each(TOOL, jobs)
        .into_iter()
        .map(|result| {
            result.and_then(|text| {
                serde_json::from_str(&text)
                    .map_err(|err| format!("a shard's result does not parse: {err}"))
            })
        })
        .collect()
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod host {
    use kaizen_sdk::host::parallel;

    pub fn width() -> usize {
        parallel::width() as usize
    }

    pub fn call_each(name: &str, jobs: Vec<String>) -> Vec<Result<String, String>> {
        parallel::call_each(name, &jobs)
    }
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
mod host {
    //! One after another, in this process.

    pub fn width() -> usize {
        2
    }

    pub fn call_each(_name: &str, jobs: Vec<String>) -> Vec<Result<String, String>> {
        jobs.into_iter()
            .map(|job| {
                let job = kaizen_sdk::serde_json::from_str(&job).map_err(|e| e.to_string())?;
                let found = super::serve(job).map_err(|e| e.message().to_owned())?;
                Ok(kaizen_sdk::serde_json::to_string(&found).expect("serializes"))
            })
            .collect()
    }
}
