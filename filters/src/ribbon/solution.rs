//! Back-substitution into the interleaved solution, and the query that reads
//! it.
//!
//! A shard's solution `Z` is a `num_slots × columns` bit matrix: column `j`
//! holds bit `j` of every key's fingerprint. It is stored *interleaved*
//! (as RocksDB's `InterleavedSolutionStorage`): slots are grouped into blocks
//! of 64, and each block is stored as one `u64` word per column, bit `k` of
//! word `j` being `Z[64·block + k][j]`. A query covers 128 consecutive slots,
//! so it reads three consecutive blocks (two when it starts on a block
//! boundary): with the row's coefficients shifted into place once, each
//! column costs three ANDs and a parity, with no per-bit work, and at r = 7
//! the three blocks span at most four cache lines.
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

use super::banding::Banding;
use super::layout::Columns;
pub(crate) use super::layout::BLOCK_SLOTS;
use super::row::ROW_WIDTH;
use crate::prefetch::prefetch;

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
    pub(crate) fn word_offset(&self, block: usize) -> usize {
        block * self.base_columns as usize + block.saturating_sub(self.upper_start)
    }

    #[inline(always)]
    pub(crate) fn columns_of_block(&self, block: usize) -> u32 {
        self.base_columns + (block >= self.upper_start) as u32
    }

    /// Columns of the widest block (0 without blocks).
    pub(crate) fn max_columns(&self) -> u32 {
        match self.num_blocks {
            0 => 0,
            n => self.columns_of_block(n - 1),
        }
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

/// Solves one shard's banded system by back-substitution into its words:
/// the shard is `num_blocks` blocks from global block `first_block`, laid
/// out by `columns`, and `words` starts at the shard's first word.
///
/// Every slot gets every column of the widest block, stored or not: a row
/// stored in a block with an extra column may reach into blocks without
/// one, and the values it was solved against must be the ones a full
/// solution has (see `layout.rs`).
pub(crate) fn solve_into(
    banding: &Banding,
    columns: &Columns,
    first_block: usize,
    num_blocks: usize,
    words: &mut [u64],
) {
    // window[j]: bit k = Z[i + k][j] for the slot i being solved.
    let mut window = [0u128; 33];
    let windows = &mut window[..columns.max_columns() as usize];
    let base = columns.word_of(first_block);
    for block in (0..num_blocks).rev() {
        for slot in (block * BLOCK_SLOTS..(block + 1) * BLOCK_SLOTS).rev() {
            let (coeff, result) = banding.row_at(slot);
            for (j, w) in windows.iter_mut().enumerate() {
                let above = *w << 1;
                let both = coeff & above;
                // Parity of the 64-bit fold: LLVM lowers `count_ones() & 1`
                // on a u64 to a short fold even without a popcount
                // instruction, where a u128 popcount costs two full ones.
                let bit = ((result >> j) & 1) ^ (((both as u64) ^ ((both >> 64) as u64)).count_ones() & 1);
                *w = above | bit as u128;
            }
        }
        let global = first_block + block;
        let at = columns.word_of(global) - base;
        let stored = columns.of_block(global) as usize;
        for (word, w) in words[at..at + stored].iter_mut().zip(windows.iter()) {
            *word = *w as u64;
        }
    }
}

/// Zero words kept after the last shard when the widest block has
/// `max_columns` columns, so a query may read whole groups of [`GROUP`] words
/// from each of its three blocks without a bounds branch per column: the
/// last group of a block may run into the next block (or, for the last block
/// of the last shard, into this padding); those columns are computed and
/// masked away. A block-aligned row's third block may lie one past its
/// shard, where its coefficients are 0: at most `max_columns` rounded up to
/// whole groups are ever read past the end, at most 32 words.
pub(crate) fn padding_words(max_columns: u32) -> usize {
    (max_columns as usize).div_ceil(GROUP) * GROUP
}

/// Columns evaluated together: eight parities share one final fold.
pub(crate) const GROUP: usize = 8;

/// How a query turns one group of [`GROUP`] columns into their parities:
/// given the group's words in each of the three blocks and the three
/// coefficient words, bit `j` of the result is the parity of
/// `(b0[j] & c0) ^ (b1[j] & c1) ^ (b2[j] & c2)`. [`portable_group`] is the
/// reference; `ribbon/kernel.rs` has the AVX-512 one, tested against it.
pub(crate) type GroupWords<'a> = [&'a [u64; GROUP]; 3];

