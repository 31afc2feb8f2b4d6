//! Queries whose cost does not grow with how densely the values pack.
//!
//! The select samples ([`EfCore::select0`]) mark every `2^q`-th zero of the
//! upper bits, and a select scans the words from its sample: a popcount
//! each. Values spread evenly put about one value per bucket, so a sample
//! block of `2^q` zeros spans a few hundred bits. Values packed densely
//! (consecutive keys hash to consecutive values in a Grafite filter) fill
//! whole buckets, `2^l` ones between two zeros, and one sample block spans
//! `2^(q + l)` bits: a select would scan thousands of words, and a
//! successor would then walk a bucket of thousands of values.
//!
//! [`DenseSelect`] is a directory for the dense blocks only (those whose
//! `2^q` zeros spread over more than [`DENSE_SPAN`] bits): the zeros from
//! the block's start up to every 512-bit boundary inside it, so a select
//! there is a binary search in the block's counts and a scan of at most
//! nine words. It is derived from the code (built with it, and again when
//! the code is decoded), so the byte format does not change; values spread
//! evenly have no dense block, and the directory is empty. With it,
//! [`EfCore::contains_in_dense`] finds the ends of the buckets it needs and
//! searches a bucket's low bits by bisection instead of walking them.

use alloc::vec::Vec;

use super::bits::{low_mask, Words};
use super::elias_fano::EfCore;
use crate::Error;

/// A sample block whose zeros spread over more bits than this gets a
/// directory: elsewhere a select scans at most this many bits (16 words).
pub(crate) const DENSE_SPAN: u64 = 1024;

/// The directory's step: one count per `2^9` bits of a dense block.
const STEP_LOG2: u32 = 9;

/// The select directory of a code's dense sample blocks (see the module
/// docs): nothing, one word, for a code without a dense block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct DenseSelect(Option<alloc::boxed::Box<Directory>>);

/// The directory's parts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Directory {
    /// Bit `j` (of word `j / 64`) is set when sample block `j` is dense.
    dense: Vec<u64>,
    /// The dense blocks before word `w` of `dense`: with the word's own
    /// bits below `j`, the rank `i` of dense block `j`, in O(1).
    ranks: Vec<u32>,
    /// The `i`-th dense block's counts are `counts[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// For each dense block starting at bit `p`: the zeros in `p..b` for
    /// `b = p` and every multiple of 512 after `p` and inside the block.
    counts: Vec<u32>,
}

impl DenseSelect {
    /// No directory: every query takes the plain path.
    pub(crate) const EMPTY: DenseSelect = DenseSelect(None);

    /// The directory of `ef`'s dense blocks. `ef` must be a checked code
    /// (built, or decoded and checked): its samples are where they must be.
    /// Allocates at most one `u32` per 512 bits of the upper part, plus
    /// two words per dense block and 12 bytes per 64 sample blocks
    /// ([`Error::TooLarge`] if that fails).
    pub(crate) fn build<W: Words>(ef: &EfCore<W>) -> Result<Self, Error> {
        let layout = &ef.layout;
        let mut d = Directory::default();
        for j in 0..layout.sample_words {
            let start = ef.words.word(layout.sample_start() + j);
            let end = match j + 1 < layout.sample_words {
                true => ef.words.word(layout.sample_start() + j + 1),
                false => layout.upper_bits,
            };
            if end.saturating_sub(start) <= DENSE_SPAN {
                continue;
            }
            let entries = ((end - 1) >> STEP_LOG2) - (start >> STEP_LOG2) + 1;
            d.counts
                .try_reserve(entries as usize)
                .map_err(|_| Error::TooLarge)?;
            if d.dense.is_empty() {
                let words = layout.sample_words.div_ceil(64);
                d.dense.try_reserve_exact(words).map_err(|_| Error::TooLarge)?;
                d.ranks.try_reserve_exact(words).map_err(|_| Error::TooLarge)?;
                d.dense.resize(words, 0);
            }
            d.starts.try_reserve(2).map_err(|_| Error::TooLarge)?;
            if d.starts.is_empty() {
                d.starts.push(0);
            }
            d.dense[j / 64] |= 1 << (j % 64);
            let mut zeros = 0u64;
            let mut from = start;
            d.counts.push(0);
            let mut boundary = ((start >> STEP_LOG2) + 1) << STEP_LOG2;
            while boundary < end {
                zeros += ef.zeros_between(from, boundary);
                d.counts.push(zeros as u32);
                from = boundary;
                boundary += 1 << STEP_LOG2;
            }
            d.starts.push(d.counts.len());
        }
        let mut before = 0u32;
        for &w in &d.dense {
            d.ranks.push(before);
            before += w.count_ones();
        }
        Ok(DenseSelect(
            (!d.dense.is_empty()).then(|| alloc::boxed::Box::new(d)),
        ))
    }

