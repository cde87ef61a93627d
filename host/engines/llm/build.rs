//! Packs OpenAI's o200k_base tokenizer table for `src/tokens.rs`.
//!
//! `tiktoken-rs` embeds the table as base64 text (3.6 MB, a twentieth of
//! the binary) and parses it on every load. Here the table is read out of
//! `tiktoken-rs` itself, so the two cannot disagree, written as raw token
//! bytes in rank order and packed with zstd: about a third of the size,
//! and quicker to load.
//!
//! The format of `$OUT_DIR/o200k_base.zst`, unpacked (integers
//! little-endian): the count of ordinary tokens (u32), then each token of
//! rank 0, 1, … as its length (u8) and its bytes; the count of special
//! tokens (u32), then each as its rank (u32), its length (u8) and its text.

use std::path::PathBuf;

/// zstd's level: the strongest before the `--ultra` levels (a second of
/// the build's time; unpacking is as fast at any level).
const LEVEL: i32 = 19;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let bpe = tiktoken_rs::o200k_base()
        .unwrap_or_else(|err| panic!("tiktoken-rs cannot load o200k_base: {err}"));

    let mut ordinary: Vec<Vec<u8>> = Vec::new();
    // The ordinary ranks are dense from 0: the first that does not decode
    // ends them (the special tokens lie beyond a gap).
    while let Ok(bytes) = bpe.decode_bytes(&[rank(ordinary.len())]) {
        ordinary.push(bytes);
    }
    let mut table = Vec::with_capacity(2 << 20);
    push_count(&mut table, ordinary.len());
    for token in &ordinary {
        push_bytes(&mut table, token);
    }
    let special: Vec<(u32, &str)> = bpe
        .special_tokens()
        .into_iter()
        .map(|text| {
            let ranks = bpe.encode_with_special_tokens(text);
            match ranks[..] {
                [rank] => (rank, text),
                _ => panic!("special token {text:?} encodes as {ranks:?}, not one rank"),
            }
        })
        .collect();
    push_count(&mut table, special.len());
    for (rank, text) in &special {
        table.extend_from_slice(&rank.to_le_bytes());
        push_bytes(&mut table, text.as_bytes());
    }

    let packed = zstd::bulk::compress(&table, LEVEL)
        .unwrap_or_else(|err| panic!("cannot pack the o200k_base table: {err}"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let path = out.join("o200k_base.zst");
    std::fs::write(&path, packed)
        .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
}

fn rank(index: usize) -> u32 {
    u32::try_from(index).expect("fewer than 2^32 tokens")
}

fn push_count(table: &mut Vec<u8>, count: usize) {
    table.extend_from_slice(&rank(count).to_le_bytes());
}

fn push_bytes(table: &mut Vec<u8>, bytes: &[u8]) {
    let len = u8::try_from(bytes.len())
        .unwrap_or_else(|_| panic!("a token of {} bytes: the format allows 255", bytes.len()));
    table.push(len);
    table.extend_from_slice(bytes);
}
