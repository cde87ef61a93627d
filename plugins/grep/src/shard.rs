//! Splitting a search across instances of this plugin, one per core: the
//! calling instance walks the top of the tree (a few levels, until there
//! are directories enough to share out), then hands contiguous runs of
//! those [`Unit`]s to `GrepShard` calls that the host runs at once (the
//! contract's `parallel` interface). Each walks and searches its units with
//! the same ignore rules, and the results are merged in walk order. Only
//! the files and count modes split: content mode's output is ordered line
//! by line and usually small.
//!
//! Natively (in the unit tests) the shards run one after another in the
//! same process, which exercises the same splitting and merging.

use kaizen_sdk::prelude::*;
use kaizen_sdk::serde::Serialize;
use kaizen_sdk::serde_json;
use std::path::Path;

use crate::search::{self, Mode, Options};
use crate::walk::Unit;

/// Fewest directories per shard worth splitting for: below this, a fresh
/// instance per shard costs more than it saves.
pub(crate) const MIN_DIRS: usize = 4;

/// Runs of units per shard running at once.
pub(crate) const RUNS_PER_SHARD: usize = 4;

/// The deepest level the top of the walk goes to find directories.
const MAX_DEPTH: usize = 4;

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
    /// The search's root, which `--glob` patterns are relative to.
    root: String,
    /// `--glob`.
    globs: Vec<String>,
    /// `--type`.
    file_type: Option<String>,
    /// What to walk and search, in walk order.
    units: Vec<Unit>,
}

/// What one shard found.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(crate = "kaizen_sdk::serde")]
pub(crate) struct Found {
    /// Files mode: each file with a match and its modification time (ms).
    pub files: Vec<(String, u64)>,
    /// Count mode: each file with matches and how many.
    pub counts: Vec<(String, u64)>,
    /// Files and directories that could not be read.
    pub unreadable: usize,
}

/// How deep to cut the walk of `root` so that there are directories
/// enough for `width` shards: the units at that depth.
pub(crate) fn plan(
    walker: &mut crate::walk::Walker<'_>,
    root: &Path,
    width: usize,
) -> std::io::Result<Vec<Unit>> {
    let mut units = walker.units(root, 1)?;
    for depth in 2..=MAX_DEPTH {
        if dirs(&units) >= 2 * MIN_DIRS * width {
            break;
        }
        let deeper = walker.units(root, depth)?;
        // Deeper only helps when it finds more directories to share out.
        if dirs(&deeper) <= dirs(&units) {
            break;
        }
        units = deeper;
    }
    Ok(units)
}

/// How many of `units` are directories.
pub(crate) fn dirs(units: &[Unit]) -> usize {
    units.iter().filter(|u| matches!(u, Unit::Dir(_))).count()
}

/// `units` cut into `width` contiguous runs with about as many
/// directories each.
pub(crate) fn runs(units: &[Unit], width: usize) -> Vec<&[Unit]> {
    let total = dirs(units).max(1);
    let mut runs = Vec::with_capacity(width);
    let (mut start, mut seen) = (0, 0);
    for (i, unit) in units.iter().enumerate() {
        if matches!(unit, Unit::Dir(_)) {
            seen += 1;
            if seen * width >= total * (runs.len() + 1) && runs.len() + 1 < width {
                runs.push(&units[start..=i]);
                start = i + 1;
            }
        }
    }
    runs.push(&units[start..]);
    runs.retain(|run| !run.is_empty());
    runs
}

/// The job for one run of units.
pub(crate) fn job(pattern: &str, options: &Options, root: &Path, units: &[Unit]) -> String {
    let job = Job {
        pattern: pattern.to_owned(),
        case_insensitive: options.case_insensitive,
        multiline: options.multiline,
        count: options.mode == Mode::Count,
        root: root.to_string_lossy().into_owned(),
        globs: options.globs.clone(),
        file_type: options.file_type.clone(),
        units: units.to_vec(),
    };
    serde_json::to_string(&job).expect("a job serializes")
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
        globs: job.globs,
        file_type: job.file_type,
        ..Options::default()
    };
    search::search_units(&job.pattern, &options, Path::new(&job.root), &job.units)
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
