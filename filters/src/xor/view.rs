//! Xor and binary fuse filters answered in place from their serialized
//! bytes: [`XorView`] and [`BinaryFuseView`], with no copy and no allocation.
//!
//! Both payloads are the fingerprint table, one `F::BYTES` little-endian
//! value per slot (`docs/format.md`). The views run the owned filters' query
//! (`query.rs`, generic over where the table lives: `fingerprint::Table`)
//! over the bytes, so owned and borrowed answer identically for every hash.

use alloc::vec::Vec;

use super::binary_fuse::{self, BinaryFuse, FuseFingerprint, FuseParts};
use super::fingerprint::LeTable;
use super::fingerprint_fpr;
use super::query;
use super::shard_layout::{fuse_query, LeSeeds};
use super::xor::{self as xor_filter, Xor, XorFingerprint, XorParts};
use crate::format::{self, Checksum};
use crate::{Error, Filter, FilterKind, KeyHash};

/// An [`Xor`] filter read in place from its bytes ([`Filter::to_bytes`]).
/// [`new`](Self::new) checks everything, checksum included;
/// [`trusted`](Self::trusted) all but the checksum, in O(1) (see
/// [`BlockedBloomView`](crate::bloom::BlockedBloomView) for when to use which).
///
/// ```
/// use amq::xor::Xor8View;
/// use amq::{Filter, StaticFilter, Xor8};
///
/// let keys: Vec<amq::KeyHash> = (0..1_000u64).map(amq::hash_u64).collect();
/// let f = Xor8::build(&keys).unwrap();
/// let bytes = f.to_bytes();
/// let view = Xor8View::new(&bytes).unwrap();
/// assert!(keys.iter().all(|&h| view.contains_hash(h)));
/// assert_eq!(view.size_in_bytes(), f.size_in_bytes());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct XorView<'a, F: XorFingerprint> {
    frame: &'a [u8],
    table: LeTable<'a, F>,
    parts: XorParts,
}

/// An [`Xor8`](crate::Xor8) read in place.
pub type Xor8View<'a> = XorView<'a, u8>;
/// An [`Xor16`](crate::Xor16) read in place.
pub type Xor16View<'a> = XorView<'a, u16>;

impl<'a, F: XorFingerprint> XorView<'a, F> {
    /// A view over a serialized xor filter, every check made.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, F::XOR_KIND, checksum)?;
        let (parts, table) = xor_filter::parse_frame::<F>(frame)?;
        Ok(XorView {
            frame: bytes,
            table,
            parts,
        })
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<Xor<F>, Error> {
        Xor::from_frame(format::decode_kind_with(
            self.frame,
            F::XOR_KIND,
            Checksum::Trusted,
        )?)
    }
}

impl<F: XorFingerprint> Filter for XorView<'_, F> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        query::contains::<F, _, _, 3>(&self.table, &self.parts.blocks, self.parts.seed, hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let hashes = crate::hash::raw(hashes);
        query::contains_many::<F, _, _, 3>(&self.table, &self.parts.blocks, self.parts.seed, hashes, out);
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        query::prefetch_slots::<F, _, _, 3>(&self.table, &self.parts.blocks, self.parts.seed, hash.get());
    }
    fn size_in_bytes(&self) -> usize {
        self.table.byte_len()
    }
    fn num_keys(&self) -> usize {
        self.parts.num_keys as usize // at most 2^32, checked when parsed
    }
    fn expected_fpr(&self) -> f64 {
        fingerprint_fpr::<F>(self.parts.num_keys)
    }
    fn kind(&self) -> FilterKind {
        F::XOR_KIND
    }
    /// The bytes in the current format version.
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}

/// A [`BinaryFuse`] filter read in place from its bytes
/// ([`Filter::to_bytes`]). [`new`](Self::new) checks everything, checksum
/// included; [`trusted`](Self::trusted) all but the checksum, in O(1).
///
/// ```
/// use amq::xor::BinaryFuse8View;
/// use amq::{BinaryFuse8, Filter, StaticFilter};
///
/// let keys: Vec<amq::KeyHash> = (0..1_000u64).map(amq::hash_u64).collect();
/// let f = BinaryFuse8::build(&keys).unwrap();
/// let bytes = f.to_bytes();
/// let view = BinaryFuse8View::new(&bytes).unwrap();
/// assert!(keys.iter().all(|&h| view.contains_hash(h)));
/// assert_eq!(view.expected_fpr(), f.expected_fpr());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BinaryFuseView<'a, F: FuseFingerprint> {
    frame: &'a [u8],
    table: LeTable<'a, F>,
    parts: FuseParts,
    seeds: LeSeeds<'a>,
}

/// A [`BinaryFuse8`](crate::BinaryFuse8) read in place.
pub type BinaryFuse8View<'a> = BinaryFuseView<'a, u8>;
/// A [`BinaryFuse16`](crate::BinaryFuse16) read in place.
pub type BinaryFuse16View<'a> = BinaryFuseView<'a, u16>;
/// A [`BinaryFuse32`](crate::BinaryFuse32) read in place.
pub type BinaryFuse32View<'a> = BinaryFuseView<'a, u32>;

impl<'a, F: FuseFingerprint> BinaryFuseView<'a, F> {
    /// A view over a serialized binary fuse filter, every check made.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, F::FUSE_KIND, checksum)?;
        let (parts, seeds, table) = binary_fuse::parse_frame::<F>(frame)?;
        Ok(BinaryFuseView {
            frame: bytes,
            table,
            parts,
            seeds,
        })
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<BinaryFuse<F>, Error> {
        BinaryFuse::from_frame(format::decode_kind_with(
            self.frame,
            F::FUSE_KIND,
            Checksum::Trusted,
        )?)
    }
}

impl<F: FuseFingerprint> Filter for BinaryFuseView<'_, F> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        fuse_query!(contains, t, s, &self.seeds, seed, hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let hashes = crate::hash::raw(hashes);
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        fuse_query!(contains_many, t, s, &self.seeds, seed, hashes, out)
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        fuse_query!(prefetch_slots, t, s, &self.seeds, seed, hash.get())
    }
    fn size_in_bytes(&self) -> usize {
        self.table.byte_len()
    }
    fn num_keys(&self) -> usize {
        self.parts.num_keys as usize // at most 2^32, checked when parsed
    }
    fn expected_fpr(&self) -> f64 {
        fingerprint_fpr::<F>(self.parts.num_keys)
    }
    fn kind(&self) -> FilterKind {
        F::FUSE_KIND
    }
    /// The bytes in the current format version.
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}
