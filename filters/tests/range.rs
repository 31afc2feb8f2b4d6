//! The range filter (`GrafiteRange`) against a `BTreeSet` model: a range
//! that holds a key always answers `true`, an empty range (`lo > hi`)
//! `false`; the view answers as the owned filter; the bytes round-trip, are
//! pinned by a golden frame, and no truncation, byte change or forgery makes
//! a decoder or a query panic. The FPR is checked in `range_fpr.rs`.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound::Included;

use amq::format::CHECKSUM_LEN;
use amq::hash::remix;
use amq::range::{common_prefix, key_to_u64, GrafiteRange, GrafiteRangeView, RangeFilter, RangeSizing};
use amq::{AnyFilter, Error, FilterKind, FilterView, FormatError, HashScheme};
use proptest::prelude::*;

fn any_key_in(model: &BTreeSet<u64>, lo: u64, hi: u64) -> bool {
    lo <= hi && model.range((Included(lo), Included(hi))).next().is_some()
}

/// Every query of `ranges` (and each key alone, and a range around it)
/// answers `true` where the model holds a key, on the owned filter and the
/// view alike, and the two agree everywhere.
fn check_model(keys: &[u64], sizing: RangeSizing, seed: u64, ranges: &[(u64, u64)]) {
    let model: BTreeSet<u64> = keys.iter().copied().collect();
    let f = GrafiteRange::build_seeded(keys, sizing, seed).expect("build");
    assert_eq!(f.num_keys(), model.len());
    let bytes = f.to_bytes();
    let view = GrafiteRangeView::new(&bytes).expect("view");
    let around = keys.iter().flat_map(|&k| {
        [
            (k, k),
            (k.saturating_sub(3), k.saturating_add(3)),
            (k.saturating_sub(1 << 20), k),
            (k, k.saturating_add(1 << 40)),
            (0, k),
            (k, u64::MAX),
        ]
    });
    let all: Vec<(u64, u64)> = ranges.iter().copied().chain(around).collect();
    let mut batch = vec![false; all.len()];
    f.may_contain_ranges(&all, &mut batch);
    let mut view_batch = vec![false; all.len()];
    view.may_contain_ranges(&all, &mut view_batch);
    for ((&(lo, hi), &batched), &view_batched) in all.iter().zip(&batch).zip(&view_batch) {
        let answer = f.may_contain_range(lo, hi);
        assert_eq!(batched, answer, "batch on {lo}..={hi}");
        assert_eq!(view_batched, answer, "view's batch on {lo}..={hi}");
        if any_key_in(&model, lo, hi) {
            assert!(answer, "false negative on {lo}..={hi}");
        }
        if lo > hi {
            assert!(!answer, "{lo} > {hi} is an empty range");
        }
        assert_eq!(view.may_contain_range(lo, hi), answer, "view on {lo}..={hi}");
        assert_eq!(f.may_contain(lo), f.may_contain_range(lo, lo));
    }
    if model.is_empty() {
        assert!(ranges.iter().all(|&(lo, hi)| !f.may_contain_range(lo, hi)));
        assert!(!f.may_contain_range(0, u64::MAX));
        assert_eq!(f.expected_fpr(1), 0.0);
    }
}

fn sizing() -> impl Strategy<Value = RangeSizing> {
    prop_oneof![
        (2.0..40.0f64).prop_map(RangeSizing::BitsPerKey),
        (0.001..0.9f64, 1..5_000u64).prop_map(|(fpr, max_range_len)| RangeSizing::Fpr { fpr, max_range_len }),
    ]
}

/// Keys spread over all of `u64`, packed in a small interval, or in clumps.
fn keys() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        proptest::collection::vec(any::<u64>(), 0..400),
        proptest::collection::vec(0..5_000u64, 0..400),
        proptest::collection::vec((0..8u64, 0..300u64), 0..400).prop_map(|v| v
            .into_iter()
            .map(|(c, o)| c.wrapping_mul(0x9e37_79b9_7f4a_7c15) + o)
            .collect()),
        proptest::collection::vec(any::<u64>(), 0..60)
            .prop_map(|v| v.into_iter().flat_map(|k| [k, k]).collect()),
    ]
}