/// The portable group parity (see [`GroupWords`]).
#[inline(always)]
pub(crate) fn portable_group(blocks: GroupWords<'_>, coeff: [u64; 3]) -> u32 {
    let [b0, b1, b2] = blocks;
    let [c0, c1, c2] = coeff;
    parities(core::array::from_fn(|j| {
        (b0[j] & c0) ^ (b1[j] & c1) ^ (b2[j] & c2)
    }))
}

/// The coefficients of a row at `start` as a 192-bit value starting at its
/// start block: shifted into place once per query.
#[inline(always)]
fn shifted_coeff(start: usize, coeff: u128) -> [u64; 3] {
    let shift = (start & (BLOCK_SLOTS - 1)) as u32;
    let shifted = coeff << shift;
    // `>> 1 >> (127 - shift)` is `>> (128 - shift)`, and 0 when shift = 0.
    let spill = (coeff >> 1 >> (127 - shift)) as u64;
    [shifted as u64, (shifted >> 64) as u64, spill]
}

/// A query's view of the solution: the three blocks its row covers, and its
/// coefficients shifted to line up with them.
///
/// Shifting the one coefficient row (once per query) instead of the solution
/// words (once per column) leaves three ANDs and two XORs per column before
/// the parity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    /// Word offsets of the three blocks in the whole filter.
    blocks: [usize; 3],
    /// The coefficients as a 192-bit value starting at the first block.
    coeff: [u64; 3],
    /// The key's columns: those of its start block.
    columns: u32,
}

impl Window {
    /// The window of a row at `start` (`start < g.num_starts()`) in a
    /// version-1 shard whose words begin at `first_word`.
    #[inline(always)]
    pub(crate) fn new(first_word: usize, g: &Geometry, start: usize, coeff: u128) -> Self {
        let block = start / BLOCK_SLOTS;
        // The blocks are consecutive, so the next offsets are sums of column
        // counts. A block-aligned row's third block may be one past the
        // shard: its coefficients are 0 there, and the padding keeps the
        // read in bounds.
        let columns = g.columns_of_block(block);
        let first = first_word + g.word_offset(block);
        let second = first + columns as usize;
        let third = second + g.columns_of_block(block + 1) as usize;
        Window {
            blocks: [first, second, third],
            coeff: shifted_coeff(start, coeff),
            columns,
        }
    }

    /// The window of a row at `start` in the shard that begins at global
    /// block `first_block`, laid out by `columns`: every offset is
    /// arithmetic on the block index (`layout.rs`).
    #[inline(always)]
    pub(crate) fn compact(columns: &Columns, first_block: usize, start: usize, coeff: u128) -> Self {
        let block = first_block + start / BLOCK_SLOTS;
        let first = columns.word_of(block);
        let second = first + columns.of_block(block) as usize;
        let third = second + columns.of_block(block + 1) as usize;
        Window {
            blocks: [first, second, third],
            coeff: shifted_coeff(start, coeff),
            columns: columns.of_key(block),
        }
    }

    /// The key's column count.
    #[cfg(test)]
    #[inline(always)]
    pub(crate) fn columns(&self) -> u32 {
        self.columns
    }

    /// Asks for the cache lines of the three blocks (the third one's end
    /// too: the blocks span up to four lines).
    #[inline(always)]
    pub(crate) fn prefetch(&self, words: &[u64]) {
        let [o0, o1, o2] = self.blocks;
        prefetch(&words[o0]);
        prefetch(&words[o1]);
        prefetch(&words[o2]);
        prefetch(&words[o2 + self.columns as usize - 1]);
    }

    /// The fingerprint's columns, eight at a time; bits at and above
    /// `columns` are unspecified (the caller masks them). `words` is the
    /// whole filter, padding included.
    #[inline(always)]
    pub(crate) fn fingerprint(&self, words: &[u64], group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32) -> u32 {
        // The first group is straight-line code: at up to eight columns
        // (FPR down to 0.4%) it is all there is, and the loop for the rest
        // stays out of the common path.
        let mut out = group(self.group_words(words, 0), self.coeff);
        if self.columns as usize <= GROUP {
            return out;
        }
        out |= group(self.group_words(words, GROUP), self.coeff) << GROUP;
        if self.columns as usize <= 2 * GROUP {
            return out;
        }
        out | self.more_groups(words, group)
    }

