//! Borrowed filter views: queries answered straight from the bytes of a
//! serialized filter (a memory-mapped file, a block-cache entry), with no
//! copy and no allocation.
//!
//! A storage engine that keeps filters in a block cache, or maps its files,
//! holds each filter as bytes. Decoding them ([`AnyFilter::from_bytes`])
//! copies the whole payload into a fresh allocation on every cache miss;
//! a view checks the header in O(1) (Ribbon: O(shards), every shard record
//! is checked) and reads the payload where it lies.
//! Every view runs the owned filter's own query over the bytes (each kind's
//! `view.rs` says how), so owned and borrowed answer identically; the tests
//! (`tests/views.rs`) check that for random filters and keys.
//!
//! Kinds with a view: [`StandardBloom`](crate::StandardBloom),
//! [`BlockedBloom`](crate::BlockedBloom), [`SplitBlockBloom`](crate::SplitBlockBloom),
//! [`Xor8`](crate::Xor8),
//! [`Xor16`](crate::Xor16), [`BinaryFuse8`](crate::BinaryFuse8) / 16 / 32,
//! [`PackedBinaryFuse`](crate::PackedBinaryFuse)
//! and [`Ribbon`](crate::Ribbon). The others ([`CountingBloom`](crate::CountingBloom),
//! [`CuckooFilter`](crate::CuckooFilter), [`ParquetBloom`](crate::ParquetBloom))
//! give [`Error::Unsupported`], and so does the range filter
//! [`GrafiteRange`](crate::range::GrafiteRange), which has a view of its own
//! ([`GrafiteRangeView`](crate::range::GrafiteRangeView)).
//!
//! # Checksums
//!
//! [`FilterView::new`] verifies the frame's checksum: O(n), for bytes that
//! just came from outside. [`FilterView::trusted`] skips only that, for bytes
//! verified once already (when they were read into the cache). Both check
//! the header, the parameters and every length, so no byte string makes a
//! view read out of bounds or panic; trusted bytes changed after their check
//! can only give wrong answers.
//!
//! # Alignment
//!
//! Views read little-endian words with unaligned loads, so they work on
//! bytes at any address (the tests run them at every offset of a cache
//! line). Alignment only affects speed: from format version 2 the payload
//! starts at a multiple of 64 bytes into the frame, so a frame placed on a
//! cache-line boundary has its Bloom blocks on cache lines (one line per
//! blocked Bloom query, not two). Version-1 frames are viewed too, with
//! their payload wherever it falls, except Ribbon's: its version-1 shard
//! records have no word offsets, so a view could not find a shard's words
//! without a pass over all of them, and gives `Error::Unsupported` instead.

use alloc::vec::Vec;

use crate::bloom::{BlockedBloomView, SplitBlockBloomView, StandardBloomView};
use crate::format::{self, Checksum};
use crate::ribbon::RibbonView;
use crate::xor::{
    BinaryFuse16View, BinaryFuse32View, BinaryFuse8View, PackedBinaryFuseView, Xor16View, Xor8View,
};
use crate::{Error, Filter, FilterKind, KeyHash, PreparedHash};