    /// Whether no block is dense.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Heap bytes.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |d| {
            core::mem::size_of::<Directory>()
                + d.dense.len() * 8
                + d.ranks.len() * 4
                + d.starts.len() * core::mem::size_of::<usize>()
                + d.counts.len() * 4
        })
    }

    /// Whether sample block `j` is dense (has a directory).
    #[inline]
    pub(crate) fn is_dense(&self, j: u64) -> bool {
        self.0.is_some() && self.block(j).is_some()
    }

    /// The counts of sample block `j`, if it is dense.
    #[inline]
    fn block(&self, j: u64) -> Option<&[u32]> {
        let d = self.0.as_ref()?;
        let (w, bit) = (usize::try_from(j / 64).ok()?, j % 64);
        let word = *d.dense.get(w)?;
        if word >> bit & 1 == 0 {
            return None;
        }
        let i = (d.ranks[w] + (word & ((1 << bit) - 1)).count_ones()) as usize;
        d.counts.get(*d.starts.get(i)?..*d.starts.get(i + 1)?)
    }
}

impl<W: Words> EfCore<W> {
    /// [`select0`](EfCore::select0) through `dense`'s directory where zero
    /// `k`'s sample block is dense.
    #[inline]
    pub(crate) fn select0_dense(&self, k: u64, dense: &DenseSelect) -> Option<u64> {
        let j = k >> self.layout.sample_log2;
        match dense.block(j) {
            Some(counts) => self.select0_in_block(k, j, counts, None).map(|(p, _)| p),
            None => self.select0(k),
        }
    }

    /// Zero `k`'s position through the directory `counts` of its dense
    /// sample block `j`, and the boundary it was found after. The counts
    /// are searched from `hint` (a boundary found for a zero just before),
    /// else from where zero `k` would be were the block's zeros spread
    /// evenly over it.
    #[inline]
    fn select0_in_block(&self, k: u64, j: u64, counts: &[u32], hint: Option<u64>) -> Option<(u64, u64)> {
        let q = self.layout.sample_log2;
        let start = self.words.word(self.layout.sample_start() + j as usize);
        let rel = k - (j << q);
        let n = counts.len() as u64;
        let guess = hint.unwrap_or(((u128::from(rel) * u128::from(n)) >> q) as u64);
        // The last boundary with at most `rel` zeros before it (the first,
        // the sampled zero's own position, has none).
        let t = first_at_least(n, |t| u64::from(counts[t as usize]), rel + 1, guess).max(1) - 1;
        let from = match t {
            0 => start,
            t => ((start >> STEP_LOG2) + t) << STEP_LOG2,
        };
        let p = self.nth_zero_from(from, rel - u64::from(counts[t as usize]))?;
        Some((p, t))
    }

    /// Bucket `high`: where its ones start, the values before them, and
    /// where it ends (zero number `high`). Within one dense block the end
    /// is searched from where the start was found.
    #[inline]
    fn bucket_dense(&self, high: u64, dense: &DenseSelect) -> Option<(u64, u64, u64)> {
        let q = self.layout.sample_log2;
        let j = high >> q;
        let counts = dense.block(j);
        let (pos, hint) = match (high, counts) {
            (0, _) => (0, None),
            (h, Some(c)) if (h - 1) >> q == j => {
                let (p, t) = self.select0_in_block(h - 1, j, c, None)?;
                (p + 1, Some(t))
            }
            (h, _) => (self.select0_dense(h - 1, dense)? + 1, None),
        };
        let end = match counts {
            Some(c) => self.select0_in_block(high, j, c, hint)?.0,
            None => self.select0(high)?,
        };
        Some((pos, pos.wrapping_sub(high), end))
    }

