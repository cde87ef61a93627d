//! Minisign signatures of plugin components: `<component>.minisig` beside
//! the component, checked against the keys the user trusts before the
//! component is compiled.

use minisign_verify::{Error as MinisignError, PublicKey, Signature};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A public key the user trusts to sign plugins.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    /// The key as configured (minisign's base64 line), to name it.
    text: String,
    key: PublicKey,
}

impl TrustedKey {
    /// A key from minisign's base64 public key (the second line of a
    /// `minisign.pub` file), or a whole `minisign.pub` file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with("untrusted comment:"))
            .unwrap_or_default();
        let key = PublicKey::from_base64(line).map_err(|err| {
            format!(
                "`{}` is not a minisign public key ({err}); give the base64 line of a minisign.pub file, e.g. \"RWQ…\"",
                abbreviate(text)
            )
        })?;
        Ok(Self {
            text: line.to_string(),
            key,
        })
    }

    /// The key as minisign prints it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Which signatures plugins need: the user's `[plugins]` settings.
#[derive(Debug, Clone, Default)]
pub struct SignaturePolicy {
    /// Refuse plugins (other than the built-ins) without a valid signature
    /// by a trusted key.
    pub required: bool,
    /// The keys whose signatures count.
    pub trusted: Vec<TrustedKey>,
}

/// Where the signature of the component at `component` is looked for.
pub fn signature_path(component: &Path) -> PathBuf {
    let mut path = component.as_os_str().to_owned();
    path.push(".minisig");
    PathBuf::from(path)
}

/// What a signature check needs of the component: where it is, its digest,
/// and its bytes when the signature has to be verified.
pub(crate) struct Signed<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// The component file.
    pub component: &'a Path,
    /// The component's BLAKE3.
    pub digest: &'a blake3::Hash,
}

/// Remembers verified signatures so that an unchanged, signed component is
/// not read again to check its signature.
pub(crate) trait Memo {
    /// Whether `fact` was recorded before.
    fn knows(&self, fact: &[u8]) -> bool;
    /// Records `fact`.
    fn learn(&self, fact: &[u8]);
}

impl SignaturePolicy {
    /// Checks the signature of the component at `component`, whose bytes
    /// are `wasm`, as [`Self::check`] does when a plugin loads.
    pub fn verify(
        &self,
        plugin: &str,
        component: &Path,
        wasm: &[u8],
    ) -> Result<Option<String>, String> {
        let digest = blake3::hash(wasm);
        let signed = Signed {
            plugin,
            component,
            digest: &digest,
        };
        self.check(&signed, || Ok(Cow::Borrowed(wasm)), None)
    }

    /// Checks the signature of `signed` under this policy: the trusted key
    /// that signed it, `None` when it is unsigned (or signed by a key not
    /// trusted) and signatures are not required. A signature that does not
    /// match is always refused. `bytes` reads the component when the
    /// signature has to be verified.
    pub(crate) fn check<'b>(
        &self,
        signed: &Signed<'_>,
        bytes: impl FnOnce() -> anyhow::Result<Cow<'b, [u8]>>,
        memo: Option<&dyn Memo>,
    ) -> Result<Option<String>, String> {
        if self.trusted.is_empty() && !self.required {
            return Ok(None);
        }
        let plugin = signed.plugin;
        let path = signature_path(signed.component);
        // A minisign signature is a few hundred bytes, its comments short.
        let text = match super::read_bounded(&path, 64 << 10, "a minisign signature") {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return match self.required {
                    true => Err(format!(
                        "plugin `{plugin}` is not signed ({} does not exist), and your config requires signed plugins (require-signature in [plugins]); sign the component with a trusted key: `minisign -Sm {}`",
                        path.display(),
                        signed.component.display()
                    )),
                    false => Ok(None),
                };
            }
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        let signature = Signature::decode(&text).map_err(|err| {
            format!(
                "plugin `{plugin}`: {} is not a minisign signature ({err}); sign the component again with `minisign -Sm {}`",
                path.display(),
                signed.component.display()
            )
        })?;
        let Some(key) = self.trusted.iter().find(|trusted| {
            // Only the key whose ID the signature names can verify it;
            // setting up a stream verifier checks the ID and nothing more.
            !matches!(
                trusted.key.verify_stream(&signature),
                Err(MinisignError::UnexpectedKeyId)
            )
        }) else {
            return match self.required {
                true => Err(format!(
                    "plugin `{plugin}` is signed by a key you do not trust ({}); add the signer's public key to trusted-keys in [plugins] of your config if you trust it",
                    signature.untrusted_comment()
                )),
                false => Ok(None),
            };
        };
        let mut fact = b"minisign\0".to_vec();
        fact.extend_from_slice(signed.digest.as_bytes());
        fact.extend_from_slice(key.text.as_bytes());
        fact.push(0);
        fact.extend_from_slice(text.as_bytes());
        if memo.is_some_and(|memo| memo.knows(&fact)) {
            return Ok(Some(key.text.clone()));
        }
        let bytes = bytes().map_err(|err| format!("plugin `{plugin}`: {err:#}"))?;
        match key.key.verify(&bytes, &signature, false) {
            Ok(()) => {
                if let Some(memo) = memo {
                    memo.learn(&fact);
                }
                Ok(Some(key.text.clone()))
            }
            Err(MinisignError::UnexpectedAlgorithm) => Err(format!(
                "plugin `{plugin}`: {} is a legacy (not prehashed) minisign signature, which Kaizen does not accept; sign again with a current minisign: `minisign -Sm {}`",
                path.display(),
                signed.component.display()
            )),
            Err(err) => Err(format!(
                "plugin `{plugin}`: its signature {} does not verify ({err}): the component changed after it was signed, or the signature is another file's. Refusing to load it; rebuild and sign it again if you changed it",
                path.display()
            )),
        }
    }
}

fn abbreviate(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
}
