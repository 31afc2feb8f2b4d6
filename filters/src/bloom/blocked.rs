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
//! [`contains_many`](Filter::contains_many) first computes and prefetches the
//! blocks of a whole batch, then probes, which overlaps the cache misses.
//!
//! [`AtomicBlockedBloom`] is the same filter with `&self` inserts through
//! relaxed atomic `fetch_or`, so many threads can fill one filter: setting a
//! bit is idempotent and commutative, so no ordering between inserts is
//! needed, only that every `fetch_or` lands (which atomicity guarantees).

use alloc::vec::Vec;

use super::{
    bits_per_key_for_fpr, check_bits_per_key, check_keys, count_as_usize, max_keys, units_for,
    UNREACHABLE_FPR,
};
use crate::format::{self, ByteWriter, Frame};
use crate::hash::reduce32;
use crate::prefetch::prefetch;
use crate::zeroed::zeroed_vec;
use crate::{math, Error, Filter, FilterKind, FormatError, FromBytes, Insert};

/// The four entry points of a SIMD kernel module (`avx2.rs`, `avx512.rs`),
/// around its `block_matches::<PROBES>` and `set_block::<PROBES>`: the whole
/// single query (block choice and probes, so the one call a query makes
/// through its kernel pointer covers all of it), the batched query with the
/// kernel inlined into [`batched`]'s loop, and the same two for inserts
/// ([`batched_insert`]; the single insert through the `set_block` form
/// named second, which may differ from the batch's). All are compiled with
/// the module's target features, which is what lets the kernel inline into
/// them; written once here so the modules' surfaces cannot drift apart.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
macro_rules! simd_entry_points {
    ($features:literal, $set_block_single:ident) => {
        /// A whole single query for `PROBES` probes (0: any count, read from
        /// `num_probes`).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains<const PROBES: u32>(
            blocks: &[Block],
            hash: u64,
            num_probes: u32,
        ) -> bool {
            let block = &blocks[block_of(hash, blocks.len() as u32)];
            // SAFETY: this function runs only with the features `block_matches` needs.
            unsafe { block_matches::<PROBES>(block, hash, num_probes) }
        }

        /// The batched query (`hashes.len() == out.len()`).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains_many<const PROBES: u32>(
            blocks: &[Block],
            num_probes: u32,
            hashes: &[u64],
            out: &mut [bool],
        ) {
            // SAFETY (for the closure's call): this function runs only with
            // the features `block_matches` needs.
            super::batched(blocks, hashes, out, |b, h| unsafe {
                block_matches::<PROBES>(b, h, num_probes)
            });
        }

        /// A whole single insert for `PROBES` probes (0: any count).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn insert<const PROBES: u32>(blocks: &mut [Block], hash: u64, num_probes: u32) {
            let i = block_of(hash, blocks.len() as u32);
            // SAFETY: this function runs only with the features the module's
            // `set_block` forms need.
            unsafe { $set_block_single::<PROBES>(&mut blocks[i], hash, num_probes) }
        }

        /// The batched insert, with `set_block` inlined into
        /// [`super::batched_insert`]'s loop.
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn insert_many<const PROBES: u32>(
            blocks: &mut [Block],
            num_probes: u32,
            hashes: &[u64],
        ) {
            // SAFETY (for the closure's call): this function runs only with
            // the features `set_block` needs.
            super::batched_insert(blocks, hashes, |b, h| unsafe {
                set_block::<PROBES>(b, h, num_probes)
            });
        }
    };
}

#[cfg(target_has_atomic = "64")]
mod atomic;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx512;
mod kernel;
mod view;

pub use view::BlockedBloomView;

#[cfg(target_has_atomic = "64")]
pub(crate) use atomic::AtomicBlock;
#[cfg(target_has_atomic = "64")]
pub use atomic::AtomicBlockedBloom;
use kernel::Kernel;

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;
pub(crate) const WORDS: usize = 8;
/// Batch size of [`BlockedBloom::insert_many`] (and the atomic filter's):
/// enough outstanding prefetches to cover memory
/// latency, small enough to live on the stack.
const BATCH: usize = 32;
/// Keys in flight in [`Filter::contains_many`] (one line each). Measured at
/// 100M keys (`examples/batch_depth.rs`, `docs/benchmarks.md`).
pub(crate) const QUERY_DEPTH: usize = 32;

