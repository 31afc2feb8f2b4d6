//! [`BlockCache`]: data blocks kept in memory after their first read, the
//! least recently used evicted first, under a byte cap.
//!
//! Without it every data block a point read needs is a `pread` (from the OS
//! page cache at best) plus a checksum. With it, a block read once is served
//! from memory, already verified, as long as it stays among the most
//! recently used blocks that fit the cap.
//!
//! What goes in: data blocks read by point lookups (`get`, `multi_get`).
//! Scans and compactions read blocks without caching them, so one scan
//! cannot evict the working set of the point reads (RocksDB's
//! `fill_cache = false` for iterators, made the rule here). Filters and
//! index blocks are not cached: they are decoded and kept whole per table.
//!
//! Keys are `(table number, block offset)`: table numbers are never reused,
//! so a block of a deleted table can never be mistaken for a live one; it
//! ages out.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A block's key: table number and offset in the table file.
type BlockKey = (u64, u64);

#[derive(Debug, Default)]
struct Lru {
    /// Block, and the tick of its last use.
    blocks: HashMap<BlockKey, (Arc<[u8]>, u64)>,
    /// Last-use tick → block: the first entry is the least recently used.
    by_use: BTreeMap<u64, BlockKey>,
    bytes: usize,
    tick: u64,
}

/// Verified data blocks under a byte cap (see the module docs).
#[derive(Debug)]
pub(crate) struct BlockCache {
    capacity: usize,
    lru: Mutex<Lru>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl BlockCache {
    /// A cache of at most `capacity` bytes of blocks.
    pub(crate) fn new(capacity: usize) -> Self {
        BlockCache {
            capacity,
            lru: Mutex::new(Lru::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lru> {
        // A panic while holding the lock leaves a consistent map (every
        // update below is completed before anything can panic), so a
        // poisoned lock is still usable.
        self.lru.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The block at `offset` of table `table`, if cached (and marks it
    /// used). Counts a hit or a miss.
    pub(crate) fn get(&self, table: u64, offset: u64) -> Option<Arc<[u8]>> {
        let mut lru = self.lock();
        lru.tick += 1;
        let tick = lru.tick;
        let found = match lru.blocks.get_mut(&(table, offset)) {
            Some((block, used)) => {
                let old = std::mem::replace(used, tick);
                Some((Arc::clone(block), old))
            }
            None => None,
        };
        match found {
            Some((block, old)) => {
                lru.by_use.remove(&old);
                lru.by_use.insert(tick, (table, offset));
                self.hits.fetch_add(1, Relaxed);
                Some(block)
            }
            None => {
                self.misses.fetch_add(1, Relaxed);
                None
            }
        }
    }

    /// Caches `block`, evicting the least recently used blocks until it
    /// fits. A block larger than the whole cap is not cached.
    pub(crate) fn insert(&self, table: u64, offset: u64, block: Arc<[u8]>) {
        if block.len() > self.capacity {
            return;
        }
        let mut lru = self.lock();
        lru.tick += 1;
        let tick = lru.tick;
        if let Some((old, used)) = lru.blocks.remove(&(table, offset)) {
            lru.by_use.remove(&used);
            lru.bytes -= old.len();
        }
        while lru.bytes + block.len() > self.capacity {
            let Some((_, victim)) = lru.by_use.pop_first() else {
                break;
            };
            if let Some((old, _)) = lru.blocks.remove(&victim) {
                lru.bytes -= old.len();
            }
        }
        lru.bytes += block.len();
        lru.by_use.insert(tick, (table, offset));
        lru.blocks.insert((table, offset), (block, tick));
    }

    /// `(hits, misses, resident bytes)`.
    pub(crate) fn counters(&self) -> (u64, u64, u64) {
        let bytes = self.lock().bytes as u64;
        (self.hits.load(Relaxed), self.misses.load(Relaxed), bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(len: usize, fill: u8) -> Arc<[u8]> {
        vec![fill; len].into()
    }

    #[test]
    fn evicts_the_least_recently_used_under_the_cap() {
        let c = BlockCache::new(300);
        c.insert(1, 0, block(100, 1));
        c.insert(1, 100, block(100, 2));
        c.insert(2, 0, block(100, 3));
        // Use (1, 0): (1, 100) becomes the least recently used.
        assert_eq!(c.get(1, 0).unwrap()[0], 1);
        c.insert(3, 0, block(100, 4));
        assert!(c.get(1, 100).is_none());
        assert_eq!(c.get(1, 0).unwrap()[0], 1);
        assert_eq!(c.get(2, 0).unwrap()[0], 3);
        assert_eq!(c.get(3, 0).unwrap()[0], 4);
        let (hits, misses, bytes) = c.counters();
        assert_eq!((hits, misses, bytes), (4, 1, 300));
    }

    #[test]
    fn the_cap_holds_for_any_sequence() {
        let c = BlockCache::new(1_000);
        let mut x = 7u64;
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let len = (x >> 40) as usize % 400 + 1;
            c.insert(i % 37, (x >> 20) % 11, block(len, i as u8));
            let _ = c.get((x >> 8) % 37, (x >> 30) % 11);
            assert!(c.counters().2 <= 1_000);
        }
        // Every cached block's bytes are counted once.
        let lru = c.lock();
        let sum: usize = lru.blocks.values().map(|(b, _)| b.len()).sum();
        assert_eq!(sum, lru.bytes);
        assert_eq!(lru.blocks.len(), lru.by_use.len());
    }

    #[test]
    fn a_block_over_the_cap_is_not_cached_and_replacing_keeps_the_count() {
        let c = BlockCache::new(100);
        c.insert(1, 0, block(101, 0));
        assert!(c.get(1, 0).is_none());
        c.insert(1, 0, block(60, 1));
        c.insert(1, 0, block(40, 2));
        assert_eq!(c.counters().2, 40);
        assert_eq!(c.get(1, 0).unwrap()[0], 2);
    }
}