fn ranges(keys: &[u64], raw: &[(u64, u64, u8)]) -> Vec<(u64, u64)> {
    raw.iter()
        .map(|&(a, b, shape)| {
            let near = keys.get(a as usize % keys.len().max(1)).copied().unwrap_or(a);
            match shape % 5 {
                0 => (a, b),
                1 => (a, a.saturating_add(b % 1024)),
                2 => (near.saturating_sub(b % 64), near.saturating_add(b % 7)),
                3 => (near.wrapping_add(1), near.wrapping_add(1 + b % 256)),
                _ => (b, a),
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    #[test]
    fn no_false_negatives_against_a_btreeset(
        keys in keys(),
        sizing in sizing(),
        seed in any::<u64>(),
        raw in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u8>()), 0..300),
    ) {
        let ranges = ranges(&keys, &raw);
        check_model(&keys, sizing, seed, &ranges);
    }

    /// `key_to_u64` never decreases in the keys' byte order, whatever the
    /// prefix, so ranges of byte keys mapped through it miss no key.
    #[test]
    fn byte_keys_map_in_order(
        mut keys in proptest::collection::vec(proptest::collection::vec(0..4u8, 0..14), 2..60),
        prefix_from in any::<prop::sample::Index>(),
        cut in 0..6usize,
    ) {
        keys.sort();
        let p = prefix_from.get(&keys);
        let prefix = &p[..cut.min(p.len())];
        let mapped: Vec<u64> = keys.iter().map(|k| key_to_u64(k, prefix)).collect();
        prop_assert!(mapped.windows(2).all(|w| w[0] <= w[1]), "{:?} -> {:?}", keys, mapped);
        // Stored keys that start with the prefix, queried by any two keys.
        let stored: Vec<&Vec<u8>> = keys.iter().filter(|k| k.starts_with(prefix)).collect();
        let f = GrafiteRange::build(&stored.iter().map(|k| key_to_u64(k, prefix)).collect::<Vec<_>>(), RangeSizing::BitsPerKey(10.0)).unwrap();
        for lo in &keys {
            for hi in &keys {
                if stored.iter().any(|k| lo <= *k && *k <= hi) {
                    prop_assert!(f.may_contain_range(key_to_u64(lo, prefix), key_to_u64(hi, prefix)));
                }
            }
        }
    }
}

#[test]
fn common_prefixes() {
    let keys: [&[u8]; 3] = [b"abcde", b"abcxy", b"abc"];
    assert_eq!(common_prefix(keys), b"abc");
    assert_eq!(common_prefix([&b"solo"[..]]), b"solo");
    assert_eq!(common_prefix([&b"a"[..], b"b"]), b"");
    // Keys outside the prefix clamp to the ends.
    assert_eq!(key_to_u64(b"ab", b"abc"), 0);
    assert_eq!(key_to_u64(b"abd", b"abc"), u64::MAX);
    assert_eq!(key_to_u64(b"abc", b"abc"), 0);
    assert_eq!(
        key_to_u64(b"abc\x01\x02\x03\x04\x05\x06\x07\x08\x09", b"abc"),
        0x0102_0304_0506_0708
    );
}

#[test]
fn whole_and_extreme_ranges() {
    let keys = [0u64, 1, u64::MAX - 1, u64::MAX];
    check_model(
        &keys,
        RangeSizing::BitsPerKey(16.0),
        3,
        &[(0, u64::MAX), (2, u64::MAX - 2), (u64::MAX, 0)],
    );
    let f = GrafiteRange::build(
        &[1 << 63],
        RangeSizing::Fpr {
            fpr: 0.5,
            max_range_len: 1,
        },
    )
    .unwrap();
    assert!(f.may_contain_range(0, u64::MAX));
    assert!(f.may_contain(1 << 63));
    assert!(!f.may_contain_range(u64::MAX, 0));
    // A range longer than a block promises nothing, and answers `true`.
    assert_eq!(f.expected_fpr(u64::MAX), 1.0);
}

#[test]
fn sizing_errors_are_typed() {
    let keys = [1u64, 2, 3];
    for sizing in [
        RangeSizing::BitsPerKey(0.0),
        RangeSizing::BitsPerKey(1.9),
        RangeSizing::BitsPerKey(64.5),
        RangeSizing::BitsPerKey(f64::INFINITY),
        RangeSizing::Fpr {
            fpr: 0.0,
            max_range_len: 1,
        },
        RangeSizing::Fpr {
            fpr: f64::NAN,
            max_range_len: 1,
        },
        RangeSizing::Fpr {
            fpr: 0.1,
            max_range_len: 0,
        },
        RangeSizing::Fpr {
            fpr: 1e-12,
            max_range_len: u64::MAX,
        },
    ] {
        assert!(
            matches!(
                GrafiteRange::build(&keys, sizing),
                Err(Error::InvalidParameter { .. })
            ),
            "{sizing:?}"
        );
    }
    // No keys: every sizing builds an empty filter (its FPR needs no room).
    let empty = GrafiteRange::build(
        &[],
        RangeSizing::Fpr {
            fpr: 1e-12,
            max_range_len: u64::MAX,
        },
    )
    .unwrap();
    assert_eq!((empty.num_keys(), empty.bits_per_key()), (0, 0.0));
    assert!(empty.size_in_bytes() <= 24);
}

/// The bytes of a small filter, pinned: a change to the frame, the
/// parameters, the hash or the code fails here. The parameters: 4 keys, the
/// default seed, `r` = 3072, 4 values, 9 low bits, a sample every 2^8
/// zeros; the payload: one upper word, two lower words (the second the zero
/// word), one sample.
#[test]
fn golden_frame() {
    let f = GrafiteRange::build(&[1, 1_000, 123_456_789, 1 << 40], RangeSizing::BitsPerKey(12.0)).unwrap();
    common::assert_golden(
        "GrafiteRange",
        &f.to_bytes(),
        // Header: magic, version 2, kind 12, key scheme 3 (ordered u64),
        // 34 bytes of parameters, 32 of payload.
        "414d5146 0200 0c 03 22000000 2000000000000000
         0400000000000000 6772616669746500
         000c000000000000 0400000000000000 09 08
         00000000000000000000
         4a01000000000000
         a31bd35d09000000 0000000000000000
         0000000000000000
         0297775bcbd9aada",
    );
}

#[test]
fn round_trip_view_and_refusals() {
    let keys: Vec<u64> = (0..5_000u64).map(|i| remix(i, 9)).collect();
    let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(14.0)).unwrap();
    let bytes = f.to_bytes();
    let back = GrafiteRange::from_bytes(&bytes).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.to_bytes(), bytes);
    let view = GrafiteRangeView::new(&bytes).unwrap();
    assert_eq!(view.to_bytes(), bytes);
    assert_eq!(view.to_filter().unwrap(), f);
    assert_eq!(
        (view.num_keys(), view.size_in_bytes()),
        (f.num_keys(), f.size_in_bytes())
    );
    assert_eq!(view.expected_fpr(16), f.expected_fpr(16));
    assert_eq!(view.kind(), FilterKind::GrafiteRange);
    // The view reads at any alignment.
    for shift in 1..8 {
        let mut moved = vec![0u8; shift];
        moved.extend_from_slice(&bytes);
        let v = GrafiteRangeView::new(&moved[shift..]).unwrap();
        for i in 0..500u64 {
            let lo = remix(i, 10);
            assert_eq!(
                v.may_contain_range(lo, lo.saturating_add(i)),
                f.may_contain_range(lo, lo.saturating_add(i))
            );
        }
    }
    // The point-filter decoders refuse it by its key scheme, the point views
    // as a kind without one.
    assert_eq!(
        AnyFilter::from_bytes(&bytes),
        Err(Error::WrongHashScheme {
            expected: HashScheme::Xxh3Seeded,
            found: HashScheme::OrderedU64
        })
    );
    assert!(matches!(
        FilterView::new(&bytes),
        Err(Error::Unsupported {
            kind: FilterKind::GrafiteRange,
            ..
        })
    ));
    assert!(!FilterView::supports(FilterKind::GrafiteRange));
    // Nor is one built, or made empty, from key hashes.
    let hashes: Vec<amq::KeyHash> = (0..100u64).map(amq::hash_u64).collect();
    let refused = Err(Error::WrongHashScheme {
        expected: HashScheme::OrderedU64,
        found: HashScheme::Xxh3Seeded,
    });
    assert_eq!(
        AnyFilter::build(FilterKind::GrafiteRange, &hashes, amq::FilterSizing::Fpr(0.01)),
        refused
    );
    assert_eq!(
        AnyFilter::new(FilterKind::GrafiteRange, 100, amq::FilterSizing::Fpr(0.01)),
        refused
    );
    assert!(amq::plan::predict(FilterKind::GrafiteRange, 100, amq::FilterSizing::Fpr(0.01)).is_err());
    // A frame forged to claim amq's key hashes is refused by both decoders.
    let mut forged = bytes.clone();
    forged[7] = HashScheme::Xxh3Seeded.id();
    common::reseal(&mut forged);
    let want = Error::WrongHashScheme {
        expected: HashScheme::OrderedU64,
        found: HashScheme::Xxh3Seeded,
    };
    assert_eq!(GrafiteRange::from_bytes(&forged), Err(want.clone()));
    assert_eq!(AnyFilter::from_bytes(&forged), Err(want.clone()));
    assert_eq!(GrafiteRangeView::new(&forged).unwrap_err(), want);
    // And it refuses theirs.
    let bloom = amq::BlockedBloom::new(10, amq::FilterSizing::Fpr(0.01)).unwrap();
    use amq::Filter;
    assert!(matches!(
        GrafiteRange::from_bytes(&bloom.to_bytes()),
        Err(Error::Format(FormatError::WrongKind { .. }))
    ));
    assert!(GrafiteRangeView::new(&bloom.to_bytes()).is_err());
}

