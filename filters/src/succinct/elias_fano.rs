//! The Elias–Fano code of a non-decreasing sequence of integers (Elias
//! 1974, "Efficient storage and retrieval by content and address of static
//! files"; Fano 1971), with `successor` answered from a sampled select
//! index over the zeros of the upper bits.
//!
//! `n` values below `u` take `n·l` low bits (`l = ⌊log2(u/n)⌋`) and
//! `n + ⌈u / 2^l⌉` upper bits, at most `2 + log2(u/n)` bits per value, plus
//! 64 bits per `2^q` zeros of select samples ([`layout`](super::layout)
//! has the words). `successor(x)` finds where the values whose high part
//! is `x >> l` start (just after zero number `(x >> l) − 1`: a sample, a
//! popcount per word from it to that zero, and one broadword select in the
//! word) and walks the ones from there.
//!
//! The code is written once over [`Words`], so the owned [`EliasFano`] and
//! the codes read in place from a frame (`LeWords`) share every query.

use alloc::vec::Vec;

use super::bits::{low_mask, read_field, select_in_word, write_field, Words};
use super::layout::Layout;
use crate::error::invalid;
use crate::format::Reader;
use crate::zeroed::zeroed_vec;
use crate::{Error, FormatError};

/// Select samples every `2^8` zeros: 0.25 to 0.5 bits per value, and a
/// successor scans four words on average from its sample. Measured with the
/// range filter (`range_report --bpk 16`, rebuilt for each interval),
/// intervals of `2^5` to `2^10` zeros move a query by less than the noise at
/// 100k to 10M keys, and shorter ones cost FPR (3.9e-3 at `2^5` against
/// 1.2e-3 at `2^8`, ranges of 16).
///
/// ```
/// use amq::succinct::{EliasFano, DEFAULT_SAMPLE_LOG2};
/// assert_eq!(DEFAULT_SAMPLE_LOG2, 8);
/// // 1,000 values over 2^20: 1,024 zeros, so four samples of 8 bytes.
/// let values: Vec<u64> = (0..1_000u64).map(|i| i << 10).collect();
/// let ef = EliasFano::new(&values, 1 << 20)?;
/// let without_samples = 8 * (2024usize.div_ceil(64) + 10_000usize.div_ceil(64) + 1);
/// assert_eq!(ef.size_in_bytes(), without_samples + 4 * 8);
/// # Ok::<(), amq::Error>(())
/// ```
pub const DEFAULT_SAMPLE_LOG2: u32 = 8;

/// An Elias–Fano code over words `W`: the queries, for owned and borrowed
/// words alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EfCore<W> {
    pub(crate) words: W,
    pub(crate) layout: Layout,
}

impl EfCore<Vec<u64>> {
    /// The code of `values` (non-decreasing, each below `universe`) with
    /// `low_bits` low bits and a select sample every `2^sample_log2` zeros.
    pub(crate) fn build(
        values: &[u64],
        universe: u64,
        low_bits: u32,
        sample_log2: u32,
    ) -> Result<Self, Error> {
        let layout = Layout::new(values.len() as u64, universe, low_bits, sample_log2)
            .map_err(|why| invalid("values", why))?;
        let mut words = zeroed_vec(layout.total_words().ok_or(Error::TooLarge)?)?;
        let (upper, rest) = words.split_at_mut(layout.upper_words);
        let (lower, samples) = rest.split_at_mut(layout.lower_words);
        let mask = low_mask(low_bits);
        let mut previous = 0;
        for (i, &v) in values.iter().enumerate() {
            if v < previous {
                return Err(invalid("values", "must be in non-decreasing order"));
            }
            if v >= universe {
                return Err(invalid("values", "must be below the universe"));
            }
            previous = v;
            let p = (v >> low_bits) + i as u64;
            upper[(p / 64) as usize] |= 1 << (p % 64);
            write_field(lower, i as u64 * low_bits as u64, low_bits, v & mask);
        }
        write_samples(&*upper, &layout, samples);
        Ok(EfCore { words, layout })
    }

