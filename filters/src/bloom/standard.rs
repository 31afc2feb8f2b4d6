//! The standard Bloom filter (Bloom 1970): `m` bits, `k` probes per key
//! anywhere in the array.
//!
//! Sizing (Broder & Mitzenmacher 2004): for `n` keys and target FPR `p`,
//! `m = -n ln p / (ln 2)^2` bits and `k = (m/n) ln 2` probes, which gives
//! `FPR = (1 - e^(-k n / m))^k`. At 10 bits/key, `k = 7` and the FPR is 0.82%.
//!
//! Each probe can touch a different cache line, so queries on a large filter
//! cost up to `k` cache misses; [`BlockedBloom`](crate::BlockedBloom) trades a
//! little FPR for one miss per query.

use alloc::vec::Vec;

use super::{
    check_bits_per_key, check_keys, count_as_usize, max_keys, standard_bits_per_key_for_fpr, units_for,
    ProbeSeq,
};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::zeroed::zeroed_vec;
use crate::{math, Error, Filter, FilterKind, FormatError, FromBytes, Insert};

mod shape;
mod view;

pub use shape::ProbePositions;
pub use view::StandardBloomView;

/// `(words, probes)` of a filter for `expected_keys` at `bits_per_key`: what
/// [`StandardBloom::with_bits_per_key`] allocates, and what the planner
/// (`plan.rs`) predicts from without allocating.
pub(crate) fn shape(expected_keys: usize, bits_per_key: f64) -> Result<(u64, u32), Error> {
    check_keys(expected_keys)?;
    check_bits_per_key(bits_per_key)?;
    let words = units_for(expected_keys, bits_per_key, 64, 8, u64::MAX / 64)?;
    Ok((words, math::optimal_bloom_probes(bits_per_key)))
}

/// A standard Bloom filter over `u64` words, probed by double hashing.
///
/// ```
/// use amq::{Filter, StandardBloom};
/// let n = 10_000;
/// let mut f = StandardBloom::with_fpr(n, 0.01).unwrap();
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes());
/// }
/// assert!((0..n as u64).all(|i| f.contains(&i.to_le_bytes())));
/// // About 9.6 bits per key at 1% FPR, 7 probes.
/// assert!((f.bits_per_key() - 9.6).abs() < 0.1);
/// assert_eq!(f.num_probes(), 7);
/// let fp = (n as u64..n as u64 + 100_000)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// assert!(fp < 1_300, "{fp} false positives");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandardBloom {
    words: Vec<u64>,
    num_probes: u32,
    num_keys: u64,
}

impl StandardBloom {
    /// A filter sized for `expected_keys` keys at false-positive rate `fpr`.
    ///
    /// The probe count is the optimal one rounded (at most 30), and the bits
    /// are what that probe count needs for `fpr`. Errors if `expected_keys`
    /// is 0, `fpr` is not in `(0, 1)` or needs more than 1000 bits per key,
    /// or the size overflows or cannot be allocated.
    pub fn with_fpr(expected_keys: usize, fpr: f64) -> Result<Self, Error> {
        check_keys(expected_keys)?;
        Self::with_bits_per_key(expected_keys, standard_bits_per_key_for_fpr(fpr)?)
    }

    /// A filter of `expected_keys * bits_per_key` bits (rounded up to whole
    /// 64-bit words) with the optimal number of probes, `round(bits_per_key ·
    /// ln 2)` clamped to `1..=30`.
    pub fn with_bits_per_key(expected_keys: usize, bits_per_key: f64) -> Result<Self, Error> {
        let (words, num_probes) = shape(expected_keys, bits_per_key)?;
        Ok(StandardBloom {
            words: zeroed_vec(words as usize)?,
            num_probes,
            num_keys: 0,
        })
    }

    /// Number of bits `m`.
    pub fn num_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// Number of probes `k` per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// Adds the key with this [`hash_key`](crate::hash_key) value.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let m = self.num_bits();
        let mut probes = ProbeSeq::new(hash);
        for _ in 0..self.num_probes {
            let bit = probes.next_in(m);
            self.words[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
        self.num_keys = self.num_keys.saturating_add(1).min(max_keys(m));
    }

    /// Adds `key` (hashed once with [`hash_key`](crate::hash_key)).
    #[inline]
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(crate::hash_key(key));
    }

