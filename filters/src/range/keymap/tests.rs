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
    check_map(&KeyMap::from_keys(keys.iter().map(Vec::as_slice)), keys, queries)
}

/// A map of `keys` in `2^bits` codes, fed in order: truncated, and with a
/// run wherever one saves a bit.
fn narrow_map(keys: &BTreeSet<Vec<u8>>, bits: u32) -> KeyMap {
    let mut b = KeyMapBuilder::with_room_bits(bits);
    for k in keys {
        b.add(k);
    }
    b.finish()
}

/// [`check`] of a given map of `keys`.
fn check_map(map: &KeyMap, keys: &BTreeSet<Vec<u8>>, queries: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let again = KeyMap::from_bytes(&map.to_bytes()).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    prop_assert_eq!(&again, map);
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
        // In a few bits the same keys truncate the map, and runs come in.
        check_map(&narrow_map(&keys, 3 + picks.len() as u32 % 6), &keys, &queries)?;
        // Coarsened: low bits of the codes dropped.
        let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
        check_map(&map.coarsened(1 + picks.len() as u32 % 5).unwrap(), &keys, &queries)?;
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
        let narrow = narrow_map(&keys, 7 + 11 * (tails.len() as u32 % 4));
        check_map(&narrow, &keys, &queries)?;
        check_map(&narrow.coarsened(tails.len() as u32 % 7).unwrap(), &keys, &queries)?;
        let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
        check_map(&map.coarsened(head.len() as u32 * 5).unwrap(), &keys, &queries)?;
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
                for bits in [1, 2, 3] {
                    check_map(&narrow_map(&keys, bits), &keys, &queries)
                        .unwrap_or_else(|e| panic!("{keys:?} in {bits} bits: {e}"));
                    let coarse = KeyMap::from_keys(keys.iter().map(Vec::as_slice))
                        .coarsened(bits - 1)
                        .unwrap();
                    check_map(&coarse, &keys, &queries)
                        .unwrap_or_else(|e| panic!("{keys:?} shifted by {}: {e}", bits - 1));
                }
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

/// The narrow maps of the tests above do take runs: a test that could not
/// fail otherwise.
#[test]
fn narrow_maps_take_runs() {
    // Three positions that repeat the first three: half their bits are
    // redundant, as they are in the sparse sets the tests above draw.
    let keys: BTreeSet<Vec<u8>> = all_strings(&[0, b'a', 255], 3)
        .into_iter()
        .map(|s| [&s[..], &s[..]].concat())
        .collect();
    let with_runs = (1..8).filter(|&bits| narrow_map(&keys, bits).has_run()).count();
    assert!(with_runs >= 2, "{with_runs}");
    // Sparse sets like the proptests' take runs at most widths.
    let all = all_strings(&[0, 1, b'a', 255], 4);
    let mut sparse_runs = 0;
    for seed in 0..50u64 {
        let keys: BTreeSet<Vec<u8>> = (0..20)
            .map(|i| all[(crate::hash::remix(i, seed) % all.len() as u64) as usize].clone())
            .collect();
        sparse_runs += [3, 5, 8]
            .iter()
            .filter(|&&bits| narrow_map(&keys, bits).has_run())
            .count();
    }
    assert!(sparse_runs >= 75, "{sparse_runs} of 150");
    assert!(
        !KeyMap::from_keys(keys.iter().map(Vec::as_slice)).has_run(),
        "exact maps need none"
    );
}

/// Random 8-byte ids with a few hundred values, then random 8-byte ids,
/// behind a shared head: the first run is read as one digit of about 8.2
/// bits, so neighbouring keys never share a code and empty ranges of a few
/// consecutive second ids inside gaps are ruled out by a range filter.
#[test]
fn composite_keys_of_random_ids_keep_their_second_id() {
    use crate::range::{GrafiteRange, RangeFilter, RangeSizing};
    let mix = |i: u64| crate::hash::remix(i, 0x5eed);
    let head = b"orders/region-eu-west:";
    let ids: Vec<u64> = (0..300).map(mix).collect();
    let key = |a: u64, b: u64| [&head[..], &a.to_be_bytes(), &b.to_be_bytes()].concat();
    let keys: BTreeSet<Vec<u8>> = (0..20_000u64)
        .map(|i| key(ids[(mix(i) % 300) as usize], mix(i + 1_000_000)))
        .collect();
    let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
    assert!(map.has_run());
    assert!(!map.is_exact() && map.bits() > 63.9, "{}", map.bits());
    let codes: Vec<u64> = keys.iter().map(|k| map.map(k)).collect();
    assert!(codes.windows(2).all(|w| w[0] < w[1]), "neighbours share a code");
    let again = KeyMap::from_bytes(&map.to_bytes()).unwrap();
    assert_eq!(again, map);
    assert_eq!(map.to_bytes()[4], 2, "a map with a run is version 2");

    // Empty ranges of 16 consecutive second ids, just past a stored key.
    let filter = GrafiteRange::build(&codes, RangeSizing::BitsPerKey(16.0)).unwrap();
    let sorted: Vec<&Vec<u8>> = keys.iter().collect();
    let (mut asked, mut ruled_out) = (0, 0);
    for w in sorted.windows(2).step_by(7) {
        let (a, b) = (
            &w[0][head.len()..head.len() + 8],
            u64::from_be_bytes(w[0][head.len() + 8..].try_into().unwrap()),
        );
        let (lo, hi) = (
            key(u64::from_be_bytes(a.try_into().unwrap()), b + 1_000),
            key(u64::from_be_bytes(a.try_into().unwrap()), b + 1_015),
        );
        if hi >= *w[1] || b > u64::MAX - 2_000 {
            continue;
        }
        asked += 1;
        ruled_out += match map.range_inclusive(&lo, &hi) {
            None => 1,
            Some((x, y)) => usize::from(!filter.may_contain_range(x, y)),
        };
    }
    assert!(asked > 2_000, "{asked}");
    assert!(ruled_out * 100 >= asked * 95, "{ruled_out} of {asked} ruled out");
    // Without the run, the map spends its bits on the first id's bytes.
    let mut plain = KeyMapBuilder::new();
    for k in keys.iter().rev() {
        plain.add(k); // out of order: no run
    }
    let plain = plain.finish();
    assert!(!plain.has_run());
    let shared = keys
        .iter()
        .map(|k| plain.map(k))
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[0] == w[1])
        .count();
    assert!(shared > 10_000, "{shared}");
}

