//! [`AnyFilter`]: one type for a filter of any kind driven by amq's
//! [`KeyHash`], read back from bytes by dispatching on the header's kind
//! byte, and probed with a [`PreparedHash`] shared by many filters.
//!
//! This module sits above the kinds: it names each of them, and no kind
//! names it.

use alloc::vec::Vec;

use crate::error::unsupported;
use crate::format;
use crate::quotient::{ExpandingQuotientFilter, QuotientFilter};
use crate::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error, Filter,
    FilterKind, FromBytes, HashScheme, Insert, KeyHash, PackedBinaryFuse, PreparedHash, Remove, Ribbon,
    SplitBlockBloom, StandardBloom, Xor16, Xor8,
};

/// A filter of any kind driven by amq's [`KeyHash`]. Decode one with
/// [`AnyFilter::from_bytes`] when the kind is only known from the bytes (an
/// SSTable's filter block, say); build one with [`AnyFilter::build`] or
/// [`AnyFilter::new`] when the kind is chosen at run time; wrap a filter of
/// a known kind with `From`.
///
/// [`ParquetBloom`](crate::ParquetBloom) is not among the kinds: it is
/// driven by Parquet's value hash, so decoding its bytes here is
/// [`Error::WrongHashScheme`]; so is the range filter
/// [`GrafiteRange`](crate::range::GrafiteRange), which takes ordered keys.
///
/// ```
/// use amq::{AnyFilter, BlockedBloom, Filter, FilterKind, FilterSizing, Insert};
/// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"key")?;
/// let any = AnyFilter::from_bytes(&f.to_bytes())?;
/// assert_eq!(any.kind(), FilterKind::BlockedBloom);
/// assert!(any.contains(b"key"));
/// assert_eq!(any, AnyFilter::from(f));
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AnyFilter {
    /// A [`StandardBloom`].
    StandardBloom(StandardBloom),
    /// A [`BlockedBloom`].
    BlockedBloom(BlockedBloom),
    /// A [`CountingBloom`].
    CountingBloom(CountingBloom),
    /// A [`CuckooFilter`].
    CuckooFilter(CuckooFilter),
    /// A [`Ribbon`].
    Ribbon(Ribbon),
    /// An [`Xor8`].
    Xor8(Xor8),
    /// An [`Xor16`].
    Xor16(Xor16),
    /// A [`BinaryFuse8`].
    BinaryFuse8(BinaryFuse8),
    /// A [`BinaryFuse16`].
    BinaryFuse16(BinaryFuse16),
    /// A [`BinaryFuse32`].
    BinaryFuse32(BinaryFuse32),
    /// A [`QuotientFilter`].
    QuotientFilter(QuotientFilter),
    /// An [`ExpandingQuotientFilter`].
    ExpandingQuotientFilter(ExpandingQuotientFilter),
    /// A [`SplitBlockBloom`].
    SplitBlockBloom(SplitBlockBloom),
    /// A [`PackedBinaryFuse`].
    PackedBinaryFuse(PackedBinaryFuse),
}

