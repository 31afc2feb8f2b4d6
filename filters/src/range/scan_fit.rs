//! Fitting a table's [`KeyMap`] to the scans it will be asked about: how
//! many low bits of the keys' codes its range filter should leave out.
//!
//! A range filter over a key map's codes rules an empty range out with a
//! false-positive rate of about `ℓ · 2^−(B−2)` for a range of `ℓ` codes at
//! `B` bits per key, and a range too wide for that to be below 1 is not
//! asked at all. Keys with a long random tail (a UUIDv7's bits after its
//! millisecond, an e-mail address past its first letters) map to codes
//! where a time window or a gap between two neighbouring keys spans
//! `2^40` codes or more: every such scan reads the table. Dropping `s` low
//! bits of every code ([`KeyMap::coarsened`]) makes the same range about
//! `ℓ / 2^s` codes, at two costs: keys closer than `2^s` share a code, so a
//! range that falls between them, or just beside a key, is always a false
//! positive; and nothing about the keys alone says which ranges a store
//! will be asked (nanosecond timestamps and UUIDv7 ids look alike, but the
//! first are scanned a few nanoseconds past a key, the second a window of
//! milliseconds at a time).
//!
//! So the shift is fitted to a sample of the scans the store has seen, as
//! Proteus fits its design to sampled queries (Knorr et al., "Proteus: A
//! Self-Designing Range Filter", SIGMOD 2022): for each shift `s` from 0 to
//! 63, the expected number of the sample's ranges that would pass the
//! table's filter though the table holds no key in them, counting exactly
//! the ranges that would share a code with one of the table's keys, and
//! the filter's bound for the rest, at the same memory (`B · n / n_s` bits
//! per coarse code for `n_s` distinct ones). A range shares a code with a
//! key when it lies within `2^s` codes of it, which a sample of a few
//! hundred ranges shows for large shifts only: below the distance of the
//! sample's 8th nearest range to a key, `d₈`, the share of ranges nearer
//! than `2^s` is taken to fall linearly, `8 · (2^s − 1) / d₈` of them (a
//! density of ranges that is smooth near the keys; none at full
//! resolution, where no range shares a key's code), where the sample
//! shows fewer.
//! The least wins, if it passes fewer ranges than the full resolution by
//! at least one range and 10%; otherwise the map is kept as it is. Ranges
//! that hold a key of the table count at no shift.

use core::ops::Bound;

use super::grafite::fpr_bound;
use super::grafite::sizing::shape;
use super::keyed::ASK_BELOW;
use super::{KeyMap, RangeSizing};

/// A shift must pass at least this many fewer ranges than the full
/// resolution, and ...
const MIN_GAIN: f64 = 1.0;
/// ... at most this share of them.
const MAX_SHARE: f64 = 0.9;
/// The sample's `TAIL`-th nearest range to a key of the table sets the
/// rate of ranges nearer still (see [`fit_to_scans`]).
const TAIL: usize = 8;

/// A scan's bounds, as [`BTreeMap::range`](alloc::collections::BTreeMap::range)
/// takes them: what [`fit_to_scans`] samples.
///
/// ```
/// use std::ops::Bound::{Excluded, Included};
/// use amq::range::ScanRange;
/// let r: ScanRange<'_> = (Included(b"a"), Excluded(b"b"));
/// assert_eq!(r.0, Included(&b"a"[..]));
/// ```
pub type ScanRange<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// What [`fit_to_scans`] chose: the shift to coarsen the map by and the
/// sizing that keeps the filter's memory (see the module docs).
///
/// ```
/// use amq::range::{fit_to_scans, KeyMap, RangeSizing};
/// let map = KeyMap::from_keys([&b"a"[..], b"b"]);
/// let fit = fit_to_scans(&map, &[0, 1], &[], RangeSizing::BitsPerKey(16.0));
/// assert_eq!((fit.shift, fit.sizing), (0, RangeSizing::BitsPerKey(16.0)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ScanFit {
    /// How many more low bits of the codes to drop
    /// ([`KeyMap::coarsened`]).
    pub shift: u32,
    /// The sizing of the filter over the coarse codes: `BitsPerKey(B · n /
    /// n_s)` for `BitsPerKey(B)`, so that it takes the memory the full
    /// resolution would.
    pub sizing: RangeSizing,
    /// The sample's ranges expected to pass the filter at this shift while
    /// the table holds no key in them ...
    pub expected_false_positives: f64,
    /// ... and at the map's own resolution.
    pub expected_at_full_resolution: f64,
}