/// One cache line of bits, aligned so it never straddles two lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub(crate) struct Block([u64; WORDS]);

/// A [`BlockedBloom`]'s blocks and probe count, borrowed
/// ([`BlockedBloom::blocks`]): everything a prepared probe reads, held by
/// value.
///
/// A caller that probes one prepared key against many filters (an LSM read
/// against every table whose range holds the key) can keep these three
/// words in its own array, beside what else it reads per filter, and reach
/// each filter's block in one load instead of going through the filter's
/// header first.
///
/// ```
/// use amq::{BlockedBloom, PreparedHash};
/// let mut f = BlockedBloom::with_fpr(1_000, 0.01).unwrap();
/// f.insert(b"apple");
/// let blocks = f.blocks();
/// assert_eq!(blocks.num_probes(), f.num_probes());
/// assert!(blocks.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"apple"))));
/// let mut pear = PreparedHash::new(amq::hash_key(b"pear"));
/// assert_eq!(blocks.contains_prepared(&mut pear), f.contains(b"pear"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BlockedBlocks<'a> {
    /// At least one block.
    blocks: &'a [Block],
    num_probes: u32,
}

impl BlockedBlocks<'_> {
    /// The filter's probe count per key.
    #[inline(always)]
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// Whether `probe`'s key may be in the filter: from its mask when it
    /// was prepared for this probe count (one block load and a compare),
    /// else from a probe prepared now.
    ///
    /// ```
    /// use amq::{BlockedBloom, BlockedProbe};
    /// let mut f = BlockedBloom::with_fpr(1_000, 0.01).unwrap();
    /// f.insert(b"k");
    /// let h = amq::hash_key(b"k");
    /// assert!(f.blocks().contains_probe(&f.prepare(h)));
    /// assert!(f.blocks().contains_probe(&BlockedProbe::new(h, f.num_probes() + 1)));
    /// ```
    #[inline(always)]
    pub fn contains_probe(&self, probe: &BlockedProbe) -> bool {
        if probe.num_probes != self.num_probes {
            return self.matches(&BlockedProbe::new(probe.hash, self.num_probes));
        }
        self.matches(probe)
    }

    /// Whether `probe` (prepared for this probe count) finds every bit set
    /// in its block.
    #[inline(always)]
    pub(crate) fn matches(&self, probe: &BlockedProbe) -> bool {
        debug_assert_eq!(probe.num_probes, self.num_probes);
        let block = &self.blocks[block_of(probe.hash, self.blocks.len() as u32)].0;
        mask_matches(&probe.mask, |w| block[w])
    }
}

/// Probe count for a blocked filter with `bits_per_key` bits per key.
///
/// Each row is the largest bits/key at which `k` gives the lowest FPR. The
/// crossovers come from [`math::blocked_bloom_fpr`], which the measurement
/// matches to within about 2% (`cargo run --release -p amq-bench --example blocked_probes`,
/// 200,000 keys, 4M absent keys, bits/key 2 to 24 in steps of 0.5; e.g. at 10
/// bits/key k = 5, 6, 7, 8 measure 1.041%, 0.958%, 0.963%, 1.026%). Where two
/// `k` tie within the measurement's noise the smaller, faster one wins: the
/// formula puts the 6→7 crossover at 9.99 bits/key, the measurement above 10.0,
/// so the row reads 10.1. The optimum sits below the standard filter's
/// `(m/n) ln 2` because block loads vary: at 10 bits/key the standard rule says 7.
///
/// | bits/key ≤ | 2.08 | 3.58 | 5.09 | 6.65 | 8.27 | 10.1 | 11.83 | 13.8 | 15.94 | 18.29 | 20.87 | 23.74 | 26.92 | 30.5 | 34.51 | 39.05 | 44.2 | 50.06 | 56.76 | more |
/// |------------|---|---|---|---|---|---|---|---|---|----|----|----|----|----|----|----|----|----|----|----|
/// | k          | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | 16 | 17 | 18 | 19 | 20 |
///
/// ```
/// use amq::bloom_blocked_probes as probes;
/// assert_eq!(probes(10.0), 6);
/// assert_eq!(probes(16.0), 10);
/// assert_eq!(probes(1.0), 1);
/// assert_eq!(probes(500.0), 20);
/// ```
pub fn probes_for_bits_per_key(bits_per_key: f64) -> u32 {
    const LIMITS: [f64; 19] = [
        2.08, 3.58, 5.09, 6.65, 8.27, 10.1, 11.83, 13.8, 15.94, 18.29, 20.87, 23.74, 26.92, 30.5, 34.51,
        39.05, 44.2, 50.06, 56.76,
    ];
    LIMITS
        .iter()
        .position(|&limit| bits_per_key <= limit)
        .unwrap_or(LIMITS.len()) as u32
        + 1
}

