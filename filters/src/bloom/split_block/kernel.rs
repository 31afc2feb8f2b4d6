//! The kernel a split-block filter ([`SplitBlockBloom`](super::SplitBlockBloom),
//! [`ParquetBloom`](crate::ParquetBloom)) uses for queries and inserts,
//! chosen once for the running CPU when the filter is made: AVX2 (`avx2.rs`)
//! if the CPU has it and `AMQ_KERNEL` allows it, else portable.
//!
//! The same pattern as `BlockedBloom`'s kernel (`bloom/blocked/kernel.rs`):
//! a SIMD function compiled with `#[target_feature]` cannot inline into
//! baseline x86-64 code, so each operation is one call through a stored
//! function pointer that does the whole operation (block choice, mask,
//! test). AVX-512 would add nothing: a block is one 256-bit register.
//!
//! The portable kernel is the oracle: the tests below check the AVX2 kernel
//! against it, one at a time and batched, inserts included. Off x86-64 the
//! portable kernel is called directly and inlined, with no pointer at all.
#![allow(unsafe_code)]

use super::block::{self, Block};

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type OneFn = unsafe fn(&[Block], u64) -> bool;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type ManyFn = unsafe fn(&[Block], &[u64], &mut [bool]);
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type InsertFn = unsafe fn(&mut [Block], u64);
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type InsertManyFn = unsafe fn(&mut [Block], &[u64]);

/// A kernel the running CPU supports.
///
/// Invariant (what makes the calls below sound): the function pointers are
/// private and set only by [`Kernel::detect`] (through `candidates`), which
/// hands out the AVX2 kernel only after the CPU reported AVX2. Every kernel computes exactly
/// what the portable one does, so the choice never changes an answer or a
/// bit, only the speed.
#[derive(Clone, Copy)]
pub(crate) struct Kernel {
    name: &'static str,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    one: OneFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    many: ManyFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    insert: InsertFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    insert_many: InsertManyFn,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
const AVX2: Kernel = Kernel {
    name: "avx2",
    one: super::avx2::contains,
    many: super::avx2::contains_many,
    insert: super::avx2::insert,
    insert_many: super::avx2::insert_many,
};

impl Kernel {
    const PORTABLE: Kernel = Kernel {
        name: "portable",
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        one: block::contains_portable,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        many: block::contains_many_portable,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        insert: block::insert_portable,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        insert_many: block::insert_many_portable,
    };

    /// The fastest kernel this CPU runs, within the `AMQ_KERNEL` cap
    /// ([`crate::simd`]: `portable` forces the portable kernel).
    pub(crate) fn detect() -> Kernel {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::choose(&Self::candidates(), Self::PORTABLE, crate::simd::cap());
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        Self::PORTABLE
    }

    /// The SIMD kernel, with whether this CPU runs it. AVX-512 would add
    /// nothing: a block is one 256-bit register.
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn candidates() -> [crate::simd::Candidate<Kernel>; 1] {
        [(crate::simd::Level::Avx2, crate::simd::features().avx2, AVX2)]
    }

    /// Every kernel this CPU runs, the portable one last.
    #[cfg(test)]
    fn runnable() -> alloc::vec::Vec<Kernel> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::runnable(&Self::candidates(), Self::PORTABLE);
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        alloc::vec![Self::PORTABLE]
    }

