//! The traits every filter implements, and the kinds of filter there are.
//!
//! The split follows what a filter can do after it exists:
//!
//! * [`Filter`]: answer queries. Object safe, so an LSM tree can keep a
//!   `Box<dyn Filter>` per SSTable without caring which kind it is.
//! * [`Insert`]: take new keys (Bloom family, cuckoo).
//! * [`Remove`]: also forget keys (counting Bloom, cuckoo).
//! * [`StaticFilter`]: built once from the whole key set (xor, binary fuse,
//!   ribbon), which is what lets them approach the space limit.
//!
//! Every method takes the one 64-bit key hash of [`hash_key`]; the `&[u8]`
//! forms hash once and delegate. The one exception is
//! [`ParquetBloom`](crate::ParquetBloom), which takes Apache Parquet's value
//! hash instead, and says so through [`Filter::hash_scheme`].

use alloc::vec::Vec;

use crate::{hash_key, Error, HashScheme};

/// Keys hashed per batch by [`Filter::contains_many_keys`]: a multiple of
/// the filters' own batches (32), and 512 bytes of stack.
const KEY_BATCH: usize = 64;

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
    /// Cuckoo filter with 4-slot buckets.
    Cuckoo = 4,
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
    /// ([`HashScheme::ParquetXxh64`]), not by [`hash_key`].
    ParquetBloom = 11,
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
        FilterKind::Cuckoo,
        FilterKind::Xor8,
        FilterKind::Xor16,
        FilterKind::BinaryFuse8,
        FilterKind::BinaryFuse16,
        FilterKind::BinaryFuse32,
        FilterKind::Ribbon,
        FilterKind::ParquetBloom,
    ];

    /// The hash scheme that drives filters of this kind: [`hash_key`]
    /// ([`HashScheme::Xxh3Seeded`]) for every kind but
    /// [`ParquetBloom`](FilterKind::ParquetBloom), which takes Parquet's value
    /// hash. Code that builds filters from amq key hashes (a storage engine's
    /// filter policy) must only use kinds whose scheme is `Xxh3Seeded`.
    ///
    /// ```
    /// use amq::{FilterKind, HashScheme};
    /// assert_eq!(FilterKind::Ribbon.hash_scheme(), HashScheme::Xxh3Seeded);
    /// assert_eq!(FilterKind::ParquetBloom.hash_scheme(), HashScheme::ParquetXxh64);
    /// let key_hashed = FilterKind::ALL
    ///     .iter()
    ///     .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded)
    ///     .count();
    /// assert_eq!(key_hashed, FilterKind::ALL.len() - 1);
    /// ```
    pub const fn hash_scheme(self) -> HashScheme {
        match self {
            FilterKind::ParquetBloom => HashScheme::ParquetXxh64,
            _ => HashScheme::Xxh3Seeded,
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

/// Query side of every filter: "is this key possibly in the set?"
///
/// `false` is definite: the key was never inserted. `true` means the key was
/// inserted, or is a false positive, which happens with probability about
/// [`expected_fpr`](Filter::expected_fpr) for a key that was not.
///
/// The trait is object safe and requires `Send + Sync`, so filters can be
/// shared across threads and stored as `Box<dyn Filter>`.
///
/// ```
/// use amq::{BlockedBloom, Filter, Insert};
/// let mut f = BlockedBloom::with_bits_per_key(1000, 10.0).unwrap();
/// f.insert(b"apple");
/// let as_dyn: &dyn Filter = &f;
/// assert!(as_dyn.contains(b"apple"));
/// // Hash once, probe many filters with the same hash:
/// let h = amq::hash_key(b"apple");
/// assert!(as_dyn.contains_hash(h));
/// ```
pub trait Filter: Send + Sync {
    /// Whether the key with this hash may be in the set: a [`hash_key`]
    /// value, or for a filter whose [`hash_scheme`](Filter::hash_scheme) is
    /// another one, a hash of that scheme.
    fn contains_hash(&self, hash: u64) -> bool;

    /// Whether `key` may be in the set. Hashes once, with the filter's
    /// [`hash_scheme`](Filter::hash_scheme), and calls
    /// [`contains_hash`](Filter::contains_hash).
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(hash_key(key))
    }

    /// The hash scheme [`contains_hash`](Filter::contains_hash) expects:
    /// [`HashScheme::Xxh3Seeded`] ([`hash_key`]) for every filter but a
    /// [`ParquetBloom`](crate::ParquetBloom). Code that hashes a key once and
    /// probes many filters with the hash should check it.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, HashScheme, ParquetBloom};
    /// let a = BlockedBloom::with_fpr(10, 0.01).unwrap();
    /// let b = ParquetBloom::with_fpr(10, 0.01).unwrap();
    /// assert_eq!(a.hash_scheme(), HashScheme::Xxh3Seeded);
    /// assert_eq!(b.hash_scheme(), HashScheme::ParquetXxh64);
    /// ```
    fn hash_scheme(&self) -> HashScheme {
        HashScheme::Xxh3Seeded
    }

    /// Answers `out[i] = self.contains_hash(hashes[i])` for every `i`.
    ///
    /// Filters override it where working on a batch pays (computing and
    /// prefetching every memory location first, then probing).
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = self.contains_hash(h);
        }
    }

    /// Answers `out[i] = self.contains(keys[i])` for every `i`: hashes the
    /// keys a batch at a time (with the filter's
    /// [`hash_scheme`](Filter::hash_scheme), once per key) into a buffer on
    /// the stack, then answers the batch with
    /// [`contains_many`](Filter::contains_many), so a filter whose batch query
    /// prefetches overlaps the cache misses of keys it is given as bytes too.
    /// No allocation.
    ///
    /// ```
    /// use amq::{BinaryFuse8, Filter, StaticFilter};
    /// let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("key{i}").into_bytes()).collect();
    /// let hashes: Vec<u64> = keys.iter().map(|k| amq::hash_key(k)).collect();
    /// let f = BinaryFuse8::build(&hashes).unwrap();
    /// let queries: Vec<&[u8]> = keys.iter().map(Vec::as_slice).chain([&b"absent"[..]]).collect();
    /// let mut out = vec![false; queries.len()];
    /// f.contains_many_keys(&queries, &mut out);
    /// assert!(out[..1000].iter().all(|&o| o));
    /// assert_eq!(out[1000], f.contains(b"absent"));
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn contains_many_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "contains_many_keys: length mismatch");
        let scheme = self.hash_scheme();
        let mut hashes = [0u64; KEY_BATCH];
        for (ks, os) in keys.chunks(KEY_BATCH).zip(out.chunks_mut(KEY_BATCH)) {
            let hs = &mut hashes[..ks.len()];
            match scheme {
                HashScheme::Xxh3Seeded => hs.iter_mut().zip(ks).for_each(|(h, k)| *h = hash_key(k)),
                _ => hs.iter_mut().zip(ks).for_each(|(h, k)| *h = scheme.hash(k)),
            }
            self.contains_many(hs, os);
        }
    }

    /// Asks the CPU to start loading the memory [`contains_hash`] will read
    /// for `hash`, and returns at once: a hint, with no effect on any answer.
    ///
    /// A caller that probes several filters with one hash (an LSM read
    /// consulting many tables) prefetches in all of them first, then probes,
    /// so the cache misses overlap instead of queueing. The default does
    /// nothing; kinds whose query reads a few known lines override it.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter};
    /// let mut a = BlockedBloom::with_fpr(1000, 0.01).unwrap();
    /// let b = BlockedBloom::with_fpr(1000, 0.01).unwrap();
    /// a.insert(b"k");
    /// let h = amq::hash_key(b"k");
    /// let filters: [&dyn Filter; 2] = [&a, &b];
    /// filters.iter().for_each(|f| f.prefetch_hash(h));
    /// let hits: Vec<bool> = filters.iter().map(|f| f.contains_hash(h)).collect();
    /// assert!(hits[0]);
    /// ```
    ///
    /// [`contains_hash`]: Filter::contains_hash
    #[inline]
    fn prefetch_hash(&self, hash: u64) {
        let _ = hash;
    }

    /// Heap bytes used by the filter's data (bits, counters, fingerprints).
    fn size_in_bytes(&self) -> usize;

    /// Number of keys the filter holds: distinct keys for static filters,
    /// successful insert calls for dynamic ones (duplicates count twice).
    fn num_keys(&self) -> usize;

    /// `size_in_bytes * 8 / num_keys`; zero for an empty filter.
    fn bits_per_key(&self) -> f64 {
        match self.num_keys() {
            0 => 0.0,
            n => self.size_in_bytes() as f64 * 8.0 / n as f64,
        }
    }

    /// The false-positive rate the formula predicts for this filter's
    /// parameters at its current load.
    fn expected_fpr(&self) -> f64;

    /// Which kind of filter this is.
    fn kind(&self) -> FilterKind;

    /// Serializes the filter into the versioned byte format of
    /// `docs/format.md` (header, parameters, payload, checksum).
    fn to_bytes(&self) -> Vec<u8>;
}

