//! Prefixes in a table's filter: what the writer puts in, and how a scan
//! over one prefix, or a point read against a filter of prefixes only, asks
//! the filter.
//!
//! With `Options::prefix_extractor` set, the writer adds to the table's
//! filter, beside each key's [`amq::hash_key`] (unless
//! `Options::whole_key_filtering` is off), the [`amq::hash_prefix`] of every
//! distinct prefix the extractor takes from the table's keys. The two hashes
//! are seeded apart, so one filter holds both without a prefix ever
//! answering for a whole key equal to it. The metadata block records what
//! the filter holds (`props.rs`, filter-contents extension): the whole-key
//! flag, the extractor's identity, and the number of entries, which the
//! filter's own key count must equal.
//!
//! # Never a false negative
//!
//! A scan over prefix `p` may skip a table only when all of these hold:
//! `p` is complete for the store's extractor (every key that starts with it
//! has it as its prefix, [`amq::PrefixExtractor::is_complete`]), the table
//! recorded that very extractor's identity, its filter passed every check,
//! and the filter says no. A table written with another extractor or none,
//! or before prefixes existed, is read. Whether whole keys are in the filter
//! is recorded too, so a point read never asks a filter of prefixes only
//! for a whole key.
//!
//! A partitioned filter puts each key's prefix in the partition of that
//! key, so a prefix whose keys span several partitions is in each of them.
//! A scan over prefix `p` asks the partition holding the least key at or
//! past `p` (whatever the scan's start inside the prefix): if the table
//! holds any key with the prefix, that partition holds the first one, and so
//! the prefix. A point read with a filter of prefixes only asks the key's
//! own partition. (RocksDB once located the partition by the seek key and
//! kept a prefix in the partition of its first key only, and lost rows.)

use std::ops::Range;
use std::sync::Arc;

use amq::{hash_prefix, Filter, KeyHash, PrefixExtractor, PreparedHash};

use super::reader::FilterState;
use super::Table;
use crate::error::Result;
use crate::stats::ReadCounts;

/// The writer's record of the prefixes of a table's keys, in key order.
pub(crate) struct PrefixCollector {
    extractor: Arc<dyn PrefixExtractor>,
    /// The last key's prefix (`None`: outside the extractor's domain).
    last: Option<Vec<u8>>,
    /// Where each run of keys with one prefix starts: the index of its first
    /// key and the prefix's hash (`None` for keys outside the domain).
    runs: Vec<(usize, Option<KeyHash>)>,
    /// Runs with a prefix.
    prefix_runs: usize,
}

impl PrefixCollector {
    pub(crate) fn new(extractor: Arc<dyn PrefixExtractor>) -> Self {
        PrefixCollector {
            extractor,
            last: None,
            runs: Vec::new(),
            prefix_runs: 0,
        }
    }

    /// Prefix runs so far: about the distinct prefixes (a prefix that comes
    /// back after another counts twice).
    pub(crate) fn prefixes(&self) -> usize {
        self.prefix_runs
    }

    /// The extractor's identity, as the metadata block records it.
    pub(crate) fn id(&self) -> amq::ExtractorId {
        self.extractor.id()
    }

    /// Records key number `index` (keys come in order, numbered from 0).
    /// A prefix is hashed once per run of keys that share it.
    pub(crate) fn add(&mut self, index: usize, key: &[u8]) {
        // Anything but a prefix of the key is treated as outside the domain.
        let prefix = self.extractor.prefix(key).filter(|p| key.starts_with(p));
        if !self.runs.is_empty() && prefix == self.last.as_deref() {
            return;
        }
        self.last = prefix.map(<[u8]>::to_vec);
        self.prefix_runs += usize::from(prefix.is_some());
        self.runs.push((index, prefix.map(hash_prefix)));
    }

