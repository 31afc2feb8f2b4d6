//! [`Db`]: the store. Opening and recovery, the write path (WAL, memtable,
//! flush), compaction scheduling, and the read path with hash sharing.
//!
//! # Concurrency model
//! `Db` is `Send + Sync`; share it with an `Arc`. Reads (`get`, `scan`,
//! `stats`) run concurrently with each other and with writes: a read takes a
//! short shared lock to look in the memtable and clone the current
//! [`Version`], then works on that version without any lock. Writes (`put`,
//! `delete`, `write`, `flush`, `compact`, `sync`) are serialized by one mutex;
//! flushes and compactions run in the writing thread (no background threads),
//! so a write that triggers one returns after it. A flush or compaction
//! installs its result atomically: a reader sees the tree before or after,
//! never between.
//!
//! # Durability
//! A write is in the WAL before it is applied; with
//! [`SyncMode::EveryWrite`] the WAL is synced before the write returns. A
//! flush writes and syncs the table, syncs the directory, and only then
//! records the table and the new WAL in the manifest (synced) and deletes the
//! old WAL. Any I/O error on the write path stops writes
//! ([`Error::WritesStopped`]) until the store is reopened, because the
//! state on disk is then unknown; reads go on.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use amq::{hash_key, AnyFilter, BlockedProbe, Filter, PreparedHash};

use crate::batch::WriteBatch;
use crate::cache::BlockCache;
use crate::compaction::{self, Compaction, Merger};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::filenames::{self, FileKind};
use crate::manifest::{self, Edit, ManifestState, ManifestWriter, TableRecord};
use crate::memtable::{Entry, MemTable};
use crate::merge::{MergeIter, Source};
use crate::monkey::{Built, LevelShape};
use crate::options::{Options, SyncMode};
use crate::settle::{settle_blocked, FilterSettles, SettleFilter};
use crate::sstable::{Caches, Table, TableSummary, TableWriter};
use crate::stats::{add, inc, Counters, LevelStats, ReadCounts, Stats, TableStats};
use crate::value::index::{ValueIndex, ValueSnapshot};
use crate::value::stats::ValueCounters;
use crate::version::{ProbeKey, Version};
use crate::wal::{self, WalWriter};

mod value_search;

/// A manifest larger than this is rewritten as one snapshot at the next edit.
const MANIFEST_ROTATE_BYTES: u64 = 1 << 20;

/// What readers look at: the memtable and the current version.
struct ReadState {
    mem: MemTable,
    version: Arc<Version>,
    /// The value index over `version`'s tables (with a value index).
    values: Option<Arc<ValueSnapshot>>,
}

/// What only the (serialized) writer touches.
struct Writer {
    wal: WalWriter,
    manifest: ManifestWriter,
    state: ManifestState,
    tables: BTreeMap<u64, Arc<Table>>,
    pointers: Vec<Vec<u8>>,
    stopped: bool,
    values: Option<ValueIndex>,
}

impl Writer {
    fn next_number(&mut self) -> u64 {
        self.state.new_file_number()
    }

    fn version(&self, levels: usize) -> Version {
        let records: Vec<_> = self
            .state
            .tables
            .values()
            .filter_map(|r| Some((r.clone(), self.tables.get(&r.number)?.clone())))
            .collect();
        Version::build(&records, levels)
    }
}

