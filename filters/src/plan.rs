//! The planner: which filter to use for `n` keys, a target FPR or a memory
//! budget, and what the caller needs from it.
//!
//! ```
//! use amq::plan::Planner;
//! use amq::{hash_key, hash_u64, Filter, FilterKind, KeyHash};
//!
//! // A static set of 10,000 keys at 1% FPR: Ribbon, within 5% of the
//! // log2(1/FPR) limit.
//! let plan = Planner::for_keys(10_000).fpr(0.01).plan()?;
//! assert_eq!(plan.kind(), FilterKind::Ribbon);
//! assert!(plan.bits_per_key() < 1.05 * amq::math::min_bits_per_key(0.01));
//!
//! // Built in one call, it delivers what was predicted.
//! let hashes: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
//! let f = plan.build(&hashes)?;
//! assert!((f.bits_per_key() / plan.bits_per_key() - 1.0).abs() < 0.01);
//! assert!((f.expected_fpr() / plan.expected_fpr() - 1.0).abs() < 0.01);
//!
//! // Deletes rule out every static filter and the plain Bloom filters.
//! let plan = Planner::for_keys(10_000).fpr(0.01).deletes(true).plan()?;
//! assert_eq!(plan.kind(), FilterKind::CuckooFilter);
//! # Ok::<(), amq::Error>(())
//! ```
//!
//! # How it decides
//!
//! Every [`FilterKind`] is either a candidate or excluded with a reason:
//!
//! 1. **Needs** exclude kinds: a static kind (xor, binary fuse, Ribbon) needs
//!    every key when it is built and takes no insert after; only counting
//!    Bloom and cuckoo remove keys; only the blocked Bloom filter takes
//!    concurrent inserts (as an [`AtomicBlockedBloom`](crate::AtomicBlockedBloom)).
//! 2. **Sizing**: each remaining kind is sized as its own constructor would
//!    size it ([`AnyFilter::build`], [`AnyFilter::new`]), and its
//!    bytes and FPR are computed from that size with the formulas of
//!    [`math`], [`cuckoo_fpr`] and
//!    the fixed `2^-F` of fingerprint filters, without allocating. A
//!    standard or counting Bloom filter too small for its FPR is left out:
//!    its double hashing has an FPR floor the formula ignores (about
//!    `0.05–0.16 / m` measured, see `bloom::DOUBLE_HASHING_FLOOR`). With a
//!    target FPR, a kind whose fixed FPR is above it, or which cannot reach it
//!    (cuckoo below 0.0116%), is excluded; with a budget, each tunable kind
//!    takes the largest size that fits, and a kind that does not fit at all
//!    is excluded.
//! 3. **Ranking**: with a target FPR, fewest bits per key first; with only a
//!    budget, lowest FPR first. [`Priority::Speed`] puts the query cost class
//!    ([`QueryCost`]) before either.
//!
//! The predictions are checked against built filters by the property tests
//! in `filters/tests/plan.rs`; `docs/choosing.md` gives the measured speed
//! behind the cost classes and where each kind stops being the right one.
//!
//! # Adding a kind
//!
//! A new [`FilterKind`] needs one arm in each `match` of this module (what it
//! supports and costs in `traits_of`, how it is sized in `shape_of`);
//! the compiler points at both (`docs/adding-a-filter.md`).

use core::fmt;

use alloc::vec::Vec;

use crate::bloom::{blocked, counting, standard, DOUBLE_HASHING_FLOOR};
use crate::build::ribbon_params;
use crate::cuckoo::{cuckoo_fpr, SLOTS};
use crate::error::invalid;
use crate::xor::{fingerprint_fpr, fuse_slots, xor_slots, Fingerprint};
use crate::{math, ribbon, AnyFilter, Error, FilterKind, FilterSizing, HashScheme, KeyHash};

/// What to optimise first among the kinds that meet the needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Priority {
    /// Fewest bits per key for a target FPR, or the lowest FPR within a
    /// budget; the query cost breaks ties.
    #[default]
    Space,
    /// The cheapest query cost class first ([`QueryCost`]), then space.
    Speed,
}

/// A relative query cost class: how much memory one query touches, which is
/// what decides its time once a filter outgrows the cache.
///
/// Ordered from cheapest to dearest. Measured at 1M keys (`docs/choosing.md`
/// has the report's command and both tables), a query of each class took
/// 7.6–7.9, 7.6–18 and 15–61 ns. The class counts cache lines, which does
/// not depend on the host; the times do: at 10M keys `BinaryFuse8` (medium)
/// answered faster than the blocked Bloom filter (low) on one host and
/// slower on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueryCost {
    /// One 64-byte cache line: the blocked Bloom filter.
    Low,
    /// Two or three independent cache lines: cuckoo (two buckets), xor and
    /// binary fuse (three slots).
    Medium,
    /// More: a standard or counting Bloom filter reads one line per probe (7
    /// at 1% FPR); Ribbon reads its shard from a cached table and a band of up to four
    /// lines, and computes a parity per result bit.
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
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Params::Bloom { probes } => write!(f, "k = {probes}"),
            Params::Counting { probes } => write!(f, "k = {probes}, 4-bit counters"),
            Params::Cuckoo { fingerprint_bits } => write!(f, "{fingerprint_bits}-bit fingerprints"),
            Params::Fingerprint { bits } => write!(f, "{bits}-bit fingerprints"),
            Params::Ribbon { result_bits } => write!(f, "{result_bits:.2} result bits"),
        }
    }
}

