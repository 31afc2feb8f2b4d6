//! Back-substitution into the interleaved solution, and the query that reads
//! it.
//!
//! A shard's solution `Z` is a `num_slots × columns` bit matrix: column `j`
//! holds bit `j` of every key's fingerprint. It is stored *interleaved*
//! (as RocksDB's `InterleavedSolutionStorage`): slots are grouped into blocks
//! of 64, and each block is stored as one `u64` word per column, bit `k` of
//! word `j` being `Z[64·block + k][j]`. A query covers 128 consecutive slots,
//! so it reads three consecutive blocks (two when it starts on a block
//! boundary), and each column costs one AND and one parity over a 128-bit
//! window: no per-bit work, and at r = 7 at most four cache lines.
//!
//! Fractional bits per key: blocks before `upper_start` hold `r` columns,
//! blocks from `upper_start` on hold `r + 1`. A key uses the column count of
//! its start block. Rows only reach forward, so a key that starts in an
//! `r + 1` block only touches `r + 1` blocks, and a key that starts earlier
//! uses only the first `r` columns, which every block has.
//!
//! Back-substitution walks the slots from last to first, keeping for each
//! column a 128-bit window of the solution bits at and above the current
//! slot: `Z[i][j] = result_i[j] ⊕ parity(coeff_i & window_j)`, where the
//! row's own bit meets a 0 in the window. Slots without a row are free
//! variables and get 0 (any value is correct, and the FPR does not depend on
//! it because results are independent of coefficients).

use alloc::vec::Vec;

use super::banding::Banding;
use super::row::ROW_WIDTH;

/// Slots per interleaved block: one `u64` per column.
pub(crate) const BLOCK_SLOTS: usize = 64;

/// The shape of one shard's solution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Blocks of 64 slots: 0 (no keys) or at least 2 (one row width).
    pub(crate) num_blocks: usize,
    /// Columns `r` of the blocks before `upper_start`.
    pub(crate) base_columns: u32,
    /// First block with `r + 1` columns (`num_blocks` if none).
    pub(crate) upper_start: usize,
}

impl Geometry {
    pub(crate) fn num_slots(&self) -> usize {
        self.num_blocks * BLOCK_SLOTS
    }

    /// Possible start slots, `num_slots - 127`, so every row fits; 0 if empty.
    pub(crate) fn num_starts(&self) -> usize {
        self.num_slots().saturating_sub(ROW_WIDTH - 1)
    }

    /// Number of `u64` words, or `None` on overflow.
    pub(crate) fn num_words(&self) -> Option<usize> {
        self.num_blocks
            .checked_mul(self.base_columns as usize)?
            .checked_add(self.num_blocks.checked_sub(self.upper_start)?)
    }

    /// Index of block `block`'s first word.
    #[inline(always)]
    fn word_offset(&self, block: usize) -> usize {
        block * self.base_columns as usize + block.saturating_sub(self.upper_start)
    }

    #[inline(always)]
    fn columns_of_block(&self, block: usize) -> u32 {
        self.base_columns + (block >= self.upper_start) as u32
    }

    /// Columns (fingerprint bits) of a key that starts at `start`.
    #[inline(always)]
    pub(crate) fn columns_at(&self, start: usize) -> u32 {
        self.columns_of_block(start / BLOCK_SLOTS)
    }

    /// Offset of the first word a query at `start` reads (for prefetching).
    #[inline(always)]
    pub(crate) fn first_word_at(&self, start: usize) -> usize {
        self.word_offset(start / BLOCK_SLOTS)
    }

    /// Expected FPR of a query that lands in this shard: the share of starts
    /// with `r` columns at `2^-r`, the rest at `2^-(r+1)`.
    pub(crate) fn expected_fpr(&self) -> f64 {
        let starts = self.num_starts() as f64;
        if starts == 0.0 {
            return 0.0;
        }
        let r = self.base_columns as f64;
        let lower = ((self.upper_start * BLOCK_SLOTS) as f64).min(starts);
        (lower * libm::exp2(-r) + (starts - lower) * libm::exp2(-r - 1.0)) / starts
    }
}

