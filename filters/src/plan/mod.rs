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
//!    [`math`](crate::math), [`cuckoo_fpr`](crate::cuckoo::cuckoo_fpr) and
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
//! Each kind brings its own cost model (what it supports and costs, how it
//! is sized) by implementing the crate's internal `CostModel` trait in its
//! own module; the planner needs one arm for it in its dispatch
//! (`plan/rank.rs`), which the compiler points at (`docs/adding-a-filter.md`).

use alloc::vec::Vec;

pub use crate::cost::{Params, QueryCost};
use crate::error::invalid;
use crate::{AnyFilter, Error, FilterKind, FilterSizing, HashScheme, KeyHash};

mod range;
mod rank;
mod table;

pub use range::{predict_range, RangePrediction};

use rank::{Cause, Goal};

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
///
/// Each requirement takes the planner and returns it changed, and is
/// `#[must_use]`: a call whose result is dropped (the planner is `Copy`, so
/// the unchanged one stays usable) is a warning, and an error under
/// `#![deny(unused_must_use)]`, not a plan made without the requirement:
///
/// ```compile_fail
/// #![deny(unused_must_use)]
/// let planner = amq::plan::Planner::for_keys(1_000).fpr(0.01);
/// planner.deletes(true); // dropped: error
/// assert!(planner.plan().is_ok());
/// ```
///
/// The same with the result assigned compiles:
///
/// ```
/// #![deny(unused_must_use)]
/// let planner = amq::plan::Planner::for_keys(1_000).fpr(0.01);
/// let planner = planner.deletes(true);
/// assert!(planner.plan().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Planner {
    keys: usize,
    prefixes: usize,
    fpr: Option<f64>,
    budget: Option<Budget>,
    inserts_after_build: bool,
    keys_known_up_front: bool,
    count_known: bool,
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
    /// when ranking). With [`fpr`](Planner::fpr) it says what fastbloom's
    /// `with_false_pos(p).expected_items(n)` says, and picks the kind too.
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::{Filter, Insert};
    /// let plan = Planner::for_keys(10_000).fpr(0.01).inserts_after_build(true).plan()?;
    /// let mut f = plan.new_filter()?;
    /// f.insert(b"k")?;
    /// assert!(f.contains(b"k"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "expected_items", alias = "with_capacity")]
    #[must_use]
    pub fn for_keys(keys: usize) -> Self {
        Planner {
            keys,
            prefixes: 0,
            fpr: None,
            budget: None,
            inserts_after_build: false,
            keys_known_up_front: true,
            count_known: true,
            deletes: false,
            concurrent_inserts: false,
            priority: Priority::Space,
        }
    }

    /// Distinct key prefixes the filter holds beside the keys (default 0):
    /// a filter of keys and their prefixes
    /// ([`PrefixExtractor`](crate::PrefixExtractor)) holds `keys + prefixes`
    /// entries, and is sized for them; a filter of prefixes alone is planned
    /// with `for_keys(0).prefixes(m)`. Bits per key, budgets per key and
    /// [`Plan::keys`] then count entries.
    ///
    /// ```
    /// use amq::plan::Planner;
    /// let keys_only = Planner::for_keys(100_000).fpr(0.01).plan()?;
    /// let with_prefixes = Planner::for_keys(100_000).prefixes(5_000).fpr(0.01).plan()?;
    /// assert_eq!(with_prefixes.keys(), 105_000);
    /// assert!(with_prefixes.size_in_bytes() > keys_only.size_in_bytes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn prefixes(self, prefixes: usize) -> Self {
        Planner { prefixes, ..self }
    }

    /// The entries the filter holds: keys and prefixes.
    pub(crate) fn entries(&self) -> usize {
        self.keys.saturating_add(self.prefixes)
    }

    /// The target false-positive rate, in `(0, 1)`.
    ///
    /// ```
    /// use amq::plan::Planner;
    /// let plan = Planner::for_keys(10_000).fpr(0.001).plan()?;
    /// // The target, give or take a rounding of the filter's parameters.
    /// assert!((plan.expected_fpr() / 0.001 - 1.0).abs() < 0.01);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_false_pos")]
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn fpr(self, fpr: f64) -> Self {
        Planner {
            fpr: Some(fpr),
            ..self
        }
    }

    /// A memory budget of `bits` bits for the whole filter (more than 0).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn budget_bits(self, bits: u64) -> Self {
        Planner {
            budget: Some(Budget::Bits(bits)),
            ..self
        }
    }

    /// A memory budget of `bits_per_key` bits per key (finite, more than 0).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn budget_bits_per_key(self, bits_per_key: f64) -> Self {
        Planner {
            budget: Some(Budget::BitsPerKey(bits_per_key)),
            ..self
        }
    }

    /// Whether keys are inserted after the filter is made (default `false`).
    /// Rules out the static kinds.
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn inserts_after_build(self, yes: bool) -> Self {
        Planner {
            inserts_after_build: yes,
            ..self
        }
    }

    /// Whether every key is known when the filter is built (default `true`).
    /// `false` (keys arrive one by one) rules out the static kinds.
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn keys_known_up_front(self, yes: bool) -> Self {
        Planner {
            keys_known_up_front: yes,
            ..self
        }
    }

    /// Whether the key count is known (default `true`). `false`: `keys` is
    /// where the filter starts, and more may come with no bound known in
    /// advance. Leaves the kinds that grow and keep their FPR, the
    /// [`ExpandingQuotientFilter`](crate::quotient::ExpandingQuotientFilter)
    /// (every other kind is sized for its count: past it a Bloom filter's
    /// FPR climbs, and cuckoo and quotient filters refuse inserts). Its
    /// plan's size and FPR are at `keys`; the FPR stays at or below the
    /// target as it grows, its size about doubling with each doubling of
    /// the keys.
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::FilterKind;
    /// let plan = Planner::for_keys(10_000).fpr(0.01).key_count_known(false).plan()?;
    /// assert_eq!(plan.kind(), FilterKind::ExpandingQuotientFilter);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn key_count_known(self, yes: bool) -> Self {
        Planner {
            count_known: yes,
            ..self
        }
    }

    /// Whether keys must be removed (default `false`). Leaves the kinds
    /// that remove: the quotient filters (the expanding one too when the key
    /// count is not known), the cuckoo filter and the counting Bloom filter.
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn deletes(self, yes: bool) -> Self {
        Planner { deletes: yes, ..self }
    }

    /// Whether several threads insert into one filter at once (default
    /// `false`). Leaves the blocked Bloom filter, used as an
    /// [`AtomicBlockedBloom`](crate::AtomicBlockedBloom).
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn concurrent_inserts(self, yes: bool) -> Self {
        Planner {
            concurrent_inserts: yes,
            ..self
        }
    }

    /// What to optimise first (default [`Priority::Space`]).
    #[must_use = "a builder returns the changed value; assign it"]
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
    /// assert_eq!(kinds[..3], [FilterKind::CuckooFilter, FilterKind::QuotientFilter, FilterKind::ExpandingQuotientFilter]);
    /// assert!(r.excluded().iter().any(|e| e.kind() == FilterKind::Ribbon));
    /// assert_eq!(r.plans().len() + r.excluded().len(), FilterKind::ALL.len());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn rank(&self) -> Result<Ranking, Error> {
        let n = self.entries();
        if n == 0 {
            return Err(invalid("keys", "must be at least 1 (keys and prefixes together)"));
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
    let (_, shape_of) = rank::model(kind).ok_or(invalid("kind", rank::not_key_hashed(kind)))?;
    let shape = shape_of(keys, sizing.validate()?)?;
    Ok(Prediction {
        bytes: shape.bytes,
        keys,
        fpr: shape.fpr,
    })
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

    /// The number of entries it was planned for: keys, and prefixes if the
    /// planner was given any ([`Planner::prefixes`]).
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

    /// The filter, built from a source of key hashes read a few times, in
    /// the memory and on the threads `options` gives:
    /// [`AnyFilter::build_streamed`] with this plan's kind and sizing
    /// (Ribbon, binary fuse and blocked Bloom; [`Error::Unsupported`] for
    /// the other kinds, which take a slice or inserts).
    ///
    /// ```
    /// use amq::plan::Planner;
    /// use amq::streamed::StreamedBuild;
    /// use amq::{hash_u64, Filter};
    /// let source = || (0..200_000u64).map(hash_u64);
    /// let plan = Planner::for_keys(200_000).fpr(0.01).plan()?;
    /// let f = plan.build_streamed(source, &StreamedBuild::new().with_memory(256 << 10))?;
    /// assert!(source().all(|h| f.contains_hash(h)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_streamed<S, I>(
        &self,
        source: S,
        options: &crate::streamed::StreamedBuild,
    ) -> Result<AnyFilter, Error>
    where
        S: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        AnyFilter::build_streamed(self.kind, source, self.sizing, options)
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
            other => Err(crate::error::unsupported(
                crate::Filter::kind(&other),
                "concurrent inserts",
            )),
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
/// Its `Display` is a markdown table (what the `amq-plan` binary prints).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_either_a_candidate_or_excluded() {
        let r = Planner::for_keys(5000).fpr(0.001).rank().unwrap();
        let mut kinds: Vec<FilterKind> = r.plans().iter().map(|p| p.kind()).collect();
        kinds.extend(r.excluded().iter().map(|e| e.kind()));
        kinds.sort();
        assert_eq!(kinds, FilterKind::ALL);
    }
}
