//! [`RangeFilterPolicy`]: which range filter, if any, each level's tables
//! carry beside their key filter, for scans with both bounds set.
//!
//! A range filter answers "may any key of this table lie in `lo..=hi`?"
//! ([`amq::range::RangeFilter`]), so a bounded scan opens only the tables
//! whose filter admits its range (`sstable/range_filter.rs` says how byte keys
//! become the filter's `u64`s and when a table may be skipped). It is
//! chosen per level like [`FilterPolicy`](crate::FilterPolicy), with the
//! same first and bottommost overrides, and costs its bits per key of
//! pinned memory in every table that has one.

use amq::range::RangeSizing;
use amq::{FilterKind, HashScheme};

use super::levels::PerLevel;
use crate::error::{Error, Result};

/// The range filter of one level's tables: none, or a kind and its size.
///
/// ```
/// use amq::range::RangeSizing;
/// use amq::FilterKind;
/// use amq_lsm::LevelRangeFilter;
/// let f = LevelRangeFilter::new(FilterKind::GrafiteRange, RangeSizing::BitsPerKey(16.0));
/// assert_eq!(f.kind(), Some(FilterKind::GrafiteRange));
/// assert_eq!(LevelRangeFilter::None.kind(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LevelRangeFilter {
    /// Tables carry no range filter: a bounded scan reads every table whose
    /// key range meets its range (unless a prefix filter rules it out).
    None,
    /// Tables carry a range filter of this kind, sized so.
    Filter {
        /// The amq range filter kind (a kind whose
        /// [`hash_scheme`](FilterKind::hash_scheme) is
        /// [`HashScheme::OrderedU64`]: today [`FilterKind::GrafiteRange`]).
        kind: FilterKind,
        /// Its bits per key, or a false-positive rate for ranges up to a
        /// length.
        sizing: RangeSizing,
    },
}

impl LevelRangeFilter {
    /// A range filter of `kind`, sized by `sizing` (checked when a policy
    /// takes it).
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let f = LevelRangeFilter::new(FilterKind::GrafiteRange, RangeSizing::Fpr { fpr: 0.01, max_range_len: 100 });
    /// assert!(RangeFilterPolicy::per_level(vec![f]).is_ok());
    /// ```
    #[must_use]
    pub fn new(kind: FilterKind, sizing: RangeSizing) -> Self {
        LevelRangeFilter::Filter { kind, sizing }
    }

    /// The kind, or `None` for no range filter.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// use amq_lsm::LevelRangeFilter;
    /// let f = LevelRangeFilter::new(FilterKind::GrafiteRange, RangeSizing::BitsPerKey(12.0));
    /// assert_eq!((f.kind(), LevelRangeFilter::None.kind()), (Some(FilterKind::GrafiteRange), None));
    /// ```
    pub fn kind(&self) -> Option<FilterKind> {
        match self {
            LevelRangeFilter::None => None,
            LevelRangeFilter::Filter { kind, .. } => Some(*kind),
        }
    }

    /// Checks the kind is a range filter this build can build and the
    /// sizing is in its domain.
    fn validate(&self) -> Result<()> {
        let LevelRangeFilter::Filter { kind, sizing } = self else {
            return Ok(());
        };
        if kind.hash_scheme() != HashScheme::OrderedU64 || *kind != FilterKind::GrafiteRange {
            return Err(Error::InvalidOptions(
                "a range filter policy takes range filter kinds (GrafiteRange)",
            ));
        }
        // The kind's whole domain, not only `RangeSizing`'s: a sizing the
        // filter refuses for one key would fail every flush.
        amq::range::GrafiteRange::check_sizing(*sizing)?;
        Ok(())
    }

