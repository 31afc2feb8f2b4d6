//! [`PackedBinaryFuse`]: the binary fuse filter with fingerprints of any
//! width from 1 to 32 bits, packed bit after bit, so an FPR between the
//! fixed widths' `2^-8`, `2^-16` and `2^-32` costs its own bits: 0.1% takes
//! 10-bit fingerprints, 11.3 bits per key at a million keys (3-wise) where
//! [`BinaryFuse16`](crate::BinaryFuse16) takes 18.1.
//!
//! **Construction.** The table is solved with 32-bit fingerprints (the
//! same peeling and assignment as [`BinaryFuse32`](crate::BinaryFuse32)),
//! then each slot keeps its low `w` bits. Xor works bit by bit, so if the
//! slots of every key xor to its 32-bit fingerprint, their low `w` bits xor
//! to its low `w` bits: the packed table is a solution for `w`-bit
//! fingerprints. So a packed filter of width 8 or 16 holds exactly the
//! values of `BinaryFuse8` or `BinaryFuse16` built from the same keys (the
//! tests check it); the build needs 4 bytes per slot more, for a moment.
//!
//! **Layout.** Slot `i` is the `w` bits at bit `i·w` of little-endian bytes,
//! followed by 7 zero bytes, so a query reads any slot with one unaligned
//! 8-byte load, a shift and a mask ([`PackedTable`]). The query is the
//! fuse filters' own (`query.rs`), over that table.

use alloc::vec::Vec;

use super::binary_fuse::{self, FuseParts};
use super::fingerprint::{Fingerprint, Table};
use super::peel;
use super::query;
use super::segments::{self, FuseArity, Segments};
use crate::cost::{CostModel, Knob, Params, Shape, Traits};
use crate::format::{self, ByteWriter, Checksum, Frame};
use crate::sizing::{check_bits_per_key, check_fpr};
use crate::zeroed::zeroed_vec;
use crate::{Error, Filter, FilterKind, FilterSizing, FormatError, FromBytes, KeyHash, StaticFilter};

/// Zero bytes after the last slot: an 8-byte load at the first byte of any
/// slot stays in bounds.
const PAD: usize = 7;

/// Widest fingerprint, in bits.
pub const MAX_FINGERPRINT_BITS: u32 = 32;

/// Bytes of a table of `slots` slots of `bits` bits.
fn table_len(slots: u64, bits: u32) -> usize {
    // slots < 2^33 and bits ≤ 32: the product fits.
    (slots * u64::from(bits)).div_ceil(8) as usize + PAD
}

/// The low `bits` bits set.
fn mask_of(bits: u32) -> u32 {
    (u64::MAX >> (64 - bits)) as u32
}

/// A bit-packed fingerprint table read in place: owned bytes or a
/// serialized payload, checked by [`check_packed`] or built by
/// [`pack`], so every slot's 8-byte load is in bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PackedTable<'a> {
    bytes: &'a [u8],
    slots: usize,
    bits: u32,
}

impl Table<u32> for PackedTable<'_> {
    #[inline(always)]
    fn num_slots(&self) -> usize {
        self.slots
    }
    #[inline(always)]
    fn at(&self, i: usize) -> u32 {
        let bit = i * self.bits as usize;
        let at = bit >> 3;
        // The fallback is unreachable: the table has PAD bytes after its
        // last slot's first byte.
        let word: [u8; 8] = self.bytes[at..at + 8].try_into().unwrap_or([0; 8]);
        (u64::from_le_bytes(word) >> (bit & 7)) as u32 & mask_of(self.bits)
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        crate::prefetch::prefetch(&self.bytes[(i * self.bits as usize) >> 3]);
    }
    #[inline(always)]
    fn key_fingerprint(&self, mixed: u64) -> u32 {
        u32::from_hash(mixed) & mask_of(self.bits)
    }
}

/// The low `bits` bits of each value, packed.
fn pack(values: &[u32], bits: u32) -> Result<Vec<u8>, Error> {
    let mut bytes: Vec<u8> = zeroed_vec(table_len(values.len() as u64, bits))?;
    let mask = mask_of(bits);
    for (i, &v) in values.iter().enumerate() {
        let bit = i * bits as usize;
        let at = bit >> 3;
        let field = u64::from(v & mask) << (bit & 7);
        for (k, b) in bytes[at..at + 5].iter_mut().enumerate() {
            *b |= (field >> (8 * k)) as u8;
        }
    }
    Ok(bytes)
}

