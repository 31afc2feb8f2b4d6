//! The split-block Bloom filter: every key sets one bit in each of the eight
//! 32-bit words of one 256-bit block, so a query is one 32-byte load, one
//! multiply by eight salts and one SIMD test.
//!
//! Design (Putze, Sanders & Singler 2007, "Cache-, Hash- and Space-Efficient
//! Bloom Filters", the split variant; the layout of Apache Impala, Apache
//! Parquet and Apache Arrow, and of the `sbbf-rs` crate):
//!
//! * the high 32 bits of the key hash choose the block by multiply-shift;
//! * the low 32 bits `x` choose the bits: bit `(x · SALT[i]) >> 27` of word
//!   `i`, for eight fixed odd salts (Parquet's, [`SALT`](crate::parquet::SALT)).
//!
//! **Against [`BlockedBloom`](crate::BlockedBloom).** Both read one block per
//! query. The split block is half a cache line, and its eight probes are
//! one lane each, so the mask is three vector instructions and the test one
//! (`vptest`); the blocked filter's `k` probes land anywhere in 512 bits, so
//! its mask takes permutes and two registers. The price is the FPR: fixed
//! positions and smaller blocks load the blocks less evenly, so at 10
//! bits/key the split block gives 1.26% where the blocked filter gives
//! 0.96% ([`math::split_block_bloom_fpr`] against
//! [`math::blocked_bloom_fpr`]), and a target FPR costs more bits: 10.53
//! against 9.90 bits/key at 1% (6% more), 16.89 against 15.50 at 0.1% (9%),
//! 26.34 against 21.92 at 0.01% (20%). The time saved is compute, not
//! memory: while the filter is in cache a query takes 10–15% less time
//! than the blocked filter's, and once it is far larger than the cache both
//! wait on one cache miss and take about as long. Pick it for filters that
//! stay in cache and are probed often; the planner puts both in the same
//! query-cost class (one cache line) and so ranks the smaller blocked filter
//! first.
//!
//! **Sizing.** [`FilterSizing::Fpr`] takes the fewest blocks whose formula
//! FPR meets the target; [`FilterSizing::BitsPerKey`] rounds `n ·
//! bits_per_key` up to whole blocks. The probe count is always eight.
//!
//! The module's files: `block.rs` (the block, the bits a hash picks, the
//! batched loops: the portable kernel), `kernel.rs` with `avx2.rs` (the
//! AVX2 kernel and the choice, shared with [`ParquetBloom`](crate::ParquetBloom),
//! which is this layout with Parquet's hash and file format), `frame.rs`
//! (the byte format) and `view.rs` (queries on stored bytes).

use alloc::vec::Vec;

use crate::bloom::{
    check_bits_per_key, check_fpr, check_keys, count_as_usize, max_keys, units_for, UNREACHABLE_FPR,
};
use crate::cost::{CostModel, Params, QueryCost, Shape, Traits};
use crate::format::{self, Frame};
use crate::prefetch::prefetch;
use crate::zeroed::zeroed_vec;
use crate::{hash, math, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash};

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx2;
mod block;
mod frame;
mod kernel;
mod view;

pub use block::{BLOCK_BYTES, SALT};
pub use view::SplitBlockBloomView;

pub(crate) use block::{Block, BATCH};
pub(crate) use kernel::Kernel;

use block::block_of;

/// Bits per block.
const BLOCK_BITS: u64 = 256;

/// Most blocks a filter may have: the block index is the high 32 bits of the
/// key hash multiply-shifted, so at most `2^32 - 1` blocks (128 GiB).
const MAX_BLOCKS: u64 = u32::MAX as u64;

/// Probes per key: one per word of a block.
const PROBES: u32 = 8;

