//! The store's targets: damaged files at open, and operation sequences
//! (with reopens and power cuts) against a `BTreeMap`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use amq::range::RangeSizing;
use amq::{CappedPrefix, DelimitedPrefix, FilterKind, FilterSizing, FixedPrefix, PrefixExtractor};
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{
    CompactionStyle, Db, FilterPolicy, LevelRangeFilter, LeveledOptions, Options, RangeFilterPolicy,
    Recovery, SyncMode, TieredOptions,
};
use arbitrary::Arbitrary;

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options(env: &Arc<FaultEnv>, policy: FilterPolicy, tiered: bool) -> Options {
    let env: Arc<dyn Env> = env.clone();
    Options::default()
        .env(env)
        .filter_policy(policy)
        .compaction(if tiered {
            CompactionStyle::Tiered(TieredOptions::default().runs_per_level(3).max_levels(4))
        } else {
            CompactionStyle::Leveled(
                LeveledOptions::default()
                    .l0_trigger(3)
                    .base_level_bytes(4 << 10)
                    .size_ratio(3)
                    .max_levels(4),
            )
        })
        .memtable_bytes(1000)
        .block_bytes(128)
        .table_bytes(1024)
        .sync(SyncMode::EveryWrite)
}

/// Which file of the store to damage.
#[derive(Debug, Arbitrary)]
pub enum Which {
    Table,
    Manifest,
    Wal,
    Current,
}

/// A damage: xor `bytes` into the file at `offset` (patch), or replace the
/// file with `bytes`.
#[derive(Debug, Arbitrary)]
pub struct FileInput {
    pub which: Which,
    pub replace: bool,
    pub offset: u32,
    pub bytes: Vec<u8>,
    pub strict: bool,
    pub point_in_time: bool,
    /// The table's filter in partitions (a partition index, footer
    /// version 2) instead of one filter block.
    pub partitioned: bool,
    /// A range filter block too.
    pub range_filter: bool,
}

/// `opts` with tiny filter partitions and a filter cache of a few of them.
fn partitioned(mut opts: Options) -> Options {
    opts.filter_partition_bytes = Some(32);
    opts.filter_cache_bytes = 512;
    opts
}

pub fn damaged_files(input: FileInput) {
    let env = Arc::new(FaultEnv::new());
    let policy = FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01));
    let mut opts = options(&env, policy, false);
    opts.memtable_bytes = 1 << 20;
    if input.partitioned {
        opts = partitioned(opts);
    }
    if input.range_filter {
        opts.range_filter_policy = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0));
    }
    let mut flushed = BTreeMap::new();
    {
        let db = Db::open(DIR, opts.clone()).expect("a clean store opens");
        for i in 0..60u32 {
            db.put(&key(i * 2), &i.to_le_bytes()).unwrap();
            flushed.insert(key(i * 2), i.to_le_bytes().to_vec());
        }
        db.flush().unwrap();
        for i in 0..8u32 {
            db.put(&key(1000 + i), b"wal").unwrap();
        }
    }
    let suffix = match input.which {
        Which::Table => ".sst",
        Which::Manifest => "MANIFEST-",
        Which::Wal => ".wal",
        Which::Current => "CURRENT",
    };
    let names = env.list(Path::new(DIR)).unwrap();
    let Some(name) = names.iter().find(|n| n.contains(suffix)) else {
        return;
    };
    let path = Path::new(DIR).join(name);
    env.corrupt(&path, |d| {
        if input.replace {
            *d = input.bytes.clone();
        } else if !d.is_empty() {
            let at = input.offset as usize % d.len();
            for (b, x) in d[at..].iter_mut().zip(&input.bytes) {
                *b ^= x;
            }
        }
    })
    .unwrap();
    opts.strict_filters = input.strict;
    opts.wal_recovery = if input.point_in_time {
        Recovery::PointInTime
    } else {
        Recovery::TolerateTornTail
    };
    let Ok(db) = Db::open(DIR, opts) else { return };
    // Whatever opened answers for the flushed keys with their value or a
    // typed error; a patched table never loses a key (a replaced file may be
    // anything, so only the absence of panics is checked there).
    for (k, v) in &flushed {
        match db.get(k) {
            Ok(Some(got)) => assert_eq!(&got, v, "wrong value"),
            Ok(None) => assert!(input.replace, "false negative after a patch"),
            Err(_) => {}
        }
        let _ = db.get(&[k.as_slice(), b"x"].concat());
        // A bounded scan of the key alone: its range filter may skip the
        // table only where the table does not hold it.
        match db.scan(k.clone()..=k.clone()).next() {
            Some(Ok((got_k, got))) => assert_eq!((&got_k, &got), (k, v), "wrong scan row"),
            None => assert!(input.replace, "a scan lost a key after a patch"),
            Some(Err(_)) => {}
        }
    }
    for r in db.iter() {
        if r.is_err() {
            break;
        }
    }
}

/// One step of the store.
#[derive(Debug, Arbitrary)]
pub enum DbOp {
    Put(u8, Vec<u8>),
    Delete(u8),
    Get(u8),
    Scan(u8, u8),
    /// A narrow scan just past key `k` ([`tenant_key`]): from `k` with byte
    /// `a` appended to `k` with byte `b` appended, both included (mostly
    /// empty, which range filters rule out).
    ScanNear(u8, u8, u8),
    /// A prefix scan ([`prefix`]), from the back if set.
    ScanPrefix(u8, bool),
    Flush,
    Compact,
    /// A reopen with configuration `n` ([`with_config`]).
    Reopen(u8),
    Crash,
}

