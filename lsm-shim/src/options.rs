//! [`Options`]: how a store is laid out, compacted, filtered and synced.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use amq::PrefixExtractor;

use crate::env::{Env, StdEnv};
use crate::error::{Error, Result};
use crate::log::Recovery;
use crate::manifest::MAX_LEVELS;
use crate::policy::{FilterPolicy, RangeFilterPolicy};
use crate::value_filter::options::ValueIndexOptions;

/// When the write-ahead log is synced to stable storage.
///
/// Every write reaches the operating system (a `write` to the WAL file)
/// before it returns, in every mode: it survives the process crashing or
/// being killed. What the modes differ in is a power cut or an operating
/// system crash, which loses what the operating system had not yet written
/// to the device.
///
/// The default is [`OnSync`](Self::OnSync), as in RocksDB
/// (`WriteOptions::sync = false`), LevelDB (`sync = false`) and fjall
/// (journal writes are buffered; durability is asked for with `persist`):
/// a sync per write costs a device flush per write (50,000 single puts
/// with [`EveryWrite`](Self::EveryWrite) take about 100 times as long as
/// the same puts in batches of 1,000), and a store that needs per-write
/// durability says so. Batches ([`Db::write`](crate::Db::write)) make
/// [`EveryWrite`](Self::EveryWrite) cheaper: one sync per batch.
///
/// ```
/// use amq_lsm::{Options, SyncMode};
/// assert_eq!(SyncMode::default(), SyncMode::OnSync);
/// let opts = Options::default().sync(SyncMode::EveryWrite);
/// assert_eq!(opts.sync, SyncMode::EveryWrite);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncMode {
    /// Every `put`, `delete` and `write` is synced before it returns: an
    /// acknowledged write survives a power cut. Costs a sync (a device
    /// flush) per write or batch.
    EveryWrite,
    /// The default. Writes reach the operating system before they return
    /// (they survive the process crashing) and stable storage at the next
    /// [`Db::sync`](crate::Db::sync), flush, compaction or
    /// [`Db::close`](crate::Db::close); a power cut may lose the writes
    /// since then, never part of a batch and never an earlier write.
    #[default]
    OnSync,
}

/// The shape of leveled compaction ([`CompactionStyle::Leveled`]).
///
/// ```
/// use amq_lsm::{CompactionStyle, LeveledOptions, Options};
/// let leveled = LeveledOptions::default().l0_trigger(8).size_ratio(4);
/// assert_eq!((leveled.l0_trigger, leveled.size_ratio, leveled.max_levels), (8, 4, 7));
/// let opts = Options::default().compaction(leveled);
/// assert_eq!(opts.compaction, CompactionStyle::Leveled(leveled));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeveledOptions {
    /// Level-0 tables that trigger a compaction into level 1 (default 4).
    /// More lets writes merge less often, and makes a point read consult
    /// more level-0 tables.
    pub l0_trigger: usize,
    /// Target bytes of level 1 (default 16 MiB).
    pub base_level_bytes: u64,
    /// Each level's target is this many times the one above (default 10,
    /// at least 2). Larger: fewer levels, more rewriting per level.
    pub size_ratio: u32,
    /// Levels, level 0 included (default 7, in `2..=64`); the last one
    /// grows without limit.
    pub max_levels: usize,
}

impl Default for LeveledOptions {
    fn default() -> Self {
        LeveledOptions {
            l0_trigger: 4,
            base_level_bytes: 16 << 20,
            size_ratio: 10,
            max_levels: 7,
        }
    }
}

impl LeveledOptions {
    /// Sets [`l0_trigger`](Self::l0_trigger) (default 4).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn l0_trigger(mut self, tables: usize) -> Self {
        self.l0_trigger = tables;
        self
    }

    /// Sets [`base_level_bytes`](Self::base_level_bytes) (default 16 MiB).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn base_level_bytes(mut self, bytes: u64) -> Self {
        self.base_level_bytes = bytes;
        self
    }

    /// Sets [`size_ratio`](Self::size_ratio) (default 10).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn size_ratio(mut self, ratio: u32) -> Self {
        self.size_ratio = ratio;
        self
    }

    /// Sets [`max_levels`](Self::max_levels) (default 7).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn max_levels(mut self, levels: usize) -> Self {
        self.max_levels = levels;
        self
    }
}

