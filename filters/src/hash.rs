//! The key hash that drives every filter, its type, and the small integer
//! tools that turn it into positions.
//!
//! A key is hashed exactly once into a [`KeyHash`]. Every filter in this
//! crate is driven by that value alone (`contains_hash`, `insert_hash`,
//! `build(&[KeyHash])`), so a caller that probes many filters for one key
//! (an LSM read probing one filter per SSTable) pays for one hash. A filter
//! that needs more than 64 bits derives them by *remixing* the hash with
//! [`remix`], never by hashing the key again.
//!
//! # Why a type, not a `u64`
//!
//! Filters take the hash's bits at face value: a blocked Bloom filter picks
//! the block from the high bits and the probes from the low ones, a cuckoo
//! filter its fingerprint from the low bits. Structured numbers (ids
//! `0..n`, timestamps, pointers) have nearly constant high bits, so a filter
//! fed them as hashes puts every key in one block and answers "maybe" to
//! everything, or fills its table. A [`KeyHash`] can only be made by
//! hashing ([`hash_key`] for bytes, [`hash_u64`] for integers) or by one
//! explicit promise ([`KeyHash::from_well_mixed`]), so no plain integer
//! reaches a filter by accident. It is a `u64` in memory
//! (`#[repr(transparent)]`) and costs nothing at run time.
//!
//! # Hash schemes
//!
//! The hash is part of the on-disk format: a filter written today must
//! answer for the same keys when it is read back years later. The scheme is
//! named in every serialized header ([`HashScheme`]) and pinned by
//! golden-value tests. Each scheme has its own type: [`KeyHash`] for amq's
//! own (every kind but one), [`ParquetHash`] for Apache Parquet's value
//! hash, which only a [`ParquetBloom`](crate::ParquetBloom) takes. The type
//! system keeps them apart: a Parquet hash cannot probe an amq filter, nor
//! an amq hash a Parquet filter.
//!
//! Other entries than whole keys are hashed with a seed of their own into a
//! [`KeyHash`] too: a key's prefix through [`hash_prefix`]. One filter can
//! then hold several kinds of entry without an entry of one kind answering
//! for an equal byte string of another.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seed of the key hash: the ASCII bytes `"amq-key\0"` read as a little-endian
/// `u64`. Changing it changes the on-disk format (see [`HashScheme`]).
pub const KEY_HASH_SEED: u64 = u64::from_le_bytes(*b"amq-key\0");

/// Seed of the prefix hash ([`hash_prefix`]): the ASCII bytes `"amq-pfx\0"`
/// read as a little-endian `u64`, so a prefix and a whole key of the same
/// bytes hash apart. Changing it changes the on-disk format.
pub const PREFIX_HASH_SEED: u64 = u64::from_le_bytes(*b"amq-pfx\0");

/// The 64-bit hash of a key that every amq filter is driven by.
///
/// There is no `From`, `Into` or `TryFrom` from integers or bytes: `42u64.into()`
/// and `KeyHash::from(42u64)` do not compile, on purpose (a raw integer
/// passed as a hash ruins a filter silently, see [the module](crate::hash)).
/// Make one with
///
/// * [`hash_u64`] for an integer key (`hash_u64(id)`),
/// * [`hash_key`] for a key's bytes (`hash_key(b"user:42")`),
/// * [`KeyHash::from_well_mixed`] for a hash the caller already computed
///   with a good hash function of its own (xxh3, wyhash, SipHash...).
///
/// Filters built from and probed with the same [`KeyHash`]es answer
/// consistently; a filter never sees a raw integer.
///
/// ```
/// use amq::{hash_key, hash_u64, KeyHash};
/// let h: KeyHash = hash_key(b"user:42");
/// assert_eq!(h, hash_key(b"user:42"));
/// // An integer key hashes as its eight little-endian bytes.
/// assert_eq!(hash_u64(42), hash_key(&42u64.to_le_bytes()));
/// // Stored and read back as a u64 (it is the same value).
/// assert_eq!(KeyHash::from_well_mixed(h.get()), h);
/// ```
///
/// It is plain old data ([`bytemuck::Pod`]), so a slice of stored hashes
/// can be cast to `&[KeyHash]` without a copy: the same promise as
/// [`KeyHash::from_well_mixed`], made for every element.
///
/// A raw integer does not convert:
///
/// ```compile_fail
/// let h: amq::KeyHash = 42u64.into();
/// ```
///
/// ```compile_fail
/// let h = amq::KeyHash::from(42u64);
/// ```
///
/// The other way, a `KeyHash` gives its bits up freely
/// ([`get`](KeyHash::get), or `u64::from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct KeyHash(u64);

