//! Borrowed views (`amq::FilterView` and the per-kind views): they answer
//! exactly as the owned filters do, at any address, for both format
//! versions; bytes that are truncated, corrupt or of a kind without a view
//! give typed errors, never a panic or an out-of-bounds read.

mod common;

use amq::bloom::{BlockedBloomView, StandardBloomView};
use amq::ribbon::RibbonView;
use amq::xor::{BinaryFuse16View, BinaryFuse32View, BinaryFuse8View, Xor16View, Xor8View};
use amq::{
    AnyFilter, Error, Filter, FilterKind, FilterSizing, FilterView, FormatError, KeyHash, PreparedHash,
};
use proptest::prelude::*;

/// The kinds with a view.
const VIEW_KINDS: [FilterKind; 8] = [
    FilterKind::StandardBloom,
    FilterKind::BlockedBloom,
    FilterKind::Xor8,
    FilterKind::Xor16,
    FilterKind::BinaryFuse8,
    FilterKind::BinaryFuse16,
    FilterKind::BinaryFuse32,
    FilterKind::Ribbon,
];

fn build(kind: FilterKind, keys: &[KeyHash], bits_per_key: f64) -> AnyFilter {
    AnyFilter::build(kind, keys, FilterSizing::BitsPerKey(bits_per_key)).unwrap()
}

/// Everything a view says equals what the owned filter says.
fn assert_agrees(view: &FilterView<'_>, owned: &AnyFilter, probes: &[KeyHash]) {
    assert_eq!(view.kind(), owned.kind());
    assert_eq!(view.num_keys(), owned.num_keys());
    if owned.kind() == FilterKind::Ribbon {
        // The owned filter counts its padded in-memory words and shard
        // table; the view, the bytes it reads.
        let bytes = owned.to_bytes();
        let params = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        let payload = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
        assert!(params > 0);
        assert_eq!(view.size_in_bytes(), payload);
    } else {
        assert_eq!(view.size_in_bytes(), owned.size_in_bytes());
    }
    assert_eq!(view.expected_fpr().to_bits(), owned.expected_fpr().to_bits());
    assert_eq!(view.to_bytes(), owned.to_bytes());
    let mut many = vec![false; probes.len()];
    view.contains_hashes(probes, &mut many);
    let mut prepared_owned = PreparedHash::new(KeyHash::from_well_mixed(0));
    for (&h, &m) in probes.iter().zip(&many) {
        let want = owned.contains_hash(h);
        assert_eq!(
            view.contains_hash(h),
            want,
            "hash {:#x} in {:?}",
            h.get(),
            owned.kind()
        );
        assert_eq!(m, want, "contains_hashes, hash {:#x}", h.get());
        let mut p = PreparedHash::new(h);
        assert_eq!(view.contains_prepared(&mut p), want);
        prepared_owned = PreparedHash::new(h);
        assert_eq!(owned.contains_prepared(&mut prepared_owned), want);
        view.prefetch_hash(h);
    }
    let _ = prepared_owned;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random filters of every kind with a view: the view answers as the
    /// owned filter for its keys (no false negatives) and for other hashes,
    /// in both format versions.
    #[test]
    fn views_answer_as_the_owned_filters(
        kind_index in 0usize..VIEW_KINDS.len(),
        n in 0usize..3_000,
        seed in any::<u64>(),
        bits_per_key in 4.0f64..20.0,
    ) {
        let kind = VIEW_KINDS[kind_index];
        let keys = common::hashes(seed, n);
        let owned = build(kind, &keys, bits_per_key);
        let bytes = owned.to_bytes();
        let mut probes = keys.clone();
        probes.extend(common::hashes(seed ^ 0x5555, 2_000));
        let view = FilterView::new(&bytes).unwrap();
        assert_agrees(&view, &owned, &probes);
        prop_assert!(keys.iter().all(|&h| view.contains_hash(h)), "false negative");
        if kind != FilterKind::Ribbon {
            // Version 1 of the same filter: only the padding differs.
            let v1 = common::downgrade_to_v1(&bytes);
            let old = FilterView::new(&v1).unwrap();
            assert_agrees(&old, &owned, &probes);
            assert_agrees(&FilterView::trusted(&v1).unwrap(), &owned, &probes);
        }
    }
}

