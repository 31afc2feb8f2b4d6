//! [`AnyFilter`]: one type for a filter of any kind, read back from bytes by
//! dispatching on the header's kind byte.

use alloc::vec::Vec;

use crate::format;
use crate::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error, Filter,
    FilterKind, FromBytes, HashScheme, Insert, ParquetBloom, Remove, Ribbon, StandardBloom, Xor16, Xor8,
};

/// A filter of any kind. Decode one with [`AnyFilter::from_bytes`] when the
/// kind is only known from the bytes (an SSTable's filter block, say).
///
/// ```
/// use amq::{AnyFilter, BlockedBloom, Filter, FilterKind};
/// let mut f = BlockedBloom::with_fpr(100, 0.01).unwrap();
/// f.insert(b"key");
/// let any = AnyFilter::from_bytes(&f.to_bytes()).unwrap();
/// assert_eq!(any.kind(), FilterKind::BlockedBloom);
/// assert!(any.contains(b"key"));
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
    Cuckoo(CuckooFilter),
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
    /// A [`ParquetBloom`]: driven by Parquet's value hash, not
    /// [`hash_key`](crate::hash_key) (see [`Filter::hash_scheme`]).
    ParquetBloom(ParquetBloom),
}

/// Calls `$body` with `$f` bound to the inner filter of every variant.
macro_rules! dispatch {
    ($self:expr, $f:ident => $body:expr) => {
        match $self {
            AnyFilter::StandardBloom($f) => $body,
            AnyFilter::BlockedBloom($f) => $body,
            AnyFilter::CountingBloom($f) => $body,
            AnyFilter::Cuckoo($f) => $body,
            AnyFilter::Ribbon($f) => $body,
            AnyFilter::Xor8($f) => $body,
            AnyFilter::Xor16($f) => $body,
            AnyFilter::BinaryFuse8($f) => $body,
            AnyFilter::BinaryFuse16($f) => $body,
            AnyFilter::BinaryFuse32($f) => $body,
            AnyFilter::ParquetBloom($f) => $body,
        }
    };
}

impl AnyFilter {
    /// Decodes a filter of whatever kind the header names.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let frame = format::decode(bytes)?;
        Ok(match frame.kind {
            FilterKind::StandardBloom => AnyFilter::StandardBloom(StandardBloom::from_frame(frame)?),
            FilterKind::BlockedBloom => AnyFilter::BlockedBloom(BlockedBloom::from_frame(frame)?),
            FilterKind::CountingBloom => AnyFilter::CountingBloom(CountingBloom::from_frame(frame)?),
            FilterKind::Cuckoo => AnyFilter::Cuckoo(CuckooFilter::from_frame(frame)?),
            FilterKind::Ribbon => AnyFilter::Ribbon(Ribbon::from_frame(frame)?),
            FilterKind::Xor8 => AnyFilter::Xor8(Xor8::from_frame(frame)?),
            FilterKind::Xor16 => AnyFilter::Xor16(Xor16::from_frame(frame)?),
            FilterKind::BinaryFuse8 => AnyFilter::BinaryFuse8(BinaryFuse8::from_frame(frame)?),
            FilterKind::BinaryFuse16 => AnyFilter::BinaryFuse16(BinaryFuse16::from_frame(frame)?),
            FilterKind::BinaryFuse32 => AnyFilter::BinaryFuse32(BinaryFuse32::from_frame(frame)?),
            FilterKind::ParquetBloom => AnyFilter::ParquetBloom(ParquetBloom::from_frame(frame)?),
        })
    }

    /// The inner filter as a trait object.
    pub fn as_filter(&self) -> &dyn Filter {
        dispatch!(self, f => f)
    }
}

impl FromBytes for AnyFilter {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        AnyFilter::from_bytes(bytes)
    }
}

