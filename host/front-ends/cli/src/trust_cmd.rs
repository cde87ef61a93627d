//! `kaizen trust`: trust a workspace's configuration, list the trusted
//! ones, or take trust back.

use anyhow::Context as _;
use kaizen_app::config::kaizen_home;
use kaizen_app::trust::{ConfigSnapshot, TrustStatus, TrustStore};
use std::path::Path;

/// `kaizen trust [DIR]`: records the workspace's config as trusted, as it
/// is now, after showing what it holds.
pub fn trust(dir: &Path) -> anyhow::Result<()> {
    let root = canonical(dir)?;
    let config = ConfigSnapshot::read(&root)?;
    let store = TrustStore::new(&kaizen_home()?);
    match store.status(&config)? {
        TrustStatus::NothingToTrust => {
            println!(
                "{} has no Kaizen configuration (kaizen.toml, .kaizen/, .claude/ settings, \
                 .mcp.json); there is nothing to trust.",
                root.display()
            );
            return Ok(());
        }
        TrustStatus::Trusted => {
            println!("{} is already trusted, as it is now.", root.display());
            return Ok(());
        }
        TrustStatus::NotTrusted | TrustStatus::Changed => {}
    }
    store.trust(&config)?;
    println!(
        "Trusted {} with:\n{}\nAny change to these files asks for trust again.",
        root.display(),
        config.listing()
    );
    Ok(())
}

/// `kaizen trust --revoke [DIR]`.
pub fn revoke(dir: &Path) -> anyhow::Result<()> {
    let root = canonical(dir)?;
    if TrustStore::new(&kaizen_home()?).revoke(&root)? {
        println!("{} is no longer trusted.", root.display());
    } else {
        println!("{} was not trusted.", root.display());
    }
    Ok(())
}

/// `kaizen trust --list`: every trusted workspace, and whether its config
/// is still as it was trusted.
pub fn list() -> anyhow::Result<()> {
    let store = TrustStore::new(&kaizen_home()?);
    let trusted = store.list()?;
    if trusted.is_empty() {
        println!("No workspace is trusted.");
    }
    for entry in trusted {
        let now = match ConfigSnapshot::read(&entry.path) {
            Ok(config) if config.digest() == entry.digest => "unchanged",
            Ok(_) => "changed since: asks again",
            Err(_) => "cannot be read",
        };
        println!(
            "{}  trusted {}  ({now})",
            entry.path.display(),
            entry.trusted_at
        );
    }
    Ok(())
}

fn canonical(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    dir.canonicalize()
        .with_context(|| format!("the workspace {} does not exist", dir.display()))
}
