//! Batch depth at scale: one filter kind built over N keys (100M by default),
//! then `contains_hash` one key at a time (single) against `contains_hashes`
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
//! `CountingBloom`, `BlockedBloom`; `raw:MIB` (random line reads from a plain
//! table of MIB MiB at the distances given: the machine's ceiling); or
//! `fastbloom` (`StandardBloom` against `fastbloom`, one key at a time). Each round
//! times one pass of 1M absent keys per variant, in a rotating order; the
//! figures are medians of ns per key and of the per-round ratio to single.
//!
//! `AMQ_HINT=1|2|3` makes `raw:` prefetch with the T1, T2 or NTA hint
//! instead of T0 (all measured the same here); `AMQ_SIDE=amq|fastbloom` runs
//! only one side's miss loop of the `fastbloom` mode (for a profiler).

use std::hint::black_box;
use std::time::Instant;

use amq::{BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Filter};
use amq::{FilterSizing, Insert, KeyHash, StandardBloom, Xor16, Xor8};
use amq_bench::adapters::hashes;
use amq_bench::keys::KeySet;
use amq_bench::report::median;

const QUERIES: usize = 1_000_000;

fn single<F: Filter>(f: &F, hashes: &[KeyHash]) -> usize {
    hashes.iter().filter(|&&h| f.contains_hash(h)).count()
}

fn batch<F: Filter>(f: &F, hashes: &[KeyHash]) -> usize {
    let mut out = [false; 1000];
    hashes
        .chunks(1000)
        .map(|c| {
            f.contains_hashes(c, &mut out[..c.len()]);
            out[..c.len()].iter().filter(|&&o| o).count()
        })
        .sum()
}

/// The batch scheme before the pipeline, through the public API: prefetch
/// all 32 keys of a group (`prefetch_hash`), then answer them.
fn groups_of_32<F: Filter>(f: &F, hashes: &[KeyHash]) -> usize {
    hashes
        .chunks(32)
        .map(|c| {
            c.iter().for_each(|&h| f.prefetch_hash(h));
            c.iter().filter(|&&h| f.contains_hash(h)).count()
        })
        .sum()
}