/// Checks a packed table: exactly `table_len` bytes, and every bit past the
/// last slot zero (so a decoded filter writes its input again).
fn check_packed(bytes: &[u8], slots: u64, bits: u32) -> Result<PackedTable<'_>, Error> {
    if bytes.len() != table_len(slots, bits) {
        return Err(FormatError::InvalidParameters("payload length does not match the slot count").into());
    }
    let used = slots * u64::from(bits);
    let full = (used / 8) as usize;
    let tail_bits = (used % 8) as u32;
    let stray = bytes[full] >> tail_bits != 0 || bytes[full + 1..].iter().any(|&b| b != 0);
    if stray {
        return Err(FormatError::InvalidParameters("bits set past the last slot").into());
    }
    Ok(PackedTable {
        bytes,
        slots: slots as usize,
        bits,
    })
}

/// Construction parameters of a [`PackedBinaryFuse`].
///
/// ```
/// use amq::xor::{FuseArity, PackedFuseParams};
/// let p = PackedFuseParams::with_bits(10).arity(FuseArity::Four);
/// assert_eq!((p.bits, p.arity), (10, FuseArity::Four));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PackedFuseParams {
    /// Fingerprint width in bits, 1 to [`MAX_FINGERPRINT_BITS`]: the FPR is
    /// `2^-bits`.
    pub bits: u32,
    /// Slots per key.
    pub arity: FuseArity,
}

impl PackedFuseParams {
    /// `bits`-bit fingerprints, 3-wise.
    pub const fn with_bits(bits: u32) -> Self {
        PackedFuseParams {
            bits,
            arity: FuseArity::Three,
        }
    }

    /// The same with `arity` slots per key.
    pub const fn arity(self, arity: FuseArity) -> Self {
        PackedFuseParams { arity, ..self }
    }
}

/// The fingerprint width a sizing asks for, for `n` keys 3-wise:
/// [`FilterSizing::Fpr`] the narrowest width whose `2^-w` meets the target;
/// [`FilterSizing::BitsPerKey`] the widest whose table fits the bits.
///
/// ```
/// use amq::xor::packed_fingerprint_bits as bits;
/// use amq::FilterSizing;
/// assert_eq!(bits(1_000_000, FilterSizing::Fpr(0.001))?, 10);
/// assert_eq!(bits(1_000_000, FilterSizing::Fpr(1.0 / 1024.0))?, 10);
/// assert_eq!(bits(1_000_000, FilterSizing::BitsPerKey(12.0))?, 10); // 1.125 slots per key
/// assert!(bits(1_000_000, FilterSizing::Fpr(1e-10)).is_err()); // past 32 bits
/// # Ok::<(), amq::Error>(())
/// ```
pub fn packed_fingerprint_bits(n: usize, sizing: FilterSizing) -> Result<u32, Error> {
    let bits = match sizing {
        FilterSizing::Fpr(p) => {
            check_fpr(p)?;
            // A hair under an exact power of two still takes its width.
            libm::ceil(-libm::log2(p) - 1e-9).max(1.0)
        }
        FilterSizing::BitsPerKey(b) => {
            check_bits_per_key(b)?;
            // No keys take no slots: any width fits; size as the large-n
            // layout would.
            let per_key = match n {
                0 => 1.125,
                _ => segments::slots_for(n, FuseArity::Three)? as f64 / n as f64,
            };
            libm::floor(b / per_key)
        }
    };
    if bits < 1.0 {
        return Err(crate::error::invalid(
            "bits_per_key",
            "too few for a 1-bit fingerprint",
        ));
    }
    if bits > MAX_FINGERPRINT_BITS as f64 {
        return Err(crate::error::invalid(
            "sizing",
            "needs fingerprints over 32 bits (an FPR below 2^-32)",
        ));
    }
    Ok(bits as u32)
}

/// A binary fuse filter with `w`-bit fingerprints for any `w` from 1 to 32,
/// bit-packed: about `1.125·w` bits per key (3-wise, from a million keys)
/// and an FPR of `2^-w`. Static: built once from all key hashes.
///
/// ```
/// use amq::{Filter, FilterSizing, PackedBinaryFuse};
/// let keys: Vec<amq::KeyHash> = (0..1_000_000u64).map(amq::hash_u64).collect();
/// let f = PackedBinaryFuse::build(&keys, FilterSizing::Fpr(0.001))?;
/// assert_eq!(f.fingerprint_bits(), 10);
/// assert!(keys.iter().all(|&h| f.contains_hash(h)));
/// assert!(f.bits_per_key() < 11.35, "{}", f.bits_per_key()); // BinaryFuse16: 18.1
/// assert_eq!(f.expected_fpr(), 1.0 / 1024.0);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedBinaryFuse {
    /// [`table_len`] bytes: the packed slots, then [`PAD`] zero bytes.
    bytes: Vec<u8>,
    bits: u32,
    parts: FuseParts,
}

