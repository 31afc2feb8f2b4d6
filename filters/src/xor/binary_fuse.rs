//! The binary fuse filter (Graf & Lemire 2022, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters", ACM JEA 27): an xor filter whose slots are
//! *spatially coupled*, which lowers the peeling threshold to the
//! orientability threshold and so brings the table to 1.125 (3-wise) or
//! 1.075 (4-wise) slots per key.
//!
//! **Layout.** The table is `c + A - 1` segments of `L` slots, `L` a power of
//! two. A key picks a uniform start slot `s` among the first `c·L`; its `i`-th
//! slot lies in segment `⌊s/L⌋ + i`, at an offset chosen by `i`'s own hash
//! bits: `(s + i·L) ^ offsetᵢ` with `offsetᵢ < L` (a xor keeps it inside the
//! segment). Consecutive segments overlap in the keys they hold, so peeling
//! runs from both ends of the table inwards like a fuse (Walzer 2021,
//! "Peeling Close to the Orientability Threshold", ICALP).
//!
//! **Bits.** From the seeded hash `x`: the start is `reduce(x, c·L)` (the top
//! bits); offsets 1 and 2 are bits 0–17 and 18–35 of `x` (masked to `L`);
//! offset 3 (4-wise) is the top 18 bits of `x · φ` (the golden-ratio
//! constant), because the low 54 bits are too few to leave the start's top
//! bits alone. For up to about 2^28 slots the three fields are disjoint.
//!
//! **Sizing** (Graf & Lemire 2022, §4, fitted to their experiments):
//!
//! | arity | segment length `L`                     | size factor (table / keys)                      |
//! |-------|----------------------------------------|-------------------------------------------------|
//! | 3     | `2^⌊ln n / ln 3.33 + 2.25⌋`, ≤ 2^18    | `max(1.125, 0.875 + 0.25·ln 10⁶ / ln n)`        |
//! | 4     | `2^⌊ln n / ln 2.91 − 0.5⌋`, ≤ 2^18     | `max(1.075, 0.77 + 0.305·ln 600000 / ln n)`     |
//!
//! The segment count is `c = ⌈n·factor / L⌉ − (A − 1)`, at least 1. One
//! change from the reference code: `c` is also at least `n / (λ·L)` with `λ`
//! ([`MAX_START_LOAD`]) the start-segment load that still peels. Without it,
//! sizes where `L` has just doubled and `c` has just been rounded down put
//! ~0.94 keys on each start slot and fail for 20–40% of key sets after 100
//! seeds (as xor_singleheader's builds did at n ≈ 11,500); with it every size peels at
//! the first or second seed. The bound only binds near such steps.
//!
//! An `F`-bit filter therefore takes about `1.125·F` bits per key (9.0 for
//! `BinaryFuse8`) at a million keys or more, a little more for smaller sets,
//! and 4-wise about `1.075·F`. Queries read 3 (or 4) slots, usually within a
//! few segments of each other.

use alloc::vec::Vec;

use libm::{ceil, floor, log};

use super::fingerprint::{self, Fingerprint, LeTable};
use super::peel::{self, Geometry};
use super::query;
use super::sharded::{fuse_query, read_shards, write_shards, LeSeeds, ShardSeeds};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::hash::reduce;
use crate::{Error, Filter, FilterKind, FormatError, FromBytes, KeyHash, StaticFilter};

/// The largest segment length (the reference's cap): `2^18`.
pub const MAX_SEGMENT_LEN: u32 = 1 << 18;

/// Keys per start slot (`n / (c·L)`) above which a 3-wise layout gets more
/// segments, whatever the size factor says. Chosen by measurement, see the
/// module docs. (4-wise layouts need no bound: the paper's sizing stays
/// below 0.95 keys per start slot, far from the 4-wise threshold of 0.977.)
pub const MAX_START_LOAD: f64 = 0.90;

/// Multiplier for the fourth slot's offset (`⌊2^64 / φ⌋`, odd).
const OFFSET_MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// A fingerprint width that has a binary-fuse kind: `u8`, `u16`, `u32`.
pub trait FuseFingerprint: Fingerprint {
    /// The kind recorded in the serialized header.
    const FUSE_KIND: FilterKind;
}

