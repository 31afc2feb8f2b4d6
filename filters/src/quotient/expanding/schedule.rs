//! How long a new fingerprint is after `X` expansions, and the FPR that
//! follows (the "widening" of InfiniFilter and of Aleph filter: Dayan,
//! Bercea, Pagh, "Aleph Filter: To Infinity in Constant Time", VLDB 2024).
//!
//! **Why fingerprints shrink.** Each expansion doubles the table and moves
//! one bit of every fingerprint into the quotient. The entries inserted in
//! generation `g` (between expansions `g` and `g + 1`) fill about
//! `MAX_LOAD / 2` of the table at the time, `0.475·2^(q0+g)` entries
//! (generation 0, the first table, up to `0.95·2^q0`). After `X`
//! expansions each is `X − g` bits shorter in a table `2^(X−g)` times
//! larger, so the generation adds `0.475·2^−F_g` to the expected number of
//! matches per absent key, whatever `X` is: the FPR is
//! `1 − e^(−λ)`, `λ ≤ 0.475·Σ_g 2^−F_g` (generation 0 counted twice). With
//! one length for all, every expansion adds the same amount again.
//!
//! **The schedule.** The first `H + 1` generations (`H`, the horizon: the
//! expansions the filter is planned for) get `F0` bits, the smallest with
//! `0.475·(H + 2)·2^−F0 ≤ −ln(1 − ε)`: the FPR stays at or below `ε` while
//! the filter grows `2^H`-fold. Past it, fingerprints widen by 2 bits each
//! time the generation doubles (`F0 + 2` from generation `H + 1`, `F0 + 4`
//! from `2(H + 1)`, …): band `k` holds `(H+1)·2^(k−1)` generations of
//! `2^−(F0+2k)` each, so all the bands together add at most
//! `0.475·(H + 1)/2·2^−F0` and the FPR never passes about `1.5ε`, however
//! far the filter grows, at 2 more bits per slot each time the expansion
//! count doubles past the horizon.
//!
//! Entries whose fingerprint runs out become void and are copied into both
//! halves at each expansion (Aleph's duplication): generation `g`'s copies
//! double from expansion `g + F_g` on, and their share of the table stays
//! `2^−F_g`, the same amount of FPR as before.

use crate::error::invalid;
use crate::Error;

/// `MAX_LOAD / 2`: the share of the table one generation fills.
const GENERATION_LOAD: f64 = super::super::MAX_LOAD / 2.0;

/// The highest target FPR. Void entries fill about the share of the
/// table the FPR bound says (each stands for `2^−F_g` of a generation), and
/// that share stays when the table doubles: with the target at most 0.25
/// (`λ ≤ 0.29` within the horizon, `0.43` past it) they fill under 43% of
/// it (86% after a merge), below the 95% that triggers a doubling, so
/// doubling always brings the load down.
pub(crate) const MAX_FPR: f64 = 0.25;

/// The longest fingerprint a schedule may ask for (slots of up to 63 bits).
pub(crate) const MAX_LENGTH: u32 = 62;

/// A fingerprint-length schedule: `base` bits (`F0`) for generations up to
/// `horizon` (`H`), then 2 more each time the generation doubles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub(crate) base: u32,
    pub(crate) horizon: u32,
}

impl Schedule {
    /// The schedule that keeps the FPR at or below `fpr` for `horizon`
    /// expansions.
    pub(crate) fn for_fpr(fpr: f64, horizon: u32) -> Result<Self, Error> {
        if !(fpr > 0.0 && fpr <= MAX_FPR) {
            return Err(invalid("fpr", "must be in (0, 0.25]"));
        }
        let matches = -libm::log1p(-fpr);
        let base = libm::ceil(libm::log2(GENERATION_LOAD * (f64::from(horizon) + 2.0) / matches)).max(1.0);
        let s = Schedule {
            base: base.min(f64::from(MAX_LENGTH + 1)) as u32,
            horizon,
        };
        s.check()?;
        Ok(s)
    }

