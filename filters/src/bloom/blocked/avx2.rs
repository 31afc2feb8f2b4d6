//! AVX2 query kernel for [`BlockedBloom`](super::BlockedBloom): the same
//! answer as the portable [`block_matches`](super::block_matches), which is
//! its oracle in the tests of `kernel.rs`, computed for eight probes at once.
//!
//! Why it exists: the portable query spends its time on arithmetic, not
//! memory. Each probe needs a multiply and two variable shifts, and baseline
//! x86-64 (no BMI2) encodes a variable shift as several micro-ops; at 1M keys
//! the whole filter sits in L2, and the portable query costs several times
//! a bare load of the block. This kernel roughly halves it
//! (`docs/results-amq.md` has the figures and their commands). With AVX2 the
//! eight probe states are one `vpmulld`, the eight 32-bit words they hit are
//! two `vpermd` and a blend, and the eight bit tests are one `vpsllvd` and a
//! `movmskps`.
//!
//! Layout bridge: bit `p` (0..512) of a block is bit `p % 64` of `u64` word
//! `p / 64`; on a little-endian machine that is bit `p % 32` of the `u32` word
//! `p / 32`, which is what the kernel reads.
//!
//! Every function here is `unsafe` only because it needs AVX2: the
//! [`Kernel`](super::kernel::Kernel) that hands them out checks the CPU once,
//! when the filter is made.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_andnot_si256, _mm256_blendv_ps, _mm256_castps_si256,
    _mm256_castsi256_ps, _mm256_cmpgt_epi32, _mm256_load_si256, _mm256_loadu_si256, _mm256_mullo_epi32,
    _mm256_or_si256, _mm256_permutevar8x32_epi32, _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setzero_si256,
    _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_store_si256, _mm256_sub_epi32, _mm256_testc_ps,
};

use super::probe::{block_of, Block, MAX_PROBES, PROBE_POWERS};

simd_entry_points!("avx2", set_block);

/// The AVX2 form of [`super::block_matches`]: probes `8r .. 8r + 8` in round
/// `r`; only round 0 if `PROBES` fixes a count of at most 8 (then
/// `num_probes == PROBES`, which the caller guarantees).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
pub(super) unsafe fn block_matches<const PROBES: u32>(block: &Block, hash: u64, num_probes: u32) -> bool {
    debug_assert!((1..=MAX_PROBES as u32).contains(&num_probes));
    debug_assert!(PROBES <= 8 && (PROBES == 0 || PROBES == num_probes));
    let base = block.0.as_ptr().cast::<__m256i>();
    // SAFETY: `Block` is 64 bytes, 64-byte aligned (`repr(C, align(64))`), so
    // both 32-byte halves are in bounds and 32-byte aligned, as the aligned
    // load requires.
    let (lo, hi) = unsafe { (_mm256_load_si256(base), _mm256_load_si256(base.add(1))) };
    // SAFETY: `round_found` needs only AVX2, which this function has, and
    // `round < 3` (`num_probes <= MAX_PROBES = 24`).
    unsafe {
        if PROBES > 0 {
            return round_found(lo, hi, hash, 0, PROBES);
        }
        let rounds = num_probes.min(MAX_PROBES as u32).div_ceil(8) as usize;
        (0..rounds).all(|round| round_found(lo, hi, hash, round, num_probes))
    }
}

