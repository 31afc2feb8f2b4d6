//! The range filter's false-positive rate, measured with fixed seeds: empty
//! ranges of 1, 16 and 256 keys at 12, 16 and 20 bits per key, uniform and
//! right after a key (the correlated queries Grafite is built for), each
//! within its proven bound (`expected_fpr`), allowing for sampling noise,
//! and not far below it (a filter sized wrong would be).
//!
//! Queries are sized for about 1,000 false positives, up to 3M per case
//! (20 bits per key and one-key ranges then expect about 15).

mod common;

use amq::hash::remix;
use amq::range::{GrafiteRange, RangeFilter, RangeSizing};

const KEYS: u64 = 100_000;
const MAX_QUERIES: u64 = 3_000_000;

/// The queries of one case: empty ranges of `len` keys, uniform over `u64`
/// or starting within 1,024 after a key.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Queries {
    Uniform,
    AfterKey,
}

/// (false positives, empty ranges asked) for `queries` ranges of `len`.
fn count(f: &GrafiteRange, sorted: &[u64], len: u64, queries: u64, how: Queries, seed: u64) -> (u64, u64) {
    let (mut fp, mut asked) = (0, 0);
    for i in 0..queries {
        let lo = match how {
            Queries::Uniform => remix(i, seed),
            // A key's neighbourhood, at a distance that varies too: the same
            // key and distance asked twice would count one event twice.
            Queries::AfterKey => sorted[(remix(i, seed) % sorted.len() as u64) as usize]
                .wrapping_add(1 + remix(i, !seed) % 1024),
        };
        let Some(hi) = lo.checked_add(len - 1) else {
            continue;
        };
        // Empty ranges only: the first key at least `lo` is past `hi`.
        let next = sorted.partition_point(|&k| k < lo);
        if sorted.get(next).is_some_and(|&k| k <= hi) {
            continue;
        }
        asked += 1;
        fp += u64::from(f.may_contain_range(lo, hi));
    }
    (fp, asked)
}

#[test]
fn measured_fpr_is_within_the_bound() {
    let mut keys: Vec<u64> = (0..KEYS).map(|i| remix(i, 0xfeed)).collect();
    keys.sort_unstable();
    for bits in [12.0, 16.0, 20.0] {
        let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(bits)).unwrap();
        assert!(f.bits_per_key() <= bits + 0.01, "{bits}: {}", f.bits_per_key());
        for len in [1u64, 16, 256] {
            let bound = f.expected_fpr(len);
            // For uniformly spread keys the bound is nearly the truth: the
            // chance that some key lands in the range's image, 1 − e^(−ℓn/r).
            let likely = 1.0 - (-bound).exp();
            let queries = ((1000.0 / likely) as u64).clamp(10_000, MAX_QUERIES);
            for how in [Queries::Uniform, Queries::AfterKey] {
                let (fp, asked) = count(&f, &keys, len, queries, how, bits as u64 * 1000 + len);
                assert!(asked > queries * 9 / 10, "{asked} of {queries} ranges were empty");
                let expected = likely * asked as f64;
                let measured = fp as f64 / asked as f64;
                // Within the bound, but for 4.5 standard deviations of noise...
                assert!(
                    fp as f64 <= bound * asked as f64 + 4.5 * expected.sqrt() + 3.0,
                    "{bits} bits, ranges of {len}, {how:?}: {fp} of {asked} ({measured:.3e}) over the bound {bound:.3e}"
                );
                // ...and near it.
                assert!(
                    fp as f64 >= expected - 4.5 * expected.sqrt() - 3.0,
                    "{bits} bits, ranges of {len}, {how:?}: {fp} of {asked} ({measured:.3e}) far below {likely:.3e}"
                );
            }
        }
    }
}

/// Keys in arithmetic progression, one per block (ids, timestamps), and
/// ranges just after each: one filter's false positives must still come at
/// the bound's rate, not all or none (the reason the hash's block starts go
/// through a finaliser, `grafite/hash.rs`). Strides below the block length
/// put many keys in a block, whose false positives come in clumps (see the
/// module docs of `range::grafite`); these are above it.
#[test]
fn progressions_do_not_fall_together() {
    for (stride, bits) in [(1u64 << 32, 14.0), (1 << 40, 16.0), ((1 << 33) + 12_345, 16.0)] {
        let keys: Vec<u64> = (0..KEYS).map(|i| i * stride).collect();
        let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(bits)).unwrap();
        assert!(f.block_len() < stride);
        let len = 8;
        let fp = keys
            .iter()
            .filter(|&&k| f.may_contain_range(k + 1, k + len))
            .count() as f64;
        let expected = f.expected_fpr(len) * KEYS as f64;
        assert!(
            (fp - expected).abs() <= 4.5 * expected.sqrt() + 3.0,
            "stride {stride}: {fp} false positives, about {expected:.0} expected"
        );
    }
}

/// `Fpr { fpr, max_range_len }` keeps its promise on ranges of that length.
#[test]
fn fpr_sizing_is_met() {
    let keys: Vec<u64> = (0..KEYS).map(|i| remix(i, 0xbeef)).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    for (fpr, len) in [(0.01, 1u64), (0.01, 64), (0.05, 1000)] {
        let f = GrafiteRange::build(
            &keys,
            RangeSizing::Fpr {
                fpr,
                max_range_len: len,
            },
        )
        .unwrap();
        assert!(f.expected_fpr(len) <= fpr);
        let (fp, asked) = count(&f, &sorted, len, 200_000, Queries::AfterKey, 5);
        let expected = fpr * asked as f64;
        assert!(
            (fp as f64) <= expected + 4.5 * expected.sqrt(),
            "{fpr} for {len}: {fp} of {asked}"
        );
    }
}
