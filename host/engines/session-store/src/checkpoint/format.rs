//! A checkpoint's bytes: a 57-byte header (magic and version, a
//! compression flag, the step the state is at, the payload's length and
//! its BLAKE3) and the payload, the state as JSON, zstd-compressed or not.

use crate::{Result, StoreError, io_error};
use serde::de::DeserializeOwned;

const MAGIC: &[u8; 7] = b"KZCKPT\0";
const VERSION: u8 = 1;
/// The header's length: magic, version, flag, step, length, hash.
pub(crate) const HEADER: usize = 7 + 1 + 1 + 8 + 8 + 32;
const RAW: u8 = 0;
const ZSTD: u8 = 1;
/// zstd's default level: fast, and about 5× smaller on conversations.
const ZSTD_LEVEL: i32 = 3;

/// The checkpoint of `json` at `step`, its payload compressed when
/// `compress`.
pub(crate) fn encode(step: u64, json: Vec<u8>, compress: bool) -> Result<Vec<u8>> {
    let (flag, payload) = if compress {
        let packed = zstd::bulk::compress(&json, ZSTD_LEVEL)
            .map_err(io_error("compressing a checkpoint"))?;
        (ZSTD, packed)
    } else {
        (RAW, json)
    };
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.push(VERSION);
    bytes.push(flag);
    bytes.extend_from_slice(&step.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// What a checkpoint's header says.
pub(crate) struct Header {
    compressed: bool,
    /// The step its state is at.
    pub step: u64,
    length: u64,
    hash: [u8; 32],
}

/// The header of `bytes`, or what is wrong with it.
pub(crate) fn header(bytes: &[u8]) -> std::result::Result<Header, String> {
    if bytes.len() < HEADER {
        return Err(format!(
            "truncated: {} bytes, shorter than its header",
            bytes.len()
        ));
    }
    if &bytes[..7] != MAGIC {
        return Err("not a Kaizen checkpoint (bad magic bytes)".into());
    }
    if bytes[7] != VERSION {
        return Err(format!(
            "format version {} is not the {VERSION} this Kaizen reads",
            bytes[7]
        ));
    }
    let compressed = match bytes[8] {
        RAW => false,
        ZSTD => true,
        other => return Err(format!("unknown compression flag {other}")),
    };
    Ok(Header {
        compressed,
        step: u64::from_le_bytes(field(bytes, 9)?),
        length: u64::from_le_bytes(field(bytes, 17)?),
        hash: field(bytes, 25)?,
    })
}

/// The `N` bytes of `bytes` from `at`.
fn field<const N: usize>(bytes: &[u8], at: usize) -> std::result::Result<[u8; N], String> {
    bytes
        .get(at..at + N)
        .and_then(|slice| slice.try_into().ok())
        .ok_or_else(|| format!("truncated: no {N} bytes at {at}"))
}

/// The step and state `bytes` hold, or what is wrong with them.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> std::result::Result<(u64, T), String> {
    let header = header(bytes)?;
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != header.length {
        return Err(format!(
            "truncated: {} of {} payload bytes",
            payload.len(),
            header.length
        ));
    }
    if blake3::hash(payload).as_bytes() != &header.hash {
        return Err("checksum mismatch".into());
    }
    let json = if header.compressed {
        zstd::stream::decode_all(payload).map_err(|err| format!("does not decompress: {err}"))?
    } else {
        payload.to_vec()
    };
    let value = crate::from_json(&json, "its state").map_err(|err: StoreError| err.to_string())?;
    Ok((header.step, value))
}
