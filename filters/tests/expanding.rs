//! Integration tests of the expanding quotient filter: a multiset model
//! under inserts, removals and merges across many expansions (void entries
//! included), the FPR against its prediction while it grows, the cap, and
//! the byte format (round trip, golden bytes, corruption).

mod common;

use std::collections::HashMap;

use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
use amq::{AnyFilter, Error, Filter, FilterKind, FilterSizing, FromBytes, Insert, KeyHash, Remove};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(usize),
    Remove(usize),
    /// Merge in a fresh filter holding these keys.
    Merge(Vec<usize>),
}

fn op(keys: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..keys).prop_map(Op::Insert),
        3 => (0..keys).prop_map(Op::Remove),
        1 => proptest::collection::vec(0..keys, 0..40).prop_map(Op::Merge),
    ]
}

fn options(fpr: f64, initial: usize, horizon: u32) -> ExpandingOptions {
    let mut o = ExpandingOptions::new(fpr);
    o.initial_keys = initial;
    o.horizon = horizon;
    o
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Against a multiset, from a table of a few slots through many
    /// expansions: a key inserted and not all removed is always found, with
    /// at least its count; removing a held key succeeds and never takes
    /// another held key's last match (every held key is checked after each
    /// step); merges hold both sides; bytes round-trip at the end. Short
    /// fingerprints (a target FPR of 0.1, horizon 0: 4 bits) make entries go
    /// void within a few expansions, so void copies are exercised.
    #[test]
    fn model_multiset_across_expansions(
        fpr in prop_oneof![Just(0.1), Just(0.05), Just(0.001)],
        horizon in 0u32..3,
        initial in 1usize..40,
        pool in 4usize..400,
        ops in proptest::collection::vec(op(400), 1..500),
    ) {
        let o = options(fpr, initial, horizon);
        let mut f = ExpandingQuotientFilter::new(o).unwrap();
        let seed = (fpr * 1e4) as u64 + u64::from(horizon) * 7 + initial as u64;
        let keys: Vec<KeyHash> = (0..pool as u64).map(|i| common::mixed(i, seed)).collect();
        let mut model: HashMap<usize, usize> = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(i) => {
                    let i = i % pool;
                    f.insert_hash(keys[i]).unwrap();
                    *model.entry(i).or_default() += 1;
                }
                Op::Remove(i) => {
                    let i = i % pool;
                    let held = model.get(&i).copied().unwrap_or(0);
                    if held == 0 {
                        // Removing a key never inserted may take another's
                        // entry: users must not, so the model does not.
                        continue;
                    }
                    f.remove_hash(keys[i]).unwrap();
                    *model.get_mut(&i).unwrap() -= 1;
                }
                Op::Merge(add) => {
                    let mut g = ExpandingQuotientFilter::new(o).unwrap();
                    for &i in &add {
                        g.insert_hash(keys[i % pool]).unwrap();
                        *model.entry(i % pool).or_default() += 1;
                    }
                    f = if add.len() % 2 == 0 { f.merge(&g).unwrap() } else { g.merge(&f).unwrap() };
                }
            }
            for (&i, &c) in &model {
                // Copies whose fingerprints ran out share one void entry.
                prop_assert!(f.count_hash(keys[i]) >= c.min(1), "count below the model's");
                if c > 0 {
                    prop_assert!(f.contains_hash(keys[i]), "false negative");
                }
            }
            prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
        }
        let probes: Vec<KeyHash> = (0..300).map(|i| common::mixed(i, seed + 1)).chain(keys.iter().copied()).collect();
        common::assert_contains_hashes_agrees(&f, &probes);
        let back = ExpandingQuotientFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(back.expected_fpr(), f.expected_fpr());
    }
}