impl KeyHash {
    /// A hash the caller computed with a hash function of its own, taken as
    /// it is.
    ///
    /// The caller promises the value is *well mixed*: every bit about
    /// equally likely 0 or 1 and independent of the others, as the output of
    /// xxh3, wyhash, SipHash or a SplitMix64 finaliser is. Raw integers,
    /// counters, timestamps and pointers are not: pass those to
    /// [`hash_u64`]. A filter fed poorly mixed values still never gives a
    /// false negative, but its false-positive rate can reach 100% (a
    /// blocked Bloom filter picks the block from the high bits) and a cuckoo
    /// filter can refuse keys.
    ///
    /// Filters built from such hashes answer only for the same function's
    /// hashes; [`hash_key`] of the same key is a different value.
    ///
    /// ```
    /// use amq::{hash::remix, KeyHash};
    /// // A SplitMix64-style finaliser's output is well mixed.
    /// let h = KeyHash::from_well_mixed(remix(7, 1));
    /// assert_eq!(h.get(), remix(7, 1));
    /// ```
    #[inline(always)]
    pub const fn from_well_mixed(hash: u64) -> KeyHash {
        KeyHash(hash)
    }

    /// The hash's 64 bits, to store or to send; [`KeyHash::from_well_mixed`]
    /// turns them back into the same `KeyHash`.
    ///
    /// ```
    /// let h = amq::hash_key(b"k");
    /// assert_eq!(amq::KeyHash::from_well_mixed(h.get()), h);
    /// ```
    #[inline(always)]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// The hashes' bits, for the kinds' batch kernels (which work on `u64`s).
#[inline(always)]
pub(crate) fn raw(hashes: &[KeyHash]) -> &[u64] {
    bytemuck::cast_slice(hashes)
}

impl From<KeyHash> for u64 {
    /// The hash's bits ([`KeyHash::get`]).
    #[inline(always)]
    fn from(h: KeyHash) -> u64 {
        h.0
    }
}

/// Hashes a key's bytes into the [`KeyHash`] that drives every filter.
///
/// This is xxh3-64 (xxhash-rust) with seed [`KEY_HASH_SEED`]. It is stable
/// across platforms, Rust versions and releases of this crate with the same
/// [`HashScheme`].
///
/// ```
/// let h = amq::hash_key(b"hello");
/// assert_eq!(h, amq::hash_key(b"hello"));
/// assert_ne!(h, amq::hash_key(b"hellp"));
/// ```
#[inline]
pub fn hash_key(key: &[u8]) -> KeyHash {
    KeyHash(xxh3_64_with_seed(key, KEY_HASH_SEED))
}

/// Hashes a key *prefix* into a [`KeyHash`], apart from whole keys: xxh3-64
/// with seed [`PREFIX_HASH_SEED`], so `hash_prefix(p)` and `hash_key(p)`
/// differ even for equal bytes, and one filter can hold both the keys of a
/// table and their prefixes ([`PrefixExtractor`](crate::prefix::PrefixExtractor))
/// without a prefix answering for an equal whole key, or the reverse.
///
/// ```
/// use amq::{hash_key, hash_prefix};
/// assert_ne!(hash_prefix(b"user:42:"), hash_key(b"user:42:"));
/// assert_eq!(hash_prefix(b"user:42:"), hash_prefix(b"user:42:"));
/// ```
#[inline]
pub fn hash_prefix(prefix: &[u8]) -> KeyHash {
    KeyHash(xxh3_64_with_seed(prefix, PREFIX_HASH_SEED))
}

/// Hashes an integer key into a [`KeyHash`]: the same value as
/// [`hash_key`] of its eight little-endian bytes, so a store that keys by
/// `id.to_le_bytes()` and a caller that holds the `u64` agree.
///
/// Use it for ids, counters and any other integer key: unlike a raw `u64`,
/// its bits are well mixed, so every filter gets its expected false-positive
/// rate on sequential keys. The length is known, so xxh3 takes its short
/// fixed path (a few multiplies).
///
/// ```
/// use amq::{hash_u64, BlockedBloom, Filter, FilterSizing, Insert};
/// let mut f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
/// for id in 0..1_000u64 {
///     f.insert_hash(hash_u64(id)).unwrap();
/// }
/// assert!((0..1_000u64).all(|id| f.contains_hash(hash_u64(id))));
/// let fp = (1_000..101_000u64).filter(|&id| f.contains_hash(hash_u64(id))).count();
/// assert!(fp < 2_000, "{fp} false positives of 100,000");
/// ```
#[inline]
pub fn hash_u64(key: u64) -> KeyHash {
    KeyHash(xxh3_64_with_seed(&key.to_le_bytes(), KEY_HASH_SEED))
}

/// The hash of a value as Apache Parquet's Bloom filters take it: XXH64 with
/// seed 0 of the value's plain encoding ([`HashScheme::ParquetXxh64`]).
///
/// Only a [`ParquetBloom`](crate::ParquetBloom) takes it; amq's own filters
/// take a [`KeyHash`], so neither can be probed with the other's hash.
/// Made by [`parquet_hash`] (a plain-encoded value's bytes),
/// [`ParquetValue::parquet_hash`](crate::parquet::ParquetValue::parquet_hash)
/// (a typed value), or [`ParquetHash::from_xxh64`] (an XXH64 value computed
/// elsewhere, e.g. by another Parquet library).
///
/// ```
/// use amq::hash::{parquet_hash, ParquetHash};
/// let h = parquet_hash(b"");
/// assert_eq!(h.get(), 0xef46_db37_51d8_e999);
/// assert_eq!(ParquetHash::from_xxh64(h.get()), h);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct ParquetHash(u64);

impl ParquetHash {
    /// A value's XXH64 (seed 0) hash of its plain encoding, computed
    /// elsewhere: the value Parquet's writers and readers use.
    ///
    /// ```
    /// let h = amq::hash::ParquetHash::from_xxh64(17_241_709_254_077_376_921);
    /// assert_eq!(h, amq::hash::parquet_hash(b""));
    /// ```
    #[inline(always)]
    pub const fn from_xxh64(hash: u64) -> ParquetHash {
        ParquetHash(hash)
    }

