//! [`Version`]: the live tables, as levels of sorted runs, and the read path
//! through them.
//!
//! Every level is a list of *runs*, newest first; a run is a list of tables
//! with disjoint key ranges, in key order. Leveled compaction keeps one run
//! per level below level 0 (each flush adds a run of one table to level 0);
//! tiered compaction keeps up to T runs per level. Age order is the tree's
//! order: level 0 before level 1, and within a level newer runs (larger run
//! ids) first, so the first table that holds a key holds its newest version.
//!
//! A version is immutable; a flush or compaction installs a new one, and a
//! reader keeps the one it started with (an `Arc`) for as long as it needs.

use std::sync::Arc;

use crate::manifest::TableRecord;
use crate::sstable::Table;

#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub id: u64,
    pub tables: Vec<Arc<Table>>,
}

impl Run {
    /// The one table whose key range may hold `key`: binary search on the
    /// largest keys, then a check of the smallest.
    #[inline]
    pub(crate) fn find(&self, key: &[u8]) -> Option<&Arc<Table>> {
        let i = self.tables.partition_point(|t| t.largest() < key);
        self.tables.get(i).filter(|t| t.smallest() <= key)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.file_bytes()).sum()
    }

    pub(crate) fn smallest(&self) -> Option<&[u8]> {
        self.tables.first().map(|t| t.smallest())
    }

    pub(crate) fn largest(&self) -> Option<&[u8]> {
        self.tables.last().map(|t| t.largest())
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Level {
    /// Newest first.
    pub runs: Vec<Run>,
}

impl Level {
    pub(crate) fn bytes(&self) -> u64 {
        self.runs.iter().map(Run::bytes).sum()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.runs.iter().all(|r| r.tables.is_empty())
    }

    pub(crate) fn tables(&self) -> impl Iterator<Item = &Arc<Table>> {
        self.runs.iter().flat_map(|r| r.tables.iter())
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Version {
    pub levels: Vec<Level>,
}

impl Version {
    /// Arranges `tables` (opened) by their manifest records.
    pub(crate) fn build(records: &[(TableRecord, Arc<Table>)], num_levels: usize) -> Version {
        let deepest = records
            .iter()
            .map(|(r, _)| r.level as usize + 1)
            .max()
            .unwrap_or(0);
        let mut levels = vec![Level::default(); num_levels.max(deepest)];
        let mut sorted: Vec<_> = records.iter().collect();
        // Level, then newest run first, then key order within a run.
        sorted.sort_by(|(a, ta), (b, tb)| {
            (a.level, std::cmp::Reverse(a.run), ta.smallest()).cmp(&(
                b.level,
                std::cmp::Reverse(b.run),
                tb.smallest(),
            ))
        });
        for (rec, table) in sorted {
            let level = &mut levels[rec.level as usize];
            match level.runs.last_mut() {
                Some(run) if run.id == rec.run => run.tables.push(table.clone()),
                _ => level.runs.push(Run {
                    id: rec.run,
                    tables: vec![table.clone()],
                }),
            }
        }
        Version { levels }
    }

    /// Every table, with its level.
    pub(crate) fn tables(&self) -> impl Iterator<Item = (usize, &Arc<Table>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.tables().map(move |t| (i, t)))
    }

    /// Whether no level deeper than `level` holds a table.
    pub(crate) fn nothing_below(&self, level: usize) -> bool {
        self.levels.iter().skip(level + 1).all(Level::is_empty)
    }
}
