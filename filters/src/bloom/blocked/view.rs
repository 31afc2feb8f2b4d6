//! [`BlockedBloomView`]: a blocked Bloom filter answered in place from its
//! serialized bytes, with no copy and no allocation.
//!
//! The payload of a `BlockedBloom` frame is its blocks, eight little-endian
//! `u64` words each, in order (`docs/format.md`). A query needs one block, so
//! the view loads that block from the bytes (one 64-byte load) and tests
//! the owned filter's probe bits in it with its portable kernel
//! ([`block_matches_by`]), so both answer identically for every hash (the
//! tests check it). The owned filter's SIMD kernels read aligned `Block`s;
//! copying the bytes into one costs more than the kernel saves
//! (`docs/results-amq.md`, "Borrowed views"), so a view runs the portable
//! test, and a prepared probe ([`Self::contains_prepared`]) is its fast
//! path: one load and an 8-word compare. In a version-2 frame the payload starts 64 bytes into
//! the frame, so a frame placed on a cache-line boundary (an aligned block
//! cache entry, a page of a mapped file) reads one cache line per query.

use alloc::vec::Vec;

use super::batch::QUERY_DEPTH;
use super::frame::parse_frame;
use super::probe::{block_matches_by, block_of, mask_matches, BLOCK_BITS, BLOCK_BYTES, WORDS};
use super::{BlockedBloom, PreparedHash};
use crate::bloom::count_as_usize;
use crate::format::{self, Checksum};
use crate::prefetch::prefetch;
use crate::{hash, math, Error, Filter, FilterKind, KeyHash};

/// A [`BlockedBloom`] read in place from its bytes ([`Filter::to_bytes`]).
///
/// [`new`](Self::new) checks the whole frame, checksum included (bytes
/// fresh from a file or the network); [`trusted`](Self::trusted) skips only
/// the checksum, so it costs O(1) (bytes verified once already, such as a
/// block-cache entry). Either way the header and parameters are checked, so
/// no byte string can make a query read out of bounds or panic; trusted
/// bytes that were changed after their check can only give wrong answers.
///
/// ```
/// use amq::bloom::BlockedBloomView;
/// use amq::{hash_key, BlockedBloom, Filter, FilterSizing, Insert};
///
/// let mut f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
/// f.insert(b"apple")?;
/// let bytes = f.to_bytes();
/// let view = BlockedBloomView::new(&bytes)?;
/// assert!(view.contains(b"apple"));
/// assert_eq!(view.contains_hash(hash_key(b"pear")), f.contains_hash(hash_key(b"pear")));
/// assert_eq!(view.size_in_bytes(), f.size_in_bytes());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BlockedBloomView<'a> {
    frame: &'a [u8],
    /// Whole blocks of [`BLOCK_BYTES`]; at least one.
    payload: &'a [u8],
    num_blocks: u32,
    num_probes: u32,
    num_keys: u64,
}

impl<'a> BlockedBloomView<'a> {
    /// A view over a serialized `BlockedBloom`, every check made (checksum
    /// included). Errors as [`BlockedBloom::from_bytes`](crate::FromBytes::from_bytes) does.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before (by
    /// [`new`](Self::new) or when they were read from disk): every check but
    /// the checksum, in O(1).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::BlockedBloom, checksum)?;
        let parts = parse_frame(frame)?;
        Ok(BlockedBloomView {
            frame: bytes,
            payload: parts.payload,
            num_blocks: (parts.payload.len() / BLOCK_BYTES) as u32,
            num_probes: parts.num_probes,
            num_keys: parts.num_keys,
        })
    }

    /// Block `block` (`< num_blocks`), loaded whole: one bounds check and
    /// one 64-byte load, which the compiler turns into vector loads.
    #[inline(always)]
    fn words(&self, block: usize) -> [u64; WORDS] {
        let at = block * BLOCK_BYTES;
        // The fallback is unreachable: the slice has exactly that length.
        let bytes: &[u8; BLOCK_BYTES] = self.payload[at..at + BLOCK_BYTES]
            .try_into()
            .unwrap_or(&[0; BLOCK_BYTES]);
        core::array::from_fn(|w| {
            let mut le = [0u8; 8];
            le.copy_from_slice(&bytes[w * 8..w * 8 + 8]);
            u64::from_le_bytes(le)
        })
    }

    /// The portable query on the bytes.
    #[inline]
    fn query(&self, hash: u64) -> bool {
        let block = self.words(block_of(hash, self.num_blocks));
        block_matches_by(|w| block[w], hash, self.num_probes)
    }

    /// [`BlockedBloom::contains_prepared`] on the bytes: one block load and
    /// an 8-word compare.
    ///
    /// ```
    /// use amq::bloom::BlockedBloomView;
    /// use amq::{BlockedBloom, Filter, FilterSizing, Insert, PreparedHash};
    /// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// let bytes = f.to_bytes();
    /// let view = BlockedBloomView::new(&bytes)?;
    /// assert!(view.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        let probe = key.blocked(self.num_probes);
        let block = self.words(block_of(probe.hash, self.num_blocks));
        mask_matches(&probe.mask, |w| block[w])
    }

    /// Number of 512-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.num_blocks as usize
    }

    /// Number of probes per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<BlockedBloom, Error> {
        BlockedBloom::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::BlockedBloom,
            Checksum::Trusted,
        )?)
    }
}

impl Filter for BlockedBloomView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.query(hash.get())
    }

    /// The owned filter's pipeline, with the portable probe.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        crate::prefetch::pipelined::<_, QUERY_DEPTH>(
            hash::raw(hashes),
            out,
            |h| {
                let b = block_of(h, self.num_blocks);
                prefetch(&self.payload[b * BLOCK_BYTES]);
                (b, h)
            },
            |(b, h)| {
                let block = self.words(b);
                block_matches_by(|w| block[w], h, self.num_probes)
            },
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
        let bits = self.num_blocks as u64 * BLOCK_BITS as u64;
        math::blocked_bloom_fpr(bits, BLOCK_BITS, self.num_probes, self.num_keys)
    }

    fn kind(&self) -> FilterKind {
        FilterKind::BlockedBloom
    }

    /// The bytes in the current format version (the frame itself when it is
    /// already in it).
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}
