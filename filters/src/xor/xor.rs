//! The xor filter (Graf & Lemire 2020, "Xor Filters: Faster and Smaller Than
//! Bloom and Cuckoo Filters", ACM JEA 25): a table of `3·B` fingerprints in
//! three blocks of `B`; a key's three slots are one uniform slot in each
//! block.
//!
//! **Sizing.** `3·B = 1.23·n + 32` slots, rounded up to a multiple of 3
//! (paper, §3). A random 3-partite 3-hypergraph peels with high probability
//! when it has more than `c₃ ≈ 1.222` vertices per edge (Molloy 2005); 1.23
//! sits just above that threshold and the `+32` carries small sets, where
//! finite-size effects push the threshold up. So an `F`-bit filter takes
//! `1.23·F` bits per key (9.84 for `Xor8`, 19.68 for `Xor16`) plus `96·F/n`
//! and answers false positives with probability `2^-F`.
//!
//! **Slots.** From the seeded hash `x`: `reduce(x, B)`,
//! `B + reduce(rotl(x, 21), B)` and `2B + reduce(rotl(x, 42), B)`: three
//! multiply-shifts over three differently rotated copies of one 64-bit value,
//! each dominated by a different 21–22-bit window of `x`.

use alloc::vec::Vec;

use super::fingerprint::{self, Fingerprint, LeTable};
use super::peel::{self, Geometry};
use super::query;
use crate::format::{self, ByteWriter, Frame};
use crate::hash::reduce;
use crate::{Error, Filter, FilterKind, FromBytes, KeyHash, StaticFilter};

/// A fingerprint width that has an xor-filter kind: `u8` ([`Xor8`]) and
/// `u16` ([`Xor16`]).
pub trait XorFingerprint: Fingerprint {
    /// The kind recorded in the serialized header.
    const XOR_KIND: FilterKind;
}

impl XorFingerprint for u8 {
    const XOR_KIND: FilterKind = FilterKind::Xor8;
}

impl XorFingerprint for u16 {
    const XOR_KIND: FilterKind = FilterKind::Xor16;
}

/// The three-block slot layout of an xor filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blocks {
    block_len: u64,
}

impl Blocks {
    /// Blocks for `n` distinct keys: `ceil((ceil(1.23 n) + 32) / 3)` slots
    /// each; none for no keys.
    fn for_keys(n: usize) -> Result<Self, Error> {
        if n == 0 {
            return Ok(Blocks { block_len: 0 });
        }
        let capacity = (n as u128 * 123).div_ceil(100) + 32;
        let block_len = capacity.div_ceil(3);
        if block_len * 3 > u32::MAX as u128 {
            return Err(Error::TooLarge);
        }
        Ok(Blocks {
            block_len: block_len as u64,
        })
    }
}

/// Table slots of an xor filter of `n` distinct keys (what the planner
/// predicts its space from).
pub(crate) fn slots_for(n: usize) -> Result<usize, Error> {
    Ok(Geometry::<3>::num_slots(&Blocks::for_keys(n)?))
}

impl Geometry<3> for Blocks {
    type State = peel::JointState;
    const SCATTERED: bool = true;

    #[inline(always)]
    fn num_slots(&self) -> usize {
        3 * self.block_len as usize
    }

    #[inline(always)]
    fn slots(&self, mixed: u64) -> [usize; 3] {
        let b = self.block_len;
        [
            reduce(mixed, b) as usize,
            (b + reduce(mixed.rotate_left(21), b)) as usize,
            (2 * b + reduce(mixed.rotate_left(42), b)) as usize,
        ]
    }
}

/// An xor filter with `F`-bit fingerprints: about `1.23·F` bits per key and a
/// false-positive rate of `2^-F`. Static: built once from all key hashes.
///
/// Use the aliases [`Xor8`] (9.84 bits/key, FPR 0.39%) and [`Xor16`]
/// (19.7 bits/key, FPR 0.0015%). [`BinaryFuse8`](crate::BinaryFuse8) is
/// smaller (9.0 bits/key) and builds faster at the same FPR.
///
/// ```
/// use amq::{hash_key, Filter, KeyHash, Xor8};
///
/// let keys: Vec<KeyHash> = (0..100_000u64).map(|i| hash_key(&i.to_le_bytes())).collect();
/// let filter = Xor8::build(&keys).unwrap();
/// assert!(keys.iter().all(|&h| filter.contains_hash(h)));
/// assert!(filter.bits_per_key() < 9.9);
///
/// let fp = (100_000..200_000u64).filter(|i| filter.contains(&i.to_le_bytes())).count();
/// let fpr = fp as f64 / 100_000.0;
/// assert!((fpr - 1.0 / 256.0).abs() < 0.0006, "{fpr}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xor<F: XorFingerprint> {
    fingerprints: Vec<F>,
    blocks: Blocks,
    seed: u64,
    num_keys: u64,
}

