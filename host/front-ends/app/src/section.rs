//! What a configuration section is, and the one merge that makes the
//! effective configuration from the user's file and the workspace's.
//!
//! Each table of `config.toml` / `kaizen.toml` is a type implementing
//! [`Section`] beside the code that uses it: its name, who may set it
//! ([`Scope`]), how a later file's values go over an earlier one's, and
//! what makes it invalid. [`effective`] applies those rules the same way
//! for every section, and notes what of a workspace's file was left out
//! and why, so that adding a section never means writing a trust rule by
//! hand.

use std::path::{Component, Path, PathBuf};

/// The project's configuration file, at the workspace root.
pub const PROJECT_CONFIG: &str = "kaizen.toml";
/// The user's configuration file, under `KAIZEN_HOME`.
pub const USER_CONFIG: &str = "config.toml";

/// Who may set a section, and so what a workspace's file can do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's config only: a workspace's is left out with a note that
    /// says why (the text in parentheses).
    User(&'static str),
    /// The user's, with a trusted workspace's over it.
    Trusted,
    /// The user's, with any workspace's over it, trusted or not: what the
    /// section sets concerns the workspace alone or can only narrow.
    Any,
    /// Field by field: the section admits what it may in
    /// [`Section::admit`].
    Fields,
}

/// A workspace file's section on its way in: whether the workspace is
/// trusted, where it is, and the notes on what was left out.
pub struct Admission<'a> {
    /// Whether the workspace's configuration may take effect.
    pub trusted: bool,
    /// The workspace (canonical).
    pub workspace: &'a Path,
    /// What was left out, and why, one line each.
    pub notes: &'a mut Vec<String>,
}

impl Admission<'_> {
    /// Notes that `what` of the workspace's file was left out, for `why`.
    pub fn ignore(&mut self, what: &str, why: &str) {
        self.notes.push(format!("{PROJECT_CONFIG}: {what} ({why})"));
    }

    /// Notes that `what` was left out because the workspace is not
    /// trusted.
    pub fn untrusted(&mut self, what: &str) {
        self.ignore(what, "the workspace is not trusted");
    }

    /// `path`, as the workspace's file wrote it for `what`, made absolute
    /// against the workspace; `None`, noted, when it leads outside it
    /// (only the user's config may name such a path).
    pub fn inside(&mut self, what: &str, path: &Path) -> Option<PathBuf> {
        let path = absolute(self.workspace, &expand_home(path));
        if within(self.workspace, &path) {
            return Some(path);
        }
        self.notes.push(format!(
            "{PROJECT_CONFIG}: {what} {} (outside the workspace: only the user's config may name it)",
            path.display()
        ));
        None
    }
}

/// One table of a configuration file.
pub trait Section: Default + Clone {
    /// The table's name as the user writes it, for notes: `[pricing]`.
    const KEY: &'static str;
    /// Who may set it.
    const SCOPE: Scope;

    /// True when a file sets anything in it.
    fn is_set(&self) -> bool;

    /// `over`, a later file's section, over this one.
    fn merge(&mut self, over: Self);

    /// Refuses values that cannot work, naming `file`.
    fn check(&self, _file: &Path) -> anyhow::Result<()> {
        Ok(())
    }

    /// Makes the user's relative paths absolute against `base` (the
    /// directory the user's config is in).
    fn resolve(&mut self, _base: &Path) {}

    /// What of a workspace's section takes effect, for [`Scope::Fields`];
    /// the rest is noted in `admission`. Paths come out absolute.
    fn admit(self, _admission: &mut Admission<'_>) -> Self {
        self
    }
}

/// The user's `user` section (from `user_file`, its relative paths
/// against `user_base`) with what the workspace's `project` section (from
/// `project_file`) may add over it; what it may not is noted in
/// `admission`. A section is checked only where it takes effect, so an
/// invalid table in a workspace that is not trusted is a note, not an
/// error.
pub fn effective<S: Section>(
    user: S,
    user_file: &Path,
    user_base: &Path,
    project: S,
    project_file: &Path,
    admission: &mut Admission<'_>,
) -> anyhow::Result<S> {
    user.check(user_file)?;
    let mut merged = user;
    merged.resolve(user_base);
    if !project.is_set() {
        return Ok(merged);
    }
    let admitted = match S::SCOPE {
        Scope::User(why) => {
            admission.ignore(S::KEY, why);
            return Ok(merged);
        }
        Scope::Trusted if !admission.trusted => {
            admission.untrusted(S::KEY);
            return Ok(merged);
        }
        Scope::Trusted | Scope::Any => project,
        Scope::Fields => project.admit(admission),
    };
    admitted.check(project_file)?;
    merged.merge(admitted);
    Ok(merged)
}

