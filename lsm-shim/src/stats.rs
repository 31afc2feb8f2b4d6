//! [`Stats`]: what the store did, counted as it ran, so a user can see what
//! each filter saved.
//!
//! The read-path counters tell the filters' story for point lookups: of the
//! tables whose key range held a key (`tables_consulted`), how many had a
//! filter that was probed (`filter_probes`), how many reads it saved
//! (`filter_negatives`), and how many of its "maybe" answers were wrong
//! (`filter_false_positives`), so the measured false-positive rate is
//! `filter_false_positives / (filter_false_positives + filter_negatives)`.
//!
//! The scan counters tell the prefix filters' story the same way: of the
//! tables whose key range met a scan's (`scan_tables`), how many a prefix
//! filter was asked about (`prefix_probes`), how many it skipped
//! (`prefix_negatives`), how many it let through for nothing in scans of
//! one whole prefix (`prefix_false_positives`, beside those scans' skips,
//! `whole_prefix_negatives`), and the data blocks scans read; and the
//! range filters' the same way for scans with both bounds set
//! (`range_probes`, `range_negatives`, `range_false_positives`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use amq::FilterKind;

mod debug;

/// Counters updated with relaxed atomics from any thread.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub gets: AtomicU64,
    pub key_hashes: AtomicU64,
    pub tables_consulted: AtomicU64,
    pub filter_probes: AtomicU64,
    pub filter_negatives: AtomicU64,
    pub filter_true_positives: AtomicU64,
    pub filter_false_positives: AtomicU64,
    pub data_blocks_read: AtomicU64,
    pub filter_partitions_read: AtomicU64,
    pub untrusted_filter_partitions: AtomicU64,
    pub untrusted_filters: AtomicU64,
    pub writes: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub flushes: AtomicU64,
    pub compactions: AtomicU64,
    pub bytes_flushed: AtomicU64,
    pub bytes_compacted: AtomicU64,
    pub flush_nanos: AtomicU64,
    pub compaction_nanos: AtomicU64,
    pub filter_build_nanos: AtomicU64,
    pub scans: AtomicU64,
    pub scan_tables: AtomicU64,
    pub prefix_probes: AtomicU64,
    pub prefix_negatives: AtomicU64,
    pub prefix_false_positives: AtomicU64,
    pub whole_prefix_negatives: AtomicU64,
    pub prefix_scans_unfiltered: AtomicU64,
    pub range_probes: AtomicU64,
    pub range_negatives: AtomicU64,
    pub range_false_positives: AtomicU64,
    pub untrusted_range_filters: AtomicU64,
    pub range_filters_not_built: AtomicU64,
    pub scan_blocks_read: AtomicU64,
}

/// The read-path counters of one lookup, kept in plain integers while the
/// lookup walks the tables and added to the shared [`Counters`] once at its
/// end: an atomic add per table would cost more than a filter probe.
#[derive(Debug, Default)]
pub(crate) struct ReadCounts {
    pub key_hashes: u64,
    pub tables_consulted: u64,
    pub filter_probes: u64,
    pub filter_negatives: u64,
    pub filter_true_positives: u64,
    pub filter_false_positives: u64,
    pub data_blocks_read: u64,
    pub filter_partitions_read: u64,
    pub untrusted_filter_partitions: u64,
}

impl Counters {
    /// Adds one lookup's counts (the non-zero ones).
    pub(crate) fn add_reads(&self, r: &ReadCounts) {
        for (c, n) in [
            (&self.key_hashes, r.key_hashes),
            (&self.tables_consulted, r.tables_consulted),
            (&self.filter_probes, r.filter_probes),
            (&self.filter_negatives, r.filter_negatives),
            (&self.filter_true_positives, r.filter_true_positives),
            (&self.filter_false_positives, r.filter_false_positives),
            (&self.data_blocks_read, r.data_blocks_read),
            (&self.filter_partitions_read, r.filter_partitions_read),
            (&self.untrusted_filter_partitions, r.untrusted_filter_partitions),
        ] {
            if n != 0 {
                add(c, n);
            }
        }
    }
}

