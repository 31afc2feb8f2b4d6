//! The main job: build every filter over the same keys and print what each
//! costs and delivers.
//!
//! `cargo run --release -p amq --example tour [keys]` (default 1,000,000)
//!
//! For each filter: kind, bits per key, measured FPR over as many absent keys
//! as present ones, the FPR its formula expects, how far the bits per key lie
//! above the minimum `log2(1/FPR)` at the measured FPR, build time per key,
//! and the median time per query over five rounds (queries alternate present
//! and absent keys; each filter is queried through its own type).

use std::hint::black_box;
use std::time::Instant;

use amq::hash::{remix, ParquetHash};
use amq::{
    AtomicBlockedBloom, BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter,
    Error, Filter, FilterSizing, FuseParams, Insert, KeyHash, ParquetBloom, Ribbon, RibbonParams,
    SplitBlockBloom, StandardBloom, Xor16, Xor8,
};

/// Builds one amq filter over `keys`, checks it, and prints its row.
/// Generic, so the query loop calls the filter's own (inlined)
/// `contains_hash`, not one through a `Box<dyn Filter>`.
fn row<F: Filter>(
    name: &str,
    keys: &[KeyHash],
    absent: &[KeyHash],
    queries: &[KeyHash],
    build: impl FnOnce(&[KeyHash]) -> Result<F, Error>,
) -> Result<(), Error> {
    measure(name, keys, absent, queries, build, F::contains_hash, |f| {
        (f.bits_per_key(), f.expected_fpr())
    })
}

/// The row of any filter: `contains` is its query for a hash of type `H`
/// (a `KeyHash` for amq's filters, a `ParquetHash` for `ParquetBloom`,
/// which is not a `Filter`), `figures` its bits per key and expected FPR.
fn measure<F, H: Copy>(
    name: &str,
    keys: &[H],
    absent: &[H],
    queries: &[H],
    build: impl FnOnce(&[H]) -> Result<F, Error>,
    contains: impl Fn(&F, H) -> bool,
    figures: impl Fn(&F) -> (f64, f64),
) -> Result<(), Error> {
    let n = keys.len();
    let start = Instant::now();
    let f = build(keys)?;
    let build_ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert!(keys.iter().all(|&h| contains(&f, h)), "{name}: false negative");
    let fp = absent.iter().filter(|&&h| contains(&f, h)).count();
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            let hits = queries.iter().filter(|&&h| contains(&f, black_box(h))).count();
            black_box(hits);
            start.elapsed().as_nanos() as f64 / queries.len() as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    let measured = fp as f64 / absent.len() as f64;
    let (bits_per_key, expected_fpr) = figures(&f);
    // Space over the information-theoretic minimum log2(1/FPR) at the
    // measured FPR ("-" when no absent key matched).
    let over = match fp {
        0 => "-".to_string(),
        _ => format!("{:.1}%", 100.0 * (bits_per_key / -measured.log2() - 1.0)),
    };
    println!(
        "| {:<28} | {:>8.2} | {:>11.4}% | {:>11.4}% | {:>10} | {:>12.1} | {:>12.1} |",
        name,
        bits_per_key,
        100.0 * measured,
        100.0 * expected_fpr,
        over,
        build_ns,
        rounds[2]
    );
    Ok(())
}

/// Inserts every key into `f`, one at a time.
fn filled<F: Insert>(mut f: F, keys: &[KeyHash]) -> Result<F, Error> {
    for &h in keys {
        f.insert_hash(h)?;
    }
    Ok(f)
}

