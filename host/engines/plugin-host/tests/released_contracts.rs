//! A released contract never changes silently: each version in full (as
//! the build puts it together from `wit/vX.Y.Z` and the versions before
//! it) is hashed (its files' relative paths and contents, in path order)
//! and compared with the hash recorded here when the version was
//! released. A change to a released version is a new version instead
//! (docs/contract.md, Versions); only a clarified documentation comment
//! may change one in place, and then its hash is recorded anew, on
//! purpose. Every version the host provides must be recorded.

use std::path::{Path, PathBuf};

/// Every released version and the BLAKE3 of its directory.
const RELEASED: &[(&str, &str)] = &[
    (
        "0.1.0",
        "87f6a91e3e39478c3548a9dc442e62e1036f5f25352dc131d393c844125a376b",
    ),
    (
        "0.1.1",
        "ba17db34e552fe81111ef3ed33b793cea68aa609ca4ff8f512306cebf7166469",
    ),
    (
        "0.1.2",
        "e55ad28306a1227aedb27781af88a6d2f73ec56a7349630ed003705dab5d3d01",
    ),
    (
        "0.1.3",
        "de6c37a95618b96ba2cfa687dd1f8631eccb1c39f8805416a00abed6fefefd76",
    ),
    (
        "0.1.4",
        "4bf1916ddcd0f10625b48ba745158da361e465f11a5cc85ab5a912820c882c42",
    ),
];

/// Where the build put each version together in full.
fn wit() -> PathBuf {
    Path::new(env!("OUT_DIR")).join("wit")
}

/// The repository's `wit/`, where each version holds what changed.
fn wit_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../wit")
}

/// `text` without its `package kaizen:plugin@X.Y.Z;` line.
fn without_package_line(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("package kaizen:plugin@"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files under `dir`, relative to it, sorted.
fn files(dir: &Path, under: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, under, out);
        } else {
            out.push(path.strip_prefix(under).unwrap().to_path_buf());
        }
    }
}

/// The hash of a version's directory: each file's relative path and
/// contents, length-prefixed so that no two layouts hash alike.
fn hash(dir: &Path) -> String {
    let mut names = Vec::new();
    files(dir, dir, &mut names);
    names.sort();
    let mut hasher = blake3::Hasher::new();
    for name in names {
        let path = name.to_str().unwrap().as_bytes();
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        hasher.update(&(path.len() as u64).to_le_bytes());
        hasher.update(path);
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hasher.finalize().to_hex().to_string()
}

#[test]
fn released_contracts_are_unchanged() {
    for (version, recorded) in RELEASED {
        let dir = wit().join(format!("v{version}"));
        assert!(
            dir.is_dir(),
            "{} is gone: a released contract stays",
            dir.display()
        );
        assert_eq!(
            hash(&dir),
            *recorded,
            "wit/v{version} changed after its release: put the change in a new version instead \
             (if it only clarifies documentation comments, record the new hash)"
        );
    }
}

#[test]
fn every_contract_the_host_provides_is_recorded_as_released() {
    for version in kaizen_plugin_host::SUPPORTED_CONTRACTS {
        let dir = wit().join(format!("v{version}"));
        assert!(
            RELEASED.iter().any(|(released, _)| released == version),
            "wit/v{version} is not recorded in RELEASED; record it when it is released: (\"{version}\", \"{}\")",
            hash(&dir)
        );
    }
}

#[test]
fn a_version_directory_holds_only_what_changed() {
    let versions = kaizen_plugin_host::SUPPORTED_CONTRACTS;
    for pair in versions.windows(2) {
        let (before, version) = (pair[0], pair[1]);
        let dir = wit_source().join(format!("v{version}"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name();
            let text = std::fs::read_to_string(dir.join(&name)).unwrap();
            let Ok(earlier) = std::fs::read_to_string(wit().join(format!("v{before}")).join(&name))
            else {
                continue;
            };
            assert_ne!(
                without_package_line(&text),
                without_package_line(&earlier),
                "wit/v{version}/{} is the same as in {before}: leave it out, the version takes it from the one before",
                name.to_string_lossy()
            );
        }
    }
}