/// The keys of `db_ops`: tenants behind a `:` (so prefix filters have
/// prefixes to skip by), and the plain keys of the other targets.
fn tenant_key(i: u8) -> Vec<u8> {
    match i % 3 {
        0 => key(i.into()),
        _ => format!("t{}:{:03}", i % 7, i / 7).into_bytes(),
    }
}

/// The prefixes prefix scans ask for: complete for some extractors, not
/// for others, and the empty one.
fn prefix(i: u8) -> Vec<u8> {
    match i % 4 {
        0 => format!("t{}:", i % 7),
        1 => format!("t{}", i % 7),
        2 => "key".to_string(),
        _ => String::new(),
    }
    .into_bytes()
}

/// `opts` with configuration `n`: no extractor, or one of several, with or
/// without whole keys in the filters; and no range filters, or range
/// filters of one size or another on some levels.
fn with_config(opts: Options, n: u8) -> Options {
    let range = match (n / 5) % 3 {
        0 => RangeFilterPolicy::none(),
        1 => RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(12.0)),
        _ => {
            RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(20.0)).with_bottommost(LevelRangeFilter::None)
        }
    };
    with_prefixes(opts, n).range_filter_policy(range)
}

/// `opts` with prefix configuration `n`: no extractor, or one of several,
/// with or without whole keys in the filters.
fn with_prefixes(opts: Options, n: u8) -> Options {
    let (extractor, whole_keys): (Option<Arc<dyn PrefixExtractor>>, bool) = match n % 5 {
        0 => (None, true),
        1 => (Some(Arc::new(DelimitedPrefix::new(b':'))), true),
        2 => (Some(Arc::new(DelimitedPrefix::new(b':'))), false),
        3 => (Some(Arc::new(FixedPrefix::new(2))), false),
        _ => (Some(Arc::new(CappedPrefix::new(3))), true),
    };
    let opts = opts.whole_key_filtering(whole_keys);
    match extractor {
        Some(e) => opts.prefix_extractor(e),
        None => opts,
    }
}

#[derive(Debug, Arbitrary)]
pub struct DbInput {
    pub kind: u8,
    pub tiered: bool,
    pub partitioned: bool,
    /// The first configuration ([`with_config`]).
    pub prefixes: u8,
    pub ops: Vec<DbOp>,
}

pub fn db_ops(input: DbInput) {
    // The kinds a store can use: those driven by its key hash.
    let kinds: Vec<FilterKind> = FilterKind::ALL
        .iter()
        .copied()
        .filter(|k| k.hash_scheme() == amq::HashScheme::Xxh3Seeded)
        .collect();
    let policy = match usize::from(input.kind) % (kinds.len() + 1) {
        0 => FilterPolicy::none(),
        i => FilterPolicy::uniform(kinds[i - 1], FilterSizing::Fpr(0.01)),
    };
    let env = Arc::new(FaultEnv::new());
    let opts = options(&env, policy, input.tiered);
    let opts = if input.partitioned {
        partitioned(opts)
    } else {
        opts
    };
    let mut config = input.prefixes;
    let mut db = Db::open(DIR, with_config(opts.clone(), config)).expect("a new store opens");
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for op in input.ops.into_iter().take(300) {
        match op {
            DbOp::Put(k, mut v) => {
                v.truncate(64);
                db.put(tenant_key(k), &v).unwrap();
                model.insert(tenant_key(k), v);
            }
            DbOp::Delete(k) => {
                db.delete(tenant_key(k)).unwrap();
                model.remove(&tenant_key(k));
            }
            DbOp::Get(k) => assert_eq!(db.get(tenant_key(k)).unwrap(), model.get(&tenant_key(k)).cloned()),
            DbOp::ScanPrefix(p, backward) => {
                let p = prefix(p);
                let mut got: Vec<_> = match backward {
                    false => db.scan_prefix(&p).map(|r| r.unwrap()).collect(),
                    true => db.scan_prefix(&p).rev().map(|r| r.unwrap()).collect(),
                };
                if backward {
                    got.reverse();
                }
                let want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(&p))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want, "prefix {p:?}");
            }
            DbOp::Scan(a, b) => {
                let (lo, hi) = (tenant_key(a), tenant_key(b));
                let got: Vec<_> = db.scan(lo.clone()..hi.clone()).map(|r| r.unwrap()).collect();
                let want: Vec<_> = if lo <= hi {
                    model.range(lo..hi).map(|(k, v)| (k.clone(), v.clone())).collect()
                } else {
                    Vec::new()
                };
                assert_eq!(got, want);
            }
            DbOp::ScanNear(k, a, b) => {
                let end = |x: u8| {
                    let mut e = tenant_key(k);
                    e.push(x);
                    e
                };
                let (lo, hi) = (end(a), end(b));
                let got: Vec<_> = db.scan(lo.clone()..=hi.clone()).map(|r| r.unwrap()).collect();
                let want: Vec<_> = if lo <= hi {
                    model
                        .range(lo..=hi)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                } else {
                    Vec::new()
                };
                assert_eq!(got, want);
            }
            DbOp::Flush => db.flush().unwrap(),
            DbOp::Compact => db.compact().unwrap(),
            DbOp::Reopen(_) | DbOp::Crash => {
                drop(db);
                match op {
                    DbOp::Reopen(n) => config = n,
                    // Every write was synced (`EveryWrite`): none may be lost.
                    _ => env.crash(),
                }
                db = Db::open(DIR, with_config(opts.clone(), config)).expect("reopen");
            }
        }
    }
    let all: BTreeMap<_, _> = db.iter().map(|r| r.unwrap()).collect();
    assert_eq!(all, model);
}
