//! [`Fingerprint`]: the one thing that differs between `Xor8` and `Xor16`, or
//! between `BinaryFuse8`, `16` and `32` — the width of a table slot.
//!
//! Every algorithm in [`crate::xor`] is written once, generic over this trait;
//! the widths are type parameters, never copies of the code.

use alloc::vec::Vec;
use core::fmt::Debug;
use core::hash::Hash;
use core::marker::PhantomData;
use core::ops::BitXor;

use crate::format::{ByteWriter, Reader};
use crate::zeroed::zeroed_vec;
use crate::{Error, FormatError};

pub(crate) mod sealed {
    /// Keeps the set of widths closed (the byte format and the filter kinds
    /// know exactly these three), and holds what only the crate uses.
    pub trait Sealed: bytemuck::Zeroable + Sized {
        /// Why a filter of this width misses a target FPR below its own
        /// (the planner's reason to leave it out).
        const ABOVE_TARGET: &'static str;

        /// Writes the fingerprint as `BYTES` little-endian bytes into
        /// `out[..BYTES]`.
        fn write_le(self, out: &mut [u8]);

        /// Reads a fingerprint from exactly `BYTES` little-endian bytes.
        fn read_le(bytes: &[u8]) -> Self;
    }
}

use sealed::Sealed;

/// An unsigned integer used as a table slot and key fingerprint: `u8`, `u16`
/// or `u32`. A filter with `BITS`-bit fingerprints has a false-positive rate
/// of `2^-BITS`.
///
/// The trait is sealed; it exists so each filter is written once for every
/// width.
///
/// ```
/// use amq::xor::Fingerprint;
/// assert_eq!(<u8 as Fingerprint>::BITS, 8);
/// // The fingerprint folds both halves of the hash, then keeps the low bits.
/// assert_eq!(u16::from_hash(0x0000_0001_0000_0003), 2);
/// ```
pub trait Fingerprint:
    sealed::Sealed + Copy + Default + Eq + Hash + Debug + Send + Sync + BitXor<Output = Self> + 'static
{
    /// Width in bits.
    const BITS: u32;
    /// Width in bytes (its size in the serialized payload).
    const BYTES: usize;

    /// The fingerprint of a key whose (seeded) hash is `hash`: the low `BITS`
    /// bits of `hash ^ (hash >> 32)`, so the high half, which also chooses
    /// table positions, still changes the fingerprint.
    fn from_hash(hash: u64) -> Self;
}

