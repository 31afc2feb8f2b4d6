//! A quick timing of the cuckoo filter at 1M keys (the criterion benchmarks
//! in `benches/` are the real measurement; this is a sanity check).
//!
//! `cargo run --release -p amq-bench --example cuckoo_speed [keys] [bits]`
//! (defaults: 1,000,000 and 12). Prints each of 5 rounds and then the best
//! (minimum) time of each operation, which is the least disturbed by other
//! processes on a shared machine.

use std::hint::black_box;
use std::time::Instant;

use amq::hash::remix;
use amq::{CuckooFilter, Filter, Insert, KeyHash, Remove};

fn per_key(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().expect("keys"));
    let bits: u32 = args.next().map_or(12, |a| a.parse().expect("bits"));
    let keys: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 1)))
        .collect();
    let absent: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 2)))
        .collect();
    let mut best = [f64::INFINITY; 6];
    for round in 0..5 {
        let mut f = CuckooFilter::with_fingerprint_bits(n, bits).expect("parameters");
        let t = Instant::now();
        for &k in &keys {
            f.insert_hash(k).expect("fits");
        }
        let insert = per_key(t, n);

        let t = Instant::now();
        let hits = keys.iter().filter(|&&k| f.contains_hash(black_box(k))).count();
        let hit = per_key(t, n);
        assert_eq!(hits, n);

        let t = Instant::now();
        let fps = absent.iter().filter(|&&k| f.contains_hash(black_box(k))).count();
        let miss = per_key(t, n);

        let mut out = vec![false; n];
        let t = Instant::now();
        f.contains_hashes(&keys, &mut out);
        let batch_hit = per_key(t, n);
        let t = Instant::now();
        f.contains_hashes(&absent, &mut out);
        let batch_miss = per_key(t, n);

        let t = Instant::now();
        for &k in &keys {
            f.remove_hash(k).expect("present");
        }
        let remove = per_key(t, n);

        for (b, t) in best
            .iter_mut()
            .zip([insert, hit, miss, batch_hit, batch_miss, remove])
        {
            *b = b.min(t);
        }
        println!(
            "round {round}: f={bits} n={n} load {:.3} bits/key {:.2} FPR {:.4}% | insert {insert:.1} ns, \
             hit {hit:.1} ns, miss {miss:.1} ns, batch hit {batch_hit:.1} ns, batch miss {batch_miss:.1} ns, \
             remove {remove:.1} ns",
            n as f64 / f.num_slots() as f64,
            f.size_in_bytes() as f64 * 8.0 / n as f64,
            fps as f64 / n as f64 * 100.0,
        );
    }
    println!(
        "best: insert {:.1} ns, hit {:.1} ns, miss {:.1} ns, batch hit {:.1} ns, batch miss {:.1} ns, remove {:.1} ns",
        best[0], best[1], best[2], best[3], best[4], best[5]
    );
}
