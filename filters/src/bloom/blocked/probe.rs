//! The blocked Bloom filter's probe: the block a hash picks, the bits it
//! sets and tests inside the block, and the probe prepared once for many
//! filters ([`BlockedProbe`], [`BlockedBlocks`]).
//!
//! Everything here is the portable form, the oracle of the SIMD kernels
//! (`avx2.rs`, `avx512.rs`).

use crate::hash::reduce32;
use crate::KeyHash;

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;
pub(crate) const WORDS: usize = 8;

/// One cache line of bits, aligned so it never straddles two lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u64; WORDS]);

/// Bytes per block (one cache line).
pub(crate) const BLOCK_BYTES: usize = WORDS * 8;

/// Block index (high 32 bits) for a hash.
#[inline(always)]
pub(crate) fn block_of(hash: u64, num_blocks: u32) -> usize {
    reduce32((hash >> 32) as u32, num_blocks) as usize
}

/// Multiplier that scrambles the in-block probe state: 2^32 / golden ratio.
pub(crate) const PROBE_MULTIPLIER: u32 = 0x9e37_79b9;
/// Largest probe count a blocked filter accepts.
pub(crate) const MAX_PROBES: usize = 24;

/// The probe count a SIMD kernel compiled for `PROBES` probes (0: any
/// count) runs with: `PROBES`, or `num_probes` capped at [`MAX_PROBES`].
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[inline(always)]
pub(crate) fn kernel_probes<const PROBES: u32>(num_probes: u32) -> usize {
    debug_assert!((1..=MAX_PROBES as u32).contains(&num_probes));
    debug_assert!(PROBES == 0 || PROBES == num_probes);
    if PROBES > 0 {
        PROBES as usize
    } else {
        num_probes.min(MAX_PROBES as u32) as usize
    }
}

/// `PROBE_POWERS[i] = PROBE_MULTIPLIER^i mod 2^32`. Probe `i` reads the top
/// 9 bits of `low32 · PROBE_POWERS[i]`: the state the chain `h *= C` reaches
/// after `i` steps, but each probe is one independent multiply, so the CPU
/// computes all of them in parallel instead of waiting on a chain of `k`.
/// Padded to 32 entries so the AVX-512 kernel's second round can load 16 at
/// once; entries past `MAX_PROBES` are never used as probes.
pub(crate) const PROBE_POWERS: [u32; 32] = {
    let mut p = [1u32; 32];
    let mut i = 1;
    while i < 32 {
        p[i] = p[i - 1].wrapping_mul(PROBE_MULTIPLIER);
        i += 1;
    }
    p
};

/// The in-block bit positions (`0..512`) of a key's probes.
#[inline(always)]
pub(crate) fn probe_bits(hash: u64, num_probes: u32) -> impl Iterator<Item = u32> {
    let state = hash as u32;
    PROBE_POWERS
        .iter()
        .take(num_probes as usize)
        .map(move |&p| state.wrapping_mul(p) >> (32 - 9))
}

/// The 8-word bit mask of a key's probes inside its block (for prepared
/// probes and atomic inserts; the oracle of [`set_probes`]).
#[inline(always)]
pub(crate) fn probe_mask(hash: u64, num_probes: u32) -> [u64; WORDS] {
    let mut mask = [0u64; WORDS];
    for bit in probe_bits(hash, num_probes) {
        mask[(bit >> 6) as usize] |= 1 << (bit & 63);
    }
    mask
}

/// Sets the key's probe bits in `block`, one word read-modify-write per
/// probe (RocksDB's `AddHash` does the same): the portable insert, and the
/// oracle of the SIMD ones (`avx2::set_block`, `avx512::set_block` and
/// `avx512::set_block_permuted`).
///
/// Why not build [`probe_mask`] and OR it in, as inserts once did: the mask is
/// written by data-dependent scalar stores into a stack array, and the
/// compiler reads it back as vectors to OR into the block; a wide load of
/// bytes that narrow stores just wrote cannot be forwarded from the store
/// buffer, so every insert waited for those stores to retire. Here every
/// store goes to the block itself and nothing is read back wider than it was
/// written. (The SIMD inserts go further: the mask is built in registers and
/// ORed in with one store (AVX-512) or two (AVX2) instead of `k`.)
#[inline(always)]
pub(crate) fn set_probes(block: &mut [u64; WORDS], hash: u64, num_probes: u32) {
    for bit in probe_bits(hash, num_probes) {
        block[(bit >> 6) as usize] |= 1 << (bit & 63);
    }
}

