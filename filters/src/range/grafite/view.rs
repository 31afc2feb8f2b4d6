//! A Grafite filter answered in place from its serialized bytes: the owned
//! filter's query (`query.rs`) over the frame's payload words, with no copy
//! and no allocation.

use alloc::vec::Vec;

use super::frame::parse_frame;
use super::hash::LocalityHash;
use super::{fpr_bound, query, GrafiteRange};
use crate::format::{self, Checksum};
use crate::range::RangeFilter;
use crate::succinct::{DenseSelect, EfCore, LeWords};
use crate::{Error, FilterKind};

/// A [`GrafiteRange`] read in place from its bytes
/// ([`RangeFilter::to_bytes`]). [`new`](Self::new) checks the frame,
/// checksum included; [`trusted`](Self::trusted) all but the checksum, in
/// O(1). Either way no byte string makes a query read out of bounds or
/// panic; what the O(1) checks cannot see (the code's words themselves) can
/// only make a view of bytes changed after their checksum was verified give
/// wrong answers. [`GrafiteRange::from_bytes`] checks every word.
///
/// ```
/// use amq::range::{GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
///
/// let keys: Vec<u64> = (0..1_000u64).map(|i| i << 20).collect();
/// let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
/// let bytes = f.to_bytes();
/// let view = GrafiteRangeView::new(&bytes)?;
/// assert!(keys.iter().all(|&k| view.may_contain_range(k.saturating_sub(5), k)));
/// assert_eq!(view.size_in_bytes(), f.size_in_bytes());
/// assert_eq!(view.to_filter()?, f);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GrafiteRangeView<'a> {
    frame: &'a [u8],
    ef: EfCore<LeWords<'a>>,
    hash: LocalityHash,
    num_keys: u64,
}

impl<'a> GrafiteRangeView<'a> {
    /// A view over a serialized Grafite filter, every check of the frame made
    /// (checksum included, O(n)).
    ///
    /// ```
    /// use amq::range::{GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
    /// let mut bytes = GrafiteRange::build(&[7], RangeSizing::BitsPerKey(12.0))?.to_bytes();
    /// assert!(GrafiteRangeView::new(&bytes)?.may_contain(7));
    /// bytes[40] ^= 1;
    /// assert!(GrafiteRangeView::new(&bytes).is_err()); // the checksum
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum, in O(1).
    ///
    /// ```
    /// use amq::range::{GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
    /// let bytes = GrafiteRange::build(&[7], RangeSizing::BitsPerKey(12.0))?.to_bytes();
    /// let view = GrafiteRangeView::trusted(&bytes)?;
    /// assert!(view.may_contain_range(0, 10));
    /// assert!(GrafiteRangeView::trusted(&bytes[..20]).is_err()); // lengths are checked
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::GrafiteRange, checksum)?;
        let (parts, mut payload) = parse_frame(frame)?;
        let words = LeWords::new(payload.take(payload.remaining())?);
        Ok(GrafiteRangeView {
            frame: bytes,
            ef: EfCore {
                words,
                layout: parts.layout,
            },
            hash: LocalityHash::new(parts.seed, parts.layout.universe),
            num_keys: parts.num_keys,
        })
    }

    /// The filter copied out of the bytes, every word checked.
    ///
    /// ```
    /// use amq::range::{GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
    /// let f = GrafiteRange::build(&[1, 2, 3], RangeSizing::BitsPerKey(12.0))?;
    /// let bytes = f.to_bytes();
    /// assert_eq!(GrafiteRangeView::new(&bytes)?.to_filter()?, f);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn to_filter(&self) -> Result<GrafiteRange, Error> {
        GrafiteRange::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::GrafiteRange,
            Checksum::Trusted,
        )?)
    }
}

impl RangeFilter for GrafiteRangeView<'_> {
    #[inline]
    fn may_contain_range(&self, lo: u64, hi: u64) -> bool {
        query::may_contain_range(&self.ef, &DenseSelect::EMPTY, &self.hash, lo, hi)
    }
    fn may_contain_ranges(&self, ranges: &[(u64, u64)], out: &mut [bool]) {
        query::may_contain_ranges(&self.ef, &DenseSelect::EMPTY, &self.hash, ranges, out);
    }
    fn expected_fpr(&self, range_len: u64) -> f64 {
        fpr_bound(range_len, self.num_keys, self.hash.universe())
    }
    fn size_in_bytes(&self) -> usize {
        self.ef.layout.size_in_bytes()
    }
    fn num_keys(&self) -> usize {
        usize::try_from(self.num_keys).unwrap_or(usize::MAX)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::GrafiteRange
    }
    /// The frame itself (there is one version of this kind's bytes).
    fn to_bytes(&self) -> Vec<u8> {
        self.frame.to_vec()
    }
}
