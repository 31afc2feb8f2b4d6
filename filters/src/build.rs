//! [`FilterSizing`], and [`AnyFilter::build`] / [`AnyFilter::new`] /
//! [`AnyFilter::build_streamed`]: a filter of any kind, built from a whole
//! set of key hashes in one call, empty to take inserts, or from a stream
//! of hashes in bounded memory.
//!
//! This is the one place that knows how to size and fill every kind from a
//! [`FilterKind`] chosen at run time (a storage engine's per-level filter
//! policy, say), so such a caller builds any filter without a match of its
//! own, and a new kind plugs into every such caller by being added here.

use crate::quotient::{ExpandingQuotientFilter, QuotientFilter};
use alloc::vec::Vec;

use crate::streamed::StreamedBuild;
use crate::xor::FuseParams;
use crate::{
    AnyFilter, BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error,
    FilterKind, FilterSizing, HashScheme, Insert, KeyHash, PackedBinaryFuse, Ribbon, RibbonParams,
    SplitBlockBloom, StandardBloom, Xor16, Xor8,
};

impl AnyFilter {
    /// Builds a filter of `kind` holding every hash in `hashes`, sized by
    /// `sizing` (fixed-width kinds ignore it).
    ///
    /// Duplicate hashes are allowed: static kinds remove them, and the
    /// multiset kinds (counting Bloom, cuckoo) insert each distinct hash once,
    /// so the filter's key count is the number of distinct hashes. An empty
    /// `hashes` gives an empty filter that answers `false` to everything.
    ///
    /// A cuckoo table sized for exactly the keys can, rarely, fill before the
    /// last insert; it is then rebuilt with 25% more room (a bounded number of
    /// times before [`Error::Full`]).
    ///
    /// Every kind driven by [`KeyHash`] builds. A
    /// [`ParquetBloom`](crate::ParquetBloom) is driven by Parquet's value
    /// hash, so building one from key hashes would write a filter in which
    /// every Parquet reader misses every value, and a
    /// [`GrafiteRange`](crate::range::GrafiteRange) takes ordered keys, which
    /// hashes have lost: those kinds are [`Error::WrongHashScheme`] (build
    /// them with their own types).
    ///
    /// ```
    /// use amq::{hash_u64, AnyFilter, Error, Filter, FilterKind, FilterSizing, HashScheme, KeyHash};
    /// let hashes: Vec<KeyHash> = (0..1000u64).map(hash_u64).collect();
    /// for &kind in FilterKind::ALL.iter() {
    ///     let built = AnyFilter::build(kind, &hashes, FilterSizing::Fpr(0.01));
    ///     if kind.hash_scheme() != HashScheme::Xxh3Seeded {
    ///         assert!(matches!(built, Err(Error::WrongHashScheme { .. })));
    ///         continue;
    ///     }
    ///     let f = built?;
    ///     assert_eq!(f.kind(), kind);
    ///     assert!(hashes.iter().all(|&h| f.contains_hash(h)));
    /// }
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(kind: FilterKind, hashes: &[KeyHash], sizing: FilterSizing) -> Result<AnyFilter, Error> {
        let sizing = sizing.validate()?;
        Ok(match kind {
            FilterKind::StandardBloom | FilterKind::BlockedBloom | FilterKind::SplitBlockBloom => {
                let mut f = AnyFilter::new(kind, hashes.len().max(1), sizing)?;
                f.insert_hashes(hashes)?;
                f
            }
            FilterKind::CountingBloom => {
                let distinct = distinct(hashes);
                let mut f = AnyFilter::new(kind, distinct.len().max(1), sizing)?;
                f.insert_hashes(&distinct)?;
                f
            }
            FilterKind::CuckooFilter => AnyFilter::CuckooFilter(build_cuckoo(sizing, &distinct(hashes))?),
            FilterKind::Xor8 => AnyFilter::Xor8(Xor8::build(hashes)?),
            FilterKind::Xor16 => AnyFilter::Xor16(Xor16::build(hashes)?),
            FilterKind::BinaryFuse8 => AnyFilter::BinaryFuse8(BinaryFuse8::build(hashes)?),
            FilterKind::BinaryFuse16 => AnyFilter::BinaryFuse16(BinaryFuse16::build(hashes)?),
            FilterKind::BinaryFuse32 => AnyFilter::BinaryFuse32(BinaryFuse32::build(hashes)?),
            FilterKind::Ribbon => AnyFilter::Ribbon(Ribbon::build(hashes, sizing)?),
            FilterKind::PackedBinaryFuse => {
                AnyFilter::PackedBinaryFuse(PackedBinaryFuse::build(hashes, sizing)?)
            }
            FilterKind::QuotientFilter => AnyFilter::QuotientFilter(QuotientFilter::build(hashes, sizing)?),
            FilterKind::ExpandingQuotientFilter => {
                let mut f = AnyFilter::new(kind, hashes.len().max(1), sizing)?;
                f.insert_hashes(hashes)?;
                f
            }
            FilterKind::ParquetBloom | FilterKind::GrafiteRange | FilterKind::MementoFilter => {
                return Err(not_key_hashed(kind))
            }
        })
    }

