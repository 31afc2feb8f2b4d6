//! Cache prefetch hints for batched queries.
//!
//! A prefetch is only a hint: the CPU may ignore it, and it never faults, even
//! for an address that is not mapped. So the one `unsafe` block here cannot
//! cause undefined behaviour; it exists because the intrinsic is declared
//! `unsafe` on older compilers. On targets without a stable prefetch
//! intrinsic this is a no-op and batched queries fall back to plain loads.
#![allow(unsafe_code)]

/// Asks the CPU to bring the cache line holding `*value` into L1.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse", not(amq_portable)))]
    #[allow(unused_unsafe)]
    // SAFETY: `_mm_prefetch` reads nothing architecturally visible and cannot
    // fault for any address; `value` is moreover a live reference. SSE is
    // enabled (checked by the `cfg` above), as the intrinsic requires.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(amq_portable))))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefetch_any_reference_is_harmless() {
        let v = [1u64, 2, 3];
        for x in &v {
            super::prefetch(x);
        }
        super::prefetch(&v);
        assert_eq!(v, [1, 2, 3]);
    }
}