/// The requirements a filter must meet; [`rank`](Planner::rank) turns them
/// into a [`Ranking`] and [`plan`](Planner::plan) into the top [`Plan`].
///
/// Give a target FPR ([`fpr`](Planner::fpr)), a memory budget
/// ([`budget_bits_per_key`](Planner::budget_bits_per_key) or
/// [`budget_bits`](Planner::budget_bits)), or both (the FPR, within the
/// budget). By default the keys are a static set known up front, with no
/// inserts, deletes or concurrency, and space comes first.
///
/// ```
/// use amq::plan::{Planner, Priority};
/// use amq::FilterKind;
/// use amq::Filter;
///
/// // A set that grows after it is built, where speed matters most.
/// let plan = Planner::for_keys(1_000_000)
///     .fpr(0.01)
///     .inserts_after_build(true)
///     .priority(Priority::Speed)
///     .plan()?;
/// assert_eq!(plan.kind(), FilterKind::BlockedBloom);
///
/// // 8 bits per key for a static set: the lowest FPR that fits.
/// let plan = Planner::for_keys(1_000_000).budget_bits_per_key(8.0).plan()?;
/// assert_eq!(plan.kind(), FilterKind::Ribbon);
/// assert!(plan.bits_per_key() <= 8.0 && plan.expected_fpr() < 0.005);
///
/// // Impossible parameters are typed errors, not panics.
/// assert!(Planner::for_keys(0).fpr(0.01).rank().is_err());
/// assert!(Planner::for_keys(1000).fpr(1.5).rank().is_err());
/// assert!(Planner::for_keys(1000).rank().is_err()); // no FPR, no budget
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Planner {
    keys: usize,
    fpr: Option<f64>,
    budget: Option<Budget>,
    inserts_after_build: bool,
    keys_known_up_front: bool,
    deletes: bool,
    concurrent_inserts: bool,
    priority: Priority,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Budget {
    Bits(u64),
    BitsPerKey(f64),
}

impl Planner {
    /// Requirements for a filter of `keys` distinct keys (at least 1, checked
    /// when ranking).
    pub fn for_keys(keys: usize) -> Self {
        Planner {
            keys,
            fpr: None,
            budget: None,
            inserts_after_build: false,
            keys_known_up_front: true,
            deletes: false,
            concurrent_inserts: false,
            priority: Priority::Space,
        }
    }

    /// The target false-positive rate, in `(0, 1)`.
    pub fn fpr(self, fpr: f64) -> Self {
        Planner {
            fpr: Some(fpr),
            ..self
        }
    }

    /// A memory budget of `bits` bits for the whole filter (more than 0).
    pub fn budget_bits(self, bits: u64) -> Self {
        Planner {
            budget: Some(Budget::Bits(bits)),
            ..self
        }
    }

    /// A memory budget of `bits_per_key` bits per key (finite, more than 0).
    pub fn budget_bits_per_key(self, bits_per_key: f64) -> Self {
        Planner {
            budget: Some(Budget::BitsPerKey(bits_per_key)),
            ..self
        }
    }

    /// Whether keys are inserted after the filter is made (default `false`).
    /// Rules out the static kinds.
    pub fn inserts_after_build(self, yes: bool) -> Self {
        Planner {
            inserts_after_build: yes,
            ..self
        }
    }

    /// Whether every key is known when the filter is built (default `true`).
    /// `false` (keys arrive one by one) rules out the static kinds.
    pub fn keys_known_up_front(self, yes: bool) -> Self {
        Planner {
            keys_known_up_front: yes,
            ..self
        }
    }

    /// Whether keys must be removed (default `false`). Leaves counting Bloom
    /// and cuckoo.
    pub fn deletes(self, yes: bool) -> Self {
        Planner { deletes: yes, ..self }
    }

    /// Whether several threads insert into one filter at once (default
    /// `false`). Leaves the blocked Bloom filter, used as an
    /// [`AtomicBlockedBloom`](crate::AtomicBlockedBloom).
    pub fn concurrent_inserts(self, yes: bool) -> Self {
        Planner {
            concurrent_inserts: yes,
            ..self
        }
    }

    /// What to optimise first (default [`Priority::Space`]).
    pub fn priority(self, priority: Priority) -> Self {
        Planner { priority, ..self }
    }

    /// Every kind, ranked or excluded with its reason.
    ///
    /// Errors ([`Error::InvalidParameter`]): no keys; an FPR outside
    /// `(0, 1)`; a budget of 0 bits, or a bits-per-key budget that is not
    /// finite and positive; neither an FPR nor a budget. A well-formed
    /// request that no kind meets is not an error here: the ranking is
    /// empty and says why each kind was excluded ([`plan`](Planner::plan)
    /// makes that an error).
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::FilterKind;
    /// use amq::Filter;
    /// let r = Planner::for_keys(1_000_000).fpr(0.001).deletes(true).rank()?;
    /// let kinds: Vec<FilterKind> = r.plans().iter().map(|p| p.kind()).collect();
    /// assert_eq!(kinds, [FilterKind::CuckooFilter, FilterKind::CountingBloom]);
    /// assert!(r.excluded().iter().any(|e| e.kind() == FilterKind::Ribbon));
    /// assert_eq!(r.plans().len() + r.excluded().len(), FilterKind::ALL.len());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn rank(&self) -> Result<Ranking, Error> {
        let n = self.keys;
        if n == 0 {
            return Err(invalid("keys", "must be at least 1"));
        }
        if let Some(p) = self.fpr {
            if !(p > 0.0 && p < 1.0) {
                return Err(invalid("fpr", "must be strictly between 0 and 1"));
            }
        }
        let budget_bits = match self.budget {
            None => None,
            Some(Budget::Bits(0)) => return Err(invalid("budget", "must be more than 0 bits")),
            Some(Budget::Bits(b)) => Some(b as f64),
            Some(Budget::BitsPerKey(b)) if b.is_finite() && b > 0.0 => Some(b * n as f64),
            Some(Budget::BitsPerKey(_)) => {
                return Err(invalid("budget", "bits per key must be finite and more than 0"))
            }
        };
        let goal = match (self.fpr, budget_bits) {
            (Some(p), budget) => Goal::Fpr(p, budget),
            (None, Some(budget)) => Goal::Budget(budget),
            (None, None) => return Err(invalid("fpr", "give a target FPR, a memory budget, or both")),
        };
        let mut plans = Vec::new();
        let mut excluded = Vec::new();
        for &kind in FilterKind::ALL {
            match self.consider(kind, goal) {
                Ok(plan) => plans.push(plan),
                Err((cause, why)) => excluded.push(Excluded { kind, cause, why }),
            }
        }
        let by_fpr_first = self.fpr.is_none();
        let speed_first = self.priority == Priority::Speed;
        plans.sort_by(|a, b| {
            let cost = a.cost.cmp(&b.cost);
            let space = a.bits_per_key.total_cmp(&b.bits_per_key);
            let fpr = a.fpr.total_cmp(&b.fpr);
            let quality = if by_fpr_first {
                fpr.then(space)
            } else {
                space.then(fpr)
            };
            let first = if speed_first {
                cost.then(quality)
            } else {
                quality.then(cost)
            };
            first.then(a.kind.cmp(&b.kind))
        });
        Ok(Ranking {
            planner: *self,
            plans,
            excluded,
        })
    }

    /// The top choice of [`rank`](Planner::rank).
    ///
    /// Errors: those of `rank`, and an [`Error::InvalidParameter`] when no
    /// kind meets the requirements (named `"budget"` when a budget excluded
    /// the last candidates, `"fpr"` when the target did, `"needs"` when the
    /// needs alone leave nothing).
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::Error;
    /// let too_small = Planner::for_keys(1000).fpr(0.01).budget_bits_per_key(4.0).plan();
    /// assert!(matches!(too_small, Err(Error::InvalidParameter { name: "budget", .. })));
    /// let conflict = Planner::for_keys(1000).fpr(0.01).deletes(true).concurrent_inserts(true).plan();
    /// assert!(matches!(conflict, Err(Error::InvalidParameter { name: "needs", .. })));
    /// ```
    pub fn plan(&self) -> Result<Plan, Error> {
        let ranking = self.rank()?;
        if let Some(best) = ranking.plans.first() {
            return Ok(*best);
        }
        let excluded_by = |c: Cause| ranking.excluded.iter().any(|e| e.cause == c);
        Err(if excluded_by(Cause::Budget) {
            invalid("budget", "too small for every filter kind that meets the needs")
        } else if excluded_by(Cause::Target) {
            invalid("fpr", "no filter kind that meets the needs reaches it")
        } else {
            invalid("needs", "no filter kind meets them all")
        })
    }

    /// `kind` as a candidate, or why not.
    fn consider(&self, kind: FilterKind, goal: Goal) -> Result<Plan, (Cause, &'static str)> {
        if kind.hash_scheme() != HashScheme::Xxh3Seeded {
            return Err((Cause::Needs, FOREIGN_HASH));
        }
        let t = traits_of(kind);
        let needs = |ok: bool, why: &'static str| if ok { Ok(()) } else { Err((Cause::Needs, why)) };
        needs(
            !t.is_static || self.keys_known_up_front,
            "built from every key at once: the keys must be known up front",
        )?;
        needs(
            !t.is_static || !self.inserts_after_build,
            "built once: takes no inserts after build",
        )?;
        needs(t.removes || !self.deletes, t.why_no_removes)?;
        needs(
            t.concurrent || !self.concurrent_inserts,
            "no concurrent inserts (only the blocked Bloom filter has them)",
        )?;
        let n = self.keys;
        let sized = |sizing: FilterSizing| shape_of(kind, n, sizing);
        let (sizing, shape) = match goal {
            Goal::Fpr(p, budget) => {
                let sizing = FilterSizing::Fpr(p);
                let shape = sized(sizing).map_err(|e| (Cause::Target, reason_of(e)))?;
                if matches!(t.knob, Knob::Fixed) && shape.fpr > p {
                    return Err((Cause::Target, t.why_fixed_fpr));
                }
                if budget.is_some_and(|b| !t.fits(&shape, b)) {
                    return Err((Cause::Budget, "needs more bits than the budget for this FPR"));
                }
                (sizing, shape)
            }
            Goal::Budget(budget) => largest_within(t, budget, sized)?,
        };
        if shape.fpr_floor > FLOOR_SHARE * shape.fpr {
            return Err((
                Cause::Target,
                "too few bits for so low an FPR: its double hashing's FPR floor (0.2 / bits) would be over 5% of it",
            ));
        }
        Ok(Plan {
            kind,
            sizing,
            keys: n,
            bytes: shape.bytes,
            bits_per_key: shape.bits() / n as f64,
            fpr: shape.fpr,
            params: shape.params,
            cost: t.cost,
            reason: if self.concurrent_inserts {
                "the one kind with concurrent inserts, as an AtomicBlockedBloom (new_concurrent_filter)"
            } else {
                t.reason
            },
            concurrent: self.concurrent_inserts,
        })
    }
}

