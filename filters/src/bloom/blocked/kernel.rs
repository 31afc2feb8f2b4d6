//! The query kernel a [`BlockedBloom`](super::BlockedBloom) uses, chosen once
//! for the running CPU when the filter is made, through the crate's one
//! dispatch ([`crate::simd`]): one function pointer per operation that does
//! the whole operation (block choice and probes), as `sbbf-rs` dispatches
//! too; calling the probe alone through a pointer, after choosing the block
//! in the caller, measured slower.
//!
//! Order of preference: AVX-512F, then AVX2, then the portable kernel. The
//! portable kernel is the oracle: the tests below check every kernel this CPU
//! can run against it. Off x86-64 the portable kernel is called directly and
//! inlined, with no pointer at all.
#![allow(unsafe_code)]

use super::probe::Block;

/// A whole single query: `(blocks, hash, num_probes) -> maybe present`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type OneFn = unsafe fn(&[Block], u64, u32) -> bool;
/// A whole batched query: `(blocks, num_probes, hashes, out)`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type ManyFn = unsafe fn(&[Block], u32, &[u64], &mut [bool]);
/// A whole single insert: `(blocks, hash, num_probes)`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type InsertFn = unsafe fn(&mut [Block], u64, u32);
/// A whole batched insert: `(blocks, num_probes, hashes)`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type InsertManyFn = unsafe fn(&mut [Block], u32, &[u64]);

