//! Grafite, a range filter with a false-positive bound that holds for every
//! key set and every query: Costa, Ferragina and Vinciguerra, "Grafite:
//! Taming Adversarial Queries with Optimal Range Filters" (SIGMOD 2024,
//! arXiv 2311.15380). Written here from the paper; [`GrafiteRange`] is the
//! type.
//!
//! # Design
//!
//! `n` distinct keys, a reduced universe `r` (from the sizing: about
//! `n·L/ε` for an FPR `ε` on ranges of up to `L` keys, or what `B` bits per
//! key buy). A locality-preserving hash maps every `u64` onto `0..r`:
//!
//! ```text
//! h(x) = (q(x >> k) + (x mod 2^k)) mod r,      blocks of s = 2^k keys, r/2 < s ≤ r,
//! ```
//!
//! with `q` a pairwise-independent hash of the block number onto `0..r`
//! (`hash.rs`: Dietzfelbinger's multiply-shift, then a multiply-shift
//! reduction). Within a block `h` is a rotation of `0..r`: neighbouring keys
//! stay neighbours. The filter stores the set `h(S)` as an Elias–Fano code
//! ([`succinct`](crate::succinct)). A query `lo..=hi` touches one block or
//! two; each piece maps onto a circular interval of `0..r` (two intervals
//! where it wraps), and the answer is whether the code holds a value in one
//! of them: one successor query per interval (`query.rs`). The paper's
//! blocks are `r` keys long; blocks of the largest power of two at most `r`
//! keep its proof and trade its divisions for a shift and a mask.
//!
//! # The bound
//!
//! **No false negatives.** A key `x ∈ S` in `lo..=hi` lies in one of the
//! query's pieces, so `h(x)` lies in that piece's image, which the code is
//! asked about: the answer is `true`, for every seed.
//!
//! **False positives.** Let `lo..=hi` hold no key, `ℓ = hi − lo + 1 ≤ s`,
//! so it splits into at most two pieces `P_j` (offsets `O_j` of block
//! `β_j`, `Σ|O_j| = ℓ`) with images `I_j = {(q(β_j) + o) mod r : o ∈ O_j}`.
//! The answer is `true` only if some `x ∈ S` has `h(x)` in some `I_j`. Fix
//! `x` and `j`:
//!
//! * `x` in block `β_j`: `h(x) = (q(β_j) + off(x)) mod r` with
//!   `off(x) ∉ O_j` (else `x` would lie in the range), and `o ↦ (q + o) mod
//!   r` is one-to-one on `0..s` because `s ≤ r`: `h(x) ∉ I_j`, always.
//! * `x` in another block `β`: `h(x) ∈ I_j` exactly when
//!   `q(β) − q(β_j) ≡ o − off(x) (mod r)` for one of the `|O_j|` offsets
//!   `o`. The multiply-shift values of two blocks are independent and
//!   uniform over `0..2^64`, so each difference has probability at most
//!   `max_c Pr[q(β) = c] ≤ (1 + r/2^64)/r`: together at most
//!   `|O_j|·(1/r + 2^-64)`.
//!
//! Summing over the pieces and the union over the `n` keys:
//!
//! ```text
//! Pr[false positive on an empty range of ℓ ≤ s keys] ≤ ℓ·n·(1/r + 2^-64)   (≈ ℓ·n/r)
//! ```
//!
//! for every key set and every range chosen without knowing the seed
//! ([`fpr_bound`], which [`RangeFilter::expected_fpr`] returns). A range of
//! more than `s > r/2` keys may cover a whole block; it answers `true`, and
//! the bound for it, above `n/2`, would say nothing anyway.
//!
//! **How the false positives fall.** The bound is an expectation over the
//! seed. Keys closer together than a block (`s` keys) share blocks, and
//! their images are rigid rotations of each other: a block pair whose
//! starts happen to align makes every query of one block near a key of the
//! other a false positive at once. So for keys in a regular pattern denser
//! than `s` (a progression with a stride below `s`), one filter's measured
//! rate swings from seed to seed around the bound more than independent
//! events would; keys spread over more blocks (or random keys, as in most
//! workloads) see independent-looking false positives at the bound's rate
//! (`tests/range_fpr.rs`).
//!
//! **Space.** The code holds `m ≤ n` values below `r` in
//! `m·l + m + ⌈r/2^l⌉` bits with `l = ⌊log2(r/n)⌋`, at most
//! `n·(2 + log2(r/n))`: at `B` bits per key `r = n·2^(B−2)` and the bound is
//! `ℓ/2^(B−2)`, the paper's. The select samples (64 bits per 256 buckets,
//! 0.25 to 0.5 bits per key) are counted in `B` here, so a
//! [`RangeSizing::BitsPerKey`] filter's bound is `ℓ/2^(B−2.32)` for a whole
//! `B` (between `B − 2.24` and `B − 2.5` for others)
//! (measured in `docs/results-amq.md`).
//!
//! # Seeds
//!
//! The hash constants come from a 64-bit seed, stored in the frame:
//! [`GrafiteRange::build`] uses [`DEFAULT_SEED`], so equal keys and sizing
//! give equal bytes on every machine; [`GrafiteRange::build_seeded`] takes
//! the caller's. The bound is over the seed's choice: a caller facing
//! adversaries who could learn the default keeps a secret seed per filter.
//!
//! # Files
//!
//! `mod.rs` the type; `hash.rs` the locality-preserving hash; `sizing.rs`
//! the reduced universe for a sizing and [`fpr_bound`]; `build.rs`;
//! `query.rs` the query over any words; `frame.rs` the bytes; `view.rs`
//! [`GrafiteRangeView`].

