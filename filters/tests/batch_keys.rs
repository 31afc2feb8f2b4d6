//! `Filter::contains_keys` (hash a batch of byte keys, then probe it with
//! `contains_hashes`) against the one-key path `contains` and a `HashSet`
//! model, for every kind (through `AnyFilter`, through `&dyn Filter`, and on
//! the concrete types), with batch lengths around the internal batch of 64;
//! and `ParquetBloom::contains_values` against its own `contains`.

mod common;

use std::collections::HashSet;

use amq::{
    hash_key, AnyFilter, BlockedBloom, Error, Filter, FilterKind, FilterSizing, Insert, KeyHash, ParquetBloom,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Checks `contains_keys` on `f` answers as `contains` key by key, with
/// every key of `model` found.
fn check(f: &dyn Filter, queries: &[Vec<u8>], model: &HashSet<Vec<u8>>) {
    let refs: Vec<&[u8]> = queries.iter().map(Vec::as_slice).collect();
    let mut out = vec![false; refs.len()];
    f.contains_keys(&refs, &mut out);
    for (k, &o) in refs.iter().zip(&out) {
        assert_eq!(o, f.contains(k), "{:?} key {k:?}", f.kind());
        if model.contains(*k) {
            assert!(o, "{:?}: false negative for {k:?}", f.kind());
        }
    }
}

/// The same check for a `ParquetBloom`, through its own API: its batch
/// query `contains_values` answers as `contains` value by value.
fn check_parquet(f: &ParquetBloom, queries: &[Vec<u8>], model: &HashSet<Vec<u8>>) {
    let mut out = vec![false; queries.len()];
    f.contains_values(queries, &mut out);
    for (k, &o) in queries.iter().zip(&out) {
        assert_eq!(o, f.contains(k), "ParquetBloom key {k:?}");
        if model.contains(k) {
            assert!(o, "ParquetBloom: false negative for {k:?}");
        }
    }
}

fn byte_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(vec(any::<u8>(), 0..40), 0..300)
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    #[test]
    fn contains_keys_agrees_with_contains_for_every_kind(
        keys in byte_keys(),
        extra in byte_keys(),
        query_len in 0..400usize,
    ) {
        let model: HashSet<Vec<u8>> = keys.iter().cloned().collect();
        // Present keys, absent keys, repeats: cut to any length.
        let queries: Vec<Vec<u8>> = keys.iter().chain(&extra).chain(&keys).take(query_len).cloned().collect();
        let hashes: Vec<KeyHash> = keys.iter().map(|k| hash_key(k)).collect();
        for &kind in FilterKind::ALL {
            if kind.hash_scheme() != amq::HashScheme::Xxh3Seeded {
                continue; // another hash scheme: ParquetBloom below, GrafiteRange in range.rs
            }
            let f = AnyFilter::build(kind, &hashes, FilterSizing::Fpr(0.05)).unwrap();
            check(&f, &queries, &model);
            if let AnyFilter::BlockedBloom(b) = &f {
                check(b, &queries, &model);
            }
            let boxed: Box<dyn Filter> = Box::new(f);
            check(&boxed, &queries, &model);
        }
        // ParquetBloom hashes its keys with Parquet's hash, through its own
        // API; AnyFilter, which holds filters of amq key hashes, refuses it.
        let mut p = ParquetBloom::new(keys.len().max(1), FilterSizing::Fpr(0.05)).unwrap();
        keys.iter().for_each(|k| p.insert(k).unwrap());
        check_parquet(&p, &queries, &model);
        let any = AnyFilter::from_bytes(&p.to_bytes());
        prop_assert!(matches!(any, Err(Error::WrongHashScheme { .. })), "AnyFilter took a Parquet frame: {:?}", any);
        let mut b = BlockedBloom::new(keys.len().max(1), FilterSizing::Fpr(0.5)).unwrap();
        keys.iter().for_each(|k| b.insert(k).unwrap());
        check(&b, &queries, &model);
    }
}

#[test]
#[should_panic(expected = "length mismatch")]
fn contains_keys_checks_lengths() {
    let f = BlockedBloom::new(10, FilterSizing::Fpr(0.01)).unwrap();
    f.contains_keys(&[b"a"], &mut [false, false]);
}
