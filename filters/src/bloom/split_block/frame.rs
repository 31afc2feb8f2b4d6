//! The split-block Bloom filter's frame: parameters (block count, key count)
//! and payload (each block's eight words, little-endian), checked once for
//! the owned filter and the borrowed view alike.

use alloc::vec::Vec;

use super::{Block, BLOCK_BITS, BLOCK_BYTES};
use crate::bloom::max_keys;
use crate::format::{self, ByteWriter, Frame};
use crate::{Error, FilterKind, FormatError};

/// A validated `SplitBlockBloom` frame: its key count and its payload, not
/// yet copied (what the owned filter and the borrowed view both read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitBlockParts<'a> {
    pub(crate) num_keys: u64,
    /// Whole blocks (at least one) of [`BLOCK_BYTES`], words little-endian.
    pub(crate) payload: &'a [u8],
}

/// Checks a `SplitBlockBloom` frame's parameters against each other and its
/// payload length.
pub(crate) fn parse_frame(mut frame: Frame<'_>) -> Result<SplitBlockParts<'_>, Error> {
    let num_blocks = frame.params.u32()?;
    let num_keys = frame.params.u64()?;
    frame.params.finish()?;
    if num_blocks == 0 {
        return Err(FormatError::InvalidParameters("block count must be positive").into());
    }
    if num_keys > max_keys(u64::from(num_blocks) * BLOCK_BITS) {
        return Err(FormatError::InvalidParameters("more than 64 keys per bit").into());
    }
    let len = (num_blocks as usize).saturating_mul(BLOCK_BYTES);
    if frame.payload.remaining() != len {
        return Err(FormatError::InvalidParameters("payload length does not match block count").into());
    }
    let payload = frame.payload.take(len)?;
    Ok(SplitBlockParts { num_keys, payload })
}

/// The frame of a filter with this key count and these blocks.
pub(crate) fn encode(num_keys: u64, blocks: &[Block]) -> Vec<u8> {
    let mut p = ByteWriter::default();
    p.u32(blocks.len() as u32).u64(num_keys);
    format::encode(
        FilterKind::SplitBlockBloom,
        &p.into_vec(),
        blocks.len() * BLOCK_BYTES,
        |w| {
            for &x in blocks.iter().flat_map(|b| &b.0) {
                w.u32(x);
            }
        },
    )
}
