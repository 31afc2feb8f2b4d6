//! [`PrefixFilterPolicy`]: a filter of each table's key prefixes (and, by
//! default, its whole keys), for prefix scans, scans inside one prefix and
//! point reads.

use std::ops::Bound;
use std::sync::Arc;

use amq::{AnyFilter, Filter as _, FilterKind, FilterSizing, KeyHash, PrefixExtractor as AmqExtractor};
use slatedb::bytes::{BufMut, Bytes};
use slatedb::{Filter, FilterBuilder, FilterPolicy, FilterQuery, FilterTarget, PrefixTarget, RowEntry};

use crate::choice::FilterChoice;
use crate::fallback::MayContain;
use crate::memo;
use crate::point::build_any;
use crate::stats::{Counters, FilterStats};

/// Which prefix of a key the filter holds: one of amq's extractors
/// ([`amq::FixedPrefix`], [`amq::CappedPrefix`], [`amq::DelimitedPrefix`],
/// or your own [`amq::PrefixExtractor`]), or the SlateDB
/// [`PrefixExtractor`](slatedb::PrefixExtractor) a database already uses.
///
/// ```
/// use std::sync::Arc;
/// use amq_slatedb::Extractor;
/// let tenants = Extractor::from(amq::DelimitedPrefix::new(b':'));
/// assert!(tenants.name().starts_with("amq:"));
/// ```
#[derive(Clone)]
pub enum Extractor {
    /// An amq extractor: complete prefixes ([`amq::PrefixExtractor::is_complete`])
    /// serve prefix scans, scans that extend them and scans inside one.
    Amq(Arc<dyn AmqExtractor>),
    /// A SlateDB extractor: serves what its `prefix_len` serves.
    SlateDb(Arc<dyn slatedb::PrefixExtractor>),
}

impl std::fmt::Debug for Extractor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl<E: AmqExtractor + 'static> From<E> for Extractor {
    fn from(e: E) -> Self {
        Extractor::Amq(Arc::new(e))
    }
}

impl Extractor {
    /// A SlateDB extractor.
    pub fn slatedb(e: Arc<dyn slatedb::PrefixExtractor>) -> Self {
        Extractor::SlateDb(e)
    }

    /// The extractor's identity as the policy's name carries it: amq's
    /// [`ExtractorId`](amq::ExtractorId) in hex, or SlateDB's name.
    pub fn name(&self) -> String {
        match self {
            Extractor::Amq(e) => {
                let hex: String = e.id().as_bytes().iter().map(|b| format!("{b:02x}")).collect();
                format!("amq:{hex}")
            }
            Extractor::SlateDb(e) => format!("slatedb:{}", e.name()),
        }
    }

    /// The length of `key`'s prefix, if it has one.
    fn key_prefix_len(&self, key: &Bytes) -> Option<usize> {
        match self {
            Extractor::Amq(e) => e.prefix(key).filter(|p| key.starts_with(p)).map(<[u8]>::len),
            Extractor::SlateDb(e) => e
                .prefix_len(&PrefixTarget::Point(key.clone()))
                .filter(|&n| n <= key.len()),
        }
    }

    /// The length of the prefix a scan of the keys starting with `p` may
    /// ask the filter about: `p` itself when it is complete, or the
    /// complete prefix `p` extends; `None` when no filter can serve it.
    fn scan_prefix_len(&self, p: &Bytes) -> Option<usize> {
        match self {
            Extractor::Amq(e) => {
                let end = amq::prefix::prefix_end(p);
                let hi = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
                amq::prefix::shared_prefix(e.as_ref(), Bound::Included(p), hi)
            }
            Extractor::SlateDb(e) => e
                .prefix_len(&PrefixTarget::Prefix(p.clone()))
                .filter(|&n| n <= p.len()),
        }
    }

