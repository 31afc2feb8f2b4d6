//! Range filter settings can never stop the store: `open` refuses every
//! sizing the filter can never build, and a table whose range filter cannot
//! be built at its key count is written without one, counted in `Stats`,
//! while writes go on. And tables written by earlier builds, with key map
//! 1, are still read and still skipped.

use std::path::Path;
use std::sync::Arc;

use amq::range::RangeSizing;
use amq_lsm::env::{Env, FaultEnv};
use amq_lsm::{Db, LevelRangeFilter, Options, RangeFilterPolicy, TieredOptions};

fn options(env: &Arc<FaultEnv>, sizing: RangeSizing) -> Options {
    let dyn_env: Arc<dyn Env> = env.clone();
    Options::default()
        .env(dyn_env)
        .compaction(TieredOptions::default().runs_per_level(1000))
        .memtable_bytes(1 << 30)
        .table_bytes(1 << 30)
        .range_filter_policy(RangeFilterPolicy::uniform(sizing))
}

#[test]
fn sizings_the_filter_never_builds_are_refused_at_open() {
    for sizing in [
        RangeSizing::BitsPerKey(1.0),
        RangeSizing::BitsPerKey(1.99),
        RangeSizing::BitsPerKey(64.5),
        RangeSizing::BitsPerKey(100.0),
        RangeSizing::BitsPerKey(f64::NAN),
        RangeSizing::Fpr {
            fpr: 1e-6,
            max_range_len: 1 << 60,
        },
        RangeSizing::Fpr {
            fpr: 0.0,
            max_range_len: 1,
        },
    ] {
        let env = Arc::new(FaultEnv::new());
        assert!(Db::open("/db", options(&env, sizing)).is_err(), "{sizing:?}");
        // The same through a per-level policy and its overrides.
        let bad = LevelRangeFilter::new(amq::FilterKind::GrafiteRange, sizing);
        assert!(RangeFilterPolicy::per_level(vec![bad]).is_err(), "{sizing:?}");
        assert!(
            RangeFilterPolicy::none().with_first(bad).validate().is_err(),
            "{sizing:?}"
        );
    }
}

/// Every policy `open` accepts, at its extremes, survives flushes of
/// tables from 1 to 1M keys; where the filter cannot be built at a table's
/// key count the table has none, `Stats` says so, and every key is found.
#[test]
fn every_accepted_policy_survives_tables_from_one_key_to_a_million() {
    let sizings = [
        (RangeSizing::BitsPerKey(2.0), &[1usize, 1_000, 1_000_000][..]),
        (RangeSizing::BitsPerKey(64.0), &[1, 1_000, 1_000_000]),
        // Builds up to about 4,000 keys, then needs a universe past 2^62.
        (
            RangeSizing::Fpr {
                fpr: 1e-6,
                max_range_len: 1 << 30,
            },
            &[1, 3_000, 100_000],
        ),
        (
            RangeSizing::Fpr {
                fpr: 0.999,
                max_range_len: 1,
            },
            &[1, 1_000, 1_000_000],
        ),
    ];
    for (sizing, sizes) in sizings {
        let env = Arc::new(FaultEnv::new());
        let db = Db::open("/db", options(&env, sizing)).unwrap();
        let mut next = 0u64;
        for &n in sizes {
            let first = next;
            for _ in 0..n {
                db.put(next.to_be_bytes(), b"v").unwrap();
                next += 1;
            }
            db.flush().unwrap_or_else(|e| panic!("{sizing:?}, {n} keys: {e}"));
            // Writes go on, and the keys are there.
            for k in [first, first + n as u64 / 2, next - 1] {
                let got: Vec<_> = db
                    .scan(k.to_be_bytes()..=k.to_be_bytes())
                    .map(|r| r.unwrap().0)
                    .collect();
                assert_eq!(got, vec![k.to_be_bytes().to_vec()], "{sizing:?}, {n} keys");
            }
        }
        let s = db.stats();
        let expect_not_built = u64::from(matches!(sizing, RangeSizing::Fpr { fpr, .. } if fpr < 0.5));
        assert_eq!(s.range_filters_not_built, expect_not_built, "{sizing:?}: {s}");
        if expect_not_built > 0 {
            assert!(format!("{s}").contains("1 not built"), "{s}");
        }
        db.put(b"after", b"v").unwrap();
        db.flush().unwrap();
    }
}

/// A store written by a build whose range filters used key map 1 (the
/// eight bytes past each table's common prefix), kept in `tests/data`:
/// four overlapping tables of keys `k{i:06}`, `i ≡ 2t (mod 8)` below 2,000.
#[test]
fn tables_of_key_map_one_are_still_read_and_skipped() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/range-key-map-1");
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let opts = Options::default()
        .compaction(TieredOptions::default().runs_per_level(1000))
        .range_filter_policy(RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)));
    let db = Db::open(dir.path(), opts).unwrap();
    let key = |i: u32| format!("k{i:06}");
    let mut scans = 0;
    for i in 0..2_000u32 {
        let got: Vec<_> = db.scan(key(i)..=key(i)).map(|r| r.unwrap().0).collect();
        let want: Vec<Vec<u8>> = if i % 2 == 0 {
            vec![key(i).into_bytes()]
        } else {
            Vec::new()
        };
        assert_eq!(got, want, "{i}");
        scans += 1;
    }
    let s = db.stats();
    assert_eq!(s.untrusted_range_filters, 0);
    assert!(s.range_probes >= 3 * scans, "{s}");
    // Each of the four tables holds one key in four: the other three are
    // ruled out but for the filter's rare false positive.
    assert!(s.range_negatives >= s.range_probes * 7 / 10, "{s}");
    assert_eq!(s.levels[0].range_tables_collapsing, 0);
}