/// `path` against `base` when relative.
pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// `~/rest` as the user's home joined with `rest`; other paths unchanged.
pub(crate) fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// True when `path` lies inside `root` (both absolute; `..` not resolved,
/// so a path with `..` counts as outside).
fn within(root: &Path, path: &Path) -> bool {
    path.starts_with(root) && !path.components().any(|c| matches!(c, Component::ParentDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Default, PartialEq)]
    struct Only(Option<u32>);

    impl Section for Only {
        const KEY: &'static str = "[only]";
        const SCOPE: Scope = Scope::User("set in the user's config only");
        fn is_set(&self) -> bool {
            self.0.is_some()
        }
        fn merge(&mut self, over: Self) {
            self.0 = over.0.or(self.0);
        }
    }

    #[derive(Debug, Clone, Default, PartialEq)]
    struct Checked(Option<u32>);

    impl Section for Checked {
        const KEY: &'static str = "[checked]";
        const SCOPE: Scope = Scope::Trusted;
        fn is_set(&self) -> bool {
            self.0.is_some()
        }
        fn merge(&mut self, over: Self) {
            self.0 = over.0.or(self.0);
        }
        fn check(&self, file: &Path) -> anyhow::Result<()> {
            match self.0 {
                Some(0) => anyhow::bail!("{}: [checked] must not be 0", file.display()),
                _ => Ok(()),
            }
        }
    }

    fn merge<S: Section>(user: S, project: S, trusted: bool) -> (anyhow::Result<S>, Vec<String>) {
        let mut notes = Vec::new();
        let mut admission = Admission {
            trusted,
            workspace: Path::new("/ws"),
            notes: &mut notes,
        };
        let file = Path::new("/ws/kaizen.toml");
        let home = Path::new("/home/u/.kaizen");
        let merged = effective(
            user,
            &home.join("config.toml"),
            home,
            project,
            file,
            &mut admission,
        );
        (merged, notes)
    }

    #[test]
    fn a_user_only_section_of_a_workspace_is_noted_even_when_trusted() {
        let (merged, notes) = merge(Only(Some(1)), Only(Some(2)), true);
        assert_eq!(merged.unwrap(), Only(Some(1)));
        assert_eq!(
            notes,
            ["kaizen.toml: [only] (set in the user's config only)"]
        );
    }

    #[test]
    fn a_trusted_section_applies_over_the_users_only_once_trusted() {
        let (merged, notes) = merge(Checked(Some(1)), Checked(Some(2)), false);
        assert_eq!(merged.unwrap(), Checked(Some(1)));
        assert_eq!(
            notes,
            ["kaizen.toml: [checked] (the workspace is not trusted)"]
        );
        let (merged, notes) = merge(Checked(Some(1)), Checked(Some(2)), true);
        assert_eq!(merged.unwrap(), Checked(Some(2)));
        assert!(notes.is_empty());
    }

    #[test]
    fn an_invalid_section_is_an_error_only_where_it_takes_effect() {
        let (merged, _) = merge(Checked(None), Checked(Some(0)), false);
        assert_eq!(merged.unwrap(), Checked(None));
        let (merged, _) = merge(Checked(None), Checked(Some(0)), true);
        let err = merged.unwrap_err().to_string();
        assert!(
            err.contains("/ws/kaizen.toml: [checked] must not be 0"),
            "{err}"
        );
        let (merged, _) = merge(Checked(Some(0)), Checked(None), false);
        assert!(merged.is_err(), "the user's own file is always checked");
    }

    #[test]
    fn a_workspace_path_must_stay_inside_it() {
        let mut notes = Vec::new();
        let mut admission = Admission {
            trusted: true,
            workspace: Path::new("/ws"),
            notes: &mut notes,
        };
        assert_eq!(
            admission.inside("[plugins] dirs", Path::new("tools")),
            Some(PathBuf::from("/ws/tools"))
        );
        assert_eq!(admission.inside("[plugins] dirs", Path::new("../x")), None);
        assert_eq!(admission.inside("[plugins] dirs", Path::new("/etc")), None);
        assert_eq!(notes.len(), 2);
        assert!(
            notes[1].contains("[plugins] dirs /etc (outside the workspace"),
            "{notes:?}"
        );
    }
}
