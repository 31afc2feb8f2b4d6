//! Shared checks for every filter's integration tests: key generation with
//! fixed seeds, FPR measurement, and the format round-trip / corruption
//! checks. Each `tests/<filter>.rs` uses these so every filter is held to the
//! same bar.
#![allow(dead_code)] // each test binary uses a subset

use std::collections::HashSet;
use std::fmt::Debug;

use amq::hash::remix;
use amq::{AnyFilter, Filter, FromBytes, KeyHash, StaticFilter};

/// The well-mixed hash `remix(i, seed)` (SplitMix64's finaliser) as a
/// [`KeyHash`].
pub fn mixed(i: u64, seed: u64) -> KeyHash {
    KeyHash::from_well_mixed(remix(i, seed))
}

/// Raw `u64`s (a proptest's `any::<u64>()`, the small constants of a
/// golden test) taken as they are, bit for bit, as [`KeyHash`]es
/// ([`KeyHash::from_well_mixed`]).
pub fn well_mixed(raw: &[u64]) -> Vec<KeyHash> {
    raw.iter().copied().map(KeyHash::from_well_mixed).collect()
}

/// `n` distinct pseudo-random key hashes, reproducible from `seed`.
/// (`remix` is a bijection for a fixed seed, so distinct inputs stay distinct.)
pub fn hashes(seed: u64, n: usize) -> Vec<KeyHash> {
    (0..n as u64).map(|i| mixed(i, seed)).collect()
}

/// `n` hashes disjoint from `present` (checked, not assumed).
pub fn absent_hashes(seed: u64, n: usize, present: &[KeyHash]) -> Vec<KeyHash> {
    let present: HashSet<KeyHash> = present.iter().copied().collect();
    (0..u64::MAX)
        .map(|i| mixed(i, seed ^ 0xA5A5_5A5A_DEAD_BEEF))
        .filter(|h| !present.contains(h))
        .take(n)
        .collect()
}

/// Fraction of `absent` that the filter (wrongly) reports as present.
pub fn measured_fpr(f: &dyn Filter, absent: &[KeyHash]) -> f64 {
    absent.iter().filter(|&&h| f.contains_hash(h)).count() as f64 / absent.len() as f64
}

/// Asserts `measured` is within `rel` (e.g. 0.15) of `expected`, relatively.
pub fn assert_fpr_close(name: &str, measured: f64, expected: f64, rel: f64) {
    let ratio = measured / expected;
    assert!(
        (ratio - 1.0).abs() <= rel,
        "{name}: measured FPR {measured:.5} vs expected {expected:.5} (ratio {ratio:.3}, allowed ±{rel})"
    );
}

/// Asserts the filter reports every hash in `keys` as present.
pub fn assert_no_false_negatives(f: &dyn Filter, keys: &[KeyHash]) {
    for &h in keys {
        assert!(
            f.contains_hash(h),
            "false negative for hash {:#018x} in {:?}",
            h.get(),
            f.kind()
        );
    }
    // The batch path must agree.
    let mut out = vec![false; keys.len()];
    f.contains_hashes(keys, &mut out);
    assert!(
        out.iter().all(|&b| b),
        "contains_hashes gave a false negative in {:?}",
        f.kind()
    );
}

/// `to_bytes` → `from_bytes` gives an equal filter, and `AnyFilter` decodes
/// the same bytes to a filter of the same kind with the same answers.
pub fn assert_round_trip<F: FromBytes + PartialEq + Debug>(f: &F, probe: &[KeyHash]) {
    let bytes = f.to_bytes();
    let back = F::from_bytes(&bytes).expect("round trip");
    assert_eq!(&back, f);
    assert_eq!(back.to_bytes(), bytes, "re-encoding changed the bytes");
    let any = AnyFilter::from_bytes(&bytes).expect("AnyFilter round trip");
    assert_eq!(any.kind(), f.kind());
    assert_eq!(any.num_keys(), f.num_keys());
    assert_eq!(any.size_in_bytes(), f.size_in_bytes());
    for &h in probe {
        assert_eq!(any.contains_hash(h), f.contains_hash(h));
    }
}

/// Every truncation of the serialized filter is an `Err`; every single-byte
/// change (all 255 other values of every byte) is an `Err` or decodes to a
/// filter that still finds every key of `keys`. Never a panic (a panic fails
/// the test). Meant for small filters: it decodes `255 · len` inputs.
pub fn assert_corruption_safe<F: FromBytes>(f: &F, keys: &[KeyHash]) {
    let bytes = f.to_bytes();
    for n in 0..bytes.len() {
        assert!(
            F::from_bytes(&bytes[..n]).is_err(),
            "truncation to {n} bytes decoded"
        );
        assert!(
            AnyFilter::from_bytes(&bytes[..n]).is_err(),
            "truncation to {n} bytes decoded as any"
        );
    }
    let mut extended = bytes.clone();
    extended.push(0);
    assert!(F::from_bytes(&extended).is_err(), "trailing byte accepted");
    let mut changed = bytes.clone();
    for i in 0..bytes.len() {
        for delta in 1..=255u8 {
            changed[i] = bytes[i] ^ delta;
            if let Ok(g) = F::from_bytes(&changed) {
                assert_no_false_negatives(&g, keys);
            }
            if let Ok(g) = AnyFilter::from_bytes(&changed) {
                assert_no_false_negatives(&g, keys);
            }
        }
        changed[i] = bytes[i];
    }
}

