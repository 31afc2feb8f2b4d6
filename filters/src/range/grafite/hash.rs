//! Grafite's locality-preserving hash onto the reduced universe `0..r`:
//! `h(x) = (q(x >> k) + (x mod 2^k)) mod r`, with `q` a pairwise-independent
//! hash of the block number onto `0..r` and blocks of `s = 2^k` keys,
//! `s = 2^⌊log2 r⌋` (so `r/2 < s ≤ r`).
//!
//! Grafite's paper (Costa, Ferragina, Vinciguerra, SIGMOD 2024) uses blocks
//! of exactly `r` keys, `h(x) = (q(⌊x/r⌋) + x mod r) mod r`. Blocks of a
//! power of two at most `r` keep what its proof needs (within a block `h`
//! is a rotation of `0..r`, one-to-one because `s ≤ r`) and take the block
//! and offset by a shift and a mask; the final `mod r` of a sum below `2r`
//! is one conditional subtraction. No division or `%` anywhere.
//!
//! `q` is Dietzfelbinger's multiply-shift, strongly universal (pairwise
//! independent) from 64-bit keys to 64-bit values ("Universal hashing and
//! k-wise independent random variables via integer arithmetic without
//! primes", STACS 1996; Thorup, "High Speed Hashing for Integers and
//! Strings", 2015): `v(i) = ((a·i + b) mod 2^127) >> 63` for 127-bit `a`
//! and `b`; then `q(i) = ⌊f(v(i))·r / 2^64⌋`, where `f` is SplitMix64's
//! finaliser ([`remix`] with seed 0), a fixed bijection of `u64`. For two
//! blocks `i ≠ j`, `v(i)` and `v(j)` are independent and uniform over
//! `0..2^64`, and so are `f(v(i))` and `f(v(j))` (a bijection keeps the pair
//! uniform), so `Pr[q(i) − q(j) ≡ d (mod r)] ≤ max_c Pr[q(i) = c] ≤
//! (1 + r/2^64) / r` for every `d`: the `1/r` of the paper's proof, up to a
//! factor below `1 + 2^-2` (below `1 + 2^-20` for `r < 2^44`), kept in the
//! bound ([`fpr_bound`](super::fpr_bound)).
//!
//! Why `f`: multiply-shift alone is linear in the block number, so for one
//! filter (one `a`) the starts of blocks `i, i + 1, i + 2, …` step by nearly
//! the same amount. Keys and queries in arithmetic progression over blocks
//! (ids, timestamps) would then be false positives all together or not at
//! all: the bound holds on average over seeds, but one filter's measured
//! rate would swing between 0 and 1. The finaliser breaks the progression,
//! and the proof never needed linearity.
//!
//! `a` and `b` come from the filter's 64-bit seed through SplitMix64's
//! finaliser ([`remix`]); the guarantee holds for queries chosen without
//! knowing the seed.

use crate::hash::{reduce, remix};

/// 127 low bits.
const MASK_127: u128 = (1 << 127) - 1;

/// The hash of one filter: its multiply-shift constants, reduced universe
/// and block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalityHash {
    a: u128,
    b: u128,
    /// The reduced universe `r` (at least 1, at most 2^62).
    universe: u64,
    /// `k`: blocks of `2^k` keys.
    block_bits: u32,
}

impl LocalityHash {
    /// The hash with seed `seed` onto `0..universe` (`1..=2^62`).
    pub(crate) fn new(seed: u64, universe: u64) -> Self {
        let word = |i| remix(seed, i) as u128;
        LocalityHash {
            a: (word(1) << 64 | word(2)) & MASK_127,
            b: (word(3) << 64 | word(4)) & MASK_127,
            universe,
            block_bits: universe.max(1).ilog2(),
        }
    }

    /// The reduced universe `r`.
    #[inline(always)]
    pub(crate) fn universe(&self) -> u64 {
        self.universe
    }

    /// `k`: a block holds `2^k` keys.
    #[inline(always)]
    pub(crate) fn block_bits(&self) -> u32 {
        self.block_bits
    }

    /// Where block `block` starts in `0..r`: `q(block)`.
    #[inline(always)]
    pub(crate) fn block_start(&self, block: u64) -> u64 {
        let v = (self.a.wrapping_mul(block as u128).wrapping_add(self.b) >> 63) as u64;
        reduce(remix(v, 0), self.universe)
    }

    /// `(start + offset) mod r`, for `start < r` and `offset < 2^k ≤ r`.
    #[inline(always)]
    pub(crate) fn rotate(&self, start: u64, offset: u64) -> u64 {
        let s = start + offset;
        if s >= self.universe {
            s - self.universe
        } else {
            s
        }
    }

    /// The offset of `x` in its block: `x mod 2^k`.
    #[inline(always)]
    pub(crate) fn offset(&self, x: u64) -> u64 {
        x & ((1u64 << self.block_bits) - 1)
    }

    /// `h(x)`.
    #[inline(always)]
    pub(crate) fn hash(&self, x: u64) -> u64 {
        self.rotate(self.block_start(x >> self.block_bits), self.offset(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_rotations_and_values_stay_in_the_universe() {
        for universe in [1u64, 2, 3, 1000, 1 << 20, (1 << 40) + 12_345, 1 << 62] {
            let h = LocalityHash::new(7, universe);
            let s = 1u64 << h.block_bits();
            assert!(s <= universe && 2 * s > universe, "{universe}");
            for i in 0..2_000u64 {
                let x = remix(i, universe);
                let y = h.hash(x);
                assert!(y < universe);
                // The next key of the block is the next value, mod r.
                if h.offset(x) + 1 < s {
                    assert_eq!(h.hash(x + 1), (y + 1) % universe);
                }
            }
        }
    }

    /// The differences of two blocks' starts are spread evenly: a chi-square
    /// over 64 buckets of `(q(i) − q(i + 1)) mod r`.
    #[test]
    fn block_start_differences_look_uniform() {
        let universe = 1_000_003u64;
        let h = LocalityHash::new(42, universe);
        let mut counts = [0u32; 64];
        let trials = 64_000u64;
        for i in 0..trials {
            let d = (h.block_start(i) + universe - h.block_start(i + 1)) % universe;
            counts[(d * 64 / universe) as usize] += 1;
        }
        let expected = trials as f64 / 64.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 120.0, "chi-square {chi2} over 63 degrees of freedom");
    }
}
