//! Monkey: filter memory spread over the levels so that a missing key costs
//! the fewest reads (Dayan, Athanassoulis & Idreos, "Monkey: Optimal
//! Navigable Key-Value Store", SIGMOD 2017).
//!
//! # The model
//!
//! A point read of a key the store does not hold consults one table in each
//! sorted run whose key range covers it; the run's filter lets the read
//! through to a data block with probability `p_i`, its false-positive rate.
//! With `r_i` runs of `n_i / r_i` keys at level `i`, the expected data-block
//! reads per missing key and the filter memory are
//!
//! ```text
//!   R = Σ_i r_i · p_i                   M = Σ_i n_i · b(p_i)
//! ```
//!
//! where `b(p)` is the kind's bits per key at FPR `p`: about `c · log2(1/p)`
//! (`c ≈ 1.44` for Bloom filters, ≈ 1.03 for Ribbon). Minimising `R` for a
//! fixed `M` (a Lagrange multiplier `λ`): `∂/∂p_i [R + λ M] = r_i − λ n_i c
//! / (p_i ln 2) = 0`, so
//!
//! ```text
//!   p_i = K · n_i / r_i        (capped at 1: no filter)
//! ```
//!
//! FPR proportional to the keys per run: the deep, big levels get the high
//! FPRs and the small upper levels nearly perfect filters, since a bit of
//! memory buys far more there. The same bits per key on every level (what
//! [`FilterPolicy::uniform`](crate::FilterPolicy::uniform) does) makes `R`
//! grow with the number of levels; Monkey's stays nearly flat (the paper's
//! Figure 5).
//!
//! `K` is found by bisection on `log K` so that the memory the store would
//! really build equals the budget: `b(p)` comes from amq's planner model
//! ([`amq::plan::predict`]), the same sizing `AnyFilter::build` uses, with
//! its discrete effects (whole probe counts, Ribbon's minimum of 1 result
//! bit) included, so the budget is met in bytes, not in a formula.

use std::collections::BTreeMap;
use std::sync::Mutex;

use amq::{FilterKind, FilterSizing};

use crate::error::{Error, Result};

/// One level of the tree, as the allocation sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LevelShape {
    /// Keys (entries) in the level.
    pub keys: u64,
    /// Sorted runs in the level (each level-0 table is a run; a leveled
    /// deeper level is one run; a tiered level holds several).
    pub runs: usize,
}

/// A Monkey allocation: a filter sizing per level and what the model
/// predicts for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// Per level, the target FPR of its filters (`None`: no filter; an
    /// empty level gets `None` too).
    pub fprs: Vec<Option<f64>>,
    /// Per level, the bits per key that reach it (what a new table's filter
    /// is built with: sizing by bits per key needs no search).
    pub bits_per_key: Vec<Option<f64>>,
    /// Expected data-block reads per missing key, `Σ r_i · p_i`, with the
    /// FPRs the planner predicts for the built filters.
    pub reads_per_miss: f64,
    /// Filter bits the allocation builds over all levels.
    pub bits: f64,
}

/// Kinds whose bits per key fall smoothly with the FPR, so the allocation
/// can give every level the FPR it asks for.
pub fn supports(kind: FilterKind) -> bool {
    matches!(
        kind,
        FilterKind::StandardBloom
            | FilterKind::BlockedBloom
            | FilterKind::SplitBlockBloom
            | FilterKind::Ribbon
    )
}

/// The lowest FPR the bisection gives a `kind`: what the kind can be built
/// for (Ribbon has at most 32 result bits, a standard Bloom filter at most
/// 30 probes), and at most 10^-12, below which filters cost more bits per
/// key than any budget here pays for.
fn min_fpr(kind: FilterKind) -> f64 {
    match kind {
        FilterKind::Ribbon => 2f64.powi(-32),
        FilterKind::StandardBloom => 2f64.powi(-28),
        _ => 1e-12,
    }
}

/// FPR steps per halving on the grid [`sized`] works on: targets are
/// rounded to `2^(-j/16)`, within 2.2% of what was asked.
const GRID: f64 = 16.0;