/// Block index (high 32 bits) for a hash.
#[inline(always)]
fn block_of(hash: u64, num_blocks: u32) -> usize {
    reduce32((hash >> 32) as u32, num_blocks) as usize
}

/// Multiplier that scrambles the in-block probe state: 2^32 / golden ratio.
const PROBE_MULTIPLIER: u32 = 0x9e37_79b9;
/// Largest probe count a blocked filter accepts.
const MAX_PROBES: usize = 24;

/// The probe count a SIMD kernel compiled for `PROBES` probes (0: any
/// count) runs with: `PROBES`, or `num_probes` capped at [`MAX_PROBES`].
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[inline(always)]
fn kernel_probes<const PROBES: u32>(num_probes: u32) -> usize {
    debug_assert!((1..=MAX_PROBES as u32).contains(&num_probes));
    debug_assert!(PROBES == 0 || PROBES == num_probes);
    if PROBES > 0 {
        PROBES as usize
    } else {
        num_probes.min(MAX_PROBES as u32) as usize
    }
}

/// `PROBE_POWERS[i] = PROBE_MULTIPLIER^i mod 2^32`. Probe `i` reads the top
/// 9 bits of `low32 · PROBE_POWERS[i]`: the state the chain `h *= C` reaches
/// after `i` steps, but each probe is one independent multiply, so the CPU
/// computes all of them in parallel instead of waiting on a chain of `k`.
/// Padded to 32 entries so the AVX-512 kernel's second round can load 16 at
/// once; entries past `MAX_PROBES` are never used as probes.
const PROBE_POWERS: [u32; 32] = {
    let mut p = [1u32; 32];
    let mut i = 1;
    while i < 32 {
        p[i] = p[i - 1].wrapping_mul(PROBE_MULTIPLIER);
        i += 1;
    }
    p
};

/// The in-block bit positions (`0..512`) of a key's probes.
#[inline(always)]
fn probe_bits(hash: u64, num_probes: u32) -> impl Iterator<Item = u32> {
    let state = hash as u32;
    PROBE_POWERS
        .iter()
        .take(num_probes as usize)
        .map(move |&p| state.wrapping_mul(p) >> (32 - 9))
}

/// The 8-word bit mask of a key's probes inside its block (for prepared
/// probes and atomic inserts; the oracle of [`set_probes`]).
#[inline(always)]
fn probe_mask(hash: u64, num_probes: u32) -> [u64; WORDS] {
    let mut mask = [0u64; WORDS];
    for bit in probe_bits(hash, num_probes) {
        mask[(bit >> 6) as usize] |= 1 << (bit & 63);
    }
    mask
}

