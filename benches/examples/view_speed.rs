//! Borrowed views against owned filters, in many short alternating rounds:
//! for each kind with a view, `contains_hash` on the owned filter, on a
//! `FilterView` of its bytes at a 64-byte-aligned address, and on one at an
//! odd address; and `contains_hashes` on the owned filter and the aligned view.
//!
//! `cargo run --release -p amq-bench --example view_speed -- [N] [ROUNDS]`
//! (default 1,000,000 keys, 15 rounds). Each round times one pass of 1M
//! absent hashes per subject, in an order that rotates from round to round;
//! the figures are medians over rounds of ns per query and of the per-round
//! ratio to the owned filter's single query.

use std::hint::black_box;

use amq::{AnyFilter, Filter, FilterKind, FilterSizing, FilterView, KeyHash};
use amq_bench::adapters::hashes;
use amq_bench::keys::KeySet;
use amq_bench::report::median;

/// `bytes` copied into a fresh buffer so that they start `offset` bytes past
/// a 64-byte boundary; returns the buffer and where they start in it.
fn placed(bytes: &[u8], offset: usize) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; bytes.len() + 128];
    let base = buf.as_ptr() as usize;
    let start = (64 - base % 64) % 64 + offset;
    buf[start..start + bytes.len()].copy_from_slice(bytes);
    (buf, start)
}

fn single(f: &dyn Filter, hashes: &[KeyHash]) -> usize {
    hashes.iter().filter(|&&h| f.contains_hash(h)).count()
}

fn many(f: &dyn Filter, hashes: &[KeyHash], out: &mut [bool]) -> usize {
    f.contains_hashes(hashes, out);
    out.iter().filter(|&&b| b).count()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let keys = KeySet::new(n, 1_000_000);
    let misses = hashes(&keys.absent);
    let mut out = vec![false; misses.len()];
    println!("n = {n}, {rounds} rounds, ns per query (median), ratio to the owned single query (median of per-round ratios)");
    println!("| kind | owned | view, aligned | view, offset 3 | owned batch | view batch, aligned |");
    println!("|---|---|---|---|---|---|");
    let kinds = [
        FilterKind::StandardBloom,
        FilterKind::BlockedBloom,
        FilterKind::Xor8,
        FilterKind::BinaryFuse8,
        FilterKind::BinaryFuse16,
        FilterKind::Ribbon,
    ];
    for kind in kinds {
        let owned = AnyFilter::build(kind, hashes(&keys.present), FilterSizing::BitsPerKey(10.0)).unwrap();
        let bytes = owned.to_bytes();
        let (aligned_buf, a) = placed(&bytes, 0);
        let (odd_buf, o) = placed(&bytes, 3);
        let aligned = FilterView::new(&aligned_buf[a..a + bytes.len()]).unwrap();
        let odd = FilterView::new(&odd_buf[o..o + bytes.len()]).unwrap();
        // Same answers before timing anything.
        let want = single(&owned, misses);
        assert_eq!(single(&aligned, misses), want);
        assert_eq!(single(&odd, misses), want);
        let mut times: [Vec<f64>; 5] = Default::default();
        for round in 0..rounds {
            for i in 0..5 {
                let s = (i + round) % 5;
                let start = std::time::Instant::now();
                let c = match s {
                    0 => single(&owned, misses),
                    1 => single(&aligned, misses),
                    2 => single(&odd, misses),
                    3 => many(&owned, misses, &mut out),
                    _ => many(&aligned, misses, &mut out),
                };
                black_box(c);
                times[s].push(start.elapsed().as_nanos() as f64 / misses.len() as f64);
            }
        }
        let base = times[0].clone();
        let cell = |t: &Vec<f64>| {
            let mut ratios: Vec<f64> = t.iter().zip(&base).map(|(x, b)| x / b).collect();
            format!("{:.1} ({:.2}×)", median(&mut t.clone()), median(&mut ratios))
        };
        println!(
            "| {kind:?} | {} | {} | {} | {} | {} |",
            cell(&times[0]),
            cell(&times[1]),
            cell(&times[2]),
            cell(&times[3]),
            cell(&times[4])
        );
    }
}
