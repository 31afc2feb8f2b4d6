//! Integration tests of the Memento range filter: a multiset model
//! (`BTreeMap`) under inserts and removals across many expansions (void
//! entries included), dense keys, the FPR for ranges of several lengths
//! against its prediction while the filter grows, the cap, and the byte
//! format (round trip, golden bytes, corruption).

mod common;

use std::collections::BTreeMap;

use amq::range::{MementoFilter, MementoOptions, RangeFilter};
use amq::{Error, FilterKind};
use proptest::prelude::*;

fn options(fpr: f64, max_range_len: u64, initial: usize, horizon: u32) -> MementoOptions {
    let mut o = MementoOptions::new(fpr, max_range_len);
    o.initial_keys = initial;
    o.horizon = horizon;
    o
}

/// Uniform keys from a seed: SplitMix64's finaliser (`amq::hash::remix`)
/// of a counter.
struct Rng(u64, u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed, 0)
    }

    fn next(&mut self) -> u64 {
        self.1 += 1;
        amq::hash::remix(self.1, self.0)
    }
}

/// Whether the model holds a key in `lo..=hi`.
fn any_in(model: &BTreeMap<u64, usize>, lo: u64, hi: u64) -> bool {
    lo <= hi && model.range(lo..=hi).next().is_some()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Remove(usize),
    Query(u64, u64),
}

/// Keys from a narrow space (many keys per partition, long runs) or a wide
/// one (about one per partition).
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop_oneof![0u64..4_096, any::<u64>()].prop_map(Op::Insert),
        2 => any::<usize>().prop_map(Op::Remove),
        3 => (prop_oneof![0u64..4_096, any::<u64>()], 0u64..300).prop_map(|(lo, len)| Op::Query(lo, lo.saturating_add(len))),
    ]
}

proptest! {
    #![proptest_config(common::proptest_config(64))]

    /// Against a multiset of keys, from a table of a few slots through
    /// many expansions: every range holding a held key answers `true`
    /// (checked for random ranges and, after each step, around every held
    /// key); removing a held key succeeds and never takes another's last
    /// match; the key count follows. A target of 0.25 with horizon 0 gives
    /// 2-bit fingerprints, so entries go void within a few expansions.
    #[test]
    fn model_multiset_across_expansions(
        fpr in prop_oneof![Just(0.25), Just(0.1), Just(0.001)],
        max_range_len in prop_oneof![Just(1u64), Just(4), Just(64), Just(1_000)],
        horizon in 0u32..3,
        initial in 1usize..40,
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        let o = options(fpr, max_range_len, initial, horizon);
        let mut f = MementoFilter::new(o).unwrap();
        let mut model: BTreeMap<u64, usize> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k) => {
                    f.insert(k).unwrap();
                    *model.entry(k).or_default() += 1;
                }
                Op::Remove(i) => {
                    if model.is_empty() {
                        // An emptied filter is empty: no range matches.
                        prop_assert!(f.is_empty() && !f.may_contain_range(0, u64::MAX));
                        continue;
                    }
                    let k = *model.keys().nth(i % model.len()).unwrap();
                    f.remove(k).unwrap();
                    let c = model.get_mut(&k).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&k);
                    }
                }
                Op::Query(lo, hi) => {
                    if any_in(&model, lo, hi) {
                        prop_assert!(f.may_contain_range(lo, hi), "false negative on {lo}..={hi}");
                    }
                }
            }
            for &k in model.keys() {
                prop_assert!(f.may_contain(k), "false negative on {k}");
                prop_assert!(f.may_contain_range(k.saturating_sub(3), k.saturating_add(2)));
            }
            prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
        }
        // The batch agrees with one at a time.
        let ranges: Vec<(u64, u64)> = model.keys().map(|&k| (k, k)).chain((0..200u64).map(|i| (i * 37, i * 37 + i))).collect();
        let mut out = vec![false; ranges.len()];
        f.may_contain_ranges(&ranges, &mut out);
        for (&(lo, hi), &o) in ranges.iter().zip(&out) {
            prop_assert_eq!(o, f.may_contain_range(lo, hi));
        }
        let back = MementoFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(back.expected_fpr(7), f.expected_fpr(7));
    }
}

