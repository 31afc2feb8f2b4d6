//! Shared setup of the store's integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use amq::{FilterKind, FilterSizing, HashScheme};
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{
    CompactionStyle, Db, FilterPolicy, LevelFilter, LeveledOptions, Options, SyncMode, TieredOptions,
};

/// Every filter kind amq has that is driven by its key hash (all but
/// `ParquetBloom`, which a policy refuses: `api.rs`), and no filter.
pub fn policies() -> Vec<FilterPolicy> {
    let mut v = vec![FilterPolicy::none()];
    for &k in FilterKind::ALL.iter() {
        if k.hash_scheme() != HashScheme::Xxh3Seeded {
            continue;
        }
        v.push(FilterPolicy::uniform(k, FilterSizing::Fpr(0.01)));
    }
    v.push(FilterPolicy::bloom_then_ribbon(0.01, 1).with_bottommost(LevelFilter::None));
    v
}

pub fn leveled() -> CompactionStyle {
    LeveledOptions::default()
        .l0_trigger(3)
        .base_level_bytes(4 << 10)
        .size_ratio(3)
        .max_levels(4)
        .into()
}

pub fn tiered() -> CompactionStyle {
    TieredOptions::default().runs_per_level(3).max_levels(4).into()
}

/// Tiny memtables, blocks and tables, so a few hundred writes flush and
/// compact many times; every write synced (the crash tests count on it).
pub fn small_options(env: Arc<dyn Env>, policy: FilterPolicy, compaction: CompactionStyle) -> Options {
    Options::default()
        .env(env)
        .filter_policy(policy)
        .compaction(compaction)
        .memtable_bytes(1000)
        .block_bytes(128)
        .table_bytes(1024)
        .sync(SyncMode::EveryWrite)
}

pub fn mem_env() -> (Arc<FaultEnv>, Arc<dyn Env>) {
    let env = Arc::new(FaultEnv::new());
    let dyn_env: Arc<dyn Env> = env.clone();
    (env, dyn_env)
}

/// Every live entry, by a full scan.
pub fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter().map(|r| r.expect("scan")).collect()
}

pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}
