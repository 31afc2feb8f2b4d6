use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::{Bound, RangeBounds};

use proptest::prelude::*;

use super::*;

/// Every byte string over `symbols` of length up to `max_len`, sorted.
fn all_strings(symbols: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut level = vec![Vec::new()];
    for _ in 0..max_len {
        let next: Vec<Vec<u8>> = level
            .iter()
            .flat_map(|s: &Vec<u8>| {
                symbols.iter().map(move |&b| {
                    let mut t = s.clone();
                    t.push(b);
                    t
                })
            })
            .collect();
        out.extend(next.iter().cloned());
        level = next;
    }
    out.sort();
    out
}

/// The map's promises over `keys` for every query in `queries` (sorted):
/// `lower` and `upper` never decrease, bracket every key on the right
/// side, and `range` holds every key of the range it is asked about.
fn check(keys: &BTreeSet<Vec<u8>>, queries: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
    let again = KeyMap::from_bytes(&map.to_bytes()).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    prop_assert_eq!(&again, &map);
    let codes: Vec<u64> = keys.iter().map(|k| map.map(k)).collect();
    for w in codes.windows(2) {
        prop_assert!(w[0] <= w[1]);
        if map.is_exact() {
            prop_assert!(w[0] < w[1], "distinct keys share a code in an exact map");
        }
    }
    let (mut last_lower, mut last_upper) = (0u64, 0u64);
    for q in queries {
        let (lo, hi) = (map.lower(q), map.upper(q));
        prop_assert!(
            lo >= last_lower && hi >= last_upper,
            "the map decreased at {:?}",
            q
        );
        (last_lower, last_upper) = (lo, hi);
        for (k, &c) in keys.iter().zip(&codes) {
            if k >= q {
                prop_assert!(lo <= c, "lower({:?}) = {} above key {:?} = {}", q, lo, k, c);
            }
            if k <= q {
                prop_assert!(hi >= c, "upper({:?}) = {} below key {:?} = {}", q, hi, k, c);
            }
        }
    }
    // Ranges between queries, every kind of bound.
    for (i, a) in queries.iter().enumerate().step_by(7) {
        for b in queries[i..].iter().step_by(5) {
            for (lo, hi) in [
                (Bound::Included(a.as_slice()), Bound::Included(b.as_slice())),
                (Bound::Excluded(a.as_slice()), Bound::Excluded(b.as_slice())),
                (Bound::Included(a.as_slice()), Bound::Excluded(b.as_slice())),
                (Bound::Unbounded, Bound::Excluded(b.as_slice())),
                (Bound::Excluded(a.as_slice()), Bound::Unbounded),
            ] {
                let inside: Vec<u64> = keys
                    .iter()
                    .zip(&codes)
                    .filter(|(k, _)| (lo, hi).contains(k.as_slice()))
                    .map(|(_, &c)| c)
                    .collect();
                match map.range(lo, hi) {
                    None => prop_assert!(inside.is_empty(), "{:?} ruled out but holds keys", (lo, hi)),
                    Some((x, y)) => {
                        prop_assert!(x <= y);
                        prop_assert!(inside.iter().all(|&c| x <= c && c <= y), "{:?}", (lo, hi));
                    }
                }
            }
        }
    }
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Every byte string over a small alphabet (the end, 0, 1, `a`, 255)
    /// up to length 5 as a query, against key sets drawn from them.
    #[test]
    fn never_decreases_and_brackets_every_key_over_short_strings(
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..40),
    ) {
        let all = all_strings(&[0, 1, b'a', 255], 4);
        let keys: BTreeSet<Vec<u8>> = picks.iter().map(|i| i.get(&all).clone()).collect();
        let queries = all_strings(&[0, 1, b'a', 255], 5);
        check(&keys, &queries)?;
    }

    /// Long keys under a shared head, of mixed lengths, some past 64 bits
    /// of differences; queries are the keys, their neighbours (a byte up or
    /// down, cut short, extended) and random strings.
    #[test]
    fn never_decreases_and_brackets_every_key_over_long_keys(
        head in proptest::collection::vec(any::<u8>(), 0..12),
        tails in proptest::collection::vec(proptest::collection::vec(prop_oneof![
            Just(b'0'), Just(b'9'), Just(0u8), Just(255u8), any::<u8>()], 0..30), 1..60),
        noise in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..20),
    ) {
        let keys: BTreeSet<Vec<u8>> = tails.iter().map(|t| [head.as_slice(), t].concat()).collect();
        let mut queries: Vec<Vec<u8>> = noise;
        for k in &keys {
            queries.push(k.clone());
            queries.push(k[..k.len() / 2].to_vec());
            queries.push([k.as_slice(), &[0]].concat());
            queries.push([k.as_slice(), &[255, 7]].concat());
            for (i, &b) in k.iter().enumerate().step_by(3) {
                let mut up = k.clone();
                up[i] = b.wrapping_add(1);
                queries.push(up);
                let mut down = k.clone();
                down[i] = b.wrapping_sub(1);
                queries.push(down);
            }
        }
        queries.sort();
        queries.dedup();
        check(&keys, &queries)?;
    }
}