impl Filter for AnyFilter {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        dispatch!(self, f => f.contains_hash(hash))
    }
    /// Hashes with the inner filter's scheme.
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        dispatch!(self, f => f.contains(key))
    }
    fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
        dispatch!(self, f => f.contains_many(hashes, out))
    }
    /// Hashes with the inner filter's scheme, matching on the kind once.
    fn contains_many_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        dispatch!(self, f => f.contains_many_keys(keys, out))
    }
    #[inline]
    fn prefetch_hash(&self, hash: u64) {
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
    fn hash_scheme(&self) -> HashScheme {
        dispatch!(self, f => f.hash_scheme())
    }
    fn to_bytes(&self) -> Vec<u8> {
        dispatch!(self, f => f.to_bytes())
    }
}

/// Forwards to the kinds that take inserts (the Bloom family and cuckoo);
/// the static kinds return [`Error::InvalidParameter`] and stay unchanged.
///
/// ```
/// use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert};
/// let mut f = AnyFilter::with_capacity(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01), 100)?;
/// f.insert(b"k")?;
/// assert!(f.contains(b"k"));
/// let mut x = AnyFilter::build(FilterKind::Xor8, FilterSizing::Fpr(0.01), &[1, 2, 3])?;
/// assert!(matches!(x.insert(b"k"), Err(Error::InvalidParameter { .. })));
/// # Ok::<(), Error>(())
/// ```
impl Insert for AnyFilter {
    fn insert_hash(&mut self, hash: u64) -> Result<(), Error> {
        match self {
            AnyFilter::StandardBloom(f) => Insert::insert_hash(f, hash),
            AnyFilter::BlockedBloom(f) => Insert::insert_hash(f, hash),
            AnyFilter::CountingBloom(f) => Insert::insert_hash(f, hash),
            AnyFilter::Cuckoo(f) => Insert::insert_hash(f, hash),
            AnyFilter::ParquetBloom(f) => Insert::insert_hash(f, hash),
            AnyFilter::Ribbon(_)
            | AnyFilter::Xor8(_)
            | AnyFilter::Xor16(_)
            | AnyFilter::BinaryFuse8(_)
            | AnyFilter::BinaryFuse16(_)
            | AnyFilter::BinaryFuse32(_) => Err(Error::InvalidParameter {
                name: "kind",
                reason: "a static filter takes no inserts",
            }),
        }
    }
}

/// Forwards to the kinds that forget keys (counting Bloom and cuckoo); the
/// others return [`Error::InvalidParameter`] and stay unchanged.
///
/// ```
/// use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, Insert, Remove};
/// let mut f = AnyFilter::with_capacity(FilterKind::Cuckoo, FilterSizing::Fpr(0.01), 100)?;
/// f.insert(b"k")?;
/// f.remove(b"k")?;
/// assert!(!f.contains(b"k"));
/// let mut b = AnyFilter::with_capacity(FilterKind::StandardBloom, FilterSizing::Fpr(0.01), 100)?;
/// b.insert(b"k")?;
/// assert!(matches!(b.remove(b"k"), Err(Error::InvalidParameter { .. })));
/// # Ok::<(), Error>(())
/// ```
impl Remove for AnyFilter {
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error> {
        match self {
            AnyFilter::CountingBloom(f) => Remove::remove_hash(f, hash),
            AnyFilter::Cuckoo(f) => Remove::remove_hash(f, hash),
            AnyFilter::StandardBloom(_)
            | AnyFilter::BlockedBloom(_)
            | AnyFilter::ParquetBloom(_)
            | AnyFilter::Ribbon(_)
            | AnyFilter::Xor8(_)
            | AnyFilter::Xor16(_)
            | AnyFilter::BinaryFuse8(_)
            | AnyFilter::BinaryFuse16(_)
            | AnyFilter::BinaryFuse32(_) => Err(Error::InvalidParameter {
                name: "kind",
                reason: "this kind cannot forget a key",
            }),
        }
    }
}