/// The variant of every kind, once: `dispatch!` (every variant's filter
/// bound to one name), `From<Kind> for AnyFilter`, and the decoder.
/// (`$d` is a `$`, so the inner macro can have metavariables of its own.)
macro_rules! kinds {
    ($d:tt; $($kind:ident),* $(,)?) => {
        /// Calls `$body` with `$f` bound to the inner filter of every variant.
        macro_rules! dispatch {
            ($d this:expr, $d f:ident => $d body:expr) => {
                match $d this {
                    $(AnyFilter::$kind($d f) => $d body,)*
                }
            };
        }

        $(
            impl From<$kind> for AnyFilter {
                /// The filter, as an [`AnyFilter`].
                #[inline]
                fn from(f: $kind) -> AnyFilter {
                    AnyFilter::$kind(f)
                }
            }
        )*

        impl AnyFilter {
            /// Decodes a filter of whatever kind the header names.
            ///
            /// Errors: those of each kind's decoder, and
            /// [`Error::WrongHashScheme`] for a
            /// [`ParquetBloom`](crate::ParquetBloom) frame (decode it with
            /// `ParquetBloom::from_bytes`) or a
            /// [`GrafiteRange`](crate::range::GrafiteRange) or
            /// [`MementoFilter`](crate::range::MementoFilter) frame, a range
            /// filter over ordered keys (decode it with its own
            /// `from_bytes`).
            ///
            /// ```
            /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
            /// use amq::{AnyFilter, Error, FilterSizing, HashScheme, ParquetBloom};
            /// let p = ParquetBloom::new(10, FilterSizing::Fpr(0.01))?;
            /// assert!(matches!(AnyFilter::from_bytes(&p.to_bytes()), Err(Error::WrongHashScheme { .. })));
            /// let r = GrafiteRange::build(&[1, 2, 3], RangeSizing::BitsPerKey(12.0))?;
            /// assert_eq!(
            ///     AnyFilter::from_bytes(&r.to_bytes()),
            ///     Err(Error::WrongHashScheme { expected: HashScheme::Xxh3Seeded, found: HashScheme::OrderedU64 })
            /// );
            /// # Ok::<(), amq::Error>(())
            /// ```
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
                let frame = format::decode(bytes)?;
                match frame.kind {
                    $(FilterKind::$kind => Ok(AnyFilter::$kind($kind::from_frame(frame)?)),)*
                    FilterKind::ParquetBloom | FilterKind::GrafiteRange | FilterKind::MementoFilter => Err(Error::WrongHashScheme {
                        expected: HashScheme::Xxh3Seeded,
                        found: frame.scheme,
                    }),
                }
            }
        }
    };
}

kinds!(
    $;
    StandardBloom,
    BlockedBloom,
    CountingBloom,
    CuckooFilter,
    Ribbon,
    Xor8,
    Xor16,
    BinaryFuse8,
    BinaryFuse16,
    BinaryFuse32,
    QuotientFilter,
    ExpandingQuotientFilter,
    SplitBlockBloom,
    PackedBinaryFuse,
);

impl AnyFilter {
    /// The inner filter as a trait object.
    ///
    /// ```
    /// use amq::{AnyFilter, Filter, FilterKind, FilterSizing};
    /// let f = AnyFilter::new(FilterKind::CuckooFilter, 100, FilterSizing::Fpr(0.01))?;
    /// assert_eq!(f.as_filter().kind(), FilterKind::CuckooFilter);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn as_filter(&self) -> &dyn Filter {
        dispatch!(self, f => f)
    }

    /// `self.contains_hash(key.hash())`, from what `key` has prepared (and
    /// preparing what this filter needs, for the next one): a blocked Bloom
    /// filter tests the probe mask `key` keeps, a two-line Ribbon filter
    /// reads the key's row in place, and other kinds answer from the hash.
    /// See [`PreparedHash`].
    ///
    /// ```
    /// use amq::{AnyFilter, BlockedBloom, FilterSizing, Insert, PreparedHash};
    /// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// let f = AnyFilter::from(f);
    /// assert!(f.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        match self {
            AnyFilter::BlockedBloom(f) => f.contains_prepared(key),
            AnyFilter::Ribbon(f) => f.contains_in_walk(key.hash()),
            other => other.contains_hash(key.hash()),
        }
    }

    /// Inserts the key with this hash and says whether it was (probably)
    /// there already: the Bloom kinds' own `check_and_insert_hash` (one
    /// probe), else a query and an insert of the same slots (the second in
    /// cache). [`Error::Unsupported`] for a static kind, and each kind's
    /// insert errors ([`Error::Full`]: nothing changed).
    ///
    /// ```
    /// use amq::{hash_u64, AnyFilter, FilterKind, FilterSizing};
    /// let mut seen = AnyFilter::new(FilterKind::QuotientFilter, 1_000, FilterSizing::Fpr(0.01))?;
    /// let ids = [7u64, 8, 7, 9, 8];
    /// let mut new = Vec::new();
    /// for id in ids {
    ///     if !seen.check_and_insert_hash(hash_u64(id))? {
    ///         new.push(id);
    ///     }
    /// }
    /// assert_eq!(new, [7, 8, 9]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    pub fn check_and_insert_hash(&mut self, hash: KeyHash) -> Result<bool, Error> {
        match self {
            AnyFilter::StandardBloom(f) => Ok(f.check_and_insert_hash(hash)),
            AnyFilter::BlockedBloom(f) => Ok(f.check_and_insert_hash(hash)),
            AnyFilter::CountingBloom(f) => Ok(f.check_and_insert_hash(hash)),
            AnyFilter::QuotientFilter(f) => f.check_and_insert_hash(hash),
            AnyFilter::ExpandingQuotientFilter(f) => f.check_and_insert_hash(hash),
            other => {
                let was = other.contains_hash(hash);
                other.insert_hash(hash)?;
                Ok(was)
            }
        }
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)).
    ///
    /// ```
    /// use amq::{AnyFilter, FilterKind, FilterSizing};
    /// let mut seen = AnyFilter::new(FilterKind::CuckooFilter, 1_000, FilterSizing::Fpr(0.01))?;
    /// assert!(!seen.check_and_insert(b"a")? && seen.check_and_insert(b"a")?);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    pub fn check_and_insert(&mut self, key: &[u8]) -> Result<bool, Error> {
        self.check_and_insert_hash(crate::hash_key(key))
    }
}