    /// Adds every key of `other` into `self`: afterwards `self` answers
    /// `true` for every key either filter held. Both filters must have the
    /// same number of bits and probes ([`Error::Incompatible`] otherwise,
    /// and `self` is unchanged).
    ///
    /// ```
    /// use amq::StandardBloom;
    /// let mut a = StandardBloom::with_fpr(100, 0.01).unwrap();
    /// let mut b = a.clone();
    /// a.insert(b"x");
    /// b.insert(b"y");
    /// a.union(&b).unwrap();
    /// assert!(a.contains(b"x") && a.contains(b"y"));
    /// let other = StandardBloom::with_fpr(1000, 0.01).unwrap();
    /// assert!(a.union(&other).is_err());
    /// ```
    pub fn union(&mut self, other: &StandardBloom) -> Result<(), Error> {
        if self.words.len() != other.words.len() || self.num_probes != other.num_probes {
            return Err(Error::Incompatible);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.num_keys = self
            .num_keys
            .saturating_add(other.num_keys)
            .min(max_keys(self.num_bits()));
        Ok(())
    }

    /// Fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self.words.iter().map(|w| w.count_ones() as u64).sum();
        ones as f64 / self.num_bits() as f64
    }

    /// FPR estimated from the bits actually set: `fill^k`. Unlike
    /// [`expected_fpr`](Filter::expected_fpr) it needs no key count, so it
    /// stays right after [`union`](Self::union) of overlapping key sets.
    pub fn estimated_fpr(&self) -> f64 {
        libm::pow(self.fill_ratio(), self.num_probes as f64)
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        probes_all_set(|w| self.words[w], self.num_bits(), self.num_probes, hash)
    }

    /// Whether `key` may be in the set.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(crate::hash_key(key))
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let parts = parse_frame(frame)?;
        let mut payload = Reader::new(parts.payload);
        let words = payload.u64s(parts.payload.len() / 8, 0)?;
        Ok(StandardBloom {
            words,
            num_probes: parts.num_probes,
            num_keys: parts.num_keys,
        })
    }
}

/// Whether all `num_probes` probe bits of `hash` in `0..num_bits` are set,
/// reading word `i` through `word` (the owned words, or a borrowed view's
/// little-endian bytes in place, [`StandardBloomView`]). Stops at the first
/// clear bit: each probe can be a cache miss of its own, so a miss should
/// cost as few as possible.
#[inline(always)]
fn probes_all_set(word: impl Fn(usize) -> u64, num_bits: u64, num_probes: u32, hash: u64) -> bool {
    let mut probes = ProbeSeq::new(hash);
    let set = |bit: u64| word((bit >> 6) as usize) & (1 << (bit & 63)) != 0;
    // The first probe outside the loop (there is always one): an absent
    // key is answered there half the time, and its branch is then one of
    // its own for the predictor.
    if !set(probes.next_in(num_bits)) {
        return false;
    }
    (1..num_probes).all(|_| set(probes.next_in(num_bits)))
}

/// A validated `StandardBloom` frame: its parameters and its payload, not
/// yet copied (what the owned filter and the borrowed view both read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StandardParts<'a> {
    pub(crate) num_probes: u32,
    pub(crate) num_keys: u64,
    /// Exactly `num_bits / 8` bytes: the words, little-endian.
    pub(crate) payload: &'a [u8],
}

