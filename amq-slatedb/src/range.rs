//! [`RangeFilterPolicy`]: amq's range filter over byte keys
//! ([`amq::range::KeyRangeFilter`]: a key map fitted to each table's keys
//! and a Grafite filter over their `u64`s, or an infix filter of keys that
//! differ past 64 bits) as a SlateDB filter policy.

use std::ops::Bound;
use std::sync::Arc;

use amq::range::{KeyRangeFilter, RangeSizing, ScanSample};
use slatedb::bytes::{BufMut, Bytes};
use slatedb::{Filter, FilterBuilder, FilterPolicy, FilterQuery, FilterTarget, RowEntry};

use crate::fallback::MayContain;
use crate::stats::{Counters, FilterStats};
use amq::prefix::prefix_end;

/// The name every range filter is stored under; the filter's frame carries
/// its own version and parameters (a build that does not know a version
/// reads the table as if it had no filter).
pub const RANGE_POLICY_NAME: &str = "amq.range.v1";

/// Range filters for SlateDB tables: a scan (its range as SlateDB clips it
/// to each table, any bounds) or a prefix scan (the keys starting with the
/// prefix) skips every table whose filter rules its range out, and a point
/// read asks about the one key. Keys of any shape (composite, decimal,
/// under a long shared head) keep their order through the key map, so an
/// empty range between two neighbouring keys is ruled out as often as the
/// sizing promises; a table whose keys differ past 64 bits gets an infix
/// filter ([`amq::range::InfixRange`]), which reads each key as far as its
/// neighbours need. The policy keeps the last 256 ranges its filters were
/// asked ([`fit_scans`](Self::fit_scans)), and each table it builds is
/// fitted to them ([`KeyRangeFilter::build_for_scans`]): time windows over
/// UUIDv7-like keys, which no full-resolution map can rule out, are then
/// ruled out like short ranges.
///
/// ```
/// use amq::range::RangeSizing;
/// use amq_slatedb::RangeFilterPolicy;
/// use slatedb::FilterPolicy;
/// let p = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0))?;
/// assert!(p.supports_range_queries() && p.supports_prefix_queries());
/// assert!(RangeFilterPolicy::new(RangeSizing::BitsPerKey(1.0)).is_err());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RangeFilterPolicy {
    sizing: RangeSizing,
    counters: Arc<Counters>,
    /// The latest ranges this policy's filters were asked.
    scans: Arc<ScanSample>,
}

/// Ranges a policy keeps by default.
const FIT_SCANS: usize = 256;

impl RangeFilterPolicy {
    /// Range filters sized by `sizing` (bits per key, or an FPR for ranges
    /// up to a length of the key map's integers). Errors:
    /// [`amq::Error::InvalidParameter`] outside Grafite's domain.
    pub fn new(sizing: RangeSizing) -> Result<Self, amq::Error> {
        amq::range::GrafiteRange::check_sizing(sizing)?;
        Ok(RangeFilterPolicy {
            sizing,
            counters: Arc::default(),
            scans: Arc::new(ScanSample::new(FIT_SCANS)),
        })
    }

    /// The policy keeping the last `scans` ranges (prefix and range
    /// queries) its filters are asked, to fit the tables it builds next to
    /// them (default 256; 0: every table keeps the full resolution).
    /// Kept in memory: a restarted process starts without a sample.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_slatedb::RangeFilterPolicy;
    /// let p = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0))?.fit_scans(0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use]
    pub fn fit_scans(mut self, scans: usize) -> Self {
        self.scans = Arc::new(ScanSample::new(scans));
        self
    }

    /// What this policy's filters did (see [`FilterStats`]).
    pub fn stats(&self) -> FilterStats {
        self.counters.snapshot()
    }
}

impl FilterPolicy for RangeFilterPolicy {
    fn name(&self) -> &str {
        RANGE_POLICY_NAME
    }

    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(RangeBuilder {
            policy: self.clone(),
            keys: Vec::new(),
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        match KeyRangeFilter::from_bytes(data) {
            Ok(filter) => {
                Counters::inc(&self.counters.decoded);
                Arc::new(RangeFilter {
                    filter: Arc::new(filter),
                    scans: Arc::clone(&self.scans),
                })
            }
            Err(_) => {
                Counters::inc(&self.counters.undecodable);
                MayContain::filter(data)
            }
        }
    }

    fn estimate_size(&self, num_keys: usize) -> usize {
        let bits = match self.sizing {
            RangeSizing::BitsPerKey(b) => b,
            // About `log2(ℓ/ε) + 2.3` bits (Grafite's bound).
            RangeSizing::Fpr { fpr, max_range_len } => (max_range_len as f64 / fpr).log2() + 2.5,
            _ => 16.0,
        };
        // The filter, the key map (a few bytes per varying position) and
        // the frames around them.
        (num_keys as f64 * bits / 8.0) as usize + 512
    }

    fn supports_prefix_queries(&self) -> bool {
        true
    }

    fn supports_range_queries(&self) -> bool {
        true
    }
}

/// A table's distinct keys, until the table is written.
struct RangeBuilder {
    policy: RangeFilterPolicy,
    keys: Vec<Bytes>,
}

impl FilterBuilder for RangeBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        if self.keys.last() != Some(&entry.key) {
            self.keys.push(entry.key.clone());
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let keys = std::mem::take(&mut self.keys);
        // Tables' false positives on one range are independent when their
        // seeds differ: seeded by the table's first and last keys.
        let seed = match (keys.first(), keys.last()) {
            (Some(a), Some(b)) => amq::hash_key(a).get() ^ amq::hash_key(b).get().rotate_left(17),
            _ => 0,
        };
        let counters = &self.policy.counters;
        let scans = self.policy.scans.snapshot();
        match KeyRangeFilter::build_for_scans(&keys, self.policy.sizing, seed, &scans.ranges()) {
            Ok(filter) => {
                Counters::inc(&counters.built);
                Arc::new(RangeFilter {
                    filter: Arc::new(filter),
                    scans: Arc::clone(&self.policy.scans),
                })
            }
            Err(_) => {
                Counters::inc(&counters.build_failures);
                MayContain::filter(&[])
            }
        }
    }
}

/// A table's range filter, and the sample its ranges go to.
struct RangeFilter {
    filter: Arc<KeyRangeFilter>,
    scans: Arc<ScanSample>,
}

/// A `Bound<Bytes>` as a `Bound<&[u8]>`.
fn bound(b: &Bound<Bytes>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Filter for RangeFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        match &query.target {
            FilterTarget::Point(key) => self.filter.may_contain(key),
            FilterTarget::Prefix(p) => {
                let end = prefix_end(p);
                let hi = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
                self.scans.record(Bound::Included(p), hi);
                self.filter.may_contain_range(Bound::Included(p), hi)
            }
            FilterTarget::Range { lower, upper } => {
                self.scans.record(bound(lower), bound(upper));
                self.filter.may_contain_range(bound(lower), bound(upper))
            }
        }
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(&self.filter.to_bytes());
    }

    fn size(&self) -> usize {
        self.filter.size_in_bytes()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(RangeFilter {
            filter: Arc::clone(&self.filter),
            scans: Arc::clone(&self.scans),
        })
    }
}
