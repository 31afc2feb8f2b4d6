//! The counting Bloom filter (Fan, Cao, Almeida & Broder 2000, "Summary
//! Cache"): each bit of a standard Bloom filter becomes a 4-bit counter, so
//! keys can be removed.
//!
//! Counters are packed sixteen to a `u64` word (two per byte). Four bits are
//! enough: with the optimal `k`, the chance that any counter of a filter with
//! `m` counters reaches 16 is below `1.37e-15 · m` (Fan et al., section V.C).
//!
//! **Saturation.** A counter that reaches 15 sticks there and is never
//! decremented: after saturation we no longer know how many keys share it, and
//! decrementing could zero it under a key still present (a false negative).
//! A stuck counter only costs FPR.
//!
//! **Removal** first checks that every probed counter is non-zero; if one is
//! zero the key is definitely absent and [`Error::NotPresent`] is returned
//! with nothing changed. Removing a key that was never inserted but is a
//! false positive decrements other keys' counters and can create false
//! negatives for them: only remove keys you inserted.
//!
//! Probes are the double hashing of [`StandardBloom`](crate::StandardBloom),
//! so the FPR formula is the standard one with `m` counters in place of bits.

use alloc::vec::Vec;

use super::{
    check_bits_per_key, check_keys, count_as_usize, max_keys, standard_bits_per_key_for_fpr, units_for,
    ProbeSeq,
};
use crate::cost::{CostModel, Params, QueryCost, Shape, Traits};
use crate::format::{self, ByteWriter, Frame};
use crate::zeroed::zeroed_vec;
use crate::{math, Error, Filter, FilterKind, FilterSizing, FormatError, FromBytes, Insert, KeyHash, Remove};

const SATURATED: u64 = 15;

/// `(words, probes)` of a filter for `expected_keys` at `sizing` (sixteen
/// counters per word): what [`CountingBloom::new`] allocates, and what the
/// planner predicts from without allocating.
///
/// An FPR takes the standard Bloom sizing in counters (at most 1000 per
/// key); bits per key are the memory per key, four bits per counter (`b / 4`
/// counters per key), checked as every kind checks them: in `(0, 1000]`.
pub(crate) fn shape(expected_keys: usize, sizing: FilterSizing) -> Result<(u64, u32), Error> {
    check_keys(expected_keys)?;
    let counters_per_key = match sizing {
        FilterSizing::BitsPerKey(b) => {
            check_bits_per_key(b)?;
            b / 4.0
        }
        FilterSizing::Fpr(p) => standard_bits_per_key_for_fpr(p)?,
    };
    let words = units_for(expected_keys, counters_per_key, 16, 8, u64::MAX / 16)?;
    Ok((words, math::optimal_bloom_probes(counters_per_key)))
}

/// A counting Bloom filter with 4-bit saturating counters.
///
/// **Saturation.** A counter that reaches 15 stays at 15 for good: removals
/// leave it alone, because after saturation nobody knows how many keys share
/// it, and decrementing could zero it under a key still present. So a key
/// with a stuck counter can never be removed: after `remove` it still
/// answers `true` (a permanent false positive, never a false negative).
/// [`num_keys`](Filter::num_keys) counts successful inserts minus removes,
/// so once counters stick it drifts from what the counters hold (it
/// undercounts them), and [`expected_fpr`](Filter::expected_fpr), computed
/// from it, is then too low. [`saturated_counters`](Self::saturated_counters)
/// says whether that happened; with the optimal probe count it takes about
/// 16 keys on one counter, which Fan et al. bound below `1.37e-15 · m` for
/// distinct keys (repeated inserts of one key get there much sooner).
///
/// ```
/// use amq::{CountingBloom, Filter, FilterSizing, Insert, Remove};
/// let mut f = CountingBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
/// f.insert(b"a").unwrap();
/// f.insert(b"b").unwrap();
/// f.remove(b"a").unwrap();
/// assert!(!f.contains(b"a"));
/// assert!(f.contains(b"b"));
/// assert!(f.remove(b"never-inserted").is_err());
/// // Four bits per Bloom bit: about 38 bits per key at 1% FPR.
/// assert_eq!(f.num_counters(), 9_600);
/// assert_eq!(f.size_in_bytes(), 4_800);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingBloom {
    /// Sixteen 4-bit counters per word; counter `i` is bits `4(i%16)..` of
    /// word `i/16`.
    words: Vec<u64>,
    num_probes: u32,
    num_keys: u64,
}

