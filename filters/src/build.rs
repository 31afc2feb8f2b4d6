//! [`AnyFilter::build`]: a filter of any kind, built from a whole set of key
//! hashes in one call; [`AnyFilter::with_capacity`]: an empty one of any
//! kind that takes inserts.
//!
//! This is the one place that knows how to size and fill every kind, so a
//! caller that only holds a [`FilterKind`] chosen at run time (a storage
//! engine's per-level filter policy, say) builds any filter without a match of
//! its own, and a new kind plugs into every such caller by being added here.

use alloc::vec::Vec;

use crate::cuckoo::{fingerprint_bits_for_budget, fingerprint_bits_for_fpr, FINGERPRINT_BITS};
use crate::{
    AnyFilter, BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error,
    FilterKind, HashScheme, Insert, ParquetBloom, Ribbon, RibbonParams, StandardBloom, StaticFilter, Xor16,
    Xor8,
};

/// How big a filter built by [`AnyFilter::build`] should be.
///
/// Kinds whose size is tunable (the Bloom family, cuckoo, Ribbon) follow it.
/// Xor and binary fuse filters have a fixed fingerprint width (8, 16 or 32
/// bits), which alone sets their space and false-positive rate, so they
/// ignore it.
///
/// ```
/// use amq::FilterSizing;
/// assert!(FilterSizing::BitsPerKey(10.0).validate().is_ok());
/// assert!(FilterSizing::Fpr(0.01).validate().is_ok());
/// assert!(FilterSizing::Fpr(1.5).validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FilterSizing {
    /// About this many bits of filter per key.
    BitsPerKey(f64),
    /// A target false-positive rate in `(0, 1)`.
    Fpr(f64),
}

impl FilterSizing {
    /// Checks the number is in its domain: bits/key in `(0, 1000]`, an FPR in
    /// `(0, 1)`. Each kind may narrow the domain further when it builds.
    pub fn validate(self) -> Result<Self, Error> {
        match self {
            FilterSizing::BitsPerKey(b) if b > 0.0 && b <= 1000.0 => Ok(self),
            FilterSizing::BitsPerKey(_) => Err(Error::InvalidParameter {
                name: "bits_per_key",
                reason: "must be in (0, 1000]",
            }),
            FilterSizing::Fpr(p) if p > 0.0 && p < 1.0 => Ok(self),
            FilterSizing::Fpr(_) => Err(Error::InvalidParameter {
                name: "fpr",
                reason: "must be strictly between 0 and 1",
            }),
        }
    }
}

impl AnyFilter {
    /// Builds a filter of `kind` holding every hash in `hashes` (values of
    /// [`hash_key`](crate::hash_key)), sized by `sizing`.
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
    /// Every kind driven by [`hash_key`](crate::hash_key) builds. A
    /// [`ParquetBloom`](crate::ParquetBloom) is driven by Parquet's value
    /// hash, so building one from amq key hashes would write a filter in
    /// which every Parquet reader misses every value: that kind is
    /// [`Error::WrongHashScheme`] (build it with `ParquetBloom` itself).
    ///
    /// ```
    /// use amq::{hash_key, AnyFilter, Error, Filter, FilterKind, FilterSizing, HashScheme};
    /// let hashes: Vec<u64> = (0..1000u32).map(|i| hash_key(&i.to_le_bytes())).collect();
    /// for &kind in FilterKind::ALL.iter() {
    ///     let built = AnyFilter::build(kind, FilterSizing::Fpr(0.01), &hashes);
    ///     if kind.hash_scheme() != HashScheme::Xxh3Seeded {
    ///         assert!(matches!(built, Err(Error::WrongHashScheme { .. })));
    ///         continue;
    ///     }
    ///     let f = built.unwrap();
    ///     assert_eq!(f.kind(), kind);
    ///     assert!(hashes.iter().all(|&h| f.contains_hash(h)));
    /// }
    /// ```
    pub fn build(kind: FilterKind, sizing: FilterSizing, hashes: &[u64]) -> Result<AnyFilter, Error> {
        let sizing = sizing.validate()?;
        Ok(match kind {
            FilterKind::StandardBloom | FilterKind::BlockedBloom => {
                let mut f = AnyFilter::with_capacity(kind, sizing, hashes.len().max(1))?;
                fill(&mut f, hashes)?;
                f
            }
            FilterKind::CountingBloom => {
                let distinct = distinct(hashes);
                let mut f = AnyFilter::with_capacity(kind, sizing, distinct.len().max(1))?;
                fill(&mut f, &distinct)?;
                f
            }
            FilterKind::Cuckoo => AnyFilter::Cuckoo(build_cuckoo(sizing, &distinct(hashes))?),
            FilterKind::Xor8 => AnyFilter::Xor8(Xor8::build(hashes)?),
            FilterKind::Xor16 => AnyFilter::Xor16(Xor16::build(hashes)?),
            FilterKind::BinaryFuse8 => AnyFilter::BinaryFuse8(BinaryFuse8::build(hashes)?),
            FilterKind::BinaryFuse16 => AnyFilter::BinaryFuse16(BinaryFuse16::build(hashes)?),
            FilterKind::BinaryFuse32 => AnyFilter::BinaryFuse32(BinaryFuse32::build(hashes)?),
            FilterKind::Ribbon => {
                AnyFilter::Ribbon(<Ribbon as StaticFilter>::build(hashes, &ribbon_params(sizing)?)?)
            }
            FilterKind::ParquetBloom => {
                return Err(Error::WrongHashScheme {
                    expected: HashScheme::ParquetXxh64,
                    found: HashScheme::Xxh3Seeded,
                })
            }
        })
    }

