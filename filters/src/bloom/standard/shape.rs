//! A [`StandardBloom`] of an exact shape, and read access to its bits: what a
//! family of filters that must be OR-ed together needs (amq-lsm's value
//! filters and their hierarchy).
//!
//! Two standard Bloom filters with the same number of bits `m` and probes
//! `k` set the same `k` bits for a key (the probe sequence depends on the
//! hash and `m` only), so the bitwise OR of their words is exactly the filter
//! of the union of their key sets (Bloom 1970; Crainiceanu & Lemire 2015,
//! "Bloofi", §3). [`StandardBloom::with_shape`] fixes `m` and `k` directly,
//! rather than deriving them from a key count, so every filter of a family
//! can be built with one shape; [`StandardBloom::words`] and
//! [`StandardBloom::probe_positions`] let a caller transpose filters
//! (bit-slicing) or probe many of them with positions computed once.

use super::{ProbeSeq, StandardBloom};
use crate::error::invalid;
use crate::zeroed::zeroed_vec;
use crate::{Error, KeyHash};

/// The `k` bit positions of one key in a filter of `m` bits, in probe order:
/// from [`StandardBloom::probe_positions`].
///
/// ```
/// use amq::StandardBloom;
/// let a = StandardBloom::with_shape(4096, 5).unwrap();
/// let b = StandardBloom::with_shape(4096, 5).unwrap();
/// let h = amq::hash_key(b"term");
/// // One shape, one set of positions.
/// assert!(a.probe_positions(h).eq(b.probe_positions(h)));
/// assert_eq!(a.probe_positions(h).len(), 5);
/// ```
#[derive(Clone)]
pub struct ProbePositions {
    seq: ProbeSeq,
    num_bits: u64,
    left: u32,
}

impl Iterator for ProbePositions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.seq.next_in(self.num_bits))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for ProbePositions {}

impl core::fmt::Debug for ProbePositions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProbePositions")
            .field("num_bits", &self.num_bits)
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl StandardBloom {
    /// An empty filter of exactly `num_bits` bits (a positive multiple of
    /// 64) and `num_probes` probes (`1..=30`), whatever the key count will
    /// be: every filter made with one shape can be [`union`](Self::union)-ed
    /// with every other.
    ///
    /// ```
    /// use amq::StandardBloom;
    /// use amq::{Filter, Insert};
    /// let mut a = StandardBloom::with_shape(2048, 4).unwrap();
    /// let mut b = StandardBloom::with_shape(2048, 4).unwrap();
    /// a.insert(b"x").unwrap();
    /// b.insert(b"y").unwrap();
    /// a.union(&b).unwrap();
    /// assert!(a.contains(b"x") && a.contains(b"y"));
    /// assert_eq!((a.num_bits(), a.num_probes()), (2048, 4));
    /// assert!(StandardBloom::with_shape(100, 4).is_err()); // not a multiple of 64
    /// assert!(StandardBloom::with_shape(64, 0).is_err());
    /// ```
    pub fn with_shape(num_bits: u64, num_probes: u32) -> Result<Self, Error> {
        if num_bits == 0 || !num_bits.is_multiple_of(64) {
            return Err(invalid("num_bits", "must be a positive multiple of 64"));
        }
        if !(1..=30).contains(&num_probes) {
            return Err(invalid("num_probes", "must be in 1..=30"));
        }
        let words = usize::try_from(num_bits / 64).map_err(|_| Error::TooLarge)?;
        Ok(StandardBloom {
            words: zeroed_vec(words)?,
            num_probes,
            num_keys: 0,
        })
    }

    /// The bit array: bit `b` of the filter is bit `b % 64` of word `b / 64`.
    ///
    /// ```
    /// use amq::StandardBloom;
    /// use amq::Insert;
    /// let mut f = StandardBloom::with_shape(256, 3).unwrap();
    /// let h = amq::hash_key(b"k");
    /// f.insert_hash(h).unwrap();
    /// for b in f.probe_positions(h) {
    ///     assert_eq!(f.words()[(b / 64) as usize] >> (b % 64) & 1, 1);
    /// }
    /// ```
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The bit positions the key with this [`hash_key`](crate::hash_key)
    /// value sets and probes, in `0..num_bits()`: the same for every filter
    /// of the same shape, so a caller probing many such filters computes them
    /// once. No allocation.
    ///
    /// ```
    /// use amq::StandardBloom;
    /// let f = StandardBloom::with_shape(1 << 16, 7).unwrap();
    /// let positions: Vec<u64> = f.probe_positions(amq::hash_key(b"k")).collect();
    /// assert_eq!(positions.len(), 7);
    /// assert!(positions.iter().all(|&b| b < 1 << 16));
    /// ```
    #[inline]
    pub fn probe_positions(&self, hash: KeyHash) -> ProbePositions {
        ProbePositions {
            seq: ProbeSeq::new(hash.get()),
            num_bits: self.num_bits(),
            left: self.num_probes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Filter, Insert};

    #[test]
    fn positions_agree_with_insert_and_contains() {
        let mut f = StandardBloom::with_shape(64 * 37, 6).unwrap();
        for i in 0..200u64 {
            f.insert_hash(crate::hash_u64(i)).unwrap();
        }
        for i in 0..2000u64 {
            let h = crate::hash_u64(i);
            let by_positions = f
                .probe_positions(h)
                .all(|b| f.words()[(b / 64) as usize] >> (b % 64) & 1 == 1);
            assert_eq!(by_positions, f.contains_hash(h), "hash of {i}");
            assert_eq!(f.probe_positions(h).len(), 6);
        }
    }

    #[test]
    fn shape_is_exact_and_validated() {
        let f = StandardBloom::with_shape(2_000_000, 8).unwrap();
        assert_eq!(f.num_bits(), 2_000_000);
        assert_eq!(f.words().len(), 31_250);
        assert_eq!(f.num_keys(), 0);
        assert!(f.words().iter().all(|&w| w == 0));
        assert!(StandardBloom::with_shape(0, 1).is_err());
        assert!(StandardBloom::with_shape(64, 31).is_err());
        assert_eq!(
            StandardBloom::with_shape(u64::MAX / 64 * 64, 1),
            Err(Error::TooLarge)
        );
    }
}
