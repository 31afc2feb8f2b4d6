//! False-positive-rate and sizing formulas, each with its source.
//!
//! `no_std`: floating-point functions come from `libm`.

use libm::{exp, log, pow};

/// `ln 2`.
pub const LN_2: f64 = core::f64::consts::LN_2;

/// FPR of a standard Bloom filter with `m` bits, `k` probes and `n` keys:
/// `(1 - (1 - 1/m)^(k n))^k` (Bloom 1970; Broder & Mitzenmacher 2004,
/// "Network Applications of Bloom Filters", section 2.1). For large `m` this is
/// the familiar `(1 - e^(-k n / m))^k`.
///
/// Domain: any values. No keys give 0; no bits (`m = 0`) or no probes
/// (`k = 0`) with keys give 1.
///
/// ```
/// let p = amq::math::standard_bloom_fpr(10_000, 7, 1_000);
/// assert!((p - 0.00819).abs() < 0.0001);
/// ```
pub fn standard_bloom_fpr(m_bits: u64, k: u32, n: u64) -> f64 {
    if n == 0 || m_bits == 0 || k == 0 {
        return if n == 0 { 0.0 } else { 1.0 };
    }
    // (1 - 1/m)^(kn) = exp(kn * ln(1 - 1/m)); ln_1p keeps precision for big m.
    let zero_prob = exp(k as f64 * n as f64 * libm::log1p(-1.0 / m_bits as f64));
    pow(1.0 - zero_prob, k as f64)
}

/// Bits per key of an optimal standard Bloom filter for target FPR `p`:
/// `-ln p / (ln 2)^2 ≈ 1.44 log2(1/p)` (Broder & Mitzenmacher 2004, eq. 2).
///
/// ```
/// let b = amq::math::bloom_bits_per_key_for_fpr(0.01);
/// assert!((b - 9.585).abs() < 0.01);
/// ```
pub fn bloom_bits_per_key_for_fpr(p: f64) -> f64 {
    -log(p) / (LN_2 * LN_2)
}

/// The number of probes that minimises the FPR of a standard Bloom filter
/// with `bits_per_key` bits per key: `k = (m/n) ln 2`, rounded and clamped to
/// `1..=30`.
///
/// ```
/// assert_eq!(amq::math::optimal_bloom_probes(10.0), 7);
/// assert_eq!(amq::math::optimal_bloom_probes(0.1), 1);
/// assert_eq!(amq::math::optimal_bloom_probes(1000.0), 30);
/// ```
pub fn optimal_bloom_probes(bits_per_key: f64) -> u32 {
    let k = libm::round(bits_per_key * LN_2);
    if k < 1.0 {
        1
    } else if k > 30.0 {
        30
    } else {
        k as u32
    }
}

/// FPR of a blocked (cache-local) Bloom filter: keys land in `blocks` blocks
/// of `block_bits` bits, and all `k` probes of a key stay in its block.
///
/// The number of keys per block is Poisson with mean `λ = n / blocks`, and a
/// block holding `j` keys answers a miss with the standard-Bloom FPR of a
/// `block_bits`-bit filter holding `j` keys. So
/// `FPR = Σ_j Pois(j; λ) · (1 - (1 - 1/B)^(k j))^k`
/// (Putze, Sanders & Singler 2007, "Cache-, Hash- and Space-Efficient Bloom
/// Filters", section 3; the same model as RocksDB's `CacheLocalFpRate`).
/// Overloaded blocks cost more than underloaded ones save, which is why a
/// blocked filter needs a little more space than a standard one for equal FPR.
///
/// Domain: every argument may be any value; none panics or divides by zero.
/// With no keys (`n = 0`) the FPR is 0. A filter without bits
/// (`total_bits = 0` or `block_bits = 0`) or without probes (`k = 0`)
/// answers `true` to every query, so its FPR is 1. `total_bits` below
/// `block_bits` counts as one block.
///
/// ```
/// use amq::math::blocked_bloom_fpr;
/// let p = blocked_bloom_fpr(1 << 20, 512, 6, (1 << 20) / 10);
/// assert!((p - 0.00957).abs() < 0.00002, "{p}");
/// assert_eq!(blocked_bloom_fpr(1 << 20, 0, 6, 100), 1.0);
/// assert_eq!(blocked_bloom_fpr(0, 512, 6, 100), 1.0);
/// assert_eq!(blocked_bloom_fpr(1 << 20, 512, 0, 100), 1.0);
/// assert_eq!(blocked_bloom_fpr(0, 0, 0, 0), 0.0);
/// ```
pub fn blocked_bloom_fpr(total_bits: u64, block_bits: u32, k: u32, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    if total_bits == 0 || block_bits == 0 || k == 0 {
        return 1.0;
    }
    let blocks = (total_bits / block_bits as u64).max(1) as f64;
    let lambda = n as f64 / blocks;
    // At more than 64·B keys per block even the low tail of the Poisson
    // (λ - 12√λ ≥ 40·B) sets all but e^-40 of a block's bits: the FPR is 1.0
    // in f64. Answer so directly: the sum below takes O(λ) steps, which for a
    // num_keys read from untrusted bytes could be 2^64.
    if lambda > 64.0 * block_bits as f64 {
        return 1.0;
    }
    let keep = libm::log1p(-1.0 / block_bits as f64); // ln(1 - 1/B)
    poisson_mixture(lambda, |j| pow(1.0 - exp(k as f64 * j as f64 * keep), k as f64))
}

