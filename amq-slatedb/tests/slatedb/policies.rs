//! The policies as SlateDB drives them, without a database: build a table's
//! filter from its entries, encode, decode, ask; against a model of the
//! keys, for every target kind and bound, with damaged bytes, and the one
//! key hash per `get`.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use amq::plan::Priority;
use amq::range::RangeSizing;
use amq::{DelimitedPrefix, FilterKind, FilterSizing};
use amq_slatedb::{
    Extractor, FilterChoice, POINT_POLICY_NAME, PointFilterPolicy, PrefixFilterPolicy, RangeFilterPolicy,
};
use proptest::prelude::*;
use slatedb::bytes::Bytes;
use slatedb::{Filter, FilterPolicy, FilterQuery, FilterTarget, PrefixTarget, RowEntry, ValueDeletable};

fn entry(key: &[u8], value: ValueDeletable) -> RowEntry {
    RowEntry {
        key: Bytes::copy_from_slice(key),
        value,
        seq: 1,
        create_ts: None,
        expire_ts: None,
    }
}

/// The built filter and the one decoded from its bytes, and the bytes.
fn build(policy: &dyn FilterPolicy, keys: &[Vec<u8>]) -> (Arc<dyn Filter>, Arc<dyn Filter>, Vec<u8>) {
    let mut b = policy.builder();
    for (i, k) in keys.iter().enumerate() {
        // Values, tombstones and merge operands alike, and repeated
        // versions of a key.
        let value = match i % 3 {
            0 => ValueDeletable::Value(Bytes::from_static(b"v")),
            1 => ValueDeletable::Tombstone,
            _ => ValueDeletable::Merge(Bytes::from_static(b"+")),
        };
        b.add_entry(&entry(k, value.clone()));
        if i % 5 == 0 {
            b.add_entry(&entry(k, value));
        }
    }
    let built = b.build();
    let mut bytes = Vec::new();
    built.encode(&mut bytes);
    let decoded = policy.decode(&bytes);
    (built, decoded, bytes)
}

fn point(key: &[u8]) -> FilterQuery {
    FilterQuery::point(Bytes::copy_from_slice(key))
}

fn prefix(p: &[u8]) -> FilterQuery {
    FilterQuery::prefix(Bytes::copy_from_slice(p))
}

fn range(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> FilterQuery {
    let own = |b: Bound<&[u8]>| match b {
        Bound::Included(k) => Bound::Included(Bytes::copy_from_slice(k)),
        Bound::Excluded(k) => Bound::Excluded(Bytes::copy_from_slice(k)),
        Bound::Unbounded => Bound::Unbounded,
    };
    FilterQuery::range(own(lo), own(hi))
}

fn sorted(mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.sort();
    keys
}

/// Every kind a point policy takes builds, round-trips and finds every
/// key (tombstones and merge operands included); built and decoded filters
/// answer the same; prefix and range targets answer "may contain".
#[test]
fn point_filters_of_every_kind_find_every_key() {
    let keys = sorted(
        (0..3_000u32)
            .map(|i| format!("key{:07}", i * 3).into_bytes())
            .collect(),
    );
    let kinds = [
        FilterKind::StandardBloom,
        FilterKind::BlockedBloom,
        FilterKind::SplitBlockBloom,
        FilterKind::CountingBloom,
        FilterKind::CuckooFilter,
        FilterKind::QuotientFilter,
        FilterKind::ExpandingQuotientFilter,
        FilterKind::Xor8,
        FilterKind::Xor16,
        FilterKind::BinaryFuse8,
        FilterKind::BinaryFuse16,
        FilterKind::BinaryFuse32,
        FilterKind::PackedBinaryFuse,
        FilterKind::Ribbon,
    ];
    for kind in kinds {
        let policy = PointFilterPolicy::new(kind, FilterSizing::Fpr(0.01)).unwrap();
        assert_eq!(policy.name(), POINT_POLICY_NAME);
        assert!(!policy.supports_prefix_queries() && !policy.supports_range_queries());
        let (built, decoded, bytes) = build(&policy, &keys);
        for k in &keys {
            assert!(
                built.might_match(&point(k)) && decoded.might_match(&point(k)),
                "{kind:?}"
            );
        }
        let absent: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("key{:07}x", i).into_bytes())
            .collect();
        let fp = absent.iter().filter(|k| decoded.might_match(&point(k))).count();
        assert!(fp < 20_000 / 10, "{kind:?}: {fp} false positives");
        for k in &absent {
            assert_eq!(
                built.might_match(&point(k)),
                decoded.might_match(&point(k)),
                "{kind:?}"
            );
        }
        assert!(
            decoded.might_match(&prefix(b"nothing"))
                && decoded.might_match(&range(Bound::Unbounded, Bound::Unbounded))
        );
        let clamped = decoded.clamp_allocated_size();
        assert!(keys.iter().all(|k| clamped.might_match(&point(k))));
        let estimate = policy.estimate_size(keys.len());
        assert!(
            estimate >= bytes.len() * 8 / 10 && estimate <= bytes.len() * 3 + 1024,
            "{kind:?}: estimate {estimate} for {}",
            bytes.len()
        );
        let s = policy.stats();
        assert_eq!(
            (s.filters_built, s.filters_decoded, s.undecodable_filters),
            (1, 1, 0),
            "{kind:?}"
        );
    }
    // Kinds that are not point filters of key hashes are refused.
    assert!(PointFilterPolicy::new(FilterKind::GrafiteRange, FilterSizing::Fpr(0.01)).is_err());
    assert!(PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(1.5)).is_err());
}

