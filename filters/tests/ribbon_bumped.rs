//! Bumped Ribbon filters (both layouts): no false negatives, the FPR and
//! space they promise, their bytes round-tripping and pinned, damaged
//! frames refused, their views and streamed builds agreeing with the owned
//! filter.

use amq::ribbon::RibbonView;
use amq::streamed::StreamedBuild;
use amq::{hash_u64, Filter, FromBytes, KeyHash, Ribbon, RibbonParams};
use proptest::prelude::*;

fn keys(n: u64, salt: u64) -> Vec<KeyHash> {
    (0..n).map(|i| hash_u64(i ^ (salt << 40))).collect()
}

fn absent_fpr(f: &impl Filter, n: u64) -> f64 {
    let hits = (0..n)
        .filter(|&i| f.contains_hash(hash_u64(i | (1 << 62))))
        .count();
    hits as f64 / n as f64
}

#[test]
fn bumped_filters_find_every_key_at_their_fpr_and_size() {
    for (n, params) in [
        (1_000_000u64, RibbonParams::with_result_bits(7).unwrap()),
        (
            1_000_000u64,
            RibbonParams::with_result_bits(7).unwrap().with_blocked_layout(),
        ),
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
        assert!(
            (fpr / expected - 1.0).abs() < 0.1,
            "{n} {params:?}: {fpr} vs {expected}"
        );
        let ideal = -expected.log2();
        let over = f.bits_per_key() / ideal;
        println!(
            "{n} {params:?}: {:.4} bits/key, {over:.4} of log2(1/FPR), fpr {fpr:.5} / {expected:.5}",
            f.bits_per_key()
        );
        let bytes = f.to_bytes();
        let back = Ribbon::from_bytes(&bytes).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.to_bytes(), bytes);
        let view = RibbonView::new(&bytes).unwrap();
        assert_eq!(view.expected_fpr(), f.expected_fpr());
        assert_eq!(view.num_keys(), f.num_keys());
        let probe: Vec<KeyHash> = (0..20_000u64)
            .map(|i| hash_u64(i * 3 + (i & 1) * (1 << 61)))
            .chain(ks[..5000].iter().copied())
            .collect();
        let mut a = vec![false; probe.len()];
        let mut b = vec![false; probe.len()];
        f.contains_hashes(&probe, &mut a);
        view.contains_hashes(&probe, &mut b);
        assert_eq!(a, b);
        assert!(probe
            .iter()
            .zip(&a)
            .all(|(&h, &o)| f.contains_hash(h) == o && view.contains_hash(h) == o));
    }
}

/// The planner's prediction of a bumped filter's size and FPR is within
/// 1% of the built filter's, from the smallest bumped size up.
#[test]
fn predictions_hold_for_bumped_filters() {
    use amq::plan::predict;
    use amq::{FilterKind, FilterSizing};
    for n in [
        amq::ribbon::BUMPED_MIN_KEYS,
        10_001,
        20_000,
        50_000,
        123_457,
        400_000,
    ] {
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
            println!(
                "{n} {sizing:?}: bits {bits:.4} fpr {fpr:.4} ({:.3} bits/key)",
                f.bits_per_key()
            );
            assert!(
                (bits - 1.0).abs() < 0.01,
                "{n} {sizing:?}: bits/key {bits} of predicted"
            );
            assert!((fpr - 1.0).abs() < 0.01, "{n} {sizing:?}: FPR {fpr} of predicted");
        }
    }
}

/// A filter's own bytes decode at every FPR, the coarsest included: at one
/// result bit half of the rows the stored ones imply are consistent, so an
/// overloaded layer could keep more keys than it has slots, which its
/// frame may not claim.
#[test]
fn bumped_filters_at_high_fprs_decode() {
    let mut refused = 0;
    // Of 100 key sets of each size at one result bit, these two were
    // refused when a layer could keep more keys than slots.
    for fpr in [0.9, 0.5, 0.45, 0.3, 0.1] {
        for (n, salt) in [(10_000u64, 1u64), (20_000, 42), (40_000, 80), (70_000, 5)] {
            let ks = keys(n, salt);
            let f = Ribbon::build_with(&ks, &RibbonParams::with_fpr(fpr).unwrap()).unwrap();
            assert!(f.is_bumped_layout());
            assert!(ks.iter().all(|&h| f.contains_hash(h)), "{fpr} {n}");
            let bytes = f.to_bytes();
            match Ribbon::from_bytes(&bytes) {
                Ok(back) => assert_eq!(back, f),
                Err(e) => {
                    println!("{fpr} {n} {salt}: {e}");
                    refused += 1;
                }
            }
        }
    }
    assert_eq!(refused, 0, "filters whose own bytes were refused");
}

