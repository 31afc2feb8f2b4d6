//! Measures the load a cuckoo filter reaches before its first failed insert.
//!
//! For each fingerprint width, fills `RUNS` tables (each with its own keys)
//! until the first `Err(Full)`, and prints the minimum, median and maximum of
//! the load at that point, counting only keys in the table's slots (the one in
//! the stash is left out), and the bits per key there.
//!
//! `cargo run --release -p amq-bench --example cuckoo_load [keys-per-table] [runs] [bits]`
//! (defaults: 1,000,000, 100, and all of 8, 12, 16).

use amq::hash::remix;
use amq::{CuckooFilter, Filter, Insert, KeyHash};

fn main() {
    let mut args = std::env::args().skip(1);
    let capacity: usize = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("keys per table"));
    let runs: u64 = args.next().map_or(100, |a| a.parse().expect("runs"));
    let widths: Vec<u32> = args
        .next()
        .map_or(vec![8, 12, 16], |a| vec![a.parse().expect("bits")]);
    println!("capacity {capacity}, {runs} runs per width");
    for bits in widths {
        let mut loads = Vec::new();
        let mut bits_per_key = Vec::new();
        for run in 0..runs {
            let mut f = CuckooFilter::with_fingerprint_bits(capacity, bits).expect("valid parameters");
            let seed = 1_000 * bits as u64 + run;
            let mut i = 0;
            while f.insert_hash(KeyHash::from_well_mixed(remix(i, seed))).is_ok() {
                i += 1;
            }
            let in_table = f.num_keys() - 1; // the last success filled the stash
            loads.push(in_table as f64 / f.num_slots() as f64);
            bits_per_key.push(f.bits_per_key());
        }
        loads.sort_by(f64::total_cmp);
        bits_per_key.sort_by(f64::total_cmp);
        let median = |v: &[f64]| (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2.0;
        println!(
            "f = {bits:2}: load before first failure min {:.4} median {:.4} max {:.4}; \
             bits/key there {:.3} (median), f/0.95 = {:.3}",
            loads[0],
            median(&loads),
            loads[loads.len() - 1],
            median(&bits_per_key),
            bits as f64 / 0.95,
        );
    }
}
