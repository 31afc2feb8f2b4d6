//! [`Db::open`]: opening a store and recovering it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use super::tables::{open_table, record, write_memtable, Flush};
use super::{Db, ReadState, Writer};
use amq::range::SampledScans;

use crate::cache::BlockCache;
use crate::error::{Error, Result};
use crate::filenames::{self, FileKind};
use crate::manifest::{self, ManifestState};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::Caches;
use crate::stats::{add, inc, Counters};
use crate::value::index::ValueIndex;
use crate::value::stats::ValueCounters;
use crate::version::Version;
use crate::wal::{self, WalWriter};

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

        let stats = Arc::new(Counters::default());
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
            // No scan yet: the recovered table keeps the full resolution.
            let flush = Flush {
                number,
                mem: &mem,
                version: &version,
                scans: SampledScans::default(),
            };
            let summary = write_memtable(&*env, &dir, &opts, &stats, flush)?;
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
            scans: amq::range::ScanSample::new(opts.range_fit_scans),
            opts,
            _lock: lock,
        })
    }
}
