//! The amq-lsm measurements, written once for the criterion bench
//! (`benches/lsm.rs`) and the report (`src/bin/lsm_report.rs`).
//!
//! * **Hash sharing** ([`OverlappingStore`]): a store of N tables whose key
//!   ranges all cover every probe key, so a point miss consults all N; it is
//!   timed with the one shared hash ([`Db::get`]) and with a rehash per table
//!   (`Db::get_rehashing_per_table`), beside the filter's own `contains_hash`.
//! * **Reads saved and write cost** ([`measure_load`]): a store loaded with
//!   n keys under one [`FilterPolicy`] and compaction style, then probed with
//!   misses and hits; the store's [`Stats`] give blocks read, tables
//!   consulted, the measured FPR and the time spent building filters.
//!
//! Keys are numbers written as text: the 16-byte key of `i` is
//! `key{i:013}`; the 64-byte key puts a fixed 48-byte prefix before it (a
//! table or tenant name, say), so keys still sort by number and differ only
//! in their last bytes. Present keys are even numbers, misses odd ones, so a
//! miss always lies inside the key ranges.

use std::borrow::Borrow;
use std::time::{Duration, Instant};

use amq::hash::{reduce, remix};
use amq::{hash_key, AnyFilter, Filter, FilterKind, FilterSizing, KeyHash, PreparedHash};
use amq_lsm::{
    CompactionStyle, Db, FilterPolicy, LevelFilter, LeveledOptions, Options, Stats, SyncMode, TieredOptions,
    WriteBatch,
};

/// The errors of this module: the store's, or the file system's.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Seed of every random choice here.
const SEED: u64 = 0x6c73_6d2d_6265_6e63; // "lsm-benc"

/// The 48 bytes that make a 16-byte key a 64-byte one.
const LONG_PREFIX: &[u8; 48] = b"tenant-00042/table-orders/index-by-customer-id//";

/// Key lengths measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyShape {
    /// 16 bytes: `key0000000000042`.
    Short,
    /// 64 bytes: a 48-byte common prefix, then the 16-byte key.
    Long,
}

impl KeyShape {
    /// Both shapes, short first.
    pub const ALL: [KeyShape; 2] = [KeyShape::Short, KeyShape::Long];

    /// Key length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            KeyShape::Short => 16,
            KeyShape::Long => 64,
        }
    }

    /// Writes the key of number `i` into `buf` (cleared first).
    pub fn write(self, i: u64, buf: &mut Vec<u8>) {
        use std::io::Write as _;
        buf.clear();
        if self == KeyShape::Long {
            buf.extend_from_slice(LONG_PREFIX);
        }
        // Writing to a Vec cannot fail.
        let _ = write!(buf, "key{i:013}");
    }

    /// The key of number `i`.
    pub fn key(self, i: u64) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.bytes());
        self.write(i, &mut buf);
        buf
    }
}

/// Numbers of overlapping tables the hash-sharing measurement visits.
pub const TABLE_COUNTS: [usize; 5] = [1, 4, 16, 64, 256];

/// Keys per table in the hash-sharing measurement unless told otherwise.
pub const KEYS_PER_TABLE: usize = 10_000;

/// The filter kinds of the hash-sharing measurement, each at 1%.
pub const SHARING_KINDS: [FilterKind; 2] = [FilterKind::BlockedBloom, FilterKind::Ribbon];

/// A store whose tables all overlap: table `t` of `max_tables` holds the
/// numbers `2 · (j · max_tables + t)` for `j < keys_per_table`, so every
/// table's key range spans nearly the whole key space and a miss (an odd
/// number in the middle of it) consults every table.
///
/// Opened with `auto_compact: false` and tiered compaction with
/// `max_tables + 1` runs per level and 2 levels, so the flushes stay as
/// separate level-0 runs; filters are held in memory by the store.
pub struct OverlappingStore {
    db: Db,
    _dir: tempfile::TempDir,
    kind: FilterKind,
    sizing: FilterSizing,
    shape: KeyShape,
    keys_per_table: usize,
    max_tables: usize,
    tables: usize,
}

