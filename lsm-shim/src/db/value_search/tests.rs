//! Value search (`Db::find_by_value`): a model test against a
//! `BTreeMap` scan over random put/overwrite/delete/flush/compact/reopen
//! sequences, through the hierarchy (path update and rebuild), the flat
//! slices, every leaf filter, a plain scan and the automatic fallback, with
//! the index's invariants checked after every step; and damaged, missing or
//! mismatched value filters, which must never change an answer.

//!
//! A unit test of the crate, not an integration test, because it checks the
//! index's invariants (`Db::check_value_index`, test-only) after every step.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngSeed, TestRunner};

use crate::env::{Env, FaultEnv};
use crate::{
    CompactionStyle, Db, FilterPolicy, LeveledOptions, Options, SearchMethod, SyncMode, TermExtractor,
    TieredOptions, UpdateStrategy, ValueFilterSizing, ValueIndexOptions,
};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn mem_env() -> Arc<dyn Env> {
    Arc::new(FaultEnv::new())
}

fn leveled() -> CompactionStyle {
    LeveledOptions::default()
        .l0_trigger(3)
        .base_level_bytes(4 << 10)
        .size_ratio(3)
        .max_levels(4)
        .into()
}

fn tiered() -> CompactionStyle {
    TieredOptions::default().runs_per_level(3).max_levels(4).into()
}

/// Tiny memtables, blocks and tables, so a few hundred writes flush and
/// compact many times.
fn small_options(env: Arc<dyn Env>, compaction: CompactionStyle) -> Options {
    Options::default()
        .env(env)
        .compaction(compaction)
        .memtable_bytes(1000)
        .block_bytes(128)
        .table_bytes(1024)
        .sync(SyncMode::EveryWrite)
}

const DIR: &str = "/db";
const METHODS: [SearchMethod; 4] = [
    SearchMethod::Scan,
    SearchMethod::Leaves,
    SearchMethod::Hierarchy,
    SearchMethod::Flat,
];

#[derive(Debug, Clone)]
enum Op {
    Put(u32, u8),
    Delete(u32),
    Find(u8),
    Flush,
    Compact,
    Reopen,
}

/// A small value domain, so values repeat across keys and tables.
fn value(v: u8) -> Vec<u8> {
    format!("value-{v}").into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u32..120;
    let v = 0u8..12;
    prop_oneof![
        40 => (k.clone(), v.clone()).prop_map(|(k, v)| Op::Put(k, v)),
        10 => k.prop_map(Op::Delete),
        15 => v.prop_map(Op::Find),
        3 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

/// The index configurations every sequence runs under.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// Order 2, updated leaf by leaf.
    HierarchyPathUpdate,
    /// Order 3, rebuilt at every change.
    HierarchyRebuild,
    /// The cost model's choice, searched through the flat slices.
    Flat,
    /// Filters "too full" by a zero threshold: `find_by_value` scans.
    Fallback,
}

fn value_options(p: Setup) -> ValueIndexOptions {
    // Sparse filters (at most about 30 values × 2 probes in 1,024 bits),
    // so a stale internal filter differs from the OR of its children.
    let base = ValueIndexOptions::default()
        .sizing(ValueFilterSizing::FixedBits {
            bits: 1024,
            expected_values: 30,
        })
        .probes(Some(2))
        .fallback_fpr(1.0);
    match p {
        Setup::HierarchyPathUpdate => base
            .order(2)
            .method(SearchMethod::Hierarchy)
            .update(UpdateStrategy::PathUpdate),
        Setup::HierarchyRebuild => base
            .order(3)
            .method(SearchMethod::Hierarchy)
            .update(UpdateStrategy::Rebuild),
        Setup::Flat => base.method(SearchMethod::Flat),
        Setup::Fallback => base.method(SearchMethod::Hierarchy).fallback_fpr(0.0),
    }
}

fn options(env: Arc<dyn Env>, p: Setup, style: CompactionStyle) -> Options {
    small_options(env, style)
        .filter_policy(FilterPolicy::default())
        .value_index(Some(value_options(p)))
        // A flush every few writes: many tables, many index updates.
        .memtable_bytes(200)
}

/// The model's answer: every live entry with value `v`.
fn expected(model: &BTreeMap<Vec<u8>, Vec<u8>>, v: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(_, x)| x.as_slice() == v)
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect()
}

