//! The cache-blocked Bloom filter: every probe of a key lands in one 64-byte,
//! 64-byte-aligned block, so a query costs one cache miss instead of `k`.
//!
//! Design (Putze, Sanders & Singler 2007; the layout RocksDB's
//! `FastLocalBloomImpl` made its default):
//!
//! * the high 32 bits of the key hash choose the block by multiply-shift;
//! * the low 32 bits drive the probes: each probe takes the top 9 bits of a
//!   32-bit state as a bit position in the 512-bit block, then multiplies the
//!   state by `0x9e3779b9` (2^32 / golden ratio) to scramble it for the next.
//!
//! The two halves are independent bits of the hash, so the block choice and
//! the in-block pattern are uncorrelated.
//!
//! **FPR.** Keys per block are Poisson distributed, and overloaded blocks
//! cost more than underloaded ones save, so a blocked filter has a higher FPR
//! than a standard one of equal size ([`math::blocked_bloom_fpr`]): at 10
//! bits/key, 0.957% instead of 0.82%. The best `k` is also lower than the
//! standard `m/n · ln 2`: see [`probes_for_bits_per_key`] and its table.
//!
//! **Queries** are branch-free: each probe's state is one multiply of the low
//! 32 bits by a precomputed power of the multiplier (so the `k` multiplies run
//! in parallel rather than as a chain), and the probed bits are ANDed
//! together, so a miss costs no branch misprediction.
//! On x86-64 the filter picks its query kernel once, when it is made
//! (`blocked/kernel.rs`): AVX-512F (`blocked/avx512.rs`, sixteen probes at
//! once), else AVX2 (`blocked/avx2.rs`, eight at once), else the portable
//! kernel, which is every SIMD kernel's oracle in the tests; elsewhere the
//! portable kernel runs, inlined.
//! [`contains_hashes`](Filter::contains_hashes) first computes and prefetches the
//! blocks of a whole batch, then probes, which overlaps the cache misses.
//!
//! The module's files: `probe.rs` (the block and bits a hash picks: the
//! portable kernel), `batch.rs` (whole queries and inserts, single and
//! batched), `kernel.rs` with `avx2.rs` and `avx512.rs` (the SIMD kernels
//! and the choice among them), `sizing.rs`, `frame.rs` (the byte format),
//! `view.rs` (queries on stored bytes), `prepared.rs` ([`PreparedHash`]) and
//! `atomic.rs` ([`AtomicBlockedBloom`]).
//!
//! [`AtomicBlockedBloom`] is the same filter with `&self` inserts through
//! relaxed atomic `fetch_or`, so many threads can fill one filter: setting a
//! bit is idempotent and commutative, so no ordering between inserts is
//! needed, only that every `fetch_or` lands (which atomicity guarantees).

use alloc::vec::Vec;

use crate::bloom::{count_as_usize, max_keys};
use crate::cost::{CostModel, Params, QueryCost, Shape, Traits};
use crate::format::{self, Frame};
use crate::prefetch::prefetch;
use crate::zeroed::zeroed_vec;
use crate::{hash, math, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash};

#[macro_use]
mod batch;
#[cfg(target_has_atomic = "64")]
mod atomic;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx512;
mod frame;
mod kernel;
mod prepared;
mod probe;
mod sizing;
mod streamed;
mod view;

#[cfg(target_has_atomic = "64")]
pub use atomic::AtomicBlockedBloom;
pub use prepared::PreparedHash;
pub use probe::{BlockedBlocks, BlockedProbe, BLOCK_BITS};
pub use sizing::probes_for_bits_per_key;
pub use view::BlockedBloomView;

pub(crate) use probe::{Block, WORDS};
pub(crate) use sizing::size;

use kernel::Kernel;
use probe::{block_of, MAX_PROBES};

/// A cache-blocked Bloom filter: all probes of a key in one 64-byte block.
///
/// ```
/// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
/// let n = 100_000;
/// let mut f = BlockedBloom::new(n, FilterSizing::BitsPerKey(10.0))?;
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes())?;
/// }
/// assert!((0..n as u64).all(|i| f.contains(&i.to_le_bytes())));
/// assert!((f.bits_per_key() - 10.0).abs() < 0.01);
/// assert_eq!(f.num_probes(), 6);
/// let fp = (n as u64..n as u64 + 100_000)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// assert!(fp < 1_100, "{fp} false positives"); // about 0.96%
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct BlockedBloom {
    blocks: Vec<Block>,
    num_probes: u32,
    num_keys: u64,
    /// Chosen for this CPU at construction; never changes an answer, so it
    /// is not part of equality or of the bytes.
    kernel: Kernel,
}