    /// The length of the complete prefix every key of `lo..hi` starts with
    /// (amq extractors only): the start bound's, when it is complete and
    /// the end does not pass it.
    fn range_prefix_len(&self, lo: &Bound<Bytes>, hi: &Bound<Bytes>) -> Option<usize> {
        let Extractor::Amq(e) = self else { return None };
        let (lo, hi) = (lo.as_ref().map(|k| &k[..]), hi.as_ref().map(|k| &k[..]));
        amq::prefix::shared_prefix(e.as_ref(), lo, hi)
    }
}

/// Prefix filters for SlateDB tables: each table's filter holds the
/// [`amq::hash_prefix`] of every distinct prefix of its keys and, unless
/// [`without_whole_keys`](Self::without_whole_keys), every key's
/// [`amq::hash_key`], in one amq filter of any kind (as SlateDB's own Bloom
/// policy does with an extractor). It answers:
///
/// * a prefix scan of a prefix the extractor serves (complete, or
///   extending a complete one: `"user:4"` under `DelimitedPrefix::new(b':')`
///   asks about `"user:"`); any other prefix: "may contain";
/// * a scan whose range lies inside one complete prefix (amq extractors):
///   the prefix;
/// * a point read: the whole key, or without whole keys the key's prefix.
///
/// Its name carries the extractor's identity and whether whole keys are
/// held, so a reader with another extractor never asks these filters.
///
/// ```
/// use amq::{DelimitedPrefix, FilterKind, FilterSizing};
/// use amq_slatedb::PrefixFilterPolicy;
/// use slatedb::FilterPolicy;
/// let p = PrefixFilterPolicy::new(DelimitedPrefix::new(b':'), FilterKind::BlockedBloom, FilterSizing::Fpr(0.01))?;
/// assert!(p.name().starts_with("amq.prefix.v1:") && p.name().ends_with(":wh=1"));
/// assert!(p.supports_prefix_queries() && p.supports_range_queries());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PrefixFilterPolicy {
    extractor: Extractor,
    whole_keys: bool,
    choice: FilterChoice,
    name: String,
    counters: Arc<Counters>,
}

impl PrefixFilterPolicy {
    /// Filters of `kind`, sized by `sizing` for keys and prefixes together,
    /// of `extractor`'s prefixes and the whole keys. Errors as
    /// [`FilterChoice::kind`].
    pub fn new(
        extractor: impl Into<Extractor>,
        kind: FilterKind,
        sizing: FilterSizing,
    ) -> Result<Self, amq::Error> {
        Ok(Self::with_choice(extractor, FilterChoice::kind(kind, sizing)?))
    }

    /// Filters as `choice` says.
    pub fn with_choice(extractor: impl Into<Extractor>, choice: FilterChoice) -> Self {
        let extractor = extractor.into();
        let mut p = PrefixFilterPolicy {
            extractor,
            whole_keys: true,
            choice,
            name: String::new(),
            counters: Arc::default(),
        };
        p.name = p.make_name();
        p
    }

    /// Prefixes only (a tenth of the size at ten keys per prefix): point
    /// reads then ask about the key's prefix.
    #[must_use]
    pub fn without_whole_keys(mut self) -> Self {
        self.whole_keys = false;
        self.name = self.make_name();
        self
    }

    fn make_name(&self) -> String {
        format!(
            "amq.prefix.v1:{}:wh={}",
            self.extractor.name(),
            u8::from(self.whole_keys)
        )
    }

    /// What this policy's filters did (see [`FilterStats`]).
    pub fn stats(&self) -> FilterStats {
        self.counters.snapshot()
    }

    fn filter(&self, filter: Arc<AnyFilter>, counters: Arc<Counters>) -> Arc<dyn Filter> {
        Arc::new(PrefixFilter {
            filter,
            extractor: self.extractor.clone(),
            whole_keys: self.whole_keys,
            counters,
        })
    }
}

