//! What looks like a credential, in a variable's name or its value: never
//! passed to a plugin, whatever a grant says.

/// True for variable names that hold credentials. They never reach a plugin
/// whatever a grant says: provider keys live only in the host.
pub fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|marker| upper.contains(marker))
}

/// Why `value` looks like a credential, when it does: a URL carrying a
/// password (`scheme://user:password@host`), a token with a well-known
/// prefix (API keys, personal access tokens, cloud keys, JWTs, private
/// keys), or the value of one of the host's own credential variables
/// (those [`is_secret_env_name`] names). Environment grants pass names the
/// operator chose; this keeps a secret that rides in an innocent name
/// (`DATABASE_URL`, say) from reaching a plugin.
pub fn secret_in_value(value: &str) -> Option<&'static str> {
    if url_with_password(value) {
        return Some("a URL with a password");
    }
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "pk_live_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxs-",
        "xapp-",
        "AKIA",
        "ASIA",
        "AIza",
        "ya29.",
        "npm_",
        "pypi-",
        "hf_",
        "dop_v1_",
        "shpat_",
        "SG.",
        "Bearer ",
        "Basic ",
        "-----BEGIN",
    ];
    let trimmed = value.trim_start();
    if PREFIXES.iter().any(|prefix| trimmed.starts_with(prefix)) {
        return Some("a well-known token prefix");
    }
    if looks_like_jwt(trimmed) {
        return Some("a JSON web token");
    }
    let host_secret = std::env::vars_os().any(|(name, secret)| {
        is_secret_env_name(&name.to_string_lossy()) && secret.len() >= 8 && secret == value
    });
    host_secret.then_some("the value of one of the host's credential variables")
}

/// `scheme://user:password@host...`: userinfo with a password.
fn url_with_password(value: &str) -> bool {
    value.split_whitespace().any(|word| {
        let Some((_, rest)) = word.split_once("://") else {
            return false;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
            userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty())
        })
    })
}

/// Three base64url parts separated by dots, the first a JSON header.
fn looks_like_jwt(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() == 3
        && value.starts_with("eyJ")
        && parts.iter().all(|part| {
            part.len() >= 4
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_values_are_recognised() {
        for secret in [
            "postgres://app:hunter2@db.internal:5432/prod",
            "https://user:tok@github.com/org/repo.git",
            "sk-proj-0123456789abcdef",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-123-456-abc",
            "Bearer abc.def",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        ] {
            assert!(secret_in_value(secret).is_some(), "{secret}");
        }
        for plain in [
            "en_US.UTF-8",
            "/usr/local/bin:/usr/bin",
            "https://example.com/path?q=a:b@c",
            "postgres://db.internal:5432/prod",
            "https://user@github.com/org/repo.git",
            "brave",
            "a.b.c",
        ] {
            assert_eq!(secret_in_value(plain), None, "{plain}");
        }
    }

    #[test]
    fn the_value_of_a_host_credential_variable_is_recognised() {
        // SAFETY: the variable is unique to this test.
        unsafe { std::env::set_var("KAIZEN_TEST_VALUE_SECRET_TOKEN", "plain-looking-value") };
        assert!(secret_in_value("plain-looking-value").is_some());
        assert_eq!(secret_in_value("another-plain-value"), None);
    }
}
