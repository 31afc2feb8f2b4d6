//! `InfixRange`, a range filter over byte keys of any length, held to what
//! its docs promise: no false negative for any bounds against a
//! `BTreeSet` (keys of a small alphabet and mixed lengths, keys that are
//! prefixes of others, long keys that differ only past 64 bytes); the
//! memory a sizing asks; the false-positive rate it states, for ranges
//! inside the gaps of long, variable-length and skewed keys; bytes that
//! round-trip, and every damaged byte refused.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;

use amq::hash::remix;
use amq::range::{InfixRange, KeyRangeFilter, RangeSizing};
use proptest::prelude::*;

fn bound(kind: u8, key: &[u8]) -> Bound<&[u8]> {
    match kind % 3 {
        0 => Bound::Included(key),
        1 => Bound::Excluded(key),
        _ => Bound::Unbounded,
    }
}

/// Whether `BTreeSet::range` takes the bounds (it panics on others).
fn ordered(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    match (lo, hi) {
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            x < y || (x == y && matches!((lo, hi), (Bound::Included(_), Bound::Included(_))))
        }
        _ => true,
    }
}

/// Every range of `queries` that holds a key of `keys` answers `true`, and
/// every key is found.
fn assert_no_false_negative(f: &InfixRange, keys: &[Vec<u8>], queries: &[(Vec<u8>, Vec<u8>, u8, u8)]) {
    let set: BTreeSet<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    for (a, b, ka, kb) in queries {
        let (lo, hi) = (bound(*ka, a), bound(*kb, b));
        if ordered(lo, hi) && set.range::<[u8], _>((lo, hi)).next().is_some() {
            assert!(f.may_contain_range(lo, hi), "false negative {lo:?}..{hi:?}");
        }
    }
    for k in keys {
        assert!(f.may_contain(k), "key {k:?}");
    }
}

fn small_key(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop::sample::select(vec![0u8, 1, b'a', b'b', 0xfe, 0xff]),
        0..max_len,
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x1f1c),
        ..ProptestConfig::default()
    })]

    /// Keys and bounds of a small alphabet, mixed lengths (prefixes of one
    /// another, trailing zero bytes), every bound kind, every sizing from
    /// coarse to fine.
    #[test]
    fn no_false_negative_for_any_bounds(
        keys in proptest::collection::vec(small_key(8), 0..700),
        queries in proptest::collection::vec((small_key(9), small_key(9), any::<u8>(), any::<u8>()), 1..80),
        fpr in 0.0005f64..0.7,
    ) {
        let f = InfixRange::build(&keys, RangeSizing::Fpr { fpr, max_range_len: 1 }).unwrap();
        // Bounds beside the keys too: each key, and it a byte longer.
        let mut queries = queries;
        for (i, k) in keys.iter().enumerate().take(40) {
            queries.push((k.clone(), [&k[..], &[0]].concat(), i as u8, (i / 3) as u8));
        }
        assert_no_false_negative(&f, &keys, &queries);
        prop_assert_eq!(InfixRange::from_bytes(&f.to_bytes()).unwrap(), f);
    }

    /// Long keys: a shared head of 70 bytes, then a few hundred prefixes of
    /// 30 random bytes, then a tail that tells keys apart only past 100
    /// bytes.
    #[test]
    fn no_false_negative_for_long_keys(
        seed in any::<u64>(),
        n in 1usize..3_000,
        queries in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u8>(), any::<u8>(), 0usize..140, 0usize..140), 1..200),
        bits in 14.0f64..30.0,
    ) {
        let key = |i: u64| {
            let mut k = vec![b'h'; 70];
            k.extend((0..30).map(|j| remix(i % 300, seed ^ j) as u8));
            k.extend((0..(i % 40)).map(|j| remix(i, j) as u8 & 3));
            k
        };
        let keys: Vec<Vec<u8>> = (0..n as u64).map(key).collect();
        let Ok(f) = InfixRange::build(&keys, RangeSizing::BitsPerKey(bits)) else {
            // Too few keys to pay for the shared head and the alphabets.
            prop_assert!(n < 1_000, "{n} keys at {bits}");
            return Ok(());
        };
        prop_assert!(f.bits_per_key() <= bits);
        let queries: Vec<_> = queries
            .iter()
            .map(|&(a, b, ka, kb, la, lb)| {
                let (x, y) = (key(a % n as u64), key(b % n as u64));
                (x[..la.min(x.len())].to_vec(), y[..lb.min(y.len())].to_vec(), ka, kb)
            })
            .collect();
        assert_no_false_negative(&f, &keys, &queries);
    }
}