    /// Where bucket `high`'s ones start, and the values before them.
    #[inline]
    fn bucket_start_dense(&self, high: u64, dense: &DenseSelect) -> Option<(u64, u64)> {
        let pos = if high == 0 {
            0
        } else {
            self.select0_dense(high - 1, dense)? + 1
        };
        Some((pos, pos.wrapping_sub(high)))
    }

    /// The first of values `index..index + count` (one bucket's, their low
    /// bits ascending) whose low bits are at least `target`, or
    /// `index + count`.
    #[inline]
    fn first_low_at_least(&self, index: u64, count: u64, target: u64) -> u64 {
        index + interpolated(count, |i| self.low(index + i), target)
    }

    /// [`contains_in`](EfCore::contains_in) at a cost that does not grow
    /// with the values' density: at most three selects through `dense`
    /// and a search of one bucket's low bits. Without a dense block it is
    /// `contains_in`. The values must be distinct (a Grafite filter's
    /// are): a bucket holding `2^l` values then holds every one.
    #[inline]
    pub(crate) fn contains_in_dense(&self, lo: u64, hi: u64, dense: &DenseSelect) -> bool {
        if dense.is_empty() {
            return self.contains_in(lo, hi);
        }
        let layout = &self.layout;
        if lo > hi || lo >= layout.universe || layout.len == 0 {
            return false;
        }
        let hi = hi.min(layout.universe - 1);
        let l = layout.low_bits;
        let mask = low_mask(l);
        let (first, last) = (lo >> l, hi >> l);
        let Some((pos, index, end)) = self.bucket_dense(first, dense) else {
            return false;
        };
        let count = end - pos;
        if count > mask {
            // A full bucket: every value of it is there, `lo` too.
            return true;
        }
        let i = self.first_low_at_least(index, count, lo & mask);
        if i < index + count {
            return first < last || self.low(i) <= hi & mask;
        }
        if first == last {
            return false;
        }
        let Some((pos_last, index_last)) = self.bucket_start_dense(last, dense) else {
            return false;
        };
        // Values in the buckets strictly between: each is in the range.
        if index_last > index + count {
            return true;
        }
        // Else the range holds a value only if `last`'s smallest is in it.
        index_last < layout.len && self.bit(pos_last) && self.low(index_last) <= hi & mask
    }
}

/// [`first_at_least`] from a guess interpolated between `f(0)` and
/// `f(len − 1)`: where the answer would be were the values spread evenly
/// between them, which a dense bucket's low bits and a dense block's zero
/// counts nearly are.
#[inline]
fn interpolated(len: u64, f: impl Fn(u64) -> u64, target: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let (first, last) = (f(0), f(len - 1));
    let guess = match (target > first, last > first) {
        (true, true) => (u128::from(target - first) * u128::from(len - 1) / u128::from(last - first)) as u64,
        _ => 0,
    };
    first_at_least(len, f, target, guess)
}

