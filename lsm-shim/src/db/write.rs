//! The write path: [`Db::put`], [`Db::delete`] and [`Db::write`]. A write
//! is appended to the WAL, then applied to the memtable; a full memtable is
//! flushed (and the tree compacted) in the writing thread.

use super::Db;
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::options::SyncMode;
use crate::stats::inc;

impl Db {
    /// Sets `key` to `value` (anything that is bytes: `&[u8]`, `Vec<u8>`,
    /// `&str`, `String`, byte arrays). One WAL record; see
    /// [`SyncMode`] for when it is durable.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("user:1", "Ada")?;
    /// db.put(b"user:2", vec![0u8, 1])?;
    /// assert_eq!(db.get("user:1")?, Some(b"Ada".to_vec()));
    /// # Ok(()) }
    /// ```
    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b)
    }

    /// Deletes `key` (writes a tombstone).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.delete("k")?;
    /// assert_eq!(db.get("k")?, None);
    /// # Ok(()) }
    /// ```
    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b)
    }

    /// Applies a batch atomically: it is one WAL record, so after a crash
    /// either all of it or none of it is there. With
    /// [`SyncMode::EveryWrite`](crate::SyncMode::EveryWrite) it is durable when this returns (one sync
    /// for the whole batch).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// let mut batch = amq_lsm::WriteBatch::new();
    /// batch.put("a", "1").put("b", "2").delete("c");
    /// db.write(batch)?;
    /// assert_eq!(db.get("b")?, Some(b"2".to_vec()));
    /// # Ok(()) }
    /// ```
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
}
