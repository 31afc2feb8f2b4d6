//! [`PointFilterPolicy`]: any amq point filter as a SlateDB filter policy.

use std::sync::Arc;

use amq::plan::Priority;
use amq::{AnyFilter, Filter as _, FilterKind, FilterSizing, KeyHash};
use slatedb::bytes::{BufMut, Bytes};
use slatedb::{Filter, FilterBuilder, FilterPolicy, FilterQuery, FilterTarget, RowEntry};

use crate::choice::FilterChoice;
use crate::fallback::MayContain;
use crate::memo;
use crate::stats::{Counters, FilterStats};

/// The name every point filter is stored under. The amq frame inside names
/// its own kind, parameters and format version, so a reader with any
/// [`FilterChoice`] reads the filters of a writer with any other.
pub const POINT_POLICY_NAME: &str = "amq.point.v1";

/// Point filters of any amq kind for SlateDB tables: every entry's key goes
/// in (values, tombstones and merge operands alike, so a `get` finds a
/// tombstone that shadows an older value), and a `get` asks each table's
/// filter with one key hash, computed once per `get` however many tables
/// are asked (`memo.rs`). Prefix and range queries answer "may contain";
/// [`supports_prefix_queries`](FilterPolicy::supports_prefix_queries) is
/// `false`, so a prefix scan never fetches these filters.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_slatedb::PointFilterPolicy;
/// use slatedb::{FilterPolicy, FilterQuery, RowEntry, ValueDeletable};
///
/// let policy = PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01))?;
/// // What SlateDB does with a table's entries, and later with a `get`.
/// let mut builder = policy.builder();
/// for i in 0..1_000u32 {
///     let key = format!("key{i:05}").into_bytes().into();
///     let value = ValueDeletable::Value("v".into());
///     builder.add_entry(&RowEntry { key, value, seq: 1, create_ts: None, expire_ts: None });
/// }
/// let filter = builder.build();
/// let mut bytes = Vec::new();
/// filter.encode(&mut bytes);
/// let read = policy.decode(&bytes);
/// assert!(read.might_match(&FilterQuery::point("key00042".into())));
/// assert_eq!(policy.stats().undecodable_filters, 0);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PointFilterPolicy {
    choice: FilterChoice,
    counters: Arc<Counters>,
}

impl PointFilterPolicy {
    /// Filters of `kind`, sized by `sizing`, in every table. Errors as
    /// [`FilterChoice::kind`].
    pub fn new(kind: FilterKind, sizing: FilterSizing) -> Result<Self, amq::Error> {
        Ok(Self::with_choice(FilterChoice::kind(kind, sizing)?))
    }

    /// Each table's filter chosen by amq's planner for its key count at
    /// `fpr`: [`Priority::Space`] for the fewest bits (Ribbon from a few
    /// thousand keys), [`Priority::Speed`] for the cheapest query.
    ///
    /// ```
    /// use amq::plan::Priority;
    /// use amq_slatedb::PointFilterPolicy;
    /// assert!(PointFilterPolicy::planned(0.01, Priority::Space).is_ok());
    /// assert!(PointFilterPolicy::planned(1.5, Priority::Space).is_err());
    /// ```
    pub fn planned(fpr: f64, priority: Priority) -> Result<Self, amq::Error> {
        Ok(Self::with_choice(FilterChoice::planned(fpr, priority)?))
    }

    /// Filters as `choice` says.
    pub fn with_choice(choice: FilterChoice) -> Self {
        PointFilterPolicy {
            choice,
            counters: Arc::default(),
        }
    }

    /// What this policy's filters did (see [`FilterStats`]).
    pub fn stats(&self) -> FilterStats {
        self.counters.snapshot()
    }

    /// How it picks each table's filter.
    pub fn choice(&self) -> FilterChoice {
        self.choice
    }
}

impl FilterPolicy for PointFilterPolicy {
    fn name(&self) -> &str {
        POINT_POLICY_NAME
    }

    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(PointBuilder {
            choice: self.choice,
            counters: Arc::clone(&self.counters),
            hashes: Vec::new(),
            last: None,
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        match AnyFilter::from_bytes(data) {
            Ok(filter) => {
                Counters::inc(&self.counters.decoded);
                Arc::new(PointFilter {
                    filter: Arc::new(filter),
                    counters: Arc::clone(&self.counters),
                })
            }
            Err(_) => {
                Counters::inc(&self.counters.undecodable);
                MayContain::filter(data)
            }
        }
    }

    fn estimate_size(&self, num_keys: usize) -> usize {
        self.choice.estimate(num_keys)
    }

    fn supports_prefix_queries(&self) -> bool {
        false
    }
}

/// A table's keys' hashes, until the table is written.
struct PointBuilder {
    choice: FilterChoice,
    counters: Arc<Counters>,
    hashes: Vec<KeyHash>,
    /// The last key added: its versions come one after another.
    last: Option<Bytes>,
}

impl FilterBuilder for PointBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        if self.last.as_ref() != Some(&entry.key) {
            self.hashes.push(amq::hash_key(&entry.key));
            self.last = Some(entry.key.clone());
        }
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let hashes = std::mem::take(&mut self.hashes);
        self.last = None;
        build_any(&self.choice, &hashes, &self.counters, |filter, counters| {
            Arc::new(PointFilter { filter, counters })
        })
    }
}

/// `choice`'s filter of `hashes`, wrapped by `wrap`; an empty filter block
/// (read as "may contain") if amq cannot build it.
pub(crate) fn build_any(
    choice: &FilterChoice,
    hashes: &[KeyHash],
    counters: &Arc<Counters>,
    wrap: impl FnOnce(Arc<AnyFilter>, Arc<Counters>) -> Arc<dyn Filter>,
) -> Arc<dyn Filter> {
    match choice.build(hashes) {
        Ok(filter) => {
            Counters::inc(&counters.built);
            wrap(Arc::new(filter), Arc::clone(counters))
        }
        Err(_) => {
            Counters::inc(&counters.build_failures);
            MayContain::filter(&[])
        }
    }
}

/// A table's point filter.
struct PointFilter {
    filter: Arc<AnyFilter>,
    counters: Arc<Counters>,
}

impl Filter for PointFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        match &query.target {
            FilterTarget::Point(key) => memo::with_key_hash(
                key,
                || Counters::inc(&self.counters.key_hashes),
                |h| self.filter.contains_prepared(h),
            ),
            FilterTarget::Prefix(_) | FilterTarget::Range { .. } => true,
        }
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(&self.filter.to_bytes());
    }

    fn size(&self) -> usize {
        self.filter.size_in_bytes()
    }

    /// The filter holds no spare capacity (amq builds sized exactly): the
    /// same filter, shared.
    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(PointFilter {
            filter: Arc::clone(&self.filter),
            counters: Arc::clone(&self.counters),
        })
    }
}
