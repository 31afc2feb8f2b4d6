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
//! Every method takes the one [`KeyHash`] of a key ([`hash_key`]); the
//! `&[u8]` forms hash once and delegate. Methods are named by what they
//! take: `contains(key)` and `contains_hash(hash)` for one key,
//! `contains_keys` and `contains_hashes` for a batch, and the same for
//! `insert`. [`ParquetBloom`](crate::ParquetBloom), driven by Apache
//! Parquet's value hash, has an API of its own and is not a [`Filter`].

use alloc::vec::Vec;

use crate::{hash_key, Error, FilterKind, KeyHash};

/// Keys hashed per batch by [`Filter::contains_keys`]: a multiple of the
/// filters' own batches (32), and 512 bytes of stack.
const KEY_BATCH: usize = 64;

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
/// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
/// let mut f = BlockedBloom::new(1000, FilterSizing::BitsPerKey(10.0))?;
/// f.insert(b"apple")?;
/// let as_dyn: &dyn Filter = &f;
/// assert!(as_dyn.contains(b"apple"));
/// // Hash once, probe many filters with the same hash:
/// let h = amq::hash_key(b"apple");
/// assert!(as_dyn.contains_hash(h));
/// # Ok::<(), amq::Error>(())
/// ```
pub trait Filter: Send + Sync {
    /// Whether the key with this hash may be in the set.
    fn contains_hash(&self, hash: KeyHash) -> bool;

