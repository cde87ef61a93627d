//! The one place Kaizen starts programs.
//!
//! `clippy.toml` forbids `std::process::Command::new` and
//! `tokio::process::Command::new` everywhere else, so a new feature that
//! needs a program has to come here: either into the OS sandbox, through a
//! [`crate::Sandbox`] made from the session's [`crate::Containment`], or
//! out of it as one of the few named [`Unconfined`] cases, each with its
//! reason, listed in the project's security model. Whatever it is, a
//! program starts with an empty environment: the caller adds each variable
//! it means to pass, so a provider key never travels by accident.

use std::ffi::OsStr;

/// Why a program runs outside Kaizen's OS sandbox. Each case is listed in
/// the security model; adding one is a security decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconfined {
    /// Another vendor's agent CLI (`--runtime claude-code|codex|gemini-cli`):
    /// it runs its commands in a sandbox of its own, which cannot be made
    /// inside Kaizen's (that forbids new namespaces), and is bounded by its
    /// own process group, Kaizen's limits and an environment holding only
    /// its own vendor's variables.
    OtherAgent,
    /// Kaizen's own binary (`kaizen eval` running each task with `kaizen
    /// run`): it confines what it runs itself.
    KaizenItself,
}

impl Unconfined {
    /// Why this case runs outside the sandbox, in a sentence.
    pub fn reason(self) -> &'static str {
        match self {
            Unconfined::OtherAgent => {
                "another vendor's agent CLI, which sandboxes its own commands"
            }
            Unconfined::KaizenItself => "Kaizen's own binary, which confines what it runs",
        }
    }
}

/// `program`, to run outside the sandbox for `why`, with an empty
/// environment.
pub fn unconfined(why: Unconfined, program: impl AsRef<OsStr>) -> std::process::Command {
    tracing::debug!(
        program = %program.as_ref().to_string_lossy(),
        "starting a program outside the sandbox: {}",
        why.reason()
    );
    bare(program)
}

/// [`unconfined`], for a caller that waits on the program asynchronously.
pub fn unconfined_async(why: Unconfined, program: impl AsRef<OsStr>) -> tokio::process::Command {
    tokio::process::Command::from(unconfined(why, program))
}

/// A program the sandbox starts and confines between fork and exec (its
/// environment is set by the caller from the sandbox's allow-list).
pub(crate) fn confined(program: impl AsRef<OsStr>) -> std::process::Command {
    bare(program)
}

/// The sandbox's spawner (`crate::spawner`): Kaizen's own binary, which
/// starts the session's processes into their sandboxes and runs nothing
/// else.
pub(crate) fn spawner(program: impl AsRef<OsStr>) -> std::process::Command {
    bare(program)
}

/// `program` with nothing of the host's environment.
#[allow(
    clippy::disallowed_methods,
    reason = "the launcher is the one place programs start"
)]
fn bare(program: impl AsRef<OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.env_clear();
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unconfined_program_starts_with_nothing_of_the_hosts_environment() {
        assert!(
            std::env::var_os("PATH").is_some(),
            "the host has an environment"
        );
        let out = unconfined(Unconfined::KaizenItself, "/usr/bin/env")
            .output()
            .unwrap();
        let env = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        assert!(env.trim().is_empty(), "{env}");
    }
}