/// A split-block Bloom filter: eight bits per key, one in each 32-bit word
/// of one 256-bit block.
///
/// ```
/// use amq::{Filter, FilterSizing, Insert, SplitBlockBloom};
/// let n = 100_000;
/// let mut f = SplitBlockBloom::new(n, FilterSizing::BitsPerKey(10.0))?;
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes())?;
/// }
/// assert!((0..n as u64).all(|i| f.contains(&i.to_le_bytes())));
/// assert!((f.bits_per_key() - 10.0).abs() < 0.01);
/// let fp = (n as u64..n as u64 + 100_000)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// assert!(fp < 1_400, "{fp} false positives"); // about 1.26%
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SplitBlockBloom {
    blocks: Vec<Block>,
    num_keys: u64,
    /// Chosen for this CPU at construction; never changes an answer, so it
    /// is not part of equality or of the bytes.
    kernel: Kernel,
}

impl PartialEq for SplitBlockBloom {
    fn eq(&self, other: &Self) -> bool {
        self.blocks == other.blocks && self.num_keys == other.num_keys
    }
}

impl Eq for SplitBlockBloom {}

/// The block count for `n` keys at `sizing` (validated): the fewest blocks
/// whose formula FPR meets a target, or `n · bits_per_key` bits in whole
/// blocks. A target that needs more than 1000 bits per key is an error.
pub(crate) fn size(n: usize, sizing: FilterSizing) -> Result<u64, Error> {
    check_keys(n)?;
    match sizing {
        FilterSizing::BitsPerKey(b) => {
            check_bits_per_key(b)?;
            units_for(n, b, BLOCK_BITS, BLOCK_BYTES as u64, MAX_BLOCKS)
        }
        FilterSizing::Fpr(p) => {
            check_fpr(p)?;
            // The most blocks a target may take: 1000 bits per key.
            let most = units_for(n, 1000.0, BLOCK_BITS, BLOCK_BYTES as u64, u64::MAX).unwrap_or(u64::MAX);
            let too_many = if most > MAX_BLOCKS {
                Error::TooLarge
            } else {
                UNREACHABLE_FPR
            };
            fewest_blocks(n as u64, p, most.min(MAX_BLOCKS)).ok_or(too_many)
        }
    }
}

/// The fewest blocks (at most `most`) for which
/// [`math::split_block_bloom_fpr`] of `n` keys meets `fpr`, if any does: a
/// binary search, since the FPR falls as blocks are added.
pub(crate) fn fewest_blocks(n: u64, fpr: f64, most: u64) -> Option<u64> {
    let meets = |z: u64| math::split_block_bloom_fpr(z, n) <= fpr;
    if !meets(most) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, most);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