/// The planner's choice per table: Ribbon for space at tables of many keys,
/// a Bloom filter for speed; each the size it predicts.
#[test]
fn planned_policies_pick_per_table() {
    let keys = sorted((0..20_000u32).map(|i| format!("k{i:08}").into_bytes()).collect());
    let space = PointFilterPolicy::planned(0.01, Priority::Space).unwrap();
    let (_, decoded, bytes) = build(&space, &keys);
    assert!(keys.iter().all(|k| decoded.might_match(&point(k))));
    let per_key = bytes.len() as f64 * 8.0 / keys.len() as f64;
    assert!(per_key < 7.5, "Ribbon-sized: {per_key} bits/key");
    let speed = PointFilterPolicy::with_choice(FilterChoice::planned(0.01, Priority::Speed).unwrap());
    let (_, decoded, bytes) = build(&speed, &keys);
    assert!(keys.iter().all(|k| decoded.might_match(&point(k))));
    assert!(bytes.len() as f64 * 8.0 / keys.len() as f64 > 9.0);
}

/// Bytes that are not a filter (every truncation, flipped bytes, an empty
/// block, another policy's filter) answer "may contain" to everything and
/// are counted; none panics.
#[test]
fn damaged_bytes_decode_to_may_contain() {
    let keys = sorted((0..500u32).map(|i| format!("key{i:05}").into_bytes()).collect());
    let point_policy = PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01)).unwrap();
    let prefix_policy = PrefixFilterPolicy::new(
        DelimitedPrefix::new(b'y'),
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
    )
    .unwrap();
    let range_policy = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0)).unwrap();
    let policies: [&dyn FilterPolicy; 3] = [&point_policy, &prefix_policy, &range_policy];
    for policy in policies {
        let (_, _, bytes) = build(policy, &keys);
        let mut damaged: Vec<Vec<u8>> = (0..bytes.len()).step_by(7).map(|n| bytes[..n].to_vec()).collect();
        for i in (0..bytes.len()).step_by(11) {
            let mut b = bytes.clone();
            b[i] ^= 0x41;
            damaged.push(b);
        }
        damaged.push(Vec::new());
        damaged.push(b"not a filter at all".to_vec());
        let absent = [
            point(b"absent"),
            prefix(b"zz"),
            range(Bound::Included(b"zz"), Bound::Excluded(b"zzz")),
        ];
        let mut refused = 0;
        for d in &damaged {
            let f = policy.decode(d);
            let all_maybe = absent.iter().all(|q| f.might_match(q));
            let faithful = keys.iter().all(|k| f.might_match(&point(k)));
            // Either refused (everything "may contain") or checksummed
            // bytes that still describe the same filter.
            assert!(faithful, "a damaged filter lost a key");
            refused += usize::from(all_maybe);
        }
        assert!(refused >= damaged.len() - 1, "{}", policy.name());
        assert!(
            match policy.name() {
                n if n == POINT_POLICY_NAME => point_policy.stats().undecodable_filters,
                n if n.starts_with("amq.prefix") => prefix_policy.stats().undecodable_filters,
                _ => range_policy.stats().undecodable_filters,
            } >= damaged.len() as u64 - 1
        );
    }
    // A range filter's bytes under the point policy, and the reverse.
    let (_, _, range_bytes) = build(&range_policy, &keys);
    assert!(point_policy.decode(&range_bytes).might_match(&point(b"absent")));
    let (_, _, point_bytes) = build(&point_policy, &keys);
    assert!(range_policy.decode(&point_bytes).might_match(&point(b"absent")));
}