/// The largest share of a kind's predicted FPR that an FPR floor the formula
/// leaves out may reach before the kind is left out (so the prediction stays
/// within 5% of what the filter delivers).
const FLOOR_SHARE: f64 = 0.05;

/// What the candidates are sized for.
#[derive(Debug, Clone, Copy)]
enum Goal {
    /// A target FPR, and a budget in bits it must fit in, if any.
    Fpr(f64, Option<f64>),
    /// Only a budget in bits: the lowest FPR that fits.
    Budget(f64),
}

/// The sizing of the largest filter of a kind within `budget` bits, and its
/// shape: for a tunable kind the most bits per key (or the lowest FPR) whose
/// filter fits, found by bisection (a kind's size grows with its bits per
/// key, in whole words, blocks or fingerprint widths, and as its FPR falls);
/// for a fixed one its only size, if it fits.
fn largest_within(
    t: Traits,
    budget: f64,
    sized: impl Fn(FilterSizing) -> Result<Shape, Error>,
) -> Result<(FilterSizing, Shape), (Cause, &'static str)> {
    const TOO_SMALL: (Cause, &str) = (Cause::Budget, "does not fit in the budget at its smallest size");
    // The knob as a number that grows with the size, and back.
    let (lo, hi, sizing): (f64, f64, fn(f64) -> FilterSizing) = match t.knob {
        Knob::BitsPerKey { min, max } => (min, max, FilterSizing::BitsPerKey),
        Knob::Fpr { min, max } => (-libm::log2(max), -libm::log2(min), |x| {
            FilterSizing::Fpr(libm::exp2(-x))
        }),
        Knob::Fixed => (0.0, 0.0, |_| FilterSizing::BitsPerKey(1.0)),
    };
    let fits = |x: f64| {
        let s = sizing(x);
        sized(s)
            .ok()
            .filter(|shape| t.fits(shape, budget))
            .map(|shape| (s, shape))
    };
    if let Some(best) = fits(hi) {
        return Ok(best);
    }
    let mut best = fits(lo).ok_or(TOO_SMALL)?;
    let (mut good, mut bad) = (lo, hi);
    for _ in 0..48 {
        let mid = 0.5 * (good + bad);
        match fits(mid) {
            Some(found) => {
                best = found;
                good = mid;
            }
            None => bad = mid,
        }
    }
    Ok(best)
}

