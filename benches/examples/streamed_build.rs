//! Streamed builds at any size, in bounded memory: keys made by a generator
//! (never held in a vector), the filter built from it, then its size, the
//! process's peak memory, its FPR and its query time.
//!
//! `cargo run --release -p amq-bench --example streamed_build -- KIND N [THREADS] [MEMORY_MIB] [ABSENT]`
//!
//! KIND is `ribbon` (FPR 1%, `RibbonParams::with_fpr(0.01)`, bumped),
//! `ribbon-sharded` (the same `without_bumping()`), `ribbon7`
//! (7 result bits, the two-line layout), `blocked` (`BlockedBloom` at 10
//! bits per key), `fuse8` or `fuse16` (3-wise `BinaryFuse8`/`16`, in
//! shards of up to 2^23 keys beyond that many), or `fuse8-slice` (one
//! `BinaryFuse8` table built from a vector of every hash, for comparison). The keys are `hash_u64(2i)` for `i < N`; THREADS
//! (default 1) and MEMORY_MIB (the pass budget, default 512) go to
//! `StreamedBuild`. The FPR is measured over ABSENT (default 10^7) keys
//! `hash_u64(2i + 1)`; query times are the median of 3 rounds over 4M of
//! them, one at a time (`contains_hash`) and in batches of 1,024
//! (`contains_hashes`), in thread CPU time. Peak memory is the process's
//! `VmHWM` (Linux), printed beside `1.3 × filter + 1 GiB`.
//!
//! At N = 10^9 a build takes minutes and the FPR pass about a minute.

use std::hint::black_box;
use std::time::Instant;

use amq::streamed::StreamedBuild;
use amq::xor::FuseParams;
use amq::{
    hash_u64, BinaryFuse16, BinaryFuse8, BlockedBloom, Filter, FilterSizing, KeyHash, Ribbon, RibbonParams,
};

fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns / 1e9)
        .unwrap_or(0.0)
}

