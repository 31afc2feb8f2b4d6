//! Range scans: [`Db::scan`], [`Db::scan_prefix`], [`Db::iter`] and the
//! [`Scan`] iterator, double-ended.
//!
//! A scan copies the memtable's part of its range and takes the current
//! version when it is made, and reads nothing else until it is first
//! advanced. Then it picks, per run, the tables whose key range meets its
//! range (both bounds), asks each one's filter about the scan's prefix when
//! the range lies inside one complete prefix of the store's extractor
//! (`sstable/prefixes.rs` says when a table may be skipped), and merges
//! cursors over the tables left ([`crate::sstable::TableCursor`]), each of
//! which reads its first block only when the merge first needs it.
//!
//! Forward and backward are two merges over the same tables, made when each
//! direction is first used; each remembers the last key it returned, and
//! the scan ends where they meet.

use std::ops::{Bound, Range, RangeBounds};
use std::sync::Arc;

use amq::prefix::{is_prefix_end, shared_prefix};
use amq::{hash_prefix, PreparedHash};

use super::Db;
use crate::block::Direction;
use crate::error::Result;
use crate::keys::{after_start, before_end, prefix_end};
use crate::memtable::Entry;
use crate::merge::{MergeIter, Source};
use crate::sstable::{CursorCounts, FilterMaybe, Table};
use crate::stats::{add, inc, Counters, ReadCounts};
use crate::version::{Meets, Version};

impl Db {
    /// The live entries with keys in `range`, in key order (or, through
    /// [`DoubleEndedIterator`], in reverse), newest version of each, deletes
    /// hidden. The scan reads the tree as it was when called (a copy of the
    /// memtable's part of the range, and the current tables); tables are
    /// chosen and data blocks read as the iterator advances.
    ///
    /// A table is read only if its key range meets `range`. When both bounds
    /// lie inside one complete prefix of [`Options::prefix_extractor`]
    /// (RocksDB's `auto_prefix_mode`), a table whose filter rules that prefix
    /// out is skipped as in [`scan_prefix`](Self::scan_prefix). When both
    /// bounds are set, a table whose range filter
    /// ([`Options::range_filter_policy`]) rules the range out is skipped
    /// too ([`Stats::range_negatives`] counts them); tables without a
    /// trusted range filter, and every table for a half-open range, are
    /// read. Range filters serve short scans (up to a few thousand keys
    /// wide) over any key shape: each table maps its keys to integers by
    /// the byte positions where they differ, so composite (`tenant:row`),
    /// decimal and sequential keys map densely; see
    /// [`RangeFilterPolicy`](crate::RangeFilterPolicy) for what they cost
    /// and how `Stats` shows they work.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// for k in ["a", "b", "c", "d"] {
    ///     db.put(k, "")?;
    /// }
    /// let keys: Vec<Vec<u8>> = db.scan("b".."d").map(|r| r.map(|kv| kv.0)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    /// // The last entry of a range, without reading the rest.
    /// let last = db.scan("a"..="c").next_back().transpose()?;
    /// assert_eq!(last, Some((b"c".to_vec(), Vec::new())));
    /// # Ok(()) }
    /// ```
    ///
    /// With range filters, an empty range in a tree of overlapping tables
    /// opens none of them:
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{Db, Options, RangeFilterPolicy};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default()
    ///     .range_filter_policy(RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)))
    ///     .auto_compact(false);
    /// let db = Db::open(dir.path(), opts)?;
    /// for t in 0..4 {
    ///     for i in 0..100 {
    ///         db.put(format!("order:{:05}", i * 8 + t), "")?;
    ///     }
    ///     db.flush()?; // table t: orders 8i + t, so each spans them all
    /// }
    /// // Orders 400 to 403, one in each table: all four are read.
    /// assert_eq!(db.scan("order:00400".."order:00404").count(), 4);
    /// // Orders 412 to 415 are in no table: none is read.
    /// assert_eq!(db.scan("order:00412".."order:00416").count(), 0);
    /// let s = db.stats();
    /// assert_eq!((s.range_probes, s.range_negatives, s.scan_blocks_read), (8, 4, 4));
    /// # Ok(()) }
    /// ```
    ///
    /// [`Options::prefix_extractor`]: crate::Options::prefix_extractor
    /// [`Options::range_filter_policy`]: crate::Options::range_filter_policy
    /// [`Stats::range_negatives`]: crate::Stats::range_negatives
    pub fn scan<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Scan {
        let lo = range.start_bound().map(|k| k.as_ref().to_vec());
        let hi = range.end_bound().map(|k| k.as_ref().to_vec());
        let prefix = self
            .opts
            .prefix_extractor
            .as_deref()
            .and_then(|e| shared_prefix(e, bound_ref(&lo), bound_ref(&hi)));
        self.scan_bounds(lo, hi, prefix)
    }