/// `Σ_j Pois(j; λ) · fpr(j)`: the FPR of a filter whose keys fall into blocks
/// at Poisson rate `λ` per block, when a block holding `j` keys answers a miss
/// with probability `fpr(j)`. The terms are summed within 12 standard
/// deviations of the mean (`λ ± (12√λ + 12)`), `O(√λ)` of them, where all but
/// about `e^-70` of the mass lies; the mass outside counts as a sure match.
/// The caller bounds `λ`.
fn poisson_mixture(lambda: f64, fpr: impl Fn(u64) -> f64) -> f64 {
    let mut total = 0.0;
    let mut mass = 0.0;
    let spread = 12.0 * libm::sqrt(lambda) + 12.0;
    let lo = (lambda - spread).max(0.0) as u64;
    let hi = (lambda + spread) as u64;
    // ln Pois(lo; λ) = −λ + lo·ln λ − ln lo!
    let mut ln_pj = match lo {
        0 => -lambda,
        _ => -lambda + lo as f64 * log(lambda) - libm::lgamma(lo as f64 + 1.0),
    };
    for j in lo..=hi {
        if j > lo {
            ln_pj += log(lambda) - log(j as f64);
        }
        let pj = exp(ln_pj);
        total += pj * fpr(j);
        mass += pj;
    }
    // Whatever probability mass lies beyond `hi` counts as a sure match.
    // Rounding in the sums can push the total a hair above 1.
    (total + (1.0 - mass).max(0.0)).min(1.0)
}

/// FPR of a split-block Bloom filter (Apache Parquet's): `blocks` blocks of
/// eight 32-bit words, every key setting one bit in each word of one block.
///
/// Keys per block are Poisson with mean `λ = n / blocks`; in a block holding
/// `j` keys each word has a given bit clear with probability `(31/32)^j`, and
/// a miss must find its bit set in all eight words, so
/// `FPR = Σ_j Pois(j; λ) · (1 - (31/32)^j)^8`
/// (the blocked-filter model of Putze, Sanders & Singler 2007, section 3,
/// with the split block's one probe per word).
///
/// It reproduces the table of the Parquet specification (`BloomFilter.md`,
/// "Sizing an SBBF"): 6.0, 10.5, 16.9, 26.4 and 41 bits per value give
/// 10%, 1%, 0.1%, 0.01% and 0.001% to within 1.5% of each figure, and it
/// matches measurement (`filters/tests/parquet.rs`).
///
/// Domain: any values. No keys give 0; no blocks with keys give 1.
///
/// ```
/// use amq::math::split_block_bloom_fpr;
/// // 10.5 bits per value, the specification's figure for 1%.
/// let n = 1_000_000u64;
/// let blocks = (n as f64 * 10.5 / 256.0) as u64;
/// let p = split_block_bloom_fpr(blocks, n);
/// assert!((p - 0.0101).abs() < 0.0002, "{p}");
/// assert_eq!(split_block_bloom_fpr(0, 5), 1.0);
/// assert_eq!(split_block_bloom_fpr(7, 0), 0.0);
/// ```
pub fn split_block_bloom_fpr(blocks: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    if blocks == 0 {
        return 1.0;
    }
    let lambda = n as f64 / blocks as f64;
    // Past 64 keys per bit of a word, (31/32)^j < e^-64 even in the low
    // tail: the FPR is 1.0 in f64. Answered directly, as in
    // `blocked_bloom_fpr`, to bound the sum's length.
    if lambda > 64.0 * 32.0 {
        return 1.0;
    }
    let keep = libm::log1p(-1.0 / 32.0); // ln(31/32)
    poisson_mixture(lambda, |j| pow(1.0 - exp(j as f64 * keep), 8.0))
}