impl OverlappingStore {
    /// An empty store in a new temporary directory, ready to grow to
    /// `max_tables` tables of `keys_per_table` keys with filters of `kind`.
    pub fn new(
        kind: FilterKind,
        sizing: FilterSizing,
        shape: KeyShape,
        keys_per_table: usize,
        max_tables: usize,
    ) -> Result<Self, Error> {
        assert!(keys_per_table >= 4 && max_tables >= 1);
        let dir = tempfile::tempdir()?;
        let opts = Options::default()
            .filter_policy(FilterPolicy::uniform(kind, sizing))
            .compaction(CompactionStyle::Tiered(
                TieredOptions::default()
                    .runs_per_level((max_tables + 1).max(2))
                    .max_levels(2),
            ))
            .auto_compact(false)
            .sync(SyncMode::OnSync)
            .memtable_bytes(1 << 40)
            .table_bytes(1 << 40);
        let db = Db::open(dir.path(), opts)?;
        Ok(OverlappingStore {
            db,
            _dir: dir,
            kind,
            sizing,
            shape,
            keys_per_table,
            max_tables,
            tables: 0,
        })
    }

    /// The number of the `j`-th key of table `t`.
    fn number(&self, t: usize, j: usize) -> u64 {
        2 * (j as u64 * self.max_tables as u64 + t as u64)
    }

    /// Flushes tables until there are `tables` of them.
    pub fn grow_to(&mut self, tables: usize) -> Result<(), Error> {
        assert!(
            tables <= self.max_tables,
            "more tables than the store was built for"
        );
        let mut key = Vec::new();
        while self.tables < tables {
            let t = self.tables;
            for chunk in (0..self.keys_per_table).collect::<Vec<_>>().chunks(1000) {
                let mut batch = WriteBatch::new();
                for &j in chunk {
                    self.shape.write(self.number(t, j), &mut key);
                    batch.put(&key, (j as u64).to_le_bytes());
                }
                self.db.write(batch)?;
            }
            self.db.flush()?;
            self.tables += 1;
        }
        let s = self.db.stats();
        let runs: usize = s.levels.iter().map(|l| l.runs).sum();
        if runs != tables || s.memtable_entries != 0 {
            return Err(format!("expected {tables} level-0 runs, the store has {runs}").into());
        }
        Ok(())
    }

    /// Tables in the store now.
    pub fn tables(&self) -> usize {
        self.tables
    }

    /// The store.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// `count` absent keys, each inside every table's key range, in random
    /// order.
    pub fn miss_keys(&self, count: usize) -> Vec<Vec<u8>> {
        self.candidates().take(count).collect()
    }

    /// Odd numbers strictly between the largest smallest key and the
    /// smallest largest key of all the tables, as keys, in random order.
    fn candidates(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        let lo = self.max_tables as u64;
        let hi = (self.keys_per_table as u64 - 1) * self.max_tables as u64;
        (0..).map(move |i| self.shape.key(2 * (lo + reduce(remix(i, SEED), hi - lo)) + 1))
    }

    /// `count` absent keys inside every table's key range that no filter of
    /// `filters` (every table's, from [`table_filters`](Self::table_filters))
    /// lets through: a miss on one of them reads no data block at any table
    /// count, so its time is the read path's CPU work alone. (With 256
    /// tables at 1%, about 8% of random misses qualify.)
    pub fn clean_miss_keys(&self, count: usize, filters: &[AnyFilter]) -> Vec<Vec<u8>> {
        assert_eq!(filters.len(), self.max_tables, "one filter per table");
        self.candidates()
            .filter(|k| {
                let h = hash_key(k);
                filters.iter().all(|f| !f.contains_hash(h))
            })
            .take(count)
            .collect()
    }

    /// The filter of every table the store will hold (all `max_tables`),
    /// built outside the store.
    pub fn table_filters(&self) -> Result<Vec<AnyFilter>, Error> {
        (0..self.max_tables).map(|t| self.table_filter(t)).collect()
    }

    /// The key hashes of table `t`, as the store hashed them.
    pub fn table_hashes(&self, t: usize) -> Vec<KeyHash> {
        let mut key = Vec::new();
        (0..self.keys_per_table)
            .map(|j| {
                self.shape.write(self.number(t, j), &mut key);
                hash_key(&key)
            })
            .collect()
    }

    /// A filter of the store's kind and sizing over table `t`'s keys: the
    /// filter that table holds, built outside the store.
    pub fn table_filter(&self, t: usize) -> Result<AnyFilter, Error> {
        Ok(AnyFilter::build(self.kind, &self.table_hashes(t), self.sizing)?)
    }
}

