//! The walk over a parsed line: every place a shell runs code is visited
//! (see the parent module's docs), and what runs is recorded in a
//! [`Split`].

use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use super::forms::{
    Unwrapped, arithmetic, assignment_name, dedup, expands, git_subcommand, join, program_name,
    reads_stdin, script_of, too_deep, unwrap,
};
use super::parts::{Part, Split, Unanalyzable, Visit, WordText};
use super::vocabulary::{MAX_DEPTH, MAX_LEN, SAFE_VARS, SHELLS, one_of};

/// Whether texts found belong to commands that run (an allow must cover
/// them) or only to deny and ask rules (the command inside `sudo …`).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Mode {
    #[default]
    Run,
    DenyOnly,
}

/// Walks a parsed line, collecting what it runs into a [`Split`].
#[derive(Default)]
pub(super) struct Walker {
    /// What the walk has found so far.
    pub split: Split,
    /// Where texts found now go.
    mode: Mode,
    /// How many scripts, substitutions and wrappers deep the walk is.
    depth: usize,
    /// The line defines an alias or a function.
    pub defines: bool,
}

impl Walker {
    /// Walks `src` one level deeper, in `mode`.
    pub(super) fn script(&mut self, src: &str, mode: Mode) -> Visit {
        if self.depth >= MAX_DEPTH || src.len() > MAX_LEN || too_deep(src) {
            return Err(Unanalyzable);
        }
        let options = ParserOptions::default();
        // The parser still has `unwrap`s on odd input; a panic there must
        // not take the agent down, and means "unanalyzable".
        let parsed =
            std::panic::catch_unwind(|| Parser::new(src.as_bytes(), &options).parse_program());
        let Ok(Ok(program)) = parsed else {
            return Err(Unanalyzable);
        };
        self.nested(mode, |w| {
            program.complete_commands.iter().try_for_each(|l| w.list(l))
        })
    }

    fn nested(&mut self, mode: Mode, visit: impl FnOnce(&mut Self) -> Visit) -> Visit {
        let saved = (self.mode, self.depth);
        (self.mode, self.depth) = (mode, self.depth + 1);
        let result = visit(self);
        (self.mode, self.depth) = saved;
        result
    }

