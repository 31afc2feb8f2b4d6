//! The Grafite query, written once over where the Elias–Fano words live
//! (the owned filter's vector, or a frame's bytes for the view).
//!
//! A range `lo..=hi` touches one block of `2^k` keys, or two neighbouring
//! ones; each piece maps onto a circular interval of the reduced universe
//! (one interval, or two where it wraps past `r − 1`), and the filter says
//! yes when the Elias–Fano code holds a value in one of them: a successor
//! query per interval. A range over three blocks or more covers a whole
//! block and answers `true` (the bound promises nothing for it).

use super::hash::LocalityHash;
use crate::succinct::{DenseSelect, EfCore, Words};

/// Whether the code of `h(S)` holds a value in `h(lo..=hi)`.
#[inline]
pub(crate) fn may_contain_range<W: Words>(
    ef: &EfCore<W>,
    dense: &DenseSelect,
    hash: &LocalityHash,
    lo: u64,
    hi: u64,
) -> bool {
    if lo > hi || ef.len() == 0 {
        return false;
    }
    let k = hash.block_bits();
    let (first, last) = (lo >> k, hi >> k);
    if first == last {
        piece(ef, dense, hash, first, hash.offset(lo), hash.offset(hi))
    } else if last - first == 1 {
        let block_end = hash.offset(u64::MAX);
        piece(ef, dense, hash, first, hash.offset(lo), block_end)
            || piece(ef, dense, hash, last, 0, hash.offset(hi))
    } else {
        true
    }
}

/// Whether the code holds a value in the image of offsets `from..=to` of
/// block `block`: `(q(block) + from .. q(block) + to) mod r`, one interval
/// or, past `r − 1`, two. Each is one [`EfCore::contains_in_dense`]: a
/// successor query that reads low bits only where high parts do not
/// decide, through the dense blocks' directory where there is one.
#[inline(always)]
fn piece<W: Words>(
    ef: &EfCore<W>,
    dense: &DenseSelect,
    hash: &LocalityHash,
    block: u64,
    from: u64,
    to: u64,
) -> bool {
    let start = hash.block_start(block);
    let (a, b) = (hash.rotate(start, from), hash.rotate(start, to));
    if a <= b {
        ef.contains_in_dense(a, b, dense)
    } else {
        ef.contains_in_dense(a, hash.universe() - 1, dense) || ef.contains_in_dense(0, b, dense)
    }
}

/// Queries in flight in [`may_contain_ranges`]: each stage issues this
/// many loads before the next stage reads the first of them, enough to
/// cover a miss to memory, and few enough that their lines stay in L1.
const GROUP: usize = 16;

/// A range of a batch, between stages: its interval `a..=b` of the reduced
/// universe when one successor search answers it (one block, no wrap past
/// `r − 1`), and then where its bucket starts.
#[derive(Clone, Copy, Default)]
struct Staged {
    a: u64,
    b: u64,
    pos: u64,
    index: u64,
    state: State,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Answered by [`may_contain_range`] itself (two blocks or a wrap).
    #[default]
    Whole,
    /// One interval whose bucket starts in a dense block: answered through
    /// the directory.
    Dense,
    /// One interval, its select still to do.
    Interval,
    /// One interval, selected: `pos` and `index` are set.
    Selected,
    /// No bucket (only unchecked bytes lead here): `false`, as the single
    /// query says.
    Absent,
}

/// [`may_contain_range`] for every range, `out[i]` for `ranges[i]`, in
/// groups of [`GROUP`] that go through the query's three dependent reads
/// a stage at a time (group prefetching): the select samples of the whole
/// group, then the upper words each sample points at, then the selects and
/// the low bits they point at, then the answers. Each stage's loads are in
/// flight together, where a single query waits for each in turn. A query
/// whose bucket starts in a dense block of `dense` is answered as a single
/// one, through the directory (its select reads other words). The answers
/// are the single query's: both read the code exactly, and outside a dense
/// block the plain select and walk are bounded (a bucket that starts in a
/// sample block that is not dense, 1,024 bits at most, ends within it).
pub(crate) fn may_contain_ranges<W: Words>(
    ef: &EfCore<W>,
    dense: &DenseSelect,
    hash: &LocalityHash,
    ranges: &[(u64, u64)],
    out: &mut [bool],
) {
    assert_eq!(ranges.len(), out.len(), "one answer per range");
    if ef.len() == 0 {
        out.fill(false);
        return;
    }
    let (l, q) = (ef.layout.low_bits, ef.layout.sample_log2);
    let sparse = |a: u64| dense.is_empty() || !dense.is_dense((a >> l).saturating_sub(1) >> q);
    for (group, answers) in ranges.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
        let mut staged = [Staged::default(); GROUP];
        for (s, &(lo, hi)) in staged.iter_mut().zip(group) {
            if let Some((a, b)) = one_interval(hash, lo, hi) {
                let state = if sparse(a) { State::Interval } else { State::Dense };
                *s = Staged { a, b, state, ..*s };
                ef.prefetch_sample(a >> l);
            }
        }
        for s in staged.iter().filter(|s| s.state == State::Interval) {
            ef.prefetch_scan(s.a >> l);
        }
        for s in staged.iter_mut().filter(|s| s.state == State::Interval) {
            match ef.bucket_start(s.a >> l) {
                Some((pos, index)) => {
                    ef.prefetch_low(index);
                    *s = Staged {
                        pos,
                        index,
                        state: State::Selected,
                        ..*s
                    };
                }
                None => s.state = State::Absent,
            }
        }
        for ((o, s), &(lo, hi)) in answers.iter_mut().zip(&staged).zip(group) {
            *o = match s.state {
                State::Selected => ef.contains_from(s.a, s.b, s.pos, s.index),
                State::Absent => false,
                State::Dense => ef.contains_in_dense(s.a, s.b, dense),
                State::Whole | State::Interval => may_contain_range(ef, dense, hash, lo, hi),
            };
        }
    }
}

