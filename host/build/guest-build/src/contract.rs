//! The contract version, read from where it is defined: the `wit/vX.Y.Z`
//! directories. The host's `CONTRACT_VERSION` and the `contract` note in
//! the manifests of built-in and test plugins both come from here, so no
//! file spells the current version out.

use crate::fail;
use crate::wit_versions::{parse_version, versions, write_assembled};
use std::fs;
use std::path::{Path, PathBuf};

/// The versions in `wit` (the names of its `vX.Y.Z` directories without
/// the `v`), oldest first. Stops the build when `wit` cannot be read or
/// holds none.
pub fn contract_versions(wit: &Path) -> Vec<String> {
    let versions = versions(wit).unwrap_or_else(|err| fail(err));
    if versions.is_empty() {
        fail(format!(
            "{} holds no contract version (a directory named vX.Y.Z)",
            wit.display()
        ));
    }
    versions
}

/// The newest version in `wit`; the build fails, naming `wit`, when it
/// holds none (an empty version would be stamped into every manifest).
pub fn newest_contract(wit: &Path) -> String {
    contract_versions(wit).pop().unwrap_or_else(|| {
        fail(format!(
            "{} holds no contract version (a directory vX.Y.Z)",
            wit.display()
        ))
    })
}

/// Writes contract `version` in full to `out/vX.Y.Z/` (a version's
/// directory in `wit` holds only what changed since the one before) and
/// returns that directory; the build stops when it cannot.
pub fn assemble_contract(wit: &Path, version: &str, out: &Path) -> PathBuf {
    crate::rerun_if_changed(wit);
    write_assembled(wit, version, out).unwrap_or_else(|err| fail(err))
}

/// Every version in `wit`, each in full under `out` (see
/// [`assemble_contract`]), oldest first.
pub fn assemble_contracts(wit: &Path, out: &Path) -> Vec<(String, PathBuf)> {
    crate::rerun_if_changed(wit);
    contract_versions(wit)
        .into_iter()
        .map(|version| {
            let dir = write_assembled(wit, &version, out).unwrap_or_else(|err| fail(err));
            (version, dir)
        })
        .collect()
}

/// The `wit` directory of the repository holding `dir`: the nearest
/// ancestor's `wit/` with a contract version in it.
pub(crate) fn wit_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|dir| dir.join("wit")).find(|wit| {
        fs::read_dir(wit).is_ok_and(|entries| {
            entries.flatten().any(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .and_then(|name| name.strip_prefix('v'))
                    .and_then(parse_version)
                    .is_some()
            })
        })
    })
}

/// `manifest` (a `plugin.toml`'s text) with `contract = "<version>"` in
/// its `[plugin]` table, after its `version` line (else right after the
/// header); unchanged when the table names a contract already or the text
/// has no `[plugin]` table.
pub fn stamp_contract(manifest: &str, version: &str) -> String {
    let names_one = manifest
        .parse::<toml::Table>()
        .ok()
        .and_then(|table| table.get("plugin")?.get("contract").cloned())
        .is_some();
    if names_one {
        return manifest.to_owned();
    }
    let lines: Vec<&str> = manifest.lines().collect();
    let Some(header) = lines.iter().position(|line| line.trim() == "[plugin]") else {
        return manifest.to_owned();
    };
    let table_end = lines[header + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |at| header + 1 + at);
    let after = lines[header + 1..table_end]
        .iter()
        .position(|line| line.split('=').next().map(str::trim) == Some("version"))
        .map_or(header, |at| header + 1 + at);
    let stamp = format!("contract = \"{version}\"");
    let mut out: Vec<&str> = lines[..=after].to_vec();
    out.push(&stamp);
    out.extend(&lines[after + 1..]);
    let mut text = out.join("\n");
    if manifest.ends_with('\n') {
        text.push('\n');
    }
    text
}
