//! Point reads: [`Db::get`] and [`Db::multi_get`], and the walk through the
//! tables that hash a key once and ask each table's filter with it.

use amq::{hash_key, KeyHash, PrefixExtractor, PreparedHash};

use super::Db;
use crate::error::Result;
use crate::memtable::Entry;
use crate::settle::{settle_blocked, FilterSettles, SettleFilter};
use crate::sstable::{prefix_hash, KeyPrefix};
use crate::stats::{add, inc, ReadCounts};
use crate::version::{ProbeKey, Version};

impl Db {
    /// The value of `key`, or `None` if it was never set or was deleted.
    ///
    /// The key is hashed once ([`amq::hash_key`]), when the first table is
    /// consulted (a memtable hit needs no hash), and that hash is handed to
    /// the filter of every table consulted: the memtable, then level 0
    /// newest to oldest, then per deeper run the one table whose key range
    /// holds the key. Per table: key range, filter, index, data block.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// assert_eq!(db.get("k")?, Some(b"v".to_vec()));
    /// assert_eq!(db.get(b"absent")?, None);
    /// # Ok(()) }
    /// ```
    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        inc(&self.stats.gets);
        let version = {
            let r = self.read_state();
            if let Some(e) = r.mem.get(key) {
                return Ok(e.clone().into_value());
            }
            r.version.clone()
        };
        let mut counts = ReadCounts::default();
        let found = lookup_tables(&version, key, self.opts.prefix_extractor.as_deref(), &mut counts);
        self.stats.add_reads(&counts);
        Ok(found?.and_then(Entry::into_value))
    }

    /// The values of many keys, in input order (duplicates allowed): what
    /// `get` would answer for each, found with less work per key.
    ///
    /// Every key is hashed once. After the memtable, each run is visited
    /// once for the whole batch: the keys still unanswered are grouped by the
    /// table of the run whose range holds them, each table's filter is probed
    /// for its group in one batch (`contains_many`, which prefetches every
    /// line before probing), and each data block the survivors need is read
    /// once for all of them.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// db.flush()?;
    /// let got = db.multi_get(&[&b"b"[..], b"x", b"a", b"b"])?;
    /// assert_eq!(got, vec![Some(b"2".to_vec()), None, Some(b"1".to_vec()), Some(b"2".to_vec())]);
    /// # Ok(()) }
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        add(&self.stats.gets, keys.len() as u64);
        let mut results: Vec<Option<Entry>> = vec![None; keys.len()];
        let version = {
            let r = self.read_state();
            for (res, k) in results.iter_mut().zip(keys) {
                *res = r.mem.get(k.as_ref()).cloned();
            }
            r.version.clone()
        };
        let mut pending: Vec<usize> = (0..keys.len()).filter(|&i| results[i].is_none()).collect();
        let mut counts = ReadCounts::default();
        let mut hashes = vec![KeyHash::from_well_mixed(0); keys.len()];
        for &i in &pending {
            hashes[i] = hash_key(keys[i].as_ref());
        }
        counts.key_hashes = pending.len() as u64;
        let r = multi_lookup_tables(
            &version,
            keys,
            &hashes,
            self.opts.prefix_extractor.as_deref(),
            &mut pending,
            &mut results,
            &mut counts,
        );
        self.stats.add_reads(&counts);
        r?;
        Ok(results
            .into_iter()
            .map(|e| e.and_then(Entry::into_value))
            .collect())
    }
}

/// The newest entry of `key` in the tables of `version`: per run, the one
/// table whose range holds the key; per table, its filter, its index and one
/// data block. The key is hashed once, when the first table's range holds
/// it, and that hash, prepared once ([`PreparedHash`]: for a blocked Bloom
/// filter, the key's probe mask), probes every filter; a table whose filter
/// holds the prefixes of `extractor` only is asked for the key's prefix,
/// hashed once too, when the first such table needs it.
#[inline]
pub(super) fn lookup_tables(
    version: &Version,
    key_bytes: &[u8],
    extractor: Option<&dyn PrefixExtractor>,
    counts: &mut ReadCounts,
) -> Result<Option<Entry>> {
    let Some(key) = version.probe_key(key_bytes) else {
        // Outside every table's key range.
        return Ok(None);
    };
    // The key is hashed only once a table's range holds it.
    let Some(start) = version.first_candidate(key) else {
        return Ok(None);
    };
    counts.key_hashes += 1;
    let mut hash = PreparedHash::new(hash_key(key_bytes));
    let mut prefix = KeyPrefix::new(extractor);
    walk(version, key, key_bytes, start, &mut hash, &mut prefix, counts)
}