impl SplitBlockBloom {
    /// An empty filter sized for `expected_keys` keys.
    ///
    /// [`FilterSizing::Fpr`]: the fewest blocks for which
    /// [`math::split_block_bloom_fpr`] meets the target (10.5 bits per key
    /// at 1%). [`FilterSizing::BitsPerKey`]: `expected_keys · bits_per_key`
    /// bits rounded up to whole 256-bit blocks. More keys than
    /// `expected_keys` can be inserted; the FPR then rises past the target.
    ///
    /// Errors if `expected_keys` is 0, the FPR is not in `(0, 1)`, the
    /// sizing needs more than 1000 bits per key, or the size overflows or
    /// cannot be allocated.
    ///
    /// ```
    /// use amq::{FilterSizing, SplitBlockBloom};
    /// let f = SplitBlockBloom::new(1_000_000, FilterSizing::Fpr(0.01))?;
    /// assert_eq!(f.num_blocks(), 41_130); // 10.53 bits per key
    /// assert_eq!(SplitBlockBloom::new(1_000, FilterSizing::BitsPerKey(10.0))?.num_blocks(), 40);
    /// assert!(SplitBlockBloom::new(1_000, FilterSizing::Fpr(1.5)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        Self::with_blocks(size(expected_keys, sizing)? as usize)
    }

    /// An empty filter of exactly `num_blocks` 256-bit blocks (at least one,
    /// fewer than 2^32), for filters of one shape to [`union`](Self::union).
    ///
    /// ```
    /// let f = amq::SplitBlockBloom::with_blocks(20)?;
    /// assert_eq!(f.num_blocks(), 20);
    /// assert!(amq::SplitBlockBloom::with_blocks(0).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn with_blocks(num_blocks: usize) -> Result<Self, Error> {
        if num_blocks == 0 {
            return Err(crate::error::invalid("num_blocks", "must be at least 1"));
        }
        if num_blocks as u64 > MAX_BLOCKS {
            return Err(Error::TooLarge);
        }
        Ok(SplitBlockBloom {
            blocks: zeroed_vec(num_blocks)?,
            num_keys: 0,
            kernel: Kernel::detect(),
        })
    }

    /// Number of 256-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The kernel this filter chose for the running CPU when it was made:
    /// `"avx2"` or `"portable"`. Both give identical answers and bits.
    ///
    /// ```
    /// let f = amq::SplitBlockBloom::with_blocks(2)?;
    /// assert!(["avx2", "portable"].contains(&f.query_kernel()));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// ORs `other` into `self`: a filter of every key of both (same block
    /// count, else [`Error::Incompatible`] and `self` unchanged).
    ///
    /// ```
    /// use amq::{Filter, Insert, SplitBlockBloom};
    /// let mut a = SplitBlockBloom::with_blocks(16)?;
    /// let mut b = SplitBlockBloom::with_blocks(16)?;
    /// a.insert(b"x")?;
    /// b.insert(b"y")?;
    /// a.union(&b)?;
    /// assert!(a.contains(b"x") && a.contains(b"y"));
    /// assert!(a.union(&SplitBlockBloom::with_blocks(32)?).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn union(&mut self, other: &SplitBlockBloom) -> Result<(), Error> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible);
        }
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        self.count(other.num_keys);
        Ok(())
    }

    /// Fraction of bits set.
    ///
    /// ```
    /// use amq::{Insert, SplitBlockBloom};
    /// let mut f = SplitBlockBloom::with_blocks(1)?;
    /// f.insert(b"k")?;
    /// assert_eq!(f.fill_ratio(), 8.0 / 256.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self
            .blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| u64::from(w.count_ones()))
            .sum();
        ones as f64 / (self.blocks.len() as f64 * BLOCK_BITS as f64)
    }

    /// Adds `added` to the key count, saturating at [`max_keys`].
    fn count(&mut self, added: u64) {
        let most = max_keys(self.blocks.len() as u64 * BLOCK_BITS);
        self.num_keys = self.num_keys.saturating_add(added).min(most);
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let parts = frame::parse_frame(frame)?;
        let mut blocks: Vec<Block> = zeroed_vec(parts.payload.len() / BLOCK_BYTES)?;
        for (block, chunk) in blocks.iter_mut().zip(parts.payload.chunks_exact(BLOCK_BYTES)) {
            for (w, c) in block.0.iter_mut().zip(chunk.chunks_exact(4)) {
                *w = u32::from_le_bytes(c.try_into().unwrap_or([0; 4]));
            }
        }
        Ok(SplitBlockBloom {
            blocks,
            num_keys: parts.num_keys,
            kernel: Kernel::detect(),
        })
    }
}

impl Filter for SplitBlockBloom {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.kernel.contains(&self.blocks, hash.get())
    }

    /// Computes and prefetches the blocks of 32 keys, then tests them, so
    /// the cache misses of a batch overlap.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        self.kernel.contains_many(&self.blocks, hash::raw(hashes), out);
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        if let Some(block) = self.blocks.get(block_of(hash.get(), self.blocks.len())) {
            prefetch(block);
        }
    }

    fn size_in_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }
    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }
    fn expected_fpr(&self) -> f64 {
        math::split_block_bloom_fpr(self.blocks.len() as u64, self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::SplitBlockBloom
    }
    fn to_bytes(&self) -> Vec<u8> {
        frame::encode(self.num_keys, &self.blocks)
    }
}

