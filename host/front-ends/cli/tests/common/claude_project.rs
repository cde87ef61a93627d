//! A Claude Code project for the suites that try Claude Code's files in
//! Kaizen (settings and hooks, skills, commands, agents): its workspace,
//! Kaizen's home, and a Claude user directory of its own
//! (`CLAUDE_CONFIG_DIR`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use kaizen_model_server::{Recorded, Reply};
use tempfile::TempDir;

/// The project.
pub struct Project {
    /// Kaizen's home.
    pub home: TempDir,
    /// The workspace.
    pub ws: TempDir,
    /// The user's Claude directory.
    pub claude_user: TempDir,
}

impl Project {
    /// A new, empty project.
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
            claude_user: tempfile::tempdir().unwrap(),
        }
    }

    /// The workspace, canonical.
    pub fn root(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }

    /// Writes `relative` in the workspace (executable when it is a
    /// script).
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        write(&self.root(), relative, text)
    }

    /// `kaizen trust` of the workspace.
    pub fn trust(&self) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kaizen"))
            .arg("trust")
            .arg(self.root())
            .env("KAIZEN_HOME", self.home.path())
            .output()
            .unwrap();
        super::succeeded(&out);
    }

    /// `kaizen run` of "Do the task." with `args`, against `replies`.
    pub async fn run(&self, replies: Vec<Reply>, args: &[&str]) -> (Output, Vec<Recorded>) {
        let env = [("CLAUDE_CONFIG_DIR", self.claude_user.path())];
        super::run::scripted_run(self.home.path(), &self.root(), replies, args, &env).await
    }
}

/// Writes `relative` under `root` (executable when it is a script).
pub fn write(root: &Path, relative: &str, text: &str) -> PathBuf {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    if relative.ends_with(".sh") || relative.ends_with(".py") {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}