    /// An empty filter of `kind` with room for `expected_keys` keys at
    /// `sizing`, to fill with [`Insert`](crate::Insert) (which [`AnyFilter`]
    /// implements). For the kinds that take inserts: the Bloom family and
    /// cuckoo.
    ///
    /// A Bloom filter takes any number of keys, its FPR rising past
    /// `expected_keys`; a cuckoo table holds about 5% more than
    /// `expected_keys` and then refuses inserts with [`Error::Full`].
    ///
    /// Errors: a static kind (xor, binary fuse, Ribbon: built from all keys
    /// at once, see [`AnyFilter::build`]) or `expected_keys` 0 is an
    /// [`Error::InvalidParameter`], as is a sizing the kind cannot meet.
    ///
    /// ```
    /// use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert};
    /// let mut f = AnyFilter::with_capacity(FilterKind::Cuckoo, FilterSizing::Fpr(0.01), 1000)?;
    /// f.insert(b"key")?;
    /// assert!(f.contains(b"key"));
    /// assert!(matches!(
    ///     AnyFilter::with_capacity(FilterKind::Ribbon, FilterSizing::Fpr(0.01), 1000),
    ///     Err(Error::InvalidParameter { .. })
    /// ));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn with_capacity(
        kind: FilterKind,
        sizing: FilterSizing,
        expected_keys: usize,
    ) -> Result<AnyFilter, Error> {
        let sizing = sizing.validate()?;
        let n = expected_keys;
        Ok(match (kind, sizing) {
            (FilterKind::StandardBloom, FilterSizing::BitsPerKey(b)) => {
                AnyFilter::StandardBloom(StandardBloom::with_bits_per_key(n, b)?)
            }
            (FilterKind::StandardBloom, FilterSizing::Fpr(p)) => {
                AnyFilter::StandardBloom(StandardBloom::with_fpr(n, p)?)
            }
            (FilterKind::BlockedBloom, FilterSizing::BitsPerKey(b)) => {
                AnyFilter::BlockedBloom(BlockedBloom::with_bits_per_key(n, b)?)
            }
            (FilterKind::BlockedBloom, FilterSizing::Fpr(p)) => {
                AnyFilter::BlockedBloom(BlockedBloom::with_fpr(n, p)?)
            }
            // Each counter is 4 bits, so b bits per key is b/4 counters.
            (FilterKind::CountingBloom, FilterSizing::BitsPerKey(b)) => {
                AnyFilter::CountingBloom(CountingBloom::with_counters_per_key(n, b / 4.0)?)
            }
            (FilterKind::CountingBloom, FilterSizing::Fpr(p)) => {
                AnyFilter::CountingBloom(CountingBloom::with_fpr(n, p)?)
            }
            // Empty, so no hash scheme is mixed yet: its inserts hash with
            // Parquet's XXH64 (`Insert::insert`), or take XXH64 values.
            (FilterKind::ParquetBloom, FilterSizing::BitsPerKey(b)) => {
                AnyFilter::ParquetBloom(ParquetBloom::with_bits_per_key(n, b)?)
            }
            (FilterKind::ParquetBloom, FilterSizing::Fpr(p)) => {
                AnyFilter::ParquetBloom(ParquetBloom::with_fpr(n, p)?)
            }
            (FilterKind::Cuckoo, _) => AnyFilter::Cuckoo(CuckooFilter::with_fingerprint_bits(
                n,
                cuckoo_fingerprint_bits(sizing)?,
            )?),
            (
                FilterKind::Xor8
                | FilterKind::Xor16
                | FilterKind::BinaryFuse8
                | FilterKind::BinaryFuse16
                | FilterKind::BinaryFuse32
                | FilterKind::Ribbon,
                _,
            ) => return Err(NOT_INSERTABLE),
        })
    }
}

/// Inserts every hash, matching on the kind once rather than per key (a
/// Bloom insert cannot fail, so its loop needs no `Result` either).
fn fill(f: &mut AnyFilter, hashes: &[u64]) -> Result<(), Error> {
    match f {
        AnyFilter::StandardBloom(f) => hashes.iter().for_each(|&h| f.insert_hash(h)),
        AnyFilter::BlockedBloom(f) => f.insert_many(hashes),
        AnyFilter::CountingBloom(f) => hashes.iter().for_each(|&h| f.insert_hash(h)),
        other => hashes.iter().try_for_each(|&h| other.insert_hash(h))?,
    }
    Ok(())
}

