//! Every input the fuzzers (`fuzz/`) ever crashed on, replayed: the bytes
//! each decoder saw are in `tests/fuzz_regressions/<target>-<cause>`. A
//! decoded filter must answer queries, take a new key without panicking and
//! keep its expected FPR a probability, as in `fuzz/src/decode.rs`.
//!
//! | file | cause (fixed) |
//! |------|---------------|
//! | `decode_any-forged-count`, `decode_counting_bloom-forged-count` | a re-sealed counting Bloom frame with a key count of `u64::MAX`: decoded, then `insert` overflowed (a panic with overflow checks, a silent wrap to 0 and `expected_fpr() == 0` without). Counts are now validated on decode and saturate. |
//! | (in `tests/expanding.rs` and `tests/memento.rs`: `a_forged_key_count_at_the_limit_refuses_inserts`) | `decode_expanding`: a re-sealed expanding quotient filter frame with a key count of `u64::MAX` (keys may outnumber entries, so the decoder accepts it); the insert after decoding overflowed the count. Inserts now return `Full` there, and a merge whose counts would overflow too. |
//! | `decode_key_map-digit-reserve` (its heap in `tests/heap_size.rs`) | `decode_key_map`: a key map frame of 73 bytes claiming 51 digits; the decoder reserved room for all of them (4.9 KB) before reading the first, which it refused. It now reserves only what the bytes left can hold. |
//! | (inline: `ops_ribbon_more_keys_than_slots`) | `ops_ribbon`: a two-line Ribbon of 74 distinct keys sized to one line of 73 slots, which solved (the surplus row reduced to zero with zero result bits) and wrote a frame its decoder rejects as "more keys than slots". Shards now never get fewer slots than keys. |
//! | (inline: `ops_ribbon_bumped_at_a_high_fpr`) | `ops_ribbon`: a bumped Ribbon at FPR 35/64 (one result bit) of 10,000 keys whose layer kept 9,729 keys in 9,728 slots (a row the stored ones imply costs no slot, and at one bit half of those are consistent); its frame was refused as "more keys than slots". A shard now keeps at most one key per slot and bumps the rest. |

use std::fs;
use std::path::Path;

use amq::{hash_key, AnyFilter, Filter, Insert, KeyHash};

fn replay(bytes: &[u8]) {
    if let Ok(map) = amq::range::KeyMap::from_bytes(bytes) {
        assert_eq!(map.to_bytes(), bytes);
        let _ = map.range(std::ops::Bound::Unbounded, std::ops::Bound::Included(b"\xff"));
    }
    let Ok(any) = AnyFilter::from_bytes(bytes) else {
        return;
    };
    assert_eq!(any.to_bytes(), bytes);
    let h = hash_key(b"inserted after decoding");
    let mut probes = vec![false; 3];
    any.contains_hashes(&[1, 2, 3].map(KeyHash::from_well_mixed), &mut probes);
    let after: Option<Box<dyn Filter>> = match any {
        AnyFilter::StandardBloom(mut f) => {
            f.insert_hash(h).unwrap();
            Some(Box::new(f))
        }
        AnyFilter::BlockedBloom(mut f) => {
            f.insert_hash(h).unwrap();
            Some(Box::new(f))
        }
        AnyFilter::CountingBloom(mut f) => {
            f.insert_hash(h).unwrap();
            Some(Box::new(f))
        }
        AnyFilter::CuckooFilter(mut f) => f.insert_hash(h).ok().map(|()| Box::new(f) as Box<dyn Filter>),
        _ => None,
    };
    if let Some(f) = after {
        assert!(f.contains_hash(h));
        assert!((0.0..=1.0).contains(&f.expected_fpr()));
        assert!(f.expected_fpr() > 0.0, "a filter holding keys has a positive FPR");
    }
}

#[test]
fn every_fuzzer_crash_stays_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut n = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        replay(&fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 2);
}

/// The `ops_ribbon` crash: these keys (74 distinct) (`u16`, hashed as their little-endian
/// bytes) at r = 7, two-line layout, 1 + 50/128 slots per key built a filter
/// whose own bytes did not decode.
#[test]
fn ops_ribbon_more_keys_than_slots() {
    use amq::{FromBytes, Ribbon, RibbonParams, StaticFilter};
    const KEYS: [u16; 106] = [
        52171, 52171, 52100, 54737, 53713, 53713, 53505, 487, 6587, 2329, 23923, 63347, 53557, 2257, 53713,
        1791, 53713, 53713, 53713, 48, 43, 1023, 65535, 231, 999, 59391, 65535, 53553, 53541, 53713, 53713,
        53713, 53713, 53713, 17733, 17733, 17733, 13621, 59189, 65360, 3583, 65293, 3341, 3341, 3341, 3341,
        13581, 60420, 1023, 20735, 65397, 3341, 3343, 269, 257, 257, 257, 12545, 851, 230, 58343, 59186,
        59136, 352, 3329, 6425, 29449, 29533, 47607, 53713, 53713, 53713, 55761, 53713, 49105, 57205, 24635,
        63803, 43, 1023, 59391, 65329, 59139, 65511, 12799, 63793, 65339, 11011, 59364, 59367, 65280, 2781,
        52063, 65282, 15254, 15163, 53621, 11217, 29952, 59136, 59139, 30207, 209, 53713, 53713, 65323,
    ];
    let hashes: Vec<KeyHash> = KEYS.iter().map(|k| hash_key(&k.to_le_bytes())).collect();
    let params = RibbonParams::with_result_bits(7)
        .and_then(|p| p.with_two_line_layout())
        .and_then(|p| p.with_slots_per_key(1.0 + 50.0 / 128.0))
        .unwrap();
    let f = <Ribbon as StaticFilter>::build_with(&hashes, &params).unwrap();
    let bytes = f.to_bytes();
    let g = Ribbon::from_bytes(&bytes).expect("a filter's own bytes decode");
    assert_eq!(g.to_bytes(), bytes);
    assert!(hashes.iter().all(|&h| f.contains_hash(h) && g.contains_hash(h)));
}

/// The `ops_ribbon` crash at FPR 35/64: key 54992 and the 10,000 keys from
/// it (`u16`, wrapping), bumped.
#[test]
fn ops_ribbon_bumped_at_a_high_fpr() {
    use amq::{FromBytes, Ribbon, RibbonParams, StaticFilter};
    let mut keys: Vec<u16> = vec![54992];
    keys.extend((0..amq::ribbon::BUMPED_MIN_KEYS as u16).map(|i| 54992u16.wrapping_add(i)));
    let hashes: Vec<KeyHash> = keys.iter().map(|k| hash_key(&k.to_le_bytes())).collect();
    let params = RibbonParams::with_fpr(35.0 / 64.0).unwrap();
    let f = <Ribbon as StaticFilter>::build_with(&hashes, &params).unwrap();
    let bytes = f.to_bytes();
    let g = Ribbon::from_bytes(&bytes).expect("a filter's own bytes decode");
    assert_eq!(g.to_bytes(), bytes);
    assert!(hashes.iter().all(|&h| f.contains_hash(h) && g.contains_hash(h)));
}
