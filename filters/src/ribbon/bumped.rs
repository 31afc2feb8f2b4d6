//! Bumping (BuRR: Dillinger, Hübschle-Schneider, Sanders & Walzer, "Fast
//! Succinct Retrieval and Approximate Membership using Ribbon", SEA 2022):
//! a layer whose shards all have the same size, slightly *fewer* slots than
//! keys on average, and whose keys that do not fit are sent ("bumped") to a
//! small second filter.
//!
//! The slots of a shard are cut into buckets of [`BUCKET_SLOTS`]. Keys are
//! banded bucket by bucket, left to right, and inside a bucket from its
//! last start to its first. When a key of a bucket contradicts the system,
//! every key of the bucket whose start lies below a threshold is bumped:
//! the smallest of [`THRESHOLDS`] above the failed key's offset. Those keys
//! that were already banded are taken out again (they were banded last, so
//! no other row was reduced by them). A bucket's threshold is stored in two
//! bits; a query whose offset in its bucket is below it asks the second
//! filter instead. The keys banded first in a bucket are those starting
//! late in it, whose rows reach furthest into the free slots after it, and
//! the keys bumped are the early ones, whose rows compete with what the
//! bucket before left behind.
//!
//! A layer never fails: at worst a bucket bumps all its keys.

use alloc::vec::Vec;

use super::layout::Columns;
use super::row::{coeff_of, mixed, result_of, seeded, spread, ROW_WIDTH};
use super::solution::{Window, BLOCK_SLOTS};
use super::Shards;
use crate::hash::reduce;
use crate::Error;

/// Keys per shard of a bumped layer, about: the layer's shards all have
/// the same size, so a query finds its shard's first block by a
/// multiplication, with no table. (A shard is banded in one piece: 2 MB
/// of banding at this size.)
pub const BUMPED_SHARD_KEYS: usize = 1 << 16;

/// Keys per slot of a bumped layer: more keys than slots, the excess
/// bumped. Measured best among 1.00 to 1.05 (`docs/ribbon.md`, "Bumping").
pub(crate) const BUMPED_LOAD: f64 = 1.03;

/// Fewest keys a filter is bumped at: below, a layer of one small shard
/// bumps an unsteady share of its keys (its last 127 slots hold no start),
/// so [`RibbonParams::with_bumping`](super::RibbonParams::with_bumping)
/// builds the unbumped layout, whose size the planner predicts better.
pub const BUMPED_MIN_KEYS: usize = 10_000;

/// Share of the keys a layer bumps at that load, on average (measured at
/// 10^6 keys by the layer exploration in `bumped_build.rs`): what sizing
/// and the planner's prediction expect of the second filter.
pub(crate) const SECOND_SHARE: f64 = 0.031;

/// Slots per bucket: one threshold per bucket.
pub(crate) const BUCKET_SLOTS: usize = 128;
pub(crate) const BUCKET_SHIFT: u32 = BUCKET_SLOTS.trailing_zeros();

/// The thresholds a bucket may have, by their two-bit code: keys whose
/// offset in the bucket is below the threshold are bumped.
pub(crate) const THRESHOLDS: [u32; 4] = [0, 32, 64, BUCKET_SLOTS as u32];

/// The shard and the start in it of a key whose first step is `a`, in a
/// layer of `num_shards` shards of `num_starts` starts each. The shard is
/// the high part of `a · num_shards` (as everywhere in Ribbon) and the
/// start the low part, scaled: both are monotone in `a`, so keys sorted by
/// `a` are sorted by shard and start.
#[inline(always)]
pub(crate) fn place(a: u64, num_shards: u64, num_starts: u64) -> (usize, usize) {
    let x = a as u128 * num_shards as u128;
    ((x >> 64) as usize, reduce(x as u64, num_starts) as usize)
}

/// The coefficients of a bumped layer's row: the seed-0 remix of the key.
#[inline(always)]
pub(crate) fn coeff_in_layer(hash: u64) -> u128 {
    coeff_of(seeded(spread(hash), 0))
}