    /// The live entries whose keys start with `prefix`, in key order (or in
    /// reverse), as [`scan`](Self::scan) gives them.
    ///
    /// The filters serve a `prefix` whose own prefix under the store's
    /// [`prefix_extractor`](crate::Options::prefix_extractor()) is complete
    /// (every key that starts with it has it as its prefix:
    /// [`amq::PrefixExtractor::is_complete`]): a complete prefix, or one
    /// extended. The scan then asks each table's filter about that complete
    /// prefix, hashed once, and skips the tables whose filter rules it out:
    /// on a tree of many overlapping tables an absent prefix costs about
    /// what an absent `get` does. Tables written with another extractor, or
    /// none, and tables whose filter cannot be trusted are always read
    /// ([`Stats::prefix_negatives`] counts the tables skipped).
    ///
    /// With `DelimitedPrefix::new(b':')`, `"user:"` and `"user:4"` are
    /// served (the filters are asked about `"user:"`), and `"user"` or `""`
    /// are not: the keys that start with them have many prefixes (`"user:"`,
    /// `"users:"`, ...), so no filter entry answers for them all, and the
    /// scan reads every table whose range it meets.
    /// [`Stats::prefix_scans_unfiltered`] counts such calls (without an
    /// extractor no call is served, and none is counted).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq::DelimitedPrefix;
    /// use amq_lsm::{Db, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let opts = Options::default().prefix_extractor(DelimitedPrefix::new(b':'));
    /// let db = Db::open(dir.path(), opts)?;
    /// for i in 0..3 {
    ///     db.put(format!("a:{i}"), "1")?;
    ///     db.put(format!("z:{i}"), "2")?;
    ///     db.flush()?; // three tables, each spanning "a:" to "z:"
    /// }
    /// let rows: Vec<_> = db.scan_prefix("a:").collect::<Result<_, _>>()?;
    /// assert_eq!(rows.len(), 3);
    /// assert_eq!(db.scan_prefix("m:").count(), 0);
    /// let s = db.stats();
    /// // Each scan met all three tables and asked each one's filter; "m:"
    /// // was ruled out everywhere (barring a false positive).
    /// assert_eq!((s.scan_tables, s.prefix_probes), (6, 6));
    /// assert!(s.prefix_negatives >= 2);
    /// # Ok(()) }
    /// ```
    ///
    /// A prefix inside a complete one is served; a shorter one is not, and
    /// is counted:
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// use amq::DelimitedPrefix;
    /// use amq_lsm::{Db, Options};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Db::open(dir.path(), Options::default().prefix_extractor(DelimitedPrefix::new(b':')))?;
    /// db.put("user:42", "Ada")?;
    /// db.flush()?;
    /// assert_eq!(db.scan_prefix("user:4").count(), 1); // the filter is asked about "user:"
    /// assert_eq!(db.scan_prefix("user").count(), 1); // no filter can answer for "user"
    /// let s = db.stats();
    /// assert_eq!((s.prefix_probes, s.prefix_scans_unfiltered), (1, 1));
    /// # Ok(()) }
    /// ```
    ///
    /// [`Stats::prefix_negatives`]: crate::Stats::prefix_negatives
    /// [`Stats::prefix_scans_unfiltered`]: crate::Stats::prefix_scans_unfiltered
    pub fn scan_prefix<P: AsRef<[u8]>>(&self, prefix: P) -> Scan {
        let p = prefix.as_ref();
        let hi = prefix_end(p).map_or(Bound::Unbounded, Bound::Excluded);
        // The length of the complete prefix every key in the range starts
        // with, per extractor; `Some(None)`: an extractor, and no such prefix.
        let served = self
            .opts
            .prefix_extractor
            .as_deref()
            .map(|e| shared_prefix(e, Bound::Included(p), bound_ref(&hi)));
        if served == Some(None) {
            inc(&self.stats.prefix_scans_unfiltered);
        }
        self.scan_bounds(Bound::Included(p.to_vec()), hi, served.flatten())
    }