impl FuseFingerprint for u8 {
    const FUSE_KIND: FilterKind = FilterKind::BinaryFuse8;
}

impl FuseFingerprint for u16 {
    const FUSE_KIND: FilterKind = FilterKind::BinaryFuse16;
}

impl FuseFingerprint for u32 {
    const FUSE_KIND: FilterKind = FilterKind::BinaryFuse32;
}

/// How many slots each key has.
///
/// ```
/// use amq::xor::FuseArity;
/// assert_eq!(FuseArity::default(), FuseArity::Three);
/// assert_eq!(FuseArity::Four.slots(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FuseArity {
    /// Three slots: 1.125 slots per key at a million keys, fastest queries.
    #[default]
    Three,
    /// Four slots: 1.075 slots per key (4.4% smaller), one more memory read
    /// per query and a slower build.
    Four,
}

impl FuseArity {
    /// Slots per key: 3 or 4.
    pub const fn slots(self) -> usize {
        match self {
            FuseArity::Three => 3,
            FuseArity::Four => 4,
        }
    }

    fn from_slots(slots: u8) -> Option<Self> {
        match slots {
            3 => Some(FuseArity::Three),
            4 => Some(FuseArity::Four),
            _ => None,
        }
    }
}

/// Construction parameters of a [`BinaryFuse`] filter.
///
/// ```
/// use amq::xor::{FuseArity, FuseParams};
/// assert_eq!(FuseParams::default().arity, FuseArity::Three);
/// assert_eq!(FuseParams::FOUR_WISE.arity, FuseArity::Four);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct FuseParams {
    /// Slots per key.
    pub arity: FuseArity,
}

impl FuseParams {
    /// Three slots per key (the default).
    pub const THREE_WISE: FuseParams = FuseParams {
        arity: FuseArity::Three,
    };
    /// Four slots per key: smaller, slower.
    pub const FOUR_WISE: FuseParams = FuseParams {
        arity: FuseArity::Four,
    };

    /// Parameters with this arity.
    pub const fn with_arity(arity: FuseArity) -> Self {
        FuseParams { arity }
    }
}

/// The segmented slot layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segments {
    arity: FuseArity,
    /// `L`, a power of two, at most [`MAX_SEGMENT_LEN`].
    segment_len: u64,
    /// `c`, the number of start segments; 0 only for an empty filter.
    segment_count: u64,
    /// `c·L`: the range of start slots.
    start_slots: u64,
}

impl Segments {
    fn new(arity: FuseArity, segment_len: u64, segment_count: u64) -> Self {
        Segments {
            arity,
            segment_len,
            segment_count,
            start_slots: segment_count * segment_len,
        }
    }

    /// The number of slots per key.
    pub(crate) fn arity(&self) -> FuseArity {
        self.arity
    }

    /// Slots in the table: `(c + A - 1)·L`, or 0 when `c = 0`.
    pub(crate) fn len(&self) -> u64 {
        if self.segment_count == 0 {
            0
        } else {
            (self.segment_count + self.arity.slots() as u64 - 1) * self.segment_len
        }
    }

    /// The layout for `n` distinct keys (see the module docs).
    pub(crate) fn for_keys(n: usize, arity: FuseArity) -> Result<Self, Error> {
        let max_load = match arity {
            FuseArity::Three => MAX_START_LOAD,
            FuseArity::Four => f64::INFINITY,
        };
        Self::for_keys_with_load(n, arity, max_load)
    }

    fn for_keys_with_load(n: usize, arity: FuseArity, max_load: f64) -> Result<Self, Error> {
        if n == 0 {
            return Ok(Segments::new(arity, 1, 0));
        }
        let segment_len = segment_len(n, arity);
        let capacity = if n <= 1 {
            0.0
        } else {
            ceil(n as f64 * size_factor(n, arity))
        };
        let by_factor = ceil(capacity / segment_len as f64) - (arity.slots() - 1) as f64;
        let by_load = ceil(n as f64 / (max_load * segment_len as f64));
        let segment_count = by_factor.max(by_load).max(1.0);
        let slots = (segment_count + (arity.slots() - 1) as f64) * segment_len as f64;
        if slots > u32::MAX as f64 {
            return Err(Error::TooLarge);
        }
        Ok(Segments::new(arity, segment_len, segment_count as u64))
    }