/// The threshold of a two-bit code ([`THRESHOLDS`]).
#[inline(always)]
pub(crate) fn threshold(code: u32) -> u32 {
    THRESHOLDS[(code & 3) as usize]
}

/// The code of bucket `i` in codes packed 32 to a word, low bits first.
#[inline(always)]
pub(crate) fn code_in(word: u64, i: usize) -> u32 {
    (word >> (2 * (i & 31))) as u32 & 3
}

/// The shape of a bumped layer: `num_shards` shards of `shard_blocks`
/// blocks each (a whole number of buckets, at least one row's width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layer {
    pub(crate) num_shards: usize,
    pub(crate) shard_blocks: usize,
}

/// Blocks per bucket.
const BUCKET_BLOCKS: usize = BUCKET_SLOTS / BLOCK_SLOTS;

impl Layer {
    /// The layer for `n` keys: `ceil(n / BUMPED_SHARD_KEYS)` shards of
    /// `n / (shards · BUMPED_LOAD)` slots each, rounded to whole buckets.
    pub(crate) fn for_keys(n: usize) -> Result<Self, Error> {
        let num_shards = n.div_ceil(BUMPED_SHARD_KEYS);
        if num_shards == 0 {
            return Ok(Layer {
                num_shards: 0,
                shard_blocks: 0,
            });
        }
        let slots = n as f64 / (num_shards as f64 * BUMPED_LOAD);
        let buckets = libm::round(slots / BUCKET_SLOTS as f64).max(1.0) as usize;
        let layer = Layer {
            num_shards,
            shard_blocks: buckets * BUCKET_BLOCKS,
        };
        layer.checked_total_blocks().ok_or(Error::TooLarge)?;
        Ok(layer)
    }

    /// The layer of a frame's fields, if they are consistent: `total_blocks`
    /// split evenly over `num_shards` shards of whole buckets (none for no
    /// shards).
    pub(crate) fn from_parts(num_shards: usize, total_blocks: usize) -> Option<Self> {
        if total_blocks > u32::MAX as usize {
            return None; // and below, every product fits
        }
        if num_shards == 0 {
            return (total_blocks == 0).then_some(Layer {
                num_shards: 0,
                shard_blocks: 0,
            });
        }
        let shard_blocks = total_blocks / num_shards;
        let ok = shard_blocks.checked_mul(num_shards) == Some(total_blocks)
            && shard_blocks > 0
            && shard_blocks.is_multiple_of(BUCKET_BLOCKS)
            && shard_blocks * BLOCK_SLOTS >= ROW_WIDTH;
        ok.then_some(Layer {
            num_shards,
            shard_blocks,
        })
    }

    /// The layer of a two-line frame's fields (its "blocks" are lines, a
    /// line is a bucket): `total_lines` split evenly over `num_shards`
    /// shards, each at least one line.
    pub(crate) fn from_line_parts(num_shards: usize, total_lines: usize) -> Option<Self> {
        if total_lines > u32::MAX as usize {
            return None;
        }
        if num_shards == 0 {
            return (total_lines == 0).then_some(Layer {
                num_shards: 0,
                shard_blocks: 0,
            });
        }
        let shard_lines = total_lines / num_shards;
        (shard_lines > 0 && shard_lines.checked_mul(num_shards) == Some(total_lines)).then_some(Layer {
            num_shards,
            shard_blocks: shard_lines,
        })
    }

    /// Blocks of the whole layer, `None` past `u32::MAX`.
    pub(crate) fn checked_total_blocks(&self) -> Option<usize> {
        self.num_shards
            .checked_mul(self.shard_blocks)
            .filter(|&b| b <= u32::MAX as usize)
    }

    pub(crate) fn total_blocks(&self) -> usize {
        self.num_shards * self.shard_blocks
    }

    /// Buckets of the whole layer: one code each.
    pub(crate) fn num_buckets(&self) -> usize {
        self.total_blocks() / BUCKET_BLOCKS
    }

