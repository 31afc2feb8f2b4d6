//! The infix range filter's decoder target: arbitrary bytes, optionally
//! given the filter's magic and version and re-sealed with a valid
//! checksum, so mutations reach the checks behind it, into
//! `InfixRange::from_bytes` (and the same bytes as a `KeyRangeFilter` of
//! version 2, which holds one).
//!
//! Checks what the filter promises for any bytes it decodes: `Ok` or a
//! format error, never a panic, and no more heap than a small multiple of
//! the input; a decoded filter re-encodes to exactly its input and reports
//! its own size; and queries with any byte strings (slices of the input,
//! the smallest key and changes of it) never panic, agree with their two
//! halves (`prepare_range`, `may_contain_values`), and are monotone: a
//! range that may hold a key is inside no range that answers `false`.

use std::ops::Bound;

use amq::range::{InfixRange, KeyRangeFilter};
use amq::Error;

use crate::alloc::peak_during;
use crate::decode::{allocation_bound, reseal};

/// The bytes the target hands to `from_bytes` for fuzzer input `data`: its
/// first byte says whether to write the magic and version (bit 1) and
/// re-seal the checksum (bit 0).
pub fn effective_bytes(data: &[u8]) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    let mut bytes = rest.to_vec();
    if mode & 2 != 0 && bytes.len() >= 5 {
        bytes[..5].copy_from_slice(b"AMQI\x01");
    }
    if mode & 1 != 0 {
        reseal(&mut bytes);
    }
    Some(bytes)
}

/// Byte strings to ask a filter about, in order: slices of the input and
/// the byte strings around the first key-like slice.
fn queries(input: &[u8]) -> Vec<Vec<u8>> {
    let mut q: Vec<Vec<u8>> = vec![Vec::new(), vec![0], vec![0xff; 9]];
    for (i, w) in input.chunks(5).take(24).enumerate() {
        q.push(w.to_vec());
        q.push(input[i..input.len().min(i + 20)].to_vec());
        q.push([w, &[0]].concat());
    }
    q.sort();
    q.dedup();
    q
}

fn bounds(k: &[u8]) -> [Bound<&[u8]>; 3] {
    [Bound::Included(k), Bound::Excluded(k), Bound::Unbounded]
}

/// Every check a decoded filter must pass.
pub fn check_decoded(f: &InfixRange, bytes: &[u8]) {
    assert_eq!(f.to_bytes(), bytes, "decoding is not faithful");
    assert_eq!(f.size_in_bytes(), bytes.len());
    assert!((0.0..=1.0).contains(&f.expected_fpr()));
    let q = queries(bytes);
    for lo in q.iter().take(10) {
        for hi in q.iter().rev().take(10) {
            for (l, h) in bounds(lo).into_iter().flat_map(|l| bounds(hi).map(|h| (l, h))) {
                let answer = f.may_contain_range(l, h);
                let halves = f.prepare_range(l, h).is_some_and(|v| f.may_contain_values(v));
                assert_eq!(answer, halves, "{l:?}..{h:?}");
            }
        }
    }
    // Nested ranges: q[a..=b] inside q[c..=d] for c <= a <= b <= d.
    let n = q.len();
    for (a, b, c, d) in [(1, 2, 0, n - 1), (2, 3, 1, 4), (n / 2, n / 2, 0, n - 1)] {
        if a <= b && c <= a && b <= d && d < n {
            let inner = f.may_contain_range(Bound::Included(&q[a][..]), Bound::Included(&q[b][..]));
            let outer = f.may_contain_range(Bound::Included(&q[c][..]), Bound::Included(&q[d][..]));
            assert!(
                !inner || outer,
                "a range answers true inside one that answers false"
            );
        }
    }
}

/// The decoder target.
pub fn decode_infix_range(data: &[u8]) {
    let Some(bytes) = effective_bytes(data) else {
        return;
    };
    let (decoded, peak) = peak_during(|| InfixRange::from_bytes(&bytes));
    // A digit of an alphabet given as a span is 9 bytes, held as the key
    // map's digit (96 bytes, its alphabet's words and ranks beside it).
    let bound = allocation_bound(bytes.len()) + bytes.len() / 9 * 96;
    assert!(peak <= bound, "decoding {} bytes allocated {peak}", bytes.len());
    match decoded {
        Ok(f) => check_decoded(&f, &bytes),
        Err(e) => assert!(
            matches!(e, Error::Format(_)),
            "a decoder error that is not about the bytes: {e:?}"
        ),
    }
    // The same bytes inside a byte-key range filter of version 2.
    let mut framed = b"AMQR\x02".to_vec();
    framed.extend_from_slice(&bytes);
    framed.extend_from_slice(&[0; 8]);
    reseal(&mut framed);
    if let Ok(f) = KeyRangeFilter::from_bytes(&framed) {
        assert_eq!(f.to_bytes(), framed);
        let _ = f.may_contain_range(Bound::Included(&bytes[..bytes.len().min(9)]), Bound::Unbounded);
    }
}
