//! Maintenance: [`Db::flush`], [`Db::compact`], [`Db::sync`],
//! [`Db::close`] and [`Db::stats`], and what they run under the writer's
//! lock: the flush, the compactions, the manifest edits and installing a
//! new version for readers.

use std::sync::Arc;
use std::time::Instant;

use super::tables::{built_filters, open_table, record, write_memtable, Flush};
use super::{Db, Writer};
use crate::compaction::{self, Compaction, Merger};
use crate::error::{Error, Result};
use crate::filenames;
use crate::manifest::{self, Edit};
use crate::memtable::MemTable;
use crate::monkey::LevelShape;
use crate::options::SyncMode;
use crate::sstable::TableSummary;
use crate::stats::{add, inc, LevelStats, Stats, TableStats};
use crate::version::Version;
use crate::wal::WalWriter;

/// A manifest larger than this is rewritten as one snapshot at the next edit.
const MANIFEST_ROTATE_BYTES: u64 = 1 << 20;

impl Db {
    /// Writes the memtable out as a level-0 table (nothing if it is empty),
    /// then compacts if thresholds are passed and
    /// [`Options::auto_compact`](crate::Options::auto_compact) is set.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert_eq!((db.stats().memtable_entries, db.stats().levels[0].tables), (0, 1));
    /// # Ok(()) }
    /// ```
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
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("a", "1")?;
    /// db.flush()?;
    /// db.delete("a")?;
    /// db.compact()?;
    /// assert_eq!(db.stats().table_entries(), 0); // the tombstone and the value are gone
    /// # Ok(()) }
    /// ```
    pub fn compact(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        self.stop_on_error(&mut w, |db, w| db.flush_locked(w))?;
        self.stop_on_error(&mut w, |db, w| db.compact_locked(w, true))
    }

    /// Makes every write so far durable (syncs the WAL). Needed only with
    /// [`SyncMode::OnSync`](crate::SyncMode::OnSync).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.sync()?; // now it survives a power cut too
    /// assert_eq!(db.stats().wal_syncs, 1);
    /// # Ok(()) }
    /// ```
    pub fn sync(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        self.stop_on_error(&mut w, |db, w| {
            w.wal.sync()?;
            inc(&db.stats.wal_syncs);
            Ok(())
        })
    }

    /// Syncs the WAL and closes the store. Dropping a `Db` closes it too,
    /// without the sync (writes not yet synced with [`SyncMode::OnSync`](crate::SyncMode::OnSync)
    /// then survive a process exit but not a power cut).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.close()?;
    /// # Ok(()) }
    /// ```
    pub fn close(self) -> Result<()> {
        if self.opts.sync == SyncMode::OnSync {
            self.sync()?;
        }
        Ok(())
    }

    /// The counters and the shape of the tree now ([`Stats`]). `{}` prints
    /// them as a readable table, a few lines long; `{:#?}` prints every
    /// field, with the tables' keys as escaped byte strings
    /// (`b"user:42\x00"`).
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// let s = db.stats();
    /// assert_eq!((s.writes, s.flushes, s.table_entries()), (1, 1, 1));
    /// assert!(format!("{s:#?}").contains(r#"smallest: b"k","#));
    /// println!("{s}");
    /// # Ok(()) }
    /// ```
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
                    ls.range_filter_bytes += t.range_filter_bytes().unwrap_or(0) as u64;
                    ls.range_tables_infix += usize::from(t.range_filter_is_infix());
                    ls.untrusted_range_filters += usize::from(t.range_filter_untrusted().is_some());
                    if let Some(p) = t.filter_prefixes() {
                        ls.prefix_tables += 1;
                        ls.prefixes += p;
                    }
                    let collapsed = t.range_keys_collapsed().unwrap_or(0);
                    ls.range_tables_collapsing += usize::from(collapsed > 0);
                    ls.range_keys_collapsed += collapsed;
                    ls.range_tables_coarsened += usize::from(t.range_map_shift() > 0);
                    if !ls.filter_kinds.contains(&t.filter_kind()) {
                        ls.filter_kinds.push(t.filter_kind());
                    }
                }
                ls
            })
            .collect();
        s
    }

    pub(super) fn flush_locked(&self, w: &mut Writer) -> Result<()> {
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
        let flush = Flush {
            number,
            mem: &r.mem,
            version: &version,
            scans: self.scans.snapshot(),
        };
        let summary = write_memtable(&*self.env, &self.dir, &self.opts, &self.stats, flush)?;
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

    pub(super) fn compact_locked(&self, w: &mut Writer, full: bool) -> Result<()> {
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
            opts: &self.opts,
            filter: self.opts.filter_policy.for_new_table(
                c.output_level,
                bottommost,
                &shapes_after(&version, &c),
                &built_filters(&version, &inputs),
            ),
            range_filter: self
                .opts
                .range_filter_policy
                .for_level(c.output_level, bottommost),
            scans: self.scans.snapshot(),
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
            if o.range_filter_not_built {
                inc(&self.stats.range_filters_not_built);
            }
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
