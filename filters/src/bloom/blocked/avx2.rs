//! AVX2 query kernel for [`BlockedBloom`](super::BlockedBloom): the same
//! answer as the portable [`block_matches`](super::block_matches), which is
//! its oracle in the tests below, computed for eight probes at once.
//!
//! Why it exists: the portable query spends its time on arithmetic, not
//! memory. Each probe needs a multiply and two variable shifts, and baseline
//! x86-64 (no BMI2) encodes a variable shift as several micro-ops; at 1M keys
//! the whole filter sits in L2 and the portable query took about 10 ns where a
//! bare load of the block took under 3 (a scratch loop over 1M random hashes on
//! the CI machine kind); this kernel brings it to about 5 ns (criterion,
//! `docs/benchmarks.md`). With AVX2 the
//! eight probe states are one `vpmulld`, the eight 32-bit words they hit are
//! two `vpermd` and a blend, and the eight bit tests are one `vpsllvd` and a
//! `movmskps`.
//!
//! Layout bridge: bit `p` (0..512) of a block is bit `p % 64` of `u64` word
//! `p / 64`; on a little-endian machine that is bit `p % 32` of the `u32` word
//! `p / 32`, which is what the kernel reads.
//!
//! The unsafe code is confined here: a [`Avx2`] token can only be obtained
//! when the CPU reports AVX2, and every unsafe call is made through it.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps, _mm256_load_si256,
    _mm256_loadu_si256, _mm256_movemask_ps, _mm256_mullo_epi32, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_sub_epi32,
};

use super::{Block, MAX_PROBES, PROBE_POWERS};

/// Proof that the running CPU supports AVX2.
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx2(());

impl Avx2 {
    /// The token, if this CPU has AVX2. With `std` this is a run-time check
    /// (cached by the standard library); without it, a compile-time one.
    #[inline(always)]
    pub(super) fn detect() -> Option<Self> {
        #[cfg(feature = "std")]
        let present = std::is_x86_feature_detected!("avx2");
        #[cfg(not(feature = "std"))]
        let present = cfg!(target_feature = "avx2");
        present.then_some(Avx2(()))
    }

    /// Whether every probe bit of the key is set in `block`.
    #[inline(always)]
    pub(super) fn block_matches(self, block: &Block, hash: u64, num_probes: u32) -> bool {
        // SAFETY: an `Avx2` token exists only if the CPU supports AVX2.
        unsafe { block_matches(block, hash, num_probes) }
    }

