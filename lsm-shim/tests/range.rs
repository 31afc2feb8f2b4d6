//! Range filters in the store: bounded scans skip the tables whose range
//! filter rules their range out, and every way a range filter could be
//! wrong (damaged, forged, of an unknown key map, absent, asked about a
//! half-open range) makes the store read the table instead, each as a test
//! that fails if its guard is removed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{Db, Error, Options, RangeFilterPolicy, TieredOptions};

const DIR: &str = "/db";
const FOOTER_LEN: usize = 52;

fn grafite(bits: f64) -> RangeFilterPolicy {
    RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(bits))
}

/// Never compacting, so flushed tables overlap.
fn options(env: &Arc<FaultEnv>, range: RangeFilterPolicy) -> Options {
    let dyn_env: Arc<dyn Env> = env.clone();
    Options::default()
        .env(dyn_env)
        .compaction(TieredOptions::default().runs_per_level(1000))
        .block_bytes(256)
        .range_filter_policy(range)
}

/// Table `t` of `tables` holds keys `k{i:06}` for every `i ≡ 2t (mod
/// 2·tables)` below 20,000, so every table's range spans the key space and
/// odd `i` are absent everywhere.
fn key(i: u32) -> String {
    format!("k{i:06}")
}

fn write_tables(db: &Db, tables: u32) {
    for t in 0..tables {
        for i in (2 * t..20_000).step_by(2 * tables as usize) {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        db.flush().unwrap();
    }
}

fn rows(db: &Db, lo: u32, hi: u32) -> Vec<Vec<u8>> {
    db.scan(key(lo)..=key(hi)).map(|r| r.unwrap().0).collect()
}

#[test]
fn empty_bounded_scans_skip_the_tables_their_range_filters_rule_out() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    write_tables(&db, 8);
    let mut scans = 0u64;
    // Ranges of one absent key: each of the 8 tables' filters is asked.
    for i in (101..20_000).step_by(200) {
        assert!(rows(&db, i, i).is_empty());
        scans += 1;
    }
    let s = db.stats();
    assert_eq!((s.scan_tables, s.range_probes), (8 * scans, 8 * scans));
    // At 16 bits per key the bound for one key is 1/2^13.7: all but a rare
    // false positive are skipped, and each false positive reads a block.
    assert!(s.range_negatives >= 8 * scans - 2, "{s:?}");
    assert_eq!(s.range_false_positives, 8 * scans - s.range_negatives);
    assert!(s.scan_blocks_read <= s.range_false_positives * 2, "{s:?}");
    // A range holding one key of one table: that table is read, and the
    // others are skipped.
    let before = db.stats();
    assert_eq!(rows(&db, 1001, 1003), vec![key(1002).into_bytes()]);
    let s = db.stats();
    assert_eq!(s.range_probes - before.range_probes, 8);
    assert!(s.range_negatives - before.range_negatives >= 6, "{s:?}");
    // A range over every key: each table's filter is asked (the key map
    // makes the keys dense, so the range is short enough to ask about),
    // and each table holds keys in it.
    let before = db.stats();
    assert_eq!(rows(&db, 3, 19_999).len(), 9_998);
    let s = db.stats();
    assert_eq!(s.range_negatives, before.range_negatives);
    // Without range filters every table is read.
    drop(db);
    let db = Db::open(DIR, options(&env, RangeFilterPolicy::none())).unwrap();
    // Tables keep the range filters they were written with (the four
    // whose range holds key 7).
    assert!(rows(&db, 7, 7).is_empty());
    assert_eq!(db.stats().range_probes, 4);
    assert!(db.stats().range_filter_bytes() > 0);
}

#[test]
fn half_open_and_unbounded_scans_never_ask_range_filters() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    write_tables(&db, 4);
    let n = db.scan(key(19_990)..).count() + db.scan(..key(9)).count() + db.iter().count();
    assert_eq!(n, 5 + 5 + 10_000);
    assert_eq!(db.scan(key(19_999)..).count(), 0);
    let s = db.stats();
    assert_eq!((s.range_probes, s.range_negatives), (0, 0));
    assert_eq!(s.scan_tables, 3 * 4);
}

