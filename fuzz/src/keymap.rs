//! The key map's decoder target: arbitrary bytes, optionally shaped into a
//! plausible map (magic, version, lengths that add up) and re-sealed with a
//! valid checksum, so mutations reach the checks behind it, into
//! `KeyMap::from_bytes`.
//!
//! Checks what the map promises for any bytes it decodes: `Ok` or a format
//! error, never a panic, and no more heap than a small multiple of the
//! input; a decoded map re-encodes to exactly its input; and queries with
//! any byte string (the map's smallest key and changes of it, slices of the
//! input) never panic, `map` is `lower`, `lower` and `upper` never decrease
//! as the bound grows, `range` gives `a ≤ b` when it gives anything, and
//! the map's own smallest key lies in its own range. (`lower(q) > upper(q)`
//! is allowed: a bound between two keys has no code of its own.)

use std::ops::Bound;

use amq::range::KeyMap;
use amq::Error;

use crate::alloc::peak_during;
use crate::decode::{allocation_bound, reseal};

/// Magic, version, flags, the smallest key's length: the bytes before it.
const HEAD: usize = 10;
const DIGIT: usize = 48;
const CHECKSUM: usize = 8;

/// Makes `bytes` a key map's frame: magic, version 1, known flags, and a
/// smallest key and digit count (`count % 65`, fewer if they do not fit)
/// that fill the bytes before the checksum.
pub fn shape(bytes: &mut [u8], count: usize) {
    let Some(room) = bytes.len().checked_sub(HEAD + 1 + CHECKSUM) else {
        return;
    };
    bytes[..5].copy_from_slice(b"AMQK\x01");
    bytes[5] &= 1;
    let count = (count % 65).min(room / DIGIT);
    let first = room - count * DIGIT;
    bytes[6..HEAD].copy_from_slice(&(first as u32).to_le_bytes());
    bytes[HEAD + first] = count as u8;
}

/// The bytes the target hands to `from_bytes` for fuzzer input `data`: its
/// first byte says whether to shape the frame (bit 1, with the digit count
/// from bits 2..) and re-seal it (bit 0).
pub fn effective_bytes(data: &[u8]) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    let mut bytes = rest.to_vec();
    if mode & 2 != 0 {
        shape(&mut bytes, usize::from(mode >> 2));
    }
    if mode & 1 != 0 {
        reseal(&mut bytes);
    }
    Some(bytes)
}

/// The smallest key of a map's (valid) bytes: after the shift byte in
/// version 3.
fn first_key(bytes: &[u8]) -> &[u8] {
    let at = if bytes[4] == 3 { 7 } else { 6 };
    let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
    &bytes[at + 4..at + 4 + len]
}

/// Byte strings to ask a map about: around its smallest key (cut, extended,
/// and changed at one position to a byte of the input, with and without
/// what follows), and slices of the input.
fn queries(first: &[u8], input: &[u8]) -> Vec<Vec<u8>> {
    let mut q = vec![
        Vec::new(),
        first.to_vec(),
        [first, &[0]].concat(),
        [first, &[0xff]].concat(),
        vec![0xff; first.len() + 1],
    ];
    if let Some((_, head)) = first.split_last() {
        q.push(head.to_vec());
    }
    for (i, &b) in input.iter().rev().take(32).enumerate() {
        let p = (i * 7 + usize::from(b)) % (first.len() + 2);
        let mut k = first.to_vec();
        k.resize(k.len().max(p + 1), 0);
        k[p] = b;
        q.push(k[..=p].to_vec());
        q.push(k);
    }
    q.extend(input.chunks(7).take(8).map(<[u8]>::to_vec));
    q
}

fn bounds(k: &[u8]) -> [Bound<&[u8]>; 3] {
    [Bound::Included(k), Bound::Excluded(k), Bound::Unbounded]
}

/// Every check a decoded map must pass.
pub fn check_decoded(map: &KeyMap, bytes: &[u8]) {
    assert_eq!(map.to_bytes(), bytes, "decoding is not faithful");
    let bits = map.bits();
    assert!((0.0..=64.0 + 1e-9).contains(&bits), "bits {bits}");
    // Exact: neither truncated nor coarsened.
    assert_eq!(map.is_exact(), bytes[5] & 1 == 0 && bytes[4] != 3);
    assert_eq!(map.shift(), if bytes[4] == 3 { u32::from(bytes[6]) } else { 0 });
    let first = first_key(bytes);
    let code = map.map(first);
    match map.range_inclusive(first, first) {
        Some((a, b)) => assert!(a <= code && code <= b, "{a}..={b} misses its own key's {code}"),
        None => panic!("the map rules out its own smallest key"),
    }
    let mut q = queries(first, bytes);
    q.sort();
    q.dedup();
    let places: Vec<(u64, u64)> = q.iter().map(|k| (map.lower(k), map.upper(k))).collect();
    for (k, &(lower, _)) in q.iter().zip(&places) {
        assert_eq!(map.map(k), lower, "map is not lower");
    }
    for w in places.windows(2) {
        assert!(
            w[0].0 <= w[1].0 && w[0].1 <= w[1].1,
            "a bound that grew went down: {w:?}"
        );
    }
    for lo in q.iter().take(12) {
        for hi in q.iter().rev().take(12) {
            for (l, h) in bounds(lo).into_iter().flat_map(|l| bounds(hi).map(|h| (l, h))) {
                if let Some((a, b)) = map.range(l, h) {
                    assert!(a <= b, "range {l:?}..{h:?} gave {a} > {b}");
                }
            }
        }
    }
}

/// The decoder target.
pub fn decode_key_map(data: &[u8]) {
    let Some(bytes) = effective_bytes(data) else {
        return;
    };
    let (decoded, peak) = peak_during(|| KeyMap::from_bytes(&bytes));
    // A run's value of one byte (two with its length) is held in nine (a
    // padded u64 and its length), and the digit table, at most 64 digits,
    // is a constant: the bound is the decoders' with those two terms.
    let bound = allocation_bound(bytes.len()) + bytes.len() / 2 + 64 * 256;
    assert!(
        peak <= bound,
        "decoding {} bytes allocated {peak}",
        bytes.len()
    );
    match decoded {
        Ok(map) => check_decoded(&map, &bytes),
        Err(e) => assert!(
            matches!(e, Error::Format(_)),
            "a decoder error that is not about the bytes: {e:?}"
        ),
    }
}
