//! How one key hash becomes one equation of the Ribbon system.
//!
//! Everything a key contributes comes from its single 64-bit
//! [`hash_key`](crate::hash_key) value `h`, never from hashing the key again:
//!
//! * `a = h · KEY_MUL` (odd, so a bijection: equal `a` means equal `h`). Its
//!   high bits pick the **shard** (`reduce(a, num_shards)`), and its low 32
//!   bits are the **result** (fingerprint), masked to the key's column count.
//!   Neither depends on the shard's seed, so keys are grouped by shard (and
//!   deduplicated) once. The multiplication is enough here because `h` is
//!   already a hash; it also spreads hashes that are not (a caller passing
//!   0, 1, 2, ...) over all shards instead of piling them into the first.
//! * `p = remix(h, START_SEED)`, then `q = p · (SEED_MUL + 2·shard_seed)`.
//!   The high bits of `q` pick the **start** slot in the shard
//!   (`reduce(q, num_starts)`), and the 128 **coefficient** bits are
//!   `q · COEFF_MUL` (a 128-bit product, which spreads `q` over all 128 bits)
//!   with bit 0 forced to 1, so the row's leading 1 is at its start. `p` is a
//!   full remix of `h`, so start and coefficients are unrelated to shard and
//!   result. A shard whose system is unsolvable is rebuilt with the next
//!   seed, which draws fresh starts and coefficients. Fresh starts matter:
//!   measurement shows most failures come from where keys start (too many
//!   rows bunched before the end of the band), and redrawing only the
//!   coefficients rarely helps.
//!
//! Why the seed enters by a multiplication and not through the remix: `p`
//! does not depend on the shard, so a query computes it (three dependent
//! multiplications) while the shard descriptor is still loading, and only
//! one multiplication by the seed's odd multiplier is left after the load.
//! Two seeds give `q` values that differ by `2·Δseed·p`, a fresh random
//! offset per key, so the keys that bunched up under one seed are spread
//! independently under the next (the retry counts did not change when this
//! replaced a full remix per seed; see the module docs).
//!
//! Schema-critical: changing anything here changes which bits a serialized
//! filter must hold.

use crate::hash::{reduce, remix};

/// Width `w` of a coefficient row in slots: one `u128`.
pub(crate) const ROW_WIDTH: usize = 128;

/// Odd multiplier of the first step (the 64-bit golden ratio).
const KEY_MUL: u64 = 0x9e37_79b9_7f4a_7c15;
/// Seed of the second remix `p`.
const START_SEED: u64 = 0x5249_4242_4f4e_2d71; // "q-NOBBIR"
/// Odd multiplier of `p` under shard seed 0 (seed `s` uses `SEED_MUL + 2s`,
/// also odd, so every seed's step is a bijection).
const SEED_MUL: u64 = 0xd6e8_feb8_6659_fd93;
/// Odd 128-bit multiplier that spreads 64 random bits over a 128-bit row.
const COEFF_MUL: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;

/// The first step `a` of a key hash: it fixes shard and result.
#[inline(always)]
pub(crate) fn mixed(hash: u64) -> u64 {
    hash.wrapping_mul(KEY_MUL)
}

/// The key hash back from `a` (`KEY_MUL` is odd, so it has an inverse
/// modulo 2^64), so construction can keep only `a` per key.
#[inline(always)]
pub(crate) fn unmixed(a: u64) -> u64 {
    a.wrapping_mul(KEY_MUL_INVERSE)
}

/// `KEY_MUL⁻¹ mod 2^64`, by Newton's iteration `x ← x(2 - m x)`, each step
/// doubling the correct low bits (3 → 6 → ... → 96 ≥ 64).
const KEY_MUL_INVERSE: u64 = {
    let mut x = KEY_MUL; // correct to 3 bits: m·m ≡ 1 mod 8 for odd m
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(KEY_MUL.wrapping_mul(x)));
        i += 1;
    }
    x
};

/// The shard of a key whose first remix is `a`.
#[inline(always)]
pub(crate) fn shard_of(a: u64, num_shards: u64) -> usize {
    reduce(a, num_shards) as usize
}

/// The fingerprint bits of the key (all 32; callers mask to their columns).
#[inline(always)]
pub(crate) fn result_of(a: u64) -> u32 {
    a as u32
}

/// The seed-independent second step `p` of a key hash.
#[inline(always)]
pub(crate) fn spread(hash: u64) -> u64 {
    remix(hash, START_SEED)
}

