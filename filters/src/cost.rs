//! What each kind tells the planner before it is built: its cost model.
//!
//! A kind implements [`CostModel`] in its own module: what it can do (static
//! or not, removes, concurrent inserts), what the planner turns to size it
//! within a budget ([`Knob`]), its query cost class, a one-line reason to
//! choose it, and its size and FPR for a key count and a sizing
//! ([`Shape`]), computed by the same sizing helpers its constructor calls,
//! without allocating. The planner (`plan/`) reads only this, so it never
//! reaches into a kind's internals, and a new kind plugs in by implementing
//! the trait and adding one arm to the planner's dispatch.
//!
//! Below every kind: it names none of them.

use core::fmt;

use crate::{Error, FilterSizing};

/// A relative query cost class: how much memory one query touches, which is
/// what decides its time once a filter outgrows the cache.
///
/// Ordered from cheapest to dearest. Measured at 1M keys (`docs/results-amq.md`
/// has the report's command and both tables), a query of each class took
/// 3.3–4.2, 5.1–8.1 and 10.1–18.8 ns. The class counts cache lines, which
/// does not depend on the host; the times do: at 10M keys `BinaryFuse8`
/// (medium) answered faster than the blocked Bloom filter (low) in one run
/// and slower in another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueryCost {
    /// One cache line: the blocked and split-block Bloom filters.
    Low,
    /// Two or three independent cache lines: cuckoo (two buckets), xor and
    /// binary fuse (three slots).
    Medium,
    /// More: a standard or counting Bloom filter reads one line per probe (7
    /// at 1% FPR); Ribbon reads its shard from a cached table and a band of up to four
    /// lines, and computes a parity per result bit; the packed binary fuse
    /// filter reads three lines, but unpacks each slot (measured with these).
    High,
}

impl QueryCost {
    /// `"low"`, `"medium"` or `"high"`.
    ///
    /// ```
    /// assert_eq!(amq::plan::QueryCost::Low.name(), "low");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            QueryCost::Low => "low",
            QueryCost::Medium => "medium",
            QueryCost::High => "high",
        }
    }
}

/// The parameters a kind's constructor derives from the sizing, for display.
///
/// ```
/// use amq::plan::{Params, Planner};
/// let plan = Planner::for_keys(1000).fpr(0.01).deletes(true).plan()?;
/// assert_eq!(plan.params(), Params::Cuckoo { fingerprint_bits: 12 });
/// assert_eq!(plan.params().to_string(), "12-bit fingerprints");
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Params {
    /// A standard or blocked Bloom filter with `probes` probes per key.
    Bloom {
        /// Probes per key, `k`.
        probes: u32,
    },
    /// A counting Bloom filter: 4-bit counters, `probes` per key.
    Counting {
        /// Probes per key, `k`.
        probes: u32,
    },
    /// A cuckoo filter with `fingerprint_bits`-bit fingerprints.
    Cuckoo {
        /// 8, 12 or 16.
        fingerprint_bits: u32,
    },
    /// An xor or binary fuse filter with `bits`-bit fingerprints.
    Fingerprint {
        /// 8, 16 or 32.
        bits: u32,
    },
    /// A Ribbon filter with this many result bits per slot on average (a mix
    /// of `r` and `r + 1` where the FPR is not a power of two).
    Ribbon {
        /// Result bits (columns) per slot.
        result_bits: f64,
    },
    /// A quotient filter of `2^quotient_bits` slots and
    /// `remainder_bits`-bit remainders.
    Quotient {
        /// `q`.
        quotient_bits: u32,
        /// `r`.
        remainder_bits: u32,
    },
    /// An expanding quotient filter, starting at `2^quotient_bits` slots
    /// with `fingerprint_bits`-bit fingerprints.
    Expanding {
        /// `q` at the start.
        quotient_bits: u32,
        /// `F0`: fingerprint bits for the expansions planned.
        fingerprint_bits: u32,
    },
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Params::Bloom { probes } => write!(f, "k = {probes}"),
            Params::Counting { probes } => write!(f, "k = {probes}, 4-bit counters"),
            Params::Cuckoo { fingerprint_bits } => write!(f, "{fingerprint_bits}-bit fingerprints"),
            Params::Fingerprint { bits } => write!(f, "{bits}-bit fingerprints"),
            Params::Ribbon { result_bits } => write!(f, "{result_bits:.2} result bits"),
            Params::Quotient {
                quotient_bits,
                remainder_bits,
            } => write!(f, "2^{quotient_bits} slots, {remainder_bits}-bit remainders"),
            Params::Expanding {
                quotient_bits,
                fingerprint_bits,
            } => write!(
                f,
                "2^{quotient_bits} slots to start, {fingerprint_bits}-bit fingerprints"
            ),
        }
    }
}