/// Bits per key at the information-theoretic minimum for FPR `p`: `log2(1/p)`.
///
/// ```
/// assert_eq!(amq::math::min_bits_per_key(1.0 / 256.0), 8.0);
/// ```
pub fn min_bits_per_key(p: f64) -> f64 {
    -libm::log2(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_is_worse_than_standard_but_close() {
        let n = 100_000;
        let m = n * 10;
        let std = standard_bloom_fpr(m, 7, n);
        let blocked = blocked_bloom_fpr(m, 512, 6, n);
        assert!(std < blocked && blocked < 1.3 * std, "{std} {blocked}");
    }

    #[test]
    fn standard_formula_matches_limit() {
        let p = standard_bloom_fpr(1 << 30, 7, (1 << 30) / 10);
        let limit = pow(1.0 - exp(-0.7), 7.0);
        assert!((p - limit).abs() < 1e-9);
        assert_eq!(standard_bloom_fpr(64, 3, 0), 0.0);
    }

    #[test]
    fn blocked_formula_stays_a_probability_and_is_fast_when_overloaded() {
        for n in [1, 100, 10_000, 1 << 20, 1 << 40, u64::MAX] {
            for k in [1, 6, 24] {
                let p = blocked_bloom_fpr(512, 512, k, n);
                assert!((0.0..=1.0).contains(&p), "n {n} k {k}: {p}");
            }
        }
        // u64::MAX keys in one block would take 2^64 steps without the cut-off.
        assert_eq!(blocked_bloom_fpr(512, 512, 6, u64::MAX), 1.0);
        // Just below the cut-off the sum already gives 1.0.
        assert_eq!(blocked_bloom_fpr(512, 512, 1, 64 * 512), 1.0);
    }

    /// The Parquet specification's sizing table ("Sizing an SBBF"): bits of
    /// space per value and the false positive probability they give.
    #[test]
    fn split_block_formula_reproduces_the_specification_table() {
        let n = 1u64 << 24;
        for (bits, fpr) in [
            (6.0, 0.1),
            (10.5, 0.01),
            (16.9, 0.001),
            (26.4, 0.0001),
            (41.0, 0.00001),
        ] {
            let blocks = (n as f64 * bits / 256.0) as u64;
            let p = split_block_bloom_fpr(blocks, n);
            assert!((p / fpr - 1.0).abs() < 0.015, "{bits} bits/value: {p} vs {fpr}");
        }
    }

    #[test]
    fn split_block_formula_stays_a_probability_and_is_fast_when_overloaded() {
        for n in [1, 100, 10_000, 1 << 20, 1 << 40, u64::MAX] {
            let p = split_block_bloom_fpr(1, n);
            assert!((0.0..=1.0).contains(&p), "n {n}: {p}");
        }
        assert_eq!(split_block_bloom_fpr(1, u64::MAX), 1.0);
        assert_eq!(split_block_bloom_fpr(1, 64 * 32), 1.0);
        // Monotone in the load.
        let mut last = 0.0;
        for n in (0..4000).step_by(50) {
            let p = split_block_bloom_fpr(100, n);
            assert!(p >= last);
            last = p;
        }
    }
}