/// The shape of tiered compaction ([`CompactionStyle::Tiered`]).
///
/// ```
/// use amq_lsm::{CompactionStyle, TieredOptions};
/// let tiered = TieredOptions::default().runs_per_level(8);
/// assert_eq!((tiered.runs_per_level, tiered.max_levels), (8, 7));
/// assert_eq!(CompactionStyle::tiered(8), CompactionStyle::Tiered(tiered));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TieredOptions {
    /// Runs a level holds before they are merged down (default 4, at least
    /// 2). More: cheaper writes, and more runs for a point read to consult.
    pub runs_per_level: usize,
    /// Levels, level 0 included (default 7, in `2..=64`); the last one
    /// merges into itself.
    pub max_levels: usize,
}

impl Default for TieredOptions {
    fn default() -> Self {
        TieredOptions {
            runs_per_level: 4,
            max_levels: 7,
        }
    }
}

impl TieredOptions {
    /// Sets [`runs_per_level`](Self::runs_per_level) (default 4).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn runs_per_level(mut self, runs: usize) -> Self {
        self.runs_per_level = runs;
        self
    }

    /// Sets [`max_levels`](Self::max_levels) (default 7).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn max_levels(mut self, levels: usize) -> Self {
        self.max_levels = levels;
        self
    }
}

/// How tables move down the tree.
///
/// ```
/// use amq_lsm::{CompactionStyle, LeveledOptions};
/// assert_eq!(CompactionStyle::default(), CompactionStyle::Leveled(LeveledOptions::default()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompactionStyle {
    /// Level 0 holds flushed tables whose ranges overlap; every deeper level
    /// is one sorted run, `size_ratio` times larger than the one above. A
    /// point read consults every level-0 table and at most one table per
    /// deeper level.
    Leveled(LeveledOptions),
    /// Each level holds up to `runs_per_level` overlapping sorted runs; when
    /// full, they are merged into one new run of the next level. Writes are
    /// cheaper, and a point read consults every run: filters matter most.
    Tiered(TieredOptions),
}

impl Default for CompactionStyle {
    /// Leveled, with [`LeveledOptions::default`].
    fn default() -> Self {
        CompactionStyle::Leveled(LeveledOptions::default())
    }
}

impl From<LeveledOptions> for CompactionStyle {
    fn from(o: LeveledOptions) -> Self {
        CompactionStyle::Leveled(o)
    }
}

impl From<TieredOptions> for CompactionStyle {
    fn from(o: TieredOptions) -> Self {
        CompactionStyle::Tiered(o)
    }
}

impl CompactionStyle {
    /// Tiered with `runs_per_level` runs per level and 7 levels.
    ///
    /// ```
    /// use amq_lsm::CompactionStyle;
    /// assert!(matches!(CompactionStyle::tiered(4), CompactionStyle::Tiered(t) if t.runs_per_level == 4));
    /// ```
    #[must_use]
    pub fn tiered(runs_per_level: usize) -> Self {
        CompactionStyle::Tiered(TieredOptions::default().runs_per_level(runs_per_level))
    }

    pub(crate) fn max_levels(&self) -> usize {
        match self {
            CompactionStyle::Leveled(l) => l.max_levels,
            CompactionStyle::Tiered(t) => t.max_levels,
        }
    }
}

