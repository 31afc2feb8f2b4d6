//! The one fallible allocation of the crate: a vector of `len` zero values,
//! or [`Error::TooLarge`] when the size overflows or the allocator refuses.
//!
//! Every table and every working array of construction and decoding comes
//! from [`zeroed_vec`], so a filter too large for memory is an error, never
//! an aborted process. It asks the allocator for zeroed memory
//! (`alloc_zeroed`), which for large sizes the operating system provides as
//! lazily mapped zero pages: nothing is written, and pages a sparse filter
//! never touches are never backed by memory. The vector's capacity is exactly
//! `len`, so a filter holds exactly the bytes it reports.
#![allow(unsafe_code)]

use alloc::alloc::{alloc_zeroed, Layout};
use alloc::vec::Vec;
#[cfg(target_has_atomic = "64")]
use core::sync::atomic::AtomicU64;

use crate::Error;

/// Types for which the all-zero byte pattern is a valid value.
///
/// # Safety
/// Implement only for types whose every field is an integer, an atomic
/// integer, or another `Zeroable` type (padding may be anything).
pub unsafe trait Zeroable: Sized {}

// SAFETY: integers and atomic integers are valid for every bit pattern,
// zero included.
unsafe impl Zeroable for u8 {}
// SAFETY: as above.
unsafe impl Zeroable for u16 {}
// SAFETY: as above.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for u64 {}
// SAFETY: as above.
unsafe impl Zeroable for u128 {}
// SAFETY: as above.
unsafe impl Zeroable for usize {}
// SAFETY: `AtomicU64` has the in-memory representation of `u64`.
#[cfg(target_has_atomic = "64")]
unsafe impl Zeroable for AtomicU64 {}
// SAFETY: an array of zeroable values is zeroable.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}
// SAFETY: a tuple of zeroable fields is zeroable (padding is never read).
unsafe impl<A: Zeroable, B: Zeroable> Zeroable for (A, B) {}
// SAFETY: a Bloom block is eight `u64`s.
unsafe impl Zeroable for crate::bloom::blocked::Block {}
// SAFETY: an atomic Bloom block is eight `AtomicU64`s.
#[cfg(target_has_atomic = "64")]
unsafe impl Zeroable for crate::bloom::blocked::AtomicBlock {}
// SAFETY: a Parquet block is eight `u32`s.
unsafe impl Zeroable for crate::parquet::Block {}
// SAFETY: peeling's joint slot state is a `u64` and a `u32`.
unsafe impl Zeroable for crate::xor::peel::Joint {}

/// `len` zero values with capacity exactly `len`, or [`Error::TooLarge`] if
/// `len · size_of::<T>()` overflows `isize` or the allocator cannot provide
/// it.
pub(crate) fn zeroed_vec<T: Zeroable>(len: usize) -> Result<Vec<T>, Error> {
    let layout = Layout::array::<T>(len).map_err(|_| Error::TooLarge)?;
    if layout.size() == 0 {
        // No allocation for an empty vector (or zero-sized values).
        let mut v = Vec::new();
        // Zero-sized values: `Vec` never allocates for them, and a zero
        // value is valid by the `Zeroable` contract.
        v.resize_with(len, || {
            // SAFETY: `T: Zeroable`, so all-zero bytes are a valid `T`.
            unsafe { core::mem::zeroed() }
        });
        return Ok(v);
    }
    // SAFETY: `layout` has a non-zero size, as `alloc_zeroed` requires.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Error::TooLarge);
    }
    // Before anything writes the table, so its page faults take huge pages.
    #[cfg(all(feature = "huge-pages", target_os = "linux"))]
    crate::huge_pages::advise(ptr, layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of
    // `[T; len]` (size `len · size_of::<T>()`, alignment `align_of::<T>()`),
    // which is the layout `Vec<T>` uses for capacity `len`. Its `len` values
    // are zero bytes, which are valid `T`s (`T: Zeroable`), so all `len`
    // elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, len) })
}

/// Asks for huge pages behind `v`'s whole allocation, for tables that grow
/// rather than come from [`zeroed_vec`] (with the `huge-pages` feature on
/// Linux; nothing otherwise). Contents are kept.
#[inline]
pub(crate) fn advise_huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(all(feature = "huge-pages", target_os = "linux"))]
    crate::huge_pages::advise(
        v.as_mut_ptr().cast::<u8>(),
        v.capacity() * core::mem::size_of::<T>(),
    );
    #[cfg(not(all(feature = "huge-pages", target_os = "linux")))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_vectors_are_zero_and_exact() {
        let v: Vec<u64> = zeroed_vec(1000).unwrap();
        assert_eq!((v.len(), v.capacity()), (1000, 1000));
        assert!(v.iter().all(|&x| x == 0));
        let w: Vec<(u128, u32)> = zeroed_vec(17).unwrap();
        assert!(w.iter().all(|&x| x == (0, 0)));
        assert_eq!(w.capacity(), 17);
        let e: Vec<u8> = zeroed_vec(0).unwrap();
        assert_eq!(e.capacity(), 0);
        // The vector is an ordinary one: it grows and frees as usual.
        let mut g: Vec<u32> = zeroed_vec(3).unwrap();
        g.push(7);
        assert_eq!(g, [0, 0, 0, 7]);
    }

    #[test]
    fn impossible_sizes_are_errors() {
        assert_eq!(zeroed_vec::<u64>(usize::MAX).unwrap_err(), Error::TooLarge);
        assert_eq!(zeroed_vec::<u8>(usize::MAX).unwrap_err(), Error::TooLarge);
        // Addressable in principle, but no allocator provides 2^62 bytes.
        #[cfg(target_pointer_width = "64")]
        assert_eq!(
            zeroed_vec::<u64>(1 << (usize::BITS - 5)).unwrap_err(),
            Error::TooLarge
        );
    }
}
