//! `multi_get` against one `get` per key on the same store: 1,000 lookups
//! (half present, half absent), in batches of 8, 32, 128 and 1,000.
//!
//! ```text
//! cargo run --release -p amq-bench --example lsm_multi_get [-- N ROUNDS CACHE_MIB]
//! ```
//!
//! `CACHE_MIB` (default 0): a block cache of that many MiB, warmed by one
//! `get` of every key before timing.
//!
//! The store: N 16-byte keys (even numbers, shuffled), 8-byte values,
//! default options (leveled, BlockedBloom 10 bits/key), flushed, not fully
//! compacted; data blocks come from the OS page cache.

use std::time::Instant;

use amq_bench::lsm::KeyShape;
use amq_lsm::{Db, Options, SyncMode, WriteBatch};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let cache_mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = Options::default()
        .block_cache_bytes(cache_mib << 20)
        .sync(SyncMode::OnSync);
    let db = Db::open(dir.path(), opts).expect("open");
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut order: Vec<u64> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (rand() % (i as u64 + 1)) as usize);
    }
    for chunk in order.chunks(1000) {
        let mut b = WriteBatch::new();
        for &i in chunk {
            b.put(KeyShape::Short.key(2 * i), i.to_le_bytes());
        }
        db.write(b).expect("write");
    }
    db.flush().expect("flush");
    if cache_mib > 0 {
        // Every block read once, so a cache that holds them all serves
        // every lookup of every pass alike (no pass warms it for another).
        for i in 0..n {
            db.get(KeyShape::Short.key(2 * i)).expect("get");
        }
    }
    // 1,000 lookups per pass: even numbers (present) and odd ones (absent).
    let passes: Vec<Vec<Vec<u8>>> = (0..rounds)
        .map(|_| {
            (0..1000)
                .map(|j| KeyShape::Short.key(2 * (rand() % n) + (j & 1)))
                .collect()
        })
        .collect();
    println!(
        "n = {n}, {} tables; ns per key, median of {rounds} passes of 1,000 lookups",
        db.stats().levels.iter().map(|l| l.tables).sum::<usize>()
    );
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut single = Vec::new();
    let mut batched: Vec<Vec<f64>> = vec![Vec::new(); 4];
    for keys in &passes {
        let t = Instant::now();
        let mut found = 0;
        for k in keys {
            found += db.get(k).expect("get").is_some() as usize;
        }
        single.push(t.elapsed().as_nanos() as f64 / 1000.0);
        for (b, size) in [8usize, 32, 128, 1000].into_iter().enumerate() {
            let t = Instant::now();
            let mut f = 0;
            for chunk in keys.chunks(size) {
                f += db
                    .multi_get(chunk)
                    .expect("multi_get")
                    .iter()
                    .filter(|v| v.is_some())
                    .count();
            }
            batched[b].push(t.elapsed().as_nanos() as f64 / 1000.0);
            assert_eq!(f, found, "multi_get and get disagree");
        }
    }
    let s = median(single);
    println!("get: {s:.0}");
    for (b, size) in [8usize, 32, 128, 1000].into_iter().enumerate() {
        let m = median(batched[b].clone());
        println!("multi_get batch {size}: {m:.0} ({:.2}x get's throughput)", s / m);
    }
}