/// Xor filter with 8-bit fingerprints: 9.84 bits/key, FPR `2^-8 ≈ 0.39%`.
///
/// ```
/// let keys: Vec<amq::KeyHash> = (0..10_000u64).map(amq::hash_u64).collect();
/// let f = amq::Xor8::build(&keys).unwrap();
/// assert!((amq::Filter::bits_per_key(&f) - 9.87).abs() < 0.01);
/// assert_eq!(amq::Filter::expected_fpr(&f), 1.0 / 256.0);
/// ```
pub type Xor8 = Xor<u8>;

/// Xor filter with 16-bit fingerprints: 19.7 bits/key, FPR `2^-16 ≈ 0.0015%`.
///
/// ```
/// let keys: Vec<amq::KeyHash> = (0..10_000u64).map(amq::hash_u64).collect();
/// let f = amq::Xor16::build(&keys).unwrap();
/// assert!((amq::Filter::bits_per_key(&f) - 19.74).abs() < 0.01);
/// assert_eq!(amq::Filter::expected_fpr(&f), 1.0 / 65536.0);
/// ```
pub type Xor16 = Xor<u16>;

impl<F: XorFingerprint> Xor<F> {
    /// Builds the filter from key hashes: unlike xorf's `Xor8::from(&keys)`
    /// on raw `u64`s, hash your keys with [`hash_u64`](crate::hash_u64)
    /// first ([`hash_key`](crate::hash_key) for bytes).
    ///
    /// There is no `From`/`TryFrom` of a slice: a `u64` could be a key or a
    /// hash, and taking one for the other ruins the filter silently
    /// ([`KeyHash`]). Duplicates are allowed (removed first) and counted
    /// once.
    ///
    /// Takes expected linear time and about 34 bytes per key of temporary
    /// memory (see [`crate::xor`]). Fails only with [`Error::TooLarge`] (more
    /// than about 3.4 billion keys) or, after 64 seeds, [`Error::BuildFailed`],
    /// which random hashes never hit in practice.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, Xor16};
    /// let f = Xor16::build(&[hash_u64(1), hash_u64(2), hash_u64(3), hash_u64(3)])?;
    /// assert_eq!(f.num_keys(), 3);
    /// assert!(f.contains_hash(hash_u64(1)) && f.contains_hash(hash_u64(3)));
    /// let empty = Xor16::build(&[])?;
    /// assert!(!empty.contains_hash(hash_u64(1)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "try_from", alias = "from_keys")]
    pub fn build(hashes: &[KeyHash]) -> Result<Self, Error> {
        let built = peel::build::<F, _, 3>(crate::hash::raw(hashes), Blocks::for_keys)?;
        Ok(Xor {
            fingerprints: built.fingerprints,
            blocks: built.geometry,
            seed: built.seed,
            num_keys: built.num_keys as u64,
        })
    }

    /// Slots in the table (`3·B`): 0 for an empty filter.
    pub fn num_slots(&self) -> usize {
        self.fingerprints.len()
    }

    /// The seed that the successful construction attempt mixed into every
    /// key hash.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let (parts, table) = parse_frame::<F>(frame)?;
        Ok(Xor {
            fingerprints: table.to_vec()?,
            blocks: parts.blocks,
            seed: parts.seed,
            num_keys: parts.num_keys,
        })
    }
}

/// A validated xor filter frame's parameters (its table stays in place).
#[derive(Debug, Clone, Copy)]
pub(crate) struct XorParts {
    pub(crate) seed: u64,
    pub(crate) blocks: Blocks,
    pub(crate) num_keys: u64,
}

/// Checks an xor filter frame: parameters, key count, payload length.
pub(crate) fn parse_frame<F: XorFingerprint>(
    mut frame: Frame<'_>,
) -> Result<(XorParts, LeTable<'_, F>), Error> {
    let seed = frame.params.u64()?;
    let block_len = frame.params.u64()?;
    let num_keys = frame.params.u64()?;
    frame.params.finish()?;
    // An overflowing product is reported like any other oversized table.
    let slots = block_len.saturating_mul(3);
    let table = fingerprint::check_table(frame.payload, slots, num_keys)?;
    let blocks = Blocks { block_len };
    Ok((
        XorParts {
            seed,
            blocks,
            num_keys,
        },
        table,
    ))
}

