//! The value-search measurements (`docs/value-search.md`): stores
//! loaded as the paper's experiments load LevelDB, and `find_by_value` timed
//! under each method.
//!
//! A store of `n` entries has 16-byte keys `v{i:015}` written in key order
//! in batches of 1,000, and 16-byte values: the hex of `remix(j)` for value
//! id `j`. With `domain = 1.0` every entry has its own value (`j = i`, the
//! paper's "unique values"); with a smaller domain, `j = remix(i) mod D` for
//! `D = domain · n` distinct values, so each value's entries are spread at
//! random over the tables. The memtable is sized so each flush writes a
//! table of about 2 MiB (the paper's LevelDB tables); compaction is off, so
//! the tables are exactly the flushes.
//!
//! A query is the value of a random present entry (the paper: "the
//! requested entry was stored in one SSTable").

use std::path::Path;
use std::time::Instant;

use amq::hash::remix;
use amq_lsm::{Db, Options, SearchMethod, SyncMode, ValueIndexOptions, ValueStats, WriteBatch};

use crate::lsm::{median, Error};

/// Seed of every random choice here.
const SEED: u64 = 0x7661_6c75_652d_7365; // "value-se"

/// Memtable bytes per flush: 57k entries of 16 + 16 bytes (plus the
/// memtable's 32 bytes of accounting per entry), a table of about 2 MiB.
pub const MEMTABLE_BYTES: usize = 3_670_016;

/// The 16-byte key of entry `i`.
pub fn key(i: u64) -> Vec<u8> {
    format!("v{i:015}").into_bytes()
}

/// The value id of entry `i` in a store of `n` entries with `domain` of them
/// distinct.
pub fn value_id(i: u64, n: u64, domain: f64) -> u64 {
    let d = ((n as f64 * domain).round() as u64).clamp(1, n);
    if d == n {
        i
    } else {
        remix(i, SEED) % d
    }
}

/// The 16-byte value of value id `j`.
pub fn value(j: u64) -> Vec<u8> {
    format!("{:016x}", remix(j, SEED ^ 1)).into_bytes()
}

/// The options of a measured store.
pub fn options(values: Option<ValueIndexOptions>) -> Options {
    Options::default()
        .memtable_bytes(MEMTABLE_BYTES)
        .sync(SyncMode::OnSync)
        .auto_compact(false)
        .value_index(values)
}

/// Loads `n` entries into a new store in `dir`; returns the seconds taken.
pub fn load(dir: &Path, n: u64, domain: f64, values: Option<ValueIndexOptions>) -> Result<f64, Error> {
    let start = Instant::now();
    let db = Db::open(dir, options(values))?;
    let mut b = WriteBatch::new();
    for i in 0..n {
        b.put(key(i), value(value_id(i, n, domain)));
        if b.len() == 1000 {
            db.write(std::mem::take(&mut b))?;
        }
    }
    db.write(b)?;
    db.flush()?;
    db.close()?;
    Ok(start.elapsed().as_secs_f64())
}

/// `count` query values: those of random present entries.
pub fn queries(n: u64, domain: f64, count: usize) -> Vec<Vec<u8>> {
    (0..count as u64)
        .map(|q| value(value_id(remix(q, SEED ^ 2) % n, n, domain)))
        .collect()
}

/// What one method did over a query set.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// Median milliseconds per query over all rounds.
    pub median_ms: f64,
    /// The counters summed over one round of queries.
    pub stats: ValueStats,
    /// Searches of one round where the index chose a plain scan.
    pub plain_scans: u64,
    /// Entries found in one round.
    pub found: usize,
}

/// Times each `(method, queries)` (method `None`: `find_by_value`'s
/// automatic choice) `rounds` times, the methods interleaved in every round
/// so that the machine's noise falls on all of them alike; each median is
/// over every (round, query) of its method.
pub fn time_methods(
    db: &Db,
    plan: &[(Option<SearchMethod>, &[Vec<u8>])],
    rounds: usize,
) -> Result<Vec<Timing>, Error> {
    let mut out: Vec<(Timing, Vec<f64>)> = vec![(Timing::default(), Vec::new()); plan.len()];
    for round in 0..rounds {
        for ((t, times), &(method, queries)) in out.iter_mut().zip(plan) {
            one_round(db, queries, method, round == 0, t, times)?;
        }
    }
    Ok(out
        .into_iter()
        .map(|(mut t, mut times)| {
            t.median_ms = median(&mut times);
            t
        })
        .collect())
}

/// [`time_methods`] for one method.
pub fn time_method(
    db: &Db,
    queries: &[Vec<u8>],
    method: Option<SearchMethod>,
    rounds: usize,
) -> Result<Timing, Error> {
    Ok(time_methods(db, &[(method, queries)], rounds)?.remove(0))
}

/// One round of `method` over `queries`: every time into `times`; the
/// counters and entries found into `t` on the first round.
fn one_round(
    db: &Db,
    queries: &[Vec<u8>],
    method: Option<SearchMethod>,
    first: bool,
    t: &mut Timing,
    times: &mut Vec<f64>,
) -> Result<(), Error> {
    let before = db.value_stats();
    for q in queries {
        let start = Instant::now();
        let found = match method {
            Some(m) => db.find_by_value_with(q, m)?.entries.len(),
            None => db.find_by_value(q)?.len(),
        };
        times.push(start.elapsed().as_secs_f64() * 1e3);
        if first {
            t.found += found;
        }
    }
    if first {
        let after = db.value_stats();
        t.stats = diff(&after, &before);
        t.plain_scans = after.plain_scans - before.plain_scans;
    }
    Ok(())
}

/// The search counters of `a` minus `b`.
fn diff(a: &ValueStats, b: &ValueStats) -> ValueStats {
    let mut d = *a;
    d.searches -= b.searches;
    d.plain_scans -= b.plain_scans;
    d.internal_probes -= b.internal_probes;
    d.leaf_probes -= b.leaf_probes;
    d.flat_groups_probed -= b.flat_groups_probed;
    d.tables_scanned -= b.tables_scanned;
    d.false_positive_tables -= b.false_positive_tables;
    d.unfiltered_tables_scanned -= b.unfiltered_tables_scanned;
    d.candidates_checked -= b.candidates_checked;
    d.index_nanos -= b.index_nanos;
    d
}
