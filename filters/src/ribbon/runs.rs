//! Solving shards in runs: the construction loop shared by both layouts,
//! for a build from a slice (one run of every shard) and for a streamed
//! build (passes of runs, on several threads).
//!
//! A layout says how big a shard is at each attempt, how to band it and
//! how to store its solution ([`Solver`]); this file owns the rest: the
//! retries, the shard table, and putting runs solved apart back in order.
//!
//! A run solved on its own thread does not know where it will start until
//! the runs before it are done, so it is solved at the start the planned
//! (first-attempt) sizes give. What the two-line layout stores does not
//! depend on where a shard starts, so its runs are only shifted. The
//! blocked layout's column rule does ([`Solver::POSITIONAL`]): a run whose
//! guess was wrong is solved again, in place. That happens after a shard
//! that needed a larger retry (about one shard in 25,000) or held
//! duplicate hashes (planned from all its hashes, sized by its distinct
//! ones), so a key set full of duplicates builds the blocked layout on one
//! thread's time, whatever the thread count.

use alloc::vec::Vec;
use core::ops::Range;

use super::banding::Banding;
use super::order::{fill, sorted_distinct};
use super::table::MAX_ATTEMPTS;
use crate::streamed::{run_jobs, StreamedBuild};
use crate::{Error, KeyHash};

/// How a layout sizes, bands and stores one shard. Units are the layout's
/// blocks or lines; storage is its `Unit`s (words or lines).
pub(crate) trait Solver: Sync {
    /// What the layout stores.
    type Unit: Copy + Send;
    /// Whether a shard's stored solution depends on its first unit.
    const POSITIONAL: bool;
    /// Units of a shard of `keys` distinct keys (at least 1) at its
    /// `attempt`-th attempt.
    fn units(&self, keys: usize, attempt: u32) -> Result<usize, Error>;
    /// Storage of units `from .. to`.
    fn storage(&self, from: usize, to: usize) -> Result<usize, Error>;
    /// Zero storage after the last shard (if there are shards), which
    /// queries may read past it.
    fn padding(&self) -> usize;
    /// Bands `keys` into `banding` as a shard of `units` units from unit
    /// `first`, with seed `seed`: `false` if the system has no solution.
    fn band(
        &self,
        banding: &mut Banding,
        keys: &[u64],
        first: usize,
        units: usize,
        seed: u8,
    ) -> Result<bool, Error>;
    /// Stores the banded shard's solution in `out`, zeroed storage of units
    /// `first .. first + units`.
    fn store(&self, banding: &Banding, first: usize, units: usize, out: &mut [Self::Unit]);
}

/// Consecutive shards, solved: the shard table and the storage of units
/// `base .. end()`.
#[derive(Debug)]
pub(crate) struct Run<T> {
    base: usize,
    /// Each shard's end unit, in the whole filter.
    pub(crate) ends: Vec<u32>,
    /// The seed each shard was solved with (0 if empty).
    pub(crate) seeds: Vec<u8>,
    pub(crate) storage: Vec<T>,
}

impl<T: Copy> Run<T> {
    fn new(base: usize, shards: usize, storage: usize) -> Result<Self, Error> {
        let mut run = Run {
            base,
            ends: Vec::new(),
            seeds: Vec::new(),
            storage: Vec::new(),
        };
        run.ends.try_reserve_exact(shards).map_err(|_| Error::TooLarge)?;
        run.seeds.try_reserve_exact(shards).map_err(|_| Error::TooLarge)?;
        run.storage
            .try_reserve_exact(storage)
            .map_err(|_| Error::TooLarge)?;
        // Before the first write, so the page faults take huge pages.
        crate::zeroed::advise_huge_pages(&mut run.storage);
        Ok(run)
    }

    /// The unit after the run's last shard.
    pub(crate) fn end(&self) -> usize {
        self.ends.last().map_or(self.base, |&e| e as usize)
    }

    /// Appends `run`, its shards moved to start at [`end`](Self::end) (a
    /// positional layout's run must already start there).
    fn append(&mut self, run: Run<T>) -> Result<(), Error> {
        let shift = self.end() as i64 - run.base as i64;
        for &e in &run.ends {
            let e = u32::try_from(e as i64 + shift).map_err(|_| Error::TooLarge)?;
            self.ends.push(e);
        }
        self.seeds.extend_from_slice(&run.seeds);
        self.storage
            .try_reserve(run.storage.len())
            .map_err(|_| Error::TooLarge)?;
        self.storage.extend_from_slice(&run.storage);
        Ok(())
    }
}