/// Why the planner leaves out a kind driven by another hash than
/// [`hash_key`](crate::hash_key): its plans are built from key hashes.
const FOREIGN_HASH: &str = "hashed with Parquet's XXH64 of a value, not amq's key hash: for filters exchanged with Parquet readers (see ParquetBloom)";

/// Why a kind was excluded, coarsely (for [`Planner::plan`]'s error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Needs,
    Target,
    Budget,
}

/// What a kind can do and costs: the planner's table of kinds.
#[derive(Debug, Clone, Copy)]
struct Traits {
    /// Built once from every key (no inserts after).
    is_static: bool,
    /// Forgets keys.
    removes: bool,
    /// Why not, if it does not.
    why_no_removes: &'static str,
    /// Takes inserts from many threads at once.
    concurrent: bool,
    /// What sets its size within a budget.
    knob: Knob,
    /// Why a fixed FPR misses a target below it.
    why_fixed_fpr: &'static str,
    /// How far above its predicted size a built filter may come, relatively
    /// (kept free within a budget).
    size_spread: f64,
    cost: QueryCost,
    /// The one-line reason to choose it.
    reason: &'static str,
}

impl Traits {
    /// Whether a filter of this shape fits in `budget` bits.
    fn fits(&self, shape: &Shape, budget: f64) -> bool {
        shape.bits() * (1.0 + self.size_spread) <= budget
    }
}

/// What the planner turns to size a kind within a budget.
#[derive(Debug, Clone, Copy)]
enum Knob {
    /// `FilterSizing::BitsPerKey` in `min..=max`.
    BitsPerKey { min: f64, max: f64 },
    /// `FilterSizing::Fpr` in `min..=max`: for a kind whose FPR a bits-per-key
    /// sizing would leave to the key count's rounding (Ribbon).
    Fpr { min: f64, max: f64 },
    /// Nothing: one size and FPR for a key count (fingerprint filters).
    Fixed,
}