/// A durable LSM store whose tables carry the amq filters of its
/// [`FilterPolicy`](crate::FilterPolicy).
///
/// ```
/// # fn main() -> Result<(), amq_lsm::Error> {
/// use amq_lsm::{Db, Options};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put(b"apple", b"red")?;
/// db.put(b"banana", b"yellow")?;
/// db.delete(b"apple")?;
/// db.flush()?;
/// assert_eq!(db.get(b"banana")?, Some(b"yellow".to_vec()));
/// assert_eq!(db.get(b"apple")?, None);
/// let all: Vec<_> = db.iter().collect::<Result<_, _>>()?;
/// assert_eq!(all, vec![(b"banana".to_vec(), b"yellow".to_vec())]);
/// db.close()?;
/// # Ok(()) }
/// ```
pub struct Db {
    dir: PathBuf,
    opts: Options,
    env: Arc<dyn Env>,
    read: RwLock<ReadState>,
    writer: Mutex<Writer>,
    stats: Counters,
    value_counters: ValueCounters,
    /// Data blocks of point reads (`Options::block_cache_bytes`) and filter
    /// partitions (`Options::filter_cache_bytes`), shared by every table.
    caches: Caches,
    _lock: Box<dyn Send + Sync>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Opens the store in `dir`, creating it if needed, and recovers it: the
    /// manifest names the live tables, the write-ahead logs not yet flushed
    /// are replayed (a torn last record dropped) and flushed to a table, and
    /// files no manifest refers to are removed.
    ///
    /// Errors: [`Error::Locked`] if another `Db` has it open,
    /// [`Error::Corruption`] naming a damaged file, [`Error::UntrustedFilter`]
    /// with [`Options::strict_filters`], [`Error::Io`].
    pub fn open(dir: impl AsRef<Path>, opts: Options) -> Result<Db> {
        opts.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let env = opts.env.clone();
        env.create_dir_all(&dir)
            .map_err(Error::io("create directory", &dir))?;
        let lock_path = dir.join(filenames::LOCK);
        let lock = env.lock(&lock_path).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => Error::Locked(dir.clone()),
            _ => Error::io("lock", &lock_path)(e),
        })?;
        let names = env.list(&dir).map_err(Error::io("list directory", &dir))?;
        let kinds: Vec<(String, FileKind)> = names
            .into_iter()
            .filter_map(|n| filenames::parse(&n).map(|k| (n, k)))
            .collect();

        let mut state = match manifest::recover(&*env, &dir)? {
            Some((state, number)) => {
                // Every edit names a log created (and made durable) before
                // it, so a missing one means the manifest lost an edit.
                if !kinds.iter().any(|(_, k)| *k == FileKind::Wal(state.log_number)) {
                    return Err(Error::corruption(
                        filenames::manifest(number),
                        "the write-ahead log it names is missing (an edit was lost)",
                    ));
                }
                state
            }
            None => {
                // A first open that failed before installing CURRENT leaves
                // at most an empty log and a manifest: start afresh. Tables or
                // logged writes without CURRENT mean it was lost: refuse,
                // rather than treat the data as orphans.
                let has_data = kinds.iter().any(|(name, k)| match k {
                    FileKind::Table(_) => true,
                    FileKind::Wal(_) => env.open_read(&dir.join(name)).map_or(true, |f| !f.is_empty()),
                    _ => false,
                });
                if has_data {
                    return Err(Error::corruption(
                        filenames::CURRENT,
                        "missing while the directory holds tables or logged writes",
                    ));
                }
                ManifestState::default()
            }
        };
        // Never reuse a number already in the directory.
        let max_seen = kinds
            .iter()
            .filter_map(|(_, k)| match *k {
                FileKind::Table(n) | FileKind::Wal(n) | FileKind::Manifest(n) | FileKind::Temp(n) => Some(n),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        state.next_file = state.next_file.max(max_seen + 1).max(1);

        let stats = Counters::default();
        let caches = Caches {
            blocks: (opts.block_cache_bytes > 0).then(|| Arc::new(BlockCache::new(opts.block_cache_bytes))),
            filters: (opts.filter_cache_bytes > 0)
                .then(|| Arc::new(BlockCache::new(opts.filter_cache_bytes))),
        };
        let mut tables = BTreeMap::new();
        for rec in state.tables.values() {
            let t = open_table(&*env, &dir, rec.number, &opts, &stats, &caches)?;
            tables.insert(rec.number, t);
        }

        // Replay the logs the manifest has not seen flushed, oldest first.
        let mut logs: Vec<u64> = kinds
            .iter()
            .filter_map(|(_, k)| match *k {
                FileKind::Wal(n) if n >= state.log_number => Some(n),
                _ => None,
            })
            .collect();
        logs.sort_unstable();
        let mut mem = MemTable::default();
        for &n in &logs {
            let (batches, _torn) = wal::replay(&*env, &dir.join(filenames::wal(n)), opts.wal_recovery)?;
            for b in batches {
                for (k, e) in b.into_ops() {
                    mem.insert(k, e);
                }
            }
        }

        let wal_number = state.new_file_number();
        let wal = WalWriter::create(&*env, dir.join(filenames::wal(wal_number)), wal_number)?;
        if !mem.is_empty() {
            // The recovered writes become a level-0 table: a flush, counted
            // as one (its filter build time is counted inside).
            let start = Instant::now();
            let records: Vec<_> = state
                .tables
                .values()
                .filter_map(|r| Some((r.clone(), tables.get(&r.number)?.clone())))
                .collect();
            let version = Version::build(&records, opts.compaction.max_levels());
            let number = state.new_file_number();
            let summary = write_memtable(&*env, &dir, &opts, number, &mem, &version, &stats)?;
            let rec = record(&summary, 0, state.new_file_number());
            tables.insert(
                rec.number,
                open_table(&*env, &dir, rec.number, &opts, &stats, &caches)?,
            );
            state.tables.insert(rec.number, rec);
            inc(&stats.flushes);
            add(&stats.bytes_flushed, summary.file_bytes);
            add(&stats.flush_nanos, start.elapsed().as_nanos() as u64);
        }
        state.log_number = wal_number;
        let (manifest_number, temp) = (state.new_file_number(), state.new_file_number());
        let manifest = manifest::install_new(&*env, &dir, &state, manifest_number, temp)?;

        // Everything the new manifest does not refer to is obsolete.
        for (name, kind) in &kinds {
            let obsolete = match *kind {
                FileKind::Table(n) => !state.tables.contains_key(&n),
                FileKind::Wal(n) => n < wal_number,
                FileKind::Manifest(n) => n != manifest_number,
                FileKind::Temp(_) => true,
                FileKind::Current | FileKind::Lock => false,
            };
            if obsolete {
                // Best effort: a file left behind is removed at the next open.
                let _ = env.remove_file(&dir.join(name));
            }
        }

        let value_counters = ValueCounters::default();
        let mut w = Writer {
            wal,
            manifest,
            state,
            tables,
            pointers: Vec::new(),
            stopped: false,
            values: opts.value_index.as_ref().map(ValueIndex::new),
        };
        let version = Arc::new(w.version(opts.compaction.max_levels()));
        let values = w.values.as_mut().map(|v| {
            v.sync(&w.tables, &value_counters);
            v.snapshot()
        });
        // The recovered memtable, if any, is in a table now.
        let mem = MemTable::default();
        Ok(Db {
            dir,
            env,
            read: RwLock::new(ReadState { mem, version, values }),
            writer: Mutex::new(w),
            stats,
            value_counters,
            caches,
            opts,
            _lock: lock,
        })
    }

    fn read_state(&self) -> RwLockReadGuard<'_, ReadState> {
        self.read.read().unwrap_or_else(|e| e.into_inner())
    }

    fn read_state_mut(&self) -> RwLockWriteGuard<'_, ReadState> {
        self.read.write().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_writer(&self) -> Result<MutexGuard<'_, Writer>> {
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if w.stopped {
            return Err(Error::WritesStopped);
        }
        Ok(w)
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b)
    }

    /// Deletes `key` (writes a tombstone).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b)
    }

    /// Applies a batch atomically: it is one WAL record, so after a crash
    /// either all of it or none of it is there. With
    /// [`SyncMode::EveryWrite`] it is durable when this returns.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut w = self.lock_writer()?;
        let sync = self.opts.sync == SyncMode::EveryWrite;
        if let Err(e) = w.wal.append(&batch, sync) {
            w.stopped = true;
            return Err(e);
        }
        inc(&self.stats.writes);
        if sync {
            inc(&self.stats.wal_syncs);
        }
        let full = {
            let mut r = self.read_state_mut();
            for (k, e) in batch.into_ops() {
                r.mem.insert(k, e);
            }
            r.mem.approximate_bytes() >= self.opts.memtable_bytes
        };
        if full {
            self.stop_on_error(&mut w, |db, w| db.flush_locked(w))?;
            if self.opts.auto_compact {
                self.stop_on_error(&mut w, |db, w| db.compact_locked(w, false))?;
            }
        }
        Ok(())
    }

    fn stop_on_error(&self, w: &mut Writer, f: impl FnOnce(&Self, &mut Writer) -> Result<()>) -> Result<()> {
        let r = f(self, w);
        if r.is_err() {
            w.stopped = true;
        }
        r
    }

    /// The value of `key`, or `None` if it was never set or was deleted.
    ///
    /// The key is hashed once ([`amq::hash_key`]), when the first table is
    /// consulted (a memtable hit needs no hash), and that hash is handed to
    /// the filter of every table consulted: the memtable, then level 0
    /// newest to oldest, then per deeper run the one table whose key range
    /// holds the key. Per table: key range, filter, index, data block.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.lookup(key, false)
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
        let mut hashes = vec![0u64; keys.len()];
        for &i in &pending {
            hashes[i] = hash_key(keys[i].as_ref());
        }
        counts.key_hashes = pending.len() as u64;
        let r = multi_lookup_tables(&version, keys, &hashes, &mut pending, &mut results, &mut counts);
        self.stats.add_reads(&counts);
        r?;
        Ok(results
            .into_iter()
            .map(|e| e.and_then(Entry::into_value))
            .collect())
    }

    /// `get`, but hashing the key again for every table consulted: what a
    /// store without hash sharing does. For the hash-sharing benchmark only.
    #[doc(hidden)]
    pub fn get_rehashing_per_table(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.lookup(key, true)
    }

    /// The filters a point lookup asks, in the order it asks them (newest
    /// run first; a run of several tables, or a table without a trusted
    /// filter, has none), as the store holds them in memory. For the
    /// hash-sharing benchmark only: its per-table reference is these
    /// filters' own `contains_hash`, where they lie.
    #[doc(hidden)]
    pub fn walked_filters(&self) -> Vec<Arc<AnyFilter>> {
        let version = self.read_state().version.clone();
        let filters = version.walked_filters().cloned().collect();
        filters
    }

    #[inline]
    fn lookup(&self, key: &[u8], rehash: bool) -> Result<Option<Vec<u8>>> {
        inc(&self.stats.gets);
        let version = {
            let r = self.read_state();
            if let Some(e) = r.mem.get(key) {
                return Ok(e.clone().into_value());
            }
            r.version.clone()
        };
        let mut counts = ReadCounts::default();
        let found = lookup_tables(&version, key, rehash, &mut counts);
        self.stats.add_reads(&counts);
        Ok(found?.and_then(Entry::into_value))
    }

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
    pub fn iter(&self) -> Scan {
        self.scan::<&[u8], _>(..)
    }

    /// Writes the memtable out as a level-0 table (nothing if it is empty),
    /// then compacts if thresholds are passed and
    /// [`Options::auto_compact`] is set.
    pub fn flush(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        self.stop_on_error(&mut w, |db, w| db.flush_locked(w))?;
        if self.opts.auto_compact {
            self.stop_on_error(&mut w, |db, w| db.compact_locked(w, false))?;
        }
        Ok(())
    }

    /// Flushes, then merges every table into one run at the deepest level
    /// holding data, dropping every tombstone and overwritten value.
    pub fn compact(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        self.stop_on_error(&mut w, |db, w| db.flush_locked(w))?;
        self.stop_on_error(&mut w, |db, w| db.compact_locked(w, true))
    }

    /// Makes every write so far durable (syncs the WAL). Needed only with
    /// [`SyncMode::OnSync`].
    pub fn sync(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        self.stop_on_error(&mut w, |db, w| {
            w.wal.sync()?;
            inc(&db.stats.wal_syncs);
            Ok(())
        })
    }

    /// Syncs the WAL and closes the store. Dropping a `Db` closes it too,
    /// without the sync (writes not yet synced with [`SyncMode::OnSync`]
    /// then survive a process exit but not a power cut).
    pub fn close(self) -> Result<()> {
        if self.opts.sync == SyncMode::OnSync {
            self.sync()?;
        }
        Ok(())
    }

    /// The counters and the shape of the tree now.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.snapshot();
        let (entries, version) = {
            let r = self.read_state();
            (r.mem.len(), r.version.clone())
        };
        s.memtable_entries = entries;
        if let Some(c) = &self.caches.blocks {
            (s.block_cache_hits, s.block_cache_misses, s.block_cache_bytes) = c.counters();
        }
        if let Some(c) = &self.caches.filters {
            (s.filter_cache_hits, s.filter_cache_misses, s.filter_cache_bytes) = c.counters();
        }
        s.levels = version
            .levels
            .iter()
            .map(|l| {
                let mut ls = LevelStats {
                    runs: l.runs.len(),
                    ..LevelStats::default()
                };
                for (r, run) in l.runs.iter().enumerate() {
                    let entries: u64 = run.tables.iter().map(|t| t.entries()).sum();
                    for t in &run.tables {
                        let fpr = t.expected_fpr();
                        ls.predicted_reads_per_miss += fpr * t.entries() as f64 / entries.max(1) as f64;
                        ls.table_stats.push(TableStats {
                            run: r,
                            smallest: t.smallest().to_vec(),
                            largest: t.largest().to_vec(),
                            entries: t.entries(),
                            expected_fpr: fpr,
                        });
                    }
                }
                for t in l.tables() {
                    ls.tables += 1;
                    ls.entries += t.entries();
                    ls.file_bytes += t.file_bytes();
                    ls.filter_bytes += t.filter_bytes();
                    ls.pinned_filter_bytes += t.pinned_filter_bytes();
                    ls.untrusted_filters += usize::from(t.filter_untrusted().is_some());
                    if !ls.filter_kinds.contains(&t.filter_kind()) {
                        ls.filter_kinds.push(t.filter_kind());
                    }
                }
                ls
            })
            .collect();
        s
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn flush_locked(&self, w: &mut Writer) -> Result<()> {
        let r = self.read_state();
        if r.mem.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        let version = r.version.clone();
        let new_wal_number = w.next_number();
        let new_wal = WalWriter::create(
            &*self.env,
            self.dir.join(filenames::wal(new_wal_number)),
            new_wal_number,
        )?;
        let number = w.next_number();
        let summary = write_memtable(
            &*self.env,
            &self.dir,
            &self.opts,
            number,
            &r.mem,
            &version,
            &self.stats,
        )?;
        drop(r);
        let run = w.next_number();
        let rec = record(&summary, 0, run);
        self.env
            .sync_dir(&self.dir)
            .map_err(Error::io("sync directory", &self.dir))?;
        let table = open_table(
            &*self.env,
            &self.dir,
            rec.number,
            &self.opts,
            &self.stats,
            &self.caches,
        )?;
        let edit = Edit {
            next_file: Some(w.state.next_file),
            log_number: Some(new_wal_number),
            added: vec![rec],
            removed: Vec::new(),
        };
        self.log_edit(w, &edit)?;
        w.tables.insert(table.number(), table);
        let old_wal = std::mem::replace(&mut w.wal, new_wal);
        self.install(w, true);
        let _ = self
            .env
            .remove_file(&self.dir.join(filenames::wal(old_wal.number)));
        inc(&self.stats.flushes);
        add(&self.stats.bytes_flushed, summary.file_bytes);
        add(&self.stats.flush_nanos, start.elapsed().as_nanos() as u64);
        self.maybe_rotate_manifest(w)
    }

    /// Appends an edit to the manifest (synced) and applies it to the state.
    fn log_edit(&self, w: &mut Writer, edit: &Edit) -> Result<()> {
        w.manifest.append(edit)?;
        w.state
            .apply(edit)
            .map_err(|what| Error::corruption(filenames::manifest(w.manifest.number), what))
    }

    /// Publishes the writer's state to readers, clearing the memtable if it
    /// was just flushed.
    fn install(&self, w: &mut Writer, clear_memtable: bool) {
        let version = Arc::new(w.version(self.opts.compaction.max_levels()));
        let values = match &mut w.values {
            Some(v) => {
                v.sync(&w.tables, &self.value_counters);
                Some(v.snapshot())
            }
            None => None,
        };
        let mut r = self.read_state_mut();
        r.version = version;
        r.values = values;
        if clear_memtable {
            r.mem = MemTable::default();
        }
    }

    fn maybe_rotate_manifest(&self, w: &mut Writer) -> Result<()> {
        if w.manifest.bytes < MANIFEST_ROTATE_BYTES {
            return Ok(());
        }
        let old = w.manifest.number;
        let (number, temp) = (w.next_number(), w.next_number());
        w.manifest = manifest::install_new(&*self.env, &self.dir, &w.state, number, temp)?;
        let _ = self.env.remove_file(&self.dir.join(filenames::manifest(old)));
        Ok(())
    }

    fn compact_locked(&self, w: &mut Writer, full: bool) -> Result<()> {
        if full {
            let version = self.read_state().version.clone();
            if let Some(c) = compaction::full(&version) {
                self.run_compaction(w, c)?;
            }
            return Ok(());
        }
        loop {
            let version = self.read_state().version.clone();
            let Some(c) = compaction::pick(&version, &self.opts.compaction, &mut w.pointers) else {
                return Ok(());
            };
            self.run_compaction(w, c)?;
        }
    }

    fn run_compaction(&self, w: &mut Writer, c: Compaction) -> Result<()> {
        let start = Instant::now();
        let version = self.read_state().version.clone();
        // The output is bottommost if nothing lies deeper than it, apart
        // from the inputs themselves.
        let inputs: Vec<u64> = c.inputs().map(|t| t.number()).collect();
        let bottommost = version
            .tables()
            .all(|(level, t)| level <= c.output_level || inputs.contains(&t.number()));
        let merger = Merger {
            env: &*self.env,
            dir: &self.dir,
            block_bytes: self.opts.block_bytes,
            table_bytes: self.opts.table_bytes,
            filter: self.opts.filter_policy.for_new_table(
                c.output_level,
                bottommost,
                &shapes_after(&version, &c),
                &built_filters(&version, &inputs),
            ),
            values: self.opts.value_index.as_ref(),
            filter_partition_bytes: self.opts.filter_partition_bytes,
        };
        let mut outputs: Vec<TableSummary> = Vec::new();
        let result = merger.run(
            compaction::merged_inputs(&c),
            c.drop_tombstones,
            &mut || w.next_number(),
            &mut outputs,
        );
        if let Err(e) = result {
            for o in &outputs {
                let _ = self.env.remove_file(&self.dir.join(filenames::table(o.number)));
            }
            return Err(e);
        }
        self.env
            .sync_dir(&self.dir)
            .map_err(Error::io("sync directory", &self.dir))?;
        let run = match c.output_run {
            Some(r) => r,
            None => w.next_number(),
        };
        let mut opened = Vec::with_capacity(outputs.len());
        for o in &outputs {
            opened.push(open_table(
                &*self.env,
                &self.dir,
                o.number,
                &self.opts,
                &self.stats,
                &self.caches,
            )?);
            add(&self.stats.filter_build_nanos, o.filter_build_nanos);
            add(&self.stats.bytes_compacted, o.file_bytes);
        }
        let edit = Edit {
            next_file: Some(w.state.next_file),
            log_number: None,
            added: outputs
                .iter()
                .map(|o| record(o, c.output_level as u32, run))
                .collect(),
            removed: inputs.clone(),
        };
        self.log_edit(w, &edit)?;
        for t in opened {
            w.tables.insert(t.number(), t);
        }
        for n in &inputs {
            w.tables.remove(n);
        }
        self.install(w, false);
        for n in &inputs {
            let _ = self.env.remove_file(&self.dir.join(filenames::table(*n)));
        }
        inc(&self.stats.compactions);
        add(&self.stats.compaction_nanos, start.elapsed().as_nanos() as u64);
        self.maybe_rotate_manifest(w)
    }
}

