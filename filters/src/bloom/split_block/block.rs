//! The split-block layout (Putze, Sanders & Singler 2007's "split" variant,
//! as Apache Parquet and Impala use it): a block of 256 bits is eight 32-bit
//! words, and a key sets or tests exactly one bit in each word, so its mask
//! is eight lane-wise shifts and a query is one 32-byte load and one test.
//! [`SplitBlockBloom`](super::SplitBlockBloom) and
//! [`ParquetBloom`](crate::ParquetBloom) are this layout under two
//! policies: amq's key hash and format, and Parquet's hash and file bytes.
//!
//! Everything here is the portable form, the oracle of the AVX2 kernel
//! (`avx2.rs`).

use crate::hash::reduce32;
use crate::prefetch::prefetch;

/// The eight salts of the Parquet specification: word `i` of a block gets
/// bit `(x · SALT[i]) >> 27` for a hash whose low 32 bits are `x`.
pub const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Bytes per block: eight 32-bit words.
pub const BLOCK_BYTES: usize = 32;

/// Values per batch of the batched queries and inserts: enough outstanding
/// prefetches to cover memory latency, small enough for the stack.
pub(crate) const BATCH: usize = 32;

/// One 256-bit block, aligned so a block never straddles two cache lines
/// and the AVX2 kernel's aligned loads are valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Zeroable)]
#[repr(C, align(32))]
pub(crate) struct Block(pub(crate) [u32; 8]);

/// The block of a hash: its high 32 bits, multiply-shifted onto `0..n`
/// (`1 ≤ n < 2^32`).
#[inline(always)]
pub(crate) fn block_of(hash: u64, n: usize) -> usize {
    reduce32((hash >> 32) as u32, n as u32) as usize
}

/// Word `i` of the mask of `x` has bit `(x · SALT[i]) >> 27` set.
#[inline(always)]
pub(crate) fn mask(x: u32) -> [u32; 8] {
    SALT.map(|s| 1 << (x.wrapping_mul(s) >> 27))
}

/// Whether every bit of the mask of `hash` is set in `block`. Branch-free:
/// each word's tested bit is shifted down to bit 0 and the eight are ANDed
/// (measured faster than building the mask and comparing: no `1 << s` and
/// no gathering of eight words into vector registers).
#[inline(always)]
pub(crate) fn block_matches(block: &Block, hash: u64) -> bool {
    let x = hash as u32;
    let mut all = 1;
    for (w, s) in block.0.iter().zip(SALT) {
        all &= w >> (x.wrapping_mul(s) >> 27);
    }
    all & 1 == 1
}

#[inline(always)]
pub(crate) fn block_insert(block: &mut Block, hash: u64) {
    for (w, m) in block.0.iter_mut().zip(mask(hash as u32)) {
        *w |= m;
    }
}

/// The batched query loop: for each batch of [`BATCH`] hashes, compute and
/// prefetch every block first, then probe, so the cache misses of a batch
/// overlap. `probe` is the kernel; `hashes.len() == out.len()`.
#[inline(always)]
pub(crate) fn batched(
    blocks: &[Block],
    hashes: &[u64],
    out: &mut [bool],
    probe: impl Fn(&Block, u64) -> bool,
) {
    let mut idx = [0usize; BATCH];
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        for (i, &h) in hs.iter().enumerate() {
            idx[i] = block_of(h, blocks.len());
            prefetch(&blocks[idx[i]]);
        }
        for (i, (&h, o)) in hs.iter().zip(os.iter_mut()).enumerate() {
            *o = probe(&blocks[idx[i]], h);
        }
    }
}

/// The batched insert loop, the same way.
#[inline(always)]
pub(crate) fn batched_insert(blocks: &mut [Block], hashes: &[u64], insert: impl Fn(&mut Block, u64)) {
    let mut idx = [0usize; BATCH];
    for hs in hashes.chunks(BATCH) {
        for (i, &h) in hs.iter().enumerate() {
            idx[i] = block_of(h, blocks.len());
            prefetch(&blocks[idx[i]]);
        }
        for (i, &h) in hs.iter().enumerate() {
            insert(&mut blocks[idx[i]], h);
        }
    }
}

/// The portable kernel (what the AVX2 one must compute), as whole operations.
#[inline(always)]
pub(crate) fn contains_portable(blocks: &[Block], hash: u64) -> bool {
    block_matches(&blocks[block_of(hash, blocks.len())], hash)
}

pub(crate) fn contains_many_portable(blocks: &[Block], hashes: &[u64], out: &mut [bool]) {
    batched(blocks, hashes, out, block_matches);
}

#[inline(always)]
pub(crate) fn insert_portable(blocks: &mut [Block], hash: u64) {
    let i = block_of(hash, blocks.len());
    block_insert(&mut blocks[i], hash);
}

pub(crate) fn insert_many_portable(blocks: &mut [Block], hashes: &[u64]) {
    batched_insert(blocks, hashes, block_insert);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    #[test]
    fn blocks_are_32_bytes_aligned_to_32() {
        assert_eq!(core::mem::align_of::<Block>(), 32);
        assert_eq!(core::mem::size_of::<Block>(), BLOCK_BYTES);
    }

    #[test]
    fn a_mask_has_one_bit_per_word() {
        for i in 0..10_000u64 {
            assert!(mask(remix(i, 1) as u32).iter().all(|w| w.count_ones() == 1));
        }
    }

    /// The block choice as Parquet's specification states it:
    /// `((h >> 32) · z) >> 32`, for any count up to `2^32 - 1`.
    #[test]
    fn block_choice_is_multiply_shift_of_the_high_half() {
        for z in [1usize, 2, 3, 1000, i32::MAX as usize / 32, u32::MAX as usize] {
            for i in 0..1000u64 {
                let h = remix(i, 2);
                assert_eq!(block_of(h, z) as u64, ((h >> 32) * z as u64) >> 32);
            }
        }
    }

    #[test]
    fn insert_sets_the_mask_and_a_query_finds_it() {
        for i in 0..1000u64 {
            let h = remix(i, 3);
            let mut b = Block::default();
            assert!(!block_matches(&b, h));
            block_insert(&mut b, h);
            assert!(block_matches(&b, h));
            assert_eq!(b.0, mask(h as u32));
        }
    }
}
