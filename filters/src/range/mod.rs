//! Range filters: "may any key lie in `lo..=hi`?" over `u64` keys, the
//! question a storage engine asks before reading a table for a range scan.
//!
//! [`RangeFilter`] is the range counterpart of [`Filter`](crate::Filter):
//! `false` is definite (no key lies in the range), `true` may be a false
//! positive. It stands beside `Filter`, not inside it: a range filter takes
//! its keys as ordered `u64`s, not as [`KeyHash`](crate::KeyHash)es (a hash
//! destroys the order a range query needs), so its frames name their own
//! key scheme ([`HashScheme::OrderedU64`](crate::HashScheme::OrderedU64)),
//! [`AnyFilter`](crate::AnyFilter) refuses them with
//! [`Error::WrongHashScheme`], and the
//! point-filter planner leaves the kind out ([`plan::predict_range`](crate::plan::predict_range)
//! sizes it), as it does the Parquet filter.
//!
//! | filter | bits per key | FPR for an empty range of `ℓ` keys | module |
//! |--------|--------------|------------------------------------|--------|
//! | [`GrafiteRange`] | `B` | at most `ℓ / 2^(B − 2.32)` for any keys and queries (whole `B`) | [`grafite`] |
//! | [`MementoFilter`] | `(F + 1 + m + 2.125)/load`, load 0.475–0.95 | about `⌈ℓ/2^m⌉·0.475·(H+2)·2^−F` for any keys and queries | [`memento`] |
//!
//! [`GrafiteRange`] is built once from all its keys and is the smaller;
//! [`MementoFilter`] inserts, removes and grows with no size given.
//!
//! Byte-string keys map to `u64`s in order with a [`KeyMap`] fitted to the
//! keys: it keeps only the byte positions where they differ, each in as
//! many bits as the bytes seen there need (a decimal digit costs 3.3 bits),
//! so composite, decimal and long-headed keys become dense integers, and
//! maps any query bound conservatively. [`key_to_u64`] is the simpler map
//! of the eight bytes past a common prefix: keys that share those eight
//! bytes become one `u64`, which only adds false positives.
//!
//! ```
//! use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
//!
//! let keys: Vec<u64> = (0..10_000u64).map(|i| i * 1_000).collect();
//! let f = GrafiteRange::build(&keys, RangeSizing::Fpr { fpr: 0.01, max_range_len: 64 })?;
//! assert!(f.may_contain_range(41_990, 42_010)); // holds 42,000
//! assert!(f.may_contain(5_000));
//! // Empty ranges of up to 64 keys are false positives at most 1% of the time.
//! let empty = (0..10_000u64).filter(|i| f.may_contain_range(i * 1_000 + 1, i * 1_000 + 64)).count();
//! assert!(empty < 200);
//! assert!(f.expected_fpr(64) <= 0.01);
//! # Ok::<(), amq::Error>(())
//! ```

use alloc::vec::Vec;

use crate::error::invalid;
use crate::{Error, FilterKind};

mod choose;
pub mod grafite;
pub mod infix;
mod keyed;
pub mod keymap;
mod keys;
pub mod memento;
mod scan_fit;
#[cfg(feature = "std")]
mod scan_sample;

pub use choose::infix_for_scans;
pub use grafite::{GrafiteRange, GrafiteRangeView};
pub use infix::InfixRange;
pub use keyed::KeyRangeFilter;
pub use keymap::{KeyMap, KeyMapBuilder};
pub use keys::{common_prefix, key_to_u64};
pub use memento::{MementoFilter, MementoOptions};
pub use scan_fit::{fit_to_scans, ScanFit, ScanRange};
#[cfg(feature = "std")]
pub use scan_sample::{SampledScans, ScanSample, MAX_SAMPLED_BOUND};

/// Query side of every range filter: "may some key lie in `lo..=hi`?"
///
/// Keys are `u64`s in their natural order; a build takes them in any order,
/// duplicates allowed. `false` is definite: no key lies in the range.
/// `true` means a key does, or is a false positive, which for an empty range
/// of `ℓ` keys happens with probability at most
/// [`expected_fpr(ℓ)`](RangeFilter::expected_fpr).
///
/// Object safe and `Send + Sync`, like [`Filter`](crate::Filter).
///
/// ```
/// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
/// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
/// let as_dyn: &dyn RangeFilter = &f;
/// assert!(as_dyn.may_contain_range(15, 25));
/// assert!(!as_dyn.may_contain_range(25, 15)); // lo > hi: an empty range
/// # Ok::<(), amq::Error>(())
/// ```
pub trait RangeFilter: Send + Sync {
    /// Whether some key may lie in `lo..=hi` (both ends included). When
    /// `lo > hi` the range is empty and the answer is `false`; it never
    /// panics. `lo..=u64::MAX` and `0..=u64::MAX` are ranges like any other.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert!(f.may_contain_range(11, 20) && f.may_contain_range(0, u64::MAX));
    /// assert!(!f.may_contain_range(30, 10));
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn may_contain_range(&self, lo: u64, hi: u64) -> bool;

