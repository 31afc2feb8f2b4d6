//! Measures how often one Ribbon construction attempt fails at a given
//! slots-per-key ratio: the data behind `amq::ribbon::slots_per_key`.
//!
//! `cargo run --release -p amq-bench --example ribbon_overhead -- N TRIALS RATIO...`
//! prints, for each ratio, the share of shard construction attempts (seeds)
//! that failed over TRIALS random key sets of N keys, and the bits per key
//! at r = 7, for the blocked layout (the two-line layout's simulation is
//! `filters/examples/ribbon_overhead64.rs`).

use amq::hash::remix;
use amq::{KeyHash, Ribbon, RibbonParams};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let trials: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let ratios: Vec<f64> = args[2.min(args.len())..]
        .iter()
        .filter_map(|a| a.parse().ok())
        .collect();
    for ratio in ratios {
        let params = RibbonParams::with_result_bits(7)
            .unwrap()
            .with_blocked_layout()
            .with_slots_per_key(ratio)
            .unwrap();
        let (mut attempts, mut failed, mut gave_up) = (0u64, 0u64, 0u64);
        let mut bits = 0.0;
        for t in 0..trials {
            let keys: Vec<KeyHash> = (0..n as u64)
                .map(|i| KeyHash::from_well_mixed(remix(i, 1000 + t)))
                .collect();
            match Ribbon::build_with(&keys, &params) {
                Ok(f) => {
                    attempts += f.attempts();
                    failed += f.attempts() - f.num_shards() as u64;
                    bits = amq::Filter::bits_per_key(&f);
                }
                Err(_) => {
                    gave_up += 1;
                }
            }
        }
        println!(
            "n={n} ratio={ratio:.4} attempts={attempts} failed={failed} fail_rate={:.3} gave_up={gave_up} bits/key(r=7)={bits:.3}",
            failed as f64 / attempts as f64
        );
    }
}
