//! Prefix filters in the store: the bugs other engines shipped with them,
//! each as a test that fails if the guard against it is removed, and what
//! scans read and count.

use std::sync::Arc;

use amq::{DelimitedPrefix, ExtractorId, FilterKind, FilterSizing, FixedPrefix, PrefixExtractor};
use amq_lsm::{Db, FilterPolicy, Options, TieredOptions};

/// A store's extractor setting, `None` for none.
type Extractor = Option<Arc<dyn PrefixExtractor>>;

fn colon() -> DelimitedPrefix {
    DelimitedPrefix::new(b':')
}

/// `opts` with `extractor`, if any.
fn with_extractor(opts: Options, extractor: Extractor) -> Options {
    match extractor {
        Some(e) => opts.prefix_extractor(e),
        None => opts,
    }
}

fn rows(db: &Db, prefix: &str) -> Vec<Vec<u8>> {
    db.scan_prefix(prefix).map(|r| r.unwrap().0).collect()
}

/// A tree of `tables` overlapping tables (tiered, never compacted), each
/// holding row `{i}` of tenants `t000:` to `t099:` and one row of tenant
/// `t050x{i}:` of its own (inside every table's key range).
fn overlapping(opts: Options, tables: usize) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let opts = opts.compaction(TieredOptions::default().runs_per_level(1000));
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..tables {
        for t in 0..100 {
            db.put(format!("t{t:03}:{i:04}"), "v").unwrap();
        }
        db.put(format!("t050x{i:03}:row"), "v").unwrap();
        db.flush().unwrap();
    }
    (dir, db)
}

/// The class of bug RocksDB shipped when prefix filters met partitioned
/// filters: a prefix whose keys span several partitions was kept only in the
/// partition of its first key, and a seek (or a point read by prefix)
/// looked in the partition of the key it started from, so rows were lost.
/// Here each partition holds the prefixes of its own keys: a prefix scan, a
/// scan starting inside the prefix in every partition, and point reads
/// through a filter of prefixes only all find every row.
#[test]
fn a_prefix_whose_keys_span_filter_partitions_is_found() {
    // Filters of prefixes only (a partition is cut once it holds a new
    // prefix, so the wide prefix starts in one partition and goes on in the
    // next), and of whole keys and prefixes (cut every few dozen keys).
    for (whole_keys, partition_bytes) in [(false, 1), (true, 64)] {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default()
            .block_bytes(256)
            .filter_partition_bytes(Some(partition_bytes))
            .prefix_extractor(colon())
            .whole_key_filtering(whole_keys);
        let db = Db::open(dir.path(), opts).unwrap();
        let key = |p: &str, i: u32| format!("{p}:{i:05}");
        // One wide prefix between two narrow ones, in one table.
        db.put(key("a", 0), "v").unwrap();
        for i in 0..2000 {
            db.put(key("m", i), "v").unwrap();
        }
        db.put(key("z", 0), "v").unwrap();
        db.flush().unwrap();
        assert_eq!(db.stats().levels[0].tables, 1);
        assert_eq!(rows(&db, "m:").len(), 2000);
        for start in (0..2000).step_by(97) {
            let inside: Vec<_> = db
                .scan(key("m", start)..key("m", 2000))
                .map(|r| r.unwrap().0)
                .collect();
            assert_eq!(inside.len(), 2000 - start as usize, "from {start}");
        }
        for i in 0..2000 {
            assert_eq!(db.get(key("m", i)).unwrap(), Some(b"v".to_vec()), "{i}");
        }
        let keys: Vec<String> = (0..2000).map(|i| key("m", i)).collect();
        assert!(db.multi_get(&keys).unwrap().iter().all(Option::is_some));
        assert_eq!(rows(&db, "b:").len(), 0);
        let s = db.stats();
        assert!(s.filter_partitions_read > 1 && s.prefix_probes > 0, "{s}");
    }
}