/// Sets the key's probe bits in `block`, one word read-modify-write per
/// probe (RocksDB's `AddHash` does the same): the portable insert, and the
/// oracle of the SIMD ones (`avx2::set_block`, `avx512::set_block` and
/// `avx512::set_block_permuted`).
///
/// Why not build [`probe_mask`] and OR it in, as inserts once did: the mask is
/// written by data-dependent scalar stores into a stack array, and the
/// compiler reads it back as vectors to OR into the block; a wide load of
/// bytes that narrow stores just wrote cannot be forwarded from the store
/// buffer, so every insert waited for those stores to retire. Here every
/// store goes to the block itself and nothing is read back wider than it was
/// written. (The SIMD inserts go further: the mask is built in registers and
/// ORed in with one store (AVX-512) or two (AVX2) instead of `k`;
/// `docs/benchmarks.md`.)
#[inline(always)]
fn set_probes(block: &mut [u64; WORDS], hash: u64, num_probes: u32) {
    for bit in probe_bits(hash, num_probes) {
        block[(bit >> 6) as usize] |= 1 << (bit & 63);
    }
}

/// A key hash prepared for probing many blocked Bloom filters: the key's
/// in-block probe mask, which depends on the hash and the probe count only,
/// never on the filter's size. Build it once ([`BlockedBloom::prepare`]) and
/// every filter with the same probe count answers with one block load and
/// an 8-word compare ([`BlockedBloom::contains_prepared`]), instead of
/// recomputing the probes per filter: what a key hash shared by the tables
/// of an LSM tree saves beyond the hashing (RocksDB splits its Bloom probe
/// the same way: `PrepareHash`, then `HashMayMatchPrepared`).
///
/// ```
/// use amq::BlockedBloom;
/// let mut a = BlockedBloom::with_fpr(1_000, 0.01).unwrap();
/// let mut b = BlockedBloom::with_fpr(50_000, 0.01).unwrap();
/// a.insert(b"k");
/// b.insert(b"k");
/// let probe = a.prepare(amq::hash_key(b"k"));
/// assert!(a.contains_prepared(&probe) && b.contains_prepared(&probe));
/// assert_eq!(probe.num_probes(), a.num_probes());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedProbe {
    hash: u64,
    num_probes: u32,
    mask: [u64; WORDS],
}

impl BlockedProbe {
    /// Whether every probe bit is set in `block` (of a filter with this
    /// probe's probe count): the second half of a prepared query.
    #[inline(always)]
    pub(crate) fn matches(&self, block: &[u64; WORDS]) -> bool {
        mask_matches(&self.mask, |w| block[w])
    }

    /// The probe of `hash` for filters with `num_probes` probes per key.
    #[inline]
    pub fn new(hash: u64, num_probes: u32) -> BlockedProbe {
        BlockedProbe {
            hash,
            num_probes,
            mask: probe_mask(hash, num_probes),
        }
    }

    /// The key hash it was prepared from.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The probe count it was prepared for.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }
}

/// Whether every probe bit of the key is set in `block`. Branch-free: the
/// tested bits are ANDed into bit 0, so a miss costs no misprediction.
/// (Measured against building the 8-word mask and comparing it with the block:
/// this is faster, because the mask's data-dependent stores go through memory.)
#[inline(always)]
fn block_matches(block: &[u64; WORDS], hash: u64, num_probes: u32) -> bool {
    block_matches_by(|w| block[w], hash, num_probes)
}

/// [`block_matches`] over a block read through `word` (word `0..8` of the
/// key's block): the owned filter reads its array, a borrowed view
/// ([`BlockedBloomView`]) the little-endian bytes in place.
#[inline(always)]
fn block_matches_by(word: impl Fn(usize) -> u64, hash: u64, num_probes: u32) -> bool {
    let mut all = 1u64;
    for bit in probe_bits(hash, num_probes) {
        all &= word((bit >> 6) as usize) >> (bit & 63);
    }
    all & 1 == 1
}

/// Whether a block read through `word` has every bit of a prepared probe
/// mask: the OR of the bits it lacks, word by word, is zero (branch-free,
/// and vectorised by the compiler).
#[inline(always)]
fn mask_matches(mask: &[u64; WORDS], word: impl Fn(usize) -> u64) -> bool {
    let missing = mask
        .iter()
        .enumerate()
        .fold(0, |acc, (w, m)| acc | (m & !word(w)));
    missing == 0
}

