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