/// The step `q` under the shard's seed: it fixes start and coefficients.
#[inline(always)]
pub(crate) fn seeded(p: u64, seed: u8) -> u64 {
    p.wrapping_mul(SEED_MUL.wrapping_add(2 * seed as u64))
}

/// The start slot in its shard of a key whose seeded step is `q`.
#[inline(always)]
pub(crate) fn start_of(q: u64, num_starts: u64) -> usize {
    reduce(q, num_starts) as usize
}

/// The 128 coefficient bits, bit 0 set, of a key whose seeded step is `q`.
#[inline(always)]
pub(crate) fn coeff_of(q: u64) -> u128 {
    (q as u128).wrapping_mul(COEFF_MUL) | 1
}

/// What a query computes before it reads the filter, the same in both
/// layouts: the key's shard (through `shard_at`, which gives shard `i`'s
/// first unit, its end unit and its seed; a unit is a 64-slot block or a
/// line, and `slots_of(units)` the slots of so many) and, in it, the row's
/// start among the shard's `slots_of(units) − (row_width − 1)` starts.
/// Returns the shard's first unit, its units, the shard-local start, the
/// seeded hash (its coefficients: [`coeff_of`]) and the mixed hash (its
/// fingerprint: [`result_of`]); `None` when there are no shards or the
/// key's shard is empty.
#[inline(always)]
pub(crate) fn locate_in_shard(
    num_shards: usize,
    shard_at: impl Fn(usize) -> (usize, usize, u8),
    hash: u64,
    slots_of: impl Fn(usize) -> usize,
    row_width: usize,
) -> Option<(usize, usize, usize, u64, u64)> {
    if num_shards == 0 {
        return None;
    }
    let a = mixed(hash);
    // Independent of the shard: overlaps with the shard table's load.
    let p = spread(hash);
    let (first, end, seed) = shard_at(shard_of(a, num_shards as u64));
    let units = end - first;
    if units == 0 {
        return None;
    }
    let q = seeded(p, seed);
    let start = start_of(q, (slots_of(units) - (row_width - 1)) as u64);
    Some((first, units, start, q, a))
}

/// One key's equation: `coeff · Z[start .. start + w] = result`, with `w`
/// coefficient bits in a `C`: 128 (`u128`, the blocked layout) or 64
/// (`u64`, the two-line layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row<C = u128> {
    /// First slot the row covers; the row's bit 0 is this slot.
    pub(crate) start: usize,
    /// The coefficient bits, bit 0 always set.
    pub(crate) coeff: C,
    /// The fingerprint bits, masked to the key's column count.
    pub(crate) result: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_is_monotone_in_a_and_start_in_q() {
        let mut last = (0, 0);
        for i in 0..1000u64 {
            let x = i.wrapping_mul(u64::MAX / 1000);
            let at = (shard_of(x, 3), start_of(x, 500));
            assert!(at.0 < 3 && at.1 < 500);
            assert!(at.0 >= last.0 && at.1 >= last.1, "{at:?} after {last:?}");
            last = at;
        }
    }

    /// Pins the derivation (schema-critical: a serialized filter's bits
    /// depend on it). Values computed independently with Python integers.
    #[test]
    fn derivation_is_pinned() {
        let p = spread(1);
        assert_eq!(p, 0xc43e_5345_b8ee_dada);
        assert_eq!(seeded(p, 0), 0x7d63_c7ba_313b_1d2e);
        assert_eq!(seeded(p, 1), 0x05e0_6e45_a318_d2e2);
        assert_eq!(coeff_of(seeded(p, 0)), 0x5ce3_728a_6833_a773_f8d8_1378_eb9e_fa87);
        assert_eq!(start_of(seeded(p, 0), 8065), 3950);
    }

    #[test]
    fn unmixed_inverts_mixed() {
        for h in [0u64, 1, 2, u64::MAX, 0x1234_5678_9abc_def0] {
            assert_eq!(unmixed(mixed(h)), h);
        }
    }

    #[test]
    fn coefficients_use_all_128_bits_and_depend_on_the_seed() {
        let (mut or_all, mut and_all) = (0u128, u128::MAX);
        for i in 0..64u64 {
            let c = coeff_of(seeded(spread(i), 0));
            or_all |= c;
            and_all &= c;
            assert_ne!(c, coeff_of(seeded(spread(i), 1)));
        }
        assert_eq!(or_all, u128::MAX);
        assert_eq!(and_all, 1);
    }
}
