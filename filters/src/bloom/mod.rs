//! The Bloom family: [`StandardBloom`], [`BlockedBloom`] (and its concurrent
//! twin [`AtomicBlockedBloom`]), [`SplitBlockBloom`] and [`CountingBloom`].
//!
//! What they share lives here: parameter validation and sizing, and the
//! double-hashing probe sequence of the standard and counting filters.

pub(crate) mod blocked;
pub(crate) mod counting;
pub(crate) mod split_block;
pub(crate) mod standard;

#[cfg(target_has_atomic = "64")]
pub use blocked::AtomicBlockedBloom;
pub use blocked::{
    probes_for_bits_per_key as blocked_probes_for_bits_per_key, BlockedBlocks, BlockedBloom,
    BlockedBloomView, BlockedProbe, PreparedHash,
};
pub use counting::CountingBloom;
pub use split_block::{SplitBlockBloom, SplitBlockBloomView};
pub use standard::{ProbePositions, StandardBloom, StandardBloomView};

use crate::error::invalid;
use crate::math;
/// The planner's row every Bloom filter of this crate starts from: takes
/// inserts for ever, sized by bits per key.
pub(crate) const BLOOM_TRAITS: crate::cost::Traits = crate::cost::Traits {
    is_static: false,
    why_no_removes: "cannot remove keys (the counting Bloom filter can)",
    knob: crate::cost::Knob::BitsPerKey {
        min: 1.0 / 64.0,
        max: 1000.0,
    },
    ..crate::cost::Traits::FIXED
};

pub(crate) use crate::sizing::{
    check_bits_per_key, check_fpr, check_keys, count_as_usize, max_keys, units_for,
};
use crate::Error;

/// The optimal-standard-Bloom bits per key for `fpr` (validated).
pub(crate) fn bits_per_key_for_fpr(fpr: f64) -> Result<f64, Error> {
    check_fpr(fpr)?;
    Ok(math::bloom_bits_per_key_for_fpr(fpr))
}

/// The error for a target FPR no filter within the bits-per-key limit meets.
pub(crate) const UNREACHABLE_FPR: Error = invalid("fpr", "unreachable within 1000 bits per key");

/// Bits per key a standard or counting filter needs for `fpr` (validated).
///
/// The optimal `m/n = -ln p / (ln 2)^2` assumes `k = (m/n) ln 2` probes, but
/// `k` is a whole number (rounding it costs up to 11% more FPR) and capped at
/// 30 (which misses targets below `p ≈ 1e-9` by orders of magnitude). So we
/// take that `k` and solve `p = (1 - e^(-k n/m))^k` for the bits it needs:
/// `m/n = -k / ln(1 - p^(1/k))`. Past 1000 bits per key the target is
/// unreachable and an error.
pub(crate) fn standard_bits_per_key_for_fpr(fpr: f64) -> Result<f64, Error> {
    let k = math::optimal_bloom_probes(bits_per_key_for_fpr(fpr)?) as f64;
    let bits = -k / libm::log1p(-libm::pow(fpr, 1.0 / k));
    if bits <= 1000.0 {
        Ok(bits)
    } else {
        Err(UNREACHABLE_FPR)
    }
}

/// A bound on the FPR floor of the double-hashing probe sequence
/// ([`ProbeSeq`]), times the number of bits (counters): the floor is at most
/// `DOUBLE_HASHING_FLOOR / m`. Measured (`cargo test --release -p amq --test
/// bloom_fpr -- --ignored double_hashing_floor --nocapture`, 1e8 absent keys
/// per filter, 1,000 to 100,000 keys at 20 to 40 bits per key): the excess
/// over the formula times `m` was 0.05 to 0.16; the bound leaves room above
/// that. The planner (`plan.rs`) leaves out a standard or counting filter
/// whose floor would be more than 5% of its formula's FPR, since the formula
/// would then promise an FPR the filter does not deliver.
pub(crate) const DOUBLE_HASHING_FLOOR: f64 = 0.2;