/// Whether the probes `8·round .. min(8·round + 8, num_probes)` of the key
/// are all set in the block whose halves are `lo` and `hi` (`round < 3`).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)]
unsafe fn round_found(lo: __m256i, hi: __m256i, hash: u64, round: usize, num_probes: u32) -> bool {
    debug_assert!(round < 3);
    // SAFETY: `round < 3`, so the 8 `u32`s read at `8 * round` lie inside
    // `PROBE_POWERS`'s 32 (unaligned load).
    let powers = unsafe { _mm256_loadu_si256(PROBE_POWERS.as_ptr().add(8 * round).cast::<__m256i>()) };
    // SAFETY: register-only AVX / AVX2 intrinsics.
    unsafe {
        // The top 9 bits of `state = low32 * C^i` are the probe's bit in the
        // block: the top 4 pick the 32-bit word, the next 5 the bit in it.
        let state = _mm256_mullo_epi32(_mm256_set1_epi32(hash as u32 as i32), powers);
        let word = _mm256_srli_epi32::<28>(state); // which of the 16 u32 words
        let from_lo = _mm256_permutevar8x32_epi32(lo, word); // uses word % 8
        let from_hi = _mm256_permutevar8x32_epi32(hi, word);
        // Word bit 3 (upper half) is the state's sign bit, which is what
        // `blendv` reads.
        let words = _mm256_blendv_ps(
            _mm256_castsi256_ps(from_lo),
            _mm256_castsi256_ps(from_hi),
            _mm256_castsi256_ps(state),
        );
        // Shift each probed bit up to its lane's sign bit: by 31 - (bit in
        // word), which is `!(state >> 23) & 31`.
        let up = _mm256_andnot_si256(_mm256_srli_epi32::<23>(state), _mm256_set1_epi32(31));
        let probed = _mm256_sllv_epi32(_mm256_castps_si256(words), up);
        // Lanes holding a real probe: index 8·round + lane < num_probes.
        let lane = _mm256_add_epi32(
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            _mm256_set1_epi32(8 * round as i32),
        );
        let active = _mm256_cmpgt_epi32(_mm256_set1_epi32(num_probes as i32), lane);
        // `vtestps` looks only at sign bits: set iff every active lane's
        // probed bit is set.
        _mm256_testc_ps(_mm256_castsi256_ps(probed), _mm256_castsi256_ps(active)) != 0
    }
}

/// Sets the key's probe bits in `block`: the same bits as the portable
/// [`super::set_probes`] (its oracle in the tests of `kernel.rs`), with the
/// whole 512-bit mask built in two registers and ORed in by two aligned
/// 32-byte loads and stores.
///
/// Why: the portable insert writes each probe's word separately, `k` stores
/// per key; a store to a line not yet in L1 holds its store-buffer entry until
/// the line arrives, so at `k = 6` the store buffer, not the arithmetic, caps
/// how many inserts overlap (and building the mask in a stack array instead,
/// read back as vectors, stalls on the store-to-load forward). Two stores per
/// key is what `sbbf-rs` (one 32-byte store) pays too.
///
/// How the mask is built: lane `j` of `lo` is the block's `u32` word `j`, of
/// `hi` word `8 + j`. For a probe at bit `b` (0..512), `1 << (b - 32j)` in
/// lane `j` is the probe's bit when `0 <= b - 32j < 32`, and `vpsllvd` gives 0
/// for every other count (a negative difference wraps to a count above 31),
/// so one subtract and one variable shift per half place the probe. `PROBES`
/// as in [`block_matches`] (but any count up to 24 works).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)]
pub(super) unsafe fn set_block<const PROBES: u32>(block: &mut Block, hash: u64, num_probes: u32) {
    let probes = super::probe::kernel_probes::<PROBES>(num_probes);
    // SAFETY: register-only AVX / AVX2 intrinsics, and the loads and stores
    // justified where they happen.
    unsafe {
        let ones = _mm256_set1_epi32(1);
        let lo_first = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
        let hi_first = _mm256_add_epi32(lo_first, _mm256_set1_epi32(256));
        let (mut lo, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        // Each probe's bit (the top 9 bits of its state) is computed in a
        // general register and broadcast: that keeps the vector shuffle
        // units, which the shifts also need, free of lane extraction
        // (faster than one `vpmulld` for all probes followed by a `vpermd`
        // per probe).
        for &power in &PROBE_POWERS[..probes] {
            let b = _mm256_set1_epi32(((hash as u32).wrapping_mul(power) >> (32 - 9)) as i32);
            lo = _mm256_or_si256(lo, _mm256_sllv_epi32(ones, _mm256_sub_epi32(b, lo_first)));
            hi = _mm256_or_si256(hi, _mm256_sllv_epi32(ones, _mm256_sub_epi32(b, hi_first)));
        }
        let base = block.0.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `Block` is 64 bytes, 64-byte aligned (`repr(C, align(64))`),
        // so both 32-byte halves are in bounds and 32-byte aligned, as the
        // aligned loads and stores require; `block` is borrowed mutably.
        _mm256_store_si256(base, _mm256_or_si256(_mm256_load_si256(base), lo));
        _mm256_store_si256(base.add(1), _mm256_or_si256(_mm256_load_si256(base.add(1)), hi));
    }
}