/// A query kernel the running CPU supports.
///
/// Invariant (what makes the calls below sound): the function pointers are
/// private and set only by [`Kernel::detect`] (through `candidates`), which
/// hand out a SIMD kernel only after the CPU reported its feature. A kernel
/// is chosen for one probe count and must be called with that count. Every
/// kernel returns exactly what the portable one does, so the choice never
/// changes an answer, only its speed.
#[derive(Clone, Copy)]
pub(super) struct Kernel {
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

/// The portable kernel as a whole query, with the signature of the SIMD ones.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_one(blocks: &[Block], hash: u64, num_probes: u32) -> bool {
    super::batch::contains_portable(blocks, hash, num_probes)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_many(blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
    super::batch::contains_many_portable(blocks, num_probes, hashes, out)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_insert(blocks: &mut [Block], hash: u64, num_probes: u32) {
    super::batch::insert_portable(blocks, hash, num_probes)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_insert_many(blocks: &mut [Block], num_probes: u32, hashes: &[u64]) {
    super::batch::insert_many_portable(blocks, num_probes, hashes)
}

/// The kernels of one SIMD module: entry `k` (1..) is the kernel compiled
/// for exactly `k` probes, entry 0 the general one; queries and inserts
/// from the same module.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
macro_rules! kernel_table {
    ($name:literal, $isa:ident; $($k:literal)*) => {
        [$(Kernel {
            name: $name,
            one: super::$isa::contains::<$k>,
            many: super::$isa::contains_many::<$k>,
            insert: super::$isa::insert::<$k>,
            insert_many: super::$isa::insert_many::<$k>,
        }),*]
    };
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
const AVX512: [Kernel; 17] = kernel_table!("avx512", avx512; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
const AVX2: [Kernel; 9] = kernel_table!("avx2", avx2; 0 1 2 3 4 5 6 7 8);

impl Kernel {
    const PORTABLE: Kernel = Kernel {
        name: "portable",
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        one: portable_one,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        many: portable_many,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        insert: portable_insert,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        insert_many: portable_insert_many,
    };

    /// The fastest kernel this CPU runs for `num_probes` probes, within the
    /// `AMQ_KERNEL` cap ([`crate::simd`]).
    pub(super) fn detect(num_probes: u32) -> Kernel {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::choose(&Self::candidates(num_probes), Self::PORTABLE, crate::simd::cap());
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        {
            let _ = num_probes;
            Self::PORTABLE
        }
    }

    /// The SIMD kernels for `num_probes` probes, most capable first, with
    /// whether this CPU runs each. Each comes compiled for one fixed probe
    /// count (for the counts one round of its registers covers: up to 16
    /// lanes for AVX-512, 8 for AVX2), which drops the round loop and the
    /// lane-mask arithmetic from the query, and in a general form for more.
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn candidates(num_probes: u32) -> [crate::simd::Candidate<Kernel>; 2] {
        use crate::simd::Level;
        let f = crate::simd::features();
        let fixed = |lanes: u32| {
            if num_probes <= lanes {
                num_probes as usize
            } else {
                0
            }
        };
        [
            (Level::Avx512, f.avx512f, AVX512[fixed(16)]),
            (Level::Avx2, f.avx2, AVX2[fixed(8)]),
        ]
    }

    /// Every kernel this CPU runs for `num_probes` probes, the portable one
    /// last: what the tests check against the portable kernel.
    #[cfg(test)]
    fn runnable(num_probes: u32) -> alloc::vec::Vec<Kernel> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::runnable(&Self::candidates(num_probes), Self::PORTABLE);
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        {
            let _ = num_probes;
            alloc::vec![Self::PORTABLE]
        }
    }

    /// `"avx512"`, `"avx2"` or `"portable"`.
    pub(super) fn name(self) -> &'static str {
        self.name
    }

    /// Whether every probe bit of the key with `hash` is set in its block.
    #[inline(always)]
    pub(super) fn contains(self, blocks: &[Block], hash: u64, num_probes: u32) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: the pointer came from `candidates`, which offers a SIMD
        // kernel only when the CPU has its feature (the type's invariant);
        // the kernels' other inputs are checked by safe indexing inside.
        return unsafe { (self.one)(blocks, hash, num_probes) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        super::batch::contains_portable(blocks, hash, num_probes)
    }

    /// Sets the probe bits of the key with `hash` in its block.
    #[inline(always)]
    pub(super) fn insert(self, blocks: &mut [Block], hash: u64, num_probes: u32) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.insert)(blocks, hash, num_probes) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        super::batch::insert_portable(blocks, hash, num_probes)
    }

    /// [`insert`](Self::insert) for every hash, batched.
    #[inline(always)]
    pub(super) fn insert_many(self, blocks: &mut [Block], num_probes: u32, hashes: &[u64]) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.insert_many)(blocks, num_probes, hashes) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        super::batch::insert_many_portable(blocks, num_probes, hashes)
    }

    /// [`contains`](Self::contains) for every hash, into `out`
    /// (`hashes.len() == out.len()`).
    #[inline(always)]
    pub(super) fn contains_many(self, blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.many)(blocks, num_probes, hashes, out) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        super::batch::contains_many_portable(blocks, num_probes, hashes, out)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use alloc::vec::Vec;

    use super::super::probe::{block_matches, block_of, Block, MAX_PROBES};
    use super::*;
    use crate::hash::remix;

    /// 7 × 64 blocks from full (no random masks ANDed) through sparse (5
    /// ANDed: about 3% of bits set) to empty, and hashes that land all over
    /// them.
    fn sample_filter() -> (Vec<Block>, Vec<u64>) {
        let blocks = (0..7 * 64u64)
            .map(|b| {
                let ands = b / 64;
                Block(core::array::from_fn(|w| {
                    let full = if ands == 6 { 0 } else { u64::MAX };
                    (0..ands.min(5)).fold(full, |acc, j| acc & remix(b * 8 + w as u64, j))
                }))
            })
            .collect();
        let hashes = (0..60_000u64).map(|i| remix(i, 77)).collect();
        (blocks, hashes)
    }

    /// Every kernel this CPU can run answers exactly as the portable kernel
    /// does, one at a time and batched, for every probe count.
    #[test]
    fn every_available_kernel_agrees_with_portable() {
        let (blocks, hashes) = sample_filter();
        for k in 1..=MAX_PROBES as u32 {
            #[cfg_attr(any(not(target_arch = "x86_64"), amq_portable), allow(unused_mut))]
            let mut kernels: Vec<Kernel> = Kernel::runnable(k);
            assert_eq!(kernels.last().map(|k| k.name()), Some("portable"));
            // The general SIMD kernels too, at counts where a fixed one is
            // normally chosen instead.
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            {
                if std::is_x86_feature_detected!("avx512f") {
                    kernels.push(AVX512[0]);
                }
                if std::is_x86_feature_detected!("avx2") {
                    kernels.push(AVX2[0]);
                }
            }
            for kernel in &kernels {
                let mut out = alloc::vec![false; hashes.len()];
                kernel.contains_many(&blocks, k, &hashes, &mut out);
                let mut found = 0;
                for (&h, &o) in hashes.iter().zip(&out) {
                    let expected = block_matches(&blocks[block_of(h, blocks.len() as u32)].0, h, k);
                    assert_eq!(
                        kernel.contains(&blocks, h, k),
                        expected,
                        "{kernel:?} k {k} hash {h:#x}"
                    );
                    assert_eq!(o, expected, "{kernel:?} batched, k {k} hash {h:#x}");
                    found += expected as usize;
                }
                // Both answers occur at every k, so neither can be a constant.
                assert!(found > 100 && found < hashes.len() - 100, "k {k}: {found} found");
            }
        }
    }

    /// Every kernel's insert, single and batched, sets exactly the bits the
    /// portable insert sets, for every probe count, into blocks from empty to
    /// full (so bits already set stay set).
    #[test]
    fn every_available_insert_agrees_with_portable() {
        let (blocks, hashes) = sample_filter();
        let hashes = &hashes[..20_000];
        for k in 1..=MAX_PROBES as u32 {
            #[cfg_attr(any(not(target_arch = "x86_64"), amq_portable), allow(unused_mut))]
            let mut kernels: Vec<Kernel> = Kernel::runnable(k);
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            {
                if std::is_x86_feature_detected!("avx512f") {
                    kernels.push(AVX512[0]);
                }
                if std::is_x86_feature_detected!("avx2") {
                    kernels.push(AVX2[0]);
                }
            }
            let mut expected = blocks.clone();
            hashes
                .iter()
                .for_each(|&h| super::super::batch::insert_portable(&mut expected, h, k));
            // The oracle itself: each key's bits are its probe mask.
            let mut by_mask = blocks.clone();
            for &h in hashes {
                let i = block_of(h, by_mask.len() as u32);
                let mask = super::super::probe::probe_mask(h, k);
                by_mask[i].0.iter_mut().zip(mask).for_each(|(w, m)| *w |= m);
            }
            assert!(expected == by_mask, "portable insert, k {k}");
            assert!(expected != blocks, "k {k}: the inserts set no bit");
            for kernel in &kernels {
                let mut one = blocks.clone();
                hashes.iter().for_each(|&h| kernel.insert(&mut one, h, k));
                assert!(one == expected, "{kernel:?} insert, k {k}");
                let mut many = blocks.clone();
                let (a, b) = hashes.split_at(777);
                kernel.insert_many(&mut many, k, a);
                kernel.insert_many(&mut many, k, b);
                assert!(many == expected, "{kernel:?} insert_many, k {k}");
            }
        }
    }

    /// Without a cap a CPU with AVX2 gets a SIMD kernel, and the kernel a
    /// filter gets is the one the shared choice makes.
    #[test]
    fn detect_prefers_simd_within_the_cap() {
        for k in [1, 6, 16, 17, 24] {
            let runnable: Vec<&str> = Kernel::runnable(k).iter().map(|k| k.name()).collect();
            assert!(runnable.contains(&Kernel::detect(k).name()));
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            {
                let chosen =
                    crate::simd::choose(&Kernel::candidates(k), Kernel::PORTABLE, crate::simd::cap());
                assert_eq!(Kernel::detect(k).name(), chosen.name());
                #[cfg(feature = "std")]
                if std::is_x86_feature_detected!("avx2") && crate::simd::cap() != crate::simd::Level::Portable
                {
                    assert_ne!(Kernel::detect(k).name(), "portable");
                }
            }
        }
    }
}
