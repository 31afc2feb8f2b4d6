//! # amq-lsm — a small durable LSM store whose SSTables carry any amq filter
//!
//! The reference integration of [`amq`] into a storage engine, and the
//! project's measurement of what each filter saves there. It is a real engine
//! in miniature: a checksummed write-ahead log, SSTables of checksummed
//! blocks, a manifest of atomic edits, leveled or tiered compaction, crash
//! recovery, and all file I/O behind one [`Env`](env::Env) trait so tests can
//! fail any write or cut the power.
//!
//! What it shows:
//! - **Any filter kind per level** ([`FilterPolicy`]): every [`amq::FilterKind`],
//!   or none, chosen per level, built through [`amq::AnyFilter::build`] and
//!   read back through [`amq::AnyFilter::from_bytes`].
//! - **One key hash per lookup**: [`Db::get`] computes [`amq::hash_key`] once,
//!   prepares it once ([`amq::PreparedHash`]: a blocked Bloom filter's probe
//!   mask), and probes the filter of every table it consults with it, reading
//!   each run's key range and filter from one array per version and asking
//!   each table's filter as it finds it (a blocked Bloom filter through its
//!   blocks, kept in that array);
//!   [`Db::multi_get`] hashes each key of a batch once and probes each table's
//!   filter once for all the keys it may hold (`contains_many`).
//! - **A filter that cannot be trusted never causes a wrong answer**: a
//!   damaged or unknown filter block makes its table fall back to "may
//!   contain" (counted in [`Stats::untrusted_filters`]), or fails `open`
//!   with [`Options::strict_filters`].
//! - **Filter memory under a cap** ([`Options::filter_partition_bytes`],
//!   [`Options::filter_cache_bytes`]): each table's filter split into
//!   partitions of whole data blocks, read on demand (probed in place through
//!   [`amq::FilterView`], or decoded into a filter cache); only a small
//!   partition index stays pinned.
//! - **Stats** ([`Db::stats`]): filter probes, negatives, false positives,
//!   data blocks read, filter bytes per level, resident filter bytes.
//! - **Value search** ([`Db::find_by_value`], with
//!   [`Options::value_index`]): a Bloom filter of each table's values,
//!   combined into a Bloom filter hierarchy or bit-sliced, so a search by a
//!   non-key value reads only the tables that may hold it
//!   (`docs/value-search.md`).
//!
//! ```
//! # fn main() -> Result<(), amq_lsm::Error> {
//! use amq::{FilterKind, FilterSizing};
//! use amq_lsm::{Db, FilterPolicy, Options};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let opts = Options::default()
//!     .filter_policy(FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01)));
//! let db = Db::open(dir.path(), opts)?;
//! for i in 0..1000u32 {
//!     db.put(format!("key{i:04}").as_bytes(), b"value")?;
//! }
//! db.flush()?;
//! assert_eq!(db.get(b"key0042")?, Some(b"value".to_vec()));
//! assert_eq!(db.get(b"key0042x")?, None); // in the table's key range, absent
//!
//! let s = db.stats();
//! // Each lookup hashed its key once and probed the table's filter with it;
//! // unless the miss was a false positive, it read no data block.
//! assert_eq!(s.key_hashes, 2);
//! assert_eq!(s.filter_probes, 2);
//! assert_eq!(s.data_blocks_read, 1 + s.filter_false_positives);
//! # Ok(()) }
//! ```
//!
//! The file formats are in `docs/lsm-format.md`; the design in
//! `docs/lsm.md`; the measured results in `docs/results-lsm.md`.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod block;
mod cache;
mod coding;
mod compaction;
mod db;
pub mod env;
mod error;
mod filenames;
mod keys;
mod log;
mod manifest;
mod memtable;
mod merge;
pub mod monkey;
mod options;
mod policy;
mod settle;
mod sstable;
mod stats;
mod value;
mod value_filter;
mod version;
mod wal;

pub use batch::WriteBatch;
pub use db::scan::Scan;
pub use db::Db;
pub use error::{Error, Result};
pub use log::Recovery;
pub use options::{CompactionStyle, LeveledOptions, Options, SyncMode, TieredOptions};
pub use policy::{FilterPolicy, LevelFilter, LevelRangeFilter, RangeFilterPolicy};
pub use stats::{LevelStats, Stats, TableStats};
pub use value::{
    SearchMethod, TermExtractor, UpdateStrategy, ValueFilterSizing, ValueIndexOptions, ValueSearch,
    ValueStats, WholeValue,
};

/// The README's examples (amq's and amq-lsm's), compiled and run as doc tests
/// here, where both crates are in scope.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    #[test]
    fn db_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<crate::Db>();
    }
}
