//! Corruption: flip and truncate bytes in every block type of a table, in
//! the manifest, in `CURRENT` and in the WAL, and check each outcome is a
//! typed error naming the file or the documented filter fallback: never a
//! panic, a wrong value or a false negative (LevelDB's `corruption_test`).
//!
//! The table's regions are found by decoding its footer as
//! `docs/lsm-format.md` describes it, so these tests also pin that layout.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use amq::{FilterKind, FilterSizing};
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{Db, Error, FilterPolicy, Options, Recovery};

use common::*;

const DIR: &str = "/db";
const FOOTER_LEN: usize = 52;

fn options(env: &Arc<FaultEnv>) -> Options {
    let dyn_env: Arc<dyn Env> = env.clone();
    small_options(
        dyn_env,
        FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01)),
        leveled(),
    )
    .memtable_bytes(1 << 20)
}

/// A store with one flushed table of 120 keys and, if `unflushed`, that many
/// more writes only in the WAL. Returns the model of its contents.
fn build(env: &Arc<FaultEnv>, unflushed: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    build_with(options(env), unflushed)
}

/// [`build`] with `opts`.
fn build_with(opts: Options, unflushed: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open(DIR, opts).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..120 {
        let v = format!("v{i}").into_bytes();
        db.put(key(i * 2), &v).unwrap();
        model.insert(key(i * 2), v);
    }
    db.flush().unwrap();
    for i in 0..unflushed {
        let v = format!("w{i}").into_bytes();
        db.put(key(1000 + i), &v).unwrap();
        model.insert(key(1000 + i), v);
    }
    drop(db);
    model
}

fn file_named(env: &FaultEnv, suffix: &str) -> (PathBuf, String) {
    let names = env.list(Path::new(DIR)).unwrap();
    let mut matching: Vec<_> = names.into_iter().filter(|n| n.contains(suffix)).collect();
    assert_eq!(matching.len(), 1, "{suffix}: {matching:?}");
    let name = matching.pop().unwrap();
    (Path::new(DIR).join(&name), name)
}

/// The table's regions from its footer: (filter, meta, index) as
/// (offset, length with trailer), and where the data blocks end.
struct Layout {
    filter: (usize, usize),
    meta: (usize, usize),
    index: (usize, usize),
    len: usize,
}

fn layout(bytes: &[u8]) -> Layout {
    footer_layout(bytes, 1)
}

/// The regions the footer names, for a table of format `version`.
fn footer_layout(bytes: &[u8], version: u32) -> Layout {
    let f = &bytes[bytes.len() - FOOTER_LEN..];
    let handle = |i: usize| {
        let off = u64::from_le_bytes(f[i * 12..i * 12 + 8].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(f[i * 12 + 8..i * 12 + 12].try_into().unwrap()) as usize;
        (off, len + 5)
    };
    assert_eq!(&f[44..52], b"amqlsmT\x01", "magic");
    assert_eq!(
        u32::from_le_bytes(f[36..40].try_into().unwrap()),
        version,
        "format version"
    );
    Layout {
        filter: handle(0),
        meta: handle(1),
        index: handle(2),
        len: bytes.len(),
    }
}

fn region(l: &Layout, off: usize) -> &'static str {
    let inside = |(o, n): (usize, usize)| off >= o && off < o + n;
    if off >= l.len - FOOTER_LEN {
        "footer"
    } else if inside(l.index) {
        "index"
    } else if inside(l.meta) {
        "meta"
    } else if inside(l.filter) {
        "filter"
    } else {
        assert!(off < l.filter.0);
        "data"
    }
}

/// Every get answers the model's value or a corruption error naming `file`;
/// returns how many errors there were.
fn gets_are_right_or_typed_errors(
    db: &Db,
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    file: &str,
    what: &str,
) -> usize {
    let mut errors = 0;
    for (k, v) in model {
        match db.get(k) {
            Ok(got) => assert_eq!(got.as_ref(), Some(v), "{what}: wrong answer for {k:?}"),
            Err(Error::Corruption { file: f, .. }) if f == file => errors += 1,
            Err(e) => panic!("{what}: unexpected error {e}"),
        }
    }
    // Absent keys inside the range are never reported present.
    for i in 0..120 {
        match db.get(key(i * 2 + 1)) {
            Ok(got) => assert_eq!(got, None, "{what}"),
            Err(Error::Corruption { file: f, .. }) if f == file => {}
            Err(e) => panic!("{what}: unexpected error {e}"),
        }
    }
    errors
}