/// A filter of any kind that has a view, read in place from its bytes.
///
/// ```
/// use amq::{AnyFilter, Filter, FilterKind, FilterSizing, FilterView};
///
/// let keys: Vec<amq::KeyHash> = (0..1_000u64).map(amq::hash_u64).collect();
/// for kind in [FilterKind::BlockedBloom, FilterKind::BinaryFuse8, FilterKind::Ribbon] {
///     let bytes = AnyFilter::build(kind, &keys, FilterSizing::BitsPerKey(10.0)).unwrap().to_bytes();
///     let view = FilterView::new(&bytes).unwrap();
///     assert_eq!(view.kind(), kind);
///     assert!(keys.iter().all(|&h| view.contains_hash(h)));
/// }
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum FilterView<'a> {
    /// A [`StandardBloomView`].
    StandardBloom(StandardBloomView<'a>),
    /// A [`BlockedBloomView`].
    BlockedBloom(BlockedBloomView<'a>),
    /// An [`Xor8View`].
    Xor8(Xor8View<'a>),
    /// An [`Xor16View`].
    Xor16(Xor16View<'a>),
    /// A [`BinaryFuse8View`].
    BinaryFuse8(BinaryFuse8View<'a>),
    /// A [`BinaryFuse16View`].
    BinaryFuse16(BinaryFuse16View<'a>),
    /// A [`BinaryFuse32View`].
    BinaryFuse32(BinaryFuse32View<'a>),
    /// A [`RibbonView`].
    Ribbon(RibbonView<'a>),
    /// A [`SplitBlockBloomView`].
    SplitBlockBloom(SplitBlockBloomView<'a>),
    /// A [`PackedBinaryFuseView`].
    PackedBinaryFuse(PackedBinaryFuseView<'a>),
}

macro_rules! dispatch {
    ($self:expr, $v:ident => $body:expr) => {
        match $self {
            FilterView::StandardBloom($v) => $body,
            FilterView::BlockedBloom($v) => $body,
            FilterView::Xor8($v) => $body,
            FilterView::Xor16($v) => $body,
            FilterView::BinaryFuse8($v) => $body,
            FilterView::BinaryFuse16($v) => $body,
            FilterView::BinaryFuse32($v) => $body,
            FilterView::Ribbon($v) => $body,
            FilterView::SplitBlockBloom($v) => $body,
            FilterView::PackedBinaryFuse($v) => $body,
        }
    };
}

impl<'a> FilterView<'a> {
    /// A view of whatever kind the header names, every check made (checksum
    /// included, once). [`Error::Unsupported`] for a valid filter of a kind
    /// without a view; otherwise the errors of
    /// [`AnyFilter::from_bytes`](crate::AnyFilter::from_bytes).
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        format::decode_with(bytes, Checksum::Verify)?;
        Self::trusted(bytes)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1) (O(shards) for a Ribbon filter, whose shard
    /// records are all checked).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        let kind = format::decode_with(bytes, Checksum::Trusted)?.kind;
        Ok(match kind {
            FilterKind::StandardBloom => FilterView::StandardBloom(StandardBloomView::trusted(bytes)?),
            FilterKind::BlockedBloom => FilterView::BlockedBloom(BlockedBloomView::trusted(bytes)?),
            FilterKind::Xor8 => FilterView::Xor8(Xor8View::trusted(bytes)?),
            FilterKind::Xor16 => FilterView::Xor16(Xor16View::trusted(bytes)?),
            FilterKind::BinaryFuse8 => FilterView::BinaryFuse8(BinaryFuse8View::trusted(bytes)?),
            FilterKind::BinaryFuse16 => FilterView::BinaryFuse16(BinaryFuse16View::trusted(bytes)?),
            FilterKind::BinaryFuse32 => FilterView::BinaryFuse32(BinaryFuse32View::trusted(bytes)?),
            FilterKind::Ribbon => FilterView::Ribbon(RibbonView::trusted(bytes)?),
            FilterKind::SplitBlockBloom => FilterView::SplitBlockBloom(SplitBlockBloomView::trusted(bytes)?),
            FilterKind::PackedBinaryFuse => {
                FilterView::PackedBinaryFuse(PackedBinaryFuseView::trusted(bytes)?)
            }
            FilterKind::CountingBloom
            | FilterKind::CuckooFilter
            | FilterKind::QuotientFilter
            | FilterKind::ExpandingQuotientFilter
            | FilterKind::ParquetBloom
            | FilterKind::GrafiteRange
            | FilterKind::MementoFilter => return Err(crate::error::unsupported(kind, "view")),
        })
    }

    /// Whether `kind` can be read in place.
    ///
    /// ```
    /// use amq::{FilterKind, FilterView};
    /// assert!(FilterView::supports(FilterKind::Ribbon));
    /// assert!(!FilterView::supports(FilterKind::CuckooFilter));
    /// ```
    pub fn supports(kind: FilterKind) -> bool {
        !matches!(
            kind,
            FilterKind::CountingBloom
                | FilterKind::CuckooFilter
                | FilterKind::QuotientFilter
                | FilterKind::ExpandingQuotientFilter
                | FilterKind::ParquetBloom
                | FilterKind::GrafiteRange
                | FilterKind::MementoFilter
        )
    }

    /// The view as a trait object.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, FilterKind, FilterSizing, FilterView};
    /// let bytes = BlockedBloom::new(10, FilterSizing::Fpr(0.01))?.to_bytes();
    /// assert_eq!(FilterView::new(&bytes)?.as_filter().kind(), FilterKind::BlockedBloom);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn as_filter(&self) -> &dyn Filter {
        dispatch!(self, v => v)
    }

    /// [`AnyFilter::contains_prepared`](crate::AnyFilter::contains_prepared)
    /// for a view: a blocked Bloom view tests the probe mask prepared once
    /// per key; the other kinds answer from the hash.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, FilterSizing, FilterView, Insert, PreparedHash};
    /// let mut f = BlockedBloom::new(10, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// let bytes = f.to_bytes();
    /// let view = FilterView::new(&bytes)?;
    /// assert!(view.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        match self {
            FilterView::BlockedBloom(v) => v.contains_prepared(key),
            other => other.contains_hash(key.hash()),
        }
    }
}

impl Filter for FilterView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        dispatch!(self, v => v.contains_hash(hash))
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        dispatch!(self, v => v.contains_hashes(hashes, out))
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        dispatch!(self, v => v.prefetch_hash(hash))
    }
    fn size_in_bytes(&self) -> usize {
        dispatch!(self, v => v.size_in_bytes())
    }
    fn num_keys(&self) -> usize {
        dispatch!(self, v => v.num_keys())
    }
    fn expected_fpr(&self) -> f64 {
        dispatch!(self, v => v.expected_fpr())
    }
    fn kind(&self) -> FilterKind {
        dispatch!(self, v => v.kind())
    }
    fn to_bytes(&self) -> Vec<u8> {
        dispatch!(self, v => v.to_bytes())
    }
}
