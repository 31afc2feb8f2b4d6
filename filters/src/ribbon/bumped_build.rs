//! Building a bumped filter (`bumped.rs`): each shard of the layer banded
//! with bumping, then solved; the bumped keys built into the second filter.
//! Streamed like the other layouts: the shards are solved in passes whose
//! keys fit the memory budget, each pass's shards split between threads.
//! A shard's words and codes do not depend on any other shard, so a
//! thread writes straight into its part of the filter.

use alloc::vec::Vec;

use super::banding::{Banding, Coeff};
use super::blocked::build_compact;
use super::bumped::{coeff_in_layer, place, Bumped, Layer, BUCKET_SLOTS, THRESHOLDS};
use super::config::RibbonParams;
use super::order::{count_shards, fill, sorted_distinct};
use super::row::{result_of, unmixed, Row, ROW_WIDTH};
use super::runs::resize;
use super::solution::{padding, solve_into, BLOCK_SLOTS};
use super::{Kernel, Layout, Ribbon};
use crate::streamed::{run_jobs, StreamedBuild};
use crate::zeroed::zeroed_vec;
use crate::{Error, KeyHash};

/// Whether the blocked layer overlaps its walks: about 132 keys with long
/// 128-bit walks, one bucket in nine bumping: banding a layer took 10-24%
/// less time overlapped, redone buckets included (best of ten rounds at
/// 10^6 keys).
const BLOCKED_OVERLAP: bool = true;

/// A blocked layer's bucket of a start: `BUCKET_SLOTS` slots each.
fn blocked_bucket(start: usize) -> Bucketed {
    (start / BUCKET_SLOTS, (start % BUCKET_SLOTS) as u32, &THRESHOLDS)
}

#[inline(always)]
fn mask(columns: u32) -> u32 {
    u32::MAX >> (32 - columns)
}

