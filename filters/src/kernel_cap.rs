//! Which SIMD query kernels a filter may choose: all the CPU supports, unless
//! the `AMQ_KERNEL` environment variable (read once per process, with the
//! `std` feature) caps them.
//!
//! | `AMQ_KERNEL` | `BlockedBloom` kernels | `Ribbon` kernels | `ParquetBloom` kernels |
//! |--------------|------------------------|------------------|------------------------|
//! | unset, or any other value | AVX-512, AVX2 or portable | AVX-512 or portable | AVX2 or portable |
//! | `avx2`       | AVX2 or portable       | portable         | AVX2 or portable       |
//! | `portable`   | portable               | portable         | portable               |
//!
//! It only ever lowers the choice: a kernel the CPU lacks is never picked.
//! Every kernel answers identically, so this changes speed, never answers;
//! it exists so the whole test suite can run on each kernel
//! (`AMQ_KERNEL=portable cargo test`, as `.ci/run` does), and to compare them.
//! Building with `RUSTFLAGS="--cfg amq_portable"` removes the SIMD kernels
//! altogether and compiles the code path of targets other than x86-64.

/// The most capable kernel family a filter may pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(not(all(target_arch = "x86_64", not(amq_portable))), allow(dead_code))]
pub(crate) enum Cap {
    /// Only the portable kernel.
    Portable,
    /// Up to AVX2.
    Avx2,
    /// Anything the CPU supports.
    Any,
}

/// The cap for this process.
#[cfg_attr(not(all(target_arch = "x86_64", not(amq_portable))), allow(dead_code))]
pub(crate) fn cap() -> Cap {
    #[cfg(feature = "std")]
    {
        static CAP: std::sync::OnceLock<Cap> = std::sync::OnceLock::new();
        *CAP.get_or_init(|| match std::env::var("AMQ_KERNEL").as_deref() {
            Ok("portable") => Cap::Portable,
            Ok("avx2") => Cap::Avx2,
            _ => Cap::Any,
        })
    }
    #[cfg(not(feature = "std"))]
    Cap::Any
}
