//! Prefix seeks on a tree of overlapping tables, for the criterion bench
//! (`benches/lsm.rs`) and the report (`src/bin/prefix_report.rs`).
//!
//! The tree ([`PrefixTree`]): N tables of 20,000 keys `t{tenant:08}:{row:08}`
//! each, written as N flushes into a tiered store that never compacts, so
//! every table's key range covers every tenant: tenant `2(i + N·m)` lives in
//! table `i`, ten rows each. Odd tenants are absent everywhere, except the
//! [`PRESENT_TENANTS`] from [`PRESENT`] on, each with one row in each of the
//! first 32 tables. Filters are
//! `BlockedBloom` at 10 bits per entry, the block cache is off (every data
//! block read is a `pread` from the page cache and a checksum).
//!
//! Each query is what a user writes, so the same code measures the store
//! with a prefix extractor (`DelimitedPrefix::new(b':')`) and without one:
//! a seek is `db.scan(p..prefix_end(p)).next()` (which the store turns into
//! a prefix probe when the bounds share one complete prefix, as
//! `Db::scan_prefix` does), a prefix scan collects the same range.

use std::hint::black_box;
use std::time::Instant;

use amq::hash::{reduce, remix};
use amq::{DelimitedPrefix, FilterKind, FilterSizing};
use amq_lsm::{Db, FilterPolicy, Options, Stats, SyncMode, TieredOptions, WriteBatch};

use crate::lsm::Error;

/// Keys per table.
pub const KEYS_PER_TABLE: u64 = 20_000;
/// Rows per tenant in a table.
pub const ROWS_PER_TENANT: u64 = 10;
/// The first of the tenants with one row in each of the first
/// [`PRESENT_TABLES`] tables (odd: `PRESENT`, `PRESENT + 2`, ...).
pub const PRESENT: u64 = 1_000_001;
/// How many such tenants (prefix scans cycle through them, so a filter's
/// false positives are averaged over many prefixes).
pub const PRESENT_TENANTS: u64 = 64;
/// Tables holding a row of each present tenant.
pub const PRESENT_TABLES: usize = 32;

/// Present tenant `i` (modulo [`PRESENT_TENANTS`]).
pub fn present(i: u64) -> u64 {
    PRESENT + 2 * (i % PRESENT_TENANTS)
}

/// The key of `row` of `tenant`.
pub fn key(tenant: u64, row: u64) -> Vec<u8> {
    format!("t{tenant:08}:{row:08}").into_bytes()
}

/// The prefix of every key of `tenant`.
pub fn prefix(tenant: u64) -> Vec<u8> {
    format!("t{tenant:08}:").into_bytes()
}

/// The least key after every key of `tenant` (`:` + 1 is `;`).
pub fn prefix_end(tenant: u64) -> Vec<u8> {
    format!("t{tenant:08};").into_bytes()
}

/// Tenants per table.
fn tenants_per_table() -> u64 {
    KEYS_PER_TABLE / ROWS_PER_TENANT
}

/// The store of the measurement, with a prefix extractor or without.
pub struct PrefixTree {
    /// The store.
    pub db: Db,
    /// Its tables.
    pub tables: usize,
    _dir: tempfile::TempDir,
}

/// The store's options: tiered, never compacting, no block cache, one
/// flush per table; `BlockedBloom` at 10 bits per entry, or `policy`.
pub fn options(extractor: bool, policy: Option<FilterPolicy>) -> Options {
    let opts = Options::default()
        .filter_policy(policy.unwrap_or_else(|| {
            FilterPolicy::uniform(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0))
        }))
        .compaction(TieredOptions::default().runs_per_level(100_000))
        .memtable_bytes(256 << 20)
        .sync(SyncMode::OnSync);
    match extractor {
        true => opts.prefix_extractor(DelimitedPrefix::new(b':')),
        false => opts,
    }
}

impl PrefixTree {
    /// Writes the tree of `tables` tables (see the module docs).
    pub fn build(tables: usize, opts: Options) -> Result<PrefixTree, Error> {
        let dir = tempfile::tempdir()?;
        let db = Db::open(dir.path(), opts)?;
        let n = tables as u64;
        for t in 0..n {
            let mut batch = WriteBatch::new();
            for m in 0..tenants_per_table() {
                for row in 0..ROWS_PER_TENANT {
                    batch.put(key(2 * (t + n * m), row), b"value of a row of a tenant");
                }
            }
            if (t as usize) < PRESENT_TABLES {
                for i in 0..PRESENT_TENANTS {
                    batch.put(key(present(i), t), b"present");
                }
            }
            db.write(batch)?;
            db.flush()?;
        }
        Ok(PrefixTree {
            db,
            tables,
            _dir: dir,
        })
    }

