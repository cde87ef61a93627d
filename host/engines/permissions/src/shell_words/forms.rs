//! The small pieces of taking a command apart: what nests too deep, what
//! runs code where the walker does not look, a command's program name, the
//! script of `bash -c`/`eval`, and the command a wrapper runs.

use brush_parser::ast;

use super::parts::{Unanalyzable, Visit, WordText};
use super::vocabulary::{MAX_NESTING, SHELLS, WRAPPERS, one_of};

/// Whether `src` nests brackets or backquotes deeper than the parser can
/// safely follow (quotes are not considered: this only ever refuses more).
pub(super) fn too_deep(src: &str) -> bool {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in src.chars() {
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest > MAX_NESTING || src.matches('`').count() > MAX_NESTING
}

/// Refuses text that may run code where this module does not look for it
/// (arithmetic, parameter expansions, array subscripts).
pub(super) fn arithmetic(text: &str) -> Visit {
    let runs_code = ["$(", "`", "<(", ">("].iter().any(|m| text.contains(m));
    (!runs_code).then_some(()).ok_or(Unanalyzable)
}

pub(super) fn assignment_name(name: &ast::AssignmentName) -> Result<String, Unanalyzable> {
    if let ast::AssignmentName::ArrayElementName(_, index) = name {
        arithmetic(index)?;
    }
    let (ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _)) = name;
    Ok(n.clone())
}

pub(super) fn join(words: &[WordText], part: impl Fn(&WordText) -> &String) -> String {
    words
        .iter()
        .map(part)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn dedup(mut forms: Vec<String>) -> Vec<String> {
    forms.dedup();
    forms
}

pub(super) fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The script a command runs as its own (`bash -c SCRIPT`, `eval ARGS`),
/// and whether the command is otherwise transparent (only options that
/// change nothing about what runs).
pub(super) fn script_of(words: &[WordText]) -> Option<(String, bool)> {
    let name = program_name(&words[0].plain);
    if name == "trap" {
        // `trap 'CMD' EXIT`: CMD runs later in this shell.
        let mut args = words[1..].iter().map(|w| w.plain.as_str());
        let first = args.next()?;
        let script = match first {
            "--" => args.next()?,
            "-l" | "-p" => return None,
            script => script,
        };
        return Some((script.to_string(), true));
    }
    if name == "eval" {
        let args = words[1..]
            .iter()
            .map(|w| w.plain.as_str())
            .skip_while(|a| *a == "--");
        return Some((args.collect::<Vec<_>>().join(" "), true));
    }
    if !one_of(SHELLS, name) {
        return None;
    }
    let (mut has_c, mut transparent, mut i) = (false, true, 1);
    while let Some(w) = words.get(i) {
        let arg = w.plain.as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if arg.len() < 2 || !(arg.starts_with('-') || arg.starts_with('+')) {
            break;
        }
        if arg.starts_with("--") {
            transparent = false;
            i += usize::from(matches!(arg, "--rcfile" | "--init-file"));
        } else {
            has_c |= arg.starts_with('-') && arg.contains('c');
            transparent &= arg.starts_with('-') && arg[1..].chars().all(|ch| "ceulx".contains(ch));
            // `-o NAME` and `-O NAME` take the next word.
            i += usize::from(arg[1..].contains(['o', 'O']));
        }
        i += 1;
    }
    let script = words.get(i).filter(|_| has_c)?;
    Some((script.plain.clone(), transparent))
}

/// Whether unquoted text expands into something else: a glob (`*`, `?`,
/// `[`) or a brace list (`{a,b}`, `{1..3}`).
pub(super) fn expands(text: &str) -> bool {
    text.contains(['*', '?', '['])
        || (text.contains('{') && text.contains('}') && (text.contains(',') || text.contains("..")))
}

/// Git's global options that take the next word as their value.
const GIT_VALUE_OPTIONS: &str = "-C -c --git-dir --work-tree --namespace --super-prefix \
    --config-env --exec-path --list-cmds --attr-source";

/// Git's global options that take none.
const GIT_FLAGS: &str = "-p -P --paginate --no-pager --bare --no-replace-objects \
    --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs \
    --no-optional-locks --no-lazy-fetch --no-advice --html-path --man-path --info-path";

/// Where git's subcommand is in `words` (`git -C . push` has it at 3), or
/// `None` when an option before it is not understood.
pub(super) fn git_subcommand(words: &[WordText]) -> Option<usize> {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let arg = word.plain.as_str();
        if !arg.starts_with('-') || arg == "-" {
            return Some(at);
        }
        let name = arg.split_once('=').map_or(arg, |(name, _)| name);
        if one_of(GIT_VALUE_OPTIONS, arg) {
            at += 2;
        } else if (arg.contains('=') && one_of(GIT_VALUE_OPTIONS, name))
            || one_of(GIT_FLAGS, arg)
            // `-C.` and `-cname=value` glue the value on.
            || (arg.len() > 2 && (arg.starts_with("-C") || arg.starts_with("-c")))
        {
            at += 1;
        } else {
            return None;
        }
    }
    Some(at)
}