use alloc::vec::Vec;

mod build;
mod frame;
mod hash;
mod query;
pub(crate) mod sizing;
mod view;

pub use sizing::fpr_bound;
pub use view::GrafiteRangeView;

use crate::format;
use crate::range::{RangeFilter, RangeSizing};
use crate::succinct::{DenseSelect, EfCore};
use crate::{Error, FilterKind};
use hash::LocalityHash;

/// The seed of [`GrafiteRange::build`]: `"grafite\0"` read little-endian.
///
/// ```
/// use amq::range::{grafite::DEFAULT_SEED, GrafiteRange, RangeSizing};
/// assert_eq!(DEFAULT_SEED.to_le_bytes(), *b"grafite\0");
/// let keys = [5, 50, 500];
/// assert_eq!(
///     GrafiteRange::build(&keys, RangeSizing::BitsPerKey(12.0))?,
///     GrafiteRange::build_seeded(&keys, RangeSizing::BitsPerKey(12.0), DEFAULT_SEED)?
/// );
/// # Ok::<(), amq::Error>(())
/// ```
pub const DEFAULT_SEED: u64 = u64::from_le_bytes(*b"grafite\0");

/// A Grafite range filter over `u64` keys (see the [module docs](self) for
/// the design and its proven bound).
///
/// ```
/// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
///
/// let keys: Vec<u64> = (0..100_000u64).map(|i| i * 7_919).collect();
/// let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
/// assert!(f.bits_per_key() < 16.01);
/// // Every key is found, alone or inside a range.
/// assert!(keys.iter().all(|&k| f.may_contain(k) && f.may_contain_range(k.saturating_sub(100), k + 100)));
/// // Empty ranges of 16 keys: about 16 / 2^13.6 of them are false positives.
/// let fp = keys.iter().filter(|&&k| f.may_contain_range(k + 1, k + 16)).count();
/// assert!(fp as f64 / keys.len() as f64 <= f.expected_fpr(16));
/// assert!(f.expected_fpr(16) < 0.002);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrafiteRange {
    /// The code of `h(S)`, over `0..r`.
    ef: EfCore<Vec<u64>>,
    /// The select directory of the code's dense stretches (empty for keys
    /// spread evenly), derived from `ef`: keys packed densely query as fast
    /// as spread ones.
    dense: DenseSelect,
    hash: LocalityHash,
    /// Distinct keys built from (`n` of the bound).
    num_keys: u64,
    seed: u64,
}

