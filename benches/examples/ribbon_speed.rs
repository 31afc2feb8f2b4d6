//! Quick speed and space check of the Ribbon filter (the criterion
//! benchmarks are the real measurement).
//!
//! `cargo run --release -p amq-bench --example ribbon_speed -- N R [SLOTS_PER_KEY]`
//! builds from N random key hashes with R result bits (default 1,000,000 and
//! 7) and prints build ns/key, query ns (hits, misses, batched misses),
//! bits/key and measured against expected FPR over 1M absent keys. Times are
//! thread CPU time, so they stay meaningful on a shared machine.

use std::hint::black_box;

use amq::hash::remix;
use amq::{Filter, FilterSizing, Insert, KeyHash, Ribbon, RibbonParams};

/// CPU time of this thread in seconds (Linux `schedstat`), so the numbers
/// hold on a machine shared with other jobs; wall time elsewhere.
struct Instant(f64);

impl Instant {
    fn now() -> Self {
        Instant(cpu_seconds())
    }
    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(cpu_seconds() - self.0)
    }
}

fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns / 1e9)
        .unwrap_or_else(|| {
            use std::sync::OnceLock;
            static START: OnceLock<std::time::Instant> = OnceLock::new();
            START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
        })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let r: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    let mut params = RibbonParams::with_result_bits(r).unwrap();
    if let Some(ratio) = args.get(2).and_then(|a| a.parse().ok()) {
        params = params.with_slots_per_key(ratio).unwrap();
    }
    let keys: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 42)))
        .collect();
    let absent: Vec<KeyHash> = (0..1_000_000u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 43)))
        .collect();

    let mut best = f64::MAX;
    let mut filter = None;
    for _ in 0..3 {
        let t = Instant::now();
        let f = Ribbon::build_with(&keys, &params).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        filter = Some(f);
    }
    let f = filter.unwrap();
    let per = |secs: f64, count: usize| secs * 1e9 / count as f64;

    // Best of three for every timing: the machine is shared. Each timing
    // runs four passes, because the thread CPU clock advances in scheduler
    // ticks (4 ms would be 4 ns per query over one pass of 1M queries).
    let best_of_3 = |run: &mut dyn FnMut() -> usize, count: usize| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..4 {
                    black_box(run());
                }
                per(t.elapsed().as_secs_f64(), 4 * count)
            })
            .fold(f64::MAX, f64::min)
    };
    let hits = keys.iter().filter(|&&h| f.contains_hash(h)).count();
    assert_eq!(hits, n);
    let hit_ns = best_of_3(
        &mut || keys.iter().filter(|&&h| f.contains_hash(black_box(h))).count(),
        n,
    );
    let fp = absent.iter().filter(|&&h| f.contains_hash(h)).count();
    let miss_ns = best_of_3(
        &mut || absent.iter().filter(|&&h| f.contains_hash(black_box(h))).count(),
        absent.len(),
    );
    let mut out = vec![false; absent.len()];
    let many_ns = best_of_3(
        &mut || {
            f.contains_hashes(black_box(&absent), &mut out);
            out.iter().filter(|&&b| b).count()
        },
        absent.len(),
    );
    assert_eq!(out.iter().filter(|&&b| b).count(), fp);

    // Reference on the same machine state: BlockedBloom misses at 10 bits/key.
    let mut bloom = amq::BlockedBloom::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
    keys.iter().for_each(|&h| bloom.insert_hash(h).unwrap());
    let bloom_ns = best_of_3(
        &mut || {
            absent
                .iter()
                .filter(|&&h| bloom.contains_hash(black_box(h)))
                .count()
        },
        absent.len(),
    );

    println!(
        "n={n} r={r} build={:.1} ns/key hit={hit_ns:.1} ns miss={miss_ns:.1} ns contains_hashes={many_ns:.1} ns/key \
         bits/key={:.3} ({:+.2}% over r) fpr={:.5} expected={:.5} shards={} attempts={} | BlockedBloom miss={bloom_ns:.1} ns",
        per(best, n),
        f.bits_per_key(),
        (f.bits_per_key() / r as f64 - 1.0) * 100.0,
        fp as f64 / absent.len() as f64,
        f.expected_fpr(),
        f.num_shards(),
        f.attempts(),
    );
}
