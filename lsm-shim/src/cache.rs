//! [`BlockCache`]: verified blocks kept in memory after their first read,
//! under a byte cap, evicted by CLOCK (second chance), an approximation of
//! least-recently-used that costs a hit no reordering.
//!
//! The store has two: data blocks of point reads (`Options::block_cache_bytes`)
//! and filter partitions (`Options::filter_cache_bytes`, see
//! `sstable/partitions.rs`). Without them every block a read needs is a
//! `pread` (from the OS page cache at best) plus a checksum; with them, a
//! block read once is served from memory, already verified, while it stays
//! in the cache.
//!
//! What goes in: blocks read by point lookups (`get`, `multi_get`). Scans
//! and compactions read blocks without caching them, so one scan cannot
//! evict the working set of the point reads (RocksDB's `fill_cache = false`
//! for iterators, made the rule here). Whole filters and index blocks are not
//! cached: they are decoded and kept whole per table.
//!
//! # CLOCK
//!
//! Blocks sit in slots; each has a *referenced* bit, set by every hit. To
//! make room, a hand sweeps the slots: a referenced block loses its bit and
//! stays (its second chance), an unreferenced one is evicted. A block used
//! since the hand last passed survives a sweep, like LRU's recently used; a
//! hit is a map lookup and a bit set, where exact LRU (the first version of
//! this cache) moved the block to the front of an ordered map, and that cost
//! more than the filter probe a cached partition serves.
//!
//! Keys are `(table number, block offset)`: table numbers are never reused,
//! so a block of a deleted table can never be mistaken for a live one; it
//! ages out.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// A block's key: table number and offset in the table file.
type BlockKey = (u64, u64);

/// A cached data block's bytes. A `Vec` behind the `Arc`, not `Arc<[u8]>`,
/// so that caching a block read into a `Vec` moves it instead of copying it.
pub(crate) type CachedBlock = Arc<Vec<u8>>;

/// What a cached value costs against the cap, in bytes.
pub(crate) trait Charged {
    fn charge(&self) -> usize;
}

impl Charged for Vec<u8> {
    fn charge(&self) -> usize {
        self.len()
    }
}

/// A decoded filter partition: its filter's size.
impl Charged for amq::AnyFilter {
    fn charge(&self) -> usize {
        amq::Filter::size_in_bytes(self)
    }
}

/// Hashes a [`BlockKey`]: its two integers mixed by multiplication. The
/// keys are not chosen by an adversary (table numbers and offsets come from
/// the store), so SipHash's protection buys nothing and costs a hit most of
/// its time.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        // One round of a multiply-xorshift mix per word (the constant is
        // the golden ratio's, as in Fibonacci hashing).
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

#[derive(Debug)]
struct Slot<V> {
    key: BlockKey,
    block: Arc<V>,
    referenced: bool,
}

#[derive(Debug)]
struct Clock<V> {
    /// Key → index in `slots`.
    map: HashMap<BlockKey, usize, BuildHasherDefault<KeyHasher>>,
    /// `None` for a slot freed by eviction, reused by the next insert.
    slots: Vec<Option<Slot<V>>>,
    free: Vec<usize>,
    hand: usize,
    bytes: usize,
}

impl<V> Default for Clock<V> {
    fn default() -> Self {
        Clock {
            map: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            hand: 0,
            bytes: 0,
        }
    }
}

impl<V: Charged> Clock<V> {
    /// Evicts the block in slot `i`.
    fn evict(&mut self, i: usize) {
        if let Some(s) = self.slots[i].take() {
            self.map.remove(&s.key);
            self.bytes -= s.block.charge();
            self.free.push(i);
        }
    }

    /// Sweeps the hand until a block is evicted. Ends within two turns:
    /// the first clears every referenced bit it passes.
    fn evict_one(&mut self) {
        for _ in 0..2 * self.slots.len() {
            let i = self.hand;
            self.hand = if i + 1 == self.slots.len() { 0 } else { i + 1 };
            match &mut self.slots[i] {
                Some(s) if s.referenced => s.referenced = false,
                Some(_) => return self.evict(i),
                None => {}
            }
        }
    }
}

