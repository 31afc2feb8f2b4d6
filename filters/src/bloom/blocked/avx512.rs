//! AVX-512 query kernel for [`BlockedBloom`](super::BlockedBloom): the same
//! answer as the portable [`block_matches`](super::block_matches), which is
//! its oracle in the tests of `kernel.rs`, computed for sixteen probes at once.
//!
//! Why it exists beside the AVX2 kernel: a 512-bit block is exactly one
//! `zmm` register, so the sixteen 32-bit words every probe can hit are one
//! aligned load and one `vpermd` picks each probe's word (AVX2 needs two loads,
//! two `vpermd` and a blend across the two halves). The bit test is one
//! `vptestmd` into a mask register, so there is no `movmskps` either; it is
//! faster than the AVX2 kernel where both run. Only `avx512f`
//! instructions are used.
//!
//! Layout bridge: as for the AVX2 kernel, bit `p` of a block is bit `p % 32`
//! of the little-endian `u32` word `p / 32`.
//!
//! Every function here is `unsafe` only because it needs AVX-512F: the
//! [`Kernel`](super::kernel::Kernel) that hands them out checks the CPU once,
//! when the filter is made.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m512i, __mmask16, _mm512_add_epi32, _mm512_cmplt_epu32_mask, _mm512_load_si512, _mm512_loadu_si512,
    _mm512_mask_testn_epi32_mask, _mm512_mullo_epi32, _mm512_or_si512, _mm512_permutexvar_epi32,
    _mm512_rorv_epi32, _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512, _mm512_sllv_epi32,
    _mm512_srli_epi32, _mm512_store_si512, _mm512_sub_epi32, _mm512_ternarylogic_epi32,
};

use super::probe::{block_of, Block, MAX_PROBES, PROBE_POWERS};

simd_entry_points!("avx512f", set_block_permuted);

/// The AVX-512 form of [`super::block_matches`]: probes `0..16` in the first
/// round, `16..24` in a second unless `PROBES` fixes a count of at most 16
/// (then `num_probes == PROBES`, which the caller guarantees). Branch-free
/// either way.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
pub(super) unsafe fn block_matches<const PROBES: u32>(block: &Block, hash: u64, num_probes: u32) -> bool {
    debug_assert!((1..=MAX_PROBES as u32).contains(&num_probes));
    debug_assert!(PROBES <= 16 && (PROBES == 0 || PROBES == num_probes));
    // SAFETY: `Block` is 64 bytes and 64-byte aligned (`repr(C, align(64))`),
    // as the aligned 512-bit load requires.
    let words = unsafe { _mm512_load_si512(block.0.as_ptr().cast()) };
    // SAFETY: `round_missing` needs only AVX-512F, which this function has,
    // and is called with rounds 0 and 1.
    unsafe {
        if PROBES > 0 {
            round_missing(words, hash, 0, PROBES) == 0
        } else {
            round_missing(words, hash, 0, num_probes) | round_missing(words, hash, 1, num_probes) == 0
        }
    }
}

/// The lanes of probes `16·round .. min(16·round + 16, num_probes)` whose bit
/// is clear in the block held in `words` (`round < 2`).
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)]
unsafe fn round_missing(words: __m512i, hash: u64, round: usize, num_probes: u32) -> __mmask16 {
    debug_assert!(round < 2);
    // SAFETY: `PROBE_POWERS` holds 32 `u32`s (padded past `MAX_PROBES` for
    // exactly this read) and `round < 2`, so the 16 read are in bounds
    // (unaligned load).
    let powers = unsafe { _mm512_loadu_si512(PROBE_POWERS.as_ptr().add(16 * round).cast()) };
    // SAFETY: register-only AVX-512F intrinsics.
    unsafe {
        // The top 9 bits of `state = low32 * C^i` are the probe's bit in the
        // block: the top 4 pick the 32-bit word, the next 5 the bit in it.
        let state = _mm512_mullo_epi32(_mm512_set1_epi32(hash as u32 as i32), powers);
        // Each lane fetches the word its probe hits: `state >> 28`.
        let hit_words = _mm512_permutexvar_epi32(_mm512_srli_epi32::<28>(state), words);
        // Rotate the probed bit down to bit 0. `vprorvd` takes the count mod
        // 32, so `state >> 23` (the 9-bit position) rotates by exactly the
        // bit-in-word, with no mask: one instruction fewer than shifting a 1
        // by `position & 31`, which measured about 8% faster per query.
        let rotated = _mm512_rorv_epi32(hit_words, _mm512_srli_epi32::<23>(state));
        // Lanes holding a real probe: index 16·round + lane < num_probes.
        let lane = _mm512_add_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32(16 * round as i32),
        );
        let active: __mmask16 = _mm512_cmplt_epu32_mask(lane, _mm512_set1_epi32(num_probes as i32));
        _mm512_mask_testn_epi32_mask(active, rotated, _mm512_set1_epi32(1))
    }
}