/// Every set of up to three keys from the strings of length up to 2 over
/// {0, `a`, 255}, against every query of length up to 3 over {0, 1, `a`,
/// 255}: fixed positions, ends and absent bytes in every combination.
#[test]
fn never_decreases_and_brackets_every_key_over_every_small_key_set() {
    let pool = all_strings(&[0, b'a', 255], 2);
    let queries = all_strings(&[0, 1, b'a', 255], 3);
    for i in 0..pool.len() {
        for j in i..pool.len() {
            for l in j..pool.len() {
                let keys: BTreeSet<Vec<u8>> = [&pool[i], &pool[j], &pool[l]].into_iter().cloned().collect();
                check(&keys, &queries).unwrap_or_else(|e| panic!("{keys:?}: {e}"));
            }
        }
    }
}

#[test]
fn decimal_and_composite_keys_cost_their_digits() {
    // A 20-digit timestamp, one second apart: five varying digits.
    let keys: Vec<String> = (0..50_000u64)
        .map(|t| format!("ev:{:020}", 1_700_000_000 + t))
        .collect();
    let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
    assert!(map.is_exact());
    let codes: Vec<u64> = keys.iter().map(|k| map.map(k.as_bytes())).collect();
    // Consecutive seconds are consecutive integers, but at the carries.
    let steps = codes.windows(2).filter(|w| w[1] - w[0] == 1).count();
    assert!(steps > 49_000, "{steps}");
    // Twenty varying digits: 66.4 bits, of which 19 digits fit.
    let wide: Vec<String> = (0..2_000u64)
        .map(|i| {
            format!(
                "{:010}{:010}",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 10u64.pow(10),
                i.wrapping_mul(0x2545_f491_4f6c_dd1d) % 10u64.pow(10)
            )
        })
        .collect();
    let map = KeyMap::from_keys(wide.iter().map(String::as_bytes));
    assert!(!map.is_exact());
    assert!(map.bits() > 63.0 && map.bits() <= 64.0, "{}", map.bits());
    let mut sorted = wide.clone();
    sorted.sort();
    let codes: Vec<u64> = sorted.iter().map(|k| map.map(k.as_bytes())).collect();
    assert!(codes.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn one_key_and_no_key() {
    let map = KeyMap::from_keys([&b"only"[..]]);
    assert_eq!(map.map(b"only"), 0);
    assert_eq!(map.range_inclusive(b"a", b"z"), Some((0, 0)));
    assert_eq!(map.range_inclusive(b"p", b"z"), None);
    assert_eq!(map.range_inclusive(b"a", b"onlx"), None);
    assert_eq!(map.range(Bound::Excluded(b"only"), Bound::Unbounded), None);
    let empty = KeyMap::from_keys(core::iter::empty());
    assert_eq!(empty.range_inclusive(b"", b"zz"), Some((0, 0)));
    assert_eq!(KeyMap::from_bytes(&empty.to_bytes()), Ok(empty));
}

#[test]
fn every_truncation_and_byte_change_is_refused() {
    let keys: Vec<String> = (0..300u32).map(|i| format!("k{i:05}/{}", i % 7)).collect();
    let bytes = KeyMap::from_keys(keys.iter().map(String::as_bytes)).to_bytes();
    for n in 0..bytes.len() {
        assert!(KeyMap::from_bytes(&bytes[..n]).is_err(), "cut at {n}");
    }
    for i in 0..bytes.len() {
        for bit in [0, 3, 7] {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            assert!(KeyMap::from_bytes(&b).is_err(), "byte {i} bit {bit}");
        }
    }
}
