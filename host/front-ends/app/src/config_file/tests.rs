//! The effective configuration: every section a workspace's file sets
//! either takes effect or is noted.

use super::*;

/// A `kaizen.toml` that sets every section.
const EVERYTHING: &str = r#"
[plugins]
dirs = ["tools"]
add-dirs = [{ path = "data", access = "read-only" }]
max-memory-mib = 64
require-signature = true
trusted-keys = ["RWQ"]

[grants.x]
http = ["example.com"]

[pricing]
"gpt-x" = { input = 1.0, output = 2.0, cached_input = 0.5 }

[sandbox]
read = ["/opt"]
allow-degraded = true
max-processes = 7

[[http.credentials]]
host = "example.com"
header = "Authorization"
env = "TOKEN"
plugins = ["x"]

[sessions]
keep-checkpoints = 2

[hooks]
command-network = true

[mcp]
serve-token-env = "T"

[mcp_servers.s]
command = "srv"

[models]
planner = "small"

[plugin-llm]
max-calls = 3

[sub-agent-models]
Explore = "small"

[fallbacks]
main = ["other"]

[planner]
name = "reflexion"

[planners.reflexion]
x = 1

[context]
compact = false

[memory]
enabled = false
"#;

/// The user's file (`user`) with a workspace's (`project`) over it, in a
/// workspace that is `trusted` or not; the notes on what was left out.
fn effective_of(user: &str, project: &str, trusted: bool) -> (ConfigFile, Vec<String>) {
    let file = Path::new("/ws/kaizen.toml");
    let project = ConfigFile::parse(project, file).unwrap();
    let user = ConfigFile::parse(user, Path::new("/u")).unwrap();
    let mut notes = Vec::new();
    let mut admission = Admission {
        trusted,
        workspace: Path::new("/ws"),
        notes: &mut notes,
    };
    let home = Path::new("/home/u/.kaizen");
    let (config, _) = ConfigFile::effective(
        user,
        &home.join(USER_CONFIG),
        home,
        project,
        file,
        &mut admission,
    )
    .unwrap();
    (config, notes)
}

fn merged(trusted: bool) -> (ConfigFile, Vec<String>) {
    effective_of("[plugins]\nmax-memory-mib = 128\n", EVERYTHING, trusted)
}

const USER_ONLY: [&str; 9] = [
    "[pricing]",
    "[[http.credentials]]",
    "[hooks]",
    "[mcp]",
    "[mcp_servers]",
    "[plugin-llm]",
    "[memory]",
    "[plugins] require-signature and trusted-keys",
    "[sandbox] allow-degraded",
];

const NEEDS_TRUST: [&str; 10] = [
    "[grants.x]",
    "[models]",
    "[sub-agent-models]",
    "[fallbacks]",
    "[planner]",
    "[planners]",
    "[context]",
    "[plugins] add-dirs",
    "[plugins] dirs",
    "[sandbox] read",
];

fn noted(notes: &[String], key: &str) -> bool {
    notes
        .iter()
        .any(|note| note.starts_with(&format!("{PROJECT_CONFIG}: {key} (")))
}

#[test]
fn an_untrusted_workspace_gets_only_what_concerns_it_alone() {
    let (config, notes) = merged(false);
    for key in USER_ONLY.iter().chain(&NEEDS_TRUST) {
        assert!(noted(&notes, key), "{key} not noted: {notes:#?}");
    }
    assert_eq!(
        notes.len(),
        USER_ONLY.len() + NEEDS_TRUST.len(),
        "{notes:#?}"
    );
    // What applies anyway: session keeping, and limits, which only lower.
    assert_eq!(config.sessions.keep_checkpoints, Some(2));
    assert_eq!(config.plugins.max_memory_mib, Some(64));
    assert_eq!(config.sandbox.max_processes, Some(7));
    assert!(config.grants.is_empty() && config.models.0.is_empty());
    assert!(config.plugins.workspace_dirs.is_empty() && config.sandbox.read.is_empty());
    assert!(!config.sandbox.allow_degraded && !config.plugins.require_signature);
}

#[test]
fn a_trusted_workspace_still_cannot_set_what_is_the_users() {
    let (config, notes) = merged(true);
    for key in USER_ONLY {
        assert!(noted(&notes, key), "{key} not noted: {notes:#?}");
    }
    // `/opt` is outside the workspace: only the user's config may name it.
    assert!(
        notes
            .iter()
            .any(|note| note.contains("[sandbox] read /opt (outside the workspace")),
        "{notes:#?}"
    );
    assert_eq!(notes.len(), USER_ONLY.len() + 1, "{notes:#?}");
    assert!(config.grants.contains_key("x"));
    assert_eq!(config.models.0["planner"], "small");
    assert_eq!(config.planner.name.as_deref(), Some("reflexion"));
    assert_eq!(config.plugins.workspace_dirs, [PathBuf::from("/ws/tools")]);
    assert_eq!(config.plugins.add_dirs[0].path, PathBuf::from("/ws/data"));
    assert!(config.pricing.is_empty() && config.mcp_servers.is_empty());
    assert_eq!(config.plugin_llm.max_calls, None);
}

#[test]
fn a_workspace_cannot_raise_a_limit_the_user_set() {
    let (config, _) = effective_of(
        "[plugins]\nmax-memory-mib = 128\n",
        "[plugins]\nmax-memory-mib = 4096\n",
        true,
    );
    assert_eq!(config.plugins.max_memory_mib, Some(128));
}
