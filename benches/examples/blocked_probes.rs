//! Measures which probe count `k` gives the lowest FPR for a `BlockedBloom`
//! at each bits-per-key figure: the measurement behind the table in
//! `filters/src/bloom/blocked.rs`.
//!
//! `cargo run --release -p amq-bench --example blocked_probes [keys] [absent]`
//!
//! For each bits/key it builds filters with every k near the optimum, counts
//! false positives over `absent` keys, and prints the measured and formula FPR
//! of each and the best k.

use amq::hash::remix;
use amq::{math, BlockedBloom, Filter, Insert, KeyHash};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(200_000, |a| a.parse().expect("keys"));
    let absent: u64 = args.next().map_or(4_000_000, |a| a.parse().expect("absent"));
    println!("n = {n}, absent = {absent}");
    println!(
        "{:>8} {:>3} {:>11} {:>11}",
        "bits/key", "k", "measured", "formula"
    );
    for tenths in (20..=240).step_by(5) {
        let bpk = tenths as f64 / 10.0;
        let default_k = amq::bloom::blocked_probes_for_bits_per_key(bpk);
        let mut best = (f64::MAX, 0);
        let lo = default_k.saturating_sub(2).max(1);
        for k in lo..=default_k + 2 {
            // ⌈n · bits/key⌉ bits in whole 512-bit blocks, as
            // `BlockedBloom::new(n, FilterSizing::BitsPerKey(bpk))` sizes it.
            let blocks = ((n as f64 * bpk).ceil() as usize).div_ceil(512);
            let mut f = BlockedBloom::with_shape(blocks, k).expect("params");
            for i in 0..n as u64 {
                f.insert_hash(KeyHash::from_well_mixed(remix(i, 1))).unwrap();
            }
            let fp = (0..absent)
                .filter(|&i| f.contains_hash(KeyHash::from_well_mixed(remix(i, 2))))
                .count();
            let measured = fp as f64 / absent as f64;
            let formula = math::blocked_bloom_fpr(f.num_blocks() as u64 * 512, 512, k, n as u64);
            let mark = if k == default_k { "*" } else { "" };
            println!("{bpk:>8.1} {k:>3} {measured:>11.6} {formula:>11.6} {mark}");
            if measured < best.0 {
                best = (measured, k);
            }
            let _ = f.expected_fpr();
        }
        println!("{bpk:>8.1} best k = {} (table: {default_k})", best.1);
    }
}
