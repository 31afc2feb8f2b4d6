//! Where a query's words are, computed from the block index alone.
//!
//! The solution is one sequence of 64-slot blocks over all shards; shard
//! `i` owns blocks `starts[i] .. starts[i + 1]` (`mod.rs`). Which blocks
//! hold an extra column is a rule on the *global* block index, the same for
//! every shard, so the word offset of any block is arithmetic: no per-shard
//! word offset, column count or extra-column start has to be read.
//!
//! The rule ([`Columns`]): every block holds `r` columns; in each period of
//! [`PERIOD_BLOCKS`] blocks, the blocks from `upper_from` on hold `r + 1`.
//! A key checks `r + 1` columns when all three blocks its row covers hold
//! them, else `r` (its start block's run of extra columns must reach two
//! blocks further), so a key never reads a column a block lacks.
//!
//! Why that is correct for any pattern: back-substitution computes every
//! column for every slot (the extra column too, in blocks that do not store
//! it), so the solution `Z` satisfies every stored row, hence every key's
//! equation, in every column; keys that check only `r` columns have their
//! extra result bit set to 0, which is just one more consistent equation.
//! A query reads only blocks that store all the columns it checks, where
//! the stored values are those of `Z`.
//!
//! Cost of the rule against the per-shard suffix of version 1: keys that
//! start in the last two blocks of a run of extra columns check `r`
//! columns though the run stores `r + 1`: 2 blocks in 256 of the extra
//! column's words buy no FPR, about 0.1% of the space at a fractional
//! FPR (none at an integer `r`, where no block has an extra column).

use super::row::ROW_WIDTH;

/// Most result bits (columns) a Ribbon filter can have: one `u32` fingerprint.
pub const MAX_RESULT_BITS: u32 = 32;

/// Slots per block: one slot per bit of a `u64` column word.
pub(crate) const BLOCK_SLOTS: usize = 64;

/// Blocks per period of the extra-column pattern (a power of two: the
/// period and the offset in it are a shift and a mask).
pub(crate) const PERIOD_BLOCKS: usize = 256;
const PERIOD_SHIFT: u32 = PERIOD_BLOCKS.trailing_zeros();

/// The filter-wide column rule (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Columns {
    /// `r`: columns of every block, `1..=32`.
    base: u32,
    /// First block of each period with `r + 1` columns, `0..=256`
    /// ([`PERIOD_BLOCKS`] = no extra column anywhere; always so at `r = 32`).
    upper_from: u32,
}

impl Columns {
    /// The rule, or `None` if a field is out of range.
    pub(crate) fn new(base: u32, upper_from: u32) -> Option<Self> {
        let ok = (1..=MAX_RESULT_BITS).contains(&base)
            && upper_from as usize <= PERIOD_BLOCKS
            && (base < MAX_RESULT_BITS || upper_from as usize == PERIOD_BLOCKS);
        ok.then_some(Columns { base, upper_from })
    }

    /// `r` columns everywhere.
    pub(crate) fn uniform(base: u32) -> Self {
        Columns {
            base: base.clamp(1, MAX_RESULT_BITS),
            upper_from: PERIOD_BLOCKS as u32,
        }
    }

    pub(crate) fn base(&self) -> u32 {
        self.base
    }

    pub(crate) fn upper_from(&self) -> u32 {
        self.upper_from
    }

    #[inline(always)]
    fn is_upper(&self, block: usize) -> bool {
        (block & (PERIOD_BLOCKS - 1)) as u32 >= self.upper_from
    }

    /// Columns stored in global block `block`.
    #[inline(always)]
    pub(crate) fn of_block(&self, block: usize) -> u32 {
        self.base + self.is_upper(block) as u32
    }

    /// Columns a key whose row starts in global block `block` checks.
    #[inline(always)]
    pub(crate) fn of_key(&self, block: usize) -> u32 {
        let all = self.is_upper(block) & self.is_upper(block + 1) & self.is_upper(block + 2);
        self.base + all as u32
    }

    /// Index of global block `block`'s first word: `r` words per block
    /// before it, plus one per block with an extra column before it.
    #[inline(always)]
    pub(crate) fn word_of(&self, block: usize) -> usize {
        let extra_per_period = PERIOD_BLOCKS - self.upper_from as usize;
        block * self.base as usize
            + (block >> PERIOD_SHIFT) * extra_per_period
            + (block & (PERIOD_BLOCKS - 1)).saturating_sub(self.upper_from as usize)
    }

    /// [`word_of`](Self::word_of), or `None` on overflow.
    pub(crate) fn checked_word_of(&self, block: usize) -> Option<usize> {
        let extra_per_period = PERIOD_BLOCKS - self.upper_from as usize;
        block
            .checked_mul(self.base as usize)?
            .checked_add((block >> PERIOD_SHIFT) * extra_per_period)?
            .checked_add((block & (PERIOD_BLOCKS - 1)).saturating_sub(self.upper_from as usize))
    }

