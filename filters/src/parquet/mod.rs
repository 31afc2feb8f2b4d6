//! Apache Parquet's split-block Bloom filter (SBBF), bit for bit:
//! [`ParquetBloom`] builds filters that Spark, Trino, DuckDB, DataFusion and
//! arrow-rs read from a Parquet file, and reads the filters they write.
//!
//! **Layout** (the Parquet specification, `BloomFilter.md`): `z` blocks of
//! 256 bits, each eight little-endian 32-bit words. A value's 64-bit hash
//! `h` picks block `((h >> 32) · z) >> 32` (multiply-shift, any `z`), and its
//! low 32 bits `x` set or test one bit in each word: bit `(x · SALT[i]) >> 27`
//! of word `i`, for the specification's eight odd [`SALT`]s.
//!
//! **Hash.** XXH64 with seed 0 of the value's plain encoding
//! ([`ParquetValue`], [`parquet_hash`](crate::hash::parquet_hash)): not amq's
//! [`hash_key`](crate::hash_key). So the filter has an API of its own, not
//! the [`Filter`](crate::Filter) trait: its `contains_hash` and
//! `insert_hash` take a [`ParquetHash`], which an amq [`KeyHash`](crate::KeyHash)
//! cannot be passed as, and its `contains` and `insert` take a
//! [`ParquetValue`] and hash it as Parquet does. Its amq frame names the
//! scheme ([`HashScheme::ParquetXxh64`](crate::HashScheme::ParquetXxh64)),
//! and [`AnyFilter`](crate::AnyFilter), which holds filters of amq key
//! hashes, refuses it with [`Error::WrongHashScheme`].
//!
//! **Sizing** by [`math::split_block_bloom_fpr`], which reproduces the
//! specification's table (6.0 / 10.5 / 16.9 / 26.4 bits per value for 10% /
//! 1% / 0.1% / 0.01%) and matches measurement: [`ParquetBloom::new`]
//! takes the smallest block count that meets the target, any count, where
//! arrow-rs, parquet-java and DuckDB round their filters up to a power of two
//! (up to twice the bytes). Readers do not care: arrow-rs and DuckDB read any
//! whole number of blocks (the interop tests check arrow-rs). parquet-java
//! skips filters over 128 MiB.
//!
//! **Framing.** In a Parquet file the bitset follows a Thrift compact
//! `BloomFilterHeader` (`numBytes`, algorithm `BLOCK`, hash `XXHASH`,
//! compression `UNCOMPRESSED`): [`ParquetBloom::to_parquet_bytes`] writes
//! both, [`ParquetBloom::from_parquet_bytes`] and
//! [`ParquetBloom::read_parquet`] read them, and [`ParquetHeader`] parses the
//! header alone. Malformed headers and lengths are typed errors
//! ([`FormatError::InvalidParquetHeader`], [`FormatError::Truncated`], ...);
//! nothing is allocated before the input is known to hold the bitset. amq's
//! own frame ([`ParquetBloom::to_bytes`], kind 11 of `docs/format.md`) holds the
//! same bitset plus the exact insert count.
//!
//! **Speed.** Queries and inserts go through a kernel chosen when the filter
//! is made (`bloom/split_block/kernel.rs`, shared with
//! [`SplitBlockBloom`](crate::SplitBlockBloom), the same layout driven by
//! amq's key hash): AVX2, where a block is one register (one
//! multiply, shift and variable shift make the mask, one `vptest` checks it),
//! else portable, which is the oracle in the tests. Batch queries and inserts
//! ([`ParquetBloom::contains_hashes`], [`ParquetBloom::contains_values`],
//! [`ParquetBloom::insert_hashes`], [`ParquetBloom::insert_values`]) compute
//! and prefetch the blocks of 32 values before touching them.
//!
//! Filters of equal size merge by OR ([`ParquetBloom::union`]), so the
//! partitions of a distributed job combine into one filter.
//!
//! ```
//! use amq::{FilterSizing, ParquetBloom};
//! // A column of 10,000 strings, 1% false positives.
//! let mut f = ParquetBloom::new(10_000, FilterSizing::Fpr(0.01)).unwrap();
//! for i in 0..10_000 {
//!     f.insert(&format!("user-{i}")).unwrap();
//! }
//! assert!(f.contains("user-42"));
//! assert!(f.bits_per_key() < 10.6);
//! // What a Parquet file stores at the column chunk's bloom_filter_offset:
//! let bytes = f.to_parquet_bytes();
//! let back = ParquetBloom::from_parquet_bytes(&bytes).unwrap();
//! assert!(back.contains("user-42"));
//! ```

