//! [`Options`]: how a store is laid out, compacted, filtered and synced.

use std::fmt;
use std::sync::Arc;

use crate::env::{Env, StdEnv};
use crate::error::{Error, Result};
use crate::log::Recovery;
use crate::manifest::MAX_LEVELS;
use crate::policy::FilterPolicy;
use crate::value::ValueIndexOptions;

/// When the write-ahead log is synced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Every `put`, `delete` and `write` is synced before it returns: an
    /// acknowledged write survives a power cut.
    #[default]
    EveryWrite,
    /// Writes reach the operating system before they return (they survive
    /// the process crashing) and stable storage at the next
    /// [`Db::sync`](crate::Db::sync), flush or close.
    OnSync,
}

/// How tables move down the tree.
///
/// ```
/// use amq_lsm::CompactionStyle;
/// assert!(matches!(CompactionStyle::default(), CompactionStyle::Leveled { .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStyle {
    /// Level 0 holds flushed tables whose ranges overlap; every deeper level
    /// is one sorted run, `size_ratio` times larger than the one above. A
    /// point read consults every level-0 table and at most one table per
    /// deeper level.
    Leveled {
        /// Level-0 tables that trigger a compaction into level 1.
        l0_trigger: usize,
        /// Target bytes of level 1.
        base_level_bytes: u64,
        /// Each level's target is this many times the one above (≥ 2).
        size_ratio: u32,
        /// Levels, level 0 included; the last one grows without limit.
        max_levels: usize,
    },
    /// Each level holds up to `runs_per_level` overlapping sorted runs; when
    /// full, they are merged into one new run of the next level. Writes are
    /// cheaper, and a point read consults every run: filters matter most.
    Tiered {
        /// Runs a level holds before they are merged down (≥ 2).
        runs_per_level: usize,
        /// Levels, level 0 included; the last one merges into itself.
        max_levels: usize,
    },
}

impl Default for CompactionStyle {
    fn default() -> Self {
        CompactionStyle::Leveled {
            l0_trigger: 4,
            base_level_bytes: 16 << 20,
            size_ratio: 10,
            max_levels: 7,
        }
    }
}

impl CompactionStyle {
    /// Tiered with `runs_per_level` runs per level and 7 levels.
    pub fn tiered(runs_per_level: usize) -> Self {
        CompactionStyle::Tiered {
            runs_per_level,
            max_levels: 7,
        }
    }

    pub(crate) fn max_levels(&self) -> usize {
        match *self {
            CompactionStyle::Leveled { max_levels, .. } | CompactionStyle::Tiered { max_levels, .. } => {
                max_levels
            }
        }
    }
}

