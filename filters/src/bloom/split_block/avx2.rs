//! AVX2 kernel of the split-block layout: a block is 256 bits, one AVX2
//! register, and its eight words are the eight lanes.
//! The mask of a hash is one `vpmulld` by the salts, one shift by 27 and one
//! `vpsllvd`; a query is then one aligned load and one `vptest` (`testc`: is
//! every mask bit set in the block?), an insert one load, `vpor` and store.
//! The portable kernel (`block_matches`, `block_insert` in `block.rs`)
//! is its oracle in the tests of `kernel.rs`.
//!
//! Layout bridge: word `i` of a block is lane `i` (the block is `[u32; 8]`
//! in memory, little-endian on x86-64), the order of the serialized bytes.
//!
//! Every function here is `unsafe` only because it needs AVX2: the
//! [`Kernel`](super::kernel::Kernel) that hands them out checks the CPU once,
//! when the filter is made.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_load_si256, _mm256_mullo_epi32, _mm256_or_si256, _mm256_set1_epi32, _mm256_setr_epi32,
    _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_store_si256, _mm256_testc_si256,
};

use super::block::{self, Block, SALT};

/// The block mask of `x` (the hash's low 32 bits): lane `i` holds
/// `1 << ((x · SALT[i]) >> 27)`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
unsafe fn mask(x: u32) -> __m256i {
    // SAFETY: register-only AVX2 intrinsics; this function has AVX2.
    unsafe {
        let salt = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let bit = _mm256_srli_epi32::<27>(_mm256_mullo_epi32(_mm256_set1_epi32(x as i32), salt));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), bit)
    }
}

/// Whether every bit of the mask of `hash` is set in `block`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)]
pub(super) unsafe fn block_matches(block: &Block, hash: u64) -> bool {
    // SAFETY: `Block` is 32 bytes and 32-byte aligned (`repr(C, align(32))`),
    // so the aligned 32-byte load is in bounds and aligned; the rest is
    // register-only AVX2, which this function has.
    unsafe {
        let b = _mm256_load_si256(block.0.as_ptr().cast::<__m256i>());
        _mm256_testc_si256(b, mask(hash as u32)) != 0
    }
}

/// Sets the mask of `hash` in `block`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unused_unsafe)]
pub(super) unsafe fn block_insert(block: &mut Block, hash: u64) {
    let p = block.0.as_mut_ptr().cast::<__m256i>();
    // SAFETY: as in `block_matches`; the store goes to the same 32 aligned
    // bytes, which `&mut` lets us write.
    unsafe { _mm256_store_si256(p, _mm256_or_si256(_mm256_load_si256(p), mask(hash as u32))) }
}

/// A whole single query.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains(blocks: &[Block], hash: u64) -> bool {
    let block = &blocks[block::block_of(hash, blocks.len())];
    // SAFETY: this function has AVX2.
    unsafe { block_matches(block, hash) }
}

/// The batched query (`hashes.len() == out.len()`).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn contains_many(blocks: &[Block], hashes: &[u64], out: &mut [bool]) {
    // SAFETY (for the closure's call): this function has AVX2.
    block::batched(blocks, hashes, out, |b, h| unsafe { block_matches(b, h) });
}

/// A single insert.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert(blocks: &mut [Block], hash: u64) {
    let i = block::block_of(hash, blocks.len());
    // SAFETY: this function has AVX2.
    unsafe { block_insert(&mut blocks[i], hash) }
}

/// The batched insert.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn insert_many(blocks: &mut [Block], hashes: &[u64]) {
    // SAFETY (for the closure's call): this function has AVX2.
    block::batched_insert(blocks, hashes, |b, h| unsafe { block_insert(b, h) });
}
