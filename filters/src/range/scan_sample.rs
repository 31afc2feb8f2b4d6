//! [`ScanSample`]: the latest scans a store or an engine's filter policy
//! has seen, kept so that the tables it writes next can fit their range
//! filters to them ([`fit_to_scans`](super::fit_to_scans)).
//!
//! Whether a table's key map should drop low bits of its codes depends on
//! the scans it will be asked, which the keys alone do not tell (see
//! [`fit_to_scans`](super::fit_to_scans)), so a writer keeps a ring of the
//! last scans' bounds and hands a copy to each table it builds.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Bound;
use std::sync::Mutex;

use super::ScanRange;

/// Bounds longer than this are not sampled (their scans are answered as
/// ever; the fit sees fewer scans).
pub const MAX_SAMPLED_BOUND: usize = 256;

/// One scan's bounds, owned.
type OwnedScan = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The last `capacity` scans with both bounds set, each bound at most
/// [`MAX_SAMPLED_BOUND`] bytes; shared between the readers that record and
/// the writers that [`snapshot`](Self::snapshot) it (with `std`).
///
/// ```
/// use std::ops::Bound::{Excluded, Included, Unbounded};
/// use amq::range::ScanSample;
/// let s = ScanSample::new(2);
/// for k in [&b"a"[..], b"b", b"c"] {
///     s.record(Included(k), Excluded(b"z"));
/// }
/// s.record(Unbounded, Excluded(b"z")); // not both bounds: not kept
/// let scans = s.snapshot();
/// assert_eq!(scans.ranges(), [(Included(&b"b"[..]), Excluded(&b"z"[..])), (Included(&b"c"[..]), Excluded(&b"z"[..]))]);
/// ```
#[derive(Debug, Default)]
pub struct ScanSample {
    capacity: usize,
    scans: Mutex<VecDeque<OwnedScan>>,
}

/// A copy of a [`ScanSample`]'s scans, cheap to clone.
///
/// ```
/// use amq::range::ScanSample;
/// assert!(ScanSample::new(8).snapshot().ranges().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct SampledScans(Arc<[OwnedScan]>);

impl ScanSample {
    /// A sample of the last `capacity` scans (0: none kept).
    ///
    /// ```
    /// use std::ops::Bound::Included;
    /// use amq::range::ScanSample;
    /// let none = ScanSample::new(0);
    /// none.record(Included(b"a"), Included(b"b"));
    /// assert!(none.snapshot().ranges().is_empty());
    /// ```
    pub fn new(capacity: usize) -> Self {
        ScanSample {
            capacity,
            scans: Mutex::new(VecDeque::with_capacity(capacity)),
        }
    }

    /// Records a scan if both bounds are set and neither is longer than
    /// [`MAX_SAMPLED_BOUND`], forgetting the oldest past the capacity.
    pub fn record(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) {
        fn short(b: Bound<&[u8]>) -> bool {
            matches!(b, Bound::Included(k) | Bound::Excluded(k) if k.len() <= MAX_SAMPLED_BOUND)
        }
        if self.capacity == 0 || !short(lo) || !short(hi) {
            return;
        }
        let mut scans = self.scans.lock().unwrap_or_else(|e| e.into_inner());
        if scans.len() == self.capacity {
            scans.pop_front();
        }
        scans.push_back((lo.map(<[u8]>::to_vec), hi.map(<[u8]>::to_vec)));
    }

    /// A copy of the scans kept, oldest first.
    pub fn snapshot(&self) -> SampledScans {
        let scans = self.scans.lock().unwrap_or_else(|e| e.into_inner());
        SampledScans(scans.iter().cloned().collect())
    }
}

impl SampledScans {
    /// The scans as [`fit_to_scans`](super::fit_to_scans) and
    /// [`KeyRangeFilter::build_for_scans`](super::KeyRangeFilter::build_for_scans)
    /// take them.
    pub fn ranges(&self) -> Vec<ScanRange<'_>> {
        fn b(x: &Bound<Vec<u8>>) -> Bound<&[u8]> {
            x.as_ref().map(Vec::as_slice)
        }
        self.0.iter().map(|(lo, hi)| (b(lo), b(hi))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn keeps_the_last_bounded_short_scans() {
        let s = ScanSample::new(3);
        let key = |i: u8| vec![i];
        for i in 0..5u8 {
            s.record(Bound::Included(&key(i)), Bound::Excluded(&key(i + 1)));
        }
        s.record(Bound::Unbounded, Bound::Included(&key(9)));
        s.record(Bound::Included(&key(7)), Bound::Unbounded);
        let long = vec![0u8; MAX_SAMPLED_BOUND + 1];
        s.record(Bound::Included(&key(7)), Bound::Included(&long));
        let snap = s.snapshot();
        let want: Vec<(Vec<u8>, Vec<u8>)> = (2..5u8).map(|i| (key(i), key(i + 1))).collect();
        let got: Vec<(Vec<u8>, Vec<u8>)> = snap
            .ranges()
            .iter()
            .map(|r| match r {
                (Bound::Included(a), Bound::Excluded(b)) => (a.to_vec(), b.to_vec()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, want);
        // A bound of exactly the limit is kept.
        s.record(Bound::Included(&long[1..]), Bound::Included(&long[1..]));
        assert_eq!(s.snapshot().ranges().len(), 3);
        assert_eq!(s.snapshot().ranges()[2].0, Bound::Included(&long[1..]));
    }
}