    /// Every live entry, in key order: [`scan`](Self::scan) over all keys.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("b", "2")?;
    /// db.put("a", "1")?;
    /// let keys: Vec<Vec<u8>> = db.iter().map(|r| r.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec()]);
    /// # Ok(()) }
    /// ```
    pub fn iter(&self) -> Scan {
        self.scan::<&[u8], _>(..)
    }

    /// A scan of `lo..hi`; `prefix`, if any, is the length of a complete
    /// prefix of the store's extractor that starts `lo` and every key in the
    /// range.
    fn scan_bounds(&self, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>, prefix: Option<usize>) -> Scan {
        self.scans.record(bound_ref(&lo), bound_ref(&hi));
        let (mem, version) = {
            let r = self.read_state();
            (
                r.mem.snapshot_range(bound_ref(&lo), bound_ref(&hi)),
                r.version.clone(),
            )
        };
        Scan {
            mem: (!mem.is_empty()).then(|| Arc::new(mem)),
            version,
            lo,
            hi,
            prefix,
            stats: Arc::clone(&self.stats),
            runs: None,
            maybes: None,
            front: None,
            back: None,
            front_key: None,
            back_key: None,
            done: false,
        }
    }
}

fn bound_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(Vec::as_slice)
}

/// A table a scan reads, and, if a prefix or range filter let it through,
/// its place among the scan's [`FilterMaybe`]s, which its cursors share to
/// count a false positive once.
#[derive(Clone)]
struct ScanTable {
    table: Arc<Table>,
    maybe: Option<u32>,
}