    /// Builds the range filter of a table from its keys' ordered `u64`s
    /// (duplicates allowed), seeded by `seed`, as amq bytes.
    pub(crate) fn build(&self, keys: &[u64], seed: u64) -> Result<Option<Vec<u8>>> {
        match *self {
            LevelRangeFilter::None => Ok(None),
            LevelRangeFilter::Filter { sizing, .. } => {
                let f = amq::range::GrafiteRange::build_seeded(keys, sizing, seed)?;
                Ok(Some(amq::range::RangeFilter::to_bytes(&f)))
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            LevelRangeFilter::None => "none".to_string(),
            LevelRangeFilter::Filter { kind, sizing } => match sizing {
                RangeSizing::Fpr { fpr, max_range_len } => {
                    format!("{kind:?} {}% up to {max_range_len}", fpr * 100.0)
                }
                RangeSizing::BitsPerKey(b) => format!("{kind:?} {b} b/k"),
                _ => format!("{kind:?} {sizing:?}"),
            },
        }
    }
}

/// Which range filter each level's tables carry (default: none).
///
/// **Which scans it serves.** A range filter answers "may this table hold a
/// key in `lo..hi`?" for scans with both bounds set, and pays off for
/// short ranges: its false-positive rate for an empty range grows with the
/// range's width in keys (about `ℓ / 2^(B − 2.32)` at `B` bits per key:
/// at 16 bits, 1 in 13,000 for one key, 1 in 800 for 16). **Which keys.**
/// Each table maps its keys to integers through the byte positions where
/// they differ, each costing as many bits as the bytes seen there need, so
/// composite keys (`tenant:row`), decimal ids and timestamps, sequential
/// keys and keys under a long shared head all map densely, and a scan's
/// width in keys is its width in integers. Only keys whose differences
/// need more than 64 bits share integers (false positives, never a wrong
/// row). A scan over a whole absent prefix is far wider than any key gap:
/// configure a prefix extractor for that, beside the range filter. Scans
/// wider than the gaps between keys (a millisecond window over UUIDv7 ids,
/// whose random bits make a millisecond `2^74` integers) are served by
/// fitting: each new table coarsens its integers to the store's latest
/// bounded scans where that passes fewer of them at the same memory
/// ([`Options::range_fit_scans`](crate::Options::range_fit_scans)).
///
/// **How to see it work** ([`Db::stats`](crate::Db::stats)):
/// `range_probes` and `range_negatives` (tables skipped),
/// `range_false_positives` (the measured FPR), and per level
/// `range_tables_collapsing` / `range_keys_collapsed` (keys past 64 bits
/// of differences), `range_tables_coarsened` (tables fitted to scans) and
/// `range_filter_bytes`; `range_filters_not_built`
/// counts tables an `Fpr` sizing could not be built for at their size
/// (written without one; writes go on). `Db::open` refuses sizings the
/// filter can never build.
///
/// ```
/// use amq::range::RangeSizing;
/// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
/// let p = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0));
/// assert!(p.for_level(3, false).kind().is_some());
/// // Range filters everywhere but on the deepest level with data.
/// let p = p.with_bottommost(LevelRangeFilter::None);
/// assert_eq!(p.for_level(3, true), LevelRangeFilter::None);
/// assert_eq!(RangeFilterPolicy::default(), RangeFilterPolicy::none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RangeFilterPolicy {
    levels: PerLevel<LevelRangeFilter>,
}

impl Default for RangeFilterPolicy {
    /// No range filters ([`none`](Self::none)).
    fn default() -> Self {
        RangeFilterPolicy::none()
    }
}

impl RangeFilterPolicy {
    /// No range filter anywhere: every bounded scan reads each table whose
    /// key range meets its range (bar prefix filters).
    ///
    /// ```
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// assert_eq!(RangeFilterPolicy::none().for_level(2, true), LevelRangeFilter::None);
    /// ```
    #[must_use]
    pub fn none() -> Self {
        RangeFilterPolicy {
            levels: PerLevel::new(vec![LevelRangeFilter::None]),
        }
    }

    /// A Grafite range filter ([`amq::range::GrafiteRange`]) of `sizing` on
    /// every level. At `B` bits per key an empty range of `ℓ` keys (as the
    /// table's `u64`s count them) is a false positive with probability at
    /// most about `ℓ / 2^(B − 2.32)`.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_lsm::RangeFilterPolicy;
    /// let p = RangeFilterPolicy::uniform(RangeSizing::Fpr { fpr: 0.01, max_range_len: 64 });
    /// assert_eq!(p.describe(), "GrafiteRange 1% up to 64");
    /// ```
    #[must_use]
    pub fn uniform(sizing: RangeSizing) -> Self {
        RangeFilterPolicy {
            levels: PerLevel::new(vec![LevelRangeFilter::new(FilterKind::GrafiteRange, sizing)]),
        }
    }

