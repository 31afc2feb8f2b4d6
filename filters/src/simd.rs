//! The one dispatch of the crate's SIMD kernels: which instruction sets the
//! CPU has, how far `AMQ_KERNEL` lets a filter go, and the choice among a
//! family's kernels. Each family (the blocked Bloom filter, Ribbon, the
//! Parquet filter) lists its kernels, most capable first, with the level
//! each belongs to and whether the CPU runs it, and calls [`choose`]; its
//! tests check every kernel [`runnable`] returns against the portable one,
//! the oracle.
//!
//! Why a stored choice and not a check per query: a SIMD kernel compiled
//! with `#[target_feature]` cannot be inlined into a caller compiled without
//! it, so every query pays one call whatever we do; each filter picks its
//! kernel when it is made and calls it through a function pointer that
//! does the whole query. Off x86-64 (and with `--cfg amq_portable`) the
//! portable kernels are called directly and inlined.
//!
//! # `AMQ_KERNEL`
//!
//! Read once per process, with the `std` feature:
//!
//! | `AMQ_KERNEL` | `BlockedBloom` kernels | `Ribbon` kernels | `ParquetBloom` kernels | `QuotientFilter` kernels |
//! |--------------|------------------------|------------------|------------------------|--------------------------|
//! | unset, or any other value | AVX-512, AVX2 or portable | AVX-512, AVX2 or portable | AVX2 or portable | BMI2, popcnt or portable |
//! | `avx2`       | AVX2 or portable       | AVX2 or portable | AVX2 or portable       | BMI2, popcnt or portable |
//! | `portable`   | portable               | portable         | portable               | portable |
//!
//! It only ever lowers the choice: a kernel the CPU lacks is never picked.
//! Every kernel answers identically, so this changes speed, never answers;
//! it exists so the whole test suite can run on each kernel
//! (`AMQ_KERNEL=portable cargo test`, as `.ci/run` does), and to compare them.
//! Building with `RUSTFLAGS="--cfg amq_portable"` removes the SIMD kernels
//! altogether and compiles the code path of targets other than x86-64.

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
use alloc::vec::Vec;

/// How capable a kernel is, and how capable `AMQ_KERNEL` lets one be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(
    any(not(feature = "std"), not(all(target_arch = "x86_64", not(amq_portable)))),
    allow(dead_code)
)]
pub(crate) enum Level {
    /// The portable kernel.
    Portable,
    /// Scalar code compiled with the `popcnt` instruction.
    Popcnt,
    /// AVX2.
    Avx2,
    /// AVX-512.
    Avx512,
}

/// The x86-64 instruction sets the kernels use, as this CPU has them: asked
/// at run time with `std` (the standard library caches the answer), else
/// what the build targets (`-C target-feature`, `-C target-cpu`).
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Features {
    pub(crate) popcnt: bool,
    /// BMI2 with a fast `pdep`: every CPU with BMI2 but AMD's before Zen 3
    /// (family 0x17 and older), where `pdep` is microcoded and takes
    /// hundreds of cycles.
    pub(crate) fast_pdep: bool,
    pub(crate) lzcnt: bool,
    pub(crate) avx2: bool,
    pub(crate) avx512f: bool,
    pub(crate) avx512vpopcntdq: bool,
}

/// This CPU's [`Features`].
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
pub(crate) fn features() -> Features {
    #[cfg(feature = "std")]
    return Features {
        popcnt: std::is_x86_feature_detected!("popcnt"),
        fast_pdep: std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && !slow_pdep(),
        lzcnt: std::is_x86_feature_detected!("lzcnt"),
        avx2: std::is_x86_feature_detected!("avx2"),
        avx512f: std::is_x86_feature_detected!("avx512f"),
        avx512vpopcntdq: std::is_x86_feature_detected!("avx512vpopcntdq"),
    };
    #[cfg(not(feature = "std"))]
    Features {
        popcnt: cfg!(target_feature = "popcnt"),
        fast_pdep: cfg!(target_feature = "bmi1") && cfg!(target_feature = "bmi2") && !slow_pdep(),
        lzcnt: cfg!(target_feature = "lzcnt"),
        avx2: cfg!(target_feature = "avx2"),
        avx512f: cfg!(target_feature = "avx512f"),
        avx512vpopcntdq: cfg!(target_feature = "avx512vpopcntdq"),
    }
}

