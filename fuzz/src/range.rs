//! The range filter's targets: its decoder and views on arbitrary (shaped,
//! re-sealed) bytes, and builds from arbitrary keys and sizings queried
//! against a `BTreeSet` model.
//!
//! Checks: decoding never panics and allocates no more than a small
//! multiple of its input; a decoded filter re-encodes to its bytes and its
//! checked view answers as it does; a trusted view of any bytes answers
//! every query without panicking or allocating; the point-filter decoders
//! refuse every such frame; a built filter has no false negative, answers
//! `false` to `lo > hi`, and survives its round trip unchanged.

use std::collections::BTreeSet;
use std::ops::Bound::Included;

use amq::range::{GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
use amq::{Error, FilterKind};
use arbitrary::Arbitrary;

use crate::alloc::peak_during;
use crate::decode::{allocation_bound, effective_bytes};

/// Ranges every query check asks: points, short and long ranges, the ends
/// of `u64`, and an empty one.
fn probe_ranges() -> Vec<(u64, u64)> {
    let mut r = vec![(0, u64::MAX), (u64::MAX, 0), (0, 0), (u64::MAX, u64::MAX), (5, 4)];
    for i in 0..48u64 {
        let lo = amq::hash::remix(i, 11) >> (i % 64);
        r.push((lo, lo));
        r.push((lo, lo.saturating_add(1 << (i % 40))));
    }
    r
}

fn answers(f: &dyn RangeFilter, ranges: &[(u64, u64)]) -> Vec<bool> {
    let out: Vec<bool> = ranges
        .iter()
        .map(|&(lo, hi)| f.may_contain_range(lo, hi))
        .collect();
    for (&(lo, hi), &a) in ranges.iter().zip(&out) {
        if lo > hi {
            assert!(!a, "{lo} > {hi} answered true");
        }
    }
    for len in [0, 1, 16, 1 << 20, u64::MAX] {
        let p = f.expected_fpr(len);
        assert!((0.0..=1.0).contains(&p), "expected_fpr({len}) = {p}");
    }
    assert!(f.bits_per_key() >= 0.0);
    out
}

/// The decoder target: `GrafiteRange::from_bytes` and both views.
pub fn decode_grafite(data: &[u8]) {
    let Some(bytes) = effective_bytes(data, Some(FilterKind::GrafiteRange)) else {
        return;
    };
    let (decoded, peak) = peak_during(|| GrafiteRange::from_bytes(&bytes));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "decoding {} bytes allocated {peak}",
        bytes.len()
    );
    let ((checked, trusted), peak) =
        peak_during(|| (GrafiteRangeView::new(&bytes), GrafiteRangeView::trusted(&bytes)));
    assert_eq!(peak, 0, "making a view allocated");
    let ranges = probe_ranges();
    if let Ok(v) = &trusted {
        answers(v, &ranges);
    }
    // Never through the point-filter decoders.
    assert!(amq::AnyFilter::from_bytes(&bytes).is_err());
    assert!(amq::FilterView::new(&bytes).is_err());
    match decoded {
        Ok(f) => {
            assert_eq!(f.to_bytes(), bytes, "decoding is not faithful");
            assert!(f.size_in_bytes() <= allocation_bound(bytes.len()));
            let v = checked.expect("bytes that decode have a view");
            assert_eq!(
                answers(&f, &ranges),
                answers(&v, &ranges),
                "view and owned filter disagree"
            );
            assert_eq!(
                (v.num_keys(), v.size_in_bytes()),
                (f.num_keys(), f.size_in_bytes())
            );
        }
        Err(e) => assert!(
            !matches!(e, Error::InvalidParameter { .. } | Error::Unsupported { .. }),
            "a decoder error that is not about the bytes: {e:?}"
        ),
    }
}

/// A query of the ops target.
#[derive(Debug, Arbitrary)]
pub enum RangeQuery {
    /// Any range (possibly `lo > hi`).
    Range(u64, u64),
    /// A range near key `index % keys`: from `below` under it to `above`
    /// over it.
    Near(u16, u16, u16),
    /// Just after key `index % keys`, `len` long: empty unless keys crowd.
    After(u16, u16),
    /// Encode, decode, and go on with the decoded filter.
    RoundTrip,
}

/// Keys, a sizing and queries for one filter.
#[derive(Debug, Arbitrary)]
pub struct RangeInput {
    /// Keys anywhere in `u64`.
    pub keys: Vec<u64>,
    /// Keys packed into a small stretch (so they share blocks and buckets).
    pub packed: Vec<u16>,
    pub packed_base: u64,
    /// `BitsPerKey` when even, else `Fpr`.
    pub sizing: u8,
    pub fpr_exp: u8,
    pub max_range_len: u32,
    pub seed: u64,
    pub queries: Vec<RangeQuery>,
}

impl RangeInput {
    fn sizing(&self) -> RangeSizing {
        if self.sizing.is_multiple_of(2) {
            RangeSizing::BitsPerKey(f64::from(self.sizing / 2 % 64) + 1.5)
        } else {
            RangeSizing::Fpr {
                fpr: 0.5f64.powi(i32::from(self.fpr_exp % 40) + 1),
                max_range_len: u64::from(self.max_range_len),
            }
        }
    }
}

/// The ops target: build, then every query against the model.
pub fn grafite_ops(input: RangeInput) {
    let mut keys: Vec<u64> = input.keys.iter().copied().take(20_000).collect();
    keys.extend(
        input
            .packed
            .iter()
            .take(20_000)
            .map(|&k| input.packed_base.wrapping_add(u64::from(k))),
    );
    let model: BTreeSet<u64> = keys.iter().copied().collect();
    let sorted: Vec<u64> = model.iter().copied().collect();
    let sizing = input.sizing();
    let mut f = match GrafiteRange::build_seeded(&keys, sizing, input.seed) {
        Ok(f) => f,
        Err(e) => {
            assert!(
                matches!(e, Error::InvalidParameter { .. }),
                "undocumented build error {e:?} for {sizing:?}"
            );
            return;
        }
    };
    assert_eq!(f.num_keys(), model.len());
    let key = |i: u16| sorted.get(usize::from(i) % sorted.len().max(1)).copied();
    for q in &input.queries {
        let (lo, hi) = match *q {
            RangeQuery::Range(lo, hi) => (lo, hi),
            RangeQuery::Near(i, below, above) => match key(i) {
                Some(k) => (
                    k.saturating_sub(u64::from(below)),
                    k.saturating_add(u64::from(above)),
                ),
                None => continue,
            },
            RangeQuery::After(i, len) => match key(i) {
                Some(k) => (
                    k.saturating_add(1),
                    k.saturating_add(1).saturating_add(u64::from(len)),
                ),
                None => continue,
            },
            RangeQuery::RoundTrip => {
                let bytes = f.to_bytes();
                let g = GrafiteRange::from_bytes(&bytes).expect("a filter's own bytes decode");
                assert_eq!(g, f);
                let v = GrafiteRangeView::new(&bytes).expect("a filter's own bytes make a view");
                assert_eq!(answers(&v, &probe_ranges()), answers(&g, &probe_ranges()));
                f = g;
                continue;
            }
        };
        let answer = f.may_contain_range(lo, hi);
        let holds = lo <= hi && model.range((Included(lo), Included(hi))).next().is_some();
        assert!(answer || !holds, "false negative on {lo}..={hi}");
        if lo > hi {
            assert!(!answer, "{lo} > {hi} answered true");
        }
    }
    for &k in &sorted {
        assert!(f.may_contain(k), "false negative on key {k}");
    }
}
