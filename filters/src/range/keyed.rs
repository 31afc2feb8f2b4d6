//! [`KeyRangeFilter`]: a range filter over byte-string keys, for a storage
//! engine's table: "may any key of this table lie between these two byte
//! strings?"
//!
//! It is one of two filters, chosen at build time from the keys (and the
//! scans asked, when a sample is given: `choose.rs` has the rule):
//!
//! - *mapped*: a [`KeyMap`] fitted to the table's keys (their varying byte
//!   positions as one mixed-radix number, so neighbouring keys are
//!   neighbouring integers) and a [`GrafiteRange`] over the keys' `u64`s,
//!   where the map holds every key exactly, or the scans favour it. A
//!   query maps its bounds conservatively ([`KeyMap::range`]), and a range
//!   the map alone rules out (a bound between keys' prefixes that no key
//!   has) answers `false` without a probe. Grafite's bound holds for every
//!   range of up to `L` codes.
//! - *infix*: an [`InfixRange`] over the keys themselves, where their
//!   differences need more than 64 bits: no key is truncated, and its
//!   resolution follows the keys' density.
//!
//! Either way there is no false negative for any bounds, open, excluded or
//! included.
//!
//! # Byte format
//!
//! | bytes | field |
//! |-------|-------|
//! | 4 | magic `AMQR` |
//! | 1 | version: 1 for a mapped filter, 2 for an infix one |
//! | 4 + m | version 1: `m`, the key map's length (LE), and the key map ([`KeyMap::to_bytes`], its own checksum inside) |
//! | … | version 1: the range filter (amq's frame of a [`GrafiteRange`], checksummed); version 2: [`InfixRange::to_bytes`] |
//! | 8 | xxh3-64, seed 0, of every byte before |
//!
//! The decoder checks all of it; anything else is an error, never a
//! filter that could rule out a range holding a key.

use alloc::vec::Vec;
use core::ops::Bound;

use xxhash_rust::xxh3::xxh3_64;

use super::{infix_for_scans, GrafiteRange, InfixRange, KeyMap, RangeFilter, RangeSizing};
use crate::{Error, FormatError};

const MAGIC: &[u8; 4] = b"AMQR";
/// A mapped filter.
const VERSION_MAPPED: u8 = 1;
/// An infix filter.
const VERSION_INFIX: u8 = 2;
/// Magic, version.
const HEADER: usize = 5;
const CHECKSUM: usize = 8;

/// A range is asked about only while its bound, `ℓ · n / r` before it is
/// capped at 1, is below this: past it an empty range passes the filter
/// with probability `1 − e^(−ℓn/r)` > 98%, so a probe would almost never
/// say no; the answer is then `true` at once.
pub(crate) const ASK_BELOW: f64 = 4.0;

/// A range filter over byte-string keys: a [`KeyMap`] fitted to them and a
/// [`GrafiteRange`] over their `u64`s, or an [`InfixRange`] (see the module
/// docs).
///
/// ```
/// use std::ops::Bound::{Excluded, Included, Unbounded};
/// use amq::range::{KeyRangeFilter, RangeSizing};
///
/// let keys: Vec<String> = (0..1_000u32).map(|i| format!("user:{:06}", i * 10)).collect();
/// let f = KeyRangeFilter::build(&keys, RangeSizing::BitsPerKey(16.0), 7)?;
/// assert!(f.key_map().is_some()); // 10 bits of differences: mapped
/// assert!(f.may_contain_range(Included(&b"user:000095"[..]), Included(&b"user:000100"[..])));
/// // An empty range between two keys: almost always ruled out.
/// let empty = (0..999u32)
///     .filter(|i| {
///         let (lo, hi) = (format!("user:{:06}", i * 10 + 1), format!("user:{:06}", i * 10 + 9));
///         f.may_contain_range(Included(lo.as_bytes()), Excluded(hi.as_bytes()))
///     })
///     .count();
/// assert!(empty < 30, "{empty}");
/// // Past the last key: the map alone says no.
/// assert!(!f.may_contain_range(Excluded(&b"user:009990"[..]), Unbounded));
/// let back = KeyRangeFilter::from_bytes(&f.to_bytes())?;
/// assert_eq!(back, f);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRangeFilter {
    inner: Inner,
}

#[derive(Debug, Clone, PartialEq)]
enum Inner {
    Mapped {
        map: KeyMap,
        filter: GrafiteRange,
        /// Intervals this long or longer are answered `true` without a
        /// probe.
        max_len: u64,
    },
    Infix(InfixRange),
}

