//! The small pieces of taking a command apart: what nests too deep, what
//! runs code where the walker does not look, a command's program name, the
//! script of `bash -c`/`eval`, and the command a wrapper runs.

use super::*;

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

/// The command a wrapper runs: the wrapper's name and options removed.
pub(super) fn unwrap(words: &[WordText]) -> Option<&[WordText]> {
    let name = program_name(&words[0].plain);
    if !one_of(WRAPPERS, name) {
        return None;
    }
    // Options that take a value as the next word.
    let with_value = match name {
        "sudo" => "-u -g -C -D -h -p -r -t -U -T",
        "env" => "-u -C -S",
        "nice" => "-n",
        "timeout" => "-s -k --signal --kill-after",
        "xargs" => "-a -d -E -I -L -n -P -s",
        "exec" => "-a",
        "stdbuf" => "-i -o -e",
        _ => "",
    };
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let arg = w.plain.as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if one_of(with_value, arg) {
            i += 2;
        } else if arg.starts_with('-') || (name == "env" && arg.contains('=')) {
            i += 1;
        } else {
            break;
        }
    }
    // `timeout` takes a duration before the command.
    if name == "timeout" {
        i += 1;
    }
    words.get(i..).filter(|rest| !rest.is_empty())
}