impl PartialEq for BlockedBloom {
    fn eq(&self, other: &Self) -> bool {
        self.blocks == other.blocks && self.num_probes == other.num_probes && self.num_keys == other.num_keys
    }
}

impl Eq for BlockedBloom {}

impl BlockedBloom {
    /// An empty filter sized for `expected_keys` keys.
    ///
    /// [`FilterSizing::Fpr`]: the space the blocked design needs for that
    /// FPR (slightly more than a standard filter's). [`FilterSizing::BitsPerKey`]:
    /// `expected_keys · bits_per_key` bits rounded up to whole 512-bit
    /// blocks. Either way with the measured-best probe count
    /// ([`probes_for_bits_per_key`]). More keys than `expected_keys` can be
    /// inserted; the FPR then rises past the target.
    ///
    /// Errors if `expected_keys` is 0, the FPR is not in `(0, 1)`, the
    /// sizing needs more than 1000 bits per key, or the size overflows or
    /// cannot be allocated.
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing};
    /// let f = BlockedBloom::new(1_000, FilterSizing::BitsPerKey(10.0))?;
    /// assert_eq!((f.num_blocks(), f.num_probes()), (20, 6));
    /// assert!(BlockedBloom::new(1_000, FilterSizing::Fpr(1.5)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        let (blocks, num_probes) = size(expected_keys, sizing)?;
        Ok(BlockedBloom {
            blocks: zeroed_vec(blocks as usize)?,
            num_probes,
            num_keys: 0,
            kernel: Kernel::detect(num_probes),
        })
    }

    /// An empty filter of exactly `num_blocks` 512-bit blocks (at least one)
    /// and `num_probes` probes per key (`1..=24`), for callers who measured
    /// their own optimum, or who need filters of one shape to
    /// [`union`](Self::union).
    ///
    /// ```
    /// let f = amq::BlockedBloom::with_shape(20, 5)?;
    /// assert_eq!((f.num_blocks(), f.num_probes()), (20, 5));
    /// assert!(amq::BlockedBloom::with_shape(20, 0).is_err());
    /// assert!(amq::BlockedBloom::with_shape(0, 5).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn with_shape(num_blocks: usize, num_probes: u32) -> Result<Self, Error> {
        if !(1..=MAX_PROBES as u32).contains(&num_probes) {
            return Err(crate::error::invalid("num_probes", "must be in 1..=24"));
        }
        if num_blocks == 0 {
            return Err(crate::error::invalid("num_blocks", "must be at least 1"));
        }
        if num_blocks > u32::MAX as usize {
            return Err(Error::TooLarge);
        }
        Ok(BlockedBloom {
            blocks: zeroed_vec(num_blocks)?,
            num_probes,
            num_keys: 0,
            kernel: Kernel::detect(num_probes),
        })
    }

    /// Number of 512-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Number of probes `k` per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// The query kernel this filter chose for the running CPU when it was
    /// made: `"avx512"`, `"avx2"` or `"portable"`. All answer identically;
    /// this says which speed to expect.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, FilterSizing};
    /// let f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
    /// assert!(["avx512", "avx2", "portable"].contains(&f.query_kernel()));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// [`BlockedProbe::new`] for this filter's probe count.
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing};
    /// let f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
    /// assert_eq!(f.prepare(amq::hash_key(b"k")).num_probes(), f.num_probes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn prepare(&self, hash: KeyHash) -> BlockedProbe {
        BlockedProbe::new(hash, self.num_probes)
    }

    /// `contains_hash(probe.hash())`, from the prepared mask: one block
    /// load and a compare, the same answer as every query kernel (a probe
    /// prepared for another probe count is prepared again for this one).
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
    /// let mut f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
    /// f.insert(b"k")?;
    /// assert!(f.contains_probe(&f.prepare(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn contains_probe(&self, probe: &BlockedProbe) -> bool {
        self.blocks().contains_probe(probe)
    }

    /// `contains_hash(key.hash())`, from the probe mask `key` has prepared
    /// (preparing it for this filter's probe count unless it already was):
    /// one block load and a compare. See [`PreparedHash`].
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing, Insert, PreparedHash};
    /// let mut f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
    /// f.insert(b"k")?;
    /// assert!(f.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        self.blocks().contains_prepared(key)
    }

    /// The filter's blocks and probe count, borrowed: all a prepared probe
    /// reads, in three words a caller can keep beside its own data.
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing};
    /// let f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
    /// assert_eq!(f.blocks().num_probes(), f.num_probes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn blocks(&self) -> BlockedBlocks<'_> {
        BlockedBlocks {
            blocks: &self.blocks,
            num_probes: self.num_probes,
        }
    }

    /// ORs `other` into `self` (same block count and probes, else
    /// [`Error::Incompatible`] and `self` unchanged).
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, Insert};
    /// let mut a = BlockedBloom::with_shape(16, 6)?;
    /// let mut b = BlockedBloom::with_shape(16, 6)?;
    /// a.insert(b"x")?;
    /// b.insert(b"y")?;
    /// a.union(&b)?;
    /// assert!(a.contains(b"x") && a.contains(b"y"));
    /// assert!(a.union(&BlockedBloom::with_shape(32, 6)?).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn union(&mut self, other: &BlockedBloom) -> Result<(), Error> {
        if self.blocks.len() != other.blocks.len() || self.num_probes != other.num_probes {
            return Err(Error::Incompatible);
        }
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for w in 0..WORDS {
                a.0[w] |= b.0[w];
            }
        }
        self.num_keys = self.num_keys.saturating_add(other.num_keys).min(self.max_keys());
        Ok(())
    }

    /// Inserts the key with this hash and says whether it was (probably)
    /// there already: `true` iff every probe bit was already set, so
    /// `false` means the key is certainly new. For deduplication: skip a
    /// key when this is `true`; a new key is skipped with probability about
    /// [`expected_fpr`](Filter::expected_fpr).
    ///
    /// One block, one pass over its probe bits, each tested and set
    /// together, not a query and then an insert. The answer is what
    /// [`contains_hash`](Filter::contains_hash) said before the call, and
    /// the filter afterwards is what [`insert_hash`](Insert::insert_hash)
    /// leaves (the key counted in [`num_keys`](Filter::num_keys) either
    /// way). Never fails, so it returns no `Result`: it is also the
    /// filter's infallible insert. fastbloom's `insert` returns the same
    /// answer; the bloomfilter crate calls it `check_and_set`.
    ///
    /// ```
    /// use amq::{hash_u64, BlockedBloom, FilterSizing};
    /// let mut seen = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let ids = [7u64, 8, 7, 9, 8];
    /// let new: Vec<u64> = ids.into_iter().filter(|&id| !seen.check_and_insert_hash(hash_u64(id))).collect();
    /// assert_eq!(new, [7, 8, 9]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert_hash(&mut self, hash: KeyHash) -> bool {
        let present = batch::test_and_insert(&mut self.blocks, hash.get(), self.num_probes);
        self.num_keys = self.num_keys.saturating_add(1).min(self.max_keys());
        present
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)): inserts it and says
    /// whether it was (probably) there already.
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing};
    /// let mut seen = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let lines = ["a", "b", "a", "c", "b"];
    /// let unique: Vec<&str> = lines.into_iter().filter(|l| !seen.check_and_insert(l.as_bytes())).collect();
    /// assert_eq!(unique, ["a", "b", "c"]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert(&mut self, key: &[u8]) -> bool {
        self.check_and_insert_hash(crate::hash_key(key))
    }

    /// The key count's saturation point ([`max_keys`]).
    #[inline(always)]
    fn max_keys(&self) -> u64 {
        max_keys(self.blocks.len() as u64 * BLOCK_BITS as u64)
    }

    /// Fraction of bits set.
    ///
    /// ```
    /// use amq::{BlockedBloom, Insert};
    /// let mut f = BlockedBloom::with_shape(1, 6)?;
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// f.insert(b"k")?;
    /// assert!(f.fill_ratio() > 0.0 && f.fill_ratio() <= 6.0 / 512.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self
            .blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| w.count_ones() as u64)
            .sum();
        ones as f64 / (self.blocks.len() as f64 * BLOCK_BITS as f64)
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let parts = frame::parse_frame(frame)?;
        let mut blocks: Vec<Block> = zeroed_vec(parts.payload.len() / probe::BLOCK_BYTES)?;
        for (block, chunk) in blocks
            .iter_mut()
            .zip(parts.payload.chunks_exact(probe::BLOCK_BYTES))
        {
            for (w, c) in block.0.iter_mut().zip(chunk.chunks_exact(8)) {
                *w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
            }
        }
        Ok(BlockedBloom {
            blocks,
            num_probes: parts.num_probes,
            num_keys: parts.num_keys,
            kernel: Kernel::detect(parts.num_probes),
        })
    }
}

