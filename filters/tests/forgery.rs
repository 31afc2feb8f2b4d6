//! Forged-but-sealed bytes for every kind: each header, parameter and payload
//! byte changed in turn (255 ways) and the checksum recomputed, so that the
//! decoder's own checks judge every mutation. The outcome must be an `Err`,
//! or a filter that answers every query and re-encodes to the forged bytes.
//! (Without re-sealing, the checksum rejects every mutation and the checks
//! behind it are never reached.)

mod common;

use amq::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, CuckooFilter, FuseParams, Insert, Ribbon, RibbonParams,
    StaticFilter, Xor16, Xor8,
};
use common::{assert_forgery_safe, hashes, Payload};

#[test]
fn cuckoo() {
    for bits in [8, 12, 16] {
        let mut f = CuckooFilter::with_fingerprint_bits(6, bits).unwrap();
        for h in hashes(1, 5) {
            f.insert_hash(h).unwrap();
        }
        assert_forgery_safe(&f, Payload::MayBeRefused);
    }
}

#[test]
fn xor() {
    assert_forgery_safe(&Xor8::build(&hashes(2, 6)).unwrap(), Payload::MayBeRefused);
    assert_forgery_safe(&Xor16::build(&hashes(3, 6)).unwrap(), Payload::MayBeRefused);
}

#[test]
fn binary_fuse() {
    assert_forgery_safe(&BinaryFuse8::build(&hashes(4, 6)).unwrap(), Payload::MayBeRefused);
    assert_forgery_safe(
        &BinaryFuse16::build(&hashes(5, 6)).unwrap(),
        Payload::MayBeRefused,
    );
    assert_forgery_safe(
        &BinaryFuse32::build(&hashes(6, 4)).unwrap(),
        Payload::MayBeRefused,
    );
    let four = BinaryFuse8::build_with(&hashes(7, 6), &FuseParams::FOUR_WISE).unwrap();
    assert_forgery_safe(&four, Payload::MayBeRefused);
}

#[test]
fn ribbon() {
    for params in [
        RibbonParams::with_result_bits(3).unwrap(),
        RibbonParams::with_fpr(0.01).unwrap(),
        RibbonParams::with_result_bits(7)
            .unwrap()
            .with_two_line_layout()
            .unwrap(),
    ] {
        let f = <Ribbon as StaticFilter>::build_with(&hashes(8, 5), &params).unwrap();
        assert_forgery_safe(&f, Payload::MayBeRefused);
    }
    // An empty filter too: its lengths are the edge cases.
    let empty =
        <Ribbon as StaticFilter>::build_with(&[], &RibbonParams::with_result_bits(7).unwrap()).unwrap();
    assert_forgery_safe(&empty, Payload::MayBeRefused);
}

/// Kinds 12 to 17 exist from format version 2: a version-1 frame of any of
/// them (the same filter with the padding taken out, resealed) is refused
/// by every decoder, as no build ever wrote one; the version-2 frame
/// decodes. Older kinds still read version 1 (the golden tests).
#[test]
fn kinds_of_version_2_refuse_version_1_frames() {
    use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter, QuotientFilter};
    use amq::range::{GrafiteRange, MementoFilter, MementoOptions, RangeFilter, RangeSizing};
    use amq::{
        AnyFilter, Error, Filter, FilterSizing, FilterView, FormatError, FromBytes, PackedBinaryFuse,
        SplitBlockBloom,
    };
    let keys = hashes(90, 200);
    let mut quotient = QuotientFilter::new(200, FilterSizing::Fpr(0.01)).unwrap();
    let mut expanding = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01)).unwrap();
    let mut split = SplitBlockBloom::new(200, FilterSizing::Fpr(0.01)).unwrap();
    for &h in &keys {
        quotient.insert_hash(h).unwrap();
        expanding.insert_hash(h).unwrap();
        split.insert_hash(h).unwrap();
    }
    let packed = PackedBinaryFuse::build(&keys, FilterSizing::Fpr(0.001)).unwrap();
    let ints: Vec<u64> = (0..200u64).map(|i| i * 977).collect();
    let grafite = GrafiteRange::build(&ints, RangeSizing::BitsPerKey(12.0)).unwrap();
    let memento = MementoFilter::build(&ints, MementoOptions::new(0.01, 16)).unwrap();
    let v1_refused =
        |b: &[u8]| Error::Format(FormatError::UnsupportedVersion(1)) == AnyFilter::from_bytes(b).unwrap_err();
    type Decodes<'a> = &'a dyn Fn(&[u8]) -> bool;
    let frames: [(&str, Vec<u8>, Decodes); 6] = [
        ("quotient", quotient.to_bytes(), &|b| {
            QuotientFilter::from_bytes(b).is_ok() && AnyFilter::from_bytes(b).is_ok()
        }),
        ("expanding", expanding.to_bytes(), &|b| {
            ExpandingQuotientFilter::from_bytes(b).is_ok() && AnyFilter::from_bytes(b).is_ok()
        }),
        ("split-block", split.to_bytes(), &|b| {
            SplitBlockBloom::from_bytes(b).is_ok() && FilterView::new(b).is_ok()
        }),
        ("packed fuse", packed.to_bytes(), &|b| {
            PackedBinaryFuse::from_bytes(b).is_ok() && AnyFilter::from_bytes(b).is_ok()
        }),
        ("grafite", grafite.to_bytes(), &|b| {
            GrafiteRange::from_bytes(b).is_ok()
        }),
        ("memento", memento.to_bytes(), &|b| {
            MementoFilter::from_bytes(b).is_ok()
        }),
    ];
    for (name, v2, decodes) in frames {
        assert!(decodes(&v2), "{name}: version 2");
        let v1 = common::downgrade_to_v1(&v2);
        assert!(!decodes(&v1), "{name}: version 1 decoded");
        if !matches!(name, "grafite" | "memento") {
            assert!(v1_refused(&v1), "{name}");
        }
    }
}