/// Times one pass of lookups of `keys` (all absent) with the shared hash
/// (`rehash: false`) or a rehash per table; ns per lookup.
pub fn time_misses(db: &Db, keys: &[Vec<u8>], rehash: bool) -> Result<f64, Error> {
    let start = Instant::now();
    let mut found = 0usize;
    for k in keys {
        let v = if rehash {
            db.get_rehashing_per_table(std::hint::black_box(k))?
        } else {
            db.get(std::hint::black_box(k))?
        };
        found += usize::from(v.is_some());
    }
    let ns = start.elapsed().as_nanos() as f64 / keys.len() as f64;
    if found != 0 {
        return Err(format!("{found} absent keys were found").into());
    }
    Ok(ns)
}

/// Times one pass of `contains_hash` of every hash of `hashes` on every
/// filter of `filters` (the filters alone, as a miss against them would probe
/// them; owned, or the store's own behind their `Arc`s,
/// `Db::walked_filters`); ns per hash, all filters together.
pub fn time_filters<F: Borrow<AnyFilter>>(filters: &[F], hashes: &[KeyHash]) -> f64 {
    let start = Instant::now();
    let mut maybe = 0usize;
    for &h in hashes {
        let h = std::hint::black_box(h);
        for f in filters {
            maybe += usize::from(f.borrow().contains_hash(h));
        }
    }
    std::hint::black_box(maybe);
    start.elapsed().as_nanos() as f64 / hashes.len() as f64
}

/// [`time_filters`] with the hash prepared once per key ([`PreparedHash`]:
/// for blocked Bloom filters, the probe mask) and reused by every filter, as
/// the store's read path does: the floor of what the store can do per table.
pub fn time_filters_prepared<F: Borrow<AnyFilter>>(filters: &[F], hashes: &[KeyHash]) -> f64 {
    let start = Instant::now();
    let mut maybe = 0usize;
    for &h in hashes {
        let mut key = PreparedHash::new(std::hint::black_box(h));
        for f in filters {
            maybe += usize::from(f.borrow().contains_prepared(&mut key));
        }
    }
    std::hint::black_box(maybe);
    start.elapsed().as_nanos() as f64 / hashes.len() as f64
}

/// The median of `xs` (which it sorts); NaN for none.
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// The least-squares slope of `y` on `x`.
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

/// A compaction style of the reads-saved measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `CompactionStyle::default()`: 4 level-0 tables trigger a compaction,
    /// 16 MiB level 1, ratio 10, 7 levels.
    Leveled,
    /// `CompactionStyle::tiered(4)`: 4 runs per level, 7 levels.
    Tiered,
}

impl Style {
    /// Both, leveled first.
    pub const ALL: [Style; 2] = [Style::Leveled, Style::Tiered];

    /// The store's setting.
    pub fn compaction(self) -> CompactionStyle {
        match self {
            Style::Leveled => CompactionStyle::default(),
            Style::Tiered => CompactionStyle::tiered(4),
        }
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Style::Leveled => "leveled",
            Style::Tiered => "tiered",
        }
    }
}

/// Every policy of the reads-saved measurement, with a label: no filter,
/// each [`FilterKind`] a store can use (those driven by the key hash: all
/// but `ParquetBloom`) at `FilterSizing::Fpr(0.01)` (Xor and binary fuse
/// filters ignore it), and Bloom above level 2, Ribbon below.
pub fn all_policies() -> Vec<(String, FilterPolicy)> {
    let mut v = vec![("none".to_string(), FilterPolicy::none())];
    for &kind in FilterKind::ALL {
        if kind.hash_scheme() != amq::HashScheme::Xxh3Seeded {
            continue;
        }
        let label = if fixed_width(kind) {
            format!("{kind:?} (fixed)")
        } else {
            format!("{kind:?} 1%")
        };
        v.push((label, FilterPolicy::uniform(kind, FilterSizing::Fpr(0.01))));
    }
    v.push((
        "BlockedBloom L0-1, Ribbon L2+ 1%".to_string(),
        FilterPolicy::bloom_then_ribbon(0.01, 2),
    ));
    v
}

/// Whether a kind's size is set by its fingerprint width alone (it ignores
/// [`FilterSizing`]).
pub fn fixed_width(kind: FilterKind) -> bool {
    matches!(
        kind,
        FilterKind::Xor8
            | FilterKind::Xor16
            | FilterKind::BinaryFuse8
            | FilterKind::BinaryFuse16
            | FilterKind::BinaryFuse32
    )
}