    /// Columns of the widest block.
    pub(crate) fn max_columns(&self) -> u32 {
        self.base + ((self.upper_from as usize) < PERIOD_BLOCKS) as u32
    }

    /// Blocks before global block `x` that hold an extra column.
    pub(crate) fn upper_blocks_before(&self, x: usize) -> usize {
        (x >> PERIOD_SHIFT) * (PERIOD_BLOCKS - self.upper_from as usize)
            + (x & (PERIOD_BLOCKS - 1)).saturating_sub(self.upper_from as usize)
    }

    /// Blocks before global block `x` whose keys check `r + 1` columns.
    fn upper_keys_before(&self, x: usize) -> usize {
        let lo = self.upper_from as usize;
        if lo == 0 {
            return x; // every block has the extra column
        }
        // Offsets lo ..= PERIOD - 3 of each period: two more upper blocks
        // follow in the same period.
        let per_period = (PERIOD_BLOCKS - 2).saturating_sub(lo);
        (x >> PERIOD_SHIFT) * per_period + (x & (PERIOD_BLOCKS - 1)).saturating_sub(lo).min(per_period)
    }

    /// Starts of a shard of `num_blocks` blocks (0 or at least 2) from
    /// global block `first`: all of them, and those whose keys check
    /// `r + 1` columns. Start `s` is in local block `s / 64`: blocks
    /// `0 ..= num_blocks − 3` hold 64 starts each, block `num_blocks − 2`
    /// one.
    pub(crate) fn shard_starts(&self, first: usize, num_blocks: usize) -> (u64, u64) {
        if num_blocks < 2 {
            return (0, 0);
        }
        let starts = (num_blocks * BLOCK_SLOTS - (ROW_WIDTH - 1)) as u64;
        let last = first + num_blocks - 2;
        let full = self.upper_keys_before(last) - self.upper_keys_before(first);
        let upper = full as u64 * BLOCK_SLOTS as u64 + (self.of_key(last) > self.base) as u64;
        (starts, upper)
    }

    /// Expected FPR of a query landing in a shard of `num_blocks` blocks from
    /// global block `first`: the share of starts with `r` columns at
    /// `2^-r`, the rest at `2^-(r+1)`.
    pub(crate) fn shard_fpr(&self, first: usize, num_blocks: usize) -> f64 {
        let (starts, upper) = self.shard_starts(first, num_blocks);
        if starts == 0 {
            return 0.0;
        }
        let r = self.base as f64;
        ((starts - upper) as f64 * libm::exp2(-r) + upper as f64 * libm::exp2(-r - 1.0)) / starts as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arithmetic agrees with counting block by block.
    #[test]
    fn offsets_and_counts_agree_with_counting() {
        for (base, lo) in [
            (7, 256),
            (7, 0),
            (6, 1),
            (6, 100),
            (3, 253),
            (5, 254),
            (5, 255),
            (31, 17),
        ] {
            let c = Columns::new(base, lo).unwrap();
            let (mut word, mut upper_blocks, mut upper_keys) = (0, 0, 0);
            for g in 0..3 * PERIOD_BLOCKS + 7 {
                assert_eq!(c.word_of(g), word, "{base} {lo} {g}");
                assert_eq!(c.checked_word_of(g), Some(word));
                assert_eq!(c.upper_blocks_before(g), upper_blocks);
                assert_eq!(c.upper_keys_before(g), upper_keys, "{base} {lo} {g}");
                let key = c.of_block(g).min(c.of_block(g + 1)).min(c.of_block(g + 2));
                assert_eq!(c.of_key(g), key);
                word += c.of_block(g) as usize;
                upper_blocks += (c.of_block(g) > base) as usize;
                upper_keys += (key > base) as usize;
            }
            for (first, blocks) in [(0, 2), (3, 2), (250, 9), (10, 300), (0, 0)] {
                let (starts, upper) = c.shard_starts(first, blocks);
                let (mut want_starts, mut want_upper) = (0, 0);
                for s in 0..(blocks * 64).saturating_sub(127) {
                    want_starts += 1;
                    want_upper += (c.of_key(first + s / 64) > base) as u64;
                }
                assert_eq!(
                    (starts, upper),
                    (want_starts, want_upper),
                    "{base} {lo} {first} {blocks}"
                );
            }
        }
    }

    #[test]
    fn rejects_out_of_range_rules() {
        assert!(Columns::new(0, 256).is_none());
        assert!(Columns::new(33, 256).is_none());
        assert!(Columns::new(7, 257).is_none());
        assert!(Columns::new(32, 255).is_none());
        assert_eq!(Columns::new(32, 256), Some(Columns::uniform(32)));
        assert_eq!(Columns::uniform(7).max_columns(), 7);
        assert_eq!(Columns::new(7, 3).unwrap().max_columns(), 8);
    }
}