fn both_layouts() -> [RibbonParams; 2] {
    let seven = RibbonParams::with_result_bits(7).unwrap();
    [seven, RibbonParams::with_fpr(0.003).unwrap()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Key sets with duplicates, around the smallest bumped size and a few
    /// shards: every key found, batches and the view equal to single
    /// queries, the bytes round-trip.
    #[test]
    fn bumped_filters_hold_every_key(
        n in 10_000usize..140_000,
        dup_every in 2usize..50,
        salt in any::<u64>(),
        two_lines in any::<bool>(),
    ) {
        let params = both_layouts()[two_lines as usize ^ 1];
        let mut ks = keys(n as u64, salt);
        let extra: Vec<KeyHash> = ks.iter().step_by(dup_every).copied().collect();
        ks.extend(extra);
        let f = Ribbon::build_with(&ks, &params).unwrap();
        prop_assert_eq!(f.num_keys(), n);
        prop_assert!(ks.iter().all(|&h| f.contains_hash(h)));
        let probe: Vec<KeyHash> = ks.iter().step_by(7).copied()
            .chain((0..3000u64).map(|i| hash_u64(i ^ salt ^ (1 << 63))))
            .collect();
        let mut out = vec![false; probe.len()];
        f.contains_hashes(&probe, &mut out);
        let bytes = f.to_bytes();
        let view = RibbonView::new(&bytes).unwrap();
        let mut viewed = vec![false; probe.len()];
        view.contains_hashes(&probe, &mut viewed);
        prop_assert_eq!(&out, &viewed);
        for (&h, &o) in probe.iter().zip(&out) {
            prop_assert_eq!(f.contains_hash(h), o);
            prop_assert_eq!(view.contains_hash(h), o);
        }
        prop_assert_eq!(Ribbon::from_bytes(&bytes).unwrap(), f);
    }
}

/// A streamed build returns the filter a build from a slice does, for
/// budgets from one shard to everything and one to three threads.
#[test]
fn streamed_bumped_builds_equal_slice_builds() {
    let ks = keys(300_000, 9);
    for params in both_layouts() {
        let want = Ribbon::build_with(&ks, &params).unwrap();
        assert!(want.is_bumped_layout());
        for memory in [1usize, 200_000, 1 << 30] {
            for threads in 1..=3 {
                let options = StreamedBuild::new().with_memory(memory);
                #[cfg(feature = "std")]
                let options = options.with_threads(threads).unwrap();
                let got = Ribbon::build_streamed(|| ks.iter().copied(), &params, &options).unwrap();
                assert_eq!(got.to_bytes(), want.to_bytes(), "{params:?} {memory} {threads}");
            }
        }
    }
}

/// The bytes of a bumped filter of each layout, pinned (their xxh3): a
/// change to the derivation of starts, thresholds or layout is a format
/// break, and the pinned bytes must keep decoding.
#[test]
fn bumped_golden_bytes() {
    let ks = keys(20_000, 3);
    for (params, len, sum) in [
        (both_layouts()[0], 17817, 0xdc5f_890a_bb15_5a36u64),
        (both_layouts()[1], 21465, 0x08ed_e9fb_05f5_a806),
        // Lines of 6 and 7 columns mixed (FPR 1%).
        (
            RibbonParams::with_fpr(0.01).unwrap(),
            17105,
            0xd50a_fdf2_efa5_07ee,
        ),
    ] {
        let f = Ribbon::build_with(&ks, &params).unwrap();
        let bytes = f.to_bytes();
        let got = (bytes.len(), xxhash_rust::xxh3::xxh3_64(&bytes));
        assert_eq!(
            got,
            (len, sum),
            "{params:?}: serialized bytes changed (format break?)"
        );
    }
}

/// Bumped frames of 10,000 keys as an earlier build wrote them (each
/// layout, and lines of two widths at FPR 1%): they decode, find every key, view and re-encode to themselves,
/// whatever solution today's banding would find for the same keys.
#[test]
fn bumped_frames_written_before_still_decode() {
    let ks = keys(10_000, 3);
    for (name, bytes) in [
        (
            "two-line",
            &include_bytes!("golden/ribbon-bumped-two-line.bin")[..],
        ),
        ("blocked", &include_bytes!("golden/ribbon-bumped-blocked.bin")[..]),
        (
            "two-line, 6 and 7 columns",
            &include_bytes!("golden/ribbon-bumped-two-line-mixed.bin")[..],
        ),
    ] {
        let f = Ribbon::from_bytes(bytes).unwrap();
        assert!(f.is_bumped_layout(), "{name}");
        assert_eq!(f.is_two_line_layout(), name.starts_with("two-line"));
        assert_eq!(f.num_keys(), ks.len());
        assert!(ks.iter().all(|&h| f.contains_hash(h)), "{name}");
        assert_eq!(f.to_bytes(), bytes, "{name}");
        let view = RibbonView::new(bytes).unwrap();
        assert!(ks.iter().all(|&h| view.contains_hash(h)), "{name}");
        let fpr = absent_fpr(&f, 200_000);
        assert!((fpr / f.expected_fpr() - 1.0).abs() < 0.25, "{name}: {fpr}");
    }
}

/// Offsets in a bumped frame: a 20-byte header, then the parameters.
const KEYS: usize = 20;
const SHARDS: usize = 28;
const BLOCKS: usize = 36;
const R: usize = 44;
const LAYOUT: usize = 47;
const SECOND_KEYS: usize = 48;
const SECOND_SHARDS: usize = 56;
const SECOND_R: usize = 72;
/// The parameters end at byte 75; the payload starts at the next multiple
/// of `amq::format::PAYLOAD_ALIGN`.
const PAYLOAD: usize = 75usize.div_ceil(amq::format::PAYLOAD_ALIGN) * amq::format::PAYLOAD_ALIGN;

/// `bytes` with `patch` applied and the checksum made valid again.
fn patched(bytes: &[u8], patch: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = bytes[..bytes.len() - 8].to_vec();
    patch(&mut b);
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

fn add_u64(b: &mut [u8], at: usize, delta: i64) {
    let v = u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    b[at..at + 8].copy_from_slice(&v.wrapping_add(delta as u64).to_le_bytes());
}

/// Every field of a bumped frame out of range is a typed error, from the
/// owned decoder and the view alike, never a panic or a filter that lies.
#[test]
fn damaged_bumped_frames_are_refused() {
    let ks = keys(20_000, 5);
    // Integer result bits, so the layer's word count is `blocks · r`.
    for params in [
        RibbonParams::with_result_bits(7).unwrap(),
        RibbonParams::with_result_bits(8).unwrap(),
        RibbonParams::with_result_bits(9).unwrap(),
        RibbonParams::with_fpr(0.01).unwrap(),
    ] {
        let f = Ribbon::build_with(&ks, &params).unwrap();
        let bytes = f.to_bytes();
        assert_eq!(bytes[LAYOUT], if f.is_two_line_layout() { 3 } else { 2 });
        let mut cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "more shards than units",
                patched(&bytes, |b| {
                    let units = u64::from_le_bytes(b[BLOCKS..BLOCKS + 8].try_into().unwrap());
                    b[SHARDS..SHARDS + 8].copy_from_slice(&(units + 1).to_le_bytes());
                }),
            ),
            ("one block more", patched(&bytes, |b| add_u64(b, BLOCKS, 1))),
            // Found by the fuzzer: a huge block count in one shard once
            // overflowed the shard's slot count before being refused.
            (
                "2^62 blocks in one shard",
                patched(&bytes, |b| {
                    b[SHARDS..SHARDS + 8].copy_from_slice(&1u64.to_le_bytes());
                    b[BLOCKS..BLOCKS + 8].copy_from_slice(&(1u64 << 62).to_le_bytes());
                }),
            ),
            (
                "no shards",
                patched(&bytes, |b| add_u64(b, SHARDS, -(f.num_shards() as i64))),
            ),
            ("unknown layout", patched(&bytes, |b| b[LAYOUT] = 4)),
            (
                "second keys above keys",
                patched(&bytes, |b| add_u64(b, SECOND_KEYS, 1 << 40)),
            ),
            (
                "second shard more",
                patched(&bytes, |b| add_u64(b, SECOND_SHARDS, 1)),
            ),
            ("33 result bits", patched(&bytes, |b| b[SECOND_R] = 33)),
            ("layer result bits", patched(&bytes, |b| b[R] = 0)),
            (
                "more keys than slots",
                patched(&bytes, |b| add_u64(b, KEYS, 1 << 40)),
            ),
            ("truncated", patched(&bytes, |b| b.truncate(b.len() - 8))),
        ];
        if f.is_two_line_layout() {
            // No line holds 5 or 9 columns, nor a mix of 8 and 9.
            cases.push(("two-line layer of 9 bits", patched(&bytes, |b| b[R] = 9)));
            cases.push(("two-line layer of 5 bits", patched(&bytes, |b| b[R] = 5)));
            cases.push((
                "two-line mix of 8 and 9 bits",
                patched(&bytes, |b| {
                    b[R] = 8;
                    b[R + 1..R + 3].copy_from_slice(&0u16.to_le_bytes());
                }),
            ));
        } else {
            assert_eq!(bytes[R], 9);
        }
        for (name, bad) in &cases {
            assert!(Ribbon::from_bytes(bad).is_err(), "{params:?}: {name} decoded");
            assert!(RibbonView::new(bad).is_err(), "{params:?}: {name} viewed");
        }
        // A code set past the last bucket (a bucket is a line, or 128
        // slots): the codes follow the layer's words.
        let units = u64::from_le_bytes(bytes[BLOCKS..BLOCKS + 8].try_into().unwrap()) as usize;
        let (words, buckets) = match f.is_two_line_layout() {
            true => (units * 8, units),
            false => (units * bytes[R] as usize, units / 2),
        };
        assert_ne!(buckets % 32, 0, "the case needs a last code word with room");
        let last = PAYLOAD + 8 * (words + buckets.div_ceil(32)) - 1;
        let bad = patched(&bytes, |b| b[last] |= 0x80);
        assert!(
            Ribbon::from_bytes(&bad).is_err(),
            "{params:?}: stray code decoded"
        );
        assert!(RibbonView::new(&bad).is_err(), "{params:?}: stray code viewed");
        // The same byte with the code bits it holds unchanged decodes.
        assert_eq!(Ribbon::from_bytes(&patched(&bytes, |_| {})).unwrap(), f);
    }
}
