//! `BlockedBloom` and `SplitBlockBloom` inserts against `sbbf-rs`'s, in
//! alternating rounds (the target: insert at most 1.5× `sbbf-rs`, in native
//! and default builds).
//!
//! `cargo run --release -p amq-bench --example blocked_insert -- [N] [ROUNDS]`
//! (default 1,000,000 keys, 21 rounds; add `RUSTFLAGS="-C target-cpu=native"`
//! for the native build). Each filter (10 bits/key) is filled once, untimed,
//! so its pages are mapped; each round then times one pass inserting all `n`
//! keys again (the same work per key as the first pass: the block is read,
//! ORed and written) through each amq filter's `insert_hash` loop and batched
//! `insert_hashes`, and `sbbf-rs`'s `insert` loop, in an order rotating from
//! round to round. Figures: medians over rounds of ns per key and of the
//! per-round ratio to `sbbf-rs`.

use std::hint::black_box;

use amq::{BlockedBloom, Filter, FilterSizing, Insert, KeyHash, SplitBlockBloom as AmqSplitBlock};
use amq_bench::adapters::hashes;
use amq_bench::adapters::sbbf::SplitBlockBloom;
use amq_bench::keys::KeySet;
use amq_bench::report::median;

/// ns per key of one pass of `f` over `n` keys.
fn time(n: usize, f: impl FnOnce()) -> f64 {
    let start = std::time::Instant::now();
    f();
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    amq_bench::ordinary_pages();
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(21);
    let keys = KeySet::new(n, 0).present;
    let hs: &[KeyHash] = hashes(&keys);
    let mut single = BlockedBloom::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
    let mut batched = single.clone();
    let mut split_single = AmqSplitBlock::new(n, FilterSizing::BitsPerKey(10.0)).unwrap();
    let mut split_batched = split_single.clone();
    let mut peer = SplitBlockBloom::with_bits_per_key(n, 10.0);
    hs.iter().for_each(|&k| single.insert_hash(k).unwrap());
    batched.insert_hashes(hs).unwrap();
    hs.iter().for_each(|&k| split_single.insert_hash(k).unwrap());
    split_batched.insert_hashes(hs).unwrap();
    keys.iter().for_each(|&k| peer.insert(k));
    assert_eq!(single, batched);
    assert_eq!(split_single, split_batched);
    const PEER: usize = 4;
    let mut t: [Vec<f64>; 5] = Default::default();
    for round in 0..rounds {
        for i in 0..5 {
            let f = (round + i) % 5;
            t[f].push(match f {
                0 => time(n, || {
                    hs.iter().for_each(|&k| single.insert_hash(black_box(k)).unwrap())
                }),
                1 => time(n, || batched.insert_hashes(black_box(hs)).unwrap()),
                2 => time(n, || {
                    hs.iter()
                        .for_each(|&k| split_single.insert_hash(black_box(k)).unwrap())
                }),
                3 => time(n, || split_batched.insert_hashes(black_box(hs)).unwrap()),
                _ => time(n, || keys.iter().for_each(|&k| peer.insert(black_box(k)))),
            });
        }
    }
    assert!(keys
        .iter()
        .zip(hs)
        .all(|(&k, &h)| single.contains_hash(h) && batched.contains_hash(h) && peer.contains(k)));
    assert!(hs.iter().all(|&h| split_single.contains_hash(h)));
    assert_eq!(split_single, split_batched);
    println!(
        "n = {n}, {rounds} rounds, kernel {} / sbbf-rs {}; medians of ns per insert (ratio: median of per-round ratios)",
        single.query_kernel(),
        peer.implementation()
    );
    println!("| insert | ns/key | / sbbf-rs |");
    println!("|---|--:|--:|");
    let names = [
        "amq-BlockedBloom insert_hash",
        "amq-BlockedBloom insert_hashes",
        "amq-SplitBlockBloom insert_hash",
        "amq-SplitBlockBloom insert_hashes",
        "sbbf-rs insert",
    ];
    for f in 0..5 {
        let mut r: Vec<f64> = t[f].iter().zip(&t[PEER]).map(|(a, b)| a / b).collect();
        println!(
            "| {} | {:.2} | {:.3} |",
            names[f],
            median(&mut t[f].clone()),
            median(&mut r)
        );
    }
}