    /// Whether `key` may be in the set: hashes it once ([`hash_key`]) and
    /// calls [`contains_hash`](Filter::contains_hash).
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(hash_key(key))
    }

    /// Answers `out[i] = self.contains_hash(hashes[i])` for every `i`.
    ///
    /// Filters override it where working on a batch pays (computing and
    /// prefetching every memory location first, then probing).
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        for (o, &h) in out.iter_mut().zip(hashes) {
            *o = self.contains_hash(h);
        }
    }

    /// Answers `out[i] = self.contains(keys[i])` for every `i`: hashes the
    /// keys a batch at a time (once per key) into a buffer on the stack,
    /// then answers the batch with [`contains_hashes`](Filter::contains_hashes),
    /// so a filter whose batch query prefetches overlaps the cache misses of
    /// keys it is given as bytes too. No allocation.
    ///
    /// ```
    /// use amq::{hash_key, BinaryFuse8, Filter, KeyHash};
    /// let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("key{i}").into_bytes()).collect();
    /// let hashes: Vec<KeyHash> = keys.iter().map(|k| hash_key(k)).collect();
    /// let f = BinaryFuse8::build(&hashes)?;
    /// let queries: Vec<&[u8]> = keys.iter().map(Vec::as_slice).chain([&b"absent"[..]]).collect();
    /// let mut out = vec![false; queries.len()];
    /// f.contains_keys(&queries, &mut out);
    /// assert!(out[..1000].iter().all(|&o| o));
    /// assert_eq!(out[1000], f.contains(b"absent"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    fn contains_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "contains_keys: length mismatch");
        let mut hashes = [KeyHash::from_well_mixed(0); KEY_BATCH];
        for (ks, os) in keys.chunks(KEY_BATCH).zip(out.chunks_mut(KEY_BATCH)) {
            let hs = &mut hashes[..ks.len()];
            hs.iter_mut().zip(ks).for_each(|(h, k)| *h = hash_key(k));
            self.contains_hashes(hs, os);
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
    /// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
    /// let mut a = BlockedBloom::new(1000, FilterSizing::Fpr(0.01))?;
    /// let b = BlockedBloom::new(1000, FilterSizing::Fpr(0.01))?;
    /// a.insert(b"k")?;
    /// let h = amq::hash_key(b"k");
    /// let filters: [&dyn Filter; 2] = [&a, &b];
    /// filters.iter().for_each(|f| f.prefetch_hash(h));
    /// let hits: Vec<bool> = filters.iter().map(|f| f.contains_hash(h)).collect();
    /// assert!(hits[0]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    ///
    /// [`contains_hash`]: Filter::contains_hash
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let _ = hash;
    }

    /// Heap bytes used by the filter's data (bits, counters, fingerprints).
    fn size_in_bytes(&self) -> usize;

    /// Number of keys the filter holds: distinct keys for static filters,
    /// successful insert calls for dynamic ones (duplicates count twice).
    /// (Other crates' `len` or `count`; amq names it for what it counts.)
    ///
    /// ```
    /// use amq::{hash_u64, BinaryFuse8, Filter, FilterSizing, Insert, StandardBloom};
    /// let mut f = StandardBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// f.insert(b"k")?;
    /// assert_eq!(f.num_keys(), 2);
    /// let g = BinaryFuse8::build(&[1, 2, 2].map(hash_u64))?;
    /// assert_eq!(g.num_keys(), 2);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "len", alias = "count")]
    fn num_keys(&self) -> usize;

    /// Whether the filter holds no key: [`num_keys`](Filter::num_keys) is 0,
    /// and then every query answers `false`.
    ///
    /// ```
    /// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
    /// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// assert!(f.is_empty());
    /// f.insert(b"k")?;
    /// assert!(!f.is_empty());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// `size_in_bytes * 8 / num_keys`; zero for an empty filter.
    fn bits_per_key(&self) -> f64 {
        match self.num_keys() {
            0 => 0.0,
            n => self.size_in_bytes() as f64 * 8.0 / n as f64,
        }
    }

    /// The false-positive rate this filter promises: what the formula of
    /// its kind gives for its parameters at its current load. The
    /// statistical tests check measured rates against it.
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
/// use amq::{BlockedBloom, Filter, FilterSizing, Insert};
/// fn hits(f: impl Filter, key: &[u8]) -> bool {
///     f.contains(key)
/// }
/// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"k")?;
/// assert!(hits(&f, b"k"));
/// let boxed: Box<dyn Filter> = Box::new(f.clone());
/// assert!(hits(boxed, b"k"));
/// assert!(hits(Arc::new(f), b"k"));
/// # Ok::<(), amq::Error>(())
/// ```
macro_rules! forward_filter {
    ($($(#[$cfg:meta])* impl[$($gen:tt)*] for $ty:ty;)*) => {$(
        $(#[$cfg])*
        impl<$($gen)*> Filter for $ty {
            #[inline]
            fn contains_hash(&self, hash: KeyHash) -> bool {
                (**self).contains_hash(hash)
            }
            #[inline]
            fn contains(&self, key: &[u8]) -> bool {
                (**self).contains(key)
            }
            fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
                (**self).contains_hashes(hashes, out)
            }
            fn contains_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
                (**self).contains_keys(keys, out)
            }
            #[inline]
            fn prefetch_hash(&self, hash: KeyHash) {
                (**self).prefetch_hash(hash)
            }
            fn size_in_bytes(&self) -> usize {
                (**self).size_in_bytes()
            }
            fn num_keys(&self) -> usize {
                (**self).num_keys()
            }
            fn is_empty(&self) -> bool {
                (**self).is_empty()
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

/// Filters that take new keys after construction: the Bloom family, the
/// cuckoo filter and the quotient filters. Every insert returns a `Result`,
/// the same for every kind, so code written for one kind compiles for
/// another.
///
/// Why a `Result` when a Bloom insert cannot fail: a cuckoo or quotient
/// filter's can ([`Error::Full`], [`Error::TooManyCopies`]), and one trait
/// serves all, so generic code and [`AnyFilter`](crate::AnyFilter) handle
/// every kind alike. `check_and_insert` / `check_and_insert_hash` insert
/// and also say whether the key was (probably) there already: without a
/// `Result` on the Bloom kinds
/// ([`StandardBloom`](crate::StandardBloom::check_and_insert_hash),
/// [`BlockedBloom`](crate::BlockedBloom::check_and_insert_hash),
/// [`AtomicBlockedBloom`](crate::AtomicBlockedBloom::check_and_insert_hash),
/// [`CountingBloom`](crate::CountingBloom::check_and_insert_hash)), with one
/// on [`QuotientFilter`](crate::quotient::QuotientFilter::check_and_insert_hash),
/// [`ExpandingQuotientFilter`](crate::quotient::ExpandingQuotientFilter::check_and_insert_hash)
/// and [`AnyFilter`](crate::AnyFilter::check_and_insert_hash).
///
/// ```
/// use amq::{Filter, FilterSizing, Insert, StandardBloom};
/// let mut f = StandardBloom::new(100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"k")?;
/// assert!(f.contains(b"k"));
/// # Ok::<(), amq::Error>(())
/// ```
pub trait Insert: Filter {
    /// Adds the key with this hash.
    ///
    /// Bloom filters never fail. A cuckoo filter returns [`Error::Full`] when
    /// it has no room, or [`Error::TooManyCopies`] for a key it already holds
    /// as often as a key can be held, and then still finds every key
    /// inserted before.
    ///
    /// ```
    /// use amq::{hash_u64, CuckooFilter, Filter, FilterSizing, Insert};
    /// let mut f = CuckooFilter::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert_hash(hash_u64(42))?;
    /// assert!(f.contains_hash(hash_u64(42)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error>;

    /// Adds `key`: hashes it once ([`hash_key`]) and calls
    /// [`insert_hash`](Insert::insert_hash).
    ///
    /// ```
    /// use amq::{CountingBloom, Filter, FilterSizing, Insert};
    /// let mut f = CountingBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"apple")?;
    /// assert!(f.contains(b"apple"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "add")]
    #[inline]
    fn insert(&mut self, key: &[u8]) -> Result<(), Error> {
        self.insert_hash(hash_key(key))
    }

    /// Adds every hash in `hashes`, in order, stopping at the first error
    /// (the hashes before it are in, none after it). Kinds whose inserts
    /// touch a few known lines compute and prefetch a batch of them first.
    ///
    /// ```
    /// use amq::{hash_u64, BlockedBloom, Filter, FilterSizing, Insert, KeyHash};
    /// let hashes: Vec<KeyHash> = (0..1_000u64).map(hash_u64).collect();
    /// let mut f = BlockedBloom::new(hashes.len(), FilterSizing::Fpr(0.01))?;
    /// f.insert_hashes(&hashes)?;
    /// assert!(hashes.iter().all(|&h| f.contains_hash(h)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn insert_hashes(&mut self, hashes: &[KeyHash]) -> Result<(), Error> {
        hashes.iter().try_for_each(|&h| self.insert_hash(h))
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
/// use amq::{CountingBloom, Error, Filter, FilterSizing, Insert, Remove};
/// let mut f = CountingBloom::new(100, FilterSizing::Fpr(0.01))?;
/// f.insert(b"k")?;
/// f.remove(b"k")?;
/// assert!(!f.contains(b"k"));
/// assert_eq!(f.remove(b"k"), Err(Error::NotPresent));
/// # Ok::<(), amq::Error>(())
/// ```
pub trait Remove: Insert {
    /// Removes one occurrence of the key with this hash.
    ///
    /// Returns [`Error::NotPresent`], changing nothing, when the filter says
    /// the key is definitely absent.
    ///
    /// ```
    /// use amq::{hash_u64, CuckooFilter, Error, Filter, FilterSizing, Insert, Remove};
    /// let mut f = CuckooFilter::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert_hash(hash_u64(42))?;
    /// f.remove_hash(hash_u64(42))?;
    /// assert!(!f.contains_hash(hash_u64(42)));
    /// assert_eq!(f.remove_hash(hash_u64(42)), Err(Error::NotPresent));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "delete")]
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error>;

    /// Removes `key`: hashes it once and calls [`remove_hash`](Remove::remove_hash).
    ///
    /// ```
    /// use amq::{CountingBloom, Filter, FilterSizing, Insert, Remove};
    /// let mut f = CountingBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"apple")?;
    /// f.remove(b"apple")?;
    /// assert!(!f.contains(b"apple"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "delete")]
    #[inline]
    fn remove(&mut self, key: &[u8]) -> Result<(), Error> {
        self.remove_hash(hash_key(key))
    }
}

/// Filters built once from the whole set of key hashes (xor, binary fuse,
/// Ribbon). Duplicate hashes are allowed and removed during construction.
///
/// Each kind also has an inherent `build` for its common case
/// ([`Xor8::build`](crate::Xor8::build),
/// [`BinaryFuse8::build`](crate::BinaryFuse8::build),
/// [`Ribbon::build`](crate::Ribbon::build) with a
/// [`FilterSizing`](crate::FilterSizing)); this trait takes the kind's full
/// parameters, for code generic over static kinds.
///
/// ```
/// use amq::{hash_u64, BinaryFuse8, Filter, FuseParams, KeyHash, StaticFilter};
/// fn build_all<F: StaticFilter>(h: &[KeyHash], p: &F::Params) -> F {
///     F::build_with(h, p).unwrap()
/// }
/// let hashes: Vec<KeyHash> = (0..100u64).map(hash_u64).collect();
/// let f: BinaryFuse8 = build_all(&hashes, &FuseParams::default());
/// assert!(hashes.iter().all(|&h| f.contains_hash(h)));
/// ```
pub trait StaticFilter: Filter + Sized {
    /// Construction parameters (the fingerprint width is a type parameter;
    /// this carries the rest, such as Ribbon's result bits).
    type Params;

    /// Builds the filter from key hashes. Never hangs or panics: a failed
    /// attempt is retried with a fresh seed a bounded number of times, then
    /// [`Error::BuildFailed`] is returned.
    fn build_with(hashes: &[KeyHash], params: &Self::Params) -> Result<Self, Error>;
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