/// The error of [`AnyFilter::with_capacity`] for a static kind.
const NOT_INSERTABLE: Error = Error::InvalidParameter {
    name: "kind",
    reason: "a static filter takes no inserts: build it from all its keys with AnyFilter::build",
};

/// The Ribbon parameters for `sizing`.
pub(crate) fn ribbon_params(sizing: FilterSizing) -> Result<RibbonParams, Error> {
    match sizing {
        FilterSizing::BitsPerKey(b) => RibbonParams::with_bits_per_key(b),
        FilterSizing::Fpr(p) => RibbonParams::with_fpr(p),
    }
}

/// The cuckoo fingerprint width for `sizing`: the narrowest that meets an
/// FPR; for bits per key, the widest whose cost at the design load
/// (`f / 0.95` bits per key) fits, or the narrowest if none does.
pub(crate) fn cuckoo_fingerprint_bits(sizing: FilterSizing) -> Result<u32, Error> {
    match sizing {
        FilterSizing::BitsPerKey(b) => Ok(fingerprint_bits_for_budget(b).unwrap_or(FINGERPRINT_BITS[0])),
        FilterSizing::Fpr(p) => fingerprint_bits_for_fpr(p),
    }
}

/// The distinct values of `hashes`, sorted.
fn distinct(hashes: &[u64]) -> Vec<u64> {
    let mut v = hashes.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Rebuilds with more room this many times before giving up with `Full`.
const CUCKOO_GROWTH_ATTEMPTS: u32 = 4;

fn build_cuckoo(sizing: FilterSizing, distinct: &[u64]) -> Result<CuckooFilter, Error> {
    let bits = cuckoo_fingerprint_bits(sizing)?;
    let mut capacity = distinct.len().max(1);
    for _ in 0..CUCKOO_GROWTH_ATTEMPTS {
        let mut f = CuckooFilter::with_fingerprint_bits(capacity, bits)?;
        if distinct.iter().all(|&h| f.insert_hash(h).is_ok()) {
            return Ok(f);
        }
        capacity = capacity.saturating_add(capacity / 4 + 1);
    }
    Err(Error::Full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{hash_key, Filter};

    fn hashes(n: u32) -> Vec<u64> {
        (0..n).map(|i| hash_key(&i.to_le_bytes())).collect()
    }

    #[test]
    fn every_key_hashed_kind_builds_with_both_sizings_and_empty() {
        let hs = hashes(5000);
        for &kind in FilterKind::ALL.iter() {
            if kind.hash_scheme() != HashScheme::Xxh3Seeded {
                continue;
            }
            for sizing in [FilterSizing::BitsPerKey(12.0), FilterSizing::Fpr(0.01)] {
                let f = AnyFilter::build(kind, sizing, &hs).unwrap();
                assert_eq!(f.kind(), kind);
                assert!(hs.iter().all(|&h| f.contains_hash(h)), "{kind:?} {sizing:?}");
                assert_eq!(f.num_keys(), 5000, "{kind:?}");
            }
            let empty = AnyFilter::build(kind, FilterSizing::Fpr(0.01), &[]).unwrap();
            assert_eq!(empty.num_keys(), 0, "{kind:?}");
        }
    }

    #[test]
    fn duplicates_count_once_in_multiset_kinds() {
        let mut hs = hashes(100);
        hs.extend(hashes(100));
        for kind in [
            FilterKind::Cuckoo,
            FilterKind::CountingBloom,
            FilterKind::Ribbon,
            FilterKind::Xor8,
        ] {
            let f = AnyFilter::build(kind, FilterSizing::Fpr(0.01), &hs).unwrap();
            assert_eq!(f.num_keys(), 100, "{kind:?}");
        }
    }

    #[test]
    fn sizing_is_followed_by_tunable_kinds() {
        let hs = hashes(20_000);
        let small = AnyFilter::build(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(6.0), &hs).unwrap();
        let big = AnyFilter::build(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(16.0), &hs).unwrap();
        assert!(small.size_in_bytes() * 2 < big.size_in_bytes());
        let cuckoo = AnyFilter::build(FilterKind::Cuckoo, FilterSizing::BitsPerKey(13.0), &hs).unwrap();
        assert!(matches!(&cuckoo, AnyFilter::Cuckoo(c) if c.fingerprint_bits() == 12));
        let ribbon = AnyFilter::build(FilterKind::Ribbon, FilterSizing::Fpr(0.001), &hs).unwrap();
        assert!(ribbon.expected_fpr() < 0.0012);
    }

    #[test]
    fn a_parquet_filter_is_never_built_from_key_hashes() {
        for hs in [hashes(100), Vec::new()] {
            assert_eq!(
                AnyFilter::build(FilterKind::ParquetBloom, FilterSizing::Fpr(0.01), &hs),
                Err(Error::WrongHashScheme {
                    expected: HashScheme::ParquetXxh64,
                    found: HashScheme::Xxh3Seeded
                })
            );
        }
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
                AnyFilter::build(FilterKind::Ribbon, sizing, &[1, 2, 3]),
                Err(Error::InvalidParameter { .. })
            ));
        }
    }
}