    /// Appends to `out` the distinct prefix hashes of keys `keys`.
    pub(crate) fn hashes_of(&self, keys: Range<usize>, out: &mut Vec<KeyHash>) {
        // The run holding the first key, then every run starting inside.
        let first = self.runs.partition_point(|r| r.0 <= keys.start).saturating_sub(1);
        let start = out.len();
        out.extend(
            self.runs[first..]
                .iter()
                .take_while(|r| r.0 < keys.end)
                .filter_map(|r| r.1),
        );
        // An extractor may give a prefix back after another (not every
        // prefix is complete): keep each once.
        out[start..].sort_unstable_by_key(|h| h.get());
        let mut distinct = start;
        for i in start..out.len() {
            if distinct == start || out[i] != out[distinct - 1] {
                out[distinct] = out[i];
                distinct += 1;
            }
        }
        out.truncate(distinct);
    }
}

/// A point read's key prefix hash, computed when the first table whose
/// filter holds prefixes only needs it, then reused for every other.
pub(crate) struct KeyPrefix<'e> {
    extractor: Option<&'e dyn PrefixExtractor>,
    hash: Option<Option<KeyHash>>,
}

impl<'e> KeyPrefix<'e> {
    pub(crate) fn new(extractor: Option<&'e dyn PrefixExtractor>) -> Self {
        KeyPrefix {
            extractor,
            hash: None,
        }
    }

    /// The hash of `key`'s prefix, `None` outside the extractor's domain.
    pub(crate) fn hash(&mut self, key: &[u8], counts: &mut ReadCounts) -> Option<KeyHash> {
        let extractor = self.extractor?;
        *self.hash.get_or_insert_with(|| {
            counts.key_hashes += 1;
            prefix_hash(extractor, key)
        })
    }
}

/// The hash of `key`'s prefix under `extractor`, as the writer computes it.
pub(crate) fn prefix_hash(extractor: &dyn PrefixExtractor, key: &[u8]) -> Option<KeyHash> {
    extractor
        .prefix(key)
        .filter(|p| key.starts_with(p))
        .map(hash_prefix)
}

impl Table {
    /// The whole filter, when it holds the store's prefixes (what the
    /// version keeps beside the table's range for prefix scans).
    pub(crate) fn prefix_filter(&self) -> Option<&Arc<amq::AnyFilter>> {
        match &self.filter {
            FilterState::Trusted(f) if self.prefixes_usable => Some(f),
            _ => None,
        }
    }

    /// The distinct prefixes the filter holds, when it holds the store's:
    /// its entries less the whole keys (partitions count a prefix whose
    /// keys span two of them twice).
    pub(crate) fn filter_prefixes(&self) -> Option<u64> {
        self.prefixes_usable.then(|| match self.contents.whole_keys {
            true => self.contents.entries.saturating_sub(self.entries()),
            false => self.contents.entries,
        })
    }

    /// Whether point reads need the key's prefix hash here: the filter
    /// holds prefixes and no whole keys.
    pub(crate) fn wants_key_prefix(&self) -> bool {
        self.prefixes_usable && !self.contents.whole_keys
    }

    /// Whether the table may hold a key starting with the complete prefix
    /// `prefix` (`hash`: its [`amq::hash_prefix`]): `Some(false)` when the
    /// filter rules it out, `Some(true)` when it may, `None` when the filter
    /// cannot say (another extractor, no usable filter, an untrusted
    /// partition).
    pub(crate) fn may_hold_prefix(
        &self,
        prefix: &[u8],
        hash: &mut PreparedHash,
        counts: &mut ReadCounts,
    ) -> Result<Option<bool>> {
        if !self.prefixes_usable {
            return Ok(None);
        }
        let f = match &self.filter {
            FilterState::Trusted(f) => return Ok(Some(f.contains_prepared(hash))),
            FilterState::Partitioned(f) => f,
            FilterState::Absent | FilterState::Untrusted(_) => return Ok(None),
        };
        // The least key at or past the prefix is in this partition: if any
        // key here starts with the prefix, that one does, and its partition
        // holds the prefix.
        match self.partition_for(f, prefix) {
            Some(i) => self.partition_answer(f, i, hash.hash(), counts),
            // Past the table's last key: no key here starts with it.
            None => Ok(Some(false)),
        }
    }