#[test]
fn tables_written_without_a_range_filter_are_always_read() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, RangeFilterPolicy::none())).unwrap();
    write_tables(&db, 4);
    drop(db);
    // Reopened with range filters: the old tables have none; new flushes
    // do.
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    assert!(rows(&db, 7, 7).is_empty());
    let s = db.stats();
    assert_eq!((s.scan_tables, s.range_probes, s.scan_blocks_read), (4, 0, 4));
    db.put(key(4), "again").unwrap();
    db.put(key(8), "again").unwrap();
    db.flush().unwrap();
    assert!(rows(&db, 7, 7).is_empty());
    assert_eq!(db.stats().range_probes, 1);
    assert_eq!(
        db.stats().range_filter_bytes(),
        db.stats().levels[0].range_filter_bytes
    );
}

fn table_path(env: &FaultEnv) -> PathBuf {
    let names = env.list(Path::new(DIR)).unwrap();
    let mut ssts: Vec<_> = names.into_iter().filter(|n| n.ends_with(".sst")).collect();
    assert_eq!(ssts.len(), 1, "{ssts:?}");
    Path::new(DIR).join(ssts.pop().unwrap())
}

/// The range filter block's offset and length (without its trailer), from
/// the metadata block's range filter extension (tag 4), which ends the
/// metadata block of a table with no other extension after it: tag, body
/// length, offset (u64), length (u32), kind, key map, width, keys (varint);
/// and where the key map byte is.
fn range_block(bytes: &[u8]) -> (usize, usize, usize) {
    let (meta, meta_len) = meta_block(bytes);
    let m = &bytes[meta..meta + meta_len];
    let ext = (0..m.len() - 16)
        .rev()
        .find(|&i| m[i] == 4 && usize::from(m[i + 1]) == m.len() - i - 2 && m[i + 14] == 12)
        .expect("range filter extension");
    let off = u64::from_le_bytes(m[ext + 2..ext + 10].try_into().unwrap()) as usize;
    let len = u32::from_le_bytes(m[ext + 10..ext + 14].try_into().unwrap()) as usize;
    (off, len, meta + ext + 15)
}

/// The metadata block's offset and length (without its trailer), from the
/// footer's second handle.
fn meta_block(bytes: &[u8]) -> (usize, usize) {
    let f = &bytes[bytes.len() - FOOTER_LEN..];
    let offset = u64::from_le_bytes(f[12..20].try_into().unwrap()) as usize;
    (offset, u32::from_le_bytes(f[20..24].try_into().unwrap()) as usize)
}