/// [`set_probes`] that also says whether every probe bit was set before:
/// each bit tested and set in one pass over the probes. A bit the key
/// probes twice is set at its second visit, which so changes nothing: the
/// answer is [`block_matches`] of the block as it was.
#[inline(always)]
pub(crate) fn test_and_set_probes(block: &mut [u64; WORDS], hash: u64, num_probes: u32) -> bool {
    let mut all = 1u64;
    for bit in probe_bits(hash, num_probes) {
        let word = &mut block[(bit >> 6) as usize];
        all &= *word >> (bit & 63);
        *word |= 1 << (bit & 63);
    }
    all & 1 == 1
}

/// A key hash prepared for probing many blocked Bloom filters: the key's
/// in-block probe mask, which depends on the hash and the probe count only,
/// never on the filter's size. Build it once ([`BlockedBloom::prepare`](crate::BlockedBloom::prepare)) and
/// every filter with the same probe count answers with one block load and
/// an 8-word compare ([`BlockedBloom::contains_probe`](crate::BlockedBloom::contains_probe)), instead of
/// recomputing the probes per filter: what a key hash shared by the tables
/// of an LSM tree saves beyond the hashing (RocksDB splits its Bloom probe
/// the same way: `PrepareHash`, then `HashMayMatchPrepared`).
/// [`PreparedHash`](crate::PreparedHash) keeps one for filters of any kind.
///
/// ```
/// use amq::{BlockedBloom, FilterSizing, Insert};
/// let mut a = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
/// let mut b = BlockedBloom::new(50_000, FilterSizing::Fpr(0.01))?;
/// a.insert(b"k")?;
/// b.insert(b"k")?;
/// let probe = a.prepare(amq::hash_key(b"k"));
/// assert!(a.contains_probe(&probe) && b.contains_probe(&probe));
/// assert_eq!(probe.num_probes(), a.num_probes());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedProbe {
    pub(crate) hash: u64,
    pub(crate) num_probes: u32,
    pub(crate) mask: [u64; WORDS],
}

impl BlockedProbe {
    /// The probe of `hash` for filters with `num_probes` probes per key.
    #[inline]
    pub fn new(hash: KeyHash, num_probes: u32) -> BlockedProbe {
        Self::of(hash.get(), num_probes)
    }

    /// [`BlockedProbe::new`] of a hash's bits.
    #[inline]
    pub(crate) fn of(hash: u64, num_probes: u32) -> BlockedProbe {
        BlockedProbe {
            hash,
            num_probes,
            mask: probe_mask(hash, num_probes),
        }
    }

    /// The key hash it was prepared from.
    pub fn hash(&self) -> KeyHash {
        KeyHash::from_well_mixed(self.hash)
    }

    /// The probe count it was prepared for.
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }
}

/// Whether every probe bit of the key is set in `block`. Branch-free: the
/// tested bits are ANDed into bit 0, so a miss costs no misprediction.
/// (Measured against building the 8-word mask and comparing it with the block:
/// this is faster, because the mask's data-dependent stores go through memory.)
#[inline(always)]
pub(crate) fn block_matches(block: &[u64; WORDS], hash: u64, num_probes: u32) -> bool {
    block_matches_by(|w| block[w], hash, num_probes)
}

/// [`block_matches`] over a block read through `word` (word `0..8` of the
/// key's block): the owned filter reads its array, a borrowed view
/// ([`BlockedBloomView`]) the little-endian bytes in place.
#[inline(always)]
pub(crate) fn block_matches_by(word: impl Fn(usize) -> u64, hash: u64, num_probes: u32) -> bool {
    let mut all = 1u64;
    for bit in probe_bits(hash, num_probes) {
        all &= word((bit >> 6) as usize) >> (bit & 63);
    }
    all & 1 == 1
}

/// Whether a block read through `word` has every bit of a prepared probe
/// mask: the OR of the bits it lacks, word by word, is zero (branch-free,
/// and vectorised by the compiler).
#[inline(always)]
pub(crate) fn mask_matches(mask: &[u64; WORDS], word: impl Fn(usize) -> u64) -> bool {
    let missing = mask
        .iter()
        .enumerate()
        .fold(0, |acc, (w, m)| acc | (m & !word(w)));
    missing == 0
}

