//! The range query of a [`MementoFilter`]: each partition the range
//! touches, one run each, and the [`RangeFilter`] impl.

use alloc::vec::Vec;

use super::{MementoFilter, MAX_PARTITIONS};
use crate::quotient::expanding::fingerprint;
use crate::range::RangeFilter;
use crate::succinct::bits::low_mask;
use crate::FilterKind;

/// Runs up to this long are read whole; longer ones (many keys in one
/// partition) are searched, once per fingerprint length in use.
const SCAN: usize = 16;

impl MementoFilter {
    /// Whether quotient `x`'s run holds an entry whose fingerprint the
    /// code bits `bits` match and whose memento is in `lo..=hi`.
    #[inline]
    pub(super) fn probe(&self, x: usize, bits: u64, lo: u64, hi: u64) -> bool {
        if !self.g.table.is_occupied(x) {
            return false;
        }
        let Some(run) = self.g.kernel.run(&self.g.table, x) else {
            return false;
        };
        let m = self.g.payload;
        let (start, end) = (*run.start(), *run.end());
        if end - start < SCAN {
            let low = low_mask(m);
            return run.into_iter().any(|s| {
                let v = self.g.table.value(s);
                (lo..=hi).contains(&(v & low)) && fingerprint::matches(v >> m, bits)
            });
        }
        // The run is sorted by code, then memento: for each length L in
        // use, the entries that match are exactly those whose code is the
        // key's first L bits, between `code·2^m + lo` and `code·2^m + hi`.
        let width = self.g.table.width() - m;
        (0..width).filter(|&l| self.g.lengths[l as usize] != 0).any(|l| {
            let code = fingerprint::entry(bits, width, l) << m;
            let s = self.lower_bound(start, end + 1, code | lo);
            s <= end && self.g.table.value(s) <= code | hi
        })
    }

    /// The first slot of `from..to` (a sorted run) whose value is at least
    /// `v`, or `to`.
    fn lower_bound(&self, mut from: usize, mut to: usize, v: u64) -> usize {
        while from < to {
            let mid = from + (to - from) / 2;
            if self.g.table.value(mid) < v {
                from = mid + 1;
            } else {
                to = mid;
            }
        }
        from
    }
}

impl RangeFilter for MementoFilter {
    /// Probes each partition `lo..=hi` touches, the memento bounds cut to
    /// the range at its two ends. A range over [`MAX_PARTITIONS`]
    /// partitions answers `true`.
    fn may_contain_range(&self, lo: u64, hi: u64) -> bool {
        if lo > hi || self.g.table.len() == 0 {
            return false;
        }
        let m = self.g.payload;
        let (first, last) = (lo >> m, hi >> m);
        if last - first >= MAX_PARTITIONS {
            return true;
        }
        let low = low_mask(m);
        (first..=last).any(|p| {
            let (x, bits) = self.split_prefix(p);
            let from = if p == first { lo & low } else { 0 };
            let to = if p == last { hi & low } else { low };
            self.probe(x, bits, from, to)
        })
    }

    /// Prefetches the first partition of 16 ranges at a time, then answers
    /// them, so their cache misses overlap.
    fn may_contain_ranges(&self, ranges: &[(u64, u64)], out: &mut [bool]) {
        assert_eq!(ranges.len(), out.len(), "one answer per range");
        for (rs, os) in ranges.chunks(16).zip(out.chunks_mut(16)) {
            for &(lo, hi) in rs {
                self.prefetch_range(lo, hi);
            }
            for (o, &(lo, hi)) in os.iter_mut().zip(rs) {
                *o = self.may_contain_range(lo, hi);
            }
        }
    }

    #[inline]
    fn prefetch_range(&self, lo: u64, _hi: u64) {
        self.g.table.prefetch(self.split_prefix(lo >> self.g.payload).0);
    }

    /// `1 − e^(−cλ)`: `λ` the expected entries one point probe matches
    /// now (the sum over entries of `2^−length`, over `2^q`), `c =
    /// ⌈ℓ/2^m⌉` the most times the range covers one memento value; 1.0
    /// past [`MAX_PARTITIONS`].
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
    /// let keys: Vec<u64> = (0..100_000u64).map(|i| i << 20).collect();
    /// let f = MementoFilter::build(&keys, MementoOptions::new(0.01, 64))?;
    /// assert!(f.expected_fpr(64) <= 0.01);
    /// assert_eq!(f.expected_fpr(64), f.expected_fpr(1));
    /// assert!(f.expected_fpr(65) > 1.9 * f.expected_fpr(1));
    /// assert_eq!(f.expected_fpr(1 << 20), 1.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn expected_fpr(&self, range_len: u64) -> f64 {
        if self.g.table.len() == 0 {
            return 0.0;
        }
        self.for_range(range_len, self.g.expected_matches())
    }

    fn size_in_bytes(&self) -> usize {
        self.g.table.size_in_bytes()
    }

    /// Keys inserted (or built from) less keys removed, repeats counted.
    fn num_keys(&self) -> usize {
        self.g.keys
    }

    fn kind(&self) -> FilterKind {
        FilterKind::MementoFilter
    }

    fn to_bytes(&self) -> Vec<u8> {
        self.encode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range::MementoOptions;

    /// Long runs are searched, once per fingerprint length in use; the
    /// answers are a whole-run scan's, on runs of thousands of entries
    /// with several lengths (expansions) and void entries.
    #[test]
    fn searched_runs_answer_as_scanned_ones() {
        let mut o = MementoOptions::new(0.25, 256);
        o.initial_keys = 64;
        o.horizon = 0;
        let mut f = MementoFilter::new(o).unwrap();
        // Dense partitions (runs far past SCAN) mixed with spread keys.
        for i in 0..30_000u64 {
            let k = if i % 3 == 0 {
                crate::hash::remix(i, 9)
            } else {
                i * 5 % 40_000
            };
            f.insert(k).unwrap();
        }
        assert!(f.g.lengths.iter().filter(|&&n| n > 0).count() >= 3 && f.g.lengths[0] > 0);
        let m = f.g.payload;
        let width = f.g.table.width() - m;
        let (mut long, mut hits) = (0, 0);
        for i in 0..20_000u64 {
            let (x, bits) = f.split_prefix(if i % 2 == 0 {
                i % 200
            } else {
                crate::hash::remix(i, 3)
            });
            let r = crate::hash::remix(i, 4);
            let (a, b) = (r & 0xff, (r >> 8) & 0xff);
            let (lo, hi) = (a.min(b), a.max(b));
            let scan = f.g.kernel.run(&f.g.table, x).is_some_and(|run| {
                long += usize::from(run.end() - run.start() >= SCAN);
                run.into_iter().any(|s| {
                    let v = f.g.table.value(s);
                    (lo..=hi).contains(&(v & low_mask(m))) && fingerprint::matches(v >> m, bits)
                })
            });
            hits += usize::from(scan);
            assert_eq!(
                f.probe(x, bits, lo, hi),
                scan,
                "quotient {x}, {lo}..={hi}, width {width}"
            );
        }
        assert!(
            long > 5_000 && hits > 1_000 && hits < 19_000,
            "{long} long runs, {hits} hits"
        );
    }
}
