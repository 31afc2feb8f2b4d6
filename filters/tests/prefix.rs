//! Filters of keys and their prefixes: every kind holds both kinds of entry
//! in one filter, sized by the distinct entries, and never answers "no" for
//! a key or a prefix it holds; a prefix and a whole key of the same bytes
//! are different entries.

use std::collections::BTreeSet;

use amq::plan::Planner;
use amq::{
    hash_key, hash_prefix, AnyFilter, DelimitedPrefix, Filter, FilterKind, FilterSizing, KeyHash,
    PrefixExtractor,
};

/// Keys `t{tenant:04}:{row:06}`: `tenants` tenants of `rows` rows each.
fn keys(tenants: u32, rows: u32) -> Vec<Vec<u8>> {
    (0..tenants)
        .flat_map(|t| (0..rows).map(move |r| format!("t{t:04}:{r:06}").into_bytes()))
        .collect()
}

/// The entries of a filter of `keys`: their hashes if `whole_keys`, and the
/// hashes of their distinct prefixes.
fn entries(keys: &[Vec<u8>], x: &dyn PrefixExtractor, whole_keys: bool) -> Vec<KeyHash> {
    let prefixes: BTreeSet<&[u8]> = keys.iter().filter_map(|k| x.prefix(k)).collect();
    let mut e: Vec<KeyHash> = prefixes.iter().map(|p| hash_prefix(p)).collect();
    if whole_keys {
        e.extend(keys.iter().map(|k| hash_key(k)));
    }
    e
}

#[test]
fn every_kind_holds_keys_and_prefixes_together() {
    let x = DelimitedPrefix::new(b':');
    let keys = keys(500, 20);
    for whole_keys in [true, false] {
        let e = entries(&keys, &x, whole_keys);
        assert_eq!(e.len(), if whole_keys { 10_500 } else { 500 });
        for &kind in FilterKind::ALL {
            let Ok(f) = AnyFilter::build(kind, &e, FilterSizing::Fpr(0.01)) else {
                assert_ne!(kind.hash_scheme(), amq::HashScheme::Xxh3Seeded, "{kind:?}");
                continue;
            };
            assert_eq!(f.num_keys(), e.len(), "{kind:?}: sized by the distinct entries");
            for k in &keys {
                assert!(f.contains_hash(hash_prefix(x.prefix(k).unwrap())), "{kind:?}");
                if whole_keys {
                    assert!(f.contains_hash(hash_key(k)), "{kind:?}");
                }
            }
            // Absent tenants are mostly answered "no".
            let absent = (500..20_500u32)
                .filter(|t| f.contains_hash(hash_prefix(format!("t{t:04}:").as_bytes())))
                .count();
            assert!(
                absent < 20_000 / 20,
                "{kind:?}: {absent} of 20,000 absent prefixes"
            );
        }
    }
}

/// A prefix entry does not answer for a whole key of the same bytes (the
/// seeds keep them apart): a filter of prefixes alone, probed with whole
/// keys equal to those prefixes, says "maybe" only at its FPR.
#[test]
fn a_prefix_is_not_a_whole_key() {
    let prefixes: Vec<Vec<u8>> = (0..10_000u32).map(|t| format!("t{t:04}:").into_bytes()).collect();
    let e: Vec<KeyHash> = prefixes.iter().map(|p| hash_prefix(p)).collect();
    let f = AnyFilter::build(FilterKind::BlockedBloom, &e, FilterSizing::Fpr(0.01)).unwrap();
    assert!(prefixes.iter().all(|p| f.contains_hash(hash_prefix(p))));
    let as_keys = prefixes.iter().filter(|p| f.contains_hash(hash_key(p))).count();
    assert!(
        as_keys < 300,
        "{as_keys} of 10,000 whole keys matched their prefix entries"
    );
}

/// The planner sizes for keys plus prefixes, and the built filter of both
/// delivers the predicted size and FPR.
#[test]
fn the_planner_sizes_for_keys_and_prefixes() {
    let x = DelimitedPrefix::new(b':');
    let keys = keys(2_000, 25);
    let e = entries(&keys, &x, true);
    let plan = Planner::for_keys(keys.len())
        .prefixes(2_000)
        .fpr(0.01)
        .plan()
        .unwrap();
    assert_eq!(plan.keys(), e.len());
    let f = plan.build(&e).unwrap();
    assert!((f.bits_per_key() / plan.bits_per_key() - 1.0).abs() < 0.02);
    assert!((f.expected_fpr() / plan.expected_fpr() - 1.0).abs() < 0.02);
}
