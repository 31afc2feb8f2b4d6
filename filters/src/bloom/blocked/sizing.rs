//! How big a blocked Bloom filter is: blocks and probes for a key count and
//! a sizing, and the measured-best probe count per bits/key.

use super::probe::BLOCK_BITS;
use crate::bloom::{bits_per_key_for_fpr, check_bits_per_key, check_keys, units_for, UNREACHABLE_FPR};
use crate::{math, Error, FilterSizing};

/// Probe count for a blocked filter with `bits_per_key` bits per key.
///
/// Each row is the largest bits/key at which `k` gives the lowest FPR. The
/// crossovers come from [`math::blocked_bloom_fpr`], which the measurement
/// matches to within about 2% (`cargo run --release -p amq-bench --example blocked_probes`,
/// 200,000 keys, 4M absent keys, bits/key 2 to 24 in steps of 0.5; e.g. at 10
/// bits/key k = 5, 6, 7, 8 measure 1.041%, 0.958%, 0.963%, 1.026%). Where two
/// `k` tie within the measurement's noise the smaller, faster one wins: the
/// formula puts the 6→7 crossover at 9.99 bits/key, the measurement above 10.0,
/// so the row reads 10.1. The optimum sits below the standard filter's
/// `(m/n) ln 2` because block loads vary: at 10 bits/key the standard rule says 7.
///
/// | bits/key ≤ | 2.08 | 3.58 | 5.09 | 6.65 | 8.27 | 10.1 | 11.83 | 13.8 | 15.94 | 18.29 | 20.87 | 23.74 | 26.92 | 30.5 | 34.51 | 39.05 | 44.2 | 50.06 | 56.76 | more |
/// |------------|---|---|---|---|---|---|---|---|---|----|----|----|----|----|----|----|----|----|----|----|
/// | k          | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15 | 16 | 17 | 18 | 19 | 20 |
///
/// ```
/// use amq::bloom::blocked_probes_for_bits_per_key as probes;
/// assert_eq!(probes(10.0), 6);
/// assert_eq!(probes(16.0), 10);
/// assert_eq!(probes(1.0), 1);
/// assert_eq!(probes(500.0), 20);
/// ```
pub fn probes_for_bits_per_key(bits_per_key: f64) -> u32 {
    const LIMITS: [f64; 19] = [
        2.08, 3.58, 5.09, 6.65, 8.27, 10.1, 11.83, 13.8, 15.94, 18.29, 20.87, 23.74, 26.92, 30.5, 34.51,
        39.05, 44.2, 50.06, 56.76,
    ];
    LIMITS
        .iter()
        .position(|&limit| bits_per_key <= limit)
        .unwrap_or(LIMITS.len()) as u32
        + 1
}

/// Shared sizing: `(blocks, probes)` for `n` keys at `sizing`: for an FPR,
/// the space the blocked design needs (slightly more than a standard
/// filter's, [`bits_per_key_for`]); for bits per key, `n · bits_per_key`
/// bits rounded up to whole blocks; with the measured-best probe count
/// ([`probes_for_bits_per_key`]).
pub(crate) fn size(n: usize, sizing: FilterSizing) -> Result<(u32, u32), Error> {
    check_keys(n)?;
    let bits_per_key = match sizing {
        FilterSizing::BitsPerKey(b) => b,
        FilterSizing::Fpr(p) => bits_per_key_for(n, p)?,
    };
    check_bits_per_key(bits_per_key)?;
    let blocks = units_for(n, bits_per_key, BLOCK_BITS as u64, 64, u32::MAX as u64)?;
    Ok((blocks as u32, probes_for_bits_per_key(bits_per_key)))
}

/// Bits per key a blocked filter needs for `fpr`: the standard Bloom figure,
/// raised in steps of 1/16 bit until the blocked formula meets the target
/// (an error if that takes more than 1000 bits per key).
pub(crate) fn bits_per_key_for(n: usize, fpr: f64) -> Result<f64, Error> {
    let mut bpk = bits_per_key_for_fpr(fpr)?;
    let n64 = n.min(1 << 20) as u64; // the formula only depends on n / blocks
    while bpk <= 1000.0 {
        let bits = libm::ceil(n64 as f64 * bpk / BLOCK_BITS as f64) as u64 * BLOCK_BITS as u64;
        let k = probes_for_bits_per_key(bpk);
        if math::blocked_bloom_fpr(bits, BLOCK_BITS, k, n64) <= fpr {
            return Ok(bpk);
        }
        bpk += 1.0 / 16.0;
    }
    Err(UNREACHABLE_FPR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fpr_sizing_meets_its_target_by_formula() {
        for &p in &[0.1, 0.01, 0.001] {
            let (blocks, k) = size(100_000, FilterSizing::Fpr(p)).unwrap();
            let bits = u64::from(blocks) * 512;
            let fpr = math::blocked_bloom_fpr(bits, 512, k, 100_000);
            assert!(fpr <= p * 1.02, "target {p} formula {fpr}");
        }
    }

    #[test]
    fn probe_table_is_monotone() {
        let mut last = 0;
        for tenth in 1..=1000 {
            let k = probes_for_bits_per_key(tenth as f64 / 10.0);
            assert!(k >= last && (1..=24).contains(&k));
            last = k;
        }
    }
}
