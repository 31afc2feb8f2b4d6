//! The walk's promises, checked on its internals: every bound's place
//! brackets every key on its side, places never decrease as bounds grow,
//! and a key falls on its own value.

use alloc::vec::Vec;
use proptest::prelude::*;

use super::InfixRange;
use crate::range::RangeSizing;

/// Every byte string over `alphabet` up to `len` bytes, in order.
fn all_strings(alphabet: &[u8], len: usize) -> Vec<Vec<u8>> {
    let mut out = alloc::vec![Vec::new()];
    let mut last = alloc::vec![Vec::new()];
    for _ in 0..len {
        let next: Vec<Vec<u8>> = last
            .iter()
            .flat_map(|s: &Vec<u8>| alphabet.iter().map(move |&b| [&s[..], &[b]].concat()))
            .collect();
        out.extend(next.iter().cloned());
        last = next;
    }
    out.sort();
    out
}

/// Checks the walk against every key of `keys` for every bound in `bounds`
/// (sorted): places bracket the keys and never decrease.
fn check_places(f: &InfixRange, keys: &[Vec<u8>], bounds: &[Vec<u8>]) {
    let mut sorted: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    sorted.sort();
    sorted.dedup();
    let values: Vec<u64> = sorted.iter().map(|k| f.place(k, None).0.lower).collect();
    for (k, &v) in sorted.iter().zip(&values) {
        assert_eq!(f.place(k, None).0.upper_end, v + 1, "key {k:?} off its value");
    }
    assert!(values.windows(2).all(|w| w[0] <= w[1]));
    let mut previous = None;
    for q in bounds {
        let p = f.place(q, None).0;
        // Keys at or above `q` from this index on.
        let at = sorted.partition_point(|k| *k < &q[..]);
        assert!(values[at..].iter().all(|&v| v >= p.lower), "lower of {q:?}");
        let above = sorted.partition_point(|k| *k <= &q[..]);
        assert!(values[..above].iter().all(|&v| v < p.upper_end), "upper of {q:?}");
        if let Some((l, u)) = previous {
            assert!(p.lower >= l && p.upper_end >= u, "places fell at {q:?}");
        }
        previous = Some((p.lower, p.upper_end));
    }
}

#[test]
fn every_string_of_a_small_alphabet_up_to_length_five() {
    let bounds = all_strings(&[0, 1, b'a', b'b', 255], 5);
    // Key sets drawn from the same strings: prefixes of each other, a
    // trailing zero byte, every length.
    let mut cut_short = 0;
    for (i, step) in [(0usize, 7usize), (1, 13), (3, 29), (5, 97), (2, 401)] {
        let keys: Vec<Vec<u8>> = bounds.iter().skip(i).step_by(step).cloned().collect();
        for bits in [4.0, 8.0, 16.0] {
            let Ok(f) = InfixRange::build(&keys, RangeSizing::BitsPerKey(bits)) else {
                continue;
            };
            check_places(&f, &keys, &bounds);
        }
        // Coarse infixes stop before the keys' last varying position;
        // fine ones reach it.
        for fpr in [0.5, 0.3, 0.01] {
            let f = InfixRange::build(
                &keys,
                RangeSizing::Fpr {
                    fpr,
                    max_range_len: 1,
                },
            )
            .unwrap();
            check_places(&f, &keys, &bounds);
        }
        let coarse = InfixRange::build(
            &keys,
            RangeSizing::Fpr {
                fpr: 0.5,
                max_range_len: 1,
            },
        )
        .unwrap();
        cut_short += usize::from(!coarse.complete);
    }
    assert!(cut_short >= 2, "{cut_short}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn places_bracket_random_keys(
        keys in proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(0u8), Just(7u8), any::<u8>()], 0..24), 1..400),
        bounds in proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(0u8), Just(7u8), any::<u8>()], 0..24), 1..100),
        fpr in 0.0001f64..0.5,
    ) {
        let f = InfixRange::build(&keys, RangeSizing::Fpr { fpr, max_range_len: 1 }).unwrap();
        let mut bounds = bounds;
        // Bounds around the keys: each key, and it with a byte more or less.
        for k in keys.iter().take(50) {
            bounds.push(k.clone());
            bounds.push([&k[..], &[0]].concat());
            if let Some((_, head)) = k.split_last() {
                bounds.push(head.to_vec());
            }
        }
        bounds.sort();
        check_places(&f, &keys, &bounds);
    }
}

/// The comparison of heads and bounds orders byte strings as slices do,
/// zeros and lengths around every eighth byte included.
#[test]
fn compare_orders_as_slices_do() {
    let mut strings = all_strings(&[0, 1, 255], 5);
    for s in all_strings(&[0, 7], 4) {
        for head in [&[1u8; 7][..], &[1; 8], &[1; 9], &[1; 15], &[1; 16], &[1; 17]] {
            strings.push([head, &s[..]].concat());
        }
    }
    for a in &strings {
        for b in &strings {
            assert_eq!(super::compare(a, b), a.cmp(b), "{a:?} {b:?}");
        }
    }
}
