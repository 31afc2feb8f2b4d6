//! [`StandardBloomView`]: a standard Bloom filter answered in place from its
//! serialized bytes, with no copy and no allocation.
//!
//! The payload of a `StandardBloom` frame is its `m / 64` words, little-endian
//! (`docs/format.md`); bit `i` is bit `i % 64` of word `i / 64`. The view runs
//! the owned filter's probe loop ([`probes_all_set`]) over words read from
//! the bytes, so both answer identically for every hash.

use alloc::vec::Vec;

use super::{parse_frame, probes_all_set, StandardBloom};
use crate::bloom::count_as_usize;
use crate::format::{self, Checksum};
use crate::{math, Error, Filter, FilterKind, KeyHash};

/// A [`StandardBloom`] read in place from its bytes ([`Filter::to_bytes`]).
/// [`new`](Self::new) checks everything, checksum included;
/// [`trusted`](Self::trusted) all but the checksum, in O(1) (see
/// [`BlockedBloomView`](crate::bloom::BlockedBloomView) for when to use which).
///
/// ```
/// use amq::bloom::StandardBloomView;
/// use amq::{hash_key, Filter, FilterSizing, Insert, StandardBloom};
///
/// let mut f = StandardBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
/// f.insert(b"apple").unwrap();
/// let bytes = f.to_bytes();
/// let view = StandardBloomView::new(&bytes).unwrap();
/// assert!(view.contains(b"apple"));
/// assert_eq!(view.contains_hash(hash_key(b"pear")), f.contains_hash(hash_key(b"pear")));
/// assert_eq!(view.expected_fpr(), f.expected_fpr());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StandardBloomView<'a> {
    frame: &'a [u8],
    /// `num_bits / 8` bytes, a positive multiple of 8.
    payload: &'a [u8],
    num_probes: u32,
    num_keys: u64,
}

impl<'a> StandardBloomView<'a> {
    /// A view over a serialized `StandardBloom`, every check made.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::StandardBloom, checksum)?;
        let parts = parse_frame(frame)?;
        Ok(StandardBloomView {
            frame: bytes,
            payload: parts.payload,
            num_probes: parts.num_probes,
            num_keys: parts.num_keys,
        })
    }

    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        let mut le = [0u8; 8];
        le.copy_from_slice(&self.payload[i * 8..i * 8 + 8]);
        u64::from_le_bytes(le)
    }

    /// Number of bits `m`.
    pub fn num_bits(&self) -> u64 {
        self.payload.len() as u64 * 8
    }

    /// Number of probes `k` per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<StandardBloom, Error> {
        StandardBloom::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::StandardBloom,
            Checksum::Trusted,
        )?)
    }
}

impl Filter for StandardBloomView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        probes_all_set(|w| self.word(w), self.num_bits(), self.num_probes, hash.get())
    }

    fn size_in_bytes(&self) -> usize {
        self.payload.len()
    }

    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }

    fn expected_fpr(&self) -> f64 {
        math::standard_bloom_fpr(self.num_bits(), self.num_probes, self.num_keys)
    }

    fn kind(&self) -> FilterKind {
        FilterKind::StandardBloom
    }

    /// The bytes in the current format version (the frame itself when it is
    /// already in it).
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}
