//! Linear-time ordering of the keys by shard and start slot, with duplicate
//! hashes removed.
//!
//! The shard is monotone in a key's first step `a` (see [`row`](super::row)),
//! so sorting the `a` values groups the keys by shard; within a shard the
//! order is by `a`, not by start slot (starts come from a seeded remix, so
//! that a retry can redraw them), and banding accepts rows in any order. The
//! first step is a bijection of the hash, so equal `a` values are exactly
//! duplicate hashes, and dedup is one pass over each sorted shard. (Ordering
//! each shard by start as well might make banding more cache-friendly; it is
//! not measured.)
//!
//! The sort is a counting-sort pass on the shard index (one stream per shard,
//! a few thousand keys each), then a comparison sort inside each shard, whose
//! size is bounded by the sharding rule: O(n) plus O(n log shard size), so
//! linear in n. It needs one array of 8 bytes per key and one count per shard.

use alloc::vec::Vec;

use super::row::{mixed, shard_of};
use crate::zeroed::zeroed_vec;
use crate::Error;

/// The distinct first remixes of a key set, grouped by shard, each group
/// ascending.
#[derive(Debug)]
pub(crate) struct Grouped {
    values: Vec<u64>,
    /// Shard `s` is `values[begin[s] .. end[s]]`.
    begin: Vec<usize>,
    end: Vec<usize>,
}

impl Grouped {
    /// Groups `mixed(h)` over `hashes` into `num_shards` shards.
    /// [`Error::TooLarge`] if its arrays cannot be allocated.
    pub(crate) fn new(hashes: &[u64], num_shards: usize) -> Result<Self, Error> {
        let shards = num_shards as u64;
        let mut begin: Vec<usize> = zeroed_vec(num_shards.checked_add(1).ok_or(Error::TooLarge)?)?;
        for &h in hashes {
            begin[shard_of(mixed(h), shards) + 1] += 1;
        }
        for s in 1..begin.len() {
            begin[s] += begin[s - 1];
        }
        let mut values: Vec<u64> = zeroed_vec(hashes.len())?;
        // `next[s]` walks shard s from its beginning to its end.
        let mut next: Vec<usize> = zeroed_vec(begin.len())?;
        next.copy_from_slice(&begin);
        for &h in hashes {
            let a = mixed(h);
            let slot = &mut next[shard_of(a, shards)];
            values[*slot] = a;
            *slot += 1;
        }
        begin.pop();
        // `next` becomes `end`: shard s ends after its distinct values.
        let mut end = next;
        end.pop();
        for s in 0..num_shards {
            let group = &mut values[begin[s]..end[s]];
            group.sort_unstable();
            end[s] = begin[s] + dedup_sorted(group);
        }
        Ok(Grouped { values, begin, end })
    }

    /// The sorted, distinct first remixes of shard `s`.
    pub(crate) fn shard(&self, s: usize) -> &[u64] {
        &self.values[self.begin[s]..self.end[s]]
    }

    /// Total distinct keys.
    pub(crate) fn num_distinct(&self) -> usize {
        self.begin.iter().zip(&self.end).map(|(b, e)| e - b).sum()
    }
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

    #[test]
    fn groups_sorts_and_dedups_like_the_obvious_way() {
        for (n, shards) in [(0usize, 1usize), (1, 1), (2, 3), (1000, 1), (5000, 7)] {
            let mut hashes: Vec<u64> = (0..n as u64).map(|i| crate::hash::remix(i % 700, 5)).collect();
            hashes.extend_from_slice(&hashes.clone()[..n / 3]);
            let g = Grouped::new(&hashes, shards).unwrap();
            let mut want: Vec<u64> = hashes.iter().map(|&h| mixed(h)).collect();
            want.sort_unstable();
            want.dedup();
            let got: Vec<u64> = (0..shards).flat_map(|s| g.shard(s).to_vec()).collect();
            assert_eq!(got, want, "n = {n}");
            assert_eq!(g.num_distinct(), want.len());
            for s in 0..shards {
                assert!(g.shard(s).iter().all(|&a| shard_of(a, shards as u64) == s));
            }
        }
    }
}