fn rolling<F: Filter>(f: &F, hashes: &[KeyHash], d: usize) -> usize {
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

fn run<F: Filter>(name: &str, f: &F, misses: &[KeyHash], rounds: usize, depths: &[usize]) {
    let variants = 3 + depths.len();
    let mut t: Vec<Vec<f64>> = vec![Vec::new(); variants];
    let expect = single(f, misses);
    for round in 0..rounds {
        for j in 0..variants {
            let v = (round + j) % variants;
            let (ns, got) = match v {
                0 => {
                    let mut got = 0;
                    (
                        time(|| {
                            got = single(f, misses);
                            got
                        }),
                        got,
                    )
                }
                1 => {
                    let mut got = 0;
                    (
                        time(|| {
                            got = batch(f, misses);
                            got
                        }),
                        got,
                    )
                }
                2 => {
                    let mut got = 0;
                    (
                        time(|| {
                            got = groups_of_32(f, misses);
                            got
                        }),
                        got,
                    )
                }
                _ => {
                    let mut got = 0;
                    (
                        time(|| {
                            got = rolling(f, misses, depths[v - 3]);
                            got
                        }),
                        got,
                    )
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
        "{name}: {} MiB; single {:.1} ns; contains_hashes {:.1} ns ({:.2}×)",
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
        println!(
            "  rolling D = {d:3}: {:.1} ns ({:.2}×)",
            median(&mut t[3 + k].clone()),
            ratio(3 + k)
        );
    }
}

/// The machine's ceiling: random 8-byte reads from a table of `mib` MiB, one
/// cache line per key, with key `i + d` prefetched while key `i` is read.
fn raw_lines(mib: usize, misses: &[u64], rounds: usize, depths: &[usize]) {
    let table: Vec<u64> = (0..(mib << 17) as u64).collect();
    let len = table.len() as u64;
    println!(
        "raw random line reads from {mib} MiB (AnonHugePages {} MiB):",
        anon_huge_mib()
    );
    for &d in depths {
        let mut t = Vec::new();
        for _ in 0..rounds {
            t.push(time(|| {
                let mut sum = 0u64;
                for (i, &h) in misses.iter().enumerate() {
                    if let Some(&ahead) = misses.get(i + d) {
                        let j = amq::hash::reduce(ahead, len) as usize;
                        amq_bench_prefetch(&table[j]);
                    }
                    sum = sum.wrapping_add(table[amq::hash::reduce(h, len) as usize]);
                }
                sum as usize
            }));
        }
        println!("  D = {d:3}: {:.1} ns per line", median(&mut t));
    }
}

static HINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `_mm_prefetch` (T0; `AMQ_HINT` = 1, 2, 3 for T1, T2, NTA) where available.
#[inline(always)]
fn amq_bench_prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch hint never faults and reads nothing visible.
    unsafe {
        use std::arch::x86_64::*;
        let p = (v as *const T).cast::<i8>();
        match HINT.load(std::sync::atomic::Ordering::Relaxed) {
            0 => _mm_prefetch::<_MM_HINT_T0>(p),
            1 => _mm_prefetch::<_MM_HINT_T1>(p),
            2 => _mm_prefetch::<_MM_HINT_T2>(p),
            _ => _mm_prefetch::<_MM_HINT_NTA>(p),
        }
    }
}

/// `StandardBloom::contains_hash` as it was before the first probe was
/// taken out of the loop (same probes, same bits): the "before" of the
/// fastbloom comparison, in the same process.
fn before_contains_hash(f: &StandardBloom, hash: u64) -> bool {
    let words = f.words();
    let m = f.num_bits();
    let (mut x, y) = (hash, hash.rotate_left(32));
    for _ in 0..f.num_probes() {
        let bit = amq::hash::reduce(x, m);
        x = x.wrapping_add(y);
        if words[(bit >> 6) as usize] & (1 << (bit & 63)) == 0 {
            return false;
        }
    }
    true
}

/// `StandardBloom` against `fastbloom` 0.17, both at 10 bits/key and fed
/// the same hashes, one key at a time: misses and hits in alternating
/// rounds; ratios are medians of per-round ratios amq / fastbloom. Also
/// amq's query as it was before (`before_contains_hash`).
fn against_fastbloom(keys: &KeySet, rounds: usize) {
    let n = keys.present.len();
    let mut ours = StandardBloom::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
    hashes(&keys.present)
        .iter()
        .for_each(|&k| ours.insert_hash(k).unwrap());
    let mut theirs = fastbloom::BloomFilter::with_num_bits((n * 10).max(64)).expected_items(n);
    keys.present.iter().for_each(|&k| {
        theirs.insert_hash(k);
    });
    let hits: Vec<u64> = keys.hit_pool(QUERIES).all().to_vec();
    let misses = &keys.absent[..];
    assert_eq!(theirs.num_hashes(), ours.num_probes());
    // `AMQ_SIDE=amq` or `fastbloom`: only that filter's miss loop, for
    // `perf stat` (instructions and cycles per miss); the build is counted
    // too, so compare against a run with 0 rounds.
    if let Ok(side) = std::env::var("AMQ_SIDE") {
        let found: usize = (0..rounds)
            .map(|_| match side.as_str() {
                "amq" => hashes(misses).iter().filter(|&&h| ours.contains_hash(h)).count(),
                _ => misses.iter().filter(|&&h| theirs.contains_hash(h)).count(),
            })
            .sum();
        println!("{side}: {found} false positives over {rounds} passes");
        return;
    }
    let mut t: [Vec<f64>; 6] = Default::default();
    for round in 0..rounds {
        for j in 0..6 {
            let v = (round + j) % 6;
            let qs = if v % 2 == 0 { misses } else { &hits[..] };
            t[v].push(time(|| match v / 2 {
                0 => hashes(qs).iter().filter(|&&h| ours.contains_hash(h)).count(),
                1 => qs.iter().filter(|&&h| theirs.contains_hash(h)).count(),
                _ => qs.iter().filter(|&&h| before_contains_hash(&ours, h)).count(),
            }));
        }
    }
    let ratio = |a: usize, b: usize| {
        let mut r: Vec<f64> = t[a].iter().zip(&t[b]).map(|(x, y)| x / y).collect();
        median(&mut r)
    };
    let m = |v: usize| median(&mut t[v].clone());
    println!(
        "n = {n}, {rounds} rounds: miss amq {:.1} / fastbloom {:.1} ns ({:.2}×), before {:.1} ({:.2}×); \
         hit amq {:.1} / fastbloom {:.1} ns ({:.2}×), before {:.1} ({:.2}×)",
        m(0),
        m(2),
        ratio(0, 2),
        m(4),
        ratio(4, 2),
        m(1),
        m(3),
        ratio(1, 3),
        m(5),
        ratio(5, 3),
    );
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
    let miss_hashes = hashes(misses);
    let present = hashes(&keys.present);
    let t0 = Instant::now();
    macro_rules! go {
        ($f:expr) => {{
            let f = $f;
            eprintln!(
                "built {kind} over {n} keys in {:.1} s; huge pages {huge}, AnonHugePages {} MiB",
                t0.elapsed().as_secs_f64(),
                anon_huge_mib()
            );
            run(&kind, &f, miss_hashes, rounds, &depths);
        }};
    }
    if let Ok(h) = std::env::var("AMQ_HINT") {
        HINT.store(h.parse().unwrap(), std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(mib) = kind.strip_prefix("raw:") {
        return raw_lines(mib.parse().unwrap(), misses, rounds, &depths);
    }
    if kind == "fastbloom" {
        return against_fastbloom(&keys, rounds);
    }
    match kind.as_str() {
        "BinaryFuse8" => go!(BinaryFuse8::build(present).unwrap()),
        "BinaryFuse16" => go!(BinaryFuse16::build(present).unwrap()),
        "BinaryFuse32" => go!(BinaryFuse32::build(present).unwrap()),
        "Xor8" => go!(Xor8::build(present).unwrap()),
        "Xor16" => go!(Xor16::build(present).unwrap()),
        "Cuckoo8" | "Cuckoo12" | "Cuckoo16" => {
            let bits: u32 = kind[6..].parse().unwrap();
            let mut f = CuckooFilter::with_fingerprint_bits(n, bits).unwrap();
            present.iter().for_each(|&k| f.insert_hash(k).unwrap());
            go!(f)
        }
        "StandardBloom" => {
            let mut f = StandardBloom::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
            present.iter().for_each(|&k| f.insert_hash(k).unwrap());
            go!(f)
        }
        "CountingBloom" => {
            let mut f = CountingBloom::new(n, FilterSizing::Fpr(0.01)).unwrap();
            present.iter().for_each(|&k| f.insert_hash(k).unwrap());
            go!(f)
        }
        "BlockedBloom" => {
            let mut f = BlockedBloom::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
            f.insert_hashes(present).unwrap();
            go!(f)
        }
        other => panic!("unknown kind {other}"),
    }
}