/// A `get` asks every table's filter with one key hash: the memo hashes
/// the key once, however many filters (of one or several policies) ask.
#[test]
fn one_key_hash_per_get_across_tables() {
    let policy = PointFilterPolicy::new(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01)).unwrap();
    let filters: Vec<Arc<dyn Filter>> = (0..64u32)
        .map(|t| {
            let keys: Vec<Vec<u8>> = (0..200u32)
                .map(|i| format!("k{:06}", i * 64 + t).into_bytes())
                .collect();
            build(&policy, &keys).1
        })
        .collect();
    let before = policy.stats().key_hashes;
    for g in 0..100u32 {
        let key = format!("k{:06}", g * 7);
        let hits = filters
            .iter()
            .filter(|f| f.might_match(&point(key.as_bytes())))
            .count();
        assert!(hits >= 1);
    }
    assert_eq!(policy.stats().key_hashes - before, 100, "one hash per get");
}

/// Prefix filters: a prefix the extractor serves (complete, or extending a
/// complete one) is answered, an incomplete one is "may contain"; scans
/// inside one prefix ask about it; point reads find every key with whole
/// keys or with prefixes only; SlateDB's own extractors work too.
#[test]
fn prefix_filters_answer_prefixes_ranges_and_points() {
    let keys = sorted(
        (0..50u32)
            .flat_map(|t| (0..20u32).map(move |r| format!("t{t:03}:{:04}", r * 5).into_bytes()))
            .collect(),
    );
    let kinds = [(FilterKind::BlockedBloom, true), (FilterKind::Ribbon, false)];
    for (kind, whole) in kinds {
        let mut policy =
            PrefixFilterPolicy::new(DelimitedPrefix::new(b':'), kind, FilterSizing::Fpr(0.01)).unwrap();
        if !whole {
            policy = policy.without_whole_keys();
        }
        assert!(policy.name().ends_with(if whole { "wh=1" } else { "wh=0" }));
        let (_, f, _) = build(&policy, &keys);
        for t in 0..50u32 {
            let p = format!("t{t:03}:");
            assert!(f.might_match(&prefix(p.as_bytes())));
            assert!(
                f.might_match(&prefix(format!("{p}00").as_bytes())),
                "an extension of a held prefix"
            );
            assert!(f.might_match(&range(
                Bound::Included(format!("{p}0001").as_bytes()),
                Bound::Excluded(format!("{p}0002").as_bytes())
            )));
        }
        for k in &keys {
            assert!(f.might_match(&point(k)));
        }
        let absent = (50..1_050u32)
            .filter(|t| f.might_match(&prefix(format!("t{t:03}:").as_bytes())))
            .count();
        assert!(
            absent < 50,
            "{kind:?}: {absent} of 1000 absent prefixes let through"
        );
        let ranges = (50..1_050u32)
            .filter(|t| {
                f.might_match(&range(
                    Bound::Included(format!("t{t:03}:0001").as_bytes()),
                    Bound::Included(format!("t{t:03}:0009").as_bytes()),
                ))
            })
            .count();
        assert!(ranges < 50, "{kind:?}: {ranges}");
        // Not served: an incomplete prefix, a range across prefixes.
        assert!(f.might_match(&prefix(b"t9")));
        assert!(f.might_match(&range(Bound::Included(b"t998:"), Bound::Included(b"t999:"))));
        assert!(f.might_match(&range(Bound::Unbounded, Bound::Included(b"t998:"))));
    }
    // SlateDB's extractor: its prefix_len serves what it serves.
    struct FirstFour;
    impl slatedb::PrefixExtractor for FirstFour {
        fn name(&self) -> &str {
            "first4"
        }
        fn prefix_len(&self, target: &PrefixTarget) -> Option<usize> {
            let b = match target {
                PrefixTarget::Point(b) | PrefixTarget::Prefix(b) => b,
            };
            (b.len() >= 4).then_some(4)
        }
    }
    let policy = PrefixFilterPolicy::new(
        Extractor::slatedb(Arc::new(FirstFour)),
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
    )
    .unwrap();
    assert!(policy.name().contains("slatedb:first4") && !policy.supports_range_queries());
    let (_, f, _) = build(&policy, &keys);
    assert!(f.might_match(&prefix(b"t001")) && f.might_match(&prefix(b"t001:00")));
    assert!(
        f.might_match(&prefix(b"t0")),
        "shorter than the extractor's: may contain"
    );
    let absent = (500..1_500u32)
        .filter(|t| f.might_match(&prefix(format!("u{t:03}").as_bytes())))
        .count();
    assert!(absent < 50, "{absent}");
    // Names tell extractors apart.
    let a = PrefixFilterPolicy::new(
        DelimitedPrefix::new(b':'),
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
    )
    .unwrap();
    let b = PrefixFilterPolicy::new(
        DelimitedPrefix::new(b'/'),
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
    )
    .unwrap();
    assert_ne!(a.name(), b.name());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5d8), ..ProptestConfig::default() })]

    /// Range filters against a `BTreeSet`: a point, prefix or range target
    /// whose range holds a key answers "may contain", for keys and bounds
    /// of a small alphabet and mixed lengths and every bound kind, built
    /// and decoded alike.
    #[test]
    fn range_filters_never_miss_a_key(
        keys in proptest::collection::btree_set(proptest::collection::vec(prop::sample::select(vec![b'a', b'b', b':', 0xff]), 1..7), 1..80),
        queries in proptest::collection::vec((proptest::collection::vec(prop::sample::select(vec![b'a', b'b', b':', 0xff]), 0..7), proptest::collection::vec(prop::sample::select(vec![b'a', b'b', b':', 0xff]), 0..7), 0u8..3, 0u8..3), 1..40),
    ) {
        let policy = RangeFilterPolicy::new(RangeSizing::BitsPerKey(10.0)).unwrap();
        let set: BTreeSet<Vec<u8>> = keys;
        let list: Vec<Vec<u8>> = set.iter().cloned().collect();
        let (built, decoded, _) = build(&policy, &list);
        let b = |kind: u8, k: &[u8]| -> Bound<Vec<u8>> {
            match kind { 0 => Bound::Included(k.to_vec()), 1 => Bound::Excluded(k.to_vec()), _ => Bound::Unbounded }
        };
        for (a, z, ka, kz) in &queries {
            let (lo, hi) = (b(*ka, a), b(*kz, z));
            let valid = match (&lo, &hi) {
                (Bound::Included(x), Bound::Included(y)) => x <= y,
                (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => x < y,
                _ => true,
            };
            if valid && set.range((lo.clone(), hi.clone())).next().is_some() {
                let q = range(lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice));
                prop_assert!(built.might_match(&q) && decoded.might_match(&q), "false negative {lo:?}..{hi:?}");
            }
            if set.iter().any(|k| k.starts_with(a)) {
                prop_assert!(decoded.might_match(&prefix(a)));
            }
            if set.contains(a) {
                prop_assert!(decoded.might_match(&point(a)));
            }
        }
        let q = FilterQuery { target: FilterTarget::Range { lower: Bound::Unbounded, upper: Bound::Unbounded }, context: None };
        prop_assert!(decoded.might_match(&q));
    }
}