    /// A point read's filter answer from the key's prefix, for a table whose
    /// filter holds prefixes only: `None` when it cannot say (the key is
    /// outside the extractor's domain, no usable filter).
    pub(crate) fn key_prefix_answer(
        &self,
        key: &[u8],
        prefix: &mut KeyPrefix<'_>,
        counts: &mut ReadCounts,
    ) -> Result<Option<bool>> {
        if !self.wants_key_prefix() {
            return Ok(None);
        }
        let Some(hash) = prefix.hash(key, counts) else {
            return Ok(None);
        };
        match &self.filter {
            FilterState::Trusted(f) => Ok(Some(f.contains_hash(hash))),
            // The key's prefix is in the key's own partition.
            FilterState::Partitioned(f) => match self.partition_for(f, key) {
                Some(i) => self.partition_answer(f, i, hash, counts),
                None => Ok(Some(false)),
            },
            FilterState::Absent | FilterState::Untrusted(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::{CappedPrefix, DelimitedPrefix};

    fn collect(extractor: Arc<dyn PrefixExtractor>, keys: &[&str]) -> PrefixCollector {
        let mut c = PrefixCollector::new(extractor);
        for (i, k) in keys.iter().enumerate() {
            c.add(i, k.as_bytes());
        }
        c
    }

    fn hashes(c: &PrefixCollector, keys: Range<usize>) -> Vec<KeyHash> {
        let mut out = vec![KeyHash::from_well_mixed(7)];
        c.hashes_of(keys, &mut out);
        out.remove(0);
        out
    }

    fn sorted(prefixes: &[&str]) -> Vec<KeyHash> {
        let mut v: Vec<KeyHash> = prefixes.iter().map(|p| hash_prefix(p.as_bytes())).collect();
        v.sort_unstable_by_key(|h| h.get());
        v
    }

    #[test]
    fn each_range_of_keys_gets_the_distinct_prefixes_of_its_keys() {
        let keys = ["a:1", "a:2", "b:1", "none", "c:1", "c:2", "c:3"];
        let c = collect(Arc::new(DelimitedPrefix::new(b':')), &keys);
        assert_eq!(hashes(&c, 0..7), sorted(&["a:", "b:", "c:"]));
        // A range starting inside a run still gets that run's prefix.
        assert_eq!(hashes(&c, 1..3), sorted(&["a:", "b:"]));
        assert_eq!(hashes(&c, 3..4), sorted(&[]));
        assert_eq!(hashes(&c, 5..7), sorted(&["c:"]));
        // The entry before the range is left alone.
        let mut out = vec![KeyHash::from_well_mixed(1)];
        c.hashes_of(5..7, &mut out);
        assert_eq!(out[0], KeyHash::from_well_mixed(1));
    }

    #[test]
    fn a_prefix_that_comes_back_is_kept_once() {
        // A user's extractor need not give each prefix one run of keys: this
        // one takes a three-byte key whole and the first byte of any other.
        #[derive(Debug)]
        struct Odd;
        impl PrefixExtractor for Odd {
            fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
                match key.len() {
                    3 => Some(key),
                    _ => key.get(..1),
                }
            }
            fn is_complete(&self, _: &[u8]) -> bool {
                false
            }
            fn id(&self) -> amq::ExtractorId {
                amq::ExtractorId::new("test.odd", &[]).unwrap()
            }
        }
        let c = collect(Arc::new(Odd), &["a1", "a2x", "a3", "b"]);
        assert_eq!(c.runs.len(), 4);
        assert_eq!(hashes(&c, 0..4), sorted(&["a", "a2x", "b"]));
        let capped = collect(Arc::new(CappedPrefix::new(2)), &["a", "ab", "abc", "abd", "b"]);
        assert_eq!(hashes(&capped, 0..5), sorted(&["a", "ab", "b"]));
    }
}
