//! Quotient filters: a table of key-hash remainders kept in hash order,
//! which deletes, counts repeated keys, and merges two filters in one pass.
//!
//! * `table/`: the raw rank-and-select table of `(quotient, value)`
//!   entries, its layout and invariants (`mod.rs`), inserts and removals
//!   with their shifts and the bulk build (`edit.rs`), its bytes and their
//!   checks (`parts.rs`).
//! * `filter.rs`: [`QuotientFilter`], the filter over a key hash: sizing,
//!   queries, inserts, deletes, counts, merges, bulk build.
//! * `kernel.rs`: the query compiled with and without `popcnt`, chosen
//!   per CPU.
//! * `codec.rs`: its byte format.
//! * `expanding/`: [`ExpandingQuotientFilter`], the same table doubled
//!   whenever it fills, with fingerprints that carry their length.
//!
//! The Memento range filter ([`MementoFilter`](crate::range::MementoFilter))
//! is the expanding table with a key's low bits under each fingerprint.
//!
//! ```
//! use amq::quotient::QuotientFilter;
//! use amq::{Filter, FilterSizing, Insert};
//! let mut f = QuotientFilter::new(1_000, FilterSizing::Fpr(0.01))?;
//! f.insert(b"k")?;
//! assert!(f.contains(b"k"));
//! # Ok::<(), amq::Error>(())
//! ```

mod codec;
pub(crate) mod expanding;
pub(crate) mod filter;
pub(crate) mod kernel;
pub(crate) mod table;

pub use expanding::{ExpandingOptions, ExpandingQuotientFilter};
pub use filter::{QuotientFilter, MAX_LOAD};

use crate::cost::{CostModel, Knob, Params, QueryCost, Shape, Traits};
use crate::{Error, FilterSizing};

impl CostModel for QuotientFilter {
    const TRAITS: Traits = Traits {
        is_static: false,
        removes: true,
        knob: Knob::BitsPerKey {
            min: 1.0 + filter::METADATA_BITS,
            max: 1000.0,
        },
        // One or two cache lines, but a rank, a select and a scan of the
        // run: measured at Ribbon's query time, not cuckoo's.
        cost: QueryCost::High,
        reason: "inserts, removes and counts in hash order (merges in one pass); refuses inserts (Error::Full) at 95% of its 2^q slots",
        ..Traits::FIXED
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let (q, r) = filter::bits_for(n, sizing)?;
        let (_, bytes) = table::Table::shape(q, r)?;
        Ok(Shape {
            bytes: bytes as u64,
            fpr: filter::fpr(n as f64 / (1u64 << q) as f64, r),
            fpr_floor: 0.0,
            params: Params::Quotient {
                quotient_bits: q,
                remainder_bits: r,
            },
        })
    }
}