/// Forwards every method, so a reference or a smart pointer to a filter is a
/// filter too (`&dyn Filter`, `Box<dyn Filter>` and `Arc<dyn Filter>`
/// included).
///
/// ```
/// use std::sync::Arc;
/// use amq::{BlockedBloom, Filter};
/// fn hits(f: impl Filter, key: &[u8]) -> bool {
///     f.contains(key)
/// }
/// let mut f = BlockedBloom::with_fpr(100, 0.01).unwrap();
/// f.insert(b"k");
/// assert!(hits(&f, b"k"));
/// let boxed: Box<dyn Filter> = Box::new(f.clone());
/// assert!(hits(boxed, b"k"));
/// assert!(hits(Arc::new(f), b"k"));
/// ```
macro_rules! forward_filter {
    ($($(#[$cfg:meta])* impl[$($gen:tt)*] for $ty:ty;)*) => {$(
        $(#[$cfg])*
        impl<$($gen)*> Filter for $ty {
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                (**self).contains_hash(hash)
            }
            #[inline]
            fn contains(&self, key: &[u8]) -> bool {
                (**self).contains(key)
            }
            fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
                (**self).contains_many(hashes, out)
            }
            fn contains_many_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
                (**self).contains_many_keys(keys, out)
            }
            #[inline]
            fn prefetch_hash(&self, hash: u64) {
                (**self).prefetch_hash(hash)
            }
            fn size_in_bytes(&self) -> usize {
                (**self).size_in_bytes()
            }
            fn num_keys(&self) -> usize {
                (**self).num_keys()
            }
            fn bits_per_key(&self) -> f64 {
                (**self).bits_per_key()
            }
            fn expected_fpr(&self) -> f64 {
                (**self).expected_fpr()
            }
            fn kind(&self) -> FilterKind {
                (**self).kind()
            }
            fn hash_scheme(&self) -> HashScheme {
                (**self).hash_scheme()
            }
            fn to_bytes(&self) -> Vec<u8> {
                (**self).to_bytes()
            }
        }
    )*};
}

