//! Bumping in the two-line layout (`lines.rs`, `bumped.rs`): 64-slot rows
//! in 64-byte lines (73 slots at `r = 7`), in equal shards holding about
//! 6% more keys than slots; each line is a bucket with a two-bit threshold
//! (0, a quarter, half or all of its slots), and the keys bumped go to a
//! two-line filter of their own.
//!
//! A query computes its shard, start and line from the hash alone, loads
//! the line's code and the line (or two) together, and asks the second
//! filter only when its offset in the line is below the threshold (about
//! 5% of absent keys). So it reads at most two lines of the layer and no
//! shard table, against the sharded two-line layout's table entry before
//! its lines.
//!
//! # Sizes, measured
//!
//! 64-slot rows need more slack than 128-slot ones, so the layer is
//! loaded further past its slots. At 10^6 keys (`cargo test --release -p
//! amq --lib bumped_build::tests::explore -- --ignored --nocapture` with
//! `BUMP_W=64 BUMP_B=73`, the load, thresholds and shard size in the
//! environment), shards of 65,536 keys at 1.06 keys per slot left 0.08% of
//! the slots empty and bumped 5.7% of the keys; thresholds {0, 18, 36, 73}
//! were the best of those tried ({0, 12, 24}, {0, 24, 48} and two-line
//! buckets were worse). With the spare bit of every line (0.2%) and the
//! codes (2 bits per line, 0.4%), the filter is about 0.9% above 7 bits
//! per key, against 4.3% for the sharded two-line layout. The same load
//! and thresholds serve every width: 6.07 bits per key at `r = 6`, 8.06 at
//! `r = 8`, 6.78 at FPR 1% (whose mix of widths costs 1.15% by itself).

use alloc::vec::Vec;

use super::banding::Banding;
use super::bumped::{coeff_in_layer, place};
use super::bumped_build::{band_bumped, gather};
use super::config::RibbonParams;
use super::line_filter::{self, LineBump, LineShards};
use super::lines::{self, solve_lines, Line, LINE_ROW};
use super::order::{count_shards, fill, sorted_distinct};
use super::row::{result_of, unmixed, Row};
use super::runs;
use super::Ribbon;
use crate::streamed::{run_jobs, StreamedBuild};
use crate::zeroed::zeroed_vec;
use crate::{Error, KeyHash};

/// Whether the layer overlaps its walks: a line's 77 keys walk a few
/// 64-bit steps each, and one bucket in five bumps: overlapped walks,
/// redone buckets included, measured no faster.
const OVERLAP: bool = false;

/// Lines per layer shard, about: what its line kinds are first chosen for.
pub(super) const LAYER_LINES_GUESS: usize = 850;

/// Builds a bumped two-line filter of the `n` hashes `source` yields: the
/// layer's shards in passes (split between threads), then the second
/// filter of the bumped keys, its lines after the layer's; or, as
/// `build_bumped`, the distinct key count to build again for.
pub(super) fn build_bumped_lines<F, I>(
    source: &F,
    n: usize,
    params: &RibbonParams,
    options: &StreamedBuild,
) -> Result<Result<Ribbon, usize>, Error>
where
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let guess = params.line_geometry(LAYER_LINES_GUESS)?;
    let (num_shards, shard_lines) = LineBump::shape_for(n, guess.slots_per_line(LAYER_LINES_GUESS))?;
    let geometry = params.line_geometry(shard_lines)?;
    let counts = count_shards(source(), num_shards)?;
    let layer_lines = num_shards * shard_lines;
    let mut lines: Vec<Line> = Vec::new();
    lines
        .try_reserve_exact(layer_lines)
        .map_err(|_| Error::TooLarge)?;
    crate::zeroed::advise_huge_pages(&mut lines);
    lines.resize(layer_lines, Line::default());
    let mut codes: Vec<u64> = zeroed_vec(LineBump::code_words(layer_lines))?;
    let mut bumped: Vec<KeyHash> = Vec::new();
    let mut distinct = 0u64;
    let num_slots = geometry.checked_slots(shard_lines).ok_or(Error::TooLarge)?;
    let num_starts = num_slots.saturating_sub(LINE_ROW - 1) as u64;
    for pass in options.plan(&counts) {
        let mut jobs = Vec::with_capacity(pass.len());
        let mut rest = &mut lines[pass[0].start * shard_lines..];
        for part in pass {
            let (mine, after) = core::mem::take(&mut rest).split_at_mut(part.len() * shard_lines);
            rest = after;
            jobs.push((part, mine));
        }
        let solved = run_jobs(jobs, |(part, out)| {
            let mut group = fill(source(), part.clone(), &counts)?;
            let mut banding = Banding::<u64>::new(0)?;
            let mut part_codes: Vec<u8> = zeroed_vec(part.len() * shard_lines)?;
            let (mut part_bumped, mut keys) = (Vec::new(), 0u64);
            for (i, s) in part.clone().enumerate() {
                let shard = sorted_distinct(&mut group, s);
                keys += shard.len() as u64;
                let lines = i * shard_lines..(i + 1) * shard_lines;
                band_bumped(
                    &mut banding,
                    shard,
                    num_slots,
                    OVERLAP,
                    |a| place(a, num_shards as u64, num_starts).1,
                    |start| {
                        let p = geometry.place(shard_lines, start);
                        (p.line, p.offset as u32, &p.kind.thresholds)
                    },
                    |a, start| Row {
                        start,
                        coeff: coeff_in_layer(unmixed(a)) as u64,
                        result: result_of(a) & ((1 << geometry.place(shard_lines, start).checks) - 1),
                    },
                    &mut part_codes[lines.clone()],
                    &mut part_bumped,
                )?;
                solve_lines(&banding, &geometry, &mut out[lines]);
            }
            Ok::<_, Error>((part.start, part_codes, part_bumped, keys))
        });
        // A line is a bucket.
        distinct += gather(solved, shard_lines, &mut codes, &mut bumped)?;
    }
    if runs::resize(n, distinct) {
        return Ok(Err(distinct as usize));
    }
    // The second filter: a sharded two-line filter of the bumped keys.
    let second_source = || bumped.iter().copied();
    let make = |n: usize, plan: &[u32]| params.line_solver(n, plan.len());
    let (solver, run, second_keys) = runs::solve_distinct(
        &make,
        &second_source,
        bumped.len(),
        lines::LINE_SHARD_KEYS,
        &StreamedBuild::in_memory(),
    )?;
    let mut second = line_filter::finish(run, solver.geometry)?;
    // Its lines after the layer's, its padding line (or one of our own)
    // last, in one allocation of exactly their size with its huge pages
    // asked for before the first write: growing the layer's would move it
    // (a 64-byte-aligned allocation is reallocated by copying) to memory
    // that never got the advice.
    let mut all: Vec<Line> = Vec::new();
    all.try_reserve_exact(layer_lines + second.lines.len().max(1))
        .map_err(|_| Error::TooLarge)?;
    crate::zeroed::advise_huge_pages(&mut all);
    all.extend_from_slice(&lines);
    drop(lines);
    all.extend_from_slice(&second.lines);
    if second.lines.is_empty() {
        all.push(Line::default());
    }
    let lines = all;
    for start in &mut second.starts {
        *start = u32::try_from(*start as usize + layer_lines).map_err(|_| Error::TooLarge)?;
    }
    let bump = LineBump::new(geometry, num_shards, shard_lines, codes, second_keys).ok_or(Error::TooLarge)?;
    Ok(Ok(Ribbon::of_lines(
        LineShards::new(second.geometry, second.starts, second.seeds, lines, Some(bump)),
        distinct,
    )))
}
