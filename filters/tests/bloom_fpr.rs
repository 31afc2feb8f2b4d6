//! Statistical false-positive-rate tests for the Bloom family: 100,000 keys,
//! 1,000,000 absent keys, fixed seeds (so never flaky).
//!
//! At these sizes the measured count of false positives has a relative
//! standard deviation of `1/sqrt(FPR · 1e6)`: 1% at FPR 1%, 3.2% at 0.1%. The
//! 15% tolerance is five standard deviations or more, so a failure means the
//! filter or its formula is wrong, not bad luck.

mod common;

use std::sync::OnceLock;

use amq::{
    AtomicBlockedBloom, BlockedBloom, CountingBloom, Filter, FilterSizing, Insert, KeyHash, StandardBloom,
};

const N: usize = 100_000;
const ABSENT: usize = 1_000_000;
const SEED: u64 = 0x00f0_0d5e_ed00_0001;
/// Relative tolerance between measured and expected FPR.
const TOLERANCE: f64 = 0.15;

/// The key set and the absent probes, shared by every test in this file.
fn keys() -> &'static (Vec<KeyHash>, Vec<KeyHash>) {
    static KEYS: OnceLock<(Vec<KeyHash>, Vec<KeyHash>)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let present = common::hashes(SEED, N);
        let absent = common::absent_hashes(SEED, ABSENT, &present);
        (present, absent)
    })
}

/// Checks no key is lost and returns the measured FPR (single queries and
/// the batch path must count the same false positives).
fn measure(f: &dyn Filter) -> f64 {
    let (present, absent) = keys();
    common::assert_no_false_negatives(f, present);
    let single = common::measured_fpr(f, absent);
    let mut out = vec![false; absent.len()];
    f.contains_hashes(absent, &mut out);
    let batch = out.iter().filter(|&&b| b).count() as f64 / absent.len() as f64;
    assert_eq!(
        single,
        batch,
        "{:?}: contains_hashes counts other false positives",
        f.kind()
    );
    single
}

#[test]
fn standard_bloom_at_10_bits_per_key_matches_its_formula() {
    let mut f = StandardBloom::new(N, FilterSizing::BitsPerKey(10.0)).unwrap();
    for &h in &keys().0 {
        f.insert_hash(h).unwrap();
    }
    assert_eq!(f.num_probes(), 7);
    let measured = measure(&f);
    common::assert_fpr_close("StandardBloom 10 bits/key", measured, f.expected_fpr(), TOLERANCE);
    // The estimate from the fill, `fill^k`, agrees too.
    common::assert_fpr_close(
        "StandardBloom fill estimate",
        measured,
        f.fill_ratio().powi(f.num_probes() as i32),
        TOLERANCE,
    );
}

#[test]
fn blocked_bloom_at_10_bits_per_key_matches_its_formula_and_stays_under_1_05_percent() {
    let mut f = BlockedBloom::new(N, FilterSizing::BitsPerKey(10.0)).unwrap();
    for &h in &keys().0 {
        f.insert_hash(h).unwrap();
    }
    let measured = measure(&f);
    common::assert_fpr_close("BlockedBloom 10 bits/key", measured, f.expected_fpr(), TOLERANCE);
    assert!(
        measured <= 0.0105,
        "BlockedBloom at 10 bits/key measured {measured:.5} > 1.05%"
    );
}

#[test]
fn counting_bloom_at_10_counters_per_key_matches_its_formula() {
    // 10 counters of 4 bits per key.
    let mut f = CountingBloom::new(N, FilterSizing::BitsPerKey(40.0)).unwrap();
    for &h in &keys().0 {
        f.insert_hash(h).unwrap();
    }
    let measured = measure(&f);
    common::assert_fpr_close(
        "CountingBloom 10 counters/key",
        measured,
        f.expected_fpr(),
        TOLERANCE,
    );
    // The counters answer exactly like the bits of a standard filter of the
    // same shape: a counter is non-zero iff the bit would be set.
    let mut g = StandardBloom::new(N, FilterSizing::BitsPerKey(10.0)).unwrap();
    for &h in &keys().0 {
        g.insert_hash(h).unwrap();
    }
    assert_eq!(f.num_counters(), g.num_bits());
    assert_eq!(measured, common::measured_fpr(&g, &keys().1));
}

