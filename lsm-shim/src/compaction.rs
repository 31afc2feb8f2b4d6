//! Compaction: which tables to merge next (leveled or tiered), and the merge
//! itself, which writes the output tables.
//!
//! **Leveled** (LevelDB's scheme). Level 0 holds one run per flush. When it
//! has `l0_trigger` runs, all of them and the level-1 tables they overlap are
//! merged into level 1. A level `n ≥ 1` whose bytes exceed
//! `base_level_bytes · size_ratio^(n-1)` moves one table (chosen round-robin
//! through the key space) into level `n + 1`, merged with the tables there
//! that it overlaps. The last level has no limit.
//!
//! **Tiered**. A level with `runs_per_level` runs merges all of them into one
//! new run at the next level, where it is the newest run. At the last level
//! the runs merge into one run of that level.
//!
//! **Tombstones** are dropped only where no older data can hide below them:
//! when no table outside the compaction, on the output level or deeper,
//! overlaps the compaction's key range (which always holds at the last level
//! that has data). Dropping a tombstone anywhere else would resurrect an older
//! value.

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use crate::block::Direction;
use amq::range::SampledScans;

use crate::env::Env;
use crate::error::Result;
use crate::filenames;
use crate::memtable::Entry;
use crate::merge::{MergeIter, Source};
use crate::options::{CompactionStyle, LeveledOptions, Options, TieredOptions};
use crate::policy::{LevelFilter, LevelRangeFilter};
use crate::sstable::{Table, TableSummary, TableWriter};
use crate::version::{Run, Version};

/// One merge to run.
#[derive(Debug)]
pub(crate) struct Compaction {
    /// Input sources, newest first; each a sorted run of tables.
    pub sources: Vec<Vec<Arc<Table>>>,
    pub output_level: usize,
    /// The run the outputs join (leveled) or form (tiered), `None` for a new
    /// run id.
    pub output_run: Option<u64>,
    pub drop_tombstones: bool,
}

impl Compaction {
    fn new(
        version: &Version,
        sources: Vec<Vec<Arc<Table>>>,
        output_level: usize,
        output_run: Option<u64>,
    ) -> Self {
        let drop_tombstones = nothing_older_overlaps(version, &sources, output_level);
        Compaction {
            sources,
            output_level,
            output_run,
            drop_tombstones,
        }
    }

    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Arc<Table>> {
        self.sources.iter().flatten()
    }
}

/// Whether no table outside `sources`, at `output_level` or deeper, overlaps
/// the key range of `sources`.
fn nothing_older_overlaps(version: &Version, sources: &[Vec<Arc<Table>>], output_level: usize) -> bool {
    let inputs: Vec<u64> = sources.iter().flatten().map(|t| t.number()).collect();
    let lo = sources.iter().flatten().map(|t| t.smallest()).min();
    let hi = sources.iter().flatten().map(|t| t.largest()).max();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return true;
    };
    version.tables().all(|(level, t)| {
        level < output_level || inputs.contains(&t.number()) || t.largest() < lo || t.smallest() > hi
    })
}

/// Tables of `run` whose ranges overlap `[lo, hi]`.
fn overlapping(run: Option<&Run>, lo: &[u8], hi: &[u8]) -> Vec<Arc<Table>> {
    run.map(|r| {
        r.tables
            .iter()
            .filter(|t| t.largest() >= lo && t.smallest() <= hi)
            .cloned()
            .collect()
    })
    .unwrap_or_default()
}

