//! The Parquet framing target: arbitrary bytes, optionally behind a valid
//! `BloomFilterHeader` (so mutations also reach the bitset and the length
//! checks), into `ParquetHeader::parse`, `ParquetBloom::read_parquet` and
//! `ParquetBloom::from_parquet_bytes`.
//!
//! Checks: `Ok` or a documented error (`Truncated`, `TrailingBytes`,
//! `InvalidParquetHeader`, `UnsupportedParquetFilter`), never a panic; no
//! more heap than a small multiple of the input; the three readers agree on
//! the lengths; a filter read holds exactly the input's bitset, answers
//! single and batched queries alike, and its own bytes read back to the same
//! bits.

use amq::hash::ParquetHash;
use amq::parquet::ParquetHeader;
use amq::{Error, FormatError, ParquetBloom};

use crate::alloc::peak_during;
use crate::decode::allocation_bound;

/// The canonical header for a bitset of `n` bytes (a positive multiple of 32).
fn header(n: u32) -> Vec<u8> {
    let mut h = vec![0x15];
    let mut z = u64::from(n) << 1;
    while z >= 0x80 {
        h.push((z as u8) | 0x80);
        z >>= 7;
    }
    h.push(z as u8);
    for _ in 0..3 {
        h.extend([0x1c, 0x1c, 0, 0]);
    }
    h.push(0);
    h
}

/// The bytes the readers see for fuzzer input `data`: the first byte's
/// bit 0 asks for a valid header in front of the rest, declaring the rest's
/// length rounded down to whole blocks (at least one).
pub fn effective_bytes(data: &[u8]) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 0 {
        return Some(rest.to_vec());
    }
    let n = (rest.len() / 32 * 32).clamp(32, i32::MAX as usize / 32 * 32) as u32;
    let mut bytes = header(n);
    bytes.extend_from_slice(rest);
    Some(bytes)
}

fn assert_documented(e: &Error) {
    assert!(
        matches!(
            e,
            Error::Format(
                FormatError::Truncated
                    | FormatError::TrailingBytes
                    | FormatError::InvalidParquetHeader(_)
                    | FormatError::UnsupportedParquetFilter(_)
            )
        ),
        "undocumented error {e:?}"
    );
}

pub fn decode_framed(data: &[u8]) {
    let Some(bytes) = effective_bytes(data) else {
        return;
    };
    let (read, peak) = peak_during(|| ParquetBloom::read_parquet(&bytes));
    assert!(
        peak <= allocation_bound(bytes.len()),
        "reading {} bytes allocated {peak}",
        bytes.len()
    );
    let header = ParquetHeader::parse(&bytes);
    let exact = ParquetBloom::from_parquet_bytes(&bytes);
    match read {
        Ok((f, used)) => {
            let h = header.expect("a filter was read, so its header parses");
            assert_eq!(used, h.header_len() + h.bitset_len());
            assert_eq!(f.num_bytes(), h.bitset_len());
            assert_eq!(
                f.parquet_bitset(),
                &bytes[h.header_len()..used],
                "bitset not read faithfully"
            );
            assert_eq!(exact.is_ok(), used == bytes.len());
            if let Err(e) = &exact {
                assert_eq!(e, &Error::Format(FormatError::TrailingBytes));
            }
            let again = ParquetBloom::from_parquet_bytes(&f.to_parquet_bytes()).expect("own bytes read back");
            assert_eq!(again.parquet_bitset(), f.parquet_bitset());
            check_queries(&f);
            assert!(f.num_keys() as u64 <= f.num_bytes() as u64 * 8 * 64);
        }
        Err(e) => {
            assert_documented(&e);
            assert!(exact.is_err());
            if let Err(he) = header {
                assert_eq!(e, Error::Format(he), "read and parse disagree on the header");
            }
        }
    }
}

/// A filter answers single and batched queries alike, and reports
/// probabilities between 0 and 1.
pub fn check_queries(f: &ParquetBloom) {
    let probes: Vec<ParquetHash> = (0..64u64)
        .map(|i| ParquetHash::from_xxh64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555))
        .collect();
    let mut out = vec![false; probes.len()];
    f.contains_hashes(&probes, &mut out);
    for (&p, &o) in probes.iter().zip(&out) {
        assert_eq!(
            f.contains_hash(p),
            o,
            "contains_hashes disagrees with contains_hash"
        );
    }
    for p in [f.expected_fpr(), f.fill_ratio()] {
        assert!((0.0..=1.0).contains(&p), "{p}");
    }
}