/// Views read with unaligned loads: a frame at any offset of a cache line
/// answers the same.
#[test]
fn views_work_at_every_alignment() {
    let keys = common::hashes(7, 5_000);
    let probes: Vec<KeyHash> = keys.iter().copied().chain(common::hashes(8, 5_000)).collect();
    for kind in VIEW_KINDS {
        let owned = build(kind, &keys, 10.0);
        let bytes = owned.to_bytes();
        let mut buf = vec![0u8; bytes.len() + 64];
        for offset in 0..64 {
            buf[offset..offset + bytes.len()].copy_from_slice(&bytes);
            let at = &buf[offset..offset + bytes.len()];
            let view = FilterView::new(at).unwrap();
            assert_agrees(&view, &owned, &probes);
        }
    }
}

/// A Ribbon filter with the two-line layout: the view answers as the owned
/// filter, at every offset of a cache line, through `FilterView` and
/// `RibbonView`, and the empty and one-key filters too.
#[test]
fn two_line_ribbon_views_agree() {
    let params = amq::RibbonParams::with_result_bits(7)
        .unwrap()
        .with_two_line_layout()
        .unwrap();
    for n in [0usize, 1, 3, 5_000, 20_000] {
        let keys = common::hashes(n as u64 + 11, n);
        let f = amq::Ribbon::build_with(&keys, &params).unwrap();
        assert!(f.is_two_line_layout());
        let owned = AnyFilter::from_bytes(&f.to_bytes()).unwrap();
        let bytes = owned.to_bytes();
        let probes: Vec<KeyHash> = keys
            .iter()
            .copied()
            .chain(common::hashes(n as u64 + 12, 5_000))
            .collect();
        let mut buf = vec![0u8; bytes.len() + 64];
        for offset in [0, 3, 17, 63] {
            buf[offset..offset + bytes.len()].copy_from_slice(&bytes);
            let at = &buf[offset..offset + bytes.len()];
            assert_agrees(&FilterView::new(at).unwrap(), &owned, &probes);
            assert_agrees(&FilterView::trusted(at).unwrap(), &owned, &probes);
            let typed = RibbonView::new(at).unwrap();
            assert!(probes
                .iter()
                .all(|&h| typed.contains_hash(h) == f.contains_hash(h)));
            assert_eq!(typed.num_shards(), f.num_shards());
            assert_eq!(typed.to_filter().unwrap(), f);
        }
    }
}

/// The per-kind views agree with `FilterView` and refuse other kinds.
#[test]
fn typed_views_take_only_their_kind() {
    let keys = common::hashes(3, 1_000);
    for kind in VIEW_KINDS {
        let bytes = build(kind, &keys, 10.0).to_bytes();
        let results: [(FilterKind, Result<(), Error>); 8] = [
            (
                FilterKind::StandardBloom,
                StandardBloomView::new(&bytes).map(|_| ()),
            ),
            (
                FilterKind::BlockedBloom,
                BlockedBloomView::new(&bytes).map(|_| ()),
            ),
            (FilterKind::Xor8, Xor8View::new(&bytes).map(|_| ())),
            (FilterKind::Xor16, Xor16View::new(&bytes).map(|_| ())),
            (FilterKind::BinaryFuse8, BinaryFuse8View::new(&bytes).map(|_| ())),
            (
                FilterKind::BinaryFuse16,
                BinaryFuse16View::new(&bytes).map(|_| ()),
            ),
            (
                FilterKind::BinaryFuse32,
                BinaryFuse32View::new(&bytes).map(|_| ()),
            ),
            (FilterKind::Ribbon, RibbonView::new(&bytes).map(|_| ())),
        ];
        for (expected, r) in results {
            if expected == kind {
                assert_eq!(r, Ok(()), "{kind:?}");
            } else {
                assert_eq!(
                    r,
                    Err(Error::Format(FormatError::WrongKind {
                        expected,
                        found: kind
                    })),
                    "{kind:?} as {expected:?}"
                );
            }
        }
    }
}

