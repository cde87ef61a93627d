//! A home of Gemini CLI's own for one run, so that Kaizen's settings reach
//! it wherever `KAIZEN_HOME` and the user's home are.
//!
//! Gemini CLI takes settings that override the user's only from its system
//! settings file, and only when that file and every directory above it
//! are owned by root and writable by nobody else: no place a user's own
//! program can write qualifies, and nothing under a shared `/tmp` does.
//! Its user settings (`$GEMINI_CLI_HOME/.gemini/settings.json`) have no
//! such condition. So each run gets a home of its own in its private
//! scratch directory, whose `.gemini/settings.json` is the user's own
//! settings with Kaizen's on top, and whose every other entry is a link to
//! the user's real `.gemini` (sign-in, trusted folders, chats, memory,
//! extensions): the CLI sees the user's state, only the settings differ.
//! What the CLI creates or replaces during the run (it writes some files
//! by renaming a new copy over the old, which replaces a link rather than
//! writing through it) is moved back into the real directory when the run
//! ends, so nothing it keeps is lost.

use serde_json::{Map, Value};
use std::io;
use std::path::{Path, PathBuf};

/// The settings file, the one entry that is the run's own.
const SETTINGS: &str = "settings.json";

/// Directories the CLI keeps per-project state in (chats, shell
/// history): made in the real directory before the run, so that what the
/// CLI writes there goes through the links from the start.
const STATE_DIRS: [&str; 2] = ["tmp", "history"];

/// A run's home for Gemini CLI, lent the user's real `.gemini`.
#[derive(Debug)]
pub(crate) struct GeminiHome {
    /// The run's home (`GEMINI_CLI_HOME`).
    home: PathBuf,
    /// The user's real `.gemini` directory.
    real: PathBuf,
}

impl GeminiHome {
    /// Makes the run's home under `scratch`: the user's settings from
    /// `real_home/.gemini/settings.json` with each of `overrides` (a JSON
    /// pointer and its value) set over them, and links to everything else
    /// there.
    pub fn lend(
        scratch: &Path,
        real_home: &Path,
        overrides: &[(String, Value)],
    ) -> Result<Self, String> {
        let real = real_home.join(".gemini");
        make_private_dir(&real).map_err(|err| at(&real, "cannot make", err))?;
        for dir in STATE_DIRS {
            let dir = real.join(dir);
            make_private_dir(&dir).map_err(|err| at(&dir, "cannot make", err))?;
        }
        let home = scratch.join("gemini-home");
        let own = home.join(".gemini");
        std::fs::create_dir_all(&own).map_err(|err| at(&own, "cannot make", err))?;
        let entries = std::fs::read_dir(&real).map_err(|err| at(&real, "cannot read", err))?;
        for entry in entries {
            let entry = entry.map_err(|err| at(&real, "cannot read", err))?;
            if entry.file_name() == SETTINGS {
                continue;
            }
            let link = own.join(entry.file_name());
            std::os::unix::fs::symlink(entry.path(), &link)
                .map_err(|err| at(&link, "cannot make", err))?;
        }
        // Agent skills live beside `.gemini`, in `~/.agents`.
        let agents = real_home.join(".agents");
        if agents.is_dir() {
            std::os::unix::fs::symlink(&agents, home.join(".agents"))
                .map_err(|err| at(&home.join(".agents"), "cannot make", err))?;
        }
        let mut settings = user_settings(&real.join(SETTINGS))?;
        for (pointer, value) in overrides {
            set(&mut settings, pointer, value.clone());
        }
        let file = own.join(SETTINGS);
        std::fs::write(&file, settings.to_string())
            .map_err(|err| at(&file, "cannot write", err))?;
        Ok(Self { home, real })
    }

    /// The run's home, for `GEMINI_CLI_HOME`.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Moves what the CLI created or replaced in the run's `.gemini` (all
    /// but the settings, its locks and its half-written files) into the
    /// real one, where it would have written them itself.
    pub fn hand_back(&self) -> Result<(), String> {
        let own = self.home.join(".gemini");
        let entries = std::fs::read_dir(&own).map_err(|err| at(&own, "cannot read", err))?;
        for entry in entries {
            let entry = entry.map_err(|err| at(&own, "cannot read", err))?;
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if name == SETTINGS || text.ends_with(".lock") || text.ends_with(".tmp") {
                continue;
            }
            let from = entry.path();
            let lent = std::fs::symlink_metadata(&from).is_ok_and(|meta| meta.is_symlink());
            if lent {
                continue;
            }
            let to = self.real.join(&name);
            move_into(&from, &to).map_err(|err| at(&to, "cannot keep", err))?;
        }
        Ok(())
    }
}

/// The user's Gemini CLI settings, an empty object when there are none.
/// They may hold comments, as the CLI allows.
fn user_settings(file: &Path) -> Result<Value, String> {
    let text = match std::fs::read(file) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Value::Object(Map::new())),
        Err(err) => return Err(at(file, "cannot read", err)),
    };
    let settings: Value = serde_json::from_reader(json_comments::StripComments::new(&text[..]))
        .map_err(|err| {
            format!(
                "cannot read Gemini CLI's settings {}: {err} (Gemini CLI would refuse them too; fix that file)",
                file.display()
            )
        })?;
    match settings {
        Value::Object(_) => Ok(settings),
        _ => Err(format!(
            "Gemini CLI's settings {} are not a JSON object (Gemini CLI would refuse them too; fix that file)",
            file.display()
        )),
    }
}