/// A map with a run (version 2), and where its run's fields are.
fn map_with_run() -> (KeyMap, Vec<u8>, usize) {
    let keys: BTreeSet<Vec<u8>> = (0..800u64)
        .map(|i| {
            let id = crate::hash::remix(i % 40, 9).to_be_bytes();
            [&b"t:"[..], &id, &crate::hash::remix(i, 3).to_be_bytes()].concat()
        })
        .collect();
    let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
    assert!(map.has_run());
    let bytes = map.to_bytes();
    assert_eq!(bytes[4], 2);
    let first = u32::from_le_bytes(bytes[6..10].try_into().unwrap()) as usize;
    // Magic, version, flags, length, smallest key, digit count: then the
    // run's position (4 bytes) and tag.
    let run = 10 + first + 1;
    assert_eq!(bytes[run + 4], 1, "the first digit is the run");
    (map, bytes, run)
}

/// The bytes with a fresh checksum.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 8;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

#[test]
fn runs_round_trip_and_forged_runs_are_refused() {
    let (map, bytes, run) = map_with_run();
    assert_eq!(KeyMap::from_bytes(&bytes).as_ref(), Ok(&map));
    for n in 0..bytes.len() {
        assert!(KeyMap::from_bytes(&bytes[..n]).is_err(), "cut at {n}");
    }
    // Span at run + 5, value count at + 6, output radix at + 10, values
    // (a length byte, then the bytes) from + 14.
    let span = run + 5;
    let values = run + 14;
    let value_len = usize::from(bytes[values]);
    let forged = |at: usize, to: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + to.len()].copy_from_slice(to);
        KeyMap::from_bytes(&resealed(b))
    };
    assert!(forged(run + 4, &[7]).is_err(), "unknown tag");
    assert!(forged(span, &[0]).is_err(), "empty span");
    assert!(
        forged(span, &[value_len as u8 - 1]).is_err(),
        "values past the span"
    );
    assert!(
        forged(run + 6, &u32::MAX.to_le_bytes()).is_err(),
        "more values than bytes"
    );
    assert!(forged(run + 6, &1u32.to_le_bytes()).is_err(), "one value");
    assert!(forged(run + 10, &1u32.to_le_bytes()).is_err(), "radix 1");
    assert!(forged(4, &[1]).is_err(), "tags in a version-1 map");
    assert!(forged(4, &[3]).is_err(), "unknown version");
    // The first value made larger than the second: out of order.
    assert!(forged(values + 1, &[0xff; 8]).is_err(), "values out of order");
    // The smallest key's segment is the first value: changing that value's
    // last byte (still below the second) leaves the smallest key outside.
    let mut low = bytes[values + 1..values + 1 + value_len].to_vec();
    *low.last_mut().unwrap() ^= 1;
    let mut b = bytes.clone();
    b[values + 1..values + 1 + value_len].copy_from_slice(&low);
    let b = resealed(b);
    assert!(KeyMap::from_bytes(&b).is_err(), "smallest key outside the run");
    // A version-1 map written as version 2 (untagged digits) is refused.
    let plain = KeyMap::from_keys([&b"a1"[..], b"a2", b"b3"]).to_bytes();
    assert_eq!(plain[4], 1, "maps without a run stay version 1");
    let mut v2 = plain.clone();
    v2[4] = 2;
    assert!(KeyMap::from_bytes(&resealed(v2)).is_err());
}