use alloc::vec::Vec;

mod thrift;
mod value;

pub use thrift::{ParquetHeader, MAX_DEPTH};
pub use value::ParquetValue;

pub use crate::bloom::split_block::{BLOCK_BYTES, SALT};

use crate::bloom::split_block::{fewest_blocks, Block, Kernel, BATCH};
use crate::format::{self, ByteWriter, Frame};
use crate::hash::ParquetHash;
use crate::sizing::{check_bits_per_key, check_fpr, check_keys, count_as_usize, max_keys, units_for};
use crate::zeroed::zeroed_vec;
use crate::{math, Error, FilterKind, FilterSizing, FormatError};

/// Most blocks a filter may have: the header's `numBytes` is an `i32`, so
/// the bitset is at most `i32::MAX` bytes rounded down to whole blocks
/// (67,108,863 blocks, 2 GiB).
pub const MAX_BLOCKS: usize = i32::MAX as usize / BLOCK_BYTES;

/// Apache Parquet's split-block Bloom filter: the Parquet layout, hash and
/// framing (see the [module](self) documentation), with amq's sizing, batch
/// queries and SIMD kernel.
///
/// ```
/// use amq::{FilterSizing, ParquetBloom};
/// let n = 100_000;
/// let mut f = ParquetBloom::new(n, FilterSizing::Fpr(0.01)).unwrap();
/// let values: Vec<i64> = (0..n as i64).collect();
/// f.insert_values(&values).unwrap();
/// assert!(values.iter().all(|v| f.contains(v)));
/// // The specification's 10.5 bits per value for 1%, not a power of two.
/// assert!((f.bits_per_key() - 10.5).abs() < 0.1, "{}", f.bits_per_key());
/// let fp = (n as i64..2 * n as i64).filter(|v| f.contains(v)).count();
/// assert!(fp < 1_150, "{fp} false positives"); // about 1%
/// ```
#[derive(Debug, Clone)]
pub struct ParquetBloom {
    blocks: Vec<Block>,
    num_keys: u64,
    /// Chosen for this CPU at construction; never changes an answer, so it
    /// is not part of equality or of the bytes.
    kernel: Kernel,
}

impl PartialEq for ParquetBloom {
    fn eq(&self, other: &Self) -> bool {
        self.blocks == other.blocks && self.num_keys == other.num_keys
    }
}

impl Eq for ParquetBloom {}

impl ParquetBloom {
    fn with_blocks(blocks: usize) -> Result<Self, Error> {
        debug_assert!((1..=MAX_BLOCKS).contains(&blocks));
        Ok(ParquetBloom {
            blocks: zeroed_vec(blocks)?,
            num_keys: 0,
            kernel: Kernel::detect(),
        })
    }

