//! [`Version`]: the live tables, as levels of sorted runs, and the read path
//! through them.
//!
//! Every level is a list of *runs*, newest first; a run is a list of tables
//! with disjoint key ranges, in key order. Leveled compaction keeps one run
//! per level below level 0 (each flush adds a run of one table to level 0);
//! tiered compaction keeps up to T runs per level. Age order is the tree's
//! order: level 0 before level 1, and within a level newer runs (larger run
//! ids) first, so the first table that holds a key holds its newest version.
//!
//! A version is immutable; a flush or compaction installs a new one, and a
//! reader keeps the one it started with (an `Arc`) for as long as it needs.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::manifest::TableRecord;
use crate::sstable::Table;

/// `a.cmp(b)` for byte strings, inlined: eight bytes at a time as
/// big-endian integers, then byte by byte. The read path compares a key with
/// two range bounds per table; a call into the C library's `memcmp` for each
/// cost more than the filter probe it guards. Tested against `Ord for [u8]`.
#[inline(always)]
pub(crate) fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let (mut ca, mut cb) = (a[..n].chunks_exact(8), b[..n].chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let (x, y) = (be64(x), be64(y));
        if x != y {
            return x.cmp(&y);
        }
    }
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The first 16 bytes of a key, zero-padded, as a big-endian integer. Its
/// order is consistent with the keys' order: `key_prefix(a) < key_prefix(b)`
/// implies `a < b` (equal prefixes decide nothing), so one integer compare
/// settles most range checks.
#[inline(always)]
pub(crate) fn key_prefix(key: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = key.len().min(16);
    b[..n].copy_from_slice(&key[..n]);
    u128::from_be_bytes(b)
}

#[inline(always)]
fn be64(c: &[u8]) -> u64 {
    u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub id: u64,
    pub tables: Vec<Arc<Table>>,
    /// Every table's smallest and largest key, back to back in one buffer:
    /// the read path's range checks touch this one allocation instead of
    /// chasing each table's pointers to its key range.
    bounds: Vec<u8>,
    /// `bounds[ends[2i - 1]..ends[2i]]` is table `i`'s smallest key and
    /// `bounds[ends[2i]..ends[2i + 1]]` its largest (with `ends[-1] = 0`).
    ends: Vec<usize>,
    /// [`key_prefix`] of the run's smallest and largest keys.
    lo: u128,
    hi: u128,
}

impl Run {
    /// A run of `tables`, which are in key order with disjoint ranges.
    pub(crate) fn new(id: u64, tables: Vec<Arc<Table>>) -> Run {
        let mut bounds = Vec::new();
        let mut ends = Vec::with_capacity(2 * tables.len());
        for t in &tables {
            bounds.extend_from_slice(t.smallest());
            ends.push(bounds.len());
            bounds.extend_from_slice(t.largest());
            ends.push(bounds.len());
        }
        let lo = tables.first().map_or(u128::MAX, |t| key_prefix(t.smallest()));
        let hi = tables.last().map_or(0, |t| key_prefix(t.largest()));
        Run {
            id,
            tables,
            bounds,
            ends,
            lo,
            hi,
        }
    }