    /// The hash's 64 bits.
    ///
    /// ```
    /// assert_eq!(amq::hash::parquet_hash(b"").get(), 17_241_709_254_077_376_921);
    /// ```
    #[inline(always)]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// The hash scheme recorded in every serialized filter header.
///
/// A filter built from hashes of one scheme only answers for keys hashed with
/// the same scheme, so decoding refuses a scheme it does not know, and a
/// frame whose scheme is not the one its kind uses
/// ([`FilterKind::hash_scheme`](crate::FilterKind::hash_scheme)).
///
/// Every kind but two is driven by [`KeyHash`] ([`hash_key`]). The
/// exceptions: [`ParquetBloom`](crate::ParquetBloom), whose bits must mean
/// what Apache Parquet's readers expect, takes a [`ParquetHash`]; the range
/// filter [`GrafiteRange`](crate::range::GrafiteRange) takes the keys
/// themselves as ordered `u64`s.
///
/// ```
/// use amq::HashScheme;
/// assert_eq!(HashScheme::from_id(1), Some(HashScheme::Xxh3Seeded));
/// assert_eq!(HashScheme::Xxh3Seeded.id(), 1);
/// assert_eq!(HashScheme::from_id(2), Some(HashScheme::ParquetXxh64));
/// assert_eq!(HashScheme::from_id(3), Some(HashScheme::OrderedU64));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashScheme {
    /// [`hash_key`]: xxh3-64 with seed [`KEY_HASH_SEED`], as a [`KeyHash`].
    Xxh3Seeded,
    /// Apache Parquet's Bloom filter hash: XXH64 with seed 0 of the value's
    /// plain encoding, as a [`ParquetHash`].
    ParquetXxh64,
    /// No key hash: the keys themselves, as `u64`s in their order (the range
    /// filters, [`range`](crate::range), which hash them with a seed of their
    /// own recorded in their parameters; byte strings through
    /// [`key_to_u64`](crate::range::key_to_u64)).
    OrderedU64,
}

impl HashScheme {
    /// The byte that names this scheme in a header.
    pub const fn id(self) -> u8 {
        match self {
            HashScheme::Xxh3Seeded => 1,
            HashScheme::ParquetXxh64 => 2,
            HashScheme::OrderedU64 => 3,
        }
    }

