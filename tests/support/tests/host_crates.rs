//! The host's crates keep to their floors, and to the rules clippy
//! enforces in each.
//!
//! `host/` holds its crates on floors (docs/architecture.md draws them):
//! `vocabulary/` (what the parts say to each other), `engines/` (the
//! machinery), `adapters/` (Kaizen's parts in someone else's terms) and
//! `front-ends/` (what a user or a program starts), with `build/` beside
//! them for build scripts. A crate may depend on crates of its own floor or
//! of a floor below it, never above: the loop cannot reach for a front
//! end's configuration, a vocabulary crate cannot grow behaviour. Build
//! support may be used from any floor and uses none.
//!
//! This test reads every `Cargo.toml` under `host/` and fails, naming each
//! offending dependency, when one points up a floor, and when a crate sits
//! outside the floors. It also fails when a crate's root (its `lib.rs` or
//! `main.rs`) does not deny `unwrap` in production code and warn of
//! undocumented public items: clippy enforces both (`-D warnings` in CI)
//! only where the root asks it to, and a new crate must not go without.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The floors, bottom first.
const FLOORS: [&str; 4] = ["vocabulary", "engines", "adapters", "front-ends"];

/// Build-script support: below every floor, depending on none.
const BUILD: &str = "build";

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A crate of the host: its package name, its floor's rank (`None` for
/// build support), and the Kaizen crates it depends on.
struct HostCrate {
    dir: String,
    rank: Option<usize>,
    depends_on: Vec<String>,
}

fn host_crates() -> BTreeMap<String, HostCrate> {
    let host = root().join("host");
    let mut crates = BTreeMap::new();
    for floor in std::fs::read_dir(&host).expect("host/ is readable") {
        let floor = floor.expect("host/ lists").path();
        let floor_name = floor.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            floor.is_dir(),
            "host/{floor_name} is not a floor: host/ holds only the floors {FLOORS:?} and {BUILD}/"
        );
        let rank = FLOORS.iter().position(|f| *f == floor_name);
        assert!(
            rank.is_some() || floor_name == BUILD,
            "host/{floor_name}/ is not a floor: crates live under host/{{{}}}/ or host/{BUILD}/",
            FLOORS.join(",")
        );
        for dir in std::fs::read_dir(&floor).expect("a floor is readable") {
            let dir = dir.expect("a floor lists").path();
            let manifest = dir.join("Cargo.toml");
            let text = std::fs::read_to_string(&manifest)
                .unwrap_or_else(|err| panic!("{}: {err}", manifest.display()));
            let toml: toml::Table = text
                .parse()
                .unwrap_or_else(|err| panic!("{}: {err}", manifest.display()));
            let name = toml["package"]["name"].as_str().unwrap().to_owned();
            let mut depends_on = Vec::new();
            for table in ["dependencies", "build-dependencies"] {
                if let Some(deps) = toml.get(table).and_then(|t| t.as_table()) {
                    depends_on.extend(deps.keys().filter(|k| k.starts_with("kaizen")).cloned());
                }
            }
            let rel = dir
                .strip_prefix(root())
                .unwrap_or(&dir)
                .display()
                .to_string();
            crates.insert(
                name,
                HostCrate {
                    dir: rel,
                    rank,
                    depends_on,
                },
            );
        }
    }
    crates
}

#[test]
fn no_crate_depends_on_a_floor_above_its_own() {
    let crates = host_crates();
    assert!(
        crates.len() >= 10,
        "found only {} crates under host/",
        crates.len()
    );
    let mut wrong = Vec::new();
    for (name, krate) in &crates {
        for dep in &krate.depends_on {
            let Some(target) = crates.get(dep) else {
                continue;
            };
            let fine = match (krate.rank, target.rank) {
                // Build support is used from anywhere and uses nothing.
                (_, None) => true,
                (None, Some(_)) => false,
                (Some(mine), Some(theirs)) => theirs <= mine,
            };
            if !fine {
                wrong.push(format!(
                    "{name} ({}) depends on {dep} ({}), a floor above it",
                    krate.dir, target.dir
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies that point up a floor (move the shared part down, or the crate up):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_workspace_lists_every_host_crate_where_it_is() {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("the root Cargo.toml");
    let toml: toml::Table = text.parse().expect("the root Cargo.toml parses");
    let members: Vec<&str> = toml["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    for krate in host_crates().values() {
        assert!(
            members.contains(&krate.dir.as_str()),
            "{} is not a workspace member",
            krate.dir
        );
    }
}

/// What every production crate's root says, so that clippy enforces it.
const ROOT_RULES: [&str; 2] = ["#![deny(clippy::unwrap_used)]", "#![warn(missing_docs)]"];

#[test]
fn every_host_crate_denies_unwrap_and_undocumented_items() {
    let mut missing = Vec::new();
    for krate in host_crates().values() {
        let dir = root().join(&krate.dir);
        let roots: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|file| dir.join(file))
            .filter(|path| path.exists())
            .collect();
        assert!(
            !roots.is_empty(),
            "{} has no src/lib.rs or src/main.rs",
            krate.dir
        );
        for path in roots {
            let text = std::fs::read_to_string(&path).expect("a crate root is readable");
            for rule in ROOT_RULES {
                if !text.lines().any(|line| line.trim() == rule) {
                    missing.push(format!("{}: {rule}", path.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "crate roots without the rules clippy enforces:\n{}",
        missing.join("\n")
    );
}
