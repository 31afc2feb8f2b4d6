//! [`AtomicBlockedBloom`]: the blocked filter with `&self` inserts, for
//! targets with 64-bit atomics (`target_has_atomic = "64"`; the rest of the
//! crate builds without them).
//!
//! **The key count.** Every insert also counts its key. One shared counter
//! would be one cache line that every inserting thread writes, and, stored
//! next to the fields every insert reads, it would also evict those from the
//! other threads' caches (false sharing). So the count is split over
//! [`STRIPES`] counters, each on its own pair of cache lines (the x86
//! adjacent-line prefetcher moves lines in pairs), after the read-mostly
//! fields; an insert adds to the stripe its hash picks, so two threads
//! rarely write the same line (`benches/examples/atomic_inserts.rs`
//! measures the scaling; `docs/results-amq.md` has the figures).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::batch::QUERY_DEPTH;
use super::probe::{block_matches, block_of, probe_mask, Block, BLOCK_BITS, WORDS};
use super::{frame, size, BlockedBloom, Kernel};
use crate::bloom::{count_as_usize, max_keys};
use crate::prefetch::prefetch;
use crate::zeroed::zeroed_vec;
use crate::{hash, math, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash};

/// A [`Block`] with atomic words.
#[derive(Debug, Default, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub(crate) struct AtomicBlock([AtomicU64; WORDS]);

/// Number of key-count stripes (a power of two).
const STRIPES: usize = 8;

/// One key-count stripe, alone on its two cache lines.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Stripe(AtomicU64);

/// A [`BlockedBloom`] that many threads can fill at once: `insert` takes
/// `&self` and sets bits with relaxed atomic `fetch_or`.
///
/// Setting a bit is idempotent and commutative, so inserts need no ordering
/// between them, only that every `fetch_or` lands, which atomicity
/// guarantees. Queries that run concurrently with inserts see each insert
/// either whole or partly; once every insert has returned (and the threads
/// are joined), every inserted key is found. Serializes to the same bytes as
/// [`BlockedBloom`]. Only on targets with 64-bit atomics.
///
/// **Snapshots.** [`to_bytes`](Filter::to_bytes),
/// [`num_keys`](Filter::num_keys) and [`into_blocked`](Self::into_blocked)
/// read each word (and each count stripe) atomically, but not all at one
/// instant. Every insert that *happens before* the call (its thread was
/// joined, or handed over through a lock or channel) is captured whole. An
/// insert running concurrently may be captured in part, some of its bits
/// and not others, so the snapshot may not contain that key, and the count
/// may or may not include it. Take snapshots after the inserts you need in
/// them have finished.
///
/// ```
/// use amq::{AtomicBlockedBloom, Filter, FilterSizing};
/// let f = AtomicBlockedBloom::new(4_000, FilterSizing::BitsPerKey(10.0)).unwrap();
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let f = &f;
///         s.spawn(move || {
///             for i in 0..1_000u64 {
///                 f.insert(&(t * 1_000 + i).to_le_bytes()).unwrap();
///             }
///         });
///     }
/// });
/// // The threads are joined: the count and the bits are complete.
/// assert_eq!(f.num_keys(), 4_000);
/// assert!((0..4_000u64).all(|i| f.contains(&i.to_le_bytes())));
/// ```
#[derive(Debug)]
pub struct AtomicBlockedBloom {
    blocks: Vec<AtomicBlock>,
    num_probes: u32,
    /// The key count, split so that concurrent inserts rarely share a line.
    counts: [Stripe; STRIPES],
}