#[test]
fn every_flipped_table_byte_is_an_error_or_the_filter_fallback() {
    let env = Arc::new(FaultEnv::new());
    let model = build(&env, 0);
    let (path, name) = file_named(&env, ".sst");
    let pristine = env.read_all(&path).unwrap();
    let l = layout(&pristine);
    let mut seen = BTreeMap::new();
    for off in 0..pristine.len() {
        let bit = 1u8 << (off % 8);
        env.corrupt(&path, |d| d[off] ^= bit).unwrap();
        let r = region(&l, off);
        *seen.entry(r).or_insert(0) += 1;
        let what = format!("byte {off} ({r})");
        match r {
            "data" => {
                let db = Db::open(DIR, options(&env)).unwrap();
                let errors = gets_are_right_or_typed_errors(&db, &model, &name, &what);
                assert!(errors > 0, "{what}: the damaged block went unnoticed");
                assert!(db.iter().any(|r| r.is_err()), "{what}: scan missed it");
            }
            "filter" => {
                let db = Db::open(DIR, options(&env)).unwrap();
                assert_eq!(db.stats().untrusted_filters, 1, "{what}");
                assert_eq!(
                    gets_are_right_or_typed_errors(&db, &model, &name, &what),
                    0,
                    "{what}"
                );
                drop(db);
                let strict = options(&env).strict_filters(true);
                assert!(
                    matches!(Db::open(DIR, strict), Err(Error::UntrustedFilter { file, .. }) if file == name),
                    "{what}"
                );
            }
            _ => match Db::open(DIR, options(&env)) {
                Err(Error::Corruption { file, .. }) => assert_eq!(file, name, "{what}"),
                other => panic!("{what}: expected a corruption error, got {other:?}"),
            },
        }
        env.corrupt(&path, |d| d[off] ^= bit).unwrap();
    }
    // Every region was damaged somewhere.
    assert_eq!(seen.len(), 5, "{seen:?}");
    // And the pristine table still reads cleanly.
    let db = Db::open(DIR, options(&env)).unwrap();
    assert_eq!(contents(&db), model);
    assert_eq!(db.stats().untrusted_filters, 0);
}

/// A partitioned filter's table: its partitions (from the metadata block's
/// filter-partitions extension) and its partition index block (the footer's
/// filter handle), as `docs/lsm-format.md` describes them.
fn partitioned_layout(bytes: &[u8]) -> (Layout, usize) {
    let l = footer_layout(bytes, 2);
    // The metadata block ends with the extension: tag 2, length 9, the
    // first partition's offset (u64), the partition count (one-byte varint
    // here).
    let meta = &bytes[l.meta.0..l.meta.0 + l.meta.1 - 5];
    let ext = &meta[meta.len() - 11..];
    assert_eq!(ext[..2], [2, 9], "filter partitions extension");
    let first = u64::from_le_bytes(ext[2..10].try_into().unwrap()) as usize;
    assert!(ext[10] >= 2, "{} partitions", ext[10]);
    (l, first)
}