    /// `count` absent tenants, spread over the key space.
    pub fn absent_tenants(&self, count: u64) -> Vec<u64> {
        let span = self.tables as u64 * tenants_per_table();
        (0..count)
            .map(|i| 2 * reduce(remix(i, 0xab5e), span) + 1)
            .filter(|t| !(PRESENT..PRESENT + 2 * PRESENT_TENANTS).contains(t))
            .collect()
    }
}

/// Range `i` of the scans across prefixes: from a random present tenant to
/// 64 tenants on (no shared prefix: no prefix probe).
pub fn across_range(tables: usize, i: u64) -> (Vec<u8>, Vec<u8>) {
    let span = tables as u64 * tenants_per_table();
    let from = 2 * reduce(remix(i, 0xac05), span - 64);
    (prefix(from), prefix(from + 128))
}

/// One measured query: ns per query and what it read per query.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured {
    /// Nanoseconds per query.
    pub ns: f64,
    /// Data blocks read per query (by gets or scans).
    pub blocks: f64,
    /// Rows returned per query.
    pub rows: f64,
}

fn blocks(s: &Stats) -> u64 {
    s.data_blocks_read + s.scan_blocks_read
}

/// Times `query` over `inputs`, counting blocks read and rows returned.
pub fn measure<T>(db: &Db, inputs: &[T], mut query: impl FnMut(&T) -> usize) -> Measured {
    let before = blocks(&db.stats());
    let start = Instant::now();
    let mut rows = 0;
    for x in inputs {
        rows += black_box(query(x));
    }
    let ns = start.elapsed().as_nanos() as f64;
    let n = inputs.len().max(1) as f64;
    Measured {
        ns: ns / n,
        blocks: (blocks(&db.stats()) - before) as f64 / n,
        rows: rows as f64 / n,
    }
}

/// An absent point read of each tenant's first row (keys made before
/// timing).
pub fn absent_get(db: &Db, tenants: &[u64]) -> Measured {
    let keys: Vec<Vec<u8>> = tenants.iter().map(|&t| key(t, 0)).collect();
    measure(db, &keys, |k| usize::from(db.get(k).expect("get").is_some()))
}

/// Each tenant's prefix range, made before timing.
fn ranges(tenants: &[u64]) -> Vec<(Vec<u8>, Vec<u8>)> {
    tenants.iter().map(|&t| (prefix(t), prefix_end(t))).collect()
}

/// A seek to each (absent) tenant: the first row of its prefix.
pub fn seek(db: &Db, tenants: &[u64]) -> Measured {
    measure(db, &ranges(tenants), |(lo, hi)| {
        usize::from(db.scan(lo.as_slice()..hi.as_slice()).next().is_some())
    })
}

/// Every row of a present tenant, `times` times, cycling through them.
pub fn present_scan(db: &Db, times: usize) -> Measured {
    let tenants: Vec<u64> = (0..times as u64).map(present).collect();
    measure(db, &ranges(&tenants), |(lo, hi)| {
        db.scan(lo.as_slice()..hi.as_slice()).count()
    })
}

/// 64 rows across tenants from each of `starts`.
pub fn across(tree: &PrefixTree, starts: &[u64]) -> Measured {
    let ranges: Vec<_> = starts.iter().map(|&i| across_range(tree.tables, i)).collect();
    measure(&tree.db, &ranges, |(lo, hi)| {
        tree.db.scan(lo.as_slice()..hi.as_slice()).take(64).count()
    })
}

/// Filter bytes of one table of the tree (20,000 keys) under `kind` at 10
/// bits per entry: whole keys only, whole keys and prefixes, prefixes only.
pub fn filter_bytes(kind: FilterKind) -> Result<[u64; 3], Error> {
    let mut out = [0; 3];
    for (i, (extractor, whole_keys)) in [(false, true), (true, true), (true, false)]
        .into_iter()
        .enumerate()
    {
        let policy = FilterPolicy::uniform(kind, FilterSizing::BitsPerKey(10.0));
        let opts = options(extractor, Some(policy)).whole_key_filtering(whole_keys);
        let tree = PrefixTree::build(1, opts)?;
        out[i] = tree.db.stats().filter_bytes();
    }
    Ok(out)
}

