//! [`SplitBlockBloomView`]: a split-block Bloom filter answered in place from
//! its serialized bytes, with no copy and no allocation.
//!
//! The payload of a `SplitBlockBloom` frame is its blocks, eight
//! little-endian `u32` words each, in order (`docs/format.md`). A query loads
//! its block from the bytes (one 32-byte load) and tests it with the owned
//! filter's portable kernel ([`block_matches`]), so both answer identically
//! for every hash (the tests check it). In a version-2 frame the payload
//! starts 64 bytes into the frame, so a frame placed on a cache-line boundary
//! reads half a cache line per query.

use alloc::vec::Vec;

use super::block::{block_matches, block_of, Block};
use super::frame::parse_frame;
use super::{SplitBlockBloom, BATCH, BLOCK_BYTES};
use crate::bloom::count_as_usize;
use crate::format::{self, Checksum};
use crate::prefetch::prefetch;
use crate::{hash, math, Error, Filter, FilterKind, KeyHash};

/// A [`SplitBlockBloom`] read in place from its bytes ([`Filter::to_bytes`]).
///
/// [`new`](Self::new) checks the whole frame, checksum included;
/// [`trusted`](Self::trusted) skips only the checksum, so it costs O(1).
/// Either way the header and parameters are checked, so no byte string can
/// make a query read out of bounds or panic.
///
/// ```
/// use amq::bloom::SplitBlockBloomView;
/// use amq::{hash_key, Filter, FilterSizing, Insert, SplitBlockBloom};
///
/// let mut f = SplitBlockBloom::new(1_000, FilterSizing::Fpr(0.01))?;
/// f.insert(b"apple")?;
/// let bytes = f.to_bytes();
/// let view = SplitBlockBloomView::new(&bytes)?;
/// assert!(view.contains(b"apple"));
/// assert_eq!(view.contains_hash(hash_key(b"pear")), f.contains_hash(hash_key(b"pear")));
/// assert_eq!(view.size_in_bytes(), f.size_in_bytes());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SplitBlockBloomView<'a> {
    frame: &'a [u8],
    /// Whole blocks of [`BLOCK_BYTES`]; at least one.
    payload: &'a [u8],
    num_blocks: usize,
    num_keys: u64,
}

impl<'a> SplitBlockBloomView<'a> {
    /// A view over a serialized `SplitBlockBloom`, every check made
    /// (checksum included). Errors as
    /// [`SplitBlockBloom::from_bytes`](crate::FromBytes::from_bytes) does.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::SplitBlockBloom, checksum)?;
        let parts = parse_frame(frame)?;
        Ok(SplitBlockBloomView {
            frame: bytes,
            payload: parts.payload,
            num_blocks: parts.payload.len() / BLOCK_BYTES,
            num_keys: parts.num_keys,
        })
    }

    /// Block `block` (`< num_blocks`), loaded whole: one bounds check and
    /// one 32-byte load.
    #[inline(always)]
    fn block(&self, block: usize) -> Block {
        let at = block * BLOCK_BYTES;
        // The fallback is unreachable: the slice has exactly that length.
        let bytes: &[u8; BLOCK_BYTES] = self.payload[at..at + BLOCK_BYTES]
            .try_into()
            .unwrap_or(&[0; BLOCK_BYTES]);
        Block(core::array::from_fn(|w| {
            let mut le = [0u8; 4];
            le.copy_from_slice(&bytes[w * 4..w * 4 + 4]);
            u32::from_le_bytes(le)
        }))
    }

    /// Number of 256-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<SplitBlockBloom, Error> {
        SplitBlockBloom::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::SplitBlockBloom,
            Checksum::Trusted,
        )?)
    }
}

impl Filter for SplitBlockBloomView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let h = hash.get();
        block_matches(&self.block(block_of(h, self.num_blocks)), h)
    }

    /// Prefetches each block 32 keys ahead of its test.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        crate::prefetch::pipelined::<_, BATCH>(
            hash::raw(hashes),
            out,
            |h| {
                let b = block_of(h, self.num_blocks);
                prefetch(&self.payload[b * BLOCK_BYTES]);
                (b, h)
            },
            |(b, h)| block_matches(&self.block(b), h),
        );
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        prefetch(&self.payload[block_of(hash.get(), self.num_blocks) * BLOCK_BYTES]);
    }

    fn size_in_bytes(&self) -> usize {
        self.payload.len()
    }

    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }

    fn expected_fpr(&self) -> f64 {
        math::split_block_bloom_fpr(self.num_blocks as u64, self.num_keys)
    }

    fn kind(&self) -> FilterKind {
        FilterKind::SplitBlockBloom
    }

    /// The bytes in the current format version (the frame itself when it is
    /// already in it).
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}