/// Everything [`Db::open`](crate::Db::open) needs to know.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_lsm::{CompactionStyle, FilterPolicy, Options, SyncMode};
/// let opts = Options {
///     filter_policy: FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01)),
///     compaction: CompactionStyle::tiered(4),
///     sync: SyncMode::OnSync,
///     ..Options::default()
/// };
/// assert_eq!(opts.block_bytes, 4096);
/// ```
#[derive(Clone)]
pub struct Options {
    /// The file system (default: the real one).
    pub env: Arc<dyn Env>,
    /// Which filter each level's tables carry.
    pub filter_policy: FilterPolicy,
    /// Leveled or tiered compaction, and its shape.
    pub compaction: CompactionStyle,
    /// Memtable bytes that trigger a flush.
    pub memtable_bytes: usize,
    /// Target bytes of a data block before its trailer.
    pub block_bytes: usize,
    /// Compaction cuts output tables at about this many bytes.
    pub table_bytes: u64,
    /// When the write-ahead log is synced.
    pub sync: SyncMode,
    /// Fail `open` with [`Error::UntrustedFilter`] on a damaged or unknown
    /// filter block, instead of reading that table without its filter.
    pub strict_filters: bool,
    /// How a damaged write-ahead log is recovered.
    pub wal_recovery: Recovery,
    /// Run compactions after flushes when thresholds are passed (off: only
    /// explicit [`Db::compact`](crate::Db::compact) calls compact).
    pub auto_compact: bool,
    /// Value filters in every table and the index over them, for
    /// [`Db::find_by_value`](crate::Db::find_by_value) (`None`: no value
    /// filters; value searches scan every table).
    pub value_index: Option<ValueIndexOptions>,
    /// Bytes of data blocks kept in memory after point reads (CLOCK
    /// eviction, an approximation of least recently used; `crate::cache`). 0, the default: no
    /// cache, every data block a point read needs is read from its file.
    pub block_cache_bytes: usize,
    /// Split each table's filter into partitions of about this many bytes,
    /// each covering whole data blocks, with a small pinned index; a lookup
    /// reads only the partition it needs, through the filter cache
    /// (`sstable/partitions.rs`). `None`, the default: one whole filter per
    /// table, pinned in memory. Every kind can be partitioned. RocksDB's
    /// partitioned filters use 4 KiB (`Some(4096)`).
    pub filter_partition_bytes: Option<usize>,
    /// Bytes of filter partitions kept in memory, decoded, after they are
    /// read (CLOCK eviction, `crate::cache`), apart from the block cache. 0, the
    /// default: no filter cache, so every probe of a partitioned filter reads
    /// its partition from the table file. Whole filters are always pinned
    /// and do not count here.
    ///
    /// Why a cache of its own, not a share of `block_cache_bytes`: a
    /// partition answers for thousands of keys (4 KiB at 10 bits/key holds
    /// about 3,300) where a data block holds a few dozen entries, so losing
    /// one to a burst of data block reads costs far more reads later.
    /// RocksDB protects them with a high-priority pool inside one cache;
    /// two caps are the plain form of that, and let a deployment size the
    /// filter memory exactly (the benchmarks set it to a share of the total
    /// filter size).
    pub filter_cache_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env: Arc::new(StdEnv),
            filter_policy: FilterPolicy::default(),
            compaction: CompactionStyle::default(),
            memtable_bytes: 4 << 20,
            block_bytes: 4096,
            table_bytes: 2 << 20,
            sync: SyncMode::default(),
            strict_filters: false,
            wal_recovery: Recovery::default(),
            auto_compact: true,
            value_index: None,
            block_cache_bytes: 0,
            filter_partition_bytes: None,
            filter_cache_bytes: 0,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("filter_policy", &self.filter_policy)
            .field("compaction", &self.compaction)
            .field("memtable_bytes", &self.memtable_bytes)
            .field("block_bytes", &self.block_bytes)
            .field("table_bytes", &self.table_bytes)
            .field("sync", &self.sync)
            .field("strict_filters", &self.strict_filters)
            .field("wal_recovery", &self.wal_recovery)
            .field("auto_compact", &self.auto_compact)
            .field("block_cache_bytes", &self.block_cache_bytes)
            .field("filter_partition_bytes", &self.filter_partition_bytes)
            .field("filter_cache_bytes", &self.filter_cache_bytes)
            .field("value_index", &self.value_index)
            .finish_non_exhaustive()
    }
}

impl Options {
    pub(crate) fn validate(&self) -> Result<()> {
        self.filter_policy.validate()?;
        if let Some(v) = &self.value_index {
            v.validate()?;
        }
        if self.block_bytes < 64 || self.block_bytes > 64 << 20 {
            return Err(Error::InvalidOptions("block_bytes must be in 64..=64 MiB"));
        }
        if self.filter_partition_bytes == Some(0) {
            return Err(Error::InvalidOptions("filter_partition_bytes must be positive"));
        }
        if self.memtable_bytes == 0 || self.table_bytes == 0 {
            return Err(Error::InvalidOptions(
                "memtable_bytes and table_bytes must be positive",
            ));
        }
        let levels_ok = |n: usize| (2..=MAX_LEVELS as usize).contains(&n);
        match self.compaction {
            CompactionStyle::Leveled {
                l0_trigger,
                base_level_bytes,
                size_ratio,
                max_levels,
            } => {
                if l0_trigger == 0 || base_level_bytes == 0 || size_ratio < 2 || !levels_ok(max_levels) {
                    return Err(Error::InvalidOptions(
                        "leveled: l0_trigger ≥ 1, base_level_bytes ≥ 1, size_ratio ≥ 2, max_levels in 2..=64",
                    ));
                }
            }
            CompactionStyle::Tiered {
                runs_per_level,
                max_levels,
            } => {
                if runs_per_level < 2 || !levels_ok(max_levels) {
                    return Err(Error::InvalidOptions(
                        "tiered: runs_per_level ≥ 2, max_levels in 2..=64",
                    ));
                }
            }
        }
        Ok(())
    }
}