/// `contains_hashes` answers exactly what `contains_hash` answers, for the
/// whole of `probes` and for suffixes of several lengths (so batches that end
/// part-way through a prefetch group are covered too).
pub fn assert_contains_hashes_agrees(f: &dyn Filter, probes: &[KeyHash]) {
    let single: Vec<bool> = probes.iter().map(|&h| f.contains_hash(h)).collect();
    let mut out = vec![false; probes.len()];
    f.contains_hashes(probes, &mut out);
    assert_eq!(
        out,
        single,
        "contains_hashes disagrees with contains_hash in {:?}",
        f.kind()
    );
    for len in [0, 1, probes.len() / 3, probes.len().saturating_sub(1)] {
        let len = len.min(probes.len());
        let tail = &probes[probes.len() - len..];
        // Pre-fill with `true` so an untouched slot would show up as a mismatch.
        let mut out = vec![true; len];
        f.contains_hashes(tail, &mut out);
        assert_eq!(
            out,
            single[probes.len() - len..],
            "contains_hashes on a suffix of {len}"
        );
    }
}

/// Builds a static filter and checks it against the set model: every key is
/// found, the key count is the number of distinct hashes, `contains_hashes`
/// agrees with `contains_hash` on `probes` (and finds every key among them),
/// and an empty filter contains nothing at no space and no FPR.
pub fn check_static_model<F: StaticFilter>(keys: &[KeyHash], probes: &[KeyHash], params: &F::Params) -> F {
    let model: HashSet<KeyHash> = keys.iter().copied().collect();
    let f = F::build_with(keys, params).expect("build");
    assert_eq!(f.num_keys(), model.len());
    assert_no_false_negatives(&f, keys);
    let mut out = vec![false; probes.len()];
    f.contains_hashes(probes, &mut out);
    for (&h, &o) in probes.iter().zip(&out) {
        assert_eq!(o, f.contains_hash(h));
        if model.contains(&h) {
            assert!(o);
        }
    }
    if model.is_empty() {
        assert!(out.iter().all(|&o| !o), "an empty filter contains nothing");
        assert_eq!(f.expected_fpr(), 0.0);
        assert_eq!(f.bits_per_key(), 0.0);
    }
    f
}

/// A proptest configuration with `cases` cases and a fixed RNG seed, so every
/// run explores the same inputs (tests are never flaky).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x616d_7121),
        // The seed is fixed: a failure replays by itself, so no regression
        // files are written.
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// Asserts `bytes` equals the golden hex string (whitespace ignored), printing
/// the actual hex on mismatch so an intended format change can update it.
pub fn assert_golden(name: &str, bytes: &[u8], golden_hex: &str) {
    let actual: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let golden: String = golden_hex.chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(actual, golden, "{name}: serialized bytes changed (format break?)");
}

/// The version-2 frame holding what the version-1 frame `v1` holds: version
/// bytes `02 00`, zeros after the parameters up to a 64-byte payload offset,
/// a fresh checksum. Written from `docs/format.md`, independently of the
/// encoder, so the golden strings of version 1 pin version 2 too.
pub fn upgrade_v1_frame(v1: &[u8]) -> Vec<u8> {
    assert_eq!(&v1[4..6], [1, 0], "not a version-1 frame");
    let params_len = u32::from_le_bytes(v1[8..12].try_into().unwrap()) as usize;
    let params_end = 20 + params_len;
    let mut v2 = v1[..params_end].to_vec();
    v2[4] = 2;
    while !v2.len().is_multiple_of(64) {
        v2.push(0);
    }
    v2.extend_from_slice(&v1[params_end..v1.len() - 8]);
    let sum = xxhash_rust::xxh3::xxh3_64(&v2);
    v2.extend_from_slice(&sum.to_le_bytes());
    v2
}

/// The version-1 frame holding what the version-2 frame `v2` holds (the
/// inverse of [`upgrade_v1_frame`]).
pub fn downgrade_to_v1(v2: &[u8]) -> Vec<u8> {
    let params_end = 20 + u32::from_le_bytes(v2[8..12].try_into().unwrap()) as usize;
    let payload_at = params_end.div_ceil(64) * 64;
    let mut v1 = v2[..params_end].to_vec();
    v1[4] = 1;
    v1.extend_from_slice(&v2[payload_at..v2.len() - 8]);
    let sum = xxhash_rust::xxh3::xxh3_64(&v1);
    v1.extend_from_slice(&sum.to_le_bytes());
    assert_eq!(upgrade_v1_frame(&v1), v2);
    v1
}

/// Pins a kind's bytes in both format versions: `bytes` (what the filter
/// writes today) must be the version-2 form of the version-1 golden string,
/// and the version-1 golden bytes must still decode to a filter that writes
/// exactly `bytes` again.
pub fn assert_golden_frame(name: &str, bytes: &[u8], golden_v1_hex: &str) {
    assert_golden_frame_decoded_by(name, bytes, golden_v1_hex, |b| {
        AnyFilter::from_bytes(b).map(|f| f.to_bytes())
    });
}

