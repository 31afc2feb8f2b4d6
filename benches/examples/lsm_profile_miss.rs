//! Profiling harness for the store's miss path: 64 overlapping tables, clean
//! misses in a loop (`perf record ./target/release/examples/lsm_profile_miss`).
use amq::{FilterKind, FilterSizing};
use amq_bench::lsm::{KeyShape, OverlappingStore};

fn main() {
    let mut s = OverlappingStore::new(
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
        KeyShape::Short,
        10_000,
        64,
    )
    .unwrap();
    s.grow_to(64).unwrap();
    let filters = s.table_filters().unwrap();
    let keys = s.clean_miss_keys(10_000, &filters);
    let t = std::time::Instant::now();
    let mut n = 0u64;
    for _ in 0..200 {
        for k in &keys {
            n += s.db().get(k).unwrap().is_some() as u64;
        }
    }
    let per = t.elapsed().as_nanos() as f64 / (200.0 * keys.len() as f64);
    println!("{n} hits; {per:.1} ns per miss over 64 tables");
}