impl KeyRangeFilter {
    /// The filter of `keys` (any order, duplicates allowed), sized by
    /// `sizing`: mapped where the keys' differences fit 64 bits (seeded by
    /// `seed`: tables with different seeds have independent false
    /// positives), an infix filter where they do not (and `sizing` leaves
    /// it room). Errors as [`GrafiteRange::build_seeded`].
    ///
    /// ```
    /// use amq::range::{KeyRangeFilter, RangeSizing};
    /// // Addresses under a tenant: far past 64 bits of differences.
    /// let keys: Vec<String> = (0..5_000u64)
    ///     .map(|i| format!("{:02}/{:x}@example.com", i % 9, i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    ///     .collect();
    /// let f = KeyRangeFilter::build(&keys, RangeSizing::BitsPerKey(16.0), 1)?;
    /// assert!(f.infix().is_some() && f.key_map().is_none());
    /// assert!(keys.iter().all(|k| f.may_contain(k.as_bytes())));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build<K: AsRef<[u8]>>(keys: &[K], sizing: RangeSizing, seed: u64) -> Result<Self, Error> {
        Self::build_for_scans(keys, sizing, seed, &[])
    }

    /// The filter of `keys` as [`build`](Self::build) makes it, chosen and
    /// fitted for a sample of the scans it will be asked (time windows over
    /// keys with a random tail, ranges between neighbouring long keys):
    /// a mapped filter's key map is [coarsened](KeyMap::coarsened) where
    /// dropping low bits of the codes rules out more of them at the same
    /// memory ([`fit_to_scans`](super::fit_to_scans)), and where the keys'
    /// differences pass 64 bits, the infix filter is taken only if it rules
    /// out as many of the sample's empty ranges
    /// ([`infix_for_scans`](super::infix_for_scans)). Scans unlike the
    /// sample may then pass more often (a range just after a key always
    /// does once coarse).
    ///
    /// ```
    /// use std::ops::Bound::{Excluded, Included};
    /// use amq::range::{KeyRangeFilter, RangeSizing};
    /// // An 8-byte time in ms, then 8 random bytes; a key every 40 ms.
    /// let key = |ms: u64, r: u64| [ms.to_be_bytes(), r.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes()].concat();
    /// let keys: Vec<Vec<u8>> = (0..5_000u64).map(|i| key(i * 40, i)).collect();
    /// let window = |i: u64| ((i * 40 + 10).to_be_bytes(), (i * 40 + 30).to_be_bytes());
    /// let sample: Vec<_> = (0..100).map(window).collect();
    /// let sample: Vec<_> = sample.iter().map(|(a, b)| (Included(&a[..]), Excluded(&b[..]))).collect();
    /// let fitted = KeyRangeFilter::build_for_scans(&keys, RangeSizing::BitsPerKey(16.0), 1, &sample)?;
    /// let passed = (1_000..2_000).filter(|&i| {
    ///     let (a, b) = window(i);
    ///     fitted.may_contain_range(Included(&a[..]), Excluded(&b[..]))
    /// }).count();
    /// assert!(passed < 20, "{passed}");
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_for_scans<K: AsRef<[u8]>>(
        keys: &[K],
        sizing: RangeSizing,
        seed: u64,
        scans: &[super::ScanRange<'_>],
    ) -> Result<Self, Error> {
        let mut sorted: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let map = KeyMap::from_keys(sorted.iter().copied());
        let mut codes: Vec<u64> = sorted.iter().map(|k| map.map(k)).collect();
        codes.dedup();
        let fit = super::fit_to_scans(&map, &codes, scans, sizing);
        if let Some(infix) = infix_for_scans(&map, &fit, &sorted, scans, sizing) {
            return Ok(KeyRangeFilter {
                inner: Inner::Infix(infix),
            });
        }
        let map = map.coarsened(fit.shift)?;
        for c in &mut codes {
            *c >>= fit.shift;
        }
        let filter = GrafiteRange::build_seeded(&codes, fit.sizing, seed)?;
        Ok(Self::mapped(map, filter))
    }

    fn mapped(map: KeyMap, filter: GrafiteRange) -> Self {
        // `expected_fpr(1)` is `n·(1/r + 2^-64)`, far below its cap of 1.
        let per_integer = filter.expected_fpr(1);
        let max_len = match per_integer > 0.0 {
            true => libm::fmin(ASK_BELOW / per_integer, u64::MAX as f64) as u64,
            false => u64::MAX,
        };
        KeyRangeFilter {
            inner: Inner::Mapped { map, filter, max_len },
        }
    }

    /// Whether a key may lie in `lo..hi` (bounds as in
    /// [`BTreeMap::range`](alloc::collections::BTreeMap::range)): `false`
    /// only when no key the filter was built from does.
    #[inline]
    pub fn may_contain_range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
        match &self.inner {
            Inner::Mapped { map, filter, max_len } => {
                let Some((a, b)) = map.range(lo, hi) else {
                    return false;
                };
                b - a >= *max_len || filter.may_contain_range(a, b)
            }
            Inner::Infix(f) => f.may_contain_range(lo, hi),
        }
    }

    /// Whether `key` may be one of the keys.
    ///
    /// ```
    /// use amq::range::{KeyRangeFilter, RangeSizing};
    /// let f = KeyRangeFilter::build(&["a1", "a5"], RangeSizing::BitsPerKey(16.0), 0)?;
    /// assert!(f.may_contain(b"a5"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_range(Bound::Included(key), Bound::Included(key))
    }

    /// A mapped filter's expected FPR for an empty interval of `range_len`
    /// of the map's `u64`s ([`RangeFilter::expected_fpr`]); an infix
    /// filter's for a range whose bounds fall among the keys
    /// ([`InfixRange::expected_fpr`]), whatever its length.
    pub fn expected_fpr(&self, range_len: u64) -> f64 {
        match &self.inner {
            Inner::Mapped { filter, .. } => filter.expected_fpr(range_len),
            Inner::Infix(f) => f.expected_fpr(),
        }
    }

    /// The key map of a mapped filter (`None` for an infix one).
    pub fn key_map(&self) -> Option<&KeyMap> {
        match &self.inner {
            Inner::Mapped { map, .. } => Some(map),
            Inner::Infix(_) => None,
        }
    }

    /// The infix filter, if this is one.
    pub fn infix(&self) -> Option<&InfixRange> {
        match &self.inner {
            Inner::Mapped { .. } => None,
            Inner::Infix(f) => Some(f),
        }
    }

    /// The distinct values the filter holds: a mapped filter's `u64`s
    /// (fewer than the distinct keys where the map [is not
    /// exact](KeyMap::is_exact)), an infix filter's distinct keys.
    pub fn num_keys(&self) -> usize {
        match &self.inner {
            Inner::Mapped { filter, .. } => filter.num_keys(),
            Inner::Infix(f) => f.num_keys() as usize,
        }
    }

    /// Bytes: the map and the filter, or the infix filter.
    pub fn size_in_bytes(&self) -> usize {
        match &self.inner {
            Inner::Mapped { map, filter, .. } => map.to_bytes().len() + filter.size_in_bytes(),
            Inner::Infix(f) => f.size_in_bytes(),
        }
    }

    /// The filter's bytes (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        match &self.inner {
            Inner::Mapped { map, filter, .. } => {
                let map = map.to_bytes();
                out.push(VERSION_MAPPED);
                out.extend_from_slice(&(map.len() as u32).to_le_bytes());
                out.extend_from_slice(&map);
                out.extend_from_slice(&filter.to_bytes());
            }
            Inner::Infix(f) => {
                out.push(VERSION_INFIX);
                out.extend_from_slice(&f.to_bytes());
            }
        }
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Decodes [`to_bytes`](Self::to_bytes)' output, checking every field:
    /// bytes that are not one give an [`Error`], never a panic or a filter
    /// that could answer `false` for a range holding a key.
    ///
    /// ```
    /// use amq::range::{KeyRangeFilter, RangeSizing};
    /// let bytes = KeyRangeFilter::build(&["a", "b"], RangeSizing::BitsPerKey(16.0), 0)?.to_bytes();
    /// assert!(KeyRangeFilter::from_bytes(&bytes).is_ok());
    /// assert!(KeyRangeFilter::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() < HEADER + CHECKSUM {
            return Err(FormatError::Truncated.into());
        }
        if &bytes[..4] != MAGIC {
            return Err(FormatError::BadMagic.into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
        let mut stored = [0u8; 8];
        stored.copy_from_slice(sum);
        if xxh3_64(body) != u64::from_le_bytes(stored) {
            return Err(FormatError::ChecksumMismatch.into());
        }
        let rest = &body[HEADER..];
        match bytes[4] {
            VERSION_MAPPED => {
                let (len, rest) = rest.split_first_chunk::<4>().ok_or(FormatError::Truncated)?;
                let map_len = u32::from_le_bytes(*len) as usize;
                if rest.len() < map_len {
                    return Err(FormatError::Truncated.into());
                }
                let (map, filter) = rest.split_at(map_len);
                let map = KeyMap::from_bytes(map)?;
                let filter = GrafiteRange::from_bytes(filter)?;
                Ok(Self::mapped(map, filter))
            }
            VERSION_INFIX => Ok(KeyRangeFilter {
                inner: Inner::Infix(InfixRange::from_bytes(rest)?),
            }),
            v => Err(FormatError::UnsupportedVersion(u16::from(v)).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn bound(kind: u8, key: &[u8]) -> Bound<&[u8]> {
        match kind % 3 {
            0 => Bound::Included(key),
            1 => Bound::Excluded(key),
            _ => Bound::Unbounded,
        }
    }

    /// Whether `BTreeSet::range` takes the bounds (it panics on others).
    fn ordered(lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
        match (lo, hi) {
            (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
                x < y || (x == y && matches!((lo, hi), (Bound::Included(_), Bound::Included(_))))
            }
            _ => true,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x6b72),
            ..ProptestConfig::default()
        })]

        /// Against a `BTreeSet`: every range holding a key answers `true`,
        /// for keys and bounds of a small alphabet and mixed lengths (keys
        /// that are prefixes of others), every bound kind; bytes round-trip.
        #[test]
        fn no_false_negative_for_any_bounds(
            keys in proptest::collection::vec(proptest::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..6), 0..60),
            queries in proptest::collection::vec((proptest::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..7), proptest::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..7), any::<u8>(), any::<u8>()), 1..40),
            bits in 4.0f64..24.0,
        ) {
            let f = KeyRangeFilter::build(&keys, RangeSizing::BitsPerKey(bits), 3).unwrap();
            let set: BTreeSet<Vec<u8>> = keys.iter().cloned().collect();
            for (a, b, ka, kb) in &queries {
                let (lo, hi) = (bound(*ka, a), bound(*kb, b));
                if ordered(lo, hi) && set.range::<[u8], _>((lo, hi)).next().is_some() {
                    prop_assert!(f.may_contain_range(lo, hi), "false negative {lo:?}..{hi:?}");
                }
            }
            for k in &keys {
                prop_assert!(f.may_contain(k));
            }
            let back = KeyRangeFilter::from_bytes(&f.to_bytes()).unwrap();
            prop_assert_eq!(&back, &f);
            // Fitted to a sample of the same scans: coarsened or not, no
            // false negative either.
            let sample: Vec<_> = queries.iter().map(|(a, b, ka, kb)| (bound(*ka, a), bound(*kb, b))).collect();
            let fitted = KeyRangeFilter::build_for_scans(&keys, RangeSizing::BitsPerKey(bits), 3, &sample).unwrap();
            for &(lo, hi) in &sample {
                if ordered(lo, hi) && set.range::<[u8], _>((lo, hi)).next().is_some() {
                    prop_assert!(fitted.may_contain_range(lo, hi), "false negative {lo:?}..{hi:?} at shift {}", fitted.key_map().map_or(0, KeyMap::shift));
                }
            }
            prop_assert_eq!(&KeyRangeFilter::from_bytes(&fitted.to_bytes()).unwrap(), &fitted);
        }
    }

    /// The fit follows the sample: ranges just past a key keep the full
    /// resolution (any shift would put them beside the key), windows far
    /// wider than the keys' codes allow get coarse codes, at the memory of
    /// the full resolution within a few percent.
    #[test]
    fn the_fit_follows_the_sample() {
        // Nanosecond timestamps 1 to 2 s apart, twenty decimal digits.
        let t =
            |i: u64| 1_700_000_000_000_000_000 + i * 1_500_000_000 + crate::hash::remix(i, 1) % 500_000_000;
        let keys: Vec<String> = (0..4_000u64).map(|i| format!("ev:{:020}", t(i))).collect();
        let near: Vec<(String, String)> = (0..300u64)
            .map(|i| {
                (
                    format!("ev:{:020}", t(i * 13) + 1),
                    format!("ev:{:020}", t(i * 13) + 16),
                )
            })
            .collect();
        let middle: Vec<(String, String)> = (0..300u64)
            .map(|i| {
                (
                    format!("ev:{:020}", t(i * 13) + 300_000_000),
                    format!("ev:{:020}", t(i * 13) + 700_000_000),
                )
            })
            .collect();
        let sample = |r: &[(String, String)]| -> Vec<(Vec<u8>, Vec<u8>)> {
            r.iter()
                .map(|(a, b)| (a.clone().into_bytes(), b.clone().into_bytes()))
                .collect()
        };
        fn bounds(r: &[(Vec<u8>, Vec<u8>)]) -> Vec<crate::range::ScanRange<'_>> {
            r.iter()
                .map(|(a, b)| (Bound::Included(&a[..]), Bound::Included(&b[..])))
                .collect()
        }
        let passed = |f: &KeyRangeFilter, r: &[(Vec<u8>, Vec<u8>)]| {
            bounds(r)
                .into_iter()
                .filter(|&(a, b)| f.may_contain_range(a, b))
                .count()
        };
        let sizing = RangeSizing::BitsPerKey(16.0);
        let plain = KeyRangeFilter::build(&keys, sizing, 5).unwrap();
        let (near, middle) = (sample(&near), sample(&middle));
        let for_near = KeyRangeFilter::build_for_scans(&keys, sizing, 5, &bounds(&near)).unwrap();
        assert_eq!(for_near.key_map().map(KeyMap::shift), Some(0));
        assert_eq!(for_near, plain);
        assert!(passed(&plain, &near) < 10, "{}", passed(&plain, &near));
        // 0.4 s in the middle of a gap: 2^28 codes, never asked at full
        // resolution; ruled out once coarse.
        assert_eq!(passed(&plain, &middle), 300);
        let for_middle = KeyRangeFilter::build_for_scans(&keys, sizing, 5, &bounds(&middle)).unwrap();
        assert!(for_middle.key_map().is_some_and(|m| m.shift() > 0));
        assert!(
            passed(&for_middle, &middle) < 15,
            "{}",
            passed(&for_middle, &middle)
        );
        let (a, b) = (plain.size_in_bytes() as f64, for_middle.size_in_bytes() as f64);
        assert!(b < 1.05 * a, "{a} {b}");
    }

    /// Keys whose differences pass 64 bits (twenty varying decimal digits):
    /// without a sample, the infix filter; fitted to ranges just past a
    /// key, the mapped filter at full resolution, which rules those out
    /// where the infix filter lets them through (they share a key's cell).
    #[test]
    fn keys_past_64_bits_get_the_filter_the_sample_favours() {
        let t = |i: u64| crate::hash::remix(i, 1).saturating_sub(100);
        let keys: Vec<String> = (0..4_000u64).map(|i| format!("ev:{:020}", t(i))).collect();
        let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
        assert!(!map.is_exact());
        let near: Vec<(Vec<u8>, Vec<u8>)> = (0..300u64)
            .map(|i| {
                (
                    format!("ev:{:020}", t(i * 13) + 1).into_bytes(),
                    format!("ev:{:020}", t(i * 13) + 16).into_bytes(),
                )
            })
            .collect();
        let near: Vec<crate::range::ScanRange<'_>> = near
            .iter()
            .map(|(a, b)| (Bound::Included(&a[..]), Bound::Included(&b[..])))
            .collect();
        let passed = |f: &KeyRangeFilter| near.iter().filter(|&&(a, b)| f.may_contain_range(a, b)).count();
        let sizing = RangeSizing::BitsPerKey(16.0);
        let plain = KeyRangeFilter::build(&keys, sizing, 5).unwrap();
        assert!(plain.infix().is_some());
        assert!(passed(&plain) > 290, "{}", passed(&plain));
        let fitted = KeyRangeFilter::build_for_scans(&keys, sizing, 5, &near).unwrap();
        assert!(fitted.key_map().is_some());
        assert!(passed(&fitted) < 60, "{}", passed(&fitted));
        assert_eq!(KeyRangeFilter::from_bytes(&fitted.to_bytes()).unwrap(), fitted);
        assert_eq!(KeyRangeFilter::from_bytes(&plain.to_bytes()).unwrap(), plain);
    }

    #[test]
    fn empty_filters_answer_nothing() {
        let none: [&[u8]; 0] = [];
        let f = KeyRangeFilter::build(&none, RangeSizing::BitsPerKey(16.0), 0).unwrap();
        assert!(!f.may_contain_range(Bound::Unbounded, Bound::Unbounded));
        assert!(!f.may_contain(b""));
        assert_eq!(KeyRangeFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    }

    /// Every truncation and every single-byte change is refused: the
    /// checksum covers the whole frame, and what passes it is checked.
    #[test]
    fn damaged_bytes_are_refused() {
        let keys: Vec<String> = (0..300u32).map(|i| format!("k{:05}", i * 3)).collect();
        let bytes = KeyRangeFilter::build(&keys, RangeSizing::BitsPerKey(12.0), 1)
            .unwrap()
            .to_bytes();
        for n in 0..bytes.len() {
            assert!(KeyRangeFilter::from_bytes(&bytes[..n]).is_err(), "{n}");
        }
        let mut b = bytes.clone();
        for i in 0..bytes.len() {
            b[i] ^= 0x10;
            assert!(KeyRangeFilter::from_bytes(&b).is_err(), "byte {i}");
            b[i] = bytes[i];
        }
    }
}