/// Each candidate table of `version` in age order, from run `start` on,
/// its filter asked with `hash` as it is found.
///
/// Two loops. The inner one, [`settle_by_filters`], runs through every run a
/// filter settles (one table, the key strictly inside its range on eight
/// bytes, the filter says no) and stops at the first run that needs more;
/// this outer one handles that run (a range to check in full, a run of
/// several tables, no filter, or a filter's "maybe") and goes back in. A
/// miss against N overlapping runs spends nearly all its time in the inner
/// loop, so the inner loop is kept to what those runs need.
#[inline(always)]
fn walk(
    version: &Version,
    key: ProbeKey<'_>,
    key_bytes: &[u8],
    start: usize,
    hash: &mut PreparedHash,
    prefix: &mut KeyPrefix<'_>,
    counts: &mut ReadCounts,
) -> Result<Option<Entry>> {
    // Counted here and added once: a counter in memory is a store per table.
    let (mut negatives, mut read_on) = (0u64, 0u64);
    let mut found = Ok(None);
    let probes = version.run_probes();
    let settles = version.filter_settles();
    let top = key.top();
    let mut position = start;
    while position < probes.len() {
        let rest = settles.get(position..).unwrap_or_default();
        let settled = settle_by_filters(rest, top, hash);
        negatives += settled.runs as u64;
        position += settled.runs;
        let Some(p) = probes.get(position) else {
            break;
        };
        let Some(c) = version.locate(position as u32, p, key) else {
            position += 1;
            continue;
        };
        position += 1;
        let answer = if settled.maybe {
            // Asked in the inner loop already.
            Some(true)
        } else {
            c.filter.map(|f| f.contains_prepared(hash))
        };
        if answer == Some(false) {
            negatives += 1;
            continue;
        }
        read_on += 1;
        match version
            .table(&c)
            .get_given(key_bytes, hash.hash(), answer, prefix, counts)
        {
            Ok(None) => {}
            other => {
                found = other;
                break;
            }
        }
    }
    counts.tables_consulted += negatives + read_on;
    counts.filter_probes += negatives;
    counts.filter_negatives += negatives;
    found
}

/// Where [`settle_by_filters`] stopped.
struct Settled {
    /// Runs settled by their filters, from the first one given.
    runs: usize,
    /// Whether it stopped at a run whose filter said "maybe" (rather than
    /// one it could not settle by its filter alone, or the end).
    maybe: bool,
}

/// The runs of `settles`, from the first, that the key settles by filter
/// alone ([`FilterSettles`]), counted up to the first that needs more.
///
/// Per run it reads one entry of one array, tests the range with one
/// subtract and one compare, and asks the filter; the count is the loop's
/// index, so nothing is stored per run. Two loops share the work:
/// [`settle_each`] asks any filter with the prepared hash, and after a
/// blocked Bloom filter says no, [`settle_blocked`] takes the runs of
/// blocked filters of the same probe count that follow, with the prepared
/// probe held by shared reference so its mask stays in registers (measured
/// with `lsm_profile_miss` in `amq-bench`: one loop per kind is faster than
/// one loop for all, and both faster than reading each run's summary).
#[inline(always)]
fn settle_by_filters(settles: &[FilterSettles], top: u64, hash: &mut PreparedHash) -> Settled {
    let mut runs = 0;
    loop {
        let (settled, stop) = settle_each(settles.get(runs..).unwrap_or_default(), top, hash);
        runs += settled;
        match stop {
            Stop::Maybe => return Settled { runs, maybe: true },
            Stop::Other => return Settled { runs, maybe: false },
            Stop::AfterBlocked => {
                if let Some(probe) = hash.prepared_blocked() {
                    let (settled, maybe) =
                        settle_blocked(settles.get(runs..).unwrap_or_default(), top, probe);
                    runs += settled;
                    if maybe {
                        return Settled { runs, maybe: true };
                    }
                }
            }
        }
    }
}

/// Why [`settle_each`] stopped.
enum Stop {
    /// At a run whose filter said "maybe".
    Maybe,
    /// Just after a blocked Bloom filter said no: the runs after it may go
    /// to `settle_blocked`.
    AfterBlocked,
    /// At a run it cannot settle by filter (or at the end).
    Other,
}

/// The runs of `settles`, from the first, settled by asking each filter
/// with `hash`, up to the first that needs more or just past the first
/// blocked Bloom filter; how many, and why it stopped. A store of other
/// kinds (Ribbon, fuse, ...) spends its walk here, in a loop with nothing
/// else in it: with the blocked filters' loop in the same loop body, a
/// Ribbon table cost more (`KIND=Ribbon lsm_profile_miss 256`).
#[inline(always)]
fn settle_each(settles: &[FilterSettles], top: u64, hash: &mut PreparedHash) -> (usize, Stop) {
    for (runs, s) in settles.iter().enumerate() {
        let Some(filter) = s.filter_for(top) else {
            return (runs, Stop::Other);
        };
        let (maybe, blocked) = match filter {
            SettleFilter::Blocked(blocks) => (blocks.contains_prepared(hash), true),
            SettleFilter::Any(f) => (f.contains_prepared(hash), false),
        };
        if maybe {
            return (runs, Stop::Maybe);
        }
        if blocked {
            return (runs + 1, Stop::AfterBlocked);
        }
    }
    (settles.len(), Stop::Other)
}

