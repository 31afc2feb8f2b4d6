//! [`ValueStats`]: what value searches did and the value index's shape.

use std::sync::Mutex;

/// Counters of value searches ([`Db::find_by_value`](crate::Db::find_by_value))
/// and of the value index's upkeep, with the index's shape now.
///
/// Per search ([`ValueSearch::stats`](crate::ValueSearch)) the search counters
/// are that search's; from [`Db::value_stats`](crate::Db::value_stats) they
/// are the sums since open.
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// use amq_lsm::{Db, Options, SearchMethod, ValueIndexOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let opts = Options::default().value_index(Some(ValueIndexOptions::default()));
/// let db = Db::open(dir.path(), opts)?;
/// db.put(b"k1", b"red")?;
/// db.flush()?;
/// let s = db.find_by_value_with(b"red", SearchMethod::Leaves)?.stats;
/// assert_eq!((s.leaf_probes, s.tables_scanned, s.false_positive_tables), (1, 1, 0));
/// assert_eq!(db.value_stats().leaf_filters, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValueStats {
    /// Value searches run.
    pub searches: u64,
    /// Searches the index handed to a plain scan of every table, because its
    /// filters are too full to prune (see
    /// [`ValueIndexOptions::fallback_fpr`](crate::ValueIndexOptions::fallback_fpr)).
    pub plain_scans: u64,
    /// Internal hierarchy filters probed.
    pub internal_probes: u64,
    /// Leaf (per-table) filters probed one by one.
    pub leaf_probes: u64,
    /// Groups of 64 bit-sliced leaf filters probed (the flat variant).
    pub flat_groups_probed: u64,
    /// Tables whose data blocks were read.
    pub tables_scanned: u64,
    /// Tables scanned because their filter said "maybe", that held no
    /// matching entry.
    pub false_positive_tables: u64,
    /// Tables scanned because they have no trusted value filter (written
    /// before value filters, damaged, or of another shape or extractor).
    pub unfiltered_tables_scanned: u64,
    /// Candidate keys checked against their newest version (Algorithm 3).
    pub candidates_checked: u64,
    /// Time spent choosing the tables to scan: hashing the term and probing
    /// the filters (0 for a plain scan).
    pub index_nanos: u64,
    /// Hierarchy updates done by path update (one per leaf set change).
    pub path_updates: u64,
    /// Hierarchy updates done by rebuilding.
    pub rebuilds: u64,
    /// Time spent updating the hierarchy.
    pub hierarchy_update_nanos: u64,
    /// Time spent updating the bit-sliced filters.
    pub flat_update_nanos: u64,
    /// Tables found since open whose value filter is not trusted.
    pub untrusted_value_filters: u64,
    /// Trusted leaf filters now.
    pub leaf_filters: usize,
    /// Internal hierarchy filters now.
    pub internal_filters: usize,
    /// Levels of internal filters above the leaves now.
    pub hierarchy_height: usize,
    /// Tables without a trusted value filter now (always scanned).
    pub unfiltered_tables: usize,
    /// Bytes of the leaf filters in memory.
    pub leaf_filter_bytes: u64,
    /// Bytes of the internal filters in memory.
    pub internal_filter_bytes: u64,
}

impl ValueStats {
    /// Adds the search counters of one search.
    pub(crate) fn add_search(&mut self, s: &ValueStats) {
        self.searches += s.searches;
        self.plain_scans += s.plain_scans;
        self.internal_probes += s.internal_probes;
        self.leaf_probes += s.leaf_probes;
        self.flat_groups_probed += s.flat_groups_probed;
        self.tables_scanned += s.tables_scanned;
        self.false_positive_tables += s.false_positive_tables;
        self.unfiltered_tables_scanned += s.unfiltered_tables_scanned;
        self.candidates_checked += s.candidates_checked;
        self.index_nanos += s.index_nanos;
    }
}

/// The cumulative counters, behind one lock taken once per search or
/// index update (never per probe).
#[derive(Debug, Default)]
pub(crate) struct ValueCounters(Mutex<ValueStats>);

impl ValueCounters {
    pub(crate) fn update(&self, f: impl FnOnce(&mut ValueStats)) {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub(crate) fn get(&self) -> ValueStats {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