    /// The scheme a header byte names, if this version knows it.
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(HashScheme::Xxh3Seeded),
            2 => Some(HashScheme::ParquetXxh64),
            3 => Some(HashScheme::OrderedU64),
            _ => None,
        }
    }
}

/// Apache Parquet's Bloom filter hash of a plain-encoded value: XXH64
/// (xxhash-rust) with seed 0.
///
/// The bytes are the value's Parquet plain encoding: the raw bytes of a byte
/// array (without its length prefix), the little-endian bytes of an integer
/// or float. [`ParquetValue`](crate::parquet::ParquetValue) encodes typed
/// values; this takes the bytes.
///
/// ```
/// // The test vector of the format: the hash of the empty string.
/// assert_eq!(amq::hash::parquet_hash(b"").get(), 0xef46_db37_51d8_e999);
/// ```
#[inline]
pub fn parquet_hash(bytes: &[u8]) -> ParquetHash {
    ParquetHash(xxhash_rust::xxh64::xxh64(bytes, 0))
}

/// Maps a 64-bit hash uniformly onto `0..n` with one multiplication
/// (Lemire's multiply-shift "fastrange"): `(h * n) >> 64`.
///
/// It uses the *high* bits of `h`, so callers that also take bits from `h`
/// for another purpose should take the low ones. No division, so it is safe
/// for probe loops.
///
/// ```
/// assert_eq!(amq::hash::reduce(0, 10), 0);
/// assert_eq!(amq::hash::reduce(u64::MAX, 10), 9);
/// assert_eq!(amq::hash::reduce(1 << 63, 10), 5);
/// ```
#[inline(always)]
pub const fn reduce(h: u64, n: u64) -> u64 {
    ((h as u128 * n as u128) >> 64) as u64
}

/// Maps a 32-bit hash uniformly onto `0..n` with one multiplication:
/// `(h * n) >> 32`.
///
/// ```
/// assert_eq!(amq::hash::reduce32(u32::MAX, 512), 511);
/// ```
#[inline(always)]
pub const fn reduce32(h: u32, n: u32) -> u32 {
    ((h as u64 * n as u64) >> 32) as u32
}