impl FromBytes for AnyFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        AnyFilter::from_bytes(bytes)
    }
}

impl Filter for AnyFilter {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        dispatch!(self, f => f.contains_hash(hash))
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        dispatch!(self, f => f.contains(key))
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        dispatch!(self, f => f.contains_hashes(hashes, out))
    }
    /// Matches on the kind once for the whole batch.
    fn contains_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        dispatch!(self, f => f.contains_keys(keys, out))
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        dispatch!(self, f => f.prefetch_hash(hash))
    }
    fn size_in_bytes(&self) -> usize {
        dispatch!(self, f => f.size_in_bytes())
    }
    fn num_keys(&self) -> usize {
        dispatch!(self, f => f.num_keys())
    }
    fn expected_fpr(&self) -> f64 {
        dispatch!(self, f => f.expected_fpr())
    }
    fn kind(&self) -> FilterKind {
        dispatch!(self, f => f.kind())
    }
    fn to_bytes(&self) -> Vec<u8> {
        dispatch!(self, f => f.to_bytes())
    }
}

/// Forwards to the kinds that take inserts (the Bloom family and cuckoo);
/// the static kinds return [`Error::Unsupported`] and stay unchanged.
///
/// ```
/// use amq::{hash_u64, AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert};
/// let mut f = AnyFilter::new(FilterKind::BlockedBloom, 100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"k")?;
/// assert!(f.contains(b"k"));
/// let mut x = AnyFilter::build(FilterKind::Xor8, &[1, 2, 3].map(hash_u64), FilterSizing::Fpr(0.01))?;
/// assert!(matches!(x.insert(b"k"), Err(Error::Unsupported { .. })));
/// # Ok::<(), Error>(())
/// ```
impl Insert for AnyFilter {
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        match self {
            AnyFilter::StandardBloom(f) => f.insert_hash(hash),
            AnyFilter::BlockedBloom(f) => f.insert_hash(hash),
            AnyFilter::CountingBloom(f) => f.insert_hash(hash),
            AnyFilter::CuckooFilter(f) => f.insert_hash(hash),
            AnyFilter::QuotientFilter(f) => f.insert_hash(hash),
            AnyFilter::ExpandingQuotientFilter(f) => f.insert_hash(hash),
            AnyFilter::SplitBlockBloom(f) => f.insert_hash(hash),
            other => Err(unsupported(other.kind(), "insert")),
        }
    }

    /// Matches on the kind once for the whole batch.
    fn insert_hashes(&mut self, hashes: &[KeyHash]) -> Result<(), Error> {
        match self {
            AnyFilter::StandardBloom(f) => f.insert_hashes(hashes),
            AnyFilter::BlockedBloom(f) => f.insert_hashes(hashes),
            AnyFilter::CountingBloom(f) => f.insert_hashes(hashes),
            AnyFilter::CuckooFilter(f) => f.insert_hashes(hashes),
            AnyFilter::QuotientFilter(f) => f.insert_hashes(hashes),
            AnyFilter::ExpandingQuotientFilter(f) => f.insert_hashes(hashes),
            AnyFilter::SplitBlockBloom(f) => f.insert_hashes(hashes),
            other => Err(unsupported(other.kind(), "insert")),
        }
    }
}