/// Adds `n` to a counter.
pub(crate) fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

/// Adds one to a counter.
pub(crate) fn inc(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// One level of the tree, as [`Db::stats`](crate::Db::stats) found it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct LevelStats {
    /// Sorted runs (1 per level below L0 with leveled compaction).
    pub runs: usize,
    /// Tables.
    pub tables: usize,
    /// Entries (values and tombstones).
    pub entries: u64,
    /// Bytes of the table files.
    pub file_bytes: u64,
    /// Bytes of the tables' usable filters (whole, or all partitions of a
    /// partitioned one).
    pub filter_bytes: u64,
    /// Bytes of filter pinned in memory: whole filters, and the partition
    /// indexes of partitioned ones (their partitions are counted in
    /// [`Stats::filter_cache_bytes`] while cached).
    pub pinned_filter_bytes: u64,
    /// Tables whose filter block was not trusted and is not used.
    pub untrusted_filters: usize,
    /// Bytes of the tables' trusted range filters, all pinned in memory.
    pub range_filter_bytes: u64,
    /// Tables whose range filter block was not trusted and is not used.
    pub untrusted_range_filters: usize,
    /// Tables with a trusted range filter whose key map is not exact (their
    /// keys differ in more than 64 bits, or the map was coarsened): some of
    /// their keys share a range filter `u64`.
    pub range_tables_collapsing: usize,
    /// Of those tables' distinct keys, how many share their `u64` with
    /// another: each such pair answers every range for both, a false
    /// positive for a range between them.
    pub range_keys_collapsed: u64,
    /// Tables whose range filter's key map was coarsened to fit the store's
    /// latest scans ([`Options::range_fit_scans`](crate::Options::range_fit_scans)):
    /// it drops low bits of the keys' codes, so wide empty ranges like
    /// those scans are ruled out and ranges just past a key are not.
    pub range_tables_coarsened: usize,
    /// Tables whose range filter is an infix filter of their keys
    /// ([`amq::range::InfixRange`]): their keys differ past 64 bits (an
    /// e-mail address, a UUIDv7's random tail, two random ids), so the
    /// filter reads each key as far as its neighbours need, and a range
    /// inside a gap is ruled out whatever its width. Ranges right beside a
    /// key pass it.
    pub range_tables_infix: usize,
    /// Tables whose filter holds the prefixes of the store's extractor
    /// (and is trusted).
    pub prefix_tables: usize,
    /// The distinct prefixes those tables' filters hold, summed: about one
    /// per table when the extractor gives every key of a table the same
    /// prefix ([`Stats::prefixes_per_table`]).
    pub prefixes: u64,
    /// Filter kinds present on this level (`None` for tables without one).
    pub filter_kinds: Vec<Option<FilterKind>>,
    /// The model's expected data-block reads per missing key at this level
    /// (Monkey's `r_i · p_i`, [`crate::monkey`]): per run, the FPR its
    /// filters expect ([`amq::Filter::expected_fpr`]; 1 for a table without
    /// a usable filter), weighted by each table's share of the run's
    /// entries, summed over the runs. Assumes the key falls inside every
    /// run's key range ([`table_stats`](Self::table_stats) has each table's,
    /// for a prediction over given keys).
    pub predicted_reads_per_miss: f64,
    /// Every table of the level: its run, key range, entries and filter
    /// FPR.
    pub table_stats: Vec<TableStats>,
}

/// One table, as [`Db::stats`](crate::Db::stats) found it. `{:?}` prints
/// its keys as escaped byte strings (`b"user:42\x00"`).
#[derive(Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TableStats {
    /// Index of its run in the level, newest first.
    pub run: usize,
    /// Smallest key.
    pub smallest: Vec<u8>,
    /// Largest key.
    pub largest: Vec<u8>,
    /// Entries.
    pub entries: u64,
    /// Its filter's [`expected_fpr`](amq::Filter::expected_fpr); 1 without
    /// a usable filter: the chance a missing key in its range reads a data
    /// block.
    pub expected_fpr: f64,
}

