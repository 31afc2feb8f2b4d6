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

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use amq::AnyFilter;

use crate::keys::{compare_keys, key_prefix};
use crate::manifest::TableRecord;
use crate::monkey::LevelShape;
use crate::settle::FilterSettles;
use crate::sstable::Table;

/// The longest prefix all of `keys` share (empty for no keys).
fn common_prefix<'k>(mut keys: impl Iterator<Item = &'k [u8]>) -> &'k [u8] {
    let Some(mut common) = keys.next() else {
        return &[];
    };
    for k in keys {
        let n = common.iter().zip(k).take_while(|(a, b)| a == b).count();
        common = &common[..n];
    }
    common
}

#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub id: u64,
    pub tables: Vec<Arc<Table>>,
    /// Every table's smallest and largest key past the version's common
    /// prefix ([`Version::probe_key`]), back to back in one buffer: a binary
    /// search over the run touches this one allocation instead of chasing
    /// each table's pointers to its key range.
    bounds: Vec<u8>,
    /// `bounds[ends[2i - 1]..ends[2i]]` is table `i`'s smallest key and
    /// `bounds[ends[2i]..ends[2i + 1]]` its largest (with `ends[-1] = 0`).
    ends: Vec<usize>,
}

impl Run {
    /// A run of `tables`, which are in key order with disjoint ranges and
    /// whose keys all start with the same `skip` bytes.
    fn new(id: u64, tables: Vec<Arc<Table>>, skip: usize) -> Run {
        let mut bounds = Vec::new();
        let mut ends = Vec::with_capacity(2 * tables.len());
        for t in &tables {
            bounds.extend_from_slice(&t.smallest()[skip..]);
            ends.push(bounds.len());
            bounds.extend_from_slice(&t.largest()[skip..]);
            ends.push(bounds.len());
        }
        Run {
            id,
            tables,
            bounds,
            ends,
        }
    }

    fn smallest_of(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[2 * i - 1] };
        &self.bounds[start..self.ends[2 * i]]
    }

    fn largest_of(&self, i: usize) -> &[u8] {
        &self.bounds[self.ends[2 * i]..self.ends[2 * i + 1]]
    }

    /// The position of the one table whose key range may hold the key whose
    /// bytes past the common prefix are `suffix`: binary search on the
    /// largest keys, then a check of the smallest.
    fn find_index(&self, suffix: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.tables.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if compare_keys(self.largest_of(mid), suffix) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.tables.len() && compare_keys(self.smallest_of(lo), suffix) != Ordering::Greater)
            .then_some(lo)
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

/// What the read path looks at first for one run, every run's side by side
/// in age order ([`Version::locate`]): the run's key range as two
/// integers, and, for a run of one table (every level-0 run, most tiered
/// runs), that table's filter. A point lookup against N overlapping runs
/// reads this array front to back and each filter it lets through: the
/// filter's header and line per table, instead of a chain through the run's
/// table list and the table.
#[derive(Debug, Clone)]
pub(crate) struct RunProbe {
    /// [`key_prefix`] of the run's smallest and largest key past the common
    /// prefix.
    lo: u128,
    hi: u128,
    /// The filter of the run's only table (`None` for a table without a
    /// trusted filter, and for runs of several tables).
    filter: Option<Arc<AnyFilter>>,
    run: u32,
    level: u16,
    /// Whether the run is one table.
    single: bool,
}

/// A key as the read path compares it with table bounds: its bytes past the
/// version's common prefix, and their [`key_prefix`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbeKey<'k> {
    suffix: &'k [u8],
    prefix: u128,
}

impl ProbeKey<'_> {
    /// The first eight bytes of the key past the common prefix, as a
    /// big-endian integer (what [`FilterSettles`] compares).
    #[inline(always)]
    pub(crate) fn top(&self) -> u64 {
        (self.prefix >> 64) as u64
    }
}

/// A table whose key range may hold a key, found by
/// [`Version::locate`]: its filter, and where to find the table when the
/// filter does not settle the lookup.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate<'v> {
    pub filter: Option<&'v AnyFilter>,
    /// The run's position in the version's age order.
    probe: u32,
    /// The table's position in its run.
    pub index: u32,
}

/// One run of a version, as [`Version::runs_by_age`] hands it out.
#[derive(Clone, Copy)]
pub(crate) struct RunRef<'v> {
    version: &'v Version,
    probe: &'v RunProbe,
    /// `probe`'s position in the version's age order.
    position: u32,
}

