//! The model test: random sequences of put, delete, get, scan, flush,
//! compact and reopen, checked step by step against a `BTreeMap`, for every
//! filter kind and no filter, leveled and tiered.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use amq_lsm::env::{Env, StdEnv};
use amq_lsm::{CompactionStyle, Db, FilterPolicy};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use common::*;

#[derive(Debug, Clone)]
enum Op {
    Put(u32, Vec<u8>),
    Delete(u32),
    Get(u32),
    MultiGet(Vec<u32>),
    Scan(u32, u32),
    Flush,
    Compact,
    Reopen,
}

/// The model's key `i`: four shapes, so tables hold keys of several
/// lengths, keys that are prefixes of others, and keys behind a 48-byte
/// shared prefix (the read path compares keys past the prefix every table
/// shares, and must place keys shorter than it, or differing inside it,
/// outside every range).
fn key(i: u32) -> Vec<u8> {
    const LONG: &str = "tenant-00042/table-orders/index-by-customer-id//";
    match i % 4 {
        0 => format!("key{i:05}"),
        1 => format!("{LONG}{i:05}"),
        2 => format!("key{}", i / 4),
        _ => format!("{}{}", &LONG[..(i as usize / 4) % LONG.len()], i),
    }
    .into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    // A small key domain, so keys are overwritten and deleted often.
    let k = 0u32..300;
    prop_oneof![
        40 => (k.clone(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(k, v)| Op::Put(k, v)),
        10 => k.clone().prop_map(Op::Delete),
        25 => k.clone().prop_map(Op::Get),
        5 => proptest::collection::vec(k.clone(), 0..40).prop_map(Op::MultiGet),
        5 => (k.clone(), k).prop_map(|(a, b)| Op::Scan(a.min(b), a.max(b))),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

fn check(
    env: Arc<dyn Env>,
    dir: &std::path::Path,
    policy: &FilterPolicy,
    style: CompactionStyle,
    ops: &[Op],
    caching: Caching,
) -> Result<(u64, u64, u64, u64), TestCaseError> {
    let opts = || {
        small_options(env.clone(), policy.clone(), style)
            .block_cache_bytes(caching.block_cache_bytes)
            .filter_partition_bytes(caching.filter_partition_bytes)
            .filter_cache_bytes(caching.filter_cache_bytes)
    };
    let mut db = Db::open(dir, opts()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    // Flushes, compactions and filter probes over every incarnation.
    let mut totals = (0, 0, 0, 0);
    let mut count = |s: amq_lsm::Stats| {
        totals.0 += s.flushes;
        totals.1 += s.compactions;
        totals.2 += s.filter_probes;
        totals.3 += s.filter_partitions_read;
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Put(k, v) => {
                db.put(key(*k), v).unwrap();
                model.insert(key(*k), v.clone());
            }
            Op::Delete(k) => {
                db.delete(key(*k)).unwrap();
                model.remove(&key(*k));
            }
            Op::Get(k) => {
                prop_assert_eq!(
                    db.get(key(*k)).unwrap(),
                    model.get(&key(*k)).cloned(),
                    "op {} {:?}",
                    i,
                    op
                );
            }
            Op::MultiGet(ks) => {
                let keys: Vec<Vec<u8>> = ks.iter().map(|&k| key(k)).collect();
                let want: Vec<_> = keys.iter().map(|k| model.get(k).cloned()).collect();
                prop_assert_eq!(db.multi_get(&keys).unwrap(), want, "op {} {:?}", i, op);
            }
            Op::Scan(a, b) => {
                let (lo, hi) = (key(*a).min(key(*b)), key(*a).max(key(*b)));
                let got: Vec<_> = db.scan(lo.clone()..hi.clone()).map(|r| r.unwrap()).collect();
                let want: Vec<_> = model
                    .range(lo.clone()..hi.clone())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(got, want, "op {} {:?}", i, op);
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen => {
                count(db.stats());
                drop(db);
                db = Db::open(dir, opts()).unwrap();
            }
        }
    }
    // At the end every key agrees, by get and by multi_get (with every key
    // twice, in a scrambled order), and so does a full scan.
    let mut all: Vec<Vec<u8>> = (0..300).chain(0..300).map(|k| key((k * 7919) % 300)).collect();
    all.swap(0, 599);
    let multi = db.multi_get(&all).unwrap();
    for (k, m) in all.iter().zip(&multi) {
        let want = model.get(k).cloned();
        prop_assert_eq!(&db.get(k).unwrap(), &want);
        prop_assert_eq!(m, &want);
    }
    prop_assert_eq!(contents(&db), model);
    let stats = db.stats();
    prop_assert_eq!(stats.untrusted_filters, 0);
    prop_assert_eq!(stats.untrusted_filter_partitions, 0);
    prop_assert!(stats.filter_cache_bytes <= caching.filter_cache_bytes as u64);
    count(stats);
    Ok(totals)
}

/// How a case reads: through a block cache or not, with whole or
/// partitioned filters, and a filter cache or not.
#[derive(Debug, Clone, Copy)]
struct Caching {
    block_cache_bytes: usize,
    filter_partition_bytes: Option<usize>,
    filter_cache_bytes: usize,
}

impl Caching {
    /// Variant `i` of 8: every other one through a block cache of a few blocks,
    /// so hits, misses and evictions meet every sequence; every other pair
    /// with filters partitioned into tiny partitions (several per
    /// table), half of those through a filter cache of a few partitions.
    fn of_case(i: u32) -> Caching {
        Caching {
            block_cache_bytes: if i % 2 == 1 { 700 } else { 0 },
            filter_partition_bytes: (i % 4 >= 2).then_some(40),
            filter_cache_bytes: if i % 8 >= 6 { 400 } else { 0 },
        }
    }
}

fn run(policy: FilterPolicy, style: CompactionStyle, cases: u32, seed: u64) {
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let totals = std::cell::Cell::new((0u64, 0u64, 0u64, 0u64));
    runner
        .run(
            &(proptest::collection::vec(op(), 100..400), 0u32..8),
            |(ops, caching)| {
                let (_, env) = mem_env();
                let s = check(
                    env,
                    std::path::Path::new("/db"),
                    &policy,
                    style,
                    &ops,
                    Caching::of_case(caching),
                )?;
                let t = totals.get();
                totals.set((t.0 + s.0, t.1 + s.1, t.2 + s.2, t.3 + s.3));
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{} {style:?}: {e}", policy.describe()));
    // The sequences must have exercised flushes, compactions and (with a
    // filter) filter probes, partitioned filters among them, or the test
    // proves nothing.
    let (flushes, compactions, probes, partitions_read) = totals.get();
    assert!(
        flushes > 3 * u64::from(cases) && compactions > u64::from(cases) / 2,
        "{flushes} {compactions}"
    );
    if policy != FilterPolicy::none() {
        assert!(probes > 0);
    }
    let partitioned = |level| policy.for_level(level, false).kind().is_some();
    if partitioned(0) || partitioned(1) {
        assert!(partitions_read > 0, "{}", policy.describe());
    }
}

/// Cases per (policy, style): more with `AMQ_LSM_MODEL_CASES`.
fn cases() -> u32 {
    std::env::var("AMQ_LSM_MODEL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12)
}

#[test]
fn model_leveled_every_filter_kind() {
    for (i, p) in policies().into_iter().enumerate() {
        run(p, leveled(), cases(), 100 + i as u64);
    }
}

#[test]
fn model_tiered_every_filter_kind() {
    for (i, p) in policies().into_iter().enumerate() {
        run(p, tiered(), cases(), 200 + i as u64);
    }
}

#[test]
fn model_on_the_real_file_system() {
    let policy = FilterPolicy::default();
    let mut runner = TestRunner::new(Config {
        cases: 4,
        rng_seed: RngSeed::Fixed(7),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(op(), 1..300), |ops| {
            let dir = tempfile::tempdir().unwrap();
            check(
                Arc::new(StdEnv),
                dir.path(),
                &policy,
                leveled(),
                &ops,
                Caching {
                    block_cache_bytes: 4096,
                    filter_partition_bytes: Some(64),
                    filter_cache_bytes: 1024,
                },
            )
            .map(drop)
        })
        .unwrap();
}