    /// The batched query with the AVX2 kernel inlined into its loop.
    #[inline(always)]
    pub(super) fn contains_many(self, blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
        // SAFETY: an `Avx2` token exists only if the CPU supports AVX2.
        unsafe { contains_many(blocks, num_probes, hashes, out) }
    }
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn contains_many(blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
    // SAFETY (for the closure's call): this function only runs with AVX2.
    super::batched(blocks, hashes, out, |b, h| unsafe {
        block_matches(b, h, num_probes)
    });
}

/// The AVX2 form of [`super::block_matches`].
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
unsafe fn block_matches(block: &Block, hash: u64, num_probes: u32) -> bool {
    debug_assert!((1..=MAX_PROBES as u32).contains(&num_probes));
    let base = block.0.as_ptr().cast::<__m256i>();
    // SAFETY: `Block` is 64 bytes, 64-byte aligned (`repr(C, align(64))`), so
    // both 32-byte halves are in bounds and 32-byte aligned, as the aligned
    // load requires.
    let (lo, hi) = unsafe { (_mm256_load_si256(base), _mm256_load_si256(base.add(1))) };
    // SAFETY: the intrinsics below need only AVX2, which this function's
    // `target_feature` and its callers' token guarantee; the one memory
    // access among them (`PROBE_POWERS`) is justified where it happens.
    unsafe {
        let state = _mm256_set1_epi32(hash as u32 as i32);
        let low5 = _mm256_set1_epi32(31);
        let mut remaining = num_probes.min(MAX_PROBES as u32);
        let mut round = 0;
        loop {
            // SAFETY: `round < MAX_PROBES / 8` because `remaining` starts at
            // most `MAX_PROBES` and drops by 8 per round, so the 8 `u32`s read
            // are inside `PROBE_POWERS` (unaligned load).
            let powers = _mm256_loadu_si256(PROBE_POWERS.as_ptr().add(8 * round).cast::<__m256i>());
            // Top 9 bits of `low32 * C^i`: the probe's bit in the block.
            let bit = _mm256_srli_epi32(_mm256_mullo_epi32(state, powers), 23);
            let word = _mm256_srli_epi32(bit, 5); // which of the 16 u32 words
            let from_lo = _mm256_permutevar8x32_epi32(lo, word); // uses word % 8
            let from_hi = _mm256_permutevar8x32_epi32(hi, word);
            // Word index bit 3 moved to the sign bit selects the upper half.
            let pick_hi = _mm256_castsi256_ps(_mm256_slli_epi32(word, 28));
            let words = _mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(from_lo),
                _mm256_castsi256_ps(from_hi),
                pick_hi,
            ));
            // Shift each probed bit up to the lane's sign bit and collect them.
            let up = _mm256_sub_epi32(low5, _mm256_and_si256(bit, low5));
            let found = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_sllv_epi32(words, up))) as u32;
            let lanes = if remaining >= 8 {
                0xFF
            } else {
                (1u32 << remaining) - 1
            };
            if found & lanes != lanes {
                return false;
            }
            if remaining <= 8 {
                return true;
            }
            remaining -= 8;
            round += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{block_matches as portable, Block};
    use super::*;
    use crate::hash::remix;

    /// The AVX2 kernel agrees with the portable one for every probe count,
    /// on blocks from empty to full and on hashes that hit every word.
    #[test]
    fn agrees_with_portable_kernel() {
        let Some(simd) = Avx2::detect() else {
            return; // nothing to compare on this CPU; the portable path is tested elsewhere
        };
        let mut checked = 0;
        // Blocks from full (0 random masks ANDed) to sparse (5 ANDed: ~3% of
        // bits set), and one empty block.
        for ands in 0..=6u64 {
            for b in 0..64u64 {
                let words = core::array::from_fn(|w| {
                    let full = if ands == 6 { 0 } else { u64::MAX };
                    (0..ands.min(5)).fold(full, |acc, j| acc & remix(b * 8 + w as u64, j))
                });
                let block = Block(words);
                for i in 0..200u64 {
                    let h = remix(i, b + 1000 * ands);
                    for k in 1..=MAX_PROBES as u32 {
                        assert_eq!(
                            simd.block_matches(&block, h, k),
                            portable(&block.0, h, k),
                            "ands {ands} block {b} hash {h:#x} k {k}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 7 * 64 * 200 * 24);
    }

    #[test]
    fn batched_agrees_with_portable_kernel() {
        let Some(simd) = Avx2::detect() else { return };
        // Every fifth block full (always a match), the rest 75% set.
        let blocks: alloc::vec::Vec<Block> = (0..97u64)
            .map(|b| {
                let fill = if b % 5 == 0 { u64::MAX } else { 0 };
                Block(core::array::from_fn(|w| fill | remix(b, w as u64) | remix(b, 99)))
            })
            .collect();
        let hashes: alloc::vec::Vec<u64> = (0..1000u64).map(|i| remix(i, 5)).collect();
        for k in [1, 6, 8, 9, 17, 24] {
            let mut out = alloc::vec![false; hashes.len()];
            simd.contains_many(&blocks, k, &hashes, &mut out);
            for (h, o) in hashes.iter().zip(&out) {
                let block = &blocks[super::super::block_of(*h, blocks.len() as u32)];
                assert_eq!(*o, portable(&block.0, *h, k));
            }
            assert!(
                out.iter().any(|&b| b) && out.iter().any(|&b| !b),
                "k {k}: test data too uniform"
            );
        }
    }
}