fn small_filters() -> Vec<(GrafiteRange, Vec<u64>)> {
    let sets: [Vec<u64>; 3] = [vec![], vec![42], vec![5, 17, 1 << 33, u64::MAX]];
    sets.into_iter()
        .map(|keys| {
            (
                GrafiteRange::build(&keys, RangeSizing::BitsPerKey(10.0)).unwrap(),
                keys,
            )
        })
        .collect()
}

fn assert_finds(f: &dyn RangeFilter, keys: &[u64]) {
    for &k in keys {
        assert!(f.may_contain(k) && f.may_contain_range(k.saturating_sub(9), k.saturating_add(9)));
    }
}

/// Queries that must not panic on any filter, whatever its words hold; the
/// batch answers as the single queries do there too.
fn exercise(f: &dyn RangeFilter) {
    let mut ranges = Vec::new();
    for i in 0..64u64 {
        let lo = remix(i, 77) >> (i % 64);
        ranges.push((lo, lo.saturating_add(i * i)));
        f.may_contain(i);
    }
    ranges.push((0, u64::MAX));
    let mut batch = vec![false; ranges.len()];
    f.may_contain_ranges(&ranges, &mut batch);
    for (&(lo, hi), &b) in ranges.iter().zip(&batch) {
        assert_eq!(f.may_contain_range(lo, hi), b, "{lo}..={hi}");
    }
    let p = f.expected_fpr(16);
    assert!((0.0..=1.0).contains(&p));
}