    #[inline(always)]
    fn slots_of<const A: usize>(&self, mixed: u64) -> [usize; A] {
        let start = reduce(mixed, self.start_slots);
        let mask = self.segment_len - 1;
        let offsets = [mixed, mixed >> 18, mixed.wrapping_mul(OFFSET_MUL) >> 46];
        let mut slots = [start as usize; A];
        for i in 1..A {
            slots[i] = ((start + i as u64 * self.segment_len) ^ (offsets[i - 1] & mask)) as usize;
        }
        slots
    }
}

/// One layout for both arities (3 and 4): the arity is the const parameter.
impl<const A: usize> Geometry<A> for Segments {
    type State = peel::SplitState;
    const SCATTERED: bool = false;

    #[inline(always)]
    fn num_slots(&self) -> usize {
        self.len() as usize
    }
    #[inline(always)]
    fn slots(&self, mixed: u64) -> [usize; A] {
        self.slots_of(mixed)
    }
}

/// Table slots of a binary fuse filter of `n` distinct keys (what the
/// planner predicts its space from).
pub(crate) fn slots_for(n: usize, arity: FuseArity) -> Result<u64, Error> {
    Ok(Segments::for_keys(n, arity)?.len())
}

/// Segment length `L` for `n` keys (Graf & Lemire 2022, §4).
fn segment_len(n: usize, arity: FuseArity) -> u64 {
    let ln_n = log(n.max(1) as f64);
    let exponent = match arity {
        FuseArity::Three => floor(ln_n / log(3.33) + 2.25),
        FuseArity::Four => floor(ln_n / log(2.91) - 0.5),
    };
    let exponent = exponent.clamp(0.0, MAX_SEGMENT_LEN.trailing_zeros() as f64);
    1 << exponent as u32
}

/// Table slots per key for `n >= 2` keys (Graf & Lemire 2022, §4).
fn size_factor(n: usize, arity: FuseArity) -> f64 {
    let ln_n = log(n as f64);
    match arity {
        FuseArity::Three => f64::max(1.125, 0.875 + 0.25 * log(1e6) / ln_n),
        FuseArity::Four => f64::max(1.075, 0.77 + 0.305 * log(6e5) / ln_n),
    }
}

/// A binary fuse filter with `F`-bit fingerprints: about `1.125·F` bits per
/// key (3-wise, from a million keys) and a false-positive rate of `2^-F`.
/// Static: built once from all key hashes.
///
/// Use the aliases [`BinaryFuse8`], [`BinaryFuse16`] and [`BinaryFuse32`].
///
/// ```
/// use amq::{hash_key, hash_u64, BinaryFuse8, Filter, KeyHash};
/// use amq::xor::FuseParams;
///
/// let keys: Vec<KeyHash> = (0..100_000u64).map(hash_u64).collect();
/// let three = BinaryFuse8::build(&keys).unwrap();
/// let four = BinaryFuse8::build_with(&keys, &FuseParams::FOUR_WISE).unwrap();
/// for f in [&three, &four] {
///     assert!(keys.iter().all(|&h| f.contains_hash(h)));
///     let fp = (100_000..200_000u64).filter(|i| f.contains(&i.to_le_bytes())).count();
///     assert!((fp as f64 / 100_000.0 - 1.0 / 256.0).abs() < 0.0006, "{fp}");
/// }
/// // At 100,000 keys the size factor is still above its large-n limit.
/// assert!(three.bits_per_key() < 9.6);
/// assert!(four.bits_per_key() < 9.1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryFuse<F: FuseFingerprint> {
    fingerprints: Vec<F>,
    /// The table's layout; in a sharded filter, each shard's.
    segments: Segments,
    seed: u64,
    /// Empty for a single table; else each shard's seed (`sharded.rs`).
    shard_seeds: Vec<u64>,
    num_keys: u64,
}

