//! Partitioned against whole filters in `amq-lsm`: the same keys
//! loaded into a store with whole filters (pinned), one with filters in
//! partitions of `partition_bytes` read through a filter cache of a given
//! share of the total filter size, and one with no filter; each timed on
//! point misses and hits.
//!
//! Two access patterns: **uniform** (every key equally likely, so a cache
//! holding 5% of the partitions serves about 5% of the probes) and **hot**
//! (90% of lookups in 10% of the key range, the skew that makes a small
//! cache pay). Lookups go to the tables' files for data blocks (no block
//! cache; the files sit in the OS page cache), so a partition the filter
//! cache misses costs about what a data block read does.

use std::time::Instant;

use amq::hash::{reduce, remix};
use amq::{FilterKind, FilterSizing};
use amq_lsm::{Db, FilterPolicy, Options, Stats, SyncMode};

use crate::lsm::{load_shuffled, median, Error, KeyShape};

const SEED: u64 = 0x7061_7274_6974_696f; // "partitio"

/// Where lookups fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Uniform over the key range.
    Uniform,
    /// 90% of lookups in the first 10% of the key range, the rest uniform.
    Hot,
}

impl Access {
    /// How the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Access::Uniform => "uniform",
            Access::Hot => "hot 10% / 90%",
        }
    }

    /// The `i`-th of `n` key numbers this pattern draws, below `n`.
    fn draw(self, i: u64, n: u64, stream: u64) -> u64 {
        let r = remix(i, SEED ^ stream);
        match self {
            Access::Uniform => reduce(r, n),
            Access::Hot if reduce(r >> 7, 10) < 9 => reduce(r, (n / 10).max(1)),
            Access::Hot => reduce(r, n),
        }
    }
}

/// One configuration's medians over the rounds.
#[derive(Debug, Clone)]
pub struct PartitionRow {
    /// The configuration.
    pub label: String,
    /// Filter bytes in memory after the timed lookups: pinned whole filters,
    /// or partition indexes plus the cached partitions.
    pub resident_bytes: u64,
    /// Nanoseconds per `get` of a missing key.
    pub ns_per_miss: f64,
    /// Nanoseconds per `get` of a present key.
    pub ns_per_hit: f64,
    /// Partitions read from files per lookup (filter cache misses).
    pub partitions_read_per_lookup: f64,
    /// Data blocks read per miss (the filters' false positives).
    pub blocks_per_miss: f64,
}

/// What the comparison loaded.
#[derive(Debug, Clone)]
pub struct PartitionSetup {
    /// Total bytes of the partitioned filters (the 100% of the cache sizes).
    pub filter_bytes: u64,
    /// Bytes of the whole filters.
    pub whole_filter_bytes: u64,
    /// Tables of the partitioned store.
    pub tables: usize,
}

/// The store's options for `policy`, partitioned or not.
fn options(policy: &FilterPolicy, partition_bytes: Option<usize>, filter_cache_bytes: usize) -> Options {
    Options::default()
        .filter_policy(policy.clone())
        .filter_partition_bytes(partition_bytes)
        .filter_cache_bytes(filter_cache_bytes)
        .sync(SyncMode::OnSync)
}

/// The comparison's parameters.
#[derive(Debug, Clone)]
pub struct PartitionBench {
    /// The filter kind of every level.
    pub kind: FilterKind,
    /// Its bits per key.
    pub bits_per_key: f64,
    /// `Options::filter_partition_bytes` of the partitioned store.
    pub partition_bytes: usize,
    /// Keys loaded.
    pub n: u64,
    /// Misses and hits timed per round (and misses to warm up).
    pub probes: u64,
    /// Rounds over all configurations; the report gives medians.
    pub rounds: usize,
    /// The access patterns measured, each over the same three stores.
    pub accesses: Vec<Access>,
    /// Filter cache sizes, as shares of the total partitioned filter size.
    pub cache_shares: Vec<f64>,
}