impl Stats {
    /// The model's expected data-block reads for a missing `key`: the
    /// expected FPR of every table whose range holds it (Monkey's `Σ p`,
    /// without assuming every run covers the key).
    pub fn predicted_reads_for(&self, key: &[u8]) -> f64 {
        self.levels
            .iter()
            .flat_map(|l| &l.table_stats)
            .filter(|t| t.smallest.as_slice() <= key && key <= t.largest.as_slice())
            .map(|t| t.expected_fpr)
            .sum()
    }
}

impl Stats {
    /// The model's expected data-block reads per missing key over the whole
    /// tree: [`LevelStats::predicted_reads_per_miss`] summed over the levels.
    /// Compare with `data_blocks_read / gets` measured over missing keys.
    pub fn predicted_reads_per_miss(&self) -> f64 {
        self.levels.iter().map(|l| l.predicted_reads_per_miss).sum()
    }
}

impl LevelStats {
    /// Filter bits per entry on this level.
    pub fn filter_bits_per_entry(&self) -> f64 {
        if self.entries == 0 {
            return 0.0;
        }
        self.filter_bytes as f64 * 8.0 / self.entries as f64
    }
}

/// A snapshot of the store's counters and shape.
///
/// `{}` prints a readable table of it: a line each for the reads, the
/// filters, the scans, the writes, the caches and every level. `{:#?}`
/// prints every field, one a line, with the tables' keys as escaped byte
/// strings (`smallest: b"user:42\x00"`).
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// use amq_lsm::{Db, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put(b"k", b"v")?;
/// db.get(b"k")?; // found in the memtable: no hash needed
/// db.flush()?;
/// db.get(b"k")?; // hashed once, found in the table
/// let s = db.stats();
/// assert_eq!(s.gets, 2);
/// assert_eq!(s.key_hashes, 1);
/// assert_eq!(s.filter_true_positives, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Point lookups (`get`, and each key of `multi_get`).
    pub gets: u64,
    /// Key hashes computed on the read path: one per lookup.
    pub key_hashes: u64,
    /// Tables whose key range held a looked-up key.
    pub tables_consulted: u64,
    /// Filter probes (consulted tables with a trusted filter).
    pub filter_probes: u64,
    /// Probes that answered "absent": data block reads saved.
    pub filter_negatives: u64,
    /// Probes that answered "maybe" and the table held the key.
    pub filter_true_positives: u64,
    /// Probes that answered "maybe" and the table did not hold the key.
    pub filter_false_positives: u64,
    /// Data blocks read by point lookups.
    pub data_blocks_read: u64,
    /// Table filters found damaged, of an unknown kind or undecodable since
    /// open (each such table is read without its filter).
    pub untrusted_filters: u64,
    /// Write batches applied (each `put` and `delete` is one).
    pub writes: u64,
    /// WAL syncs.
    pub wal_syncs: u64,
    /// Memtable flushes.
    pub flushes: u64,
    /// Compactions run.
    pub compactions: u64,
    /// Table bytes written by flushes.
    pub bytes_flushed: u64,
    /// Table bytes written by compactions.
    pub bytes_compacted: u64,
    /// Time spent in flushes, filter building included.
    pub flush_nanos: u64,
    /// Time spent in compactions, filter building included.
    pub compaction_nanos: u64,
    /// Time spent building filters (in flushes and compactions).
    pub filter_build_nanos: u64,
    /// Scans started ([`Db::scan`](crate::Db::scan),
    /// [`Db::scan_prefix`](crate::Db::scan_prefix), [`Db::iter`](crate::Db::iter))
    /// that were advanced at least once.
    pub scans: u64,
    /// Tables whose key range met a scan's range.
    pub scan_tables: u64,
    /// Of those, tables whose filter was asked about the scan's prefix (a
    /// scan over one complete prefix, a filter with the store's extractor).
    pub prefix_probes: u64,
    /// Prefix probes that answered "absent": tables the scan skipped.
    pub prefix_negatives: u64,
    /// Prefix probes of scans over one whole complete prefix
    /// ([`Db::scan_prefix`](crate::Db::scan_prefix) of a complete prefix,
    /// or a scan of exactly its range) that answered "maybe" where the
    /// table held no key with the prefix (counted when the scan reaches the
    /// table). A scan of a narrower range inside a prefix is not counted:
    /// a table with no key in that range may still hold the prefix.
    pub prefix_false_positives: u64,
    /// Of the prefix negatives, those of scans over one whole complete
    /// prefix: with [`prefix_false_positives`](Self::prefix_false_positives),
    /// the probes for prefixes a table did not hold whose answers are known.
    pub whole_prefix_negatives: u64,
    /// [`Db::scan_prefix`](crate::Db::scan_prefix) calls, with a
    /// [`prefix_extractor`](crate::Options::prefix_extractor()) set, whose
    /// prefix no filter could serve: neither complete for the extractor nor
    /// an extension of a complete one (`"user"` where the extractor cuts
    /// after `':'`). Each read every table its range met; more than a few
    /// means the prefixes asked for and the extractor disagree.
    pub prefix_scans_unfiltered: u64,
    /// Of the tables whose key range met a bounded scan's range (and that
    /// no prefix filter ruled out), those whose range filter was asked.
    pub range_probes: u64,
    /// Range probes that answered "no key in the range": tables the scan
    /// skipped.
    pub range_negatives: u64,
    /// Range probes that answered "maybe" where the table held no key in
    /// the scan's range (counted when the scan reaches the table).
    pub range_false_positives: u64,
    /// Table range filters found damaged, of an unknown kind or key map, or
    /// undecodable since open (each such table is read by every scan that
    /// meets it).
    pub untrusted_range_filters: u64,
    /// Tables written without the range filter their level's policy asks
    /// for, since the store opened, because the filter could not be built
    /// at their key count (a [`RangeSizing::Fpr`](amq::range::RangeSizing::Fpr)
    /// whose `keys × max_range_len / fpr` passes the filter's `2^62`
    /// universe). Writes go on; scans read such tables. Non-zero means the
    /// sizing asks for more than large tables can have: a larger `fpr` or
    /// a shorter `max_range_len`, or `BitsPerKey`, which always builds.
    pub range_filters_not_built: u64,
    /// Data blocks read by scans.
    pub scan_blocks_read: u64,
    /// Entries in the memtable.
    pub memtable_entries: usize,
    /// Point reads' data blocks served by the block cache
    /// (`Options::block_cache_bytes`; 0 without one).
    pub block_cache_hits: u64,
    /// Point reads' data blocks the block cache did not hold (read from
    /// their files, then cached).
    pub block_cache_misses: u64,
    /// Bytes of data blocks in the block cache.
    pub block_cache_bytes: u64,
    /// Lookups of a partitioned filter's partition in the filter cache
    /// (`Options::filter_cache_bytes`) that found it.
    pub filter_cache_hits: u64,
    /// Lookups of a partition the filter cache did not hold.
    pub filter_cache_misses: u64,
    /// Bytes of filter partitions in the filter cache.
    pub filter_cache_bytes: u64,
    /// Filter partitions read from table files (each filter cache miss, or
    /// every partition probe without a filter cache).
    pub filter_partitions_read: u64,
    /// Filter partitions read that failed a check (their keys were treated
    /// as "may be present").
    pub untrusted_filter_partitions: u64,
    /// The tree, level by level from level 0.
    pub levels: Vec<LevelStats>,
}

