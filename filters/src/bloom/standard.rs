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
use crate::cost::{CostModel, Params, QueryCost, Shape, Traits};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::zeroed::zeroed_vec;
use crate::{math, Error, Filter, FilterKind, FilterSizing, FormatError, FromBytes, Insert, KeyHash};

mod shape;
mod view;

pub use shape::ProbePositions;
pub use view::StandardBloomView;

/// `(words, probes)` of a filter for `expected_keys` at `sizing`: what
/// [`StandardBloom::new`] allocates, and what the planner predicts from
/// without allocating.
///
/// For an FPR, the probe count is the optimal one rounded (at most 30), and
/// the bits are what that probe count needs for the FPR; for bits per key,
/// the probe count is `round(bits_per_key · ln 2)` clamped to `1..=30`.
pub(crate) fn shape(expected_keys: usize, sizing: FilterSizing) -> Result<(u64, u32), Error> {
    check_keys(expected_keys)?;
    let bits_per_key = match sizing {
        FilterSizing::BitsPerKey(b) => b,
        FilterSizing::Fpr(p) => standard_bits_per_key_for_fpr(p)?,
    };
    check_bits_per_key(bits_per_key)?;
    let words = units_for(expected_keys, bits_per_key, 64, 8, u64::MAX / 64)?;
    Ok((words, math::optimal_bloom_probes(bits_per_key)))
}

