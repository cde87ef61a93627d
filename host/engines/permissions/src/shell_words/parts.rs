//! What a line is taken apart into: its simple commands and the texts the
//! rules are tried against, one command's words, and the refusal to
//! analyze.

/// One simple command that runs (or one file a line writes).
#[derive(Debug, Default)]
pub(crate) struct Part {
    /// The texts an allow rule may match (words as written, and words with
    /// quotes removed).
    pub forms: Vec<String>,
    /// When not every word is known before it runs, the words it starts
    /// with: an allow rule must lie within them.
    pub open: Option<String>,
}

/// A command line taken apart.
#[derive(Debug, Default)]
pub(crate) struct Split {
    /// Each simple command that runs, and each file written. An allow
    /// needs every one of them matched.
    pub parts: Vec<Part>,
    /// Further texts deny and ask rules are also tried against: the whole
    /// line, commands with their assignments, wrapped commands, the outer
    /// text of `bash -c`/`eval`, and commands as the program they run.
    pub extra: Vec<String>,
    /// The known beginnings of unresolved commands (see the module docs):
    /// a deny or ask rule that could match a command starting so applies
    /// as an ask. Empty text: anything may run.
    pub unresolved: Vec<String>,
}

impl Split {
    /// Every text deny and ask rules are tried against.
    pub fn all_texts(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|part| &part.forms)
            .chain(&self.extra)
            .map(String::as_str)
    }

    /// Whether anything at all may run that the line does not show (a
    /// name it defines, a script read from input, a wrapper not
    /// understood): no allow rule then applies.
    pub fn anything_may_run(&self) -> bool {
        self.unresolved.iter().any(String::is_empty)
    }
}

/// Why a line could not be analyzed; the reason only matters to tests.
#[derive(Debug)]
pub(crate) struct Unanalyzable;

/// One word of a simple command: as written, and with its quotes removed;
/// `literal` when it is the same text whatever runs before it (no
/// expansion, glob or brace list in it).
pub(super) struct WordText {
    /// The word as written.
    pub raw: String,
    /// The word with its quotes removed.
    pub plain: String,
    /// Whether it is the same text whatever runs before it.
    pub literal: bool,
}

/// The outcome of visiting one piece of a line.
pub(super) type Visit = Result<(), Unanalyzable>;