    /// Words of packed codes.
    pub(crate) fn code_words(&self) -> usize {
        self.num_buckets().div_ceil(32)
    }

    /// Starts per shard.
    #[inline(always)]
    fn num_starts(&self) -> u64 {
        (self.shard_blocks * BLOCK_SLOTS - (ROW_WIDTH - 1)) as u64
    }

    /// The window and fingerprint of the key with this hash in the layer,
    /// reading bucket `i`'s code through `code_of`; `None` when the key is
    /// bumped (or the layer has no shards): the second filter answers it.
    ///
    /// The code and the words are both found by arithmetic on the hash, so
    /// their loads do not wait on each other.
    #[inline(always)]
    pub(crate) fn locate(
        &self,
        columns: &Columns,
        code_of: impl Fn(usize) -> u32,
        hash: u64,
    ) -> Option<(Window, u32)> {
        if self.num_shards == 0 {
            return None;
        }
        let a = mixed(hash);
        let (shard, start) = place(a, self.num_shards as u64, self.num_starts());
        let bucket = (shard * self.shard_blocks) / BUCKET_BLOCKS + (start >> BUCKET_SHIFT);
        let coeff = coeff_in_layer(hash);
        if ((start & (BUCKET_SLOTS - 1)) as u32) < threshold(code_of(bucket)) {
            return None;
        }
        Some((
            Window::compact(columns, shard * self.shard_blocks, start, coeff),
            result_of(a),
        ))
    }

    /// Expected FPR of a query: the layer's mean per-shard FPR for the
    /// starts it keeps, `second` (the second filter's) for the share of
    /// starts bumped, out of `codes`.
    pub(crate) fn expected_fpr(
        &self,
        columns: &Columns,
        codes: impl Iterator<Item = u32>,
        second: f64,
    ) -> f64 {
        if self.num_shards == 0 {
            return second;
        }
        // The codes of every shard's last buckets cover no starts, and they
        // are 0: the bumped share counts only real starts.
        let bumped: u64 = codes.map(|c| threshold(c) as u64).sum();
        let starts = self.num_starts() * self.num_shards as u64;
        let share = (bumped as f64 / starts as f64).min(1.0);
        let mine = (0..self.num_shards)
            .map(|s| columns.shard_fpr(s * self.shard_blocks, self.shard_blocks))
            .sum::<f64>()
            / self.num_shards as f64;
        (1.0 - share) * mine + share * second
    }
}

/// A bumped filter: the layer's column rule, shape and codes (its words
/// are the filter's), and the second filter of the keys it bumped: an
/// ordinary sharded one with its own words and its own column rule (one
/// chosen for its own blocks, so its keys meet the target FPR too).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bumped {
    pub(crate) columns: Columns,
    pub(crate) layer: Layer,
    /// Each bucket's two-bit code, 32 to a word, low bits first.
    pub(crate) codes: Vec<u64>,
    /// Keys in the second filter.
    pub(crate) second_keys: u64,
    pub(crate) second: Shards,
    /// The second filter's words, with its query padding.
    pub(crate) second_words: Vec<u64>,
}

impl Bumped {
    /// Bucket `i`'s code.
    #[inline(always)]
    pub(crate) fn code(&self, i: usize) -> u32 {
        code_in(self.codes[i >> 5], i)
    }

    /// The key's window in the layer (`Ok`, read from the filter's words),
    /// or in the second filter (`Err`, read from `second_words`; `None` if
    /// the second filter holds nothing where the key lands).
    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Result<(Window, u32), Option<(Window, u32)>> {
        match self.layer.locate(&self.columns, |i| self.code(i), hash) {
            Some(found) => Ok(found),
            None => Err(self.second.locate(hash)),
        }
    }

    pub(crate) fn expected_fpr(&self) -> f64 {
        let codes = (0..self.layer.num_buckets()).map(|i| self.code(i));
        self.layer
            .expected_fpr(&self.columns, codes, self.second.expected_fpr())
    }
}