impl CountingBloom {
    /// An empty filter sized for `expected_keys` keys.
    ///
    /// [`FilterSizing::Fpr`]: the standard Bloom sizing, in counters (each
    /// four bits). [`FilterSizing::BitsPerKey`]: that many bits of memory
    /// per key, so a quarter as many counters, rounded up to a multiple of
    /// 16. Either way with the optimal probe count for the counters per key.
    ///
    /// Errors as every kind does ([`FilterSizing::validate`]): if
    /// `expected_keys` is 0, the FPR is not in `(0, 1)` or needs more than
    /// 1000 counters per key, the bits per key are not in `(0, 1000]`, or
    /// the size overflows or cannot be allocated.
    ///
    /// ```
    /// use amq::{CountingBloom, FilterSizing};
    /// let f = CountingBloom::new(1_000, FilterSizing::BitsPerKey(40.0))?;
    /// assert_eq!(f.num_counters(), 10_000);
    /// assert!(CountingBloom::new(1_000, FilterSizing::BitsPerKey(1000.0001)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity", alias = "with_false_pos", alias = "expected_items")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        let (words, num_probes) = shape(expected_keys, sizing)?;
        Ok(CountingBloom {
            words: zeroed_vec(words as usize)?,
            num_probes,
            num_keys: 0,
        })
    }

    /// Number of 4-bit counters `m`.
    pub fn num_counters(&self) -> u64 {
        self.words.len() as u64 * 16
    }

    /// Number of probes `k` per key.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    #[inline(always)]
    fn counter(&self, i: u64) -> u64 {
        (self.words[(i >> 4) as usize] >> ((i & 15) * 4)) & 0xF
    }

    /// Adds `delta` (+1 or -1 as a wrapping u64) to counter `i`.
    #[inline(always)]
    fn add(&mut self, i: u64, delta: u64) {
        let shift = (i & 15) * 4;
        let w = &mut self.words[(i >> 4) as usize];
        *w = w.wrapping_add(delta << shift);
    }

    /// Raises the key's counters (counters at 15 stay at 15) and counts it;
    /// whether every one of them was non-zero before. A counter the key
    /// probes twice is non-zero at its second visit, which so changes
    /// nothing: the answer is the one [`query`](Self::query) gave before.
    #[inline]
    fn increment(&mut self, hash: u64) -> bool {
        let m = self.num_counters();
        let mut probes = ProbeSeq::new(hash);
        let mut present = true;
        for _ in 0..self.num_probes {
            let i = probes.next_in(m);
            let c = self.counter(i);
            present &= c != 0;
            if c < SATURATED {
                self.add(i, 1);
            }
        }
        self.num_keys = self.num_keys.saturating_add(1).min(max_keys(m));
        present
    }

    /// Inserts the key with this hash and says whether it was (probably)
    /// there already: `true` iff every one of its counters was non-zero,
    /// so `false` means the key is certainly new (never inserted, or
    /// removed as often as inserted). For deduplication: skip a key when
    /// this is `true`; a new key is skipped with probability about
    /// [`expected_fpr`](Filter::expected_fpr).
    ///
    /// One pass over the probes, each counter read and raised together,
    /// not a query and then an insert. The answer is what
    /// [`contains_hash`](Filter::contains_hash) said before the call, and
    /// the filter afterwards is what [`insert_hash`](Insert::insert_hash)
    /// leaves (the key counted in [`num_keys`](Filter::num_keys) either
    /// way). Never fails, so it returns no `Result`: it is also the
    /// counting filter's infallible insert. fastbloom's `insert` returns
    /// the same answer; the bloomfilter crate calls it `check_and_set`.
    ///
    /// ```
    /// use amq::{hash_u64, CountingBloom, FilterSizing, Remove};
    /// let mut seen = CountingBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// assert!(!seen.check_and_insert_hash(hash_u64(7))); // new
    /// assert!(seen.check_and_insert_hash(hash_u64(7))); // seen before
    /// seen.remove_hash(hash_u64(7))?;
    /// seen.remove_hash(hash_u64(7))?;
    /// assert!(!seen.check_and_insert_hash(hash_u64(7))); // new again
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    #[inline]
    pub fn check_and_insert_hash(&mut self, hash: KeyHash) -> bool {
        self.increment(hash.get())
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)): inserts it and says
    /// whether it was (probably) there already.
    ///
    /// ```
    /// use amq::{CountingBloom, FilterSizing};
    /// let mut seen = CountingBloom::new(1_000, FilterSizing::Fpr(0.01))?;
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

    /// Lowers the key's counters, unless one is zero
    /// ([`Error::NotPresent`], nothing changed). Saturated counters are
    /// left at 15.
    fn decrement(&mut self, hash: u64) -> Result<(), Error> {
        if !self.query(hash) {
            return Err(Error::NotPresent);
        }
        let m = self.num_counters();
        let mut probes = ProbeSeq::new(hash);
        for _ in 0..self.num_probes {
            let i = probes.next_in(m);
            // A zero here is only possible when this key probes one counter
            // twice and is a false positive; never wrap below zero.
            let c = self.counter(i);
            if c > 0 && c < SATURATED {
                self.add(i, u64::MAX); // -1
            }
        }
        self.num_keys = self.num_keys.saturating_sub(1);
        Ok(())
    }

    /// Whether every probed counter of `hash` is non-zero.
    #[inline]
    fn query(&self, hash: u64) -> bool {
        let m = self.num_counters();
        let mut probes = ProbeSeq::new(hash);
        (0..self.num_probes).all(|_| self.counter(probes.next_in(m)) != 0)
    }

    /// Number of counters stuck at 15.
    ///
    /// ```
    /// use amq::{CountingBloom, FilterSizing, Insert};
    /// let mut f = CountingBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// assert_eq!(f.saturated_counters(), 0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn saturated_counters(&self) -> u64 {
        (0..self.num_counters())
            .filter(|&i| self.counter(i) == SATURATED)
            .count() as u64
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, Error> {
        let num_counters = frame.params.u64()?;
        let num_probes = frame.params.u32()?;
        let num_keys = frame.params.u64()?;
        frame.params.finish()?;
        if num_counters == 0 || num_counters % 16 != 0 {
            return Err(
                FormatError::InvalidParameters("counter count must be a positive multiple of 16").into(),
            );
        }
        if !(1..=30).contains(&num_probes) {
            return Err(FormatError::InvalidParameters("probe count must be 1..=30").into());
        }
        if num_keys > max_keys(num_counters) {
            return Err(FormatError::InvalidParameters("more than 64 keys per counter").into());
        }
        let words = usize::try_from(num_counters / 16).map_err(|_| FormatError::Truncated)?;
        if frame.payload.remaining() != words.saturating_mul(8) {
            return Err(FormatError::InvalidParameters("payload length does not match counter count").into());
        }
        let words = frame.payload.u64s(words, 0)?;
        frame.payload.finish()?;
        Ok(CountingBloom {
            words,
            num_probes,
            num_keys,
        })
    }
}

