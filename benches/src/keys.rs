//! Reproducible key sets: present keys, absent keys guaranteed disjoint from
//! them, and query pools that walk a filter in random order.
//!
//! Keys are already-hashed `u64`s (what [`amq::hash_key`] would return), so
//! every benchmark measures the filter and not a hash function. They are
//! `remix(i, SEED)` for consecutive `i`: `remix` is a bijection for a fixed
//! seed, so present keys (`i < n`) and absent keys (`i >= n`) are distinct
//! and disjoint by construction, with no set to check against.

use amq::hash::{reduce, remix};

/// The one seed every benchmark and the report use.
pub const SEED: u64 = 0x616d_712d_6265_6e63; // "amq-benc"

/// Keys per query batch in the criterion benches: large enough that timer
/// overhead vanishes, small enough that a batch is a few microseconds.
pub const BATCH: usize = 1_000;

/// Number of distinct keys a query pool holds. The pool is much larger than
/// a batch so consecutive batches touch different cache lines: querying the
/// same 1,000 keys over and over would keep their filter lines in cache and
/// measure a warm cache that no real workload has.
pub const POOL: usize = 1_000_000;

/// The keys a filter is built from, and keys that are certainly not in it.
#[derive(Debug, Clone)]
pub struct KeySet {
    /// The `n` keys inserted into / built into every filter, in random order.
    pub present: Vec<u64>,
    /// `absent.len()` keys none of which is in `present`.
    pub absent: Vec<u64>,
}

impl KeySet {
    /// `n` present keys and `absent` absent keys, always the same for the
    /// same arguments.
    pub fn new(n: usize, absent: usize) -> Self {
        let n64 = n as u64;
        KeySet {
            present: (0..n64).map(|i| remix(i, SEED)).collect(),
            absent: (n64..n64 + absent as u64).map(|i| remix(i, SEED)).collect(),
        }
    }

    /// A pool of present keys to query, drawn at random positions of
    /// `present` (so not in insertion order).
    pub fn hit_pool(&self, len: usize) -> QueryPool {
        let n = self.present.len() as u64;
        assert!(n > 0, "hit pool of an empty key set");
        let keys = (0..len as u64)
            .map(|j| self.present[reduce(remix(j, SEED ^ 1), n) as usize])
            .collect();
        QueryPool::from_keys(keys)
    }

    /// A pool of absent keys to query (a prefix of `absent`, already random).
    pub fn miss_pool(&self, len: usize) -> QueryPool {
        assert!(self.absent.len() >= len, "miss pool larger than the absent keys");
        QueryPool::from_keys(self.absent[..len].to_vec())
    }
}

/// Keys to query, handed out in consecutive [`BATCH`]-sized slices that wrap
/// around at the end.
#[derive(Debug, Clone)]
pub struct QueryPool {
    keys: Vec<u64>,
    next: usize,
}

impl QueryPool {
    /// A pool over `keys`, whose length must be a positive multiple of [`BATCH`].
    pub fn from_keys(keys: Vec<u64>) -> Self {
        assert!(
            keys.len() >= BATCH && keys.len().is_multiple_of(BATCH),
            "pool must be whole batches"
        );
        QueryPool { keys, next: 0 }
    }

    /// The next batch of [`BATCH`] keys.
    #[inline]
    pub fn next_batch(&mut self) -> &[u64] {
        let start = self.next;
        self.next = if start + BATCH == self.keys.len() {
            0
        } else {
            start + BATCH
        };
        &self.keys[start..start + BATCH]
    }

    /// Every key of the pool.
    pub fn all(&self) -> &[u64] {
        &self.keys
    }
}

/// Number of keys for the criterion benches: 1M always, and 10M too when the
/// environment variable `AMQ_BENCH_LARGE=1` is set.
pub fn bench_sizes() -> Vec<usize> {
    let large = std::env::var("AMQ_BENCH_LARGE").is_ok_and(|v| v == "1");
    if large {
        vec![1_000_000, 10_000_000]
    } else {
        vec![1_000_000]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn present_and_absent_are_disjoint_and_distinct() {
        let keys = KeySet::new(10_000, 20_000);
        let present: HashSet<u64> = keys.present.iter().copied().collect();
        let absent: HashSet<u64> = keys.absent.iter().copied().collect();
        assert_eq!(present.len(), 10_000);
        assert_eq!(absent.len(), 20_000);
        assert!(present.is_disjoint(&absent));
    }

    #[test]
    fn key_sets_are_reproducible() {
        assert_eq!(KeySet::new(100, 100).present, KeySet::new(100, 100).present);
    }

    #[test]
    fn hit_pool_holds_only_present_keys_and_batches_wrap() {
        let keys = KeySet::new(5_000, BATCH * 2);
        let present: HashSet<u64> = keys.present.iter().copied().collect();
        let mut pool = keys.hit_pool(BATCH * 3);
        assert!(pool.all().iter().all(|k| present.contains(k)));
        let first = pool.next_batch().to_vec();
        pool.next_batch();
        pool.next_batch();
        assert_eq!(pool.next_batch(), &first[..]);
        let miss = keys.miss_pool(BATCH * 2);
        assert!(miss.all().iter().all(|k| !present.contains(k)));
    }
}
