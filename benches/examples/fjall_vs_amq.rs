//! amq-lsm against fjall (its current release, 3.x) on point reads, in many
//! short alternating rounds.
//!
//! `cargo run --release -p amq-bench --example fjall_vs_amq -- [N] [ROUNDS]`
//! (default 1,000,000 keys, 11 rounds).
//!
//! Both stores get the same `N` 16-byte keys (`key` + 13 digits, the even
//! numbers below `2N`, inserted in a shuffled order) with 100-byte values
//! of pseudo-random bytes (so fjall's LZ4 has nothing to gain), the same
//! filter budget (10 bits per key: fjall's standard Bloom filter, amq-lsm's
//! `BlockedBloom` and, as a second amq-lsm store, `StandardBloom`), and are
//! flushed before reading; fjall's background compactions are waited out.
//! Every file is in the OS page cache (just written, and read once before
//! timing). fjall keeps its default 32 MiB block cache; amq-lsm has none, so
//! each of its data-block reads is a `pread` from the page cache.
//!
//! Each round times, for every store, 20,000 misses (odd numbers) and
//! 20,000 hits (even numbers), one `get` each, and for amq-lsm also
//! `multi_get` in batches of 1,000, in an order that rotates from round to
//! round. Printed: medians over rounds of ns per lookup, and the median of
//! the per-round ratios to fjall's `get`.

use std::hint::black_box;
use std::time::Instant;

use amq::hash::{reduce, remix};
use amq::{FilterKind, FilterSizing};
use amq_bench::lsm::{shuffled, KeyShape};
use amq_bench::report::median;
use amq_lsm::{Db, FilterPolicy, Options, SyncMode, WriteBatch};
use fjall::config::{
    BloomConstructionPolicy, CompressionPolicy, FilterPolicy as FjallFilters, FilterPolicyEntry,
};
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

const LOOKUPS: u64 = 20_000;
const BATCH: usize = 1_000;

/// A 100-byte value of pseudo-random bytes for key number `i`.
fn value(i: u64) -> [u8; 100] {
    let mut v = [0u8; 100];
    for (j, chunk) in v.chunks_mut(8).enumerate() {
        let w = remix(i, j as u64 + 1).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
    v
}

fn load_amq(dir: &std::path::Path, n: u64, kind: FilterKind) -> Result<Db, Box<dyn std::error::Error>> {
    let db = Db::open(
        dir,
        Options::default()
            .filter_policy(FilterPolicy::uniform(kind, FilterSizing::BitsPerKey(10.0)))
            .sync(SyncMode::OnSync),
    )?;
    for chunk in shuffled(n).chunks(1000) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(KeyShape::Short.key(2 * i), value(i));
        }
        db.write(batch)?;
    }
    db.flush()?;
    Ok(db)
}

fn load_fjall(dir: &std::path::Path, n: u64) -> Result<(Database, Keyspace), Box<dyn std::error::Error>> {
    let db = Database::builder(dir).open()?;
    let ks = db.keyspace("bench", || {
        KeyspaceCreateOptions::default()
            .filter_policy(FjallFilters::all(FilterPolicyEntry::Bloom(
                BloomConstructionPolicy::BitsPerKey(10.0),
            )))
            .data_block_compression_policy(CompressionPolicy::disabled())
            .manual_journal_persist(true)
    })?;
    for chunk in shuffled(n).chunks(1000) {
        let mut batch = db.batch();
        for &i in chunk {
            batch.insert(&ks, KeyShape::Short.key(2 * i), value(i));
        }
        batch.commit()?;
    }
    db.persist(PersistMode::SyncAll)?;
    ks.rotate_memtable_and_wait()?;
    // Let background compaction settle: the table count stops changing.
    let mut last = usize::MAX;
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = ks.table_count();
        if now == last {
            break;
        }
        last = now;
    }
    Ok((db, ks))
}

/// amq-lsm's `get` as a presence test.
fn amq_get(db: &Db) -> impl FnMut(&[u8]) -> bool + '_ {
    move |k| db.get(k).expect("get").is_some()
}