impl Filter for CountingBloom {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.query(hash.get())
    }
    /// Interleaves the keys' probes, each prefetched a round ahead.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        super::batched_query(
            crate::hash::raw(hashes),
            out,
            self.num_counters(),
            self.num_probes,
            |cell| super::prefetch_cell(&self.words, 4, cell),
            |cell| self.counter(cell) != 0,
        );
    }
    /// Prefetches the words of the key's first two probes (where an absent
    /// key is usually answered).
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let hash = hash.get();
        super::prefetch_probes(&self.words, self.num_counters(), 4, self.num_probes, hash);
    }
    fn size_in_bytes(&self) -> usize {
        self.words.len() * 8
    }
    fn num_keys(&self) -> usize {
        count_as_usize(self.num_keys)
    }
    fn expected_fpr(&self) -> f64 {
        math::standard_bloom_fpr(self.num_counters(), self.num_probes, self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::CountingBloom
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(self.num_counters()).u32(self.num_probes).u64(self.num_keys);
        format::encode(
            FilterKind::CountingBloom,
            &p.into_vec(),
            self.words.len() * 8,
            |w| {
                w.u64s(&self.words);
            },
        )
    }
}

impl CostModel for CountingBloom {
    const TRAITS: Traits = Traits {
        removes: true,
        cost: QueryCost::High,
        reason: "removes keys at any FPR, at four times a Bloom filter's space",
        ..super::BLOOM_TRAITS
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let (words, probes) = shape(n, sizing)?;
        Ok(Shape {
            bytes: words * 8,
            fpr: math::standard_bloom_fpr(words * 16, probes, n as u64),
            fpr_floor: super::DOUBLE_HASHING_FLOOR / (words * 16) as f64,
            params: Params::Counting { probes },
        })
    }
}

