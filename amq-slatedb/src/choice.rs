//! Which amq filter a table gets: a kind and its sizing given up front, or
//! the planner's choice for the table's own key count.

use amq::plan::{Planner, Priority};
use amq::{AnyFilter, Error, FilterKind, FilterSizing, KeyHash};

/// How a policy picks each table's filter.
///
/// ```
/// use amq::plan::Priority;
/// use amq::{FilterKind, FilterSizing};
/// use amq_slatedb::FilterChoice;
/// let fixed = FilterChoice::kind(FilterKind::Ribbon, FilterSizing::Fpr(0.01))?;
/// let planned = FilterChoice::planned(0.01, Priority::Space)?;
/// assert_ne!(fixed, planned);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FilterChoice {
    /// This kind, sized so, for every table.
    Kind {
        /// A kind that builds from key hashes ([`AnyFilter::build`]).
        kind: FilterKind,
        /// Its target FPR or bits per key.
        sizing: FilterSizing,
    },
    /// The planner's first choice for a static set of each table's key
    /// count at this FPR ([`Planner`]): Ribbon for space, the blocked Bloom
    /// filter for speed, or what fits the count best.
    Planned {
        /// The target FPR, in `(0, 1)`.
        fpr: f64,
        /// Fewest bits first, or the cheapest query first.
        priority: Priority,
    },
}

impl FilterChoice {
    /// `kind`, sized by `sizing`, for every table. [`Error::InvalidParameter`]
    /// for a sizing out of its domain or a kind that is not built from key
    /// hashes (the range filters, `ParquetBloom`).
    pub fn kind(kind: FilterKind, sizing: FilterSizing) -> Result<Self, Error> {
        let sizing = sizing.validate()?;
        // A prediction exists exactly for the kinds built from key hashes,
        // and checks the sizing against the kind's own domain.
        amq::plan::predict(kind, 1_000, sizing)?;
        Ok(FilterChoice::Kind { kind, sizing })
    }

    /// The planner's choice for each table at target FPR `fpr`.
    pub fn planned(fpr: f64, priority: Priority) -> Result<Self, Error> {
        Planner::for_keys(1_000).fpr(fpr).priority(priority).plan()?;
        Ok(FilterChoice::Planned { fpr, priority })
    }

    /// The filter of `hashes` (duplicates allowed), planned for `entries`.
    pub(crate) fn build(&self, hashes: &[KeyHash]) -> Result<AnyFilter, Error> {
        match *self {
            FilterChoice::Kind { kind, sizing } => AnyFilter::build(kind, hashes, sizing),
            FilterChoice::Planned { fpr, priority } => Planner::for_keys(hashes.len().max(1))
                .fpr(fpr)
                .priority(priority)
                .plan()?
                .build(hashes),
        }
    }

    /// The predicted bytes of the filter of `entries` distinct entries.
    pub(crate) fn estimate(&self, entries: usize) -> usize {
        let bytes = match *self {
            FilterChoice::Kind { kind, sizing } => {
                amq::plan::predict(kind, entries, sizing).map(|p| p.size_in_bytes() as usize)
            }
            FilterChoice::Planned { fpr, priority } => Planner::for_keys(entries.max(1))
                .fpr(fpr)
                .priority(priority)
                .plan()
                .map(|p| p.size_in_bytes()),
        };
        // The frame's header, parameters and checksum beside the words.
        bytes.unwrap_or(0).saturating_add(128)
    }
}