/// One table of 120 keys `k{2i}`, with a range filter.
fn one_table(env: &Arc<FaultEnv>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = Db::open(DIR, options(env, grafite(12.0))).unwrap();
    for i in 0..120 {
        db.put(key(2 * i), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    db.iter().map(|r| r.unwrap()).collect()
}

/// Every bounded scan of `db` over one to three keys gives the model's rows.
fn scans_are_right(db: &Db, model: &[(Vec<u8>, Vec<u8>)], what: &str) {
    for lo in 0..242 {
        for w in [0, 2] {
            let got: Vec<_> = db.scan(key(lo)..=key(lo + w)).map(|r| r.unwrap()).collect();
            let want: Vec<_> = model
                .iter()
                .filter(|(k, _)| *k >= key(lo).into_bytes() && *k <= key(lo + w).into_bytes())
                .cloned()
                .collect();
            assert_eq!(got, want, "{what}: {lo}..={}", lo + w);
        }
    }
}

#[test]
fn a_damaged_range_filter_is_never_used_and_strict_stores_refuse_it() {
    let env = Arc::new(FaultEnv::new());
    let model = one_table(&env);
    let path = table_path(&env);
    let pristine = env.read_all(&path).unwrap();
    let (off, len, _) = range_block(&pristine);
    // Every byte of the block and its trailer.
    for at in off..off + len + 5 {
        let bit = 1u8 << (at % 8);
        env.corrupt(&path, |d| d[at] ^= bit).unwrap();
        let what = format!("byte {at}");
        let db = Db::open(DIR, options(&env, grafite(12.0))).unwrap();
        assert_eq!(db.stats().untrusted_range_filters, 1, "{what}");
        scans_are_right(&db, &model, &what);
        assert_eq!(db.stats().range_probes, 0, "{what}");
        drop(db);
        let strict = options(&env, grafite(12.0)).strict_filters(true);
        assert!(
            matches!(Db::open(DIR, strict), Err(Error::UntrustedFilter { reason, .. }) if reason.starts_with("range filter")),
            "{what}"
        );
        env.corrupt(&path, |d| d[at] ^= bit).unwrap();
    }
    let db = Db::open(DIR, options(&env, grafite(12.0)).strict_filters(true)).unwrap();
    scans_are_right(&db, &model, "pristine");
    let s = db.stats();
    assert_eq!(s.untrusted_range_filters, 0);
    assert!(s.range_negatives > 0, "{s:?}");
}

/// The trailer of a block of `contents` and type `t`, as the store writes it.
fn trailer(contents: &[u8], t: u8) -> [u8; 5] {
    let mut h = xxhash_rust::xxh3::Xxh3::with_seed(u64::from_le_bytes(*b"amq-lsm\0"));
    h.update(contents);
    h.update(&[t]);
    let sum = (h.digest() as u32).to_le_bytes();
    [t, sum[0], sum[1], sum[2], sum[3]]
}

/// A range filter that passes every checksum but was built from other keys,
/// as many as the table's, would rule out ranges the table holds keys in;
/// one that names a key map this build does not know maps keys otherwise.
/// Neither is used.
#[test]
fn a_forged_range_filter_or_an_unknown_key_map_is_never_used() {
    let env = Arc::new(FaultEnv::new());
    let model = one_table(&env);
    let path = table_path(&env);
    let pristine = env.read_all(&path).unwrap();
    let (block, block_len, key_map_at) = range_block(&pristine);
    // The block: distinct keys (u64), the key map's length (u32), the key
    // map, then the filter.
    let map_len = u32::from_le_bytes(pristine[block + 8..block + 12].try_into().unwrap()) as usize;
    let (off, len) = (block + 12 + map_len, block_len - 12 - map_len);
    // The forgery: 120 other u64s, sized so its block has the same length.
    let theirs = GrafiteRange::from_bytes(&pristine[off..off + len]).unwrap();
    let forged = (0..)
        .map(|s| {
            let other: Vec<u64> = (0..120u64).map(|i| (i + 1) * 0x1234_5678_9abc + s).collect();
            GrafiteRange::build_seeded(&other, RangeSizing::BitsPerKey(12.0), theirs.seed()).unwrap()
        })
        .find(|f| f.to_bytes().len() == len && f.num_keys() == theirs.num_keys())
        .unwrap()
        .to_bytes();
    env.corrupt(&path, |d| {
        d[off..off + len].copy_from_slice(&forged);
        let t = trailer(&d[block..block + block_len], 8);
        d[block + block_len..block + block_len + 5].copy_from_slice(&t);
    })
    .unwrap();
    let db = Db::open(DIR, options(&env, grafite(12.0))).unwrap();
    assert_eq!(db.stats().untrusted_range_filters, 1);
    scans_are_right(&db, &model, "forged");
    drop(db);

    // The pristine filter under a key map id of a later build: the metadata
    // block's checksum is fixed so only the id differs.
    env.corrupt(&path, |d| d.copy_from_slice(&pristine)).unwrap();
    let (meta, meta_len) = meta_block(&pristine);
    assert_eq!(pristine[key_map_at], 2, "key map");
    env.corrupt(&path, |d| {
        d[key_map_at] = 3;
        let t = trailer(&d[meta..meta + meta_len], 3);
        d[meta + meta_len..meta + meta_len + 5].copy_from_slice(&t);
    })
    .unwrap();
    let db = Db::open(DIR, options(&env, grafite(12.0))).unwrap();
    assert_eq!(db.stats().untrusted_range_filters, 1);
    scans_are_right(&db, &model, "unknown key map");
    assert_eq!(db.stats().range_probes, 0);
}

/// Key `i` of a table whose keys differ past 64 bits: one of seven
/// accounts, then 16 random hexadecimal digits.
fn account_key(i: u64) -> Vec<u8> {
    format!("acct/{}/{:016x}", i % 7, amq::hash::remix(i, 4)).into_bytes()
}

/// One table of 600 such keys: its range filter is an infix filter.
fn one_infix_table(env: &Arc<FaultEnv>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = Db::open(DIR, options(env, grafite(16.0))).unwrap();
    for i in 0..600 {
        db.put(account_key(i), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.stats().levels[0].range_tables_infix, 1);
    db.iter().map(|r| r.unwrap()).collect()
}

/// Scans of every key, of the ranges just beside it and of the middle of
/// the gap after it (a point between two keys of one account) give the
/// model's rows.
fn infix_scans_are_right(db: &Db, model: &[(Vec<u8>, Vec<u8>)], what: &str) {
    let rows = |lo: &[u8], hi: &[u8]| -> Vec<Vec<u8>> {
        db.scan(lo.to_vec()..=hi.to_vec()).map(|r| r.unwrap().0).collect()
    };
    for (i, w) in model.windows(2).enumerate() {
        let k = &w[0].0;
        assert_eq!(rows(k, k), vec![k.clone()], "{what}: {i}");
        let beside = [&k[..], &[0]].concat();
        assert_eq!(rows(k, &beside), vec![k.clone()], "{what}: beside {i}");
        let (a, b) = (&k[..7], &w[1].0[..7]);
        let hex = |k: &[u8]| u64::from_str_radix(std::str::from_utf8(&k[7..]).unwrap(), 16).unwrap();
        let (x, y) = (hex(k), hex(&w[1].0));
        if a == b && y - x > 2 {
            let mid = format!("{}{:016x}", std::str::from_utf8(a).unwrap(), x + (y - x) / 2).into_bytes();
            assert!(rows(&mid, &mid).is_empty(), "{what}: after {i}");
        }
    }
}

/// An infix filter block (key map 4) with any byte flipped, or replaced by
/// an infix filter of as many other keys under a valid checksum, is not
/// used: every scan reads the table and gives the model's rows; a strict
/// store refuses the damaged one.
#[test]
fn a_damaged_or_forged_infix_filter_is_never_used() {
    let env = Arc::new(FaultEnv::new());
    let model = one_infix_table(&env);
    let path = table_path(&env);
    let pristine = env.read_all(&path).unwrap();
    let (off, len, key_map_at) = range_block(&pristine);
    assert_eq!(pristine[key_map_at], 4, "key map");
    for at in (off..off + len + 5).step_by(3) {
        let bit = 1u8 << (at % 8);
        env.corrupt(&path, |d| d[at] ^= bit).unwrap();
        let what = format!("byte {at}");
        let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
        assert_eq!(db.stats().untrusted_range_filters, 1, "{what}");
        if at % 31 == 0 {
            infix_scans_are_right(&db, &model, &what);
            assert_eq!(db.stats().range_probes, 0, "{what}");
        }
        drop(db);
        let strict = options(&env, grafite(16.0)).strict_filters(true);
        assert!(
            matches!(Db::open(DIR, strict), Err(Error::UntrustedFilter { reason, .. }) if reason.contains("range filter")),
            "{what}"
        );
        env.corrupt(&path, |d| d[at] ^= bit).unwrap();
    }
    let db = Db::open(DIR, options(&env, grafite(16.0)).strict_filters(true)).unwrap();
    infix_scans_are_right(&db, &model, "pristine");
    let s = db.stats();
    assert!(s.range_negatives >= 580, "{s:?}");
    drop(db);
    // The forgery: an infix filter of 600 other keys of the same shape,
    // of the block's length, under a valid trailer.
    let forged = (1..)
        .map(|s: u64| {
            let other: Vec<Vec<u8>> = (s * 1_000..s * 1_000 + 600).map(account_key).collect();
            amq::range::InfixRange::build(&other, RangeSizing::BitsPerKey(16.0))
                .unwrap()
                .to_bytes()
        })
        .take(500)
        .find(|f| f.len() == len)
        .expect("a forgery of the block's length");
    env.corrupt(&path, |d| {
        d[off..off + len].copy_from_slice(&forged);
        let t = trailer(&d[off..off + len], 8);
        d[off + len..off + len + 5].copy_from_slice(&t);
    })
    .unwrap();
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    assert_eq!(db.stats().untrusted_range_filters, 1);
    infix_scans_are_right(&db, &model, "forged");
}

/// Keys longer than the infix filter reads (32 KiB) that differ only past
/// it share a value: the tables' filters count them once (without the
/// 32 KiB they share), still open trusted after a reopen, and every scan
/// gives the model's rows.
#[test]
fn keys_past_what_an_infix_filter_reads_are_found() {
    let env = Arc::new(FaultEnv::new());
    let opts = || {
        options(&env, grafite(16.0))
            .memtable_bytes(1 << 27)
            .table_bytes(1 << 27)
    };
    let db = Db::open(DIR, opts()).unwrap();
    let long = |i: u64, tail: u8| {
        let mut k = account_key(i);
        k.resize(40_000, b'.');
        k.push(tail);
        k
    };
    let mut model = Vec::new();
    for i in 0..600 {
        for tail in [b'a', b'b'] {
            db.put(long(i, tail), "v").unwrap();
            model.push(long(i, tail));
        }
    }
    db.flush().unwrap();
    model.sort();
    drop(db);
    let db = Db::open(DIR, opts().strict_filters(true)).unwrap();
    let s = db.stats();
    let tables = s.levels[0].tables;
    assert!(tables > 0 && s.untrusted_range_filters == 0);
    assert_eq!(s.levels[0].range_tables_infix, tables);
    for k in model.iter().step_by(7) {
        let got: Vec<_> = db.scan(k.clone()..=k.clone()).map(|r| r.unwrap().0).collect();
        assert_eq!(got, vec![k.clone()]);
        let mut after = k.clone();
        after.push(0);
        let got = db.scan(k.clone()..after).count();
        assert_eq!(got, 1);
    }
    assert_eq!(db.iter().count(), model.len());
}

/// Keys that differ only past a long shared middle are told apart by the
/// key map (which skips the positions where every key agrees): the tables
/// without the scanned key are skipped.
#[test]
fn keys_that_differ_past_eight_bytes_are_told_apart() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    for t in 0..3 {
        for i in 0..50 {
            db.put(format!("p:{i:04}:0123456789:{t}"), "v").unwrap();
        }
        db.put(format!("q:{t}"), "v").unwrap();
        db.flush().unwrap();
    }
    // From row 1 on every table's range meets the scan's.
    for i in 1..50 {
        let lo = format!("p:{i:04}:0123456789:1");
        let hi = format!("p:{i:04}:0123456789:1~");
        let got: Vec<_> = db.scan(lo.clone()..hi).map(|r| r.unwrap().0).collect();
        assert_eq!(got, vec![lo.into_bytes()]);
    }
    let s = db.stats();
    assert_eq!(s.range_probes, 147);
    // The other two tables differ in the last byte, which the map keeps.
    assert!(s.range_negatives >= 97, "{s:?}");
    assert_eq!(s.range_false_positives, 147 - 49 - s.range_negatives, "{s:?}");
    assert_eq!(s.levels[0].range_tables_collapsing, 0);
}

/// Keys whose differences need more than 64 bits share their `u64` past
/// them in a key map: a range between two such keys is answered "maybe"
/// (a false positive), never "no", and `Stats` counts the tables and keys.
/// At 4 bits per key (too few for an infix filter's heads) the tables keep
/// key maps; at 16 they get infix filters, whose cells end before the
/// twentieth digit here too (they read the nineteen as independent).
#[test]
fn keys_past_64_bits_of_differences_are_found_and_counted() {
    // Nineteen digits all `i mod 10` (every position holds all ten), then
    // a twentieth, `i / 10`, which does not fit: keys of one `i mod 10`
    // share their u64.
    let k = |i: u64, t: u64| format!("e:{}{}:{t}", (i % 10).to_string().repeat(19), i / 10);
    for bits in [4.0, 16.0] {
        let env = Arc::new(FaultEnv::new());
        let db = Db::open(DIR, options(&env, grafite(bits))).unwrap();
        for t in 0..3 {
            for i in 0..100 {
                db.put(k(i, t), "v").unwrap();
            }
            db.flush().unwrap();
        }
        let s = db.stats();
        let mapped = bits == 4.0;
        assert_eq!(
            s.levels[0].range_tables_collapsing,
            if mapped { 3 } else { 0 },
            "{s:?}"
        );
        assert_eq!(s.levels[0].range_keys_collapsed, if mapped { 3 * 90 } else { 0 });
        assert_eq!(s.levels[0].range_tables_infix, if mapped { 0 } else { 3 });
        assert_eq!(format!("{s}").contains("share a u64"), mapped, "{s}");
        for i in 0..100 {
            let lo = k(i, 1);
            let got: Vec<_> = db.scan(lo.clone()..=lo.clone()).map(|r| r.unwrap().0).collect();
            assert_eq!(got, vec![lo.into_bytes()]);
        }
        // The other tables hold keys of the same nineteen digits: "maybe"
        // (but for the first key, below table 2's range, and the last,
        // above table 0's).
        assert_eq!(db.stats().range_false_positives, 2 * 100 - 2);
    }
}

/// A range whose `u64`s are too many for a filter to rule out (its bound
/// past 4) is not asked about: every table is read, and nothing counted.
#[test]
fn a_range_too_long_to_rule_out_is_not_asked() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    // Random 8-byte keys: sparse in their 64 bits.
    let key = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec();
    for t in 0..4u64 {
        for i in 0..500 {
            db.put(key(t * 500 + i), "v").unwrap();
        }
        db.flush().unwrap();
    }
    let n = db.scan(vec![0x10u8]..=vec![0xf0u8]).count();
    let s = db.stats();
    assert!(n > 1_000);
    assert_eq!((s.scan_tables, s.range_probes), (4, 0), "{s:?}");
}

/// An excluded end is tightened to the integer below its own only when no
/// key below it can share its integer: a key that is the end less its
/// trailing zero bytes pads to the same integer, and is in the range.
#[test]
fn an_excluded_end_with_a_trailing_zero_keeps_the_key_it_extends() {
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    for k in ["ab", "abc", "xyz"] {
        db.put(k, "v").unwrap();
    }
    db.flush().unwrap();
    let got = |lo: &[u8], hi: &[u8]| -> Vec<Vec<u8>> {
        db.scan(lo.to_vec()..hi.to_vec()).map(|r| r.unwrap().0).collect()
    };
    assert_eq!(got(b"aa", b"ab\x00"), vec![b"ab".to_vec()]);
    assert_eq!(got(b"ab", b"ab\x00\x00"), vec![b"ab".to_vec()]);
    assert_eq!(got(b"aa", b"ab"), Vec::<Vec<u8>>::new());
    assert_eq!(got(b"ab\x01", b"abc"), Vec::<Vec<u8>>::new());
    assert_eq!(got(b"ab\x01", b"abd"), vec![b"abc".to_vec()]);
    // The empty range inside the table was ruled out by its filter ("aa" to
    // "ab" lies before the table).
    let s = db.stats();
    assert_eq!((s.range_probes, s.range_negatives), (4, 1), "{s:?}");
}

/// Event `i`'s key: 8 bytes of milliseconds (`40 i` to `40 i + 7`), then 8
/// random bytes.
fn event(i: u64) -> Vec<u8> {
    event_with(i, 8)
}

/// Event `i`'s key with `tail` random bytes (at most 8) after its time.
fn event_with(i: u64, tail: usize) -> Vec<u8> {
    let ms = i * 40 + amq::hash::remix(i, 2) % 8;
    [
        &ms.to_be_bytes()[..],
        &amq::hash::remix(i, 1).to_be_bytes()[..tail],
    ]
    .concat()
}

/// The window `[ms, ms + len)` as bounds of 8-byte times.
fn window(ms: u64, len: u64) -> (Vec<u8>, Vec<u8>) {
    (ms.to_be_bytes().to_vec(), (ms + len).to_be_bytes().to_vec())
}

/// Tables written after the store has seen time-window scans fit their
/// range filters to them: windows a full-resolution map could never ask
/// about are ruled out, every scan (windows, ranges beside keys, whole
/// tables) gives the model's rows, and the tables keep their filters
/// across a reopen that samples nothing. With 3 random bytes after the
/// time the keys' differences fit 64 bits and the maps are coarsened; with
/// 8 they do not, and the tables get infix filters, which rule the windows
/// out as well.
#[test]
fn tables_written_after_window_scans_are_fitted_to_them() {
    for tail in [3, 8] {
        windows_after_window_scans(tail);
    }
}

fn windows_after_window_scans(tail: usize) {
    let event = |i: u64| event_with(i, tail);
    let env = Arc::new(FaultEnv::new());
    let db = Db::open(DIR, options(&env, grafite(16.0))).unwrap();
    // A key about every 40 ms; the store has seen 20 ms windows between
    // keys.
    for i in 0..300u64 {
        let (lo, hi) = window(i * 40 + 12, 20);
        assert_eq!(db.scan(lo..hi).count(), 0);
    }
    let mut model = std::collections::BTreeMap::new();
    for t in 0..4u64 {
        for i in (t..8_000).step_by(4) {
            model.insert(event(i), format!("v{i}").into_bytes());
            db.put(event(i), format!("v{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    let kinds = |s: &amq_lsm::Stats| (s.levels[0].range_tables_coarsened, s.levels[0].range_tables_infix);
    let want = if tail == 3 { (4, 0) } else { (0, 4) };
    let s = db.stats();
    assert_eq!(kinds(&s), want, "{s:?}");
    let said = if tail == 3 {
        "fitted to the latest scans"
    } else {
        "with infix filters"
    };
    assert!(format!("{s}").contains(said), "{s}");
    let check = |db: &Db, what: &str| {
        let before = db.stats();
        for i in (1_000..3_000u64).step_by(7) {
            let (lo, hi) = window(i * 40 + 12, 20);
            assert_eq!(db.scan(lo..hi).count(), 0, "{what}: window {i}");
        }
        let s = db.stats();
        let (probes, negatives) = (
            s.range_probes - before.range_probes,
            s.range_negatives - before.range_negatives,
        );
        assert!(
            probes >= 4 * 285 && negatives * 100 >= probes * 95,
            "{what}: {negatives} of {probes}"
        );
        // Windows holding a key, ranges just beside keys, and the whole
        // tree give the model's rows.
        for i in (0..8_000u64).step_by(97) {
            let (lo, hi) = window(i * 40, 8);
            let got: Vec<_> = db.scan(lo.clone()..hi.clone()).map(|r| r.unwrap()).collect();
            let want: Vec<_> = model.range(lo..hi).map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want, "{what}: ms {}", i * 40);
            let k = event(i);
            let after = [&k[..], &[0]].concat();
            let got: Vec<_> = db.scan(k.clone()..=after.clone()).map(|r| r.unwrap().0).collect();
            assert_eq!(got, vec![k.clone()], "{what}: beside {i}");
        }
        assert_eq!(db.iter().count(), model.len());
    };
    check(&db, "fitted");
    drop(db);
    // Reopened without a sample: the tables keep their filters.
    let db = Db::open(DIR, options(&env, grafite(16.0)).range_fit_scans(0)).unwrap();
    assert_eq!(kinds(&db.stats()), want);
    check(&db, "reopened");
}

/// Without a sample (or with `range_fit_scans(0)`), or when the scans seen
/// are ranges just past keys, tables keep the full resolution.
#[test]
fn scans_beside_keys_or_no_sample_keep_the_full_resolution() {
    for (fit, beside) in [(0, false), (256, true)] {
        let env = Arc::new(FaultEnv::new());
        let db = Db::open(DIR, options(&env, grafite(16.0)).range_fit_scans(fit)).unwrap();
        for i in 0..300u64 {
            let (lo, hi) = match beside {
                true => (event(i), [&event(i)[..], &[0]].concat()),
                false => window(i * 40 + 12, 20),
            };
            assert_eq!(db.scan(lo..hi).count(), 0);
        }
        for i in 0..2_000u64 {
            db.put(event(i), "v").unwrap();
        }
        db.flush().unwrap();
        assert_eq!(db.stats().levels[0].range_tables_coarsened, 0, "fit {fit}");
    }
    let env = Arc::new(FaultEnv::new());
    assert!(Db::open(DIR, options(&env, grafite(16.0)).range_fit_scans(4097)).is_err());
}
