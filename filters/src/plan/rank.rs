//! How the planner weighs one kind: the needs it meets, its size and FPR
//! for the goal (from the kind's own cost model), and the largest size
//! within a budget.

use super::{Plan, Planner};
use crate::cost::{CostModel, Knob, Shape, Traits};
use crate::{
    BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error, FilterKind,
    FilterSizing, HashScheme, Ribbon, StandardBloom, Xor16, Xor8,
};

/// A kind's size and FPR for `n` keys at a (validated) sizing.
pub(super) type ShapeFn = fn(usize, FilterSizing) -> Result<Shape, Error>;

/// Each kind's cost model ([`CostModel`]): what it can do and costs, and how
/// it is sized. `None` for a kind the planner never plans (one driven by
/// another hash than the key hash).
pub(super) fn model(kind: FilterKind) -> Option<(Traits, ShapeFn)> {
    fn of<K: CostModel>() -> Option<(Traits, ShapeFn)> {
        Some((K::TRAITS, K::shape))
    }
    match kind {
        FilterKind::StandardBloom => of::<StandardBloom>(),
        FilterKind::BlockedBloom => of::<BlockedBloom>(),
        FilterKind::SplitBlockBloom => of::<crate::SplitBlockBloom>(),
        FilterKind::CountingBloom => of::<CountingBloom>(),
        FilterKind::CuckooFilter => of::<CuckooFilter>(),
        FilterKind::Xor8 => of::<Xor8>(),
        FilterKind::Xor16 => of::<Xor16>(),
        FilterKind::BinaryFuse8 => of::<BinaryFuse8>(),
        FilterKind::BinaryFuse16 => of::<BinaryFuse16>(),
        FilterKind::BinaryFuse32 => of::<BinaryFuse32>(),
        FilterKind::Ribbon => of::<Ribbon>(),
        FilterKind::PackedBinaryFuse => of::<crate::PackedBinaryFuse>(),
        FilterKind::QuotientFilter => of::<crate::quotient::QuotientFilter>(),
        FilterKind::ExpandingQuotientFilter => of::<crate::quotient::ExpandingQuotientFilter>(),
        FilterKind::ParquetBloom | FilterKind::GrafiteRange | FilterKind::MementoFilter => None,
    }
}

impl Planner {
    /// `kind` as a candidate, or why not.
    pub(super) fn consider(&self, kind: FilterKind, goal: Goal) -> Result<Plan, (Cause, &'static str)> {
        let Some((t, shape_of)) = model(kind).filter(|_| kind.hash_scheme() == HashScheme::Xxh3Seeded) else {
            return Err((Cause::Needs, not_key_hashed(kind)));
        };
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
            t.grows || self.count_known,
            "sized in advance for the key count (past it a Bloom filter's FPR climbs, other kinds refuse inserts)",
        )?;
        needs(
            t.concurrent || !self.concurrent_inserts,
            "no concurrent inserts (only the blocked Bloom filter has them)",
        )?;
        let n = self.entries();
        let sized = |sizing: FilterSizing| shape_of(n, sizing.validate()?);
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
pub(super) enum Goal {
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
pub(super) fn not_key_hashed(kind: FilterKind) -> &'static str {
    match kind {
        FilterKind::GrafiteRange => {
            "a range filter over ordered u64 keys, not a point filter of key hashes: sized by plan::predict_range (see range::GrafiteRange)"
        }
        FilterKind::MementoFilter => {
            "a dynamic range filter over ordered u64 keys (inserts, removes, grows), not a point filter of key hashes (see range::MementoFilter)"
        }
        FilterKind::ParquetBloom => {
            "hashed with Parquet's XXH64 of a value, not amq's key hash: for filters exchanged with Parquet readers (see ParquetBloom)"
        }
        _ => "not a point filter of amq key hashes",
    }
}

/// Why a kind was excluded, coarsely (for [`Planner::plan`]'s error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cause {
    Needs,
    Target,
    Budget,
}

/// The reason an error gives for excluding a kind.
fn reason_of(e: Error) -> &'static str {
    match e {
        Error::InvalidParameter { reason, .. } => reason,
        Error::TooLarge => "too large for this many keys",
        _ => "cannot be sized for this",
    }
}
