//! Profiling aid for partitioned filters: loads `n` keys into a store with
//! 4 KiB filter partitions and a filter cache that holds them all, then
//! looks up misses for `secs` seconds and prints ns per miss.
//!
//! `cargo run --release -p amq-bench --example partition_probe -- 200000 5`
use std::time::Instant;

use amq::{FilterKind, FilterSizing};
use amq_bench::lsm::{load_shuffled, KeyShape};
use amq_lsm::{Db, FilterPolicy, Options, SyncMode};

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let n: u64 = args.next().map_or(Ok(200_000), |s| s.parse())?;
    let secs: f64 = args.next().map_or(Ok(5.0), |s| s.parse())?;
    let partitioned = args.next().as_deref() != Some("whole");
    let dir = tempfile::tempdir()?;
    let opts = Options::default()
        .filter_policy(FilterPolicy::uniform(
            FilterKind::BlockedBloom,
            FilterSizing::BitsPerKey(10.0),
        ))
        .filter_partition_bytes(partitioned.then_some(4096))
        .filter_cache_bytes(64 << 20)
        .sync(SyncMode::OnSync);
    let db = Db::open(dir.path(), opts)?;
    load_shuffled(&db, n)?;
    let keys: Vec<Vec<u8>> = (0..100_000u64)
        .map(|i| KeyShape::Short.key(2 * ((i * 7919) % n) + 1))
        .collect();
    let start = Instant::now();
    let mut gets = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        for k in &keys {
            assert!(db.get(k)?.is_none());
        }
        gets += keys.len() as u64;
    }
    let s = db.stats();
    println!(
        "{} ns per miss ({} tables consulted per miss, {} partitions read)",
        start.elapsed().as_nanos() as u64 / gets,
        s.tables_consulted as f64 / s.gets as f64,
        s.filter_partitions_read
    );
    Ok(())
}
