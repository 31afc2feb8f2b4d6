//! The two-line layout at every width it holds (6, 7 and 8 result bits,
//! and the FPRs between, lines of two widths mixed): no false negatives
//! against a set, the FPR it expects on a million absent keys and the FPR
//! it was asked for, the space it promises, its bytes and views agreeing
//! with the owned filter, bumped or not.

mod common;

use std::collections::HashSet;

use amq::ribbon::RibbonView;
use amq::{Filter, FromBytes, KeyHash, Ribbon, RibbonParams};
use common::{absent_hashes, assert_fpr_close, hashes, measured_fpr};

/// The widths: what was asked (an FPR), the parameters, and the most bits
/// per key (bumped) over `log2(1/FPR)` they may take at 100,000 keys.
fn widths() -> Vec<(f64, RibbonParams)> {
    let bits = |r| RibbonParams::with_result_bits(r).unwrap();
    let fpr = |p| RibbonParams::with_fpr(p).unwrap();
    vec![
        (1.0 / 64.0, bits(6)),
        (1.0 / 128.0, bits(7)),
        (1.0 / 256.0, bits(8)),
        (0.01, fpr(0.01)),
        (0.0125, fpr(0.0125)),
        (0.005, fpr(0.005)),
        (1.0 / 64.0, fpr(1.0 / 64.0)),
    ]
}

#[test]
fn every_width_keeps_every_key_and_its_fpr() {
    let n = 100_000;
    let keys = hashes(31, n);
    let absent = absent_hashes(32, 1_000_000, &keys);
    let set: HashSet<KeyHash> = keys.iter().copied().collect();
    for (target, params) in widths() {
        for bumped in [true, false] {
            let params = match bumped {
                true => params.with_bumping(),
                false => params.without_bumping(),
            };
            let f = Ribbon::build_with(&keys, &params).unwrap();
            let name = format!("{params:?}");
            assert!(f.is_two_line_layout(), "{name}");
            assert_eq!(f.is_bumped_layout(), bumped, "{name}");
            assert_eq!(f.num_keys(), n);
            assert!(keys.iter().all(|&h| f.contains_hash(h)), "{name}: false negative");
            let mut out = vec![false; keys.len()];
            f.contains_hashes(&keys, &mut out);
            assert!(out.iter().all(|&o| o), "{name}: batched false negative");
            // The FPR it expects is the one asked for, within the mix's
            // granularity, and the one measured.
            let expected = f.expected_fpr();
            assert!(
                (expected / target - 1.0).abs() < 0.03,
                "{name}: expects {expected}, asked {target}"
            );
            assert_fpr_close(&name, measured_fpr(&f, &absent), expected, 0.1);
            // Space: bumped within 2.5% of log2(1/FPR) (a mix of two
            // widths costs 1.2% of it at 1%), unbumped within 6%.
            let over = f.bits_per_key() / -expected.log2();
            let most = if bumped { 1.025 } else { 1.06 };
            assert!(
                over < most,
                "{name}: {} bits/key, {over:.4} of log2(1/FPR)",
                f.bits_per_key()
            );
            // Absent keys a set does not hold: the batch agrees with singles.
            let probe = &absent[..20_000];
            let mut batch = vec![false; probe.len()];
            f.contains_hashes(probe, &mut batch);
            for (&h, &b) in probe.iter().zip(&batch) {
                assert_eq!(f.contains_hash(h), b, "{name}");
                assert!(!set.contains(&h));
            }
            // Bytes and views answer as the owned filter.
            let bytes = f.to_bytes();
            let back = Ribbon::from_bytes(&bytes).unwrap();
            assert_eq!(back, f, "{name}");
            assert_eq!(back.to_bytes(), bytes);
            let view = RibbonView::new(&bytes).unwrap();
            assert_eq!(view.expected_fpr(), expected, "{name}");
            let mut viewed = vec![false; probe.len()];
            view.contains_hashes(probe, &mut viewed);
            assert_eq!(viewed, batch, "{name}");
            assert!(keys[..5000].iter().all(|&h| view.contains_hash(h)));
        }
    }
}

/// Small and odd sizes, each width: no false negatives (the model check
/// asks every key and some absent ones, single and batched).
#[test]
fn small_filters_of_every_width_hold_their_keys() {
    for (_, params) in widths() {
        for n in [
            0, 1, 2, 63, 64, 65, 85, 86, 1000, 4095, 4097, 10_000, 10_001, 33_333,
        ] {
            let keys = hashes(n as u64 + 5, n);
            let probes = absent_hashes(n as u64 + 6, 2000, &keys);
            let f = common::check_static_model::<Ribbon>(&keys, &probes, &params);
            assert!(n == 0 || f.is_two_line_layout());
        }
    }
}

/// Damaged frames of a mixed-width filter are refused or answer for the
/// keys they hold; none panics.
#[test]
fn damaged_mixed_frames_never_panic() {
    for (n, params) in [
        (
            amq::ribbon::BUMPED_MIN_KEYS,
            RibbonParams::with_fpr(0.01).unwrap(),
        ),
        (3000, RibbonParams::with_fpr(0.01).unwrap().without_bumping()),
    ] {
        let keys = hashes(77, n);
        let f = Ribbon::build_with(&keys, &params).unwrap();
        assert!(f.is_two_line_layout());
        common::assert_corruption_safe(&f, &keys);
    }
}
