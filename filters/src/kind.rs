//! [`FilterKind`]: the kinds of filter there are, by the byte that names
//! each in a serialized header. The registry of ids, below every kind.

use crate::HashScheme;

/// The kind of a filter, as recorded in its serialized header.
///
/// The discriminant is the header byte; it never changes for a kind.
///
/// ```
/// use amq::FilterKind;
/// assert_eq!(FilterKind::from_id(2), Some(FilterKind::BlockedBloom));
/// assert_eq!(FilterKind::BlockedBloom.id(), 2);
/// assert_eq!(FilterKind::from_id(0), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
#[repr(u8)]
pub enum FilterKind {
    /// [`StandardBloom`](crate::StandardBloom): k probes over the whole bit array.
    StandardBloom = 1,
    /// [`BlockedBloom`](crate::BlockedBloom): all probes in one 64-byte block.
    BlockedBloom = 2,
    /// [`CountingBloom`](crate::CountingBloom): 4-bit counters, supports removal.
    CountingBloom = 3,
    /// [`CuckooFilter`](crate::CuckooFilter): 4-slot buckets, supports removal.
    CuckooFilter = 4,
    /// Xor filter with 8-bit fingerprints.
    Xor8 = 5,
    /// Xor filter with 16-bit fingerprints.
    Xor16 = 6,
    /// Binary fuse filter with 8-bit fingerprints.
    BinaryFuse8 = 7,
    /// Binary fuse filter with 16-bit fingerprints.
    BinaryFuse16 = 8,
    /// Binary fuse filter with 32-bit fingerprints.
    BinaryFuse32 = 9,
    /// Standard Ribbon filter.
    Ribbon = 10,
    /// [`ParquetBloom`](crate::ParquetBloom): Apache Parquet's split-block
    /// Bloom filter, driven by Parquet's value hash
    /// ([`HashScheme::ParquetXxh64`]), not by [`hash_key`](crate::hash_key): it has an API of
    /// its own and no place in [`AnyFilter`](crate::AnyFilter).
    ParquetBloom = 11,
    /// [`GrafiteRange`](crate::range::GrafiteRange): a range filter over
    /// ordered `u64` keys ([`HashScheme::OrderedU64`]), queried through
    /// [`RangeFilter`](crate::range::RangeFilter), with no place in
    /// [`AnyFilter`](crate::AnyFilter).
    GrafiteRange = 12,
    /// [`QuotientFilter`](crate::quotient::QuotientFilter).
    QuotientFilter = 13,
    /// [`ExpandingQuotientFilter`](crate::quotient::ExpandingQuotientFilter).
    ExpandingQuotientFilter = 14,
    /// [`MementoFilter`](crate::range::MementoFilter): a dynamic range
    /// filter over ordered `u64` keys ([`HashScheme::OrderedU64`]), like
    /// [`GrafiteRange`](FilterKind::GrafiteRange).
    MementoFilter = 15,
    /// [`SplitBlockBloom`](crate::SplitBlockBloom): eight probes, one per
    /// 32-bit word of one 256-bit block.
    SplitBlockBloom = 16,
    /// [`PackedBinaryFuse`](crate::PackedBinaryFuse): binary fuse with
    /// bit-packed fingerprints of any width from 1 to 32.
    PackedBinaryFuse = 17,
}

impl FilterKind {
    /// Every kind, in header-id order. A slice, so a new kind is not a
    /// breaking change.
    ///
    /// ```
    /// use amq::FilterKind;
    /// let all: &'static [FilterKind] = FilterKind::ALL;
    /// assert_eq!(all.first(), Some(&FilterKind::StandardBloom));
    /// assert!(FilterKind::ALL.iter().all(|k| FilterKind::from_id(k.id()) == Some(*k)));
    /// ```
    pub const ALL: &'static [FilterKind] = &[
        FilterKind::StandardBloom,
        FilterKind::BlockedBloom,
        FilterKind::CountingBloom,
        FilterKind::CuckooFilter,
        FilterKind::Xor8,
        FilterKind::Xor16,
        FilterKind::BinaryFuse8,
        FilterKind::BinaryFuse16,
        FilterKind::BinaryFuse32,
        FilterKind::Ribbon,
        FilterKind::ParquetBloom,
        FilterKind::GrafiteRange,
        FilterKind::QuotientFilter,
        FilterKind::ExpandingQuotientFilter,
        FilterKind::MementoFilter,
        FilterKind::SplitBlockBloom,
        FilterKind::PackedBinaryFuse,
    ];

    /// The hash scheme that drives filters of this kind, as their headers
    /// record it: [`KeyHash`](crate::KeyHash) ([`HashScheme::Xxh3Seeded`]) for every kind but
    /// [`ParquetBloom`](FilterKind::ParquetBloom), which takes Parquet's value
    /// hash, and the range filters [`GrafiteRange`](FilterKind::GrafiteRange)
    /// and [`MementoFilter`](FilterKind::MementoFilter), which take the keys
    /// themselves as ordered `u64`s. Code that builds filters from key
    /// hashes (a storage engine's filter policy) can only use kinds whose
    /// scheme is `Xxh3Seeded`; [`AnyFilter::build`](crate::AnyFilter::build)
    /// refuses the others.
    ///
    /// ```
    /// use amq::{FilterKind, HashScheme};
    /// assert_eq!(FilterKind::Ribbon.hash_scheme(), HashScheme::Xxh3Seeded);
    /// assert_eq!(FilterKind::ParquetBloom.hash_scheme(), HashScheme::ParquetXxh64);
    /// assert_eq!(FilterKind::GrafiteRange.hash_scheme(), HashScheme::OrderedU64);
    /// let key_hashed = FilterKind::ALL
    ///     .iter()
    ///     .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded)
    ///     .count();
    /// assert_eq!(key_hashed, FilterKind::ALL.len() - 3);
    /// ```
    pub const fn hash_scheme(self) -> HashScheme {
        match self {
            FilterKind::ParquetBloom => HashScheme::ParquetXxh64,
            FilterKind::GrafiteRange | FilterKind::MementoFilter => HashScheme::OrderedU64,
            _ => HashScheme::Xxh3Seeded,
        }
    }

    /// The first format version with this kind: frames of an older
    /// version holding it are refused (no build ever wrote them).
    pub(crate) const fn first_version(self) -> u16 {
        match self {
            FilterKind::GrafiteRange
            | FilterKind::QuotientFilter
            | FilterKind::ExpandingQuotientFilter
            | FilterKind::MementoFilter
            | FilterKind::SplitBlockBloom
            | FilterKind::PackedBinaryFuse => 2,
            _ => 1,
        }
    }

    /// The header byte for this kind.
    pub const fn id(self) -> u8 {
        self as u8
    }

    /// The kind a header byte names, if this version knows it.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.id() == id)
    }
}
