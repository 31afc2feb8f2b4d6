//! Building a Ribbon filter: keys grouped by shard, each shard banded with
//! a seed and solved into its blocks (or lines), a failed shard retried with
//! a fresh seed and, every few attempts, more room.

use alloc::vec::Vec;

use super::banding::Banding;
use super::config::RibbonParams;
use super::config::SHARD_KEYS;
use super::layout::Columns;
use super::order::Grouped;
use super::row::{coeff_of, result_of, seeded, spread, start_of, unmixed, Row, ROW_WIDTH};
use super::solution::padding;
use super::solution::{solve_into, BLOCK_SLOTS};
use super::table::{shard_table, MAX_ATTEMPTS};
use super::{lines, Kernel, Layout, Ribbon, Shards};
use crate::{Error, FilterSizing, KeyHash};

/// The low `columns` bits (`columns` in `1..=32`).
#[inline(always)]
fn column_mask(columns: u32) -> u32 {
    u32::MAX >> (32 - columns)
}

/// Bands one shard's keys with shard seed `seed`, the shard being
/// `num_blocks` blocks from global block `first` laid out by `columns`;
/// `false` if the system has no solution.
fn band_shard(
    banding: &mut Banding,
    keys: &[u64],
    columns: &Columns,
    first: usize,
    num_blocks: usize,
    seed: u8,
) -> Result<bool, Error> {
    banding.reset(num_blocks * BLOCK_SLOTS)?;
    let num_starts = (num_blocks * BLOCK_SLOTS - (ROW_WIDTH - 1)) as u64;
    Ok(banding.add_all(keys.iter().map(|&a| {
        let q = seeded(spread(unmixed(a)), seed);
        let start = start_of(q, num_starts);
        Row {
            start,
            coeff: coeff_of(q),
            result: result_of(a) & column_mask(columns.of_key(first + start / BLOCK_SLOTS)),
        }
    })))
}

/// Grows `v` by `n` zeros, reserving exactly that much if it lacks room
/// ([`Error::TooLarge`] if the allocator refuses).
fn grow_exact(v: &mut Vec<u64>, n: usize) -> Result<(), Error> {
    let capacity = v.capacity();
    v.try_reserve_exact(n).map_err(|_| Error::TooLarge)?;
    if v.capacity() != capacity {
        crate::zeroed::advise_huge_pages(v);
    }
    v.resize(v.len() + n, 0);
    Ok(())
}