/// The next compaction the tree needs, if any. `pointers[n]` is where level
/// `n`'s round-robin choice continues from (leveled only).
pub(crate) fn pick(
    version: &Version,
    style: &CompactionStyle,
    pointers: &mut Vec<Vec<u8>>,
) -> Option<Compaction> {
    let levels = &version.levels;
    match *style {
        CompactionStyle::Leveled(LeveledOptions {
            l0_trigger,
            base_level_bytes,
            size_ratio,
            max_levels,
        }) => {
            let l0 = levels.first()?;
            if l0.runs.len() >= l0_trigger {
                let lo = l0.runs.iter().filter_map(Run::smallest).min()?;
                let hi = l0.runs.iter().filter_map(Run::largest).max()?;
                let l1 = levels.get(1).and_then(|l| l.runs.first());
                let mut sources: Vec<_> = l0.runs.iter().map(|r| r.tables.clone()).collect();
                sources.push(overlapping(l1, lo, hi));
                return Some(Compaction::new(version, sources, 1, l1.map(|r| r.id)));
            }
            pointers.resize(max_levels, Vec::new());
            let mut target = base_level_bytes as f64;
            for n in 1..max_levels.saturating_sub(1).min(levels.len()) {
                if levels[n].bytes() as f64 > target {
                    let run = levels[n].runs.first()?;
                    let t = run
                        .tables
                        .iter()
                        .find(|t| t.smallest() > pointers[n].as_slice())
                        .or(run.tables.first())?
                        .clone();
                    pointers[n] = t.largest().to_vec();
                    let next = levels.get(n + 1).and_then(|l| l.runs.first());
                    let below = overlapping(next, t.smallest(), t.largest());
                    return Some(Compaction::new(
                        version,
                        vec![vec![t], below],
                        n + 1,
                        next.map(|r| r.id),
                    ));
                }
                target *= f64::from(size_ratio);
            }
            None
        }
        CompactionStyle::Tiered(TieredOptions {
            runs_per_level,
            max_levels,
        }) => {
            for (n, level) in levels.iter().enumerate().take(max_levels) {
                if level.runs.len() >= runs_per_level {
                    let out = (n + 1).min(max_levels - 1);
                    let sources = level.runs.iter().map(|r| r.tables.clone()).collect();
                    return Some(Compaction::new(version, sources, out, None));
                }
            }
            None
        }
    }
}

/// Everything in the tree merged into one run at the deepest level that holds
/// data (level 1 at least): a full compaction, which drops every tombstone.
pub(crate) fn full(version: &Version) -> Option<Compaction> {
    let sources: Vec<Vec<Arc<Table>>> = version
        .levels
        .iter()
        .flat_map(|l| l.runs.iter().map(|r| r.tables.clone()))
        .collect();
    if sources.iter().all(Vec::is_empty) {
        return None;
    }
    let deepest = version
        .levels
        .iter()
        .rposition(|l| !l.is_empty())
        .unwrap_or(0)
        .max(1);
    Some(Compaction::new(version, sources, deepest, None))
}

/// Writes the merge of `c` as tables of at most about `table_bytes`,
/// numbered by `next_number`. Output tables are synced; the caller syncs the
/// directory and records them in the manifest.
pub(crate) struct Merger<'a> {
    pub env: &'a dyn Env,
    pub dir: &'a Path,
    /// How tables are written (`Options::table_bytes`, block size, value
    /// filters, filter partitions, prefixes).
    pub opts: &'a Options,
    pub filter: LevelFilter,
    pub range_filter: LevelRangeFilter,
    /// The store's latest scans, which the outputs' range filters are
    /// fitted to.
    pub scans: SampledScans,
}

impl Merger<'_> {
    pub(crate) fn run(
        &self,
        entries: impl Iterator<Item = Result<(Vec<u8>, Entry)>>,
        drop_tombstones: bool,
        next_number: &mut dyn FnMut() -> u64,
        outputs: &mut Vec<TableSummary>,
    ) -> Result<()> {
        let mut writer: Option<TableWriter> = None;
        for item in entries {
            let (key, entry) = item?;
            if drop_tombstones && entry == Entry::Tombstone {
                continue;
            }
            let w = match &mut writer {
                Some(w) => w,
                None => {
                    let number = next_number();
                    let path = self.dir.join(filenames::table(number));
                    writer.insert(TableWriter::create(
                        self.env,
                        path,
                        number,
                        self.opts,
                        self.filter,
                        self.range_filter,
                        self.scans.clone(),
                    )?)
                }
            };
            w.add(&key, &entry)?;
            if w.estimated_bytes() >= self.opts.table_bytes {
                if let Some(w) = writer.take() {
                    outputs.push(w.finish()?);
                }
            }
        }
        if let Some(w) = writer.take() {
            if w.entries() > 0 {
                outputs.push(w.finish()?);
            }
        }
        Ok(())
    }
}

/// The merged entries of a compaction's inputs, newest version of each key.
pub(crate) fn merged_inputs(c: &Compaction) -> MergeIter<'static> {
    let sources: Vec<Source<'static>> = c
        .sources
        .iter()
        .map(|run| {
            let tables = run.clone();
            Box::new(
                tables
                    .into_iter()
                    .flat_map(|t| t.cursor(Direction::Forward, Bound::Unbounded, Bound::Unbounded)),
            ) as Source<'static>
        })
        .collect();
    MergeIter::new(sources)
}
