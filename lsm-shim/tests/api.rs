//! The store's API as a user meets it: locking, options, policies per
//! level, hash sharing, scans, stats, and concurrent readers and writers.

mod common;

use std::ops::Bound;
use std::sync::Arc;
use std::thread;

use amq::{FilterKind, FilterSizing};
use amq_lsm::env::{Env, StdEnv};
use amq_lsm::{
    CompactionStyle, Db, Error, FilterPolicy, LevelFilter, LeveledOptions, Options, SyncMode, TieredOptions,
};

use common::*;

fn tiered_no_compaction(runs: usize) -> CompactionStyle {
    CompactionStyle::Tiered(TieredOptions::default().runs_per_level(runs + 1).max_levels(2))
}

#[test]
fn a_second_open_of_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(matches!(
        Db::open(dir.path(), Options::default()),
        Err(Error::Locked(_))
    ));
    drop(db);
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn impossible_options_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    for opts in [
        Options::default().block_bytes(0),
        Options::default().compaction(CompactionStyle::tiered(1)),
        Options::default().filter_partition_bytes(Some(0)),
        Options::default().compaction(CompactionStyle::Leveled(
            LeveledOptions::default()
                .l0_trigger(4)
                .base_level_bytes(1 << 20)
                .size_ratio(1)
                .max_levels(7),
        )),
    ] {
        assert!(matches!(
            Db::open(dir.path(), opts),
            Err(Error::InvalidOptions(_))
        ));
    }
    // Nothing was created by a refused open.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// A `ParquetBloom` takes Parquet's value hash, not the key hash the store
