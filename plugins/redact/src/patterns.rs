//! The secrets `redact` looks for. The rules follow gitleaks' default
//! configuration (github.com/gitleaks/gitleaks, `config/gitleaks.toml`),
//! the most widely maintained set: its rules for private keys and the
//! token formats of the major clouds and services, with fixed prefixes
//! that make false matches rare; and a few generic ones (passwords in
//! URLs and assignments). When a rule has a group, only the group is
//! masked, so the surrounding text stays readable.

use regex::{Regex, RegexSet};
use std::sync::OnceLock;

/// (name, pattern). Where a pattern has a capture group, the group is
/// the secret.
const RULES: &[(&str, &str)] = &[
    (
        "private-key",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?-----",
    ),
    (
        "aws-access-key-id",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
    ),
    (
        "aws-secret-access-key",
        r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?['"=:\s]+([A-Za-z0-9/+=]{40})\b"#,
    ),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    (
        "github-fine-grained-token",
        r"\bgithub_pat_[A-Za-z0-9_]{82}\b",
    ),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20}\b"),
    ("slack-token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b"),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9+/]{43,}",
    ),
    (
        "anthropic-key",
        r"\bsk-ant-(?:api03|admin01)-[A-Za-z0-9_-]{80,}",
    ),
    (
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    (
        "stripe-key",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,99}\b",
    ),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    (
        "sendgrid-key",
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
    ),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("azure-storage-key", r"AccountKey=([A-Za-z0-9+/]{86}==)"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    ),
    (
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@",
    ),
    (
        "password-assignment",
        r#"(?i)\b[a-z0-9_]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[:=]\s*["']?([^\s"',;<>]{8,})"#,
    ),
];

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| Compiled {
        set: RegexSet::new(RULES.iter().map(|(_, pattern)| pattern)).expect("the rules compile"),
        each: RULES
            .iter()
            .map(|(_, pattern)| Regex::new(pattern).expect("the rules compile"))
            .collect(),
    })
}

/// A text with its secrets masked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked {
    /// The text, each secret replaced by `[REDACTED:<rule>]`.
    pub text: String,
    /// How many were masked.
    pub count: usize,
    /// The rules that matched, in rule order.
    pub kinds: Vec<&'static str>,
}

/// `text` with every secret masked; `None` when there is none.
pub fn mask(text: &str) -> Option<Masked> {
    let compiled = compiled();
    let hits: Vec<usize> = compiled.set.matches(text).into_iter().collect();
    if hits.is_empty() {
        return None;
    }
    let mut out = text.to_string();
    let mut count = 0;
    let mut kinds = Vec::new();
    for index in hits {
        let (name, _) = RULES[index];
        let regex = &compiled.each[index];
        let mut found = 0;
        let replaced = regex.replace_all(&out, |caps: &regex::Captures| {
            found += 1;
            let whole = caps.get(0).expect("group 0 always matches");
            match caps
                .get(1)
                .filter(|_| caps.len() > 1 && caps.get(1).is_some())
            {
                // Only the secret part: the key name stays readable.
                Some(secret) if !name.starts_with("private-key") => {
                    let start = secret.start() - whole.start();
                    let end = secret.end() - whole.start();
                    let text = whole.as_str();
                    format!("{}[REDACTED:{name}]{}", &text[..start], &text[end..])
                }
                _ => format!("[REDACTED:{name}]"),
            }
        });
        if found > 0 {
            out = replaced.into_owned();
            count += found;
            kinds.push(name);
        }
    }
    Some(Masked {
        text: out,
        count,
        kinds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fake secrets of each format (none is real).
    const SAMPLES: &[(&str, &str)] = &[
        (
            "private-key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c2\nabc==\n-----END RSA PRIVATE KEY-----",
        ),
        ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLQ"),
        (
            "aws-secret-access-key",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("github-token", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
        (
            "github-fine-grained-token",
            "github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghi",
        ),
        ("gitlab-token", "glpat-aBcDeFgHiJkLmNoPqRsT"),
        ("slack-token", "xoxb-1234567890-abcdefghij"),
        (
            "anthropic-key",
            "sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ),
        ("openai-key", "sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
        ("stripe-key", "sk_live_abcdefghijklmnop1234"),
        ("google-api-key", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
        ("huggingface-token", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
        ("npm-token", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        (
            "url-password",
            "postgres://admin:hunter2secret@db.internal:5432/app",
        ),
        ("password-assignment", "DB_PASSWORD=correct-horse-battery"),
    ];

    #[test]
    fn every_rule_masks_its_sample_and_keeps_the_rest() {
        for (rule, sample) in SAMPLES {
            let text = format!("before {sample} after");
            let masked = mask(&text).unwrap_or_else(|| panic!("{rule}: {sample} not found"));
            assert!(masked.kinds.contains(rule), "{rule}: {masked:?}");
            assert!(
                masked.text.starts_with("before "),
                "{rule}: {}",
                masked.text
            );
            assert!(masked.text.ends_with(" after"), "{rule}: {}", masked.text);
            assert!(
                masked.text.contains(&format!("[REDACTED:{rule}]")),
                "{}",
                masked.text
            );
        }
    }

    #[test]
    fn the_key_name_stays_and_ordinary_text_is_untouched() {
        let masked = mask("DB_PASSWORD=correct-horse-battery\nHOST=db").unwrap();
        assert_eq!(
            masked.text,
            "DB_PASSWORD=[REDACTED:password-assignment]\nHOST=db"
        );
        let url = mask("postgres://admin:hunter2secret@db:5432/x").unwrap();
        assert_eq!(
            url.text,
            "postgres://admin:[REDACTED:url-password]@db:5432/x"
        );
        for plain in [
            "fn main() { println!(\"hello\"); }",
            "password: <hidden>",
            "the sk- prefix alone",
            "https://example.com/path?x=1",
            "AKIA is a prefix",
        ] {
            assert_eq!(mask(plain), None, "{plain}");
        }
    }

    #[test]
    fn several_secrets_are_all_counted() {
        let text = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 and AKIAIOSFODNN7EXAMPLQ and \
                    ghp_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";
        let masked = mask(text).unwrap();
        assert_eq!(masked.count, 3);
        assert_eq!(masked.kinds, ["aws-access-key-id", "github-token"]);
        assert!(!masked.text.contains("ghp_"));
    }
}