    /// One entry per level from level 0; the last applies to deeper levels.
    /// Errors if `levels` is empty or an entry is invalid (see
    /// [`validate`](Self::validate)).
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let grafite = LevelRangeFilter::new(FilterKind::GrafiteRange, RangeSizing::BitsPerKey(12.0));
    /// let p = RangeFilterPolicy::per_level(vec![LevelRangeFilter::None, grafite])?;
    /// assert_eq!(p.for_level(0, false), LevelRangeFilter::None);
    /// assert_eq!(p.for_level(4, false), grafite);
    /// # Ok::<(), amq_lsm::Error>(())
    /// ```
    pub fn per_level(levels: Vec<LevelRangeFilter>) -> Result<Self> {
        if levels.is_empty() {
            return Err(Error::InvalidOptions(
                "a range filter policy needs at least one level",
            ));
        }
        let p = RangeFilterPolicy {
            levels: PerLevel::new(levels),
        };
        p.validate()?;
        Ok(p)
    }

    /// The same policy, but tables written to the bottommost level (the
    /// deepest level holding data; [`FilterPolicy`](crate::FilterPolicy)
    /// says when a table is written there) get `filter`.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let p = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)).with_bottommost(LevelRangeFilter::None);
    /// assert_eq!(p.for_level(4, true), LevelRangeFilter::None);
    /// assert!(p.for_level(4, false).kind().is_some());
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_bottommost(mut self, filter: LevelRangeFilter) -> Self {
        self.levels.bottommost = Some(filter);
        self
    }

    /// The same policy, but tables written to level 0 (every flush's table)
    /// get `filter`.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let p = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)).with_first(LevelRangeFilter::None);
    /// assert_eq!(p.for_level(0, false), LevelRangeFilter::None);
    /// assert!(p.for_level(1, false).kind().is_some());
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_first(mut self, filter: LevelRangeFilter) -> Self {
        self.levels.first = Some(filter);
        self
    }

    /// The range filter of a table written to `level`; `bottommost` says
    /// whether no deeper level holds data (ignored for level 0).
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let p = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)).with_bottommost(LevelRangeFilter::None);
    /// assert!(p.for_level(0, true).kind().is_some()); // level 0 is never bottommost
    /// ```
    pub fn for_level(&self, level: usize, bottommost: bool) -> LevelRangeFilter {
        self.levels.for_level(level, bottommost)
    }

    /// Checks every entry names a range filter kind this build can build
    /// (`GrafiteRange`) with a sizing in its domain. `Db::open` calls it.
    ///
    /// ```
    /// use amq::range::RangeSizing;
    /// use amq::FilterKind;
    /// use amq_lsm::{LevelRangeFilter, RangeFilterPolicy};
    /// let bloom = LevelRangeFilter::new(FilterKind::BlockedBloom, RangeSizing::BitsPerKey(16.0));
    /// assert!(RangeFilterPolicy::per_level(vec![bloom]).is_err());
    /// let bad = RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(-1.0));
    /// assert!(bad.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        self.levels.all().try_for_each(LevelRangeFilter::validate)
    }

    /// A short name for reports (`"GrafiteRange 16 b/k"`).
    ///
    /// ```
    /// use amq_lsm::RangeFilterPolicy;
    /// assert_eq!(RangeFilterPolicy::none().describe(), "none");
    /// ```
    pub fn describe(&self) -> String {
        self.levels.describe(LevelRangeFilter::describe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_range_kinds_with_valid_sizes_are_taken() {
        let sizing = RangeSizing::BitsPerKey(16.0);
        for &kind in FilterKind::ALL {
            let p = RangeFilterPolicy::per_level(vec![LevelRangeFilter::new(kind, sizing)]);
            assert_eq!(p.is_ok(), kind == FilterKind::GrafiteRange, "{kind:?}");
        }
        let bad = LevelRangeFilter::new(
            FilterKind::GrafiteRange,
            RangeSizing::Fpr {
                fpr: 0.5,
                max_range_len: 0,
            },
        );
        assert!(RangeFilterPolicy::none().with_bottommost(bad).validate().is_err());
        assert!(RangeFilterPolicy::none().with_first(bad).validate().is_err());
        assert!(RangeFilterPolicy::per_level(vec![]).is_err());
    }

    #[test]
    fn a_built_filter_holds_its_keys() {
        let f = LevelRangeFilter::new(FilterKind::GrafiteRange, RangeSizing::BitsPerKey(16.0));
        let bytes = f.build(&[3, 3, 90, 7], 42).unwrap().unwrap();
        let g = amq::range::GrafiteRange::from_bytes(&bytes).unwrap();
        use amq::range::RangeFilter;
        assert_eq!((g.num_keys(), g.seed()), (3, 42));
        assert!(g.may_contain(7) && g.may_contain_range(80, 100));
        assert_eq!(LevelRangeFilter::None.build(&[1], 0).unwrap(), None);
    }
}
