//! The Parquet head-to-head in many short alternating rounds: amq's
//! `ParquetBloom` against `sbbf-rs` and `parquet`'s `Sbbf`, each fed INT64
//! values it hashes with XXH64 (the adapters of `amq_bench::adapters::parquet`).
//!
//! `cargo run --release -p amq-bench --example parquet_speed -- [N] [ROUNDS]`
//! (default 10,000,000 values, 21 rounds). Each round times one pass of hits
//! (1M present values at random), misses (1M absent values) and, for ours,
//! batched misses, for every filter, in an order that rotates from round to
//! round; the figures are medians over rounds of ns per value and of the
//! per-round ratio to `sbbf-rs`. Times are wall time (thread CPU time from
//! `schedstat` moves in scheduler ticks here, too coarse for a 40 ms pass);
//! a round takes well under a second, so a slow spell of the host slows every
//! filter of a round alike and the per-round ratios stay meaningful.

use std::hint::black_box;

use amq_bench::adapters::parquet::{AmqParquet, ParquetSbbf, SbbfRsValues};
use amq_bench::keys::KeySet;
use amq_bench::report::median;
use amq_bench::Subject;

/// ns per value of one pass of `f` over `n` values.
fn time(n: usize, f: impl FnOnce() -> usize) -> f64 {
    let start = std::time::Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / n as f64
}

fn count<S: Subject>(s: &S, keys: &[u64]) -> usize {
    keys.iter().filter(|&&k| s.contains(k)).count()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(21);
    let keys = KeySet::new(n, 1_000_000);
    let hits = keys.hit_pool(1_000_000);
    let (hits, misses) = (hits.all(), &keys.absent[..]);
    let ours = AmqParquet::build(&keys.present).unwrap();
    let rs = SbbfRsValues::build(&keys.present).unwrap();
    let pq = ParquetSbbf::build(&keys.present).unwrap();
    let mut out = vec![false; 1000];
    // [filter][op]: ours, sbbf-rs, parquet × hit, miss; plus ours batched.
    let mut t = vec![vec![Vec::new(); 2]; 3];
    let mut many = Vec::new();
    for round in 0..rounds {
        for i in 0..3 {
            match (round + i) % 3 {
                0 => {
                    t[0][0].push(time(hits.len(), || count(&ours, hits)));
                    t[0][1].push(time(misses.len(), || count(&ours, misses)));
                    many.push(time(misses.len(), || {
                        let mut found = 0;
                        for chunk in misses.chunks(1000) {
                            ours.contains_many(chunk, &mut out[..chunk.len()]);
                            found += out.iter().filter(|&&o| o).count();
                        }
                        found
                    }));
                }
                1 => {
                    t[1][0].push(time(hits.len(), || count(&rs, hits)));
                    t[1][1].push(time(misses.len(), || count(&rs, misses)));
                }
                _ => {
                    t[2][0].push(time(hits.len(), || count(&pq, hits)));
                    t[2][1].push(time(misses.len(), || count(&pq, misses)));
                }
            }
        }
    }
    println!(
        "n = {n}, {rounds} rounds, medians of ns per value (ratio to sbbf-rs: median of per-round ratios)"
    );
    println!("| filter | bits/value | hit ns | miss ns | hit / sbbf-rs | miss / sbbf-rs |");
    println!("|---|--:|--:|--:|--:|--:|");
    let names = ["amq-ParquetBloom", "sbbf-rs-xxh64", "parquet-Sbbf"];
    let sizes = [ours.size_in_bytes(), rs.size_in_bytes(), pq.size_in_bytes()];
    for f in 0..3 {
        let ratio = |op: usize| {
            let mut r: Vec<f64> = t[f][op].iter().zip(&t[1][op]).map(|(a, b)| a / b).collect();
            median(&mut r)
        };
        let (hit, miss) = (median(&mut t[f][0].clone()), median(&mut t[f][1].clone()));
        println!(
            "| {} | {:.2} | {hit:.1} | {miss:.1} | {:.3} | {:.3} |",
            names[f],
            sizes[f] as f64 * 8.0 / n as f64,
            ratio(0),
            ratio(1)
        );
    }
    let mut r: Vec<f64> = many.iter().zip(&t[1][1]).map(|(a, b)| a / b).collect();
    println!(
        "| amq-ParquetBloom, contains_many | | | {:.1} | | {:.3} |",
        median(&mut many.clone()),
        median(&mut r)
    );
}