    fn smallest_of(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[2 * i - 1] };
        &self.bounds[start..self.ends[2 * i]]
    }

    fn largest_of(&self, i: usize) -> &[u8] {
        &self.bounds[self.ends[2 * i]..self.ends[2 * i + 1]]
    }

    /// The one table whose key range may hold `key`: binary search on the
    /// largest keys, then a check of the smallest.
    #[inline]
    pub(crate) fn find(&self, key: &[u8], prefix: u128) -> Option<&Arc<Table>> {
        self.find_index(key, prefix).map(|i| &self.tables[i])
    }

    /// The position in the run of the table [`find`](Self::find) returns;
    /// `prefix` is [`key_prefix`]`(key)`.
    #[inline]
    pub(crate) fn find_index(&self, key: &[u8], prefix: u128) -> Option<usize> {
        // Integer compares settle most keys: outside the run's range, or
        // strictly inside the range of a run of one table.
        if prefix < self.lo || prefix > self.hi {
            return None;
        }
        if self.tables.len() == 1 && self.lo < prefix && prefix < self.hi {
            return Some(0);
        }
        let (mut lo, mut hi) = (0, self.tables.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if compare_keys(self.largest_of(mid), key) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.tables.len() && compare_keys(self.smallest_of(lo), key) != Ordering::Greater).then_some(lo)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.file_bytes()).sum()
    }

    pub(crate) fn smallest(&self) -> Option<&[u8]> {
        self.tables.first().map(|t| t.smallest())
    }

    pub(crate) fn largest(&self) -> Option<&[u8]> {
        self.tables.last().map(|t| t.largest())
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Level {
    /// Newest first.
    pub runs: Vec<Run>,
}

impl Level {
    pub(crate) fn bytes(&self) -> u64 {
        self.runs.iter().map(Run::bytes).sum()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.runs.iter().all(|r| r.tables.is_empty())
    }

    pub(crate) fn tables(&self) -> impl Iterator<Item = &Arc<Table>> {
        self.runs.iter().flat_map(|r| r.tables.iter())
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Version {
    pub levels: Vec<Level>,
}

impl Version {
    /// Arranges `tables` (opened) by their manifest records.
    pub(crate) fn build(records: &[(TableRecord, Arc<Table>)], num_levels: usize) -> Version {
        let deepest = records
            .iter()
            .map(|(r, _)| r.level as usize + 1)
            .max()
            .unwrap_or(0);
        let mut levels = vec![Level::default(); num_levels.max(deepest)];
        let mut sorted: Vec<_> = records.iter().collect();
        // Level, then newest run first, then key order within a run.
        sorted.sort_by(|(a, ta), (b, tb)| {
            (a.level, std::cmp::Reverse(a.run), ta.smallest()).cmp(&(
                b.level,
                std::cmp::Reverse(b.run),
                tb.smallest(),
            ))
        });
        let mut grouped: Vec<Vec<(u64, Vec<Arc<Table>>)>> = vec![Vec::new(); levels.len()];
        for (rec, table) in sorted {
            let runs = &mut grouped[rec.level as usize];
            match runs.last_mut() {
                Some((id, tables)) if *id == rec.run => tables.push(table.clone()),
                _ => runs.push((rec.run, vec![table.clone()])),
            }
        }
        for (level, runs) in levels.iter_mut().zip(grouped) {
            level.runs = runs
                .into_iter()
                .map(|(id, tables)| Run::new(id, tables))
                .collect();
        }
        Version { levels }
    }

    /// Every table, with its level.
    pub(crate) fn tables(&self) -> impl Iterator<Item = (usize, &Arc<Table>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.tables().map(move |t| (i, t)))
    }

    /// Whether no level deeper than `level` holds a table.
    pub(crate) fn nothing_below(&self, level: usize) -> bool {
        self.levels.iter().skip(level + 1).all(Level::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::compare_keys;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..ProptestConfig::default() })]
        #[test]
        fn key_prefix_order_implies_key_order(
            a in proptest::collection::vec(0u8..3, 0..24),
            b in proptest::collection::vec(0u8..3, 0..24),
        ) {
            use super::key_prefix;
            if key_prefix(&a) < key_prefix(&b) {
                prop_assert!(a < b);
            }
            if a <= b {
                prop_assert!(key_prefix(&a) <= key_prefix(&b));
            }
        }

        #[test]
        fn compare_keys_is_slice_order(
            prefix in proptest::collection::vec(any::<u8>(), 0..20),
            a in proptest::collection::vec(0u8..3, 0..20),
            b in proptest::collection::vec(0u8..3, 0..20),
        ) {
            let (a, b) = ([prefix.as_slice(), &a].concat(), [prefix.as_slice(), &b].concat());
            prop_assert_eq!(compare_keys(&a, &b), a.cmp(&b));
            prop_assert_eq!(compare_keys(&a, &a), std::cmp::Ordering::Equal);
        }
    }
}