    /// Decodes the words of `payload` (exactly the layout's, checked before
    /// allocating), then checks them all ([`check_contents`](Self::check_contents)).
    pub(crate) fn decode(layout: Layout, mut payload: Reader<'_>) -> Result<Self, Error> {
        layout.check_payload_len(&payload)?;
        let words = payload.u64s(layout.total_words().ok_or(Error::TooLarge)?, 0)?;
        payload.finish()?;
        let core = EfCore { words, layout };
        core.check_contents()?;
        Ok(core)
    }
}

/// Fills `samples` with the position of every `2^q`-th zero of the upper
/// bits (zero `j·2^q` in sample `j`).
fn write_samples<U: Words + ?Sized>(upper: &U, layout: &Layout, samples: &mut [u64]) {
    let step = 1u64 << layout.sample_log2;
    let mut seen = 0u64; // zeros before word w
    let mut next = 0u64; // the rank of the next zero to sample
    let mut j = 0;
    for w in 0..layout.upper_words {
        let zeros = !upper.word(w) & valid_bits(layout, w);
        let count = zeros.count_ones() as u64;
        while next < seen + count && j < samples.len() {
            samples[j] = w as u64 * 64 + select_in_word(zeros, (next - seen) as u32) as u64;
            j += 1;
            next += step;
        }
        seen += count;
    }
}

/// The bits of upper word `w` that are part of the code (all but the tail
/// of the last word).
#[inline(always)]
fn valid_bits(layout: &Layout, w: usize) -> u64 {
    let start = w as u64 * 64;
    low_mask(layout.upper_bits.saturating_sub(start).min(64) as u32)
}

impl<W: Words> EfCore<W> {
    /// Values held.
    #[inline(always)]
    pub(crate) fn len(&self) -> u64 {
        self.layout.len
    }

    /// Upper word `w`.
    #[inline(always)]
    fn upper(&self, w: usize) -> u64 {
        self.words.word(w)
    }

    /// The low bits of value `i`.
    #[inline(always)]
    pub(super) fn low(&self, i: u64) -> u64 {
        let l = self.layout.low_bits;
        read_field(
            &self.words,
            self.layout.lower_start(),
            i.wrapping_mul(l as u64),
            l,
        )
    }

    /// The position in the upper bits of zero number `k` (from 0), or `None`
    /// if there is no such zero (or the samples say nonsense, which only
    /// unchecked bytes can).
    #[inline]
    pub(crate) fn select0(&self, k: u64) -> Option<u64> {
        let q = self.layout.sample_log2;
        let j = (k >> q) as usize;
        if j >= self.layout.sample_words {
            return None;
        }
        let start = self.words.word(self.layout.sample_start() + j);
        // Zeros still to pass, counting the sampled one as the first.
        self.nth_zero_from(start, k - ((j as u64) << q))
    }

    /// The position of the zero `remaining` zeros after the first zero at
    /// or after bit `start` of the upper bits (`remaining = 0`: that first
    /// zero), or `None` past the end.
    #[inline(always)]
    pub(super) fn nth_zero_from(&self, start: u64, mut remaining: u64) -> Option<u64> {
        let mut w = (start / 64) as usize;
        if w >= self.layout.upper_words {
            return None;
        }
        let mut zeros = !self.upper(w) & (u64::MAX << (start % 64));
        loop {
            let count = zeros.count_ones() as u64;
            if remaining < count {
                return Some(w as u64 * 64 + select_in_word(zeros, remaining as u32) as u64);
            }
            remaining -= count;
            w += 1;
            if w >= self.layout.upper_words {
                return None;
            }
            zeros = !self.upper(w);
        }
    }

    /// The zeros of the upper bits in `from..to` (`to` at most the end).
    pub(super) fn zeros_between(&self, from: u64, to: u64) -> u64 {
        let mut zeros = 0;
        let mut p = from;
        while p < to {
            let w = (p / 64) as usize;
            let take = (64 - p % 64).min(to - p);
            let bits = (self.upper(w) >> (p % 64)) & low_mask(take as u32);
            zeros += take - u64::from(bits.count_ones());
            p += take;
        }
        zeros
    }

