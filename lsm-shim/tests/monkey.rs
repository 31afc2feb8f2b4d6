//! Monkey's filter allocation inside the store: the memory budget is met,
//! every level gets an FPR of at most 1 (deeper levels higher), and the
//! model's predicted reads per missing key match what missing keys really
//! cost, and beat a uniform policy of the same memory.

use std::sync::Arc;

use amq::{FilterKind, FilterSizing};
use amq_lsm::env::FaultEnv;
use amq_lsm::{CompactionStyle, Db, FilterPolicy, LeveledOptions, Options, Stats, SyncMode};

const KEYS: u64 = 200_000;

/// A 16-byte key: 8 bytes of `i` scrambled, then `i`, so keys spread over
/// the key space and every run's range covers nearly all of it.
fn key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

/// Loads `KEYS` keys into a leveled tree of at least four levels (small
/// tables and a small level 1 so the tree is deep at this size), in memory.
fn load(policy: FilterPolicy) -> Db {
    let opts = Options::default()
        .env(Arc::new(FaultEnv::new()))
        .filter_policy(policy)
        .compaction(CompactionStyle::Leveled(
            LeveledOptions::default()
                .l0_trigger(4)
                .base_level_bytes(160 << 10)
                .size_ratio(10)
                .max_levels(7),
        ))
        .memtable_bytes(64 << 10)
        .table_bytes(128 << 10)
        .sync(SyncMode::OnSync);
    let db = Db::open("/db", opts).unwrap();
    for i in 0..KEYS {
        db.put(key(i), i.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    db
}

/// Reads per missing key over `n` misses: `(measured, predicted)`, the
/// measurement in data blocks read, the prediction the model's
/// (`Stats::predicted_reads_for` of each missing key).
fn reads_per_miss(db: &Db, n: u64) -> (f64, f64) {
    let s = db.stats();
    let mut predicted = 0.0;
    for i in 0..n {
        let k = key(KEYS + 1 + i);
        predicted += s.predicted_reads_for(&k);
        assert_eq!(db.get(k).unwrap(), None);
    }
    let measured = (db.stats().data_blocks_read - s.data_blocks_read) as f64;
    (measured / n as f64, predicted / n as f64)
}

fn filter_bits_per_key(s: &Stats) -> f64 {
    let bits: u64 = s.levels.iter().map(|l| l.filter_bytes * 8).sum();
    let keys: u64 = s.levels.iter().map(|l| l.entries).sum();
    bits as f64 / keys as f64
}

#[test]
fn monkey_meets_its_budget_and_its_prediction() {
    let budget = 5.0;
    let db = load(FilterPolicy::monkey(FilterKind::BlockedBloom, budget).unwrap());
    let s = db.stats();
    let deep: Vec<usize> = (0..s.levels.len()).filter(|&i| s.levels[i].entries > 0).collect();
    assert!(deep.len() >= 4, "levels with data: {deep:?}");
    // The budget, in bytes built: within 4%. Tables keep the filters they
    // were built with while the tree grows around them; the drift this
    // leaves is charged to later tables, but a growing tree ends slightly
    // over (measured 2.9% here; the allocation itself meets a budget to
    // 2%: `monkey::tests`).
    let bpk = filter_bits_per_key(&s);
    let levels: Vec<(u64, f64)> = s
        .levels
        .iter()
        .map(|l| (l.entries, l.filter_bits_per_entry()))
        .collect();
    assert!(
        (bpk / budget - 1.0).abs() < 0.04,
        "{bpk} bits per key against {budget}; per level (entries, bits/key): {levels:?}"
    );
    // Every level's filters expect an FPR in (0, 1]; below level 0, the
    // deeper level the higher.
    let per_level: Vec<f64> = deep
        .iter()
        .map(|&i| s.levels[i].predicted_reads_per_miss / s.levels[i].runs as f64)
        .collect();
    assert!(per_level.iter().all(|&p| p > 0.0 && p <= 1.0), "{per_level:?}");
    assert!(per_level[1..].windows(2).all(|w| w[0] <= w[1]), "{per_level:?}");
    // The model against 40,000 missing keys: within 15%. (The whole-tree
    // figure assumes every run's range holds the key; the deepest level
    // here covers only part of the key space, so it says more.)
    let (measured, predicted) = reads_per_miss(&db, 40_000);
    assert!(s.predicted_reads_per_miss() >= predicted);
    assert!(
        (measured / predicted - 1.0).abs() < 0.15,
        "measured {measured:.4} vs predicted {predicted:.4}"
    );
}

#[test]
fn monkey_reads_less_than_uniform_at_the_same_memory() {
    let monkey = load(FilterPolicy::monkey(FilterKind::BlockedBloom, 5.0).unwrap());
    let uniform = load(FilterPolicy::uniform(
        FilterKind::BlockedBloom,
        FilterSizing::BitsPerKey(5.0),
    ));
    let (m, u) = (monkey.stats(), uniform.stats());
    let (m_bpk, u_bpk) = (filter_bits_per_key(&m), filter_bits_per_key(&u));
    assert!(
        (m_bpk / u_bpk - 1.0).abs() < 0.03,
        "{m_bpk} vs {u_bpk} bits per key"
    );
    let (m_reads, u_reads) = (
        reads_per_miss(&monkey, 40_000).0,
        reads_per_miss(&uniform, 40_000).0,
    );
    assert!(
        m_reads < 0.7 * u_reads,
        "Monkey {m_reads:.4} vs uniform {u_reads:.4}"
    );
}