/// Binary fuse filter with 8-bit fingerprints: 9.0 bits/key from a million
/// keys, FPR `2^-8 ≈ 0.39%`.
///
/// ```
/// use amq::{BinaryFuse8, Filter};
/// let keys: Vec<amq::KeyHash> = (0..1_000_000u64).map(amq::hash_u64).collect();
/// let f = BinaryFuse8::build(&keys).unwrap();
/// assert!(f.bits_per_key() < 9.1, "{}", f.bits_per_key());
/// assert_eq!(f.expected_fpr(), 1.0 / 256.0);
/// ```
pub type BinaryFuse8 = BinaryFuse<u8>;

/// Binary fuse filter with 16-bit fingerprints: 18.0 bits/key from a million
/// keys, FPR `2^-16 ≈ 0.0015%`.
///
/// ```
/// use amq::{BinaryFuse16, Filter};
/// let keys: Vec<amq::KeyHash> = (0..1_000_000u64).map(amq::hash_u64).collect();
/// let f = BinaryFuse16::build(&keys).unwrap();
/// assert!(f.bits_per_key() < 18.2, "{}", f.bits_per_key());
/// assert_eq!(f.expected_fpr(), 1.0 / 65536.0);
/// ```
pub type BinaryFuse16 = BinaryFuse<u16>;

/// Binary fuse filter with 32-bit fingerprints: 36.1 bits/key from a million
/// keys, FPR `2^-32`.
///
/// ```
/// use amq::{BinaryFuse32, Filter};
/// let keys: Vec<amq::KeyHash> = (0..1_000_000u64).map(amq::hash_u64).collect();
/// let f = BinaryFuse32::build(&keys).unwrap();
/// assert!(f.bits_per_key() < 36.4, "{}", f.bits_per_key());
/// assert_eq!(f.expected_fpr(), 1.0 / 4294967296.0);
/// ```
pub type BinaryFuse32 = BinaryFuse<u32>;

impl<F: FuseFingerprint> BinaryFuse<F> {
    /// Builds a 3-wise filter from key hashes: unlike xorf's
    /// `BinaryFuse8::try_from(&keys)` on raw `u64`s, hash your keys with
    /// [`hash_u64`](crate::hash_u64) first ([`hash_key`](crate::hash_key)
    /// for bytes).
    ///
    /// There is no `TryFrom<&[u64]>`: a `u64` could be a key or a hash, and
    /// taking one for the other ruins the filter silently ([`KeyHash`]).
    /// Duplicates are allowed (removed first) and counted once.
    ///
    /// Takes expected linear time and about 24 bytes per key of temporary
    /// memory (see [`crate::xor`]).
    ///
    /// ```
    /// use amq::{hash_u64, BinaryFuse16, Filter};
    /// let f = BinaryFuse16::build(&[5, 6, 7, 7, 7].map(hash_u64))?;
    /// assert_eq!(f.num_keys(), 3);
    /// assert!(f.contains_hash(hash_u64(5)) && f.contains_hash(hash_u64(7)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    ///
    /// The xorf spelling does not compile:
    ///
    /// ```compile_fail
    /// let keys: Vec<u64> = (0..1_000).collect();
    /// let f = amq::BinaryFuse8::try_from(&keys[..]);
    /// ```
    #[doc(alias = "try_from", alias = "from_keys")]
    pub fn build(hashes: &[KeyHash]) -> Result<Self, Error> {
        Self::build_with(hashes, &FuseParams::THREE_WISE)
    }

    /// Builds a filter with the given arity. Fails only with
    /// [`Error::TooLarge`] (tables over 2^32 slots) or, after 64 seeds,
    /// [`Error::BuildFailed`], which random hashes never hit in practice.
    ///
    /// ```
    /// use amq::{BinaryFuse16, Filter};
    /// use amq::xor::{FuseArity, FuseParams};
    /// let keys: Vec<amq::KeyHash> = (0..50_000u64).map(amq::hash_u64).collect();
    /// let f = BinaryFuse16::build_with(&keys, &FuseParams::FOUR_WISE).unwrap();
    /// assert_eq!(f.arity(), FuseArity::Four);
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// ```
    pub fn build_with(hashes: &[KeyHash], params: &FuseParams) -> Result<Self, Error> {
        let hashes = crate::hash::raw(hashes);
        let arity = params.arity;
        let layout = |n| Segments::for_keys(n, arity);
        let built = match arity {
            FuseArity::Three => peel::build::<F, _, 3>(hashes, layout)?,
            FuseArity::Four => peel::build::<F, _, 4>(hashes, layout)?,
        };
        Ok(BinaryFuse {
            fingerprints: built.fingerprints,
            segments: built.geometry,
            seed: built.seed,
            shard_seeds: Vec::new(),
            num_keys: built.num_keys as u64,
        })
    }

