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

/// The [`HostCapability`](super::HostCapability) methods every plain-`true`
/// capability shares (`union`, `intersect`, `is_granted`,
/// `describe_request`, `describe_grant`), written inside its `impl`.
macro_rules! flag_methods {
    () => {
        fn union(a: &bool, b: &bool) -> bool {
            $crate::caps::flag::union(a, b)
        }

        fn intersect(
            _cx: &$crate::caps::GrantContext<'_>,
            requested: &bool,
            granted: &bool,
            out: &mut $crate::caps::EffectiveGrant,
        ) -> bool {
            $crate::caps::flag::intersect(Self::NAME, requested, granted, out)
        }

        fn is_granted(grant: &bool) -> bool {
            *grant
        }

        fn describe_request(request: &bool) -> Vec<String> {
            $crate::caps::flag::describe(Self::NAME, request)
        }

        fn describe_grant(grant: &bool) -> Vec<String> {
            $crate::caps::flag::describe(Self::NAME, grant)
        }
    };
}
pub(crate) use flag_methods;
