//! The blocked layout's construction: a shard's banding and solution for
//! the construction loop of `runs.rs`, and a whole unbumped filter's words
//! and shard table (what `build.rs` makes without bumping, and a bumped
//! filter's second filter).

use alloc::vec::Vec;

use super::banding::Banding;
use super::config::{RibbonParams, SHARD_KEYS};
use super::layout::Columns;
use super::row::{coeff_of, result_of, seeded, spread, start_of, unmixed, Row, ROW_WIDTH};
use super::runs::{self, Solver};
use super::solution::{padding_words, solve_into, BLOCK_SLOTS};
use super::table::shard_table;
use super::Shards;
use crate::streamed::StreamedBuild;
use crate::{Error, KeyHash};

/// The low `columns` bits (`columns` in `1..=32`).
#[inline(always)]
fn column_mask(columns: u32) -> u32 {
    u32::MAX >> (32 - columns)
}

/// Bands one shard's keys with shard seed `seed`, the shard being
/// `num_blocks` blocks from global block `first` laid out by `columns`;
/// `false` if the system has no solution.
fn band_shard(
    banding: &mut Banding,
    keys: &[u64],
    columns: &Columns,
    first: usize,
    num_blocks: usize,
    seed: u8,
) -> Result<bool, Error> {
    banding.reset(num_blocks * BLOCK_SLOTS)?;
    let num_starts = (num_blocks * BLOCK_SLOTS - (ROW_WIDTH - 1)) as u64;
    Ok(banding.add_all(keys.iter().map(|&a| {
        let q = seeded(spread(unmixed(a)), seed);
        let start = start_of(q, num_starts);
        Row {
            start,
            coeff: coeff_of(q),
            result: result_of(a) & column_mask(columns.of_key(first + start / BLOCK_SLOTS)),
        }
    })))
}

/// The words (with their padding), shard table and distinct key count of
/// a blocked filter of the `n` hashes `source` yields, with the column
/// rule `columns` if given (a bumped filter's second filter takes its
/// layer's), else the one `params` chooses for the shards' sizes (planned
/// for the distinct keys: `runs::solve_distinct`).
pub(crate) fn build_compact<F, I>(
    source: &F,
    n: usize,
    params: &RibbonParams,
    columns: Option<Columns>,
    options: &StreamedBuild,
) -> Result<(Vec<u64>, Shards, u64), Error>
where
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let make = |n: usize, plan: &[u32]| {
        let columns = match columns {
            Some(c) => c,
            None => {
                let mut planned: Vec<u32> = crate::zeroed::zeroed_vec(plan.len())?;
                for (p, &keys) in planned.iter_mut().zip(plan) {
                    // Fits: `runs::solve` refuses a total of 2^32 blocks or more.
                    let blocks = if keys == 0 {
                        0
                    } else {
                        params.blocks(keys as usize, 0)?
                    };
                    *p = u32::try_from(blocks).map_err(|_| Error::TooLarge)?;
                }
                params.columns(n, plan.len(), |s| planned[s] as usize)
            }
        };
        Ok(BlockSolver { params, columns })
    };
    let (solver, run, num_keys) = runs::solve_distinct(&make, source, n, SHARD_KEYS, options)?;
    let num_shards = run.ends.len();
    let (mut starts, _) = shard_table(num_shards)?;
    if num_shards > 0 {
        starts.push(0u32);
        starts.extend_from_slice(&run.ends);
    }
    let shards = Shards {
        columns: solver.columns,
        starts,
        seeds: run.seeds,
    };
    Ok((run.storage, shards, num_keys))
}

/// The blocked layout's shard sizes, banding and solution, for the
/// construction loop of `runs.rs`.
struct BlockSolver<'a> {
    params: &'a RibbonParams,
    columns: Columns,
}

impl Solver for BlockSolver<'_> {
    type Unit = u64;
    type Coeff = u128;
    const POSITIONAL: bool = true;

    fn units(&self, keys: usize, attempt: u32) -> Result<usize, Error> {
        self.params.blocks(keys, attempt)
    }

    fn storage(&self, from: usize, to: usize) -> Result<usize, Error> {
        self.columns
            .checked_word_of(to)
            .filter(|&w| w <= isize::MAX as usize / 8)
            .map(|w| w - self.columns.word_of(from))
            .ok_or(Error::TooLarge)
    }

    fn padding(&self) -> usize {
        padding_words(self.columns.max_columns())
    }

    fn band(
        &self,
        banding: &mut Banding,
        keys: &[u64],
        first: usize,
        blocks: usize,
        seed: u8,
    ) -> Result<bool, Error> {
        band_shard(banding, keys, &self.columns, first, blocks, seed)
    }

    fn store(&self, banding: &Banding, first: usize, blocks: usize, out: &mut [u64]) {
        solve_into(banding, &self.columns, first, blocks, out);
    }
}