/// Uniform keys, grown from 1,000 to 1,000,000 with no size given: at each
/// power of ten, the measured FPR of empty ranges of 1, 64, 256 and 1,024
/// keys (ranges up to 64 promised 1%) stays under `expected_fpr`, the bound
/// for any keys, and for ranges of at least a partition is within 10% (and
/// the count's noise) of what uniform keys give: a probe's rate (`expected_fpr(1)`) times the
/// share of mementos the range covers, `ℓ/2^m` partitions' worth.
#[test]
fn fpr_of_empty_ranges_holds_while_growing() {
    let mut f = MementoFilter::new(MementoOptions::new(0.01, 64)).unwrap();
    let mut rng = Rng::new(41);
    let mut keys = Vec::new();
    for checkpoint in [1_000usize, 10_000, 100_000, 1_000_000] {
        while keys.len() < checkpoint {
            let k = rng.next();
            f.insert(k).unwrap();
            keys.push(k);
        }
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        for len in [1u64, 64, 256, 1_024] {
            let (mut fp, mut tried) = (0u32, 0u32);
            while tried < 200_000 {
                let lo = rng.next() & !(1 << 63);
                let hi = lo + len - 1;
                let at = sorted.partition_point(|&k| k < lo);
                if at < sorted.len() && sorted[at] <= hi {
                    continue;
                }
                tried += 1;
                fp += u32::from(f.may_contain_range(lo, hi));
            }
            let measured = f64::from(fp) / f64::from(tried);
            // Within three standard deviations of the count.
            let slack = |p: f64| 3.0 * (p / f64::from(tried)).sqrt();
            let bound = f.expected_fpr(len);
            assert!(
                measured <= bound + slack(bound),
                "{checkpoint} keys, {len}: {measured}"
            );
            if len >= 64 {
                let uniform = -(-f.expected_fpr(1)).ln_1p() * len as f64 / 64.0;
                let uniform = -(-uniform).exp_m1();
                assert!(
                    (measured - uniform).abs() <= uniform * 0.1 + slack(uniform),
                    "{checkpoint} keys, ranges of {len}: measured {measured}, expected {uniform}"
                );
            }
        }
        assert!(f.expected_fpr(64) <= 0.01, "{}", f.expected_fpr(64));
    }
    assert_eq!(f.expansions(), 10);
    assert!(keys.iter().all(|&k| f.may_contain(k)));
}

/// Keys chosen against the memento (all at a partition's first key, ranges
/// ending there) meet the bound: ranges of one partition's length that
/// cross into a neighbour, against keys at both ends of their partitions,
/// are false positives at about `expected_fpr(64)`, twice a probe's rate.
#[test]
fn adversarial_mementos_meet_the_bound() {
    let keys: Vec<u64> = (0..200_000u64).flat_map(|i| [i << 12, (i << 12) + 63]).collect();
    let f = MementoFilter::build(&keys, MementoOptions::new(0.01, 64)).unwrap();
    // Partitions 64 apart from the keys' (key >> 6 is even × 64): ranges
    // from the last key of an absent partition to the first of the next.
    let mut fp = 0u32;
    let n = 200_000u32;
    for i in 0..u64::from(n) {
        let lo = (((1u64 << 40) + i) << 6) + 63;
        fp += u32::from(f.may_contain_range(lo, lo + 1));
    }
    let measured = f64::from(fp) / f64::from(n);
    let expected = f.expected_fpr(2);
    assert!(
        measured <= expected * 1.1 && measured >= expected * 0.8,
        "{measured} vs {expected}"
    );
}

/// Sequential keys (auto-increment ids: 1,024 keys in every partition, one
/// run each) are found, and ranges past them or in the gaps of a strided
/// set are false positives at about the predicted rate: the searched runs
/// answer as the scanned ones would.
#[test]
fn dense_keys() {
    let o = MementoOptions::new(0.01, 1_024);
    let keys: Vec<u64> = (0..200_000u64).collect();
    let f = MementoFilter::build(&keys, o).unwrap();
    assert!(keys.iter().step_by(7).all(|&k| f.may_contain(k)));
    assert!(f.may_contain_range(150_000, 150_000) && f.may_contain_range(199_999, 1 << 40));
    let empty: u32 = (0..100_000u64)
        .map(|i| u32::from(f.may_contain_range(1_000_000 + i * 3_000, 1_000_000 + i * 3_000 + 1_023)))
        .sum();
    assert!(f64::from(empty) / 1e5 <= f.expected_fpr(1_024) * 1.2, "{empty}");
    // Every other partition of 1,024 keys, then the gaps' ranges.
    let strided: Vec<u64> = (0..400_000u64).filter(|k| (k >> 10) % 2 == 0).collect();
    let g = MementoFilter::build(&strided, o).unwrap();
    let mut fp = 0u32;
    for p in (1..390u64).step_by(2) {
        for s in 0..32 {
            let lo = (p << 10) + s * 32;
            // A range answers as its parts in two partitions do.
            let parts = g.may_contain_range(lo - 1, lo - 1) || g.may_contain_range(lo, lo + 31);
            assert_eq!(g.may_contain_range(lo - 1, lo + 31), parts);
            fp += u32::from(g.may_contain_range(lo, lo + 31));
        }
    }
    assert!(
        f64::from(fp) / (195.0 * 32.0) <= g.expected_fpr(32) * 2.0 + 0.005,
        "{fp}"
    );
    // Partition edges: the last key of a held partition and the first of
    // the next (empty) one.
    assert!(g.may_contain_range(1_023, 1_024) && g.may_contain(2_048));
}