    /// An empty filter for `expected_values` distinct values.
    ///
    /// [`FilterSizing::Fpr`]: the fewest blocks for which
    /// [`math::split_block_bloom_fpr`] meets the target (about 10.5 bits per
    /// value at 1%). [`FilterSizing::BitsPerKey`]: `expected_values ·
    /// bits_per_key` bits rounded up to whole 256-bit blocks.
    ///
    /// ```
    /// use amq::{FilterSizing, ParquetBloom};
    /// let f = ParquetBloom::new(1_000_000, FilterSizing::Fpr(0.01))?;
    /// assert_eq!(f.num_blocks(), 41_130); // 10.53 bits per value
    /// assert!(ParquetBloom::new(1000, FilterSizing::Fpr(1.0)).is_err());
    /// assert_eq!(ParquetBloom::new(1000, FilterSizing::BitsPerKey(10.0))?.num_blocks(), 40);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_values: usize, sizing: FilterSizing) -> Result<Self, Error> {
        match sizing {
            FilterSizing::Fpr(p) => Self::for_fpr(expected_values, p),
            FilterSizing::BitsPerKey(b) => Self::for_bits_per_key(expected_values, b),
        }
    }

    fn for_fpr(expected_values: usize, fpr: f64) -> Result<Self, Error> {
        check_keys(expected_values)?;
        check_fpr(fpr)?;
        let blocks = fewest_blocks(expected_values as u64, fpr, MAX_BLOCKS as u64).ok_or(Error::TooLarge)?;
        Self::with_blocks(blocks as usize)
    }

    fn for_bits_per_key(expected_values: usize, bits_per_key: f64) -> Result<Self, Error> {
        check_keys(expected_values)?;
        check_bits_per_key(bits_per_key)?;
        let blocks = units_for(
            expected_values,
            bits_per_key,
            256,
            BLOCK_BYTES as u64,
            MAX_BLOCKS as u64,
        )?;
        Self::with_blocks(blocks as usize)
    }

    /// A filter whose bitset is `num_bytes` rounded up to whole 32-byte
    /// blocks (at least one): for matching a size another writer chose, e.g.
    /// arrow-rs's `Sbbf::new_with_num_of_bytes`. More than [`MAX_BLOCKS`]
    /// blocks is [`Error::TooLarge`].
    ///
    /// ```
    /// let f = amq::ParquetBloom::with_num_bytes(1000).unwrap();
    /// assert_eq!(f.num_bytes(), 1024);
    /// ```
    pub fn with_num_bytes(num_bytes: usize) -> Result<Self, Error> {
        let blocks = num_bytes.div_ceil(BLOCK_BYTES).max(1);
        if blocks > MAX_BLOCKS {
            return Err(Error::TooLarge);
        }
        Self::with_blocks(blocks)
    }

    /// Number of 256-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes of the bitset (the header's `numBytes`).
    pub fn num_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// The kernel this filter chose for the running CPU when it was made:
    /// `"avx2"` or `"portable"`. Both give identical answers and bits.
    ///
    /// ```
    /// let f = amq::ParquetBloom::with_num_bytes(64).unwrap();
    /// assert!(["avx2", "portable"].contains(&f.query_kernel()));
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// Adds the value whose Parquet hash ([`ParquetValue::parquet_hash`]) is
    /// `hash`. Never fails (a `Result` like every insert of the crate).
    ///
    /// ```
    /// use amq::{hash::parquet_hash, FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert_hash(parquet_hash(b"abc"))?;
    /// assert!(f.contains("abc"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    #[inline]
    pub fn insert_hash(&mut self, hash: ParquetHash) -> Result<(), Error> {
        self.kernel.insert(&mut self.blocks, hash.get());
        self.num_keys = self.num_keys.saturating_add(1).min(self.max_keys());
        Ok(())
    }

    /// Adds a value (hashed once, as Parquet does). Never fails.
    ///
    /// ```
    /// use amq::{FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(&42i64)?;
    /// f.insert("forty-two")?;
    /// assert!(f.contains(&42i64) && f.contains("forty-two"));
    /// assert!(!f.contains(&42i32)); // another physical type (almost surely)
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    #[inline]
    pub fn insert<V: ParquetValue + ?Sized>(&mut self, value: &V) -> Result<(), Error> {
        self.insert_hash(value.parquet_hash())
    }

    /// Adds every hash, prefetching the blocks of each batch of 32 first.
    /// The bits are exactly those of inserting one at a time. Never fails.
    ///
    /// ```
    /// use amq::{hash::ParquetHash, parquet::ParquetValue, FilterSizing, ParquetBloom};
    /// let hashes: Vec<ParquetHash> = (0..1000u32).map(|v| v.parquet_hash()).collect();
    /// let mut f = ParquetBloom::new(1000, FilterSizing::Fpr(0.01))?;
    /// f.insert_hashes(&hashes)?;
    /// assert!(f.contains(&7u32));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn insert_hashes(&mut self, hashes: &[ParquetHash]) -> Result<(), Error> {
        self.kernel
            .insert_many(&mut self.blocks, bytemuck::cast_slice(hashes));
        self.count(hashes.len());
        Ok(())
    }

    /// Adds every value: hashes a batch of 32, prefetches their blocks, then
    /// sets their bits. Never fails.
    ///
    /// ```
    /// use amq::{FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(3, FilterSizing::Fpr(0.01))?;
    /// f.insert_values(&["a", "b", "c"])?;
    /// assert!(f.contains("b"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn insert_values<V: ParquetValue>(&mut self, values: &[V]) -> Result<(), Error> {
        let mut hashes = [0u64; BATCH];
        for chunk in values.chunks(BATCH) {
            for (h, v) in hashes.iter_mut().zip(chunk) {
                *h = v.parquet_hash().get();
            }
            self.kernel.insert_many(&mut self.blocks, &hashes[..chunk.len()]);
        }
        self.count(values.len());
        Ok(())
    }

    fn count(&mut self, n: usize) {
        self.num_keys = self.num_keys.saturating_add(n as u64).min(self.max_keys());
    }

    /// Whether the value with this Parquet hash may be in the set.
    ///
    /// ```
    /// use amq::{hash::parquet_hash, FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert("abc")?;
    /// assert!(f.contains_hash(parquet_hash(b"abc")));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: ParquetHash) -> bool {
        self.kernel.contains(&self.blocks, hash.get())
    }

    /// `out[i] = self.contains_hash(hashes[i])`: computes and prefetches the
    /// blocks of a batch of 32 first, then probes them.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    ///
    /// ```
    /// use amq::{parquet::ParquetValue, FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(&1i64)?;
    /// let mut out = [false; 1];
    /// f.contains_hashes(&[1i64.parquet_hash()], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn contains_hashes(&self, hashes: &[ParquetHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        self.kernel
            .contains_many(&self.blocks, bytemuck::cast_slice(hashes), out);
    }

    /// Whether `value` may be in the set (hashed once, as Parquet does).
    #[inline]
    pub fn contains<V: ParquetValue + ?Sized>(&self, value: &V) -> bool {
        self.contains_hash(value.parquet_hash())
    }

    /// `out[i] = self.contains(&values[i])`: hashes a batch of 32 values,
    /// prefetches their blocks, then probes them.
    ///
    /// # Panics
    /// If `values.len() != out.len()`.
    ///
    /// ```
    /// use amq::{FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(100, FilterSizing::Fpr(0.01)).unwrap();
    /// f.insert_values(&[1i64, 2, 3]).unwrap();
    /// let mut out = [false; 3];
    /// f.contains_values(&[3i64, 2, 1], &mut out);
    /// assert_eq!(out, [true; 3]);
    /// ```
    pub fn contains_values<V: ParquetValue>(&self, values: &[V], out: &mut [bool]) {
        assert_eq!(values.len(), out.len(), "contains_values: length mismatch");
        let mut hashes = [0u64; BATCH];
        for (vs, os) in values.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (h, v) in hashes.iter_mut().zip(vs) {
                *h = v.parquet_hash().get();
            }
            self.kernel.contains_many(&self.blocks, &hashes[..vs.len()], os);
        }
    }

    /// ORs `other` into `self`: a filter of every value of both (same block
    /// count, else [`Error::Incompatible`] and `self` unchanged). Filters
    /// built on many machines at one size merge into one.
    ///
    /// ```
    /// let mut a = amq::ParquetBloom::with_num_bytes(4096).unwrap();
    /// let mut b = amq::ParquetBloom::with_num_bytes(4096).unwrap();
    /// a.insert("left").unwrap();
    /// b.insert("right").unwrap();
    /// a.union(&b).unwrap();
    /// assert!(a.contains("left") && a.contains("right"));
    /// assert!(a.union(&amq::ParquetBloom::with_num_bytes(32).unwrap()).is_err());
    /// ```
    pub fn union(&mut self, other: &ParquetBloom) -> Result<(), Error> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible);
        }
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        self.count(count_as_usize(other.num_keys));
        Ok(())
    }

    /// The count's saturation point (64 per bit, as every Bloom filter).
    fn max_keys(&self) -> u64 {
        max_keys(self.blocks.len() as u64 * 256)
    }

    /// Fraction of bits set.
    ///
    /// ```
    /// let f = amq::ParquetBloom::with_num_bytes(64).unwrap();
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        self.ones() as f64 / (self.blocks.len() as f64 * 256.0)
    }

    fn ones(&self) -> u64 {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The distinct values behind these bits, estimated from the fraction
    /// `Z` of clear bits: with `λ` values per block a word keeps a bit clear
    /// with probability `e^(-λ/32)`, so `n ≈ -32 · blocks · ln Z`. Used for
    /// filters read from Parquet bytes, whose header records no count (so
    /// their [`expected_fpr`](Self::expected_fpr) follows the bits).
    fn estimated_values(&self) -> u64 {
        let bits = self.blocks.len() as f64 * 256.0;
        let zero = (bits - self.ones() as f64) / bits;
        if zero <= 0.0 {
            return self.max_keys();
        }
        let n = -32.0 * self.blocks.len() as f64 * libm::log(zero);
        (libm::round(n) as u64).min(self.max_keys())
    }

    /// The bitset as a Parquet file stores it: every block's eight words,
    /// little-endian, block after block ([`num_bytes`](Self::num_bytes)
    /// bytes). What `sbbf-rs` and arrow-rs's `Sbbf::new` take.
    pub fn parquet_bitset(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.num_bytes());
        self.write_bitset(&mut out);
        out
    }

    fn write_bitset(&self, out: &mut Vec<u8>) {
        for w in self.blocks.iter().flat_map(|b| b.0) {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// The filter as a Parquet file stores it at a column chunk's
    /// `bloom_filter_offset`: the Thrift compact `BloomFilterHeader`
    /// (`numBytes`, `BLOCK`, `XXHASH`, `UNCOMPRESSED`) followed by the
    /// bitset. The whole length is what the column chunk's
    /// `bloom_filter_length` records.
    ///
    /// ```
    /// let f = amq::ParquetBloom::with_num_bytes(32).unwrap();
    /// let bytes = f.to_parquet_bytes();
    /// assert_eq!(&bytes[..15], [0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0]);
    /// assert_eq!(bytes.len(), 15 + 32);
    /// ```
    pub fn to_parquet_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + self.num_bytes());
        // At most MAX_BLOCKS blocks: the length fits the header's i32.
        thrift::write_header(&mut out, self.num_bytes() as u32);
        self.write_bitset(&mut out);
        out
    }

    /// Reads a filter from exactly a header and its bitset (what
    /// [`to_parquet_bytes`](Self::to_parquet_bytes) writes, or a Parquet
    /// file's `bloom_filter_length` bytes at `bloom_filter_offset`).
    /// Anything after the bitset is [`FormatError::TrailingBytes`]; use
    /// [`read_parquet`](Self::read_parquet) when more follows.
    ///
    /// The key count is estimated from the bits (the header records none).
    ///
    /// ```
    /// use amq::{Error, FormatError, ParquetBloom};
    /// let mut f = ParquetBloom::with_num_bytes(64).unwrap();
    /// f.insert("x").unwrap();
    /// let bytes = f.to_parquet_bytes();
    /// assert!(ParquetBloom::from_parquet_bytes(&bytes).unwrap().contains("x"));
    /// assert_eq!(
    ///     ParquetBloom::from_parquet_bytes(&bytes[..bytes.len() - 1]),
    ///     Err(Error::Format(FormatError::Truncated))
    /// );
    /// ```
    pub fn from_parquet_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (f, used) = Self::read_parquet(bytes)?;
        if used != bytes.len() {
            return Err(FormatError::TrailingBytes.into());
        }
        Ok(f)
    }

    /// Reads a header and its bitset from the start of `bytes`, and returns
    /// the filter and how many bytes they took (whatever follows is not
    /// read): for a buffer that starts at a column chunk's
    /// `bloom_filter_offset` when its `bloom_filter_length` is not recorded.
    pub fn read_parquet(bytes: &[u8]) -> Result<(Self, usize), Error> {
        let header = ParquetHeader::parse(bytes)?;
        let end = header
            .header_len()
            .checked_add(header.bitset_len())
            .ok_or(FormatError::Truncated)?;
        // Checked before allocating: the bitset must be in the input.
        let bitset = bytes
            .get(header.header_len()..end)
            .ok_or(FormatError::Truncated)?;
        Ok((Self::from_parquet_bitset(bitset)?, end))
    }

    /// Reads a bare bitset (no header), as `sbbf-rs` keeps it or arrow-rs's
    /// `Sbbf::new` takes it: a positive multiple of 32 bytes, at most
    /// [`MAX_BLOCKS`] blocks, else [`FormatError::InvalidParquetHeader`].
    /// The key count is estimated from the bits.
    pub fn from_parquet_bitset(bitset: &[u8]) -> Result<Self, Error> {
        let blocks = bitset.len() / BLOCK_BYTES;
        if !bitset.len().is_multiple_of(BLOCK_BYTES) || !(1..=MAX_BLOCKS).contains(&blocks) {
            return Err(
                FormatError::InvalidParquetHeader("numBytes is not a positive multiple of 32").into(),
            );
        }
        let mut f = Self::with_blocks(blocks)?;
        f.read_words(bitset);
        f.num_keys = f.estimated_values();
        Ok(f)
    }

    /// Fills the blocks from little-endian words (`bytes.len()` is exactly
    /// the bitset's).
    fn read_words(&mut self, bytes: &[u8]) {
        for (block, chunk) in self.blocks.iter_mut().zip(bytes.chunks_exact(BLOCK_BYTES)) {
            for (w, c) in block.0.iter_mut().zip(chunk.chunks_exact(4)) {
                *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let num_blocks = frame.params.u32()? as usize;
        let num_keys = frame.params.u64()?;
        frame.params.finish()?;
        if !(1..=MAX_BLOCKS).contains(&num_blocks) {
            return Err(FormatError::InvalidParameters("block count must be 1..=67108863").into());
        }
        if num_keys > max_keys(num_blocks as u64 * 256) {
            return Err(FormatError::InvalidParameters("more than 64 keys per bit").into());
        }
        if frame.payload.remaining() != num_blocks * BLOCK_BYTES {
            return Err(FormatError::InvalidParameters("payload length does not match block count").into());
        }
        let bytes = frame.payload.take(num_blocks * BLOCK_BYTES)?;
        frame.payload.finish()?;
        let mut f = Self::with_blocks(num_blocks)?;
        f.read_words(bytes);
        f.num_keys = num_keys;
        Ok(f)
    }
}

/// What every amq filter reports, for a filter driven by Parquet's hash.
impl ParquetBloom {
    /// Heap bytes of the bitset.
    ///
    /// ```
    /// assert_eq!(amq::ParquetBloom::with_num_bytes(64).unwrap().size_in_bytes(), 64);
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.num_bytes()
    }

    /// Values inserted (a filter read from Parquet bytes: estimated from its
    /// bits).
    ///
    /// ```
    /// let mut f = amq::ParquetBloom::with_num_bytes(64).unwrap();
    /// f.insert(&1i32).unwrap();
    /// assert_eq!(f.num_keys(), 1);
    /// ```
    #[doc(alias = "len", alias = "count")]
    pub fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }

    /// Whether the filter holds no value: [`num_keys`](Self::num_keys) is 0.
    ///
    /// ```
    /// let mut f = amq::ParquetBloom::with_num_bytes(64).unwrap();
    /// assert!(f.is_empty());
    /// f.insert(&1i32).unwrap();
    /// assert!(!f.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.num_keys == 0
    }

    /// `size_in_bytes · 8 / num_keys`; zero for an empty filter.
    ///
    /// ```
    /// let mut f = amq::ParquetBloom::with_num_bytes(64).unwrap();
    /// f.insert(&1i32).unwrap();
    /// assert_eq!(f.bits_per_key(), 512.0);
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        match self.num_keys {
            0 => 0.0,
            n => self.size_in_bytes() as f64 * 8.0 / n as f64,
        }
    }

    /// The false-positive rate the formula
    /// ([`math::split_block_bloom_fpr`]) gives at the current load.
    ///
    /// ```
    /// use amq::{FilterSizing, ParquetBloom};
    /// let mut f = ParquetBloom::new(10_000, FilterSizing::Fpr(0.01))?;
    /// f.insert_values(&(0..10_000i64).collect::<Vec<_>>())?;
    /// assert!((f.expected_fpr() - 0.01).abs() < 0.001);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expected_fpr(&self) -> f64 {
        math::split_block_bloom_fpr(self.blocks.len() as u64, self.num_keys)
    }

    /// The filter in amq's byte format (kind 11 of `docs/format.md`: the
    /// bitset and the exact insert count, checksummed); for the bytes a
    /// Parquet file holds, [`to_parquet_bytes`](Self::to_parquet_bytes).
    ///
    /// ```
    /// use amq::ParquetBloom;
    /// let mut f = ParquetBloom::with_num_bytes(64)?;
    /// f.insert("x")?;
    /// assert_eq!(ParquetBloom::from_bytes(&f.to_bytes())?, f);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u32(self.blocks.len() as u32).u64(self.num_keys);
        format::encode(FilterKind::ParquetBloom, &p.into_vec(), self.num_bytes(), |w| {
            for x in self.blocks.iter().flat_map(|b| b.0) {
                w.u32(x);
            }
        })
    }

    /// Reads back the bytes of [`to_bytes`](Self::to_bytes), every check
    /// made: a typed error, never a panic, for any input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::ParquetBloom)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    #[test]
    fn blocks_are_aligned_to_32_bytes() {
        let f = ParquetBloom::with_num_bytes(1 << 12).unwrap();
        assert_eq!(f.blocks.as_ptr() as usize % 32, 0);
    }

    #[test]
    fn sizing_meets_the_target_with_the_fewest_blocks() {
        for &p in &[0.1, 0.01, 0.001, 0.0001] {
            for n in [1usize, 7, 1000, 1_000_000] {
                let f = ParquetBloom::new(n, FilterSizing::Fpr(p)).unwrap();
                let z = f.num_blocks() as u64;
                assert!(math::split_block_bloom_fpr(z, n as u64) <= p);
                assert!(z == 1 || math::split_block_bloom_fpr(z - 1, n as u64) > p);
            }
        }
        assert_eq!(
            ParquetBloom::new(usize::MAX, FilterSizing::Fpr(0.01)),
            Err(Error::TooLarge)
        );
        assert!(ParquetBloom::new(0, FilterSizing::Fpr(0.01)).is_err());
        assert!(ParquetBloom::new(10, FilterSizing::Fpr(0.0)).is_err());
        assert_eq!(ParquetBloom::with_num_bytes(0).unwrap().num_blocks(), 1);
        assert_eq!(
            ParquetBloom::with_num_bytes(MAX_BLOCKS * 32 + 1),
            Err(Error::TooLarge)
        );
    }

    #[test]
    fn batched_and_single_operations_agree() {
        let h = |i: u64| ParquetHash::from_xxh64(remix(i, 4));
        let hashes: Vec<ParquetHash> = (0..3000u64).map(h).collect();
        let mut a = ParquetBloom::new(3000, FilterSizing::BitsPerKey(6.0)).unwrap();
        let mut b = a.clone();
        hashes.iter().for_each(|&h| a.insert_hash(h).unwrap());
        b.insert_hashes(&hashes).unwrap();
        assert_eq!(a, b);
        let probe: Vec<ParquetHash> = (0..10_000u64).map(h).collect();
        let mut out = alloc::vec![false; probe.len()];
        a.contains_hashes(&probe, &mut out);
        for (&h, &o) in probe.iter().zip(&out) {
            assert_eq!(o, a.contains_hash(h));
        }
        assert!(out[..3000].iter().all(|&o| o));
    }

    #[test]
    fn the_key_count_estimate_is_close() {
        let mut f = ParquetBloom::new(50_000, FilterSizing::Fpr(0.01)).unwrap();
        (0..50_000u64).for_each(|i| f.insert_hash(ParquetHash::from_xxh64(remix(i, 9))).unwrap());
        let est = f.estimated_values() as f64;
        assert!((est / 50_000.0 - 1.0).abs() < 0.02, "{est}");
        assert_eq!(ParquetBloom::with_num_bytes(64).unwrap().estimated_values(), 0);
        let mut full = ParquetBloom::with_num_bytes(32).unwrap();
        full.blocks[0] = Block([u32::MAX; 8]);
        assert_eq!(full.estimated_values(), full.max_keys());
    }
}
