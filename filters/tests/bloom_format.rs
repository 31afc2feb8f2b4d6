//! The byte format of the Bloom family: round trips, corruption, golden
//! bytes, and typed errors for every way a frame can be wrong.
//!
//! The layout under test is the one documented in `amq::format`:
//! magic `AMQF` | version u16 | kind u8 | hash scheme u8 | params length u32 |
//! payload length u64 | params | payload | xxh3-64 (seed 0) of all before.

mod common;

use amq::format::{CHECKSUM_LEN, FORMAT_VERSION, HEADER_LEN, MAGIC};
use amq::hash::{reduce, reduce32};
use amq::{
    hash_key, AnyFilter, AtomicBlockedBloom, BlockedBloom, CountingBloom, Error, Filter, FilterKind,
    FilterSizing, FormatError, FromBytes, HashScheme, Insert, KeyHash, StandardBloom,
};
use xxhash_rust::xxh3::xxh3_64;

const KEYS: [&[u8]; 3] = [b"apple", b"banana", b"cherry"];

fn key_hashes() -> Vec<KeyHash> {
    KEYS.iter().map(|k| hash_key(k)).collect()
}

// ---------------------------------------------------------------------------
// Helpers for reading and forging frames by their documented offsets.

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Asserts the frame structure documented in `amq::format` and returns
/// `(params, payload)`.
fn assert_frame(bytes: &[u8], kind: FilterKind, params_len: u32, payload_len: u64) -> (&[u8], &[u8]) {
    assert_eq!(HEADER_LEN, 20);
    assert_eq!(CHECKSUM_LEN, 8);
    assert_eq!(&bytes[0..4], b"AMQF");
    assert_eq!(MAGIC, *b"AMQF");
    assert_eq!(u16_at(bytes, 4), 2, "format version");
    assert_eq!(FORMAT_VERSION, 2);
    assert_eq!(bytes[6], kind.id(), "kind byte");
    assert_eq!(bytes[7], HashScheme::Xxh3Seeded.id(), "hash scheme byte");
    assert_eq!(bytes[7], 1);
    assert_eq!(u32_at(bytes, 8), params_len, "params length");
    assert_eq!(u64_at(bytes, 12), payload_len, "payload length");
    let (p, l) = (params_len as usize, payload_len as usize);
    // Zeros after the parameters, so the payload starts at a multiple of 64.
    let o = (20 + p).div_ceil(64) * 64;
    assert!(bytes[20 + p..o].iter().all(|&b| b == 0), "padding");
    assert_eq!(bytes.len(), o + l + 8, "total length");
    let sum_at = o + l;
    assert_eq!(u64_at(bytes, sum_at), xxh3_64(&bytes[..sum_at]), "checksum");
    (&bytes[20..20 + p], &bytes[o..sum_at])
}