/// Double hashing (Kirsch & Mitzenmacher 2006, "Less Hashing, Same
/// Performance"): probe `i` is at `h1 + i·h2`, which gives the same
/// asymptotic FPR as `k` independent hash functions.
///
/// We run the sequence in the 64-bit ring (`x_i = h1 + i·h2 mod 2^64`) and
/// take each position from the *high* bits of `x_i` by multiply-shift, so no
/// `%` is needed and `m` need not be a power of two. Both values come from the
/// one key hash: `h1` is the hash, `h2` the hash with its halves swapped.
///
/// The classic weakness of double hashing modulo `m` is `h2 ≡ 0` (every
/// probe on one position) and, more generally, short cycles; here the
/// analogue is `h2` within about `2^64 / m` of a multiple of `2^64 / q` for a
/// small `q` (`h2 < 2^64 / m` is `q = 1`), where the probes land on a few
/// positions only. A query key has such an `h2` with probability of order
/// `1/m`, and is then a false positive with the probability of a few probes.
/// That puts a floor under the FPR, measured at 0.05–0.16 divided by the
/// number of bits or counters ([`DOUBLE_HASHING_FLOOR`]): invisible at the
/// usual sizes (2e-7 against 0.8% at 1M keys and 10 bits/key), but above the
/// formula for small filters at very low FPRs (1,000 keys at 40 bits/key:
/// 2.3e-6 measured against 4.5e-9 from the formula). (The "enhanced" cubic
/// term of Dillinger & Manolios fixes the `h2 ≡ 0` case for `mod m`
/// arithmetic; in the high bits of a 64-bit ring it would be too small to move
/// a probe, so it is not used.)
#[derive(Clone, Copy)]
pub(crate) struct ProbeSeq {
    x: u64,
    y: u64,
}

impl ProbeSeq {
    #[inline(always)]
    pub(crate) fn new(hash: u64) -> Self {
        ProbeSeq {
            x: hash,
            y: hash.rotate_left(32),
        }
    }

    /// The next probe position in `0..m`.
    #[inline(always)]
    pub(crate) fn next_in(&mut self, m: u64) -> u64 {
        let pos = crate::hash::reduce(self.x, m);
        self.x = self.x.wrapping_add(self.y);
        pos
    }
}

/// How many of a key's first probes [`prefetch_probes`] prefetches. An
/// absent key is answered at its first unset bit, at the first probe half
/// the time in a half-full filter, so the first two cover three quarters of
/// them; a present key needs all `k`, and prefetching those too would ask
/// for lines most queries never read.
const PREFETCHED_PROBES: u32 = 2;

/// Starts loading the words of the first [`PREFETCHED_PROBES`] probes of
/// `hash` in a standard or counting filter of `cells` bits (counters), with
/// `per_word_log2` = log2 of cells per `u64` word (6 for bits, 4 for 4-bit
/// counters).
#[inline(always)]
pub(crate) fn prefetch_probes(words: &[u64], cells: u64, per_word_log2: u32, num_probes: u32, hash: u64) {
    let mut probes = ProbeSeq::new(hash);
    for _ in 0..num_probes.min(PREFETCHED_PROBES) {
        prefetch_cell(words, per_word_log2, probes.next_in(cells));
    }
}

/// Starts loading the word that holds cell `cell`.
#[inline(always)]
pub(crate) fn prefetch_cell(words: &[u64], per_word_log2: u32, cell: u64) {
    if let Some(w) = words.get((cell >> per_word_log2) as usize) {
        crate::prefetch::prefetch(w);
    }
}

/// Keys in flight in [`batched_query`]: each waits on one line at a time.
/// Chosen by measurement at 100M keys (`benches/examples/batch_depth.rs`).
const IN_FLIGHT: usize = 32;

/// One key of [`batched_query`] in flight: where its answer goes, its probe
/// sequence, how many probes it has left after the pending one, and the
/// pending probe's cell (whose word has been prefetched).
#[derive(Clone, Copy)]
struct InFlight {
    key: usize,
    probes: ProbeSeq,
    left: u32,
    cell: u64,
}

impl InFlight {
    /// A slot with no key (`key` is never a valid index: slices hold fewer
    /// than `usize::MAX` elements).
    const IDLE: InFlight = InFlight {
        key: usize::MAX,
        probes: ProbeSeq { x: 0, y: 0 },
        left: 0,
        cell: 0,
    };
}