impl Ribbon {
    /// Builds the filter from key hashes: unlike xorf's
    /// `BinaryFuse8::try_from(&keys)` on raw `u64`s, hash your keys with
    /// [`hash_u64`](crate::hash_u64) first ([`hash_key`](crate::hash_key)
    /// for bytes).
    ///
    /// There is no `TryFrom<&[u64]>`: a `u64` could be a key or a hash, and
    /// taking one for the other ruins the filter silently ([`KeyHash`]).
    /// Duplicates are allowed. Sized by `sizing`: the result bits and
    /// layout of [`RibbonParams::with_fpr`] or
    /// [`RibbonParams::with_bits_per_key`].
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, KeyHash, Ribbon};
    /// let keys: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
    /// let f = Ribbon::build(&keys, FilterSizing::Fpr(0.01))?;
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert!((f.expected_fpr() - 0.01).abs() < 1e-3);
    /// assert!(f.bits_per_key() < 7.5);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "try_from", alias = "from_keys")]
    pub fn build(hashes: &[KeyHash], sizing: FilterSizing) -> Result<Self, Error> {
        Self::build_with(hashes, &RibbonParams::for_sizing(sizing)?)
    }

    /// Builds the filter from key hashes (duplicates allowed) with every
    /// parameter given ([`RibbonParams`]: result bits, slots per key,
    /// layout).
    ///
    /// The column rule is chosen once, from every shard's first-attempt
    /// size; the words are allocated once, for every shard solved at that
    /// size (what almost always happens); a shard that needs more slots
    /// grows them by exactly its size, and any excess is given back at the
    /// end, so [`size_in_bytes`](crate::Filter::size_in_bytes) is what the filter
    /// holds.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, KeyHash, Ribbon, RibbonParams};
    /// let keys: Vec<KeyHash> = (0..1000u64).map(hash_u64).collect();
    /// let f = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(10)?)?;
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert_eq!(f.expected_fpr(), 1.0 / 1024.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_with(hashes: &[KeyHash], params: &RibbonParams) -> Result<Self, Error> {
        let hashes = crate::hash::raw(hashes);
        if params.two_lines() {
            let (shards, num_keys) = lines::build(hashes, params.slots_per_key())?;
            return Ok(Ribbon {
                words: Vec::new(),
                layout: Layout::Lines(shards),
                num_keys,
                kernel: Kernel::detect(true),
            });
        }
        let num_shards = hashes.len().div_ceil(SHARD_KEYS);
        let grouped = Grouped::new(hashes, num_shards)?;
        let mut planned: Vec<u32> = crate::zeroed::zeroed_vec(num_shards)?;
        let mut planned_total = 0usize;
        for (s, p) in planned.iter_mut().enumerate() {
            let keys = grouped.shard(s).len();
            let blocks = if keys == 0 { 0 } else { params.blocks(keys, 0)? };
            planned_total = planned_total
                .checked_add(blocks)
                .filter(|&t| t <= u32::MAX as usize)
                .ok_or(Error::TooLarge)?;
            *p = blocks as u32;
        }
        let columns = params.columns(grouped.num_distinct(), num_shards, |s| planned[s] as usize);
        drop(planned);
        let mut words = Vec::new();
        let estimate = columns
            .checked_word_of(planned_total)
            .and_then(|w| w.checked_add(padding(&columns, num_shards)))
            .filter(|&w| w <= isize::MAX as usize / 8);
        words
            .try_reserve_exact(estimate.ok_or(Error::TooLarge)?)
            .map_err(|_| Error::TooLarge)?;
        // Before the first write, so the page faults take huge pages (as
        // every table of the crate does with the `huge-pages` feature).
        crate::zeroed::advise_huge_pages(&mut words);
        let (mut starts, mut seeds) = shard_table(num_shards)?;
        if num_shards > 0 {
            starts.push(0u32);
        }
        let mut banding = Banding::new(0)?;
        for s in 0..num_shards {
            let keys = grouped.shard(s);
            let first = words_end(&starts);
            if keys.is_empty() {
                starts.push(first as u32);
                seeds.push(0);
                continue;
            }
            let mut solved = false;
            for attempt in 0..MAX_ATTEMPTS {
                let num_blocks = params.blocks(keys.len(), attempt)?;
                let end = first
                    .checked_add(num_blocks)
                    .filter(|&e| e <= u32::MAX as usize)
                    .ok_or(Error::TooLarge)?;
                let seed = attempt as u8;
                if band_shard(&mut banding, keys, &columns, first, num_blocks, seed)? {
                    let from = words.len();
                    let to = columns
                        .checked_word_of(end)
                        .filter(|&w| w <= isize::MAX as usize / 8)
                        .ok_or(Error::TooLarge)?;
                    grow_exact(&mut words, to - from)?;
                    solve_into(&banding, &columns, first, num_blocks, &mut words[from..]);
                    starts.push(end as u32);
                    seeds.push(seed);
                    solved = true;
                    break;
                }
            }
            if !solved {
                return Err(Error::BuildFailed {
                    attempts: MAX_ATTEMPTS,
                });
            }
        }
        let num_keys = grouped.num_distinct() as u64;
        drop((banding, grouped));
        grow_exact(&mut words, padding(&columns, num_shards))?;
        words.shrink_to_fit();
        Ok(Ribbon {
            words,
            layout: Layout::Compact(Shards {
                columns,
                starts,
                seeds,
            }),
            num_keys,
            kernel: Kernel::detect(false),
        })
    }
}

/// The block after the last shard placed so far.
fn words_end(starts: &[u32]) -> usize {
    starts.last().map_or(0, |&b| b as usize)
}