    /// The schedule with `base`-bit first fingerprints, if its FPR within
    /// the horizon is at most [`MAX_FPR`].
    pub(crate) fn with_base(base: u32, horizon: u32) -> Result<Self, Error> {
        let s = Schedule { base, horizon }.check()?;
        if s.fpr_within_horizon() > MAX_FPR {
            return Err(invalid("sizing", "too few bits: the FPR would pass 0.25"));
        }
        Ok(s)
    }

    /// Whether the parameters are usable.
    pub(crate) fn check(self) -> Result<Self, Error> {
        if self.base == 0 || self.base > MAX_LENGTH || self.horizon > MAX_HORIZON {
            return Err(invalid(
                "fpr",
                "needs fingerprints of 1 to 62 bits and a horizon of at most 64 expansions",
            ));
        }
        Ok(self)
    }

    /// `F_g`: the fingerprint bits of entries inserted after `g` expansions
    /// (may exceed [`MAX_LENGTH`] far past the horizon: callers refuse to
    /// expand then).
    pub(crate) fn length(self, g: u32) -> u32 {
        let first = self.horizon + 1;
        if g < first {
            return self.base;
        }
        // Band k ≥ 1: first·2^(k−1) ≤ g < first·2^k.
        let band = (g / first).ilog2() + 1;
        self.base + 2 * band
    }

    /// The expected FPR this schedule never passes, however far the filter
    /// grows: `1 − e^(−λ)`, `λ = 0.475·2^−F0·((H + 2) + (H + 1)/2)`.
    pub(crate) fn fpr_bound(self) -> f64 {
        let h = f64::from(self.horizon);
        let units = (h + 2.0) + (h + 1.0) / 2.0;
        -libm::expm1(-GENERATION_LOAD * units * libm::exp2(-f64::from(self.base)))
    }

    /// The expected FPR bound within the horizon: `1 − e^(−0.475·(H+2)·2^−F0)`.
    pub(crate) fn fpr_within_horizon(self) -> f64 {
        let units = f64::from(self.horizon) + 2.0;
        -libm::expm1(-GENERATION_LOAD * units * libm::exp2(-f64::from(self.base)))
    }
}

/// The longest horizon accepted: past it the first width alone would pass
/// any useful size.
pub(crate) const MAX_HORIZON: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_percent_over_eighteen_expansions_takes_ten_bits() {
        let s = Schedule::for_fpr(0.01, 18).unwrap();
        assert_eq!(s.base, 10);
        assert!(s.fpr_within_horizon() <= 0.01);
        // One bit fewer would not do.
        let fewer = Schedule { base: 9, ..s };
        assert!(fewer.fpr_within_horizon() > 0.01);
        assert!(s.fpr_bound() < 1.5 * 0.01);
    }

    #[test]
    fn lengths_widen_by_two_each_time_the_generation_doubles() {
        let s = Schedule { base: 8, horizon: 3 };
        let got: alloc::vec::Vec<u32> = (0..17).map(|g| s.length(g)).collect();
        assert_eq!(
            got,
            [8, 8, 8, 8, 10, 10, 10, 10, 12, 12, 12, 12, 12, 12, 12, 12, 14]
        );
    }

    /// The bound holds for the sum over all generations, summed directly.
    #[test]
    fn the_bound_covers_every_generation() {
        for (fpr, h) in [(0.01, 18), (0.001, 0), (0.05, 5), (0.0001, 40), (0.25, 0)] {
            let s = Schedule::for_fpr(fpr, h).unwrap();
            let mut lambda = GENERATION_LOAD * libm::exp2(-f64::from(s.base)); // generation 0's second half
            for g in 0..100_000 {
                lambda += GENERATION_LOAD * libm::exp2(-f64::from(s.length(g)));
                if g == h {
                    assert!(-libm::expm1(-lambda) <= s.fpr_within_horizon() * (1.0 + 1e-12));
                }
            }
            assert!(-libm::expm1(-lambda) <= s.fpr_bound(), "{fpr} {h}");
        }
        assert!(Schedule::for_fpr(0.0, 18).is_err());
        assert!(Schedule::for_fpr(0.26, 18).is_err());
        assert!(Schedule::for_fpr(1e-30, 18).is_err());
        assert!(Schedule::for_fpr(0.01, 65).is_err());
    }
}