    /// Bit `p` of the upper bits (`false` past them).
    #[inline(always)]
    pub(super) fn bit(&self, p: u64) -> bool {
        p < self.layout.upper_bits && self.upper((p / 64) as usize) >> (p % 64) & 1 != 0
    }

    /// Where the ones of bucket `high` start in the upper bits, and how many
    /// values come before them: just after zero `high − 1`.
    #[inline(always)]
    pub(crate) fn bucket_start(&self, high: u64) -> Option<(u64, u64)> {
        let pos = if high == 0 { 0 } else { self.select0(high - 1)? + 1 };
        Some((pos, pos.wrapping_sub(high)))
    }

    /// Calls `visit(high, index)` for the values from position `pos` of the
    /// upper bits on (value `index` has high part `high`), in order, until
    /// it returns `Some`; `None` once the values run out.
    #[inline(always)]
    fn walk<T>(&self, pos: u64, mut index: u64, mut visit: impl FnMut(u64, u64) -> Option<T>) -> Option<T> {
        let mut w = (pos / 64) as usize;
        let mut ones = self.upper(w) & (u64::MAX << (pos % 64));
        loop {
            while ones == 0 {
                w += 1;
                if w >= self.layout.upper_words {
                    return None;
                }
                ones = self.upper(w);
            }
            if index >= self.layout.len {
                return None;
            }
            let p = w as u64 * 64 + ones.trailing_zeros() as u64;
            if let Some(answer) = visit(p.wrapping_sub(index), index) {
                return Some(answer);
            }
            ones &= ones - 1;
            index += 1;
        }
    }

    /// The smallest value at least `x`, if any.
    /// Starts loading what a query for values of high part `high` reads
    /// first: the select sample it starts from, and the words of the upper
    /// and lower bits where the bucket is expected to start (`high` plus
    /// the values expected below it, for values spread evenly), which for
    /// most buckets are the words the query reads.
    #[inline]
    pub(crate) fn prefetch_bucket(&self, high: u64) {
        let layout = &self.layout;
        if layout.len == 0 {
            return;
        }
        let j = (high.saturating_sub(1) >> layout.sample_log2) as usize;
        self.words
            .prefetch(layout.sample_start() + j.min(layout.sample_words.saturating_sub(1)));
        let below = ((u128::from(high) << layout.low_bits) * u128::from(layout.len)
            / u128::from(layout.universe.max(1))) as u64;
        self.words.prefetch(((high + below) / 64) as usize);
        let bit = below.min(layout.len - 1) * u64::from(layout.low_bits);
        self.words.prefetch(layout.lower_start() + (bit / 64) as usize);
    }

    /// The first stage of a two-stage prefetch for a query of bucket
    /// `high`: the select sample its select starts from.
    #[inline]
    pub(crate) fn prefetch_sample(&self, high: u64) {
        let layout = &self.layout;
        let j = (high.saturating_sub(1) >> layout.sample_log2) as usize;
        if j < layout.sample_words {
            self.words.prefetch(layout.sample_start() + j);
        }
    }

    /// The second stage of a staged query of bucket `high`, once its
    /// sample has arrived ([`prefetch_sample`](Self::prefetch_sample)): the
    /// upper words the select scans from that sample to zero `high − 1`.
    /// They start at the sampled zero and, with at least one zero per two
    /// bits (the low bits are `⌊log2(u/n)⌋`), end within twice the zeros to
    /// pass; at most three lines for samples every 2^8 zeros.
    #[inline]
    pub(crate) fn prefetch_scan(&self, high: u64) {
        let layout = &self.layout;
        let k = high.saturating_sub(1);
        let j = (k >> layout.sample_log2) as usize;
        if j >= layout.sample_words {
            return;
        }
        let start = self.words.word(layout.sample_start() + j);
        let end = start.saturating_add(2 * (k - ((j as u64) << layout.sample_log2)));
        let mut line = start / 512;
        while line <= end / 512 && line <= start / 512 + 2 {
            self.words.prefetch((line * 8) as usize);
            line += 1;
        }
    }

    /// The third stage, once the select is done: the low bits of value
    /// `index`, the first a query of the bucket reads.
    #[inline]
    pub(crate) fn prefetch_low(&self, index: u64) {
        let bit = index.wrapping_mul(u64::from(self.layout.low_bits));
        self.words
            .prefetch(self.layout.lower_start().wrapping_add((bit / 64) as usize));
    }

