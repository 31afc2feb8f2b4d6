//! A tour of what a filter saves an LSM store: the same keys loaded under
//! several filter policies, then the same point lookups, side by side.
//!
//! ```text
//! cargo run --release -p amq-lsm --example lsm_tour [-- --n 1000000 --probes 100000]
//! ```
//!
//! For each policy, a fresh store in a temporary directory gets `n` 16-byte
//! keys (`key0000000000000`, `key0000000000002`, ...: the even numbers
//! below 2n, written in a shuffled order, 16-byte values, in write batches of
//! 1,000 keys), with `SyncMode::OnSync` and leveled compaction scaled down
//! (1 MiB memtables and tables, 2 MiB level 1, size ratio 10, 4 level-0
//! tables trigger a compaction) so a million keys make a tree of several
//! levels. After the load the memtable is flushed, but the store is **not**
//! fully compacted: lookups see the tree the load left (a few level-0 tables
//! and three deeper levels), as in a live store.
//!
//! Then `probes` misses (odd numbers: inside every table's key range, never
//! written) and `probes` hits (random even numbers) are timed, and the
//! store's [`Stats`] before and after each pass give the per-lookup figures.
//! Every filter is sized for a 1% false-positive rate (`FilterSizing::Fpr(0.01)`);
//! BinaryFuse8 has a fixed 8-bit fingerprint and ignores the sizing (about
//! 9 bits per key and 0.4%).

use std::time::{Duration, Instant};

use amq::{FilterKind, FilterSizing};
use amq_lsm::{CompactionStyle, Db, FilterPolicy, LeveledOptions, Options, Stats, SyncMode, WriteBatch};

/// Command-line settings.
struct Args {
    /// Keys loaded into each store.
    n: u64,
    /// Misses and hits timed, each.
    probes: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1_000_000,
        probes: 100_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut number = || -> Result<u64, String> {
            let v = it.next().ok_or(format!("{flag} needs a value"))?;
            v.replace('_', "").parse().map_err(|e| format!("{v}: {e}"))
        };
        match flag.as_str() {
            "--n" => args.n = number()?,
            "--probes" => args.probes = number()?,
            "-h" | "--help" => return Err("usage: lsm_tour [--n KEYS] [--probes LOOKUPS]".into()),
            other => return Err(format!("unknown argument {other} (try --help)")),
        }
    }
    if args.n == 0 || args.probes == 0 {
        return Err("--n and --probes must be at least 1".into());
    }
    Ok(args)
}

/// SplitMix64: a small, good-enough generator, so the tour needs no crate
/// for random numbers.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the tiny bias of a multiply-shift does not matter here).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// The 16-byte key of number `i`.
fn key(i: u64) -> String {
    format!("key{i:013}")
}

/// One row of the table.
struct Row {
    policy: String,
    load: Duration,
    shape: String,
    filter_bytes: u64,
    bits_per_key: f64,
    miss: Pass,
    hit: Pass,
}

/// What one pass of lookups cost, per lookup.
struct Pass {
    ns: f64,
    tables: f64,
    blocks: f64,
    hashes: f64,
    false_positives: u64,
    probes_of_absent: u64,
}

/// Times `keys` lookups and reads the store's counters around them.
fn pass(db: &Db, keys: &[String], expect_found: bool) -> Result<Pass, amq_lsm::Error> {
    let before = db.stats();
    let start = Instant::now();
    for k in keys {
        let found = db.get(k.as_bytes())?.is_some();
        assert_eq!(found, expect_found, "{k}: wrong answer");
    }
    let elapsed = start.elapsed();
    let after = db.stats();
    let per = |f: fn(&Stats) -> u64| (f(&after) - f(&before)) as f64 / keys.len() as f64;
    Ok(Pass {
        ns: elapsed.as_nanos() as f64 / keys.len() as f64,
        tables: per(|s| s.tables_consulted),
        blocks: per(|s| s.data_blocks_read),
        hashes: per(|s| s.key_hashes),
        false_positives: after.filter_false_positives - before.filter_false_positives,
        probes_of_absent: (after.filter_false_positives + after.filter_negatives)
            - (before.filter_false_positives + before.filter_negatives),
    })
}