/// The live entries of a range, from [`Db::scan`], [`Db::scan_prefix`] or
/// [`Db::iter`]: `(key, value)` pairs in key order, or from the end with
/// [`next_back`](DoubleEndedIterator::next_back), or the error that ended
/// the scan.
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
/// for k in ["a", "b", "c"] {
///     db.put(k, "")?;
/// }
/// let mut scan: amq_lsm::Scan = db.scan("a".."z");
/// assert_eq!(scan.next().transpose()?.map(|kv| kv.0), Some(b"a".to_vec()));
/// assert_eq!(scan.next_back().transpose()?.map(|kv| kv.0), Some(b"c".to_vec()));
/// assert_eq!(scan.next().transpose()?.map(|kv| kv.0), Some(b"b".to_vec()));
/// assert!(scan.next_back().is_none()); // the two ends met
/// # Ok(()) }
/// ```
pub struct Scan {
    /// The memtable's entries in the range, copied when the scan was made
    /// (`None`: there were none).
    mem: Option<Arc<MemRange>>,
    version: Arc<Version>,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    /// The length of the complete prefix every key in the range starts
    /// with (the first bytes of the start bound), for the tables' filters.
    prefix: Option<usize>,
    stats: Arc<Counters>,
    /// Per run (newest first), the tables to read, chosen when the scan is
    /// first advanced.
    runs: Option<Vec<Vec<ScanTable>>>,
    /// What the filters that let tables through said, one per such table
    /// (one allocation per scan, not per table).
    maybes: Option<Arc<[FilterMaybe]>>,
    front: Option<MergeIter<'static>>,
    back: Option<MergeIter<'static>>,
    /// The last key each end returned (live or deleted).
    front_key: Option<Vec<u8>>,
    back_key: Option<Vec<u8>>,
    done: bool,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("lo", &self.lo)
            .field("hi", &self.hi)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Scan {
    /// Picks the tables to read: per run, those whose key range meets the
    /// scan's, less those whose filter rules the scan's prefix out or whose
    /// range filter rules its range out.
    fn choose_tables(&mut self) -> Result<Vec<Vec<ScanTable>>> {
        inc(&self.stats.scans);
        let prefix = match (self.prefix, &self.lo) {
            (Some(len), Bound::Included(lo) | Bound::Excluded(lo)) => lo.get(..len),
            _ => None,
        };
        let mut hash = prefix.map(|p| PreparedHash::new(hash_prefix(p)));
        // A scan of exactly one whole prefix: a table the prefix filter let
        // through and where the scan finds nothing held no key with the
        // prefix, a false positive. Inside a narrower range that table may
        // hold the prefix elsewhere: its "maybe" is not counted either way.
        let whole_prefix = prefix.is_some_and(|p| {
            matches!(&self.lo, Bound::Included(lo) if lo.len() == p.len())
                && match &self.hi {
                    Bound::Excluded(h) => is_prefix_end(h, p),
                    Bound::Unbounded => p.iter().all(|&b| b == 0xff),
                    Bound::Included(_) => false,
                }
        });
        let mut counts = ReadCounts::default();
        let mut n = ChoiceCounts::default();
        let mut maybes = Vec::new();
        let (lo, hi) = (bound_ref(&self.lo), bound_ref(&self.hi));
        let mut failed = None;
        // First the tables that meet the range and that no prefix filter
        // rules out, each with its range filter's question, whose first
        // words start loading; then the range filters' answers, so the
        // tables' cache misses overlap instead of following each other.
        let mut met = Vec::new();
        let ranges = self.version.scan_range(lo, hi);
        'runs: for (r, (run, meets)) in ranges
            .into_iter()
            .flat_map(|r| self.version.runs_meeting(r))
            .enumerate()
        {
            // A run of one table that surely meets the range, with its
            // prefix filter at hand; or every table of the run whose range
            // meets the scan's.
            let (tables, filter) = match meets {
                Meets::Table(t, filter) => (std::slice::from_ref(t), filter),
                Meets::Check => {
                    let first = run.tables.partition_point(|t| !after_start(t.largest(), lo));
                    let n = run.tables[first..]
                        .iter()
                        .take_while(|t| before_end(t.smallest(), hi))
                        .count();
                    (&run.tables[first..first + n], None)
                }
            };
            for t in tables {
                n.met += 1;
                let by_prefix = match (prefix, &mut hash, filter) {
                    (Some(_), Some(h), Some(f)) => Some(f.contains_prepared(h)),
                    (Some(p), Some(h), None) => match t.may_hold_prefix(p, h, &mut counts) {
                        Ok(a) => a,
                        Err(e) => {
                            failed = Some(e);
                            break 'runs;
                        }
                    },
                    _ => None,
                };
                n.prefix_probes += u64::from(by_prefix.is_some());
                if by_prefix == Some(false) {
                    n.prefix_negatives += 1;
                    n.whole_prefix_negatives += u64::from(whole_prefix);
                    continue;
                }
                // No question where a range filter cannot help: none
                // trusted, a half-open range, or one too long to ask about.
                met.push((r, t, by_prefix, t.range_query(lo, hi)));
            }
        }
        let mut runs: Vec<Vec<ScanTable>> = Vec::new();
        let mut last_run = usize::MAX;
        for (r, t, by_prefix, query) in met {
            let by_range = query.map(|q| t.range_answer(q));
            n.range_probes += u64::from(by_range.is_some());
            if by_range == Some(false) {
                n.range_negatives += 1;
                continue;
            }
            let maybe = FilterMaybe::new(by_prefix == Some(true) && whole_prefix, by_range == Some(true))
                .map(|m| {
                    maybes.push(m);
                    (maybes.len() - 1) as u32
                });
            if r != last_run {
                runs.push(Vec::new());
                last_run = r;
            }
            if let Some(run) = runs.last_mut() {
                run.push(ScanTable {
                    table: Arc::clone(t),
                    maybe,
                });
            }
        }
        // Counted once per scan, and only what is not zero: an atomic add
        // costs about what a filter probe does.
        for (c, k) in [
            (&self.stats.scan_tables, n.met),
            (&self.stats.prefix_probes, n.prefix_probes),
            (&self.stats.prefix_negatives, n.prefix_negatives),
            (&self.stats.whole_prefix_negatives, n.whole_prefix_negatives),
            (&self.stats.range_probes, n.range_probes),
            (&self.stats.range_negatives, n.range_negatives),
        ] {
            if k > 0 {
                add(c, k);
            }
        }
        self.stats.add_reads(&counts);
        self.maybes = (!maybes.is_empty()).then(|| maybes.into());
        match failed {
            Some(e) => Err(e),
            None => Ok(runs),
        }
    }

    /// The merge of the memtable's entries and the chosen tables, in
    /// `direction` order.
    fn merge(&self, runs: &[Vec<ScanTable>], direction: Direction) -> MergeIter<'static> {
        let mut sources: Vec<Source<'static>> = Vec::with_capacity(runs.len() + 1);
        if let Some(entries) = &self.mem {
            let mem = MemEntries {
                entries: Arc::clone(entries),
                range: 0..entries.len(),
            };
            sources.push(match direction {
                Direction::Forward => Box::new(mem),
                Direction::Backward => Box::new(mem.rev()),
            });
        }
        for run in runs {
            let mut tables = run.clone();
            if direction == Direction::Backward {
                tables.reverse();
            }
            let (lo, hi, stats) = (self.lo.clone(), self.hi.clone(), Arc::clone(&self.stats));
            let maybes = self.maybes.clone();
            sources.push(Box::new(tables.into_iter().flat_map(move |st| {
                st.table
                    .cursor(direction, lo.clone(), hi.clone())
                    .counted(CursorCounts {
                        counters: Arc::clone(&stats),
                        maybe: st.maybe.zip(maybes.clone()).map(|(i, all)| (all, i)),
                    })
            })));
        }
        MergeIter::with_direction(sources, direction)
    }