/// An empty range of the sample as the table's codes see it: its codes
/// and the table's nearest codes below and above.
struct Gap {
    a: u64,
    b: u64,
    below: Option<u64>,
    above: Option<u64>,
}

/// The shift and sizing that rule out the most of `scans` for a table whose
/// keys have the distinct `codes` (in order) under `map`, built with
/// `sizing`: see the module docs. Only `BitsPerKey` sizings are fitted (an
/// `Fpr` sizing names range lengths in codes, which a shift would change);
/// for others, no scans or no codes, the shift is 0.
///
/// ```
/// use std::ops::Bound::{Excluded, Included};
/// use amq::range::{fit_to_scans, KeyMap, RangeSizing};
///
/// // Millisecond times, then six random bytes, one key about every 50 ms.
/// let key = |ms: u64, r: u64| [&ms.to_be_bytes()[2..], &r.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes()[..6]].concat();
/// let keys: Vec<Vec<u8>> = (0..2_000u64).map(|i| key(i * 50 + i % 7, i)).collect();
/// let map = KeyMap::from_keys(keys.iter().map(Vec::as_slice));
/// let codes: Vec<u64> = keys.iter().map(|k| map.map(k)).collect();
/// // Windows of 10 ms between keys.
/// let windows: Vec<(Vec<u8>, Vec<u8>)> =
///     (0..200u64).map(|i| (key(i * 500 + 20, 0)[..6].to_vec(), key(i * 500 + 30, 0)[..6].to_vec())).collect();
/// let scans: Vec<_> = windows.iter().map(|(a, b)| (Included(&a[..]), Excluded(&b[..]))).collect();
/// let fit = fit_to_scans(&map, &codes, &scans, RangeSizing::BitsPerKey(16.0));
/// assert!(fit.shift > 0);
/// assert!(fit.expected_false_positives < 0.05 * 200.0);
/// assert!(fit.expected_at_full_resolution > 0.9 * 200.0); // too wide to ask
/// ```
pub fn fit_to_scans(map: &KeyMap, codes: &[u64], scans: &[ScanRange<'_>], sizing: RangeSizing) -> ScanFit {
    let keep = ScanFit {
        shift: 0,
        sizing,
        expected_false_positives: 0.0,
        expected_at_full_resolution: 0.0,
    };
    let RangeSizing::BitsPerKey(bits) = sizing else {
        return keep;
    };
    let gaps: alloc::vec::Vec<Gap> = scans
        .iter()
        .filter_map(|&(lo, hi)| {
            let (a, b) = map.range(lo, hi)?;
            let at = codes.partition_point(|&c| c < a);
            if codes.get(at).is_some_and(|&c| c <= b) {
                return None; // the table holds a key's code in it
            }
            let below = at.checked_sub(1).map(|i| codes[i]);
            Some(Gap {
                a,
                b,
                below,
                above: codes.get(at).copied(),
            })
        })
        .collect();
    if gaps.is_empty() || codes.is_empty() {
        return keep;
    }
    // The distance from each range to its table's nearest code, and the
    // `TAIL`-th least (all the sample's ranges, for fewer of them).
    let mut distances: alloc::vec::Vec<u64> = gaps
        .iter()
        .map(|g| {
            let below = g.below.map_or(u64::MAX, |c| g.a - c);
            let above = g.above.map_or(u64::MAX, |c| c - g.b);
            below.min(above)
        })
        .collect();
    let k = TAIL.min(distances.len());
    distances.select_nth_unstable(k - 1);
    let tail_distance = distances[k - 1] as f64 * TAIL as f64 / k as f64;
    // `split[h]`: neighbouring codes whose highest differing bit is `h − 1`;
    // at shift `s` the distinct codes are 1 plus those with `h > s`.
    let mut split = [0u64; 65];
    for w in codes.windows(2) {
        split[(64 - (w[0] ^ w[1]).leading_zeros()) as usize] += 1;
    }
    let n = codes.len() as u64;
    let mut distinct = 1 + split[1..].iter().sum::<u64>();
    let mut best: Option<ScanFit> = None;
    let mut full = 0.0;
    for s in 0..64u32 {
        if s > 0 {
            distinct -= split[s as usize];
        }
        let per_code = libm::fmin(bits * n as f64 / distinct as f64, 64.0);
        let coarse = RangeSizing::BitsPerKey(per_code);
        let Ok(universe) = shape(distinct, coarse).map(|s| s.universe) else {
            continue;
        };
        let per_integer = fpr_bound(1, distinct, universe);
        let max_len = match per_integer > 0.0 {
            true => libm::fmin(ASK_BELOW / per_integer, u64::MAX as f64) as u64,
            false => u64::MAX,
        };
        let (mut passed, mut shared) = (0.0, 0.0);
        for g in &gaps {
            let (a, b) = (g.a >> s, g.b >> s);
            if g.below.is_some_and(|c| c >> s >= a) || g.above.is_some_and(|c| c >> s <= b) {
                shared += 1.0;
            } else if b - a >= max_len {
                passed += 1.0;
            } else {
                passed += fpr_bound(b - a + 1, distinct, universe);
            }
        }
        // Ranges nearer to a key than the sample resolves (module docs).
        let near = TAIL as f64 * (libm::ldexp(1.0, s as i32) - 1.0) / tail_distance;
        let passed = passed + libm::fmax(shared, libm::fmin(near, k as f64));
        if s == 0 {
            full = passed;
        }
        if best.is_none_or(|f| passed < f.expected_false_positives) {
            best = Some(ScanFit {
                shift: s,
                sizing: if s == 0 { sizing } else { coarse },
                expected_false_positives: passed,
                expected_at_full_resolution: 0.0,
            });
        }
    }
    match best {
        Some(f)
            if f.shift > 0
                && f.expected_false_positives <= full * MAX_SHARE
                && full - f.expected_false_positives >= MIN_GAIN =>
        {
            ScanFit {
                expected_at_full_resolution: full,
                ..f
            }
        }
        _ => ScanFit {
            expected_false_positives: full,
            expected_at_full_resolution: full,
            ..keep
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;
    use alloc::vec::Vec;

    /// Uniform 8-byte keys, ranges of 1 to 256 integers anywhere (gaps between
    /// keys are about `2^46` wide): a shift that makes a range one code
    /// leaves only the filter's rate per code, and a shift whose codes
    /// come near the gaps' width makes ranges share a code with a key far
    /// more often than a sample of 4,096 shows. The fit takes the first and
    /// not the second, and the ranges to come pass less often than at the
    /// full resolution.
    #[test]
    fn the_fit_does_not_coarsen_past_what_the_sample_can_show() {
        let keys: Vec<[u8; 8]> = (0..200_000u64).map(|i| remix(i, 3).to_be_bytes()).collect();
        let map = KeyMap::from_keys(keys.iter().map(|k| &k[..]));
        let mut codes: Vec<u64> = keys.iter().map(|k| map.map(k)).collect();
        codes.sort_unstable();
        let ranges = |seed: u64, n: u64| -> Vec<([u8; 8], [u8; 8])> {
            (0..n)
                .map(|i| {
                    let lo = remix(i, seed);
                    (
                        lo.to_be_bytes(),
                        lo.saturating_add(remix(i, seed + 1) % 256).to_be_bytes(),
                    )
                })
                .collect()
        };
        let scans = |r: &[([u8; 8], [u8; 8])]| -> Vec<(u64, u64)> {
            r.iter()
                .filter_map(|(a, b)| map.range(Bound::Included(&a[..]), Bound::Included(&b[..])))
                .collect()
        };
        let sample = ranges(9, 4_096);
        let bounds: Vec<ScanRange<'_>> = sample
            .iter()
            .map(|(a, b)| (Bound::Included(&a[..]), Bound::Included(&b[..])))
            .collect();
        let later = scans(&ranges(11, 200_000));
        for bits in [14.0, 17.0, 21.0] {
            let fit = fit_to_scans(&map, &codes, &bounds, RangeSizing::BitsPerKey(bits));
            assert!((1..=30).contains(&fit.shift), "{bits}: {fit:?}");
            // The ranges to come, at the chosen shift and at none.
            let passing = |shift: u32, sizing| {
                let coarse: Vec<u64> = codes.iter().map(|c| c >> shift).collect();
                let f = crate::range::GrafiteRange::build_seeded(&coarse, sizing, 7).unwrap();
                later
                    .iter()
                    .filter(|&&(a, b)| {
                        crate::range::RangeFilter::may_contain_range(&f, a >> shift, b >> shift)
                    })
                    .count()
            };
            let (fitted, plain) = (
                passing(fit.shift, fit.sizing),
                passing(0, RangeSizing::BitsPerKey(bits)),
            );
            assert!(
                fitted * 2 < plain,
                "{bits}: {fitted} of the later ranges pass, {plain} at full resolution"
            );
        }
    }
}
