//! The learning memory of a session: the `[memory]` table, what a run
//! recalls and the `Memory` tool it gets.
//!
//! ```toml
//! [memory]                 # the user's config only
//! enabled = true           # false: no recall, no Memory tool
//! recall-tokens = 1000     # how much a session starts with, at most
//! ```

use crate::section::{self, Section};
use anyhow::Context as _;
use kaizen_memory::{MemoryStore, MemoryTool, project_identity, recall};
use kaizen_tools::ToolRegistry;
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The store's file under `KAIZEN_HOME`.
const STORE: &str = "memory.sqlite";
/// What a session starts with by default, in tokens of entries.
const RECALL_TOKENS: usize = 1_000;
/// Bytes a token takes, roughly, to bound the recalled text.
const BYTES_PER_TOKEN: usize = 4;

/// The `[memory]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MemorySection {
    /// Whether runs recall and get the `Memory` tool.
    pub enabled: Option<bool>,
    /// How much a session starts with, in tokens of entries (counted as
    /// four bytes each).
    pub recall_tokens: Option<usize>,
}

impl Section for MemorySection {
    const KEY: &'static str = "[memory]";
    const SCOPE: section::Scope =
        section::Scope::User("the learning memory is set in the user's config only");

    fn is_set(&self) -> bool {
        self.enabled.is_some() || self.recall_tokens.is_some()
    }

    fn merge(&mut self, over: Self) {
        *self = over;
    }
}

/// Gives a run in `workspace` its memory: the `Memory` tool in `registry`
/// (the user's scope only when `trusted`), and the recalled entries for
/// `task` as a system prompt section. `None` when memory is off.
pub fn for_run(
    home: &Path,
    section: &MemorySection,
    workspace: &Path,
    trusted: bool,
    task: &str,
    registry: &mut ToolRegistry,
) -> anyhow::Result<Option<String>> {
    if section.enabled == Some(false) {
        return Ok(None);
    }
    let project = project_identity(workspace);
    let store = open(home)?;
    // What an older Kaizen kept under the path alone is this project's
    // only when the user trusts the workspace: an untrusted repository at
    // a reused path does not inherit it.
    if trusted {
        let legacy = kaizen_memory::project_path(&project);
        store.adopt(legacy, &project)?;
    }
    let recalled = recall(
        &store,
        task,
        &project,
        section.recall_tokens.unwrap_or(RECALL_TOKENS) * BYTES_PER_TOKEN,
    )?;
    let tool = MemoryTool::new(Arc::new(Mutex::new(store)), project, trusted);
    registry
        .register(Arc::new(tool))
        .context("adding the Memory tool")?;
    Ok(recalled.prompt())
}

/// Entries `/memory` shows, at most.
const SHOWN: usize = 50;

/// What `/memory` answers for a session in `workspace`: the instruction
/// files its system prompt was given, what Kaizen's memory holds for the
/// user and the project (most recently used first), and how to change
/// either. Headless, there is no editor to open, as Claude Code's does.
pub fn overview(home: &Path, section: &MemorySection, workspace: &Path) -> String {
    let mut text =
        String::from("Project instructions (read into the system prompt when a session starts): ");
    let files: Vec<String> = kaizen_loop::INSTRUCTION_FILES
        .iter()
        .map(|name| workspace.join(name))
        .filter_map(|path| {
            let size = std::fs::metadata(&path).ok().filter(|m| m.is_file())?.len();
            Some(format!("{} ({size} bytes)", path.display()))
        })
        .collect();
    if files.is_empty() {
        text.push_str(&format!(
            "none; write {} in {} to give every session instructions.",
            kaizen_loop::INSTRUCTION_FILES.join(", "),
            workspace.display()
        ));
    } else {
        text.push_str(&files.join(", "));
        text.push('.');
    }
    text.push_str("\n\n");
    if section.enabled == Some(false) {
        text.push_str("Kaizen's memory is off (`enabled = false` under [memory] in your config).");
        return text;
    }
    let project = project_identity(workspace);
    let entries = open(home).and_then(|store| Ok(store.recent(Some(&project), SHOWN)?));
    match entries {
        Ok(entries) if entries.is_empty() => text.push_str(
            "Kaizen's memory holds nothing for you or this project yet: the Memory tool saves \
             what sessions learn.",
        ),
        Ok(entries) => {
            text.push_str(&format!(
                "Kaizen's memory, yours and this project's, most recently used first{}:\n",
                if entries.len() == SHOWN {
                    format!(" (the first {SHOWN})")
                } else {
                    String::new()
                }
            ));
            for entry in &entries {
                text.push_str(&format!("- {}\n", kaizen_memory::entry_line(entry)));
            }
            text.push_str(
                "\nChange it with `kaizen memory add TEXT` and `kaizen memory rm ID`, or ask for it \
                 to be saved or forgotten (the Memory tool).",
            );
        }
        Err(err) => text.push_str(&format!("Kaizen's memory cannot be read: {err:#}")),
    }
    text
}

/// The memory store under `home`.
pub fn open(home: &Path) -> anyhow::Result<MemoryStore> {
    let path = home.join(STORE);
    MemoryStore::open(&path).with_context(|| format!("opening the memory store {}", path.display()))
}

/// The project of `cwd` (default: the current directory).
pub fn project(cwd: Option<&Path>) -> anyhow::Result<String> {
    let dir = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    Ok(project_identity(&dir))
}