/// Verified blocks (or what was decoded from them) under a byte cap (see the
/// module docs): `Vec<u8>` for data blocks, [`amq::AnyFilter`] for filter
/// partitions.
#[derive(Debug)]
pub(crate) struct BlockCache<V = Vec<u8>> {
    capacity: usize,
    clock: Mutex<Clock<V>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<V: Charged> BlockCache<V> {
    /// A cache of at most `capacity` bytes of blocks.
    pub(crate) fn new(capacity: usize) -> Self {
        BlockCache {
            capacity,
            clock: Mutex::new(Clock::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Clock<V>> {
        // A panic while holding the lock leaves a consistent cache (every
        // update below is completed before anything can panic), so a
        // poisoned lock is still usable.
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The block at `offset` of table `table`, if cached (and marks it
    /// referenced). Counts a hit or a miss.
    pub(crate) fn get(&self, table: u64, offset: u64) -> Option<Arc<V>> {
        let found = {
            let mut clock = self.lock();
            let clock = &mut *clock;
            clock.map.get(&(table, offset)).and_then(|&i| {
                let s = clock.slots[i].as_mut()?;
                s.referenced = true;
                Some(Arc::clone(&s.block))
            })
        };
        match found {
            Some(_) => self.hits.fetch_add(1, Relaxed),
            None => self.misses.fetch_add(1, Relaxed),
        };
        found
    }

    /// `f(block)` for the block at `offset` of table `table`, if cached
    /// (and marks it referenced), run under the cache's lock: no reference
    /// count is taken, so a short read of a cached block (a filter
    /// partition's probe) costs one lock and one map lookup. Counts a hit
    /// or a miss.
    pub(crate) fn with<R>(&self, table: u64, offset: u64, f: impl FnOnce(&V) -> R) -> Option<R> {
        let found = {
            let mut clock = self.lock();
            let clock = &mut *clock;
            match clock.map.get(&(table, offset)) {
                Some(&i) => clock.slots[i].as_mut().map(|s| {
                    s.referenced = true;
                    f(&s.block)
                }),
                None => None,
            }
        };
        match found {
            Some(_) => self.hits.fetch_add(1, Relaxed),
            None => self.misses.fetch_add(1, Relaxed),
        };
        found
    }

    /// Caches `block`, evicting blocks until it fits. A block larger than
    /// the whole cap is not cached.
    pub(crate) fn insert(&self, table: u64, offset: u64, block: Arc<V>) {
        let charge = block.charge();
        if charge > self.capacity {
            return;
        }
        let mut clock = self.lock();
        if let Some(&i) = clock.map.get(&(table, offset)) {
            clock.evict(i);
        }
        while clock.bytes + charge > self.capacity && !clock.map.is_empty() {
            clock.evict_one();
        }
        clock.bytes += charge;
        // A new block starts unreferenced: it must be hit once before the
        // hand passes to survive, so blocks read once and never again go
        // first.
        let slot = Some(Slot {
            key: (table, offset),
            block,
            referenced: false,
        });
        let i = match clock.free.pop() {
            Some(i) => {
                clock.slots[i] = slot;
                i
            }
            None => {
                clock.slots.push(slot);
                clock.slots.len() - 1
            }
        };
        clock.map.insert((table, offset), i);
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

    fn block(len: usize, fill: u8) -> CachedBlock {
        Arc::new(vec![fill; len])
    }

    #[test]
    fn a_referenced_block_gets_a_second_chance() {
        let c: BlockCache = BlockCache::new(300);
        c.insert(1, 0, block(100, 1));
        c.insert(1, 100, block(100, 2));
        c.insert(2, 0, block(100, 3));
        // Use (1, 0): the hand passes over it, and (1, 100), never used
        // since it was cached, goes first.
        assert_eq!(c.get(1, 0).unwrap()[0], 1);
        c.insert(3, 0, block(100, 4));
        assert!(c.get(1, 100).is_none());
        assert_eq!(c.get(1, 0).unwrap()[0], 1);
        assert_eq!(c.get(2, 0).unwrap()[0], 3);
        assert_eq!(c.get(3, 0).unwrap()[0], 4);
        let (hits, misses, bytes) = c.counters();
        assert_eq!((hits, misses, bytes), (4, 1, 300));
        // Every block referenced now: the hand clears them all in one turn
        // and evicts in its second; the cap holds.
        c.insert(4, 0, block(150, 5));
        assert_eq!(c.counters().2, 250);
        assert_eq!(c.get(4, 0).unwrap()[0], 5);
    }

    #[test]
    fn the_cap_holds_and_the_slots_stay_consistent_for_any_sequence() {
        let c: BlockCache = BlockCache::new(1_000);
        let mut x = 7u64;
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let len = (x >> 40) as usize % 400 + 1;
            c.insert(i % 37, (x >> 20) % 11, block(len, i as u8));
            if let Some(b) = c.get((x >> 8) % 37, (x >> 30) % 11) {
                assert!(!b.is_empty());
            }
            assert!(c.counters().2 <= 1_000);
        }
        // Every cached block's bytes are counted once, and the map and the
        // slots agree.
        let clock = c.lock();
        let live: Vec<&Slot<Vec<u8>>> = clock.slots.iter().flatten().collect();
        assert_eq!(live.iter().map(|s| s.block.len()).sum::<usize>(), clock.bytes);
        assert_eq!(live.len(), clock.map.len());
        for s in live {
            assert!(clock.slots[clock.map[&s.key]]
                .as_ref()
                .is_some_and(|t| t.key == s.key));
        }
        assert_eq!(clock.free.len() + clock.map.len(), clock.slots.len());
    }

    #[test]
    fn a_block_over_the_cap_is_not_cached_and_replacing_keeps_the_count() {
        let c: BlockCache = BlockCache::new(100);
        c.insert(1, 0, block(101, 0));
        assert!(c.get(1, 0).is_none());
        c.insert(1, 0, block(60, 1));
        c.insert(1, 0, block(40, 2));
        assert_eq!(c.counters().2, 40);
        assert_eq!(c.get(1, 0).unwrap()[0], 2);
        // `with` sees the same block, counted alike.
        assert_eq!(c.with(1, 0, |b| b.len()), Some(40));
        assert_eq!(c.with(9, 9, |b| b.len()), None);
        let (hits, misses, _) = c.counters();
        assert_eq!((hits, misses), (2, 2));
    }

    #[test]
    fn a_hot_set_that_fits_stays_while_a_stream_of_one_time_blocks_passes() {
        let c: BlockCache = BlockCache::new(1_000);
        // Ten hot blocks of 50 bytes, each used between every two
        // one-time blocks.
        for i in 0..10 {
            c.insert(1, i, block(50, 1));
        }
        for j in 0..1_000u64 {
            c.insert(2, j, block(50, 2));
            assert!(c.get(1, j % 10).is_some(), "hot block {} evicted at {j}", j % 10);
        }
    }
}