impl Insert for CountingBloom {
    /// Never fails; counters at 15 stay at 15.
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.increment(hash.get());
        Ok(())
    }
}

/// [`Error::NotPresent`], changing nothing, if a probed counter is zero.
/// Saturated counters are left at 15.
impl Remove for CountingBloom {
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.decrement(hash.get())
    }
}

impl FromBytes for CountingBloom {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::CountingBloom)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_saturate_and_never_underflow() {
        let mut f = CountingBloom::new(1, FilterSizing::BitsPerKey(64.0)).unwrap();
        for _ in 0..40 {
            f.increment(42);
        }
        assert!(f.saturated_counters() > 0);
        // Removing more times than inserted-to-saturation keeps the key: its
        // counters are stuck at 15.
        for _ in 0..40 {
            f.decrement(42).unwrap();
        }
        assert!(f.query(42));
        // Exactly the key's own counters are non-zero: a carry out of a
        // saturated nibble would have changed a neighbour.
        let mut probes = ProbeSeq::new(42);
        let own: Vec<u64> = (0..f.num_probes)
            .map(|_| probes.next_in(f.num_counters()))
            .collect();
        assert!((0..f.num_counters()).all(|i| own.contains(&i) == (f.counter(i) != 0)));
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(
            CountingBloom::new(10, FilterSizing::BitsPerKey(0.0)),
            Err(crate::error::invalid(
                "bits_per_key",
                "must be finite, > 0 and <= 1000"
            ))
        );
    }

    #[test]
    fn remove_absent_changes_nothing() {
        let mut f = CountingBloom::new(100, FilterSizing::Fpr(0.01)).unwrap();
        f.insert(b"x").unwrap();
        let before = f.clone();
        assert_eq!(f.remove(b"y"), Err(Error::NotPresent));
        assert_eq!(f, before);
    }

    #[test]
    fn insert_then_remove_restores_zero() {
        let mut f = CountingBloom::new(1000, FilterSizing::Fpr(0.01)).unwrap();
        for i in 0..500u64 {
            f.increment(crate::hash::remix(i, 5));
        }
        for i in 0..500u64 {
            f.decrement(crate::hash::remix(i, 5)).unwrap();
        }
        assert!(f.words.iter().all(|&w| w == 0));
        assert_eq!(f.num_keys, 0);
    }
}