forward_filter! {
    impl['a, T: Filter + ?Sized] for &'a T;
    impl[T: Filter + ?Sized] for alloc::boxed::Box<T>;
    #[cfg(target_has_atomic = "ptr")]
    impl[T: Filter + ?Sized] for alloc::sync::Arc<T>;
}

/// Filters that take new keys after construction.
///
/// ```
/// use amq::{Filter, Insert, StandardBloom};
/// let mut f = StandardBloom::with_fpr(100, 0.01).unwrap();
/// Insert::insert(&mut f, b"k").unwrap();
/// assert!(f.contains(b"k"));
/// ```
pub trait Insert: Filter {
    /// Adds the key with this [`hash_key`] value (or hash of the filter's
    /// [`hash_scheme`](Filter::hash_scheme)).
    ///
    /// Bloom filters never fail. A cuckoo filter returns [`Error::Full`] when
    /// it has no room, and then still finds every key inserted before.
    fn insert_hash(&mut self, hash: u64) -> Result<(), Error>;

    /// Adds `key`: hashes once, with the filter's
    /// [`hash_scheme`](Filter::hash_scheme), and calls
    /// [`insert_hash`](Insert::insert_hash).
    #[inline]
    fn insert(&mut self, key: &[u8]) -> Result<(), Error> {
        self.insert_hash(hash_key(key))
    }
}

/// Filters that can forget a key that was inserted.
///
/// Removing a key that was never inserted but collides with one that was (a
/// false positive) removes the other key's trace, which can later make *that*
/// key a false negative. This is inherent to every deletable filter: only
/// remove keys you inserted.
///
/// ```
/// use amq::{CountingBloom, Error, Filter, Insert, Remove};
/// let mut f = CountingBloom::with_fpr(100, 0.01).unwrap();
/// f.insert(b"k");
/// Remove::remove(&mut f, b"k").unwrap();
/// assert!(!f.contains(b"k"));
/// assert_eq!(Remove::remove(&mut f, b"k"), Err(Error::NotPresent));
/// ```
pub trait Remove: Insert {
    /// Removes one occurrence of the key with this [`hash_key`] value.
    ///
    /// Returns [`Error::NotPresent`], changing nothing, when the filter says
    /// the key is definitely absent.
    fn remove_hash(&mut self, hash: u64) -> Result<(), Error>;

    /// Removes `key`: hashes once and calls [`remove_hash`](Remove::remove_hash).
    #[inline]
    fn remove(&mut self, key: &[u8]) -> Result<(), Error> {
        self.remove_hash(hash_key(key))
    }
}

/// Filters built once from the whole set of key hashes (xor, binary fuse,
/// ribbon). Duplicate hashes are allowed and removed during construction.
pub trait StaticFilter: Filter + Sized {
    /// Construction parameters (fingerprint width is usually a type parameter;
    /// this carries the rest, such as a target FPR).
    type Params;

    /// Builds the filter from [`hash_key`] values. Never hangs or panics:
    /// a failed attempt is retried with a fresh seed a bounded number of
    /// times, then [`Error::BuildFailed`] is returned.
    fn build(hashes: &[u64], params: &Self::Params) -> Result<Self, Error>;
}

/// Filters that can be read back from the bytes of [`Filter::to_bytes`].
///
/// Decoding validates everything and returns a typed error: it never panics,
/// never reads out of bounds and never allocates more than the input's length
/// implies.
pub trait FromBytes: Filter + Sized {
    /// Decodes a filter of this type.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error>;
}
