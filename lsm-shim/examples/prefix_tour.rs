//! What prefix filters save a store: seeks to one tenant's rows on a tree of
//! overlapping tables, with a prefix extractor and without.
//!
//! ```text
//! cargo run --release -p amq-lsm --example prefix_tour [-- --tables 64 --seeks 2000]
//! ```
//!
//! Each store gets `tables` tables (one flush each, tiered compaction that
//! never merges them, so every table's key range covers every tenant) of
//! 20,000 keys `t{tenant:08}:{row:04}`, ten rows per tenant; the store with
//! an extractor puts each key's tenant (`DelimitedPrefix::new(b':')`) in its
//! filters beside the key. Then `seeks` seeks to absent tenants
//! (`Db::scan_prefix(..).next()`), the same number of point misses, and
//! scans of a present tenant's ten rows (all in one table) are timed, and
//! `Db::stats()` before and after gives what each read.

use std::time::Instant;

use amq::DelimitedPrefix;
use amq_lsm::{Db, Options, Stats, SyncMode, TieredOptions, WriteBatch};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load(dir: &std::path::Path, tables: u64, extractor: bool) -> Result<Db, amq_lsm::Error> {
    let mut opts = Options::default()
        .compaction(TieredOptions::default().runs_per_level(100_000))
        .memtable_bytes(64 << 20)
        .sync(SyncMode::OnSync);
    if extractor {
        opts = opts.prefix_extractor(DelimitedPrefix::new(b':'));
    }
    let db = Db::open(dir, opts)?;
    for t in 0..tables {
        let mut batch = WriteBatch::new();
        for m in 0..2_000 {
            for row in 0..10 {
                // Even tenants, spread over the tables; odd ones are absent.
                batch.put(format!("t{:08}:{row:04}", 2 * (t + tables * m)), "row");
            }
        }
        db.write(batch)?;
        db.flush()?;
    }
    Ok(db)
}

/// Runs `f` over `inputs`; prints ns per call and what the stats moved by.
fn timed(db: &Db, what: &str, inputs: &[String], mut f: impl FnMut(&str) -> usize) {
    let before: Stats = db.stats();
    let start = Instant::now();
    let rows: usize = inputs.iter().map(|i| f(i)).sum();
    let ns = start.elapsed().as_nanos() as f64 / inputs.len() as f64;
    let s = db.stats();
    let n = inputs.len() as f64;
    println!(
        "  {what:<28} {:>9.0} ns  {:>6.2} data blocks  {:>6.1} tables met  {:>6.1} skipped by prefix  {:>5.1} rows",
        ns,
        (s.data_blocks_read + s.scan_blocks_read - before.data_blocks_read - before.scan_blocks_read) as f64 / n,
        (s.scan_tables - before.scan_tables) as f64 / n,
        (s.prefix_negatives - before.prefix_negatives) as f64 / n,
        rows as f64 / n,
    );
}

fn main() -> Result<(), amq_lsm::Error> {
    let tables = arg("--tables", 64) as u64;
    let seeks = arg("--seeks", 2_000) as u64;
    let absent: Vec<String> = (0..seeks)
        .map(|i| format!("t{:08}:", 2 * (i * 7919 % (tables * 2_000)) + 1))
        .collect();
    let keys: Vec<String> = absent.iter().map(|p| format!("{p}0000")).collect();
    let present = vec![format!("t{:08}:", 2 * tables * 1_000); 20];
    for extractor in [false, true] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let db = load(dir.path(), tables, extractor)?;
        println!(
            "{tables} overlapping tables, {}:",
            if extractor {
                "prefix extractor DelimitedPrefix(':')"
            } else {
                "no prefix extractor"
            }
        );
        // Once untimed, so every file is in the page cache.
        absent.iter().for_each(|p| drop(db.scan_prefix(p).next()));
        timed(&db, "absent point get", &keys, |k| {
            usize::from(db.get(k).unwrap().is_some())
        });
        timed(&db, "absent-prefix seek", &absent, |p| {
            db.scan_prefix(p).next().map_or(0, |_| 1)
        });
        timed(&db, "present tenant, its rows", &present, |p| {
            db.scan_prefix(p).count()
        });
    }
    Ok(())
}