#[test]
fn every_flipped_byte_of_a_partitioned_filter_is_the_filter_fallback_or_a_strict_error() {
    let env = Arc::new(FaultEnv::new());
    let partitioned = || {
        options(&env)
            .filter_partition_bytes(Some(32))
            .filter_cache_bytes(1024)
    };
    let strict = || partitioned().strict_filters(true);
    let model = build_with(partitioned(), 0);
    let (path, name) = file_named(&env, ".sst");
    let pristine = env.read_all(&path).unwrap();
    let (l, first) = partitioned_layout(&pristine);
    let mut seen = BTreeMap::new();
    for off in 0..pristine.len() {
        let bit = 1u8 << (off % 8);
        env.corrupt(&path, |d| d[off] ^= bit).unwrap();
        let r = match region(&l, off) {
            "data" if off >= first => "partition",
            "filter" => "partition index",
            r => r,
        };
        *seen.entry(r).or_insert(0) += 1;
        let what = format!("byte {off} ({r})");
        match r {
            "partition" => {
                // The table opens (partitions are checked when read); every
                // answer is right, and the damaged partition is counted.
                let db = Db::open(DIR, partitioned()).unwrap();
                assert_eq!(
                    gets_are_right_or_typed_errors(&db, &model, &name, &what),
                    0,
                    "{what}"
                );
                let s = db.stats();
                assert_eq!(
                    (s.untrusted_filters, s.untrusted_filter_partitions > 0),
                    (0, true),
                    "{what}"
                );
                drop(db);
                // Strict: the read that needs it fails, naming the table.
                let db = Db::open(DIR, strict()).unwrap();
                let failed = model
                    .keys()
                    .map(|k| db.get(k))
                    .filter(|r| matches!(r, Err(Error::UntrustedFilter { file, .. }) if *file == name))
                    .count();
                assert!(failed > 0, "{what}");
            }
            "partition index" => {
                let db = Db::open(DIR, partitioned()).unwrap();
                assert_eq!(db.stats().untrusted_filters, 1, "{what}");
                assert_eq!(
                    gets_are_right_or_typed_errors(&db, &model, &name, &what),
                    0,
                    "{what}"
                );
                drop(db);
                assert!(
                    matches!(Db::open(DIR, strict()), Err(Error::UntrustedFilter { file, .. }) if file == name),
                    "{what}"
                );
            }
            "data" => {
                let db = Db::open(DIR, partitioned()).unwrap();
                let errors = gets_are_right_or_typed_errors(&db, &model, &name, &what);
                assert!(errors > 0, "{what}: the damaged block went unnoticed");
            }
            _ => match Db::open(DIR, partitioned()) {
                Err(Error::Corruption { file, .. }) => assert_eq!(file, name, "{what}"),
                other => panic!("{what}: expected a corruption error, got {other:?}"),
            },
        }
        env.corrupt(&path, |d| d[off] ^= bit).unwrap();
    }
    assert_eq!(seen.len(), 6, "{seen:?}");
    // The pristine table reads cleanly, each partition read once and then
    // served from the filter cache.
    let db = Db::open(DIR, partitioned()).unwrap();
    for k in model.keys() {
        assert!(db.get(k).unwrap().is_some());
    }
    let s = db.stats();
    assert_eq!((s.untrusted_filters, s.untrusted_filter_partitions), (0, 0));
    assert!(s.filter_partitions_read >= 2 && s.filter_cache_hits > 0, "{s:?}");
    assert_eq!(s.filter_partitions_read, s.filter_cache_misses);
}

#[test]
fn every_truncated_table_is_a_corruption_error() {
    let env = Arc::new(FaultEnv::new());
    build(&env, 0);
    let (path, name) = file_named(&env, ".sst");
    let pristine = env.read_all(&path).unwrap();
    for cut in 0..pristine.len() {
        env.corrupt(&path, |d| d.truncate(cut)).unwrap();
        match Db::open(DIR, options(&env)) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, name),
            other => panic!("cut at {cut}: {other:?}"),
        }
        env.corrupt(&path, |d| *d = pristine.clone()).unwrap();
    }
}

/// Rewrites one byte of the metadata block and re-seals its checksum, as a
/// newer version that knows more filter kinds would have written it.
fn forge_meta(env: &FaultEnv, path: &Path, from_end: usize, value: u8) {
    env.corrupt(path, |d| {
        let l = layout(d);
        let (off, len) = (l.meta.0, l.meta.1 - 5);
        d[off + len - from_end] = value;
        let mut h = xxhash_rust::xxh3::Xxh3::with_seed(u64::from_le_bytes(*b"amq-lsm\0"));
        h.update(&d[off..off + len]);
        h.update(&[3]);
        let sum = (h.digest() as u32).to_le_bytes();
        d[off + len + 1..off + len + 5].copy_from_slice(&sum);
    })
    .unwrap();
}