    #[inline]
    pub(crate) fn successor(&self, x: u64) -> Option<u64> {
        if x >= self.layout.universe || self.layout.len == 0 {
            return None;
        }
        let l = self.layout.low_bits;
        let (pos, index) = self.bucket_start(x >> l)?;
        self.walk(pos, index, |high, i| {
            let v = (high << l) | self.low(i);
            (v >= x).then_some(v)
        })
    }

    /// Whether some value lies in `lo..=hi` (`false` when `lo > hi`).
    ///
    /// The successor of `lo`, compared with `hi`, but reading a value's low
    /// bits only when its high part does not decide: a first value past
    /// `hi`'s bucket is a `false`, one strictly between the two buckets a
    /// `true`, without touching the lower part. For a short range that is
    /// most answers whose bucket is empty.
    #[inline]
    pub(crate) fn contains_in(&self, lo: u64, hi: u64) -> bool {
        if lo > hi || lo >= self.layout.universe || self.layout.len == 0 {
            return false;
        }
        match self.bucket_start(lo >> self.layout.low_bits) {
            Some((pos, index)) => self.contains_from(lo, hi, pos, index),
            None => false,
        }
    }

    /// [`contains_in`](Self::contains_in) once its select is done: `lo ≤ hi`,
    /// `lo` below the universe, a code of at least one value, and
    /// `(pos, index)` what [`bucket_start`](Self::bucket_start) says for
    /// `lo`'s bucket. The batched queries call it after a stage that
    /// prefetched what it reads.
    #[inline]
    pub(crate) fn contains_from(&self, lo: u64, hi: u64, pos: u64, index: u64) -> bool {
        let l = self.layout.low_bits;
        let (first, last) = (lo >> l, hi >> l);
        if first == last {
            // One bucket (every short range): its values are the run of ones
            // at `pos`, their lows ascending. A run of at most one, inside
            // the word, is answered without a branch on the value.
            let shift = pos % 64;
            let run = (!(self.upper((pos / 64) as usize) >> shift)).trailing_zeros() as u64;
            if run <= 1 && run < 64 - shift {
                let mask = low_mask(l);
                let v = self.low(index);
                return (run == 1) & (v >= lo & mask) & (v <= hi & mask);
            }
        }
        self.walk(pos, index, |high, i| {
            if high > last {
                return Some(false);
            }
            if high > first && high < last {
                return Some(true);
            }
            let v = (high << l) | self.low(i);
            // A value of `lo`'s bucket below `lo`: look at the next one.
            (v >= lo).then_some(v <= hi)
        })
        .unwrap_or(false)
    }

    /// The values in order.
    pub(crate) fn iter(&self) -> Values<'_, W> {
        Values {
            core: self,
            index: 0,
            w: 0,
            ones: self.upper(0),
        }
    }

    /// Every check of the words that [`Layout::check_payload_len`] does not
    /// make, in one pass: the upper bits hold `n` ones and end in a zero,
    /// with nothing after it; the lower part holds nothing after its last
    /// field; every sample is where it must be; and the values do not fall
    /// and stay below the universe.
    pub(crate) fn check_contents(&self) -> Result<(), Error> {
        let bad = |why| Err(Error::Format(FormatError::InvalidParameters(why)));
        let layout = &self.layout;
        let mut ones = 0u64;
        for w in 0..layout.upper_words {
            let word = self.upper(w);
            if word & !valid_bits(layout, w) != 0 {
                return bad("bits after the Elias-Fano upper part");
            }
            ones += word.count_ones() as u64;
        }
        let last = layout.upper_bits - 1;
        if ones != layout.len || self.upper((last / 64) as usize) >> (last % 64) & 1 != 0 {
            return bad("Elias-Fano upper part holds other than its values");
        }
        let used = layout.len * layout.low_bits as u64;
        for w in 0..layout.lower_words {
            let start = w as u64 * 64;
            let tail = !low_mask(used.saturating_sub(start).min(64) as u32);
            if self.words.word(layout.lower_start() + w) & tail != 0 {
                return bad("bits after the Elias-Fano lower part");
            }
        }
        let mut samples = zeroed_vec(layout.sample_words)?;
        write_samples(&self.words, layout, &mut samples);
        if (0..layout.sample_words).any(|j| self.words.word(layout.sample_start() + j) != samples[j]) {
            return bad("Elias-Fano select samples do not match the upper part");
        }
        let mut previous = 0;
        for v in self.iter() {
            if v < previous || v >= layout.universe {
                return bad("Elias-Fano values fall or leave the universe");
            }
            previous = v;
        }
        Ok(())
    }
}

