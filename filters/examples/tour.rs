//! The main job: build every filter over the same keys and print what each
//! costs and delivers.
//!
//! `cargo run --release -p amq --example tour [keys]` (default 1,000,000)
//!
//! For each filter: kind, bits per key, measured FPR over as many absent keys
//! as present ones, the FPR its formula expects, build time per key, and the
//! median time per query (hits and misses mixed) over five rounds.

use std::hint::black_box;
use std::time::Instant;

use amq::hash::remix;
use amq::{
    BinaryFuse16, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error, Filter, FuseParams, Ribbon,
    RibbonParams, StandardBloom, Xor16, Xor8,
};

type Builder = fn(&[u64]) -> Result<Box<dyn Filter>, Error>;

fn bloom<F: Filter + 'static>(mut f: F, keys: &[u64], insert: fn(&mut F, u64)) -> Box<dyn Filter> {
    for &h in keys {
        insert(&mut f, h);
    }
    Box::new(f)
}

fn builders() -> Vec<(&'static str, Builder)> {
    vec![
        ("StandardBloom 1%", |k| {
            Ok(bloom(
                StandardBloom::with_fpr(k.len(), 0.01)?,
                k,
                StandardBloom::insert_hash,
            ))
        }),
        ("BlockedBloom 10 bits/key", |k| {
            Ok(bloom(
                BlockedBloom::with_bits_per_key(k.len(), 10.0)?,
                k,
                BlockedBloom::insert_hash,
            ))
        }),
        ("CountingBloom 1%", |k| {
            Ok(bloom(
                CountingBloom::with_fpr(k.len(), 0.01)?,
                k,
                CountingBloom::insert_hash,
            ))
        }),
        ("Cuckoo 8-bit, full", |k| {
            let mut f = CuckooFilter::with_fingerprint_bits(k.len(), 8)?;
            for &h in k {
                f.insert_hash(h)?;
            }
            Ok(Box::new(f))
        }),
        ("Cuckoo 12-bit, full", |k| {
            // Sized for exactly these keys: about 95% of its slots end up used.
            let mut f = CuckooFilter::with_fingerprint_bits(k.len(), 12)?;
            for &h in k {
                f.insert_hash(h)?;
            }
            Ok(Box::new(f))
        }),
        ("Xor8", |k| Ok(Box::new(Xor8::build(k)?))),
        ("Xor16", |k| Ok(Box::new(Xor16::build(k)?))),
        ("BinaryFuse8", |k| Ok(Box::new(BinaryFuse8::build(k)?))),
        ("BinaryFuse8 4-wise", |k| {
            Ok(Box::new(BinaryFuse8::build_with(k, &FuseParams::FOUR_WISE)?))
        }),
        ("BinaryFuse16", |k| Ok(Box::new(BinaryFuse16::build(k)?))),
        ("Ribbon r=7", |k| {
            Ok(Box::new(Ribbon::build(k, &RibbonParams::with_result_bits(7)?)?))
        }),
        ("Ribbon 1%", |k| {
            Ok(Box::new(Ribbon::build(k, &RibbonParams::with_fpr(0.01)?)?))
        }),
    ]
}

fn main() -> Result<(), Error> {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("number of keys"));
    // Keys are hashed once with `amq::hash_key` in real use; here the hashes
    // are drawn directly (distinct by construction: remix is a bijection).
    let keys: Vec<u64> = (0..n as u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
    let absent: Vec<u64> = (0..n as u64).map(|i| remix(i, 0x00ab_5e17)).collect();
    // Queries alternate present and absent keys in a random order.
    let queries: Vec<u64> = (0..n)
        .map(|i| if i % 2 == 0 { keys[i] } else { absent[i] })
        .collect();

    println!("{n} keys, {n} absent keys\n");
    println!(
        "| {:<28} | {:>8} | {:>12} | {:>12} | {:>12} | {:>12} |",
        "filter", "bits/key", "measured FPR", "expected FPR", "build ns/key", "query ns"
    );
    println!(
        "|{:-<30}|{:->10}|{:->14}|{:->14}|{:->14}|{:->14}|",
        "", "", "", "", "", ""
    );
    for (name, build) in builders() {
        let start = Instant::now();
        let f = build(&keys)?;
        let build_ns = start.elapsed().as_nanos() as f64 / n as f64;
        assert!(keys.iter().all(|&h| f.contains_hash(h)), "{name}: false negative");
        let fp = absent.iter().filter(|&&h| f.contains_hash(h)).count();
        let mut rounds: Vec<f64> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let hits = queries.iter().filter(|&&h| f.contains_hash(black_box(h))).count();
                black_box(hits);
                start.elapsed().as_nanos() as f64 / n as f64
            })
            .collect();
        rounds.sort_by(f64::total_cmp);
        println!(
            "| {:<28} | {:>8.2} | {:>11.4}% | {:>11.4}% | {:>12.1} | {:>12.1} |",
            name,
            f.bits_per_key(),
            100.0 * fp as f64 / n as f64,
            100.0 * f.expected_fpr(),
            build_ns,
            rounds[2]
        );
    }
    Ok(())
}
