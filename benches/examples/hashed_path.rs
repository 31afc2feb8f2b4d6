//! The hashed path (`Filter::contains(&[u8])`: hash the key, then probe)
//! against the prehashed one (`contains_hash`), for every kind, and the batch
//! forms (`contains_hashes` over hashes, `contains_keys` over keys), with
//! `xorf`'s xor and binary fuse filters fed the same `hash_key` values as the
//! peer (the target: the hashed path at most 1.2× the prehashed one).
//!
//! `cargo run --release -p amq-bench --example hashed_path -- [N] [ROUNDS]`
//! (default 1,000,000 keys, 11 rounds).
//!
//! Keys are 8-byte strings: the little-endian bytes of the benchmark's random
//! `u64` keys (`keys.rs`), so making a key costs nothing and its bytes need no
//! memory access; filters are built from their `hash_key` values. Each filter
//! is sized as in the report (10 bits/key for the Bloom filters, 1% for the
//! counting and cuckoo filters, r = 7 for Ribbon). Queries are 1M absent keys
//! (misses), in rounds: each round times one pass of every form of one filter,
//! in an order rotating from round to round; the figures are medians over
//! rounds of ns per key, and of the per-round ratio hashed / prehashed.

use std::hint::black_box;

use amq::{hash_key, AnyFilter, Filter, FilterKind, FilterSizing, KeyHash};
use amq_bench::keys::KeySet;
use amq_bench::report::median;

/// ns per key of one pass of `f` over `n` keys.
fn time(n: usize, f: impl FnOnce() -> usize) -> f64 {
    let start = std::time::Instant::now();
    black_box(f());
    start.elapsed().as_nanos() as f64 / n as f64
}

/// The passes of one filter: prehashed, hashed, and (for ours) the two
/// batch forms. `Option` for the forms a peer lacks.
struct Forms<'a> {
    prehashed: &'a Pass<'a, KeyHash>,
    hashed: &'a Pass<'a, u64>,
    many: Option<&'a Pass<'a, KeyHash>>,
    many_keys: Option<&'a Pass<'a, [u8; 8]>>,
}

/// One timed pass over a slice of queries; returns the keys found.
type Pass<'a, T> = dyn Fn(&[T]) -> usize + 'a;

fn measure(name: &str, forms: Forms<'_>, raw: &[u64], hashes: &[KeyHash], bytes: &[[u8; 8]], rounds: usize) {
    let n = raw.len();
    let mut t: [Vec<f64>; 4] = Default::default();
    for round in 0..rounds {
        for i in 0..4 {
            match (round + i) % 4 {
                0 => t[0].push(time(n, || (forms.prehashed)(hashes))),
                1 => t[1].push(time(n, || (forms.hashed)(raw))),
                2 => {
                    if let Some(m) = forms.many {
                        t[2].push(time(n, || m(hashes)));
                    }
                }
                _ => {
                    if let Some(m) = forms.many_keys {
                        t[3].push(time(n, || m(bytes)));
                    }
                }
            }
        }
    }
    let mut ratio: Vec<f64> = t[1].iter().zip(&t[0]).map(|(h, p)| h / p).collect();
    let cell = |v: &mut Vec<f64>| {
        if v.is_empty() {
            "—".to_string()
        } else {
            format!("{:.1}", median(v))
        }
    };
    println!(
        "| {name} | {} | {} | {:.2} | {} | {} |",
        cell(&mut t[0]),
        cell(&mut t[1]),
        median(&mut ratio),
        cell(&mut t[2]),
        cell(&mut t[3])
    );
}

/// Misses among `hashes` through `contains_hash`.
fn count_hash<F: Filter>(f: &F, hashes: &[KeyHash]) -> usize {
    hashes.iter().filter(|&&h| f.contains_hash(h)).count()
}

/// Misses among the keys' bytes through `contains(&[u8])`.
fn count_key<F: Filter>(f: &F, raw: &[u64]) -> usize {
    raw.iter().filter(|&&k| f.contains(&k.to_le_bytes())).count()
}

fn count_many<F: Filter>(f: &F, hashes: &[KeyHash]) -> usize {
    let mut out = [false; 1000];
    hashes
        .chunks(1000)
        .map(|c| {
            f.contains_hashes(c, &mut out[..c.len()]);
            out.iter().filter(|&&o| o).count()
        })
        .sum()
}

fn count_many_keys<F: Filter>(f: &F, bytes: &[[u8; 8]]) -> usize {
    let mut out = [false; 1000];
    let mut refs: Vec<&[u8]> = Vec::with_capacity(1000);
    bytes
        .chunks(1000)
        .map(|c| {
            refs.clear();
            refs.extend(c.iter().map(|k| &k[..]));
            f.contains_keys(&refs, &mut out[..c.len()]);
            out.iter().filter(|&&o| o).count()
        })
        .sum()
}