impl PackedBinaryFuse {
    /// Builds a 3-wise filter from key hashes, its width from `sizing`
    /// ([`packed_fingerprint_bits`]). Duplicates are allowed and counted
    /// once. Errors: an FPR below `2^-32` or a budget under one bit per slot
    /// ([`Error::InvalidParameter`]), [`Error::TooLarge`],
    /// [`Error::BuildFailed`] (after 64 seeds; never seen with random hashes).
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, PackedBinaryFuse};
    /// let f = PackedBinaryFuse::build(&[1, 2, 3, 3].map(hash_u64), FilterSizing::Fpr(0.01))?;
    /// assert_eq!((f.num_keys(), f.fingerprint_bits()), (3, 7));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(hashes: &[KeyHash], sizing: FilterSizing) -> Result<Self, Error> {
        let bits = packed_fingerprint_bits(hashes.len(), sizing)?;
        Self::build_with(hashes, &PackedFuseParams::with_bits(bits))
    }

    /// Builds a filter with these parameters (a width outside `1..=32` is
    /// [`Error::InvalidParameter`]).
    ///
    /// ```
    /// use amq::xor::{FuseArity, PackedFuseParams};
    /// use amq::{Filter, PackedBinaryFuse, StaticFilter};
    /// let keys: Vec<amq::KeyHash> = (0..50_000u64).map(amq::hash_u64).collect();
    /// let f = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(12).arity(FuseArity::Four))?;
    /// assert_eq!((f.fingerprint_bits(), f.arity()), (12, FuseArity::Four));
    /// assert!(PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(33)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_with(hashes: &[KeyHash], params: &PackedFuseParams) -> Result<Self, Error> {
        let bits = params.bits;
        if !(1..=MAX_FINGERPRINT_BITS).contains(&bits) {
            return Err(crate::error::invalid("bits", "must be 1..=32"));
        }
        let hashes = crate::hash::raw(hashes);
        let layout = |n| Segments::for_keys(n, params.arity);
        let built = match params.arity {
            FuseArity::Three => peel::build::<u32, _, 3>(hashes, layout)?,
            FuseArity::Four => peel::build::<u32, _, 4>(hashes, layout)?,
        };
        Ok(PackedBinaryFuse {
            bytes: pack(&built.fingerprints, bits)?,
            bits,
            parts: FuseParts {
                seed: built.seed,
                segments: built.geometry,
                num_keys: built.num_keys as u64,
            },
        })
    }

    /// The filter as what a query reads: its table and layout.
    #[inline(always)]
    fn probe(&self) -> Probe<'_> {
        Probe {
            table: PackedTable {
                bytes: &self.bytes,
                slots: self.parts.segments.len() as usize,
                bits: self.bits,
            },
            parts: &self.parts,
        }
    }

    /// Fingerprint width in bits: the FPR is `2^-bits`.
    pub fn fingerprint_bits(&self) -> u32 {
        self.bits
    }

    /// Slots per key.
    pub fn arity(&self) -> FuseArity {
        self.parts.segments.arity()
    }

    /// Slots in the table: 0 for an empty filter.
    pub fn num_slots(&self) -> usize {
        self.parts.segments.len() as usize
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        let (parts, table) = parse_frame(frame)?;
        Ok(PackedBinaryFuse {
            bytes: table.bytes.to_vec(),
            bits: table.bits,
            parts,
        })
    }
}

/// What a query of a packed filter reads, owned or in place: the table and
/// the layout. The queries are written once, here.
#[derive(Debug, Clone, Copy)]
struct Probe<'a> {
    table: PackedTable<'a>,
    parts: &'a FuseParts,
}

