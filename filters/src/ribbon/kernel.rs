//! The query kernel a [`Ribbon`] uses, chosen once for the running CPU when
//! the filter is made (the pattern of `bloom/blocked/kernel.rs`).
//!
//! Why: most of a Ribbon query is arithmetic, not memory. Per group of eight
//! columns the portable code does 24 loads, 24 ANDs, 16 XORs and a parity
//! fold of about 30 operations (`solution.rs`); a profile of a 1M-key query
//! loop put the first block load at 14% of the samples and the rest spread
//! thinly over those hundred-odd instructions. With AVX-512F and
//! `VPOPCNTDQ` the same group is three 64-byte loads, three ANDs with the
//! broadcast coefficients, one three-way XOR, one `vpopcntq` and one
//! `vptestmq` whose mask register *is* the eight parities.
//!
//! A two-line filter (`lines.rs`) gets kernels compiled for that layout
//! alone, and for its line width when all its lines have one (`Shape`):
//! the same arithmetic for a line pair, where AVX-512 takes the extra
//! slots of all eight columns out of the line's spare words with one
//! `vpermq` and one `vpsrlvq`.
//!
//! The chosen kernel does the whole query, so a query is one call through a
//! pointer; compiling the parities with `popcnt` alone (as a whole-build
//! `-C target-feature=+popcnt`) measured no faster, so there is no
//! popcnt-only kernel. The portable kernel is the oracle: the tests below run
//! every kernel this CPU supports against it. Off x86-64 the portable code is
//! called directly.
#![allow(unsafe_code)]

use super::lines::{portable_pair, Line, LineWindow};
use super::solution::portable_group;
use super::Ribbon;

/// A whole single query.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type OneFn = unsafe fn(&Ribbon, u64) -> bool;
/// A whole batched query (`hashes.len() == out.len()`).
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type ManyFn = unsafe fn(&Ribbon, &[u64], &mut [bool]);
/// The parities of a two-line filter's line pair, for a row located
/// beforehand ([`Ribbon::row_matches`]).
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type PairFn = unsafe fn(&Line, &Line, &LineWindow) -> u32;

