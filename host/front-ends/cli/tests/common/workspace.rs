//! A workspace of files for the file tools' suites, and the results of a
//! scripted session run in it (through [`super::session::Session`]), each
//! checked to have succeeded or failed.

use super::session::{Session, SessionRun};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;
use tempfile::TempDir;

/// A workspace and a home for one session.
pub struct Workspace {
    /// `KAIZEN_HOME`.
    pub home: TempDir,
    /// The workspace (`--cwd`).
    pub dir: TempDir,
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The workspace as the host sees it (symlinks resolved).
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// The absolute path of `relative`, as the host sees it (symlinks
    /// resolved).
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// The absolute path of `relative` as a string, for tool inputs.
    pub fn file(&self, relative: &str) -> String {
        self.path(relative).display().to_string()
    }

    /// Writes `relative` (and its directories); its absolute path.
    pub fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> String {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    /// The content of `relative`.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    /// `kaizen ARGS` here (see [`super::kaizen`]).
    pub fn kaizen(&self, args: &[&str]) -> Output {
        super::kaizen(self.home.path(), self.dir.path(), args)
    }

    /// A scripted session here, to add arguments to and run.
    pub fn scripted(&self) -> Session<'_> {
        Session::new(self.home.path(), self.dir.path())
    }

    /// Runs `calls` in one session here, with `args` added to `kaizen run`.
    pub async fn session(&self, calls: &[(&str, Value)], args: &[&str]) -> Calls {
        let mut session = self.scripted();
        session.args = args.iter().map(|arg| arg.to_string()).collect();
        Calls(session.run(calls).await)
    }
}

/// The results of a scripted session, by call.
pub struct Calls(pub SessionRun);

impl Calls {
    fn failed(&self, i: usize) -> bool {
        self.0.result["tool_calls"][i]["status"] == "error"
    }

    /// The text the model saw for call `i`, which must have succeeded.
    pub fn ok(&self, i: usize) -> &str {
        let text = &self.0.results[i];
        assert!(!self.failed(i), "call {i} failed: {text}");
        text
    }

    /// The text the model saw for call `i`, which must have failed.
    pub fn err(&self, i: usize) -> &str {
        let text = &self.0.results[i];
        assert!(self.failed(i), "call {i} succeeded: {text}");
        text
    }
}
