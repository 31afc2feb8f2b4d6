//! The byte format of an [`ExpandingQuotientFilter`] (inside the common
//! frame of [`crate::format`]).
//!
//! Schema-critical (pinned by the golden-bytes test in
//! `tests/expanding.rs`):
//!
//! | parameters   | size | meaning |
//! |--------------|------|---------|
//! | `q`          | u8   | quotient bits now, at most 40 |
//! | `w`          | u8   | slot bits: the current fingerprint length + 1 |
//! | `F0`         | u8   | the schedule's first fingerprint length, 1 to 62 |
//! | `H`          | u8   | the schedule's horizon, at most 64 |
//! | `X`          | u8   | expansions so far, at most `q` |
//! | keys         | u64  | keys inserted less keys removed |
//! | cap          | u64  | `max_keys`, `u64::MAX` for none |
//!
//! The payload is the table's blocks, as in the quotient filter's format
//! (`quotient/codec.rs`), with `w`-bit values; each value is a fingerprint,
//! its delimiter bit and zeros (`expanding/fingerprint.rs`). The decoder
//! refuses a table no inserts leave, a value with no delimiter, a width
//! other than the schedule's at `X` expansions, more expansions than `q`,
//! and more keys than the cap.

use alloc::vec::Vec;

use super::filter::ExpandingQuotientFilter;
use super::growing::{decode_copies, read_copy_count, split_copies};
use super::schedule::Schedule;
use crate::format::{self, Frame};
use crate::quotient::table::{Table, MAX_QUOTIENT_BITS, TAIL};
use crate::{Error, FilterKind, FormatError, FromBytes};

impl ExpandingQuotientFilter {
    pub(super) fn encode(&self) -> Vec<u8> {
        let blocks = self.g.table.block_bytes();
        let mut params = Vec::with_capacity(21);
        params.extend_from_slice(&[
            self.g.table.quotient_bits() as u8,
            self.g.table.width() as u8,
            self.g.schedule.base as u8,
            self.g.schedule.horizon as u8,
            self.g.expansions as u8,
        ]);
        params.extend_from_slice(&(self.g.keys as u64).to_le_bytes());
        params.extend_from_slice(&self.g.max_keys.map_or(u64::MAX, |m| m as u64).to_le_bytes());
        let copies = self.g.encode_copies(&mut params);
        format::encode(
            FilterKind::ExpandingQuotientFilter,
            &params,
            blocks.len() + copies.len(),
            |w| {
                w.bytes(blocks);
                w.bytes(&copies);
            },
        )
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let bad = |why| Error::from(FormatError::InvalidParameters(why));
        let p = &mut frame.params;
        let (q, w) = (u32::from(p.u8()?), u32::from(p.u8()?));
        let schedule = Schedule {
            base: u32::from(p.u8()?),
            horizon: u32::from(p.u8()?),
        };
        let expansions = u32::from(p.u8()?);
        let keys = p.u64()?;
        let cap = p.u64()?;
        let records = read_copy_count(p)?;
        frame.params.finish()?;
        let schedule = schedule
            .check()
            .map_err(|_| bad("fingerprint schedule out of range"))?;
        if q > MAX_QUOTIENT_BITS || w != schedule.length(expansions) + 1 || q + w > 64 || w > 63 {
            return Err(bad("quotient or slot bits out of range"));
        }
        // Each expansion doubled the table: more than `q` never happened
        // (and could not be written back in a byte once past 255).
        if expansions > q {
            return Err(bad("more expansions than quotient bits"));
        }
        let (_, len) = Table::shape(q, w)?;
        let (blocks, copies) = split_copies(&mut frame.payload, len - TAIL, records)?;
        frame.payload.finish()?;
        let table = Table::from_block_bytes(q, w, blocks).map_err(FormatError::InvalidParameters)?;
        let keys = usize::try_from(keys).map_err(|_| bad("key count too large"))?;
        let max_keys = match cap {
            u64::MAX => None,
            m => Some(usize::try_from(m).map_err(|_| bad("cap too large"))?),
        };
        ExpandingQuotientFilter::from_parts(
            table,
            decode_copies(copies),
            schedule,
            expansions,
            keys,
            max_keys,
        )
        .map_err(bad)
    }
}

impl FromBytes for ExpandingQuotientFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::ExpandingQuotientFilter)?)
    }
}
