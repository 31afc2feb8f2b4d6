//! Keys grouped by shard, in linear time, with duplicate hashes removed:
//! from any source of key hashes that can be read more than once, one run
//! of shards at a time (all of them, for a build from a slice).
//!
//! The shard is monotone in a key's first step `a` (see [`row`](super::row)),
//! so the keys of a shard are the `a` values of one interval. A first read
//! of the source counts the keys of every shard ([`count_shards`]); a run's
//! read then places each of its keys straight at its shard's next free slot
//! ([`fill`], through `crate::streamed`'s grouping), a counting sort on
//! the shard index with the counts known in advance. Each shard is then sorted and deduplicated when it is
//! built ([`sorted_distinct`]): the first step is a bijection of the hash,
//! so equal `a` values are exactly duplicate hashes. Within a shard the order
//! is by `a`, not by start slot (starts come from a seeded remix, so that a
//! retry can redraw them), and banding accepts rows in any order.
//!
//! O(n) plus O(n log shard size), so linear in n; a run needs 8 bytes per
//! key of the run and one count per shard.

use alloc::vec::Vec;
use core::ops::Range;

use super::row::{mixed, shard_of};
use crate::streamed::{self, Group};
use crate::{Error, KeyHash};

/// Keys per shard of `source` (all of its hashes, duplicates included)
/// over `num_shards` shards.
pub(crate) fn count_shards<I>(source: I, num_shards: usize) -> Result<Vec<u32>, Error>
where
    I: IntoIterator<Item = KeyHash>,
{
    streamed::count_shards(source, num_shards, |h| shard_of(mixed(h), num_shards as u64))
}

/// The first steps `a` of the keys of `shards` (out of `counts.len()`),
/// read from `source` and grouped by shard.
pub(crate) fn fill<I>(source: I, shards: Range<usize>, counts: &[u32]) -> Result<Group, Error>
where
    I: IntoIterator<Item = KeyHash>,
{
    let num_shards = counts.len() as u64;
    Group::fill(source, shards, counts, |h| {
        let a = mixed(h);
        (shard_of(a, num_shards), a)
    })
}

/// The sorted, distinct first steps of shard `s` of `group`.
pub(crate) fn sorted_distinct(group: &mut Group, s: usize) -> &[u64] {
    let keys = group.shard_mut(s);
    keys.sort_unstable();
    let kept = dedup_sorted(keys);
    &keys[..kept]
}

/// Moves the distinct values of sorted `v` to its front; returns their count.
fn dedup_sorted(v: &mut [u64]) -> usize {
    let mut kept = 0;
    for i in 0..v.len() {
        if kept == 0 || v[i] != v[kept - 1] {
            v[kept] = v[i];
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyHash;

    #[test]
    fn groups_sorts_and_dedups_like_the_obvious_way() {
        for (n, shards) in [(0usize, 1usize), (1, 1), (2, 3), (1000, 1), (5000, 7)] {
            let mut hashes: Vec<KeyHash> = (0..n as u64)
                .map(|i| KeyHash::from_well_mixed(crate::hash::remix(i % 700, 5)))
                .collect();
            hashes.extend_from_slice(&hashes.clone()[..n / 3]);
            let counts = count_shards(hashes.iter().copied(), shards).unwrap();
            assert_eq!(counts.iter().map(|&c| c as usize).sum::<usize>(), hashes.len());
            let mut want: Vec<u64> = hashes.iter().map(|h| mixed(h.get())).collect();
            want.sort_unstable();
            want.dedup();
            // Whole, and in runs of one shard.
            for runs in [alloc::vec![0..shards], (0..shards).map(|s| s..s + 1).collect()] {
                let mut got = Vec::new();
                for run in runs {
                    let mut g = fill(hashes.iter().copied(), run.clone(), &counts).unwrap();
                    for s in run {
                        let keys = sorted_distinct(&mut g, s);
                        assert!(keys.iter().all(|&a| shard_of(a, shards as u64) == s));
                        got.extend_from_slice(keys);
                    }
                }
                assert_eq!(got, want, "n = {n}");
            }
        }
    }

    #[test]
    fn a_source_that_changes_is_an_error() {
        let hashes: Vec<KeyHash> = (0..3000u64).map(crate::hash_u64).collect();
        let counts = count_shards(hashes.iter().copied(), 3).unwrap();
        let changed = Err(crate::streamed::source_changed());
        // One key fewer, one more, one replaced.
        let fewer = &hashes[1..];
        assert_eq!(fill(fewer.iter().copied(), 0..3, &counts).map(|_| ()), changed);
        let more = hashes.iter().copied().chain([crate::hash_u64(1 << 40)]);
        assert_eq!(fill(more, 0..3, &counts).map(|_| ()), changed);
        let mut other = hashes.clone();
        other[7] = crate::hash_u64(1 << 41);
        let moved = shard_of(mixed(other[7].get()), 3) != shard_of(mixed(hashes[7].get()), 3);
        let r = fill(other.iter().copied(), 0..3, &counts).map(|_| ());
        assert_eq!(r.is_err(), moved);
        // No shards but keys.
        assert_eq!(count_shards(hashes.iter().copied(), 0).map(|_| ()), changed);
        assert_eq!(count_shards(core::iter::empty(), 0), Ok(Vec::new()));
    }
}
