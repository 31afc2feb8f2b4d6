//! Unit tests of the module's frames (version 1 and 2 fields checked one
//! by one) and of empty shards in both sharded layouts.

use super::query::LINE_DEPTH;
use super::*;
use crate::format::ByteWriter;
use crate::FormatError;
use alloc::vec;

use super::legacy::SHARD_RECORD_BYTES_V1;

/// A version-1 frame with a valid checksum around hand-made shard
/// records (records first, 10 bytes each, then the words).
fn frame(num_keys: u64, shards: &[(u32, u32, u8, u8)], words: usize) -> Vec<u8> {
    let mut p = ByteWriter::default();
    p.u64(num_keys).u64(shards.len() as u64);
    let params = p.into_vec();
    let mut w = ByteWriter::default();
    w.bytes(b"AMQF").u16(1).u8(FilterKind::Ribbon.id()).u8(1);
    w.u32(params.len() as u32)
        .u64((shards.len() * SHARD_RECORD_BYTES_V1 + words * 8) as u64)
        .bytes(&params);
    for &(blocks, upper, r, seed) in shards {
        w.u32(blocks).u32(upper).u8(r).u8(seed);
    }
    w.u64s(&vec![0; words]);
    let mut b = w.into_vec();
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

/// A version-2 frame with a valid checksum around a hand-made shard
/// table: `r` and the extra-column start as parameters, the words, the
/// block starts, the seeds.
fn frame_v2(
    num_keys: u64,
    total_blocks: u64,
    rule: (u8, u16),
    starts: &[u32],
    seeds: &[u8],
    words: usize,
) -> Vec<u8> {
    let mut p = ByteWriter::default();
    p.u64(num_keys)
        .u64(seeds.len() as u64)
        .u64(total_blocks)
        .u8(rule.0)
        .u16(rule.1);
    let len = words * 8 + starts.len() * 4 + seeds.len();
    format::encode(FilterKind::Ribbon, &p.into_vec(), len, |w| {
        w.u64s(&vec![0; words]);
        for &s in starts {
            w.u32(s);
        }
        w.bytes(seeds);
    })
}

#[test]
fn decoder_checks_every_shard_field() {
    // Version 1, one extra-column block: kept as records, written back
    // as the same version-1 bytes.
    let v1 = frame(5, &[(2, 1, 3, 0)], 7);
    let f = Ribbon::from_bytes(&v1).unwrap();
    assert!(matches!(f.layout, Layout::Legacy(_)));
    assert_eq!(f.to_bytes(), v1);
    assert_eq!((f.num_shards(), f.num_slots(), f.attempts()), (1, 128, 1));
    // Version 1 without extra columns: the compact layout, equal to the
    // same shards written as version 2.
    let two = [(2, 2, 3, 0), (0, 0, 3, 0), (3, 3, 3, 5)];
    let f = Ribbon::from_bytes(&frame(5, &two, 15)).unwrap();
    assert!(matches!(f.layout, Layout::Compact(_)));
    assert_eq!(
        Ok(f),
        Ribbon::from_bytes(&frame_v2(5, 5, (3, 256), &[0, 2, 2, 5], &[0, 0, 5], 15))
    );
    type Case<'a> = (u64, &'a [(u32, u32, u8, u8)], usize);
    let bad: [Case<'_>; 12] = [
        (5, &[(2, 1, 0, 0)], 2),                // 0 columns
        (5, &[(2, 1, 33, 0)], 67),              // 33 columns
        (5, &[(2, 3, 3, 0)], 6),                // extra columns past the end
        (5, &[(2, 1, 32, 0)], 65),              // 33 columns in block 1
        (5, &[(1, 1, 3, 0)], 3),                // one block: no room for a row
        (5, &[(2, 2, 3, 64)], 6),               // seed beyond the attempts
        (500, &[(2, 2, 3, 0)], 6),              // more keys than slots
        (0, &[(2, 2, 3, 0)], 6),                // shards but no keys
        (5, &[], 0),                            // keys but no shards
        (5, &[(2, 2, 3, 0)], 7),                // payload longer than the shards
        (5, &[(2, 2, 3, 0)], 5),                // payload shorter
        (5, &[(u32::MAX, u32::MAX, 32, 0)], 0), // huge shard, tiny payload
    ];
    for (i, (keys, shards, words)) in bad.iter().enumerate() {
        assert!(
            Ribbon::from_bytes(&frame(*keys, shards, *words)).is_err(),
            "v1 case {i} decoded"
        );
    }
    // Version 2: well formed, then each field out of range.
    assert!(Ribbon::from_bytes(&frame_v2(5, 4, (3, 256), &[0, 2, 4], &[0, 1], 12)).is_ok());
    assert!(Ribbon::from_bytes(&frame_v2(5, 4, (3, 1), &[0, 2, 4], &[0, 1], 15)).is_ok());
    type CaseV2<'a> = (u64, u64, (u8, u16), &'a [u32], &'a [u8], usize);
    let bad: [CaseV2<'_>; 16] = [
        (5, 4, (0, 256), &[0, 2, 4], &[0, 1], 0),    // 0 columns
        (5, 4, (33, 256), &[0, 2, 4], &[0, 1], 132), // 33 columns
        (5, 4, (32, 255), &[0, 2, 4], &[0, 1], 128), // 33 columns in a block
        (5, 4, (3, 257), &[0, 2, 4], &[0, 1], 12),   // extra-column start past the period
        (5, 4, (3, 256), &[1, 2, 4], &[0, 1], 12),   // starts not at block 0
        (5, 4, (3, 256), &[0, 2, 3], &[0, 1], 12),   // ends before the blocks do
        (5, 4, (3, 256), &[0, 3, 2], &[0, 1], 12),   // starts fall
        (5, 4, (3, 256), &[0, 1, 4], &[0, 1], 12),   // one block: no room for a row
        (5, 4, (3, 256), &[0, 2, 4], &[0, 64], 12),  // seed beyond the attempts
        (5, 4, (3, 256), &[0, 0, 4], &[1, 0], 12),   // an empty shard with a seed
        (500, 4, (3, 256), &[0, 2, 4], &[0, 1], 12), // more keys than slots
        (0, 4, (3, 256), &[0, 2, 4], &[0, 1], 12),   // shards but no keys
        (5, 0, (3, 256), &[0], &[], 0),              // keys but no shards
        (5, 4, (3, 256), &[0, 2, 4], &[0, 1], 13),   // payload longer
        (5, 4, (3, 256), &[0, 2, 4], &[0, 1], 11),   // payload shorter
        (5, u32::MAX as u64 + 1, (3, 256), &[0, 2, 4], &[0, 1], 0), // too many blocks
    ];
    for (i, (keys, blocks, rule, starts, seeds, words)) in bad.iter().enumerate() {
        assert!(
            Ribbon::from_bytes(&frame_v2(*keys, *blocks, *rule, starts, seeds, *words)).is_err(),
            "v2 case {i} decoded"
        );
    }
}