/// Forwards to the kinds that forget keys (counting Bloom, cuckoo and the
/// quotient filters); the others return [`Error::Unsupported`] and stay
/// unchanged.
///
/// ```
/// use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert, Remove};
/// let mut f = AnyFilter::new(FilterKind::CuckooFilter, 100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"k")?;
/// f.remove(b"k")?;
/// assert!(!f.contains(b"k"));
/// let mut b = AnyFilter::new(FilterKind::StandardBloom, 100, FilterSizing::Fpr(0.01))?;
/// b.insert(b"k")?;
/// assert!(matches!(b.remove(b"k"), Err(Error::Unsupported { .. })));
/// # Ok::<(), Error>(())
/// ```
impl Remove for AnyFilter {
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        match self {
            AnyFilter::CountingBloom(f) => f.remove_hash(hash),
            AnyFilter::CuckooFilter(f) => f.remove_hash(hash),
            AnyFilter::QuotientFilter(f) => f.remove_hash(hash),
            AnyFilter::ExpandingQuotientFilter(f) => f.remove_hash(hash),
            other => Err(unsupported(other.kind(), "remove")),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::FilterSizing;

    /// The kinds `AnyFilter` holds: those driven by amq's key hash.
    fn key_hashed_kinds() -> usize {
        FilterKind::ALL
            .iter()
            .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded)
            .count()
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 48,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0001),
            ..ProptestConfig::default()
        })]

        /// One prepared hash walks filters of every kind, sizes and probe
        /// counts (so its blocked mask is rebuilt and reused in turn) and
        /// answers exactly as `contains_hash` does, for keys the filters hold
        /// (never a false negative) and for keys they do not (where the
        /// answer must be `false` as often as the query's is, or a prepared
        /// path that answers "maybe" to everything would pass).
        #[test]
        fn prepared_answers_as_contains_hash(
            keys in proptest::collection::hash_set(any::<u64>(), 1..300),
            probes in proptest::collection::vec(any::<u64>(), 50..200),
            fprs in proptest::collection::vec(prop::sample::select(vec![0.2, 0.05, 0.01, 1.0 / 128.0, 0.001]), 1..6),
        ) {
            let hashes: Vec<KeyHash> = keys.into_iter().map(crate::hash_u64).collect();
            let mut filters = Vec::new();
            for (i, &fpr) in fprs.iter().enumerate() {
                // A prefix of the keys per filter: filters of different sizes.
                let part = &hashes[..(hashes.len() * (i + 1) / fprs.len()).max(1)];
                for &kind in FilterKind::ALL {
                    if let Ok(f) = AnyFilter::build(kind, part, FilterSizing::Fpr(fpr)) {
                        filters.push((f, part));
                    }
                }
            }
            prop_assert!(filters.len() >= fprs.len() * key_hashed_kinds());
            let mut negatives = 0usize;
            let absent: Vec<KeyHash> = probes.into_iter().map(|p| crate::hash_u64(p ^ 0x8000_0000_0000_0000)).collect();
            for &h in absent.iter().chain(&hashes) {
                let mut key = PreparedHash::new(h);
                for (f, part) in &filters {
                    f.prefetch_hash(h); // a hint: never panics, changes nothing
                    let answer = f.contains_prepared(&mut key);
                    prop_assert_eq!(answer, f.contains_hash(h), "{:?}", f.kind());
                    if part.contains(&h) {
                        prop_assert!(answer, "false negative through a prepared hash");
                    }
                    negatives += usize::from(!answer);
                }
            }
            // Most absent probes are negatives in every filter.
            prop_assert!(negatives >= absent.len() * filters.len() / 2, "{} negatives", negatives);
        }
    }

    /// Prefetching and prepared probes on filters built from no keys (the
    /// empty table slices every kind guards) neither panic nor find keys.
    #[test]
    fn empty_filters_prefetch_and_answer_absent() {
        let mut built = 0;
        for &kind in FilterKind::ALL {
            let Ok(f) = AnyFilter::build(kind, &[], FilterSizing::Fpr(0.01)) else {
                continue;
            };
            built += 1;
            for i in 0..1_000u64 {
                let h = crate::hash_u64(i);
                f.prefetch_hash(h);
                assert!(!f.contains_prepared(&mut PreparedHash::new(h)), "{kind:?}");
                assert!(!f.contains_hash(h), "{kind:?}");
            }
        }
        assert_eq!(
            built,
            key_hashed_kinds(),
            "every key-hashed kind builds from no keys"
        );
    }

    #[test]
    fn every_kind_converts_into_its_own_variant() {
        let h = [crate::hash_u64(1)];
        for &kind in FilterKind::ALL {
            let Ok(f) = AnyFilter::build(kind, &h, FilterSizing::Fpr(0.01)) else {
                continue;
            };
            let again = match f.clone() {
                AnyFilter::StandardBloom(x) => AnyFilter::from(x),
                AnyFilter::BlockedBloom(x) => AnyFilter::from(x),
                AnyFilter::CountingBloom(x) => AnyFilter::from(x),
                AnyFilter::CuckooFilter(x) => AnyFilter::from(x),
                AnyFilter::Ribbon(x) => AnyFilter::from(x),
                AnyFilter::Xor8(x) => AnyFilter::from(x),
                AnyFilter::Xor16(x) => AnyFilter::from(x),
                AnyFilter::BinaryFuse8(x) => AnyFilter::from(x),
                AnyFilter::BinaryFuse16(x) => AnyFilter::from(x),
                AnyFilter::BinaryFuse32(x) => AnyFilter::from(x),
                AnyFilter::QuotientFilter(x) => AnyFilter::from(x),
                AnyFilter::ExpandingQuotientFilter(x) => AnyFilter::from(x),
                AnyFilter::SplitBlockBloom(x) => AnyFilter::from(x),
                AnyFilter::PackedBinaryFuse(x) => AnyFilter::from(x),
            };
            assert_eq!(again, f);
            assert_eq!(again.kind(), kind);
        }
    }

    #[test]
    fn unsupported_operations_name_the_kind_and_change_nothing() {
        let h = [crate::hash_u64(1)];
        let mut x = AnyFilter::build(FilterKind::Ribbon, &h, FilterSizing::Fpr(0.01)).unwrap();
        let before = x.clone();
        assert_eq!(
            x.insert_hash(crate::hash_u64(2)),
            Err(Error::Unsupported {
                kind: FilterKind::Ribbon,
                operation: "insert"
            })
        );
        assert_eq!(
            x.remove_hash(crate::hash_u64(1)),
            Err(Error::Unsupported {
                kind: FilterKind::Ribbon,
                operation: "remove"
            })
        );
        assert_eq!(x, before);
        let _ = vec![0u8]; // `vec!` is used by the proptest above
    }
}
