//! The Memento range filter's targets: its decoder on arbitrary (shaped,
//! re-sealed) bytes, and operation sequences (inserts, removals, range
//! queries, round trips) against a multiset model.
//!
//! Checks: decoding never panics and allocates no more than a small
//! multiple of its input; a decoded filter re-encodes to its bytes and
//! answers, inserts and removes without panicking; the point-filter
//! decoders refuse its frames. Under operations: no false negative for any
//! range holding a held key, removals of held keys succeed, errors are the
//! documented ones, and the filter survives its round trip unchanged.

use std::collections::BTreeMap;

use amq::range::{MementoFilter, MementoOptions, RangeFilter};
use amq::{Error, FilterKind};
use arbitrary::Arbitrary;

use crate::alloc::peak_during;
use crate::decode::{allocation_bound, effective_bytes};

/// Ranges every decoded filter is asked: points, short and long ranges, the
/// ends of `u64`, an empty one.
fn probe_ranges() -> Vec<(u64, u64)> {
    let mut r = vec![(0, u64::MAX), (u64::MAX, 0), (0, 0), (u64::MAX, u64::MAX), (5, 4)];
    for i in 0..48u64 {
        let lo = amq::hash::remix(i, 12) >> (i % 64);
        r.push((lo, lo));
        r.push((lo, lo.saturating_add(1 << (i % 40))));
    }
    r
}

/// The decoder target: `MementoFilter::from_bytes`.
pub fn decode_memento(data: &[u8]) {
    let Some(bytes) = effective_bytes(data, Some(FilterKind::MementoFilter)) else {
        return;
    };
    let (decoded, peak) = peak_during(|| MementoFilter::from_bytes(&bytes));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "decoding {} bytes allocated {peak}",
        bytes.len()
    );
    assert!(amq::AnyFilter::from_bytes(&bytes).is_err());
    match decoded {
        Ok(mut f) => {
            assert_eq!(f.to_bytes(), bytes, "decoding is not faithful");
            for &(lo, hi) in &probe_ranges() {
                let a = f.may_contain_range(lo, hi);
                assert!(!(lo > hi && a), "{lo} > {hi} answered true");
            }
            for len in [0, 1, 16, 1 << 20, u64::MAX] {
                let p = f.expected_fpr(len);
                assert!((0.0..=1.0).contains(&p), "expected_fpr({len}) = {p}");
            }
            // Inserts go on (or are refused as documented), and are found.
            for k in [0u64, 7, u64::MAX, 1 << 40] {
                match f.insert(k) {
                    Ok(()) => assert!(f.may_contain(k)),
                    Err(e) => assert_eq!(e, Error::Full),
                }
            }
        }
        Err(e) => assert!(
            !matches!(e, Error::InvalidParameter { .. } | Error::Unsupported { .. }),
            "a decoder error that is not about the bytes: {e:?}"
        ),
    }
}

/// One operation of the ops target.
#[derive(Debug, Arbitrary)]
pub enum MementoOp {
    /// A key anywhere in `u64`.
    Insert(u64),
    /// A key in a small stretch from the input's base (dense partitions).
    InsertPacked(u16),
    /// Removes the held key `index % held` (one copy).
    Remove(u16),
    /// Any range (possibly `lo > hi`).
    Range(u64, u64),
    /// A range around held key `index % held`, `below` under and `above` over.
    Near(u16, u16, u16),
    /// Encode, decode, and go on with the decoded filter.
    RoundTrip,
    /// Inserts `64 · (n % 64)` distinct keys spread over `u64` (held too):
    /// the filter doubles, and entries inserted before go void.
    Grow(u8),
    /// Inserts this key and removes it again: the filter must be exactly
    /// as before (unless the insert doubled it).
    Churn(u64),
}

/// Options and operations for one filter.
#[derive(Debug, Arbitrary)]
pub struct MementoInput {
    pub fpr: u8,
    pub max_range_len: u32,
    pub initial: u8,
    pub horizon: u8,
    pub cap: Option<u16>,
    pub packed_base: u64,
    pub ops: Vec<MementoOp>,
}