/// The batched query loop, a software pipeline
/// ([`pipelined`](crate::prefetch::pipelined)): the block of key
/// `i + QUERY_DEPTH` is computed and prefetched just before key `i` is
/// probed, so the cache misses of that many keys overlap. `probe` is the
/// kernel (portable or SIMD); `hashes.len() == out.len()`.
#[inline(always)]
fn batched(blocks: &[Block], hashes: &[u64], out: &mut [bool], probe: impl Fn(&Block, u64) -> bool) {
    let n = blocks.len() as u32;
    crate::prefetch::pipelined::<_, QUERY_DEPTH>(
        hashes,
        out,
        |h| {
            let i = block_of(h, n);
            prefetch(&blocks[i]);
            (i, h)
        },
        |(i, h)| probe(&blocks[i], h),
    );
}

/// The batched insert loop: for each batch of [`BATCH`] hashes, compute and
/// prefetch every block first, then set the bits, so the misses overlap.
/// `set` is the kernel (portable or SIMD).
#[inline(always)]
fn batched_insert(blocks: &mut [Block], hashes: &[u64], set: impl Fn(&mut Block, u64)) {
    let n = blocks.len() as u32;
    let mut idx = [0usize; BATCH];
    for hs in hashes.chunks(BATCH) {
        for (i, &h) in hs.iter().enumerate() {
            idx[i] = block_of(h, n);
            prefetch(&blocks[idx[i]]);
        }
        for (i, &h) in hs.iter().enumerate() {
            set(&mut blocks[idx[i]], h);
        }
    }
}

/// The portable whole insert (the bits every SIMD insert must set).
#[inline(always)]
fn insert_portable(blocks: &mut [Block], hash: u64, num_probes: u32) {
    let i = block_of(hash, blocks.len() as u32);
    set_probes(&mut blocks[i].0, hash, num_probes);
}

/// The portable batched insert.
fn insert_many_portable(blocks: &mut [Block], num_probes: u32, hashes: &[u64]) {
    batched_insert(blocks, hashes, |block, h| set_probes(&mut block.0, h, num_probes));
}

/// The portable whole query (what every SIMD kernel must answer).
#[inline(always)]
fn contains_portable(blocks: &[Block], hash: u64, num_probes: u32) -> bool {
    block_matches(&blocks[block_of(hash, blocks.len() as u32)].0, hash, num_probes)
}

/// The portable batched query.
fn contains_many_portable(blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
    batched(blocks, hashes, out, |block, h| {
        block_matches(&block.0, h, num_probes)
    });
}

/// Shared sizing: `(blocks, probes)` for `n` keys at `bits_per_key`.
pub(crate) fn size(n: usize, bits_per_key: f64) -> Result<(u32, u32), Error> {
    check_keys(n)?;
    check_bits_per_key(bits_per_key)?;
    let blocks = units_for(n, bits_per_key, BLOCK_BITS as u64, 64, u32::MAX as u64)?;
    Ok((blocks as u32, probes_for_bits_per_key(bits_per_key)))
}

/// Bits per key a blocked filter needs for `fpr`: the standard Bloom figure,
/// raised in steps of 1/16 bit until the blocked formula meets the target
/// (an error if that takes more than 1000 bits per key).
pub(crate) fn bits_per_key_for(n: usize, fpr: f64) -> Result<f64, Error> {
    let mut bpk = bits_per_key_for_fpr(fpr)?;
    let n64 = n.min(1 << 20) as u64; // the formula only depends on n / blocks
    while bpk <= 1000.0 {
        let bits = libm::ceil(n64 as f64 * bpk / BLOCK_BITS as f64) as u64 * BLOCK_BITS as u64;
        let k = probes_for_bits_per_key(bpk);
        if math::blocked_bloom_fpr(bits, BLOCK_BITS, k, n64) <= fpr {
            return Ok(bpk);
        }
        bpk += 1.0 / 16.0;
    }
    Err(UNREACHABLE_FPR)
}