/// Whether a shell command reads its script from standard input: `-s`,
/// or neither `-c` nor a script file after its options.
pub(super) fn reads_stdin(words: &[WordText]) -> bool {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let arg = word.plain.as_str();
        if arg == "--" {
            return words.get(at + 1).is_none();
        }
        if arg.len() < 2 || !(arg.starts_with('-') || arg.starts_with('+')) {
            return false;
        }
        if arg.starts_with("--") {
            at += 1 + usize::from(matches!(arg, "--rcfile" | "--init-file"));
            continue;
        }
        if arg.starts_with('-') && arg.contains('c') {
            return false;
        }
        if arg.starts_with('-') && arg.contains('s') {
            return true;
        }
        at += 1 + usize::from(arg[1..].contains(['o', 'O']));
    }
    true
}

/// What a wrapper runs.
pub(super) enum Unwrapped<'a> {
    /// Not a wrapper, or it runs nothing (`env` alone prints).
    None,
    /// The command it runs.
    Inner(&'a [WordText]),
    /// It runs something, but where its options end is not understood.
    Unknown,
}

/// The command a wrapper runs: the wrapper's name and options removed.
pub(super) fn unwrap(words: &[WordText]) -> Unwrapped<'_> {
    let name = program_name(&words[0].plain);
    if !one_of(WRAPPERS, name) {
        return Unwrapped::None;
    }
    // Options that take a value as the next word (given as `--opt=value`
    // they are one word), and those that take none.
    let (with_value, flags) = match name {
        "sudo" => (
            "-u -g -C -D -h -p -r -t -U -T --user --group --close-from --chdir --host --prompt \
             --role --type --other-user --command-timeout",
            "-A -b -E -H -i -k -K -l -n -P -S -s -V -v --askpass --background --preserve-env \
             --set-home --login --reset-timestamp --remove-timestamp --list --non-interactive \
             --preserve-groups --stdin --shell --version --validate",
        ),
        "doas" => ("-u -C", "-n -s -L"),
        "env" => (
            "-u -C --unset --chdir",
            "-i -0 --ignore-environment --null -v --debug",
        ),
        "nice" => ("-n --adjustment", ""),
        "timeout" => (
            "-s -k --signal --kill-after",
            "-v --verbose --preserve-status --foreground",
        ),
        "xargs" => (
            "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines \
             --max-args --max-procs --max-chars --process-slot-var",
            "-0 -o -p -r -t -x --null --open-tty --interactive --no-run-if-empty --verbose --exit",
        ),
        "exec" => ("-a", "-c -l"),
        "stdbuf" => ("-i -o -e --input --output --error", ""),
        "time" => (
            "-f -o --format --output",
            "-a -p -q -v --append --portability --quiet --verbose",
        ),
        "flock" => (
            "-w -E --timeout --conflict-exit-code",
            "-s -x -u -n -o -F -e --shared --exclusive --unlock --nonblock --close --no-fork --verbose",
        ),
        "ionice" => (
            "-c -n -p -P -u --class --classdata --pid --pgid --uid",
            "-t --ignore",
        ),
        "chrt" => (
            "-T -P -D --sched-runtime --sched-period --sched-deadline",
            "-a -b -d -e -f -i -m -o -p -r -R -v --all-tasks --batch --deadline --ext --fifo --idle --other --rr --reset-on-fork --verbose",
        ),
        "taskset" => ("", "-a -c -p --all-tasks --cpu-list --pid"),
        "setsid" => ("", "-c -f -w --ctty --fork --wait"),
        "unbuffer" => ("", "-p"),
        // `command`, `builtin`, `nohup`: flags only.
        _ => ("", "-p -v -V"),
    };
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let arg = w.plain.as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        let option_name = arg.split_once('=').map_or(arg, |(name, _)| name);
        if one_of(with_value, arg) {
            i += 2;
        } else if one_of(flags, arg)
            || (arg.starts_with("--") && arg.contains('=') && one_of(with_value, option_name))
            || (name == "env" && !arg.starts_with('-') && arg.contains('='))
            // Short options glued together or to their value (`-n5`, `-xv`).
            || is_glued(arg, with_value, flags)
        {
            i += 1;
        } else if arg.starts_with('-') && arg.len() > 1 {
            // `env -S 'a b'` and options not known here: the command cannot
            // be found with certainty.
            return Unwrapped::Unknown;
        } else {
            break;
        }
    }
    // Words that come before the command.
    i += match name {
        "timeout" | "chrt" | "taskset" => 1,
        // `flock FILE CMD`, `flock FILE -c CMD`.
        "flock" => match words.get(i + 1).map(|w| w.plain.as_str()) {
            Some("-c" | "--command") => return Unwrapped::Unknown,
            _ => 1,
        },
        _ => 0,
    };
    match words.get(i..).filter(|rest| !rest.is_empty()) {
        Some(inner) => Unwrapped::Inner(inner),
        None => Unwrapped::None,
    }
}

/// Whether `arg` is short options glued together (`-xv`) or a short
/// option glued to its value (`-n5`), all of them known.
fn is_glued(arg: &str, with_value: &str, flags: &str) -> bool {
    let Some(letters) = arg
        .strip_prefix('-')
        .filter(|l| l.len() > 1 && !l.starts_with('-'))
    else {
        return false;
    };
    for (at, letter) in letters.char_indices() {
        let option = format!("-{letter}");
        if one_of(with_value, &option) {
            // The rest of the word is its value.
            return at + letter.len_utf8() < letters.len();
        }
        if !one_of(flags, &option) {
            return false;
        }
    }
    true
}