    /// `"avx2"` or `"portable"`.
    pub(crate) fn name(self) -> &'static str {
        self.name
    }

    /// Whether the mask of `hash` is set in its block.
    #[inline(always)]
    pub(crate) fn contains(self, blocks: &[Block], hash: u64) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: the pointer came from `candidates`, which offers the AVX2
        // kernel only when the CPU has AVX2 (the type's invariant); the
        // kernels index `blocks` with safe, bounds-checked indexing.
        return unsafe { (self.one)(blocks, hash) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        block::contains_portable(blocks, hash)
    }

    /// [`contains`](Self::contains) for every hash (`hashes.len() == out.len()`).
    #[inline(always)]
    pub(crate) fn contains_many(self, blocks: &[Block], hashes: &[u64], out: &mut [bool]) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.many)(blocks, hashes, out) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        block::contains_many_portable(blocks, hashes, out)
    }

    /// Sets the mask of `hash` in its block.
    #[inline(always)]
    pub(crate) fn insert(self, blocks: &mut [Block], hash: u64) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.insert)(blocks, hash) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        block::insert_portable(blocks, hash)
    }

    /// [`insert`](Self::insert) for every hash.
    #[inline(always)]
    pub(crate) fn insert_many(self, blocks: &mut [Block], hashes: &[u64]) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.insert_many)(blocks, hashes) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        block::insert_many_portable(blocks, hashes)
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::super::block::{block_matches, block_of, Block};
    use super::*;
    use crate::hash::remix;

    /// 6 × 64 blocks from full through sparse (random words ANDed 0 to 4
    /// times) to empty.
    fn sample_blocks() -> Vec<Block> {
        (0..6 * 64u64)
            .map(|b| {
                let ands = b / 64;
                Block(core::array::from_fn(|w| {
                    let full = if ands == 5 { 0 } else { u32::MAX };
                    (0..ands.min(4)).fold(full, |acc, j| acc & remix(b * 8 + w as u64, j) as u32)
                }))
            })
            .collect()
    }

    fn kernels() -> Vec<Kernel> {
        let k: Vec<Kernel> = Kernel::runnable();
        assert_eq!(k.last().map(|k| k.name()), Some("portable"));
        k
    }

    /// Every kernel this CPU can run answers exactly as the portable block
    /// check does, one at a time and batched.
    #[test]
    fn every_available_kernel_agrees_with_portable() {
        let blocks = sample_blocks();
        let hashes: Vec<u64> = (0..50_000u64).map(|i| remix(i, 77)).collect();
        for kernel in kernels() {
            let mut out = alloc::vec![false; hashes.len()];
            kernel.contains_many(&blocks, &hashes, &mut out);
            let mut found = 0;
            for (&h, &o) in hashes.iter().zip(&out) {
                let expected = block_matches(&blocks[block_of(h, blocks.len())], h);
                assert_eq!(kernel.contains(&blocks, h), expected, "{kernel:?} hash {h:#x}");
                assert_eq!(o, expected, "{kernel:?} batched, hash {h:#x}");
                found += expected as usize;
            }
            // Both answers occur, so neither can be a constant.
            assert!(found > 100 && found < hashes.len() - 100, "{found} found");
        }
    }

    /// Inserts set exactly the portable kernel's bits, one at a time and
    /// batched (batches of every length around the batch size).
    #[test]
    fn every_available_kernel_inserts_the_portable_bits() {
        let hashes: Vec<u64> = (0..5_000u64).map(|i| remix(i, 78)).collect();
        let mut oracle = alloc::vec![Block::default(); 101];
        Kernel::PORTABLE.insert_many(&mut oracle, &[]);
        for &h in &hashes {
            super::block::insert_portable(&mut oracle, h);
        }
        for kernel in kernels() {
            let mut one = alloc::vec![Block::default(); 101];
            for &h in &hashes {
                kernel.insert(&mut one, h);
            }
            assert!(one == oracle, "{kernel:?} single inserts");
            for chunk in [1, 31, 32, 33, 1000] {
                let mut many = alloc::vec![Block::default(); 101];
                for c in hashes.chunks(chunk) {
                    kernel.insert_many(&mut many, c);
                }
                assert!(many == oracle, "{kernel:?} batched inserts, chunks of {chunk}");
            }
        }
    }

    /// A CPU with AVX2 gets the AVX2 kernel unless `AMQ_KERNEL` says
    /// otherwise.
    #[test]
    fn detect_prefers_avx2_within_the_cap() {
        assert!(kernels().iter().any(|k| k.name() == Kernel::detect().name()));
        #[cfg(all(target_arch = "x86_64", not(amq_portable), feature = "std"))]
        if std::is_x86_feature_detected!("avx2") && crate::simd::cap() != crate::simd::Level::Portable {
            assert_eq!(Kernel::detect().name(), "avx2");
        }
    }
}