/// The newest entry of `key` in the tables of `version`: per run, the one
/// table whose range holds the key; per table, its filter, its index and one
/// data block. The key is hashed once, when the first table's range holds
/// it, and that hash, prepared once ([`PreparedHash`]: for a blocked Bloom
/// filter, the key's probe mask), probes every filter; `rehash` (the
/// benchmark's store without hash sharing) hashes it again for every table
/// instead.
#[inline]
fn lookup_tables(
    version: &Version,
    key_bytes: &[u8],
    rehash: bool,
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
    let walk = TableWalk {
        version,
        key,
        key_bytes,
    };
    if rehash {
        return walk.run(
            start,
            Rehashing {
                key: key_bytes,
                last: 0,
            },
            counts,
        );
    }
    counts.key_hashes += 1;
    walk.run(start, Shared(PreparedHash::new(hash_key(key_bytes))), counts)
}

/// How a lookup hashes its key for each table's filter: what differs
/// between sharing one hash ([`Shared`]) and the benchmark's store without
/// sharing ([`Rehashing`]).
trait KeyHashing {
    /// Whether `filter` may hold the key.
    fn may_contain(&mut self, filter: &AnyFilter, counts: &mut ReadCounts) -> bool;
    /// Whether the filter the inner loop found may hold the key (the same
    /// answer as `may_contain` on it).
    fn may_contain_settle(&mut self, filter: SettleFilter<'_>, counts: &mut ReadCounts) -> bool {
        self.may_contain(filter.filter(), counts)
    }
    /// The blocked Bloom probe the last blocked filter was asked with, for
    /// the inner loop's runs of blocked filters (`None`: ask each filter
    /// through `may_contain_settle`).
    fn blocked_probe(&self) -> Option<&BlockedProbe> {
        None
    }
    /// The key's hash, for a table that reads further (`probed`: after its
    /// filter was asked).
    fn hash(&mut self, probed: bool, counts: &mut ReadCounts) -> u64;
}