    /// A sharded filter: `seeds.len()` tables of layout `segments`, end to
    /// end in `fingerprints`.
    pub(crate) fn from_shards(
        fingerprints: Vec<F>,
        segments: Segments,
        seeds: Vec<u64>,
        num_keys: u64,
    ) -> Self {
        BinaryFuse {
            fingerprints,
            segments,
            seed: 0,
            shard_seeds: seeds,
            num_keys,
        }
    }

    /// Whether the key with this hash may be in the set.
    ///
    /// Only the default 3-wise query of one table is inlined into the
    /// caller; the 4-wise and sharded ones are a call. With both arities
    /// inlined the function grew past what callers' inliners accept, so a
    /// query loop paid a call for every key whatever the arity (the
    /// benchmark report measured 3-wise queries 20–40% slower than the same
    /// code inlined). Any second path here, even one more call, made
    /// single-table queries at 10^6 keys 12–17% slower (inlining the sharded
    /// 3-wise query would make sharded queries at 10^8 keys 1.2–1.3× a
    /// single table's instead of 1.4–1.7×), so the sharded queries share
    /// the one call.
    #[inline(always)]
    fn query(&self, hash: u64) -> bool {
        match (self.segments.arity, self.shard_seeds.is_empty()) {
            (FuseArity::Three, true) => {
                query::contains::<F, _, _, 3>(&self.fingerprints, &self.segments, self.seed, hash)
            }
            _ => self.contains_hash_other(hash),
        }
    }

    /// The 4-wise and the sharded queries.
    #[inline(never)]
    fn contains_hash_other(&self, hash: u64) -> bool {
        fuse_query!(
            contains,
            &self.fingerprints,
            &self.segments,
            &self.shard_seeds[..],
            self.seed,
            hash
        )
    }

    /// Slots per key.
    pub fn arity(&self) -> FuseArity {
        self.segments.arity
    }

    /// Segment length `L` (a power of two).
    pub fn segment_len(&self) -> usize {
        self.segments.segment_len as usize
    }

    /// Number of start segments `c`; the table has `c + arity - 1`
    /// segments. 0 for an empty filter.
    pub fn segment_count(&self) -> usize {
        self.segments.segment_count as usize
    }

    /// Slots in the table: 0 for an empty filter.
    pub fn num_slots(&self) -> usize {
        self.fingerprints.len()
    }

    /// The seed that the successful construction attempt mixed into every
    /// key hash (0 for a sharded filter, whose shards have their own).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Tables the filter is made of: 1, or the shard count of a filter of
    /// more than [`FUSE_SHARD_KEYS`](super::FUSE_SHARD_KEYS) keys built by
    /// [`build_streamed`](Self::build_streamed).
    ///
    /// ```
    /// let keys: Vec<amq::KeyHash> = (0..100u64).map(amq::hash_u64).collect();
    /// assert_eq!(amq::BinaryFuse8::build(&keys)?.num_shards(), 1);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn num_shards(&self) -> usize {
        self.shard_seeds.len().max(1)
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let (parts, seeds, table) = parse_frame::<F>(frame)?;
        let shard_seeds = (0..seeds.count()).map(|s| seeds.seed(s)).collect();
        Ok(BinaryFuse {
            fingerprints: table.to_vec()?,
            segments: parts.segments,
            seed: parts.seed,
            shard_seeds,
            num_keys: parts.num_keys,
        })
    }
}

/// A validated binary fuse frame's parameters (its table stays in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FuseParts {
    pub(crate) seed: u64,
    pub(crate) segments: Segments,
    pub(crate) num_keys: u64,
}