#[test]
fn huge_shard_count_is_refused_before_allocating() {
    let mut p = ByteWriter::default();
    p.u64(1).u64(u64::MAX).u64(2).u8(7).u16(256);
    let bytes = format::encode(FilterKind::Ribbon, &p.into_vec(), 0, |_| {});
    assert_eq!(
        Ribbon::from_bytes(&bytes),
        Err(Error::Format(FormatError::Truncated))
    );
    let mut p = ByteWriter::default();
    p.u64(1).u64(u64::MAX);
    let mut b = frame(1, &[], 0);
    b.truncate(20);
    b[8..12].copy_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&p.into_vec());
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    assert_eq!(Ribbon::from_bytes(&b), Err(Error::Format(FormatError::Truncated)));
}

/// `n` distinct hashes that all fall in the first of two shards, so the
/// second stays empty.
fn first_shard_only(n: usize) -> Vec<KeyHash> {
    (0..u64::MAX)
        .map(|i| KeyHash::from_well_mixed(crate::hash::remix(i, 3)))
        .filter(|&h| super::row::shard_of(super::row::mixed(h.get()), 2) == 0)
        .take(n)
        .collect()
}

#[test]
fn empty_shards_answer_no() {
    // Two shards of input, every key in the first: the second stays empty.
    let k = KeyHash::from_well_mixed;
    let keys = first_shard_only(SHARD_KEYS + 1);
    let params = RibbonParams::with_result_bits(4).unwrap().without_bumping();
    let f = Ribbon::build_with(&keys, &params).unwrap();
    assert_eq!((f.num_shards(), f.num_keys()), (2, SHARD_KEYS + 1));
    assert!(keys.iter().all(|&h| f.contains_hash(h)));
    let back = Ribbon::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(back, f);
    let absent = (0..10_000u64).filter(|&h| f.contains_hash(k(h))).count();
    assert!(absent < 2_000, "{absent}");
    // The batch path agrees, keys in the empty shard included.
    let probe: Vec<KeyHash> = (0..10_000u64).map(k).collect();
    let mut out = vec![false; probe.len()];
    f.contains_hashes(&probe, &mut out);
    assert!(probe.iter().zip(&out).all(|(&h, &o)| f.contains_hash(h) == o));
}

#[test]
fn empty_shards_answer_no_in_the_two_line_layout() {
    let k = KeyHash::from_well_mixed;
    let keys = first_shard_only(lines::LINE_SHARD_KEYS + 1);
    let params = RibbonParams::with_result_bits(7)
        .unwrap()
        .with_two_line_layout()
        .unwrap()
        .without_bumping();
    let f = Ribbon::build_with(&keys, &params).unwrap();
    assert_eq!((f.num_shards(), f.num_keys()), (2, lines::LINE_SHARD_KEYS + 1));
    assert!(keys.iter().all(|&h| f.contains_hash(h)));
    let absent = (0..10_000u64).filter(|&h| f.contains_hash(k(h))).count();
    assert!(absent < 500, "{absent}");
    // The batch path agrees at every length around its pipeline depth
    // (head, steady loop and tail), keys in the empty shard included.
    let probe: Vec<KeyHash> = (0..10_000u64).chain([7]).map(k).collect();
    let shard = |h: KeyHash| row::shard_of(row::mixed(h.get()), 2);
    let empty_shard = probe.iter().filter(|&&h| shard(h) != shard(k(7))).count();
    assert!(empty_shard > 1_000, "{empty_shard}");
    for len in [
        0,
        1,
        LINE_DEPTH - 1,
        LINE_DEPTH,
        LINE_DEPTH + 1,
        3 * LINE_DEPTH + 5,
        probe.len(),
    ] {
        let probe = &probe[probe.len() - len..];
        let mut out = vec![true; len];
        f.contains_hashes(probe, &mut out);
        assert!(
            probe.iter().zip(&out).all(|(&h, &o)| f.contains_hash(h) == o),
            "{len}"
        );
    }
}
