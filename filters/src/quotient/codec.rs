//! The byte format of a [`QuotientFilter`] (inside the common frame of
//! [`crate::format`]).
//!
//! Schema-critical (pinned by the golden-bytes test in `tests/quotient.rs`):
//!
//! | parameters | size | meaning |
//! |------------|------|---------|
//! | `q`        | u8   | quotient bits, at most 40 |
//! | `r`        | u8   | remainder bits, 1 to `64 − q` |
//!
//! The payload is the table's blocks as they are in memory: for a table of
//! `S` slots (`2^q` rounded up to 64, plus the padding of
//! `quotient/table/mod.rs`), `S / 64` blocks of `17 + 8r` bytes, each the
//! offset byte, the occupied word (bit `i` for quotient `64b + i`), the
//! run-end word (bit `i` for slot `64b + i`), both little-endian, and the
//! block's 64 remainders packed `r` bits each (slot `64b + i` at bit `i·r`
//! of the area). The key count is not stored: it follows from the bits. The
//! decoder refuses blocks that no sequence of inserts leaves (see
//! `Table::from_block_bytes`), so a decoded filter answers and behaves
//! exactly as the one encoded.

use alloc::vec::Vec;

use super::filter::QuotientFilter;
use super::table::{Table, MAX_QUOTIENT_BITS, TAIL};
use crate::format::{self, Frame};
use crate::{Error, FilterKind, FormatError, FromBytes};

impl QuotientFilter {
    pub(super) fn encode(&self) -> Vec<u8> {
        let blocks = self.table.block_bytes();
        let params = [self.quotient_bits() as u8, self.remainder_bits() as u8];
        format::encode(FilterKind::QuotientFilter, &params, blocks.len(), |w| {
            w.bytes(blocks);
        })
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let q = u32::from(frame.params.u8()?);
        let r = u32::from(frame.params.u8()?);
        frame.params.finish()?;
        if q > MAX_QUOTIENT_BITS || r == 0 || q + r > 64 {
            return Err(FormatError::InvalidParameters("quotient or remainder bits out of range").into());
        }
        let (_, len) = Table::shape(q, r)?;
        if Some(frame.payload.remaining()) != len.checked_sub(TAIL) {
            return Err(
                FormatError::InvalidParameters("payload length does not match the table's shape").into(),
            );
        }
        let blocks = frame.payload.take(frame.payload.remaining())?;
        frame.payload.finish()?;
        let table = Table::from_block_bytes(q, r, blocks).map_err(FormatError::InvalidParameters)?;
        Ok(QuotientFilter::from_table(table))
    }
}

impl FromBytes for QuotientFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::QuotientFilter)?)
    }
}