fn run(label: &str, policy: FilterPolicy, args: &Args) -> Result<Row, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    // Leveled compaction with the levels scaled down (1 MiB memtables,
    // 2 MiB level 1, ratio 10), so a million keys make a tree of several
    // levels, as a hundred times more keys would with the defaults.
    let opts = Options::default()
        .filter_policy(policy)
        .sync(SyncMode::OnSync)
        .memtable_bytes(1 << 20)
        .table_bytes(1 << 20)
        .compaction(CompactionStyle::Leveled(
            LeveledOptions::default()
                .l0_trigger(4)
                .base_level_bytes(2 << 20)
                .size_ratio(10)
                .max_levels(7),
        ));
    let db = Db::open(dir.path(), opts)?;

    // Load the even numbers below 2n in a shuffled order, so every flushed
    // table's key range spans (nearly) the whole key space, as with random
    // writes in a real store.
    let mut order: Vec<u64> = (0..args.n).collect();
    let mut rng = SplitMix(0x5eed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let start = Instant::now();
    for chunk in order.chunks(1000) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(key(2 * i).as_bytes(), format!("value{i:011}").as_bytes());
        }
        db.write(batch)?;
    }
    // Flush the memtable's last keys too, so every lookup below goes to the
    // tables (a flush, not a full compaction: the tree keeps its levels).
    db.flush()?;
    let load = start.elapsed();

    let s = db.stats();
    let tables: Vec<String> = s.levels.iter().map(|l| l.tables.to_string()).collect::<Vec<_>>();
    let deepest = s.levels.iter().rposition(|l| l.tables > 0).unwrap_or(0);
    let shape = tables[..=deepest].join("+");
    let entries = s.table_entries().max(1);

    let misses: Vec<String> = (0..args.probes).map(|_| key(2 * rng.below(args.n) + 1)).collect();
    let hits: Vec<String> = (0..args.probes).map(|_| key(2 * rng.below(args.n))).collect();
    // One untimed pass of each first, so both start from a warm page cache.
    pass(&db, &misses[..misses.len().min(10_000)], false)?;
    pass(&db, &hits[..hits.len().min(10_000)], true)?;
    let miss = pass(&db, &misses, false)?;
    let hit = pass(&db, &hits, true)?;
    db.close()?;
    Ok(Row {
        policy: label.to_string(),
        load,
        shape,
        filter_bytes: s.filter_bytes(),
        bits_per_key: s.filter_bytes() as f64 * 8.0 / entries as f64,
        miss,
        hit,
    })
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let one = FilterSizing::Fpr(0.01);
    let policies = [
        ("no filter", FilterPolicy::none()),
        (
            "StandardBloom 1%",
            FilterPolicy::uniform(FilterKind::StandardBloom, one),
        ),
        (
            "BlockedBloom 1%",
            FilterPolicy::uniform(FilterKind::BlockedBloom, one),
        ),
        (
            "BinaryFuse8 (fixed 8-bit)",
            FilterPolicy::uniform(FilterKind::BinaryFuse8, one),
        ),
        ("Ribbon 1%", FilterPolicy::uniform(FilterKind::Ribbon, one)),
        (
            "BlockedBloom L0-L1, Ribbon below",
            FilterPolicy::bloom_then_ribbon(0.01, 2),
        ),
    ];
    println!(
        "amq-lsm tour: {} keys of 16 bytes (16-byte values), leveled compaction (scaled-down levels),\nflushed but not compacted after the load;",
        args.n
    );
    println!(
        "{} misses (absent keys inside the key range) and {} hits per policy.\n",
        args.probes, args.probes
    );
    let mut rows = Vec::new();
    for (label, p) in policies {
        eprint!("  loading under {label} ...");
        match run(label, p, &args) {
            Ok(row) => {
                eprintln!(" {:.1} s", row.load.as_secs_f64());
                rows.push(row);
            }
            Err(e) => {
                eprintln!(" failed: {e}");
                std::process::exit(1);
            }
        }
    }
    eprintln!();
    println!(
        "| policy | tables per level | filter KiB | bits/key | tables/miss | blocks/miss | blocks/hit | hashes/get | FPR seen | ns/miss | ns/hit |"
    );
    println!("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in &rows {
        let fpr_absent = r.miss.probes_of_absent + r.hit.probes_of_absent;
        let fpr = if fpr_absent == 0 {
            "-".to_string()
        } else {
            format!(
                "{:.2}%",
                (r.miss.false_positives + r.hit.false_positives) as f64 * 100.0 / fpr_absent as f64
            )
        };
        println!(
            "| {} | {} | {:.0} | {:.2} | {:.2} | {:.3} | {:.3} | {:.2} | {} | {:.0} | {:.0} |",
            r.policy,
            r.shape,
            r.filter_bytes as f64 / 1024.0,
            r.bits_per_key,
            r.miss.tables,
            r.miss.blocks,
            r.hit.blocks,
            (r.miss.hashes + r.hit.hashes) / 2.0,
            fpr,
            r.miss.ns,
            r.hit.ns,
        );
    }
    println!();
    println!("tables/miss: tables whose key range held the missing key (each would cost a block read without a filter).");
    println!("blocks/miss: data blocks actually read; a filter leaves only its false positives.");
    println!(
        "hashes/get: the key is hashed once per lookup and that hash is handed to every table's filter."
    );
    println!(
        "FPR seen: filter \"maybe\" answers for tables that did not hold the key, over all such probes."
    );
    println!("Every filter is sized for 1% (BinaryFuse8 ignores sizing: 8-bit fingerprints). Data blocks");
    println!(
        "are read with pread from the OS page cache (there is no block cache), so ns/hit includes one read."
    );
}