/// Whether this is an AMD CPU before Zen 3 (family below 0x19), whose
/// `pdep` is microcoded.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[allow(unsafe_code)]
fn slow_pdep() -> bool {
    use core::arch::x86_64::__cpuid;
    #[allow(unused_unsafe)] // `__cpuid` is safe on newer compilers
    // SAFETY: `cpuid` exists on every x86-64 CPU and only reads
    // identification registers.
    let (vendor, signature) = unsafe { (__cpuid(0), __cpuid(1)) };
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
    let family = ((signature.eax >> 8) & 0xf) + ((signature.eax >> 20) & 0xff);
    amd && family < 0x19
}

/// The most capable level `AMQ_KERNEL` allows in this process.
#[cfg_attr(not(all(target_arch = "x86_64", not(amq_portable))), allow(dead_code))]
pub(crate) fn cap() -> Level {
    #[cfg(feature = "std")]
    {
        static CAP: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
        *CAP.get_or_init(|| match std::env::var("AMQ_KERNEL").as_deref() {
            Ok("portable") => Level::Portable,
            Ok("avx2") => Level::Avx2,
            _ => Level::Avx512,
        })
    }
    #[cfg(not(feature = "std"))]
    Level::Avx512
}

/// One SIMD kernel of a family: its level, whether this CPU runs it, and
/// the kernel.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
pub(crate) type Candidate<K> = (Level, bool, K);

/// The kernel a filter uses: the first of `simd` (most capable first) that
/// this CPU runs and `cap` allows, else `portable`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
pub(crate) fn choose<K: Copy>(simd: &[Candidate<K>], portable: K, cap: Level) -> K {
    simd.iter()
        .find(|&&(level, runs, _)| runs && level <= cap)
        .map_or(portable, |&(_, _, k)| k)
}

/// Every kernel of `simd` this CPU runs, then `portable`: what each family's
/// tests check against the portable kernel.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn runnable<K: Copy>(simd: &[Candidate<K>], portable: K) -> Vec<K> {
    let mut all: Vec<K> = simd.iter().filter(|c| c.1).map(|c| c.2).collect();
    all.push(portable);
    all
}

#[cfg(all(test, target_arch = "x86_64", not(amq_portable)))]
mod tests {
    use super::*;

    /// The choice takes the most capable kernel the CPU runs, within the
    /// cap, and falls back to the portable one.
    #[test]
    fn choose_respects_support_and_cap() {
        let all = [(Level::Avx512, true, 3), (Level::Avx2, true, 2)];
        assert_eq!(choose(&all, 1, Level::Avx512), 3);
        assert_eq!(choose(&all, 1, Level::Avx2), 2);
        assert_eq!(choose(&all, 1, Level::Portable), 1);
        let no_avx512 = [(Level::Avx512, false, 3), (Level::Avx2, true, 2)];
        assert_eq!(choose(&no_avx512, 1, Level::Avx512), 2);
        let none = [(Level::Avx512, false, 3), (Level::Avx2, false, 2)];
        assert_eq!(choose(&none, 1, Level::Avx512), 1);
        assert_eq!(runnable(&no_avx512, 1), [2, 1]);
        assert_eq!(runnable(&none, 1), [1]);
    }

    /// The features the build targets are a floor of what the CPU reports.
    #[test]
    fn detected_features_include_the_targeted_ones() {
        let f = features();
        assert!(f.avx2 || !cfg!(target_feature = "avx2"));
        assert!(f.avx512f || !cfg!(target_feature = "avx512f"));
    }
}