impl Stats {
    /// Total bytes of the tables' filters (whole, or all partitions of a
    /// partitioned one).
    pub fn filter_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.filter_bytes).sum()
    }

    /// Bytes of filter held in memory now: whole filters, partition indexes
    /// and range filters (pinned), and the partitions in the filter cache.
    pub fn resident_filter_bytes(&self) -> u64 {
        self.levels
            .iter()
            .map(|l| l.pinned_filter_bytes + l.range_filter_bytes)
            .sum::<u64>()
            + self.filter_cache_bytes
    }

    /// Total bytes of the tables' range filters (all pinned in memory).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{Db, Options, RangeFilterPolicy};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default().range_filter_policy(RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)));
    /// let db = Db::open(dir.path(), opts)?;
    /// for i in 0..1000 {
    ///     db.put(format!("k{i:04}"), "")?;
    /// }
    /// db.flush()?;
    /// let bits_per_key = db.stats().range_filter_bytes() as f64 * 8.0 / 1000.0;
    /// assert!((15.0..19.0).contains(&bits_per_key), "{bits_per_key}");
    /// # Ok(()) }
    /// ```
    pub fn range_filter_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.range_filter_bytes).sum()
    }

    /// The measured false-positive rate of the range filters: false
    /// positives over probes for ranges a table held no key in.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// let s = db.stats();
    /// assert_eq!(s.measured_range_fpr(), 0.0); // no range filter asked yet
    /// assert_eq!(s.range_filter_bytes(), 0);
    /// # Ok(()) }
    /// ```
    pub fn measured_range_fpr(&self) -> f64 {
        false_positive_rate(self.range_false_positives, self.range_negatives)
    }

    /// Entries in all tables.
    pub fn table_entries(&self) -> u64 {
        self.levels.iter().map(|l| l.entries).sum()
    }

    /// The measured false-positive rate of the prefix filters: false
    /// positives over probes for prefixes a table did not hold, in scans
    /// over one whole prefix (`prefix_false_positives` over
    /// `prefix_false_positives + whole_prefix_negatives`); 0 before any.
    pub fn measured_prefix_fpr(&self) -> f64 {
        false_positive_rate(self.prefix_false_positives, self.whole_prefix_negatives)
    }

    /// Distinct prefixes per table, over the tables whose filters hold the
    /// store's prefixes (`None` without such tables). About 1 means each
    /// table's keys share one prefix: a prefix scan can skip only the
    /// tables of other prefixes, and none at all when every key has the
    /// same prefix (an extractor that cuts too early, `DelimitedPrefix::new(b':')`
    /// on `order:{customer}:{id}` keys: `DelimitedPrefix::nth(b':', 2)` cuts
    /// after the customer).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = amq_lsm::Options::default().prefix_extractor(amq::DelimitedPrefix::new(b':'));
    /// let db = amq_lsm::Db::open(dir.path(), opts)?;
    /// for i in 0..100 {
    ///     db.put(format!("order:{:04}:{i}", i % 10), "")?;
    /// }
    /// db.flush()?;
    /// assert_eq!(db.stats().prefixes_per_table(), Some(1.0)); // "order:" only
    /// # Ok(()) }
    /// ```
    pub fn prefixes_per_table(&self) -> Option<f64> {
        let (tables, prefixes) = self
            .levels
            .iter()
            .fold((0, 0), |(t, p), l| (t + l.prefix_tables, p + l.prefixes));
        (tables > 0).then(|| prefixes as f64 / tables as f64)
    }

    /// The measured false-positive rate of the filters: false positives over
    /// probes for keys a table did not hold.
    pub fn measured_fpr(&self) -> f64 {
        false_positive_rate(self.filter_false_positives, self.filter_negatives)
    }
}

