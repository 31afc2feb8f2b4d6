//! [`Db`]: the store, one concern per module: [`open`](self::open) (open
//! and recovery), [`write`](self::write) (the write path: WAL, memtable),
//! [`read`](self::read) (point reads: `get`, `multi_get`, the filter walk),
//! [`scan`](self::scan) (range scans), [`maintenance`](self::maintenance)
//! (flush, compaction, sync, close, stats), [`tables`](self::tables) (table
//! files: writing a memtable out, opening a table), and
//! [`value_search`](self::value_search) (search by value).
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
//! A write is in the WAL, handed to the operating system, before it is
//! applied; with [`SyncMode::EveryWrite`](crate::SyncMode::EveryWrite) the
//! WAL is also synced before the write returns. A flush writes and syncs the
//! table, syncs the directory, and only then records the table and the new
//! WAL in the manifest (synced) and deletes the old WAL. Any I/O error on the
//! write path stops writes ([`Error::WritesStopped`]) until the store is
//! reopened, because the state on disk is then unknown; reads go on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::manifest::{ManifestState, ManifestWriter};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::{Caches, Table};
use crate::stats::Counters;
use crate::value::index::{ValueIndex, ValueSnapshot};
use crate::value::stats::ValueCounters;
use crate::version::Version;
use crate::wal::WalWriter;

#[cfg(feature = "bench-internals")]
mod bench;
mod maintenance;
mod open;
mod read;
pub(crate) mod scan;
mod tables;
mod value_search;
mod write;

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
    stats: Arc<Counters>,
    value_counters: ValueCounters,
    /// Data blocks of point reads (`Options::block_cache_bytes`) and filter
    /// partitions (`Options::filter_cache_bytes`), shared by every table.
    caches: Caches,
    /// The latest bounded scans, which the tables written next fit their
    /// range filters to ([`amq::range::fit_to_scans`]).
    scans: amq::range::ScanSample,
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

    /// Runs `f`; an error stops writes until the store is reopened.
    fn stop_on_error(&self, w: &mut Writer, f: impl FnOnce(&Self, &mut Writer) -> Result<()>) -> Result<()> {
        let r = f(self, w);
        if r.is_err() {
            w.stopped = true;
        }
        r
    }

    /// The store's directory.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// assert_eq!(db.path(), dir.path());
    /// # Ok(()) }
    /// ```
    pub fn path(&self) -> &Path {
        &self.dir
    }
}