/// `(bits per key, FPR)` of a `kind` filter for about `keys` keys at about
/// target `fpr`, as the store would build it (amq's planner model).
///
/// Sizing some kinds for an FPR is a search (a blocked Bloom filter's
/// formula has no inverse), and the bisection asks for many FPRs per new
/// table, so answers are kept: on a grid of FPRs (`2^(-j/16)`) and of key
/// counts (powers of two; bits per key hardly depend on the count).
fn sized(kind: FilterKind, keys: u64, fpr: f64) -> Result<(f64, f64)> {
    /// `(kind id, log2 keys, FPR step)` → `(bits per key, FPR)`.
    type Sized = BTreeMap<(u8, u32, i64), (f64, f64)>;
    static CACHE: Mutex<Sized> = Mutex::new(BTreeMap::new());
    let log_keys = 63 - keys.max(1).leading_zeros();
    let step = (-fpr.log2() * GRID).round() as i64;
    let key = (kind.id(), log_keys, step);
    if let Some(hit) = CACHE.lock().ok().and_then(|c| c.get(&key).copied()) {
        return Ok(hit);
    }
    let n = 1u64 << log_keys;
    let target = (-(step as f64) / GRID).exp2();
    let p = amq::plan::predict(kind, n as usize, FilterSizing::Fpr(target))?;
    let answer = (p.bits_per_key(), p.expected_fpr());
    if let Ok(mut c) = CACHE.lock() {
        c.insert(key, answer);
    }
    Ok(answer)
}

/// Per level: the target FPR for scale `k` (`None` when it is 1 or more, or
/// the level is empty).
fn fprs_at(kind: FilterKind, levels: &[LevelShape], k: f64) -> Vec<Option<f64>> {
    levels
        .iter()
        .map(|l| {
            if l.keys == 0 || l.runs == 0 {
                return None;
            }
            let p = k * l.keys as f64 / l.runs as f64;
            (p < 1.0).then_some(p.max(min_fpr(kind)))
        })
        .collect()
}

/// `(bits, reads per miss, bits per key per level)` the FPRs build and
/// predict.
fn cost(
    kind: FilterKind,
    levels: &[LevelShape],
    fprs: &[Option<f64>],
) -> Result<(f64, f64, Vec<Option<f64>>)> {
    let (mut bits, mut reads, mut per_level) = (0.0, 0.0, Vec::with_capacity(levels.len()));
    for (l, p) in levels.iter().zip(fprs) {
        match p {
            Some(p) => {
                let per_run = l.keys / l.runs as u64;
                let (bpk, fpr) = sized(kind, per_run, *p)?;
                bits += bpk * l.keys as f64;
                reads += l.runs as f64 * fpr;
                per_level.push(Some(bpk));
            }
            None => {
                if l.keys > 0 {
                    reads += l.runs as f64;
                }
                per_level.push(None);
            }
        }
    }
    Ok((bits, reads, per_level))
}