/// Everything [`Db::open`](crate::Db::open) needs to know: start from
/// [`Options::default`] and change what differs with the setters, each of
/// which takes and returns the options. Every field is public to read; the
/// struct may gain fields, so it is not built with a struct literal.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_lsm::{CompactionStyle, FilterPolicy, Options, SyncMode};
/// let opts = Options::default()
///     .filter_policy(FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01)))
///     .compaction(CompactionStyle::tiered(4))
///     .sync(SyncMode::EveryWrite);
/// assert_eq!(opts.block_bytes, 4096);
/// assert_eq!(opts.sync, SyncMode::EveryWrite);
/// ```
///
/// A setter's result must be used: `opts.sync(SyncMode::EveryWrite);` as a
/// statement moves `opts` and drops the changed copy, and rustc's advice on
/// the later use of `opts` (`opts.clone().sync(..)`) would drop the setting
/// silently. Every setter is `#[must_use]`, so that is a warning, and an
/// error under `#![deny(unused_must_use)]`:
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// use amq::DelimitedPrefix;
/// let opts = amq_lsm::Options::default();
/// opts.clone().prefix_extractor(DelimitedPrefix::new(b':')); // dropped: error
/// assert!(opts.prefix_extractor.is_none());
/// ```
///
/// The same with the result assigned compiles:
///
/// ```
/// #![deny(unused_must_use)]
/// use amq::DelimitedPrefix;
/// let opts = amq_lsm::Options::default();
/// let opts = opts.clone().prefix_extractor(DelimitedPrefix::new(b':'));
/// assert!(opts.prefix_extractor.is_some());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// The file system (default: the real one, [`StdEnv`]).
    pub env: Arc<dyn Env>,
    /// Which filter each level's tables carry (default: blocked Bloom
    /// filters at 10 bits per key on every level, [`FilterPolicy::default`]).
    pub filter_policy: FilterPolicy,
    /// Which range filter, if any, each level's tables carry beside their
    /// key filter (default: none, [`RangeFilterPolicy::none`]). With one, a
    /// scan with both bounds set opens only the tables whose range filter
    /// admits its range ([`Db::scan`](crate::Db::scan)); each table then
    /// pins the filter's bits per key in memory (16 bits per key: about 1.6
    /// times a 1% blocked Bloom filter's 9.90) and its writer keeps 8 bytes
    /// per key until the table is finished. Tables without one, or with one
    /// that fails its checks, are always read.
    pub range_filter_policy: RangeFilterPolicy,
    /// How many of the latest bounded scans a table's range filter is
    /// fitted to when it is written (default 256, at most 4,096; 0: none).
    /// Where dropping low bits of the table's key codes would rule out more
    /// of those scans at the same memory (time windows over UUIDv7-like
    /// keys, ranges between neighbouring long keys), its key map is
    /// coarsened ([`amq::range::fit_to_scans`]); scans unlike them (a range
    /// just past a key) may then pass more often. Kept in memory, per open
    /// store: tables written before any scan keep the full resolution.
    /// [`LevelStats::range_tables_coarsened`](crate::LevelStats::range_tables_coarsened)
    /// counts the tables it changed.
    pub range_fit_scans: usize,
    /// Leveled or tiered compaction, and its shape (default: leveled,
    /// [`LeveledOptions::default`]).
    pub compaction: CompactionStyle,
    /// Memtable bytes that trigger a flush (default 4 MiB). The memtable is
    /// held in memory and replayed from the WAL at open: more makes fewer,
    /// larger level-0 tables and a longer recovery.
    pub memtable_bytes: usize,
    /// Target bytes of a data block before its trailer (default 4096, in
    /// 64 bytes to 64 MiB). A point read that gets past a table's filter
    /// reads and checks one whole block; larger blocks make a smaller index.
    pub block_bytes: usize,
    /// Compaction cuts output tables at about this many bytes (default
    /// 2 MiB).
    pub table_bytes: u64,
    /// When the write-ahead log is synced (default [`SyncMode::OnSync`]:
    /// writes survive a process crash when they return, and a power cut
    /// once synced by [`Db::sync`](crate::Db::sync), a flush, a compaction
    /// or [`Db::close`](crate::Db::close); see [`SyncMode`] for what
    /// [`SyncMode::EveryWrite`] costs).
    pub sync: SyncMode,
    /// Fail `open` with [`Error::UntrustedFilter`] on a damaged or unknown
    /// filter block, instead of reading that table without its filter
    /// (default `false`).
    pub strict_filters: bool,
    /// How a damaged write-ahead log is recovered (default
    /// [`Recovery::TolerateTornTail`]).
    pub wal_recovery: Recovery,
    /// Run compactions after flushes when thresholds are passed (default
    /// `true`; off: only explicit [`Db::compact`](crate::Db::compact) calls
    /// compact, and reads consult every table flushed since).
    pub auto_compact: bool,
    /// Value filters in every table and the index over them, for
    /// [`Db::find_by_value`](crate::Db::find_by_value) (default `None`: no
    /// value filters; value searches scan every table). Each table then
    /// carries a value filter of the configured size, and every flush and
    /// compaction updates the index.
    pub value_index: Option<ValueIndexOptions>,
    /// Bytes of data blocks kept in memory after point reads, evicted by
    /// CLOCK (an approximation of least recently used). 0, the default: no
    /// cache, every data block a point read needs is read from its file.
    /// Scans do not fill it.
    pub block_cache_bytes: usize,
    /// Split each table's filter into partitions of about this many bytes,
    /// each covering whole data blocks, with a small index of them pinned
    /// in memory; a lookup reads only the partition its key's data block
    /// needs, through the filter cache ([`filter_cache_bytes`](Self::filter_cache_bytes)).
    /// `None`, the default: one whole filter per table, pinned in memory.
    /// Every kind can be partitioned. RocksDB's partitioned filters use
    /// 4 KiB (`Some(4096)`). Caps filter memory at the cost of a partition
    /// read (or a cache lookup) per probe.
    pub filter_partition_bytes: Option<usize>,
    /// Bytes of filter partitions kept in memory, decoded, after they are
    /// read (CLOCK eviction), apart from the block cache. 0, the default: no
    /// filter cache, so every probe of a partitioned filter reads its
    /// partition from the table file. Whole filters are always pinned and
    /// do not count here.
    ///
    /// Why a cache of its own, not a share of `block_cache_bytes`: a
    /// partition answers for thousands of keys (4 KiB at 10 bits/key holds
    /// about 3,300) where a data block holds a few dozen entries, so losing
    /// one to a burst of data block reads costs far more reads later.
    /// RocksDB protects them with a high-priority pool inside one cache;
    /// two caps are the plain form of that, and let a deployment size the
    /// filter memory exactly.
    pub filter_cache_bytes: usize,
    /// Which prefix of each key the tables' filters hold beside (or instead
    /// of) the whole keys, so that [`Db::scan_prefix`](crate::Db::scan_prefix)
    /// and scans whose bounds share one prefix open only the tables that may
    /// hold it (default `None`: no prefixes, every overlapping table is
    /// opened). Each table's filter then holds one more entry per distinct
    /// prefix (a few percent more filter memory when prefixes are shared by
    /// many keys). The extractor's identity is recorded with every table;
    /// tables written with another extractor, or none, are never skipped.
    /// Set it with [`prefix_extractor()`](Self::prefix_extractor()), which
    /// says which prefixes the filters serve (a `scan_prefix` of any other
    /// prefix reads every table it meets, counted in
    /// [`Stats::prefix_scans_unfiltered`](crate::Stats::prefix_scans_unfiltered));
    /// see [`amq::PrefixExtractor`] for the built-ins.
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// Whether the tables' filters hold the whole keys (default `true`).
    /// Off (with a [`prefix_extractor`](Self::prefix_extractor)), filters
    /// hold prefixes only: smaller, and a point read probes the key's prefix
    /// instead, so it reads a table whenever the table holds any key of that
    /// prefix. Recorded with every table.
    pub whole_key_filtering: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env: Arc::new(StdEnv),
            filter_policy: FilterPolicy::default(),
            range_filter_policy: RangeFilterPolicy::default(),
            range_fit_scans: 256,
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
            prefix_extractor: None,
            whole_key_filtering: true,
        }
    }
}