/// The ops target: every operation against a multiset model, with every
/// held key checked at the end.
pub fn memento_ops(input: MementoInput) {
    let mut o = MementoOptions::new(
        [0.25, 0.1, 0.01, 0.001][usize::from(input.fpr % 4)],
        u64::from(input.max_range_len % (1 << 20)) + 1,
    );
    o.initial_keys = usize::from(input.initial % 64) + 1;
    o.horizon = u32::from(input.horizon % 4);
    o.max_keys = input.cap.map(|c| usize::from(c) + 1);
    let mut f = MementoFilter::new(o).expect("valid options build");
    let mut model: BTreeMap<u64, usize> = BTreeMap::new();
    let held = |model: &BTreeMap<u64, usize>, i: u16| {
        (!model.is_empty()).then(|| *model.keys().nth(usize::from(i) % model.len()).unwrap())
    };
    let mut grown = 0u64;
    for op in input.ops.iter().take(5_000) {
        let (lo, hi) = match *op {
            MementoOp::Insert(_) | MementoOp::InsertPacked(_) => {
                let k = match *op {
                    MementoOp::InsertPacked(p) => input.packed_base.wrapping_add(u64::from(p)),
                    MementoOp::Insert(k) => k,
                    _ => unreachable!(),
                };
                let before = f.to_bytes();
                match f.insert(k) {
                    Ok(()) => *model.entry(k).or_default() += 1,
                    Err(Error::Full) => {
                        assert!(
                            o.max_keys.is_some_and(|m| f.num_keys() >= m),
                            "Full below the cap"
                        );
                        assert_eq!(f.to_bytes(), before, "a refused insert changed the filter");
                    }
                    Err(e) => panic!("undocumented insert error {e:?}"),
                }
                continue;
            }
            MementoOp::Remove(i) => {
                let Some(k) = held(&model, i) else { continue };
                f.remove(k).expect("a held key is removed");
                let c = model.get_mut(&k).unwrap();
                *c -= 1;
                if *c == 0 {
                    model.remove(&k);
                }
                if model.is_empty() {
                    assert!(
                        f.is_empty() && !f.may_contain_range(0, u64::MAX),
                        "an emptied filter matched"
                    );
                }
                continue;
            }
            MementoOp::Grow(n) => {
                // At most 2^16 keys grown per input, so a run stays fast.
                let start = grown;
                grown = (grown + u64::from(n % 64) * 64).min(1 << 16);
                for i in start..grown {
                    let k = amq::hash::remix(i, input.packed_base ^ 0x6d65);
                    match f.insert(k) {
                        Ok(()) => *model.entry(k).or_default() += 1,
                        Err(Error::Full) => break,
                        Err(e) => panic!("undocumented insert error {e:?}"),
                    }
                }
                continue;
            }
            MementoOp::Churn(k) => {
                let mut g = f.clone();
                if g.insert(k).is_ok() && g.quotients() == f.quotients() {
                    g.remove(k).expect("a key just inserted is removed");
                    assert_eq!(g, f, "an insert and its remove changed the filter");
                }
                continue;
            }
            MementoOp::Range(lo, hi) => (lo, hi),
            MementoOp::Near(i, below, above) => match held(&model, i) {
                Some(k) => (
                    k.saturating_sub(u64::from(below)),
                    k.saturating_add(u64::from(above)),
                ),
                None => continue,
            },
            MementoOp::RoundTrip => {
                let g = MementoFilter::from_bytes(&f.to_bytes()).expect("a filter's own bytes decode");
                assert_eq!(g, f);
                f = g;
                continue;
            }
        };
        let answer = f.may_contain_range(lo, hi);
        let holds = lo <= hi && model.range(lo..=hi).next().is_some();
        assert!(answer || !holds, "false negative on {lo}..={hi}");
        assert!(!(lo > hi && answer), "{lo} > {hi} answered true");
    }
    assert_eq!(f.num_keys(), model.values().sum::<usize>());
    for &k in model.keys() {
        assert!(f.may_contain(k), "false negative on key {k}");
    }
    // Every copy removed, void ones included: the filter is empty.
    for (&k, &c) in &model {
        for _ in 0..c {
            f.remove(k).expect("a held key is removed");
        }
    }
    assert!(
        f.is_empty() && !f.may_contain_range(0, u64::MAX),
        "an emptied filter matched"
    );
}