/// Reads a binary fuse layout's parameters (seed, arity, segment length,
/// start segments, key count) and checks the arity and segment length; the
/// key count against the slots is the table's check. Shared by the
/// fixed-width and the packed filters.
pub(crate) fn read_parts(params: &mut Reader<'_>) -> Result<FuseParts, Error> {
    let seed = params.u64()?;
    let arity = params.u8()?;
    let segment_len = params.u32()? as u64;
    let segment_count = params.u32()? as u64;
    let num_keys = params.u64()?;
    let arity = FuseArity::from_slots(arity).ok_or(FormatError::InvalidParameters("arity must be 3 or 4"))?;
    if !segment_len.is_power_of_two() || segment_len > MAX_SEGMENT_LEN as u64 {
        return Err(
            FormatError::InvalidParameters("segment length must be a power of two up to 2^18").into(),
        );
    }
    Ok(FuseParts {
        seed,
        segments: Segments::new(arity, segment_len, segment_count),
        num_keys,
    })
}

/// Writes what [`read_parts`] reads.
pub(crate) fn write_parts(p: &mut ByteWriter, parts: &FuseParts) {
    let s = &parts.segments;
    p.u64(parts.seed)
        .u8(s.arity.slots() as u8)
        .u32(s.segment_len as u32)
        .u32(s.segment_count as u32)
        .u64(parts.num_keys);
}

/// Checks a binary fuse frame: arity, segment shape, shards, key count,
/// payload length.
pub(crate) fn parse_frame<F: FuseFingerprint>(
    mut frame: Frame<'_>,
) -> Result<(FuseParts, LeSeeds<'_>, LeTable<'_, F>), Error> {
    let parts = read_parts(&mut frame.params)?;
    let seeds = read_shards(&mut frame.params)?;
    frame.params.finish()?;
    // `segments.len()` < 2^51 (both factors came from u32s) and the shard
    // count < 2^32: the product is checked, and `check_table` refuses more
    // than 2^32 slots.
    let shards = seeds.count().max(1) as u64;
    let slots = parts
        .segments
        .len()
        .checked_mul(shards)
        .ok_or(FormatError::InvalidParameters("more than 2^32 slots"))?;
    if shards > 1 && parts.segments.len() == 0 {
        return Err(FormatError::InvalidParameters("a sharded binary fuse filter has empty shards").into());
    }
    let table = fingerprint::check_table(frame.payload, slots, parts.num_keys)?;
    Ok((parts, seeds, table))
}

impl<F: FuseFingerprint> Filter for BinaryFuse<F> {
    #[inline(always)]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.query(hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let hashes = crate::hash::raw(hashes);
        let seeds = &self.shard_seeds[..];
        fuse_query!(
            contains_many,
            &self.fingerprints,
            &self.segments,
            seeds,
            self.seed,
            hashes,
            out
        )
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let seeds = &self.shard_seeds[..];
        fuse_query!(
            prefetch_slots,
            &self.fingerprints,
            &self.segments,
            seeds,
            self.seed,
            hash.get()
        )
    }
    fn size_in_bytes(&self) -> usize {
        self.fingerprints.len() * F::BYTES
    }
    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }
    /// `2^-F`; 0 for an empty filter, which contains nothing.
    fn expected_fpr(&self) -> f64 {
        super::fingerprint_fpr::<F>(self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        F::FUSE_KIND
    }
    /// Parameters: seed (u64), arity (u8), segment length `L` (u32), start
    /// segments `c` (u32), key count (u64); for a sharded filter, then the
    /// shard count `S` (u32, at least 2) and `S` seeds (u64). Payload:
    /// `S·(c + arity - 1)·L` fingerprints (`S = 1` for a single table),
    /// little-endian.
    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        let parts = FuseParts {
            seed: self.seed,
            segments: self.segments,
            num_keys: self.num_keys,
        };
        write_parts(&mut p, &parts);
        write_shards(&mut p, &self.shard_seeds);
        format::encode(F::FUSE_KIND, &p.into_vec(), self.size_in_bytes(), |w| {
            fingerprint::write_all(w, &self.fingerprints);
        })
    }
}