    /// Builds a filter of `kind` from a source of key hashes read a few
    /// times (`source()` yields the same hashes each time), in bounded
    /// memory and on [`StreamedBuild::threads`] threads: the kind's own
    /// `build_streamed`, for the kinds that have one ([`Ribbon`] sized by
    /// `sizing`, the binary fuse filters, [`BlockedBloom`]). The result is
    /// what [`build`](Self::build) makes from the same hashes, but for a
    /// binary fuse filter of more than
    /// [`FUSE_SHARD_KEYS`](crate::xor::FUSE_SHARD_KEYS) keys, which is
    /// sharded. Any other kind is [`Error::Unsupported`] (collect the
    /// hashes and call [`build`](Self::build)); the kinds key hashes cannot
    /// drive are [`Error::WrongHashScheme`].
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// use amq::{hash_u64, AnyFilter, Error, Filter, FilterKind, FilterSizing, KeyHash};
    /// let source = || (0..5_000u64).map(hash_u64);
    /// let keys: Vec<KeyHash> = source().collect();
    /// let options = StreamedBuild::new().with_memory(16 << 10);
    /// for kind in [FilterKind::Ribbon, FilterKind::BinaryFuse8, FilterKind::BlockedBloom] {
    ///     let f = AnyFilter::build_streamed(kind, source, FilterSizing::Fpr(0.01), &options)?;
    ///     assert_eq!(f.to_bytes(), AnyFilter::build(kind, &keys, FilterSizing::Fpr(0.01))?.to_bytes());
    /// }
    /// let cuckoo = AnyFilter::build_streamed(FilterKind::CuckooFilter, source, FilterSizing::Fpr(0.01), &options);
    /// assert!(matches!(cuckoo, Err(Error::Unsupported { .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn build_streamed<S, I>(
        kind: FilterKind,
        source: S,
        sizing: FilterSizing,
        options: &StreamedBuild,
    ) -> Result<AnyFilter, Error>
    where
        S: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        let sizing = sizing.validate()?;
        let fuse = FuseParams::THREE_WISE;
        Ok(match kind {
            FilterKind::BlockedBloom => BlockedBloom::build_streamed(source, sizing, options)?.into(),
            FilterKind::Ribbon => AnyFilter::Ribbon(Ribbon::build_streamed(
                source,
                &RibbonParams::for_sizing(sizing)?,
                options,
            )?),
            FilterKind::BinaryFuse8 => {
                AnyFilter::BinaryFuse8(BinaryFuse8::build_streamed(source, &fuse, options)?)
            }
            FilterKind::BinaryFuse16 => {
                AnyFilter::BinaryFuse16(BinaryFuse16::build_streamed(source, &fuse, options)?)
            }
            FilterKind::BinaryFuse32 => {
                AnyFilter::BinaryFuse32(BinaryFuse32::build_streamed(source, &fuse, options)?)
            }
            FilterKind::ParquetBloom | FilterKind::GrafiteRange | FilterKind::MementoFilter => {
                return Err(not_key_hashed(kind))
            }
            other => return Err(crate::error::unsupported(other, "build_streamed")),
        })
    }

    /// An empty filter of `kind` with room for `expected_keys` keys at
    /// `sizing`, to fill with [`Insert`] (which [`AnyFilter`] implements):
    /// the kind's own `new(expected_keys, sizing)`. For the kinds that take
    /// inserts: the Bloom family and cuckoo.
    ///
    /// A Bloom filter takes any number of keys, its FPR rising past
    /// `expected_keys`; a cuckoo table holds about 5% more than
    /// `expected_keys` and then refuses inserts with [`Error::Full`].
    ///
    /// Errors: a static kind (xor, binary fuse, Ribbon: built from all keys
    /// at once, see [`AnyFilter::build`]) is [`Error::Unsupported`];
    /// `expected_keys` 0 or a sizing the kind cannot meet is
    /// [`Error::InvalidParameter`].
    ///
    /// ```
    /// use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert};
    /// let mut f = AnyFilter::new(FilterKind::CuckooFilter, 1000, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"key")?;
    /// assert!(f.contains(b"key"));
    /// assert!(matches!(
    ///     AnyFilter::new(FilterKind::Ribbon, 1000, FilterSizing::Fpr(0.01)),
    ///     Err(Error::Unsupported { .. })
    /// ));
    /// # Ok::<(), Error>(())
    /// ```
    #[doc(alias = "with_capacity")]
    pub fn new(kind: FilterKind, expected_keys: usize, sizing: FilterSizing) -> Result<AnyFilter, Error> {
        let (n, sizing) = (expected_keys, sizing.validate()?);
        Ok(match kind {
            FilterKind::StandardBloom => StandardBloom::new(n, sizing)?.into(),
            FilterKind::BlockedBloom => BlockedBloom::new(n, sizing)?.into(),
            FilterKind::SplitBlockBloom => SplitBlockBloom::new(n, sizing)?.into(),
            FilterKind::CountingBloom => CountingBloom::new(n, sizing)?.into(),
            FilterKind::CuckooFilter => CuckooFilter::new(n, sizing)?.into(),
            FilterKind::QuotientFilter => QuotientFilter::new(n, sizing)?.into(),
            FilterKind::ExpandingQuotientFilter => ExpandingQuotientFilter::for_sizing(n, sizing)?.into(),
            FilterKind::ParquetBloom | FilterKind::GrafiteRange | FilterKind::MementoFilter => {
                return Err(not_key_hashed(kind))
            }
            other => return Err(crate::error::unsupported(other, "insert")),
        })
    }
}

