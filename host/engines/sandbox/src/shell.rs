//! Persistent shells on top of one-shot sandboxes.
//!
//! Each `shell_run` is a fresh `/bin/bash` in its own sandbox; what persists
//! between calls — the working directory and the exported variables — is kept
//! by the host. The script runs wrapped: an EXIT trap writes `pwd -P` and the
//! exported environment to a per-call state file (builtins only, no fork),
//! stderr is merged into stdout, and the script is `eval`ed so that a syntax
//! error or an `exit 3` still ends in the trap. A missing or corrupt state
//! file (the script removed the trap, or was killed) keeps the old state.

use std::path::{Path, PathBuf};

/// Scripts longer than this travel in a file rather than on the command line
/// (the kernel caps one argument at 128 KiB).
pub(crate) const MAX_INLINE_SCRIPT: usize = 100 * 1024;

/// Variables bash maintains itself: never carried between calls.
const SHELL_OWNED: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

/// Variables that make a later call run code it does not show (a startup
/// file, a prompt hook, a preloaded library, an exported function
/// standing in for a command) or read its words differently: one call
/// may set them for itself, but they are never carried to the next, so an
/// innocent-looking call runs what its text says.
const NEVER_CARRIED: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS0",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "EXECIGNORE",
    "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH",
    "INPUTRC",
];

/// Prefixes of variables never carried, as [`NEVER_CARRIED`]: exported
/// functions (`BASH_FUNC_name%%`) and the dynamic loader's (`LD_PRELOAD`,
/// `LD_LIBRARY_PATH`, `LD_AUDIT`, ...).
const NEVER_CARRIED_PREFIXES: &[&str] = &["BASH_FUNC_", "LD_"];

/// Whether `name` may be carried to the next call.
fn carried(name: &str) -> bool {
    !SHELL_OWNED.contains(&name)
        && !NEVER_CARRIED.contains(&name)
        && !NEVER_CARRIED_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// What a named shell remembers between calls.
#[derive(Debug, Clone)]
pub(crate) struct ShellState {
    /// Working directory for the next call.
    pub cwd: PathBuf,
    /// The complete environment for the next call.
    pub env: Vec<(String, String)>,
}

/// Where the script text comes from.
#[derive(Debug)]
pub(crate) enum Body<'a> {
    /// On the command line.
    Inline(&'a str),
    /// In a file (long scripts).
    File(&'a Path),
}

/// Quotes a string for bash (single quotes).
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The EXIT trap that saves `pwd -P` and the exported variables (as
/// `export -p` prints them: see [`crate::exports`]), each followed by a
/// NUL, so that a file cut short is seen as such.
fn save_state_trap(state: &Path) -> String {
    let body = format!(
        "__kz_rc=$?; {{ builtin pwd -P; builtin printf '\\0'; builtin export -p; \
         builtin printf '\\0'; }} 2>/dev/null >{state}; builtin exit $__kz_rc",
        state = quote(&state.to_string_lossy()),
    );
    format!("trap {} EXIT\n", quote(&body))
}

/// The text handed to `bash -c`. With `state`, the call saves its state and
/// merges stderr into stdout (a foreground call); without, it is a job.
pub(crate) fn wrapper(body: Body<'_>, state: Option<&Path>) -> String {
    let mut text = String::new();
    if let Some(state) = state {
        text.push_str(&save_state_trap(state));
        text.push_str("exec 2>&1\n");
    }
    match body {
        Body::Inline(script) => text.push_str(&format!("eval {}\n", quote(script))),
        Body::File(path) => text.push_str(&format!(
            "eval \"$(< {})\"\n",
            quote(&path.to_string_lossy())
        )),
    }
    text
}

/// A parsed state file: the new cwd, if usable, and the environment.
pub(crate) type Saved = (Option<PathBuf>, Vec<(String, String)>);

/// Parses a state file: `cwd "\n\0"`, then what `export -p` printed,
/// then `"\0"`. Returns the new cwd (if it was readable and absolute) and
/// the environment to carry, or `None` when the file is not a complete
/// state file.
pub(crate) fn parse_state(bytes: &[u8]) -> Option<Saved> {
    let body = bytes.strip_suffix(b"\0")?;
    let (cwd, exports) = body.split_at(body.iter().position(|&b| b == 0)?);
    let cwd = cwd
        .strip_suffix(b"\n")
        .and_then(|c| std::str::from_utf8(c).ok())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let env = crate::exports::parse(&exports[1..])
        .into_iter()
        // Not valid UTF-8: our API carries Strings.
        .filter_map(|(name, value)| Some((name, String::from_utf8(value).ok()?)))
        .filter(|(name, _)| carried(name))
        .collect();
    Some((cwd, env))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_survives_single_quotes() {
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn parses_state() {
        let (cwd, env) = parse_state(
            b"/w/sub\n\0declare -x A=\"1\"\ndeclare -x B=$'x\\ny=z'\ndeclare -x PWD=\"/w\"\n\0",
        )
        .unwrap();
        assert_eq!(cwd, Some(PathBuf::from("/w/sub")));
        assert_eq!(
            env,
            vec![("A".into(), "1".into()), ("B".into(), "x\ny=z".into())]
        );
    }

    #[test]
    fn what_would_run_hidden_code_in_the_next_call_is_not_carried() {
        let (_, env) = parse_state(
            b"/w\n\0declare -x BASH_ENV=\"/w/evil.sh\"\ndeclare -x ENV=\"/w/e\"\n\
              declare -x LD_PRELOAD=\"/w/x.so\"\ndeclare -x PROMPT_COMMAND=\"rm\"\n\
              declare -x IFS=\"/\"\ndeclare -x KEEP=\"1\"\ndeclare -x PATH=\"/usr/bin\"\n\0",
        )
        .unwrap();
        assert_eq!(
            env,
            vec![
                ("KEEP".into(), "1".into()),
                ("PATH".into(), "/usr/bin".into())
            ]
        );
    }

    #[test]
    fn rejects_incomplete_state() {
        assert!(parse_state(b"").is_none());
        assert!(parse_state(b"/w\n\0declare -x A=\"1\"\n").is_none());
        let (cwd, env) = parse_state(b"\0declare -x A=\"1\"\n\0").unwrap();
        assert_eq!(cwd, None);
        assert_eq!(env.len(), 1);
    }
}
