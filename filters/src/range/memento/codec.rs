//! The byte format of a [`MementoFilter`] (inside the common frame of
//! [`crate::format`], hash scheme `OrderedU64`).
//!
//! Schema-critical (pinned by the golden-bytes test in `tests/memento.rs`):
//!
//! | parameters   | size | meaning |
//! |--------------|------|---------|
//! | `N`          | u64  | quotients now, 1 to `2^40` |
//! | `w`          | u8   | slot bits: the current fingerprint length + 1 + `m` |
//! | `m`          | u8   | memento bits, at most 40 |
//! | `F0`         | u8   | the schedule's first fingerprint length, 1 to 62 |
//! | `H`          | u8   | the schedule's horizon, at most 64 |
//! | `X`          | u8   | expansions so far (`2^X` divides `N`) |
//! | keys         | u64  | keys inserted less keys removed |
//! | cap          | u64  | `max_keys`, `u64::MAX` for none |
//!
//! The payload is the table's blocks, as in the quotient filter's format,
//! with `w`-bit values: a fingerprint, its delimiter bit and zeros
//! (`quotient/expanding/fingerprint.rs`), then the `m`-bit memento. The
//! decoder refuses a table no inserts leave, a value with no delimiter, a
//! width other than the schedule's at `X` expansions, an `N` that `2^X`
//! does not divide, and more keys than the cap.

use alloc::vec::Vec;

use super::{MementoFilter, MAX_MEMENTO_BITS};
use crate::format::{self, Frame};
use crate::quotient::expanding::growing::{
    address_bits, decode_copies, read_copy_count, split_copies, GrowingTable,
};
use crate::quotient::expanding::schedule::Schedule;
use crate::quotient::table::{Table, MAX_QUOTIENTS, TAIL};
use crate::{Error, FilterKind, FormatError};

impl MementoFilter {
    pub(super) fn encode(&self) -> Vec<u8> {
        let blocks = self.g.table.block_bytes();
        let mut params = Vec::with_capacity(30);
        params.extend_from_slice(&self.quotients().to_le_bytes());
        params.extend_from_slice(&[
            self.g.table.width() as u8,
            self.g.payload as u8,
            self.g.schedule.base as u8,
            self.g.schedule.horizon as u8,
            self.g.expansions as u8,
        ]);
        params.extend_from_slice(&(self.g.keys as u64).to_le_bytes());
        params.extend_from_slice(&self.g.max_keys.map_or(u64::MAX, |m| m as u64).to_le_bytes());
        let copies = self.g.encode_copies(&mut params);
        format::encode(
            FilterKind::MementoFilter,
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
        let quotients = p.u64()?;
        let (w, m) = (u32::from(p.u8()?), u32::from(p.u8()?));
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
        let code = schedule.length(expansions) + 1;
        if !(1..=MAX_QUOTIENTS).contains(&quotients)
            || m > MAX_MEMENTO_BITS
            || w != code + m
            || address_bits(quotients) + code > 64
            || w > 63
        {
            return Err(bad("quotients, memento or slot bits out of range"));
        }
        // Each expansion doubled the quotients: `N` is a multiple of `2^X`.
        if expansions > quotients.trailing_zeros() {
            return Err(bad("more expansions than the quotients' doublings"));
        }
        let (_, len) = Table::shape_of(quotients, w)?;
        let (blocks, copies) = split_copies(&mut frame.payload, len - TAIL, records)?;
        frame.payload.finish()?;
        let table =
            Table::from_block_bytes_of(quotients, w, blocks).map_err(FormatError::InvalidParameters)?;
        let keys = usize::try_from(keys).map_err(|_| bad("key count too large"))?;
        let max_keys = match cap {
            u64::MAX => None,
            c => Some(usize::try_from(c).map_err(|_| bad("cap too large"))?),
        };
        let g = GrowingTable::from_parts(
            table,
            decode_copies(copies),
            schedule,
            m,
            expansions,
            keys,
            max_keys,
        )
        .map_err(bad)?;
        Ok(MementoFilter { g })
    }
}

impl MementoFilter {
    /// Decodes a filter from [`to_bytes`](crate::range::RangeFilter::to_bytes)'s
    /// output, checking every field (see the module docs). Untrusted bytes
    /// give an [`Error`], never a panic.
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
    /// let f = MementoFilter::build(&[1, 5, 900], MementoOptions::new(0.01, 16))?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(MementoFilter::from_bytes(&bytes)?, f);
    /// assert!(MementoFilter::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::MementoFilter)?)
    }
}