fn main() -> Result<(), Error> {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("number of keys"));
    // Keys are hashed once with `amq::hash_key` in real use; here the hashes
    // are drawn directly (distinct by construction: remix is a bijection).
    let keys: Vec<KeyHash> = (0..n as u64).map(amq::hash_u64).collect();
    let absent: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 0x00ab_5e17)))
        .collect();
    // Queries alternate present and absent keys (even positions present).
    let queries: Vec<KeyHash> = (0..n)
        .map(|i| if i % 2 == 0 { keys[i] } else { absent[i] })
        .collect();

    println!("{n} keys, {n} absent keys\n");
    println!(
        "| {:<28} | {:>8} | {:>12} | {:>12} | {:>10} | {:>12} | {:>12} |",
        "filter", "bits/key", "measured FPR", "expected FPR", "over limit", "build ns/key", "query ns"
    );
    println!(
        "|{:-<30}|{:->10}|{:->14}|{:->14}|{:->12}|{:->14}|{:->14}|",
        "", "", "", "", "", "", ""
    );
    let (k, a, q) = (&keys[..], &absent[..], &queries[..]);
    row("StandardBloom 1%", k, a, q, |k| {
        filled(StandardBloom::new(k.len(), FilterSizing::Fpr(0.01))?, k)
    })?;
    row("BlockedBloom 10 bits/key", k, a, q, |k| {
        filled(BlockedBloom::new(k.len(), FilterSizing::BitsPerKey(10.0))?, k)
    })?;
    row("SplitBlockBloom 10 bits/key", k, a, q, |k| {
        filled(SplitBlockBloom::new(k.len(), FilterSizing::BitsPerKey(10.0))?, k)
    })?;
    row("AtomicBlockedBloom 10 b/key", k, a, q, |k| {
        let f = AtomicBlockedBloom::new(k.len(), FilterSizing::BitsPerKey(10.0))?;
        k.iter().try_for_each(|&h| f.insert_hash(h))?;
        Ok(f)
    })?;
    row("CountingBloom 1%", k, a, q, |k| {
        filled(CountingBloom::new(k.len(), FilterSizing::Fpr(0.01))?, k)
    })?;
    for (name, bits) in [
        ("Cuckoo 8-bit, full", 8),
        ("Cuckoo 12-bit, full", 12),
        ("Cuckoo 16-bit, full", 16),
    ] {
        // Sized for exactly these keys: about 95% of its slots end up used.
        row(name, k, a, q, |k| {
            let mut f = CuckooFilter::with_fingerprint_bits(k.len(), bits)?;
            for &h in k {
                f.insert_hash(h)?;
            }
            Ok(f)
        })?;
    }
    row("Xor8", k, a, q, Xor8::build)?;
    row("Xor16", k, a, q, Xor16::build)?;
    row("BinaryFuse8", k, a, q, BinaryFuse8::build)?;
    row("BinaryFuse8 4-wise", k, a, q, |k| {
        BinaryFuse8::build_with(k, &FuseParams::FOUR_WISE)
    })?;
    row("BinaryFuse16", k, a, q, BinaryFuse16::build)?;
    row("PackedBinaryFuse 0.1%", k, a, q, |k| {
        amq::PackedBinaryFuse::build(k, FilterSizing::Fpr(0.001))
    })?;
    row("BinaryFuse32", k, a, q, BinaryFuse32::build)?;
    row("Ribbon r=7", k, a, q, |k| {
        Ribbon::build_with(k, &RibbonParams::with_result_bits(7)?)
    })?;
    row("Ribbon 1%", k, a, q, |k| {
        Ribbon::build_with(k, &RibbonParams::with_fpr(0.01)?)
    })?;
    // Driven by Parquet's value hash, through its own API (it is not a
    // `Filter`): the same keys' hash bits stand in for those hashes here
    // (any 64-bit value is one).
    let parquet = |hashes: &[KeyHash]| -> Vec<ParquetHash> {
        hashes.iter().map(|h| ParquetHash::from_xxh64(h.get())).collect()
    };
    let (pk, pa, pq) = (parquet(k), parquet(a), parquet(q));
    measure(
        "ParquetBloom 1%",
        &pk,
        &pa,
        &pq,
        |k| {
            let mut f = ParquetBloom::new(k.len(), FilterSizing::Fpr(0.01))?;
            f.insert_hashes(k)?;
            Ok(f)
        },
        ParquetBloom::contains_hash,
        |f| (f.bits_per_key(), f.expected_fpr()),
    )?;
    Ok(())
}