/// Kinds without a view say so; so does `supports`.
#[test]
fn kinds_without_a_view_are_a_typed_error() {
    let keys = common::hashes(4, 500);
    for kind in FilterKind::ALL {
        let sizing = FilterSizing::BitsPerKey(12.0);
        let Ok(owned) = AnyFilter::build(*kind, &keys, sizing) else {
            // ParquetBloom takes Parquet hashes, the range filters ordered
            // keys: built another way (Grafite has a view of its own).
            let bytes = match *kind {
                FilterKind::ParquetBloom => {
                    let mut p = amq::ParquetBloom::with_num_bytes(1024).unwrap();
                    p.insert(b"x").unwrap();
                    p.to_bytes()
                }
                FilterKind::GrafiteRange => {
                    use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
                    GrafiteRange::build(&[1, 2], RangeSizing::BitsPerKey(12.0))
                        .unwrap()
                        .to_bytes()
                }
                FilterKind::MementoFilter => {
                    use amq::range::{MementoFilter, MementoOptions, RangeFilter};
                    MementoFilter::build(&[1, 2], MementoOptions::new(0.01, 8))
                        .unwrap()
                        .to_bytes()
                }
                other => panic!("{other:?} did not build"),
            };
            assert_eq!(
                FilterView::new(&bytes).unwrap_err(),
                Error::Unsupported {
                    kind: *kind,
                    operation: "view"
                }
            );
            assert!(!FilterView::supports(*kind));
            continue;
        };
        let bytes = owned.to_bytes();
        match FilterView::new(&bytes) {
            Ok(v) => {
                assert!(FilterView::supports(*kind));
                assert_eq!(v.kind(), *kind);
            }
            Err(e) => {
                assert_eq!(
                    e,
                    Error::Unsupported {
                        kind: *kind,
                        operation: "view"
                    }
                );
                assert!(!FilterView::supports(*kind));
            }
        }
    }
}

/// Every truncation is an error; every single-bit flip is an error for a
/// checked view, and for a trusted one either an error or a view whose
/// queries stay in bounds (they may answer wrongly: that is what the
/// checksum is for).
#[test]
fn damaged_bytes_never_panic() {
    let keys = common::hashes(11, 40);
    let probes = common::hashes(12, 300);
    for kind in VIEW_KINDS {
        let bytes = build(kind, &keys, 10.0).to_bytes();
        for n in 0..bytes.len() {
            assert!(FilterView::new(&bytes[..n]).is_err(), "{kind:?} prefix {n}");
            assert!(FilterView::trusted(&bytes[..n]).is_err(), "{kind:?} prefix {n}");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(FilterView::new(&b).is_err(), "{kind:?} byte {i} bit {bit}");
                if let Ok(v) = FilterView::trusted(&b) {
                    let mut out = vec![false; probes.len()];
                    v.contains_hashes(&probes, &mut out);
                    for &h in &probes {
                        v.contains_hash(h);
                        v.contains_prepared(&mut PreparedHash::new(h));
                    }
                    let _ = v.to_bytes();
                }
            }
        }
    }
}

/// A trusted view of bytes with a bad checksum still reads them (the
/// caller vouched for them); a checked one refuses.
#[test]
fn trusted_skips_only_the_checksum() {
    let keys = common::hashes(5, 1_000);
    let owned = build(FilterKind::BlockedBloom, &keys, 10.0);
    let mut bytes = owned.to_bytes();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    assert_eq!(
        FilterView::new(&bytes).unwrap_err(),
        Error::Format(FormatError::ChecksumMismatch)
    );
    let v = FilterView::trusted(&bytes).unwrap();
    assert!(keys.iter().all(|&h| v.contains_hash(h)));
}

/// A version-1 Ribbon frame (shard records without word offsets, before
/// the words) still decodes, but cannot be viewed.
#[test]
fn version_1_ribbon_is_no_view() {
    // The golden version-1 frame of `tests/ribbon.rs`.
    let v1 = common::from_hex(
        "414d5146 0100 0a 01 10000000 2a00000000000000
         0300000000000000 0100000000000000
         02000000 02000000 02 00
         0200000000000000 0500000000000000 0000000000000000 0000000000000000
         3492d471fc00a95e",
    );
    assert!(AnyFilter::from_bytes(&v1).is_ok());
    let no_view = Error::Unsupported {
        kind: FilterKind::Ribbon,
        operation: "view of a version-1 frame",
    };
    assert_eq!(FilterView::new(&v1).unwrap_err(), no_view);
    assert_eq!(RibbonView::trusted(&v1).unwrap_err(), no_view);
}