/// Past the horizon, fingerprints widen and the bound holds: horizon 2,
/// grown 2^12-fold.
#[test]
fn past_the_horizon_the_fpr_stays_bounded() {
    let mut o = MementoOptions::new(0.05, 16);
    o.initial_keys = 64;
    o.horizon = 2;
    let mut f = MementoFilter::new(o).unwrap();
    let mut rng = Rng::new(43);
    let keys: Vec<u64> = (0..250_000).map(|_| rng.next()).collect();
    for &k in &keys {
        f.insert(k).unwrap();
    }
    assert!(
        f.expansions() >= 12 && f.fingerprint_bits() > 7,
        "{}",
        f.fingerprint_bits()
    );
    assert!(f.expected_fpr(16) <= f.fpr_bound(16) && f.fpr_bound(16) < 0.05 * 1.6);
    assert!(keys.iter().all(|&k| f.may_contain(k)));
    let fp = (0..100_000)
        .filter(|_| f.may_contain_range(rng.next() | 1, 0))
        .count();
    assert_eq!(fp, 0, "lo > hi is empty");
}

#[test]
fn max_keys_caps_growth_and_removals_free_room() {
    let mut o = MementoOptions::new(0.01, 8);
    o.max_keys = Some(5_000);
    let mut f = MementoFilter::new(o).unwrap();
    for k in 0..5_000u64 {
        f.insert(k * 977).unwrap();
    }
    let before = f.to_bytes();
    assert_eq!(f.insert(1), Err(Error::Full));
    assert_eq!(f.to_bytes(), before, "a refused insert changes nothing");
    f.remove(977).unwrap();
    f.insert(1).unwrap();
    assert!(f.may_contain(1));
    assert_eq!(f.remove(3), Err(Error::NotPresent));
    assert!(MementoFilter::build(&[1, 2, 3], {
        let mut o = MementoOptions::new(0.01, 8);
        o.max_keys = Some(2);
        o
    })
    .is_err());
}

#[test]
fn options_are_checked() {
    for (fpr, len) in [
        (0.0, 8),
        (1.0, 8),
        (f64::NAN, 8),
        (0.3, 1),
        (0.26, 2),
        (0.01, 0),
        (0.01, (1 << 40) + 1),
    ] {
        assert!(
            matches!(
                MementoFilter::new(MementoOptions::new(fpr, len)),
                Err(Error::InvalidParameter { .. })
            ),
            "{fpr} {len}"
        );
    }
    let mut o = MementoOptions::new(0.01, 8);
    o.initial_keys = 0;
    assert!(MementoFilter::new(o).is_err());
    o.initial_keys = 10;
    o.horizon = 65;
    assert!(MementoFilter::new(o).is_err());
    o.horizon = 3;
    o.max_keys = Some(0);
    assert!(MementoFilter::new(o).is_err());
    // Memento and fingerprint past 63 bits.
    assert!(MementoFilter::new(MementoOptions::new(1e-12, 1 << 40)).is_err());
    assert!(MementoFilter::new(MementoOptions::new(1e-4, 1 << 40)).is_ok());
}

#[test]
fn empty_filters_and_whole_ranges() {
    let f = MementoFilter::new(MementoOptions::new(0.01, 64)).unwrap();
    assert!(f.is_empty() && !f.may_contain_range(0, u64::MAX) && f.expected_fpr(5) == 0.0);
    let g = MementoFilter::build(&[u64::MAX, 0], MementoOptions::new(0.01, 64)).unwrap();
    assert!(g.may_contain(u64::MAX) && g.may_contain(0) && g.may_contain_range(0, u64::MAX));
    assert!(g.may_contain_range(u64::MAX - 63, u64::MAX));
    assert_eq!(g.kind(), FilterKind::MementoFilter);
    assert_eq!(g.expected_fpr(64 * 64 + 2), 1.0);
}

