//! Batch depth at scale: one filter kind built over N keys (100M by default),
//! then `contains_hash` one key at a time (single) against `contains_many`
//! (batch) in alternating rounds, beside two schemes written with the public
//! API: the batch as it was before the pipeline (prefetch a group of 32
//! keys with `prefetch_hash`, then answer them with `contains_hash`) and,
//! for the distances `D` given, a rolling prefetch (`prefetch_hash` of key
//! `i + D` while `contains_hash` answers key `i`).
//!
//! `cargo run --release -p amq-bench --example batch_depth -- KIND [N] [ROUNDS] [D,D,..] [huge]`
//!
//! Tables get ordinary 4 KiB pages unless the last argument is `huge`.
//!
//! KIND is one of `BinaryFuse8`, `BinaryFuse16`, `BinaryFuse32`, `Xor8`,
//! `Xor16`, `Cuckoo8`, `Cuckoo12`, `Cuckoo16`, `StandardBloom`,
//! `CountingBloom`, `BlockedBloom`, or `fastbloom` (single only). Each round
//! times one pass of 1M absent keys per variant, in a rotating order; the
//! figures are medians of ns per key and of the per-round ratio to single.

use std::hint::black_box;
use std::time::Instant;

use amq::{BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Filter};
use amq::{StandardBloom, Xor16, Xor8};
use amq_bench::keys::KeySet;
use amq_bench::report::median;

const QUERIES: usize = 1_000_000;

fn single<F: Filter>(f: &F, hashes: &[u64]) -> usize {
    hashes.iter().filter(|&&h| f.contains_hash(h)).count()
}

fn batch<F: Filter>(f: &F, hashes: &[u64]) -> usize {
    let mut out = [false; 1000];
    hashes
        .chunks(1000)
        .map(|c| {
            f.contains_many(c, &mut out[..c.len()]);
            out[..c.len()].iter().filter(|&&o| o).count()
        })
        .sum()
}

/// The batch scheme before the pipeline, through the public API: prefetch
/// all 32 keys of a group (`prefetch_hash`), then answer them.
fn groups_of_32<F: Filter>(f: &F, hashes: &[u64]) -> usize {
    hashes
        .chunks(32)
        .map(|c| {
            c.iter().for_each(|&h| f.prefetch_hash(h));
            c.iter().filter(|&&h| f.contains_hash(h)).count()
        })
        .sum()
}

fn rolling<F: Filter>(f: &F, hashes: &[u64], d: usize) -> usize {
    let mut hits = 0;
    for (i, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(i + d) {
            f.prefetch_hash(ahead);
        }
        hits += f.contains_hash(h) as usize;
    }
    hits
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

fn time(f: impl FnOnce() -> usize) -> f64 {
    let start = Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / QUERIES as f64
}

fn run<F: Filter>(name: &str, f: &F, misses: &[u64], rounds: usize, depths: &[usize]) {
    let variants = 3 + depths.len();
    let mut t: Vec<Vec<f64>> = vec![Vec::new(); variants];
    let expect = single(f, misses);
    for round in 0..rounds {
        for j in 0..variants {
            let v = (round + j) % variants;
            let (ns, got) = match v {
                0 => {
                    let mut got = 0;
                    (time(|| {
                        got = single(f, misses);
                        got
                    }), got)
                }
                1 => {
                    let mut got = 0;
                    (time(|| {
                        got = batch(f, misses);
                        got
                    }), got)
                }
                2 => {
                    let mut got = 0;
                    (time(|| {
                        got = groups_of_32(f, misses);
                        got
                    }), got)
                }
                _ => {
                    let mut got = 0;
                    (time(|| {
                        got = rolling(f, misses, depths[v - 3]);
                        got
                    }), got)
                }
            };
            assert_eq!(got, expect, "variant {v} disagrees with single");
            t[v].push(ns);
        }
    }
    let ratio = |v: usize| {
        let mut r: Vec<f64> = t[v].iter().zip(&t[0]).map(|(x, s)| x / s).collect();
        median(&mut r)
    };
    println!(
        "{name}: {} MiB; single {:.1} ns; contains_many {:.1} ns ({:.2}×)",
        f.size_in_bytes() >> 20,
        median(&mut t[0].clone()),
        median(&mut t[1].clone()),
        ratio(1)
    );
    println!(
        "  groups of 32 (prefetch all, then probe): {:.1} ns ({:.2}×)",
        median(&mut t[2].clone()),
        ratio(2)
    );
    for (k, d) in depths.iter().enumerate() {
        println!("  rolling D = {d:3}: {:.1} ns ({:.2}×)", median(&mut t[3 + k].clone()), ratio(3 + k));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "BinaryFuse8".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let depths: Vec<usize> = args
        .next()
        .map(|a| a.split(',').filter_map(|d| d.parse().ok()).collect())
        .unwrap_or_default();
    // Ordinary 4 KiB pages unless asked, as in the report (`--huge-pages`).
    let huge = args.next().is_some_and(|a| a == "huge");
    amq::huge_pages::set_enabled(huge);
    let keys = KeySet::new(n, QUERIES);
    let misses = &keys.absent[..];
    let t0 = Instant::now();
    macro_rules! go {
        ($f:expr) => {{
            let f = $f;
            eprintln!(
                "built {kind} over {n} keys in {:.1} s; huge pages {huge}, AnonHugePages {} MiB",
                t0.elapsed().as_secs_f64(),
                anon_huge_mib()
            );
            run(&kind, &f, misses, rounds, &depths);
        }};
    }
    match kind.as_str() {
        "BinaryFuse8" => go!(BinaryFuse8::build(&keys.present).unwrap()),
        "BinaryFuse16" => go!(BinaryFuse16::build(&keys.present).unwrap()),
        "BinaryFuse32" => go!(BinaryFuse32::build(&keys.present).unwrap()),
        "Xor8" => go!(Xor8::build(&keys.present).unwrap()),
        "Xor16" => go!(Xor16::build(&keys.present).unwrap()),
        "Cuckoo8" | "Cuckoo12" | "Cuckoo16" => {
            let bits: u32 = kind[6..].parse().unwrap();
            let mut f = CuckooFilter::with_fingerprint_bits(n, bits).unwrap();
            keys.present.iter().for_each(|&k| f.insert_hash(k).unwrap());
            go!(f)
        }
        "StandardBloom" => {
            let mut f = StandardBloom::with_bits_per_key(n, 10.0).unwrap();
            keys.present.iter().for_each(|&k| f.insert_hash(k));
            go!(f)
        }
        "CountingBloom" => {
            let mut f = CountingBloom::with_fpr(n, 0.01).unwrap();
            keys.present.iter().for_each(|&k| f.insert_hash(k));
            go!(f)
        }
        "BlockedBloom" => {
            let mut f = BlockedBloom::with_bits_per_key(n, 10.0).unwrap();
            f.insert_many(&keys.present);
            go!(f)
        }
        other => panic!("unknown kind {other}"),
    }
}