/// Sets the bits of `num_probes` probes of `hash` in `block`, as
/// [`super::insert_portable`] does: the whole 512-bit mask is built in one
/// register and ORed in with one aligned load and one store (the AVX2 insert
/// needs two of each, and two shifts per probe).
///
/// Each probe's position is computed in a general register and broadcast,
/// as in the AVX2 insert: the form `insert_many` uses (its loop over a batch
/// measured slower with [`set_block_permuted`]'s positions).
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)]
pub(super) unsafe fn set_block<const PROBES: u32>(block: &mut Block, hash: u64, num_probes: u32) {
    let probes = super::probe::kernel_probes::<PROBES>(num_probes);
    // SAFETY: register-only AVX-512F intrinsics; `or_into_block` needs
    // AVX-512F, which this function has.
    unsafe {
        let mask = probe_mask(probes, |j| {
            _mm512_set1_epi32(((hash as u32).wrapping_mul(PROBE_POWERS[j]) >> (32 - 9)) as i32)
        });
        or_into_block(block, mask);
    }
}

/// [`set_block`] with every position computed at once: one `vpmulld` of
/// the hash by the first 16 probe powers and one shift give all positions,
/// and each probe's is broadcast by a `vpermd` (no general-register
/// multiply, shift and transfer per probe). The form a single insert uses,
/// where it is faster than [`set_block`]; batches use [`set_block`], whose
/// per-probe work overlaps across keys. More than 16 probes go to
/// [`set_block`].
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)]
pub(super) unsafe fn set_block_permuted<const PROBES: u32>(block: &mut Block, hash: u64, num_probes: u32) {
    let probes = super::probe::kernel_probes::<PROBES>(num_probes);
    if probes > 16 {
        // SAFETY: this function runs only with AVX-512F, which `set_block` needs.
        return unsafe { set_block::<PROBES>(block, hash, num_probes) };
    }
    // SAFETY: `PROBE_POWERS` holds 32 `u32`s, so the 16 read are in bounds
    // (unaligned load); the rest as in `set_block`.
    unsafe {
        let powers = _mm512_loadu_si512(PROBE_POWERS.as_ptr().cast());
        let state = _mm512_mullo_epi32(_mm512_set1_epi32(hash as u32 as i32), powers);
        let positions = _mm512_srli_epi32::<23>(state);
        let mask = probe_mask(probes, |j| {
            _mm512_permutexvar_epi32(_mm512_set1_epi32(j as i32), positions)
        });
        or_into_block(block, mask);
    }
}

/// The 512-bit mask of probes `0..probes` (at least one), `broadcast(j)`
/// giving probe `j`'s 9-bit position in every lane.
///
/// Lane `w` (word `w`) gets `1 << (b − 32·w)` for each position `b`:
/// `vpsllvd` gives 0 for a count of 32 or more, and a negative difference is
/// a count above 2^31, so only the probed word's lane keeps a bit. Probes
/// are ORed in pairs by one `vpternlogd` (0xFE: a | b | c). Written as
/// separate ORs, LLVM rewrote each `vpsllvd` as an in-range shift plus a
/// compare and a masked OR: seven instructions per probe where these take
/// five and a half (`objdump` of the k = 7 insert).
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)]
unsafe fn probe_mask(probes: usize, broadcast: impl Fn(usize) -> __m512i) -> __m512i {
    debug_assert!(probes >= 1);
    // SAFETY: register-only AVX-512F intrinsics.
    unsafe {
        let ones = _mm512_set1_epi32(1);
        let first_bit = _mm512_setr_epi32(
            0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480,
        );
        let bit = |j: usize| _mm512_sllv_epi32(ones, _mm512_sub_epi32(broadcast(j), first_bit));
        let mut mask = bit(0);
        let mut j = 1;
        while j + 1 < probes {
            mask = _mm512_ternarylogic_epi32::<0xFE>(mask, bit(j), bit(j + 1));
            j += 2;
        }
        if j < probes {
            mask = _mm512_ternarylogic_epi32::<0xFE>(mask, bit(j), _mm512_setzero_si512());
        }
        mask
    }
}

/// ORs `mask` into `block`: one aligned 512-bit load and one store.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(unused_unsafe)]
unsafe fn or_into_block(block: &mut Block, mask: __m512i) {
    let base = block.0.as_mut_ptr().cast::<__m512i>();
    // SAFETY: `Block` is 64 bytes, 64-byte aligned (`repr(C, align(64))`),
    // as the aligned 512-bit load and store require; `block` is borrowed
    // mutably.
    unsafe { _mm512_store_si512(base, _mm512_or_si512(_mm512_load_si512(base), mask)) }
}
