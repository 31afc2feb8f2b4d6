//! Format version 1: shard records first (10 bytes each: blocks, extra-column
//! start block, result bits, seed), then the words, shard after shard.
//!
//! A version-1 frame whose shards all have the same result bits and no
//! extra-column blocks (every filter built with an integer `r`, or an FPR
//! that is a power of two) is laid out exactly as the compact layout lays
//! it out, so it decodes into one. Any other version-1 frame keeps its
//! records ([`Legacy`]): each shard's own suffix of extra-column blocks
//! cannot be expressed by the filter-wide column rule, and the keys are
//! gone, so the words cannot be re-solved. Such a filter answers through
//! its records (a table read per query, as before version 2), is written
//! back as version 1, and has no view.

use alloc::vec::Vec;

use super::layout::Columns;
use super::layout::MAX_RESULT_BITS;
use super::shard::Shard;
use super::solution::{padding_words, Geometry, Window};
use super::{Layout, Shards, MAX_ATTEMPTS};
use crate::format::{self, ByteWriter, Frame};
use crate::{Error, FilterKind, FormatError};

use super::row::{coeff_of, mixed, result_of, seeded, shard_of, spread, start_of};

/// Serialized bytes per shard record in format version 1: blocks (u32),
/// extra-column start block (u32), result bits (u8), seed (u8).
pub(crate) const SHARD_RECORD_BYTES_V1: usize = 10;

/// The shard records of a version-1 frame the compact layout cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Legacy {
    shards: Vec<Shard>,
}

impl Legacy {
    pub(crate) fn num_shards(&self) -> usize {
        self.shards.len()
    }

    pub(crate) fn attempts(&self) -> u64 {
        self.shards
            .iter()
            .filter(|s| s.geometry().num_blocks != 0)
            .map(|s| s.seed() as u64 + 1)
            .sum()
    }

    pub(crate) fn num_slots(&self) -> usize {
        self.shards.iter().map(|s| s.geometry().num_slots()).sum()
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        self.shards.capacity() * core::mem::size_of::<Shard>()
    }

    pub(crate) fn expected_fpr(&self) -> f64 {
        match self.shards.len() {
            0 => 0.0,
            s => {
                self.shards
                    .iter()
                    .map(|sh| sh.geometry().expected_fpr())
                    .sum::<f64>()
                    / s as f64
            }
        }
    }

    /// The window of the key with this hash and its fingerprint bits;
    /// `None` when its shard holds no keys. Out of line and cold: only
    /// filters read from old frames come here, and keeping it out of the
    /// compact query keeps that one short.
    #[inline(never)]
    #[cold]
    pub(crate) fn locate(&self, hash: u64) -> Option<(Window, u32)> {
        let a = mixed(hash);
        let p = spread(hash);
        let shard = *self.shards.get(shard_of(a, self.shards.len() as u64))?;
        let num_starts = shard.num_starts();
        if num_starts == 0 {
            return None;
        }
        let q = seeded(p, shard.seed());
        let start = start_of(q, num_starts as u64);
        let window = Window::new(shard.first_word(), &shard.geometry(), start, coeff_of(q));
        Some((window, result_of(a)))
    }

    /// The version-1 frame these records and `words` (padding included)
    /// were read from.
    pub(crate) fn to_bytes_v1(&self, words: &[u64], num_keys: u64) -> Vec<u8> {
        let total: usize = self
            .shards
            .iter()
            .map(|s| s.geometry().num_words().expect("checked when decoded"))
            .sum();
        let mut p = ByteWriter::default();
        p.u64(num_keys).u64(self.shards.len() as u64);
        let payload_len = self.shards.len() * SHARD_RECORD_BYTES_V1 + total * 8;
        format::encode_version(1, FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
            for s in &self.shards {
                let g = s.geometry();
                w.u32(g.num_blocks as u32)
                    .u32(g.upper_start as u32)
                    .u8(g.base_columns as u8)
                    .u8(s.seed());
            }
            w.u64s(&words[..total]);
        })
    }
}

