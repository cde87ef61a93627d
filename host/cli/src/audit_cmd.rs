//! `kaizen audit verify`: checks the audit hook's hash-chained logs.

use crate::config::kaizen_home;
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Where the built-in `audit` plugin keeps its logs.
fn audit_dir() -> anyhow::Result<PathBuf> {
    Ok(kaizen_home()?.join("data").join("audit"))
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
        match kaizen_audit_log::verify(&text) {
            Ok(count) => println!("ok      {}: {count} entries, chain intact", file.display()),
            Err(at) => {
                broken += 1;
                println!("BROKEN  {}: {at}", file.display());
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