/// A cache-blocked Bloom filter: all probes of a key in one 64-byte block.
///
/// ```
/// use amq::{BlockedBloom, Filter};
/// let n = 100_000;
/// let mut f = BlockedBloom::with_bits_per_key(n, 10.0).unwrap();
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes());
/// }
/// assert!((0..n as u64).all(|i| f.contains(&i.to_le_bytes())));
/// assert!((f.bits_per_key() - 10.0).abs() < 0.01);
/// assert_eq!(f.num_probes(), 6);
/// let fp = (n as u64..n as u64 + 100_000)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// assert!(fp < 1_100, "{fp} false positives"); // about 0.96%
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
    /// A filter sized for `expected_keys` at false-positive rate `fpr`, with
    /// the space the blocked design needs (slightly more than a standard
    /// filter's).
    pub fn with_fpr(expected_keys: usize, fpr: f64) -> Result<Self, Error> {
        check_keys(expected_keys)?;
        Self::with_bits_per_key(expected_keys, bits_per_key_for(expected_keys, fpr)?)
    }

    /// A filter of `expected_keys * bits_per_key` bits rounded up to whole
    /// 512-bit blocks, with the measured-best probe count
    /// ([`probes_for_bits_per_key`]).
    pub fn with_bits_per_key(expected_keys: usize, bits_per_key: f64) -> Result<Self, Error> {
        let (blocks, num_probes) = size(expected_keys, bits_per_key)?;
        Ok(BlockedBloom {
            blocks: zeroed_vec(blocks as usize)?,
            num_probes,
            num_keys: 0,
            kernel: Kernel::detect(num_probes),
        })
    }

    /// A filter of `expected_keys * bits_per_key` bits with an explicit probe
    /// count `num_probes` in `1..=24`, for callers who measured their own
    /// optimum.
    ///
    /// ```
    /// let f = amq::BlockedBloom::with_bits_per_key_and_probes(1000, 10.0, 5).unwrap();
    /// assert_eq!(f.num_probes(), 5);
    /// assert!(amq::BlockedBloom::with_bits_per_key_and_probes(1000, 10.0, 0).is_err());
    /// ```
    pub fn with_bits_per_key_and_probes(
        expected_keys: usize,
        bits_per_key: f64,
        num_probes: u32,
    ) -> Result<Self, Error> {
        if !(1..=MAX_PROBES as u32).contains(&num_probes) {
            return Err(crate::error::invalid("num_probes", "must be in 1..=24"));
        }
        let mut f = Self::with_bits_per_key(expected_keys, bits_per_key)?;
        f.num_probes = num_probes;
        f.kernel = Kernel::detect(num_probes);
        Ok(f)
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
    /// let f = amq::BlockedBloom::with_bits_per_key(1000, 10.0).unwrap();
    /// assert!(["avx512", "avx2", "portable"].contains(&f.query_kernel()));
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// Adds the key with this [`hash_key`](crate::hash_key) value.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        self.kernel.insert(&mut self.blocks, hash, self.num_probes);
        self.num_keys = self.num_keys.saturating_add(1).min(self.max_keys());
    }

    /// Adds every key of `hashes` ([`hash_key`](crate::hash_key) values):
    /// the same bits as [`insert_hash`](Self::insert_hash) on each, but
    /// 32 keys at a time, computing and prefetching their blocks
    /// before setting any bit, so the cache misses of a batch overlap (what
    /// [`contains_many`](Filter::contains_many) does for queries). Use it to
    /// build a filter from a batch of hashes.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter};
    /// let hashes: Vec<u64> = (0..10_000u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
    /// let mut batched = BlockedBloom::with_bits_per_key(hashes.len(), 10.0).unwrap();
    /// batched.insert_many(&hashes);
    /// let mut one_by_one = BlockedBloom::with_bits_per_key(hashes.len(), 10.0).unwrap();
    /// hashes.iter().for_each(|&h| one_by_one.insert_hash(h));
    /// assert_eq!(batched, one_by_one);
    /// assert_eq!(batched.num_keys(), 10_000);
    /// assert!(hashes.iter().all(|&h| batched.contains_hash(h)));
    /// ```
    pub fn insert_many(&mut self, hashes: &[u64]) {
        self.kernel.insert_many(&mut self.blocks, self.num_probes, hashes);
        let added = u64::try_from(hashes.len()).unwrap_or(u64::MAX);
        self.num_keys = self.num_keys.saturating_add(added).min(self.max_keys());
    }

    /// Adds `key` (hashed once).
    #[inline]
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(crate::hash_key(key));
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.kernel.contains(&self.blocks, hash, self.num_probes)
    }

    /// Whether `key` may be in the set.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(crate::hash_key(key))
    }

    /// [`BlockedProbe::new`] for this filter's probe count.
    #[inline]
    pub fn prepare(&self, hash: u64) -> BlockedProbe {
        BlockedProbe::new(hash, self.num_probes)
    }

    /// `contains_hash(probe.hash())`, from the prepared mask: one block
    /// load and a compare, the same answer as every query kernel (a probe
    /// prepared for another probe count falls back to
    /// [`contains_hash`](Self::contains_hash)).
    #[inline(always)]
    pub fn contains_prepared(&self, probe: &BlockedProbe) -> bool {
        if probe.num_probes != self.num_probes {
            return self.contains_hash(probe.hash);
        }
        self.blocks().matches(probe)
    }

    /// The filter's blocks and probe count, borrowed: all a prepared probe
    /// reads, in three words a caller can keep beside its own data.
    #[inline(always)]
    pub fn blocks(&self) -> BlockedBlocks<'_> {
        BlockedBlocks {
            blocks: &self.blocks,
            num_probes: self.num_probes,
        }
    }

    /// The block `hash` probes, its line prefetched: the first half of
    /// [`contains_prepared`](Self::contains_prepared), for a caller that
    /// locates many filters' blocks before comparing any
    /// ([`ProbeSite`](crate::ProbeSite)).
    #[inline(always)]
    pub(crate) fn locate_block(&self, hash: u64) -> &[u64; WORDS] {
        let block = &self.blocks[block_of(hash, self.blocks.len() as u32)];
        prefetch(block);
        &block.0
    }

    /// ORs `other` into `self` (same block count and probes, else
    /// [`Error::Incompatible`] and `self` unchanged).
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

    /// The key count's saturation point ([`max_keys`]).
    #[inline(always)]
    fn max_keys(&self) -> u64 {
        max_keys(self.blocks.len() as u64 * BLOCK_BITS as u64)
    }

    /// Fraction of bits set.
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
        let parts = parse_frame(frame)?;
        let mut blocks: Vec<Block> = zeroed_vec(parts.payload.len() / BLOCK_BYTES)?;
        for (block, chunk) in blocks.iter_mut().zip(parts.payload.chunks_exact(BLOCK_BYTES)) {
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

    fn encode(num_probes: u32, num_keys: u64, words: impl Iterator<Item = u64>, blocks: usize) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u32(blocks as u32).u32(num_probes).u64(num_keys);
        format::encode(FilterKind::BlockedBloom, &p.into_vec(), blocks * 64, |w| {
            for x in words {
                w.u64(x);
            }
        })
    }
}