/// Checks a `StandardBloom` frame's parameters against each other and its
/// payload length.
pub(crate) fn parse_frame(mut frame: Frame<'_>) -> Result<StandardParts<'_>, Error> {
    let num_bits = frame.params.u64()?;
    let num_probes = frame.params.u32()?;
    let num_keys = frame.params.u64()?;
    frame.params.finish()?;
    if num_bits == 0 || num_bits % 64 != 0 {
        return Err(FormatError::InvalidParameters("bit count must be a positive multiple of 64").into());
    }
    if !(1..=30).contains(&num_probes) {
        return Err(FormatError::InvalidParameters("probe count must be 1..=30").into());
    }
    if num_keys > max_keys(num_bits) {
        return Err(FormatError::InvalidParameters("more than 64 keys per bit").into());
    }
    let len = usize::try_from(num_bits / 8).map_err(|_| FormatError::Truncated)?;
    if frame.payload.remaining() != len {
        return Err(FormatError::InvalidParameters("payload length does not match bit count").into());
    }
    let payload = frame.payload.take(len)?;
    Ok(StandardParts {
        num_probes,
        num_keys,
        payload,
    })
}

impl Filter for StandardBloom {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        StandardBloom::contains_hash(self, hash)
    }
    /// Interleaves the keys' probes, each prefetched a round ahead
    /// (`bloom::batched_query`).
    fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
        let words = &self.words[..];
        super::batched_query(
            hashes,
            out,
            self.num_bits(),
            self.num_probes,
            |cell| super::prefetch_cell(words, 6, cell),
            |cell| words[(cell >> 6) as usize] & (1 << (cell & 63)) != 0,
        );
    }
    /// Prefetches the words of the key's first two probes (where an absent
    /// key is usually answered).
    #[inline]
    fn prefetch_hash(&self, hash: u64) {
        super::prefetch_probes(&self.words, self.num_bits(), 6, self.num_probes, hash);
    }
    fn size_in_bytes(&self) -> usize {
        self.words.len() * 8
    }
    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }
    fn expected_fpr(&self) -> f64 {
        math::standard_bloom_fpr(self.num_bits(), self.num_probes, self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::StandardBloom
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(self.num_bits()).u32(self.num_probes).u64(self.num_keys);
        format::encode(
            FilterKind::StandardBloom,
            &p.into_vec(),
            self.words.len() * 8,
            |w| {
                w.u64s(&self.words);
            },
        )
    }
}

impl Insert for StandardBloom {
    fn insert_hash(&mut self, hash: u64) -> Result<(), Error> {
        StandardBloom::insert_hash(self, hash);
        Ok(())
    }
}

impl FromBytes for StandardBloom {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::StandardBloom)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_from_fpr_and_bits() {
        let f = StandardBloom::with_fpr(1000, 0.01).unwrap();
        assert_eq!(f.num_bits(), 9600); // ceil(9585.06 / 64) * 64
        assert_eq!(f.num_probes(), 7);
        let g = StandardBloom::with_bits_per_key(1000, 20.0).unwrap();
        assert_eq!(g.num_probes(), 14);
        assert_eq!(g.num_bits(), 20032);
        assert!(StandardBloom::with_fpr(0, 0.01).is_err());
        assert!(StandardBloom::with_fpr(10, 0.0).is_err());
        assert!(StandardBloom::with_fpr(10, 1.0).is_err());
        assert!(StandardBloom::with_bits_per_key(10, 0.0).is_err());
        assert!(StandardBloom::with_bits_per_key(10, -3.0).is_err());
        assert_eq!(
            StandardBloom::with_bits_per_key(usize::MAX, 999.0),
            Err(Error::TooLarge)
        );
    }

    #[test]
    fn fill_and_estimate_track_the_formula() {
        let n = 20_000u64;
        let mut f = StandardBloom::with_bits_per_key(n as usize, 10.0).unwrap();
        for i in 0..n {
            f.insert_hash(crate::hash::remix(i, 9));
        }
        let expected = f.expected_fpr();
        let estimated = f.estimated_fpr();
        assert!(
            (estimated / expected - 1.0).abs() < 0.1,
            "{estimated} vs {expected}"
        );
        assert!((f.fill_ratio() - 0.5).abs() < 0.02);
    }

    #[test]
    fn union_rejects_mismatch_and_keeps_self() {
        let mut a = StandardBloom::with_bits_per_key(100, 10.0).unwrap();
        a.insert(b"a");
        let before = a.clone();
        let b = StandardBloom::with_bits_per_key(100, 12.0).unwrap(); // other k
        assert_eq!(a.union(&b), Err(Error::Incompatible));
        assert_eq!(a, before);
    }
}
