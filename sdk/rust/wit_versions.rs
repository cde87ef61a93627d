//! Reads the plugin contract's `wit/` directory. Each released version is
//! a `vX.Y.Z` directory that holds only the files changed since the
//! version before it (the oldest holds them all); a version in full is
//! each file from the newest directory up to it that has the file, with
//! its `package` line naming that version.
//!
//! One file, included by the SDK's build script and by the host's build
//! (`kaizen-guest-build`), so that the rule is written once. It uses only
//! `std`: building the SDK must not add dependencies.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// What every `package` line of the contract names, before `@version`.
const PACKAGE: &str = "kaizen:plugin";

/// `X.Y.Z` as numbers; `None` for anything else.
pub fn parse_version(version: &str) -> Option<[u64; 3]> {
    let mut parts = version.split('.').map(|part| part.parse::<u64>().ok());
    let version = [parts.next()??, parts.next()??, parts.next()??];
    parts.next().is_none().then_some(version)
}

/// The versions in `wit` (the names of its `vX.Y.Z` directories without
/// the `v`), oldest first.
pub fn versions(wit: &Path) -> Result<Vec<String>, String> {
    let entries =
        fs::read_dir(wit).map_err(|err| format!("cannot read {}: {err}", wit.display()))?;
    let mut versions: Vec<([u64; 3], String)> = entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name.strip_prefix('v')?;
            Some((parse_version(version)?, version.to_owned()))
        })
        .collect();
    versions.sort();
    Ok(versions.into_iter().map(|(_, version)| version).collect())
}

/// The `.wit` files of `version` in full, by file name: each from the
/// newest directory up to `version` that has it, its `package` line
/// naming `version`. Fails when `version` is not in `wit`, or a file in
/// `wit/vX.Y.Z` declares another version than `X.Y.Z` (a copy left from
/// the version before).
pub fn assemble(wit: &Path, version: &str) -> Result<BTreeMap<String, String>, String> {
    let all = versions(wit)?;
    let Some(at) = all.iter().position(|known| known == version) else {
        return Err(format!(
            "{} has no contract version {version} (it has {})",
            wit.display(),
            all.join(", ")
        ));
    };
    let mut files = BTreeMap::new();
    for earlier in &all[..=at] {
        for (name, text) in own_files(&wit.join(format!("v{earlier}")), earlier)? {
            files.insert(name, text);
        }
    }
    files
        .into_iter()
        .map(|(name, text)| {
            let named = with_version(&text, version)
                .ok_or_else(|| format!("{name} in {} has no package line", wit.display()))?;
            Ok((name, named))
        })
        .collect()
}

/// Writes `version` in full (see [`assemble`]) to `out/vX.Y.Z/`, in place
/// of what was there; that directory.
pub fn write_assembled(wit: &Path, version: &str, out: &Path) -> Result<PathBuf, String> {
    let files = assemble(wit, version)?;
    let dir = out.join(format!("v{version}"));
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|err| format!("cannot empty {}: {err}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    for (name, text) in files {
        let path = dir.join(name);
        fs::write(&path, text).map_err(|err| format!("cannot write {}: {err}", path.display()))?;
    }
    Ok(dir)
}

/// The `.wit` files directly in `dir`, each checked to declare `version`.
fn own_files(dir: &Path, version: &str) -> Result<Vec<(String, String)>, String> {
    let entries =
        fs::read_dir(dir).map_err(|err| format!("cannot read {}: {err}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|err| format!("cannot read {}: {err}", dir.display()))?
            .path();
        if path.extension().is_none_or(|ext| ext != "wit") {
            continue;
        }
        let text = fs::read_to_string(&path)
            .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        let declared = package_version(&text).map(|(_, declared)| declared);
        if declared != Some(version) {
            return Err(format!(
                "{} declares {}; a file in v{version} must declare `package {PACKAGE}@{version};`",
                path.display(),
                declared.map_or("no version".to_owned(), |v| format!("{PACKAGE}@{v}")),
            ));
        }
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| format!("{} has no UTF-8 name", path.display()))?;
        files.push((name.to_owned(), text));
    }
    Ok(files)
}

/// Where in `text` the version of its `package kaizen:plugin@X.Y.Z;`
/// line is (a byte offset), and that version.
fn package_version(text: &str) -> Option<(usize, &str)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("package ") {
            let version = rest
                .trim()
                .strip_prefix(PACKAGE)?
                .strip_prefix('@')?
                .strip_suffix(';')?;
            let start = offset + line.find('@')? + 1;
            return Some((start, version));
        }
        offset += line.len();
    }
    None
}

/// `text` with its package line naming `version`, every other byte as
/// it was.
fn with_version(text: &str, version: &str) -> Option<String> {
    let (start, old) = package_version(text)?;
    Some(format!(
        "{}{version}{}",
        &text[..start],
        &text[start + old.len()..]
    ))
}

/// Puts `version` together in full under `out/wit` and writes
/// `out/contract.rs`: `generate_contract!`, which runs
/// `wit_bindgen::generate!` on it with the options given (a proc macro's
/// `path` must be a literal, so a build script writes it out).
pub fn write_bindings_macro(wit: &Path, version: &str, out: &Path) -> Result<(), String> {
    let dir = write_assembled(wit, version, &out.join("wit"))?;
    let path = dir
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", dir.display()))?;
    let generate = format!(
        "/// `wit_bindgen::generate!` on contract {version}, with the options given.\n\
         macro_rules! generate_contract {{\n    ($($options:tt)*) => {{\n        \
         wit_bindgen::generate!({{ path: {path:?}, $($options)* }});\n    }};\n}}\n"
    );
    let file = out.join("contract.rs");
    fs::write(&file, generate).map_err(|err| format!("cannot write {}: {err}", file.display()))
}