/// Derives a new, independent-looking 64-bit value from a hash and a seed.
///
/// This is the finaliser of SplitMix64 / MurmurHash3 (`fmix64`) applied to
/// `h + seed * golden`: a bijection of `h` for each seed, so distinct hashes
/// stay distinct, and different seeds give unrelated outputs. Static filters
/// use it to retry construction with a fresh seed; filters that need more bits
/// than 64 use it to stretch the one key hash.
///
/// ```
/// use amq::hash::remix;
/// assert_ne!(remix(1, 0), remix(1, 1));
/// assert_ne!(remix(1, 0), remix(2, 0));
/// ```
#[inline(always)]
pub const fn remix(h: u64, seed: u64) -> u64 {
    let mut z = h.wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden values: these pin the on-disk meaning of every serialized filter.
    /// If this test fails, the hash changed and every stored filter is wrong.
    #[test]
    fn golden_key_hashes() {
        assert_eq!(KEY_HASH_SEED, 0x0079_656b_2d71_6d61);
        assert_eq!(hash_key(b"").get(), GOLDEN[0]);
        assert_eq!(hash_key(b"a").get(), GOLDEN[1]);
        assert_eq!(hash_key(b"hello").get(), GOLDEN[2]);
        assert_eq!(hash_key(&[0u8; 300]).get(), GOLDEN[3]);
    }

    /// The integer path is the byte path of the integer's little-endian
    /// bytes, pinned here for a few values.
    #[test]
    fn integer_keys_hash_as_their_bytes() {
        for x in [0u64, 1, 42, u64::MAX, 1 << 63, 0x0123_4567_89ab_cdef] {
            assert_eq!(hash_u64(x), hash_key(&x.to_le_bytes()));
        }
        assert_ne!(hash_u64(1), hash_u64(2));
    }

    /// Cross-checked against the reference xxh3 implementation (Python
    /// `xxhash.xxh3_64_intdigest(key, seed)`).
    const GOLDEN: [u64; 4] = [
        0x08aa_8d14_c28f_59d7,
        0xab39_29b5_bf50_1601,
        0xf5c0_71ca_412b_b9d5,
        0x7c96_6f2d_dd8c_dbbe,
    ];

    /// Pins the prefix hash (part of the on-disk meaning of every filter
    /// that holds prefixes), and that it is apart from the key hash.
    #[test]
    fn golden_prefix_hashes() {
        assert_eq!(PREFIX_HASH_SEED, u64::from_le_bytes(*b"amq-pfx\0"));
        assert_eq!(hash_prefix(b"").get(), xxh3_64_with_seed(b"", PREFIX_HASH_SEED));
        assert_eq!(hash_prefix(b"user:").get(), GOLDEN_PREFIX);
        for p in [&b""[..], b"a", b"user:", &[0u8; 64]] {
            assert_ne!(hash_prefix(p), hash_key(p));
        }
    }

    /// Cross-checked against the reference xxh3 (Python
    /// `xxhash.xxh3_64_intdigest(b"user:", seed)`).
    const GOLDEN_PREFIX: u64 = 0x0ba6_6d0c_e593_a3c9;

    #[test]
    fn golden_remix() {
        assert_eq!(remix(0, 0), 0);
        assert_eq!(remix(1, 0), GOLDEN_REMIX[0]);
        assert_eq!(remix(1, 1), GOLDEN_REMIX[1]);
    }

    const GOLDEN_REMIX: [u64; 2] = [0x5692_161d_100b_05e5, 0x910a_2dec_8902_5cc1];

    /// Pins Parquet's value hash: XXH64, seed 0. The empty string's hash is
    /// the format's own test vector (arrow-rs checks the same value); the
    /// others were cross-checked against an independent XXH64 written from
    /// the xxHash specification, which also gives the empty string's value.
    #[test]
    fn golden_parquet_hashes() {
        assert_eq!(parquet_hash(b"").get(), 17_241_709_254_077_376_921);
        assert_eq!(parquet_hash(b"a").get(), GOLDEN_PARQUET[0]);
        assert_eq!(parquet_hash(&7i64.to_le_bytes()).get(), GOLDEN_PARQUET[1]);
        assert_eq!(parquet_hash(&[0u8; 40]).get(), GOLDEN_PARQUET[2]);
        assert_ne!(parquet_hash(b"a").get(), hash_key(b"a").get());
    }

    const GOLDEN_PARQUET: [u64; 3] = [
        0xd24e_c4f1_a98c_6e5b,
        0x0876_cd40_6afd_e455,
        0xf628_aee6_2df1_d172,
    ];

    #[test]
    fn scheme_ids_round_trip() {
        for s in [
            HashScheme::Xxh3Seeded,
            HashScheme::ParquetXxh64,
            HashScheme::OrderedU64,
        ] {
            assert_eq!(HashScheme::from_id(s.id()), Some(s));
        }
        assert_eq!(HashScheme::from_id(0), None);
        assert_eq!(HashScheme::from_id(4), None);
    }

    #[test]
    fn reduce_is_in_range_and_monotone() {
        let n = 1_000_003u64;
        let mut last = 0;
        for i in 0..1000u64 {
            let h = i.wrapping_mul(u64::MAX / 1000);
            let r = reduce(h, n);
            assert!(r < n);
            assert!(r >= last);
            last = r;
        }
        assert_eq!(reduce(u64::MAX, 1), 0);
        assert_eq!(reduce32(u32::MAX, 1), 0);
    }
}