impl<F: XorFingerprint> Filter for Xor<F> {
    #[inline(always)]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        query::contains(&self.fingerprints, &self.blocks, self.seed, hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let hashes = crate::hash::raw(hashes);
        query::contains_many(&self.fingerprints, &self.blocks, self.seed, hashes, out);
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        query::prefetch_slots(&self.fingerprints, &self.blocks, self.seed, hash.get());
    }
    fn size_in_bytes(&self) -> usize {
        self.fingerprints.len() * F::BYTES
    }
    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }
    /// `2^-F`: the xor of a non-key's three slots is uniform and independent
    /// of its fingerprint. 0 for an empty filter, which contains nothing.
    fn expected_fpr(&self) -> f64 {
        super::fingerprint_fpr::<F>(self.num_keys)
    }
    fn kind(&self) -> FilterKind {
        F::XOR_KIND
    }
    /// Parameters: seed (u64), block length `B` (u64), key count (u64).
    /// Payload: `3·B` fingerprints, little-endian.
    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(self.seed).u64(self.blocks.block_len).u64(self.num_keys);
        format::encode(F::XOR_KIND, &p.into_vec(), self.size_in_bytes(), |w| {
            fingerprint::write_all(w, &self.fingerprints);
        })
    }
}

impl<F: XorFingerprint> crate::cost::CostModel for Xor<F> {
    const TRAITS: crate::cost::Traits = crate::cost::Traits {
        why_fixed_fpr: <F as super::fingerprint::sealed::Sealed>::ABOVE_TARGET,
        reason: "static, fixed FPR; three slots per query, 1.23 slots per key",
        ..crate::cost::Traits::FIXED
    };

    fn shape(n: usize, _sizing: crate::FilterSizing) -> Result<crate::cost::Shape, Error> {
        Ok(super::fingerprint_shape::<F>(slots_for(n)? as u64, n))
    }
}

impl<F: XorFingerprint> StaticFilter for Xor<F> {
    /// Nothing to choose: the fingerprint width is the type parameter.
    type Params = ();

    fn build_with(hashes: &[KeyHash], _params: &()) -> Result<Self, Error> {
        Xor::build(hashes)
    }
}

impl<F: XorFingerprint> FromBytes for Xor<F> {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, F::XOR_KIND)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing() {
        assert_eq!(Blocks::for_keys(0).unwrap().num_slots(), 0);
        assert_eq!(Blocks::for_keys(1).unwrap().num_slots(), 36); // 2 + 32 -> 34 -> 12 per block
        assert_eq!(Blocks::for_keys(100_000).unwrap().num_slots(), 123_033);
        assert_eq!(Blocks::for_keys(usize::MAX), Err(Error::TooLarge));
    }

    #[test]
    fn slots_stay_in_their_blocks() {
        let b = Blocks::for_keys(1000).unwrap();
        for i in 0..10_000u64 {
            let [s0, s1, s2] = b.slots(crate::hash::remix(i, 3));
            let len = b.block_len as usize;
            assert!(s0 < len && (len..2 * len).contains(&s1) && (2 * len..3 * len).contains(&s2));
        }
        let [a, c, d] = b.slots(u64::MAX);
        assert!(a < c && c < d && d < b.num_slots());
    }

    /// A frame with a valid checksum but the given parameters and payload.
    fn frame(seed: u64, block_len: u64, num_keys: u64, payload: &[u8]) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(seed).u64(block_len).u64(num_keys);
        format::encode(FilterKind::Xor8, &p.into_vec(), payload.len(), |w| {
            w.bytes(payload);
        })
    }

    #[test]
    fn decoder_checks_every_parameter() {
        let bad = |bytes: Vec<u8>| matches!(Xor8::from_bytes(&bytes), Err(Error::Format(_)));
        assert!(Xor8::from_bytes(&frame(1, 2, 3, &[0; 6])).is_ok());
        assert!(bad(frame(1, 2, 7, &[0; 6])), "more keys than slots");
        assert!(
            bad(frame(1, 2, 0, &[0; 6])),
            "keys but no slots, or slots but no keys"
        );
        assert!(bad(frame(1, 0, 1, &[])), "keys without slots");
        assert!(bad(frame(1, 2, 3, &[0; 5])), "short payload");
        assert!(bad(frame(1, 2, 3, &[0; 7])), "long payload");
        assert!(bad(frame(1, u64::MAX / 2, 3, &[0; 6])), "slot count overflows");
        assert!(bad(frame(1, 1 << 31, 3, &[0; 6])), "more than 2^32 slots");
        // The empty filter is valid and contains nothing.
        let empty = Xor8::from_bytes(&frame(1, 0, 0, &[])).unwrap();
        assert!(!empty.contains_hash(KeyHash::from_well_mixed(0)));
    }

    #[test]
    fn rejects_inconsistent_parameters() {
        let f = Xor8::build(&[1, 2, 3].map(crate::hash_u64)).unwrap();
        let good = f.to_bytes();
        assert_eq!(Xor8::from_bytes(&good).unwrap(), f);
        // Wrong width: Xor16 refuses Xor8 bytes by kind.
        assert!(matches!(
            Xor16::from_bytes(&good),
            Err(Error::Format(crate::FormatError::WrongKind { .. }))
        ));
    }
}