/// `multi_get`'s walk: run by run, the pending keys grouped by table. A
/// key's prefix hash (for tables whose filters hold prefixes only) is
/// computed when the first such table needs it.
fn multi_lookup_tables<K: AsRef<[u8]>>(
    version: &Version,
    keys: &[K],
    hashes: &[KeyHash],
    extractor: Option<&dyn PrefixExtractor>,
    pending: &mut Vec<usize>,
    results: &mut [Option<Entry>],
    counts: &mut ReadCounts,
) -> Result<()> {
    let probe_keys: Vec<Option<ProbeKey<'_>>> = keys.iter().map(|k| version.probe_key(k.as_ref())).collect();
    let mut prefixes: Vec<Option<Option<KeyHash>>> = Vec::new();
    let mut group_keys: Vec<&[u8]> = Vec::new();
    let mut group_hashes: Vec<KeyHash> = Vec::new();
    let mut group_prefixes: Vec<Option<KeyHash>> = Vec::new();
    for run in version.runs_by_age() {
        if pending.is_empty() {
            break;
        }
        // (table in the run, key) for every pending key the run may hold.
        let mut by_table: Vec<(u32, usize)> = pending
            .iter()
            .filter_map(|&i| run.locate(probe_keys[i]?).map(|c| (c.index, i)))
            .collect();
        by_table.sort_unstable();
        for group in by_table.chunk_by(|a, b| a.0 == b.0) {
            counts.tables_consulted += group.len() as u64;
            group_keys.clear();
            group_hashes.clear();
            group_prefixes.clear();
            for &(_, i) in group {
                group_keys.push(keys[i].as_ref());
                group_hashes.push(hashes[i]);
            }
            let table = &run.run().tables[group[0].0 as usize];
            if let (Some(e), true) = (extractor, table.wants_key_prefix()) {
                prefixes.resize(keys.len(), None);
                for &(_, i) in group {
                    let p = prefixes[i].get_or_insert_with(|| {
                        counts.key_hashes += 1;
                        prefix_hash(e, keys[i].as_ref())
                    });
                    group_prefixes.push(*p);
                }
            }
            table.get_many(&group_keys, &group_hashes, &group_prefixes, counts, |j, e| {
                results[group[j].1] = Some(e);
            })?;
        }
        pending.retain(|&i| results[i].is_none());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::{AnyFilter, Filter, FilterKind, FilterSizing};
    use proptest::prelude::*;
    use std::sync::Arc;

    /// Blocked Bloom filters of two probe counts, two of each over
    /// different keys (so that one says "maybe" where the one before it of
    /// the same count said no), and a Ribbon filter: `filters()[i]` holds
    /// the keys `250 * i..250 * i + 500`.
    fn filters() -> Vec<Arc<AnyFilter>> {
        let build = |kind, fpr, i: u64| {
            let hashes: Vec<KeyHash> = (250 * i..250 * i + 500).map(amq::hash_u64).collect();
            Arc::new(AnyFilter::build(kind, &hashes, FilterSizing::Fpr(fpr)).unwrap())
        };
        vec![
            build(FilterKind::BlockedBloom, 0.01, 0),
            build(FilterKind::BlockedBloom, 0.01, 1),
            build(FilterKind::BlockedBloom, 0.2, 2),
            build(FilterKind::BlockedBloom, 0.2, 3),
            build(FilterKind::Ribbon, 0.01, 4),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, rng_seed: proptest::test_runner::RngSeed::Fixed(11), ..ProptestConfig::default() })]

        // The inner loop (with its innermost loop over blocked filters of
        // one probe count) stops where a plain walk does: at the first run
        // the key is not strictly inside, or without a filter, or whose
        // filter says "maybe"; and it says which.
        #[test]
        fn settle_by_filters_stops_where_a_plain_walk_does(
            runs in proptest::collection::vec((0usize..6, any::<bool>()), 0..40),
            key in 0u64..2_000,
        ) {
            let filters = filters();
            let h = hash_key(&key.to_le_bytes());
            let top = 1u64 << 40;
            // Filter choice 5 is no filter; a run whose flag is false lies
            // wholly above the key.
            let settles: Vec<FilterSettles> = runs
                .iter()
                .map(|&(f, inside)| {
                    let filter = filters.get(f).cloned();
                    let lo = if inside { 0u128 } else { (top as u128 + 1) << 64 };
                    FilterSettles::new(lo, u128::MAX, filter)
                })
                .collect();
            let mut want = Settled { runs: settles.len(), maybe: false };
            for (i, s) in settles.iter().enumerate() {
                match s.settling_filter(top) {
                    None => { want = Settled { runs: i, maybe: false }; break; }
                    Some(f) if f.contains_hash(h) => { want = Settled { runs: i, maybe: true }; break; }
                    Some(_) => {}
                }
            }
            let got = settle_by_filters(&settles, top, &mut PreparedHash::new(h));
            prop_assert_eq!((got.runs, got.maybe), (want.runs, want.maybe));
        }
    }
}
