//! Crash safety, after LevelDB's fault-injection test.
//!
//! A fixed workload (puts, deletes, batches, flushes and compactions, with
//! tiny memtables so every kind of file is written many times) runs on
//! [`FaultEnv`]. For every mutating I/O step `i` of that workload (WAL
//! appends and syncs, table writes, directory syncs, manifest appends,
//! renames, removals):
//! - **fail** step `i`, then reopen, with and without a power cut after the
//!   failure;
//! - **cut the power** at step `i` (every byte and name not made durable by
//!   a sync is dropped), then reopen;
//!
//! and check that every write acknowledged as durable is there with its
//! value, that the one write in flight is there entirely or not at all,
//! that nothing else changed, and that no orphan file is left.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use amq::range::RangeSizing;
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{CompactionStyle, Db, Error, FilterPolicy, RangeFilterPolicy, SyncMode, WriteBatch};

use common::*;

/// One step of the workload.
#[derive(Debug, Clone)]
enum Step {
    Write(WriteBatch),
    Flush,
    Compact,
    Sync,
}

/// The model: what the store holds after a prefix of the steps.
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// What a write step writes: (key, value) or (key, `None`) for a delete.
type Writes = Vec<(u32, Option<u32>)>;

fn apply(model: &mut Model, step: &Step, ops: &[(u32, Option<u32>)]) {
    if let Step::Write(_) = step {
        for &(k, v) in ops {
            match v {
                Some(v) => model.insert(key(k), value(k, v)),
                None => model.remove(&key(k)),
            };
        }
    }
}

fn value(k: u32, v: u32) -> Vec<u8> {
    format!("value-{k}-{v}-{}", "x".repeat((k % 7) as usize * 5)).into_bytes()
}

/// The workload: steps, and for each the (key, value or delete) pairs it
/// writes.
fn workload() -> Vec<(Step, Writes)> {
    let mut steps = Vec::new();
    let mut x = 12345u64;
    let mut rand = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for i in 0..160u32 {
        let ops: Writes = match rand(10) {
            0 => vec![(rand(60) as u32, None)],
            1 => (0..3).map(|j| (rand(60) as u32, Some(i * 10 + j))).collect(),
            _ => vec![(rand(60) as u32, Some(i))],
        };
        let mut b = WriteBatch::new();
        for &(k, v) in &ops {
            match v {
                Some(v) => b.put(key(k), value(k, v)),
                None => b.delete(key(k)),
            };
        }
        steps.push((Step::Write(b), ops));
        match i {
            40 | 100 => steps.push((Step::Flush, vec![])),
            70 | 140 => steps.push((Step::Compact, vec![])),
            _ if i % 25 == 24 => steps.push((Step::Sync, vec![])),
            _ => {}
        }
    }
    steps
}

const DIR: &str = "/db";

fn options(env: &Arc<FaultEnv>, style: CompactionStyle, sync: SyncMode) -> amq_lsm::Options {
    let dyn_env: Arc<dyn Env> = env.clone();
    let mut o = small_options(dyn_env, FilterPolicy::default(), style);
    o.sync = sync;
    // Every table carries a range filter block too.
    o.range_filter_policy = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0));
    // The tiered runs write partitioned filters (several partitions per
    // table, a partition index, footer version 2), the leveled ones whole
    // filters: both table layouts meet every fault.
    if matches!(style, CompactionStyle::Tiered(..)) {
        o.filter_partition_bytes = Some(48);
        o.filter_cache_bytes = 256;
    }
    o
}

/// What a run of the workload acknowledged before its first error.
struct Outcome {
    /// Steps that returned `Ok` (a prefix of the workload).
    acked: usize,
    /// Steps known durable: with `EveryWrite`, every acked write; with
    /// `OnSync`, those before the last acked sync, flush or compaction.
    durable: usize,
}

fn run_workload(env: &Arc<FaultEnv>, style: CompactionStyle, sync: SyncMode) -> Outcome {
    let steps = workload();
    let Ok(db) = Db::open(DIR, options(env, style, sync)) else {
        return Outcome { acked: 0, durable: 0 };
    };
    let mut durable = 0;
    for (i, (step, _)) in steps.iter().enumerate() {
        let r = match step {
            Step::Write(b) => db.write(b.clone()),
            Step::Flush => db.flush(),
            Step::Compact => db.compact(),
            Step::Sync => db.sync(),
        };
        if r.is_err() {
            // After an error, writes stay stopped until reopen.
            assert!(matches!(db.put(b"after", b"error"), Err(Error::WritesStopped)));
            return Outcome { acked: i, durable };
        }
        if sync == SyncMode::EveryWrite || !matches!(step, Step::Write(_)) {
            durable = i + 1;
        }
    }
    Outcome {
        acked: steps.len(),
        durable,
    }
}

/// Models after each prefix of the workload.
fn prefix_models() -> Vec<Model> {
    let mut m = Model::new();
    let mut out = vec![m.clone()];
    for (step, ops) in workload() {
        apply(&mut m, &step, &ops);
        out.push(m.clone());
    }
    out
}

