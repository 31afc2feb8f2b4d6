//! [`Db::find_by_value`]: value search over the memtable and the tables
//! (Macyna & Ordonez, Algorithms 1–3), and the value index's stats.
//!
//! **Consistency.** The tables are searched without any lock, on the
//! version current at the start. Then, under the read lock, if that version
//! is still current, the memtable is scanned (Algorithm 2) and every
//! candidate key it holds is settled by it; the other candidates are then
//! checked against that version (Algorithm 3), which together with that
//! memtable is the store's state at one moment. If a flush or compaction
//! installed a new version meanwhile, the tables are searched again while
//! holding the lock (writers wait for that one search).

use std::sync::Arc;

use super::read::lookup_tables;
use super::Db;
use crate::error::Result;
use crate::stats::ReadCounts;
use crate::value::search::{self, Query};
use crate::value::{live_match, SearchMethod, ValueSearch, ValueStats};

impl Db {
    /// The live `(key, value)` entries whose value is `value` (or, with a
    /// [`TermExtractor`](crate::TermExtractor), whose value has the term
    /// `value`), in key order. Exact match only.
    ///
    /// With [`Options::value_index`](crate::Options::value_index), tables
    /// are chosen by their value filters through
    /// [`ValueIndexOptions::method`](crate::ValueIndexOptions::method), unless
    /// the filters are too full to prune, when every table is scanned (see
    /// [`ValueSearch::plain_scan`]); without it, every table is scanned. The
    /// memtable is always scanned, and every entry found in a table is
    /// returned only if it is its key's newest version, so overwritten and
    /// deleted entries are not.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq_lsm::{Db, Options, ValueIndexOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default().value_index(Some(ValueIndexOptions::default()));
    /// let db = Db::open(dir.path(), opts)?;
    /// db.put(b"alice", b"smith")?;
    /// db.put(b"bob", b"jones")?;
    /// db.put(b"carol", b"smith")?;
    /// db.flush()?;
    /// db.put(b"carol", b"brown")?; // overwritten in the memtable
    /// db.put(b"dave", b"smith")?;
    /// let found = db.find_by_value(b"smith")?;
    /// assert_eq!(found, vec![
    ///     (b"alice".to_vec(), b"smith".to_vec()),
    ///     (b"dave".to_vec(), b"smith".to_vec()),
    /// ]);
    /// # Ok(()) }
    /// ```
    pub fn find_by_value<V: AsRef<[u8]>>(&self, value: V) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(self.search_values(value.as_ref(), None)?.entries)
    }

    /// [`find_by_value`](Self::find_by_value) with the method forced (no
    /// automatic fallback), returning the search's counters too. Without a
    /// value index every method is a plain scan.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq_lsm::{Db, Options, SearchMethod, ValueIndexOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default()
    ///     .value_index(Some(ValueIndexOptions::default()))
    ///     .auto_compact(false);
    /// let db = Db::open(dir.path(), opts)?;
    /// for t in 0..4u32 {
    ///     db.put(format!("k{t}").as_bytes(), format!("v{t}").as_bytes())?;
    ///     db.flush()?; // one table each
    /// }
    /// let h = db.find_by_value_with(b"v2", SearchMethod::Hierarchy)?;
    /// assert_eq!(h.entries, vec![(b"k2".to_vec(), b"v2".to_vec())]);
    /// assert_eq!(h.stats.tables_scanned, 1);
    /// let scan = db.find_by_value_with(b"v2", SearchMethod::Scan)?;
    /// assert_eq!((scan.entries, scan.stats.tables_scanned), (h.entries, 4));
    /// # Ok(()) }
    /// ```
    pub fn find_by_value_with<V: AsRef<[u8]>>(&self, value: V, method: SearchMethod) -> Result<ValueSearch> {
        self.search_values(value.as_ref(), Some(method))
    }

    /// The value searches' counters since open, and the value index's shape
    /// now (all zero without a value index).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq_lsm::{Db, Options, ValueIndexOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default().value_index(Some(ValueIndexOptions::default()));
    /// let db = Db::open(dir.path(), opts)?;
    /// db.put(b"k", b"v")?;
    /// db.flush()?;
    /// db.find_by_value(b"v")?;
    /// let s = db.value_stats();
    /// assert_eq!((s.searches, s.tables_scanned, s.leaf_filters), (1, 1, 1));
    /// assert_eq!(s.leaf_filter_bytes, 1_000_000 / 8); // 50,000 values × 20 bits
    /// # Ok(()) }
    /// ```
    pub fn value_stats(&self) -> ValueStats {
        let mut s = self.value_counters.get();
        if let Some(snap) = &self.read_state().values {
            snap.shape_stats(&mut s);
        }
        s
    }

    /// Checks the value index's invariants: every internal filter is the OR
    /// of its children, fan-outs are within bounds, the flat slices are the
    /// leaves transposed, and the index covers exactly the live tables.
    /// `Err` names the first broken invariant.
    #[cfg(test)]
    pub(crate) fn check_value_index(&self) -> std::result::Result<(), String> {
        use std::collections::BTreeSet;
        let r = self.read_state();
        let Some(snap) = &r.values else {
            return Ok(());
        };
        snap.check()?;
        let live: BTreeSet<u64> = r.version.tables().map(|(_, t)| t.number()).collect();
        let indexed: BTreeSet<u64> = snap
            .leaves()
            .map(|(_, l)| l.table.number())
            .chain(snap.unfiltered.iter().map(|t| t.number()))
            .collect();
        if live != indexed {
            return Err(format!("live tables {live:?}, indexed {indexed:?}"));
        }
        Ok(())
    }

    fn search_values(&self, term: &[u8], requested: Option<SearchMethod>) -> Result<ValueSearch> {
        let vopts = self.opts.value_index.as_ref();
        let q = Query {
            term,
            extractor: vopts.map(|o| &*o.extractor),
        };
        let fresh = || ValueStats {
            searches: 1,
            ..ValueStats::default()
        };
        let mut stats = fresh();
        let (version, snap) = {
            let r = self.read_state();
            (r.version.clone(), r.values.clone())
        };
        let (mut method, mut plain) = search::choose(vopts, snap.as_deref(), requested);
        let mut found = search::in_tables(&version, snap.as_deref(), method, &q, &mut stats)?;
        let r = self.read_state();
        let version = if Arc::ptr_eq(&r.version, &version) {
            version
        } else {
            stats = fresh();
            (method, plain) = search::choose(vopts, r.values.as_deref(), requested);
            found = search::in_tables(&r.version, r.values.as_deref(), method, &q, &mut stats)?;
            r.version.clone()
        };
        // Algorithm 2, and the candidates whose newest version it holds.
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = r
            .mem
            .iter()
            .filter_map(|(k, e)| Some((k.clone(), live_match(e, &q)?)))
            .collect();
        found.retain(|k| r.mem.get(k).is_none());
        drop(r);
        // Algorithm 3 (the set has removed duplicates).
        let mut counts = ReadCounts::default();
        let checked = (|| {
            for key in found {
                stats.candidates_checked += 1;
                if let Some(v) =
                    lookup_tables(&version, &key, self.opts.prefix_extractor.as_deref(), &mut counts)?
                        .and_then(|e| live_match(&e, &q))
                {
                    entries.push((key, v));
                }
            }
            Ok::<_, crate::Error>(())
        })();
        self.stats.add_reads(&counts);
        checked?;
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        stats.plain_scans = u64::from(plain);
        self.value_counters.update(|c| c.add_search(&stats));
        Ok(ValueSearch {
            entries,
            method,
            plain_scan: plain,
            stats,
        })
    }
}

#[cfg(test)]
mod tests;