/// What one load and its probes measured.
#[derive(Debug, Clone)]
pub struct LoadRow {
    /// The policy's label.
    pub policy: String,
    /// The compaction style.
    pub style: Style,
    /// Keys loaded.
    pub n: u64,
    /// Seconds the load took (writes, flushes and compactions).
    pub load_secs: f64,
    /// Tables per level, `"3+4+31"`.
    pub shape: String,
    /// Bytes of filters in memory.
    pub filter_bytes: u64,
    /// Entries in the tables.
    pub entries: u64,
    /// The counters over the miss pass.
    pub miss: Stats,
    /// The counters over the hit pass.
    pub hit: Stats,
    /// ns per miss and per hit.
    pub ns: (f64, f64),
    /// The counters of the load (writes, flushes, compactions, filter builds).
    pub load: Stats,
    /// The FPR the policy's filters predict (runs weighted equally; `None`
    /// without filters).
    pub expected_fpr: Option<f64>,
}

impl LoadRow {
    /// Filter bits per table entry.
    pub fn bits_per_key(&self) -> f64 {
        self.filter_bytes as f64 * 8.0 / self.entries.max(1) as f64
    }

    /// The measured FPR over both passes: false positives over probes of
    /// tables that did not hold the key.
    pub fn measured_fpr(&self) -> Option<f64> {
        let fp = self.miss.filter_false_positives + self.hit.filter_false_positives;
        let absent = fp + self.miss.filter_negatives + self.hit.filter_negatives;
        (absent > 0).then(|| fp as f64 / absent as f64)
    }

    /// Filter probes of tables that did not hold the key, over both passes:
    /// the sample the measured FPR comes from.
    pub fn absent_probes(&self) -> u64 {
        self.miss.filter_false_positives
            + self.hit.filter_false_positives
            + self.miss.filter_negatives
            + self.hit.filter_negatives
    }

    /// The share of flush and compaction time spent building filters.
    pub fn filter_build_share(&self) -> f64 {
        let total = self.load.flush_nanos + self.load.compaction_nanos;
        self.load.filter_build_nanos as f64 / total.max(1) as f64
    }
}

/// `after - before` of the read-path counters.
fn delta(after: &Stats, before: &Stats) -> Stats {
    let mut d = Stats::default();
    d.gets = after.gets - before.gets;
    d.key_hashes = after.key_hashes - before.key_hashes;
    d.tables_consulted = after.tables_consulted - before.tables_consulted;
    d.filter_probes = after.filter_probes - before.filter_probes;
    d.filter_negatives = after.filter_negatives - before.filter_negatives;
    d.filter_true_positives = after.filter_true_positives - before.filter_true_positives;
    d.filter_false_positives = after.filter_false_positives - before.filter_false_positives;
    d.data_blocks_read = after.data_blocks_read - before.data_blocks_read;
    d
}

