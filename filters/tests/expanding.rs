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
                // Every copy keeps its own entry, void ones included.
                prop_assert!(f.count_hash(keys[i]) >= c, "count below the model's");
                if c > 0 {
                    prop_assert!(f.contains_hash(keys[i]), "false negative");
                }
            }
            prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
            if f.num_keys() == 0 {
                // An emptied filter is empty: no key matches.
                prop_assert!(keys.iter().all(|&h| !f.contains_hash(h)), "emptied filter matches");
            }
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

/// A remove removes: beside 1,000 held keys, inserting any hash and
/// removing it again leaves the filter exactly as it was, table and counts
/// (so churn neither grows the table nor raises its FPR). Half of the hashes
/// have fingerprint bits that are all zero after the quotient, which look
/// like a void entry to a rule that does not know the slot width.
#[test]
fn insert_then_remove_leaves_the_filter_as_it_was() {
    for o in [
        ExpandingOptions::new(0.01),
        options(0.1, 100, 0),
        options(0.001, 10, 18),
    ] {
        let mut f = ExpandingQuotientFilter::new(o).unwrap();
        let held = common::hashes(31, 1_000);
        for &h in &held {
            f.insert_hash(h).unwrap();
        }
        // Below capacity, so the churn's inserts never double it.
        assert!(f.num_keys() < f.capacity(), "{o:?}");
        let before = f.clone();
        let q = f.quotient_bits();
        for i in 0..200_000u64 {
            let r = common::mixed(i, 33).get();
            // Every other hash: quotient bits, then zeros for the whole slot.
            let h = if i % 2 == 0 {
                r
            } else {
                r & !((1u64 << (64 - q)) - 1) | (r >> 40)
            };
            let h = KeyHash::from_well_mixed(h);
            let count = f.count_hash(h);
            f.insert_hash(h).unwrap();
            assert_eq!(f.count_hash(h), count + 1, "{o:?} {h:?}");
            f.remove_hash(h).unwrap();
            assert_eq!(f.count_hash(h), count, "{o:?} {h:?}: the remove left its entry");
        }
        assert_eq!(f, before, "{o:?}");
        assert_eq!(f.expected_fpr(), before.expected_fpr());
        common::assert_no_false_negatives(&f, &held);
    }
    // The hash of the report: quotient 5 (of 2^11), then zeros.
    let mut f = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01)).unwrap();
    let h = KeyHash::from_well_mixed((5 << 53) | 0x1234);
    f.insert_hash(h).unwrap();
    f.insert(b"other").unwrap();
    f.remove_hash(h).unwrap();
    assert_eq!((f.contains_hash(h), f.count_hash(h), f.num_keys()), (false, 0, 1));
}

/// Counts survive fingerprints running out: 200 keys inserted 5 times
/// each, then the filter grown through many doublings (4-bit fingerprints,
/// so their entries go void after 4 and are copied on at every later one):
/// each still counts 5 or more, 5 removals each succeed, and every other
/// key stays. The same with the default options through 11 doublings.
#[test]
fn counts_survive_fingerprints_running_out() {
    for (o, grow) in [
        (options(0.1, 50, 0), 60_000usize),
        (ExpandingOptions::new(0.01), 1_100_000),
    ] {
        let mut f = ExpandingQuotientFilter::new(o).unwrap();
        let repeated = common::hashes(41, 200);
        for &h in &repeated {
            for _ in 0..5 {
                f.insert_hash(h).unwrap();
            }
        }
        let others = common::hashes(42, grow);
        for &h in &others {
            f.insert_hash(h).unwrap();
        }
        assert!(f.expansions() >= 10, "{o:?}: {}", f.expansions());
        for &h in &repeated {
            assert!(f.count_hash(h) >= 5, "{o:?}: count {}", f.count_hash(h));
        }
        for &h in &repeated {
            for _ in 0..5 {
                f.remove_hash(h).unwrap();
            }
        }
        assert_eq!(f.num_keys(), grow);
        common::assert_no_false_negatives(&f, &others);
    }
}