/// Range filters rule out empty ranges between neighbouring composite keys
/// and decimal timestamps, and ranges past the table's keys.
#[test]
fn range_filters_rule_out_empty_ranges() {
    let policy = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0)).unwrap();
    let composite = sorted(
        (0..100u32)
            .flat_map(|t| (0..50u32).map(move |r| format!("t{t:04}:{:08}", r * 10).into_bytes()))
            .collect(),
    );
    let (_, f, _) = build(&policy, &composite);
    let passed = (0..100u32)
        .flat_map(|t| (0..49u32).map(move |r| (t, r)))
        .filter(|&(t, r)| {
            let lo = format!("t{t:04}:{:08}", r * 10 + 1);
            let hi = format!("t{t:04}:{:08}", r * 10 + 9);
            f.might_match(&range(
                Bound::Included(lo.as_bytes()),
                Bound::Included(hi.as_bytes()),
            ))
        })
        .count();
    assert!(passed < 4_900 / 20, "{passed} of 4900 empty ranges let through");
    assert!(!f.might_match(&prefix(b"t9999:")) || !f.might_match(&prefix(b"u")));
    let decimal = sorted(
        (0..5_000u64)
            .map(|i| format!("ev:{:020}", 1_700_000_000_000_000_000u64 + i * 1_000).into_bytes())
            .collect(),
    );
    let (_, f, _) = build(&policy, &decimal);
    let passed = (0..4_999u64)
        .filter(|i| {
            let t = 1_700_000_000_000_000_000u64 + i * 1_000;
            f.might_match(&range(
                Bound::Excluded(format!("ev:{t:020}").as_bytes()),
                Bound::Excluded(format!("ev:{:020}", t + 1_000).as_bytes()),
            ))
        })
        .count();
    assert!(passed < 5_000 / 20, "{passed} of 5000 empty windows let through");
}