/// A start's bucket in its shard, its offset in the bucket, and the
/// bucket's threshold of each two-bit code (keys starting below it in the
/// bucket are bumped).
pub(crate) type Bucketed = (usize, u32, &'static [u32; 4]);

/// Bands one shard of a bumped layer: `keys` are the shard's sorted,
/// distinct first steps, `start_of(a)` a key's start in the shard (monotone
/// in `a`), `bucket_of(start)` where that is in the buckets (consecutive
/// runs of starts) and `row_of(a, start)` its equation, in a banding of
/// `num_slots` slots. Writes each bucket's threshold code to `codes` (one
/// per bucket of the shard) and pushes the bumped keys' first steps to
/// `bumped`. With `overlap`, a bucket's keys are first banded with
/// overlapped walks (undone and banded again one at a time if one
/// contradicts), which pays where walks are long and few buckets bump.
///
/// A shard keeps at most `num_slots` keys. A row the stored ones already
/// imply (consistent, so nothing to store) costs no slot, so an overloaded
/// layer could keep more keys than slots, most often at one result bit,
/// where half of the redundant rows are consistent; the format refuses such
/// a layer. A key that would be one too many is treated as a contradiction:
/// its bucket bumps from there.
#[allow(clippy::too_many_arguments)]
pub(crate) fn band_bumped<C: Coeff>(
    banding: &mut Banding<C>,
    keys: &[u64],
    num_slots: usize,
    overlap: bool,
    start_of: impl Fn(u64) -> usize,
    bucket_of: impl Fn(usize) -> Bucketed,
    row_of: impl Fn(u64, usize) -> Row<C>,
    codes: &mut [u8],
    bumped: &mut Vec<u64>,
) -> Result<(), Error> {
    banding.reset(num_slots)?;
    let mut log: Vec<(u32, usize)> = Vec::new();
    let mut stored: Vec<usize> = Vec::new();
    // Keys kept in the shard so far, stored or implied.
    let mut kept = 0;
    let mut i = 0;
    while i < keys.len() {
        let (bucket, _, thresholds) = bucket_of(start_of(keys[i]));
        let mut end = i + 1;
        while end < keys.len() && bucket_of(start_of(keys[end])).0 == bucket {
            end += 1;
        }
        let room = num_slots - kept;
        // Most buckets bump nothing: band their keys with overlapped walks,
        // and only where one contradicts undo them all and band the bucket
        // again one key at a time. Which keys contradict depends only on
        // the span of the rows stored before (not on where the walks put
        // them), so the codes and bumped keys are the one-at-a-time ones.
        if overlap && end - i <= room {
            stored.clear();
            let rows = keys[i..end].iter().rev().map(|&a| {
                let start = start_of(a);
                row_of(a, start)
            });
            if banding.add_all_noting(rows, &mut |slot| stored.push(slot)) {
                codes[bucket] = 0;
                kept += end - i;
                i = end;
                continue;
            }
            for &slot in &stored {
                banding.clear(slot);
            }
        }
        log.clear();
        let mut code = 0;
        for (&a, added) in keys[i..end].iter().rev().zip(0..) {
            let start = start_of(a);
            let offset = bucket_of(start).1;
            let fits = match added < room {
                true => banding.add_where(row_of(a, start)),
                false => Err(()),
            };
            match fits {
                Ok(Some(slot)) => log.push((offset, slot)),
                Ok(None) => {}
                Err(()) => {
                    code = thresholds.iter().position(|&t| t > offset).unwrap_or(3);
                    let t = thresholds[code];
                    while let Some(&(o, slot)) = log.last() {
                        if o >= t {
                            break;
                        }
                        banding.clear(slot);
                        log.pop();
                    }
                    break;
                }
            }
        }
        codes[bucket] = code as u8;
        let t = thresholds[code];
        for &a in &keys[i..end] {
            match bucket_of(start_of(a)).1 < t {
                true => bumped.push(a),
                false => kept += 1,
            }
        }
        i = end;
    }
    Ok(())
}

/// What a thread solved of a pass: its first shard, its buckets' codes
/// (one byte each), its bumped keys' first steps and its distinct keys.
pub(crate) type Part = (usize, Vec<u8>, Vec<u64>, u64);

/// Gathers a pass's parts in order: each bucket's code packed into `codes`
/// (`per_shard` buckets per shard, 32 codes to a word), each bumped key's
/// hash appended to `bumped`; returns the distinct keys.
pub(crate) fn gather(
    parts: Vec<Result<Part, Error>>,
    per_shard: usize,
    codes: &mut [u64],
    bumped: &mut Vec<KeyHash>,
) -> Result<u64, Error> {
    let mut distinct = 0;
    for part in parts {
        let (first_shard, part_codes, part_bumped, keys) = part?;
        distinct += keys;
        for (i, &c) in part_codes.iter().enumerate() {
            let b = first_shard * per_shard + i;
            codes[b >> 5] |= (c as u64) << (2 * (b & 31));
        }
        bumped
            .try_reserve(part_bumped.len())
            .map_err(|_| Error::TooLarge)?;
        bumped.extend(part_bumped.iter().map(|&a| KeyHash::from_well_mixed(unmixed(a))));
    }
    Ok(distinct)
}

/// Builds a bumped filter of the `n` hashes `source` yields, or says
/// (`Err`) how many distinct keys it holds when duplicates left its layer
/// under-loaded ([`resize`](super::runs::resize)): the caller builds again for that many.
pub(super) fn build_bumped<F, I>(
    source: &F,
    n: usize,
    params: &RibbonParams,
    options: &StreamedBuild,
) -> Result<Result<Ribbon, usize>, Error>
where
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let layer = Layer::for_keys(n)?;
    let counts = count_shards(source(), layer.num_shards)?;
    let columns = params.bumped_columns(n, &layer);
    let num_words = columns
        .checked_word_of(layer.total_blocks())
        .filter(|&w| w <= isize::MAX as usize / 16)
        .ok_or(Error::TooLarge)?;
    let mut words: Vec<u64> = zeroed_vec(num_words + padding(&columns, layer.num_shards))?;
    let mut codes: Vec<u64> = zeroed_vec(layer.code_words())?;
    let mut bumped: Vec<KeyHash> = Vec::new();
    let mut distinct = 0u64;
    let buckets_per_shard = layer.shard_blocks * BLOCK_SLOTS / BUCKET_SLOTS;
    for pass in options.plan(&counts) {
        // Each part's words, cut from the filter's.
        let mut jobs = Vec::with_capacity(pass.len());
        let mut rest = &mut words[columns.word_of(pass[0].start * layer.shard_blocks)..];
        for part in pass {
            let from = columns.word_of(part.start * layer.shard_blocks);
            let to = columns.word_of(part.end * layer.shard_blocks);
            let (mine, after) = core::mem::take(&mut rest).split_at_mut(to - from);
            rest = after;
            jobs.push((part, mine));
        }
        let solved = run_jobs(jobs, |(part, out)| {
            let mut group = fill(source(), part.clone(), &counts)?;
            let mut banding = Banding::new(0)?;
            let mut part_codes: Vec<u8> = zeroed_vec(part.len() * buckets_per_shard)?;
            let (mut part_bumped, mut keys) = (Vec::new(), 0u64);
            let base = columns.word_of(part.start * layer.shard_blocks);
            for (i, s) in part.clone().enumerate() {
                let shard = sorted_distinct(&mut group, s);
                keys += shard.len() as u64;
                let first = s * layer.shard_blocks;
                let shard_codes = &mut part_codes[i * buckets_per_shard..(i + 1) * buckets_per_shard];
                let num_slots = layer.shard_blocks * BLOCK_SLOTS;
                let num_starts = num_slots.saturating_sub(ROW_WIDTH - 1) as u64;
                band_bumped(
                    &mut banding,
                    shard,
                    num_slots,
                    BLOCKED_OVERLAP,
                    |a| place(a, layer.num_shards as u64, num_starts).1,
                    blocked_bucket,
                    |a, start| Row {
                        start,
                        coeff: coeff_in_layer(unmixed(a)),
                        result: result_of(a) & mask(columns.of_key(first + start / BLOCK_SLOTS)),
                    },
                    shard_codes,
                    &mut part_bumped,
                )?;
                let at = columns.word_of(first) - base;
                solve_into(&banding, &columns, first, layer.shard_blocks, &mut out[at..]);
            }
            Ok::<_, Error>((part.start, part_codes, part_bumped, keys))
        });
        distinct += gather(solved, buckets_per_shard, &mut codes, &mut bumped)?;
    }
    if resize(n, distinct) {
        return Ok(Err(distinct as usize));
    }
    let source = || bumped.iter().copied();
    let (second_words, second, second_keys) = build_compact(
        &source,
        bumped.len(),
        params,
        params.second_columns(columns),
        &StreamedBuild::in_memory(),
    )?;
    Ok(Ok(Ribbon {
        words,
        layout: Layout::Bumped(Bumped {
            columns,
            layer,
            codes,
            second_keys,
            second,
            second_words,
        }),
        num_keys: distinct,
        kernel: Kernel::detect(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    extern crate std;
    use std::println;

    /// Parameter exploration, printing what a layer leaves empty and bumps
    /// (and checking that it stays sane): `BUMP_N`, `BUMP_LOAD` (keys per slot),
    /// `BUMP_SHARD` (keys per shard), `BUMP_W` (row width 64 or 128),
    /// `BUMP_B` (bucket slots), `BUMP_T1`, `BUMP_T2` (thresholds),
    /// `BUMP_OVERLAP` (1 or 0: overlapped walks, by default at width 128).
    #[test]
    #[ignore]
    fn explore() {
        let env = |k: &str, d: f64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
        let n = env("BUMP_N", 1e6) as usize;
        let load = env("BUMP_LOAD", 1.0);
        let shard_keys = env("BUMP_SHARD", 65536.0);
        let w = env("BUMP_W", 128.0) as usize;
        let b = env("BUMP_B", 128.0) as usize;
        let t: &'static [u32; 4] = alloc::boxed::Box::leak(alloc::boxed::Box::new([
            0,
            env("BUMP_T1", 32.0) as u32,
            env("BUMP_T2", 64.0) as u32,
            b as u32,
        ]));
        let keys: Vec<KeyHash> = (0..n as u64).map(crate::hash_u64).collect();
        let num_shards = (n as f64 / shard_keys).ceil() as usize;
        let buckets_per_shard = (n as f64 / (num_shards as f64 * load * b as f64)).round() as usize;
        let slots = buckets_per_shard * b;
        let counts = count_shards(keys.iter().copied(), num_shards).unwrap();
        let mut group = fill(keys.iter().copied(), 0..num_shards, &counts).unwrap();
        let mut banding = Banding::new(0).unwrap();
        let mut bumped = Vec::new();
        let (mut empty, mut hist) = (0usize, [0usize; 4]);
        let num_starts = (slots - (w - 1)) as u64;
        let clock = std::time::Instant::now();
        for s in 0..num_shards {
            let k = sorted_distinct(&mut group, s);
            let mut codes = vec![0u8; buckets_per_shard];
            band_bumped(
                &mut banding,
                k,
                slots,
                std::env::var("BUMP_OVERLAP").map_or(w == 128, |v| v == "1"),
                |a| place(a, num_shards as u64, num_starts).1,
                |start| (start / b, (start % b) as u32, t),
                |a, start| {
                    let c = coeff_in_layer(unmixed(a));
                    Row {
                        start,
                        coeff: if w == 64 { c as u64 as u128 } else { c },
                        result: result_of(a) & 0x7f,
                    }
                },
                &mut codes,
                &mut bumped,
            )
            .unwrap();
            empty += (0..slots).filter(|&i| banding.row_at(i).0 == 0).count();
            for c in codes {
                hist[c as usize] += 1;
            }
        }
        let ns = clock.elapsed().as_nanos() as f64 / n as f64;
        let m = num_shards * slots;
        let nb = bumped.len();
        assert_eq!(hist.iter().sum::<usize>(), m / b);
        assert!(empty < m / 20, "{empty} of {m} slots empty");
        assert!(nb < n / 4, "{nb} of {n} keys bumped");
        let bits = m as f64 * 7.0 + (m / b) as f64 * 2.0 + nb as f64 * 7.0 * 1.03;
        println!(
            "n {n} load {:.4} w {w} b {b} t {t:?}: empty {:.3}% bumped {:.3}% codes {hist:?} overhead {:.3}% ({ns:.0} ns/key)",
            n as f64 / m as f64,
            100.0 * empty as f64 / m as f64,
            100.0 * nb as f64 / n as f64,
            100.0 * (bits / (n as f64 * 7.0) - 1.0)
        );
    }
}
