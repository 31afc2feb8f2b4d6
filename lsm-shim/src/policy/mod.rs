//! [`FilterPolicy`]: which amq filter each level's tables carry.
//!
//! A policy is a list of [`LevelFilter`]s, one per level from level 0; the
//! last entry applies to every deeper level. Any [`FilterKind`] driven by
//! amq's key hash works: the store builds filters through
//! [`AnyFilter::build`] and reads them back through
//! [`AnyFilter::from_bytes`], so such a kind added to amq plugs in here with
//! no change to the store. A kind driven by another hash
//! ([`FilterKind::hash_scheme`]: `ParquetBloom`, which takes Parquet's value
//! hash, and the range filter `GrafiteRange`, which takes ordered integers)
//! cannot answer for the store's key hashes, so a policy naming it is
//! refused ([`FilterPolicy::per_level`], and `Db::open` for any policy)
//! rather than built into tables that would miss their own keys.
//!
//! Presets follow what RocksDB offers, generalised to every kind:
//! [`uniform`](FilterPolicy::uniform) (one kind everywhere),
//! [`bloom_then_ribbon`](FilterPolicy::bloom_then_ribbon) (fast-to-build
//! Bloom filters for the short-lived upper levels, Ribbon's 30% smaller
//! filters below: RocksDB's `bloom_before_level`). Two levels can be named
//! by what they are rather than by number, since which number they have
//! depends on how much data the tree holds:
//!
//! - the **first** level, level 0, where every flush writes its table
//!   ([`FilterPolicy::with_first`]);
//! - the **bottommost** level, as RocksDB and Pebble say: the deepest level
//!   that holds data ([`FilterPolicy::with_bottommost`]). A table is
//!   written to the bottommost level when, as it is written, no level
//!   deeper than its own holds a table other than the compaction's own
//!   inputs. With leveled compaction that is a compaction's output on the
//!   deepest non-empty level (level 1 while everything fits there); with
//!   tiered compaction, a merge into the deepest non-empty level or the
//!   last level's merge into itself; a full compaction
//!   ([`Db::compact`](crate::Db::compact)) always writes it. A flush writes
//!   level 0, which is never bottommost (its tables are merged down soon).
//!   A table keeps the filter it was written with when deeper levels fill
//!   later. `with_bottommost(LevelFilter::None)` leaves the deepest level,
//!   which holds most keys, without filters: a read that reaches it for a
//!   missing key pays one block read, and the filter memory of ~90% of the
//!   keys is saved (RocksDB's `optimize_filters_for_hits`).

use amq::{AnyFilter, FilterKind, FilterSizing, HashScheme, KeyHash};

use crate::error::{Error, Result};

mod levels;
mod range;

use levels::PerLevel;
pub use range::{LevelRangeFilter, RangeFilterPolicy};

/// The filter of one level's tables: none, or a kind and its size.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_lsm::LevelFilter;
/// let f = LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01));
/// assert_eq!(f.kind(), Some(FilterKind::Ribbon));
/// assert_eq!(LevelFilter::None.kind(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LevelFilter {
    /// Tables carry no filter: every read whose key is in a table's range
    /// reads a data block.
    None,
    /// Tables carry a filter of this kind, sized so.
    Filter {
        /// The amq filter kind.
        kind: FilterKind,
        /// Its bits per key or target FPR (fixed-width kinds ignore it).
        sizing: FilterSizing,
    },
}

impl LevelFilter {
    /// A filter of `kind`, sized by `sizing`.
    #[must_use]
    pub fn new(kind: FilterKind, sizing: FilterSizing) -> Self {
        LevelFilter::Filter { kind, sizing }
    }

    /// The kind, or `None` for no filter.
    pub fn kind(&self) -> Option<FilterKind> {
        match self {
            LevelFilter::None => None,
            LevelFilter::Filter { kind, .. } => Some(*kind),
        }
    }

    /// Builds the filter of a table from its keys' hashes, as amq bytes.
    pub(crate) fn build(&self, hashes: &[KeyHash]) -> Result<Option<Vec<u8>>> {
        match *self {
            LevelFilter::None => Ok(None),
            LevelFilter::Filter { kind, sizing } => Ok(Some(amq::Filter::to_bytes(&AnyFilter::build(
                kind, hashes, sizing,
            )?))),
        }
    }
}