/// Every truncation is an error; every changed byte is an error (the
/// checksum); with the checksum recomputed, every changed byte is an error
/// or a filter that answers without panicking and re-encodes to the forged
/// bytes. Trusted views of the same bytes never panic either.
#[test]
fn corruption_and_forgery_are_safe() {
    for (f, keys) in small_filters() {
        let bytes = f.to_bytes();
        for n in 0..bytes.len() {
            assert!(GrafiteRange::from_bytes(&bytes[..n]).is_err(), "prefix {n}");
            assert!(GrafiteRangeView::new(&bytes[..n]).is_err(), "prefix {n}");
            assert!(GrafiteRangeView::trusted(&bytes[..n]).is_err(), "prefix {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(GrafiteRange::from_bytes(&longer).is_err());
        let mut changed = bytes.clone();
        for i in 0..bytes.len() {
            for delta in 1..=255u8 {
                changed[i] = bytes[i] ^ delta;
                if let Ok(g) = GrafiteRange::from_bytes(&changed) {
                    assert_finds(&g, &keys);
                }
                let payload = i < bytes.len() - CHECKSUM_LEN;
                if payload {
                    common::reseal(&mut changed);
                    if let Ok(g) = GrafiteRange::from_bytes(&changed) {
                        exercise(&g);
                        assert_eq!(g.to_bytes(), changed);
                    }
                    if let Ok(v) = GrafiteRangeView::trusted(&changed) {
                        exercise(&v);
                    }
                }
                changed.copy_from_slice(&bytes);
            }
        }
    }
}

/// A frame claiming a format version before the kind existed is refused.
#[test]
fn version_one_frames_are_refused() {
    let (f, _) = small_filters().remove(2);
    let mut bytes = f.to_bytes();
    bytes[4] = 1;
    common::reseal(&mut bytes);
    assert!(GrafiteRange::from_bytes(&bytes).is_err());
    assert!(GrafiteRangeView::trusted(&bytes).is_err());
}

#[cfg(feature = "serde")]
#[test]
fn serde_carries_the_bytes() {
    let (f, keys) = small_filters().remove(2);
    let json = serde_json::to_string(&f).unwrap();
    let as_bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(as_bytes, f.to_bytes());
    let back: GrafiteRange = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
    assert_finds(&back, &keys);
    let mut corrupt = as_bytes.clone();
    corrupt[30] ^= 1;
    assert!(serde_json::from_str::<GrafiteRange>(&serde_json::to_string(&corrupt).unwrap()).is_err());
}