/// Reopens with faults cleared and checks the recovered store.
fn check_recovery(
    env: &Arc<FaultEnv>,
    style: CompactionStyle,
    sync: SyncMode,
    o: &Outcome,
    models: &[Model],
    what: &str,
) {
    env.clear_faults();
    let db =
        Db::open(DIR, options(env, style, sync)).unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
    let mut got = contents(&db);
    // The marker an earlier check wrote is not part of the workload.
    got.remove(&b"after-recovery"[..]);
    // The store holds the state after some prefix of the workload: at least
    // everything durable, at most everything acknowledged plus the step in
    // flight.
    let upper = (o.acked + 1).min(models.len() - 1);
    let matched = (o.durable..=upper).find(|&j| models[j] == got);
    assert!(
        matched.is_some(),
        "{what}: recovered state is no prefix between {} and {upper} (acked {})",
        o.durable,
        o.acked
    );
    // Point reads agree with the scan.
    for k in 0..60 {
        assert_eq!(
            db.get(key(k)).unwrap(),
            got.get(&key(k)).cloned(),
            "{what}: key {k}"
        );
    }
    // No orphan: one manifest, one WAL, the live tables, CURRENT and LOCK.
    let names = env.list(Path::new(DIR)).unwrap();
    let tables = names.iter().filter(|n| n.ends_with(".sst")).count();
    let live: usize = db.stats().levels.iter().map(|l| l.tables).sum();
    assert_eq!(tables, live, "{what}: orphan tables in {names:?}");
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".wal")).count(),
        1,
        "{what}: {names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| n.starts_with("MANIFEST-")).count(),
        1,
        "{what}: {names:?}"
    );
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{what}: {names:?}");
    // And the store takes writes again.
    db.put(b"after-recovery", b"ok").unwrap();
    drop(db);
}

/// Mutating I/O steps in one whole run of the workload.
fn total_mutations(style: CompactionStyle, sync: SyncMode) -> u64 {
    let env = Arc::new(FaultEnv::new());
    let o = run_workload(&env, style, sync);
    assert_eq!(
        o.acked,
        workload().len(),
        "the workload must run clean without faults"
    );
    env.mutations()
}

/// Every `stride`-th step (all of them by default; `AMQ_LSM_CRASH_STRIDE`
/// thins the sweep for quick local runs).
fn steps(style: CompactionStyle, sync: SyncMode) -> impl Iterator<Item = u64> {
    let stride = std::env::var("AMQ_LSM_CRASH_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    (0..total_mutations(style, sync)).step_by(stride)
}

fn fail_every_step(style: CompactionStyle) {
    let models = prefix_models();
    let mut failed_runs = 0;
    for i in steps(style, SyncMode::EveryWrite) {
        for power_cut in [false, true] {
            let env = Arc::new(FaultEnv::new());
            env.fail_at(i);
            let o = run_workload(&env, style, SyncMode::EveryWrite);
            failed_runs += usize::from(env.failures() > 0);
            if power_cut {
                env.crash();
            }
            let what = format!("{style:?} fail at {i}, power cut {power_cut}");
            check_recovery(&env, style, SyncMode::EveryWrite, &o, &models, &what);
        }
    }
    assert!(failed_runs > 100, "faults must have hit: {failed_runs}");
}

fn crash_at_every_step(style: CompactionStyle, sync: SyncMode) {
    let models = prefix_models();
    for i in steps(style, sync) {
        let env = Arc::new(FaultEnv::new());
        env.crash_at(i);
        let o = run_workload(&env, style, sync);
        let what = format!("{style:?} {sync:?} power cut at {i}");
        check_recovery(&env, style, sync, &o, &models, &what);
    }
}

#[test]
fn fail_every_io_step_leveled() {
    fail_every_step(leveled());
}

#[test]
fn fail_every_io_step_tiered() {
    fail_every_step(tiered());
}

#[test]
fn power_cut_at_every_io_step_leveled() {
    crash_at_every_step(leveled(), SyncMode::EveryWrite);
}

#[test]
fn power_cut_at_every_io_step_tiered() {
    crash_at_every_step(tiered(), SyncMode::EveryWrite);
}

#[test]
fn power_cut_with_sync_on_demand_keeps_every_synced_write() {
    crash_at_every_step(leveled(), SyncMode::OnSync);
}

#[test]
fn a_crash_during_recovery_is_recovered_too() {
    // Run half the workload without flushing, cut the power, then crash the
    // recovery itself at each of its steps: the next recovery still finds
    // every acknowledged write.
    let models = prefix_models();
    let env = Arc::new(FaultEnv::new());
    let o = {
        let steps = workload();
        let db = Db::open(DIR, options(&env, leveled(), SyncMode::EveryWrite)).unwrap();
        for (step, _) in steps.iter().take(30) {
            if let Step::Write(b) = step {
                db.write(b.clone()).unwrap();
            }
        }
        Outcome {
            acked: 30,
            durable: 30,
        }
    };
    env.crash();
    let before = env.mutations();
    // The recovery's own steps: replay, flush, new manifest, cleanup.
    for i in 0..40 {
        env.crash_at(before + i);
        let _ = Db::open(DIR, options(&env, leveled(), SyncMode::EveryWrite));
        env.clear_faults();
        check_recovery(
            &env,
            leveled(),
            SyncMode::EveryWrite,
            &o,
            &models,
            &format!("recovery crash at +{i}"),
        );
        // `check_recovery` wrote one more key and closed; restart the count.
        env.crash();
    }
}