/// A remove removes: beside 800 held keys, inserting any key and
/// removing it again leaves the filter exactly as it was (about one key in
/// a thousand has a fingerprint of zeros, which a void rule blind to the
/// slot width takes for a void entry and leaves behind).
#[test]
fn insert_then_remove_leaves_the_filter_as_it_was() {
    for o in [MementoOptions::new(0.01, 16), options(0.1, 64, 100, 0)] {
        let mut f = MementoFilter::new(o).unwrap();
        let mut rng = Rng::new(71);
        let held: Vec<u64> = (0..800).map(|_| rng.next()).collect();
        for &k in &held {
            f.insert(k).unwrap();
        }
        assert!(f.num_keys() < f.capacity());
        let before = f.clone();
        for _ in 0..100_000 {
            let k = rng.next();
            f.insert(k).unwrap();
            f.remove(k).unwrap();
        }
        assert_eq!(f, before, "{o:?}");
        assert!(held.iter().all(|&k| f.may_contain(k)));
    }
}

/// Keys inserted 5 times whose entries went void (2-bit fingerprints, many
/// doublings) take 5 removals each, and every other key stays; removing
/// the rest empties the filter: no range matches.
#[test]
fn removes_of_void_copies_count_and_empty_the_filter() {
    let mut f = MementoFilter::new(options(0.25, 8, 4, 0)).unwrap();
    let mut rng = Rng::new(72);
    let repeated: Vec<u64> = (0..50).map(|_| rng.next()).collect();
    for &k in &repeated {
        for _ in 0..5 {
            f.insert(k).unwrap();
        }
    }
    let others: Vec<u64> = (0..20_000).map(|_| rng.next()).collect();
    for &k in &others {
        f.insert(k).unwrap();
    }
    assert!(f.expansions() >= 8, "{}", f.expansions());
    for &k in &repeated {
        for _ in 0..5 {
            f.remove(k).unwrap();
        }
    }
    assert_eq!(f.num_keys(), others.len());
    assert!(others.iter().all(|&k| f.may_contain(k)));
    for &k in &others {
        f.remove(k).unwrap();
    }
    assert!(f.is_empty() && !f.may_contain_range(0, u64::MAX));
    assert_eq!(f.remove(others[0]), Err(Error::NotPresent));
}

/// The expansion count is checked against the quotients: each doubling
/// made them even, so a frame claiming more doublings than `N` has factors
/// of two is refused; every frame that decodes writes back after more
/// inserts.
#[test]
fn a_forged_expansion_count_is_refused() {
    let mut f = MementoFilter::new(options(0.1, 8, 3, 64)).unwrap();
    f.insert(42).unwrap();
    let bytes = f.to_bytes();
    let n = u64::from_le_bytes(bytes[20..28].try_into().unwrap());
    assert_eq!(bytes[32], 0, "no expansions yet");
    for forged_x in 0..=64u8 {
        let mut b = bytes.clone();
        b[32] = forged_x;
        common::reseal(&mut b);
        match MementoFilter::from_bytes(&b) {
            Ok(mut g) => {
                assert!(
                    u32::from(forged_x) <= n.trailing_zeros(),
                    "{forged_x} expansions of {n} quotients"
                );
                for k in 0..5_000u64 {
                    g.insert(k * 1_000).unwrap();
                }
                assert_eq!(MementoFilter::from_bytes(&g.to_bytes()).unwrap(), g);
            }
            Err(_) => assert!(u32::from(forged_x) > n.trailing_zeros()),
        }
    }
}

fn small_filter() -> MementoFilter {
    let mut f = MementoFilter::new(options(0.1, 8, 8, 1)).unwrap();
    for i in 0..150u64 {
        f.insert(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 50))
            .unwrap();
    }
    f.insert(5).unwrap();
    f.insert(5).unwrap();
    f
}

/// A decoded key count of `u64::MAX` makes inserts `Full`, not an overflow.
#[test]
fn a_forged_key_count_at_the_limit_refuses_inserts() {
    let f = MementoFilter::build(&[1, 6, 7], options(0.1, 4, 3, 0)).unwrap();
    let mut bytes = f.to_bytes();
    bytes[33..41].copy_from_slice(&u64::MAX.to_le_bytes());
    common::reseal(&mut bytes);
    let mut g = MementoFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g.insert(9), Err(Error::Full));
    assert_eq!(g.to_bytes(), bytes);
    assert!(g.may_contain(6));
}