impl Filter for BlockedBloom {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.kernel.contains(&self.blocks, hash.get(), self.num_probes)
    }

    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        self.kernel
            .contains_many(&self.blocks, self.num_probes, hash::raw(hashes), out);
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        if let Some(block) = self.blocks.get(block_of(hash.get(), self.blocks.len() as u32)) {
            prefetch(block);
        }
    }

    fn size_in_bytes(&self) -> usize {
        self.blocks.len() * 64
    }
    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }
    fn expected_fpr(&self) -> f64 {
        let bits = self.blocks.len() as u64 * BLOCK_BITS as u64;
        math::blocked_bloom_fpr(bits, BLOCK_BITS, self.num_probes, self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::BlockedBloom
    }
    fn to_bytes(&self) -> Vec<u8> {
        let words = self.blocks.iter().flat_map(|b| b.0);
        frame::encode(self.num_probes, self.num_keys, words, self.blocks.len())
    }
}

impl CostModel for BlockedBloom {
    const TRAITS: Traits = Traits {
        concurrent: true,
        cost: QueryCost::Low,
        reason: "one cache line per query, the fastest; takes inserts for ever",
        ..crate::bloom::BLOOM_TRAITS
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let (blocks, probes) = size(n, sizing)?;
        let bits = blocks as u64 * BLOCK_BITS as u64;
        Ok(Shape {
            bytes: bits / 8,
            fpr: math::blocked_bloom_fpr(bits, BLOCK_BITS, probes, n as u64),
            fpr_floor: 0.0,
            params: Params::Bloom { probes },
        })
    }
}

