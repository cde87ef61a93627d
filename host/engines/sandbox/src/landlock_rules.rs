//! The Landlock ruleset: what a sandboxed process may see of the filesystem.
//!
//! System directories are readable and executable; the policy's writable
//! directories and the session's private directory get every right; a few
//! device nodes are usable; everything else — `$HOME`, `KAIZEN_HOME`, other
//! users' files — is invisible. Without network, TCP bind and connect are
//! denied too (Landlock ABI 4), and from ABI 6 abstract unix sockets and
//! signals are scoped to the sandbox.
//!
//! A ruleset is made per process because the private `/proc` only exists
//! inside the child: the child adds the `/proc` rule itself
//! ([`PROC_ACCESS`]) before restricting, and sharing one ruleset fd would pile
//! those rules up.
//!
//! Known gap: before ABI 9 Landlock does not check `connect(2)` on named unix
//! sockets. The process's own root ([`crate::root`]) closes it: sockets
//! outside the granted directories are not in that root at all.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};

/// The newest ABI this crate knows; the `landlock` crate narrows every set of
/// rights to what the running kernel supports (best effort), so this is "the
/// best ABI available".
const BEST: ABI = ABI::V9;

/// System directories granted read and execute, when they exist.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Device nodes granted read and write (ioctl too: they have none worth
/// denying, and a denied TCGETS confuses isatty()).
const DEV_RW: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Device nodes granted read only.
const DEV_R: &[&str] = &["/dev/urandom", "/dev/random"];

/// Rights on the private `/proc`: read files and list directories.
pub(crate) const PROC_ACCESS: u64 = (1 << 2) | (1 << 3);

/// Every filesystem right the ruleset handles on this kernel, as the raw
/// bits the child adds rules with: 13 rights at ABI 1, then `REFER` (ABI
/// 2), `TRUNCATE` (ABI 3) and `IOCTL_DEV` (ABI 5).
pub(crate) fn all_fs_access() -> u64 {
    let rights = match abi_version() {
        Ok(abi) if abi >= 5 => 16,
        Ok(abi) if abi >= 3 => 15,
        Ok(2) => 14,
        _ => 13,
    };
    (1 << rights) - 1
}

/// What one session's processes may touch.
#[derive(Debug, Clone)]
pub(crate) struct FsGrant {
    /// Read and execute.
    pub read: Vec<PathBuf>,
    /// Every right.
    pub write: Vec<PathBuf>,
    /// Whether TCP is allowed.
    pub network: bool,
}

/// The kernel's Landlock ABI version, or the reason there is none.
pub(crate) fn abi_version() -> Result<i32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no attribute and returns a number.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if rc > 0 {
        return Ok(rc as i32);
    }
    let err = std::io::Error::last_os_error();
    Err(match err.raw_os_error() {
        Some(libc::ENOSYS) => "not built into this kernel (CONFIG_SECURITY_LANDLOCK)".into(),
        Some(libc::EOPNOTSUPP) => {
            "built in but not enabled (add landlock to the lsm= boot parameter)".into()
        }
        _ => format!("unusable: {err}"),
    })
}

fn rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, String> {
    let fd = PathFd::new(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(PathBeneath::new(fd, access))
}

/// Builds the ruleset for one process and returns its fd (close-on-exec).
pub(crate) fn create(grant: &FsGrant) -> Result<OwnedFd, String> {
    let read = AccessFs::from_read(BEST);
    let all = AccessFs::from_all(BEST);
    let file = AccessFs::from_file(BEST);
    let dev_rw =
        file & (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev);
    let err = |e: landlock::RulesetError| format!("Landlock: {e}");

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(err)?;
    if !grant.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(BEST))
            .map_err(err)?;
    }
    ruleset = ruleset.scope(Scope::from_all(BEST)).map_err(err)?;
    let mut created = ruleset.create().map_err(err)?;

    for dir in SYSTEM_DIRS.iter().map(Path::new).filter(|p| p.exists()) {
        created = created.add_rule(rule(dir, read)?).map_err(err)?;
    }
    for dev in DEV_RW.iter().map(Path::new).filter(|p| p.exists()) {
        created = created.add_rule(rule(dev, dev_rw)?).map_err(err)?;
    }
    for dev in DEV_R.iter().map(Path::new).filter(|p| p.exists()) {
        created = created
            .add_rule(rule(dev, file & AccessFs::ReadFile)?)
            .map_err(err)?;
    }
    for dir in &grant.read {
        created = created.add_rule(rule(dir, read)?).map_err(err)?;
    }
    for dir in &grant.write {
        created = created.add_rule(rule(dir, all)?).map_err(err)?;
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| "Landlock is not available on this kernel".into())
}