/// Sets `value` at `pointer` (a JSON pointer, `/a/b/c`) in `settings`,
/// making the objects on the way and replacing whatever is in the way that
/// is not one.
fn set(settings: &mut Value, pointer: &str, value: Value) {
    let mut keys: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|key| key.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some(last) = keys.pop() else {
        return;
    };
    let mut at = settings;
    for key in keys {
        if !at.get(&key).is_some_and(Value::is_object) {
            at[&key] = Value::Object(Map::new());
        }
        at = &mut at[&key];
    }
    at[&last] = value;
}

/// A directory only its owner may enter, made if missing (an existing one
/// keeps its mode: it is the user's).
fn make_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir),
        other => other,
    }
}

/// Moves `from` to `to`: over a file there, into a directory there (entry
/// by entry), across file systems by copying.
fn move_into(from: &Path, to: &Path) -> io::Result<()> {
    let target = std::fs::symlink_metadata(to);
    if from.is_dir() && target.as_ref().is_ok_and(|meta| meta.is_dir()) {
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            move_into(&entry.path(), &to.join(entry.file_name()))?;
        }
        return std::fs::remove_dir(from);
    }
    match std::fs::rename(from, to) {
        Err(err) if err.raw_os_error() == Some(libc::EXDEV) => {
            copy(from, to)?;
            if from.is_dir() {
                std::fs::remove_dir_all(from)
            } else {
                std::fs::remove_file(from)
            }
        }
        other => other,
    }
}

/// Copies a file, or a directory and what it holds.
fn copy(from: &Path, to: &Path) -> io::Result<()> {
    if !from.is_dir() {
        return std::fs::copy(from, to).map(drop);
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        copy(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}

/// `what` failed at `path`.
fn at(path: &Path, what: &str, err: io::Error) -> String {
    format!("{what} {}: {err}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn overrides() -> Vec<(String, Value)> {
        vec![
            ("/model/maxSessionTurns".to_string(), json!(7)),
            (
                "/security/auth/selectedType".to_string(),
                json!("gemini-api-key"),
            ),
            ("/mcpServers/notes~1v2".to_string(), json!({"command": "n"})),
        ]
    }

    #[test]
    fn the_users_settings_carry_kaizens_on_top_and_the_rest_is_lent() {
        let real_home = tempfile::tempdir().unwrap();
        let real = real_home.path().join(".gemini");
        std::fs::create_dir_all(real.join("extensions")).unwrap();
        std::fs::write(
            real.join(SETTINGS),
            "{\n // the user's own\n \"model\": {\"name\": \"m\", \"maxSessionTurns\": 90},\n \"security\": {\"auth\": \"old\"},\n \"mcpServers\": {\"mine\": {\"command\": \"x\"}}\n}",
        )
        .unwrap();
        std::fs::write(real.join("oauth_creds.json"), "creds").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let home = GeminiHome::lend(scratch.path(), real_home.path(), &overrides()).unwrap();
        let own = home.home().join(".gemini");
        let settings: Value =
            serde_json::from_slice(&std::fs::read(own.join(SETTINGS)).unwrap()).unwrap();
        assert_eq!(
            settings["model"],
            json!({"name": "m", "maxSessionTurns": 7})
        );
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(settings["mcpServers"]["mine"]["command"], "x");
        assert_eq!(settings["mcpServers"]["notes/v2"]["command"], "n");
        assert_eq!(
            std::fs::read_to_string(own.join("oauth_creds.json")).unwrap(),
            "creds"
        );
        assert!(own.join("extensions").is_dir());
        // The user's settings are untouched.
        assert!(
            std::fs::read_to_string(real.join(SETTINGS))
                .unwrap()
                .contains("\"maxSessionTurns\": 90")
        );
    }

    #[test]
    fn what_the_cli_made_or_replaced_goes_back_and_its_locks_do_not() {
        let real_home = tempfile::tempdir().unwrap();
        let real = real_home.path().join(".gemini");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("projects.json"), "old").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let home = GeminiHome::lend(scratch.path(), real_home.path(), &overrides()).unwrap();
        let own = home.home().join(".gemini");
        // Written through a lent directory, written by renaming over a
        // link, and made new.
        std::fs::create_dir_all(own.join("tmp/proj/chats")).unwrap();
        std::fs::write(own.join("tmp/proj/chats/session.json"), "chat").unwrap();
        std::fs::write(own.join("projects.json.new"), "new").unwrap();
        std::fs::rename(own.join("projects.json.new"), own.join("projects.json")).unwrap();
        std::fs::write(own.join("installation_id"), "id").unwrap();
        std::fs::create_dir(own.join("projects.json.lock")).unwrap();
        home.hand_back().unwrap();
        assert_eq!(
            std::fs::read_to_string(real.join("tmp/proj/chats/session.json")).unwrap(),
            "chat"
        );
        assert_eq!(
            std::fs::read_to_string(real.join("projects.json")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(real.join("installation_id")).unwrap(),
            "id"
        );
        assert!(!real.join("projects.json.lock").exists());
        assert!(
            !real.join(SETTINGS).exists(),
            "the run's settings stay its own"
        );
    }

    #[test]
    fn a_missing_gemini_directory_is_made_private_and_bad_settings_are_named() {
        use std::os::unix::fs::PermissionsExt;
        let real_home = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        GeminiHome::lend(scratch.path(), real_home.path(), &overrides()).unwrap();
        let real = real_home.path().join(".gemini");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(real.join("tmp").is_dir() && real.join("history").is_dir());
        std::fs::write(real.join(SETTINGS), "[1, 2]").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let err = GeminiHome::lend(scratch.path(), real_home.path(), &overrides()).unwrap_err();
        assert!(err.contains("not a JSON object"), "{err}");
        std::fs::write(real.join(SETTINGS), "{oops").unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let err = GeminiHome::lend(scratch.path(), real_home.path(), &overrides()).unwrap_err();
        assert!(err.contains("fix that file"), "{err}");
    }
}