macro_rules! fingerprint_impl {
    ($($t:ty => $above:literal),*) => {$(
        impl Fingerprint for $t {
            const BITS: u32 = <$t>::BITS;
            const BYTES: usize = core::mem::size_of::<$t>();

            #[inline(always)]
            fn from_hash(hash: u64) -> Self {
                (hash ^ (hash >> 32)) as $t
            }
        }

        impl Sealed for $t {
            const ABOVE_TARGET: &'static str = $above;

            #[inline]
            fn write_le(self, out: &mut [u8]) {
                out[..Self::BYTES].copy_from_slice(&self.to_le_bytes());
            }

            #[inline]
            fn read_le(bytes: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&bytes[..Self::BYTES]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

// Only the trivial per-width glue is generated; no algorithm lives here.
fingerprint_impl!(
    u8 => "its FPR is fixed at 2^-8 = 0.39%, above the target",
    u16 => "its FPR is fixed at 2^-16 = 0.0015%, above the target",
    u32 => "its FPR is fixed at 2^-32 = 2.3e-8%, above the target"
);

/// Appends `fps` to a payload as little-endian integers.
pub(crate) fn write_all<F: Fingerprint>(w: &mut ByteWriter, fps: &[F]) {
    let mut buf = [0u8; 4];
    for &fp in fps {
        fp.write_le(&mut buf);
        w.bytes(&buf[..F::BYTES]);
    }
}

/// Reads exactly `count` fingerprints. The length is checked against the
/// input before anything is allocated.
pub(crate) fn read_all<F: Fingerprint>(r: &mut Reader<'_>, count: usize) -> Result<Vec<F>, Error> {
    let len = count.checked_mul(F::BYTES).ok_or(FormatError::Truncated)?;
    let bytes = r.take(len)?;
    let mut fps: Vec<F> = zeroed_vec(count)?;
    for (fp, b) in fps.iter_mut().zip(bytes.chunks_exact(F::BYTES)) {
        *fp = F::read_le(b);
    }
    Ok(fps)
}

/// Where a query reads its fingerprints: an owned table (`[F]`) or the
/// little-endian payload of a serialized one ([`LeTable`], what a borrowed
/// view reads in place). The query is written once over this.
pub(crate) trait Table<F: Fingerprint> {
    /// Number of slots.
    fn num_slots(&self) -> usize;
    /// The fingerprint in slot `i < num_slots()`.
    fn at(&self, i: usize) -> F;
    /// Starts loading slot `i < num_slots()`.
    fn prefetch(&self, i: usize);
    /// The fingerprint a key with (seeded) hash `mixed` must match:
    /// [`Fingerprint::from_hash`], or fewer of its bits for a table that
    /// stores fewer (a bit-packed one).
    #[inline(always)]
    fn key_fingerprint(&self, mixed: u64) -> F {
        F::from_hash(mixed)
    }
}

impl<F: Fingerprint> Table<F> for [F] {
    #[inline(always)]
    fn num_slots(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn at(&self, i: usize) -> F {
        self[i]
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        crate::prefetch::prefetch(&self[i]);
    }
}

/// The owned filters' tables, as their slices.
impl<F: Fingerprint> Table<F> for Vec<F> {
    #[inline(always)]
    fn num_slots(&self) -> usize {
        self.as_slice().num_slots()
    }
    #[inline(always)]
    fn at(&self, i: usize) -> F {
        self.as_slice().at(i)
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        self.as_slice().prefetch(i)
    }
}

/// A serialized fingerprint table read in place: slot `i` is the `F::BYTES`
/// little-endian bytes at `i · F::BYTES`. Built only over a payload whose
/// length [`check_table`] has checked, so every slot a geometry yields is in
/// bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeTable<'a, F> {
    bytes: &'a [u8],
    width: PhantomData<F>,
}

impl<F: Fingerprint> Table<F> for LeTable<'_, F> {
    #[inline(always)]
    fn num_slots(&self) -> usize {
        self.bytes.len() / F::BYTES
    }
    #[inline(always)]
    fn at(&self, i: usize) -> F {
        F::read_le(&self.bytes[i * F::BYTES..i * F::BYTES + F::BYTES])
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        crate::prefetch::prefetch(&self.bytes[i * F::BYTES]);
    }
}

/// Checks the fingerprint table of an xor or binary fuse filter: the slot
/// count (at most 2^32), the key count (positive and at most the slot count,
/// or both zero) and that the payload holds exactly `slots` fingerprints.
/// Returns the table in place. Shared by both layouts and by their owned
/// and borrowed forms, so all validate alike.
pub(crate) fn check_table<'a, F: Fingerprint>(
    mut payload: Reader<'a>,
    slots: u64,
    num_keys: u64,
) -> Result<LeTable<'a, F>, Error> {
    if slots > u32::MAX as u64 {
        return Err(FormatError::InvalidParameters("more than 2^32 slots").into());
    }
    if num_keys > slots || (num_keys == 0) != (slots == 0) {
        return Err(FormatError::InvalidParameters(
            "key count must be positive and at most the slot count, or both zero",
        )
        .into());
    }
    let len = (slots as usize).saturating_mul(F::BYTES); // slots ≤ u32::MAX
    if payload.remaining() != len {
        return Err(FormatError::InvalidParameters("payload length does not match the slot count").into());
    }
    let bytes = payload.take(len)?;
    Ok(LeTable {
        bytes,
        width: PhantomData,
    })
}

impl<F: Fingerprint> LeTable<'_, F> {
    /// Bytes in the table.
    pub(crate) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The table copied out (what the owned filter holds).
    pub(crate) fn to_vec(self) -> Result<Vec<F>, Error> {
        read_all(&mut Reader::new(self.bytes), self.num_slots())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_folding() {
        assert_eq!((u8::BITS, u8::BYTES), (8, 1));
        assert_eq!((<u16 as Fingerprint>::BITS, u16::BYTES), (16, 2));
        assert_eq!((<u32 as Fingerprint>::BITS, u32::BYTES), (32, 4));
        let h = 0xAABB_CCDD_1122_3344u64;
        assert_eq!(u8::from_hash(h), 0x44 ^ 0xDD);
        assert_eq!(u16::from_hash(h), 0x3344 ^ 0xCCDD);
        assert_eq!(u32::from_hash(h), 0x1122_3344 ^ 0xAABB_CCDD);
    }

    #[test]
    fn little_endian_round_trip() {
        let fps: [u32; 3] = [1, 0x0102_0304, u32::MAX];
        let mut w = ByteWriter::default();
        write_all(&mut w, &fps);
        let bytes = w.into_vec();
        assert_eq!(&bytes[4..8], &[4, 3, 2, 1]);
        let mut r = Reader::new(&bytes);
        assert_eq!(read_all::<u32>(&mut r, 3).unwrap(), fps);
        let mut r = Reader::new(&bytes);
        assert_eq!(read_all::<u32>(&mut r, 4), Err(FormatError::Truncated.into()));
        let mut r = Reader::new(&bytes);
        assert_eq!(
            read_all::<u16>(&mut r, usize::MAX),
            Err(FormatError::Truncated.into())
        );
    }
}