/// Empty ranges, each its inclusive low and exclusive high bound.
type Windows = Vec<(Vec<u8>, Vec<u8>)>;

/// `events/` + a UUIDv7-like id: 48-bit milliseconds (bursts of keys in
/// one millisecond, quiet gaps of 3–60 ms between them), then `tail` (at
/// most 10) random bytes. The windows: one per gap, `[t + 1 ms, next − 1
/// ms)`, empty.
fn uuid7_table(rng: &mut u64, start_ms: u64, bursts: usize, tail: usize) -> (Vec<Vec<u8>>, Windows) {
    let mut next = move || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    };
    let key = |ms: u64, t: u64, t2: u64| {
        let mut k = b"events/".to_vec();
        k.extend_from_slice(&ms.to_be_bytes()[2..]);
        k.extend_from_slice(&[t.to_be_bytes(), t2.to_be_bytes()].concat()[..tail]);
        k
    };
    let (mut keys, mut windows, mut ms) = (Vec::new(), Vec::new(), start_ms);
    for _ in 0..bursts {
        for _ in 0..8 {
            keys.push(key(ms, next(), next()));
        }
        let gap = 3 + next() % 58;
        windows.push((
            key(ms + 1, 0, 0)[..13].to_vec(),
            key(ms + gap - 1, 0, 0)[..13].to_vec(),
        ));
        ms += gap;
    }
    (sorted(keys), windows)
}

/// The promise of `fit_scans`: a policy whose filters were asked about
/// time windows builds its next tables fitted to them, so windows that no
/// full-resolution map can rule out are ruled out, without a false
/// negative; `fit_scans(0)` keeps the full resolution. With 3 random bytes
/// after the time the keys' differences fit a key map, whose full
/// resolution cannot rule a window out; with 10 they do not, and the
/// tables' infix filters rule the windows out from the first table on,
/// fitted or not.
#[test]
fn range_filters_fit_new_tables_to_the_ranges_asked() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let asked = |f: &Arc<dyn Filter>, windows: &[(Vec<u8>, Vec<u8>)]| {
        windows
            .iter()
            .filter(|(lo, hi)| f.might_match(&range(Bound::Included(lo), Bound::Excluded(hi))))
            .count()
    };
    for (fit, tail) in [(true, 3), (false, 3), (true, 10), (false, 10)] {
        let policy = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0)).unwrap();
        let policy = if fit { policy } else { policy.fit_scans(0) };
        let (keys, windows) = uuid7_table(&mut rng, 1_700_000_000_000, 1_000, tail);
        let (_, first, _) = build(&policy, &keys);
        // Before any range was asked, a millisecond spans 2^24 codes of a
        // full-resolution map; an infix filter's cells follow the keys.
        let passed = asked(&first, &windows);
        match tail {
            3 => assert!(
                passed > 990,
                "only {passed} of 1000 windows let through at full resolution"
            ),
            _ => assert!(
                passed < 50,
                "{passed} of 1000 windows let through by an infix filter"
            ),
        }
        // A later table in the same time span, asked the same windows.
        let (keys2, windows2) = uuid7_table(&mut rng, 1_700_000_100_000, 1_000, tail);
        asked(&first, &windows2);
        let (built, decoded, _) = build(&policy, &keys2);
        let passed = asked(&decoded, &windows2);
        if fit || tail == 10 {
            assert!(
                passed < 50,
                "{passed} of 1000 empty windows let through after fitting"
            );
        } else {
            assert!(
                passed > 990,
                "only {passed} of 1000 windows let through without a sample"
            );
        }
        for k in &keys2 {
            // The key itself, and its millisecond up to the key.
            let at = range(Bound::Included(&k[..]), Bound::Included(&k[..]));
            let upto = range(Bound::Included(&k[..13]), Bound::Included(&k[..]));
            assert!(built.might_match(&at) && decoded.might_match(&at) && decoded.might_match(&upto));
            assert!(decoded.might_match(&point(k)));
        }
    }
}