/// A merge is sized for the sum: two filters whose sum passes one table's
/// capacity merge (doubled first), keep every key and add their counts.
#[test]
fn merges_of_full_filters_are_sized_for_the_sum() {
    let o = ExpandingOptions::new(0.01);
    for (na, nb) in [
        (1_200, 1_200),
        (1_400, 1_400),
        (1_900, 1_900),
        (100, 30_000),
        (30_000, 100),
    ] {
        let (mut a, mut b) = (
            ExpandingQuotientFilter::new(o).unwrap(),
            ExpandingQuotientFilter::new(o).unwrap(),
        );
        let (ka, kb) = (common::hashes(51, na), common::hashes(52, nb));
        for &h in &ka {
            a.insert_hash(h).unwrap();
        }
        for &h in &kb {
            b.insert_hash(h).unwrap();
        }
        a.insert_hash(kb[0]).unwrap();
        let m = a.merge(&b).unwrap_or_else(|e| panic!("{na} + {nb}: {e}"));
        assert_eq!(m.num_keys(), na + nb + 1);
        assert!(m.num_keys() <= m.capacity());
        common::assert_no_false_negatives(&m, &ka);
        common::assert_no_false_negatives(&m, &kb);
        assert!(m.count_hash(kb[0]) >= 2);
        assert!(m.expected_fpr() <= 0.01, "{}", m.expected_fpr());
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

/// A filter whose void entries stand for several copies writes them after
/// its table; its bytes round-trip, survive corruption, and every resealed
/// change is refused or decodes exactly. Forged records are refused: out of
/// order, zero copies, a count of 0 written, or copies of a void entry the
/// table does not hold.
#[test]
fn void_copies_round_trip_and_forged_records_are_refused() {
    let mut f = ExpandingQuotientFilter::new(options(0.1, 3, 0)).unwrap();
    let keys = common::hashes(61, 40);
    for &h in &keys[..4] {
        for _ in 0..3 {
            f.insert_hash(h).unwrap();
        }
    }
    for &h in &keys[4..] {
        f.insert_hash(h).unwrap();
    }
    assert!(f.expansions() >= 4, "{}", f.expansions());
    let bytes = f.to_bytes();
    let params = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert_eq!(params, 29, "the void-copy count is written");
    let records = u64::from_le_bytes(bytes[41..49].try_into().unwrap()) as usize;
    assert!(records > 0);
    for &h in &keys[..4] {
        assert!(f.count_hash(h) >= 3);
    }
    common::assert_round_trip(&f, &keys);
    common::assert_corruption_safe(&f, &keys);
    common::assert_byte_changes_refused_or_exact(&f);
    let refused = |b: &[u8]| ExpandingQuotientFilter::from_bytes(b).is_err();
    // The records are the payload's last 24·records bytes.
    let end = bytes.len() - amq::format::CHECKSUM_LEN;
    let first = end - 24 * records;
    let forge = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = bytes.clone();
        edit(&mut b);
        common::reseal(&mut b);
        b
    };
    assert!(
        refused(&forge(
            &|b| b[first + 16..first + 24].copy_from_slice(&0u64.to_le_bytes())
        )),
        "zero copies"
    );
    assert!(
        refused(&forge(
            &|b| b[first..first + 8].copy_from_slice(&(1u64 << 40).to_le_bytes())
        )),
        "quotient"
    );
    assert!(
        refused(&forge(&|b| b[first + 8] = 1)),
        "payload bits where there are none"
    );
    if records > 1 {
        let swapped = forge(&|b| {
            let (r0, r1) = (b[first..first + 24].to_vec(), b[first + 24..first + 48].to_vec());
            b[first..first + 24].copy_from_slice(&r1);
            b[first + 24..first + 48].copy_from_slice(&r0);
        });
        assert!(refused(&swapped), "out of order");
    }
    // A record of a quotient whose run holds no void entry.
    let mut g = ExpandingQuotientFilter::new(options(0.1, 3, 0)).unwrap();
    g.insert_hash(keys[0]).unwrap();
    let plain = g.to_bytes();
    assert_eq!(
        u32::from_le_bytes(plain[8..12].try_into().unwrap()),
        21,
        "no count without copies"
    );
    let mut forged = plain[..41].to_vec();
    forged[8..12].copy_from_slice(&29u32.to_le_bytes());
    forged.extend_from_slice(&1u64.to_le_bytes());
    forged.resize(64, 0);
    let payload_len = u64::from_le_bytes(plain[12..20].try_into().unwrap());
    forged[12..20].copy_from_slice(&(payload_len + 24).to_le_bytes());
    forged.extend_from_slice(&plain[64..plain.len() - 8]);
    for v in [0u64, 0, 2] {
        forged.extend_from_slice(&v.to_le_bytes());
    }
    forged.extend_from_slice(&[0; 8]);
    common::reseal(&mut forged);
    assert!(refused(&forged), "copies of no void entry");
    // The same frame with a count of 0 written and no records.
    let mut zero = plain[..41].to_vec();
    zero[8..12].copy_from_slice(&29u32.to_le_bytes());
    zero.extend_from_slice(&0u64.to_le_bytes());
    zero.resize(64, 0);
    zero.extend_from_slice(&plain[64..]);
    common::reseal(&mut zero);
    assert!(refused(&zero), "a count of 0 written");
}

/// The expansion count is checked against the quotient bits: a frame that
/// claims more doublings than the table has is refused (it decoded before,
/// and its count passed 255 a few inserts later, so its own bytes were then
/// refused). Every frame that decodes writes back after more inserts.
#[test]
fn a_forged_expansion_count_is_refused() {
    // Horizon 64: the width is the same at every expansion count up to 64.
    let mut f = ExpandingQuotientFilter::new(options(0.1, 3, 64)).unwrap();
    f.insert(b"apple").unwrap();
    let bytes = f.to_bytes();
    let (q, x) = (bytes[20], bytes[24]);
    assert_eq!((q, x), (2, 0));
    for forged_x in 0..=64u8 {
        let mut b = bytes.clone();
        b[24] = forged_x;
        common::reseal(&mut b);
        match ExpandingQuotientFilter::from_bytes(&b) {
            Ok(mut g) => {
                assert!(forged_x <= q, "{forged_x} expansions of a 2^{q} table decoded");
                for i in 0..5_000u32 {
                    g.insert(&i.to_le_bytes()).unwrap();
                }
                let back = ExpandingQuotientFilter::from_bytes(&g.to_bytes()).unwrap();
                assert_eq!(back, g);
            }
            Err(_) => assert!(forged_x > q),
        }
    }
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