/// Which filter each level's tables carry.
///
/// ```
/// use amq::{FilterKind, FilterSizing};
/// use amq_lsm::{FilterPolicy, LevelFilter};
/// let p = FilterPolicy::bloom_then_ribbon(0.01, 2);
/// assert_eq!(p.for_level(0, false).kind(), Some(FilterKind::BlockedBloom));
/// assert_eq!(p.for_level(5, false).kind(), Some(FilterKind::Ribbon));
///
/// let p = FilterPolicy::uniform(FilterKind::BinaryFuse8, FilterSizing::BitsPerKey(9.0))
///     .with_bottommost(LevelFilter::None);
/// assert_eq!(p.for_level(3, false).kind(), Some(FilterKind::BinaryFuse8));
/// assert_eq!(p.for_level(3, true), LevelFilter::None);
///
/// // Bloom filters everywhere, Ribbon on the deepest level with data,
/// // whichever level number that is.
/// let ribbon = LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01));
/// let p = FilterPolicy::uniform(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01)).with_bottommost(ribbon);
/// assert_eq!(p.for_level(1, true), ribbon);
/// assert_eq!(p.for_level(1, false).kind(), Some(FilterKind::BlockedBloom));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    /// Per level, with level 0 and the bottommost level nameable apart.
    levels: PerLevel<LevelFilter>,
    /// Monkey's budget: `(kind, bits per key on average)`; `levels` then
    /// holds the uniform fallback.
    monkey: Option<(FilterKind, f64)>,
}

impl Default for FilterPolicy {
    /// Blocked Bloom filters at 10 bits per key on every level.
    fn default() -> Self {
        FilterPolicy::uniform(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0))
    }
}

impl FilterPolicy {
    /// No filter anywhere: the baseline every measurement compares against.
    #[must_use]
    pub fn none() -> Self {
        FilterPolicy {
            levels: PerLevel::new(vec![LevelFilter::None]),
            monkey: None,
        }
    }

    /// The same filter on every level.
    #[must_use]
    pub fn uniform(kind: FilterKind, sizing: FilterSizing) -> Self {
        FilterPolicy {
            levels: PerLevel::new(vec![LevelFilter::new(kind, sizing)]),
            monkey: None,
        }
    }

    /// One entry per level from level 0; the last applies to deeper levels.
    ///
    /// ```
    /// use amq::{FilterKind, FilterSizing};
    /// use amq_lsm::{FilterPolicy, LevelFilter};
    /// let p = FilterPolicy::per_level(vec![
    ///     LevelFilter::None,
    ///     LevelFilter::new(FilterKind::Xor8, FilterSizing::Fpr(0.01)),
    /// ])?;
    /// assert_eq!(p.for_level(0, false), LevelFilter::None);
    /// assert_eq!(p.for_level(5, false).kind(), Some(FilterKind::Xor8));
    /// # Ok::<(), amq_lsm::Error>(())
    /// ```
    ///
    /// Errors if `levels` is empty, a sizing is out of its domain, or a kind
    /// is not driven by amq's key hash (see [`validate`](Self::validate)).
    pub fn per_level(levels: Vec<LevelFilter>) -> Result<Self> {
        if levels.is_empty() {
            return Err(Error::InvalidOptions("a filter policy needs at least one level"));
        }
        for l in &levels {
            if let LevelFilter::Filter { sizing, .. } = l {
                sizing.validate()?;
            }
        }
        let policy = FilterPolicy {
            levels: PerLevel::new(levels),
            monkey: None,
        };
        policy.validate()?;
        Ok(policy)
    }