/// The first `i` in `0..len` with `f(i) ≥ target`, or `len`, for `f`
/// non-decreasing, searched from `guess`: steps doubling away from it until
/// the answer is bracketed, then bisection. A guess within `d` of the
/// answer costs about `2·log2(d)` reads.
#[inline]
fn first_at_least(len: u64, f: impl Fn(u64) -> u64, target: u64, guess: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let guess = guess.min(len - 1);
    // Bracket: f(below) < target ≤ f(above).
    let (mut below, mut above) = if f(guess) >= target {
        let (mut above, mut step) = (guess, 1);
        loop {
            if above == 0 {
                return 0;
            }
            let probe = above.saturating_sub(step);
            if f(probe) < target {
                break (probe, above);
            }
            above = probe;
            step *= 2;
        }
    } else {
        let (mut below, mut step) = (guess, 1);
        loop {
            if below == len - 1 {
                return len;
            }
            let probe = (below + step).min(len - 1);
            if f(probe) >= target {
                break (below, probe);
            }
            below = probe;
            step *= 2;
        }
    };
    while above - below > 1 {
        let mid = below + (above - below) / 2;
        if f(mid) >= target {
            above = mid;
        } else {
            below = mid;
        }
    }
    above
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeSet;
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::hash::remix;
    use crate::succinct::Layout;

    /// Values packed every way a dense directory meets: consecutive,
    /// strided, runs with gaps, one full bucket, and spread ones around.
    fn shapes(universe: u64) -> Vec<Vec<u64>> {
        let mut out: Vec<Vec<u64>> = Vec::new();
        out.push((1_000..21_000).collect());
        out.push((0..8_000u64).map(|i| 5_000 + 4 * i).collect());
        out.push((0..20_000u64).map(|i| (i / 1_000) * 40_000 + i % 1_000).collect());
        let mut mixed: Vec<u64> = (0..3_000u64).map(|i| remix(i, 9) % universe).collect();
        mixed.extend(300_000..306_000);
        mixed.sort_unstable();
        mixed.dedup();
        out.push(mixed);
        out
    }

    #[test]
    fn dense_selects_and_ranges_agree_with_the_plain_code_and_a_model() {
        let universe = 1u64 << 22;
        for (shape, values) in shapes(universe).into_iter().enumerate() {
            for q in [4, 8] {
                let l = Layout::best_low_bits(values.len() as u64, universe);
                let ef = EfCore::build(&values, universe, l, q).unwrap();
                let dense = DenseSelect::build(&ef).unwrap();
                // The consecutive and the mixed values fill whole buckets.
                if shape == 0 || shape == 3 {
                    assert!(!dense.is_empty(), "shape {shape}, q = {q}: no dense block");
                }
                let zeros = ef.layout.upper_bits - ef.layout.len;
                for k in (0..zeros + 2).step_by(7) {
                    assert_eq!(ef.select0_dense(k, &dense), ef.select0(k), "zero {k}, q = {q}");
                }
                let model: BTreeSet<u64> = values.iter().copied().collect();
                let around = values
                    .iter()
                    .step_by(97)
                    .flat_map(|&v| [v.saturating_sub(3), v, v + 1, v + 700]);
                let spread = (0..3_000u64).map(|i| remix(i, 4) % universe);
                for lo in around.chain(spread) {
                    for len in [0u64, 1, 2, 5, 64, 1 << l, 3 << l, 40_000] {
                        let hi = lo + len;
                        let want = model.range(lo..=hi).next().is_some();
                        assert_eq!(ef.contains_in_dense(lo, hi, &dense), want, "{lo}..={hi}, q = {q}");
                        assert_eq!(ef.contains_in(lo, hi), want, "{lo}..={hi}, q = {q}");
                    }
                }
                assert!(!ef.contains_in_dense(10, 9, &dense));
                assert!(!ef.contains_in_dense(universe, u64::MAX, &dense));
            }
        }
    }

    #[test]
    fn first_at_least_is_a_partition_point() {
        let seqs: [Vec<u64>; 5] = [
            Vec::new(),
            vec![5],
            (0..1000).collect(),
            (0..1000u64).map(|i| i * i / 7).collect(),
            (0..700u64)
                .map(|i| if i < 600 { 3 } else { 1_000_000 + i })
                .collect(),
        ];
        for seq in &seqs {
            for target in (0..1_001_000u64).step_by(997).chain([0, 1, 3, 4, 5, 6, u64::MAX]) {
                let want = seq.partition_point(|&v| v < target) as u64;
                for guess in [0, 1, want.saturating_sub(3), want, want + 5, 999, u64::MAX] {
                    let got = first_at_least(seq.len() as u64, |i| seq[i as usize], target, guess);
                    assert_eq!(got, want, "target {target}, guess {guess}");
                }
                assert_eq!(interpolated(seq.len() as u64, |i| seq[i as usize], target), want);
            }
        }
    }

    #[test]
    fn values_spread_evenly_have_no_dense_block() {
        let universe = 1u64 << 30;
        let mut values: Vec<u64> = (0..100_000u64).map(|i| remix(i, 1) % universe).collect();
        values.sort_unstable();
        let l = Layout::best_low_bits(values.len() as u64, universe);
        let ef = EfCore::build(&values, universe, l, 8).unwrap();
        let dense = DenseSelect::build(&ef).unwrap();
        assert!(dense.is_empty());
        assert_eq!(dense.size_in_bytes(), 0);
    }
}
