//! What the splitter knows before it reads a line: how much it follows,
//! and the shells, wrappers and harmless variables by name.

/// Deeper nesting than this (substitutions in `bash -c` in `eval`…) is
/// refused rather than followed, so a crafted line cannot exhaust the stack.
pub(super) const MAX_DEPTH: usize = 12;
/// Longer lines are not parsed: no real command is this long.
pub(super) const MAX_LEN: usize = 64 * 1024;
/// The parser recurses once per nesting level (`$(` in `$(`…) and would
/// overflow the stack a few hundred levels down; deeper lines are refused.
pub(super) const MAX_NESTING: usize = 32;

/// Shells whose `-c STRING` runs STRING as a script.
pub(super) const SHELLS: &str = "bash sh zsh dash ksh";
/// Commands that run another command given in their arguments; the wrapped
/// command is tried against deny and ask rules too (`sudo rm -rf /`).
pub(super) const WRAPPERS: &str = "env command builtin exec nohup time nice timeout xargs sudo doas stdbuf \
    setsid flock ionice chrt taskset unbuffer";
/// Variables that change nothing about what a program may do, so a leading
/// `NAME=value` of these is dropped before allow rules are tried (as Claude
/// Code does). Any other assignment (`LD_PRELOAD=…`, `GIT_SSH_COMMAND=…`,
/// `BASH_ENV=…`) stays part of the text an allow rule must match.
pub(super) const SAFE_VARS: &str = "CI NODE_ENV RUST_BACKTRACE RUST_LOG PYTHONUNBUFFERED \
    PYTHONDONTWRITEBYTECODE GOOS GOARCH CGO_ENABLED LANG LANGUAGE LC_ALL LC_CTYPE LC_MESSAGES TZ \
    TERM NO_COLOR FORCE_COLOR COLORTERM";

/// True when `word` is one of the space-separated `words`.
pub(super) fn one_of(words: &str, word: &str) -> bool {
    words.split_ascii_whitespace().any(|w| w == word)
}
