//! Concurrent inserts into one `AtomicBlockedBloom`: the throughput of one
//! thread against two, which shows false sharing on the filter's shared
//! fields (the key count beside the fields every insert reads) as two
//! threads scaling worse than they should.
//!
//! ```text
//! cargo run --release -p amq-bench --example atomic_inserts [-- N ROUNDS]
//! ```

use std::sync::Barrier;
use std::thread;
use std::time::Instant;

use amq::{AtomicBlockedBloom, FilterSizing, KeyHash};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(4_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    // A small filter (64 KiB, in L2) so memory latency does not hide the
    // cache-line traffic on the shared fields.
    let hashes: Vec<KeyHash> = (0..n)
        .map(|i| KeyHash::from_well_mixed(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i >> 7)))
        .collect();
    let mut one = Vec::new();
    let mut two = Vec::new();
    for _ in 0..rounds {
        for threads in [1usize, 2] {
            let f = AtomicBlockedBloom::new(50_000, FilterSizing::BitsPerKey(10.0)).expect("filter");
            let barrier = Barrier::new(threads);
            let per = hashes.len() / threads;
            let start = Instant::now();
            thread::scope(|s| {
                for t in 0..threads {
                    let (f, barrier, chunk) = (&f, &barrier, &hashes[t * per..(t + 1) * per]);
                    s.spawn(move || {
                        barrier.wait();
                        for &h in chunk {
                            f.insert_hash(h).expect("a Bloom filter takes every insert");
                        }
                    });
                }
            });
            let ns = start.elapsed().as_nanos() as f64 / (per * threads) as f64;
            if threads == 1 {
                one.push(ns)
            } else {
                two.push(ns)
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut one), median(&mut two));
    println!(
        "ns per insert (median of {rounds}): 1 thread {a:.2}, 2 threads {b:.2} (aggregate); speed-up {:.2}x",
        a / b
    );
}