/// `0..n` in a fixed pseudo-random order.
pub fn shuffled(n: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    for i in (1..order.len()).rev() {
        let j = reduce(remix(i as u64, SEED ^ 7), i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// Writes the keys of the even numbers below `2n` ([`KeyShape::Short`]) in
/// [`shuffled`] order, each with its number as an 8-byte value, in write
/// batches of 1,000, then flushes.
pub fn load_shuffled(db: &Db, n: u64) -> Result<(), Error> {
    let mut key = Vec::new();
    for chunk in shuffled(n).chunks(1000) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            KeyShape::Short.write(2 * i, &mut key);
            batch.put(&key, i.to_le_bytes());
        }
        db.write(batch)?;
    }
    db.flush()?;
    Ok(())
}

/// Loads `n` 16-byte keys (the even numbers below 2n, in a shuffled order,
/// 8-byte values, write batches of 1,000, `SyncMode::OnSync`) into a new
/// store under `policy` and `style`, flushes (no full compaction), then
/// times `probes` misses (odd numbers) and `probes` hits.
pub fn measure_load(
    label: &str,
    policy: FilterPolicy,
    style: Style,
    n: u64,
    probes: u64,
) -> Result<LoadRow, Error> {
    let dir = tempfile::tempdir()?;
    let opts = Options::default()
        .filter_policy(policy.clone())
        .compaction(style.compaction())
        .sync(SyncMode::OnSync);
    let db = Db::open(dir.path(), opts)?;
    let start = Instant::now();
    load_shuffled(&db, n)?;
    let load_secs = start.elapsed().as_secs_f64();
    let load = db.stats();

    let misses: Vec<Vec<u8>> = (0..probes)
        .map(|i| KeyShape::Short.key(2 * reduce(remix(i, SEED ^ 1), n) + 1))
        .collect();
    let hits: Vec<Vec<u8>> = (0..probes)
        .map(|i| KeyShape::Short.key(2 * reduce(remix(i, SEED ^ 2), n)))
        .collect();
    let pass = |keys: &[Vec<u8>], present: bool| -> Result<(Stats, Duration), Error> {
        let before = db.stats();
        let start = Instant::now();
        for k in keys {
            if db.get(k)?.is_some() != present {
                return Err(format!("wrong answer for {}", String::from_utf8_lossy(k)).into());
            }
        }
        let t = start.elapsed();
        Ok((delta(&db.stats(), &before), t))
    };
    let (miss, miss_t) = pass(&misses, false)?;
    let (hit, hit_t) = pass(&hits, true)?;
    let expected_fpr = expected_fpr(&policy, &load)?;
    let deepest = load.levels.iter().rposition(|l| l.tables > 0).unwrap_or(0);
    let shape = load.levels[..=deepest]
        .iter()
        .map(|l| l.tables.to_string())
        .collect::<Vec<_>>()
        .join("+");
    db.close()?;
    Ok(LoadRow {
        policy: label.to_string(),
        style,
        n,
        load_secs,
        shape,
        filter_bytes: load.filter_bytes(),
        entries: load.table_entries(),
        miss,
        hit,
        ns: (
            miss_t.as_nanos() as f64 / probes as f64,
            hit_t.as_nanos() as f64 / probes as f64,
        ),
        load,
        expected_fpr,
    })
}

/// The FPR the policy's filters predict for the tree in `s`: for each level
/// with tables, one filter of the level's kind and sizing built over a table's
/// worth of random hashes (the level's mean table size) gives
/// `expected_fpr()`; levels are weighted by their runs, since with shuffled
/// keys every run's range covers a probe and each run is consulted once.
pub fn expected_fpr(policy: &FilterPolicy, s: &Stats) -> Result<Option<f64>, Error> {
    let deepest = s.levels.iter().rposition(|l| l.tables > 0);
    let (mut sum, mut weight) = (0.0, 0.0);
    for (level, l) in s.levels.iter().enumerate() {
        if l.tables == 0 {
            continue;
        }
        let LevelFilter::Filter { kind, sizing } = policy.for_level(level, Some(level) == deepest) else {
            continue;
        };
        let keys = (l.entries / l.tables as u64).max(1);
        let hashes: Vec<KeyHash> = (0..keys)
            .map(|i| KeyHash::from_well_mixed(remix(i, SEED ^ 3)))
            .collect();
        let f = AnyFilter::build(kind, &hashes, sizing)?;
        sum += f.expected_fpr() * l.runs as f64;
        weight += l.runs as f64;
    }
    Ok((weight > 0.0).then(|| sum / weight))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_their_length_and_sort_by_number() {
        for shape in KeyShape::ALL {
            let (a, b) = (shape.key(998), shape.key(1_000));
            assert_eq!(a.len(), shape.bytes());
            assert_eq!(b.len(), shape.bytes());
            assert!(a < b);
        }
    }

    #[test]
    fn every_table_overlaps_every_miss() {
        let mut s = OverlappingStore::new(
            FilterKind::BlockedBloom,
            FilterSizing::Fpr(0.01),
            KeyShape::Long,
            50,
            4,
        )
        .unwrap();
        s.grow_to(4).unwrap();
        let filters = s.table_filters().unwrap();
        let misses = s.clean_miss_keys(200, &filters);
        let before = s.db().stats();
        time_misses(s.db(), &misses, false).unwrap();
        let mid = s.db().stats();
        assert_eq!(mid.tables_consulted - before.tables_consulted, 4 * 200);
        assert_eq!(mid.key_hashes - before.key_hashes, 200);
        assert_eq!(mid.data_blocks_read, before.data_blocks_read);
        time_misses(s.db(), &misses, true).unwrap();
        let after = s.db().stats();
        assert_eq!(after.key_hashes - mid.key_hashes, 4 * 200);
        // The filter built outside the store is the one inside it.
        let f = s.table_filter(0).unwrap();
        assert!(s.table_hashes(0).iter().all(|&h| f.contains_hash(h)));
    }

    #[test]
    fn a_small_load_reads_no_block_for_most_misses() {
        let (label, policy) = all_policies().swap_remove(2); // BlockedBloom
        let row = measure_load(&label, policy, Style::Tiered, 20_000, 2_000).unwrap();
        assert_eq!(row.miss.gets, 2_000);
        assert!(row.miss.data_blocks_read < row.miss.tables_consulted / 10);
        assert!(row.expected_fpr.is_some() && row.measured_fpr().is_some());
    }

    #[test]
    fn slope_and_median() {
        assert!((slope(&[(1.0, 3.0), (2.0, 5.0), (4.0, 9.0)]) - 2.0).abs() < 1e-12);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}

/// One store of the Monkey comparison (`lsm_report monkey`).
#[derive(Debug, Clone)]
pub struct MonkeyRow {
    /// The policy's [`FilterPolicy::describe`].
    pub policy: String,
    /// Tables per level, `+`-separated.
    pub shape: String,
    /// Filter bits per key built, over all tables.
    pub bits_per_key: f64,
    /// The model's data-block reads per missing key, over the same misses
    /// ([`Stats::predicted_reads_for`]: the expected FPRs of the tables
    /// whose ranges hold each).
    pub predicted: f64,
    /// Data blocks read per missing key, measured.
    pub measured: f64,
    /// Per level with data: `(entries, filter bits per key, predicted reads)`.
    pub levels: Vec<(u64, f64, f64)>,
}

/// The leveled tree of the Monkey comparison: size ratio 10, level 1 of
/// 1 MiB and 1 MiB memtables and tables, so that `n` 16-byte keys with
/// 8-byte values fill at least four levels from 1M keys on.
pub fn deep_leveled() -> CompactionStyle {
    CompactionStyle::Leveled(
        LeveledOptions::default()
            .l0_trigger(4)
            .base_level_bytes(1 << 20)
            .size_ratio(10)
            .max_levels(7),
    )
}

/// Loads `n` keys (shuffled, as [`measure_load`]) into a [`deep_leveled`]
/// tree under `policy`, flushes, then reads `probes` missing keys and
/// reports the data blocks they read against what the model predicts for
/// them.
pub fn measure_monkey(policy: FilterPolicy, n: u64, probes: u64) -> Result<MonkeyRow, Error> {
    let dir = tempfile::tempdir()?;
    let opts = Options::default()
        .filter_policy(policy.clone())
        .compaction(deep_leveled())
        .memtable_bytes(1 << 20)
        .table_bytes(1 << 20)
        .sync(SyncMode::OnSync);
    let db = Db::open(dir.path(), opts)?;
    load_shuffled(&db, n)?;
    let s = db.stats();
    // Misses spread over the whole key range; the prediction for them is
    // the expected FPR of every table whose range holds each (in a leveled
    // tree the deepest level often covers only part of the keys).
    let before = s.data_blocks_read;
    let mut predicted = 0.0;
    for i in 0..probes {
        let k = KeyShape::Short.key(2 * reduce(remix(i, SEED ^ 1), n) + 1);
        predicted += s.predicted_reads_for(&k);
        if db.get(&k)?.is_some() {
            return Err("a missing key was found".into());
        }
    }
    let predicted = predicted / probes as f64;
    let after = db.stats();
    let measured = (after.data_blocks_read - before) as f64 / probes as f64;
    eprintln!(
        " [per miss: tables {:.3}, probes {:.3}, false positives {:.4}, blocks {:.4}]",
        (after.tables_consulted - s.tables_consulted) as f64 / probes as f64,
        (after.filter_probes - s.filter_probes) as f64 / probes as f64,
        (after.filter_false_positives - s.filter_false_positives) as f64 / probes as f64,
        measured
    );
    let deepest = s.levels.iter().rposition(|l| l.tables > 0).unwrap_or(0);
    let row = MonkeyRow {
        policy: policy.describe(),
        shape: s.levels[..=deepest]
            .iter()
            .map(|l| l.tables.to_string())
            .collect::<Vec<_>>()
            .join("+"),
        bits_per_key: s.filter_bytes() as f64 * 8.0 / s.table_entries() as f64,
        predicted,
        measured,
        levels: s.levels[..=deepest]
            .iter()
            .map(|l| (l.entries, l.filter_bits_per_entry(), l.predicted_reads_per_miss))
            .collect(),
    };
    db.close()?;
    Ok(row)
}