/// Solves the banded system by back-substitution and appends the shard's
/// words (`geometry.num_words()` of them) to `out`.
pub(crate) fn solve_into(banding: &Banding, geometry: &Geometry, out: &mut Vec<u64>) {
    let first = out.len();
    out.resize(first + geometry.num_words().unwrap_or(0), 0);
    let words = &mut out[first..];
    // window[j]: bit k = Z[i + k][j] for the slot i being solved.
    let mut window = [0u128; 33];
    for block in (0..geometry.num_blocks).rev() {
        let columns = geometry.columns_of_block(block) as usize;
        let windows = &mut window[..columns];
        for slot in (block * BLOCK_SLOTS..(block + 1) * BLOCK_SLOTS).rev() {
            let (coeff, result) = banding.row_at(slot);
            for (j, w) in windows.iter_mut().enumerate() {
                let above = *w << 1;
                let bit = ((result >> j) & 1) ^ ((coeff & above).count_ones() & 1);
                *w = above | bit as u128;
            }
        }
        let at = geometry.word_offset(block);
        for (word, w) in words[at..at + columns].iter_mut().zip(windows.iter()) {
            *word = *w as u64;
        }
    }
}

/// `coeff · Z[start .. start + 128]` for the first `columns` columns of the
/// shard whose words are `words`: the fingerprint the stored keys make a key
/// with this row reproduce. Requires `start < num_starts` and
/// `columns <= columns_at(start)`.
#[inline(always)]
pub(crate) fn fingerprint(words: &[u64], g: &Geometry, start: usize, coeff: u128, columns: u32) -> u32 {
    let block = start / BLOCK_SLOTS;
    let shift = (start % BLOCK_SLOTS) as u32;
    let columns = columns as usize;
    // The third block only matters when the window is not block aligned;
    // clamping keeps the aligned case at the last block in bounds.
    let third = (block + 2).min(g.num_blocks - 1);
    let (o0, o1, o2) = (g.word_offset(block), g.word_offset(block + 1), g.word_offset(third));
    let b0 = &words[o0..o0 + columns];
    let b1 = &words[o1..o1 + columns];
    let b2 = &words[o2..o2 + columns];
    let mut out = 0u32;
    for (j, ((&w0, &w1), &w2)) in b0.iter().zip(b1).zip(b2).enumerate() {
        let low = (w0 as u128 | (w1 as u128) << 64) >> shift;
        // `<< 1 << (127 - shift)` is `<< (128 - shift)`, and 0 when shift = 0.
        let high = (w2 as u128) << 1 << (127 - shift);
        out |= ((coeff & (low | high)).count_ones() & 1) << j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::banding::Added;
    use super::super::row::Row;
    use super::*;

    /// Every stored equation holds after back-substitution, for a mix of
    /// column counts and starts at every offset within a block.
    #[test]
    fn solution_satisfies_every_stored_row() {
        let g = Geometry {
            num_blocks: 4,
            base_columns: 5,
            upper_start: 2,
        };
        let mut banding = Banding::new(g.num_slots());
        let mut rows = Vec::new();
        for i in 0..200u64 {
            let a = crate::hash::remix(i, 77);
            let start = (i as usize * 7) % g.num_starts();
            let columns = g.columns_at(start);
            let row = Row {
                start,
                coeff: (a as u128) << 64 | crate::hash::remix(a, 1) as u128 | 1,
                result: (a as u32) & ((1 << columns) - 1),
            };
            if banding.add(row) != Added::Contradiction {
                rows.push((row, columns));
            }
        }
        assert!(rows.len() > 150);
        let mut words = vec![7u64]; // solve_into appends
        solve_into(&banding, &g, &mut words);
        assert_eq!(words.len(), 1 + 4 * 5 + 2);
        for (row, columns) in rows {
            assert_eq!(columns, 5 + (row.start >= 128) as u32);
            assert_eq!(fingerprint(&words[1..], &g, row.start, row.coeff, columns), row.result, "{row:?}");
        }
    }
}