/// Decoded bytes answer as the filter did; every byte changed in turn
/// (with the checksum recomputed) is refused or decodes to a filter that
/// re-encodes to exactly those bytes and answers without panicking.
#[test]
fn bytes_round_trip_and_survive_corruption() {
    let f = small_filter();
    assert!(f.expansions() >= 3);
    let bytes = f.to_bytes();
    let back = MementoFilter::from_bytes(&bytes).unwrap();
    assert_eq!(back, f);
    for i in 0..2_000u64 {
        assert_eq!(
            back.may_contain_range(i * 1_000, i * 1_000 + i),
            f.may_contain_range(i * 1_000, i * 1_000 + i)
        );
    }
    for cut in 0..bytes.len() {
        assert!(MementoFilter::from_bytes(&bytes[..cut]).is_err());
    }
    let mut changed = bytes.clone();
    for i in 0..bytes.len() - amq::format::CHECKSUM_LEN {
        for delta in [1u8, 2, 4, 8, 16, 32, 64, 128, 255] {
            changed[i] = bytes[i] ^ delta;
            common::reseal(&mut changed);
            if let Ok(mut g) = MementoFilter::from_bytes(&changed) {
                assert_eq!(g.to_bytes(), changed, "byte {i} ^ {delta}");
                for k in 0..50u64 {
                    let _ = g.may_contain_range(k * 12_345, k * 12_345 + k);
                    let _ = g.expected_fpr(k);
                }
                let _ = g.insert(17);
                let _ = g.remove(17);
            }
            changed.copy_from_slice(&bytes);
        }
    }
}

/// The format is pinned: a filter of 4 quotients, ranges of up to 4 keys
/// at 10% (`m` = 2), horizon 0, holding keys 1, 6 and 7.
#[test]
fn golden_bytes() {
    let f = MementoFilter::build(&[1, 6, 7], options(0.1, 4, 3, 0)).unwrap();
    let bytes = f.to_bytes();
    assert_eq!(&bytes[..4], b"AMQF");
    assert_eq!(bytes[6], FilterKind::MementoFilter.id());
    // N = 4 (3 keys at 95%), F0 = ⌈log2(0.475·2/−ln 0.9)⌉ = 4,
    // w = 4 + 1 + 2 = 7, m = 2, H = 0, X = 0, 3 keys, no cap.
    assert_eq!(&bytes[20..28], 4u64.to_le_bytes());
    assert_eq!(&bytes[28..33], [7, 2, 4, 0, 0]);
    assert_eq!(&bytes[33..41], 3u64.to_le_bytes());
    assert_eq!(&bytes[41..49], u64::MAX.to_le_bytes());
    // Each value: the 4 hash bits of the partition (key >> 2) after its
    // quotient (`h·4/2^64`: the top 2 bits), the delimiter, the key's 2
    // low bits.
    let payload = &bytes[64..bytes.len() - amq::format::CHECKSUM_LEN];
    let mut entries: Vec<(u64, u64)> = [1u64, 6, 7]
        .iter()
        .map(|&k| {
            let h = amq::hash::hash_u64(k >> 2).get();
            (h >> 62, (((h << 2) >> 60) << 1 | 1) << 2 | (k & 3))
        })
        .collect();
    entries.sort();
    let mut next = 0usize;
    for &(x, v) in &entries {
        let slot = next.max(x as usize);
        // 7-bit values packed from the area's low bits.
        let area = u128::from_le_bytes(payload[17..33].try_into().unwrap());
        assert_eq!((area >> (7 * slot)) as u64 & 0x7f, v, "slot {slot}");
        next = slot + 1;
    }
    common::assert_golden("memento 4+7", &bytes, GOLDEN);
}

/// Header (magic, version 2, kind 15, hash scheme 3, 29 parameter bytes,
/// 146 payload bytes); `N = 4`, `w = 7`, `m = 2`, `F0 = 4`, `H = 0`,
/// `X = 0`; 3 keys; no cap; padding to byte 64; block 0: offset 0,
/// occupied word (quotients 0 and 1), run-end word (slots 1 and 2), 64
/// seven-bit values (slots 0 to 2: keys 6 and 7 of partition 1, key 1 of
/// partition 0); block 1 (padding slots): empty; the checksum.
const GOLDEN: &str = "
    414d514602000f031d0000009200000000000000
    0400000000000000 0702040000
    0300000000000000
    ffffffffffffffff
    000000000000000000000000000000
    00 0300000000000000 0600000000000000 ce6717
    000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
    a2ccd9493f18bfb7";