/// One hash, prepared once, for every table.
struct Shared(PreparedHash);

impl KeyHashing for Shared {
    #[inline(always)]
    fn may_contain(&mut self, filter: &AnyFilter, _: &mut ReadCounts) -> bool {
        filter.contains_prepared(&mut self.0)
    }
    #[inline(always)]
    fn may_contain_settle(&mut self, filter: SettleFilter<'_>, _: &mut ReadCounts) -> bool {
        match filter {
            SettleFilter::Blocked(blocks, _) => blocks.contains_prepared(&mut self.0),
            SettleFilter::Any(f) => f.contains_prepared(&mut self.0),
        }
    }
    #[inline(always)]
    fn blocked_probe(&self) -> Option<&BlockedProbe> {
        self.0.prepared_blocked()
    }
    #[inline(always)]
    fn hash(&mut self, _: bool, _: &mut ReadCounts) -> u64 {
        self.0.hash()
    }
}

/// The key hashed again for every table, and each filter probed with its
/// plain query (`contains_hash`, which prepares nothing ahead): the
/// benchmark's store without hash sharing. A table read after a filter's
/// "maybe" reuses that filter's hash, as such a store would.
struct Rehashing<'k> {
    key: &'k [u8],
    /// The hash the last filter was probed with.
    last: u64,
}