/// ns per lookup of one pass; checks every answer.
fn pass(keys: &[Vec<u8>], present: bool, mut get: impl FnMut(&[u8]) -> bool) -> f64 {
    let start = Instant::now();
    for k in keys {
        assert_eq!(get(k), present, "wrong answer");
    }
    start.elapsed().as_nanos() as f64 / keys.len() as f64
}

fn multi_pass(db: &Db, keys: &[Vec<u8>], present: bool) -> f64 {
    let start = Instant::now();
    for batch in keys.chunks(BATCH) {
        let got = db.multi_get(batch).expect("multi_get");
        assert!(got.iter().all(|v| v.is_some() == present), "wrong answer");
        black_box(got);
    }
    start.elapsed().as_nanos() as f64 / keys.len() as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let dirs = [tempfile::tempdir()?, tempfile::tempdir()?, tempfile::tempdir()?];
    eprintln!("loading {n} keys into amq-lsm (BlockedBloom), amq-lsm (StandardBloom) and fjall ...");
    let blocked = load_amq(dirs[0].path(), n, FilterKind::BlockedBloom)?;
    let standard = load_amq(dirs[1].path(), n, FilterKind::StandardBloom)?;
    let (_fjall_db, fjall) = load_fjall(dirs[2].path(), n)?;
    let misses: Vec<Vec<u8>> = (0..LOOKUPS)
        .map(|i| KeyShape::Short.key(2 * reduce(remix(i, 11), n) + 1))
        .collect();
    let hits: Vec<Vec<u8>> = (0..LOOKUPS)
        .map(|i| KeyShape::Short.key(2 * reduce(remix(i, 12), n)))
        .collect();
    let s = blocked.stats();
    let shape = |s: &amq_lsm::Stats| {
        let deepest = s.levels.iter().rposition(|l| l.tables > 0).unwrap_or(0);
        s.levels[..=deepest]
            .iter()
            .map(|l| l.tables.to_string())
            .collect::<Vec<_>>()
            .join("+")
    };
    eprintln!(
        "amq-lsm tables per level {} (BlockedBloom), {} (StandardBloom); fjall {} tables",
        shape(&s),
        shape(&standard.stats()),
        fjall.table_count()
    );
    let fjall_get = |k: &[u8]| fjall.get(k).expect("get").is_some();
    // Warm: every store reads every key once.
    for present in [false, true] {
        let keys = if present { &hits } else { &misses };
        pass(keys, present, amq_get(&blocked));
        pass(keys, present, amq_get(&standard));
        pass(keys, present, fjall_get);
    }
    const NAMES: [&str; 5] = [
        "fjall `get`",
        "amq-lsm BlockedBloom `get`",
        "amq-lsm BlockedBloom `multi_get`",
        "amq-lsm StandardBloom `get`",
        "amq-lsm StandardBloom `multi_get`",
    ];
    let mut times = [[(); 5].map(|_| Vec::new()), [(); 5].map(|_| Vec::new())];
    for round in 0..rounds {
        for (p, present) in [false, true].into_iter().enumerate() {
            let keys = if present { &hits } else { &misses };
            for j in 0..5 {
                let s = (j + round) % 5;
                let t = match s {
                    0 => pass(keys, present, fjall_get),
                    1 => pass(keys, present, amq_get(&blocked)),
                    2 => multi_pass(&blocked, keys, present),
                    3 => pass(keys, present, amq_get(&standard)),
                    _ => multi_pass(&standard, keys, present),
                };
                times[p][s].push(t);
            }
        }
    }
    println!("n = {n}, {rounds} rounds of {LOOKUPS} misses and {LOOKUPS} hits; ns per lookup (median), ratio to fjall's `get` (median of per-round ratios)\n");
    println!("| store, lookup | miss | hit |");
    println!("|---|--:|--:|");
    for (s, name) in NAMES.iter().enumerate() {
        let cell = |p: usize| {
            let mut t = times[p][s].clone();
            let mut r: Vec<f64> = times[p][s].iter().zip(&times[p][0]).map(|(x, f)| x / f).collect();
            format!("{:.0} ({:.2}×)", median(&mut t), median(&mut r))
        };
        println!("| {name} | {} | {} |", cell(0), cell(1));
    }
    Ok(())
}