fn ours<F: Filter>(name: &str, f: &F, raw: &[u64], hashes: &[KeyHash], bytes: &[[u8; 8]], rounds: usize) {
    let forms = Forms {
        prehashed: &|h| count_hash(f, h),
        hashed: &|r| count_key(f, r),
        many: Some(&|h| count_many(f, h)),
        many_keys: Some(&|b| count_many_keys(f, b)),
    };
    measure(name, forms, raw, hashes, bytes, rounds);
}

fn main() {
    amq_bench::ordinary_pages();
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let keys = KeySet::new(n, 1_000_000);
    let present: Vec<KeyHash> = keys.present.iter().map(|k| hash_key(&k.to_le_bytes())).collect();
    // The same hashes as plain `u64`s, for `xorf`.
    let present_u64: &[u64] = bytemuck::cast_slice(&present);
    let raw = &keys.absent[..];
    let hashes: Vec<KeyHash> = raw.iter().map(|k| hash_key(&k.to_le_bytes())).collect();
    let bytes: Vec<[u8; 8]> = raw.iter().map(|k| k.to_le_bytes()).collect();
    println!(
        "n = {n}, 1M absent keys, {rounds} rounds; medians of ns per key (ratio: median of per-round ratios)"
    );
    println!("| filter | prehashed `contains_hash` | hashed `contains` | hashed / prehashed | `contains_hashes` | `contains_keys` |");
    println!("|---|--:|--:|--:|--:|--:|");
    // The hash alone, in the same loop shape (sum of hashes, so nothing is
    // left out), for the share of the hashed path that is the hash itself.
    let mut alone: Vec<f64> = (0..rounds)
        .map(|_| {
            time(raw.len(), || {
                raw.iter()
                    .fold(0u64, |acc, &k| acc.wrapping_add(hash_key(&k.to_le_bytes()).get()))
                    as usize
            })
        })
        .collect();
    println!(
        "| `hash_key` alone (8-byte keys) | | {:.1} | | | |",
        median(&mut alone)
    );
    let kinds = [
        (FilterKind::StandardBloom, FilterSizing::BitsPerKey(10.0)),
        (FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0)),
        (FilterKind::CountingBloom, FilterSizing::Fpr(0.01)),
        (FilterKind::CuckooFilter, FilterSizing::Fpr(0.01)),
        (FilterKind::Xor8, FilterSizing::Fpr(0.01)),
        (FilterKind::Xor16, FilterSizing::Fpr(0.0001)),
        (FilterKind::BinaryFuse8, FilterSizing::Fpr(0.01)),
        (FilterKind::BinaryFuse16, FilterSizing::Fpr(0.0001)),
        (FilterKind::BinaryFuse32, FilterSizing::Fpr(1e-9)),
        (FilterKind::Ribbon, FilterSizing::Fpr(1.0 / 128.0)),
    ];
    for (kind, sizing) in kinds {
        let f = AnyFilter::build(kind, &present, sizing).unwrap();
        assert!(present.iter().take(100_000).all(|&h| f.contains_hash(h)));
        let name = format!("amq-{kind:?}");
        match &f {
            AnyFilter::StandardBloom(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::BlockedBloom(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::CountingBloom(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::CuckooFilter(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::Xor8(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::Xor16(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::BinaryFuse8(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::BinaryFuse16(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::BinaryFuse32(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            AnyFilter::Ribbon(x) => ours(&name, x, raw, &hashes, &bytes, rounds),
            other => panic!("unexpected {:?}", other.kind()),
        }
        drop(f);
        if kind == FilterKind::Xor8 {
            use xorf::Filter as _;
            let x = xorf::Xor8::from(present_u64);
            let forms = Forms {
                prehashed: &|h| h.iter().filter(|&&h| x.contains(&h.get())).count(),
                hashed: &|r| {
                    r.iter()
                        .filter(|&&k| x.contains(&hash_key(&k.to_le_bytes()).get()))
                        .count()
                },
                many: None,
                many_keys: None,
            };
            measure("xorf-Xor8", forms, raw, &hashes, &bytes, rounds);
        }
        if kind == FilterKind::BinaryFuse8 {
            use xorf::Filter as _;
            let x = xorf::BinaryFuse8::try_from(present_u64).unwrap();
            let forms = Forms {
                prehashed: &|h| h.iter().filter(|&&h| x.contains(&h.get())).count(),
                hashed: &|r| {
                    r.iter()
                        .filter(|&&k| x.contains(&hash_key(&k.to_le_bytes()).get()))
                        .count()
                },
                many: None,
                many_keys: None,
            };
            measure("xorf-BinaryFuse8", forms, raw, &hashes, &bytes, rounds);
        }
    }
}
