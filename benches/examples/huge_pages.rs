//! Transparent huge pages on large filter tables (`amq::huge_pages`), measured:
//! the same filters built twice, once with the advice switched off (4 KiB
//! pages) and once on, then queried in alternating rounds.
//!
//! `cargo run --release -p amq-bench --example huge_pages -- [N] [ROUNDS]`
//! (default 10,000,000 keys, 9 rounds; Linux). Each round times, for every
//! filter and both page sizes in a rotating order, one pass of 1M absent
//! keys through `contains_hash` (single) and one through `contains_hashes`
//! (batch); the figures are medians of ns per key and of the per-round ratio
//! huge / 4 KiB. The `AnonHugePages` line of `/proc/self/smaps_rollup` after
//! each build says how much the kernel actually gave.

use std::hint::black_box;

use amq::{AnyFilter, Filter, FilterKind, FilterSizing, KeyHash};
use amq_bench::adapters::hashes;
use amq_bench::keys::KeySet;
use amq_bench::report::median;

fn time(n: usize, f: impl FnOnce() -> usize) -> f64 {
    let start = std::time::Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / n as f64
}

/// The process's `AnonHugePages` in MiB (0 where the file is missing).
fn anon_huge_mib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .unwrap_or(0)
        / 1024
}

fn single(f: &AnyFilter, hashes: &[KeyHash]) -> usize {
    hashes.iter().filter(|&&h| f.contains_hash(h)).count()
}

fn batch(f: &AnyFilter, hashes: &[KeyHash]) -> usize {
    let mut out = [false; 1000];
    hashes
        .chunks(1000)
        .map(|c| {
            f.contains_hashes(c, &mut out[..c.len()]);
            out.iter().filter(|&&o| o).count()
        })
        .sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let keys = KeySet::new(n, 1_000_000);
    let misses = hashes(&keys.absent);
    let present = hashes(&keys.present);
    let kinds = [
        (FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0)),
        (FilterKind::StandardBloom, FilterSizing::BitsPerKey(10.0)),
        (FilterKind::BinaryFuse8, FilterSizing::Fpr(0.01)),
        (FilterKind::Xor8, FilterSizing::Fpr(0.01)),
        (FilterKind::Ribbon, FilterSizing::Fpr(1.0 / 128.0)),
        (FilterKind::CuckooFilter, FilterSizing::Fpr(0.01)),
    ];
    println!("n = {n}, 1M absent keys, {rounds} rounds; medians of ns per key (ratio: median of per-round ratios huge / 4 KiB)");
    println!("| filter | MiB | huge pages got (MiB) | single 4 KiB | single huge | ratio | batch 4 KiB | batch huge | ratio |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (kind, sizing) in kinds {
        amq::huge_pages::set_enabled(false);
        let before = anon_huge_mib();
        let small = AnyFilter::build(kind, present, sizing).unwrap();
        let got_small = anon_huge_mib().saturating_sub(before);
        amq::huge_pages::set_enabled(true);
        let before = anon_huge_mib();
        let huge = AnyFilter::build(kind, present, sizing).unwrap();
        let got = anon_huge_mib().saturating_sub(before);
        assert_eq!(small.to_bytes(), huge.to_bytes());
        let f = [&small, &huge];
        let mut t: [Vec<f64>; 4] = Default::default();
        for round in 0..rounds {
            for i in 0..2 {
                let which = (round + i) % 2;
                t[which].push(time(misses.len(), || single(f[which], misses)));
                t[2 + which].push(time(misses.len(), || batch(f[which], misses)));
            }
        }
        let ratio = |a: usize, b: usize| {
            let mut r: Vec<f64> = t[b].iter().zip(&t[a]).map(|(h, s)| h / s).collect();
            median(&mut r)
        };
        println!(
            "| amq-{kind:?} | {} | {got} (4 KiB build: {got_small}) | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |",
            small.size_in_bytes() >> 20,
            median(&mut t[0].clone()),
            median(&mut t[1].clone()),
            ratio(0, 1),
            median(&mut t[2].clone()),
            median(&mut t[3].clone()),
            ratio(2, 3),
        );
    }
}
