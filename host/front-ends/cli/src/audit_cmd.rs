//! `kaizen audit verify`: checks the audit hook's hash-chained logs.

use anyhow::Context as _;
use kaizen_app::audit_anchor::dir_in;
use kaizen_app::config::kaizen_home;
use std::path::{Path, PathBuf};

/// Where the built-in `audit` plugin keeps its logs.
fn audit_dir() -> anyhow::Result<PathBuf> {
    Ok(dir_in(&kaizen_home()?))
}

/// Why the log `file` (with `text`, `count` entries, its chain intact)
/// does not end where its session recorded when its last run ended, if
/// it does not; nothing when its session recorded nothing.
fn check_end(file: &Path, text: &str, count: usize) -> Option<String> {
    let id = file.file_stem()?.to_string_lossy().into_owned();
    let store = kaizen_app::session::open_store().ok()?;
    let recorded = store.meta(&id).ok()?.audit_end?;
    let entries = count as u64;
    if entries < recorded.entries {
        return Some(format!(
            "it holds {entries} entries, and its session recorded {} when it ended: the last were removed",
            recorded.entries
        ));
    }
    // Entries after the recorded end are a run that did not end cleanly;
    // the recorded one must still be there.
    let at_end = text
        .lines()
        .nth(usize::try_from(recorded.entries).ok()?.checked_sub(1)?)
        .and_then(|line| serde_json::from_str::<kaizen_audit_log::Entry>(line).ok())?;
    (at_end.hash != recorded.hash).then(|| {
        format!(
            "entry {} is not the one its session recorded when it ended: the log was rewritten",
            recorded.entries
        )
    })
}

/// The logs to check: `which` is a session id, `last`, or a file; none
/// means every log.
fn logs(which: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
    let dir = audit_dir()?;
    if let Some(which) = which {
        let as_path = Path::new(which);
        if as_path.is_file() {
            return Ok(vec![as_path.to_path_buf()]);
        }
        if which != "last" {
            let file = dir.join(format!("{which}.jsonl"));
            anyhow::ensure!(
                file.is_file(),
                "no audit log for session {which} in {} (is the audit hook on? [hooks] builtins = [\"audit\"])",
                dir.display()
            );
            return Ok(vec![file]);
        }
    }
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|ext| ext == "jsonl") {
                    let modified = entry.metadata().and_then(|m| m.modified());
                    found.push((modified.unwrap_or(std::time::UNIX_EPOCH), path));
                }
            }
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err).with_context(|| format!("reading {}", dir.display())),
    }
    found.sort();
    if which == Some("last") {
        return Ok(found.pop().map(|(_, path)| vec![path]).unwrap_or_default());
    }
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// Verifies the logs `which` names; exit code 0 when all hold, 1 when one
/// is broken.
pub fn verify(which: Option<&str>) -> anyhow::Result<u8> {
    let files = logs(which)?;
    if files.is_empty() {
        println!(
            "no audit logs in {} (turn the audit hook on with [hooks] builtins = [\"audit\"] in $KAIZEN_HOME/config.toml)",
            audit_dir()?.display()
        );
        return Ok(0);
    }
    let mut broken = 0;
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let verified = kaizen_audit_log::verify(&text).map_err(|at| at.to_string());
        let ended = verified.and_then(|count| match check_end(file, &text, count) {
            Some(why) => Err(why),
            None => Ok(count),
        });
        match ended {
            Ok(count) => println!("ok      {}: {count} entries, chain intact", file.display()),
            Err(why) => {
                broken += 1;
                println!("BROKEN  {}: {why}", file.display());
            }
        }
    }
    if broken > 0 {
        eprintln!(
            "kaizen: {broken} of {} audit log(s) were changed after they were written",
            files.len()
        );
        return Ok(1);
    }
    Ok(0)
}