/// Bytes per block (one cache line).
pub(crate) const BLOCK_BYTES: usize = WORDS * 8;

/// A validated `BlockedBloom` frame: its parameters and its payload, not
/// yet copied (what the owned filter and the borrowed view both read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockedParts<'a> {
    pub(crate) num_probes: u32,
    pub(crate) num_keys: u64,
    /// Whole blocks (at least one) of [`BLOCK_BYTES`], words little-endian.
    pub(crate) payload: &'a [u8],
}

/// Checks a `BlockedBloom` frame's parameters against each other and its
/// payload length.
pub(crate) fn parse_frame(mut frame: Frame<'_>) -> Result<BlockedParts<'_>, Error> {
    let num_blocks = frame.params.u32()?;
    let num_probes = frame.params.u32()?;
    let num_keys = frame.params.u64()?;
    frame.params.finish()?;
    if num_blocks == 0 {
        return Err(FormatError::InvalidParameters("block count must be positive").into());
    }
    if !(1..=MAX_PROBES as u32).contains(&num_probes) {
        return Err(FormatError::InvalidParameters("probe count must be 1..=24").into());
    }
    if num_keys > max_keys(num_blocks as u64 * BLOCK_BITS as u64) {
        return Err(FormatError::InvalidParameters("more than 64 keys per bit").into());
    }
    let len = (num_blocks as usize).saturating_mul(BLOCK_BYTES);
    if frame.payload.remaining() != len {
        return Err(FormatError::InvalidParameters("payload length does not match block count").into());
    }
    let payload = frame.payload.take(len)?;
    Ok(BlockedParts {
        num_probes,
        num_keys,
        payload,
    })
}

impl Filter for BlockedBloom {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        BlockedBloom::contains_hash(self, hash)
    }

    fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
        self.kernel
            .contains_many(&self.blocks, self.num_probes, hashes, out);
    }

    #[inline]
    fn prefetch_hash(&self, hash: u64) {
        if let Some(block) = self.blocks.get(block_of(hash, self.blocks.len() as u32)) {
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
        Self::encode(self.num_probes, self.num_keys, words, self.blocks.len())
    }
}