/// A [`BlockedBloom`](crate::BlockedBloom)'s blocks and probe count, borrowed
/// ([`BlockedBloom::blocks`](crate::BlockedBloom::blocks)): everything a prepared probe reads, held by
/// value.
///
/// A caller that probes one prepared key against many filters (an LSM read
/// against every table whose range holds the key) can keep these three
/// words in its own array, beside what else it reads per filter, and reach
/// each filter's block in one load instead of going through the filter's
/// header first.
///
/// ```
/// use amq::{BlockedBloom, Filter, FilterSizing, Insert, PreparedHash};
/// let mut f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
/// f.insert(b"apple")?;
/// let blocks = f.blocks();
/// assert_eq!(blocks.num_probes(), f.num_probes());
/// assert!(blocks.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"apple"))));
/// let mut pear = PreparedHash::new(amq::hash_key(b"pear"));
/// assert_eq!(blocks.contains_prepared(&mut pear), f.contains(b"pear"));
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BlockedBlocks<'a> {
    /// At least one block.
    pub(crate) blocks: &'a [Block],
    pub(crate) num_probes: u32,
}

impl BlockedBlocks<'_> {
    /// The filter's probe count per key.
    #[inline(always)]
    pub fn num_probes(&self) -> u32 {
        self.num_probes
    }

    /// Whether `probe`'s key may be in the filter: from its mask when it
    /// was prepared for this probe count (one block load and a compare),
    /// else from a probe prepared now.
    ///
    /// ```
    /// use amq::{BlockedBloom, BlockedProbe, FilterSizing, Insert};
    /// let mut f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// let h = amq::hash_key(b"k");
    /// assert!(f.blocks().contains_probe(&f.prepare(h)));
    /// assert!(f.blocks().contains_probe(&BlockedProbe::new(h, f.num_probes() + 1)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn contains_probe(&self, probe: &BlockedProbe) -> bool {
        if probe.num_probes != self.num_probes {
            return self.matches(&BlockedProbe::of(probe.hash, self.num_probes));
        }
        self.matches(probe)
    }

    /// Whether `probe` (prepared for this probe count) finds every bit set
    /// in its block.
    #[inline(always)]
    pub(crate) fn matches(&self, probe: &BlockedProbe) -> bool {
        debug_assert_eq!(probe.num_probes, self.num_probes);
        let block = &self.blocks[block_of(probe.hash, self.blocks.len() as u32)].0;
        mask_matches(&probe.mask, |w| block[w])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    #[test]
    fn blocks_are_cache_line_sized_and_aligned() {
        assert_eq!(core::mem::align_of::<Block>(), 64);
        assert_eq!(core::mem::size_of::<Block>(), 64);
    }

    #[test]
    fn mask_has_at_most_k_bits() {
        for h in 0..1000u64 {
            let m = probe_mask(remix(h, 1), 6);
            let bits: u32 = m.iter().map(|w| w.count_ones()).sum();
            assert!((1..=6).contains(&bits));
        }
    }

    /// The in-place insert sets exactly the bits of the mask (its oracle),
    /// for every probe count, on blocks from empty to dense.
    #[test]
    fn set_probes_ors_in_exactly_the_probe_mask() {
        for k in 1..=MAX_PROBES as u32 {
            for i in 0..2_000u64 {
                let h = remix(i, u64::from(k));
                let start: [u64; WORDS] =
                    core::array::from_fn(|w| remix(i * 8 + w as u64, 9) & remix(i, w as u64));
                let mut block = if i % 2 == 0 { [0; WORDS] } else { start };
                let before = block;
                set_probes(&mut block, h, k);
                let mask = probe_mask(h, k);
                for w in 0..WORDS {
                    assert_eq!(block[w], before[w] | mask[w], "k {k} hash {h:#x} word {w}");
                }
            }
        }
    }

    /// A prepared probe tests exactly the bits the one-shot query tests.
    #[test]
    fn a_prepared_mask_answers_as_the_query() {
        for k in [1, 6, 11, 24] {
            for i in 0..2_000u64 {
                let h = remix(i, 40 + u64::from(k));
                let block: [u64; WORDS] =
                    core::array::from_fn(|w| remix(i * 8 + w as u64, 5) | remix(i, w as u64));
                let probe = BlockedProbe::of(h, k);
                let prepared = mask_matches(&probe.mask, |w| block[w]);
                assert_eq!(prepared, block_matches(&block, h, k), "k {k} hash {h:#x}");
            }
        }
    }
}