/// Checks one version-1 shard's geometry and seed as decoded.
fn check_shard(g: &Geometry, seed: u8) -> Result<(), Error> {
    let bad = FormatError::InvalidParameters;
    if !(1..=MAX_RESULT_BITS).contains(&g.base_columns) {
        return Err(bad("result bits must be in 1..=32").into());
    }
    if g.upper_start > g.num_blocks || (g.base_columns == MAX_RESULT_BITS && g.upper_start != g.num_blocks) {
        return Err(bad("extra-column start block out of range").into());
    }
    if g.num_blocks == 1 || seed as u32 >= MAX_ATTEMPTS {
        return Err(bad("invalid shard").into());
    }
    Ok(())
}

/// Decodes a version-1 frame into its words (padding included), its
/// layout (compact when it can be) and its key count.
pub(crate) fn from_frame_v1(mut frame: Frame<'_>) -> Result<(Vec<u64>, Layout, u64), Error> {
    let num_keys = frame.params.u64()?;
    let num_shards = frame.params.u64()?;
    frame.params.finish()?;
    let bad = FormatError::InvalidParameters;
    // Bound the shard count by the input before allocating for it.
    if num_shards > (frame.payload.remaining() / SHARD_RECORD_BYTES_V1) as u64 {
        return Err(FormatError::Truncated.into());
    }
    if (num_shards == 0) != (num_keys == 0) {
        return Err(bad("key count does not match the shard count").into());
    }
    let mut shards = Vec::new();
    shards
        .try_reserve_exact(num_shards as usize)
        .map_err(|_| Error::TooLarge)?;
    let (mut total_words, mut total_slots) = (0usize, 0u64);
    for _ in 0..num_shards {
        let num_blocks = frame.payload.u32()?;
        let upper_start = frame.payload.u32()? as usize;
        let base_columns = frame.payload.u8()? as u32;
        let seed = frame.payload.u8()?;
        let g = Geometry {
            num_blocks: num_blocks as usize,
            base_columns,
            upper_start,
        };
        check_shard(&g, seed)?;
        shards.push(Shard::new(total_words, &g, seed).map_err(|_| bad("shard too large"))?);
        total_words = g
            .num_words()
            .and_then(|w| total_words.checked_add(w))
            .ok_or(FormatError::Truncated)?;
        total_slots = total_slots.saturating_add(g.num_slots() as u64);
    }
    if num_keys > total_slots {
        return Err(bad("more keys than slots").into());
    }
    if frame.payload.remaining() != total_words.saturating_mul(8) {
        return Err(bad("payload length does not match the shards").into());
    }
    let layout = match compact(&shards) {
        Some(s) => Layout::Compact(s),
        None => Layout::Legacy(Legacy { shards }),
    };
    let max_columns = match &layout {
        Layout::Compact(s) if s.seeds.is_empty() => 0,
        Layout::Compact(s) => s.columns.max_columns(),
        Layout::Legacy(l) => l
            .shards
            .iter()
            .map(|s| s.geometry().max_columns())
            .max()
            .unwrap_or(0),
        Layout::Lines(_) | Layout::Bumped(_) => 0, // version 1 has neither
    };
    let words = frame.payload.u64s(total_words, padding_words(max_columns))?;
    frame.payload.finish()?;
    Ok((words, layout, num_keys))
}

/// The compact layout of version-1 shards, if they have one: every shard
/// with keys has the same result bits and no extra-column block (then
/// shard after shard, `r` words per block, is exactly what the compact
/// layout computes), and the blocks fit a `u32` start.
fn compact(shards: &[Shard]) -> Option<Shards> {
    let mut base = None;
    let mut starts = Vec::new();
    if !shards.is_empty() {
        starts.try_reserve_exact(shards.len() + 1).ok()?;
    }
    let mut seeds = Vec::new();
    seeds.try_reserve_exact(shards.len()).ok()?;
    let mut next = 0u32;
    if !shards.is_empty() {
        starts.push(next);
    }
    for s in shards {
        let g = s.geometry();
        if g.num_blocks > 0 {
            if g.upper_start != g.num_blocks || *base.get_or_insert(g.base_columns) != g.base_columns {
                return None;
            }
            seeds.push(s.seed());
        } else {
            seeds.push(0);
        }
        next = next.checked_add(u32::try_from(g.num_blocks).ok()?)?;
        starts.push(next);
    }
    Some(Shards {
        columns: Columns::uniform(base.unwrap_or(1)),
        starts,
        seeds,
    })
}
