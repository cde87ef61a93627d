//! Splits a Bash command line into the simple commands it would run, with
//! a real shell parser (`brush-parser`), so that a rule written for one
//! command cannot be stretched over a compound line: `git status; rm -rf ~`
//! is two commands, and so is `git status $(rm -rf ~)`.
//!
//! Every place a shell runs code is visited: lists (`&&`, `||`, `;`, `&`,
//! newlines), pipelines, subshells, groups, `if`/`while`/`until`/`for`/
//! `case` bodies, function bodies, command and process substitutions in
//! any word (arguments, assignments, redirection targets, here-strings,
//! expanding here-documents), and the scripts given to `bash -c` (and the
//! other shells), to `eval` and to `trap`. Whatever cannot be analyzed with
//! certainty (a substitution inside `${…}` or `$((…))`, a parse error, a
//! parser panic, nesting too deep) makes the whole line unanalyzable:
//! callers then allow nothing by rule, and a deny or ask rule that could
//! apply asks.
//!
//! A command whose words are not all known before it runs (an expansion,
//! a glob or a brace list in them, or its program named by one; a shell
//! reading its script from standard input; a line that defines an alias
//! or a function; a wrapper whose options are not understood) is
//! *unresolved*: the words it starts with are kept, and a deny or ask rule
//! that what it becomes could match applies as an ask. Command words are
//! compared by the program they run too (`/usr/bin/rm` is `rm`), git's
//! global options are set aside (`git -C . push` is `git push`), and an
//! output redirection to a file is a part of the line an allow rule must
//! cover on its own.

mod forms;
mod parts;
mod vocabulary;
mod walker;

pub(crate) use parts::{Part, Split, Unanalyzable};
use vocabulary::MAX_LEN;
use walker::{Mode, Walker};

/// Takes `command` apart, or says it cannot be analyzed.
pub(crate) fn split(command: &str) -> Result<Split, Unanalyzable> {
    if command.len() > MAX_LEN {
        return Err(Unanalyzable);
    }
    let mut walker = Walker::default();
    walker.script(command, Mode::Run)?;
    walker.split.extra.push(command.trim().to_owned());
    if walker.defines {
        // A name defined here may stand for any command later in the line.
        walker.split.unresolved.push(String::new());
    }
    Ok(walker.split)
}

/// Rough pieces of a line the parser refused, for deny and ask rules only:
/// the line cut at every operator character, so `echo x &&& rm -rf /` still
/// meets a deny of `rm`.
pub(crate) fn rough_pieces(command: &str) -> Vec<String> {
    let mut pieces = vec![command.trim().to_owned()];
    for piece in command.split([';', '&', '|', '\n', '(', ')', '`', '{', '}']) {
        let piece = piece.trim().trim_start_matches('$').trim();
        if !piece.is_empty() && piece != pieces[0] {
            pieces.push(piece.to_owned());
        }
    }
    pieces
}