/// [`assert_golden_frame`] with the version-1 bytes decoded (and encoded
/// again) by `reencode`: for a kind `AnyFilter` does not hold
/// (`ParquetBloom`), its own decoder.
pub fn assert_golden_frame_decoded_by(
    name: &str,
    bytes: &[u8],
    golden_v1_hex: &str,
    reencode: impl Fn(&[u8]) -> Result<Vec<u8>, amq::Error>,
) {
    let v1 = from_hex(golden_v1_hex);
    let v2 = upgrade_v1_frame(&v1);
    assert_golden(name, bytes, &to_hex(&v2));
    let back = reencode(&v1).unwrap_or_else(|e| panic!("{name}: version 1 no longer decodes: {e}"));
    assert_eq!(back, bytes, "{name}: version 1 decodes to another filter");
}

pub fn from_hex(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|d| u8::from_str_radix(std::str::from_utf8(d).unwrap(), 16).unwrap())
        .collect()
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// False positives among `count` hashes `remix(i, seed)` that are absent
/// from `keys`. Streamed, so a large `count` needs no allocation; the few
/// positives are checked against the sorted keys.
pub fn false_positives(f: &dyn Filter, keys: &[KeyHash], seed: u64, count: u64) -> u64 {
    let mut sorted = keys.to_vec();
    sorted.sort_unstable();
    (0..count)
        .map(|i| mixed(i, seed))
        .filter(|h| f.contains_hash(*h) && sorted.binary_search(h).is_err())
        .count() as u64
}

/// Rewrites the trailing checksum so that it matches the rest of the frame:
/// a forged frame then fails (or passes) on its contents, not its checksum.
pub fn reseal(bytes: &mut [u8]) {
    let end = bytes.len() - amq::format::CHECKSUM_LEN;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
}

/// With the checksum recomputed, every byte of `f`'s bytes changed in turn
/// (each of 9 ways) is refused or decodes to a filter that re-encodes to
/// exactly those bytes and answers queries: for decoders that accept only
/// what the filter's own operations could have written.
pub fn assert_byte_changes_refused_or_exact<F: FromBytes + Filter>(f: &F) {
    let bytes = f.to_bytes();
    let mut changed = bytes.clone();
    for i in 0..bytes.len() - amq::format::CHECKSUM_LEN {
        for delta in [1u8, 2, 4, 8, 16, 32, 64, 128, 255] {
            changed[i] = bytes[i] ^ delta;
            reseal(&mut changed);
            if let Ok(g) = F::from_bytes(&changed) {
                assert_eq!(g.to_bytes(), changed, "byte {i} ^ {delta}");
                exercise(&g, &changed);
            }
            changed.copy_from_slice(&bytes);
        }
    }
}

/// A filter decoded from forged bytes must answer every query without
/// panicking or hanging, and re-encode to exactly the bytes it came from.
pub fn exercise(f: &dyn Filter, forged: &[u8]) {
    assert_eq!(f.to_bytes(), forged, "decoding is not faithful");
    let probes = hashes(5, 100);
    let mut out = vec![false; probes.len()];
    f.contains_hashes(&probes, &mut out);
    for (&h, &o) in probes.iter().zip(&out) {
        assert_eq!(f.contains_hash(h), o);
    }
    let p = f.expected_fpr();
    assert!((0.0..=1.0).contains(&p), "expected_fpr {p}");
    assert!(f.bits_per_key() >= 0.0);
    // Ribbon keeps padding words beyond its payload; nothing keeps more.
    assert!(f.size_in_bytes() <= 2 * forged.len() + 1024);
}

/// Whether every value of a filter's payload bytes is a valid filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// Plain bits or counters (the Bloom family).
    AnyValueDecodes,
    /// Fingerprints or words whose values the decoder may check.
    MayBeRefused,
}

/// Every change of every header, parameter and payload byte, with the
/// checksum recomputed so the decoder must judge the contents themselves:
/// an `Err`, or a filter that works and re-encodes to the forged bytes.
pub fn assert_forgery_safe<F: FromBytes>(f: &F, payload: Payload) {
    let bytes = f.to_bytes();
    let mut forged = bytes.clone();
    let payload_start = (bytes.len() - amq::format::CHECKSUM_LEN).saturating_sub(f.size_in_bytes());
    for i in 0..bytes.len() - amq::format::CHECKSUM_LEN {
        for delta in 1..=255u8 {
            forged[i] = bytes[i] ^ delta;
            reseal(&mut forged);
            if let Ok(g) = F::from_bytes(&forged) {
                exercise(&g, &forged);
            }
            if let Ok(g) = AnyFilter::from_bytes(&forged) {
                exercise(&g, &forged);
            }
            if payload == Payload::AnyValueDecodes && i >= payload_start {
                assert!(F::from_bytes(&forged).is_ok(), "payload byte {i} ^ {delta:#04x}");
            }
        }
        forged[i] = bytes[i];
    }
}