fn words_le(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Reference positions of the standard and counting filters, from the
/// documented formula: probe `i` of hash `h` is
/// `reduce(h1 + i·h2 + (i³ - i)/6, m)` with `h1 = h`, `h2 = h` rotated by 32.
/// (Positions come from the high bits, so at these tiny `m` the small cubic
/// term never moves a probe.)
fn reference_probes(h: u64, k: u32, m: u64) -> Vec<u64> {
    let h2 = h.rotate_left(32);
    (0..k as u64)
        .map(|i| {
            let cubic = (i * i * i - i) / 6;
            reduce(h.wrapping_add(i.wrapping_mul(h2)).wrapping_add(cubic), m)
        })
        .collect()
}

/// Reference bits of a blocked filter, from the documented design: block by
/// the high 32 bits; probe bits are the top 9 bits of a 32-bit state started
/// at the low 32 bits and multiplied by `0x9e3779b9` after each probe.
fn reference_blocked_words(hashes: &[KeyHash], k: u32, blocks: u32) -> Vec<u64> {
    let mut words = vec![0u64; blocks as usize * 8];
    for h in hashes.iter().map(|h| h.get()) {
        let block = reduce32((h >> 32) as u32, blocks) as usize;
        let mut state = h as u32;
        for _ in 0..k {
            let bit = (state >> 23) as usize;
            words[block * 8 + bit / 64] |= 1 << (bit % 64);
            state = state.wrapping_mul(0x9e37_79b9);
        }
    }
    words
}

// ---------------------------------------------------------------------------
// The tiny filters pinned by the golden tests.

fn tiny_standard() -> StandardBloom {
    let mut f = StandardBloom::new(3, FilterSizing::BitsPerKey(20.0)).unwrap();
    KEYS.iter().for_each(|k| f.insert(k).unwrap());
    f
}
fn tiny_blocked() -> BlockedBloom {
    let mut f = BlockedBloom::new(3, FilterSizing::BitsPerKey(20.0)).unwrap();
    KEYS.iter().for_each(|k| f.insert(k).unwrap());
    f
}
fn tiny_atomic() -> AtomicBlockedBloom {
    let f = AtomicBlockedBloom::new(3, FilterSizing::BitsPerKey(20.0)).unwrap();
    KEYS.iter().for_each(|k| f.insert(k).unwrap());
    f
}
fn tiny_counting() -> CountingBloom {
    // 10 counters (of 4 bits) per key.
    let mut f = CountingBloom::new(3, FilterSizing::BitsPerKey(40.0)).unwrap();
    KEYS.iter().for_each(|k| f.insert(k).unwrap());
    f
}

// ---------------------------------------------------------------------------
// Golden bytes.

// Each string: header (magic, version, kind, hash scheme, params length,
// payload length), params, payload, checksum. Spaces are ignored.
const GOLDEN_STANDARD: &str = concat!(
    "414d5146 0100 01 01 14000000 0800000000000000",
    " 4000000000000000 0e000000 0300000000000000",
    " 325a3f0daa8bc475",
    " 39ec63dff75a71d7",
);
const GOLDEN_BLOCKED: &str = concat!(
    "414d5146 0100 02 01 10000000 4000000000000000",
    " 01000000 0b000000 0300000000000000",
    " 0000000040000010 0008014040000020 0200100028084000 0008000010000001",
    " 0002004000000000 0400488010008080 0000201040040000 0001200800000000",
    " e749279dc08fc594",
);
const GOLDEN_COUNTING: &str = concat!(
    "414d5146 0100 03 01 14000000 1000000000000000",
    " 2000000000000000 07000000 0300000000000000",
    " 0002100121021000 1010021000200013",
    " d99d1a78900f5186",
);

#[test]
fn golden_standard_bloom() {
    let f = tiny_standard();
    assert_eq!((f.num_bits(), f.num_probes()), (64, 14));
    let bytes = f.to_bytes();
    let (params, payload) = assert_frame(&bytes, FilterKind::StandardBloom, 20, 8);
    // Params: bit count u64, probe count u32, key count u64.
    assert_eq!(
        (u64_at(params, 0), u32_at(params, 8), u64_at(params, 12)),
        (64, 14, 3)
    );
    let mut word = 0u64;
    for h in key_hashes() {
        for bit in reference_probes(h.get(), 14, 64) {
            word |= 1 << bit;
        }
    }
    assert_eq!(payload, word.to_le_bytes());
    common::assert_golden_frame("StandardBloom", &bytes, GOLDEN_STANDARD);
}

#[test]
fn golden_blocked_bloom_and_its_atomic_twin() {
    let f = tiny_blocked();
    assert_eq!((f.num_blocks(), f.num_probes()), (1, 11));
    let bytes = f.to_bytes();
    let (params, payload) = assert_frame(&bytes, FilterKind::BlockedBloom, 16, 64);
    // Params: block count u32, probe count u32, key count u64.
    assert_eq!(
        (u32_at(params, 0), u32_at(params, 4), u64_at(params, 8)),
        (1, 11, 3)
    );
    assert_eq!(payload, words_le(&reference_blocked_words(&key_hashes(), 11, 1)));
    common::assert_golden_frame("BlockedBloom", &bytes, GOLDEN_BLOCKED);
    common::assert_golden_frame("AtomicBlockedBloom", &tiny_atomic().to_bytes(), GOLDEN_BLOCKED);
}

#[test]
fn golden_counting_bloom() {
    let f = tiny_counting();
    assert_eq!((f.num_counters(), f.num_probes()), (32, 7));
    let bytes = f.to_bytes();
    let (params, payload) = assert_frame(&bytes, FilterKind::CountingBloom, 20, 16);
    // Params: counter count u64, probe count u32, key count u64.
    assert_eq!(
        (u64_at(params, 0), u32_at(params, 8), u64_at(params, 12)),
        (32, 7, 3)
    );
    // Counter i is the nibble at bits 4(i mod 16) of word i / 16.
    let mut words = [0u64; 2];
    for h in key_hashes() {
        for c in reference_probes(h.get(), 7, 32) {
            words[(c / 16) as usize] += 1 << (4 * (c % 16));
        }
    }
    assert_eq!(payload, words_le(&words));
    common::assert_golden_frame("CountingBloom", &bytes, GOLDEN_COUNTING);
}

// ---------------------------------------------------------------------------
// Round trips.

#[test]
fn every_bloom_kind_round_trips() {
    for n in [0usize, 1, 3, 1000] {
        let keys = common::hashes(n as u64, n);
        let probes = common::absent_hashes(1, 2000, &keys);
        for bits in [1.0, 10.0, 37.5] {
            let cap = n.max(1);
            let mut s = StandardBloom::new(cap, FilterSizing::BitsPerKey(bits)).unwrap();
            let mut b = BlockedBloom::new(cap, FilterSizing::BitsPerKey(bits)).unwrap();
            let mut c = CountingBloom::new(cap, FilterSizing::BitsPerKey(4.0 * bits)).unwrap();
            let a = AtomicBlockedBloom::new(cap, FilterSizing::BitsPerKey(bits)).unwrap();
            for &h in &keys {
                s.insert_hash(h).unwrap();
                b.insert_hash(h).unwrap();
                c.insert_hash(h).unwrap();
                a.insert_hash(h).unwrap();
            }
            common::assert_round_trip(&s, &probes);
            common::assert_round_trip(&b, &probes);
            common::assert_round_trip(&c, &probes);
            common::assert_no_false_negatives(&StandardBloom::from_bytes(&s.to_bytes()).unwrap(), &keys);

            // AtomicBlockedBloom writes BlockedBloom bytes, and reads them back.
            let bytes = a.to_bytes();
            assert_eq!(bytes, b.to_bytes());
            assert_eq!(BlockedBloom::from_bytes(&bytes).unwrap(), b);
            let back = AtomicBlockedBloom::from_bytes(&bytes).unwrap();
            assert_eq!(back.to_bytes(), bytes);
            assert_eq!(back.num_keys(), n);
            common::assert_no_false_negatives(&back, &keys);
            assert_eq!(
                AnyFilter::from_bytes(&bytes).unwrap().kind(),
                FilterKind::BlockedBloom
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Corruption.

/// Every truncation is `Truncated`; every single-byte change is caught by the
/// checksum; and (the shared check) nothing panics.
fn assert_corruption_caught<F: FromBytes>(f: &F) {
    let bytes = f.to_bytes();
    for n in 0..bytes.len() {
        assert_eq!(
            F::from_bytes(&bytes[..n]).err(),
            Some(Error::Format(FormatError::Truncated)),
            "{n}"
        );
    }
    let mut changed = bytes.clone();
    for i in 0..bytes.len() {
        for delta in 1..=255u8 {
            changed[i] = bytes[i] ^ delta;
            assert!(
                F::from_bytes(&changed).is_err(),
                "byte {i} ^ {delta:#04x} decoded"
            );
        }
        changed[i] = bytes[i];
    }
    common::assert_corruption_safe(f, &key_hashes());
}

#[test]
fn every_truncation_and_byte_change_of_a_small_filter_is_an_error() {
    assert_corruption_caught(&tiny_standard());
    assert_corruption_caught(&tiny_blocked());
    assert_corruption_caught(&tiny_counting());
    assert_corruption_caught(&AtomicBlockedBloom::from(tiny_blocked()));
    // A filter of more than one word or block, and an empty one.
    let keys = common::hashes(3, 40);
    let mut s = StandardBloom::new(40, FilterSizing::BitsPerKey(5.0)).unwrap();
    let mut b = BlockedBloom::new(40, FilterSizing::BitsPerKey(20.0)).unwrap();
    let mut c = CountingBloom::new(40, FilterSizing::BitsPerKey(8.0)).unwrap();
    for &h in &keys {
        s.insert_hash(h).unwrap();
        b.insert_hash(h).unwrap();
        c.insert_hash(h).unwrap();
    }
    common::assert_corruption_safe(&s, &keys);
    common::assert_corruption_safe(&b, &keys);
    common::assert_corruption_safe(&c, &keys);
    common::assert_corruption_safe(&StandardBloom::new(1, FilterSizing::Fpr(0.5)).unwrap(), &[]);
}

#[test]
fn forged_frames_with_valid_checksums_never_panic_or_hang() {
    // The payload is plain bits or counters: any value of it decodes.
    common::assert_forgery_safe(&tiny_standard(), common::Payload::AnyValueDecodes);
    common::assert_forgery_safe(&tiny_blocked(), common::Payload::AnyValueDecodes);
    common::assert_forgery_safe(&tiny_counting(), common::Payload::AnyValueDecodes);
}

// ---------------------------------------------------------------------------
// Typed errors for wrong headers.

fn all_tiny_bytes() -> [(FilterKind, Vec<u8>); 3] {
    [
        (FilterKind::StandardBloom, tiny_standard().to_bytes()),
        (FilterKind::BlockedBloom, tiny_blocked().to_bytes()),
        (FilterKind::CountingBloom, tiny_counting().to_bytes()),
    ]
}

/// Decodes `bytes` with every Bloom decoder and `AnyFilter`.
fn decode_all(bytes: &[u8]) -> [(FilterKind, Option<Error>); 5] {
    [
        (FilterKind::StandardBloom, StandardBloom::from_bytes(bytes).err()),
        (FilterKind::BlockedBloom, BlockedBloom::from_bytes(bytes).err()),
        (
            FilterKind::BlockedBloom,
            AtomicBlockedBloom::from_bytes(bytes).err(),
        ),
        (FilterKind::CountingBloom, CountingBloom::from_bytes(bytes).err()),
        (FilterKind::StandardBloom, AnyFilter::from_bytes(bytes).err()), // kind unused
    ]
}

#[test]
fn decoding_into_the_wrong_kind_is_wrong_kind() {
    for (found, bytes) in all_tiny_bytes() {
        let results = decode_all(&bytes);
        for (expected, err) in &results[..4] {
            if *expected == found {
                assert_eq!(*err, None);
            } else {
                assert_eq!(
                    *err,
                    Some(Error::Format(FormatError::WrongKind {
                        expected: *expected,
                        found
                    }))
                );
            }
        }
        assert_eq!(results[4].1, None, "AnyFilter decodes every Bloom kind");
    }
}

/// Asserts that every decoder (typed and `AnyFilter`) gives `want`.
fn assert_all_fail_with(bytes: &[u8], want: FormatError) {
    for (kind, err) in decode_all(bytes) {
        assert_eq!(err, Some(Error::Format(want)), "decoding as {kind:?}");
    }
}

#[test]
fn unknown_kind_version_and_hash_scheme_are_typed_errors() {
    for (frame_kind, bytes) in all_tiny_bytes() {
        // Kind bytes this build does not know.
        for id in [0u8, 18, 100, 255] {
            assert_eq!(FilterKind::from_id(id), None);
            let mut b = bytes.clone();
            b[6] = id;
            common::reseal(&mut b);
            assert_all_fail_with(&b, FormatError::UnknownKind(id));
        }
        // Kinds it knows but that are not Bloom filters.
        for other in FilterKind::ALL.iter().copied().filter(|k| k.id() > 3) {
            let mut b = bytes.clone();
            b[6] = other.id();
            common::reseal(&mut b);
            assert_eq!(
                StandardBloom::from_bytes(&b).err(),
                Some(Error::Format(FormatError::WrongKind {
                    expected: FilterKind::StandardBloom,
                    found: other
                }))
            );
        }
        for version in [0u16, 3, 0x0100, u16::MAX] {
            let mut b = bytes.clone();
            b[4..6].copy_from_slice(&version.to_le_bytes());
            common::reseal(&mut b);
            assert_all_fail_with(&b, FormatError::UnsupportedVersion(version));
        }
        for scheme in [0u8, 4, 255] {
            assert_eq!(HashScheme::from_id(scheme), None);
            let mut b = bytes.clone();
            b[7] = scheme;
            common::reseal(&mut b);
            assert_all_fail_with(&b, FormatError::UnknownHashScheme(scheme));
        }
        // A scheme this build knows, but not the one Bloom kinds use
        // (Parquet's value hash): the filter would answer for other keys.
        let mut b = bytes.clone();
        b[7] = HashScheme::ParquetXxh64.id();
        common::reseal(&mut b);
        let want = Some(Error::WrongHashScheme {
            expected: HashScheme::Xxh3Seeded,
            found: HashScheme::ParquetXxh64,
        });
        assert_eq!(AnyFilter::from_bytes(&b).err(), want);
        let own = match frame_kind {
            FilterKind::StandardBloom => StandardBloom::from_bytes(&b).err(),
            FilterKind::BlockedBloom => BlockedBloom::from_bytes(&b).err(),
            _ => CountingBloom::from_bytes(&b).err(),
        };
        assert_eq!(own, want);
        // The same changes without a fresh checksum: still an error.
        let mut b = bytes.clone();
        b[6] = 200;
        assert!(AnyFilter::from_bytes(&b).is_err());
        let mut b = bytes.clone();
        b[0] = b'X';
        common::reseal(&mut b);
        assert_all_fail_with(&b, FormatError::BadMagic);
        let mut b = bytes.clone();
        *b.last_mut().unwrap() ^= 1;
        assert_all_fail_with(&b, FormatError::ChecksumMismatch);
        let mut b = bytes.clone();
        b.push(0);
        assert_all_fail_with(&b, FormatError::TrailingBytes);
    }
}

#[test]
fn parameters_that_disagree_with_the_payload_are_invalid_parameters() {
    let mut cases: Vec<Vec<u8>> = Vec::new();
    // StandardBloom: bit count 2^63 (a multiple of 64) over an 8-byte payload.
    let mut b = tiny_standard().to_bytes();
    b[20..28].copy_from_slice(&(1u64 << 63).to_le_bytes());
    cases.push(b);
    // BlockedBloom: u32::MAX blocks over one block of payload.
    let mut b = tiny_blocked().to_bytes();
    b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    cases.push(b);
    // CountingBloom: the largest multiple of 16 counters.
    let mut b = tiny_counting().to_bytes();
    b[20..28].copy_from_slice(&(!15u64).to_le_bytes());
    cases.push(b);
    // Zero probes, and more probes than any filter uses.
    for probes in [0u32, 31, u32::MAX] {
        let mut b = tiny_standard().to_bytes();
        b[28..32].copy_from_slice(&probes.to_le_bytes());
        cases.push(b);
        let mut b = tiny_blocked().to_bytes();
        b[24..28].copy_from_slice(&probes.to_le_bytes());
        cases.push(b);
    }
    for mut b in cases {
        common::reseal(&mut b);
        assert!(
            matches!(
                AnyFilter::from_bytes(&b),
                Err(Error::Format(FormatError::InvalidParameters(_)))
            ),
            "{:?}",
            AnyFilter::from_bytes(&b)
        );
    }
}

#[test]
fn huge_declared_lengths_on_tiny_input_are_errors_without_allocating() {
    for (_, bytes) in all_tiny_bytes() {
        for payload_len in [u64::MAX, u64::MAX - 7, 1 << 62, 1 << 40, usize::MAX as u64 - 20] {
            let mut b = bytes.clone();
            b[12..20].copy_from_slice(&payload_len.to_le_bytes());
            assert_all_fail_with(&b, FormatError::Truncated);
            common::reseal(&mut b);
            assert_all_fail_with(&b, FormatError::Truncated);
        }
        let mut b = bytes.clone();
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        common::reseal(&mut b);
        assert_all_fail_with(&b, FormatError::Truncated);
    }
    // A bare header (plus checksum) that claims a terabyte payload.
    let mut b = Vec::new();
    b.extend_from_slice(b"AMQF");
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&[FilterKind::StandardBloom.id(), 1]);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(1u64 << 40).to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    common::reseal(&mut b);
    assert_all_fail_with(&b, FormatError::Truncated);
    // Lengths that overflow when added.
    b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    b[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    common::reseal(&mut b);
    assert_all_fail_with(&b, FormatError::Truncated);
    // No input at all, and only the magic.
    assert_all_fail_with(&[], FormatError::Truncated);
    assert_all_fail_with(b"AMQF", FormatError::Truncated);
}

// ---------------------------------------------------------------------------
// Forged key counts.

/// Decodes `bytes` with its key count (at `at`) replaced by `count`.
fn with_count(bytes: &[u8], at: usize, count: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 8].copy_from_slice(&count.to_le_bytes());
    common::reseal(&mut b);
    b
}

/// A key count is at most 64 per bit (counter): decoding refuses more, even
/// under a valid checksum, and inserts and unions saturate there instead of
/// overflowing (a panic with overflow checks, a wrap to 0 without).
#[test]
fn forged_key_counts_are_refused_and_counts_saturate() {
    // (bytes, offset of the key count: header 20 + earlier parameters, cells)
    let standard = tiny_standard().to_bytes();
    let blocked = tiny_blocked().to_bytes();
    let counting = tiny_counting().to_bytes();
    let cases: [(&[u8], usize, u64); 3] = [(&standard, 32, 64), (&blocked, 28, 512), (&counting, 32, 32)];
    for (bytes, at, cells) in cases {
        let max = 64 * cells;
        for forged in [u64::MAX, max + 1] {
            let b = with_count(bytes, at, forged);
            assert!(
                matches!(
                    AnyFilter::from_bytes(&b),
                    Err(Error::Format(FormatError::InvalidParameters(_)))
                ),
                "count {forged} decoded"
            );
        }
        let b = with_count(bytes, at, max);
        assert_eq!(AnyFilter::from_bytes(&b).unwrap().num_keys(), max as usize);
    }

    let mut s = StandardBloom::from_bytes(&with_count(&standard, 32, 64 * 64)).unwrap();
    s.insert(b"one more").unwrap();
    assert_eq!(s.num_keys(), 64 * 64);
    assert_eq!(s.expected_fpr(), 1.0);
    let other = s.clone();
    s.union(&other).unwrap();
    assert_eq!(s.num_keys(), 64 * 64);

    let mut b = BlockedBloom::from_bytes(&with_count(&blocked, 28, 64 * 512)).unwrap();
    b.insert(b"one more").unwrap();
    assert_eq!(b.num_keys(), 64 * 512);
    assert_eq!(b.expected_fpr(), 1.0);
    let other = b.clone();
    b.union(&other).unwrap();
    assert_eq!(b.num_keys(), 64 * 512);

    let a = AtomicBlockedBloom::from_bytes(&with_count(&blocked, 28, 64 * 512)).unwrap();
    a.insert(b"one more").unwrap();
    assert_eq!(a.num_keys(), 64 * 512);

    let mut c = CountingBloom::from_bytes(&with_count(&counting, 32, 64 * 32)).unwrap();
    c.insert(b"one more").unwrap();
    assert_eq!(c.num_keys(), 64 * 32);
    assert_eq!(c.expected_fpr(), 1.0);
}
