//! Counting tokens before a request is sent. OpenAI's models are counted
//! with their own tokenizer (tiktoken's `o200k_base`, from the
//! `tiktoken-rs` crate); other models by a rough rule (four bytes a
//! token), which the loop corrects with what the provider reports it
//! counted (see the runtime's context meter).
//!
//! The tokenizer's tables take a third of a second to load, so they load
//! only when [`load_tokenizer`] is called: the loop does that once a
//! session's size nears the point where the count decides something. The
//! table is embedded packed (see build.rs for its format), not as the
//! crate's own base64 text, which was a twentieth of the binary.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// The o200k_base table, packed by build.rs.
static PACKED_O200K: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.zst"));

static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();

/// Whether `model` is counted with OpenAI's tokenizer once it is loaded.
pub fn has_tokenizer(model: &str) -> bool {
    let name = model.strip_prefix("openai/").unwrap_or(model);
    ["gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Loads OpenAI's tokenizer (once; blocking, about a third of a second).
/// Counting works without it, roughly.
pub fn load_tokenizer() {
    O200K.get_or_init(|| match o200k_base() {
        Ok(bpe) => Some(bpe),
        Err(err) => {
            tracing::warn!("cannot load the o200k_base tokenizer ({err}); counting tokens roughly");
            None
        }
    });
}

/// Builds the o200k_base tokenizer from the packed table.
fn o200k_base() -> Result<CoreBPE, String> {
    let table = zstd::stream::decode_all(PACKED_O200K).map_err(|err| err.to_string())?;
    let mut reader = Table(&table);
    // The map types are tiktoken-rs's own (inferred from `CoreBPE::new`).
    let mut ordinary = Default::default();
    let mut special = Default::default();
    reader.ordinary(&mut ordinary)?;
    reader.special(&mut special)?;
    if !reader.0.is_empty() {
        return Err("the packed table has bytes after its end".into());
    }
    CoreBPE::new(ordinary, special, tiktoken_rs::O200K_BASE_PAT_STR).map_err(|err| err.to_string())
}

/// A reader of the packed table's format (build.rs).
struct Table<'a>(&'a [u8]);

impl Table<'_> {
    fn take(&mut self, len: usize) -> Result<&[u8], String> {
        if self.0.len() < len {
            return Err("the packed table is cut short".into());
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let len = self.take(1)?[0];
        Ok(self.take(usize::from(len))?.to_vec())
    }

    /// The ordinary tokens, ranked by their order.
    fn ordinary(&mut self, into: &mut impl Extend<(Vec<u8>, u32)>) -> Result<(), String> {
        for rank in 0..self.u32()? {
            into.extend([(self.bytes()?, rank)]);
        }
        Ok(())
    }

    /// The special tokens, each with its rank.
    fn special(&mut self, into: &mut impl Extend<(String, u32)>) -> Result<(), String> {
        for _ in 0..self.u32()? {
            let rank = self.u32()?;
            let text = String::from_utf8(self.bytes()?).map_err(|err| err.to_string())?;
            into.extend([(text, rank)]);
        }
        Ok(())
    }
}

/// Whether [`load_tokenizer`] has run.
pub fn tokenizer_loaded() -> bool {
    O200K.get().is_some()
}

/// The tokens `text` takes for `model`: exact for OpenAI's models once the
/// tokenizer is loaded, else four bytes a token (rounded up).
pub fn count(model: &str, text: &str) -> u64 {
    if has_tokenizer(model)
        && let Some(Some(bpe)) = O200K.get()
    {
        return bpe.encode_ordinary(text).len() as u64;
    }
    rough(text)
}

/// Four bytes a token, rounded up.
pub fn rough(text: &str) -> u64 {
    text.len().div_ceil(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_are_counted_exactly_once_loaded() {
        assert!(has_tokenizer("gpt-4o-mini") && has_tokenizer("openai/o3"));
        assert!(!has_tokenizer("claude-haiku-4-5") && !has_tokenizer("llama3"));
        assert_eq!(count("claude-haiku-4-5", "hello world"), 3);
        load_tokenizer();
        assert_eq!(count("gpt-4o", "hello world"), 2);
        assert_eq!(count("claude-haiku-4-5", "hello world"), 3);
    }

    #[test]
    fn the_packed_table_is_tiktokens_own() {
        let packed = o200k_base().expect("the packed table loads");
        let original = tiktoken_rs::o200k_base().expect("tiktoken-rs's table loads");
        let text = "fn main() { println!(\"héllo, wörld\"); } // 東京 🦀 <|endoftext|>\n\t  x";
        assert_eq!(packed.encode_ordinary(text), original.encode_ordinary(text));
        assert_eq!(
            packed.encode_with_special_tokens(text),
            original.encode_with_special_tokens(text)
        );
        assert_eq!(packed.special_tokens(), original.special_tokens());
        // Every ordinary token decodes as in the original: no rank shifted.
        let all: Vec<u32> = (0..199_998).collect();
        assert_eq!(
            packed.decode_bytes(&all).ok(),
            original.decode_bytes(&all).ok()
        );
    }
}