    /// Columns from `2·GROUP` on, out of line: keeping a loop's state alive
    /// in the common path made the compiler spill registers there.
    #[inline(never)]
    fn more_groups(&self, words: &[u64], group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32) -> u32 {
        let mut out = 0;
        let mut first = 2 * GROUP;
        while first < self.columns as usize {
            out |= group(self.group_words(words, first), self.coeff) << first;
            first += GROUP;
        }
        out
    }

    /// The words of columns `first .. first + GROUP` in each of the three
    /// blocks (three bounds checks per group of eight columns).
    #[inline(always)]
    fn group_words<'w>(&self, words: &'w [u64], first: usize) -> GroupWords<'w> {
        let [o0, o1, o2] = self.blocks;
        [
            group_at(words, o0 + first),
            group_at(words, o1 + first),
            group_at(words, o2 + first),
        ]
    }

    /// Whether the fingerprint equals `result` in the key's columns, with
    /// `group` computing the parities. Evaluates every column without
    /// branching: an early exit at the first mismatch is mispredicted half
    /// the time on absent keys, and the pipeline flush costs more than the
    /// columns it saves.
    #[inline(always)]
    pub(crate) fn matches(
        &self,
        words: &[u64],
        result: u32,
        group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32,
    ) -> bool {
        (self.fingerprint(words, group) ^ result) & (u32::MAX >> (32 - self.columns)) == 0
    }
}

/// Words a [`Window::gather`]ed copy holds: the first two blocks of at most
/// 32 columns each (`r = 32` blocks get no extra column), then at most 32
/// columns of the third, read in whole groups.
pub(crate) const GATHERED_WORDS: usize = 3 * 32;

impl Window {
    /// Word offsets of the three blocks in the whole filter.
    #[inline(always)]
    pub(crate) fn block_offsets(&self) -> [usize; 3] {
        self.blocks
    }

    /// This window over a copy of the words it reads, for a filter whose
    /// `num_words` words are read through `word` (a view reads them from
    /// bytes): `buf[i]` gets word `blocks[0] + i` for every word the query
    /// reads below `num_words`, and the returned window reads `buf`. Words
    /// past `num_words` keep whatever `buf` held: the query reads them only
    /// as columns it masks away or as a block its coefficients are zero in
    /// (see [`padding_words`]), so they cannot change an answer.
    #[inline(always)]
    pub(crate) fn gather(
        &self,
        word: impl Fn(usize) -> u64,
        num_words: usize,
        buf: &mut [u64; GATHERED_WORDS],
    ) -> Window {
        let [o0, o1, o2] = self.blocks;
        let end = (o2 + (self.columns as usize).div_ceil(GROUP) * GROUP).min(num_words);
        for (b, i) in buf.iter_mut().zip(o0..end) {
            *b = word(i);
        }
        Window {
            blocks: [0, o1 - o0, o2 - o0],
            ..*self
        }
    }
}

/// `GROUP` words starting at `at`.
#[inline(always)]
fn group_at(words: &[u64], at: usize) -> &[u64; GROUP] {
    words[at..at + GROUP].try_into().expect("a range of GROUP words")
}