/// The values of a code in order ([`EfCore::iter`]).
#[derive(Debug)]
pub(crate) struct Values<'a, W> {
    core: &'a EfCore<W>,
    index: u64,
    w: usize,
    ones: u64,
}

impl<W: Words> Iterator for Values<'_, W> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.index >= self.core.layout.len {
            return None;
        }
        while self.ones == 0 {
            self.w += 1;
            if self.w >= self.core.layout.upper_words {
                return None;
            }
            self.ones = self.core.upper(self.w);
        }
        let p = self.w as u64 * 64 + self.ones.trailing_zeros() as u64;
        let v = (p.wrapping_sub(self.index) << self.core.layout.low_bits) | self.core.low(self.index);
        self.ones &= self.ones - 1;
        self.index += 1;
        Some(v)
    }
}

/// The Elias–Fano code of a non-decreasing sequence of `u64`s below a
/// universe, answering [`successor`](Self::successor) queries.
///
/// `n` values below `u` take about `2 + log2(u/n)` bits each, plus a select
/// index of 64 bits per 256 zeros of the upper bits (0.25–0.5 bits per
/// value). Duplicates are kept.
///
/// ```
/// use amq::succinct::EliasFano;
/// let ef = EliasFano::new(&[3, 3, 10, 1_000, 70_000], 1 << 20)?;
/// assert_eq!(ef.len(), 5);
/// assert_eq!(ef.successor(4), Some(10));
/// assert_eq!(ef.successor(10), Some(10));
/// assert_eq!(ef.successor(70_001), None);
/// assert!(ef.contains_in(900, 1_000) && !ef.contains_in(1_001, 69_999));
/// assert_eq!(ef.iter().collect::<Vec<_>>(), [3, 3, 10, 1_000, 70_000]);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EliasFano {
    core: EfCore<Vec<u64>>,
}