/// The same keys in fjall, written as the same flushes: its standard Bloom
/// filters at 10 bits per key, no compression, and its default (leveled)
/// compaction, waited out, since fjall cannot keep a tree of many
/// overlapping tables (it stalls writes once level 0 holds a few dozen, and
/// its FIFO strategy refuses overlapping tables). fjall has no prefix
/// filter: a prefix seek opens every table whose range meets the prefix.
pub struct FjallTree {
    /// The keyspace.
    pub ks: fjall::Keyspace,
    _db: fjall::Database,
    _dir: tempfile::TempDir,
}

impl FjallTree {
    /// Writes the tree of `tables` tables.
    pub fn build(tables: usize) -> Result<FjallTree, Error> {
        use fjall::config::{
            BloomConstructionPolicy, CompressionPolicy, FilterPolicy as FjallFilters, FilterPolicyEntry,
        };
        let dir = tempfile::tempdir()?;
        let db = fjall::Database::builder(dir.path()).open()?;
        let ks = db.keyspace("prefix", || {
            fjall::KeyspaceCreateOptions::default()
                .filter_policy(FjallFilters::all(FilterPolicyEntry::Bloom(
                    BloomConstructionPolicy::BitsPerKey(10.0),
                )))
                .data_block_compression_policy(CompressionPolicy::disabled())
                .manual_journal_persist(true)
        })?;
        let n = tables as u64;
        for t in 0..n {
            let mut batch = db.batch();
            for m in 0..tenants_per_table() {
                for row in 0..ROWS_PER_TENANT {
                    batch.insert(&ks, key(2 * (t + n * m), row), b"value of a row of a tenant");
                }
            }
            if (t as usize) < PRESENT_TABLES {
                for i in 0..PRESENT_TENANTS {
                    batch.insert(&ks, key(present(i), t), b"present");
                }
            }
            batch.commit()?;
            ks.rotate_memtable_and_wait()?;
        }
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
        Ok(FjallTree {
            ks,
            _db: db,
            _dir: dir,
        })
    }

    /// Tables in the tree now.
    pub fn tables(&self) -> usize {
        self.ks.table_count()
    }

    /// Times `query` over `inputs`: ns per query and rows per query.
    fn measure<T>(&self, inputs: &[T], mut query: impl FnMut(&T) -> usize) -> Measured {
        let start = Instant::now();
        let mut rows = 0;
        for x in inputs {
            rows += black_box(query(x));
        }
        let n = inputs.len().max(1) as f64;
        Measured {
            ns: start.elapsed().as_nanos() as f64 / n,
            blocks: f64::NAN,
            rows: rows as f64 / n,
        }
    }

    /// An absent point read of each tenant's first row.
    pub fn absent_get(&self, tenants: &[u64]) -> Measured {
        let keys: Vec<Vec<u8>> = tenants.iter().map(|&t| key(t, 0)).collect();
        self.measure(&keys, |k| usize::from(self.ks.get(k).expect("get").is_some()))
    }

    /// A seek to each tenant's prefix (`Keyspace::prefix`).
    pub fn seek(&self, tenants: &[u64]) -> Measured {
        let prefixes: Vec<Vec<u8>> = tenants.iter().map(|&t| prefix(t)).collect();
        self.measure(&prefixes, |p| usize::from(self.ks.prefix(p).next().is_some()))
    }

    /// Every row of a present tenant, `times` times, cycling through them.
    pub fn present_scan(&self, times: usize) -> Measured {
        let prefixes: Vec<Vec<u8>> = (0..times as u64).map(|i| prefix(present(i))).collect();
        self.measure(&prefixes, |p| self.ks.prefix(p).count())
    }

    /// The first 64 rows of each [`across_range`] of `starts`.
    pub fn across(&self, tables: usize, starts: &[u64]) -> Measured {
        let ranges: Vec<_> = starts.iter().map(|&i| across_range(tables, i)).collect();
        self.measure(&ranges, |(lo, hi)| {
            // Each row's key is read, as the store's scans return it.
            self.ks
                .range(lo.as_slice()..hi.as_slice())
                .take(64)
                .fold(0, |n, g| {
                    black_box(g.key().expect("key"));
                    n + 1
                })
        })
    }
}
