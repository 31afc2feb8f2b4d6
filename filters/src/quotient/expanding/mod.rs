//! [`ExpandingQuotientFilter`]: a quotient filter with no size fixed in
//! advance. Its whole story:
//!
//! * `fingerprint.rs`: fingerprints that carry their own length in one
//!   slot width, and what expansion does to one;
//! * `schedule.rs`: how long new fingerprints are after each expansion,
//!   and the FPR bound that follows;
//! * `filter.rs`: the filter: inserts that double the table when full,
//!   queries, deletes of the longest match, counts, merges;
//! * `growing.rs`: the table, schedule and counts this filter shares with
//!   the Memento range filter: addressing, inserts, doubling;
//! * `grow.rs`: the ordered entry streams that expansion and merge write;
//! * `codec.rs`: its byte format.
//!
//! The table is the plain quotient filter's (`quotient/table/`), and so are
//! the CPU kernels that find a run.

mod codec;
mod filter;
pub(crate) mod fingerprint;
pub(crate) mod grow;
pub(crate) mod growing;
pub(crate) mod schedule;

pub use filter::{ExpandingOptions, ExpandingQuotientFilter};

use crate::cost::{CostModel, Knob, Params, QueryCost, Shape, Traits};
use crate::quotient::filter::{fpr, quotient_bits_for};
use crate::{Error, Filter, FilterSizing};

impl ExpandingQuotientFilter {
    /// The filter [`AnyFilter::new`](crate::AnyFilter::new) makes for `n`
    /// keys: the first table sized for them, fingerprints for the target
    /// FPR over the default horizon, or the longest whose slots cost at
    /// most the bits per key at `n`.
    pub(crate) fn for_sizing(n: usize, sizing: FilterSizing) -> Result<Self, Error> {
        match sizing.validate()? {
            FilterSizing::Fpr(target) => {
                let mut options = ExpandingOptions::new(target);
                options.initial_keys = n;
                ExpandingQuotientFilter::new(options)
            }
            FilterSizing::BitsPerKey(b) => ExpandingQuotientFilter::with_bits_per_key(n, b),
        }
    }
}

impl CostModel for ExpandingQuotientFilter {
    const TRAITS: Traits = Traits {
        is_static: false,
        removes: true,
        grows: true,
        knob: Knob::Fpr {
            min: 1e-15,
            max: schedule::MAX_FPR,
        },
        cost: QueryCost::High,
        reason: "grows with no size given, its FPR at or below the target for 18 doublings; inserts, removes, counts, merges",
        ..Traits::FIXED
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let f = ExpandingQuotientFilter::for_sizing(n, sizing)?;
        let q = quotient_bits_for(n)?;
        Ok(Shape {
            bytes: f.size_in_bytes() as u64,
            fpr: fpr(n as f64 / (1u64 << q) as f64, f.fingerprint_bits()),
            fpr_floor: 0.0,
            params: Params::Expanding {
                quotient_bits: q,
                fingerprint_bits: f.fingerprint_bits(),
            },
        })
    }
}