/// `false_positives` over the probes of what was absent (false positives
/// and negatives); 0 before any.
fn false_positive_rate(false_positives: u64, negatives: u64) -> f64 {
    match false_positives + negatives {
        0 => 0.0,
        absent => false_positives as f64 / absent as f64,
    }
}

/// A compact, human-readable summary over a few lines: the reads and what
/// the filters saved, the writes, the caches (when there are any), then one
/// line per level that holds tables.
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// use amq_lsm::{Db, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put("k", "v")?;
/// db.flush()?;
/// db.get("k")?;
/// let text = db.stats().to_string();
/// assert!(text.starts_with("reads: 1 gets, 1 key hashes"), "{text}");
/// assert!(text.contains("L0: 1 runs, 1 tables, 1 entries"), "{text}");
/// # Ok(()) }
/// ```
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |nanos: u64| nanos as f64 / 1e6;
        writeln!(
            f,
            "reads: {} gets, {} key hashes, {} tables consulted, {} data blocks read",
            self.gets, self.key_hashes, self.tables_consulted, self.data_blocks_read
        )?;
        writeln!(
            f,
            "filters: {} probes, {} negatives, {} true and {} false positives (measured FPR {:.3}%), {} untrusted",
            self.filter_probes,
            self.filter_negatives,
            self.filter_true_positives,
            self.filter_false_positives,
            self.measured_fpr() * 100.0,
            self.untrusted_filters
        )?;
        if self.scans + self.prefix_scans_unfiltered > 0 {
            write!(
                f,
                "scans: {} scans, {} tables met, {} prefix probes, {} tables skipped, {} prefix false positives (measured FPR {:.3}%), {} data blocks read",
                self.scans,
                self.scan_tables,
                self.prefix_probes,
                self.prefix_negatives,
                self.prefix_false_positives,
                self.measured_prefix_fpr() * 100.0,
                self.scan_blocks_read
            )?;
            if self.prefix_scans_unfiltered > 0 {
                write!(
                    f,
                    "; {} prefix scans unfiltered (prefix not complete for the extractor)",
                    self.prefix_scans_unfiltered
                )?;
            }
            writeln!(f)?;
        }
        if let Some(per_table) = self.prefixes_per_table() {
            let tables: usize = self.levels.iter().map(|l| l.prefix_tables).sum();
            write!(
                f,
                "prefix filters: {tables} tables, {per_table:.1} distinct prefixes per table"
            )?;
            if per_table < 1.5 {
                write!(
                    f,
                    " (one prefix per table: scans skip only the tables of other prefixes; does the extractor cut every key to the same prefix?)"
                )?;
            }
            writeln!(f)?;
        }
        let (collapsing, collapsed) = self.levels.iter().fold((0, 0), |(t, k), l| {
            (t + l.range_tables_collapsing, k + l.range_keys_collapsed)
        });
        let coarsened: usize = self.levels.iter().map(|l| l.range_tables_coarsened).sum();
        let infix: usize = self.levels.iter().map(|l| l.range_tables_infix).sum();
        if self.range_probes + self.untrusted_range_filters + self.range_filters_not_built > 0
            || collapsing > 0
            || coarsened > 0
            || infix > 0
        {
            write!(
                f,
                "range filters: {} probes, {} tables skipped, {} false positives (measured FPR {:.3}%), {} untrusted, {} not built",
                self.range_probes,
                self.range_negatives,
                self.range_false_positives,
                self.measured_range_fpr() * 100.0,
                self.untrusted_range_filters,
                self.range_filters_not_built
            )?;
            if collapsing > 0 {
                write!(f, "; {collapsed} keys share a u64 with another in {collapsing} tables (keys past 64 bits of differences, or coarsened)")?;
            }
            if coarsened > 0 {
                write!(f, "; {coarsened} tables fitted to the latest scans")?;
            }
            if infix > 0 {
                write!(f, "; {infix} tables of keys past 64 bits with infix filters")?;
            }
            writeln!(f)?;
        }
        writeln!(
            f,
            "writes: {} batches, {} WAL syncs, {} memtable entries; {} flushes ({} bytes, {:.1} ms), {} compactions ({} bytes, {:.1} ms), filter building {:.1} ms",
            self.writes,
            self.wal_syncs,
            self.memtable_entries,
            self.flushes,
            self.bytes_flushed,
            ms(self.flush_nanos),
            self.compactions,
            self.bytes_compacted,
            ms(self.compaction_nanos),
            ms(self.filter_build_nanos)
        )?;
        if self.block_cache_hits + self.block_cache_misses + self.block_cache_bytes > 0 {
            writeln!(
                f,
                "block cache: {} hits, {} misses, {} bytes",
                self.block_cache_hits, self.block_cache_misses, self.block_cache_bytes
            )?;
        }
        if self.filter_cache_hits + self.filter_cache_misses + self.filter_partitions_read > 0 {
            writeln!(
                f,
                "filter partitions: {} cache hits, {} misses, {} bytes cached, {} read, {} untrusted",
                self.filter_cache_hits,
                self.filter_cache_misses,
                self.filter_cache_bytes,
                self.filter_partitions_read,
                self.untrusted_filter_partitions
            )?;
        }
        write!(
            f,
            "tree: {} entries in tables, {} filter bytes ({} resident), predicted {:.4} data-block reads per miss",
            self.table_entries(),
            self.filter_bytes(),
            self.resident_filter_bytes(),
            self.predicted_reads_per_miss()
        )?;
        for (n, l) in self.levels.iter().enumerate().filter(|(_, l)| l.tables > 0) {
            let kinds: Vec<String> = l
                .filter_kinds
                .iter()
                .map(|k| k.map_or_else(|| "none".to_string(), |k| format!("{k:?}")))
                .collect();
            write!(
                f,
                "\n  L{n}: {} runs, {} tables, {} entries, {} file bytes, filters {} ({:.1} bits/entry)",
                l.runs,
                l.tables,
                l.entries,
                l.file_bytes,
                kinds.join("+"),
                l.filter_bits_per_entry()
            )?;
            if l.untrusted_filters > 0 {
                write!(f, ", {} untrusted", l.untrusted_filters)?;
            }
        }
        Ok(())
    }
}