/// `new(n, FilterSizing::Fpr(p))` delivers at most `p` (plus the 15% tolerance), and the
/// filter's own `expected_fpr` predicts what it measures.
fn check_fpr_target(name: &str, f: &dyn Filter, target: f64) {
    let measured = measure(f);
    let expected = f.expected_fpr();
    assert!(
        measured <= target * (1.0 + TOLERANCE),
        "{name} Fpr({target}): measured {measured:.6}"
    );
    // Sizing rounds up to whole words/blocks, never down by much.
    assert!(
        expected <= target * 1.02,
        "{name} Fpr({target}): formula says {expected:.6}"
    );
    common::assert_fpr_close(&format!("{name} Fpr({target})"), measured, expected, TOLERANCE);
}

#[test]
fn fpr_targets_are_met() {
    for target in [0.1, 0.01, 0.001] {
        let mut s = StandardBloom::new(N, FilterSizing::Fpr(target)).unwrap();
        let mut b = BlockedBloom::new(N, FilterSizing::Fpr(target)).unwrap();
        let mut c = CountingBloom::new(N, FilterSizing::Fpr(target)).unwrap();
        for &h in &keys().0 {
            s.insert_hash(h).unwrap();
            b.insert_hash(h).unwrap();
            c.insert_hash(h).unwrap();
        }
        check_fpr_target("StandardBloom", &s, target);
        check_fpr_target("BlockedBloom", &b, target);
        check_fpr_target("CountingBloom", &c, target);
    }
}

#[test]
fn atomic_blocked_bloom_filled_from_four_threads_equals_sequential_build() {
    const THREADS: usize = 4;
    let (present, _) = keys();
    let shared = AtomicBlockedBloom::new(N, FilterSizing::BitsPerKey(10.0)).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let shared = &shared;
            // Interleaved, not chunked: the threads hit the same regions of
            // the filter at the same time.
            s.spawn(move || {
                for &h in present.iter().skip(t).step_by(THREADS) {
                    shared.insert_hash(h).unwrap();
                }
            });
        }
    });
    assert_eq!(shared.num_keys(), N);
    let measured = measure(&shared);

    let mut sequential = BlockedBloom::new(N, FilterSizing::BitsPerKey(10.0)).unwrap();
    for &h in present {
        sequential.insert_hash(h).unwrap();
    }
    assert_eq!(shared.to_bytes(), sequential.to_bytes());
    assert_eq!(measured, common::measured_fpr(&sequential, &keys().1));
    assert!(measured <= 0.0105, "{measured}");
    assert_eq!(shared.into_blocked(), sequential);
}

/// The FPR floor of the standard filter's double hashing (`ProbeSeq` in
/// `filters/src/bloom/mod.rs`): at small sizes and low FPRs the measured FPR
/// exceeds the formula by about 0.05–0.16 / m, which the planner bounds by
/// `DOUBLE_HASHING_FLOOR / m` = 0.2 / m. Prints the table the constant's
/// documentation quotes (11 s in release here):
/// `cargo test --release -p amq --test bloom_fpr -- --ignored double_hashing_floor --nocapture`
#[test]
#[ignore]
fn double_hashing_floor() {
    let probes = 100_000_000u64;
    for (n, bits_per_key) in [
        (1_000usize, 30.0),
        (3_000, 30.0),
        (10_000, 30.0),
        (30_000, 30.0),
        (100_000, 30.0),
        (1_000, 20.0),
        (10_000, 20.0),
        (1_000, 40.0),
    ] {
        let keys = common::hashes(77, n);
        let mut f = StandardBloom::new(n, FilterSizing::BitsPerKey(bits_per_key)).unwrap();
        keys.iter().for_each(|&h| f.insert_hash(h).unwrap());
        let measured = common::false_positives(&f, &keys, 999, probes) as f64 / probes as f64;
        let m = f.num_bits() as f64;
        let excess = (measured - f.expected_fpr()) * m;
        println!(
            "n {n:>6}, {bits_per_key} bits/key, k {:>2}, m {m:>8}: measured {measured:.3e}, formula {:.3e}, excess x m {excess:.3}",
            f.num_probes(),
            f.expected_fpr()
        );
        assert!(excess < 0.2, "the floor bound of plan.rs is too low");
    }
}