#[test]
fn an_unknown_filter_kind_or_hash_scheme_falls_back_to_no_filter() {
    // The metadata block ends: hash scheme, filter kind, sizing tag, f64.
    for (from_end, value, what) in [
        (10, 200u8, "filter kind 200"),
        (11, 9, "hash scheme 9"),
        (10, 2, "kind mismatch"),
    ] {
        let env = Arc::new(FaultEnv::new());
        let model = build(&env, 0);
        let (path, name) = file_named(&env, ".sst");
        forge_meta(&env, &path, from_end, value);
        let db = Db::open(DIR, options(&env)).unwrap_or_else(|e| panic!("{what}: {e}"));
        let s = db.stats();
        assert_eq!(s.untrusted_filters, 1, "{what}");
        assert_eq!(s.levels[0].filter_kinds, vec![None], "{what}");
        assert_eq!(gets_are_right_or_typed_errors(&db, &model, &name, what), 0);
        assert_eq!(
            db.stats().filter_probes,
            0,
            "{what}: the untrusted filter was probed"
        );
        drop(db);
        let strict = options(&env).strict_filters(true);
        assert!(
            matches!(Db::open(DIR, strict), Err(Error::UntrustedFilter { .. })),
            "{what}"
        );
    }
}

/// A table whose filter is a valid `ParquetBloom` of the table's own keys,
/// with the right key count and the metadata naming its kind (what a tool
/// that confused the two hashes would write): every check but the hash
/// scheme passes, and probed with key hashes it would miss the table's keys.
/// The store must not trust it.
#[test]
fn a_filter_driven_by_another_hash_is_not_trusted() {
    let env = Arc::new(FaultEnv::new());
    // A StandardBloom of 120 keys at 8.5 bits/key (1,024 bits) is a 200-byte
    // frame, as is a 4-block ParquetBloom: the forgery fits in place.
    let mut o = options(&env);
    o.filter_policy = FilterPolicy::uniform(FilterKind::StandardBloom, FilterSizing::BitsPerKey(8.5));
    let db = Db::open(DIR, o).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..120 {
        let v = format!("v{i}").into_bytes();
        db.put(key(i * 2), &v).unwrap();
        model.insert(key(i * 2), v);
    }
    db.flush().unwrap();
    drop(db);
    let (path, name) = file_named(&env, ".sst");
    env.corrupt(&path, |d| {
        let l = layout(d);
        let (off, len) = (l.filter.0, l.filter.1 - 5);
        let mut forged = amq::ParquetBloom::with_num_bytes(128).unwrap();
        for i in 0..120 {
            forged.insert(key(i * 2).as_slice()).unwrap();
        }
        let bytes = forged.to_bytes();
        assert_eq!(bytes.len(), len, "the forgery must fit the filter block");
        d[off..off + len].copy_from_slice(&bytes);
        let mut h = xxhash_rust::xxh3::Xxh3::with_seed(u64::from_le_bytes(*b"amq-lsm\0"));
        h.update(&d[off..off + len]);
        h.update(&[2]);
        let sum = (h.digest() as u32).to_le_bytes();
        d[off + len + 1..off + len + 5].copy_from_slice(&sum);
    })
    .unwrap();
    forge_meta(&env, &path, 10, FilterKind::ParquetBloom.id());
    let db = Db::open(DIR, options(&env)).unwrap();
    let s = db.stats();
    assert_eq!(s.untrusted_filters, 1);
    assert_eq!(s.levels[0].filter_kinds, vec![None]);
    assert_eq!(
        gets_are_right_or_typed_errors(&db, &model, &name, "Parquet filter"),
        0
    );
    assert_eq!(db.stats().filter_probes, 0, "the untrusted filter was probed");
}

