//! The table half of a value search: which tables to read (Algorithm 1
//! through the hierarchy, or the flat slices, or every leaf filter, or
//! none: a plain scan), and the scan of those tables for matching entries.
//! The memtable (Algorithm 2) and the check of each candidate against the
//! newest version of its key (Algorithm 3) are in [`Db::find_by_value_with`]
//! (crate::Db::find_by_value_with), which holds the memtable.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use amq::hash_key;

use super::hierarchy::{has_all, Probes, Slot};
use super::index::ValueSnapshot;
use super::stats::ValueStats;
use crate::error::Result;
use crate::sstable::Table;
use crate::value_filter::options::{SearchMethod, TermExtractor, ValueIndexOptions};
use crate::version::Version;

/// Probes per term are at most 30 (`StandardBloom`'s limit).
const MAX_PROBES: usize = 30;

/// What a search looks for: exact matches of `term` among the terms of
/// each value (the whole value without an extractor).
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    pub term: &'a [u8],
    pub extractor: Option<&'a dyn TermExtractor>,
}

impl Query<'_> {
    #[inline]
    pub(crate) fn matches(&self, value: &[u8]) -> bool {
        match self.extractor {
            None => value == self.term,
            Some(x) => {
                let mut hit = false;
                x.terms(value, &mut |t| hit |= t == self.term);
                hit
            }
        }
    }
}

/// The method a search runs: `requested` if given (the benchmark's forced
/// methods), else the configured one, unless its filters are too full to
/// prune, when it is a plain scan (the second value `true`). `Flat` is
/// `Leaves` where the slices are not kept (another method configured).
pub(crate) fn choose(
    opts: Option<&ValueIndexOptions>,
    snap: Option<&ValueSnapshot>,
    requested: Option<SearchMethod>,
) -> (SearchMethod, bool) {
    let (Some(opts), Some(snap)) = (opts, snap) else {
        return (
            SearchMethod::Scan,
            requested.is_none_or(|m| m != SearchMethod::Scan),
        );
    };
    let (m, plain) = match requested {
        Some(m) => (m, false),
        None if snap.mean_fpr > opts.fallback_fpr => (SearchMethod::Scan, true),
        None => (opts.method, false),
    };
    match m {
        SearchMethod::Flat if snap.flat.is_none() => (SearchMethod::Leaves, plain),
        m => (m, plain),
    }
}

/// Algorithm 1 and the table scans: the keys of every table entry whose
/// value matches, from the tables `method` cannot rule out.
pub(crate) fn in_tables(
    version: &Version,
    snap: Option<&ValueSnapshot>,
    method: SearchMethod,
    q: &Query<'_>,
    stats: &mut ValueStats,
) -> Result<BTreeSet<Vec<u8>>> {
    let mut found = BTreeSet::new();
    let snap = match (method, snap) {
        (SearchMethod::Scan, _) | (_, None) => {
            for (_, t) in version.tables() {
                stats.tables_scanned += 1;
                scan_table(t, q, &mut found)?;
            }
            return Ok(found);
        }
        (_, Some(s)) => s,
    };
    let start = Instant::now();
    let mut buf = [0u64; MAX_PROBES];
    let positions = match snap.leaves().next() {
        Some((_, leaf)) => {
            let mut n = 0;
            for (slot, p) in buf.iter_mut().zip(leaf.filter.probe_positions(hash_key(q.term))) {
                *slot = p;
                n += 1;
            }
            &buf[..n]
        }
        None => &buf[..0],
    };
    let mut maybe: Vec<Slot> = Vec::new();
    match (method, &snap.flat) {
        (SearchMethod::Flat, Some(flat)) => {
            stats.flat_groups_probed += flat.search(positions, &mut maybe);
        }
        (SearchMethod::Leaves | SearchMethod::Flat, _) => {
            for (s, leaf) in snap.leaves() {
                stats.leaf_probes += 1;
                if has_all(&leaf.filter, positions) {
                    maybe.push(s);
                }
            }
        }
        (SearchMethod::Hierarchy, _) => {
            let mut probes = Probes::default();
            snap.hierarchy.search(positions, &mut maybe, &mut probes);
            stats.internal_probes += probes.internal;
            stats.leaf_probes += probes.leaves;
        }
        (SearchMethod::Scan, _) => unreachable!("handled above"),
    }
    stats.index_nanos += start.elapsed().as_nanos() as u64;
    for s in maybe {
        let leaf = snap.slots[s as usize]
            .as_ref()
            .expect("search returns live slots");
        stats.tables_scanned += 1;
        if !scan_table(&leaf.table, q, &mut found)? {
            stats.false_positive_tables += 1;
        }
    }
    for t in &snap.unfiltered {
        stats.tables_scanned += 1;
        stats.unfiltered_tables_scanned += 1;
        scan_table(t, q, &mut found)?;
    }
    Ok(found)
}

/// Reads every data block of `t` and adds the keys of entries whose value
/// matches; whether there was one.
fn scan_table(t: &Arc<Table>, q: &Query<'_>, found: &mut BTreeSet<Vec<u8>>) -> Result<bool> {
    let mut any = false;
    t.for_each_entry(|key, value| {
        if value.is_some_and(|v| q.matches(v)) {
            any = true;
            found.insert(key.to_vec());
        }
    })?;
    Ok(any)
}
