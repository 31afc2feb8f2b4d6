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
                                                      // Sum the Poisson terms around the mean until they are negligible.
    let mut total = 0.0;
    let mut mass = 0.0;
    let hi = (lambda + 12.0 * libm::sqrt(lambda) + 12.0) as u64;
    let mut ln_pj = -lambda; // ln Pois(0; λ)
    for j in 0..=hi {
        if j > 0 {
            ln_pj += log(lambda) - log(j as f64);
        }
        let pj = exp(ln_pj);
        let inner = 1.0 - exp(k as f64 * j as f64 * keep);
        total += pj * pow(inner, k as f64);
        mass += pj;
    }
    // Whatever probability mass lies beyond `hi` counts as a sure match.
    // Rounding in the sums can push the total a hair above 1.
    (total + (1.0 - mass).max(0.0)).min(1.0)
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
}