/// A query kernel the running CPU supports.
///
/// Invariant (what makes the calls sound): the pointers are private and set
/// only by [`Kernel::available`], which hands out the AVX-512 kernel only
/// after the CPU reported both features it needs. Every kernel returns
/// exactly what the portable one does.
#[derive(Clone, Copy)]
pub(super) struct Kernel {
    name: &'static str,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    one: OneFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    many: ManyFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    pair: PairFn,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_one(r: &Ribbon, hash: u64) -> bool {
    r.contains_by(hash, portable_group, portable_pair)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_many(r: &Ribbon, hashes: &[u64], out: &mut [bool]) {
    r.contains_many_by(hashes, out, portable_group, portable_pair)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_lines_one<const R: u32>(r: &Ribbon, hash: u64) -> bool {
    r.contains_lines_by::<R>(hash, portable_pair)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_lines_many<const R: u32>(r: &Ribbon, hashes: &[u64], out: &mut [bool]) {
    r.contains_many_lines_by::<R>(hashes, out, portable_pair)
}

/// The entry points of a two-line filter whose lines all hold `columns`
/// columns (6 to 8), compiled for that width, or (`columns` 0) of any.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
macro_rules! lines_entries {
    ($columns:expr, $($one:ident)::+, $($many:ident)::+) => {
        match $columns {
            6 => ($($one)::+::<6> as OneFn, $($many)::+::<6> as ManyFn),
            7 => ($($one)::+::<7> as OneFn, $($many)::+::<7> as ManyFn),
            8 => ($($one)::+::<8> as OneFn, $($many)::+::<8> as ManyFn),
            16 => ($($one)::+::<16> as OneFn, $($many)::+::<16> as ManyFn),
            17 => ($($one)::+::<17> as OneFn, $($many)::+::<17> as ManyFn),
            _ => ($($one)::+::<0> as OneFn, $($many)::+::<0> as ManyFn),
        }
    };
}

/// What a kernel is compiled for: the blocked and bumped layouts (`None`)
/// or the two-line layout (`Some(r)`: lines of `r` columns everywhere, 6
/// to 8, or 0 for lines of mixed widths).
pub(super) type Shape = Option<u32>;

impl Kernel {
    /// The portable kernel, for a filter of this shape.
    fn portable(shape: Shape) -> Kernel {
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        let _ = shape;
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        let (one, many) = match shape {
            Some(r) => lines_entries!(r, portable_lines_one, portable_lines_many),
            None => (portable_one as OneFn, portable_many as ManyFn),
        };
        Kernel {
            name: "portable",
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            one,
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            many,
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            pair: portable_pair,
        }
    }

    /// The fastest kernel this CPU runs, within the `AMQ_KERNEL` cap
    /// ([`crate::simd`]), for a filter of this shape. (Every kernel answers
    /// every layout; the one made for the filter's shape does it without
    /// the others' code, and with its line widths as constants.)
    pub(super) fn detect(shape: Shape) -> Kernel {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::choose(
            &Self::candidates(shape),
            Self::portable(shape),
            crate::simd::cap(),
        );
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        Self::portable(shape)
    }

    /// The SIMD kernels, most capable first, with whether this CPU runs
    /// each, for a filter of this shape. The AVX-512
    /// kernel needs `VPOPCNTDQ` for its parities, and carries the AVX2 pair
    /// of the two-line layout, so it needs AVX2 too.
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn candidates(shape: Shape) -> [crate::simd::Candidate<Kernel>; 2] {
        use crate::simd::Level;
        let f = crate::simd::features();
        let (one512, many512) = match shape {
            Some(r) => lines_entries!(r, avx512::contains_lines, avx512::contains_many_lines),
            None => (avx512::contains as OneFn, avx512::contains_many as ManyFn),
        };
        let (one2, many2) = match shape {
            Some(r) => lines_entries!(r, avx2::contains_lines, avx2::contains_many_lines),
            None => (avx2::contains as OneFn, avx2::contains_many as ManyFn),
        };
        [
            (
                Level::Avx512,
                f.avx512f && f.avx512vpopcntdq && f.avx2,
                Kernel {
                    name: "avx512",
                    one: one512,
                    many: many512,
                    pair: avx512::pair,
                },
            ),
            (
                Level::Avx2,
                f.avx2,
                Kernel {
                    name: "avx2",
                    one: one2,
                    many: many2,
                    pair: avx2::pair,
                },
            ),
        ]
    }

    /// Every kernel this CPU runs, the portable one last, for a filter of
    /// this shape: what the tests check against the portable kernel.
    #[cfg(test)]
    fn runnable(shape: Shape) -> alloc::vec::Vec<Kernel> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::runnable(&Self::candidates(shape), Self::portable(shape));
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        alloc::vec![Self::portable(shape)]
    }

    /// `"avx512"`, `"avx2"` or `"portable"`.
    pub(super) fn name(self) -> &'static str {
        self.name
    }

    #[inline(always)]
    pub(super) fn contains(self, r: &Ribbon, hash: u64) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: the pointer came from `available`, which returns the SIMD
        // kernel only when the CPU has its features (the type's invariant).
        return unsafe { (self.one)(r, hash) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        r.contains_by(hash, portable_group, portable_pair)
    }

    /// The parities of a two-line filter's line pair ([`portable_pair`]).
    #[inline(always)]
    pub(super) fn pair(self, a: &Line, b: &Line, w: &LineWindow) -> u32 {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`; the AVX-512 kernel carries the AVX2 pair,
        // which `available` offers only when AVX2 was detected too.
        return unsafe { (self.pair)(a, b, w) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        portable_pair(a, b, w)
    }

    #[inline(always)]
    pub(super) fn contains_many(self, r: &Ribbon, hashes: &[u64], out: &mut [bool]) {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as in `contains`.
        return unsafe { (self.many)(r, hashes, out) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        r.contains_many_by(hashes, out, portable_group, portable_pair)
    }
}

/// The four query entry points of a SIMD module, for the module's target
/// features: the query of any layout and of the two-line layout, single and
/// batched, each the portable code with the module's `group` and `pair`.
/// Each is `unsafe` only because the CPU must support those features.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
macro_rules! ribbon_entry_points {
    ($features:literal) => {
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains(r: &Ribbon, hash: u64) -> bool {
            // SAFETY (for the closures' calls): this function runs only with
            // the features `group` and `pair` need.
            r.contains_by(
                hash,
                |blocks, coeff| unsafe { group(blocks, coeff) },
                |a, b, w| unsafe { pair(a, b, w) },
            )
        }

        /// # Safety
        /// As for [`contains`].
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains_many(r: &Ribbon, hashes: &[u64], out: &mut [bool]) {
            // SAFETY: as in `contains`.
            r.contains_many_by(
                hashes,
                out,
                |blocks, coeff| unsafe { group(blocks, coeff) },
                |a, b, w| unsafe { pair(a, b, w) },
            )
        }

        /// # Safety
        /// As for [`contains`].
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains_lines<const R: u32>(r: &Ribbon, hash: u64) -> bool {
            // SAFETY: as in `contains`.
            r.contains_lines_by::<R>(hash, |a, b, w| unsafe { pair(a, b, w) })
        }

        /// # Safety
        /// As for [`contains`].
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains_many_lines<const R: u32>(r: &Ribbon, hashes: &[u64], out: &mut [bool]) {
            // SAFETY: as in `contains`.
            r.contains_many_lines_by::<R>(hashes, out, |a, b, w| unsafe { pair(a, b, w) })
        }
    };
}

/// The AVX-512 kernel: the portable query with [`avx512::group`] computing
/// the parities of a column group and [`avx512::pair`] those of a line pair.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx512 {
    use core::arch::x86_64::{
        _mm512_and_si512, _mm512_loadu_si512, _mm512_permutexvar_epi64, _mm512_popcnt_epi64,
        _mm512_set1_epi64, _mm512_srlv_epi64, _mm512_ternarylogic_epi64, _mm512_test_epi64_mask,
        _mm512_xor_si512,
    };

    use super::super::solution::GroupWords;
    use super::{Line, LineWindow, Ribbon};

    ribbon_entry_points!("avx512f,avx512vpopcntdq");

    /// The line-pair parities of the two-line layout, as
    /// [`portable_pair`](super::portable_pair) computes them: bit `j` is the
    /// parity of `(a[j] & c0) ^ ((a[w_j] >> s_j) & c1) ^ (b[j] & c2)`.
    ///
    /// One 64-byte load per line, one permute (`vpermq`) putting word `w_j`
    /// in lane `j` and one variable shift (`vpsrlvq`) bringing column `j`'s
    /// extra slots to its bottom, three ANDs, one three-way XOR
    /// (`vpternlogq`), `vpopcntq` and `vptestmq`.
    ///
    /// # Safety
    /// As for [`contains`].
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    #[inline]
    #[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
    pub(super) unsafe fn pair(a: &Line, b: &Line, w: &LineWindow) -> u32 {
        let (k, coeff) = (w.kind, w.coeff);
        // SAFETY: each `[u64; 8]` is 64 readable bytes, exactly what an
        // unaligned 512-bit load reads.
        let (va, vb, word, shift) = unsafe {
            (
                _mm512_loadu_si512(a.0.as_ptr().cast()),
                _mm512_loadu_si512(b.0.as_ptr().cast()),
                _mm512_loadu_si512(k.word.as_ptr().cast()),
                _mm512_loadu_si512(k.shift.as_ptr().cast()),
            )
        };
        // SAFETY: register-only intrinsics of the enabled features.
        unsafe {
            let extra = _mm512_srlv_epi64(_mm512_permutexvar_epi64(word, va), shift);
            let x0 = _mm512_and_si512(va, _mm512_set1_epi64(coeff[0] as i64));
            let x1 = _mm512_and_si512(extra, _mm512_set1_epi64(coeff[1] as i64));
            let x2 = _mm512_and_si512(vb, _mm512_set1_epi64(coeff[2] as i64));
            // 0x96: the truth table of x0 ^ x1 ^ x2.
            let ones = _mm512_popcnt_epi64(_mm512_ternarylogic_epi64::<0x96>(x0, x1, x2));
            _mm512_test_epi64_mask(ones, _mm512_set1_epi64(1)) as u32
        }
    }

    /// Bit `j` = parity of `(b0[j] & c0) ^ (b1[j] & c1) ^ (b2[j] & c2)`, as
    /// [`portable_group`](super::portable_group) computes it.
    ///
    /// # Safety
    /// As for [`contains`].
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    #[inline]
    #[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
    pub(super) unsafe fn group(blocks: GroupWords<'_>, coeff: [u64; 3]) -> u32 {
        let [b0, b1, b2] = blocks;
        // SAFETY: each `&[u64; 8]` is 64 readable bytes, exactly what an
        // unaligned 512-bit load reads.
        let (v0, v1, v2) = unsafe {
            (
                _mm512_loadu_si512(b0.as_ptr().cast()),
                _mm512_loadu_si512(b1.as_ptr().cast()),
                _mm512_loadu_si512(b2.as_ptr().cast()),
            )
        };
        // SAFETY: register-only intrinsics of the enabled features.
        unsafe {
            let x0 = _mm512_and_si512(v0, _mm512_set1_epi64(coeff[0] as i64));
            let x1 = _mm512_and_si512(v1, _mm512_set1_epi64(coeff[1] as i64));
            let x2 = _mm512_and_si512(v2, _mm512_set1_epi64(coeff[2] as i64));
            let ones = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_xor_si512(x0, x1), x2));
            // Lane j's low bit is its parity; the test mask gathers them.
            _mm512_test_epi64_mask(ones, _mm512_set1_epi64(1)) as u32
        }
    }
}

/// The AVX2 kernel: the portable query with [`avx2::group`] computing the
/// parities, for CPUs without AVX-512's `vpopcntq`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_castsi256_ps, _mm256_loadu_si256, _mm256_movemask_ps,
        _mm256_permutevar8x32_epi32, _mm256_set1_epi64x, _mm256_setr_epi32, _mm256_slli_epi32,
        _mm256_slli_epi64, _mm256_srli_epi64, _mm256_srlv_epi64, _mm256_xor_si256,
    };

    use super::super::solution::GroupWords;
    use super::{Line, LineWindow, Ribbon};

    ribbon_entry_points!("avx2");

    /// The line-pair parities of the two-line layout, as
    /// [`portable_pair`](super::portable_pair) computes them: bit `j` is the
    /// parity of `(a[j] & c0) ^ ((a[w_j] >> s_j) & c1) ^ (b[j] & c2)`.
    ///
    /// Each line is two 256-bit loads (the line is one aligned 64-byte
    /// `Line`); the spare words are in line A's upper half, so one `vpermd`
    /// per half puts word `w_j` in lane `j` and one variable shift
    /// (`vpsrlvq`) brings column `j`'s extra slots to its bottom, then the
    /// same fold as [`group`].
    ///
    /// # Safety
    /// As for [`contains`].
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
    pub(super) unsafe fn pair(a: &Line, b: &Line, w: &LineWindow) -> u32 {
        let (k, coeff) = (w.kind, w.coeff);
        // SAFETY: each `[u64; 8]` (and `[u32; 16]`) is 64 readable bytes;
        // the two unaligned 256-bit loads read its first and second 32.
        let load = |x: &[u64; 8], half: usize| unsafe {
            _mm256_loadu_si256(x[4 * half..].as_ptr().cast::<__m256i>())
        };
        // SAFETY: as above, for the kind's 32-bit word indices.
        let index =
            |half: usize| unsafe { _mm256_loadu_si256(k.word32[8 * half..].as_ptr().cast::<__m256i>()) };
        // SAFETY: register-only intrinsics of the enabled feature.
        unsafe {
            let ca = _mm256_set1_epi64x(coeff[0] as i64);
            let ch = _mm256_set1_epi64x(coeff[1] as i64);
            let cb = _mm256_set1_epi64x(coeff[2] as i64);
            let spare = load(&a.0, 1);
            let half = |h: usize| {
                let extra =
                    _mm256_srlv_epi64(_mm256_permutevar8x32_epi32(spare, index(h)), load(&k.shift, h));
                let x0 = _mm256_and_si256(load(&a.0, h), ca);
                let x1 = _mm256_and_si256(extra, ch);
                let x2 = _mm256_and_si256(load(&b.0, h), cb);
                _mm256_xor_si256(_mm256_xor_si256(x0, x1), x2)
            };
            fold(half(0), half(1))
        }
    }

    /// Bit `j` = parity of `(b0[j] & c0) ^ (b1[j] & c1) ^ (b2[j] & c2)`, as
    /// [`portable_group`](super::portable_group) computes it.
    ///
    /// Columns 0..4 and 4..8 are two registers of four 64-bit lanes. One
    /// delta swap folds both into one register (lane `i`: column `i`'s 64
    /// bits folded to 32 in the low half, column `i + 4`'s in the high
    /// half); five shift-XOR steps fold every 32-bit half into its top bit,
    /// a `vpermd` puts the halves in column order and `vmovmskps` gathers
    /// the eight top bits. About 35 instructions where the portable fold,
    /// vectorized with SSE2, takes about 100.
    ///
    /// # Safety
    /// As for [`contains`].
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
    pub(super) unsafe fn group(blocks: GroupWords<'_>, coeff: [u64; 3]) -> u32 {
        let [b0, b1, b2] = blocks;
        // SAFETY: each `&[u64; 8]` is 64 readable bytes; the two unaligned
        // 256-bit loads per block read its first and second 32 bytes.
        let load = |b: &[u64; 8], half: usize| unsafe {
            _mm256_loadu_si256(b[4 * half..].as_ptr().cast::<__m256i>())
        };
        // SAFETY: register-only intrinsics of the enabled feature.
        unsafe {
            let c0 = _mm256_set1_epi64x(coeff[0] as i64);
            let c1 = _mm256_set1_epi64x(coeff[1] as i64);
            let c2 = _mm256_set1_epi64x(coeff[2] as i64);
            let half = |h: usize| {
                let x0 = _mm256_and_si256(load(b0, h), c0);
                let x1 = _mm256_and_si256(load(b1, h), c1);
                let x2 = _mm256_and_si256(load(b2, h), c2);
                _mm256_xor_si256(_mm256_xor_si256(x0, x1), x2)
            };
            fold(half(0), half(1))
        }
    }

    /// The parities of the eight 64-bit lanes of `lo` (columns 0..4) and
    /// `hi` (columns 4..8) as the bits of a byte.
    ///
    /// # Safety
    /// As for [`contains`].
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(unused_unsafe)] // intrinsics are safe inside `target_feature` functions on newer compilers
    unsafe fn fold(lo: __m256i, hi: __m256i) -> u32 {
        // SAFETY: register-only intrinsics of the enabled feature.
        unsafe {
            // Delta swap: t = (lo_high ^ hi_low) in the low half of each lane.
            let low32 = _mm256_set1_epi64x(0xffff_ffff);
            let t = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi64::<32>(lo), hi), low32);
            let mut m = _mm256_xor_si256(
                _mm256_xor_si256(lo, hi),
                _mm256_xor_si256(t, _mm256_slli_epi64::<32>(t)),
            );
            // Fold each 32-bit element into its top bit.
            m = _mm256_xor_si256(m, _mm256_slli_epi32::<16>(m));
            m = _mm256_xor_si256(m, _mm256_slli_epi32::<8>(m));
            m = _mm256_xor_si256(m, _mm256_slli_epi32::<4>(m));
            m = _mm256_xor_si256(m, _mm256_slli_epi32::<2>(m));
            m = _mm256_xor_si256(m, _mm256_slli_epi32::<1>(m));
            // Elements are (col 0, col 4, col 1, col 5, ...): put them in order.
            let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
            let m = _mm256_permutevar8x32_epi32(m, order);
            _mm256_movemask_ps(_mm256_castsi256_ps(m)) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    use super::super::solution::GROUP;
    use super::*;
    use crate::hash::remix;
    use crate::RibbonParams;

    /// The SIMD group parities equal the portable one on dense, sparse and
    /// random words and coefficients.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn simd_groups_agree_with_portable() {
        let avx512 =
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vpopcntdq");
        let avx2 = std::is_x86_feature_detected!("avx2");
        let mut seen = [false; 2];
        for i in 0..20_000u64 {
            let word = |j: u64| {
                let x = remix(i * 64 + j, 5);
                match i % 4 {
                    0 => x,
                    1 => x & remix(x, 1) & remix(x, 2), // sparse
                    2 => x | remix(x, 1),               // dense
                    _ => u64::MAX * (x & 1),
                }
            };
            let b: [[u64; GROUP]; 3] =
                core::array::from_fn(|k| core::array::from_fn(|j| word((k * 8 + j) as u64)));
            let coeff = [remix(i, 7), remix(i, 8), if i % 3 == 0 { 0 } else { remix(i, 9) }];
            let expected = portable_group([&b[0], &b[1], &b[2]], coeff);
            if avx512 {
                // SAFETY: both features were detected above.
                let got = unsafe { avx512::group([&b[0], &b[1], &b[2]], coeff) };
                assert_eq!(got, expected, "avx512 i {i}");
            }
            if avx2 {
                // SAFETY: detected above.
                let got = unsafe { avx2::group([&b[0], &b[1], &b[2]], coeff) };
                assert_eq!(got, expected, "avx2 i {i}");
            }
            seen[(expected == 0) as usize] = true;
        }
        assert!(seen[0] && seen[1]);
    }

    /// The SIMD line-pair parities equal the portable ones on dense, sparse
    /// and random lines, for coefficients at every offset of a line.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn simd_pairs_agree_with_portable() {
        use super::super::line_kind::LineGeometry;
        let geometries = [
            LineGeometry::uniform(6).unwrap(),
            LineGeometry::uniform(7).unwrap(),
            LineGeometry::uniform(8).unwrap(),
            LineGeometry::new(6, 200).unwrap(),
            LineGeometry::new(7, 100).unwrap(),
        ];
        let avx512 =
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vpopcntdq");
        let avx2 = std::is_x86_feature_detected!("avx2");
        let mut seen = [false; 2];
        for i in 0..20_000u64 {
            let word = |j: u64| {
                let x = remix(i * 64 + j, 6);
                match i % 4 {
                    0 => x,
                    1 => x & remix(x, 1) & remix(x, 2), // sparse
                    2 => x | remix(x, 1),               // dense
                    _ => u64::MAX * (x & 1),
                }
            };
            let a = Line(core::array::from_fn(|j| word(j as u64)));
            let b = Line(core::array::from_fn(|j| word(8 + j as u64)));
            let g = &geometries[(i % 5) as usize];
            let lines = 6;
            let p = g.place(lines, (i as usize * 7) % (g.slots(lines) - 63));
            let window = LineWindow::new(0, p, remix(i, 3) | 1);
            // Bits past the key's columns are meaningless (masked by callers).
            let expected = portable_pair(&a, &b, &window) & window.mask;
            if avx2 {
                // SAFETY: AVX2 was detected above.
                let got = unsafe { avx2::pair(&a, &b, &window) };
                assert_eq!(got & window.mask, expected, "avx2 i {i}");
            }
            if avx512 {
                // SAFETY: both features were detected above.
                let got = unsafe { avx512::pair(&a, &b, &window) };
                assert_eq!(got & window.mask, expected, "avx512 i {i}");
            }
            seen[(expected == 0) as usize] = true;
        }
        assert!(seen[0] && seen[1]);
    }

    /// Every available kernel answers exactly as the portable one, single
    /// and batched, for several column counts (fractional ones included).
    #[test]
    fn every_available_kernel_agrees_with_portable() {
        let keys: Vec<u64> = (0..30_000u64).map(|i| remix(i, 11)).collect();
        let queries: Vec<u64> = (0..60_000u64).map(|i| remix(i, 11) ^ (i & 1) << 63).collect();
        for params in [
            RibbonParams::with_result_bits(1).unwrap(),
            RibbonParams::with_result_bits(7).unwrap(),
            RibbonParams::with_bits_per_key(9.5).unwrap(),
            RibbonParams::with_result_bits(20).unwrap(),
            RibbonParams::with_result_bits(32).unwrap(),
            RibbonParams::with_result_bits(7)
                .unwrap()
                .with_two_line_layout()
                .unwrap(),
            RibbonParams::with_result_bits(6).unwrap(),
            RibbonParams::with_result_bits(8).unwrap(),
            RibbonParams::with_fpr(0.01).unwrap(),
            RibbonParams::with_fpr(0.005).unwrap().without_bumping(),
            // The layouts without bumping (the ones above are bumped).
            RibbonParams::with_result_bits(7).unwrap().without_bumping(),
            RibbonParams::with_bits_per_key(9.5).unwrap().without_bumping(),
        ] {
            let f = Ribbon::build_with(bytemuck::cast_slice(&keys), &params).unwrap();
            let portable: Vec<bool> = queries
                .iter()
                .map(|&h| f.contains_by(h, portable_group, portable_pair))
                .collect();
            assert!(portable[..1000].iter().any(|&b| b));
            // The kernels made for the other layout too: they answer through
            // the portable fallback, which must agree as well.
            for shape in [None, Some(0), Some(6), Some(7), Some(8)] {
                for kernel in Kernel::runnable(shape) {
                    let mut out = alloc::vec![false; queries.len()];
                    kernel.contains_many(&f, &queries, &mut out);
                    assert_eq!(out, portable, "{kernel:?} batched, shape {shape:?}");
                    for (&h, &p) in queries.iter().zip(&portable) {
                        assert_eq!(kernel.contains(&f, h), p, "{kernel:?}, shape {shape:?}");
                    }
                }
            }
            // And the filter's own entry points use one of them.
            let mut out = alloc::vec![false; queries.len()];
            crate::Filter::contains_hashes(&f, bytemuck::cast_slice(&queries), &mut out);
            assert_eq!(out, portable);
        }
    }

    /// The kernel a filter gets is the one the shared choice makes, and a
    /// CPU with AVX2 gets a SIMD kernel unless `AMQ_KERNEL` says otherwise.
    #[test]
    fn detect_prefers_simd_within_the_cap() {
        for two_lines in [None, Some(0), Some(7)] {
            let names: Vec<&str> = Kernel::runnable(two_lines).iter().map(|k| k.name()).collect();
            assert!(names.contains(&Kernel::detect(two_lines).name()));
            #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
            {
                let chosen = crate::simd::choose(
                    &Kernel::candidates(two_lines),
                    Kernel::portable(two_lines),
                    crate::simd::cap(),
                );
                assert_eq!(Kernel::detect(two_lines).name(), chosen.name());
                #[cfg(feature = "std")]
                if std::is_x86_feature_detected!("avx2") && crate::simd::cap() != crate::simd::Level::Portable
                {
                    assert_ne!(Kernel::detect(two_lines).name(), "portable");
                }
            }
        }
    }
}