impl Insert for BlockedBloom {
    /// Never fails.
    #[inline]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.kernel.insert(&mut self.blocks, hash.get(), self.num_probes);
        self.num_keys = self.num_keys.saturating_add(1).min(self.max_keys());
        Ok(())
    }

    /// The same bits as [`insert_hash`](Insert::insert_hash) on each, but 32
    /// keys at a time, computing and prefetching their blocks before setting
    /// any bit, so the cache misses of a batch overlap (what
    /// [`contains_hashes`](Filter::contains_hashes) does for queries). Never
    /// fails.
    ///
    /// ```
    /// use amq::{hash_u64, BlockedBloom, Filter, FilterSizing, Insert, KeyHash};
    /// let hashes: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
    /// let mut batched = BlockedBloom::new(hashes.len(), FilterSizing::BitsPerKey(10.0))?;
    /// batched.insert_hashes(&hashes)?;
    /// let mut one_by_one = BlockedBloom::new(hashes.len(), FilterSizing::BitsPerKey(10.0))?;
    /// for &h in &hashes {
    ///     one_by_one.insert_hash(h)?;
    /// }
    /// assert_eq!(batched, one_by_one);
    /// assert_eq!(batched.num_keys(), 10_000);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn insert_hashes(&mut self, hashes: &[KeyHash]) -> Result<(), Error> {
        self.kernel
            .insert_many(&mut self.blocks, self.num_probes, hash::raw(hashes));
        let added = u64::try_from(hashes.len()).unwrap_or(u64::MAX);
        self.num_keys = self.num_keys.saturating_add(added).min(self.max_keys());
        Ok(())
    }
}

impl FromBytes for BlockedBloom {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::BlockedBloom)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    fn h(i: u64, seed: u64) -> KeyHash {
        KeyHash::from_well_mixed(remix(i, seed))
    }

    #[test]
    fn blocks_are_cache_line_aligned() {
        let f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0)).unwrap();
        assert_eq!(f.blocks.as_ptr() as usize % 64, 0);
    }

    #[test]
    fn contains_hashes_matches_single_queries() {
        let mut f = BlockedBloom::new(3000, FilterSizing::BitsPerKey(6.0)).unwrap();
        for i in 0..3000u64 {
            f.insert_hash(h(i, 4)).unwrap();
        }
        let hashes: Vec<KeyHash> = (0..10_000u64).map(|i| h(i, 4)).collect();
        let mut out = alloc::vec![false; hashes.len()];
        f.contains_hashes(&hashes, &mut out);
        for (h, o) in hashes.iter().zip(&out) {
            assert_eq!(*o, f.contains_hash(*h));
        }
        assert!(out[..3000].iter().all(|&b| b));
    }

    #[test]
    fn with_shape_refuses_too_many_blocks() {
        assert_eq!(
            BlockedBloom::with_shape(u32::MAX as usize + 1, 6),
            Err(Error::TooLarge)
        );
    }
}
