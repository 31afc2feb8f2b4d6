//! The write-ahead log: every write is appended here, as one checksummed
//! record per [`WriteBatch`](crate::WriteBatch), before it reaches the
//! memtable, and (with [`SyncMode::EveryWrite`](crate::SyncMode)) synced
//! before the write returns. A flush makes a log obsolete; reopening replays
//! the logs the manifest has not yet seen flushed.
//!
//! Records use the framing of [`crate::log`]; a torn last record is dropped.

use std::path::{Path, PathBuf};

use crate::batch::WriteBatch;
use crate::env::{Env, WritableFile};
use crate::error::{Error, Result};
use crate::filenames::file_name;
use crate::log::{encode_record, read_records, Recovery};

pub(crate) struct WalWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    pub(crate) number: u64,
}

impl WalWriter {
    /// Creates an empty log. The caller syncs the directory before relying
    /// on its name.
    pub(crate) fn create(env: &dyn Env, path: PathBuf, number: u64) -> Result<Self> {
        let file = env.create(&path).map_err(Error::io("create WAL", &path))?;
        Ok(WalWriter { file, path, number })
    }

    /// Appends one batch and hands it to the OS; syncs too if `sync`.
    pub(crate) fn append(&mut self, batch: &WriteBatch, sync: bool) -> Result<()> {
        let record = encode_record(&batch.encode());
        self.file
            .append(&record)
            .map_err(Error::io("append to WAL", &self.path))?;
        self.file.flush().map_err(Error::io("flush WAL", &self.path))?;
        if sync {
            self.sync()?;
        }
        Ok(())
    }

    pub(crate) fn sync(&mut self) -> Result<()> {
        self.file.sync().map_err(Error::io("sync WAL", &self.path))
    }
}

/// Every batch of the log at `path`, in order, and how many bytes of torn
/// tail were dropped.
pub(crate) fn replay(env: &dyn Env, path: &Path, mode: Recovery) -> Result<(Vec<WriteBatch>, usize)> {
    let name = file_name(path);
    let bytes = env.read_all(path).map_err(Error::io("read WAL", path))?;
    let records = read_records(&bytes, mode).map_err(|what| Error::corruption(&name, what))?;
    let mut batches = Vec::with_capacity(records.records.len());
    for r in records.records {
        // A record whose checksum holds but whose batch does not decode was
        // written wrong, not torn: never skip it silently.
        batches.push(WriteBatch::decode(r).ok_or_else(|| Error::corruption(&name, "WAL batch encoding"))?);
    }
    Ok((batches, records.dropped_bytes))
}