#[test]
fn common_prefix_counts_shared_bytes() {
    for n in 0..20usize {
        let a: Vec<u8> = (0..20u8).collect();
        for cut in 0..=n {
            let mut b = a[..n].to_vec();
            if cut < n {
                b[cut] ^= 0x10;
            }
            assert_eq!(common_prefix(&a, &b), cut.min(n));
            assert_eq!(common_prefix(&b, &a), cut.min(n));
        }
    }
}

/// A coarsened map is written as version 3 with its shift, a map with a run
/// coarsened too; a version-3 frame with a shift of 0 or past 63 is refused,
/// and so is any truncation or changed byte.
#[test]
fn coarsened_maps_round_trip_and_forged_shifts_are_refused() {
    let keys: Vec<String> = (0..500u32).map(|i| format!("id:{:06}", i * 7)).collect();
    let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
    assert_eq!(map.to_bytes()[4], 1, "an unshifted map keeps version 1");
    let (with_run, ..) = map_with_run();
    for m in [map.clone(), with_run] {
        let coarse = m.coarsened(9).unwrap();
        let bytes = coarse.to_bytes();
        assert_eq!((bytes[4], bytes[6]), (3, 9));
        assert_eq!(KeyMap::from_bytes(&bytes).as_ref(), Ok(&coarse));
        for n in 0..bytes.len() {
            assert!(KeyMap::from_bytes(&bytes[..n]).is_err(), "{n}");
        }
        for shift in [0u8, 64, 200] {
            let mut forged = bytes.clone();
            forged[6] = shift;
            assert!(KeyMap::from_bytes(&resealed(forged)).is_err(), "shift {shift}");
        }
    }
    // Shifts add up, to at most 63.
    let twice = map.clone().coarsened(30).unwrap().coarsened(33).unwrap();
    assert_eq!(twice.shift(), 63);
    assert!(twice.coarsened(1).is_err());
    // Codes and ranges are the full map's shifted.
    let coarse = map.clone().coarsened(4).unwrap();
    for k in &keys {
        assert_eq!(coarse.map(k.as_bytes()), map.map(k.as_bytes()) >> 4);
    }
    let (a, b) = map.range_inclusive(b"id:000100", b"id:000900").unwrap();
    assert_eq!(
        coarse.range_inclusive(b"id:000100", b"id:000900"),
        Some((a >> 4, b >> 4))
    );
}