/// The class of bug SlateDB shipped: whether a filter holds whole keys was
/// taken from the options of the day, not from the table, so a store
/// reopened with another setting asked filters of prefixes only for whole
/// keys, and missed them. Here each table records it.
#[test]
fn whole_key_filtering_is_recorded_with_each_table() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |whole_keys| {
        Options::default()
            .prefix_extractor(colon())
            .whole_key_filtering(whole_keys)
    };
    {
        let db = Db::open(dir.path(), opts(false)).unwrap();
        for i in 0..500 {
            db.put(format!("u{}:{i}", i % 7), "prefix-only table").unwrap();
        }
        db.flush().unwrap();
    }
    {
        let db = Db::open(dir.path(), opts(true)).unwrap();
        for i in 500..1000 {
            db.put(format!("u{}:{i}", i % 7), "whole-key table").unwrap();
        }
        db.flush().unwrap();
    }
    for whole_keys in [true, false] {
        let db = Db::open(dir.path(), opts(whole_keys)).unwrap();
        for i in 0..1000 {
            assert!(
                db.get(format!("u{}:{i}", i % 7)).unwrap().is_some(),
                "key {i}, reopened with whole_key_filtering = {whole_keys}"
            );
        }
        let keys: Vec<String> = (0..1000).map(|i| format!("u{}:{i}", i % 7)).collect();
        assert!(db.multi_get(&keys).unwrap().iter().all(Option::is_some));
        assert_eq!(rows(&db, "u3:").len(), (0..1000).filter(|i| i % 7 == 3).count());
        // Absent keys inside both tables' ranges are still filtered: by
        // whole key in one table, by prefix in the other.
        for i in 0..200 {
            assert_eq!(db.get(format!("u3x{i}:0")).unwrap(), None);
        }
        let s = db.stats();
        assert!(s.filter_negatives > 350, "{s}");
    }
}

/// The extractor's name and parameters as `ExtractorId` records them, with
/// the behaviour of `DelimitedPrefix::new(b':')`.
#[derive(Debug)]
struct Named(&'static str);

impl PrefixExtractor for Named {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        DelimitedPrefix::new(b':').prefix(key)
    }
    fn is_complete(&self, prefix: &[u8]) -> bool {
        DelimitedPrefix::new(b':').is_complete(prefix)
    }
    fn id(&self) -> ExtractorId {
        ExtractorId::new(self.0, &[]).unwrap()
    }
}

/// The class of bug a RocksDB fork shipped: renaming an extractor broke the
/// files written under the old name. Here a table written with another
/// extractor (another rule, another name for the same rule, or none: a table
/// written before prefixes) opens and is read, never skipped by a prefix
/// probe whose hash it never held.
#[test]
fn tables_of_another_or_a_renamed_extractor_are_read_not_skipped() {
    let earlier: [(&str, Extractor, bool); 4] = [
        ("no extractor", None, true),
        ("fixed 2", Some(Arc::new(FixedPrefix::new(2))), false),
        ("renamed", Some(Arc::new(Named("my-app.tenant-v1"))), false),
        (
            "same rule, whole keys",
            Some(Arc::new(Named("my-app.tenant-v1"))),
            true,
        ),
    ];
    for (what, extractor, whole_keys) in earlier {
        let dir = tempfile::tempdir().unwrap();
        {
            let opts = with_extractor(Options::default(), extractor).whole_key_filtering(whole_keys);
            let db = Db::open(dir.path(), opts).unwrap();
            for i in 0..300 {
                db.put(format!("t{}:{i:03}", i % 10), "old").unwrap();
            }
            db.flush().unwrap();
        }
        let now = Options::default()
            .prefix_extractor(Named("my-app.tenant-v2"))
            .whole_key_filtering(false);
        let db = Db::open(dir.path(), now).unwrap();
        db.put("t3:new", "new").unwrap();
        db.put("t4:new", "new").unwrap();
        db.flush().unwrap();
        assert_eq!(rows(&db, "t3:").len(), 31, "{what}");
        assert_eq!(db.scan("t4:000".."t4:999").count(), 30, "{what}");
        assert_eq!(db.get("t5:005").unwrap(), Some(b"old".to_vec()), "{what}");
        // The new table was asked; the old one could not be.
        let s = db.stats();
        assert_eq!(s.prefix_probes, 2, "{what}: {s}");
    }
}