/// Peak resident memory of the process (`VmHWM`), in bytes; 0 where
/// unavailable.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `fuse8-vs-slice N`: a sharded `BinaryFuse8` (streamed) against one
/// table (from a vector), queries timed in alternating rounds.
fn fuse_versus_slice(n: u64, rounds: usize) {
    let source = || (0..n).map(|i| hash_u64(2 * i));
    let options = StreamedBuild::new().with_threads(2).expect("threads >= 1");
    let sharded = BinaryFuse8::build_streamed(source, &FuseParams::THREE_WISE, &options).unwrap();
    let keys: Vec<KeyHash> = source().collect();
    let single = BinaryFuse8::build_with(&keys, &FuseParams::THREE_WISE).unwrap();
    drop(keys);
    let probes: Vec<KeyHash> = (0..4_000_000u64).map(|i| hash_u64(2 * (i * 7919) + 1)).collect();
    let mut out = vec![false; probes.len()];
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (k, f) in [&sharded, &single].into_iter().enumerate() {
            let c = cpu_seconds();
            black_box(probes.iter().filter(|&&h| f.contains_hash(black_box(h))).count());
            t[2 * k].push((cpu_seconds() - c) * 1e9 / probes.len() as f64);
            let c = cpu_seconds();
            for (p, o) in probes.chunks(1024).zip(out.chunks_mut(1024)) {
                f.contains_hashes(p, o);
            }
            black_box(&out);
            t[2 * k + 1].push((cpu_seconds() - c) * 1e9 / probes.len() as f64);
        }
    }
    let [a, b, c, d] = t.map(median);
    println!(
        "BinaryFuse8 n={n}: {} shards, {:.3} bits/key: single {a:.1}, batch {b:.1} ns; one table, {:.3} bits/key: single {c:.1}, batch {d:.1} ns (medians of {rounds} rounds)",
        sharded.num_shards(),
        sharded.bits_per_key(),
        single.bits_per_key()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "ribbon".into());
    if kind == "fuse8-vs-slice" {
        let n = args
            .next()
            .map_or(100_000_000, |s| s.parse::<f64>().expect("a number") as u64);
        return fuse_versus_slice(n, 7);
    }
    let arg =
        |a: Option<String>, default: u64| a.map_or(default, |s| s.parse::<f64>().expect("a number") as u64);
    let n = arg(args.next(), 1_000_000);
    let threads = arg(args.next(), 1) as usize;
    let memory = arg(args.next(), 512) as usize * (1 << 20);
    let absent = arg(args.next(), 10_000_000);
    let options = StreamedBuild::new()
        .with_threads(threads)
        .expect("threads >= 1")
        .with_memory(memory);
    let source = || (0..n).map(|i| hash_u64(2 * i));

    let t = Instant::now();
    let f: Box<dyn Filter> = match kind.as_str() {
        "ribbon" => Box::new(
            Ribbon::build_streamed(source, &RibbonParams::with_fpr(0.01).unwrap(), &options).unwrap(),
        ),
        "ribbon-sharded" => Box::new(
            Ribbon::build_streamed(
                source,
                &RibbonParams::with_fpr(0.01).unwrap().without_bumping(),
                &options,
            )
            .unwrap(),
        ),
        "ribbon7" => Box::new(
            Ribbon::build_streamed(source, &RibbonParams::with_result_bits(7).unwrap(), &options).unwrap(),
        ),
        "blocked" => {
            Box::new(BlockedBloom::build_streamed(source, FilterSizing::BitsPerKey(10.0), &options).unwrap())
        }
        "fuse8" => Box::new(BinaryFuse8::build_streamed(source, &FuseParams::THREE_WISE, &options).unwrap()),
        "fuse8-slice" => {
            let keys: Vec<KeyHash> = source().collect();
            Box::new(BinaryFuse8::build_with(&keys, &FuseParams::THREE_WISE).unwrap())
        }
        "fuse16" => {
            Box::new(BinaryFuse16::build_streamed(source, &FuseParams::THREE_WISE, &options).unwrap())
        }
        other => panic!(
            "unknown kind {other}: ribbon, ribbon-sharded, ribbon7, blocked, fuse8, fuse8-slice or fuse16"
        ),
    };
    let build = t.elapsed().as_secs_f64();
    let peak = peak_rss();
    let bytes = f.size_in_bytes() as f64;
    println!(
        "{kind} n={n} threads={threads} memory={} MiB: build {build:.1} s ({:.0} ns/key), {:.1} MB, {:.3} bits/key",
        memory >> 20,
        build * 1e9 / n as f64,
        bytes / 1e6,
        bytes * 8.0 / n as f64,
    );
    let bound = 1.3 * bytes + (1u64 << 30) as f64;
    println!(
        "  peak RSS {:.1} MB = {:.2} x filter; bound 1.3 x filter + 1 GiB = {:.1} MB: {}",
        peak as f64 / 1e6,
        peak as f64 / bytes,
        bound / 1e6,
        if (peak as f64) <= bound { "within" } else { "OVER" }
    );

    let t = Instant::now();
    let mut fp = 0u64;
    let mut batch = vec![hash_u64(0); 4096];
    let mut out = vec![false; 4096];
    let mut i = 0u64;
    while i < absent {
        let len = (absent - i).min(4096) as usize;
        for (k, h) in batch[..len].iter_mut().enumerate() {
            *h = hash_u64(2 * (i + k as u64) + 1);
        }
        f.contains_hashes(&batch[..len], &mut out[..len]);
        fp += out[..len].iter().filter(|&&b| b).count() as u64;
        i += len as u64;
    }
    let fpr = fp as f64 / absent as f64;
    println!(
        "  FPR {:.4}% over {absent} absent keys; expected {:.4}% (ratio {:.3}); {:.1} s",
        fpr * 100.0,
        f.expected_fpr() * 100.0,
        fpr / f.expected_fpr(),
        t.elapsed().as_secs_f64()
    );

    let probes: Vec<KeyHash> = (0..4_000_000u64)
        .map(|i| hash_u64(2 * (i * 7919 % absent.max(1)) + 1))
        .collect();
    let mut out = vec![false; probes.len()];
    let (mut single, mut batched) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = cpu_seconds();
        black_box(probes.iter().filter(|&&h| f.contains_hash(black_box(h))).count());
        single.push((cpu_seconds() - t) * 1e9 / probes.len() as f64);
        let t = cpu_seconds();
        for (p, o) in probes.chunks(1024).zip(out.chunks_mut(1024)) {
            f.contains_hashes(p, o);
        }
        black_box(&out);
        batched.push((cpu_seconds() - t) * 1e9 / probes.len() as f64);
    }
    println!(
        "  query ns: single {:.1}, batch {:.1} (median of 3 rounds over 4M absent keys)",
        median(single),
        median(batched)
    );
}
