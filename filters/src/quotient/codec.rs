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
//! The payload is three arrays of little-endian `u64` words, for a table of
//! `S` slots (`2^q` rounded up to 64, plus the padding of
//! `quotient/table.rs`): the occupied bits (`S / 64` words, bit `x` for
//! quotient `x`), the run-end bits (`S / 64` words, bit `s` for slot `s`),
//! and the remainders packed `r` bits each (`⌈S·r / 64⌉` words, slot `s`
//! at bit `s·r`). The key count and the per-block offsets are not stored:
//! they follow from the bits and are recomputed, and the decoder refuses
//! bits that no sequence of inserts leaves (see `Table::from_parts`), so a
//! decoded filter answers and behaves exactly as the one encoded.

use alloc::vec::Vec;

use super::filter::QuotientFilter;
use super::table::{Table, MAX_QUOTIENT_BITS};
use crate::format::{self, Frame};
use crate::{Error, FilterKind, FormatError, FromBytes};

impl QuotientFilter {
    pub(super) fn encode(&self) -> Vec<u8> {
        let (occupied, runend, values) = self.table.parts();
        let words = occupied.len() + runend.len() + values.len();
        let params = [self.quotient_bits() as u8, self.remainder_bits() as u8];
        format::encode(FilterKind::QuotientFilter, &params, words * 8, |w| {
            w.u64s(occupied).u64s(runend).u64s(values);
        })
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let q = u32::from(frame.params.u8()?);
        let r = u32::from(frame.params.u8()?);
        frame.params.finish()?;
        if q > MAX_QUOTIENT_BITS || r == 0 || q + r > 64 {
            return Err(FormatError::InvalidParameters("quotient or remainder bits out of range").into());
        }
        let (a, b, c) = Table::part_words(q, r)?;
        let expected = a
            .checked_add(b)
            .and_then(|n| n.checked_add(c))
            .and_then(|n| n.checked_mul(8));
        if Some(frame.payload.remaining()) != expected {
            return Err(
                FormatError::InvalidParameters("payload length does not match the table's shape").into(),
            );
        }
        let occupied = frame.payload.u64s(a, 0)?;
        let runend = frame.payload.u64s(b, 0)?;
        let values = frame.payload.u64s(c, 1)?;
        frame.payload.finish()?;
        let table =
            Table::from_parts(q, r, occupied, runend, values).map_err(FormatError::InvalidParameters)?;
        Ok(QuotientFilter { table })
    }
}

impl FromBytes for QuotientFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::QuotientFilter)?)
    }
}