    /// Checks that every sizing the policy names is in its domain and every
    /// kind is driven by amq's key hash
    /// ([`HashScheme::Xxh3Seeded`]), the hash the store computes once per key
    /// and probes every table's filter with. `Db::open` calls it.
    ///
    /// ```
    /// use amq::{FilterKind, FilterSizing};
    /// use amq_lsm::{Error, FilterPolicy};
    /// assert!(FilterPolicy::default().validate().is_ok());
    /// let parquet = FilterPolicy::uniform(FilterKind::ParquetBloom, FilterSizing::Fpr(0.01));
    /// assert!(matches!(parquet.validate(), Err(Error::InvalidOptions(_))));
    /// ```
    pub fn validate(&self) -> Result<()> {
        for l in self.levels.all() {
            if let LevelFilter::Filter { kind, sizing } = l {
                sizing.validate()?;
                if kind.hash_scheme() != HashScheme::Xxh3Seeded {
                    return Err(Error::InvalidOptions(
                        "a filter kind driven by another hash than the store's key hash (ParquetBloom, GrafiteRange) cannot be a table's key filter",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Blocked Bloom filters above level `ribbon_from`, Ribbon filters from it
    /// down, both at false-positive rate `fpr` (RocksDB's
    /// `bloom_before_level`). Where the data is depends on how much there
    /// is: to put Ribbon filters where most keys are whatever the tree's
    /// depth, name the bottommost level instead
    /// ([`with_bottommost`](Self::with_bottommost)).
    ///
    /// ```
    /// use amq::FilterKind;
    /// use amq_lsm::FilterPolicy;
    /// let p = FilterPolicy::bloom_then_ribbon(0.01, 2);
    /// assert_eq!(p.for_level(1, false).kind(), Some(FilterKind::BlockedBloom));
    /// assert_eq!(p.for_level(2, false).kind(), Some(FilterKind::Ribbon));
    /// ```
    #[must_use]
    pub fn bloom_then_ribbon(fpr: f64, ribbon_from: usize) -> Self {
        let mut levels =
            vec![LevelFilter::new(FilterKind::BlockedBloom, FilterSizing::Fpr(fpr)); ribbon_from];
        levels.push(LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(fpr)));
        FilterPolicy {
            levels: PerLevel::new(levels),
            monkey: None,
        }
    }

    /// The same policy, but tables written to the bottommost level (the
    /// deepest level that holds data, whatever its number: see the module's
    /// documentation for when a table is written there) get `filter`.
    /// `with_bottommost(LevelFilter::None)` is RocksDB's
    /// `optimize_filters_for_hits`. It takes precedence over the levels'
    /// list and over a Monkey allocation; level 0 is never bottommost.
    ///
    /// ```
    /// use amq::{FilterKind, FilterSizing};
    /// use amq_lsm::{FilterPolicy, LevelFilter};
    /// let p = FilterPolicy::default().with_bottommost(LevelFilter::None);
    /// assert_eq!(p.for_level(2, true), LevelFilter::None);
    /// assert_eq!(p.for_level(2, false).kind(), Some(FilterKind::BlockedBloom));
    /// assert_eq!(p.for_level(0, true).kind(), Some(FilterKind::BlockedBloom));
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_bottommost(mut self, filter: LevelFilter) -> Self {
        self.levels.bottommost = Some(filter);
        self
    }

    /// The same policy, but tables written to the first level, level 0
    /// (every flush's table), get `filter`. It takes precedence over the
    /// levels' list and over a Monkey allocation.
    ///
    /// ```
    /// use amq::{FilterKind, FilterSizing};
    /// use amq_lsm::{FilterPolicy, LevelFilter};
    /// let bloom = LevelFilter::new(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0));
    /// let p = FilterPolicy::uniform(FilterKind::Ribbon, FilterSizing::Fpr(0.01)).with_first(bloom);
    /// assert_eq!(p.for_level(0, false), bloom);
    /// assert_eq!(p.for_level(1, false).kind(), Some(FilterKind::Ribbon));
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_first(mut self, filter: LevelFilter) -> Self {
        self.levels.first = Some(filter);
        self
    }

    /// Monkey's allocation ([`crate::monkey`]): filters of `kind` with
    /// `bits_per_key` bits per key on average over the whole tree, each
    /// level's FPR proportional to the keys per run there, so that a missing
    /// key costs the fewest expected data-block reads. Each new table's
    /// filter follows the tree as it is when the table is written (its
    /// level's share of the keys, the new table included). `kind` must be
    /// one whose FPR can be set freely ([`crate::monkey::supports`]:
    /// StandardBloom, BlockedBloom, Ribbon), else `InvalidOptions`.
    ///
    /// ```
    /// use amq::FilterKind;
    /// use amq_lsm::FilterPolicy;
    ///
    /// let p = FilterPolicy::monkey(FilterKind::BlockedBloom, 6.0).unwrap();
    /// assert_eq!(p.monkey_budget(), Some((FilterKind::BlockedBloom, 6.0)));
    /// assert_eq!(p.describe(), "Monkey BlockedBloom 6 b/k");
    /// assert!(FilterPolicy::monkey(FilterKind::Xor8, 6.0).is_err());
    /// ```
    pub fn monkey(kind: FilterKind, bits_per_key: f64) -> Result<Self> {
        if !crate::monkey::supports(kind) {
            return Err(Error::InvalidOptions(
                "Monkey needs a filter kind whose FPR can be set freely: StandardBloom, BlockedBloom, SplitBlockBloom or Ribbon",
            ));
        }
        let mut p = FilterPolicy::per_level(vec![LevelFilter::new(
            kind,
            FilterSizing::BitsPerKey(bits_per_key),
        )])?;
        p.monkey = Some((kind, bits_per_key));
        Ok(p)
    }

    /// The Monkey budget `(kind, bits per key)`, if this is a Monkey policy.
    pub fn monkey_budget(&self) -> Option<(FilterKind, f64)> {
        self.monkey
    }

    /// The filter of a new table written to `level` of a tree shaped
    /// `levels` (key and run counts per level, the new table included),
    /// where the filters `built` stay; `bottommost` says whether no deeper
    /// level holds data. The same as [`for_level`](Self::for_level) except
    /// for a Monkey policy, whose sizing depends on the tree (should the
    /// allocation fail, the table gets the uniform fallback of the same
    /// bits per key).
    pub(crate) fn for_new_table(
        &self,
        level: usize,
        bottommost: bool,
        levels: &[crate::monkey::LevelShape],
        built: &[crate::monkey::Built],
    ) -> LevelFilter {
        if let Some(named) = self.levels.named(level, bottommost) {
            return named;
        }
        let Some((kind, bits_per_key)) = self.monkey else {
            return self.for_level(level, bottommost);
        };
        match crate::monkey::bits_for_new_tables(kind, bits_per_key, levels, built, level) {
            Ok(Some(b)) => LevelFilter::new(kind, FilterSizing::BitsPerKey(b)),
            Ok(None) if levels.get(level).is_some_and(|l| l.keys > 0) => LevelFilter::None,
            Ok(None) | Err(_) => self.for_level(level, bottommost),
        }
    }

    /// The filter of a table written to `level`; `bottommost` says whether no
    /// deeper level holds data (ignored for level 0, which is never
    /// bottommost). A Monkey policy's tables are sized by the tree as it is
    /// when they are written; this gives its uniform fallback.
    ///
    /// ```
    /// use amq::FilterKind;
    /// use amq_lsm::FilterPolicy;
    /// let p = FilterPolicy::default();
    /// assert_eq!(p.for_level(3, true).kind(), Some(FilterKind::BlockedBloom));
    /// ```
    pub fn for_level(&self, level: usize, bottommost: bool) -> LevelFilter {
        self.levels.for_level(level, bottommost)
    }

    /// A short name for reports (`"BlockedBloom 10 b/k"`).
    ///
    /// ```
    /// use amq_lsm::{FilterPolicy, LevelFilter};
    /// let p = FilterPolicy::default().with_bottommost(LevelFilter::None);
    /// assert_eq!(p.describe(), "BlockedBloom 10 b/k / bottommost none");
    /// ```
    pub fn describe(&self) -> String {
        let one = |l: &LevelFilter| match l {
            LevelFilter::None => "none".to_string(),
            LevelFilter::Filter { kind, sizing } => match sizing {
                FilterSizing::BitsPerKey(b) => format!("{kind:?} {b} b/k"),
                FilterSizing::Fpr(p) => format!("{kind:?} {}%", p * 100.0),
            },
        };
        let body = match self.monkey {
            Some((kind, bpk)) => format!("Monkey {kind:?} {bpk} b/k"),
            None => self.levels.levels.iter().map(one).collect::<Vec<_>>().join(" / "),
        };
        self.levels.describe_with(body, one)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_entry_applies_below() {
        let p = FilterPolicy::per_level(vec![
            LevelFilter::None,
            LevelFilter::new(FilterKind::Xor8, FilterSizing::Fpr(0.01)),
        ])
        .unwrap();
        assert_eq!(p.for_level(0, false), LevelFilter::None);
        assert_eq!(p.for_level(1, false).kind(), Some(FilterKind::Xor8));
        assert_eq!(p.for_level(9, true).kind(), Some(FilterKind::Xor8));
        assert!(FilterPolicy::per_level(vec![]).is_err());
        assert!(
            FilterPolicy::per_level(vec![LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(2.0))])
                .is_err()
        );
    }

    #[test]
    fn kinds_not_driven_by_the_key_hash_are_refused() {
        let parquet = LevelFilter::new(FilterKind::ParquetBloom, FilterSizing::Fpr(0.01));
        assert!(matches!(
            FilterPolicy::per_level(vec![LevelFilter::None, parquet]),
            Err(Error::InvalidOptions(_))
        ));
        // Built anyway (a policy made with `uniform`): a typed error, never a
        // filter of amq key hashes in Parquet's layout.
        assert!(matches!(
            parquet.build(&[1, 2, 3].map(amq::hash_u64)),
            Err(Error::Filter(amq::Error::WrongHashScheme { .. }))
        ));
        for &kind in FilterKind::ALL {
            let ok = FilterPolicy::uniform(kind, FilterSizing::Fpr(0.01))
                .validate()
                .is_ok();
            assert_eq!(ok, kind.hash_scheme() == HashScheme::Xxh3Seeded, "{kind:?}");
        }
    }

    #[test]
    fn level_zero_keeps_its_filter_even_when_bottommost() {
        let p = FilterPolicy::default().with_bottommost(LevelFilter::None);
        assert!(p.for_level(0, true).kind().is_some());
        assert_eq!(p.for_level(1, true), LevelFilter::None);
    }

    #[test]
    fn the_first_and_bottommost_levels_take_precedence_and_are_validated() {
        let ribbon = LevelFilter::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01));
        let xor = LevelFilter::new(FilterKind::Xor8, FilterSizing::Fpr(0.01));
        let p = FilterPolicy::bloom_then_ribbon(0.01, 2)
            .with_first(xor)
            .with_bottommost(LevelFilter::None);
        assert_eq!(p.for_level(0, false), xor);
        assert_eq!(p.for_level(0, true), xor);
        assert_eq!(p.for_level(1, false).kind(), Some(FilterKind::BlockedBloom));
        assert_eq!(p.for_level(1, true), LevelFilter::None);
        assert_eq!(p.for_level(4, false), ribbon);
        // A Monkey policy too: the named levels win over its sizing.
        let m = FilterPolicy::monkey(FilterKind::BlockedBloom, 8.0)
            .unwrap()
            .with_bottommost(ribbon);
        let shapes = [
            crate::monkey::LevelShape { keys: 1_000, runs: 1 },
            crate::monkey::LevelShape {
                keys: 10_000,
                runs: 1,
            },
        ];
        assert_eq!(m.for_new_table(1, true, &shapes, &[]), ribbon);
        assert_eq!(
            m.for_new_table(1, false, &shapes, &[]).kind(),
            Some(FilterKind::BlockedBloom)
        );
        assert_eq!(m.describe(), "Monkey BlockedBloom 8 b/k / bottommost Ribbon 1%");
        let parquet = LevelFilter::new(FilterKind::ParquetBloom, FilterSizing::Fpr(0.01));
        assert!(FilterPolicy::default()
            .with_bottommost(parquet)
            .validate()
            .is_err());
        assert!(FilterPolicy::default().with_first(parquet).validate().is_err());
    }
}