/// The interval of the reduced universe a range maps onto when it is one:
/// the range lies in one block, and its image does not wrap past `r − 1`.
#[inline(always)]
fn one_interval(hash: &LocalityHash, lo: u64, hi: u64) -> Option<(u64, u64)> {
    let k = hash.block_bits();
    if lo > hi || lo >> k != hi >> k {
        return None;
    }
    let start = hash.block_start(lo >> k);
    let (a, b) = (
        hash.rotate(start, hash.offset(lo)),
        hash.rotate(start, hash.offset(hi)),
    );
    (a <= b).then_some((a, b))
}

/// Starts loading what [`may_contain_range`] reads first for a range
/// starting at `lo`: the Elias–Fano words of `h(lo)`'s bucket.
#[inline]
pub(crate) fn prefetch<W: Words>(ef: &EfCore<W>, hash: &LocalityHash, lo: u64) {
    let start = hash.block_start(lo >> hash.block_bits());
    ef.prefetch_bucket(hash.rotate(start, hash.offset(lo)) >> ef.layout.low_bits);
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeSet;
    use alloc::vec::Vec;

    use super::super::GrafiteRange;
    use crate::hash::remix;
    use crate::range::{RangeFilter, RangeSizing};

    /// Keys with dense stretches (consecutive and stride-4 runs) among
    /// sparse ones: the batch takes the staged path for queries in sparse
    /// blocks and the directory for those in dense ones, and answers as the
    /// single queries do, never a false negative. Both kinds of query are
    /// counted, so neither path goes untested.
    #[test]
    fn batch_answers_as_single_queries_around_dense_stretches() {
        let mut keys: Vec<u64> = (0..20_000u64).map(|i| remix(i, 3) >> 4).collect();
        keys.extend(1_000_000..1_040_000u64);
        keys.extend((0..30_000u64).map(|i| (1 << 40) + 4 * i));
        let model: BTreeSet<u64> = keys.iter().copied().collect();
        let f = GrafiteRange::build(&keys, RangeSizing::BitsPerKey(16.0)).unwrap();
        assert!(!f.dense.is_empty(), "the runs make dense blocks");
        let mut ranges = Vec::new();
        for i in 0..40_000u64 {
            let k = keys[(remix(i, 5) % keys.len() as u64) as usize];
            let len = [0, 1, 3, 15, 255][(i % 5) as usize];
            let lo = if i % 3 == 0 {
                k.saturating_sub(len / 2)
            } else {
                k.wrapping_add(1 + i % 7)
            };
            ranges.push((lo, lo.saturating_add(len)));
            let r = remix(i, 6) >> (i % 40);
            ranges.push((r, r.saturating_add(len)));
        }
        let (l, q) = (f.ef.layout.low_bits, f.ef.layout.sample_log2);
        let (mut staged, mut directory) = (0, 0);
        for &(lo, hi) in &ranges {
            if let Some((a, _)) = super::one_interval(&f.hash, lo, hi) {
                match f.dense.is_dense((a >> l).saturating_sub(1) >> q) {
                    true => directory += 1,
                    false => staged += 1,
                }
            }
        }
        assert!(
            staged > 1_000 && directory > 1_000,
            "{staged} staged, {directory} through the directory"
        );
        let mut out = alloc::vec![false; ranges.len()];
        f.may_contain_ranges(&ranges, &mut out);
        for (&(lo, hi), &o) in ranges.iter().zip(&out) {
            assert_eq!(o, f.may_contain_range(lo, hi), "{lo}..={hi}");
            if model.range(lo..=hi).next().is_some() {
                assert!(o, "false negative on {lo}..={hi}");
            }
        }
    }
}
