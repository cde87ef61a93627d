//! Counting tokens before a request is sent. OpenAI's models are counted
//! with their own tokenizer (tiktoken's `o200k_base`, from the
//! `tiktoken-rs` crate); other models by a rough rule (four bytes a
//! token), which the loop corrects with what the provider reports it
//! counted (see the runtime's context meter).
//!
//! The tokenizer's tables take a third of a second to load, so they load
//! only when [`load_tokenizer`] is called: the loop does that once a
//! session's size nears the point where the count decides something.

use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

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
    O200K.get_or_init(|| match tiktoken_rs::o200k_base() {
        Ok(bpe) => Some(bpe),
        Err(err) => {
            tracing::warn!("cannot load the o200k_base tokenizer ({err}); counting tokens roughly");
            None
        }
    });
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
}
