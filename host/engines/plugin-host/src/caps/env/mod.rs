//! `env`: variables passed from the host's environment, by name. Names
//! and values that look like credentials never pass.

mod secrets;

pub use secrets::{is_secret_env_name, secret_in_value};

use super::{Admission, EffectiveGrant, GrantContext, HostCapability, LoadContext, StoreContext};

/// The `env` capability.
pub(crate) struct Env;

impl HostCapability for Env {
    const NAME: &'static str = "env";
    type Request = Vec<String>;
    type Grant = Vec<String>;
    type Shared = ();
    type State = ();

    fn check(names: &Vec<String>) -> Result<(), String> {
        match names.iter().find(|name| !valid_env_name(name)) {
            Some(bad) => Err(format!(
                "env name `{bad}` is invalid: use letters, digits and `_` (or `*` in a grant)"
            )),
            None => Ok(()),
        }
    }

    fn union(a: &Vec<String>, b: &Vec<String>) -> Vec<String> {
        super::merged(a, b)
    }

    fn intersect(
        _cx: &GrantContext<'_>,
        requested: &Vec<String>,
        granted: &Vec<String>,
        out: &mut EffectiveGrant,
    ) -> Vec<String> {
        let any = granted.iter().any(|name| name == "*");
        let mut passed = Vec::new();
        for name in requested {
            if is_secret_env_name(name) {
                out.denied.push(format!(
                    "env: {name} looks like a credential and is never passed to plugins"
                ));
            } else if any || granted.contains(name) {
                passed.push(name.clone());
            } else {
                out.denied.push(format!("env: {name}"));
            }
        }
        passed
    }

    fn is_granted(grant: &Vec<String>) -> bool {
        !grant.is_empty()
    }

    fn describe_request(names: &Vec<String>) -> Vec<String> {
        describe(names)
    }

    fn describe_grant(names: &Vec<String>) -> Vec<String> {
        describe(names)
    }

    /// Reads the granted variables' values; a value that looks like a
    /// credential is refused (and the name taken off the grant), and names
    /// capabilities set themselves are left to them.
    fn admit(cx: &mut Admission<'_>) -> Result<(), String> {
        let mut refused = Vec::new();
        for name in cx
            .grant
            .env
            .iter()
            .filter(|name| !cx.reserved_env.contains(&name.as_str()))
        {
            let Ok(value) = std::env::var(name) else {
                continue;
            };
            match secret_in_value(&value) {
                Some(why) => refused.push((name.clone(), why)),
                None => cx.env.push((name.clone(), value)),
            }
        }
        for (name, why) in refused {
            cx.grant.env.retain(|granted| *granted != name);
            cx.grant.denied.push(format!(
                "env: {name} holds what looks like a credential ({why}) and is never passed to plugins"
            ));
        }
        Ok(())
    }

    fn load(_cx: &LoadContext<'_>) {}

    fn new_state(_shared: &(), _cx: &mut StoreContext<'_>) -> anyhow::Result<()> {
        Ok(())
    }
}

fn valid_env_name(name: &str) -> bool {
    name == "*" || (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// Names as listings show them: one line, `env A, B`.
fn describe(names: &[String]) -> Vec<String> {
    if names.is_empty() {
        Vec::new()
    } else {
        vec![format!("env {}", names.join(", "))]
    }
}