    /// Whether `key` may be one of the keys: the range `key..=key`.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert!(f.may_contain(20));
    /// assert_eq!(f.may_contain(21), f.may_contain_range(21, 21));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    fn may_contain(&self, key: u64) -> bool {
        self.may_contain_range(key, key)
    }

    /// Answers `out[i] = self.may_contain_range(ranges[i].0, ranges[i].1)`
    /// for every `i`. Filters override it where working on a batch pays:
    /// [`GrafiteRange`] and its view take 16 queries at a time through each
    /// of a query's three dependent reads, so their cache misses overlap.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let keys: Vec<u64> = (0..10_000u64).map(|i| i * 100).collect();
    /// let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
    /// let ranges: Vec<(u64, u64)> = (0..1_000u64).map(|i| (i * 100 + 1, i * 100 + 99)).chain([(5_000, 5_000)]).collect();
    /// let mut out = vec![true; ranges.len()];
    /// f.may_contain_ranges(&ranges, &mut out);
    /// assert!(out[1_000]); // holds key 5,000
    /// assert!(out[..1_000].iter().filter(|&&o| o).count() < 100);
    /// # Ok::<(), amq::Error>(())
    /// ```
    ///
    /// # Panics
    /// If `ranges.len() != out.len()`.
    #[doc(alias = "contains_ranges")]
    fn may_contain_ranges(&self, ranges: &[(u64, u64)], out: &mut [bool]) {
        assert_eq!(ranges.len(), out.len(), "one answer per range");
        for (o, &(lo, hi)) in out.iter_mut().zip(ranges) {
            *o = self.may_contain_range(lo, hi);
        }
    }

    /// A hint to start loading what [`may_contain_range(lo, hi)`](RangeFilter::may_contain_range)
    /// will read, for a caller that asks many filters (a scan over the
    /// tables of an LSM tree): prefetch each filter first, then ask each,
    /// and their cache misses overlap instead of following each other. It
    /// changes no answer; the default does nothing.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let filters: Vec<GrafiteRange> = (0..8u64)
    ///     .map(|t| GrafiteRange::build(&[t, 100 + t], RangeSizing::BitsPerKey(16.0)))
    ///     .collect::<Result<_, _>>()?;
    /// for f in &filters {
    ///     f.prefetch_range(50, 60);
    /// }
    /// assert!(filters.iter().all(|f| !f.may_contain_range(50, 60)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    fn prefetch_range(&self, lo: u64, hi: u64) {
        let _ = (lo, hi);
    }

    /// The false-positive rate the filter promises for an empty range of
    /// `range_len` keys (`hi − lo + 1`): a bound proven for every key set and
    /// every range chosen without knowing the filter's seed. 0 for an empty
    /// filter or `range_len == 0`; 1.0 where the kind promises nothing.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert!(f.expected_fpr(1) < 1e-4);
    /// assert!((f.expected_fpr(100) / f.expected_fpr(1) - 100.0).abs() < 1e-6);
    /// assert_eq!(f.expected_fpr(0), 0.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn expected_fpr(&self, range_len: u64) -> f64;

    /// Heap bytes of the filter's data.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert_eq!(f.size_in_bytes() % 8, 0); // whole words
    /// assert!(f.size_in_bytes() <= 64);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn size_in_bytes(&self) -> usize;

    /// The keys the filter holds: distinct keys for a filter built once
    /// ([`GrafiteRange`]); keys inserted less keys removed, every copy
    /// counted, for one that takes inserts ([`MementoFilter`]).
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert_eq!(f.num_keys(), 3);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "len", alias = "count")]
    fn num_keys(&self) -> usize;

    /// Whether the filter holds no key: [`num_keys`](RangeFilter::num_keys)
    /// is 0, and then every range answers `false` (a [`MementoFilter`]
    /// whose keys were all removed included).
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert!(!f.is_empty());
    /// let empty = GrafiteRange::build(&[], RangeSizing::BitsPerKey(16.0))?;
    /// assert!(empty.is_empty() && !empty.may_contain_range(0, u64::MAX));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    fn is_empty(&self) -> bool {
        self.num_keys() == 0
    }

    /// `size_in_bytes · 8 / num_keys`; zero for an empty filter.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert_eq!(f.bits_per_key(), f.size_in_bytes() as f64 * 8.0 / 3.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn bits_per_key(&self) -> f64 {
        match self.num_keys() {
            0 => 0.0,
            n => self.size_in_bytes() as f64 * 8.0 / n as f64,
        }
    }

    /// Which kind of filter this is.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert_eq!(f.kind(), amq::FilterKind::GrafiteRange);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn kind(&self) -> FilterKind;

    /// Serializes the filter into the versioned byte format of
    /// `docs/format.md`.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[10, 20, 30], RangeSizing::BitsPerKey(16.0))?;
    /// assert_eq!(GrafiteRange::from_bytes(&f.to_bytes())?, f);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn to_bytes(&self) -> Vec<u8>;
}