impl KeyHashing for Rehashing<'_> {
    fn may_contain(&mut self, filter: &AnyFilter, counts: &mut ReadCounts) -> bool {
        counts.key_hashes += 1;
        self.last = hash_key(self.key);
        filter.contains_hash(self.last)
    }
    fn hash(&mut self, probed: bool, counts: &mut ReadCounts) -> u64 {
        if !probed {
            counts.key_hashes += 1;
            self.last = hash_key(self.key);
        }
        self.last
    }
}

/// One lookup's walk through the tables whose ranges hold its key.
struct TableWalk<'v, 'k> {
    version: &'v Version,
    key: ProbeKey<'k>,
    key_bytes: &'k [u8],
}

impl TableWalk<'_, '_> {
    /// Each candidate table in age order, from run `start` on, its filter
    /// asked as it is found.
    ///
    /// Two loops. The inner one, [`settle_by_filters`], runs through every
    /// run a filter settles (one table, the key strictly inside its range
    /// on eight bytes, the filter says no) and stops at the first run that
    /// needs more; this outer one handles that run (a range to check in
    /// full, a run of several tables, no filter, or a filter's "maybe") and
    /// goes back in. A miss against N overlapping runs spends nearly all
    /// its time in the inner loop, so the inner loop is kept to what those
    /// runs need (see its comment for what it measured).
    #[inline(always)]
    fn run<H: KeyHashing>(
        self,
        start: usize,
        mut hashing: H,
        counts: &mut ReadCounts,
    ) -> Result<Option<Entry>> {
        // Counted here and added once: a counter in memory is a store per
        // table.
        let (mut negatives, mut read_on) = (0u64, 0u64);
        let mut found = Ok(None);
        let probes = self.version.run_probes();
        let settles = self.version.filter_settles();
        let top = self.key.top();
        let mut position = start;
        while position < probes.len() {
            let rest = settles.get(position..).unwrap_or_default();
            let settled = settle_by_filters(rest, top, &mut hashing, counts);
            negatives += settled.runs as u64;
            position += settled.runs;
            let Some(p) = probes.get(position) else {
                break;
            };
            let Some(c) = self.version.locate(position as u32, p, self.key) else {
                position += 1;
                continue;
            };
            position += 1;
            let answer = if settled.maybe {
                // Asked in the inner loop already.
                Some(true)
            } else {
                c.filter.map(|f| hashing.may_contain(f, counts))
            };
            if answer == Some(false) {
                negatives += 1;
                continue;
            }
            read_on += 1;
            let hash = hashing.hash(answer.is_some(), counts);
            match self
                .version
                .table(&c)
                .get_given(self.key_bytes, hash, answer, counts)
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
/// [`settle_each`] asks any filter through `hashing`, and after a blocked
/// Bloom filter says no, `settle_blocked` (`settle.rs`) takes the runs of
/// blocked filters of the same probe count that follow, with the prepared
/// probe held by shared reference so its mask stays in registers.
///
/// Measured at 256 tables (`lsm_profile_miss 256`, alternated;
/// `docs/lsm.md`): the one loop before these read the 48-byte run summary
/// and kept its negatives counter on the stack, 4.6-4.8 ns per BlockedBloom
/// table; one loop over these entries, 3.7-3.9 (`cc0f458`); with each
/// blocked filter's blocks in its entry, 2.8-2.9 (`d8d5e61`); with the
/// blocked filters' own loop, 2.5.
#[inline(always)]
fn settle_by_filters<H: KeyHashing>(
    settles: &[FilterSettles],
    top: u64,
    hashing: &mut H,
    counts: &mut ReadCounts,
) -> Settled {
    let mut runs = 0;
    loop {
        let (settled, stop) = settle_each(settles.get(runs..).unwrap_or_default(), top, hashing, counts);
        runs += settled;
        match stop {
            Stop::Maybe => return Settled { runs, maybe: true },
            Stop::Other => return Settled { runs, maybe: false },
            Stop::AfterBlocked => {
                if let Some(probe) = hashing.blocked_probe() {
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
/// through `hashing`, up to the first that needs more or just past the
/// first blocked Bloom filter; how many, and why it stopped. A store of
/// other kinds (Ribbon, fuse, ...) spends its walk here, in a loop with
/// nothing else in it: with the blocked filters' loop in the same loop body,
/// a Ribbon table cost 0.8 ns more (18.1-18.2 against 17.1-17.5 ns at 256
/// tables, `KIND=Ribbon lsm_profile_miss 256`, three runs alternated).
#[inline(always)]
fn settle_each<H: KeyHashing>(
    settles: &[FilterSettles],
    top: u64,
    hashing: &mut H,
    counts: &mut ReadCounts,
) -> (usize, Stop) {
    for (runs, s) in settles.iter().enumerate() {
        let Some(filter) = s.filter_for(top) else {
            return (runs, Stop::Other);
        };
        let blocked = matches!(filter, SettleFilter::Blocked(..));
        if hashing.may_contain_settle(filter, counts) {
            return (runs, Stop::Maybe);
        }
        if blocked {
            return (runs + 1, Stop::AfterBlocked);
        }
    }
    (settles.len(), Stop::Other)
}

/// `multi_get`'s walk: run by run, the pending keys grouped by table.
fn multi_lookup_tables<K: AsRef<[u8]>>(
    version: &Version,
    keys: &[K],
    hashes: &[u64],
    pending: &mut Vec<usize>,
    results: &mut [Option<Entry>],
    counts: &mut ReadCounts,
) -> Result<()> {
    let probe_keys: Vec<Option<ProbeKey<'_>>> = keys.iter().map(|k| version.probe_key(k.as_ref())).collect();
    let mut group_keys: Vec<&[u8]> = Vec::new();
    let mut group_hashes: Vec<u64> = Vec::new();
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
            for &(_, i) in group {
                group_keys.push(keys[i].as_ref());
                group_hashes.push(hashes[i]);
            }
            run.run().tables[group[0].0 as usize].get_many(&group_keys, &group_hashes, counts, |j, e| {
                results[group[j].1] = Some(e);
            })?;
        }
        pending.retain(|&i| results[i].is_none());
    }
    Ok(())
}

/// The tree's shape once compaction `c` is done (what Monkey sizes the
/// outputs' filters for): the inputs' keys move to the output level, runs
/// emptied by it disappear, and the output joins a run there or starts one.
fn shapes_after(version: &Version, c: &Compaction) -> Vec<LevelShape> {
    let mut shapes: Vec<LevelShape> = version.levels.iter().map(|l| l.shape()).collect();
    if shapes.len() <= c.output_level {
        shapes.resize(c.output_level + 1, LevelShape::default());
    }
    let inputs: Vec<u64> = c.inputs().map(|t| t.number()).collect();
    for (level, l) in version.levels.iter().enumerate() {
        for run in &l.runs {
            let moved: u64 = run
                .tables
                .iter()
                .filter(|t| inputs.contains(&t.number()))
                .map(|t| t.entries())
                .sum();
            shapes[level].keys -= moved;
            shapes[c.output_level].keys += moved;
            let whole = !run.tables.is_empty() && run.tables.iter().all(|t| inputs.contains(&t.number()));
            if whole {
                shapes[level].runs -= 1;
            }
        }
    }
    if c.output_run.is_none() || shapes[c.output_level].runs == 0 {
        shapes[c.output_level].runs += 1;
    }
    shapes
}

/// Per level, the keys and filter bits of the tables that stay when the
/// tables numbered `leaving` are replaced.
fn built_filters(version: &Version, leaving: &[u64]) -> Vec<Built> {
    version
        .levels
        .iter()
        .map(|l| {
            let mut b = Built::default();
            for t in l.tables().filter(|t| !leaving.contains(&t.number())) {
                b.keys += t.entries();
                b.bits += t.filter_bytes() * 8;
            }
            b
        })
        .collect()
}

/// Writes `mem` as a level-0 table (synced).
fn write_memtable(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    number: u64,
    mem: &MemTable,
    version: &Version,
    stats: &Counters,
) -> Result<TableSummary> {
    let path = dir.join(filenames::table(number));
    // The tree as it will be with this table in level 0.
    let mut shapes: Vec<LevelShape> = version.levels.iter().map(|l| l.shape()).collect();
    if shapes.is_empty() {
        shapes.push(LevelShape::default());
    }
    shapes[0].keys += mem.len() as u64;
    shapes[0].runs += 1;
    let filter =
        opts.filter_policy
            .for_new_table(0, version.nothing_below(0), &shapes, &built_filters(version, &[]));
    let mut t = TableWriter::create(env, path.clone(), number, opts.block_bytes, filter)?
        .with_value_filter(opts.value_index.as_ref())
        .with_filter_partitions(opts.filter_partition_bytes);
    let written = (|| {
        for (k, e) in mem.iter() {
            t.add(k, e)?;
        }
        t.finish()
    })();
    match written {
        Ok(summary) => {
            add(&stats.filter_build_nanos, summary.filter_build_nanos);
            Ok(summary)
        }
        Err(e) => {
            let _ = env.remove_file(&path);
            Err(e)
        }
    }
}

fn open_table(
    env: &dyn Env,
    dir: &Path,
    number: u64,
    opts: &Options,
    stats: &Counters,
    caches: &Caches,
) -> Result<Arc<Table>> {
    let t = Table::open(
        env,
        &dir.join(filenames::table(number)),
        number,
        opts.strict_filters,
        caches.clone(),
    )?;
    if t.filter_untrusted().is_some() {
        inc(&stats.untrusted_filters);
    }
    Ok(Arc::new(t))
}

fn record(s: &TableSummary, level: u32, run: u64) -> TableRecord {
    TableRecord {
        level,
        run,
        number: s.number,
        file_bytes: s.file_bytes,
        entries: s.entries,
        smallest: s.smallest.clone(),
        largest: s.largest.clone(),
    }
}

/// The live entries of a range, from [`Db::scan`].
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

#[cfg(test)]
mod tests {
    use super::*;
    use amq::{FilterKind, FilterSizing};
    use proptest::prelude::*;

    /// Blocked Bloom filters of two probe counts, two of each over
    /// different keys (so that one says "maybe" where the one before it of
    /// the same count said no), and a Ribbon filter: `filters()[i]` holds
    /// the keys `250 * i..250 * i + 500`.
    fn filters() -> Vec<Arc<AnyFilter>> {
        let build = |kind, fpr, i: u64| {
            let hashes: Vec<u64> = (250 * i..250 * i + 500)
                .map(|k| hash_key(&k.to_le_bytes()))
                .collect();
            Arc::new(AnyFilter::build(kind, FilterSizing::Fpr(fpr), &hashes).unwrap())
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
                match s.filter_for(top) {
                    None => { want = Settled { runs: i, maybe: false }; break; }
                    Some(f) if f.filter().contains_hash(h) => { want = Settled { runs: i, maybe: true }; break; }
                    Some(_) => {}
                }
            }
            let mut counts = ReadCounts::default();
            let got = settle_by_filters(&settles, top, &mut Shared(PreparedHash::new(h)), &mut counts);
            prop_assert_eq!((got.runs, got.maybe), (want.runs, want.maybe));
            let mut rehashing = Rehashing { key: &key.to_le_bytes(), last: 0 };
            let got = settle_by_filters(&settles, top, &mut rehashing, &mut counts);
            prop_assert_eq!((got.runs, got.maybe), (want.runs, want.maybe));
        }
    }
}