impl GrafiteRange {
    /// The filter of `keys` (any order, duplicates allowed), sized by
    /// `sizing`, hashed with [`DEFAULT_SEED`].
    ///
    /// Errors: [`Error::InvalidParameter`] for a sizing outside its domain
    /// (bits per key outside `2..=64`, an FPR outside `(0, 1)`, a range
    /// length of 0) or one that needs a reduced universe above `2^62`
    /// (`keys × max_range_len / fpr`); [`Error::TooLarge`] if memory runs
    /// out.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[3, 1, 2, 3], RangeSizing::Fpr { fpr: 0.001, max_range_len: 100 })?;
    /// assert_eq!(f.num_keys(), 3);
    /// assert!(f.expected_fpr(100) <= 0.001);
    /// assert!(GrafiteRange::build(&[1], RangeSizing::BitsPerKey(1.0)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(keys: &[u64], sizing: RangeSizing) -> Result<Self, Error> {
        build::build(keys, sizing, DEFAULT_SEED)
    }

    /// [`build`](Self::build) with the hash of `seed`: filters of the same
    /// keys with different seeds have independent false positives.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeSizing};
    /// let a = GrafiteRange::build_seeded(&[1, 2], RangeSizing::BitsPerKey(12.0), 1)?;
    /// let b = GrafiteRange::build_seeded(&[1, 2], RangeSizing::BitsPerKey(12.0), 2)?;
    /// assert_eq!((a.seed(), b.seed()), (1, 2));
    /// assert_ne!(a, b);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_seeded(keys: &[u64], sizing: RangeSizing, seed: u64) -> Result<Self, Error> {
        build::build(keys, sizing, seed)
    }

    /// Checks that `sizing` builds a filter of at least one key: the
    /// domain of [`build`](Self::build) (bits per key in `2..=64`, an FPR
    /// in `(0, 1)`, a range length of at least 1, and `max_range_len / fpr`
    /// within the reduced universe's `2^62`). A sizing that passes may
    /// still fail for many keys ([`RangeSizing::Fpr`] needs a universe of
    /// `keys × max_range_len / fpr`); one that fails never builds.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeSizing};
    /// assert!(GrafiteRange::check_sizing(RangeSizing::BitsPerKey(16.0)).is_ok());
    /// assert!(GrafiteRange::check_sizing(RangeSizing::BitsPerKey(1.0)).is_err());
    /// assert!(GrafiteRange::check_sizing(RangeSizing::BitsPerKey(64.5)).is_err());
    /// let huge = RangeSizing::Fpr { fpr: 1e-6, max_range_len: 1 << 60 };
    /// assert!(GrafiteRange::check_sizing(huge).is_err());
    /// ```
    pub fn check_sizing(sizing: RangeSizing) -> Result<(), Error> {
        sizing::shape(1, sizing.validate()?).map(|_| ())
    }

    /// The filter of a checked code (built, or decoded with every word
    /// checked). [`Error::TooLarge`] if its dense directory cannot be
    /// allocated.
    pub(crate) fn from_parts(ef: EfCore<Vec<u64>>, num_keys: u64, seed: u64) -> Result<Self, Error> {
        let hash = LocalityHash::new(seed, ef.layout.universe);
        let dense = DenseSelect::build(&ef)?;
        Ok(GrafiteRange {
            ef,
            dense,
            hash,
            num_keys,
            seed,
        })
    }

    /// The seed of its hash.
    ///
    /// ```
    /// use amq::range::{grafite::DEFAULT_SEED, GrafiteRange, RangeSizing};
    /// assert_eq!(GrafiteRange::build(&[1], RangeSizing::BitsPerKey(8.0))?.seed(), DEFAULT_SEED);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The reduced universe `r` the keys are hashed onto.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeSizing};
    /// let keys: Vec<u64> = (0..1000).collect();
    /// let f = GrafiteRange::build(&keys, RangeSizing::Fpr { fpr: 0.01, max_range_len: 10 })?;
    /// assert!((1_000_000..=1_000_002).contains(&f.reduced_universe())); // n·L/ε
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn reduced_universe(&self) -> u64 {
        self.hash.universe()
    }

    /// Keys per block, `2^⌊log2 r⌋`: the longest range the bound covers.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let keys: Vec<u64> = (0..1000).collect();
    /// let f = GrafiteRange::build(&keys, RangeSizing::Fpr { fpr: 0.01, max_range_len: 10 })?;
    /// assert_eq!(f.block_len(), 1 << 19);
    /// assert_eq!(f.expected_fpr(f.block_len() + 1), 1.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn block_len(&self) -> u64 {
        1 << self.hash.block_bits()
    }

    /// Reads back the bytes of [`RangeFilter::to_bytes`], every check made
    /// (the frame, its parameters, and every word of the code): a typed
    /// error, never a panic, for any input, and no allocation beyond the
    /// payload's size.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[1, 50, 900], RangeSizing::BitsPerKey(20.0))?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(GrafiteRange::from_bytes(&bytes)?, f);
    /// assert!(GrafiteRange::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::GrafiteRange)?)
    }
}

impl RangeFilter for GrafiteRange {
    #[inline]
    fn may_contain_range(&self, lo: u64, hi: u64) -> bool {
        query::may_contain_range(&self.ef, &self.dense, &self.hash, lo, hi)
    }
    #[inline]
    fn prefetch_range(&self, lo: u64, _hi: u64) {
        query::prefetch(&self.ef, &self.hash, lo);
    }
    fn may_contain_ranges(&self, ranges: &[(u64, u64)], out: &mut [bool]) {
        query::may_contain_ranges(&self.ef, &self.dense, &self.hash, ranges, out);
    }

    fn expected_fpr(&self, range_len: u64) -> f64 {
        fpr_bound(range_len, self.num_keys, self.hash.universe())
    }
    fn size_in_bytes(&self) -> usize {
        self.ef.words.len() * 8 + self.dense.size_in_bytes()
    }
    fn num_keys(&self) -> usize {
        usize::try_from(self.num_keys).unwrap_or(usize::MAX)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::GrafiteRange
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.encode()
    }
}
