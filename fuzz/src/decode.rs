//! The decoder target: arbitrary bytes, optionally shaped into a plausible
//! header and re-sealed with a valid checksum (so the fuzzer reaches the
//! parameter checks behind the checksum), into `from_bytes`.
//!
//! Checks: `Ok` or `Err`, never a panic; no more heap than a small multiple
//! of the input; and a decoded filter answers every query consistently,
//! reports sane figures and re-encodes to exactly its input.

use amq::format::{payload_padding, CHECKSUM_LEN, FORMAT_VERSION, HEADER_LEN, MAGIC};
use amq::{Filter, FilterKind, FromBytes, Insert, KeyHash};

use crate::alloc::peak_during;

/// Rewrites the trailing checksum to match the bytes before it.
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() < CHECKSUM_LEN {
        return;
    }
    let end = bytes.len() - CHECKSUM_LEN;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&sum.to_le_bytes());
}

/// Makes the header name `kind`, this format version and hash scheme, and
/// declare lengths that add up to the input's (parameter length taken from
/// the input, reduced into range), with the version's zero padding before
/// the payload.
pub fn shape_header(bytes: &mut [u8], kind: FilterKind) {
    let Some(room) = bytes.len().checked_sub(HEADER_LEN + CHECKSUM_LEN) else {
        return;
    };
    bytes[0..4].copy_from_slice(&MAGIC);
    bytes[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes[6] = kind.id();
    bytes[7] = kind.hash_scheme().id();
    let declared = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    let mut params = declared % (room + 1);
    // Shrink the parameters until they and their padding fit (parameters
    // and padding take at least 44 bytes: below that no frame fits, and
    // the lengths are left to fail as `Truncated`).
    while params > 0 && params + payload_padding(FORMAT_VERSION, params) > room {
        params -= 1;
    }
    let pad = payload_padding(FORMAT_VERSION, params).min(room - params);
    let start = HEADER_LEN + params;
    bytes[start..start + pad].fill(0);
    bytes[8..12].copy_from_slice(&(params as u32).to_le_bytes());
    bytes[12..20].copy_from_slice(&((room - params - pad) as u64).to_le_bytes());
}

/// Heap a decoder may use for `n` input bytes.
pub fn allocation_bound(n: usize) -> usize {
    4 * n + 4096
}

/// Every check a decoded filter must pass.
pub fn check_decoded(f: &dyn Filter, bytes: &[u8]) {
    let again = f.to_bytes();
    if bytes.get(4..6) == Some(&FORMAT_VERSION.to_le_bytes()[..]) {
        assert_eq!(again, bytes, "decoding is not faithful");
    } else {
        // An older version re-encodes in the current one, to the same filter.
        let back = amq::AnyFilter::from_bytes(&again).expect("re-encoded bytes decode");
        assert_eq!(
            back.to_bytes(),
            again,
            "re-encoding an older version is not stable"
        );
    }
    let probes: Vec<KeyHash> = (0..64u64).map(amq::hash_u64).collect();
    let mut out = vec![false; probes.len()];
    f.contains_hashes(&probes, &mut out);
    for (&h, &o) in probes.iter().zip(&out) {
        assert_eq!(
            f.contains_hash(h),
            o,
            "contains_hashes disagrees with contains_hash"
        );
    }
    let p = f.expected_fpr();
    assert!((0.0..=1.0).contains(&p), "expected_fpr {p}");
    assert!(f.bits_per_key() >= 0.0);
    // Some filters keep padding beyond their serialized payload (for
    // branch-free queries), never more than the input implies.
    assert!(
        f.size_in_bytes() <= allocation_bound(bytes.len()),
        "reports more memory than its bytes imply"
    );
}

/// The bytes a decoder target hands to `from_bytes` for fuzzer input
/// `data`: its first byte says whether to shape the header (bit 1, with the
/// kind from bits 2.. when `kind` is `None`) and re-seal (bit 0).
pub fn effective_bytes(data: &[u8], kind: Option<FilterKind>) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    let mut bytes = rest.to_vec();
    if mode & 2 != 0 {
        let kinds = FilterKind::ALL;
        let k = kind.unwrap_or(kinds[(mode >> 2) as usize % kinds.len()]);
        shape_header(&mut bytes, k);
    }
    if mode & 1 != 0 {
        reseal(&mut bytes);
    }
    Some(bytes)
}

/// The whole decoder target for type `F`; `kind` is what to shape headers
/// into (`None`: the first input byte picks one).
pub fn decode<F: FromBytes>(data: &[u8], kind: Option<FilterKind>) {
    let Some(bytes) = effective_bytes(data, kind) else {
        return;
    };
    let (decoded, peak) = peak_during(|| F::from_bytes(&bytes));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "decoding {} bytes allocated {peak}",
        bytes.len()
    );
    if let Ok(f) = decoded {
        check_decoded(&f, &bytes);
        insert_into_decoded(&bytes);
    }
}

/// A decoded dynamic filter takes more keys: whatever counts its header
/// claimed, an insert neither panics nor loses the key, and the FPR stays
/// a probability.
fn insert_into_decoded(bytes: &[u8]) {
    let Ok(any) = amq::AnyFilter::from_bytes(bytes) else {
        return;
    };
    let h = amq::hash_key(b"inserted after decoding");
    let mut f = any;
    let after: Option<Box<dyn Filter>> = match f.insert_hash(h) {
        Ok(()) => Some(Box::new(f)),
        Err(amq::Error::Full | amq::Error::TooManyCopies)
            if matches!(
                f.kind(),
                FilterKind::CuckooFilter | FilterKind::QuotientFilter | FilterKind::ExpandingQuotientFilter
            ) =>
        {
            None
        }
        Err(amq::Error::Unsupported { kind, .. }) => {
            assert_eq!(kind, f.kind());
            None
        }
        Err(e) => panic!("undocumented insert error {e:?}"),
    };
    if let Some(f) = after {
        assert!(f.contains_hash(h), "false negative after decoding");
        let p = f.expected_fpr();
        assert!((0.0..=1.0).contains(&p), "expected_fpr {p} after an insert");
    }
}

/// The decoder target for a [`ParquetBloom`](amq::ParquetBloom) in amq's
/// frame, which has its own decoder (it is not an amq [`Filter`]): the same
/// checks, through its own API.
pub fn decode_parquet(data: &[u8]) {
    let Some(bytes) = effective_bytes(data, Some(FilterKind::ParquetBloom)) else {
        return;
    };
    let (decoded, peak) = peak_during(|| amq::ParquetBloom::from_bytes(&bytes));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "decoding {} bytes allocated {peak}",
        bytes.len()
    );
    // Never through the amq-hashed decoder.
    assert!(amq::AnyFilter::from_bytes(&bytes).is_err());
    let Ok(mut f) = decoded else {
        return;
    };
    assert_eq!(f.to_bytes(), bytes, "decoding is not faithful");
    crate::parquet::check_queries(&f);
    f.insert(&7i64).expect("Bloom inserts never fail");
    assert!(f.contains(&7i64), "false negative after decoding");
    assert!((0.0..=1.0).contains(&f.expected_fpr()));
}
