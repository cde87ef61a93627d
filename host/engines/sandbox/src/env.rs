//! The environment of a sandboxed process: built from an allow-list, never
//! inherited. Provider keys and anything else in the host's environment stay
//! out; only `USER` and `LOGNAME` are copied, for tools that print them.

use std::path::Path;

/// `PATH` inside the sandbox.
pub const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Replaces or appends each variable of `extra`, in order.
pub(crate) fn overlay(env: &mut Vec<(String, String)>, extra: &[(String, String)]) {
    for (key, value) in extra {
        match env.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.clone(),
            None => env.push((key.clone(), value.clone())),
        }
    }
}

fn sets_locale(vars: &[(String, String)]) -> bool {
    vars.iter()
        .any(|(k, _)| k == "LANG" || k.starts_with("LC_"))
}

/// The full environment: the safe set, then `policy_env`, then `cmd_env`.
/// `LANG` and `LC_ALL` default to `C.UTF-8` unless either layer sets a locale
/// (then `LC_ALL` would override their choice, so it is left out).
pub(crate) fn build(
    temp: &Path,
    policy_env: &[(String, String)],
    cmd_env: &[(String, String)],
) -> Vec<(String, String)> {
    let temp = temp.to_string_lossy().into_owned();
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), PATH.into()),
        ("HOME".into(), temp.clone()),
        ("TMPDIR".into(), temp),
        ("TERM".into(), "dumb".into()),
        ("SHELL".into(), "/bin/bash".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    if !sets_locale(policy_env) && !sets_locale(cmd_env) {
        env.push(("LC_ALL".into(), "C.UTF-8".into()));
    }
    for key in ["USER", "LOGNAME"] {
        if let Ok(value) = std::env::var(key) {
            env.push((key.into(), value));
        }
    }
    overlay(&mut env, policy_env);
    overlay(&mut env, cmd_env);
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_override_in_order() {
        let env = build(
            Path::new("/t"),
            &[("A".into(), "1".into()), ("PATH".into(), "/p".into())],
            &[("A".into(), "2".into())],
        );
        let get = |k: &str| {
            env.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("A"), Some("2"));
        assert_eq!(get("PATH"), Some("/p"));
        assert_eq!(get("HOME"), Some("/t"));
        assert_eq!(get("LC_ALL"), Some("C.UTF-8"));
        let env = build(
            Path::new("/t"),
            &[("LANG".into(), "de_DE.UTF-8".into())],
            &[],
        );
        assert!(env.iter().all(|(k, _)| k != "LC_ALL"));
    }
}
