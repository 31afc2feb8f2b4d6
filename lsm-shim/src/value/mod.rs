//! Value search: finding entries by a non-key value through per-table value
//! filters, combined into a Bloom filter hierarchy (Macyna & Ordonez, "A
//! Bloom Filter Hierarchy for Non-key Search in Key-Value Stores", on
//! Crainiceanu & Lemire's Bloofi) or bit-sliced (Bloofi's flat variant).
//!
//! - `crate::value_filter`: [`ValueIndexOptions`](crate::ValueIndexOptions),
//!   the shape every value filter of a tree shares, the term extractor, and
//!   the value filter block of an SSTable and when it is trusted (the part
//!   table files need, kept apart so that they do not depend on this
//!   module);
//! - `hierarchy`: the tree of OR-ed filters, path update and rebuild;
//! - `flat`: the bit-sliced filters;
//! - `index`: the writer's index following the live tables, and the
//!   snapshot readers search;
//! - `search`: choosing the tables to read and scanning them;
//! - `stats`: [`ValueStats`](crate::ValueStats).
//!
//! Exact match only: a filter answers for whole terms, so prefixes, ranges
//! and patterns are not searchable (the paper's §VI).

pub(crate) mod flat;
pub(crate) mod hierarchy;
pub(crate) mod index;
pub(crate) mod search;
pub(crate) mod stats;

use crate::memtable::Entry;

pub use crate::value_filter::options::{
    SearchMethod, TermExtractor, UpdateStrategy, ValueFilterSizing, ValueIndexOptions, WholeValue,
};
pub use stats::ValueStats;

/// The result of one value search
/// ([`Db::find_by_value_with`](crate::Db::find_by_value_with)).
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// use amq_lsm::{Db, Options, SearchMethod};
/// let dir = tempfile::tempdir().unwrap();
/// // No value index: every method is a plain scan, and says so.
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put(b"k", b"v")?;
/// db.flush()?;
/// let r = db.find_by_value_with(b"v", SearchMethod::Flat)?;
/// assert_eq!(r.entries, vec![(b"k".to_vec(), b"v".to_vec())]);
/// assert!(r.plain_scan && r.method == SearchMethod::Scan);
/// assert_eq!(r.stats.tables_scanned, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValueSearch {
    /// The live `(key, value)` entries whose value matches, in key order.
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// The method that ran (a plain scan is [`SearchMethod::Scan`]).
    pub method: SearchMethod,
    /// Whether the index chose a plain scan because its filters cannot
    /// prune, or the store has no value index.
    pub plain_scan: bool,
    /// This search's counters.
    pub stats: ValueStats,
}

/// An entry's value if it is a live value matching `q`.
pub(crate) fn live_match(e: &Entry, q: &search::Query<'_>) -> Option<Vec<u8>> {
    match e {
        Entry::Value(v) if q.matches(v) => Some(v.clone()),
        _ => None,
    }
}
