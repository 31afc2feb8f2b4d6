//! Transparent huge pages for large filter tables (Linux, the `huge-pages`
//! feature).
//!
//! A filter of many MiB queried at random misses the TLB as well as the
//! cache: with 4 KiB pages a 125 MB blocked Bloom filter (100M keys at 10
//! bits/key) spans 30,000 pages, far more than the TLB holds, so a query
//! also walks the page table. Backed by 2 MiB pages it spans 60. Linux gives
//! anonymous memory huge pages on its own only when
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `always`; under the
//! common `madvise` setting a program has to ask, with
//! `madvise(MADV_HUGEPAGE)`, which is what this module does for every table
//! of at least [`MIN_BYTES`] the crate allocates (`zeroed.rs`), before the
//! first write to it, so the page faults that back it take huge pages.
//!
//! It is advice: the kernel may refuse it (THP `never`, no free huge pages),
//! and nothing changes but the speed. Whether it pays is measured in
//! `docs/results-amq.md` ("Huge pages"). [`set_enabled`] switches it off (and
//! on) at run time, for programs that manage their memory otherwise and for
//! measuring both in one process.
//!
//! ```
//! amq::huge_pages::set_enabled(false);
//! assert!(!amq::huge_pages::enabled());
//! amq::huge_pages::set_enabled(true);
//! assert!(amq::huge_pages::enabled());
//! ```
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};

/// Tables smaller than this (4 MiB) are left alone: they span at most one
/// whole 2 MiB page once aligned, and a small filter usually sits in cache.
///
/// ```
/// use amq::FilterSizing;
/// // A blocked Bloom filter of 10 bits/key reaches it at about 3.4M keys.
/// assert_eq!(amq::huge_pages::MIN_BYTES, 4 << 20);
/// let f = amq::BlockedBloom::new(3_400_000, FilterSizing::BitsPerKey(10.0)).unwrap();
/// assert!(amq::Filter::size_in_bytes(&f) >= amq::huge_pages::MIN_BYTES);
/// ```
pub const MIN_BYTES: usize = 4 << 20;

/// Size and alignment of an x86-64 / aarch64 (4 KiB granule) huge page.
const HUGE_PAGE: usize = 2 << 20;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Whether tables allocated from now on ask for huge pages (on by default
/// with the feature). Tables already allocated keep what they have.
///
/// ```
/// use amq::FilterSizing;
/// amq::huge_pages::set_enabled(false); // ordinary pages from here on
/// let f = amq::BlockedBloom::new(1 << 20, FilterSizing::BitsPerKey(40.0)).unwrap();
/// amq::huge_pages::set_enabled(true);
/// assert_eq!(f.num_blocks(), 81_920);
/// ```
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether tables allocated now ask for huge pages.
///
/// ```
/// let before = amq::huge_pages::enabled();
/// amq::huge_pages::set_enabled(!before);
/// assert_eq!(amq::huge_pages::enabled(), !before);
/// amq::huge_pages::set_enabled(before);
/// ```
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The 2 MiB-aligned part `(start, len)` of `[addr, addr + len)`, if any.
fn aligned_interior(addr: usize, len: usize) -> Option<(usize, usize)> {
    let start = addr.checked_add(HUGE_PAGE - 1)? & !(HUGE_PAGE - 1);
    let end = addr.checked_add(len)? & !(HUGE_PAGE - 1);
    (end > start).then(|| (start, end - start))
}

/// Advises the kernel to back `[ptr, ptr + len)` (a live allocation of this
/// process) with huge pages, if enabled and `len >= MIN_BYTES`. Returns
/// whether the advice was given and accepted.
pub(crate) fn advise(ptr: *mut u8, len: usize) -> bool {
    if len < MIN_BYTES || !enabled() {
        return false;
    }
    let Some((start, bytes)) = aligned_interior(ptr as usize, len) else {
        return false;
    };
    // SAFETY: `madvise` with `MADV_HUGEPAGE` changes no memory contents and
    // no mapping the program can observe except for speed; the range
    // `[start, start + bytes)` lies inside the caller's live allocation
    // (`aligned_interior` only shrinks it), and is page-aligned, as
    // `madvise` requires.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE) };
    // The allocator may hand back memory it already used (and zeroed by
    // writing), whose 4 KiB pages the advice alone leaves in place until
    // `khugepaged` gets to them, minutes later if ever. `MADV_COLLAPSE`
    // (Linux 6.1) makes them huge pages now; older kernels refuse it
    // (`EINVAL`), which leaves the advice alone.
    // SAFETY: as above: `MADV_COLLAPSE` keeps the range's contents and only
    // changes the pages behind it.
    unsafe { libc::madvise(start as *mut libc::c_void, bytes, MADV_COLLAPSE) };
    rc == 0
}

/// `MADV_COLLAPSE` of Linux's ABI (not in every libc's bindings).
const MADV_COLLAPSE: libc::c_int = 25;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_is_aligned_and_inside() {
        assert_eq!(aligned_interior(0, HUGE_PAGE), Some((0, HUGE_PAGE)));
        assert_eq!(aligned_interior(1, HUGE_PAGE), None);
        assert_eq!(
            aligned_interior(4096, 3 * HUGE_PAGE),
            Some((HUGE_PAGE, 2 * HUGE_PAGE))
        );
        assert_eq!(aligned_interior(usize::MAX - 10, 100), None);
        for (addr, len) in [
            (12_345usize, 9 << 20),
            (HUGE_PAGE - 1, 5 << 20),
            (7 << 20, 4 << 20),
        ] {
            let (s, l) = aligned_interior(addr, len).unwrap();
            assert!(s >= addr && s + l <= addr + len && s % HUGE_PAGE == 0 && l % HUGE_PAGE == 0);
        }
    }

    /// A large zeroed table gets the advice (where the kernel has THP at
    /// all) and stays an ordinary zeroed, writable vector; a small one and a
    /// disabled switch get none.
    #[test]
    fn large_tables_are_advised_and_stay_zeroed() {
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists();
        let mut v: alloc::vec::Vec<u64> = crate::zeroed::zeroed_vec(2 * MIN_BYTES / 8).unwrap();
        assert!(v.iter().all(|&x| x == 0));
        let (ptr, len) = (v.as_mut_ptr().cast::<u8>(), v.len() * 8);
        assert_eq!(advise(ptr, len), thp, "advice on a {len}-byte table");
        v.iter_mut().step_by(4096).for_each(|x| *x = 7);
        assert_eq!(v.iter().filter(|&&x| x == 7).count(), v.len().div_ceil(4096));
        assert!(!advise(ptr, MIN_BYTES - 1));
        set_enabled(false);
        assert!(!advise(ptr, len));
        set_enabled(true);
    }
}