    fn list(&mut self, list: &ast::CompoundList) -> Visit {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first)?;
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p)?;
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, p: &ast::Pipeline) -> Visit {
        p.seq.iter().try_for_each(|c| self.command(c))
    }

    fn command(&mut self, command: &ast::Command) -> Visit {
        let redirects = match command {
            ast::Command::Simple(simple) => return self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound)?;
                redirects
            }
            ast::Command::Function(function) => {
                self.defines = true;
                self.compound(&function.body.0)?;
                &function.body.1
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.test_expr(&test.expr)?;
                self.push(vec![format!("[[ {} ]]", test.expr)]);
                redirects
            }
        };
        redirects
            .iter()
            .flat_map(|r| &r.0)
            .try_for_each(|r| self.redirect(r))
    }

    fn compound(&mut self, c: &ast::CompoundCommand) -> Visit {
        use ast::CompoundCommand as C;
        match c {
            C::Arithmetic(a) => {
                arithmetic(&a.expr.value)?;
                self.push(vec![format!("(({}))", a.expr.value)]);
                Ok(())
            }
            C::ArithmeticForClause(f) => {
                let parts = [&f.initializer, &f.condition, &f.updater];
                parts
                    .into_iter()
                    .flatten()
                    .try_for_each(|e| arithmetic(&e.value))?;
                self.list(&f.body.list)
            }
            C::BraceGroup(g) => self.list(&g.list),
            C::Subshell(s) => self.list(&s.list),
            C::ForClause(f) => {
                f.values
                    .iter()
                    .flatten()
                    .try_for_each(|w| self.word(&w.value).map(drop))?;
                self.list(&f.body.list)
            }
            C::CaseClause(case) => {
                self.word(&case.value.value)?;
                for item in &case.cases {
                    item.patterns
                        .iter()
                        .try_for_each(|w| self.word(&w.value).map(drop))?;
                    item.cmd.iter().try_for_each(|body| self.list(body))?;
                }
                Ok(())
            }
            C::IfClause(i) => {
                self.list(&i.condition)?;
                self.list(&i.then)?;
                for e in i.elses.iter().flatten() {
                    e.condition.iter().try_for_each(|c| self.list(c))?;
                    self.list(&e.body)?;
                }
                Ok(())
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0)?;
                self.list(&w.1.list)
            }
            C::Coprocess(c) => self.command(&c.body),
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr) -> Visit {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.test_expr(a)?;
                self.test_expr(b)
            }
            E::Not(a) | E::Parenthesized(a) => self.test_expr(a),
            E::UnaryTest(_, w) => self.word(&w.value).map(drop),
            E::BinaryTest(_, a, b) => {
                self.word(&a.value)?;
                self.word(&b.value).map(drop)
            }
        }
    }

    fn redirect(&mut self, r: &ast::IoRedirect) -> Visit {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        // Writing a file is an effect of its own: an allow rule must cover
        // it, whatever command's output it is (`echo x >> .git/config`).
        let written = match r {
            R::File(
                _,
                kind @ (K::Write | K::Append | K::Clobber | K::ReadAndWrite),
                T::Filename(w),
            ) => {
                let op = match kind {
                    K::Append => ">>",
                    K::Clobber => ">|",
                    K::ReadAndWrite => "<>",
                    _ => ">",
                };
                Some((op, w))
            }
            R::OutputAndError(w, append) => Some((if *append { "&>>" } else { "&>" }, w)),
            _ => None,
        };
        if let Some((op, w)) = written {
            let (plain, literal) = self.word(&w.value)?;
            if plain != "/dev/null" {
                let forms = dedup(vec![format!("{op} {}", w.value), format!("{op} {plain}")]);
                self.push_open(forms, (!literal).then(|| op.to_string()));
            }
            return Ok(());
        }
        match r {
            R::File(_, _, T::Filename(w) | T::Duplicate(w))
            | R::HereString(_, w)
            | R::OutputAndError(w, _) => self.word(&w.value).map(drop),
            R::File(_, _, T::ProcessSubstitution(_, sub)) => self.list(&sub.list),
            R::HereDocument(_, doc) if doc.requires_expansion => {
                let options = ParserOptions::default();
                let pieces =
                    word::parse_heredoc(&doc.doc.value, &options).map_err(|_| Unanalyzable)?;
                self.pieces(&pieces, &doc.doc.value, &mut String::new(), &mut true, true)
            }
            R::File(_, _, T::Fd(_)) | R::HereDocument(..) => Ok(()),
        }
    }

    fn simple(&mut self, c: &ast::SimpleCommand) -> Visit {
        let mut assignments: Vec<(String, String)> = Vec::new();
        let mut words: Vec<WordText> = Vec::new();
        let prefix = c.prefix.iter().flat_map(|p| p.0.iter().cloned());
        let name = c.word_or_name.iter().map(|w| Item::Word(w.clone()));
        let suffix = c.suffix.iter().flat_map(|s| s.0.iter().cloned());
        for item in prefix.chain(name).chain(suffix) {
            match item {
                Item::IoRedirect(r) => self.redirect(&r)?,
                Item::AssignmentWord(a, w) if words.is_empty() => {
                    self.assignment(&a)?;
                    assignments.push((assignment_name(&a.name)?, w.value));
                }
                Item::Word(w) | Item::AssignmentWord(_, w) => {
                    let (plain, literal) = self.word(&w.value)?;
                    words.push(WordText {
                        raw: w.value,
                        plain,
                        literal,
                    });
                }
                Item::ProcessSubstitution(kind, sub) => {
                    self.list(&sub.list)?;
                    let text = format!("{kind}({})", sub.list);
                    words.push(WordText {
                        raw: text.clone(),
                        plain: text,
                        literal: false,
                    });
                }
            }
        }
        if words.is_empty() {
            // Assignments or redirections alone (`X=1`, `> file`) still do
            // something, so an allow must name them.
            self.push(vec![c.to_string().trim().to_owned()]);
            return Ok(());
        }
        if assignments.is_empty() {
            return self.command_words(&words);
        }
        let vars: Vec<&str> = assignments.iter().map(|(_, raw)| raw.as_str()).collect();
        let with_vars = |w: String| format!("{} {w}", vars.join(" "));
        let forms = dedup(vec![
            with_vars(join(&words, |w| &w.raw)),
            with_vars(join(&words, |w| &w.plain)),
        ]);
        if assignments.iter().all(|(name, _)| one_of(SAFE_VARS, name)) {
            self.split.extra.extend(forms);
            return self.command_words(&words);
        }
        // The command must be allowed with its assignments; the bare
        // command is still tried against deny and ask rules.
        self.push(forms);
        self.nested(Mode::DenyOnly, |w| w.command_words(&words))
    }

    fn assignment(&mut self, a: &ast::Assignment) -> Visit {
        match &a.value {
            ast::AssignmentValue::Scalar(w) => self.word(&w.value).map(drop),
            ast::AssignmentValue::Array(items) => items.iter().try_for_each(|(key, value)| {
                key.iter().try_for_each(|k| self.word(&k.value).map(drop))?;
                self.word(&value.value).map(drop)
            }),
        }
    }

    /// A simple command's words, after its assignments.
    fn command_words(&mut self, words: &[WordText]) -> Visit {
        let forms = dedup(vec![join(words, |w| &w.raw), join(words, |w| &w.plain)]);
        let open = self.resolve(words);
        let name = program_name(&words[0].plain);
        if name == "alias" {
            self.defines = true;
        }
        if one_of(SHELLS, name) && reads_stdin(words) {
            // `echo … | bash`, `bash -s`, `bash <<EOF`: the script is data.
            self.split.unresolved.push(String::new());
        }
        let Some((script, transparent)) = script_of(words) else {
            self.push_open(forms, open);
            if name == "find" {
                return self.find_commands(words);
            }
            // The command a wrapper (`sudo`, `env`, `timeout 5`…) runs is
            // tried against deny and ask rules.
            return match unwrap(words) {
                Unwrapped::Inner(inner) if self.depth < MAX_DEPTH => {
                    self.nested(Mode::DenyOnly, |w| w.command_words(inner))
                }
                Unwrapped::Unknown => {
                    self.split.unresolved.push(String::new());
                    Ok(())
                }
                _ => Ok(()),
            };
        };
        // `bash -c 'a && b'` runs a and b: those must be allowed; the shell
        // itself needs no rule unless given options that change what runs
        // (`--rcfile`, `-i`…).
        if transparent && self.mode == Mode::Run {
            self.split.extra.extend(forms);
        } else {
            self.push_open(forms, open);
        }
        match self.script(&script, self.mode) {
            Err(_) if self.mode == Mode::DenyOnly => {
                self.split.extra.push(script);
                self.split.unresolved.push(String::new());
                Ok(())
            }
            result => result,
        }
    }

    /// Records what deny and ask rules must also see of a command: its
    /// text with the program named as it runs (`/usr/bin/rm -f` is
    /// `rm -f`) and git's global options set aside; and, when a word is
    /// not known before it runs, the words it starts with, which are
    /// returned too.
    fn resolve(&mut self, words: &[WordText]) -> Option<String> {
        let mut texts: Vec<String> = words.iter().map(|w| w.plain.clone()).collect();
        let name = program_name(&texts[0]).to_string();
        if name != texts[0] {
            texts[0] = name.clone();
            self.split.extra.push(texts.join(" "));
        }
        if name == "git" {
            match git_subcommand(words) {
                Some(at) if at > 1 => {
                    let rest = texts[at..].join(" ");
                    self.split.extra.push(format!("git {rest}"));
                }
                Some(_) => {}
                // An option that is not understood may hide the subcommand.
                None => self.split.unresolved.push("git".into()),
            }
        }
        let first = words.iter().position(|w| !w.literal)?;
        let start = texts[..first].join(" ");
        self.split.unresolved.push(start.clone());
        Some(start)
    }

    /// The commands `find` runs for what it finds (`-exec`, `-execdir`,
    /// `-ok`, `-okdir`, up to `;` or `+`), tried against deny and ask
    /// rules.
    fn find_commands(&mut self, words: &[WordText]) -> Visit {
        let mut at = 1;
        while at < words.len() {
            let action = words[at].plain.as_str();
            at += 1;
            if !matches!(action, "-exec" | "-execdir" | "-ok" | "-okdir") {
                continue;
            }
            let end = words[at..]
                .iter()
                .position(|w| w.plain == ";" || w.plain == "+")
                .map_or(words.len(), |n| at + n);
            if end > at && self.depth < MAX_DEPTH {
                let inner = &words[at..end];
                self.nested(Mode::DenyOnly, |w| w.command_words(inner))?;
            }
            at = end + 1;
        }
        Ok(())
    }

    /// Visits a word's substitutions and returns the word without quotes,
    /// and whether it is literal (no expansion, glob or brace list).
    fn word(&mut self, raw: &str) -> Result<(String, bool), Unanalyzable> {
        let pieces = word::parse(raw, &ParserOptions::default()).map_err(|_| Unanalyzable)?;
        let mut plain = String::new();
        let mut literal = true;
        self.pieces(&pieces, raw, &mut plain, &mut literal, false)?;
        Ok((plain, literal))
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        raw: &str,
        plain: &mut String,
        literal: &mut bool,
        quoted: bool,
    ) -> Visit {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or(raw);
            match &p.piece {
                // `$'\x72m'` is `rm`; rather than decode escapes, refuse them.
                WordPiece::AnsiCQuotedText(s) if s.contains('\\') => return Err(Unanalyzable),
                WordPiece::Text(s) => {
                    // Unquoted, these expand: `/usr/bin/r?`, `{rm,-f,x}`.
                    if !quoted && expands(s) {
                        *literal = false;
                    }
                    plain.push_str(s);
                    continue;
                }
                WordPiece::SingleQuotedText(s) | WordPiece::AnsiCQuotedText(s) => {
                    plain.push_str(s);
                    continue;
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, raw, plain, literal, true)?;
                    continue;
                }
                WordPiece::EscapeSequence(s) => {
                    plain.extend(s.chars().skip(1).filter(|c| *c != '\n'));
                    continue;
                }
                WordPiece::CommandSubstitution(s) => self.script(s, self.mode)?,
                WordPiece::BackquotedCommandSubstitution(s) => {
                    let s = s
                        .replace("\\`", "`")
                        .replace("\\$", "$")
                        .replace("\\\\", "\\");
                    self.script(&s, self.mode)?;
                }
                WordPiece::ArithmeticExpression(e) => arithmetic(&e.value)?,
                // `${x:-$(cmd)}` runs cmd; such words are not analyzed. The
                // debug text holds every nested word of the expansion.
                WordPiece::ParameterExpansion(expr) => arithmetic(&format!("{expr:?}"))?,
                WordPiece::TildeExpansion(_) => {
                    plain.push_str(source);
                    continue;
                }
            }
            // A substitution or an expansion: its text is not what runs.
            *literal = false;
            plain.push_str(source);
        }
        Ok(())
    }

    fn push(&mut self, forms: Vec<String>) {
        self.push_open(forms, None);
    }

    /// [`Self::push`] for a command not every word of which is known
    /// (`open`: the words it starts with).
    fn push_open(&mut self, forms: Vec<String>, open: Option<String>) {
        match self.mode {
            Mode::Run => self.split.parts.push(Part { forms, open }),
            Mode::DenyOnly => self.split.extra.extend(forms),
        }
    }
}