/// The setters: each sets one field (see the field for its default and
/// cost) and returns the options.
///
/// ```
/// use std::sync::Arc;
/// use amq_lsm::env::{Env, FaultEnv};
/// use amq_lsm::{Options, Recovery, ValueIndexOptions};
/// let env: Arc<dyn Env> = Arc::new(FaultEnv::new());
/// let opts = Options::default()
///     .env(env)
///     .memtable_bytes(64 << 10)
///     .block_bytes(1024)
///     .table_bytes(1 << 20)
///     .strict_filters(true)
///     .wal_recovery(Recovery::PointInTime)
///     .auto_compact(false)
///     .value_index(Some(ValueIndexOptions::default()))
///     .block_cache_bytes(8 << 20)
///     .filter_partition_bytes(Some(4096))
///     .filter_cache_bytes(1 << 20);
/// assert_eq!((opts.memtable_bytes, opts.filter_partition_bytes), (64 << 10, Some(4096)));
/// ```
impl Options {
    /// Sets [`env`](Self::env).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn env(mut self, env: Arc<dyn Env>) -> Self {
        self.env = env;
        self
    }

    /// Sets [`filter_policy`](Self::filter_policy).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn filter_policy(mut self, policy: FilterPolicy) -> Self {
        self.filter_policy = policy;
        self
    }

    /// Sets [`range_filter_policy`](Self::range_filter_policy): range
    /// filters per table, so bounded scans skip the tables with no key in
    /// their range. Every sizing that `Db::open` accepts keeps the store
    /// writing (see [`RangeFilterPolicy`] for which keys and scans they
    /// serve, and the `Stats` fields that show it).
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{Options, RangeFilterPolicy};
    /// let opts = Options::default().range_filter_policy(RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)));
    /// assert_eq!(opts.range_filter_policy.describe(), "GrafiteRange 16 b/k");
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn range_filter_policy(mut self, policy: RangeFilterPolicy) -> Self {
        self.range_filter_policy = policy;
        self
    }

    /// Sets [`range_fit_scans`](Self::range_fit_scans) (default 256).
    ///
    /// ```
    /// use amq_lsm::Options;
    /// assert_eq!(Options::default().range_fit_scans(0).range_fit_scans, 0);
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn range_fit_scans(mut self, scans: usize) -> Self {
        self.range_fit_scans = scans;
        self
    }

    /// Sets [`compaction`](Self::compaction): a [`CompactionStyle`], or the
    /// [`LeveledOptions`] or [`TieredOptions`] of one.
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn compaction(mut self, style: impl Into<CompactionStyle>) -> Self {
        self.compaction = style.into();
        self
    }

    /// Sets [`memtable_bytes`](Self::memtable_bytes) (default 4 MiB).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn memtable_bytes(mut self, bytes: usize) -> Self {
        self.memtable_bytes = bytes;
        self
    }

    /// Sets [`block_bytes`](Self::block_bytes) (default 4096).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn block_bytes(mut self, bytes: usize) -> Self {
        self.block_bytes = bytes;
        self
    }

    /// Sets [`table_bytes`](Self::table_bytes) (default 2 MiB).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn table_bytes(mut self, bytes: u64) -> Self {
        self.table_bytes = bytes;
        self
    }

    /// Sets [`sync`](Self::sync) (default [`SyncMode::OnSync`]).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn sync(mut self, mode: SyncMode) -> Self {
        self.sync = mode;
        self
    }

    /// Sets [`strict_filters`](Self::strict_filters) (default `false`).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn strict_filters(mut self, strict: bool) -> Self {
        self.strict_filters = strict;
        self
    }

    /// Sets [`wal_recovery`](Self::wal_recovery) (default
    /// [`Recovery::TolerateTornTail`]).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn wal_recovery(mut self, mode: Recovery) -> Self {
        self.wal_recovery = mode;
        self
    }

    /// Sets [`auto_compact`](Self::auto_compact) (default `true`).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn auto_compact(mut self, on: bool) -> Self {
        self.auto_compact = on;
        self
    }

    /// Sets [`value_index`](Self::value_index) (default `None`).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn value_index(mut self, index: Option<ValueIndexOptions>) -> Self {
        self.value_index = index;
        self
    }

    /// Sets [`block_cache_bytes`](Self::block_cache_bytes) (default 0: no
    /// block cache).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn block_cache_bytes(mut self, bytes: usize) -> Self {
        self.block_cache_bytes = bytes;
        self
    }

    /// Sets [`filter_partition_bytes`](Self::filter_partition_bytes)
    /// (default `None`: whole filters).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn filter_partition_bytes(mut self, bytes: Option<usize>) -> Self {
        self.filter_partition_bytes = bytes;
        self
    }

    /// Sets [`filter_cache_bytes`](Self::filter_cache_bytes) (default 0: no
    /// filter cache).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn filter_cache_bytes(mut self, bytes: usize) -> Self {
        self.filter_cache_bytes = bytes;
        self
    }

    /// Sets [`prefix_extractor`](Self::prefix_extractor) (default: none):
    /// a built-in such as [`amq::DelimitedPrefix`], an extractor of your
    /// own, or an `Arc` of one shared with other stores (an
    /// `Arc<dyn PrefixExtractor>` is kept as it is). Without a call, the
    /// store has no extractor.
    ///
    /// Which prefixes the filters then serve: [`Db::scan_prefix`](crate::Db::scan_prefix)`(p)`
    /// asks them when the extractor's own prefix of `p` is complete
    /// ([`amq::PrefixExtractor::is_complete`]), that is when `p` is such a
    /// prefix or extends one. With `DelimitedPrefix::new(b':')`, `"user:"`
    /// and `"user:4"` are served (every key that starts with them has the
    /// prefix `"user:"`) and `"user"` or `""` are not (`"user:1"` and
    /// `"users:1"` have different prefixes): such a scan reads every table
    /// whose range it meets, and [`Stats::prefix_scans_unfiltered`](crate::Stats::prefix_scans_unfiltered)
    /// counts it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use amq::{DelimitedPrefix, FixedPrefix, PrefixExtractor};
    /// let opts = amq_lsm::Options::default().prefix_extractor(DelimitedPrefix::new(b':'));
    /// assert!(opts.prefix_extractor.is_some_and(|e| e.id() == DelimitedPrefix::new(b':').id()));
    ///
    /// // One extractor shared by two stores' options.
    /// let shared: Arc<dyn PrefixExtractor> = Arc::new(FixedPrefix::new(4));
    /// let opts = amq_lsm::Options::default().prefix_extractor(Arc::clone(&shared));
    /// assert!(opts.prefix_extractor.is_some_and(|e| Arc::ptr_eq(&e, &shared)));
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn prefix_extractor(mut self, extractor: impl PrefixExtractor + 'static) -> Self {
        self.prefix_extractor = Some(shared_extractor(extractor));
        self
    }

    /// Sets [`whole_key_filtering`](Self::whole_key_filtering) (default
    /// `true`).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn whole_key_filtering(mut self, on: bool) -> Self {
        self.whole_key_filtering = on;
        self
    }
}