/// Loads `n` keys three times (whole filters, partitioned, no filter), then,
/// per access pattern, runs `rounds` rounds over the configurations: whole,
/// partitioned with the filter cache at each share of `cache_shares` of the
/// total filter size, partitioned with no filter cache, and no filter. Each
/// round opens the store, warms it with `probes` misses, then times `probes`
/// misses and `probes` hits.
#[allow(clippy::type_complexity)]
pub fn measure_partitioned(
    b: &PartitionBench,
) -> Result<(PartitionSetup, Vec<(Access, Vec<PartitionRow>)>), Error> {
    let PartitionBench {
        kind,
        bits_per_key,
        partition_bytes,
        n,
        probes,
        rounds,
        ref accesses,
        ref cache_shares,
    } = *b;
    let policy = FilterPolicy::uniform(kind, FilterSizing::BitsPerKey(bits_per_key));
    let load =
        |policy: &FilterPolicy, partitions: Option<usize>| -> Result<(tempfile::TempDir, Stats), Error> {
            let dir = tempfile::tempdir()?;
            let db = Db::open(dir.path(), options(policy, partitions, 0))?;
            load_shuffled(&db, n)?;
            let s = db.stats();
            db.close()?;
            Ok((dir, s))
        };
    eprintln!("partitioned: loading {n} keys three times ...");
    let (whole_dir, whole) = load(&policy, None)?;
    let (part_dir, part) = load(&policy, Some(partition_bytes))?;
    let (none_dir, _) = load(&FilterPolicy::none(), None)?;
    let setup = PartitionSetup {
        filter_bytes: part.filter_bytes(),
        whole_filter_bytes: whole.filter_bytes(),
        tables: part.levels.iter().map(|l| l.tables).sum(),
    };
    let mut configs: Vec<(String, &tempfile::TempDir, Options)> =
        vec![("whole, pinned".into(), &whole_dir, options(&policy, None, 0))];
    for &share in cache_shares {
        let cache = (setup.filter_bytes as f64 * share) as usize;
        configs.push((
            format!("partitioned, cache {:.0}%", share * 100.0),
            &part_dir,
            options(&policy, Some(partition_bytes), cache),
        ));
    }
    configs.push((
        "partitioned, no filter cache".into(),
        &part_dir,
        options(&policy, Some(partition_bytes), 0),
    ));
    configs.push((
        "no filter".into(),
        &none_dir,
        options(&FilterPolicy::none(), None, 0),
    ));

    let mut out = Vec::new();
    for &access in accesses {
        out.push((access, measure_access(&configs, access, n, probes, rounds)?));
    }
    Ok((setup, out))
}

/// One access pattern over every configuration (see [`measure_partitioned`]).
fn measure_access(
    configs: &[(String, &tempfile::TempDir, Options)],
    access: Access,
    n: u64,
    probes: u64,
    rounds: usize,
) -> Result<Vec<PartitionRow>, Error> {
    let key = |i: u64| KeyShape::Short.key(i);
    let warm: Vec<Vec<u8>> = (0..probes).map(|i| key(2 * access.draw(i, n, 3) + 1)).collect();
    let misses: Vec<Vec<u8>> = (0..probes).map(|i| key(2 * access.draw(i, n, 1) + 1)).collect();
    let hits: Vec<Vec<u8>> = (0..probes).map(|i| key(2 * access.draw(i, n, 2))).collect();
    // Per configuration and round: ns/miss, ns/hit, partitions read per
    // lookup, blocks per miss, resident bytes.
    let mut samples: Vec<Vec<[f64; 5]>> = vec![Vec::new(); configs.len()];
    for round in 0..rounds {
        for (c, (label, dir, opts)) in configs.iter().enumerate() {
            let db = Db::open(dir.path(), opts.clone())?;
            for k in &warm {
                db.get(k)?;
            }
            let before = db.stats();
            let start = Instant::now();
            for k in &misses {
                if db.get(k)?.is_some() {
                    return Err(format!("{label}: a missing key was found").into());
                }
            }
            let miss_ns = start.elapsed().as_nanos() as f64 / probes as f64;
            let mid = db.stats();
            let start = Instant::now();
            for k in &hits {
                if db.get(k)?.is_none() {
                    return Err(format!("{label}: a present key was not found").into());
                }
            }
            let hit_ns = start.elapsed().as_nanos() as f64 / probes as f64;
            let after = db.stats();
            samples[c].push([
                miss_ns,
                hit_ns,
                (after.filter_partitions_read - before.filter_partitions_read) as f64 / (2 * probes) as f64,
                (mid.data_blocks_read - before.data_blocks_read) as f64 / probes as f64,
                after.resident_filter_bytes() as f64,
            ]);
            eprintln!(
                "  {} round {round}: {label}: {miss_ns:.0} ns/miss, {hit_ns:.0} ns/hit",
                access.name()
            );
            db.close()?;
        }
    }
    let rows = configs
        .iter()
        .zip(&samples)
        .map(|((label, _, _), s)| {
            let med = |j: usize| median(&mut s.iter().map(|x| x[j]).collect::<Vec<_>>());
            PartitionRow {
                label: label.clone(),
                ns_per_miss: med(0),
                ns_per_hit: med(1),
                partitions_read_per_lookup: med(2),
                blocks_per_miss: med(3),
                resident_bytes: med(4) as u64,
            }
        })
        .collect();
    Ok(rows)
}