/// The planner's table of kinds: one arm per [`FilterKind`].
fn traits_of(kind: FilterKind) -> Traits {
    const FIXED: Traits = Traits {
        is_static: true,
        removes: false,
        why_no_removes: "cannot remove keys",
        concurrent: false,
        knob: Knob::Fixed,
        why_fixed_fpr: "",
        size_spread: 0.0,
        cost: QueryCost::Medium,
        reason: "",
    };
    const BLOOM: Traits = Traits {
        is_static: false,
        why_no_removes: "cannot remove keys (the counting Bloom filter can)",
        knob: Knob::BitsPerKey {
            min: 1.0 / 64.0,
            max: 1000.0,
        },
        ..FIXED
    };
    // The fingerprint filters, by width: why a lower target excludes them.
    const ABOVE_2_8: &str = "its FPR is fixed at 2^-8 = 0.39%, above the target";
    const ABOVE_2_16: &str = "its FPR is fixed at 2^-16 = 0.0015%, above the target";
    const XOR: &str = "static, fixed FPR; three slots per query, 1.23 slots per key";
    const FUSE: &str = "static, fixed FPR, fast to build; three slots per query, 1.125 slots per key";
    match kind {
        FilterKind::StandardBloom => Traits {
            cost: QueryCost::High,
            reason: "takes inserts for ever, its FPR rising gently past n; one cache miss per probe",
            ..BLOOM
        },
        FilterKind::BlockedBloom => Traits {
            concurrent: true,
            cost: QueryCost::Low,
            reason: "one cache line per query, the fastest; takes inserts for ever",
            ..BLOOM
        },
        FilterKind::CountingBloom => Traits {
            removes: true,
            cost: QueryCost::High,
            reason: "removes keys at any FPR, at four times a Bloom filter's space",
            ..BLOOM
        },
        FilterKind::CuckooFilter => Traits {
            removes: true,
            knob: Knob::BitsPerKey {
                min: 8.0 / crate::cuckoo::DESIGN_LOAD,
                max: 1000.0,
            },
            cost: QueryCost::Medium,
            reason:
                "inserts and removes in two buckets; refuses inserts (Error::Full) past about 1.05 n keys",
            ..BLOOM
        },
        FilterKind::Xor8 => Traits {
            why_fixed_fpr: ABOVE_2_8,
            reason: XOR,
            ..FIXED
        },
        FilterKind::Xor16 => Traits {
            why_fixed_fpr: ABOVE_2_16,
            reason: XOR,
            ..FIXED
        },
        FilterKind::BinaryFuse8 => Traits {
            why_fixed_fpr: ABOVE_2_8,
            reason: FUSE,
            ..FIXED
        },
        FilterKind::BinaryFuse16 => Traits {
            why_fixed_fpr: ABOVE_2_16,
            reason: FUSE,
            ..FIXED
        },
        FilterKind::BinaryFuse32 => Traits {
            why_fixed_fpr: "its FPR is fixed at 2^-32 = 2.3e-8%, above the target",
            reason: FUSE,
            ..FIXED
        },
        // Never a candidate (`consider` leaves it out first); listed so
        // that every kind has its row.
        FilterKind::ParquetBloom => Traits {
            reason: FOREIGN_HASH,
            ..BLOOM
        },
        FilterKind::Ribbon => Traits {
            knob: Knob::Fpr {
                min: libm::exp2(-(ribbon::MAX_RESULT_BITS as f64)),
                max: 0.5,
            },
            // Its shards hold a binomial share of the keys, each rounded to
            // whole 64-slot blocks (the prediction spreads them evenly).
            size_spread: 0.005,
            cost: QueryCost::High,
            reason:
                "static, any FPR, within a few percent of log2(1/FPR) bits per key; slower build and query",
            ..FIXED
        },
    }
}

/// A kind's size and FPR for `n` keys at a sizing, as its constructor would
/// make it.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// [`Filter::size_in_bytes`](crate::Filter::size_in_bytes).
    bytes: u64,
    /// [`Filter::expected_fpr`](crate::Filter::expected_fpr) with `n` keys.
    fpr: f64,
    /// A bound on an FPR floor its formula leaves out (the standard and
    /// counting filters' double hashing, `bloom::DOUBLE_HASHING_FLOOR`); 0
    /// where there is none.
    fpr_floor: f64,
    params: Params,
}

impl Shape {
    fn bits(&self) -> f64 {
        self.bytes as f64 * 8.0
    }

    /// A fingerprint filter of `slots` slots of `F`.
    fn fingerprints<F: Fingerprint>(slots: u64, n: usize) -> Shape {
        Shape {
            bytes: slots * F::BYTES as u64,
            fpr: fingerprint_fpr::<F>(n as u64),
            fpr_floor: 0.0,
            params: Params::Fingerprint { bits: F::BITS },
        }
    }
}

/// What a filter of one kind and sizing will be with a number of keys,
/// predicted by [`predict`] without building it.
///
/// ```
/// use amq::{plan, Filter, FilterKind, FilterSizing};
/// let p = plan::predict(FilterKind::Ribbon, 1_000_000, FilterSizing::Fpr(0.01))?;
/// assert!(p.bits_per_key() < 7.0);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    bytes: u64,
    keys: usize,
    fpr: f64,
}