impl AtomicBlockedBloom {
    /// An empty filter sized as [`BlockedBloom::new`] sizes it.
    ///
    /// ```
    /// use amq::{AtomicBlockedBloom, FilterSizing};
    /// let f = AtomicBlockedBloom::new(1_000, FilterSizing::BitsPerKey(10.0))?;
    /// assert_eq!(f.num_probes(), 6);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        let (blocks, num_probes) = size(expected_keys, sizing)?;
        Ok(AtomicBlockedBloom {
            blocks: zeroed_vec(blocks as usize)?,
            num_probes,
            counts: Default::default(),
        })
    }

    /// Adds the key with this hash; callable from many threads at once.
    /// Never fails (a `Result` like every insert of the crate;
    /// [`check_and_insert_hash`](Self::check_and_insert_hash) is the same
    /// insert without one).
    ///
    /// ```
    /// use amq::{hash_u64, AtomicBlockedBloom, Filter, FilterSizing};
    /// let f = AtomicBlockedBloom::new(1_000, FilterSizing::BitsPerKey(10.0))?;
    /// f.insert_hash(hash_u64(7))?;
    /// assert!(f.contains_hash(hash_u64(7)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    #[inline]
    pub fn insert_hash(&self, hash: KeyHash) -> Result<(), Error> {
        self.add(hash.get());
        Ok(())
    }

    /// Adds `key` (hashed once); callable from many threads at once. Never
    /// fails.
    ///
    /// ```
    /// use amq::{AtomicBlockedBloom, Filter, FilterSizing};
    /// let f = AtomicBlockedBloom::new(1_000, FilterSizing::BitsPerKey(10.0))?;
    /// f.insert(b"k")?;
    /// assert!(f.contains(b"k"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    #[inline]
    pub fn insert(&self, key: &[u8]) -> Result<(), Error> {
        self.insert_hash(crate::hash_key(key))
    }

    /// Inserts the key with this hash and says whether it was (probably)
    /// there already: `true` iff every probe bit was already set, so
    /// `false` means the key is certainly new. Callable from many threads
    /// at once. For deduplication: skip a key when this is `true`; a new key
    /// is skipped with probability about
    /// [`expected_fpr`](Filter::expected_fpr).
    ///
    /// One block, one atomic `fetch_or` per word the key's bits fall in,
    /// whose previous value says which bits were set: not a query and then
    /// an insert. Single-threaded, the answer is what
    /// [`contains_hash`](Filter::contains_hash) said before the call, and
    /// the filter afterwards is what [`insert_hash`](Self::insert_hash)
    /// leaves (the key counted in [`num_keys`](Filter::num_keys) either
    /// way). Never fails, so it returns no `Result`. fastbloom's `insert`
    /// returns the same answer; the bloomfilter crate calls it
    /// `check_and_set`.
    ///
    /// **Concurrent calls.** An insert of the key that *happens before*
    /// this call (its thread joined, or handed over through a lock or a
    /// channel) is always seen: the answer is `true`. Two calls with the
    /// same new key racing each other may both answer `false`, since the
    /// key's bits span several words, each set by whichever call reaches it
    /// first: a deduplicating caller that needs exactly one winner must
    /// serialize the calls for one key.
    ///
    /// ```
    /// use amq::{AtomicBlockedBloom, FilterSizing};
    /// let seen = AtomicBlockedBloom::new(4_000, FilterSizing::BitsPerKey(10.0))?;
    /// let fresh = std::thread::scope(|s| {
    ///     let workers: Vec<_> = (0..4u64)
    ///         .map(|t| {
    ///             let seen = &seen;
    ///             // Each thread its own 1,000 ids, every id twice in a row.
    ///             let ids = (0..2_000u64).map(move |i| t * 1_000 + i / 2);
    ///             s.spawn(move || ids.filter(|id| !seen.check_and_insert(&id.to_le_bytes())).count())
    ///         })
    ///         .collect();
    ///     workers.into_iter().map(|w| w.join().unwrap_or(0)).sum::<usize>()
    /// });
    /// // 4,000 distinct ids: each second copy is seen, and a few first
    /// // copies too (false positives).
    /// assert!((3_900..=4_000).contains(&fresh), "{fresh}");
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert_hash(&self, hash: KeyHash) -> bool {
        self.add(hash.get())
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)): inserts it and says
    /// whether it was (probably) there already.
    ///
    /// ```
    /// use amq::{AtomicBlockedBloom, FilterSizing};
    /// let seen = AtomicBlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let lines = ["a", "b", "a", "c", "b"];
    /// let unique: Vec<&str> = lines.into_iter().filter(|l| !seen.check_and_insert(l.as_bytes())).collect();
    /// assert_eq!(unique, ["a", "b", "c"]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert(&self, key: &[u8]) -> bool {
        self.check_and_insert_hash(crate::hash_key(key))
    }

    /// Sets the probe bits of `hash` and counts the key; whether every one
    /// of them was set before (from the previous values `fetch_or`
    /// returns: a bit the key probes twice is in its mask once).
    #[inline]
    fn add(&self, hash: u64) -> bool {
        let mask = probe_mask(hash, self.num_probes);
        let block = &self.blocks[block_of(hash, self.blocks.len() as u32)].0;
        let mut missing = 0;
        for w in 0..WORDS {
            if mask[w] != 0 {
                let before = block[w].fetch_or(mask[w], Ordering::Relaxed);
                missing |= mask[w] & !before;
            }
        }
        // A stripe would need 2^63 inserts to wrap; the sum saturates.
        self.counts[hash as usize & (STRIPES - 1)]
            .0
            .fetch_add(1, Ordering::Relaxed);
        missing == 0
    }

    #[inline(always)]
    fn matches(block: &AtomicBlock, hash: u64, num_probes: u32) -> bool {
        let words = core::array::from_fn(|w| block.0[w].load(Ordering::Relaxed));
        block_matches(&words, hash, num_probes)
    }

    /// Number of probes `k` per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// The key count: the stripes' sum, saturating like [`BlockedBloom`]'s.
    fn count(&self) -> u64 {
        let sum = self
            .counts
            .iter()
            .fold(0u64, |acc, c| acc.saturating_add(c.0.load(Ordering::Relaxed)));
        sum.min(max_keys(self.blocks.len() as u64 * BLOCK_BITS as u64))
    }

    fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks
            .iter()
            .flat_map(|b| b.0.iter().map(|w| w.load(Ordering::Relaxed)))
    }

    /// The plain filter with the same bits, for single-threaded queries.
    pub fn into_blocked(self) -> BlockedBloom {
        let num_keys = self.count();
        BlockedBloom {
            blocks: self
                .blocks
                .into_iter()
                .map(|b| Block(b.0.map(AtomicU64::into_inner)))
                .collect(),
            num_probes: self.num_probes,
            num_keys,
            kernel: Kernel::detect(self.num_probes),
        }
    }
}