impl FilterPolicy for PrefixFilterPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(PrefixBuilder {
            policy: self.clone(),
            hashes: Vec::new(),
            last_key: None,
            last_prefix: None,
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        match AnyFilter::from_bytes(data) {
            Ok(filter) => {
                Counters::inc(&self.counters.decoded);
                self.filter(Arc::new(filter), Arc::clone(&self.counters))
            }
            Err(_) => {
                Counters::inc(&self.counters.undecodable);
                MayContain::filter(data)
            }
        }
    }

    /// Keys and, at a guess, one prefix per ten keys.
    fn estimate_size(&self, num_keys: usize) -> usize {
        let keys = if self.whole_keys { num_keys } else { 0 };
        self.choice.estimate(keys + num_keys.div_ceil(10))
    }

    fn supports_prefix_queries(&self) -> bool {
        true
    }

    /// Scans inside one complete prefix are served (amq extractors).
    fn supports_range_queries(&self) -> bool {
        matches!(self.extractor, Extractor::Amq(_))
    }
}

/// A table's key and prefix hashes, until the table is written.
struct PrefixBuilder {
    policy: PrefixFilterPolicy,
    hashes: Vec<KeyHash>,
    last_key: Option<Bytes>,
    /// The last prefix added: keys sharing one come one after another.
    last_prefix: Option<Bytes>,
}

impl FilterBuilder for PrefixBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        let key = &entry.key;
        if self.last_key.as_ref() == Some(key) {
            return;
        }
        if self.policy.whole_keys {
            self.hashes.push(amq::hash_key(key));
        }
        if let Some(n) = self.policy.extractor.key_prefix_len(key)
            && self.last_prefix.as_deref() != Some(&key[..n])
        {
            self.hashes.push(amq::hash_prefix(&key[..n]));
            self.last_prefix = Some(key.slice(..n));
        }
        self.last_key = Some(key.clone());
    }

    fn build(&mut self) -> Arc<dyn Filter> {
        let hashes = std::mem::take(&mut self.hashes);
        (self.last_key, self.last_prefix) = (None, None);
        let policy = &self.policy;
        build_any(&policy.choice, &hashes, &policy.counters, |f, c| {
            policy.filter(f, c)
        })
    }
}

/// A table's prefix filter.
struct PrefixFilter {
    filter: Arc<AnyFilter>,
    extractor: Extractor,
    whole_keys: bool,
    counters: Arc<Counters>,
}

impl PrefixFilter {
    fn holds_prefix(&self, prefix: &[u8]) -> bool {
        memo::with_prefix_hash(
            prefix,
            || Counters::inc(&self.counters.key_hashes),
            |h| self.filter.contains_prepared(h),
        )
    }
}

impl Filter for PrefixFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        match &query.target {
            FilterTarget::Point(key) if self.whole_keys => memo::with_key_hash(
                key,
                || Counters::inc(&self.counters.key_hashes),
                |h| self.filter.contains_prepared(h),
            ),
            FilterTarget::Point(key) => match self.extractor.key_prefix_len(key) {
                Some(n) => self.holds_prefix(&key[..n]),
                None => true,
            },
            FilterTarget::Prefix(p) => match self.extractor.scan_prefix_len(p) {
                Some(n) => self.holds_prefix(&p[..n]),
                None => true,
            },
            FilterTarget::Range { lower, upper } => match self.extractor.range_prefix_len(lower, upper) {
                Some(n) => match lower {
                    Bound::Included(k) | Bound::Excluded(k) => self.holds_prefix(&k[..n]),
                    Bound::Unbounded => true,
                },
                None => true,
            },
        }
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(&self.filter.to_bytes());
    }

    fn size(&self) -> usize {
        self.filter.size_in_bytes()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(PrefixFilter {
            filter: Arc::clone(&self.filter),
            extractor: self.extractor.clone(),
            whole_keys: self.whole_keys,
            counters: Arc::clone(&self.counters),
        })
    }
}
