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

use super::banding::{Banding, Coeff};
use super::order::{count_shards, fill, sorted_distinct};
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
    /// The coefficient bits of its rows (`u128` or `u64`).
    type Coeff: Coeff;
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
        banding: &mut Banding<Self::Coeff>,
        keys: &[u64],
        first: usize,
        units: usize,
        seed: u8,
    ) -> Result<bool, Error>;
    /// Stores the banded shard's solution in `out`, zeroed storage of units
    /// `first .. first + units`.
    fn store(&self, banding: &Banding<Self::Coeff>, first: usize, units: usize, out: &mut [Self::Unit]);
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

/// Whether a filter sized for `n` keys that held only `distinct` of them
/// (the rest duplicates) is under-loaded enough to build again for
/// `distinct`: more than 1% of the keys were duplicates.
pub(crate) fn resize(n: usize, distinct: u64) -> bool {
    (distinct as f64) < 0.99 * n as f64
}

/// A layout's solver for `n` distinct keys in `plan.len()` shards, shard
/// `s` planned for `plan[s]` keys.
pub(crate) trait MakeSolver<S> {
    fn make(&self, n: usize, plan: &[u32]) -> Result<S, Error>;
}

impl<S, M: Fn(usize, &[u32]) -> Result<S, Error>> MakeSolver<S> for M {
    fn make(&self, n: usize, plan: &[u32]) -> Result<S, Error> {
        self(n, plan)
    }
}

/// Solves the `n` hashes of `source` in shards of about `shard_keys` keys
/// (`n`: the hashes, or their distinct count when known) with the solver
/// `make` gives; returns it, the run and the distinct key count. Shard
/// counts come from `n` and shard sizes from the hashes; when more than 1%
/// of the hashes were duplicates ([`resize`]), the filter is solved again
/// planned for the distinct keys (their shard count, each shard's distinct
/// keys), so duplicates cost neither space nor FPR.
pub(crate) fn solve_distinct<S, F, I>(
    make: &impl MakeSolver<S>,
    source: &F,
    n: usize,
    shard_keys: usize,
    options: &StreamedBuild,
) -> Result<(S, Run<S::Unit>, u64), Error>
where
    S: Solver,
    S::Unit: Default,
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let shards = n.div_ceil(shard_keys);
    let counts = count_shards(source(), shards)?;
    let solver = make.make(n, &counts)?;
    let (run, distinct) = solve(&solver, source, &counts, &counts, options)?;
    let total: u64 = distinct.iter().map(|&d| u64::from(d)).sum();
    // The hashes the shards were planned for (`n` may already be the
    // distinct count, known from an earlier build).
    let hashes: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if !resize(hashes as usize, total) {
        return Ok((solver, run, total));
    }
    drop(run);
    let d = total as usize;
    let (counts, plan) = match d.div_ceil(shard_keys) {
        s if s == shards => (counts, distinct),
        s => {
            let counts = count_shards(source(), s)?;
            let plan = distinct_counts(source, &counts, options)?;
            (counts, plan)
        }
    };
    let solver = make.make(d, &plan)?;
    let (run, _) = solve(&solver, source, &counts, &plan, options)?;
    Ok((solver, run, total))
}

/// Each shard's distinct keys, read from `source` (its keys counted per
/// shard in `counts`) in the passes `options` allows.
fn distinct_counts<F, I>(source: &F, counts: &[u32], options: &StreamedBuild) -> Result<Vec<u32>, Error>
where
    F: Fn() -> I,
    I: IntoIterator<Item = KeyHash>,
{
    let mut distinct = Vec::new();
    distinct
        .try_reserve_exact(counts.len())
        .map_err(|_| Error::TooLarge)?;
    for pass in options.plan(counts) {
        for part in pass {
            let mut group = fill(source(), part.clone(), counts)?;
            for s in part {
                distinct.push(sorted_distinct(&mut group, s).len() as u32);
            }
        }
    }
    Ok(distinct)
}

/// Solves every shard of `source` (its keys counted per shard in
/// `counts`) with `solver`, shard `s` planned for `plan[s]` keys (its
/// distinct keys when known, else `counts[s]`), in the passes and on the
/// threads `options` allows; returns the whole run and each shard's
/// distinct keys. The run's storage ends with the layout's padding.
pub(crate) fn solve<S, F, I>(
    solver: &S,
    source: &F,
    counts: &[u32],
    plan: &[u32],
    options: &StreamedBuild,
) -> Result<(Run<S::Unit>, Vec<u32>), Error>
where
    S: Solver,
    S::Unit: Default,
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    let num_shards = counts.len();
    debug_assert_eq!(plan.len(), num_shards);
    let planned = |s: usize| match plan[s] {
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
    let mut distinct = Vec::new();
    distinct
        .try_reserve_exact(num_shards)
        .map_err(|_| Error::TooLarge)?;
    for pass in options.plan(counts) {
        if pass.len() == 1 {
            solve_part(solver, source, counts, pass[0].clone(), &mut whole, &mut distinct)?;
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
            let mut keys = Vec::with_capacity(part.len());
            solve_part(solver, source, counts, part, &mut run, &mut keys)?;
            Ok::<_, Error>((run, keys))
        });
        for (part, result) in pass.into_iter().zip(runs) {
            let (run, keys) = result?;
            distinct.extend_from_slice(&keys);
            if S::POSITIONAL && run.base != whole.end() {
                drop(run);
                solve_part(solver, source, counts, part, &mut whole, &mut Vec::new())?;
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
/// end of `run`; appends each one's distinct key count to `distinct`.
fn solve_part<S, F, I>(
    solver: &S,
    source: &F,
    counts: &[u32],
    shards: Range<usize>,
    run: &mut Run<S::Unit>,
    distinct: &mut Vec<u32>,
) -> Result<(), Error>
where
    S: Solver,
    S::Unit: Default,
    F: Fn() -> I,
    I: IntoIterator<Item = KeyHash>,
{
    let mut group = fill(source(), shards.clone(), counts)?;
    let mut banding = Banding::<S::Coeff>::new(0)?;
    for s in shards {
        let keys = sorted_distinct(&mut group, s);
        distinct.push(keys.len() as u32);
        solve_shard(solver, keys, &mut banding, run)?;
    }
    Ok(())
}

/// Solves one shard (distinct keys) at the end of `run`: seed after seed,
/// the shard's room growing as [`Solver::units`] says, until one solves or
/// [`MAX_ATTEMPTS`] have failed ([`Error::BuildFailed`]).
fn solve_shard<S>(
    solver: &S,
    keys: &[u64],
    banding: &mut Banding<S::Coeff>,
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