impl From<BlockedBloom> for AtomicBlockedBloom {
    fn from(f: BlockedBloom) -> Self {
        let counts: [Stripe; STRIPES] = Default::default();
        counts[0].0.store(f.num_keys, Ordering::Relaxed);
        AtomicBlockedBloom {
            blocks: f
                .blocks
                .into_iter()
                .map(|b| AtomicBlock(b.0.map(AtomicU64::new)))
                .collect(),
            num_probes: f.num_probes,
            counts,
        }
    }
}

impl Filter for AtomicBlockedBloom {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let hash = hash.get();
        Self::matches(
            &self.blocks[block_of(hash, self.blocks.len() as u32)],
            hash,
            self.num_probes,
        )
    }

    /// The pipeline of [`BlockedBloom`], with the portable probe.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let n = self.blocks.len() as u32;
        crate::prefetch::pipelined::<_, QUERY_DEPTH>(
            hash::raw(hashes),
            out,
            |h| {
                let i = block_of(h, n);
                prefetch(&self.blocks[i]);
                (i, h)
            },
            |(i, h)| Self::matches(&self.blocks[i], h, self.num_probes),
        );
    }

    fn size_in_bytes(&self) -> usize {
        self.blocks.capacity() * 64
    }
    fn num_keys(&self) -> usize {
        count_as_usize(self.count())
    }
    fn expected_fpr(&self) -> f64 {
        let bits = self.blocks.len() as u64 * BLOCK_BITS as u64;
        math::blocked_bloom_fpr(bits, BLOCK_BITS, self.num_probes, self.count())
    }
    /// Reported as [`FilterKind::BlockedBloom`]: the bytes are the same.
    fn kind(&self) -> FilterKind {
        FilterKind::BlockedBloom
    }
    /// A snapshot: see the type's docs for what concurrent inserts do to it.
    fn to_bytes(&self) -> Vec<u8> {
        frame::encode(self.num_probes, self.count(), self.words(), self.blocks.len())
    }
}

/// For code generic over [`Insert`]; through `&mut self`, so without
/// concurrency. Never fails.
impl Insert for AtomicBlockedBloom {
    #[inline]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.add(hash.get());
        Ok(())
    }
}

impl FromBytes for AtomicBlockedBloom {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        BlockedBloom::from_bytes(bytes).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    #[test]
    fn layout_keeps_counts_off_the_read_line() {
        assert_eq!(core::mem::align_of::<AtomicBlock>(), 64);
        assert_eq!(core::mem::size_of::<Stripe>(), 128);
        let f = AtomicBlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0)).unwrap();
        let base = &f as *const _ as usize;
        let read = [&f.blocks as *const _ as usize, &f.num_probes as *const _ as usize];
        for c in &f.counts {
            let at = c as *const _ as usize;
            assert_eq!(at % 128, 0);
            for r in read {
                assert_ne!(at / 128, r / 128, "a count shares a line pair with a read field");
            }
        }
        assert!(f.counts.iter().all(|c| (c as *const _ as usize) >= base));
    }

    #[test]
    fn atomic_and_plain_agree_bit_for_bit() {
        let mut plain = BlockedBloom::new(5000, FilterSizing::BitsPerKey(8.0)).unwrap();
        let mut atomic = AtomicBlockedBloom::new(5000, FilterSizing::BitsPerKey(8.0)).unwrap();
        let h = |i: u64| KeyHash::from_well_mixed(remix(i, 3));
        for i in 0..5000u64 {
            plain.insert_hash(h(i)).unwrap();
            if i % 2 == 0 {
                atomic.insert_hash(h(i)).unwrap();
            } else {
                Insert::insert_hash(&mut atomic, h(i)).unwrap();
            }
        }
        assert_eq!(atomic.num_keys(), 5000);
        assert_eq!(atomic.to_bytes(), plain.to_bytes());
        let hashes: Vec<KeyHash> = (0..20_000u64).map(h).collect();
        let mut out = alloc::vec![false; hashes.len()];
        atomic.contains_hashes(&hashes, &mut out);
        for (&h, &o) in hashes.iter().zip(&out) {
            assert_eq!(o, atomic.contains_hash(h));
            assert_eq!(o, plain.contains_hash(h));
        }
        assert_eq!(atomic.into_blocked(), plain);
    }

    #[test]
    fn count_survives_the_round_trip() {
        let f = AtomicBlockedBloom::new(100, FilterSizing::BitsPerKey(10.0)).unwrap();
        for i in 0..77u64 {
            f.insert_hash(KeyHash::from_well_mixed(remix(i, 8))).unwrap();
        }
        let back = AtomicBlockedBloom::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(back.num_keys(), 77);
        assert_eq!(back.to_bytes(), f.to_bytes());
    }
}