/// probes with: a policy naming it is refused when made (`per_level`) or
/// when the store opens (`uniform`), before a table is written.
#[test]
fn a_filter_kind_not_driven_by_the_key_hash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let parquet = LevelFilter::new(FilterKind::ParquetBloom, FilterSizing::Fpr(0.01));
    assert!(matches!(
        FilterPolicy::per_level(vec![LevelFilter::None, parquet]),
        Err(Error::InvalidOptions(_))
    ));
    let opts = Options::default().filter_policy(FilterPolicy::uniform(
        FilterKind::ParquetBloom,
        FilterSizing::Fpr(0.01),
    ));
    assert!(matches!(
        Db::open(dir.path(), opts),
        Err(Error::InvalidOptions(_))
    ));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn one_hash_per_get_however_many_tables_are_consulted() {
    let (_, env) = mem_env();
    let opts = Options::default()
        .env(env)
        .compaction(tiered_no_compaction(8))
        .auto_compact(false);
    let db = Db::open("/db", opts).unwrap();
    // Eight overlapping runs: every table's range covers every probe key.
    for run in 0..8u32 {
        for i in 0..200u32 {
            db.put(key(i * 16 + run), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(db.stats().levels[0].runs, 8);
    let before = db.stats();
    for i in 0..100u32 {
        // Absent keys (i * 16 + 15 was never written) inside every range.
        assert_eq!(db.get(key(i * 16 + 15)).unwrap(), None);
    }
    let s = db.stats();
    assert_eq!(s.key_hashes - before.key_hashes, 100);
    assert_eq!(s.tables_consulted - before.tables_consulted, 800);
    assert_eq!(s.filter_probes - before.filter_probes, 800);
    // Misses read data blocks only on false positives.
    assert_eq!(s.data_blocks_read, s.filter_false_positives);
}

#[test]
fn multi_get_hashes_each_key_once_and_probes_each_filter_once_per_batch() {
    let (_, env) = mem_env();
    let opts = Options::default()
        .env(env)
        .compaction(tiered_no_compaction(4))
        .auto_compact(false);
    let db = Db::open("/db", opts).unwrap();
    for run in 0..4u32 {
        for i in 0..500u32 {
            db.put(key(i * 8 + run), run.to_le_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    // 100 present keys (one per table's worth) and 100 absent ones.
    let keys: Vec<Vec<u8>> = (0..100u32)
        .flat_map(|i| [key(i * 8 + i % 4), key(i * 8 + 7)])
        .collect();
    let before = db.stats();
    let got = db.multi_get(&keys).unwrap();
    let s = db.stats();
    // The same answers, tables and filter verdicts as one get per key.
    for (k, g) in keys.iter().zip(&got) {
        assert_eq!(*g, db.get(k).unwrap());
    }
    let t = db.stats();
    assert_eq!(got.iter().filter(|g| g.is_some()).count(), 100);
    assert_eq!(s.key_hashes - before.key_hashes, 200);
    assert_eq!(
        s.tables_consulted - before.tables_consulted,
        t.tables_consulted - s.tables_consulted
    );
    assert_eq!(
        s.filter_probes - before.filter_probes,
        t.filter_probes - s.filter_probes
    );
    assert_eq!(
        s.filter_negatives - before.filter_negatives,
        t.filter_negatives - s.filter_negatives
    );
    assert_eq!(s.filter_true_positives - before.filter_true_positives, 100);
    // Keys of one data block share its read: fewer reads than keys found.
    assert!(
        s.data_blocks_read - before.data_blocks_read
            < 100 + s.filter_false_positives - before.filter_false_positives
    );
}

#[test]
fn each_level_gets_the_policy_filter() {
    let (_, env) = mem_env();
    let policy = FilterPolicy::per_level(vec![
        LevelFilter::new(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0)),
        LevelFilter::new(FilterKind::BinaryFuse8, FilterSizing::Fpr(0.01)),
        LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01)),
    ])
    .unwrap()
    .with_bottommost(LevelFilter::None);
    let mut opts = small_options(env, policy, leveled());
    opts.sync = SyncMode::OnSync;
    // Tables of a few hundred keys, so a blocked Bloom filter's 64-byte
    // granularity does not dominate its bits per key.
    opts.memtable_bytes = 16 << 10;
    opts.table_bytes = 16 << 10;
    opts.compaction = CompactionStyle::Leveled(
        LeveledOptions::default()
            .l0_trigger(3)
            .base_level_bytes(40 << 10)
            .size_ratio(3)
            .max_levels(4),
    );
    let db = Db::open("/db", opts).unwrap();
    for i in 0..12_000u32 {
        db.put(key(i.wrapping_mul(2654435761) % 100_000), [7; 20])
            .unwrap();
    }
    let s = db.stats();
    let deepest = s.levels.iter().rposition(|l| l.tables > 0).unwrap();
    assert!(deepest >= 2, "{:?}", s.levels);
    for (n, l) in s.levels.iter().enumerate().filter(|(_, l)| l.tables > 0) {
        let expected = match n {
            _ if n == deepest => None,
            0 => Some(FilterKind::BlockedBloom),
            1 => Some(FilterKind::BinaryFuse8),
            _ => Some(FilterKind::Ribbon),
        };
        assert_eq!(l.filter_kinds, vec![expected], "level {n}");
        if expected.is_none() {
            assert_eq!(l.filter_bytes, 0);
        } else {
            assert!(
                l.filter_bits_per_entry() > 6.0 && l.filter_bits_per_entry() < 14.0,
                "{l:?}"
            );
        }
    }
}

#[test]
fn scans_respect_bounds_and_hide_deletes() {
    let (_, env) = mem_env();
    let db = Db::open("/db", small_options(env, FilterPolicy::default(), leveled())).unwrap();
    for i in 0..100u32 {
        db.put(key(i), i.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    for i in (0..100u32).step_by(3) {
        db.delete(key(i)).unwrap();
    }
    db.put(key(50), b"new").unwrap();
    let (a, b) = (key(10), key(20));
    let keys = |lo: Bound<&[u8]>, hi: Bound<&[u8]>| -> Vec<Vec<u8>> {
        db.scan::<&[u8], _>((lo, hi)).map(|r| r.unwrap().0).collect()
    };
    let expect = |r: std::ops::Range<u32>| -> Vec<Vec<u8>> { r.filter(|i| i % 3 != 0).map(key).collect() };
    assert_eq!(keys(Bound::Included(&a), Bound::Excluded(&b)), expect(10..20));
    assert_eq!(keys(Bound::Excluded(&a), Bound::Included(&b)), expect(11..21));
    assert_eq!(keys(Bound::Unbounded, Bound::Excluded(&a)), expect(0..10));
    assert!(keys(Bound::Included(&b), Bound::Excluded(&a)).is_empty());
    assert!(keys(Bound::Excluded(&a), Bound::Excluded(&a)).is_empty());
    let all: Vec<_> = db.iter().map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 66);
    assert!(all.contains(&(key(50), b"new".to_vec())));
}

#[test]
fn writes_survive_close_and_reopen_on_disk_with_sync_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options::default().sync(SyncMode::OnSync).memtable_bytes(64 << 10);
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..5000u32 {
        db.put(key(i), [1; 30]).unwrap();
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.iter().count(), 5000);
    assert!(db.stats().levels.iter().map(|l| l.tables).sum::<usize>() > 1);
    // Only the live files remain: tables, one WAL, one manifest, CURRENT, LOCK.
    let names: Vec<String> = StdEnv.list(dir.path()).unwrap();
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".wal")).count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| n.starts_with("MANIFEST")).count(),
        1,
        "{names:?}"
    );
}