impl CostModel for SplitBlockBloom {
    const TRAITS: Traits = Traits {
        cost: QueryCost::Low,
        reason: "half a cache line and one SIMD test per query, the least work; \
                 6% more bits than the blocked Bloom filter at 1%, 9% at 0.1%",
        ..crate::bloom::BLOOM_TRAITS
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let blocks = size(n, sizing)?;
        Ok(Shape {
            bytes: blocks * BLOCK_BYTES as u64,
            fpr: math::split_block_bloom_fpr(blocks, n as u64),
            fpr_floor: 0.0,
            params: Params::Bloom { probes: PROBES },
        })
    }
}

impl Insert for SplitBlockBloom {
    /// Never fails.
    #[inline]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.kernel.insert(&mut self.blocks, hash.get());
        self.count(1);
        Ok(())
    }

    /// The same bits as [`insert_hash`](Insert::insert_hash) on each, but
    /// the blocks of 32 keys are computed and prefetched before any bit is
    /// set. Never fails.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, Insert, KeyHash, SplitBlockBloom};
    /// let hashes: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
    /// let mut batched = SplitBlockBloom::new(hashes.len(), FilterSizing::BitsPerKey(10.0))?;
    /// batched.insert_hashes(&hashes)?;
    /// let mut one_by_one = SplitBlockBloom::new(hashes.len(), FilterSizing::BitsPerKey(10.0))?;
    /// for &h in &hashes {
    ///     one_by_one.insert_hash(h)?;
    /// }
    /// assert_eq!(batched, one_by_one);
    /// assert_eq!(batched.num_keys(), 10_000);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn insert_hashes(&mut self, hashes: &[KeyHash]) -> Result<(), Error> {
        self.kernel.insert_many(&mut self.blocks, hash::raw(hashes));
        self.count(u64::try_from(hashes.len()).unwrap_or(u64::MAX));
        Ok(())
    }
}

impl FromBytes for SplitBlockBloom {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::SplitBlockBloom)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    #[test]
    fn blocks_are_aligned_to_32_bytes() {
        let f = SplitBlockBloom::new(1000, FilterSizing::BitsPerKey(10.0)).unwrap();
        assert_eq!(f.blocks.as_ptr() as usize % 32, 0);
    }

    #[test]
    fn fpr_sizing_takes_the_fewest_blocks_that_meet_the_target() {
        for &p in &[0.1, 0.01, 0.001, 0.0001] {
            for n in [1usize, 7, 1000, 1_000_000] {
                let z = size(n, FilterSizing::Fpr(p)).unwrap();
                assert!(math::split_block_bloom_fpr(z, n as u64) <= p);
                assert!(z == 1 || math::split_block_bloom_fpr(z - 1, n as u64) > p);
            }
        }
        assert_eq!(size(usize::MAX, FilterSizing::Fpr(0.01)), Err(Error::TooLarge));
        assert_eq!(size(10, FilterSizing::Fpr(1e-300)), Err(UNREACHABLE_FPR));
        assert!(size(0, FilterSizing::Fpr(0.01)).is_err());
        assert!(size(10, FilterSizing::Fpr(0.0)).is_err());
        assert_eq!(
            SplitBlockBloom::with_blocks(u32::MAX as usize + 1),
            Err(Error::TooLarge)
        );
    }

    #[test]
    fn batched_and_single_operations_agree() {
        let h = |i: u64| KeyHash::from_well_mixed(remix(i, 4));
        let hashes: Vec<KeyHash> = (0..3000u64).map(h).collect();
        let mut a = SplitBlockBloom::new(3000, FilterSizing::BitsPerKey(6.0)).unwrap();
        let mut b = a.clone();
        hashes.iter().for_each(|&h| a.insert_hash(h).unwrap());
        b.insert_hashes(&hashes).unwrap();
        assert_eq!(a, b);
        let probe: Vec<KeyHash> = (0..10_000u64).map(h).collect();
        let mut out = alloc::vec![false; probe.len()];
        a.contains_hashes(&probe, &mut out);
        for (&h, &o) in probe.iter().zip(&out) {
            assert_eq!(o, a.contains_hash(h));
        }
        assert!(out[..3000].iter().all(|&o| o));
        assert!(!out[3000..].iter().all(|&o| o));
    }
}