/// Runs `ops`; returns (value searches, plain scans, tables the searches
/// skipped, the hierarchy's greatest height) over every incarnation of the
/// store.
fn check(
    env: Arc<dyn Env>,
    p: Setup,
    style: CompactionStyle,
    ops: &[Op],
) -> Result<(u64, u64, u64, u64), TestCaseError> {
    let opts = || options(env.clone(), p, style);
    let mut db = Db::open(DIR, opts()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut totals = (0, 0, 0, 0);
    let count = |db: &Db, totals: &mut (u64, u64, u64, u64)| {
        let s = db.value_stats();
        totals.0 += s.searches;
        totals.1 += s.plain_scans;
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Put(k, v) => {
                db.put(key(*k), value(*v)).unwrap();
                model.insert(key(*k), value(*v));
            }
            Op::Delete(k) => {
                db.delete(key(*k)).unwrap();
                model.remove(&key(*k));
            }
            Op::Find(v) => {
                let want = expected(&model, &value(*v));
                prop_assert_eq!(&db.find_by_value(value(*v)).unwrap(), &want, "op {} {:?}", i, op);
                let tables: u64 = db.stats().levels.iter().map(|l| l.tables as u64).sum();
                for m in METHODS {
                    let got = db.find_by_value_with(value(*v), m).unwrap();
                    prop_assert_eq!(&got.entries, &want, "op {} {:?} {:?}", i, op, m);
                    // The slices are kept only where `Flat` is configured.
                    let flat_kept = matches!(p, Setup::Flat);
                    let ran = if m == SearchMethod::Flat && !flat_kept {
                        SearchMethod::Leaves
                    } else {
                        m
                    };
                    prop_assert_eq!(got.method, ran);
                    prop_assert!(got.stats.tables_scanned <= tables);
                    if m != SearchMethod::Scan {
                        totals.2 += tables - got.stats.tables_scanned;
                    }
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen => {
                count(&db, &mut totals);
                drop(db);
                db = Db::open(DIR, opts()).unwrap();
            }
        }
        if let Err(e) = db.check_value_index() {
            return Err(TestCaseError::fail(format!("op {i} {op:?}: {e}")));
        }
        totals.3 = totals.3.max(db.value_stats().hierarchy_height as u64);
    }
    for v in 0..12 {
        prop_assert_eq!(db.find_by_value(value(v)).unwrap(), expected(&model, &value(v)));
    }
    let s = db.value_stats();
    prop_assert_eq!((s.unfiltered_tables, s.untrusted_value_filters), (0, 0));
    count(&db, &mut totals);
    Ok(totals)
}

fn run(p: Setup, style: CompactionStyle, seed: u64) {
    let cases = std::env::var("AMQ_LSM_VALUE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let totals = std::cell::Cell::new((0u64, 0u64, 0u64, 0u64));
    runner
        .run(&proptest::collection::vec(op(), 100..400), |ops| {
            let env = mem_env();
            let s = check(env, p, style, &ops)?;
            let t = totals.get();
            totals.set((t.0 + s.0, t.1 + s.1, t.2 + s.2, t.3.max(s.3)));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{p:?} {style:?}: {e}"));
    let (searches, plain, skipped, height) = totals.get();
    // The sequences searched, the filters pruned some tables, hierarchies
    // over many tables grew past one level of internal filters (so updates
    // reached nodes above the bottom ones), and the fallback ran exactly
    // where it should.
    assert!(searches > 0 && skipped > 0, "{searches} {skipped}");
    if style == wide() {
        assert!(height >= 2, "the hierarchy never grew past height {height}");
    }
    match p {
        Setup::Fallback => assert!(plain > 0, "the fallback never ran"),
        _ => assert_eq!(plain, 0, "{p:?} fell back"),
    }
}

/// Many runs per level: a store of up to about 20 tables, so hierarchies of
/// order 2 grow three levels high and path updates reach the upper nodes.
fn wide() -> CompactionStyle {
    TieredOptions::default().runs_per_level(7).max_levels(3).into()
}

#[test]
fn model_hierarchy_path_update() {
    run(Setup::HierarchyPathUpdate, leveled(), 1);
    run(Setup::HierarchyPathUpdate, wide(), 2);
}

#[test]
fn model_hierarchy_rebuild() {
    run(Setup::HierarchyRebuild, wide(), 3);
}

#[test]
fn model_flat() {
    run(Setup::Flat, tiered(), 4);
}

#[test]
fn model_fallback() {
    run(Setup::Fallback, leveled(), 5);
}

/// A store of 4 tables of 30 keys each, values `v{table}-{i % 10}`, with
/// `opts` (which name the file system); returns the model.
fn build(opts: Options) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open(DIR, opts.auto_compact(false)).unwrap();
    let mut model = BTreeMap::new();
    for t in 0..4u32 {
        for i in 0..30u32 {
            let (k, v) = (key(t * 100 + i), format!("v{t}-{}", i % 10).into_bytes());
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
    }
    model
}

fn base(env: &Arc<FaultEnv>) -> Options {
    let dyn_env: Arc<dyn Env> = env.clone();
    Options::default()
        .env(dyn_env)
        .value_index(Some(ValueIndexOptions::default().sizing(
            ValueFilterSizing::BitsPerValue {
                expected_values: 10,
                bits_per_value: 20.0,
            },
        )))
        .auto_compact(false)
}

fn answers_match(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for t in 0..5 {
        for i in 0..10 {
            let v = format!("v{t}-{i}").into_bytes();
            let want = expected(model, &v);
            assert_eq!(db.find_by_value(&v).unwrap(), want, "{v:?}");
            for m in METHODS {
                assert_eq!(db.find_by_value_with(&v, m).unwrap().entries, want, "{v:?} {m:?}");
            }
        }
    }
}

/// The value filter block's contents, found as `docs/lsm-format.md`
/// describes: the metadata block's handle in the footer, the value filter
/// extension (tag 1, one length byte, offset u64, length u32, terms varint)
/// at the end of the metadata block.
fn value_filter_region(d: &[u8]) -> (usize, usize) {
    let f = &d[d.len() - 52..];
    let meta_off = u64::from_le_bytes(f[12..20].try_into().unwrap()) as usize;
    let meta_len = u32::from_le_bytes(f[20..24].try_into().unwrap()) as usize;
    let meta = &d[meta_off..meta_off + meta_len];
    let body_len = (13..=22)
        .find(|&n| meta_len >= n + 2 && meta[meta_len - n - 2] == 1 && meta[meta_len - n - 1] as usize == n)
        .expect("a value filter extension");
    let body = &meta[meta_len - body_len..];
    let off = u64::from_le_bytes(body[..8].try_into().unwrap()) as usize;
    let len = u32::from_le_bytes(body[8..12].try_into().unwrap()) as usize;
    (off, len)
}

#[test]
fn a_damaged_value_filter_block_is_scanned_never_wrong() {
    let env = Arc::new(FaultEnv::new());
    let model = build(base(&env));
    let mut tables: Vec<String> = env
        .list(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".sst"))
        .collect();
    tables.sort();
    assert_eq!(tables.len(), 4);
    let path = Path::new(DIR).join(&tables[1]);
    // Damage the block at its start, middle (the filter's bits) and end
    // (its trailer), one at a time.
    for at in [0.0, 0.5, 0.999] {
        let mut pristine = Vec::new();
        env.corrupt(&path, |d| {
            pristine = d.clone();
            let (off, len) = value_filter_region(d);
            d[off + ((len as f64 * at) as usize).min(len + 4)] ^= 0x20;
        })
        .unwrap();
        let db = Db::open(DIR, base(&env)).unwrap();
        let s = db.value_stats();
        assert_eq!(
            (s.leaf_filters, s.unfiltered_tables, s.untrusted_value_filters),
            (3, 1, 1),
            "at {at}"
        );
        answers_match(&db, &model);
        // Searches for a value of the damaged table scan it as unfiltered.
        let r = db.find_by_value_with(b"v1-3", SearchMethod::Hierarchy).unwrap();
        assert_eq!(r.stats.unfiltered_tables_scanned, 1);
        assert_eq!(r.entries.len(), 3);
        db.check_value_index().unwrap();
        drop(db);
        env.corrupt(&path, |d| *d = pristine.clone()).unwrap();
    }
    // Undamaged again: every filter trusted.
    let db = Db::open(DIR, base(&env)).unwrap();
    assert_eq!(db.value_stats().unfiltered_tables, 0);
}

#[test]
fn tables_written_without_value_filters_open_and_are_scanned() {
    let env = Arc::new(FaultEnv::new());
    // Written before value filters (no value index): the old format.
    let model = build(base(&env).value_index(None));
    let db = Db::open(DIR, base(&env)).unwrap();
    let s = db.value_stats();
    assert_eq!((s.leaf_filters, s.unfiltered_tables), (0, 4));
    answers_match(&db, &model);
    // New tables get filters; a full compaction rewrites the old ones.
    db.put(b"new", b"v9-9").unwrap();
    db.flush().unwrap();
    assert_eq!(db.value_stats().leaf_filters, 1);
    db.compact().unwrap();
    let s = db.value_stats();
    assert_eq!((s.leaf_filters, s.unfiltered_tables), (1, 0));
    let mut model = model;
    model.insert(b"new".to_vec(), b"v9-9".to_vec());
    answers_match(&db, &model);
    drop(db);
    // A store without a value index reads tables that have value filters.
    let db = Db::open(DIR, base(&env).value_index(None)).unwrap();
    answers_match(&db, &model);
    let r = db.find_by_value_with(b"v2-2", SearchMethod::Hierarchy).unwrap();
    assert!(r.plain_scan && r.method == SearchMethod::Scan);
}

#[test]
fn filters_of_another_shape_or_extractor_are_not_trusted() {
    let env = Arc::new(FaultEnv::new());
    let model = build(base(&env));
    let other_shape = base(&env).value_index.unwrap().probes(Some(1));
    let db = Db::open(DIR, base(&env).value_index(Some(other_shape))).unwrap();
    assert_eq!(db.value_stats().unfiltered_tables, 4);
    answers_match(&db, &model);
}

/// Indexes the first comma-separated field of a value.
struct FirstField;

impl TermExtractor for FirstField {
    fn name(&self) -> &str {
        "first-field"
    }
    fn terms(&self, value: &[u8], emit: &mut dyn FnMut(&[u8])) {
        emit(value.split(|&b| b == b',').next().unwrap_or(value));
    }
}

#[test]
fn an_extractor_indexes_one_field() {
    let env = Arc::new(FaultEnv::new());
    let opts = base(&env).value_index(Some(
        base(&env).value_index.unwrap().extractor(Arc::new(FirstField)),
    ));
    let db = Db::open(DIR, opts.clone()).unwrap();
    let users = ["smith", "jones", "brown"];
    let mut model = BTreeMap::new();
    for i in 0..90u32 {
        let v = format!("{},tweet {i}", users[i as usize % 3]).into_bytes();
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
        if i % 30 == 29 {
            db.flush().unwrap();
        }
    }
    db.delete(key(0)).unwrap();
    model.remove(&key(0));
    for u in users {
        let want: Vec<_> = model
            .iter()
            .filter(|(_, v)| v.starts_with(format!("{u},").as_bytes()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(want.len(), if u == "smith" { 29 } else { 30 });
        for m in METHODS {
            assert_eq!(
                db.find_by_value_with(u.as_bytes(), m).unwrap().entries,
                want,
                "{u} {m:?}"
            );
        }
    }
    // Whole values are not terms under this extractor.
    assert!(db.find_by_value(b"smith,tweet 3").unwrap().is_empty());
    drop(db);
    // The filters name their extractor: under the whole-value default they
    // are not trusted, and whole values match again.
    let db = Db::open(DIR, base(&env)).unwrap();
    assert_eq!(db.value_stats().unfiltered_tables, 3);
    assert_eq!(db.find_by_value(b"jones,tweet 4").unwrap().len(), 1);
}
