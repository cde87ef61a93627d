//! Where a worker's turns may work: a request names a workspace, and a
//! worker runs a turn only in a directory under the roots it was started
//! for, so a request cannot send the worker's keys and grants anywhere on
//! its machine.

use std::path::PathBuf;

/// The directories turns may work in, canonical: `roots`, else the
/// current directory.
pub fn workspace_roots(roots: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let here =
        std::env::current_dir().map_err(|err| format!("reading the current directory: {err}"))?;
    let roots = match roots.is_empty() {
        true => vec![here.clone()],
        false => roots.to_vec(),
    };
    roots
        .iter()
        .map(|root| {
            here.join(root)
                .canonicalize()
                .map_err(|err| format!("--root {}: {err}", root.display()))
        })
        .collect()
}

/// The workspace of a turn asking for `cwd`, if it lies in one of
/// `roots`: a request cannot send the worker's keys and grants to work
/// anywhere on its machine.
pub fn confined_workspace(cwd: Option<&str>, roots: &[PathBuf]) -> Result<PathBuf, String> {
    let here =
        std::env::current_dir().map_err(|err| format!("reading the current directory: {err}"))?;
    let asked = cwd.map_or_else(|| here.clone(), |cwd| here.join(cwd));
    let real = asked
        .canonicalize()
        .map_err(|err| format!("the workspace {} cannot be used: {err}", asked.display()))?;
    if roots.iter().any(|root| real.starts_with(root)) {
        return Ok(real);
    }
    Err(format!(
        "the workspace {} is outside the directories this worker serves ({}); start the worker with --root for it",
        real.display(),
        roots
            .iter()
            .map(|root| root.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}
