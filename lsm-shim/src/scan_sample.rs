//! The scans a store has seen, kept so that the tables it writes next can
//! fit their range filters to them ([`amq::range::fit_to_scans`]).
//!
//! A range filter's key map can drop low bits of its codes so that a time
//! window over keys with a random tail, or a gap between neighbouring long
//! keys, becomes a range short enough to ask; that makes a range just past
//! a key always pass, and the keys alone do not say which kind of scan a
//! store serves. So every bounded scan's bounds go into a ring of the last
//! [`Options::range_fit_scans`](crate::Options::range_fit_scans), and a
//! flush or compaction hands a copy to each table it writes. The sample is
//! in memory only: a reopened store starts without one (its tables keep
//! the resolution they were written with, in their bytes).

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::{Arc, Mutex};

use amq::range::ScanRange;

/// Bounds longer than this are not sampled (their scans are answered as
/// ever; the fit sees fewer scans).
const MAX_BOUND_BYTES: usize = 256;

/// A scan's owned bounds.
pub(crate) type OwnedScan = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The last `capacity` bounded scans.
#[derive(Debug, Default)]
pub(crate) struct ScanSample {
    capacity: usize,
    scans: Mutex<VecDeque<OwnedScan>>,
}

impl ScanSample {
    /// A sample of the last `capacity` scans (0: none kept).
    pub(crate) fn new(capacity: usize) -> Self {
        ScanSample {
            capacity,
            scans: Mutex::new(VecDeque::with_capacity(capacity)),
        }
    }

    /// Records a scan with both bounds set and neither past
    /// [`MAX_BOUND_BYTES`]; others are not kept.
    pub(crate) fn record(&self, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) {
        let short = |b: &Bound<Vec<u8>>| match b {
            Bound::Included(k) | Bound::Excluded(k) => k.len() <= MAX_BOUND_BYTES,
            Bound::Unbounded => false,
        };
        if self.capacity == 0 || !short(lo) || !short(hi) {
            return;
        }
        let mut scans = self.scans.lock().unwrap_or_else(|e| e.into_inner());
        if scans.len() == self.capacity {
            scans.pop_front();
        }
        scans.push_back((lo.clone(), hi.clone()));
    }

    /// A copy of the scans kept, for one flush or compaction.
    pub(crate) fn snapshot(&self) -> Arc<[OwnedScan]> {
        let scans = self.scans.lock().unwrap_or_else(|e| e.into_inner());
        scans.iter().cloned().collect()
    }
}

/// The scans as [`amq::range::fit_to_scans`] takes them.
pub(crate) fn as_ranges(scans: &[OwnedScan]) -> Vec<ScanRange<'_>> {
    fn b(x: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        x.as_ref().map(Vec::as_slice)
    }
    scans.iter().map(|(lo, hi)| (b(lo), b(hi))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bounded_scans() {
        let s = ScanSample::new(3);
        let key = |i: u8| Bound::Included(vec![i]);
        for i in 0..5 {
            s.record(&key(i), &key(i + 1));
        }
        s.record(&Bound::Unbounded, &key(9));
        s.record(&key(7), &Bound::Included(vec![0; MAX_BOUND_BYTES + 1]));
        let kept: Vec<OwnedScan> = s.snapshot().to_vec();
        assert_eq!(kept, (2..5).map(|i| (key(i), key(i + 1))).collect::<Vec<_>>());
        assert_eq!(
            as_ranges(&kept)[0],
            (Bound::Included(&[2u8][..]), Bound::Included(&[3u8][..]))
        );
        let none = ScanSample::new(0);
        none.record(&key(1), &key(2));
        assert!(none.snapshot().is_empty());
    }
}