/// On overlapping tables, an absent prefix is ruled out by every table's
/// filter and reads no data block but for a false positive; a present one
/// reads the tables that hold it; a scan reads nothing until advanced and,
/// ending inside a block, no block after it.
#[test]
fn scans_skip_tables_by_prefix_and_read_only_what_they_need() {
    let opts = Options::default()
        .filter_policy(FilterPolicy::uniform(
            FilterKind::BlockedBloom,
            FilterSizing::BitsPerKey(10.0),
        ))
        .prefix_extractor(colon());
    let (_dir, db) = overlapping(opts, 64);
    assert_eq!(db.stats().levels.iter().map(|l| l.tables).sum::<usize>(), 64);
    let before = db.stats();
    let scan = db.scan_prefix("t050x007:");
    assert_eq!(
        db.stats().scan_blocks_read,
        before.scan_blocks_read,
        "nothing read yet"
    );
    assert_eq!(scan.count(), 1);
    let s = db.stats();
    assert_eq!(s.scans, 1);
    assert_eq!((s.scan_tables, s.prefix_probes), (64, 64));
    assert!(s.prefix_negatives >= 60, "{s}");
    assert_eq!(s.scan_blocks_read, 64 - s.prefix_negatives, "{s}");
    assert_eq!(s.prefix_false_positives, 63 - s.prefix_negatives, "{s}");
    // Absent prefixes, many of them: the measured rate is the filter's.
    for t in 0..100 {
        assert_eq!(db.scan_prefix(format!("t050y{t}:")).count(), 0);
    }
    let s = db.stats();
    let fpr = s.measured_prefix_fpr();
    assert!(fpr < 0.03, "{fpr} {s}");
    assert_eq!(s.scan_blocks_read, s.prefix_false_positives + 1, "{s}");
    // A scan across prefixes cannot use them; each table here is one block.
    let before = db.stats();
    assert_eq!(db.scan("t010:0000".."t010:0005").count(), 5);
    let s = db.stats();
    assert_eq!(
        s.prefix_probes,
        before.prefix_probes + 64,
        "inside one prefix: asked"
    );
    let before = s;
    assert_eq!(db.scan("t010:0000".."t011:0000").count(), 64);
    let s = db.stats();
    assert_eq!(
        s.prefix_probes, before.prefix_probes,
        "across prefixes: not asked"
    );
    assert_eq!(s.scan_blocks_read - before.scan_blocks_read, 64);
    // From the back: the newest row of a tenant.
    let last = db.scan_prefix("t042:").next_back().unwrap().unwrap();
    assert_eq!(last.0, b"t042:0063".to_vec());
}

/// A prefix the filters cannot serve (not complete for the extractor, nor
/// an extension of a complete one) reads every table it meets, and is
/// counted in `prefix_scans_unfiltered`; a whole prefix, or one inside a
/// whole prefix, is asked of the filters and not counted.
#[test]
fn a_prefix_the_filters_cannot_serve_reads_every_table_and_is_counted() {
    let (_dir, db) = overlapping(Options::default().prefix_extractor(colon()), 8);
    let scan = |p: &str| {
        let before = db.stats();
        let rows = rows(&db, p).len();
        let s = db.stats();
        (
            rows,
            s.prefix_probes - before.prefix_probes,
            s.prefix_scans_unfiltered - before.prefix_scans_unfiltered,
        )
    };
    // Whole, inside a whole one, absent: each table's filter is asked.
    assert_eq!(scan("t010:"), (8, 8, 0));
    assert_eq!(scan("t010:000"), (8, 8, 0));
    assert_eq!(scan("t010:0003"), (1, 8, 0));
    assert_eq!(scan("t050y:"), (0, 8, 0));
    // Not whole: "t010" could be followed by ':' or by another digit, so
    // its keys have many prefixes and no filter entry answers for them all.
    assert_eq!(scan("t010"), (8, 0, 1));
    assert_eq!(scan("t05"), (8 * 10 + 8, 0, 1));
    assert_eq!(scan(""), (8 * 100 + 8, 0, 1));
    let s = db.stats();
    assert_eq!(s.prefix_scans_unfiltered, 3);
    assert!(s.to_string().contains("; 3 prefix scans unfiltered"), "{s}");
    // Without an extractor no scan is served, and none is counted.
    let (_dir, plain) = overlapping(Options::default(), 2);
    assert_eq!(plain.scan_prefix("t010").count(), 2);
    assert_eq!(plain.stats().prefix_scans_unfiltered, 0);
}