impl Probe<'_> {
    /// Only the 3-wise query is inlined, as for [`BinaryFuse`](crate::BinaryFuse).
    #[inline(always)]
    fn contains(&self, hash: u64) -> bool {
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        match s.arity() {
            FuseArity::Three => query::contains::<u32, _, _, 3>(t, s, seed, hash),
            FuseArity::Four => self.contains_four_wise(hash),
        }
    }

    #[inline(never)]
    fn contains_four_wise(&self, hash: u64) -> bool {
        query::contains::<u32, _, _, 4>(&self.table, &self.parts.segments, self.parts.seed, hash)
    }

    fn contains_many(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let hashes = crate::hash::raw(hashes);
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        match s.arity() {
            FuseArity::Three => query::contains_many::<u32, _, _, 3>(t, s, seed, hashes, out),
            FuseArity::Four => query::contains_many::<u32, _, _, 4>(t, s, seed, hashes, out),
        }
    }

    fn prefetch(&self, hash: u64) {
        let (t, s, seed) = (&self.table, &self.parts.segments, self.parts.seed);
        match s.arity() {
            FuseArity::Three => query::prefetch_slots::<u32, _, _, 3>(t, s, seed, hash),
            FuseArity::Four => query::prefetch_slots::<u32, _, _, 4>(t, s, seed, hash),
        }
    }

    /// `2^-bits`; 0 for an empty filter, which contains nothing.
    fn expected_fpr(&self) -> f64 {
        if self.parts.num_keys == 0 {
            0.0
        } else {
            libm::ldexp(1.0, -(self.table.bits as i32))
        }
    }
}

/// Checks a packed fuse frame: the fuse layout's parameters, the width, the
/// key count against the slots, and the payload.
fn parse_frame(mut frame: Frame<'_>) -> Result<(FuseParts, PackedTable<'_>), Error> {
    let parts = binary_fuse::read_parts(&mut frame.params)?;
    let bits = u32::from(frame.params.u8()?);
    frame.params.finish()?;
    if !(1..=MAX_FINGERPRINT_BITS).contains(&bits) {
        return Err(FormatError::InvalidParameters("fingerprint bits must be 1..=32").into());
    }
    let slots = parts.segments.len();
    if slots > u32::MAX as u64 {
        return Err(FormatError::InvalidParameters("more than 2^32 slots").into());
    }
    if parts.num_keys > slots || (parts.num_keys == 0) != (slots == 0) {
        return Err(FormatError::InvalidParameters(
            "key count must be positive and at most the slot count, or both zero",
        )
        .into());
    }
    let remaining = frame.payload.remaining();
    let table = check_packed(frame.payload.take(remaining)?, slots, bits)?;
    Ok((parts, table))
}

impl Filter for PackedBinaryFuse {
    #[inline(always)]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.probe().contains(hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        self.probe().contains_many(hashes, out)
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        self.probe().prefetch(hash.get())
    }
    fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
    fn num_keys(&self) -> usize {
        self.parts.num_keys as usize
    }
    /// `2^-bits`; 0 for an empty filter, which contains nothing.
    fn expected_fpr(&self) -> f64 {
        self.probe().expected_fpr()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::PackedBinaryFuse
    }
    /// Parameters: those of the binary fuse filters (seed u64, arity u8,
    /// segment length u32, start segments u32, key count u64), then the
    /// width (u8). Payload: the packed table and its 7 zero bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        binary_fuse::write_parts(&mut p, &self.parts);
        p.u8(self.bits as u8);
        format::encode(
            FilterKind::PackedBinaryFuse,
            &p.into_vec(),
            self.bytes.len(),
            |w| {
                w.bytes(&self.bytes);
            },
        )
    }
}

impl CostModel for PackedBinaryFuse {
    const TRAITS: Traits = Traits {
        knob: Knob::Fpr {
            min: 1.0 / 4_294_967_296.0,
            max: 0.5,
        },
        // Three cache lines, like the byte-aligned widths, but each slot is a
        // packed read: measured 1.4–2× their query time, level with Ribbon's
        // and the standard Bloom filter's, so it ranks with them when speed
        // comes first.
        cost: crate::cost::QueryCost::High,
        reason:
            "static, any FPR from 2^-1 to 2^-32 in whole bits, fast to build; three packed slots per query, \
                 1.125·w bits per key",
        ..Traits::FIXED
    };

    /// The default 3-wise layout, what [`PackedBinaryFuse::build`] makes.
    fn shape(n: usize, sizing: FilterSizing) -> Result<Shape, Error> {
        let bits = packed_fingerprint_bits(n, sizing)?;
        let slots = segments::slots_for(n, FuseArity::Three)?;
        Ok(Shape {
            bytes: table_len(slots, bits) as u64,
            fpr: if n == 0 {
                0.0
            } else {
                libm::ldexp(1.0, -(bits as i32))
            },
            fpr_floor: 0.0,
            params: Params::Fingerprint { bits },
        })
    }
}

