//! The store's table files: writing a memtable out as a table, opening a
//! table, its manifest record, and what sizing a new table's filter needs
//! to know of the tables that stay.

use std::path::Path;
use std::sync::Arc;

use amq::range::SampledScans;

use crate::env::Env;
use crate::error::Result;
use crate::filenames;
use crate::manifest::TableRecord;
use crate::memtable::MemTable;
use crate::monkey::{Built, LevelShape};
use crate::options::Options;
use crate::sstable::{Caches, Table, TableSummary, TableWriter};
use crate::stats::{add, inc, Counters};
use crate::version::Version;

/// Per level, the keys and filter bits of the tables that stay when the
/// tables numbered `leaving` are replaced.
pub(super) fn built_filters(version: &Version, leaving: &[u64]) -> Vec<Built> {
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

/// A memtable to write as level-0 table `number` of the tree `version`, its
/// range filter fitted to `scans`, the store's latest bounded scans.
pub(super) struct Flush<'a> {
    pub number: u64,
    pub mem: &'a MemTable,
    pub version: &'a Version,
    pub scans: SampledScans,
}

/// Writes `flush.mem` as a level-0 table (synced).
pub(super) fn write_memtable(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    stats: &Counters,
    flush: Flush<'_>,
) -> Result<TableSummary> {
    let Flush {
        number,
        mem,
        version,
        scans,
    } = flush;
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
    let range_filter = opts.range_filter_policy.for_level(0, false);
    let mut t = TableWriter::create(env, path.clone(), number, opts, filter, range_filter, scans)?;
    let written = (|| {
        for (k, e) in mem.iter() {
            t.add(k, e)?;
        }
        t.finish()
    })();
    match written {
        Ok(summary) => {
            add(&stats.filter_build_nanos, summary.filter_build_nanos);
            if summary.range_filter_not_built {
                inc(&stats.range_filters_not_built);
            }
            Ok(summary)
        }
        Err(e) => {
            let _ = env.remove_file(&path);
            Err(e)
        }
    }
}

/// Opens table `number` of `dir`, counting an untrusted filter.
pub(super) fn open_table(
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
        opts.prefix_extractor.as_deref(),
    )?;
    if t.filter_untrusted().is_some() {
        inc(&stats.untrusted_filters);
    }
    if t.range_filter_untrusted().is_some() {
        inc(&stats.untrusted_range_filters);
    }
    Ok(Arc::new(t))
}

/// The manifest record of a table written to `level`, joining `run`.
pub(super) fn record(s: &TableSummary, level: u32, run: u64) -> TableRecord {
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
