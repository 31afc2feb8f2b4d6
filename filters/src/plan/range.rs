//! What a range filter will be, predicted without building it: the range
//! kinds' counterpart of [`predict`](super::predict). The point-filter
//! planner ranks kinds driven by key hashes and leaves the range kinds out
//! (a range filter answers another question); this sizes them.

use crate::error::invalid;
use crate::range::grafite::{fpr_bound, sizing};
use crate::range::RangeSizing;
use crate::{Error, FilterKind};

/// What a range filter of one kind and sizing will be with a number of
/// distinct keys, predicted by [`predict_range`].
///
/// ```
/// use amq::plan::predict_range;
/// use amq::range::RangeSizing;
/// use amq::FilterKind;
/// let p = predict_range(FilterKind::GrafiteRange, 1_000_000, RangeSizing::BitsPerKey(16.0))?;
/// assert!(p.bits_per_key() < 16.001 && p.bits_per_key() > 15.9);
/// assert!(p.expected_fpr(1) < 1.0 / 2f64.powf(13.5));
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangePrediction {
    bytes: u64,
    keys: usize,
    universe: u64,
}

impl RangePrediction {
    /// [`RangeFilter::size_in_bytes`](crate::range::RangeFilter::size_in_bytes)
    /// of the filter built from the keys predicted for (hash collisions can
    /// make a built filter a few bytes smaller, never larger).
    ///
    /// ```
    /// use amq::plan::predict_range;
    /// use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
    /// use amq::FilterKind;
    /// let keys: Vec<u64> = (0..10_000u64).map(|i| i * 12_345).collect();
    /// let sizing = RangeSizing::Fpr { fpr: 0.01, max_range_len: 32 };
    /// let p = predict_range(FilterKind::GrafiteRange, keys.len(), sizing)?;
    /// let f = GrafiteRange::build(&keys, sizing)?;
    /// assert!(f.size_in_bytes() as u64 <= p.size_in_bytes());
    /// assert!(f.size_in_bytes() as u64 + 64 >= p.size_in_bytes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> u64 {
        self.bytes
    }

    /// Bits per key: `size_in_bytes · 8 / keys`.
    ///
    /// ```
    /// use amq::plan::predict_range;
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// let p = predict_range(FilterKind::GrafiteRange, 1_000, RangeSizing::BitsPerKey(20.0))?;
    /// assert!(p.bits_per_key() < 20.5);
    /// // 1% for point queries (ranges of one key): 8.95 bits per key.
    /// let sizing = RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 };
    /// let p = predict_range(FilterKind::GrafiteRange, 1_000_000, sizing)?;
    /// assert!((p.bits_per_key() - 8.95).abs() < 0.01);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.keys as f64
    }

    /// [`RangeFilter::expected_fpr`](crate::range::RangeFilter::expected_fpr)
    /// of the built filter for an empty range of `range_len` keys.
    ///
    /// ```
    /// use amq::plan::predict_range;
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// let sizing = RangeSizing::Fpr { fpr: 0.001, max_range_len: 100 };
    /// let p = predict_range(FilterKind::GrafiteRange, 1_000_000, sizing)?;
    /// assert!(p.expected_fpr(100) <= 0.001 && p.expected_fpr(100) > 0.00099);
    /// assert!((p.expected_fpr(10) / p.expected_fpr(100) - 0.1).abs() < 1e-9);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expected_fpr(&self, range_len: u64) -> f64 {
        fpr_bound(range_len, self.keys as u64, self.universe)
    }
}

/// What [`GrafiteRange::build`](crate::range::GrafiteRange::build) of
/// `keys` distinct keys with `sizing` would make, predicted without
/// building it (arithmetic only, the builder's own sizing), for a caller
/// choosing a sizing. `kind` names the range kind
/// ([`FilterKind::GrafiteRange`], the one there is).
///
/// Errors: [`Error::InvalidParameter`] for a kind that is not a range
/// filter (point filters: [`predict`](super::predict)) and for the sizings
/// the build refuses.
///
/// ```
/// use amq::plan::predict_range;
/// use amq::range::RangeSizing;
/// use amq::FilterKind;
/// // 10M keys, 1% false positives on empty ranges of up to 1,024 keys.
/// let sizing = RangeSizing::Fpr { fpr: 0.01, max_range_len: 1024 };
/// let p = predict_range(FilterKind::GrafiteRange, 10_000_000, sizing)?;
/// assert!(p.bits_per_key() < 2.6 + (1024.0f64 / 0.01).log2());
/// assert!(predict_range(FilterKind::Ribbon, 10, sizing).is_err());
/// # Ok::<(), amq::Error>(())
/// ```
pub fn predict_range(kind: FilterKind, keys: usize, sizing: RangeSizing) -> Result<RangePrediction, Error> {
    if kind != FilterKind::GrafiteRange {
        return Err(invalid(
            "kind",
            "not a range filter kind (point filters: plan::predict)",
        ));
    }
    let keys = keys.max(1);
    let shape = sizing::shape(keys as u64, sizing.validate()?)?;
    Ok(RangePrediction {
        bytes: shape.layout.size_in_bytes() as u64,
        keys,
        universe: shape.universe,
    })
}
