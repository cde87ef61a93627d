//! `kaizen plugins add PATH` and `kaizen plugins remove NAME`: a plugin
//! installed into (or removed from) the user's or the workspace's plugin
//! directory and its `plugins.lock` ([`kaizen_app::plugin_install`]),
//! told to the user.

use kaizen_app::plugin_install::{self, Added, Removed};
use kaizen_plugin_host::LOCK_FILE;
use std::fmt::Write as _;
use std::path::Path;

pub use kaizen_app::plugin_install::Target;

/// `kaizen plugins add PATH`.
pub async fn add(path: &Path, target: &Target) -> anyhow::Result<()> {
    let Added {
        name,
        version,
        root,
        dest,
        entry,
        replaced,
        lock_path,
        newly_pinned,
        refused,
        untrusted_workspace,
    } = plugin_install::add(path, target).await?;
    let mut out = String::new();
    let _ = writeln!(out, "added {name} {version} to {}", dest.display());
    if let Some(replaced) = replaced {
        let _ = writeln!(out, "  replaced: component {replaced}");
    }
    let _ = writeln!(out, "  component {}", entry.component);
    let _ = writeln!(out, "  manifest  {}", entry.manifest);
    let _ = writeln!(
        out,
        "  signed:   {}",
        entry
            .signer
            .as_deref()
            .map_or("no".into(), |key| format!("by {key}"))
    );
    let _ = writeln!(out, "  pinned in {}", lock_path.display());
    if !newly_pinned.is_empty() {
        let _ = writeln!(
            out,
            "  {} now has a lock, so the plugins already there were pinned as they are: {}",
            root.display(),
            newly_pinned.join(", ")
        );
    }
    if let Some(refused) = refused {
        let _ = writeln!(out, "note: as configured now it does not load: {refused}");
    }
    if untrusted_workspace {
        let _ = writeln!(
            out,
            "note: this workspace is not trusted, so its plugins do not load; trust it with `kaizen trust`"
        );
    }
    print!("{out}");
    Ok(())
}

/// `kaizen plugins remove NAME`.
pub fn remove(name: &str, target: &Target) -> anyhow::Result<()> {
    let Removed { root, unpinned } = plugin_install::remove(name, target)?;
    println!(
        "removed {name} from {}{}",
        root.display(),
        if unpinned {
            format!(" and its entry in {LOCK_FILE}")
        } else {
            String::new()
        }
    );
    Ok(())
}