/// `BitsPerKey` sizings hold everything (heads, alphabets, code) within
/// the bits asked, and the code uses most of them.
#[test]
fn sizes_stay_within_the_bits_asked() {
    for n in [1_000u64, 20_000, 200_000] {
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|i| format!("{:04}/{:x}@mail.example", i % 50, remix(i, 9)).into_bytes())
            .collect();
        for bits in [8.0, 12.0, 16.0, 24.0] {
            let f = match InfixRange::build(&keys, RangeSizing::BitsPerKey(bits)) {
                Ok(f) => f,
                Err(_) => {
                    assert!(n == 1_000 && bits <= 12.0, "{n} keys at {bits}");
                    continue;
                }
            };
            let b = f.bits_per_key();
            assert!(b <= bits && b > bits - 1.0, "{n} keys at {bits}: {b}");
            assert_eq!(f.size_in_bytes(), f.to_bytes().len());
        }
    }
}

/// A sorted key set, and empty ranges inside its gaps drawn as Diva's
/// benchmark draws them: for two neighbouring keys, each bound is their
/// shared prefix, a byte between theirs where they part, then 8 random
/// bytes; kept if it holds neither key.
fn gap_ranges(sorted: &[Vec<u8>], count: usize, seed: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..count as u64)
        .filter_map(|q| {
            let i = (remix(q, seed) % (sorted.len() as u64 - 1)) as usize;
            let (a, b) = (&sorted[i], &sorted[i + 1]);
            let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            let (from, to) = (u64::from(a.get(p).copied().unwrap_or(0)), u64::from(b[p]));
            let draw = |s: u64| {
                let mut k = a[..p].to_vec();
                k.push((from + remix(q, s) % (to - from + 1)) as u8);
                k.extend((0..8).map(|j| remix(q, s + 1 + j) as u8));
                k
            };
            let (lo, hi) = (draw(seed * 100), draw(seed * 100 + 50));
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            (lo > *a && hi < *b).then_some((lo, hi))
        })
        .collect()
}

/// The share of `ranges` an infix filter of `keys` at `bits` lets through.
fn passed_share(keys: &[Vec<u8>], ranges: &[(Vec<u8>, Vec<u8>)], bits: f64) -> f64 {
    let f = InfixRange::build(keys, RangeSizing::BitsPerKey(bits)).unwrap();
    let passed = ranges
        .iter()
        .filter(|(a, b)| f.may_contain_range(Bound::Included(a), Bound::Included(b)))
        .count();
    passed as f64 / ranges.len() as f64
}

/// Ranges inside the gaps of long keys (differences past 80 bytes, behind
/// a shared head of 70 and a hundred account ids), variable-length keys
/// (e-mail addresses under tenants) and skewed keys (a bell-shaped 8-byte
/// number): each passes at most twice as often as the same ranges over
/// uniform random 16-byte keys of the same count, at the same memory
/// (fixed seeds, 20,000 ranges each): a key's length and shape cost little.
#[test]
fn long_and_variable_length_keys_pass_as_few_ranges_as_uniform_ones() {
    let n = 50_000u64;
    let uniform: Vec<Vec<u8>> = (0..n)
        .map(|i| [remix(i, 30).to_be_bytes(), remix(i, 31).to_be_bytes()].concat())
        .collect();
    let long: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut k = b"tenants/eu-west/accounts/".to_vec();
            k.extend_from_slice(&[b'/'; 45]);
            k.extend_from_slice(&remix(i % 97, 1).to_be_bytes());
            k.extend_from_slice(&remix(i, 2).to_be_bytes());
            k
        })
        .collect();
    let emails: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let len = 2 + remix(i, 3) % 20;
            let name: String = (0..len)
                .map(|c| (b'a' + (remix(i, 4 + c) % 26) as u8) as char)
                .collect();
            format!(
                "{:04}/{name}@{}",
                remix(i, 5) % 50,
                ["x.io", "mail.example.org"][i as usize % 2]
            )
            .into_bytes()
        })
        .collect();
    let skewed: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            // Sum of four uniforms: a bell around the middle.
            let x = (0..4)
                .map(|j| remix(i, 10 + j) >> 2)
                .fold(0u64, u64::wrapping_add);
            [&b"k"[..], &x.to_be_bytes()].concat()
        })
        .collect();
    let ranges_of = |keys: &[Vec<u8>]| {
        let mut sorted = keys.to_vec();
        sorted.sort();
        sorted.dedup();
        let r = gap_ranges(&sorted, 20_000, 7);
        assert!(r.len() > 10_000, "{}", r.len());
        r
    };
    let base = ranges_of(&uniform);
    for bits in [12.0, 16.0, 20.0] {
        let baseline = passed_share(&uniform, &base, bits);
        for (name, keys) in [("long", &long), ("emails", &emails), ("skewed", &skewed)] {
            let rate = passed_share(keys, &ranges_of(keys), bits);
            eprintln!("{name} at {bits}: {rate:.2e}, uniform {baseline:.2e}");
            assert!(
                rate <= 2.0 * baseline + 1e-3,
                "{name} at {bits}: {rate:.2e} against {baseline:.2e}"
            );
        }
    }
}

