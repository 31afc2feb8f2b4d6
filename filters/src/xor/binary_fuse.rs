//! The binary fuse filter (Graf & Lemire 2022, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters", ACM JEA 27): an xor filter whose slots are
//! *spatially coupled*, which lowers the peeling threshold to the
//! orientability threshold and so brings the table to 1.125 (3-wise) or
//! 1.075 (4-wise) slots per key.
//!
//! The slot layout, the bits a key's slots come from and the sizing are
//! `segments.rs`; the fields of a sharded table, `shard_layout.rs`.
//!
//! An `F`-bit filter takes about `1.125·F` bits per key (9.0 for
//! `BinaryFuse8`) at a million keys or more, a little more for smaller sets,
//! and 4-wise about `1.075·F`. Queries read 3 (or 4) slots, usually within a
//! few segments of each other.

use alloc::vec::Vec;

use super::fingerprint::{self, Fingerprint, LeTable};
use super::peel;
use super::query;
use super::segments::{slots_for, FuseArity, Segments, MAX_SEGMENT_LEN};
use super::shard_layout::{fuse_query, read_shards, write_shards, LeSeeds, ShardSeeds};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::{Error, Filter, FilterKind, FormatError, FromBytes, KeyHash, StaticFilter};

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
}
