//! `amq::succinct::EliasFano` against a `BTreeSet` (and a sorted `Vec` for
//! multisets): `successor`, `contains_in` and iteration agree on sets and
//! multisets of every density, for probes at, between and around values.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound::{Included, Unbounded};

use amq::succinct::{EliasFano, MAX_UNIVERSE};
use amq::Error;
use proptest::prelude::*;

fn check(values: &[u64], universe: u64, probes: &[u64]) {
    let ef = EliasFano::new(values, universe).expect("build");
    let set: BTreeSet<u64> = values.iter().copied().collect();
    assert_eq!(ef.len(), values.len());
    assert!(ef.iter().eq(values.iter().copied()));
    let around = values
        .iter()
        .flat_map(|&v| [v, v.wrapping_sub(1), v.wrapping_add(1)]);
    for x in probes
        .iter()
        .copied()
        .chain(around)
        .chain([0, universe - 1, universe, u64::MAX])
    {
        let want = set.range((Included(x), Unbounded)).next().copied();
        assert_eq!(ef.successor(x), want, "successor({x}) over {universe}");
        let hi = x.saturating_add(x % 1000);
        let any = set.range((Included(x), Included(hi))).next().is_some();
        assert_eq!(ef.contains_in(x, hi), any, "contains_in({x}, {hi})");
        assert!(!ef.contains_in(hi.saturating_add(1), x) || hi == u64::MAX);
    }
    // About 2 + log2(u/n) bits per value, plus the samples and a few words.
    if !values.is_empty() {
        let n = values.len() as f64;
        let bound = n * (2.5 + (universe as f64 / n).log2().max(0.0)) + 4.0 * 64.0;
        assert!(
            (ef.size_in_bytes() * 8) as f64 <= bound,
            "{} bytes",
            ef.size_in_bytes()
        );
    }
}

proptest! {
    #![proptest_config(common::proptest_config(128))]

    #[test]
    fn sets_and_multisets_of_any_density(
        universe_log in 1u32..=62,
        raw in proptest::collection::vec(any::<u64>(), 0..600),
        dense in any::<bool>(),
        multiset in any::<bool>(),
        probes in proptest::collection::vec(any::<u64>(), 0..100),
    ) {
        let universe = if universe_log == 62 { MAX_UNIVERSE } else { (1u64 << universe_log) + (raw.len() as u64) };
        // Dense: values packed in a small stretch of the universe.
        let span = if dense { (raw.len() as u64 * 2).clamp(1, universe) } else { universe };
        let base = if dense { universe - span } else { 0 };
        let mut values: Vec<u64> = raw.iter().map(|v| base + v % span).collect();
        values.sort_unstable();
        if !multiset {
            values.dedup();
        }
        let probes: Vec<u64> = probes.iter().map(|p| p % universe.saturating_add(10)).collect();
        check(&values, universe, &probes);
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    for (values, universe) in [
        (&[2u64, 1][..], 10u64),
        (&[10], 10),
        (&[1], 0),
        (&[1], MAX_UNIVERSE + 1),
    ] {
        assert!(
            matches!(
                EliasFano::new(values, universe),
                Err(Error::InvalidParameter { .. })
            ),
            "{values:?} below {universe}"
        );
    }
}

#[test]
fn long_runs_and_gaps() {
    // Thousands of equal values, then a gap of most of the universe.
    let mut values = vec![5u64; 3000];
    values.extend((0..3000u64).map(|i| (1 << 40) + i * 3));
    check(
        &values,
        1 << 41,
        &[4, 5, 6, 1 << 39, (1 << 40) + 1, (1 << 40) + 9000],
    );
}
