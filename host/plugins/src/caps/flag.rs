//! What the capabilities that are a plain `true` (`interaction`, `agent`,
//! `llm`, `parallel`) share: granted when both sides say so, refused with
//! `NAME: not granted` otherwise, listed by name.

use super::EffectiveGrant;

/// Both sides together.
pub(crate) fn union(a: &bool, b: &bool) -> bool {
    *a || *b
}

/// Granted when requested and granted; a request the grant lacks is
/// refused by `name`.
pub(crate) fn intersect(
    name: &str,
    requested: &bool,
    granted: &bool,
    out: &mut EffectiveGrant,
) -> bool {
    if *requested && !*granted {
        out.denied.push(format!("{name}: not granted"));
    }
    *requested && *granted
}

/// The flag as listings show it: its name when set.
pub(crate) fn describe(name: &str, on: &bool) -> Vec<String> {
    if *on {
        vec![name.to_string()]
    } else {
        Vec::new()
    }
}
