//! What a policy's filters did, counted where SlateDB's own metrics cannot
//! see: filters that could not be built or decoded (and so answered "may
//! contain"), and the key hashes its queries computed.
//!
//! SlateDB counts each table's filter answers itself (its metrics
//! `slatedb.db.sst_filter_positive_count`, `…_negative_count` and
//! `…_false_positive_count`, by target kind); these counters are the rest.
//! They are relaxed atomics touched once per build, decode or hashed key,
//! never per table asked.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The shared counters of one policy.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) built: AtomicU64,
    pub(crate) build_failures: AtomicU64,
    pub(crate) decoded: AtomicU64,
    pub(crate) undecodable: AtomicU64,
    pub(crate) key_hashes: AtomicU64,
}

impl Counters {
    pub(crate) fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> FilterStats {
        let g = |c: &AtomicU64| c.load(Relaxed);
        FilterStats {
            filters_built: g(&self.built),
            build_failures: g(&self.build_failures),
            filters_decoded: g(&self.decoded),
            undecodable_filters: g(&self.undecodable),
            key_hashes: g(&self.key_hashes),
        }
    }
}

/// A policy's counters, read by its `stats()`
/// ([`PointFilterPolicy::stats`](crate::PointFilterPolicy::stats) and the
/// others'). Each policy counts its own filters; a clone of a policy shares
/// its counters.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_slatedb::PointFilterPolicy;
/// let p = PointFilterPolicy::new(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01))?;
/// assert_eq!(p.stats().undecodable_filters, 0);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterStats {
    /// Filters built for new tables (flushes and compactions).
    pub filters_built: u64,
    /// Tables whose filter could not be built (an amq error such as
    /// `TooLarge`): they got an empty filter block, which every reader
    /// decodes as "may contain".
    pub build_failures: u64,
    /// Filters decoded from tables' bytes.
    pub filters_decoded: u64,
    /// Filter blocks that were not a valid filter of this policy (damaged,
    /// truncated, empty, or of a kind this build does not know): each
    /// answers "may contain" to every query, so its table is read.
    pub undecodable_filters: u64,
    /// Keys (or prefixes) hashed by queries: one per `get` and thread when
    /// the memo holds (`memo.rs`), however many tables are asked.
    pub key_hashes: u64,
}
