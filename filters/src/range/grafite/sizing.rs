//! How big a Grafite filter is for `n` distinct keys and a sizing, without
//! allocating: the reduced universe `r`, the Elias–Fano low bits, and the
//! bytes, computed by the same [`Layout`] the builder uses. The builder and
//! the planner ([`plan::predict_range`](crate::plan::predict_range)) both
//! call [`shape`].

use crate::error::invalid;
use crate::range::RangeSizing;
use crate::succinct::{Layout, DEFAULT_SAMPLE_LOG2, MAX_UNIVERSE};
use crate::Error;

/// `2^-64`: the multiply-shift reduction's share of the bound (see
/// `hash.rs`).
const TWO_POW_MINUS_64: f64 = 1.0 / 18_446_744_073_709_551_616.0;

/// Bits per key a Grafite filter may be asked for: below 2 the Elias–Fano
/// code cannot hold the keys (its upper bits alone take one per key and one
/// per bucket); above 64 the reduced universe would pass `2^62`.
pub(crate) const BITS_PER_KEY_RANGE: core::ops::RangeInclusive<f64> = 2.0..=64.0;

/// The false-positive bound of a Grafite filter of `keys` distinct keys over
/// the reduced universe `universe`, for an empty range of `range_len` keys:
/// `min(1, ℓ·n·(1/r + 2^-64))` for `ℓ` up to the block size `2^⌊log2 r⌋`
/// (a range longer than a block may cover one whole and answers `true`), 0
/// without keys or for `ℓ = 0`. The module docs of
/// [`grafite`](super) have the proof.
///
/// ```
/// use amq::range::grafite::fpr_bound;
/// // 1,000 keys over r = 1,024,000: about ℓ / 1024.
/// assert!((fpr_bound(1, 1_000, 1_000 << 10) - 1.0 / 1024.0).abs() < 1e-12);
/// assert!((fpr_bound(16, 1_000, 1_000 << 10) - 1.0 / 64.0).abs() < 1e-12);
/// assert_eq!(fpr_bound(0, 1_000, 1 << 20), 0.0);
/// assert_eq!(fpr_bound(5, 0, 1 << 20), 0.0);
/// assert!(fpr_bound((1 << 20) + 1, 1, 1 << 21) < 0.51); // blocks of 2^21
/// assert_eq!(fpr_bound((1 << 20) + 1, 1, (1 << 21) - 1), 1.0); // longer than a block
/// ```
pub fn fpr_bound(range_len: u64, keys: u64, universe: u64) -> f64 {
    if keys == 0 || range_len == 0 {
        return 0.0;
    }
    let block = 1u64 << universe.max(1).ilog2();
    if range_len > block {
        return 1.0;
    }
    let p = range_len as f64 * keys as f64 * (1.0 / universe.max(1) as f64 + TWO_POW_MINUS_64);
    p.min(1.0)
}

/// What the builder makes for a key count and a sizing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shape {
    /// The reduced universe `r`.
    pub(crate) universe: u64,
    /// The Elias–Fano code's layout with one value per key (hash
    /// collisions can only make the built code smaller).
    pub(crate) layout: Layout,
}

/// The shape for `keys` distinct keys at `sizing` (validated by the
/// caller). Errors: bits per key outside `2..=64`; an FPR and range length
/// that need a reduced universe above `2^62`.
pub(crate) fn shape(keys: u64, sizing: RangeSizing) -> Result<Shape, Error> {
    let universe = match sizing {
        _ if keys == 0 => 1,
        RangeSizing::BitsPerKey(b) => {
            if !BITS_PER_KEY_RANGE.contains(&b) {
                return Err(invalid(
                    "bits_per_key",
                    "a Grafite filter takes 2 to 64 bits per key",
                ));
            }
            universe_for_bits(keys, b)
        }
        RangeSizing::Fpr { fpr, max_range_len } => universe_for_fpr(keys, fpr, max_range_len)?,
    };
    let low_bits = Layout::best_low_bits(keys, universe);
    let layout = Layout::new(keys, universe, low_bits, DEFAULT_SAMPLE_LOG2).map_err(|_| Error::TooLarge)?;
    Ok(Shape { universe, layout })
}

/// The smallest `r` whose bound for ranges of `max_range_len` is at most
/// `fpr`, and at least twice `max_range_len` (so a block, more than `r/2`
/// keys, is at least as long as the ranges promised for).
fn universe_for_fpr(keys: u64, fpr: f64, max_range_len: u64) -> Result<u64, Error> {
    let too_large = || {
        invalid(
            "fpr",
            "keys × max_range_len / fpr must be below 2^62 (the reduced universe)",
        )
    };
    // ℓ·n·(1/r + 2^-64) ≤ ε  ⇔  1/r ≤ ε/(ℓ·n) − 2^-64.
    let room = fpr / (max_range_len as f64 * keys as f64) - TWO_POW_MINUS_64;
    if !room.is_finite() || room <= 0.0 {
        return Err(too_large());
    }
    let wanted = libm::ceil(1.0 / room).max(2.0 * max_range_len as f64);
    if !wanted.is_finite() || wanted > MAX_UNIVERSE as f64 {
        return Err(too_large());
    }
    let mut universe = (wanted as u64).max(1);
    // Float rounding: step up until the bound, computed as the filter will,
    // holds (a step or two at most).
    for _ in 0..64 {
        if fpr_bound(max_range_len, keys, universe) <= fpr {
            return Ok(universe);
        }
        universe = universe
            .checked_add((universe >> 40).max(1))
            .ok_or_else(too_large)?;
    }
    Err(too_large())
}