impl EliasFano {
    /// The code of `values`, which must be in non-decreasing order and each
    /// below `universe` (in `1..=2^62`), with the low-bit count that makes
    /// it smallest. [`Error::InvalidParameter`] for values out of order or
    /// out of the universe, [`Error::TooLarge`] if it cannot be allocated.
    ///
    /// ```
    /// use amq::succinct::EliasFano;
    /// assert!(EliasFano::new(&[2, 1], 10).is_err());
    /// assert!(EliasFano::new(&[10], 10).is_err());
    /// let empty = EliasFano::new(&[], 1 << 40)?;
    /// assert_eq!(empty.successor(0), None);
    /// assert!(empty.size_in_bytes() <= 24);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn new(values: &[u64], universe: u64) -> Result<Self, Error> {
        let low_bits = Layout::best_low_bits(values.len() as u64, universe);
        Ok(EliasFano {
            core: EfCore::build(values, universe, low_bits, DEFAULT_SAMPLE_LOG2)?,
        })
    }

    /// Values held (duplicates counted).
    ///
    /// ```
    /// assert_eq!(amq::succinct::EliasFano::new(&[1, 1], 2)?.len(), 2);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.core.len() as usize
    }

    /// Whether it holds no value.
    ///
    /// ```
    /// assert!(amq::succinct::EliasFano::new(&[], 2)?.is_empty());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.core.len() == 0
    }

    /// Every value is below this.
    ///
    /// ```
    /// assert_eq!(amq::succinct::EliasFano::new(&[1], 1 << 30)?.universe(), 1 << 30);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn universe(&self) -> u64 {
        self.core.layout.universe
    }

    /// Low bits per value, `⌊log2(universe / len)⌋`.
    ///
    /// ```
    /// assert_eq!(amq::succinct::EliasFano::new(&[1, 2, 3, 4], 1 << 20)?.low_bits(), 18);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn low_bits(&self) -> u32 {
        self.core.layout.low_bits
    }

    /// The smallest value at least `x`, if any.
    ///
    /// ```
    /// let ef = amq::succinct::EliasFano::new(&[5, 9], 16)?;
    /// assert_eq!((ef.successor(0), ef.successor(6), ef.successor(10)), (Some(5), Some(9), None));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn successor(&self, x: u64) -> Option<u64> {
        self.core.successor(x)
    }

    /// Whether some value lies in `lo..=hi`; `false` when `lo > hi` (an
    /// empty range).
    ///
    /// ```
    /// let ef = amq::succinct::EliasFano::new(&[5, 9], 16)?;
    /// assert!(ef.contains_in(6, 9) && !ef.contains_in(6, 8) && !ef.contains_in(9, 5));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn contains_in(&self, lo: u64, hi: u64) -> bool {
        self.core.contains_in(lo, hi)
    }

    /// The values, in order.
    ///
    /// ```
    /// let ef = amq::succinct::EliasFano::new(&[0, 7, 7, 15], 16)?;
    /// assert_eq!(ef.iter().sum::<u64>(), 29);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.core.iter()
    }

    /// Heap bytes: every word of the code and its select samples.
    ///
    /// ```
    /// let values: Vec<u64> = (0..1_000u64).map(|i| i << 10).collect();
    /// let ef = amq::succinct::EliasFano::new(&values, 1 << 20)?;
    /// let bits_per_value = ef.size_in_bytes() as f64 * 8.0 / 1_000.0;
    /// assert!(bits_per_value < 2.0 + 10.0 + 0.5);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        self.core.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    fn check_against_scan(values: &[u64], universe: u64, sample_log2: u32) {
        let low_bits = Layout::best_low_bits(values.len() as u64, universe);
        let ef = EfCore::build(values, universe, low_bits, sample_log2).unwrap();
        ef.check_contents().unwrap();
        assert!(ef.iter().eq(values.iter().copied()));
        let probes = values
            .iter()
            .flat_map(|&v| [v, v.saturating_sub(1), v + 1])
            .chain((0..200).map(|i| remix(i, 3) % universe))
            .chain([0, universe - 1, universe, u64::MAX]);
        for x in probes {
            let want = values.iter().copied().find(|&v| v >= x);
            assert_eq!(
                ef.successor(x),
                want,
                "x = {x}, u = {universe}, q = {sample_log2}"
            );
        }
    }

    #[test]
    fn successor_matches_a_scan() {
        for (n, universe) in [
            (0, 1),
            (0, 1 << 40),
            (1, 1),
            (5, 5),
            (100, 100),
            (1000, 1 << 20),
            (3000, 1 << 62),
        ] {
            for q in [4, 8] {
                let mut values: Vec<u64> = (0..n).map(|i| remix(i, universe) % universe).collect();
                values.sort_unstable();
                check_against_scan(&values, universe, q);
                values.dedup();
                check_against_scan(&values, universe, q);
            }
        }
        // Clusters: long runs of one bucket, and empty stretches.
        let clustered: Vec<u64> = (0..2000u64).map(|i| (i / 500) * 1_000_000 + i % 500).collect();
        check_against_scan(&clustered, 4_000_000, 4);
        let all_equal = [77u64; 600];
        check_against_scan(&all_equal, 78, 4);
    }

    #[test]
    fn select0_finds_every_zero() {
        let values: Vec<u64> = (0..3000u64).map(|i| i * 3 + (i % 3)).collect();
        let ef = EfCore::build(&values, 10_000, 1, 4).unwrap();
        let mut k = 0;
        for p in 0..ef.layout.upper_bits {
            if ef.upper((p / 64) as usize) >> (p % 64) & 1 == 0 {
                assert_eq!(ef.select0(k), Some(p), "zero {k}");
                k += 1;
            }
        }
        assert_eq!(k, ef.layout.zeros());
        assert_eq!(ef.select0(k + (1 << 20)), None);
    }
}
