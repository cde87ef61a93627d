//! Replacing secrets in bytes before the store hands them to its storage,
//! in every form a secret can take in what a session keeps.

use std::fmt;

/// What replaces a secret in everything the store writes.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not redacted: they would match ordinary
/// text.
const MIN_SECRET_LEN: usize = 8;

/// The forms of the secrets to replace, longest first.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    forms: Vec<String>,
}

impl fmt::Debug for Redactor {
    /// Says how many forms, never what they are: a debug print must not
    /// leak what redaction is there to hide.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} forms)", self.forms.len())
    }
}

impl Redactor {
    /// Redacts each of `secrets` of 8 bytes or more.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut forms: Vec<String> = secrets
            .into_iter()
            .filter(|secret| secret.len() >= MIN_SECRET_LEN)
            .flat_map(|secret| encoded_forms(&secret))
            .collect();
        // Longest first, so a form is never cut by a shorter one inside it.
        forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        forms.dedup();
        Self { forms }
    }

    /// `bytes` with every secret replaced.
    pub fn redact(&self, bytes: Vec<u8>) -> Vec<u8> {
        let mut bytes = bytes;
        for form in &self.forms {
            bytes = replace_all(bytes, form.as_bytes(), REDACTED.as_bytes());
        }
        bytes
    }
}

/// The ways `secret` can appear in what a session keeps: as it is, escaped
/// in JSON, percent-encoded in a URL, and inside base64 (standard and
/// URL-safe) at each of the three byte alignments, where only the
/// characters that depend on the secret alone are matched.
fn encoded_forms(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let mut forms = vec![secret.to_string()];
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json.trim_matches('"').to_string());
    }
    let percent: String = secret
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    forms.push(percent);
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        for offset in 0..3usize {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret.as_bytes());
            let encoded = engine.encode(&bytes);
            // Characters touched by the padding bytes before, or by what
            // follows the secret, vary with the surroundings.
            let skip = (offset * 4).div_ceil(3);
            let keep = (bytes.len() / 3) * 4;
            if keep > skip + MIN_SECRET_LEN
                && let Some(form) = encoded.get(skip..keep)
            {
                forms.push(form.to_string());
            }
        }
    }
    forms.retain(|form| form.len() >= MIN_SECRET_LEN);
    forms
}

fn replace_all(haystack: Vec<u8>, needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut found = memchr::memmem::find_iter(&haystack, needle).peekable();
    if found.peek().is_none() {
        return haystack;
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut from = 0;
    for at in found {
        out.extend_from_slice(&haystack[from..at]);
        out.extend_from_slice(with);
        from = at + needle.len();
    }
    out.extend_from_slice(&haystack[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key that a tool's output carries encoded (in a basic-auth header,
    /// a URL, escaped JSON) is redacted too: what is kept cannot be decoded
    /// back to it.
    #[test]
    fn encoded_secrets_are_redacted() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        let secret = "sk-live-0123456789abcdef/+x";
        let redactor = Redactor::new([secret.to_string()]);
        // Each leak, and the text that must not survive in it.
        let mut leaks: Vec<(String, String)> = Vec::new();
        for prefix in ["user:", "ab:", "a:"] {
            for blob in [
                STANDARD.encode(format!("{prefix}{secret}:tail")),
                URL_SAFE.encode(format!("{prefix}{secret}")),
            ] {
                let middle = blob[8..blob.len() - 8].to_string();
                leaks.push((format!("Authorization: Basic {blob}"), middle));
            }
        }
        leaks.push((
            "https://host/?key=sk-live-0123456789abcdef%2F%2Bx".into(),
            "0123456789abcdef".into(),
        ));
        leaks.push((
            format!("{{\"k\": {}}}", serde_json::to_string(secret).unwrap()),
            "0123456789abcdef".into(),
        ));
        for (leak, gone) in leaks {
            let kept = String::from_utf8(redactor.redact(leak.clone().into_bytes())).unwrap();
            assert!(kept.contains(REDACTED), "{leak} -> {kept}");
            assert!(!kept.contains(&gone), "{leak} -> {kept}");
        }
    }

    #[test]
    fn short_secrets_are_left_and_debug_shows_none() {
        let redactor = Redactor::new(["short".to_string(), "a-longer-secret".to_string()]);
        let kept = redactor.redact(b"short a-longer-secret".to_vec());
        assert_eq!(kept, format!("short {REDACTED}").into_bytes());
        let shown = format!("{redactor:?}");
        assert!(!shown.contains("a-longer-secret"), "{shown}");
    }
}