/// The parities of eight words as the eight bits of a byte (bit `j` is the
/// parity of `v[j]`), without a popcount instruction (not in baseline
/// x86-64).
///
/// Each [`merge`] halves the width over which two words' parities are kept,
/// packing both into one word: 64 → 32 → 16 → 8 bits in three levels of
/// 4, 2 and 1 merges, so byte `j` of the result has `v[j]`'s parity. The
/// pairing order makes byte `j` come from `v[j]`. A shift-XOR fold of each
/// byte to its low bit and one multiplication gather the eight bits.
#[inline(always)]
pub(crate) fn parities(v: [u64; GROUP]) -> u32 {
    // Chosen at compile time when the build enables `popcnt` (e.g.
    // `-C target-cpu=native`, where LLVM also vectorizes the eight counts
    // with AVX-512: about a third faster per query). `popcnt` alone measured
    // no faster than the fold below; default builds get the vector counts
    // from the run-time AVX-512 kernel in `kernel.rs` instead.
    if cfg!(target_feature = "popcnt") {
        return (0..GROUP).fold(0, |acc, j| acc | (v[j].count_ones() & 1) << j);
    }
    const LOW_32: u64 = 0x0000_0000_ffff_ffff;
    const LOW_16: u64 = 0x0000_ffff_0000_ffff;
    const LOW_8: u64 = 0x00ff_00ff_00ff_00ff;
    // Byte j = (bit 2, bit 1, bit 0 of j): bit 2 picks the 32-bit half, bit 1
    // the 16-bit quarter in it, bit 0 the byte in that.
    let even_bytes = [merge(v[0], v[4], 32, LOW_32), merge(v[2], v[6], 32, LOW_32)];
    let odd_bytes = [merge(v[1], v[5], 32, LOW_32), merge(v[3], v[7], 32, LOW_32)];
    let mut x = merge(
        merge(even_bytes[0], even_bytes[1], 16, LOW_16),
        merge(odd_bytes[0], odd_bytes[1], 16, LOW_16),
        8,
        LOW_8,
    );
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    // Bit 8j moves to bit 56 + j; the partial products never overlap, so
    // nothing carries.
    ((x & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// Packs two words' parities into one: in each lane of `2·half` bits, the
/// low half gets `x`'s lane folded (lo ⊕ hi) and the high half `y`'s. `low`
/// masks the low half of every lane. (A delta swap exchanges `x`'s high
/// halves with `y`'s low halves; the XOR of the two results folds both.)
#[inline(always)]
fn merge(x: u64, y: u64, half: u32, low: u64) -> u64 {
    let t = ((x >> half) ^ y) & low;
    x ^ y ^ t ^ (t << half)
}

/// The zero words after the solution: enough for the widest block, none
/// without shards (no query reads the words then).
pub(crate) fn padding(columns: &Columns, num_shards: usize) -> usize {
    match num_shards {
        0 => 0,
        _ => padding_words(columns.max_columns()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::banding::Added;
    use super::super::row::Row;
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    /// Every stored equation holds after back-substitution, for a mix of
    /// column counts and starts at every offset within a block, in a shard
    /// that spans the end of a run of extra columns (rows checking six
    /// columns next to stored rows that reach past the run).
    #[test]
    fn solution_satisfies_every_stored_row() {
        let columns = Columns::new(5, 252).unwrap();
        let (first, num_blocks) = (249usize, 10usize);
        let num_starts = num_blocks * BLOCK_SLOTS - (ROW_WIDTH - 1);
        let mut banding = Banding::new(num_blocks * BLOCK_SLOTS).unwrap();
        let mut rows = Vec::new();
        for i in 0..560u64 {
            let a = crate::hash::remix(i, 77);
            let start = (i as usize * 7) % num_starts;
            let checked = columns.of_key(first + start / BLOCK_SLOTS);
            let row = Row {
                start,
                coeff: (a as u128) << 64 | crate::hash::remix(a, 1) as u128 | 1,
                result: (a as u32) & ((1 << checked) - 1),
            };
            if banding.add(row) != Added::Contradiction {
                rows.push((row, checked));
            }
        }
        assert!(rows.len() > 450, "{}", rows.len());
        assert!(rows.iter().any(|&(_, c)| c == 6));
        let base = columns.word_of(first);
        let mut words = vec![7u64; base]; // the words before the shard
        words.resize(columns.word_of(first + num_blocks), 0);
        assert_eq!(words.len() - base, 10 * 5 + 4); // blocks 252..=255 have 6
        solve_into(&banding, &columns, first, num_blocks, &mut words[base..]);
        assert!(words[..base].iter().all(|&w| w == 7));
        words.resize(words.len() + padding_words(6), 0);
        for (row, checked) in rows {
            let window = Window::compact(&columns, first, row.start, row.coeff);
            assert_eq!(window.columns(), checked);
            let mask = (1 << checked) - 1;
            assert_eq!(
                window.fingerprint(&words, portable_group) & mask,
                row.result,
                "{row:?}"
            );
            assert!(window.matches(&words, row.result, portable_group));
            assert!(!window.matches(&words, row.result ^ (1 << (checked - 1)), portable_group));
        }
    }

    #[test]
    fn parities_match_count_ones() {
        let mut x = 1u64;
        for _ in 0..1000 {
            let v: [u64; GROUP] = core::array::from_fn(|j| {
                x = crate::hash::remix(x, j as u64);
                x
            });
            let want = (0..GROUP).fold(0, |acc, j| acc | (v[j].count_ones() & 1) << j);
            assert_eq!(parities(v), want, "{v:x?}");
        }
        assert_eq!(parities([0; GROUP]), 0);
        assert_eq!(parities([1; GROUP]), 0xff);
        assert_eq!(parities([1 << 63, 0, 3, 0, 0, 0, 0, u64::MAX >> 1]), 0b1000_0001);
    }
}
