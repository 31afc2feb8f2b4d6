//! amq-lsm hash sharing: the CPU time of a point miss against 1, 4, 16, 64
//! and 256 overlapping tables (filters in memory), with the one shared key
//! hash (`shared`) and with a rehash per table (`rehash`), beside the
//! filter's own `contains_hash` on one table's filter (`contains_hash`).
//! BlockedBloom and Ribbon at 1%, 16- and 64-byte keys, 10,000 keys per
//! table (`AMQ_LSM_KEYS_PER_TABLE` changes it). The probe misses lie in every
//! table's key range and pass no table's filter, so no data block read is
//! timed: the read path's CPU work alone.
//!
//! `cargo bench -p amq-bench --bench lsm`; ids read
//! `lsm_hash_sharing/<kind>-<key bytes>B/<shared|rehash>/<tables>`, time per
//! iteration = one miss. `cargo run --release -p amq-bench --bin lsm_report
//! -- hash-sharing` gives the same curves as a table, the slope and the SVG.
//!
//! `lsm_prefix_seek/<extractor|none>/<get|seek>/<tables>`: on the prefix
//! report's tree of 8 and 64 overlapping tables (`amq_bench::prefix`), an
//! absent point `get` and a seek to an absent tenant's prefix, with a prefix
//! extractor and without. `cargo run --release -p amq-bench --bin
//! prefix_report` gives the full table.

use std::hint::black_box;

use amq::{hash_key, Filter, FilterSizing, KeyHash};
use amq_bench::groups;
use amq_bench::lsm::{KeyShape, OverlappingStore, KEYS_PER_TABLE, SHARING_KINDS, TABLE_COUNTS};
use amq_bench::prefix::{self, PrefixTree};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// Probe keys per configuration: a pool walked round-robin.
const PROBES: usize = 4096;

fn keys_per_table() -> usize {
    std::env::var("AMQ_LSM_KEYS_PER_TABLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(KEYS_PER_TABLE)
}

fn hash_sharing(c: &mut Criterion) {
    let k = keys_per_table();
    let max = *TABLE_COUNTS.last().unwrap_or(&1);
    for kind in SHARING_KINDS {
        for shape in KeyShape::ALL {
            let mut store =
                OverlappingStore::new(kind, FilterSizing::Fpr(0.01), shape, k, max).expect("open the store");
            let filters = store.table_filters().expect("build the tables' filters");
            let misses = store.clean_miss_keys(PROBES, &filters);
            let hashes: Vec<KeyHash> = misses.iter().map(|m| hash_key(m)).collect();
            let filter = &filters[0];
            let mut g = c.benchmark_group(format!("lsm_hash_sharing/{kind:?}-{}B", shape.bytes()));
            let mut i = 0usize;
            g.bench_function("contains_hash", |b| {
                b.iter(|| {
                    i = (i + 1) % PROBES;
                    filter.contains_hash(black_box(hashes[i]))
                })
            });
            for n in TABLE_COUNTS {
                store.grow_to(n).expect("flush the tables");
                let db = store.db();
                for (name, rehash) in [("shared", false), ("rehash", true)] {
                    g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                        b.iter(|| {
                            i = (i + 1) % PROBES;
                            let key = black_box(&misses[i]);
                            if rehash {
                                db.get_rehashing_per_table(key).expect("get")
                            } else {
                                db.get(key).expect("get")
                            }
                        })
                    });
                }
            }
            g.finish();
        }
    }
}

fn prefix_seek(c: &mut Criterion) {
    for (name, extractor) in [("extractor", true), ("none", false)] {
        let mut g = c.benchmark_group(format!("lsm_prefix_seek/{name}"));
        for n in [8, 64] {
            let tree = PrefixTree::build(n, prefix::options(extractor, None)).expect("build the tree");
            let absent = tree.absent_tenants(PROBES as u64);
            let keys: Vec<Vec<u8>> = absent.iter().map(|&t| prefix::key(t, 0)).collect();
            let ranges: Vec<(Vec<u8>, Vec<u8>)> = absent
                .iter()
                .map(|&t| (prefix::prefix(t), prefix::prefix_end(t)))
                .collect();
            let db = &tree.db;
            let mut i = 0usize;
            g.bench_with_input(BenchmarkId::new("get", n), &n, |b, _| {
                b.iter(|| {
                    i = (i + 1) % keys.len();
                    db.get(black_box(&keys[i])).expect("get")
                })
            });
            g.bench_with_input(BenchmarkId::new("seek", n), &n, |b, _| {
                b.iter(|| {
                    i = (i + 1) % ranges.len();
                    let (lo, hi) = black_box(&ranges[i]);
                    db.scan(lo.as_slice()..hi.as_slice()).next().is_some()
                })
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = hash_sharing, prefix_seek
}
criterion_main!(benches);
