//! The criterion benchmark groups, written once for every filter.
//!
//! A group is one operation of one comparison at one size, e.g.
//! `bloom/miss` at n = 1M, with every filter of the comparison's list as a
//! benchmark in it, so one run compares them: ids read
//! `<comparison>/<op>/<filter>/<n>`.
//!
//! Queries are timed over batches of [`BATCH`] keys with
//! `Throughput::Elements(BATCH)`, so criterion reports keys per second and the
//! time per batch divided by 1,000 is ns per key. Builds and inserts report
//! `Throughput::Elements(n)`: time per iteration / n is ns per key.

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{black_box, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};

use crate::keys::{KeySet, QueryPool, BATCH, POOL};
use crate::{Deletable, DeletableVisitor, Subject, Visitor};

/// An operation every filter has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Build from the n present keys (for deletable filters: insert them all
    /// into an empty filter sized for n). ns/key.
    Build,
    /// Query present keys, drawn at random.
    Hit,
    /// Query absent keys.
    Miss,
    /// Query absent keys a batch at a time: `<name>-many` through the batch
    /// API where the filter has one, `<name>-loop` one `contains` at a time.
    ContainsMany,
}

impl Op {
    /// Build, hit, miss and contains_many, in that order.
    pub const ALL: [Op; 4] = [Op::Build, Op::Hit, Op::Miss, Op::ContainsMany];

    fn label(self) -> &'static str {
        match self {
            Op::Build => "build",
            Op::Hit => "hit",
            Op::Miss => "miss",
            Op::ContainsMany => "contains_many",
        }
    }
}

/// An operation only deletable filters have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletableOp {
    /// Insert the n keys into an empty filter sized for n (ns/key).
    Insert,
    /// Remove batches of present keys from the full filter; each batch is
    /// re-inserted, untimed, so the load stays at n keys.
    Remove,
}

impl DeletableOp {
    fn label(self) -> &'static str {
        match self {
            DeletableOp::Insert => "insert",
            DeletableOp::Remove => "remove",
        }
    }
}

/// Criterion settings for the query benches: short enough that a full
/// `cargo bench -p amq-bench` at 1M stays near ten minutes on two cores.
/// Command-line flags (`--measurement-time`, `--sample-size`, ...) override.
pub fn config() -> Criterion {
    crate::ordinary_pages();
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// Runs one group: `op` for every filter that `list` visits.
pub fn run(c: &mut Criterion, comparison: &str, op: Op, keys: &KeySet, list: impl FnOnce(&mut OpBench)) {
    let mut group = c.benchmark_group(format!("{comparison}/{}", op.label()));
    if op == Op::Build {
        // One build takes tens of milliseconds to seconds: few, flat samples.
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
    }
    list(&mut OpBench {
        group: &mut group,
        op,
        keys,
    });
    group.finish();
}

/// Runs one group of a deletable-only operation for every filter of `list`.
pub fn run_deletable(
    c: &mut Criterion,
    comparison: &str,
    op: DeletableOp,
    keys: &KeySet,
    list: impl FnOnce(&mut DeletableOpBench),
) {
    let mut group = c.benchmark_group(format!("{comparison}/{}", op.label()));
    if op == DeletableOp::Insert {
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
    }
    list(&mut DeletableOpBench {
        group: &mut group,
        op,
        keys,
    });
    group.finish();
}

/// The [`Visitor`] that benchmarks one [`Op`] of each filter.
pub struct OpBench<'g, 'c, 'k> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    op: Op,
    keys: &'k KeySet,
}

impl Visitor for OpBench<'_, '_, '_> {
    fn visit<S: Subject>(&mut self) {
        let keys = self.keys;
        let n = keys.present.len();
        let g = &mut *self.group;
        if self.op == Op::Build {
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(BenchmarkId::new(S::NAME, n), |b| {
                b.iter_with_large_drop(|| build::<S>(black_box(&keys.present)))
            });
            return;
        }
        let filter = build::<S>(&keys.present);
        g.throughput(Throughput::Elements(BATCH as u64));
        match self.op {
            Op::Build => unreachable!("handled above"),
            Op::Hit => bench_queries(g, S::NAME, n, &filter, keys.hit_pool(POOL)),
            Op::Miss => bench_queries(g, S::NAME, n, &filter, keys.miss_pool(POOL)),
            Op::ContainsMany => {
                let mut out = vec![false; BATCH];
                if S::HAS_BATCH {
                    let mut pool = keys.miss_pool(POOL);
                    let id = BenchmarkId::new(format!("{}-many", S::NAME), n);
                    g.bench_function(id, |b| {
                        b.iter(|| {
                            black_box(&filter).contains_many(black_box(pool.next_batch()), &mut out);
                            black_box(&out);
                        })
                    });
                }
                let mut pool = keys.miss_pool(POOL);
                let id = BenchmarkId::new(format!("{}-loop", S::NAME), n);
                g.bench_function(id, |b| {
                    b.iter(|| {
                        let f = black_box(&filter);
                        for (o, &k) in out.iter_mut().zip(black_box(pool.next_batch())) {
                            *o = f.contains(k);
                        }
                        black_box(&out);
                    })
                });
            }
        }
    }
}

/// The [`DeletableVisitor`] that benchmarks one [`DeletableOp`] of each filter.
pub struct DeletableOpBench<'g, 'c, 'k> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    op: DeletableOp,
    keys: &'k KeySet,
}

impl DeletableVisitor for DeletableOpBench<'_, '_, '_> {
    fn visit<D: Deletable>(&mut self) {
        let keys = &self.keys.present;
        let n = keys.len();
        let id = BenchmarkId::new(D::NAME, n);
        match self.op {
            DeletableOp::Insert => {
                self.group.throughput(Throughput::Elements(n as u64));
                self.group.bench_function(id, |b| {
                    b.iter_batched(
                        || D::with_capacity(n).unwrap_or_else(|e| panic!("{e}")),
                        |mut f| {
                            for &k in black_box(keys) {
                                black_box(f.insert(k));
                            }
                            f
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
            DeletableOp::Remove => {
                let mut filter = build::<D>(keys);
                // Distinct present keys, so every removal finds its key.
                let mut pool = QueryPool::from_keys(keys[..n.min(POOL) / BATCH * BATCH].to_vec());
                self.group.throughput(Throughput::Elements(BATCH as u64));
                self.group.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        let mut timed = Duration::ZERO;
                        for _ in 0..iters {
                            let batch = pool.next_batch();
                            let start = Instant::now();
                            for &k in black_box(batch) {
                                black_box(filter.remove(k));
                            }
                            timed += start.elapsed();
                            for &k in batch {
                                filter.insert(k);
                            }
                        }
                        timed
                    })
                });
            }
        }
    }
}

fn build<S: Subject>(keys: &[u64]) -> S {
    S::build(keys).unwrap_or_else(|e| panic!("building {} over {} keys: {e}", S::NAME, keys.len()))
}

/// Times `contains` over consecutive batches of `pool`, counting the hits so
/// no query can be optimised away.
fn bench_queries<S: Subject>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    filter: &S,
    mut pool: QueryPool,
) {
    g.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter(|| {
            let f = black_box(filter);
            black_box(pool.next_batch())
                .iter()
                .map(|&k| f.contains(k) as usize)
                .sum::<usize>()
        })
    });
}