/// The largest `r` whose code, at its best low-bit count, takes at most
/// `bits_per_key · n` bits for `n` keys, select samples included (a code's
/// few words of rounding and padding are left out, so small filters come
/// out above the target by up to four words). At most `2^62`.
fn universe_for_bits(keys: u64, bits_per_key: f64) -> u64 {
    let budget = libm::floor(bits_per_key * keys as f64);
    // Samples as a share of the zeros: the first sample of a small code, a
    // whole word, is rounding like its others.
    let sample_bits = |zeros: u64| 64.0 * zeros as f64 / (1u64 << DEFAULT_SAMPLE_LOG2) as f64;
    // With `l` low bits and `z` zeros (buckets): n·l + n + z + samples(z).
    let bits = |l: u32, z: u64| keys as f64 * (l as f64 + 1.0) + z as f64 + sample_bits(z);
    // The most buckets `l` low bits allow within the budget.
    let most_buckets = |l: u32| -> u64 {
        let (mut lo, mut hi) = (0u64, MAX_UNIVERSE);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if bits(l, mid) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    // `l` is the best low-bit count for `r` when n·2^l ≤ r < n·2^(l+1); the
    // largest `l` whose budget reaches its lowest `r` gives the largest `r`.
    for l in (1..=62u32).rev() {
        let Some(lowest) = keys.checked_mul(1 << l).filter(|&r| r <= MAX_UNIVERSE) else {
            continue;
        };
        let buckets = most_buckets(l);
        let r = buckets.saturating_mul(1 << l);
        if r >= lowest {
            let highest = keys.saturating_mul(2 << l).saturating_sub(1);
            return r.min(highest).min(MAX_UNIVERSE);
        }
    }
    // No low bits: one bucket per value of `r`.
    most_buckets(0).clamp(1, keys.saturating_mul(2).saturating_sub(1).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits_per_key(keys: u64, sizing: RangeSizing) -> f64 {
        shape(keys, sizing).unwrap().layout.size_in_bytes() as f64 * 8.0 / keys as f64
    }

    #[test]
    fn bits_per_key_sizing_meets_its_budget() {
        for keys in [1u64, 4, 100, 1_000, 10_000, 1_000_000, 10_000_000] {
            for b in [2.0, 4.5, 8.0, 12.0, 16.0, 20.0, 33.3, 64.0] {
                let got = bits_per_key(keys, RangeSizing::BitsPerKey(b));
                // Within the budget, but for the few words of rounding.
                assert!(got <= b + 4.0 * 64.0 / keys as f64, "{keys} keys at {b}: {got}");
                // And not far below it (a universe cap at 64 bits per key).
                assert!(
                    got > b - 0.6 || b == 64.0 || keys < 100,
                    "{keys} keys at {b}: {got}"
                );
                // The universe is what the bits buy: FPR about 1/2^(b − 2.6) or better.
                let s = shape(keys, RangeSizing::BitsPerKey(b)).unwrap();
                if b <= 60.0 && keys >= 100 {
                    assert!(
                        fpr_bound(1, keys, s.universe) < 2f64.powf(2.6 - b),
                        "{keys} keys at {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn fpr_sizing_meets_its_target() {
        for keys in [1u64, 10, 1_000, 10_000_000] {
            for (fpr, len) in [(0.5, 1u64), (0.01, 1), (0.01, 64), (1e-6, 1 << 20)] {
                let sizing = RangeSizing::Fpr {
                    fpr,
                    max_range_len: len,
                };
                if keys as f64 * len as f64 / fpr > 0.99 * MAX_UNIVERSE as f64 {
                    assert!(matches!(
                        shape(keys, sizing),
                        Err(Error::InvalidParameter { name: "fpr", .. })
                    ));
                    continue;
                }
                let s = shape(keys, sizing).unwrap();
                assert!(fpr_bound(len, keys, s.universe) <= fpr);
                assert!(
                    1u64 << s.universe.ilog2() >= len,
                    "a block holds the longest range"
                );
                // The smallest such universe, to a relative 2^-40.
                let smaller = s.universe - (s.universe >> 40).max(1);
                assert!(smaller < 2 * len || fpr_bound(len, keys, smaller) > fpr);
            }
        }
        assert!(matches!(
            shape(
                1 << 40,
                RangeSizing::Fpr {
                    fpr: 1e-9,
                    max_range_len: 1 << 20
                }
            ),
            Err(Error::InvalidParameter { name: "fpr", .. })
        ));
    }

    #[test]
    fn no_keys_is_the_smallest_code() {
        let s = shape(0, RangeSizing::BitsPerKey(16.0)).unwrap();
        assert_eq!(s.universe, 1);
        assert_eq!(s.layout.size_in_bytes(), 24);
        assert!(matches!(
            shape(10, RangeSizing::BitsPerKey(1.5)),
            Err(Error::InvalidParameter {
                name: "bits_per_key",
                ..
            })
        ));
    }
}