/// What the planner turns to size a kind within a budget.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Knob {
    /// `FilterSizing::BitsPerKey` in `min..=max`.
    BitsPerKey { min: f64, max: f64 },
    /// `FilterSizing::Fpr` in `min..=max`: for a kind whose FPR a bits-per-key
    /// sizing would leave to the key count's rounding (Ribbon).
    Fpr { min: f64, max: f64 },
    /// Nothing: one size and FPR for a key count (fingerprint filters).
    Fixed,
}

/// What a kind can do and costs: its row in the planner's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Traits {
    /// Built once from every key (no inserts after).
    pub(crate) is_static: bool,
    /// Forgets keys.
    pub(crate) removes: bool,
    /// Why not, if it does not.
    pub(crate) why_no_removes: &'static str,
    /// Takes inserts from many threads at once.
    pub(crate) concurrent: bool,
    /// Grows past the key count it was made for, keeping its FPR.
    pub(crate) grows: bool,
    /// What sets its size within a budget.
    pub(crate) knob: Knob,
    /// Why a fixed FPR misses a target below it.
    pub(crate) why_fixed_fpr: &'static str,
    /// How far above its predicted size a built filter may come, relatively
    /// (kept free within a budget).
    pub(crate) size_spread: f64,
    pub(crate) cost: QueryCost,
    /// The one-line reason to choose it.
    pub(crate) reason: &'static str,
}

impl Traits {
    /// A static kind of fixed size and FPR (the fingerprint filters): the
    /// row the others start from.
    pub(crate) const FIXED: Traits = Traits {
        is_static: true,
        removes: false,
        why_no_removes: "cannot remove keys",
        concurrent: false,
        grows: false,
        knob: Knob::Fixed,
        why_fixed_fpr: "",
        size_spread: 0.0,
        cost: QueryCost::Medium,
        reason: "",
    };

    /// Whether a filter of this shape fits in `budget` bits.
    pub(crate) fn fits(&self, shape: &Shape, budget: f64) -> bool {
        shape.bits() * (1.0 + self.size_spread) <= budget
    }
}

/// A kind's size and FPR for `n` keys at a sizing, as its constructor would
/// make it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// [`Filter::size_in_bytes`](crate::Filter::size_in_bytes).
    pub(crate) bytes: u64,
    /// [`Filter::expected_fpr`](crate::Filter::expected_fpr) with `n` keys.
    pub(crate) fpr: f64,
    /// A bound on an FPR floor its formula leaves out (the standard and
    /// counting filters' double hashing); 0 where there is none.
    pub(crate) fpr_floor: f64,
    pub(crate) params: Params,
}

impl Shape {
    /// Its size in bits.
    pub(crate) fn bits(&self) -> f64 {
        self.bytes as f64 * 8.0
    }
}

/// A kind's cost model: see the [module docs](self).
pub(crate) trait CostModel {
    /// What it can do and costs.
    const TRAITS: Traits;

    /// Its size and FPR for `n` keys (at least 1) at `sizing` (validated).
    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error>;
}