#[test]
fn a_valid_filter_of_other_keys_is_not_trusted() {
    // A filter block that passes every checksum but was built from other
    // keys would give false negatives: its key count gives it away.
    let env = Arc::new(FaultEnv::new());
    let model = build(&env, 0);
    let (path, name) = file_named(&env, ".sst");
    env.corrupt(&path, |d| {
        let l = layout(d);
        let (off, len) = (l.filter.0, l.filter.1 - 5);
        let hashes: Vec<amq::KeyHash> = (0..119u32).map(|i| amq::hash_key(&key(50_000 + i))).collect();
        let forged = amq::AnyFilter::build(FilterKind::Ribbon, &hashes, FilterSizing::Fpr(0.01)).unwrap();
        let bytes = amq::Filter::to_bytes(&forged);
        // Only a same-length forgery fits in place; pad the key count to make it so.
        if bytes.len() == len {
            d[off..off + len].copy_from_slice(&bytes);
            let mut h = xxhash_rust::xxh3::Xxh3::with_seed(u64::from_le_bytes(*b"amq-lsm\0"));
            h.update(&d[off..off + len]);
            h.update(&[2]);
            let sum = (h.digest() as u32).to_le_bytes();
            d[off + len + 1..off + len + 5].copy_from_slice(&sum);
        } else {
            panic!("forged filter is {} bytes, the block {len}", bytes.len());
        }
    })
    .unwrap();
    let db = Db::open(DIR, options(&env)).unwrap();
    assert_eq!(db.stats().untrusted_filters, 1);
    assert_eq!(
        gets_are_right_or_typed_errors(&db, &model, &name, "forged filter"),
        0
    );
}

#[test]
fn every_flipped_wal_byte_is_an_error_or_a_torn_tail() {
    let model_after = |n: u32| {
        let env = Arc::new(FaultEnv::new());
        build(&env, n)
    };
    let full = model_after(5);
    let without_last = model_after(4);
    let env = Arc::new(FaultEnv::new());
    build(&env, 5);
    let (path, name) = file_named(&env, ".wal");
    let len = env.read_all(&path).unwrap().len();
    let last_record = len - (12 + 1 + 1 + key(0).len() + 1 + 2 + 1);
    for off in 0..len {
        for mode in [Recovery::TolerateTornTail, Recovery::PointInTime] {
            let env = Arc::new(FaultEnv::new());
            build(&env, 5);
            env.corrupt(&path, |d| d[off] ^= 0x20).unwrap();
            let opts = options(&env).wal_recovery(mode);
            let what = format!("WAL byte {off} {mode:?}");
            // The last record's length and its check (its first 8 bytes):
            // damage there cannot be told from damage mid-log.
            let in_last_length = (last_record..last_record + 8).contains(&off);
            match Db::open(DIR, opts) {
                Ok(db) => {
                    let got = contents(&db);
                    // Whatever is recovered is a prefix of the writes...
                    assert!((0..=5).any(|n| got == model_after(n)), "{what}: not a prefix");
                    // ...and only point-in-time mode cuts before the last.
                    if mode == Recovery::TolerateTornTail {
                        assert!(off >= last_record, "{what}: damage mid-log went unreported");
                        assert_eq!(got, without_last, "{what}");
                    }
                }
                Err(Error::Corruption { file, .. }) => {
                    assert_eq!(file, name, "{what}");
                    assert_eq!(mode, Recovery::TolerateTornTail, "{what}");
                    assert!(
                        off < last_record || in_last_length,
                        "{what}: a torn tail was reported"
                    );
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    assert_ne!(full, without_last);
}

#[test]
fn every_flipped_manifest_or_current_byte_is_an_error_or_harmless() {
    for suffix in ["MANIFEST-", "CURRENT"] {
        let env = Arc::new(FaultEnv::new());
        let model = build(&env, 3);
        let (path, _) = file_named(&env, suffix);
        let len = env.read_all(&path).unwrap().len();
        let mut errors = 0;
        for off in 0..len {
            let env = Arc::new(FaultEnv::new());
            build(&env, 3);
            env.corrupt(&path, |d| d[off] ^= 0x04).unwrap();
            match Db::open(DIR, options(&env)) {
                // Never a store that silently lost data.
                Ok(db) => assert_eq!(contents(&db), model, "{suffix} byte {off}"),
                Err(Error::Corruption { .. } | Error::Io { .. }) => errors += 1,
                Err(e) => panic!("{suffix} byte {off}: {e}"),
            }
        }
        assert!(errors > len / 2, "{suffix}: {errors} of {len}");
    }
}