impl<F: FuseFingerprint> crate::cost::CostModel for BinaryFuse<F> {
    const TRAITS: crate::cost::Traits = crate::cost::Traits {
        why_fixed_fpr: <F as super::fingerprint::sealed::Sealed>::ABOVE_TARGET,
        reason: "static, fixed FPR, fast to build; three slots per query, 1.125 slots per key",
        ..crate::cost::Traits::FIXED
    };

    /// The default 3-wise layout, what [`BinaryFuse::build`] makes.
    fn shape(n: usize, _sizing: crate::FilterSizing) -> Result<crate::cost::Shape, Error> {
        Ok(super::fingerprint_shape::<F>(slots_for(n, FuseArity::Three)?, n))
    }
}

impl<F: FuseFingerprint> StaticFilter for BinaryFuse<F> {
    type Params = FuseParams;

    fn build_with(hashes: &[KeyHash], params: &FuseParams) -> Result<Self, Error> {
        BinaryFuse::build_with(hashes, params)
    }
}

impl<F: FuseFingerprint> FromBytes for BinaryFuse<F> {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, F::FUSE_KIND)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_follows_the_paper_at_large_n() {
        let s = Segments::for_keys(1_000_000, FuseArity::Three).unwrap();
        assert_eq!(s.segment_len, 1 << 13);
        assert_eq!(s.segment_count, 136); // ceil(1.125e6 / 8192) - 2
        let s = Segments::for_keys(10_000_000, FuseArity::Three).unwrap();
        assert_eq!(s.segment_len, 1 << 15);
        let s = Segments::for_keys(1_000_000, FuseArity::Four).unwrap();
        assert_eq!(s.segment_len, 1 << 12);
        assert_eq!(segment_len(usize::MAX, FuseArity::Three), 1 << 18);
        assert_eq!(Segments::for_keys(0, FuseArity::Three).unwrap().len(), 0);
        assert_eq!(Segments::for_keys(1, FuseArity::Three).unwrap().len(), 12);
        assert_eq!(
            Segments::for_keys(usize::MAX, FuseArity::Four),
            Err(Error::TooLarge)
        );
    }

    #[test]
    fn load_bound_fixes_the_segment_step() {
        // 11,504 keys: L = 1024; the factor alone gives 12 start segments
        // (0.936 keys per start slot), the load bound 13.
        let s = Segments::for_keys(11_504, FuseArity::Three).unwrap();
        assert_eq!(s.segment_len, 1024);
        assert_eq!(s.segment_count, 13);
    }

    /// A frame with a valid checksum but the given parameters and payload.
    fn frame(arity: u8, segment_len: u32, segment_count: u32, num_keys: u64, payload: &[u8]) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(9)
            .u8(arity)
            .u32(segment_len)
            .u32(segment_count)
            .u64(num_keys);
        format::encode(FilterKind::BinaryFuse8, &p.into_vec(), payload.len(), |w| {
            w.bytes(payload);
        })
    }

    #[test]
    fn decoder_checks_every_parameter() {
        let bad = |bytes: Vec<u8>| matches!(BinaryFuse8::from_bytes(&bytes), Err(Error::Format(_)));
        // 3-wise, L = 4, c = 2: 16 slots.
        let ok = BinaryFuse8::from_bytes(&frame(3, 4, 2, 5, &[0; 16])).unwrap();
        assert_eq!((ok.num_slots(), ok.segment_len(), ok.segment_count()), (16, 4, 2));
        assert!(BinaryFuse8::from_bytes(&frame(4, 4, 2, 5, &[0; 20])).is_ok());
        assert!(bad(frame(2, 4, 2, 5, &[0; 16])), "arity 2");
        assert!(bad(frame(5, 4, 2, 5, &[0; 16])), "arity 5");
        assert!(
            bad(frame(3, 3, 2, 5, &[0; 16])),
            "segment length not a power of two"
        );
        assert!(bad(frame(3, 0, 2, 5, &[])), "segment length 0");
        assert!(
            bad(frame(3, 1 << 19, 1, 5, &[0; 3 << 19])),
            "segment length over 2^18"
        );
        assert!(bad(frame(3, 4, 2, 17, &[0; 16])), "more keys than slots");
        assert!(bad(frame(3, 4, 2, 0, &[0; 16])), "slots but no keys");
        assert!(bad(frame(3, 4, 0, 1, &[])), "keys but no slots");
        assert!(bad(frame(3, 4, 2, 5, &[0; 15])), "short payload");
        assert!(
            bad(frame(3, 1 << 18, u32::MAX, 5, &[0; 16])),
            "more than 2^32 slots"
        );
        let empty = BinaryFuse8::from_bytes(&frame(3, 1, 0, 0, &[])).unwrap();
        assert!(!empty.contains_hash(KeyHash::from_well_mixed(0)));
    }

    #[test]
    fn slots_lie_in_consecutive_segments() {
        for arity in [FuseArity::Three, FuseArity::Four] {
            let s = Segments::for_keys(50_000, arity).unwrap();
            for i in 0..10_000u64 {
                let mixed = crate::hash::remix(i, 9);
                let slots: Vec<usize> = match arity {
                    FuseArity::Three => Geometry::<3>::slots(&s, mixed).to_vec(),
                    FuseArity::Four => Geometry::<4>::slots(&s, mixed).to_vec(),
                };
                let first = slots[0] as u64 / s.segment_len;
                assert!(first < s.segment_count);
                for (i, &slot) in slots.iter().enumerate() {
                    assert_eq!(slot as u64 / s.segment_len, first + i as u64);
                    assert!((slot as u64) < s.len());
                }
            }
        }
    }

    /// Slow (run in release): at the top of every layout plateau below
    /// 20,000 keys and the first six after each segment-length step up to
    /// 3M keys, a first attempt fails for at most half of the random key
    /// sets, so 64 attempts fail with probability below 2^-64 at every size.
    /// Prints the sizes where any attempt failed.
    /// `cargo test --release -p amq --lib scan_fuse -- --ignored --nocapture`
    /// (`LOAD=10` shows the paper's layout without the load bound.)
    #[test]
    #[ignore]
    fn scan_fuse_first_attempt() {
        extern crate std;
        use std::println;
        let max_load: f64 = std::env::var("LOAD")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MAX_START_LOAD);
        let limit: usize = std::env::var("LIMIT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3_000_000);
        let trials: u64 = std::env::var("TRIALS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(30);
        let mut worst = 0;
        for arity in [FuseArity::Three, FuseArity::Four] {
            let mut prev: Option<(usize, Segments)> = None;
            let mut tops_in_plateau = 0;
            let mut last_len = 0;
            for n in 50..limit {
                let load = if arity == FuseArity::Three { max_load } else { 10.0 };
                let s = Segments::for_keys_with_load(n, arity, load).unwrap();
                if let Some((m, p)) = prev {
                    if (p.segment_len, p.segment_count) != (s.segment_len, s.segment_count) {
                        if p.segment_len != last_len {
                            last_len = p.segment_len;
                            tops_in_plateau = 0;
                        }
                        tops_in_plateau += 1;
                        if m < 20_000 || tops_in_plateau <= 6 {
                            let mut fails = 0;
                            for t in 0..trials {
                                let keys: Vec<u64> = (0..m as u64)
                                    .map(|i| crate::hash::remix(i, t * 7919 + m as u64))
                                    .collect();
                                let ok = match arity {
                                    FuseArity::Three => {
                                        peel::try_seed::<u8, _, 3>(&keys, &p, peel::attempt_seed(0))
                                            .unwrap()
                                            .is_some()
                                    }
                                    FuseArity::Four => {
                                        peel::try_seed::<u8, _, 4>(&keys, &p, peel::attempt_seed(0))
                                            .unwrap()
                                            .is_some()
                                    }
                                };
                                fails += !ok as u32;
                            }
                            worst = worst.max(fails);
                            if fails > 0 {
                                println!(
                                    "{:?} n={m} L={} c={} load={:.4} ratio={:.4} fails={fails}/{trials}",
                                    arity,
                                    p.segment_len,
                                    p.segment_count,
                                    m as f64 / p.start_slots as f64,
                                    p.len() as f64 / m as f64
                                );
                            }
                        }
                    }
                }
                prev = Some((n, s));
            }
        }
        assert!(
            worst as u64 * 2 <= trials,
            "a first attempt failed for {worst} of {trials} key sets"
        );
    }
}
