//! The blocked Bloom filter's frame: parameters (block count, probes, key
//! count) and payload (the blocks' words, little-endian), checked once for
//! the owned filter and the borrowed view alike.

use alloc::vec::Vec;

use super::probe::{BLOCK_BITS, BLOCK_BYTES, MAX_PROBES};
use crate::bloom::max_keys;
use crate::format::{self, ByteWriter, Frame};
use crate::{Error, FilterKind, FormatError};

/// A validated `BlockedBloom` frame: its parameters and its payload, not
/// yet copied (what the owned filter and the borrowed view both read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockedParts<'a> {
    pub(crate) num_probes: u32,
    pub(crate) num_keys: u64,
    /// Whole blocks (at least one) of [`BLOCK_BYTES`], words little-endian.
    pub(crate) payload: &'a [u8],
}

/// Checks a `BlockedBloom` frame's parameters against each other and its
/// payload length.
pub(crate) fn parse_frame(mut frame: Frame<'_>) -> Result<BlockedParts<'_>, Error> {
    let num_blocks = frame.params.u32()?;
    let num_probes = frame.params.u32()?;
    let num_keys = frame.params.u64()?;
    frame.params.finish()?;
    if num_blocks == 0 {
        return Err(FormatError::InvalidParameters("block count must be positive").into());
    }
    if !(1..=MAX_PROBES as u32).contains(&num_probes) {
        return Err(FormatError::InvalidParameters("probe count must be 1..=24").into());
    }
    if num_keys > max_keys(num_blocks as u64 * BLOCK_BITS as u64) {
        return Err(FormatError::InvalidParameters("more than 64 keys per bit").into());
    }
    let len = (num_blocks as usize).saturating_mul(BLOCK_BYTES);
    if frame.payload.remaining() != len {
        return Err(FormatError::InvalidParameters("payload length does not match block count").into());
    }
    let payload = frame.payload.take(len)?;
    Ok(BlockedParts {
        num_probes,
        num_keys,
        payload,
    })
}

/// The frame of a filter with these parameters and words.
pub(crate) fn encode(
    num_probes: u32,
    num_keys: u64,
    words: impl Iterator<Item = u64>,
    blocks: usize,
) -> Vec<u8> {
    let mut p = ByteWriter::default();
    p.u32(blocks as u32).u32(num_probes).u64(num_keys);
    format::encode(
        FilterKind::BlockedBloom,
        &p.into_vec(),
        blocks * BLOCK_BYTES,
        |w| {
            for x in words {
                w.u64(x);
            }
        },
    )
}