/// What [`AnyFilter`] answers for a kind key hashes cannot drive (the
/// Parquet filter, the range filter).
fn not_key_hashed(kind: FilterKind) -> Error {
    Error::WrongHashScheme {
        expected: kind.hash_scheme(),
        found: HashScheme::Xxh3Seeded,
    }
}

/// The distinct values of `hashes`, sorted.
fn distinct(hashes: &[KeyHash]) -> Vec<KeyHash> {
    let mut v = hashes.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Rebuilds with more room this many times before giving up with `Full`.
const CUCKOO_GROWTH_ATTEMPTS: u32 = 4;

fn build_cuckoo(sizing: FilterSizing, distinct: &[KeyHash]) -> Result<CuckooFilter, Error> {
    let mut capacity = distinct.len().max(1);
    for _ in 0..CUCKOO_GROWTH_ATTEMPTS {
        let mut f = CuckooFilter::new(capacity, sizing)?;
        if f.insert_hashes(distinct).is_ok() {
            return Ok(f);
        }
        capacity = capacity.saturating_add(capacity / 4 + 1);
    }
    Err(Error::Full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{hash_u64, Filter};

    fn hashes(n: u64) -> Vec<KeyHash> {
        (0..n).map(hash_u64).collect()
    }

    #[test]
    fn every_key_hashed_kind_builds_with_both_sizings_and_empty() {
        let hs = hashes(5000);
        for &kind in FilterKind::ALL.iter() {
            if kind.hash_scheme() != HashScheme::Xxh3Seeded {
                continue;
            }
            for sizing in [FilterSizing::BitsPerKey(12.0), FilterSizing::Fpr(0.01)] {
                let f = AnyFilter::build(kind, &hs, sizing).unwrap();
                assert_eq!(f.kind(), kind);
                assert!(hs.iter().all(|&h| f.contains_hash(h)), "{kind:?} {sizing:?}");
                assert_eq!(f.num_keys(), 5000, "{kind:?}");
            }
            let empty = AnyFilter::build(kind, &[], FilterSizing::Fpr(0.01)).unwrap();
            assert_eq!(empty.num_keys(), 0, "{kind:?}");
        }
    }

    #[test]
    fn duplicates_count_once_in_multiset_kinds() {
        let mut hs = hashes(100);
        hs.extend(hashes(100));
        for kind in [
            FilterKind::CuckooFilter,
            FilterKind::CountingBloom,
            FilterKind::Ribbon,
            FilterKind::Xor8,
        ] {
            let f = AnyFilter::build(kind, &hs, FilterSizing::Fpr(0.01)).unwrap();
            assert_eq!(f.num_keys(), 100, "{kind:?}");
        }
    }

    #[test]
    fn sizing_is_followed_by_tunable_kinds() {
        let hs = hashes(20_000);
        let small = AnyFilter::build(FilterKind::BlockedBloom, &hs, FilterSizing::BitsPerKey(6.0)).unwrap();
        let big = AnyFilter::build(FilterKind::BlockedBloom, &hs, FilterSizing::BitsPerKey(16.0)).unwrap();
        assert!(small.size_in_bytes() * 2 < big.size_in_bytes());
        let cuckoo = AnyFilter::build(FilterKind::CuckooFilter, &hs, FilterSizing::BitsPerKey(13.0)).unwrap();
        assert!(matches!(&cuckoo, AnyFilter::CuckooFilter(c) if c.fingerprint_bits() == 12));
        let ribbon = AnyFilter::build(FilterKind::Ribbon, &hs, FilterSizing::Fpr(0.001)).unwrap();
        assert!(ribbon.expected_fpr() < 0.0012);
    }

    #[test]
    fn a_parquet_filter_is_never_built_from_key_hashes() {
        for hs in [hashes(100), Vec::new()] {
            assert_eq!(
                AnyFilter::build(FilterKind::ParquetBloom, &hs, FilterSizing::Fpr(0.01)),
                Err(not_key_hashed(FilterKind::ParquetBloom))
            );
        }
        assert_eq!(
            AnyFilter::new(FilterKind::ParquetBloom, 100, FilterSizing::Fpr(0.01)),
            Err(not_key_hashed(FilterKind::ParquetBloom))
        );
    }

    #[test]
    fn bad_sizing_is_a_typed_error() {
        for sizing in [
            FilterSizing::BitsPerKey(0.0),
            FilterSizing::BitsPerKey(f64::NAN),
            FilterSizing::Fpr(0.0),
            FilterSizing::Fpr(1.0),
        ] {
            assert!(matches!(
                AnyFilter::build(FilterKind::Ribbon, &hashes(3), sizing),
                Err(Error::InvalidParameter { .. })
            ));
        }
    }
}
