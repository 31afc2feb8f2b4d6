//! The split-block head-to-head in many short alternating rounds: amq's
//! `SplitBlockBloom` against `sbbf-rs` (the same layout and bits), with amq's
//! `BlockedBloom` beside them, all at 10 bits/key and fed prehashed keys.
//!
//! `cargo run --release -p amq-bench --example split_block_speed -- [N] [ROUNDS]`
//! (default 1,000,000 keys, 31 rounds). Each round times one pass of hits
//! (1M present keys at random), misses (1M absent keys) and, for amq's
//! filters, batched misses (`contains_hashes`, 1,000 keys a call), for every
//! filter, in an order that rotates from round to round; the figures are
//! medians over rounds of ns per key and of the per-round ratio to `sbbf-rs`'s
//! single queries of the same kind (hits to hits, misses and batches to
//! misses). A round takes well under a second, so a slow spell of the host
//! slows every filter of a round alike and the per-round ratios stay
//! meaningful.

use std::hint::black_box;

use amq_bench::adapters::sbbf::SplitBlockBloom as SbbfRs;
use amq_bench::keys::KeySet;
use amq_bench::report::median;
use amq_bench::Subject;

/// ns per key of one pass of `f` over `n` keys.
fn time(n: usize, f: impl FnOnce() -> usize) -> f64 {
    let start = std::time::Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / n as f64
}

/// One round of one filter: `[hit, miss, batched miss]` ns per key (batched
/// only for a filter with a batch query) and the keys each pass found.
fn round<S: Subject>(s: &S, hits: &[u64], misses: &[u64], out: &mut [bool]) -> [(f64, usize); 3] {
    let mut found = [0usize; 3];
    let hit = time(hits.len(), || {
        found[0] = hits.iter().filter(|&&k| s.contains(black_box(k))).count();
        found[0]
    });
    let miss = time(misses.len(), || {
        found[1] = misses.iter().filter(|&&k| s.contains(black_box(k))).count();
        found[1]
    });
    let many = if S::HAS_BATCH {
        time(misses.len(), || {
            for chunk in misses.chunks(out.len()) {
                s.contains_many(chunk, &mut out[..chunk.len()]);
                found[2] += out[..chunk.len()].iter().filter(|&&o| o).count();
            }
            found[2]
        })
    } else {
        f64::NAN
    };
    [(hit, found[0]), (miss, found[1]), (many, found[2])]
}

fn main() {
    amq_bench::ordinary_pages();
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(31);
    let keys = KeySet::new(n, 1_000_000);
    let hits = keys.hit_pool(1_000_000);
    let (hits, misses) = (hits.all(), &keys.absent[..]);
    let ours = amq::SplitBlockBloom::build(&keys.present).unwrap();
    let peer = SbbfRs::build(&keys.present).unwrap();
    let blocked = amq::BlockedBloom::build(&keys.present).unwrap();
    let names = ["amq-SplitBlockBloom", "sbbf-rs", "amq-BlockedBloom"];
    let bits = [
        ours.size_in_bytes(),
        peer.size_in_bytes(),
        blocked.size_in_bytes(),
    ]
    .map(|b| b as f64 * 8.0 / n as f64);
    const PEER: usize = 1;
    let mut out = vec![false; 1000];
    // [filter][hit, miss, batched miss]
    let mut t = vec![vec![Vec::new(); 3]; names.len()];
    let mut found = vec![[0usize; 3]; names.len()];
    for r in 0..rounds {
        for i in 0..names.len() {
            let f = (r + i) % names.len();
            let got = match f {
                0 => round(&ours, hits, misses, &mut out),
                1 => round(&peer, hits, misses, &mut out),
                _ => round(&blocked, hits, misses, &mut out),
            };
            for (op, (ns, c)) in got.into_iter().enumerate() {
                t[f][op].push(ns);
                found[f][op] = c;
            }
        }
    }
    println!(
        "n = {n}, {rounds} rounds, medians of ns per key (ratios to sbbf-rs: medians of per-round ratios)"
    );
    println!("| filter | bits/key | FPR | hit ns | miss ns | batched miss ns | hit / sbbf-rs | miss / sbbf-rs | batched / sbbf-rs miss |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (f, name) in names.iter().enumerate() {
        let batched = f != PEER;
        assert_eq!(found[f][0], hits.len(), "{name}: a false negative");
        assert!(
            !batched || found[f][2] == found[f][1],
            "{name}: batched and single answers differ"
        );
        let ratio = |op: usize, peer_op: usize| {
            let mut r: Vec<f64> = t[f][op]
                .iter()
                .zip(&t[PEER][peer_op])
                .map(|(a, b)| a / b)
                .collect();
            median(&mut r)
        };
        let med = |op: usize| median(&mut t[f][op].clone());
        let (many, many_ratio) = if batched {
            (format!("{:.1}", med(2)), format!("{:.3}", ratio(2, 1)))
        } else {
            ("—".into(), "—".into())
        };
        println!(
            "| {name} | {:.2} | {:.4}% | {:.1} | {:.1} | {many} | {:.3} | {:.3} | {many_ratio} |",
            bits[f],
            100.0 * found[f][1] as f64 / misses.len() as f64,
            med(0),
            med(1),
            ratio(0, 0),
            ratio(1, 1),
        );
    }
}
