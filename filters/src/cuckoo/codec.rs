//! The byte format of a [`CuckooFilter`] (inside the common frame of
//! [`crate::format`]).
//!
//! Schema-critical (pinned by the golden-bytes test in `tests/cuckoo.rs`):
//!
//! | parameters | size | meaning                                         |
//! |------------|------|-------------------------------------------------|
//! | `f`        | u8   | fingerprint bits: 8, 12 or 16                   |
//! | `m`        | u32  | number of buckets, ≥ 1                          |
//! | stash fp   | u16  | stashed fingerprint, 0 if the stash is empty    |
//! | stash bucket | u32 | one bucket of the stashed fingerprint (< `m`), 0 if empty |
//!
//! The payload is the packed table: `⌈4f·m / 64⌉` little-endian `u64` words,
//! bucket `i` at bits `4f·i ..` (see [`table`](super::table)); bits after the
//! last bucket are zero. The key count is not stored: it is the number of
//! occupied slots plus the stash, recomputed when decoding, so it cannot
//! disagree with the table. The kick sequence depends only on key hashes,
//! so a decoded filter behaves exactly like the original from then on.

use alloc::vec::Vec;

use super::filter::{CuckooFilter, Stash};
use super::table::{BucketTable, Lanes};
use super::FINGERPRINT_BITS;
use crate::format::{self, ByteWriter, Frame};
use crate::{Error, FilterKind, FormatError, FromBytes};

impl CuckooFilter {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u8(self.fingerprint_bits() as u8)
            .u32(self.num_buckets())
            .u16(self.stash.fingerprint as u16)
            .u32(self.stash.bucket);
        format::encode(
            FilterKind::CuckooFilter,
            &p.into_vec(),
            self.table.payload_bytes(),
            |w| {
                for word in self.table.words() {
                    w.u64(word);
                }
            },
        )
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let bits = frame.params.u8()? as u32;
        let num_buckets = frame.params.u32()?;
        let stash_fingerprint = frame.params.u16()? as u64;
        let stash_bucket = frame.params.u32()?;
        frame.params.finish()?;
        if !FINGERPRINT_BITS.contains(&bits) {
            return Err(FormatError::InvalidParameters("fingerprint bits must be 8, 12 or 16").into());
        }
        if num_buckets == 0 {
            return Err(FormatError::InvalidParameters("bucket count must be positive").into());
        }
        let lanes = Lanes::new(bits);
        let stash = Stash {
            fingerprint: stash_fingerprint,
            bucket: stash_bucket,
        };
        let stash_valid = if stash.is_occupied() {
            stash_fingerprint <= lanes.max_fingerprint() && stash_bucket < num_buckets
        } else {
            stash_bucket == 0
        };
        if !stash_valid {
            return Err(FormatError::InvalidParameters("stash entry out of range").into());
        }
        let words = usize::try_from(BucketTable::words_for(lanes, num_buckets))
            .map_err(|_| FormatError::Truncated)?;
        if frame.payload.remaining() != words.saturating_mul(8) {
            return Err(FormatError::InvalidParameters("payload length does not match bucket count").into());
        }
        let bytes = frame.payload.take(words.saturating_mul(8))?;
        frame.payload.finish()?;
        let table = BucketTable::from_le_words(lanes, num_buckets, bytes)?
            .ok_or(FormatError::InvalidParameters("bits set after the last bucket"))?;
        let num_keys = table.count_occupied() + stash.is_occupied() as u64;
        Ok(CuckooFilter {
            table,
            stash,
            num_keys,
        })
    }
}

impl FromBytes for CuckooFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::CuckooFilter)?)
    }
}