/// Forwards every method, so a reference or smart pointer to a range filter
/// is one too.
///
/// ```
/// use std::sync::Arc;
/// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
/// fn hits(f: impl RangeFilter) -> bool {
///     f.may_contain(7)
/// }
/// let f = GrafiteRange::build(&[7], RangeSizing::BitsPerKey(16.0))?;
/// assert!(hits(&f));
/// assert!(hits(Arc::new(f.clone())));
/// assert!(hits(Box::new(f) as Box<dyn RangeFilter>));
/// # Ok::<(), amq::Error>(())
/// ```
macro_rules! forward_range_filter {
    ($($(#[$cfg:meta])* impl[$($gen:tt)*] for $ty:ty;)*) => {$(
        $(#[$cfg])*
        impl<$($gen)*> RangeFilter for $ty {
            #[inline]
            fn may_contain_range(&self, lo: u64, hi: u64) -> bool {
                (**self).may_contain_range(lo, hi)
            }
            #[inline]
            fn may_contain(&self, key: u64) -> bool {
                (**self).may_contain(key)
            }
            #[inline]
            fn prefetch_range(&self, lo: u64, hi: u64) {
                (**self).prefetch_range(lo, hi)
            }
            fn may_contain_ranges(&self, ranges: &[(u64, u64)], out: &mut [bool]) {
                (**self).may_contain_ranges(ranges, out)
            }
            fn expected_fpr(&self, range_len: u64) -> f64 {
                (**self).expected_fpr(range_len)
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
            fn kind(&self) -> FilterKind {
                (**self).kind()
            }
            fn to_bytes(&self) -> Vec<u8> {
                (**self).to_bytes()
            }
        }
    )*};
}

forward_range_filter! {
    impl['a, T: RangeFilter + ?Sized] for &'a T;
    impl[T: RangeFilter + ?Sized] for alloc::boxed::Box<T>;
    #[cfg(target_has_atomic = "ptr")]
    impl[T: RangeFilter + ?Sized] for alloc::sync::Arc<T>;
}

/// How big a range filter should be: bits per key, or a false-positive rate
/// for ranges up to a length. Every range filter's `build` takes one.
///
/// ```
/// use amq::range::RangeSizing;
/// assert!(RangeSizing::BitsPerKey(16.0).validate().is_ok());
/// assert!(RangeSizing::Fpr { fpr: 0.01, max_range_len: 1024 }.validate().is_ok());
/// assert!(RangeSizing::Fpr { fpr: 0.01, max_range_len: 0 }.validate().is_err());
/// assert!(RangeSizing::BitsPerKey(f64::NAN).validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum RangeSizing {
    /// About this many bits of filter per distinct key, everything counted
    /// (for [`GrafiteRange`]: the Elias–Fano code and its select samples),
    /// in `(0, 1000]`; each kind narrows it ([`GrafiteRange`]: `2..=64`).
    /// The false-positive rate then grows with the range length: about
    /// `ℓ / 2^(B − 2.32)` for [`GrafiteRange`] (whole `B`; at most
    /// `ℓ / 2^(B − 2.5)`).
    BitsPerKey(f64),
    /// At most `fpr` false positives, in `(0, 1)`, for every empty range of
    /// up to `max_range_len` keys (at least 1); shorter ranges get
    /// proportionally fewer. Space grows with `log2(max_range_len / fpr)`.
    Fpr {
        /// The false-positive rate for a range of `max_range_len` keys.
        fpr: f64,
        /// The longest range the rate is promised for.
        max_range_len: u64,
    },
}

impl RangeSizing {
    /// Checks the numbers are in their domains: bits per key finite in
    /// `(0, 1000]`, an FPR in `(0, 1)`, a range length of at least 1. Each
    /// kind may narrow the domain further when it builds.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// assert!(RangeSizing::Fpr { fpr: 1.0, max_range_len: 1 }.validate().is_err());
    /// ```
    pub fn validate(self) -> Result<Self, Error> {
        match self {
            RangeSizing::BitsPerKey(b) if b > 0.0 && b <= 1000.0 => Ok(self),
            RangeSizing::BitsPerKey(_) => Err(invalid("bits_per_key", "must be in (0, 1000]")),
            RangeSizing::Fpr { fpr, .. } if !(fpr > 0.0 && fpr < 1.0) => {
                Err(invalid("fpr", "must be strictly between 0 and 1"))
            }
            RangeSizing::Fpr { max_range_len: 0, .. } => Err(invalid("max_range_len", "must be at least 1")),
            RangeSizing::Fpr { .. } => Ok(self),
        }
    }
}