impl Prediction {
    /// [`Filter::size_in_bytes`](crate::Filter::size_in_bytes) of the
    /// filter with the keys predicted for.
    ///
    /// ```
    /// use amq::{plan, Filter, FilterKind, FilterSizing};
    /// let p = plan::predict(FilterKind::Xor8, 1000, FilterSizing::Fpr(0.01))?;
    /// assert_eq!(p.size_in_bytes(), 1_263);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> u64 {
        self.bytes
    }

    /// Bits per key: `size_in_bytes · 8 / keys`.
    ///
    /// ```
    /// use amq::{plan, Filter, FilterKind, FilterSizing};
    /// let p = plan::predict(FilterKind::BlockedBloom, 1000, FilterSizing::BitsPerKey(10.0))?;
    /// assert_eq!(p.bits_per_key(), 10.24);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.keys as f64
    }

    /// [`Filter::expected_fpr`](crate::Filter::expected_fpr) of the filter
    /// filled with the keys predicted for.
    ///
    /// ```
    /// use amq::{plan, Filter, FilterKind, FilterSizing};
    /// let p = plan::predict(FilterKind::Xor8, 1000, FilterSizing::Fpr(0.01))?;
    /// assert_eq!(p.expected_fpr(), 1.0 / 256.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expected_fpr(&self) -> f64 {
        self.fpr
    }
}

/// What [`AnyFilter::build`](crate::AnyFilter::build) of `keys` distinct
/// keys with `sizing` would make, predicted without building it (the
/// planner's own model, for one kind), as
/// [`Filter::size_in_bytes`](crate::Filter::size_in_bytes) and
/// [`Filter::expected_fpr`](crate::Filter::expected_fpr) would report it.
/// Cheap (arithmetic only), so a caller can search over sizings with it, as
/// `amq-lsm`'s Monkey allocation does.
///
/// ```
/// use amq::{plan, Filter, FilterKind, FilterSizing};
/// let p = plan::predict(FilterKind::BlockedBloom, 1_000_000, FilterSizing::Fpr(0.01))?;
/// assert!(p.size_in_bytes() > 1_000_000 && p.size_in_bytes() < 1_400_000);
/// assert!((p.expected_fpr() / 0.01 - 1.0).abs() < 0.05);
/// # Ok::<(), amq::Error>(())
/// ```
pub fn predict(kind: FilterKind, keys: usize, sizing: FilterSizing) -> Result<Prediction, Error> {
    if kind.hash_scheme() != HashScheme::Xxh3Seeded {
        return Err(Error::WrongHashScheme {
            expected: kind.hash_scheme(),
            found: HashScheme::Xxh3Seeded,
        });
    }
    let keys = keys.max(1);
    let shape = shape_of(kind, keys, sizing)?;
    Ok(Prediction {
        bytes: shape.bytes,
        keys,
        fpr: shape.fpr,
    })
}

fn shape_of(kind: FilterKind, n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
    let sizing = sizing.validate()?;
    let keys = n as u64;
    Ok(match kind {
        FilterKind::StandardBloom => {
            let (words, probes) = standard::shape(n, sizing)?;
            Shape {
                bytes: words * 8,
                fpr: math::standard_bloom_fpr(words * 64, probes, keys),
                fpr_floor: DOUBLE_HASHING_FLOOR / (words * 64) as f64,
                params: Params::Bloom { probes },
            }
        }
        FilterKind::BlockedBloom => {
            let (blocks, probes) = blocked::size(n, sizing)?;
            let bits = blocks as u64 * blocked::BLOCK_BITS as u64;
            Shape {
                bytes: bits / 8,
                fpr: math::blocked_bloom_fpr(bits, blocked::BLOCK_BITS, probes, keys),
                fpr_floor: 0.0,
                params: Params::Bloom { probes },
            }
        }
        FilterKind::CountingBloom => {
            let (words, probes) = counting::shape(n, sizing)?;
            Shape {
                bytes: words * 8,
                fpr: math::standard_bloom_fpr(words * 16, probes, keys),
                fpr_floor: DOUBLE_HASHING_FLOOR / (words * 16) as f64,
                params: Params::Counting { probes },
            }
        }
        FilterKind::CuckooFilter => {
            let fingerprint_bits = crate::cuckoo::fingerprint_bits_for_sizing(sizing)?;
            let (bytes, buckets) = crate::cuckoo::table_size(n, fingerprint_bits)?;
            let load = n as f64 / (buckets as f64 * SLOTS as f64);
            Shape {
                bytes: bytes as u64,
                fpr: cuckoo_fpr(fingerprint_bits, load),
                fpr_floor: 0.0,
                params: Params::Cuckoo { fingerprint_bits },
            }
        }
        FilterKind::ParquetBloom => return Err(invalid("kind", FOREIGN_HASH)),
        FilterKind::Xor8 => Shape::fingerprints::<u8>(xor_slots(n)? as u64, n),
        FilterKind::Xor16 => Shape::fingerprints::<u16>(xor_slots(n)? as u64, n),
        FilterKind::BinaryFuse8 => Shape::fingerprints::<u8>(fuse_slots(n)?, n),
        FilterKind::BinaryFuse16 => Shape::fingerprints::<u16>(fuse_slots(n)?, n),
        FilterKind::BinaryFuse32 => Shape::fingerprints::<u32>(fuse_slots(n)?, n),
        FilterKind::Ribbon => {
            let predicted = ribbon::predict(n, &ribbon_params(sizing)?)?;
            Shape {
                bytes: predicted.bytes as u64,
                fpr: predicted.fpr,
                fpr_floor: 0.0,
                params: Params::Ribbon {
                    result_bits: predicted.mean_columns,
                },
            }
        }
    })
}