/// The Monkey allocation of `bits_per_key` bits per key on average over
/// the keys of `levels`, for filters of `kind` ([`supports`]).
///
/// ```
/// use amq::FilterKind;
/// use amq_lsm::monkey::{allocate, LevelShape};
///
/// // A leveled tree, size ratio 10: 10k, 100k, 1M keys in one run each.
/// let levels: Vec<LevelShape> =
///     [10_000, 100_000, 1_000_000].iter().map(|&keys| LevelShape { keys, runs: 1 }).collect();
/// let a = allocate(FilterKind::BlockedBloom, 5.0, &levels).unwrap();
/// let p: Vec<f64> = a.fprs.iter().map(|p| p.unwrap()).collect();
/// // FPR proportional to level size: each level 10 times the one above.
/// assert!((p[1] / p[0] - 10.0).abs() < 0.01 && (p[2] / p[1] - 10.0).abs() < 0.01);
/// // The budget is spent: 5 bits per key over all keys, within 2%.
/// assert!((a.bits / (5.0 * 1_110_000.0) - 1.0).abs() < 0.02, "{}", a.bits);
/// ```
pub fn allocate(kind: FilterKind, bits_per_key: f64, levels: &[LevelShape]) -> Result<Allocation> {
    if !supports(kind) {
        return Err(Error::InvalidOptions(
            "Monkey needs a filter kind whose FPR can be set freely: StandardBloom, BlockedBloom, SplitBlockBloom or Ribbon",
        ));
    }
    FilterSizing::BitsPerKey(bits_per_key).validate()?;
    let total: u64 = levels.iter().map(|l| l.keys).sum();
    let budget = bits_per_key * total as f64;
    // Keys per run bound the useful scales: at `hi` every FPR is 1 (no
    // filters, no memory); at `lo` every FPR is at most `MIN_FPR`.
    let per_run = levels
        .iter()
        .filter(|l| l.keys > 0 && l.runs > 0)
        .map(|l| l.keys as f64 / l.runs as f64);
    let (smallest, largest) = per_run.fold((f64::INFINITY, 0.0f64), |(s, b), x| (s.min(x), b.max(x)));
    if largest == 0.0 {
        return Ok(Allocation {
            fprs: vec![None; levels.len()],
            bits_per_key: vec![None; levels.len()],
            reads_per_miss: 0.0,
            bits: 0.0,
        });
    }
    let (mut lo, mut hi) = ((min_fpr(kind) / largest).ln(), (1.0 / smallest).ln());
    let (bits_lo, _, _) = cost(kind, levels, &fprs_at(kind, levels, lo.exp()))?;
    if bits_lo <= budget {
        // More memory than the best filters need: take them.
        hi = lo;
    }
    // Memory falls as the scale grows; find where it crosses the budget.
    // To 0.1% of the scale: finer than the FPR grid.
    while hi - lo > 1e-3 {
        let mid = 0.5 * (lo + hi);
        let (bits, _, _) = cost(kind, levels, &fprs_at(kind, levels, mid.exp()))?;
        if bits > budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The grid makes memory a step function of the scale: take whichever
    // end of the last interval lands nearer the budget.
    let (lo_fprs, hi_fprs) = (fprs_at(kind, levels, lo.exp()), fprs_at(kind, levels, hi.exp()));
    let (lo_cost, hi_cost) = (cost(kind, levels, &lo_fprs)?, cost(kind, levels, &hi_fprs)?);
    let (fprs, (bits, reads_per_miss, bits_per_key)) =
        if (lo_cost.0 - budget).abs() < (hi_cost.0 - budget).abs() {
            (lo_fprs, lo_cost)
        } else {
            (hi_fprs, hi_cost)
        };
    Ok(Allocation {
        fprs,
        bits_per_key,
        reads_per_miss,
        bits,
    })
}

/// Filters already built that a new table's allocation must live with:
/// per level, the keys of the tables that stay and their filters' bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Built {
    /// Keys of the level's tables that stay.
    pub keys: u64,
    /// Bits of their filters.
    pub bits: u64,
}