impl Insert for BlockedBloom {
    fn insert_hash(&mut self, hash: u64) -> Result<(), Error> {
        BlockedBloom::insert_hash(self, hash);
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

    #[test]
    fn blocks_are_cache_line_aligned() {
        assert_eq!(core::mem::align_of::<Block>(), 64);
        assert_eq!(core::mem::size_of::<Block>(), 64);
        let f = BlockedBloom::with_bits_per_key(1000, 10.0).unwrap();
        assert_eq!(f.blocks.as_ptr() as usize % 64, 0);
    }

    #[test]
    fn mask_has_at_most_k_bits() {
        for h in 0..1000u64 {
            let m = probe_mask(remix(h, 1), 6);
            let bits: u32 = m.iter().map(|w| w.count_ones()).sum();
            assert!((1..=6).contains(&bits));
        }
    }

    #[test]
    fn with_fpr_meets_its_target_by_formula() {
        for &p in &[0.1, 0.01, 0.001] {
            let f = BlockedBloom::with_fpr(100_000, p).unwrap();
            let bits = f.num_blocks() as u64 * 512;
            let fpr = math::blocked_bloom_fpr(bits, 512, f.num_probes(), 100_000);
            assert!(fpr <= p * 1.02, "target {p} formula {fpr}");
        }
    }

    #[test]
    fn contains_many_matches_single_queries() {
        let mut f = BlockedBloom::with_bits_per_key(3000, 6.0).unwrap();
        for i in 0..3000u64 {
            f.insert_hash(remix(i, 4));
        }
        let hashes: Vec<u64> = (0..10_000u64).map(|i| remix(i, 4)).collect();
        let mut out = alloc::vec![false; hashes.len()];
        f.contains_many(&hashes, &mut out);
        for (h, o) in hashes.iter().zip(&out) {
            assert_eq!(*o, f.contains_hash(*h));
        }
        assert!(out[..3000].iter().all(|&b| b));
    }

    /// The in-place insert sets exactly the bits of the mask (its oracle),
    /// for every probe count, on blocks from empty to dense.
    #[test]
    fn set_probes_ors_in_exactly_the_probe_mask() {
        for k in 1..=MAX_PROBES as u32 {
            for i in 0..2_000u64 {
                let h = remix(i, u64::from(k));
                let start: [u64; WORDS] =
                    core::array::from_fn(|w| remix(i * 8 + w as u64, 9) & remix(i, w as u64));
                let mut block = if i % 2 == 0 { [0; WORDS] } else { start };
                let before = block;
                set_probes(&mut block, h, k);
                let mask = probe_mask(h, k);
                for w in 0..WORDS {
                    assert_eq!(block[w], before[w] | mask[w], "k {k} hash {h:#x} word {w}");
                }
            }
        }
    }

    #[test]
    fn probe_table_is_monotone() {
        let mut last = 0;
        for tenth in 1..=1000 {
            let k = probes_for_bits_per_key(tenth as f64 / 10.0);
            assert!(k >= last && (1..=24).contains(&k));
            last = k;
        }
    }
}