/// The reason an error gives for excluding a kind.
fn reason_of(e: Error) -> &'static str {
    match e {
        Error::InvalidParameter { reason, .. } => reason,
        Error::TooLarge => "too large for this many keys",
        _ => "cannot be sized for this",
    }
}

/// One candidate: a kind, how to size it, and what it will cost and deliver
/// for the planned number of keys.
///
/// ```
/// use amq::plan::Planner;
/// use amq::{Filter, FilterKind, Insert};
/// let plan = Planner::for_keys(1000).fpr(0.01).inserts_after_build(true).plan()?;
/// assert_eq!(plan.kind(), FilterKind::StandardBloom);
/// let mut f = plan.new_filter()?;
/// f.insert(b"late key")?;
/// assert!(f.contains(b"late key"));
/// assert_eq!(f.size_in_bytes(), plan.size_in_bytes());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    kind: FilterKind,
    sizing: FilterSizing,
    keys: usize,
    bytes: u64,
    bits_per_key: f64,
    fpr: f64,
    params: Params,
    cost: QueryCost,
    reason: &'static str,
    concurrent: bool,
}

impl Plan {
    /// The kind of filter.
    pub fn kind(&self) -> FilterKind {
        self.kind
    }

    /// The sizing to build it with ([`AnyFilter::build`]).
    pub fn sizing(&self) -> FilterSizing {
        self.sizing
    }

    /// The number of keys it was planned for.
    pub fn keys(&self) -> usize {
        self.keys
    }

    /// Predicted [`Filter::size_in_bytes`](crate::Filter::size_in_bytes)
    /// with the planned number of keys.
    pub fn size_in_bytes(&self) -> usize {
        usize::try_from(self.bytes).unwrap_or(usize::MAX)
    }

    /// Predicted bits per key with the planned number of keys.
    pub fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }

    /// Predicted false-positive rate with the planned number of keys (the
    /// filter's [`expected_fpr`](crate::Filter::expected_fpr) once filled).
    pub fn expected_fpr(&self) -> f64 {
        self.fpr
    }

    /// The parameters its constructor derives (probes, fingerprint width...).
    pub fn params(&self) -> Params {
        self.params
    }

    /// Its relative query cost class.
    pub fn query_cost(&self) -> QueryCost {
        self.cost
    }

    /// A one-line reason to choose it.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The filter, built from `hashes`: [`AnyFilter::build`] with this
    /// plan's kind and sizing. It is sized for the hashes given; with as
    /// many distinct hashes as planned it has the predicted size and FPR.
    pub fn build(&self, hashes: &[KeyHash]) -> Result<AnyFilter, Error> {
        AnyFilter::build(self.kind, hashes, self.sizing)
    }

    /// An empty filter with room for the planned number of keys, to fill
    /// with [`Insert`](crate::Insert): [`AnyFilter::new`]. An
    /// [`Error::Unsupported`] for a static kind, which is built from all its
    /// keys at once ([`build`](Plan::build)).
    pub fn new_filter(&self) -> Result<AnyFilter, Error> {
        AnyFilter::new(self.kind, self.keys, self.sizing)
    }

    /// An empty [`AtomicBlockedBloom`](crate::AtomicBlockedBloom) with room
    /// for the planned number of keys, which many threads fill at once
    /// through `&self`: what a plan for concurrent inserts is used as. An
    /// [`Error::Unsupported`] for any other kind than the blocked Bloom
    /// filter.
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::Filter;
    /// use amq::Insert;
    /// let plan = Planner::for_keys(1000).fpr(0.01).concurrent_inserts(true).plan()?;
    /// let f = plan.new_concurrent_filter()?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| f.insert(b"a").unwrap());
    ///     s.spawn(|| f.insert(b"b").unwrap());
    /// });
    /// assert!(f.contains(b"a") && f.contains(b"b"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[cfg(target_has_atomic = "64")]
    pub fn new_concurrent_filter(&self) -> Result<crate::AtomicBlockedBloom, Error> {
        match self.new_filter()? {
            AnyFilter::BlockedBloom(f) => Ok(f.into()),
            other => Err(crate::error::unsupported(crate::Filter::kind(&other), "concurrent inserts")),
        }
    }
}

/// A kind the planner left out, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Excluded {
    kind: FilterKind,
    cause: Cause,
    why: &'static str,
}

impl Excluded {
    /// The kind left out.
    pub fn kind(&self) -> FilterKind {
        self.kind
    }

    /// Why, in one line.
    pub fn why(&self) -> &'static str {
        self.why
    }
}