/// Bits per key for the tables about to be written to `level` (`None`: no
/// filter), given the filters that stay (`built`, per level).
///
/// Tables keep the filter they were built with while the tree grows around
/// them, so their memory drifts from what the current shape would give
/// them: a level that has grown since holds filters sized for when it was
/// smaller (more bits per key than its share now). The drift `D` (bits the
/// kept filters hold beyond the ideal allocation for the current shape) is
/// charged to the whole budget: the allocation is solved again for
/// `bits_per_key − D / keys`, which keeps Monkey's shape (charging it to
/// the new tables alone starves small level-0 flushes and flattens the
/// FPRs to a uniform policy's). The drift is paid down as tables are
/// rewritten; what remains on a growing tree is measured in the crate's
/// Monkey tests and `docs/results-lsm.md`.
pub fn bits_for_new_tables(
    kind: FilterKind,
    bits_per_key: f64,
    levels: &[LevelShape],
    built: &[Built],
    level: usize,
) -> Result<Option<f64>> {
    let ideal = allocate(kind, bits_per_key, levels)?;
    let drift: f64 = built
        .iter()
        .zip(&ideal.bits_per_key)
        .map(|(b, bpk)| b.bits as f64 - b.keys as f64 * bpk.unwrap_or(0.0))
        .sum();
    let total: u64 = levels.iter().map(|l| l.keys).sum();
    let allocation = if total == 0 || drift == 0.0 {
        ideal
    } else {
        let corrected = (bits_per_key - drift / total as f64).clamp(0.5 * bits_per_key, 2.0 * bits_per_key);
        allocate(kind, corrected, levels)?
    };
    Ok(allocation.bits_per_key.get(level).copied().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::plan::Planner;

    fn leveled(sizes: &[u64]) -> Vec<LevelShape> {
        sizes.iter().map(|&keys| LevelShape { keys, runs: 1 }).collect()
    }

    #[test]
    fn the_budget_is_met_and_no_fpr_exceeds_one() {
        for kind in [
            FilterKind::BlockedBloom,
            FilterKind::StandardBloom,
            FilterKind::Ribbon,
        ] {
            for bpk in [2.0, 5.0, 10.0] {
                let levels = leveled(&[4_000, 40_000, 400_000, 4_000_000]);
                let a = allocate(kind, bpk, &levels).unwrap();
                let budget = bpk * 4_444_000.0;
                assert!(
                    (a.bits / budget - 1.0).abs() < 0.02,
                    "{kind:?} {bpk}: {} vs {budget}",
                    a.bits
                );
                for p in a.fprs.iter().flatten() {
                    assert!(*p > 0.0 && *p < 1.0);
                }
                // Deeper levels never get a lower FPR.
                let ps: Vec<f64> = a.fprs.iter().map(|p| p.unwrap_or(1.0)).collect();
                assert!(ps.windows(2).all(|w| w[0] <= w[1]), "{ps:?}");
            }
        }
    }

    #[test]
    fn monkey_beats_uniform_at_the_same_memory() {
        let levels = leveled(&[10_000, 100_000, 1_000_000, 10_000_000]);
        for bpk in [5.0, 10.0] {
            let m = allocate(FilterKind::BlockedBloom, bpk, &levels).unwrap();
            // Uniform: the FPR the same bits per key give every level.
            let uniform: f64 = levels.len() as f64
                * Planner::for_keys(1_000_000)
                    .budget_bits_per_key(bpk)
                    .rank()
                    .unwrap()
                    .plans()
                    .iter()
                    .find(|p| p.kind() == FilterKind::BlockedBloom)
                    .unwrap()
                    .expected_fpr();
            assert!(
                m.reads_per_miss < 0.8 * uniform,
                "{bpk}: {} vs {uniform}",
                m.reads_per_miss
            );
        }
    }

    #[test]
    fn tiny_budgets_drop_the_filters_of_the_biggest_levels_first() {
        let a = allocate(
            FilterKind::BlockedBloom,
            0.3,
            &leveled(&[1_000, 10_000, 100_000, 1_000_000]),
        )
        .unwrap();
        assert_eq!(a.fprs[3], None);
        assert!(a.fprs[0].is_some());
    }

    #[test]
    fn drift_is_charged_to_the_new_tables() {
        let levels = leveled(&[10_000, 100_000, 1_000_000]);
        let ideal = allocate(FilterKind::BlockedBloom, 6.0, &levels).unwrap();
        let b1 = ideal.bits_per_key[1].unwrap();
        // Level 1: 50,000 keys stay; their filters hold 22.2 bits per key
        // more than the ideal, 1 bit per key of the whole tree: the tree is
        // allocated as if for 5 bits per key.
        let built = [
            Built { keys: 0, bits: 0 },
            Built {
                keys: 50_000,
                bits: (50_000.0 * (b1 + 22.2)) as u64,
            },
            Built { keys: 0, bits: 0 },
        ];
        let got = bits_for_new_tables(FilterKind::BlockedBloom, 6.0, &levels, &built, 1).unwrap();
        let five = allocate(FilterKind::BlockedBloom, 5.0, &levels).unwrap();
        assert_eq!(got, five.bits_per_key[1]);
        assert!(got.unwrap() < b1);
        // Nothing built: the ideal.
        let fresh = bits_for_new_tables(FilterKind::BlockedBloom, 6.0, &levels, &[], 2).unwrap();
        assert_eq!(fresh, ideal.bits_per_key[2]);
    }

    #[test]
    fn empty_trees_and_unsupported_kinds() {
        let a = allocate(FilterKind::Ribbon, 8.0, &leveled(&[0, 0])).unwrap();
        assert_eq!(a.fprs, vec![None, None]);
        assert!(allocate(FilterKind::BinaryFuse8, 8.0, &leveled(&[10])).is_err());
        assert!(allocate(FilterKind::BlockedBloom, -1.0, &leveled(&[10])).is_err());
    }
}