impl StaticFilter for PackedBinaryFuse {
    type Params = PackedFuseParams;

    fn build_with(hashes: &[KeyHash], params: &PackedFuseParams) -> Result<Self, Error> {
        PackedBinaryFuse::build_with(hashes, params)
    }
}

impl FromBytes for PackedBinaryFuse {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::PackedBinaryFuse)?)
    }
}

/// A [`PackedBinaryFuse`] read in place from its bytes
/// ([`Filter::to_bytes`]): the owned filter's query over the payload.
/// [`new`](Self::new) checks everything, checksum included;
/// [`trusted`](Self::trusted) all but the checksum: O(n), since the bits
/// past the last slot are checked to be zero.
///
/// ```
/// use amq::xor::PackedBinaryFuseView;
/// use amq::{Filter, FilterSizing, PackedBinaryFuse};
///
/// let keys: Vec<amq::KeyHash> = (0..1_000u64).map(amq::hash_u64).collect();
/// let f = PackedBinaryFuse::build(&keys, FilterSizing::Fpr(0.001))?;
/// let bytes = f.to_bytes();
/// let view = PackedBinaryFuseView::new(&bytes)?;
/// assert!(keys.iter().all(|&h| view.contains_hash(h)));
/// assert_eq!(view.size_in_bytes(), f.size_in_bytes());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PackedBinaryFuseView<'a> {
    frame: &'a [u8],
    table: PackedTable<'a>,
    parts: FuseParts,
}

impl<'a> PackedBinaryFuseView<'a> {
    /// A view over a serialized packed binary fuse filter, every check made.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum.
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::PackedBinaryFuse, checksum)?;
        let (parts, table) = parse_frame(frame)?;
        Ok(PackedBinaryFuseView {
            frame: bytes,
            table,
            parts,
        })
    }

    #[inline(always)]
    fn probe(&self) -> Probe<'_> {
        Probe {
            table: self.table,
            parts: &self.parts,
        }
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<PackedBinaryFuse, Error> {
        PackedBinaryFuse::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::PackedBinaryFuse,
            Checksum::Trusted,
        )?)
    }
}

impl Filter for PackedBinaryFuseView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.probe().contains(hash.get())
    }
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        self.probe().contains_many(hashes, out)
    }
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        self.probe().prefetch(hash.get())
    }
    fn size_in_bytes(&self) -> usize {
        self.table.bytes.len()
    }
    fn num_keys(&self) -> usize {
        self.parts.num_keys as usize
    }
    fn expected_fpr(&self) -> f64 {
        self.probe().expected_fpr()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::PackedBinaryFuse
    }
    /// The bytes in the current format version.
    fn to_bytes(&self) -> Vec<u8> {
        format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BinaryFuse16, BinaryFuse8};

    #[test]
    fn packing_keeps_each_slot_and_nothing_else() {
        for bits in 1..=32 {
            let values: Vec<u32> = (0..200u64)
                .map(|i| crate::hash::remix(i, u64::from(bits)) as u32)
                .collect();
            let bytes = pack(&values, bits).unwrap();
            assert_eq!(bytes.len(), table_len(200, bits));
            let t = check_packed(&bytes, 200, bits).unwrap();
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(t.at(i), v & mask_of(bits), "bits {bits} slot {i}");
            }
            let mut stray = bytes.clone();
            *stray.last_mut().unwrap() = 1;
            assert!(check_packed(&stray, 200, bits).is_err());
            if (200 * bits) % 8 != 0 {
                let mut stray = bytes.clone();
                stray[(200 * bits as usize) / 8] |= 0x80;
                assert!(check_packed(&stray, 200, bits).is_err(), "bits {bits}");
            }
            assert!(check_packed(&bytes[1..], 200, bits).is_err());
        }
    }

    /// Widths 8 and 16 hold exactly the fixed-width filters' values.
    #[test]
    fn widths_8_and_16_are_the_fixed_filters() {
        let keys: Vec<KeyHash> = (0..20_000u64).map(crate::hash_u64).collect();
        let p8 = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(8)).unwrap();
        assert_eq!(
            p8.bytes[..p8.bytes.len() - PAD],
            BinaryFuse8::build(&keys).unwrap().to_bytes()[64..][..p8.num_slots()]
        );
        let p16 = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(16)).unwrap();
        let f16 = BinaryFuse16::build(&keys).unwrap().to_bytes();
        assert_eq!(
            p16.bytes[..p16.bytes.len() - PAD],
            f16[64..][..2 * p16.num_slots()]
        );
    }
}
