//! `serde` support (feature `serde`): every Bloom filter serializes as its
//! byte format, so JSON carries the same validated, checksummed bytes, and a
//! corrupted JSON byte array is an error, never a panic.
#![cfg(feature = "serde")]

mod common;

use std::fmt::Debug;

use amq::{
    AnyFilter, AtomicBlockedBloom, BlockedBloom, CountingBloom, Error, Filter, FilterSizing, Insert, KeyHash,
    StandardBloom,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// JSON round trip: the JSON is the array of `to_bytes`, and it decodes to a
/// filter with the same bytes and the same keys. Every single-byte change of
/// that array, and every truncation, is a deserialization error.
fn check<F: Filter + Serialize + DeserializeOwned>(f: &F, keys: &[KeyHash]) {
    let json = serde_json::to_string(f).unwrap();
    let as_bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    assert_eq!(
        as_bytes,
        f.to_bytes(),
        "{:?}: JSON is not the byte format",
        f.kind()
    );

    let back: F = serde_json::from_str(&json).unwrap();
    assert_eq!(back.to_bytes(), f.to_bytes());
    common::assert_no_false_negatives(&back, keys);
    let any: AnyFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(any.kind(), f.kind());
    common::assert_no_false_negatives(&any, keys);

    for i in 0..as_bytes.len() {
        for delta in [0x01, 0x80, 0xff] {
            let mut corrupt = as_bytes.clone();
            corrupt[i] ^= delta;
            let json = serde_json::to_string(&corrupt).unwrap();
            assert!(
                serde_json::from_str::<F>(&json).is_err(),
                "byte {i} ^ {delta:#x} accepted"
            );
            assert!(serde_json::from_str::<AnyFilter>(&json).is_err());
        }
    }
    for n in 0..as_bytes.len() {
        let json = serde_json::to_string(&as_bytes[..n]).unwrap();
        assert!(
            serde_json::from_str::<F>(&json).is_err(),
            "truncation to {n} accepted"
        );
    }
}

fn tiny<F>(mut f: F, mut insert: impl FnMut(&mut F, KeyHash) -> Result<(), Error>) -> (F, Vec<KeyHash>) {
    let keys = common::hashes(11, 20);
    for &h in &keys {
        insert(&mut f, h).unwrap();
    }
    (f, keys)
}

#[test]
fn every_bloom_filter_round_trips_through_json() {
    let (s, keys) = tiny(
        StandardBloom::new(20, FilterSizing::Fpr(0.01)).unwrap(),
        |f, h| f.insert_hash(h),
    );
    check(&s, &keys);
    let (b, keys) = tiny(BlockedBloom::new(20, FilterSizing::Fpr(0.01)).unwrap(), |f, h| {
        f.insert_hash(h)
    });
    check(&b, &keys);
    let (a, keys) = tiny(
        AtomicBlockedBloom::new(20, FilterSizing::Fpr(0.01)).unwrap(),
        |f, h| f.insert_hash(h),
    );
    check(&a, &keys);
    let (c, keys) = tiny(
        CountingBloom::new(20, FilterSizing::Fpr(0.01)).unwrap(),
        |f, h| f.insert_hash(h),
    );
    check(&c, &keys);
    let any = AnyFilter::from_bytes(&c.to_bytes()).unwrap();
    check(&any, &keys);
    // Equal values, not just equal bytes, where the type compares.
    assert_eq!(
        serde_json::from_str::<StandardBloom>(&serde_json::to_string(&s).unwrap()).unwrap(),
        s
    );
    assert_eq!(
        serde_json::from_str::<BlockedBloom>(&serde_json::to_string(&b).unwrap()).unwrap(),
        b
    );
    assert_eq!(
        serde_json::from_str::<CountingBloom>(&serde_json::to_string(&c).unwrap()).unwrap(),
        c
    );
}

fn assert_rejected<F: DeserializeOwned + Debug>(json: &str) {
    assert!(serde_json::from_str::<F>(json).is_err(), "{json} accepted");
}

#[test]
fn malformed_json_is_an_error() {
    let mut good = StandardBloom::new(10, FilterSizing::Fpr(0.01)).unwrap();
    good.insert(b"k").unwrap();
    let json = serde_json::to_string(&good).unwrap();
    for bad in [
        "",
        "[]",
        "null",
        "\"AMQF\"",
        "{}",
        "[65, 77, 81, 70]",
        "[65, 77, 81, 70, 300]",
        "[-1]",
        "[1.5]",
        &json[..json.len() - 1],         // unterminated array
        &json.replacen('[', "[256,", 1), // an element out of u8 range
        &json.replacen(']', ",0]", 1),   // a trailing byte
        &json.replacen("[65", "[66", 1), // bad magic
    ] {
        assert_rejected::<StandardBloom>(bad);
        assert_rejected::<BlockedBloom>(bad);
        assert_rejected::<AtomicBlockedBloom>(bad);
        assert_rejected::<CountingBloom>(bad);
        assert_rejected::<AnyFilter>(bad);
    }
    // Decoding a filter of another kind is an error too.
    assert_rejected::<BlockedBloom>(&json);
    assert_rejected::<CountingBloom>(&json);
}