/// A standard Bloom filter over `u64` words, probed by double hashing.
///
/// ```
/// use amq::{Filter, FilterSizing, Insert, StandardBloom};
/// let n = 10_000;
/// let mut f = StandardBloom::new(n, FilterSizing::Fpr(0.01)).unwrap();
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes()).unwrap();
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
    /// An empty filter sized for `expected_keys` keys.
    ///
    /// [`FilterSizing::Fpr`]: the probe count is the optimal one rounded
    /// (at most 30), and the bits are what that probe count needs for the
    /// FPR. [`FilterSizing::BitsPerKey`]: `expected_keys * bits_per_key` bits
    /// (rounded up to whole 64-bit words) with `round(bits_per_key · ln 2)`
    /// probes, clamped to `1..=30`. More keys than `expected_keys` can be
    /// inserted; the FPR then rises past the target.
    ///
    /// Errors if `expected_keys` is 0, the FPR is not in `(0, 1)`, the
    /// sizing needs more than 1000 bits per key, or the size overflows or
    /// cannot be allocated.
    ///
    /// ```
    /// use amq::{FilterSizing, StandardBloom};
    /// let f = StandardBloom::new(1000, FilterSizing::Fpr(0.01)).unwrap();
    /// assert_eq!((f.num_bits(), f.num_probes()), (9600, 7));
    /// let g = StandardBloom::new(1000, FilterSizing::BitsPerKey(20.0)).unwrap();
    /// assert_eq!(g.num_probes(), 14);
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        let (words, num_probes) = shape(expected_keys, sizing)?;
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

    /// Sets the probe bits of `hash` and counts the key; whether every one
    /// of them was set before. A bit the key probes twice is set at its
    /// second visit, which so changes nothing: the answer is the one
    /// [`contains_hash`](Filter::contains_hash) gave before.
    #[inline]
    fn add(&mut self, hash: u64) -> bool {
        let m = self.num_bits();
        let mut probes = ProbeSeq::new(hash);
        let mut present = 1;
        for _ in 0..self.num_probes {
            let bit = probes.next_in(m);
            let word = &mut self.words[(bit >> 6) as usize];
            present &= *word >> (bit & 63);
            *word |= 1 << (bit & 63);
        }
        self.num_keys = self.num_keys.saturating_add(1).min(max_keys(m));
        present & 1 == 1
    }

    /// Inserts the key with this hash and says whether it was (probably)
    /// there already: `true` iff every probe bit was already set, so
    /// `false` means the key is certainly new. For deduplication: skip a
    /// key when this is `true`; a new key is skipped with probability about
    /// [`expected_fpr`](Filter::expected_fpr).
    ///
    /// One pass over the probes, each bit tested and set together, not a
    /// query and then an insert. The answer is what
    /// [`contains_hash`](Filter::contains_hash) said before the call, and
    /// the filter afterwards is what [`insert_hash`](Insert::insert_hash)
    /// leaves (the key counted in [`num_keys`](Filter::num_keys) either
    /// way). Never fails, so it returns no `Result`: it is also the Bloom
    /// filter's infallible insert. fastbloom's `insert` returns the same
    /// answer; the bloomfilter crate calls it `check_and_set`.
    ///
    /// ```
    /// use amq::{hash_u64, FilterSizing, StandardBloom};
    /// let mut seen = StandardBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let ids = [7u64, 8, 7, 9, 8];
    /// let new: Vec<u64> = ids.into_iter().filter(|&id| !seen.check_and_insert_hash(hash_u64(id))).collect();
    /// assert_eq!(new, [7, 8, 9]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert_hash(&mut self, hash: KeyHash) -> bool {
        self.add(hash.get())
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)): inserts it and says
    /// whether it was (probably) there already.
    ///
    /// ```
    /// use amq::{FilterSizing, StandardBloom};
    /// let mut seen = StandardBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let lines = ["a", "b", "a", "c", "b"];
    /// let unique: Vec<&str> = lines.into_iter().filter(|l| !seen.check_and_insert(l.as_bytes())).collect();
    /// assert_eq!(unique, ["a", "b", "c"]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert(&mut self, key: &[u8]) -> bool {
        self.check_and_insert_hash(crate::hash_key(key))
    }

    /// Adds every key of `other` into `self`: afterwards `self` answers
    /// `true` for every key either filter held. Both filters must have the
    /// same number of bits and probes ([`Error::Incompatible`] otherwise,
    /// and `self` is unchanged).
    ///
    /// ```
    /// use amq::{Filter, FilterSizing, Insert, StandardBloom};
    /// let mut a = StandardBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// let mut b = a.clone();
    /// a.insert(b"x")?;
    /// b.insert(b"y")?;
    /// a.union(&b)?;
    /// assert!(a.contains(b"x") && a.contains(b"y"));
    /// let other = StandardBloom::new(1000, FilterSizing::Fpr(0.01))?;
    /// assert!(a.union(&other).is_err());
    /// # Ok::<(), amq::Error>(())
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

    /// Fraction of bits set. A query for an absent key finds all its `k`
    /// probe bits set with probability about `fill_ratio()^k`, which needs
    /// no key count, so it stays right after [`union`](Self::union) of
    /// overlapping key sets where [`expected_fpr`](Filter::expected_fpr)
    /// (which counts both sets' keys) overestimates.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, Insert, StandardBloom};
    /// let mut f = StandardBloom::new(10_000, FilterSizing::BitsPerKey(10.0))?;
    /// for i in 0..10_000 {
    ///     f.insert_hash(hash_u64(i))?;
    /// }
    /// // About half the bits are set at the design load.
    /// assert!((f.fill_ratio() - 0.5).abs() < 0.02);
    /// let from_fill = f.fill_ratio().powi(f.num_probes() as i32);
    /// assert!((from_fill / f.expected_fpr() - 1.0).abs() < 0.1);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self.words.iter().map(|w| w.count_ones() as u64).sum();
        ones as f64 / self.num_bits() as f64
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
    fn contains_hash(&self, hash: KeyHash) -> bool {
        probes_all_set(|w| self.words[w], self.num_bits(), self.num_probes, hash.get())
    }
    /// Interleaves the keys' probes, each prefetched a round ahead.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let words = &self.words[..];
        super::batched_query(
            crate::hash::raw(hashes),
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
    fn prefetch_hash(&self, hash: KeyHash) {
        super::prefetch_probes(&self.words, self.num_bits(), 6, self.num_probes, hash.get());
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

impl CostModel for StandardBloom {
    const TRAITS: Traits = Traits {
        cost: QueryCost::High,
        reason: "takes inserts for ever, its FPR rising gently past n; one cache miss per probe",
        ..super::BLOOM_TRAITS
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let (words, probes) = shape(n, sizing)?;
        Ok(Shape {
            bytes: words * 8,
            fpr: math::standard_bloom_fpr(words * 64, probes, n as u64),
            fpr_floor: super::DOUBLE_HASHING_FLOOR / (words * 64) as f64,
            params: Params::Bloom { probes },
        })
    }
}

impl Insert for StandardBloom {
    /// Never fails.
    #[inline]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.add(hash.get());
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

    use FilterSizing::{BitsPerKey, Fpr};

    #[test]
    fn sizing_from_fpr_and_bits() {
        let f = StandardBloom::new(1000, Fpr(0.01)).unwrap();
        assert_eq!(f.num_bits(), 9600); // ceil(9585.06 / 64) * 64
        assert_eq!(f.num_probes(), 7);
        let g = StandardBloom::new(1000, BitsPerKey(20.0)).unwrap();
        assert_eq!(g.num_probes(), 14);
        assert_eq!(g.num_bits(), 20032);
        assert!(StandardBloom::new(0, Fpr(0.01)).is_err());
        assert!(StandardBloom::new(10, Fpr(0.0)).is_err());
        assert!(StandardBloom::new(10, Fpr(1.0)).is_err());
        assert!(StandardBloom::new(10, BitsPerKey(0.0)).is_err());
        assert!(StandardBloom::new(10, BitsPerKey(-3.0)).is_err());
        assert_eq!(
            StandardBloom::new(usize::MAX, BitsPerKey(999.0)),
            Err(Error::TooLarge)
        );
    }

    #[test]
    fn union_rejects_mismatch_and_keeps_self() {
        let mut a = StandardBloom::new(100, BitsPerKey(10.0)).unwrap();
        a.insert(b"a").unwrap();
        let before = a.clone();
        let b = StandardBloom::new(100, BitsPerKey(12.0)).unwrap(); // other k
        assert_eq!(a.union(&b), Err(Error::Incompatible));
        assert_eq!(a, before);
    }
}