/// The batched query of the standard and counting filters: `out[i]` is
/// whether every one of the `num_probes` probe cells of `hashes[i]` in
/// `0..cells` is set (`is_set`), the probes taken in the order of
/// [`ProbeSeq`] and stopping at the first unset one, as `contains_hash`
/// does.
///
/// A key's probes are each a cache miss of their own and how many it reads
/// depends on what it finds, so a batch cannot prefetch them all up front
/// (a present key reads all `k`, an absent one usually one or two). Instead
/// [`IN_FLIGHT`] keys are interleaved, one probe each per turn, round robin
/// (asynchronous memory access chaining: Kocberber, Falsafi and Grot,
/// "Asynchronous Memory Access Chaining", VLDB 2015): a key's turn tests the
/// cell whose word it prefetched (`prefetch`) on its previous turn, then
/// either finishes, making room for the next key of the batch, or prefetches
/// its next probe's word and yields. Every probe is so prefetched a whole
/// round ahead, and the answers equal `contains_hash`'s.
///
/// # Panics
/// If `hashes.len() != out.len()`.
#[inline(always)]
pub(crate) fn batched_query(
    hashes: &[u64],
    out: &mut [bool],
    cells: u64,
    num_probes: u32,
    prefetch: impl Fn(u64),
    is_set: impl Fn(u64) -> bool,
) {
    assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
    let start = |key: usize, hash: u64| {
        let mut probes = ProbeSeq::new(hash);
        let cell = probes.next_in(cells);
        prefetch(cell);
        InFlight {
            key,
            probes,
            left: num_probes.saturating_sub(1),
            cell,
        }
    };
    let mut waiting = hashes.iter().enumerate();
    let mut slots = [InFlight::IDLE; IN_FLIGHT];
    let mut busy = 0;
    for (slot, (key, &hash)) in slots.iter_mut().zip(waiting.by_ref()) {
        *slot = start(key, hash);
        busy += 1;
    }
    while busy > 0 {
        for slot in slots.iter_mut() {
            if slot.key == usize::MAX {
                continue;
            }
            let set = is_set(slot.cell);
            if set && slot.left > 0 {
                slot.cell = slot.probes.next_in(cells);
                slot.left -= 1;
                prefetch(slot.cell);
                continue;
            }
            out[slot.key] = set;
            *slot = match waiting.next() {
                Some((key, &hash)) => start(key, hash),
                None => {
                    busy -= 1;
                    InFlight::IDLE
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_spread_over_range() {
        let m = 1000;
        let mut seen = [false; 1000];
        for h in 0..200u64 {
            let mut p = ProbeSeq::new(crate::hash::remix(h, 0));
            for _ in 0..7 {
                let i = p.next_in(m) as usize;
                seen[i] = true;
            }
        }
        // 1,400 probes over 1,000 slots cover about 1 - e^-1.4 = 75% of them.
        let covered = seen.iter().filter(|&&s| s).count();
        assert!((700..=800).contains(&covered), "{covered}");
    }

    /// The interleaved batch answers exactly as probing each key alone with
    /// early exit, for every batch length around the number in flight,
    /// every probe count, and fills from empty (every key answered at its
    /// first probe) to full (every key reads all its probes).
    #[test]
    fn batched_query_equals_the_one_key_query() {
        use alloc::vec::Vec;
        let cells = 4096u64;
        for num_probes in [1, 2, 7, 30] {
            for set_one_in in [0u64, 1, 2, 5] {
                // Cell `c` set iff `remix(c, 9) % set_one_in == 0` (none when 0).
                let is_set = |c: u64| set_one_in != 0 && crate::hash::remix(c, 9).is_multiple_of(set_one_in);
                let one = |h: u64| {
                    let mut p = ProbeSeq::new(h);
                    (0..num_probes).all(|_| is_set(p.next_in(cells)))
                };
                for len in [
                    0,
                    1,
                    IN_FLIGHT - 1,
                    IN_FLIGHT,
                    IN_FLIGHT + 1,
                    3 * IN_FLIGHT + 5,
                    300,
                ] {
                    let hashes: Vec<u64> = (0..len as u64).map(|i| crate::hash::remix(i, 3)).collect();
                    let mut out = alloc::vec![false; len];
                    batched_query(
                        &hashes,
                        &mut out,
                        cells,
                        num_probes,
                        |c| assert!(c < cells),
                        is_set,
                    );
                    let want: Vec<bool> = hashes.iter().map(|&h| one(h)).collect();
                    assert_eq!(out, want, "k {num_probes}, 1 in {set_one_in} set, len {len}");
                }
            }
        }
    }
}
