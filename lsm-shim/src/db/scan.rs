//! Range scans: [`Db::scan`], [`Db::iter`] and the [`Scan`] iterator.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use super::Db;
use crate::error::Result;
use crate::memtable::Entry;
use crate::merge::{MergeIter, Source};
use crate::sstable::Table;

impl Db {
    /// The live entries with keys in `range`, in key order, newest version of
    /// each, deletes hidden. The scan reads the tree as it was when called
    /// (a copy of the memtable's part of the range, and the current tables);
    /// data blocks are read as the iterator advances.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// for k in ["a", "b", "c", "d"] {
    ///     db.put(k.as_bytes(), b"")?;
    /// }
    /// let keys: Vec<Vec<u8>> = db.scan("b".as_bytes()..="c".as_bytes()).map(|r| r.map(|kv| kv.0)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    /// # Ok(()) }
    /// ```
    pub fn scan<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Scan {
        let lo = range.start_bound().map(AsRef::as_ref);
        let hi_ref = range.end_bound().map(AsRef::as_ref);
        let hi: Bound<Vec<u8>> = hi_ref.map(<[u8]>::to_vec);
        let (mem, version) = {
            let r = self.read_state();
            (r.mem.snapshot_range(lo, hi_ref), r.version.clone())
        };
        let mut sources: Vec<Source<'static>> = vec![Box::new(mem.into_iter().map(Ok))];
        for level in &version.levels {
            for run in &level.runs {
                let tables: Vec<Arc<Table>> = run
                    .tables
                    .iter()
                    .filter(|t| match lo {
                        Bound::Included(k) => t.largest() >= k,
                        Bound::Excluded(k) => t.largest() > k,
                        Bound::Unbounded => true,
                    })
                    .cloned()
                    .collect();
                let lo: Bound<Vec<u8>> = lo.map(|k| k.to_vec());
                sources.push(Box::new(tables.into_iter().flat_map(move |t| {
                    t.iter(match &lo {
                        Bound::Included(k) => Bound::Included(k.as_slice()),
                        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
                        Bound::Unbounded => Bound::Unbounded,
                    })
                })));
            }
        }
        Scan {
            merge: MergeIter::new(sources),
            hi,
            done: false,
        }
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
}

/// The live entries of a range, from [`Db::scan`]: `(key, value)` pairs in
/// key order, or the error that ended the scan.
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// # let dir = tempfile::tempdir().unwrap();
/// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
/// db.put("a", "1")?;
/// let scan: amq_lsm::Scan = db.scan("a".."z");
/// assert_eq!(scan.count(), 1);
/// # Ok(()) }
/// ```
pub struct Scan {
    merge: MergeIter<'static>,
    hi: Bound<Vec<u8>>,
    done: bool,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("hi", &self.hi)
            .finish_non_exhaustive()
    }
}

impl Iterator for Scan {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (key, entry) = match self.merge.next()? {
                Ok(kv) => kv,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            let past_end = match &self.hi {
                Bound::Included(h) => key > *h,
                Bound::Excluded(h) => key >= *h,
                Bound::Unbounded => false,
            };
            if past_end {
                self.done = true;
                return None;
            }
            if let Entry::Value(v) = entry {
                return Some(Ok((key, v)));
            }
        }
        None
    }
}