    /// The next live entry from the end `direction` moves from.
    fn advance(&mut self, direction: Direction) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.done {
            return None;
        }
        let runs = match self.runs.take() {
            Some(r) => r,
            None => match self.choose_tables() {
                Ok(r) => r,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            },
        };
        if runs.is_empty() && self.mem.is_none() {
            // Nothing to merge: every table was ruled out (or none met the
            // range) and the memtable held nothing in it.
            self.done = true;
            return None;
        }
        let started = match direction {
            Direction::Forward => self.front.is_some(),
            Direction::Backward => self.back.is_some(),
        };
        if !started {
            let merge = Some(self.merge(&runs, direction));
            match direction {
                Direction::Forward => self.front = merge,
                Direction::Backward => self.back = merge,
            }
        }
        self.runs = Some(runs);
        loop {
            let (merge, mine, theirs) = match direction {
                Direction::Forward => (&mut self.front, &mut self.front_key, &self.back_key),
                Direction::Backward => (&mut self.back, &mut self.back_key, &self.front_key),
            };
            let (key, entry) = match merge.as_mut()?.next() {
                Some(Ok(kv)) => kv,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    self.done = true;
                    return None;
                }
            };
            // The other end already returned this key or one past it.
            let met = theirs.as_ref().is_some_and(|t| match direction {
                Direction::Forward => key >= *t,
                Direction::Backward => key <= *t,
            });
            if met {
                self.done = true;
                return None;
            }
            match mine {
                Some(k) => {
                    k.clear();
                    k.extend_from_slice(&key);
                }
                None => *mine = Some(key.clone()),
            }
            if let Entry::Value(v) = entry {
                return Some(Ok((key, v)));
            }
        }
    }
}

impl Iterator for Scan {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance(Direction::Forward)
    }
}

impl DoubleEndedIterator for Scan {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.advance(Direction::Backward)
    }
}

/// What choosing a scan's tables counted, added to the store's counters
/// once.
#[derive(Default)]
struct ChoiceCounts {
    met: u64,
    prefix_probes: u64,
    prefix_negatives: u64,
    whole_prefix_negatives: u64,
    range_probes: u64,
    range_negatives: u64,
}

/// The memtable's entries in a scan's range, in key order.
type MemRange = Vec<(Vec<u8>, Entry)>;

/// The memtable's entries of a scan, shared by its two ends.
struct MemEntries {
    entries: Arc<MemRange>,
    range: Range<usize>,
}

impl Iterator for MemEntries {
    type Item = Result<(Vec<u8>, Entry)>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.range.next()?;
        Some(Ok(self.entries[i].clone()))
    }
}

impl DoubleEndedIterator for MemEntries {
    fn next_back(&mut self) -> Option<Self::Item> {
        let i = self.range.next_back()?;
        Some(Ok(self.entries[i].clone()))
    }
}