/// The prefix FPR is measured where it is known: a scan of a narrow empty
/// range inside a prefix every table holds lets every table through, which
/// is no false positive (each holds the prefix); only scans of one whole
/// prefix count them. `measured_prefix_fpr` once read 0.4991 here with no
/// false positive at all.
#[test]
fn narrow_scans_inside_a_held_prefix_are_no_prefix_false_positives() {
    let (_dir, db) = overlapping(Options::default().prefix_extractor(colon()), 8);
    for t in 0..100 {
        // Inside tenant t's prefix, between its rows 0003 and 0004: empty.
        let lo = format!("t{t:03}:0003a");
        let hi = format!("t{t:03}:0003z");
        assert_eq!(db.scan(lo.as_bytes()..hi.as_bytes()).count(), 0);
    }
    let s = db.stats();
    assert!(s.prefix_probes >= 700, "{s}");
    assert_eq!(
        (s.prefix_false_positives, s.measured_prefix_fpr()),
        (0, 0.0),
        "{s}"
    );
    // Absent whole prefixes inside every table's key range: each table
    // ruled out or a counted false positive.
    for t in 0..99 {
        assert!(rows(&db, &format!("t{t:03}y:")).is_empty());
    }
    let s = db.stats();
    assert_eq!(s.whole_prefix_negatives + s.prefix_false_positives, 99 * 8, "{s}");
    assert!(s.measured_prefix_fpr() < 0.05, "{s}");
}

/// An extractor that cuts every key to the same prefix serves nothing, and
/// the stats say so: about one prefix per table, on its summary line. The
/// extractor up to the second delimiter tells the customers apart and
/// skips tables.
#[test]
fn an_extractor_that_gives_every_key_one_prefix_shows_in_the_stats() {
    let fill = |extractor: DelimitedPrefix| {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default()
            .prefix_extractor(extractor)
            .compaction(TieredOptions::default().runs_per_level(1000));
        let db = Db::open(dir.path(), opts).unwrap();
        for table in 0..6u32 {
            for row in 0..200u32 {
                // Each table its own 20 customers, the tables' key ranges
                // overlapping: customer `6i + table`.
                db.put(format!("order:{:08}:{row:010}", row % 20 * 6 + table), "v")
                    .unwrap();
            }
            db.flush().unwrap();
        }
        // Each customer's orders are in one table of the six.
        for c in 0..50u32 {
            assert_eq!(rows(&db, &format!("order:{c:08}:")).len(), 10);
        }
        (dir, db)
    };
    let (_a, first) = fill(colon());
    let s = first.stats();
    assert_eq!(s.prefixes_per_table(), Some(1.0), "{s}");
    assert!(
        s.to_string()
            .contains("does the extractor cut every key to the same prefix?"),
        "{s}"
    );
    assert_eq!(s.prefix_negatives, 0, "{s}");
    let (_b, second) = fill(DelimitedPrefix::nth(b':', 2).unwrap());
    let s = second.stats();
    assert_eq!(s.prefixes_per_table(), Some(20.0), "{s}");
    assert!(!s.to_string().contains("same prefix?"), "{s}");
    assert!(s.prefix_negatives >= 50 * 5 * 9 / 10, "{s}");
}
