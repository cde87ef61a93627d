//! `kaizen memory list | search | add | rm | export`: what sessions
//! learned.

use kaizen_app::memory_setup::{open, project};
use kaizen_memory::{Kind, Scope};
use std::path::PathBuf;

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
    let home = kaizen_app::config::kaizen_home()?;
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