/// The planner's answer: the candidates, best first, and the kinds left out.
/// Its `Display` is a markdown table (what the `plan` example prints).
///
/// ```
/// use amq::plan::Planner;
/// use amq::Filter;
/// let r = Planner::for_keys(1_000_000).fpr(0.01).rank()?;
/// let table = r.to_string();
/// assert!(table.contains("| 1 | Ribbon |"));
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    planner: Planner,
    plans: Vec<Plan>,
    excluded: Vec<Excluded>,
}

impl Ranking {
    /// The candidates, best first.
    pub fn plans(&self) -> &[Plan] {
        &self.plans
    }

    /// The top candidate, if any kind meets the requirements.
    pub fn best(&self) -> Option<&Plan> {
        self.plans.first()
    }

    /// The kinds left out, with why.
    pub fn excluded(&self) -> &[Excluded] {
        &self.excluded
    }
}

impl fmt::Display for Ranking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.planner;
        write!(f, "{} keys", Thousands(p.keys as u64))?;
        if let Some(fpr) = p.fpr {
            write!(f, ", target FPR {}", Percent(fpr))?;
        }
        match p.budget {
            Some(Budget::Bits(b)) => write!(f, ", budget {} bits", Thousands(b))?,
            Some(Budget::BitsPerKey(b)) => write!(f, ", budget {b} bits/key")?,
            None => {}
        }
        let needs = [
            (!p.keys_known_up_front, "keys arrive one by one"),
            (p.inserts_after_build, "inserts after build"),
            (p.deletes, "deletes"),
            (p.concurrent_inserts, "concurrent inserts"),
        ];
        let mut any = false;
        for (_, need) in needs.iter().filter(|(wanted, _)| *wanted) {
            f.write_str(if any { ", " } else { "; " })?;
            f.write_str(need)?;
            any = true;
        }
        if !any {
            f.write_str("; a static set")?;
        }
        let first = match (p.priority, p.fpr) {
            (Priority::Speed, _) => "query cost first",
            (Priority::Space, Some(_)) => "fewest bits first",
            (Priority::Space, None) => "lowest FPR first",
        };
        writeln!(f, "; {first}. log2(1/FPR) is the space limit.\n")?;
        writeln!(
            f,
            "| # | filter | parameters | bits/key | over log2(1/FPR) | FPR | query cost | why |"
        )?;
        writeln!(
            f,
            "|--:|--------|------------|---------:|-----------------:|----:|------------|-----|"
        )?;
        for (i, plan) in self.plans.iter().enumerate() {
            let name = if plan.concurrent {
                " as AtomicBlockedBloom"
            } else {
                ""
            };
            let over = plan.bits_per_key / math::min_bits_per_key(plan.fpr) - 1.0;
            writeln!(
                f,
                "| {} | {:?}{name} | {} | {:.2} | {:+.1}% | {} | {} | {} |",
                i + 1,
                plan.kind,
                plan.params,
                plan.bits_per_key,
                100.0 * over,
                Percent(plan.fpr),
                plan.cost.name(),
                plan.reason
            )?;
        }
        if self.plans.is_empty() {
            writeln!(f, "| - | (none) | | | | | | no kind meets every requirement |")?;
        }
        if !self.excluded.is_empty() {
            writeln!(f, "\nLeft out:\n")?;
            for e in &self.excluded {
                writeln!(f, "- {:?}: {}", e.kind, e.why)?;
            }
        }
        Ok(())
    }
}

/// A probability as a percentage with three significant digits.
struct Percent(f64);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = 100.0 * self.0;
        if pct == 0.0 {
            f.write_str("0%")
        } else if pct >= 1e-3 {
            let digits = (2.0 - libm::floor(libm::log10(pct))).max(0.0) as usize;
            write!(f, "{pct:.digits$}%")
        } else {
            write!(f, "{pct:.2e}%")
        }
    }
}

/// An integer with thousands separators.
struct Thousands(u64);

impl fmt::Display for Thousands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut groups = [0u16; 7];
        let (mut rest, mut count) = (self.0, 0);
        loop {
            groups[count] = (rest % 1000) as u16;
            count += 1;
            rest /= 1000;
            if rest == 0 {
                break;
            }
        }
        write!(f, "{}", groups[count - 1])?;
        for g in groups[..count - 1].iter().rev() {
            write!(f, ",{g:03}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn percentages_and_thousands_print_readably() {
        let p = |x: f64| Percent(x).to_string();
        assert_eq!(p(0.01), "1.00%");
        assert_eq!(p(0.0294), "2.94%");
        assert_eq!(p(0.25), "25.0%");
        assert_eq!(p(0.001854), "0.185%");
        assert_eq!(p(0.000116), "0.0116%");
        assert_eq!(p(2.3283e-10), "2.33e-8%");
        assert_eq!(Thousands(1_000_000).to_string(), "1,000,000");
        assert_eq!(Thousands(999).to_string(), "999");
    }

    #[test]
    fn every_kind_is_either_a_candidate_or_excluded() {
        let r = Planner::for_keys(5000).fpr(0.001).rank().unwrap();
        let mut kinds: Vec<FilterKind> = r.plans().iter().map(|p| p.kind()).collect();
        kinds.extend(r.excluded().iter().map(|e| e.kind()));
        kinds.sort();
        assert_eq!(kinds, FilterKind::ALL);
    }
}