#[test]
fn readers_run_while_a_writer_flushes_and_compacts() {
    let (_, env) = mem_env();
    let mut opts = small_options(env, FilterPolicy::default(), leveled());
    opts.sync = SyncMode::OnSync;
    let db = Arc::new(Db::open("/db", opts).unwrap());
    // Keys below 1000 are written first and never change.
    for i in 0..1000u32 {
        db.put(key(i), i.to_le_bytes()).unwrap();
    }
    let writer = {
        let db = db.clone();
        thread::spawn(move || {
            for i in 1000..6000u32 {
                db.put(key(i), i.to_le_bytes()).unwrap();
                if i % 1000 == 0 {
                    db.compact().unwrap();
                }
            }
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let db = db.clone();
            thread::spawn(move || {
                for round in 0..20u32 {
                    for i in (t..1000u32).step_by(7) {
                        assert_eq!(
                            db.get(key(i)).unwrap(),
                            Some(i.to_le_bytes().to_vec()),
                            "round {round}"
                        );
                    }
                    // A scan sees every stable key, in order.
                    let stable: Vec<_> = db.scan(..key(1000)).map(|r| r.unwrap().0).collect();
                    assert_eq!(stable.len(), 1000);
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    assert!(db.stats().compactions > 0);
    assert_eq!(db.iter().count(), 6000);
}

#[test]
fn the_recovery_flush_is_counted_as_a_flush() {
    let (_, env) = mem_env();
    let opts = || Options::default().env(env.clone());
    let db = Db::open("/db", opts()).unwrap();
    for i in 0..100u32 {
        db.put(key(i), b"v").unwrap();
    }
    drop(db);
    let s = Db::open("/db", opts()).unwrap().stats();
    assert_eq!(s.flushes, 1);
    assert!(s.bytes_flushed > 0);
    // The recovery flush built a filter (the default policy's blocked Bloom
    // filter over 100 keys): its build time is counted, and inside the
    // flush's time. Both non-zero, so the comparison cannot pass on two
    // zeros.
    assert!(s.filter_build_nanos > 0, "{s:?}");
    assert!(s.filter_build_nanos <= s.flush_nanos, "{s:?}");
    assert_eq!(s.levels[0].tables, 1);
    assert_eq!(s.levels[0].filter_kinds, vec![Some(FilterKind::BlockedBloom)]);
}

#[test]
fn an_io_error_stops_writes_but_not_reads() {
    let (fault, env) = mem_env();
    let db = Db::open("/db", small_options(env, FilterPolicy::default(), leveled())).unwrap();
    db.put(b"a", b"1").unwrap();
    fault.fail_from(fault.mutations());
    assert!(matches!(db.put(b"b", b"2"), Err(Error::Io { .. })));
    assert!(matches!(db.put(b"c", b"3"), Err(Error::WritesStopped)));
    assert!(matches!(db.flush(), Err(Error::WritesStopped)));
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    fault.clear_faults();
    drop(db);
    let (_, dyn_env) = (fault.clone(), fault.clone() as Arc<dyn Env>);
    let db = Db::open("/db", small_options(dyn_env, FilterPolicy::default(), leveled())).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    db.put(b"d", b"4").unwrap();
}

/// Every table's keys share a 48-byte prefix, which the read path strips
/// before comparing keys with table bounds: keys shorter than the prefix,
/// equal to it, or differing inside it must land outside every range (or in
/// the right one), in leveled and tiered trees, by `get` and `multi_get`.
#[test]
fn keys_behind_a_long_shared_prefix_are_found_and_keys_around_it_are_not() {
    const LONG: &[u8] = b"tenant-00042/table-orders/index-by-customer-id//";
    let with = |suffix: &str| [LONG, suffix.as_bytes()].concat();
    for style in [
        tiered_no_compaction(6),
        CompactionStyle::Leveled(
            LeveledOptions::default()
                .l0_trigger(4)
                .base_level_bytes(8 << 10)
                .size_ratio(4)
                .max_levels(4),
        ),
    ] {
        let (_, env) = mem_env();
        let opts = Options::default().env(env).compaction(style).table_bytes(4 << 10);
        let db = Db::open("/db", opts).unwrap();
        let mut model = std::collections::BTreeMap::new();
        // The prefix itself is a key too: its suffix is empty.
        db.put(LONG, b"bare").unwrap();
        model.insert(LONG.to_vec(), b"bare".to_vec());
        for round in 0..6u32 {
            for i in (round..600).step_by(6) {
                let (k, v) = (with(&format!("{i:05}")), format!("{round}-{i}").into_bytes());
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            db.flush().unwrap();
        }
        let mut probes: Vec<Vec<u8>> = model.keys().cloned().collect();
        for i in (0..600).step_by(7) {
            let mut inside = with(&format!("{i:05}"));
            inside[7] ^= 1; // differs inside the prefix: above or below every table
            probes.push(inside);
            probes.push(with(&format!("{i:05}x"))); // longer than a stored key
            probes.push(with(&format!("{}", i / 10))); // shorter, between stored keys
        }
        for n in 0..LONG.len() {
            probes.push(LONG[..n].to_vec()); // shorter than the prefix
        }
        probes.push([LONG, b"\xff"].concat());
        for p in &probes {
            assert_eq!(
                db.get(p).unwrap(),
                model.get(p).cloned(),
                "{:?}",
                String::from_utf8_lossy(p)
            );
        }
        let want: Vec<_> = probes.iter().map(|p| model.get(p).cloned()).collect();
        assert_eq!(db.multi_get(&probes).unwrap(), want);
        assert!(db.stats().levels.iter().map(|l| l.tables).sum::<usize>() > 1);
        // Keys outside every table's range (before the bare prefix, or
        // differing inside it) consult no table and need no hash.
        let before = db.stats();
        let mut outside: Vec<Vec<u8>> = (0..LONG.len()).map(|n| LONG[..n].to_vec()).collect();
        for i in (0..600).step_by(7) {
            let mut k = with(&format!("{i:05}"));
            k[7] ^= 1;
            outside.push(k);
        }
        for p in &outside {
            assert_eq!(db.get(p).unwrap(), None);
        }
        let after = db.stats();
        assert_eq!(after.tables_consulted, before.tables_consulted);
        assert_eq!(after.key_hashes, before.key_hashes);
    }
}

/// Point reads through a block cache: the same answers, the repeated reads
/// served from it, never more resident bytes than the cap; scans do not
/// fill it.
#[test]
fn the_block_cache_serves_repeated_point_reads_within_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let cap = 16 << 10;
    let db = Db::open(
        dir.path(),
        Options::default().block_bytes(1024).block_cache_bytes(cap),
    )
    .unwrap();
    for i in 0..20_000u32 {
        db.put(format!("k{i:08}").as_bytes(), i.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.iter().count(), 20_000);
    assert_eq!(
        db.stats().block_cache_misses + db.stats().block_cache_hits,
        0,
        "scans bypass the cache"
    );
    // 100 keys in 100 different blocks of about 1 KiB, read in turn: more
    // than the 16 KiB cap holds, so least-recently-used eviction misses
    // them all; the answers stay right and the cap holds.
    for pass in 0..10 {
        for i in (0..20_000u32).step_by(200) {
            let v = db.get(format!("k{i:08}").as_bytes()).unwrap();
            assert_eq!(v, Some(i.to_le_bytes().to_vec()), "pass {pass}");
        }
        assert!(db.stats().block_cache_bytes <= cap as u64);
    }
    let s = db.stats();
    assert_eq!(s.block_cache_hits + s.block_cache_misses, s.data_blocks_read);
    // A hot set of 10 blocks fits: after the first pass, every read hits.
    for _ in 0..10 {
        for i in (0..20_000u32).step_by(2_000) {
            assert!(db.get(format!("k{i:08}").as_bytes()).unwrap().is_some());
        }
    }
    let after = db.stats();
    assert!(after.block_cache_hits >= s.block_cache_hits + 90, "{after:?}");
    assert!(after.block_cache_bytes <= cap as u64);
    // Misses for absent keys read blocks only on false positives; answers
    // stay right.
    assert_eq!(db.get(b"k99999999").unwrap(), None);
}

/// Partitioned filters: the same answers as whole filters, a pinned index a
/// small fraction of the filter, each probe reading one partition (from the
/// filter cache once it is there), the cache within its cap; a kind without
/// a borrowed view is partitioned too.
#[test]
fn partitioned_filters_read_only_the_partitions_a_lookup_needs() {
    let open = |dir: &std::path::Path, kind: FilterKind, cache: usize| {
        Db::open(
            dir,
            Options::default()
                .filter_policy(FilterPolicy::uniform(kind, FilterSizing::BitsPerKey(10.0)))
                .filter_partition_bytes(Some(1024))
                .filter_cache_bytes(cache)
                .table_bytes(64 << 20)
                .sync(SyncMode::OnSync),
        )
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let cap = 4 << 10;
    let db = open(dir.path(), FilterKind::BlockedBloom, cap);
    for i in 0..40_000u32 {
        db.put(format!("k{:08}", i * 2).as_bytes(), i.to_le_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    let s = db.stats();
    // 40,000 keys at 10 bits/key: about 50 KB of filter in partitions of
    // about 1 KiB, of which only the index (32 bytes a partition) is pinned.
    assert!(
        (45_000..60_000).contains(&s.filter_bytes()),
        "{}",
        s.filter_bytes()
    );
    let pinned: u64 = s.levels.iter().map(|l| l.pinned_filter_bytes).sum();
    assert!(pinned > 0 && pinned * 20 < s.filter_bytes(), "{pinned}");
    assert_eq!(s.resident_filter_bytes(), pinned);
    // Misses in the table's range: each reads its key's partition, served
    // from the cache when it is there; the filter saves ~99% of the reads.
    let misses: Vec<Vec<u8>> = (0..4_000u32)
        .map(|i| format!("k{:08}", i * 20 + 1).into_bytes())
        .collect();
    for k in &misses {
        assert_eq!(db.get(k).unwrap(), None);
    }
    let s = db.stats();
    assert_eq!(s.filter_probes, 4_000);
    assert!(s.data_blocks_read < 100, "{}", s.data_blocks_read);
    assert_eq!(s.filter_cache_hits + s.filter_cache_misses, 4_000);
    assert_eq!(s.filter_partitions_read, s.filter_cache_misses);
    assert!(s.filter_cache_hits > 3_000, "{s:?}");
    assert!(s.filter_cache_bytes <= cap as u64 && s.filter_cache_bytes > 0);
    assert_eq!(s.resident_filter_bytes(), pinned + s.filter_cache_bytes);
    // multi_get agrees, hits and misses alike, each partition read once per
    // batch at most.
    let keys: Vec<Vec<u8>> = (0..2_000u32)
        .map(|i| format!("k{:08}", i * 37 % 80_000).into_bytes())
        .collect();
    let got = db.multi_get(&keys).unwrap();
    for (k, g) in keys.iter().zip(&got) {
        assert_eq!(g, &db.get(k).unwrap());
    }
    assert!(got.iter().filter(|g| g.is_some()).count() > 900);
    drop(db);
    // Reopened without a filter cache, every probe reads its partition.
    let db = open(dir.path(), FilterKind::BlockedBloom, 0);
    for k in &misses[..100] {
        assert_eq!(db.get(k).unwrap(), None);
    }
    assert_eq!(db.stats().filter_partitions_read, 100);
    assert_eq!(db.stats().filter_cache_misses, 0);
    drop(db);
    // Cuckoo has no borrowed view: its partitions are decoded, cached or
    // not, with the same answers.
    for cache in [cap, 0] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), FilterKind::CuckooFilter, cache);
        for i in 0..5_000u32 {
            db.put(format!("k{i:08}").as_bytes(), b"v").unwrap();
        }
        db.flush().unwrap();
        let s = db.stats();
        assert!(s.resident_filter_bytes() * 10 < s.filter_bytes(), "{s:?}");
        for i in 0..5_000u32 {
            assert!(db.get(format!("k{i:08}").as_bytes()).unwrap().is_some());
        }
        let s = db.stats();
        assert!(s.filter_partitions_read > 0);
        assert_eq!(
            (s.filter_true_positives, s.untrusted_filter_partitions),
            (5_000, 0)
        );
    }
}

/// "Ribbon on the last level" said by level number misses when the data is
/// shallower than the number: 100,000 keys all fit in level 1, so a policy
/// of Ribbon from level 2 builds no Ribbon table. Named as the bottommost
/// level, it does, and level 0 keeps its Bloom filters.
#[test]
fn ribbon_on_the_bottommost_level_reaches_a_tree_that_ends_at_level_one() {
    let bloom = LevelFilter::new(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01));
    let ribbon = LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01));
    let by_number = FilterPolicy::per_level(vec![bloom, bloom, ribbon]).unwrap();
    let bottommost =
        FilterPolicy::uniform(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01)).with_bottommost(ribbon);
    let mut kinds = Vec::new();
    for policy in [by_number, bottommost] {
        let (_, env) = mem_env();
        // Default leveled compaction (16 MiB level 1) and small memtables:
        // the flushes compact into level 1, and nothing goes deeper.
        let db = Db::open(
            "/db",
            Options::default()
                .env(env)
                .filter_policy(policy)
                .memtable_bytes(256 << 10),
        )
        .unwrap();
        for chunk in (0..100_000u32).collect::<Vec<_>>().chunks(1_000) {
            let mut batch = amq_lsm::WriteBatch::new();
            for &i in chunk {
                batch.put(format!("key{i:08}"), i.to_le_bytes());
            }
            db.write(batch).unwrap();
        }
        // The memtable's rest as one level-0 table.
        db.flush().unwrap();
        let s = db.stats();
        assert!(s.compactions > 0, "{s}");
        assert!(
            s.levels[1].entries > 90_000 && s.levels[2..].iter().all(|l| l.tables == 0),
            "{s}"
        );
        assert_eq!(
            s.levels[0].filter_kinds,
            vec![Some(FilterKind::BlockedBloom)],
            "{s}"
        );
        kinds.push(s.levels[1].filter_kinds.clone());
        // Every key is found through whichever filter it has.
        for i in (0..100_000u32).step_by(997) {
            assert_eq!(
                db.get(format!("key{i:08}")).unwrap(),
                Some(i.to_le_bytes().to_vec())
            );
        }
    }
    assert_eq!(kinds[0], vec![Some(FilterKind::BlockedBloom)]);
    assert_eq!(kinds[1], vec![Some(FilterKind::Ribbon)]);
}

/// An `Env` whose table files fail every read once `fail` is set.
struct FailingReads {
    inner: Arc<dyn Env>,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

struct FailingFile {
    inner: Arc<dyn amq_lsm::env::RandomAccessFile>,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

impl amq_lsm::env::RandomAccessFile for FailingFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if self.fail.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(std::io::Error::other("injected read failure"));
        }
        self.inner.read_exact_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl Env for FailingReads {
    fn create_dir_all(&self, dir: &std::path::Path) -> std::io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn create(&self, path: &std::path::Path) -> std::io::Result<Box<dyn amq_lsm::env::WritableFile>> {
        self.inner.create(path)
    }
    fn open_read(&self, path: &std::path::Path) -> std::io::Result<Arc<dyn amq_lsm::env::RandomAccessFile>> {
        Ok(Arc::new(FailingFile {
            inner: self.inner.open_read(path)?,
            fail: self.fail.clone(),
        }))
    }
    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove_file(path)
    }
    fn list(&self, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn sync_dir(&self, dir: &std::path::Path) -> std::io::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn lock(&self, path: &std::path::Path) -> std::io::Result<Box<dyn Send + Sync>> {
        self.inner.lock(path)
    }
}

/// Every I/O error names its file by its full path, a failed read of a
/// table's block too (for a point read and for a scan).
#[test]
fn a_failed_table_read_names_the_table_by_its_full_path() {
    let (_, mem) = mem_env();
    let fail = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let env: Arc<dyn Env> = Arc::new(FailingReads {
        inner: mem.clone(),
        fail: fail.clone(),
    });
    let db = Db::open("/db", Options::default().env(env)).unwrap();
    db.put("k", "v").unwrap();
    db.flush().unwrap();
    let table = mem
        .list(std::path::Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".sst"))
        .unwrap();
    let want = std::path::Path::new("/db").join(&table);
    fail.store(true, std::sync::atomic::Ordering::Relaxed);
    match db.get("k") {
        Err(Error::Io { op, path, .. }) => {
            assert_eq!((op, path.as_path()), ("read table block", want.as_path()))
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    match db.iter().next() {
        Some(Err(Error::Io { path, .. })) => assert_eq!(path, want),
        other => panic!("expected an I/O error, got {other:?}"),
    }
    fail.store(false, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(db.get("k").unwrap(), Some(b"v".to_vec()));
}
