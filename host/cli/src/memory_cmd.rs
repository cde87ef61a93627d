//! The learning memory in the CLI: the `[memory]` table, what a run
//! recalls and the `Memory` tool it gets, and `kaizen memory list |
//! search | add | rm | export`.
//!
//! ```toml
//! [memory]                 # the user's config only
//! enabled = true           # false: no recall, no Memory tool
//! recall-tokens = 1000     # how much a session starts with, at most
//! ```

use crate::section::{self, Section};
use anyhow::Context as _;
use kaizen_memory::{Kind, MemoryStore, MemoryTool, Scope, project_identity, recall};
use kaizen_tools::ToolRegistry;
use serde::Deserialize;
use std::path::{Path, PathBuf};
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

fn open(home: &Path) -> anyhow::Result<MemoryStore> {
    let path = home.join(STORE);
    MemoryStore::open(&path).with_context(|| format!("opening the memory store {}", path.display()))
}

/// The project of `cwd` (default: the current directory).
fn project(cwd: Option<&Path>) -> anyhow::Result<String> {
    let dir = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    Ok(project_identity(&dir))
}

/// `kaizen memory ...`.
#[derive(clap::Subcommand)]
pub enum MemoryCommand {
    /// The user's entries and this project's, oldest first.
    List {
        /// Every project's too.
        #[arg(long)]
        all: bool,
        /// JSON, one entry per line.
        #[arg(long)]
        json: bool,
        /// The project (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Entries matching any of these words, best first.
    Search {
        /// The words.
        query: String,
        /// JSON, one entry per line.
        #[arg(long)]
        json: bool,
        /// The project (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Remember something.
    Add {
        /// What to remember.
        text: String,
        /// preference, fact, correction or procedure.
        #[arg(long, default_value = "fact")]
        kind: String,
        /// The user's (recalled in every project) instead of this project's.
        #[arg(long)]
        user: bool,
        /// The project (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Forget an entry.
    Rm {
        /// Its id (`kaizen memory list` shows them).
        id: i64,
    },
    /// Every entry, every project's, as JSON lines.
    Export,
}

/// `kaizen memory ...`, in the project of its `--cwd` (default: the
/// current directory).
pub fn run(command: MemoryCommand) -> anyhow::Result<()> {
    let home = crate::config::kaizen_home()?;
    let store = open(&home)?;
    match command {
        MemoryCommand::List { all, json, cwd } => {
            let project = project(cwd.as_deref())?;
            let mut entries = store.list()?;
            if !all {
                entries.retain(|entry| match &entry.scope {
                    Scope::User => true,
                    Scope::Project(theirs) => *theirs == project,
                });
            }
            print(&entries, json)
        }
        MemoryCommand::Search { query, json, cwd } => {
            let project = project(cwd.as_deref())?;
            print(&store.search(&query, Some(&project), 20)?, json)
        }
        MemoryCommand::Add {
            text,
            kind,
            user,
            cwd,
        } => {
            let kind = Kind::parse(&kind)?;
            let scope = match user {
                true => Scope::User,
                false => Scope::Project(project(cwd.as_deref())?),
            };
            let id = store.save(&scope, kind, &text, None)?;
            println!("Saved as #{id}.");
            Ok(())
        }
        MemoryCommand::Rm { id } => match store.forget(id, None, true)? {
            true => {
                println!("Forgot #{id}.");
                Ok(())
            }
            false => {
                anyhow::bail!("there is no memory #{id}; `kaizen memory list --all` shows them")
            }
        },
        MemoryCommand::Export => print(&store.list()?, true),
    }
}

fn print(entries: &[kaizen_memory::Entry], json: bool) -> anyhow::Result<()> {
    for entry in entries {
        if json {
            println!("{}", serde_json::to_string(entry)?);
            continue;
        }
        let whose = match &entry.scope {
            Scope::User => "user".to_string(),
            Scope::Project(project) => kaizen_memory::project_path(project).to_string(),
        };
        println!(
            "#{:<5} {:<11} {}  ({whose})",
            entry.id,
            entry.kind.name(),
            entry.text
        );
    }
    Ok(())
}