impl Counters {
    pub(crate) fn snapshot(&self) -> Stats {
        let g = |c: &AtomicU64| c.load(Relaxed);
        Stats {
            gets: g(&self.gets),
            key_hashes: g(&self.key_hashes),
            tables_consulted: g(&self.tables_consulted),
            filter_probes: g(&self.filter_probes),
            filter_negatives: g(&self.filter_negatives),
            filter_true_positives: g(&self.filter_true_positives),
            filter_false_positives: g(&self.filter_false_positives),
            data_blocks_read: g(&self.data_blocks_read),
            untrusted_filters: g(&self.untrusted_filters),
            writes: g(&self.writes),
            wal_syncs: g(&self.wal_syncs),
            flushes: g(&self.flushes),
            compactions: g(&self.compactions),
            bytes_flushed: g(&self.bytes_flushed),
            bytes_compacted: g(&self.bytes_compacted),
            flush_nanos: g(&self.flush_nanos),
            compaction_nanos: g(&self.compaction_nanos),
            filter_build_nanos: g(&self.filter_build_nanos),
            scans: g(&self.scans),
            scan_tables: g(&self.scan_tables),
            prefix_probes: g(&self.prefix_probes),
            prefix_negatives: g(&self.prefix_negatives),
            prefix_false_positives: g(&self.prefix_false_positives),
            whole_prefix_negatives: g(&self.whole_prefix_negatives),
            prefix_scans_unfiltered: g(&self.prefix_scans_unfiltered),
            range_probes: g(&self.range_probes),
            range_negatives: g(&self.range_negatives),
            range_false_positives: g(&self.range_false_positives),
            untrusted_range_filters: g(&self.untrusted_range_filters),
            range_filters_not_built: g(&self.range_filters_not_built),
            scan_blocks_read: g(&self.scan_blocks_read),
            memtable_entries: 0,
            block_cache_hits: 0,
            block_cache_misses: 0,
            block_cache_bytes: 0,
            filter_cache_hits: 0,
            filter_cache_misses: 0,
            filter_cache_bytes: 0,
            filter_partitions_read: g(&self.filter_partitions_read),
            untrusted_filter_partitions: g(&self.untrusted_filter_partitions),
            levels: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_summarises_reads_filters_writes_caches_and_levels() {
        let level = |tables, kinds: Vec<Option<FilterKind>>| LevelStats {
            runs: 1,
            tables,
            entries: 1_000 * tables as u64,
            file_bytes: 50_000,
            filter_bytes: 1_250 * tables as u64,
            pinned_filter_bytes: 1_250 * tables as u64,
            untrusted_filters: usize::from(kinds.contains(&None)),
            filter_kinds: kinds,
            ..LevelStats::default()
        };
        let s = Stats {
            gets: 10,
            key_hashes: 9,
            tables_consulted: 20,
            filter_probes: 18,
            filter_negatives: 15,
            filter_true_positives: 2,
            filter_false_positives: 1,
            data_blocks_read: 3,
            writes: 7,
            block_cache_hits: 4,
            block_cache_misses: 5,
            levels: vec![
                level(2, vec![Some(FilterKind::BlockedBloom)]),
                LevelStats::default(),
                level(1, vec![Some(FilterKind::Ribbon), None]),
            ],
            ..Stats::default()
        };
        let text = s.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "reads: 10 gets, 9 key hashes, 20 tables consulted, 3 data blocks read"
        );
        assert!(
            lines[1].starts_with(
                "filters: 18 probes, 15 negatives, 2 true and 1 false positives (measured FPR 6.250%)"
            ),
            "{text}"
        );
        assert!(lines[2].starts_with("writes: 7 batches"), "{text}");
        assert_eq!(lines[3], "block cache: 4 hits, 5 misses, 0 bytes");
        assert!(
            lines[4].starts_with("tree: 3000 entries in tables, 3750 filter bytes (3750 resident)"),
            "{text}"
        );
        // Empty levels are left out; each other one has its line.
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[5].starts_with("  L0: 1 runs, 2 tables, 2000 entries, 50000 file bytes, filters BlockedBloom (10.0 bits/entry)"), "{text}");
        assert!(
            lines[6].starts_with("  L2: 1 runs, 1 tables")
                && lines[6].ends_with("filters Ribbon+none (10.0 bits/entry), 1 untrusted"),
            "{text}"
        );
        // Without caches or scans, no cache or scan lines.
        let plain = Stats::default().to_string();
        assert_eq!(plain.lines().count(), 4, "{plain}");
        let scanned = Stats {
            scans: 2,
            scan_tables: 40,
            prefix_probes: 40,
            prefix_negatives: 38,
            prefix_false_positives: 1,
            whole_prefix_negatives: 38,
            scan_blocks_read: 3,
            ..Stats::default()
        }
        .to_string();
        assert_eq!(
            scanned.lines().nth(2),
            Some("scans: 2 scans, 40 tables met, 40 prefix probes, 38 tables skipped, 1 prefix false positives (measured FPR 2.564%), 3 data blocks read"),
            "{scanned}"
        );
        assert_eq!(scanned.lines().count(), 5, "{scanned}");
        let unfiltered = Stats {
            scans: 1,
            prefix_scans_unfiltered: 1,
            ..Stats::default()
        }
        .to_string();
        assert!(
            unfiltered
                .lines()
                .nth(2)
                .is_some_and(|l| l.starts_with("scans: 1 scans")
                    && l.ends_with("; 1 prefix scans unfiltered (prefix not complete for the extractor)")),
            "{unfiltered}"
        );
        let ranged = Stats {
            scans: 1,
            range_probes: 10,
            range_negatives: 8,
            range_false_positives: 2,
            ..Stats::default()
        }
        .to_string();
        assert_eq!(
            ranged.lines().nth(3),
            Some("range filters: 10 probes, 8 tables skipped, 2 false positives (measured FPR 20.000%), 0 untrusted, 0 not built"),
            "{ranged}"
        );
    }
}