impl<'v> RunRef<'v> {
    /// The run's table whose range may hold `key`.
    #[inline]
    pub(crate) fn locate(&self, key: ProbeKey<'_>) -> Option<Candidate<'v>> {
        self.version.locate(self.position, self.probe, key)
    }

    pub(crate) fn run(&self) -> &'v Run {
        &self.version.levels[self.probe.level as usize].runs[self.probe.run as usize]
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Level {
    /// Newest first.
    pub runs: Vec<Run>,
}

impl Level {
    /// Keys and runs, as Monkey's allocation sees the level.
    pub(crate) fn shape(&self) -> LevelShape {
        LevelShape {
            keys: self.tables().map(|t| t.entries()).sum(),
            runs: self.runs.iter().filter(|r| !r.tables.is_empty()).count(),
        }
    }

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
    /// The bytes every key of every table starts with (the longest common
    /// prefix of all table bounds). A key without them lies outside every
    /// table's range; with them, it compares with any bound as its suffix
    /// does with the bound's, so the read path compares suffixes only. Keys
    /// with a long shared prefix (a tenant or table name) would otherwise
    /// tie on every [`key_prefix`] and fall back to byte comparisons.
    common: Vec<u8>,
    /// One per run, in age order.
    probes: Vec<RunProbe>,
    /// One per run, beside `probes`: what settles most runs of a miss.
    settles: Vec<FilterSettles>,
    /// One per run, beside `probes`: for a run of one table whose filter
    /// holds the store's prefixes, that filter (what a prefix scan asks).
    prefix_filters: Vec<Option<Arc<AnyFilter>>>,
}

/// A scan's range as [`Version::runs_meeting`] compares it with the runs'
/// ranges: the [`key_prefix`] of each bound past the common prefix (0 and
/// `u128::MAX` for open ends).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanRange {
    lo: u128,
    hi: u128,
}

/// How a run meets a scan's range.
pub(crate) enum Meets<'v> {
    /// A run of one table whose range meets the scan's for certain, and
    /// that table's prefix filter, if it has one.
    Table(&'v Arc<Table>, Option<&'v Arc<AnyFilter>>),
    /// A run whose tables must be checked one by one.
    Check,
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
        let common = common_prefix(records.iter().flat_map(|(_, t)| [t.smallest(), t.largest()])).to_vec();
        let skip = common.len();
        let mut grouped: Vec<Vec<(u64, Vec<Arc<Table>>)>> = vec![Vec::new(); levels.len()];
        for (rec, table) in sorted {
            let runs = &mut grouped[rec.level as usize];
            match runs.last_mut() {
                Some((id, tables)) if *id == rec.run => tables.push(table.clone()),
                _ => runs.push((rec.run, vec![table.clone()])),
            }
        }
        for (level, runs) in levels.iter_mut().zip(grouped) {
            level.runs = runs
                .into_iter()
                .map(|(id, tables)| Run::new(id, tables, skip))
                .collect();
        }
        let (mut probes, mut settles, mut prefix_filters) = (Vec::new(), Vec::new(), Vec::new());
        for (l, level) in levels.iter().enumerate() {
            for (r, run) in level.runs.iter().enumerate() {
                let (Some(first), Some(last)) = (run.tables.first(), run.tables.last()) else {
                    continue;
                };
                let single = run.tables.len() == 1;
                let probe = RunProbe {
                    lo: key_prefix(&first.smallest()[skip..]),
                    hi: key_prefix(&last.largest()[skip..]),
                    filter: if single {
                        first.shared_filter().cloned()
                    } else {
                        None
                    },
                    single,
                    level: l as u16,
                    run: r as u32,
                };
                settles.push(FilterSettles::new(probe.lo, probe.hi, probe.filter.clone()));
                prefix_filters.push(if single {
                    first.prefix_filter().cloned()
                } else {
                    None
                });
                probes.push(probe);
            }
        }
        debug_assert_eq!(probes.len(), settles.len());
        Version {
            levels,
            common,
            probes,
            settles,
            prefix_filters,
        }
    }

    /// `lo..hi` as [`runs_meeting`](Self::runs_meeting) compares it, or
    /// `None` if it meets no table (it lies wholly before or after the keys
    /// every table's bounds start with).
    pub(crate) fn scan_range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<ScanRange> {
        // A bound that does not start with the common prefix lies before
        // every table's keys or after them.
        let side = |k: &[u8]| match k.strip_prefix(self.common.as_slice()) {
            Some(suffix) => Ok(key_prefix(suffix)),
            None => Err(k < self.common.as_slice()),
        };
        let lo = match lo {
            Bound::Unbounded => 0,
            Bound::Included(k) | Bound::Excluded(k) => match side(k) {
                Ok(p) => p,
                Err(true) => 0,
                Err(false) => return None,
            },
        };
        let hi = match hi {
            Bound::Unbounded => u128::MAX,
            Bound::Included(k) | Bound::Excluded(k) => match side(k) {
                Ok(p) => p,
                Err(true) => return None,
                Err(false) => u128::MAX,
            },
        };
        Some(ScanRange { lo, hi })
    }

    /// The runs whose range may meet `range`, in age order: those the
    /// integers rule out are left out (`key_prefix(a) < key_prefix(b)`
    /// implies `a < b`), a run of one table whose range surely meets it is
    /// handed out with its table, and any other run is left to the caller to
    /// check table by table.
    pub(crate) fn runs_meeting(&self, range: ScanRange) -> impl Iterator<Item = (&Run, Meets<'_>)> {
        self.probes
            .iter()
            .zip(&self.prefix_filters)
            .filter(move |(p, _)| p.hi >= range.lo && p.lo <= range.hi)
            .map(move |(p, filter)| {
                let run = &self.levels[p.level as usize].runs[p.run as usize];
                let meets = match p.single && p.hi > range.lo && p.lo < range.hi {
                    true => Meets::Table(&run.tables[0], filter.as_ref()),
                    false => Meets::Check,
                };
                (run, meets)
            })
    }

    /// `key` as the read path compares it, or `None` if it lies outside
    /// every table's key range.
    #[inline]
    pub(crate) fn probe_key<'k>(&self, key: &'k [u8]) -> Option<ProbeKey<'k>> {
        let suffix = key.strip_prefix(self.common.as_slice())?;
        Some(ProbeKey {
            suffix,
            prefix: key_prefix(suffix),
        })
    }

    /// Every run's probe, in age order (so the first table that holds a
    /// key holds its newest version); [`locate`](Self::locate) finds the
    /// run's table for a key.
    #[inline(always)]
    pub(crate) fn run_probes(&self) -> &[RunProbe] {
        &self.probes
    }

    /// Every run's [`FilterSettles`], in the order of
    /// [`run_probes`](Self::run_probes).
    #[inline(always)]
    pub(crate) fn filter_settles(&self) -> &[FilterSettles] {
        &self.settles
    }

    /// The position of the first run with a table whose range may hold
    /// `key`.
    #[inline(always)]
    pub(crate) fn first_candidate(&self, key: ProbeKey<'_>) -> Option<usize> {
        (0..self.probes.len()).find(|&i| self.locate(i as u32, &self.probes[i], key).is_some())
    }

    /// The table of run `p` (at `probe` in [`run_probes`](Self::run_probes))
    /// whose range may hold `key`, if any: for most runs, settled by two
    /// integer compares.
    #[inline(always)]
    pub(crate) fn locate<'v>(
        &'v self,
        probe: u32,
        p: &'v RunProbe,
        key: ProbeKey<'_>,
    ) -> Option<Candidate<'v>> {
        // The first eight bytes of each decide most keys: strictly inside
        // on them is strictly inside. Comparing halves keeps the hot loop's
        // live values to one register for the key, which measured faster per
        // table than whole 128-bit compares (`lsm_profile_miss` in
        // `amq-bench`).
        let top = |x: u128| (x >> 64) as u64;
        let (k, lo, hi) = (top(key.prefix), top(p.lo), top(p.hi));
        if p.single && ((lo < k && k < hi) || (p.lo < key.prefix && key.prefix < p.hi)) {
            // Strictly inside the range of a run of one table: the common
            // case, settled by two integer compares.
            return Some(Candidate {
                filter: p.filter.as_deref(),
                probe,
                index: 0,
            });
        }
        if key.prefix < p.lo || key.prefix > p.hi {
            return None;
        }
        let run = &self.levels[p.level as usize].runs[p.run as usize];
        let i = run.find_index(key.suffix)?;
        Some(Candidate {
            filter: run.tables[i].filter(),
            probe,
            index: i as u32,
        })
    }

    /// The table a candidate names.
    #[inline]
    pub(crate) fn table(&self, c: &Candidate<'_>) -> &Arc<Table> {
        let p = &self.probes[c.probe as usize];
        &self.levels[p.level as usize].runs[p.run as usize].tables[c.index as usize]
    }

    /// The filter of every run that has one (see [`RunProbe`]), in the
    /// order a point lookup asks them: newest run first.
    #[cfg(feature = "bench-internals")]
    pub(crate) fn walked_filters(&self) -> impl Iterator<Item = &Arc<AnyFilter>> {
        self.probes.iter().filter_map(|p| p.filter.as_ref())
    }

    /// Every run in age order, for a walk that looks many keys up run by
    /// run (`multi_get`).
    pub(crate) fn runs_by_age(&self) -> impl Iterator<Item = RunRef<'_>> {
        self.probes.iter().zip(0..).map(move |(probe, position)| RunRef {
            version: self,
            probe,
            position,
        })
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