/// Solves every shard of `source` (its keys counted per shard in
/// `counts`, out of `num_shards`) with `solver`, in the passes and on the
/// threads `options` allows; returns the whole run and the distinct key
/// count. The run's storage ends with the layout's padding.
pub(crate) fn solve<S, F, I>(
    solver: &S,
    source: &F,
    counts: &[u32],
    options: &StreamedBuild,
) -> Result<(Run<S::Unit>, u64), Error>
where
    S: Solver,
    S::Unit: Default,
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let num_shards = counts.len();
    let planned = |s: usize| match counts[s] {
        0 => Ok(0),
        keys => solver.units(keys as usize, 0),
    };
    let mut total_units = 0usize;
    for s in 0..num_shards {
        total_units = total_units
            .checked_add(planned(s)?)
            .filter(|&t| t <= u32::MAX as usize)
            .ok_or(Error::TooLarge)?;
    }
    let padding = match num_shards {
        0 => 0,
        _ => solver.padding(),
    };
    let reserve = solver.storage(0, total_units)?.checked_add(padding);
    let mut whole = Run::new(0, num_shards, reserve.ok_or(Error::TooLarge)?)?;
    let mut distinct = 0u64;
    for pass in options.plan(counts) {
        if pass.len() == 1 {
            distinct += solve_part(solver, source, counts, pass[0].clone(), &mut whole)?;
            continue;
        }
        // Each part starts where the planned sizes put it.
        let mut jobs = Vec::with_capacity(pass.len());
        let mut guess = whole.end();
        for part in &pass {
            jobs.push((part.clone(), guess));
            for s in part.clone() {
                guess += planned(s)?;
            }
        }
        let runs = run_jobs(jobs, |(part, base)| {
            let mut units = 0;
            for s in part.clone() {
                units += planned(s)?;
            }
            let mut run = Run::new(base, part.len(), solver.storage(base, base + units)?)?;
            let keys = solve_part(solver, source, counts, part, &mut run)?;
            Ok::<_, Error>((run, keys))
        });
        for (part, result) in pass.into_iter().zip(runs) {
            let (run, keys) = result?;
            distinct += keys;
            if S::POSITIONAL && run.base != whole.end() {
                drop(run);
                solve_part(solver, source, counts, part, &mut whole)?;
            } else {
                whole.append(run)?;
            }
        }
    }
    let len = whole.storage.len() + padding;
    grow_exact(&mut whole.storage, len)?;
    whole.storage.shrink_to_fit();
    Ok((whole, distinct))
}

/// Reads the keys of `shards` from `source` and solves those shards at the
/// end of `run`; returns their distinct key count.
fn solve_part<S, F, I>(
    solver: &S,
    source: &F,
    counts: &[u32],
    shards: Range<usize>,
    run: &mut Run<S::Unit>,
) -> Result<u64, Error>
where
    S: Solver,
    S::Unit: Default,
    F: Fn() -> I,
    I: IntoIterator<Item = KeyHash>,
{
    let mut group = fill(source(), shards.clone(), counts)?;
    let mut banding = Banding::new(0)?;
    let mut distinct = 0u64;
    for s in shards {
        let keys = sorted_distinct(&mut group, s);
        distinct += keys.len() as u64;
        solve_shard(solver, keys, &mut banding, run)?;
    }
    Ok(distinct)
}

/// Solves one shard (distinct keys) at the end of `run`: seed after seed,
/// the shard's room growing as [`Solver::units`] says, until one solves or
/// [`MAX_ATTEMPTS`] have failed ([`Error::BuildFailed`]).
fn solve_shard<S>(
    solver: &S,
    keys: &[u64],
    banding: &mut Banding,
    run: &mut Run<S::Unit>,
) -> Result<(), Error>
where
    S: Solver,
    S::Unit: Default,
{
    let first = run.end();
    if keys.is_empty() {
        run.ends.push(first as u32);
        run.seeds.push(0);
        return Ok(());
    }
    for attempt in 0..MAX_ATTEMPTS {
        let units = solver.units(keys.len(), attempt)?;
        let end = first
            .checked_add(units)
            .filter(|&e| e <= u32::MAX as usize)
            .ok_or(Error::TooLarge)?;
        let seed = attempt as u8;
        if solver.band(banding, keys, first, units, seed)? {
            let from = run.storage.len();
            let len = from + solver.storage(first, end)?;
            grow_exact(&mut run.storage, len)?;
            solver.store(banding, first, units, &mut run.storage[from..]);
            run.ends.push(end as u32);
            run.seeds.push(seed);
            return Ok(());
        }
    }
    Err(Error::BuildFailed {
        attempts: MAX_ATTEMPTS,
    })
}

/// Grows `v` to `len` default values, reserving exactly what it lacks, and
/// asks again for huge pages when that moved the allocation (a shard solved
/// only after its size grew needs more room than was planned: one shard in
/// 24,415 at 100M keys did, and without the renewed advice the whole table
/// lost its huge pages).
fn grow_exact<T: Copy + Default>(v: &mut Vec<T>, len: usize) -> Result<(), Error> {
    let capacity = v.capacity();
    v.try_reserve_exact(len.saturating_sub(v.len()))
        .map_err(|_| Error::TooLarge)?;
    if v.capacity() != capacity {
        crate::zeroed::advise_huge_pages(v);
    }
    v.resize(len, T::default());
    Ok(())
}
