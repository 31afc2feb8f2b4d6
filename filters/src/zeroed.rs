//! The one fallible allocation of the crate: a vector of `len` zero values,
//! or [`Error::TooLarge`] when the size overflows or the allocator refuses.
//!
//! Every table and every working array of construction and decoding comes
//! from [`zeroed_vec`], so a filter too large for memory is an error, never
//! an aborted process. It asks the allocator for zeroed memory
//! (`bytemuck`'s `try_zeroed_vec`, through `alloc_zeroed`), which for large
//! sizes the operating system provides as lazily mapped zero pages: nothing
//! is written, and pages a sparse filter never touches are never backed by
//! memory. The vector's capacity is exactly `len`, so a filter holds exactly
//! the bytes it reports. Which types may be made of zero bytes, each type
//! says itself by deriving [`bytemuck::Zeroable`].

use alloc::vec::Vec;

use bytemuck::Zeroable;

use crate::Error;

/// `len` zero values with capacity exactly `len`, or [`Error::TooLarge`] if
/// `len · size_of::<T>()` overflows `isize` or the allocator cannot provide
/// it.
pub(crate) fn zeroed_vec<T: Zeroable>(len: usize) -> Result<Vec<T>, Error> {
    #[allow(unused_mut)] // mutated only with huge pages
    let mut v = bytemuck::allocation::try_zeroed_vec(len).map_err(|()| Error::TooLarge)?;
    // Before anything writes the table, so its page faults take huge pages.
    advise_huge_pages(&mut v);
    Ok(v)
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
