//! The bumped Ribbon layout: no false negatives, the FPR it promises, the
//! space it promises, its bytes round-tripping, its view and its streamed
//! build agreeing with the owned filter.

use amq::ribbon::RibbonView;
use amq::streamed::StreamedBuild;
use amq::{hash_u64, Filter, FromBytes, KeyHash, Ribbon, RibbonParams};
use proptest::prelude::*;

fn keys(n: u64, salt: u64) -> Vec<KeyHash> {
    (0..n).map(|i| hash_u64(i ^ (salt << 40))).collect()
}

fn absent_fpr(f: &impl Filter, n: u64) -> f64 {
    let hits = (0..n).filter(|&i| f.contains_hash(hash_u64(i | (1 << 62)))).count();
    hits as f64 / n as f64
}

#[test]
fn bumped_filters_find_every_key_at_their_fpr_and_size() {
    for (n, params) in [
        (1_000_000u64, RibbonParams::with_result_bits(7).unwrap()),
        (1_000_000u64, RibbonParams::with_result_bits(7).unwrap().with_blocked_layout()),
        (300_000, RibbonParams::with_fpr(0.01).unwrap()),
        (300_000, RibbonParams::with_fpr(0.001).unwrap()),
        (200_000, RibbonParams::with_result_bits(13).unwrap()),
    ] {
        let params = params.with_bumping();
        let ks = keys(n, 1);
        let f = Ribbon::build_with(&ks, &params).unwrap();
        assert!(f.is_bumped_layout());
        assert_eq!(f.num_keys(), n as usize);
        assert!(ks.iter().all(|&h| f.contains_hash(h)), "{n} {params:?}");
        let mut out = vec![false; ks.len()];
        f.contains_hashes(&ks, &mut out);
        assert!(out.iter().all(|&o| o));
        let fpr = absent_fpr(&f, 1_000_000);
        let expected = f.expected_fpr();
        assert!((fpr / expected - 1.0).abs() < 0.1, "{n} {params:?}: {fpr} vs {expected}");
        let ideal = -expected.log2();
        let over = f.bits_per_key() / ideal;
        println!("{n} {params:?}: {:.4} bits/key, {over:.4} of log2(1/FPR), fpr {fpr:.5} / {expected:.5}", f.bits_per_key());
        let bytes = f.to_bytes();
        let back = Ribbon::from_bytes(&bytes).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.to_bytes(), bytes);
        let view = RibbonView::new(&bytes).unwrap();
        assert_eq!(view.expected_fpr(), f.expected_fpr());
        assert_eq!(view.num_keys(), f.num_keys());
        let probe: Vec<KeyHash> = (0..20_000u64).map(|i| hash_u64(i * 3 + (i & 1) * (1 << 61))).chain(ks[..5000].iter().copied()).collect();
        let mut a = vec![false; probe.len()];
        let mut b = vec![false; probe.len()];
        f.contains_hashes(&probe, &mut a);
        view.contains_hashes(&probe, &mut b);
        assert_eq!(a, b);
        assert!(probe.iter().zip(&a).all(|(&h, &o)| f.contains_hash(h) == o && view.contains_hash(h) == o));
    }
}

/// The planner's prediction of a bumped filter's size and FPR is within
/// 1% of the built filter's, from the smallest bumped size up.
#[test]
fn predictions_hold_for_bumped_filters() {
    use amq::plan::predict;
    use amq::{FilterKind, FilterSizing};
    for n in [amq::ribbon::BUMPED_MIN_KEYS, 10_001, 20_000, 50_000, 123_457, 400_000] {
        for sizing in [
            FilterSizing::Fpr(1.0 / 128.0),
            FilterSizing::Fpr(0.01),
            FilterSizing::Fpr(0.001),
            FilterSizing::Fpr(0.1),
            FilterSizing::BitsPerKey(9.5),
        ] {
            let ks = keys(n as u64, n as u64);
            let f = Ribbon::build(&ks, sizing).unwrap();
            assert!(f.is_bumped_layout(), "{n} {sizing:?}");
            let p = predict(FilterKind::Ribbon, n, sizing).unwrap();
            let bits = f.bits_per_key() / p.bits_per_key();
            let fpr = f.expected_fpr() / p.expected_fpr();
            println!("{n} {sizing:?}: bits {bits:.4} fpr {fpr:.4} ({:.3} bits/key)", f.bits_per_key());
            assert!((bits - 1.0).abs() < 0.01, "{n} {sizing:?}: bits/key {bits} of predicted");
            assert!((fpr - 1.0).abs() < 0.01, "{n} {sizing:?}: FPR {fpr} of predicted");
        }
    }
}