/// Growing from 1,000 to 1,000,000 keys: at each power of ten the measured
/// FPR is within 10% of `expected_fpr` (200,000 absent keys), which stays
/// at or below the target and never above the bound; the first fingerprint
/// width holds throughout (18 expansions planned, 10 used).
#[test]
fn fpr_holds_while_growing() {
    let target = 0.01;
    let mut f = ExpandingQuotientFilter::new(ExpandingOptions::new(target)).unwrap();
    let keys = common::hashes(7, 1_000_000);
    let absent = common::absent_hashes(8, 200_000, &[]);
    let mut checked = 0;
    for (i, &h) in keys.iter().enumerate() {
        f.insert_hash(h).unwrap();
        let n = i + 1;
        if n.is_power_of_two() || [1_000, 10_000, 100_000, 1_000_000].contains(&n) {
            let expected = f.expected_fpr();
            assert!(expected <= target && expected <= f.fpr_bound(), "{n}: {expected}");
            if n >= 1_000 && [1_000, 10_000, 100_000, 1_000_000].contains(&n) {
                let measured = common::measured_fpr(&f, &absent);
                common::assert_fpr_close(&format!("expanding at {n}"), measured, expected, 0.1);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4);
    assert_eq!(f.fingerprint_bits(), 10);
    assert_eq!(f.expansions(), 10);
    common::assert_no_false_negatives(&f, &keys);
}

/// Past the horizon the fingerprints widen and the FPR stays under the
/// bound: horizon 2 and 24 expansions, short fingerprints so entries go
/// void on the way.
#[test]
fn past_the_horizon_the_fpr_stays_bounded() {
    let mut f = ExpandingQuotientFilter::new(options(0.1, 4, 2)).unwrap();
    let keys = common::hashes(9, 300_000);
    let absent = common::absent_hashes(10, 200_000, &[]);
    let mut widths = vec![f.fingerprint_bits()];
    for &h in &keys {
        f.insert_hash(h).unwrap();
        if widths.last() != Some(&f.fingerprint_bits()) {
            widths.push(f.fingerprint_bits());
        }
    }
    assert!(f.expansions() >= 16, "{}", f.expansions());
    // 3 generations at F0, then 2 bits more at generations 3, 6, 12, 24.
    assert_eq!(
        widths.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>(),
        [2, 2, 2]
    );
    let measured = common::measured_fpr(&f, &absent);
    common::assert_fpr_close("past the horizon", measured, f.expected_fpr(), 0.1);
    assert!(
        f.expected_fpr() <= f.fpr_bound(),
        "{} > {}",
        f.expected_fpr(),
        f.fpr_bound()
    );
    common::assert_no_false_negatives(&f, &keys);
}

/// Counts are exact (or more) for keys inserted several times, across
/// expansions, while their fingerprints have bits left (10 expansions with
/// the defaults), and removals take one copy each.
#[test]
fn counts_of_repeated_keys_across_expansions() {
    let mut o = ExpandingOptions::new(0.001);
    o.initial_keys = 50;
    let mut f = ExpandingQuotientFilter::new(o).unwrap();
    let keys = common::hashes(12, 20_000);
    for (i, &h) in keys.iter().enumerate() {
        for _ in 0..1 + i % 4 {
            f.insert_hash(h).unwrap();
        }
    }
    assert!(f.expansions() >= 8, "{}", f.expansions());
    for (i, &h) in keys.iter().enumerate() {
        assert!(f.count_hash(h) > i % 4);
    }
    let exact = keys
        .iter()
        .enumerate()
        .filter(|&(i, &h)| f.count_hash(h) == 1 + i % 4)
        .count();
    assert!(exact >= keys.len() * 99 / 100, "{exact}");
    for &h in keys.iter().step_by(4) {
        f.remove_hash(h).unwrap();
    }
    for (i, &h) in keys.iter().enumerate() {
        assert!(f.count_hash(h) >= 1 + i % 4 - usize::from(i % 4 == 0));
    }
}

/// A key repeated in the last quotient: its run passes the table's last
/// slot before the load calls for a doubling, and the insert doubles the
/// table instead of failing; every copy is counted.
#[test]
fn a_run_past_the_last_slot_doubles_the_table() {
    // 2^12 quotients and 640 padding slots: 700 copies do not fit.
    let mut f = ExpandingQuotientFilter::new(options(0.001, 3_000, 18)).unwrap();
    let last = KeyHash::from_well_mixed(u64::MAX - 12345);
    let (q0, cap0) = (f.quotient_bits(), f.capacity());
    for _ in 0..700 {
        f.insert_hash(last).unwrap();
    }
    assert!(f.quotient_bits() > q0, "no doubling");
    assert!(f.num_keys() <= cap0, "doubled by load, not by the run");
    assert_eq!(f.count_hash(last), 700);
    for _ in 0..700 {
        f.remove_hash(last).unwrap();
    }
    assert!(!f.contains_hash(last));
}

/// The cap: inserts past `max_keys` are refused and change nothing; the
/// horizon shrinks to the cap, so fingerprints are shorter than uncapped.
#[test]
fn max_keys_caps_growth() {
    let mut o = options(0.01, 100, 18);
    o.max_keys = Some(5_000);
    let mut f = ExpandingQuotientFilter::new(o).unwrap();
    let free = ExpandingQuotientFilter::new(options(0.01, 100, 18)).unwrap();
    assert!(f.fingerprint_bits() < free.fingerprint_bits());
    let keys = common::hashes(11, 5_001);
    for &h in &keys[..5_000] {
        f.insert_hash(h).unwrap();
    }
    let before = f.clone();
    assert_eq!(f.insert_hash(keys[5_000]), Err(Error::Full));
    assert_eq!(f, before);
    assert!(f.expected_fpr() <= 0.01);
    assert_eq!(f.max_keys(), Some(5_000));
    // A merge past the cap is refused too.
    let mut g = ExpandingQuotientFilter::new(o).unwrap();
    g.insert_hash(keys[5_000]).unwrap();
    assert_eq!(f.merge(&g), Err(Error::Full));
    // Different schedules do not merge.
    assert_eq!(f.merge(&free), Err(Error::Incompatible));
}

#[test]
fn options_are_checked() {
    let bad = [
        options(0.0, 10, 1),
        options(0.3, 10, 1),
        options(0.01, 0, 1),
        options(0.01, 10, 65),
        options(1e-19, 10, 18),
    ];
    for o in bad {
        assert!(
            matches!(
                ExpandingQuotientFilter::new(o),
                Err(Error::InvalidParameter { .. })
            ),
            "{o:?}"
        );
    }
    let mut capped = options(0.01, 10, 1);
    capped.max_keys = Some(0);
    assert!(ExpandingQuotientFilter::new(capped).is_err());
    // Through `AnyFilter`, by FPR or by bits per key at the start.
    let any = AnyFilter::new(FilterKind::ExpandingQuotientFilter, 100, FilterSizing::Fpr(0.01)).unwrap();
    assert_eq!(any.kind(), FilterKind::ExpandingQuotientFilter);
    let by_bits = AnyFilter::new(
        FilterKind::ExpandingQuotientFilter,
        1_000,
        FilterSizing::BitsPerKey(16.0),
    )
    .unwrap();
    let more = AnyFilter::new(
        FilterKind::ExpandingQuotientFilter,
        1_000,
        FilterSizing::BitsPerKey(24.0),
    )
    .unwrap();
    assert!(by_bits.size_in_bytes() < more.size_in_bytes());
    assert!(AnyFilter::new(
        FilterKind::ExpandingQuotientFilter,
        1_000,
        FilterSizing::BitsPerKey(4.0)
    )
    .is_err());
    let mut any = AnyFilter::build(
        FilterKind::ExpandingQuotientFilter,
        &common::hashes(3, 5_000),
        FilterSizing::Fpr(0.01),
    )
    .unwrap();
    any.insert(b"k").unwrap();
    any.remove(b"k").unwrap();
    assert_eq!(any.num_keys(), 5_000);
}

/// A decoded key count of `u64::MAX` (re-sealed bytes; keys may outnumber
/// entries, so the decoder cannot refuse it) makes inserts `Full`, not an
/// overflow (a fuzzer found the panic).
#[test]
fn a_forged_key_count_at_the_limit_refuses_inserts() {
    let mut f = ExpandingQuotientFilter::new(options(0.1, 3, 0)).unwrap();
    f.insert(b"apple").unwrap();
    let mut bytes = f.to_bytes();
    bytes[25..33].copy_from_slice(&u64::MAX.to_le_bytes());
    common::reseal(&mut bytes);
    let mut g = ExpandingQuotientFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g.insert(b"pear"), Err(Error::Full));
    assert_eq!(g.to_bytes(), bytes);
    assert!(g.contains(b"apple"));
    assert_eq!(g.merge(&f), Err(Error::Full));
}

#[test]
fn bytes_round_trip_and_survive_corruption() {
    let keys = common::hashes(21, 200);
    let mut f = ExpandingQuotientFilter::new(options(0.1, 8, 1)).unwrap();
    for &h in &keys[..150] {
        f.insert_hash(h).unwrap();
    }
    f.insert_hash(keys[0]).unwrap();
    assert!(f.expansions() >= 4);
    common::assert_round_trip(&f, &keys);
    common::assert_corruption_safe(&f, &keys[..150]);
    common::assert_byte_changes_refused_or_exact(&f);
}

/// The format is pinned: a filter started at 4 slots (one block and the
/// padding), ε = 10%, horizon 0, holding "apple", "pear" and "plum".
#[test]
fn golden_bytes() {
    let mut f = ExpandingQuotientFilter::new(options(0.1, 3, 0)).unwrap();
    for key in [&b"apple"[..], b"pear", b"plum"] {
        f.insert(key).unwrap();
    }
    let bytes = f.to_bytes();
    assert_eq!(&bytes[..4], b"AMQF");
    assert_eq!(bytes[6], FilterKind::ExpandingQuotientFilter.id());
    // q = 2, w = F0 + 1 = 5, F0 = ⌈log2(0.475·2/−ln 0.9)⌉ = 4, H = 0,
    // X = 0, 3 keys, no cap.
    assert_eq!(&bytes[20..25], [2, 5, 4, 0, 0]);
    assert_eq!(&bytes[25..33], 3u64.to_le_bytes());
    assert_eq!(&bytes[33..41], u64::MAX.to_le_bytes());
    // Each value: the 4 hash bits after the key's 2-bit quotient, then the
    // delimiter bit; the run of quotient x at slot x or the first free one.
    let payload = &bytes[64..bytes.len() - amq::format::CHECKSUM_LEN];
    let mut entries: Vec<(u64, u64)> = [&b"apple"[..], b"pear", b"plum"]
        .iter()
        .map(|k| {
            let h = amq::hash_key(k).get();
            (h >> 62, ((h << 2) >> 60) << 1 | 1)
        })
        .collect();
    entries.sort();
    let mut next = 0usize;
    for &(x, v) in &entries {
        let slot = next.max(x as usize);
        // 5-bit values packed from the area's low bits.
        let area = u128::from_le_bytes(payload[17..33].try_into().unwrap());
        assert_eq!((area >> (5 * slot)) as u64 & 0x1f, v, "slot {slot}");
        next = slot + 1;
    }
    common::assert_golden("expanding 2+5", &bytes, GOLDEN);
}

/// Header (magic, version 2, kind 14, hash scheme 1, 21 parameter bytes,
/// 114 payload bytes); `q = 2`, `w = 5`, `F0 = 4`, `H = 0`, `X = 0`; 3
/// keys; no cap; padding to byte 64; block 0: offset 0, occupied word
/// (quotients 0 and 1), run-end word (slots 0 and 2), 64 five-bit values
/// (slots 0 to 2); block 1 (padding slots): empty; the checksum.
const GOLDEN: &str = "
    414d514602000e01150000007200000000000000
    0205040000
    0300000000000000
    ffffffffffffffff
    0000000000000000000000000000000000000000000000
    00
    0300000000000000
    0500000000000000
    bd5c0000000000000000000000000000000000000000000000000000000000000000000000000000
    00
    0000000000000000
    0000000000000000
    00000000000000000000000000000000000000000000000000000000000000000000000000000000
    09595dcbb154c2fd
";