/// Ranges inside the gaps, however wide: a time window over keys of a
/// millisecond time and random bits is one successor query, ruled out
/// whatever its length.
#[test]
fn wide_ranges_inside_gaps_are_ruled_out() {
    let key = |ms: u64, r: u64| {
        [
            &b"events/"[..],
            &ms.to_be_bytes()[2..],
            &remix(r, 1).to_be_bytes(),
        ]
        .concat()
    };
    // A burst of 20 events every 50 ms.
    let keys: Vec<Vec<u8>> = (0..40_000u64)
        .map(|i| key(1_700_000_000_000 + i / 20 * 50, i))
        .collect();
    let f = InfixRange::build(&keys, RangeSizing::BitsPerKey(16.0)).unwrap();
    for window in [1u64, 10, 40] {
        let passed = (0..1_999u64)
            .filter(|b| {
                let from = 1_700_000_000_000 + b * 50 + 5;
                let (lo, hi) = (key(from, 0)[..13].to_vec(), key(from + window, 0)[..13].to_vec());
                f.may_contain_range(Bound::Included(&lo[..]), Bound::Excluded(&hi[..]))
            })
            .count();
        assert!(passed < 20, "{window} ms: {passed}");
    }
}

#[test]
fn empty_and_single_key_filters() {
    let none: [&[u8]; 0] = [];
    let f = InfixRange::build(&none, RangeSizing::BitsPerKey(16.0)).unwrap();
    assert!(!f.may_contain_range(Bound::Unbounded, Bound::Unbounded));
    assert_eq!(f.num_keys(), 0);
    assert_eq!(InfixRange::from_bytes(&f.to_bytes()).unwrap(), f);
    let one = InfixRange::build(
        &[b"only"],
        RangeSizing::Fpr {
            fpr: 0.01,
            max_range_len: 1,
        },
    )
    .unwrap();
    assert!(one.may_contain(b"only"));
    for other in [&b""[..], b"onl", b"only\0", b"onlz", b"p"] {
        assert!(!one.may_contain(other), "{other:?}");
    }
    assert!(one.may_contain_range(Bound::Included(&b"o"[..]), Bound::Included(&b"p"[..])));
    assert!(!one.may_contain_range(Bound::Excluded(&b"only"[..]), Bound::Unbounded));
    assert_eq!(InfixRange::from_bytes(&one.to_bytes()).unwrap(), one);
}

/// Every truncation and every single-byte change is refused: the checksum
/// covers the whole, and what passes it is checked.
#[test]
fn damaged_bytes_are_refused() {
    let keys: Vec<String> = (0..3_000u32)
        .map(|i| format!("k/{:x}/{}", remix(u64::from(i), 1), i % 7))
        .collect();
    let bytes = InfixRange::build(&keys, RangeSizing::BitsPerKey(14.0))
        .unwrap()
        .to_bytes();
    for n in 0..bytes.len() {
        assert!(InfixRange::from_bytes(&bytes[..n]).is_err(), "{n}");
    }
    let mut b = bytes.clone();
    for i in 0..bytes.len() {
        b[i] ^= 0x10;
        assert!(InfixRange::from_bytes(&b).is_err(), "byte {i}");
        b[i] = bytes[i];
    }
}

/// The bytes this build writes for a fixed key set, kept as a file: they
/// must decode and find every key, and the build must still write them
/// (an encoder change is a format change, and needs a new version).
#[test]
fn bytes_written_before_still_decode() {
    let keys: Vec<Vec<u8>> = (0..2_000u64)
        .map(|i| {
            format!(
                "{:03}/{:x}@{}",
                i % 11,
                remix(i, 21) >> (i % 40),
                ["a.io", "bb.example"][i as usize % 2]
            )
            .into_bytes()
        })
        .collect();
    let built = KeyRangeFilter::build(&keys, RangeSizing::BitsPerKey(16.0), 3).unwrap();
    assert!(built.infix().is_some());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/key-range-infix-v2.bin");
    if std::env::var_os("AMQ_WRITE_GOLDEN").is_some() {
        std::fs::write(&path, built.to_bytes()).unwrap();
    }
    let golden = std::fs::read(&path).unwrap();
    let back = KeyRangeFilter::from_bytes(&golden).unwrap();
    assert!(keys.iter().all(|k| back.may_contain(k)));
    assert_eq!(back, built);
    assert_eq!(built.to_bytes(), golden);
}