/// `extractor` as the options keep it: an `Arc<dyn PrefixExtractor>` as it
/// is (not behind a second `Arc`, which would cost a pointer chase per key),
/// anything else in a new `Arc`.
fn shared_extractor<E: PrefixExtractor + 'static>(extractor: E) -> Arc<dyn PrefixExtractor> {
    match (&extractor as &dyn Any).downcast_ref::<Arc<dyn PrefixExtractor>>() {
        Some(shared) => Arc::clone(shared),
        None => Arc::new(extractor),
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("filter_policy", &self.filter_policy)
            .field("range_filter_policy", &self.range_filter_policy)
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
            .field("prefix_extractor", &self.prefix_extractor)
            .field("whole_key_filtering", &self.whole_key_filtering)
            .finish_non_exhaustive()
    }
}

impl Options {
    pub(crate) fn validate(&self) -> Result<()> {
        self.filter_policy.validate()?;
        self.range_filter_policy.validate()?;
        if let Some(v) = &self.value_index {
            v.validate()?;
        }
        if self.range_fit_scans > 4096 {
            return Err(Error::InvalidOptions("range_fit_scans must be at most 4096"));
        }
        if self.block_bytes < 64 || self.block_bytes > 64 << 20 {
            return Err(Error::InvalidOptions("block_bytes must be in 64..=64 MiB"));
        }
        if !self.whole_key_filtering && self.prefix_extractor.is_none() {
            return Err(Error::InvalidOptions(
                "whole_key_filtering off needs a prefix_extractor (the filters would hold nothing)",
            ));
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
            CompactionStyle::Leveled(LeveledOptions {
                l0_trigger,
                base_level_bytes,
                size_ratio,
                max_levels,
            }) => {
                if l0_trigger == 0 || base_level_bytes == 0 || size_ratio < 2 || !levels_ok(max_levels) {
                    return Err(Error::InvalidOptions(
                        "leveled: l0_trigger ≥ 1, base_level_bytes ≥ 1, size_ratio ≥ 2, max_levels in 2..=64",
                    ));
                }
            }
            CompactionStyle::Tiered(TieredOptions {
                runs_per_level,
                max_levels,
            }) => {
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
