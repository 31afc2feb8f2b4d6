//! amq's policies against SlateDB's own Bloom filter, in SlateDB 0.18 over
//! an in-memory object store that counts (and, for wall time, slows) its
//! reads. Prints three tables:
//!
//! 1. **Space at equal FPR**: bytes per key and the FPR measured over
//!    absent keys, each filter built and asked through its SlateDB policy.
//! 2. **Absent gets over 8, 32 and 64 overlapping L0 tables**: object-store
//!    reads per absent `get` (filters cached, index and data blocks not), CPU
//!    time per absent `get` (everything cached), and key hashes per `get`.
//! 3. **Scans**: prefix scans of absent prefixes and scans of empty ranges
//!    inside a present prefix, over 64 tables of composite `t{tenant}:{row}`
//!    and decimal `ev:{t:020}` keys, and time windows over `events/{UUIDv7}`
//!    keys: the share of tables skipped, and wall time per scan when every
//!    read costs 10 ms.
//!
//! ```text
//! cargo run --release -p amq-slatedb --example slatedb_report -- [--keys 2000] [--gets 45000] [--scans 30]
//! ```

#[path = "../tests/slatedb/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use amq::range::RangeSizing;
use amq::{FilterKind, FilterSizing};
use amq_slatedb::{Extractor, PointFilterPolicy, PrefixFilterPolicy, RangeFilterPolicy};
use slatedb::bytes::Bytes;
use slatedb::object_store::ObjectStore;
use slatedb::object_store::memory::InMemory;
use slatedb::{BloomFilterPolicy, Db, FilterPolicy, FilterQuery, PrefixTarget, RowEntry, ValueDeletable};
use slatedb_common::metrics::{DefaultMetricsRecorder, MetricValue};
use support::{CountingStore, MapCache, flush, settings};

struct Args {
    keys: usize,
    gets: usize,
    scans: usize,
}

fn parse() -> Args {
    let mut a = Args {
        keys: 2_000,
        gets: 45_000,
        scans: 30,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v: usize = it
            .next()
            .and_then(|v| v.replace('_', "").parse().ok())
            .unwrap_or_else(|| {
                eprintln!("usage: slatedb_report [--keys N] [--gets N] [--scans N]");
                std::process::exit(2)
            });
        match flag.as_str() {
            "--keys" => a.keys = v,
            "--gets" => a.gets = v,
            "--scans" => a.scans = v,
            _ => {
                eprintln!("unknown flag {flag}");
                std::process::exit(2)
            }
        }
    }
    a
}

fn row(key: Vec<u8>) -> RowEntry {
    RowEntry {
        key: key.into(),
        value: ValueDeletable::Value(Bytes::from_static(b"v")),
        seq: 1,
        create_ts: None,
        expire_ts: None,
    }
}

fn user(i: u64) -> Vec<u8> {
    format!("user{i:012}").into_bytes()
}

/// Bytes per key and measured FPR of `policy`'s filter of `n` keys, over
/// `absent` absent keys.
fn space_and_fpr(policy: &dyn FilterPolicy, n: u64, absent: u64) -> (f64, f64) {
    let mut b = policy.builder();
    for i in 0..n {
        b.add_entry(&row(user(2 * i)));
    }
    let mut bytes = Vec::new();
    b.build().encode(&mut bytes);
    let f = policy.decode(&bytes);
    let fp = (0..absent)
        .filter(|&i| f.might_match(&FilterQuery::point(user(2 * i + 1).into())))
        .count();
    (bytes.len() as f64 / n as f64, fp as f64 / absent as f64)
}

/// A database of `tables` overlapping L0 tables of `keys` keys each (key
/// `i` in table `i % tables`), with `policies`.
async fn tables(
    store: &Arc<dyn ObjectStore>,
    policies: Vec<Arc<dyn FilterPolicy>>,
    cache: Arc<MapCache>,
    metrics: &Arc<DefaultMetricsRecorder>,
    tables: usize,
    key_of: impl Fn(u64) -> Vec<u8>,
    keys: usize,
) -> Db {
    let db = Db::builder("db", Arc::clone(store))
        .with_settings(settings(false))
        .with_filter_policies(policies)
        .with_db_cache(cache, 0)
        .with_metrics_recorder(metrics.clone())
        .build()
        .await
        .unwrap();
    for t in 0..tables as u64 {
        for j in 0..keys as u64 {
            db.put(key_of(j * tables as u64 + t), b"v").await.unwrap();
        }
        flush(&db).await;
    }
    db
}

fn counter(metrics: &DefaultMetricsRecorder, name: &str, kind: &str) -> u64 {
    match metrics
        .snapshot()
        .by_name_and_labels(name, &[("kind", kind)])
        .map(|m| &m.value)
    {
        Some(MetricValue::Counter(n)) => *n,
        _ => 0,
    }
}

/// Per-table answers of SlateDB's filter counters for target `kind`:
/// (negatives, tables evaluated).
fn answers(metrics: &DefaultMetricsRecorder, kind: &str) -> (u64, u64) {
    let neg = counter(metrics, "slatedb.db.sst_filter_negative_count", kind);
    let pos = counter(metrics, "slatedb.db.sst_filter_positive_count", kind);
    (neg, neg + pos)
}

/// SlateDB's extractor cutting after the first `:` (what a user of its
/// prefix Bloom filter writes).
struct Colon;

impl slatedb::PrefixExtractor for Colon {
    fn name(&self) -> &str {
        "colon"
    }
    fn prefix_len(&self, target: &PrefixTarget) -> Option<usize> {
        match target {
            PrefixTarget::Point(k) => k.iter().position(|&b| b == b':').map(|i| i + 1),
            // A prefix ending in its only `:` is complete.
            PrefixTarget::Prefix(p) => match p.iter().position(|&b| b == b':') {
                Some(i) if i + 1 == p.len() => Some(p.len()),
                Some(i) => Some(i + 1),
                None => None,
            },
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = parse();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l[l.find(':').map_or(0, |i| i + 2)..].to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    println!("# amq-slatedb against SlateDB's Bloom filter (SlateDB 0.18.0, {cpu}, one run)\n");

    // 1. Space at equal FPR.
    let n = 100_000u64;
    let bloom = BloomFilterPolicy::new(10);
    let (bloom_bytes, bloom_fpr) = space_and_fpr(&bloom, n, 1_000_000);
    let ribbon = PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(bloom_fpr)).unwrap();
    let (ribbon_bytes, ribbon_fpr) = space_and_fpr(&ribbon, n, 1_000_000);
    let blocked = PointFilterPolicy::new(FilterKind::BlockedBloom, FilterSizing::Fpr(bloom_fpr)).unwrap();
    let (blocked_bytes, blocked_fpr) = space_and_fpr(&blocked, n, 1_000_000);
    println!("## Space at equal FPR ({n} keys per table, 10^6 absent keys)\n");
    println!("| filter | bytes/key | FPR measured | bytes/key ÷ SlateDB Bloom's |");
    println!("|---|--:|--:|--:|");
    for (name, b, f) in [
        ("SlateDB BloomFilterPolicy::new(10)", bloom_bytes, bloom_fpr),
        ("amq Ribbon at that FPR", ribbon_bytes, ribbon_fpr),
        ("amq BlockedBloom at that FPR", blocked_bytes, blocked_fpr),
    ] {
        println!("| {name} | {b:.3} | {:.3}% | {:.3} |", f * 100.0, b / bloom_bytes);
    }

    // 2. Absent gets.
    println!(
        "\n## Absent gets over overlapping L0 tables ({} keys each)\n",
        args.keys
    );
    println!(
        "| tables | filter (equal memory: 10 bits/key) | store reads per absent get (filters cached) | µs per absent get, median (range) of 9 alternating rounds (all cached) | key hashes per get |"
    );
    println!("|--:|---|--:|--:|--:|");
    for count in [8usize, 32, 64] {
        let amq_ribbon =
            Arc::new(PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::BitsPerKey(10.0)).unwrap());
        let amq_blocked = Arc::new(
            PointFilterPolicy::new(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0)).unwrap(),
        );
        // Name, the policy, and amq's (for its hash count).
        type Candidate = (
            &'static str,
            Arc<dyn FilterPolicy>,
            Option<Arc<PointFilterPolicy>>,
        );
        let candidates: [Candidate; 3] = [
            ("SlateDB Bloom", Arc::new(BloomFilterPolicy::new(10)), None),
            ("amq Ribbon", amq_ribbon.clone(), Some(amq_ribbon)),
            ("amq BlockedBloom", amq_blocked.clone(), Some(amq_blocked)),
        ];
        let total = (count * args.keys) as u64;
        let key_of = |i: u64| user(2 * i);
        let mut reads = Vec::new();
        let mut dbs = Vec::new();
        for (_, policy, _) in &candidates {
            // Reads: filters cached, index and blocks from the store.
            let counting = CountingStore::new(Arc::new(InMemory::new()));
            let store: Arc<dyn ObjectStore> = counting.clone();
            let metrics = Arc::new(DefaultMetricsRecorder::new());
            let db = tables(
                &store,
                vec![policy.clone()],
                Arc::new(MapCache::filters_only()),
                &metrics,
                count,
                key_of,
                args.keys,
            )
            .await;
            // Warm the filter cache: one get reads every table's filter.
            let _ = db.get(user(1)).await.unwrap();
            let before = counting.gets();
            let probes = 2_000u64;
            for i in 0..probes {
                assert!(db.get(user(2 * (i * 7919 % total) + 1)).await.unwrap().is_none());
            }
            reads.push((counting.gets() - before) as f64 / probes as f64);
            db.close().await.unwrap();
            // CPU: everything cached.
            let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
            let db = tables(
                &store,
                vec![policy.clone()],
                Arc::new(MapCache::default()),
                &metrics,
                count,
                key_of,
                args.keys,
            )
            .await;
            for i in 0..1_000u64 {
                let _ = db.get(user(2 * (i * 7919 % total) + 1)).await.unwrap();
            }
            dbs.push(db);
        }
        // The candidates' rounds alternate, so drift on a shared machine
        // falls on all of them alike.
        let hashes_before: Vec<u64> = candidates
            .iter()
            .map(|c| c.2.as_ref().map_or(0, |p| p.stats().key_hashes))
            .collect();
        let rounds = 9u64;
        let per_round = (args.gets as u64 / rounds).max(1);
        let mut times = vec![Vec::new(); dbs.len()];
        for round in 0..rounds {
            for (c, db) in dbs.iter().enumerate() {
                let start = Instant::now();
                for i in 0..per_round {
                    let k = user(2 * ((i * 7919 + round * 104_729) % total) + 1);
                    assert!(db.get(k).await.unwrap().is_none());
                }
                times[c].push(start.elapsed().as_secs_f64() * 1e6 / per_round as f64);
            }
        }
        for (c, (name, _, amq)) in candidates.iter().enumerate() {
            times[c].sort_by(f64::total_cmp);
            let hashes = amq
                .as_ref()
                .map(|p| (p.stats().key_hashes - hashes_before[c]) as f64 / (rounds * per_round) as f64);
            println!(
                "| {count} | {name} | {:.3} | {:.2} ({:.2}–{:.2}) | {} |",
                reads[c],
                times[c][times[c].len() / 2],
                times[c][0],
                times[c][times[c].len() - 1],
                hashes.map_or_else(|| format!("{count} (SipHash, each table)"), |h| format!("{h:.2}"))
            );
        }
        for db in dbs {
            db.close().await.unwrap();
        }
    }

    // 2b. The filters' share of an absent get: each table's filter asked
    // as SlateDB asks it (a fresh copy of the key per table).
    println!(
        "\n### The filters alone: ns per absent get, asking every table's filter ({} keys each)\n",
        args.keys
    );
    println!("| tables | SlateDB Bloom | amq BlockedBloom | amq Ribbon | amq BlockedBloom ÷ SlateDB Bloom |");
    println!("|--:|--:|--:|--:|--:|");
    for count in [8u64, 32, 64] {
        let policies: [Arc<dyn FilterPolicy>; 3] = [
            Arc::new(BloomFilterPolicy::new(10)),
            Arc::new(
                PointFilterPolicy::new(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0)).unwrap(),
            ),
            Arc::new(PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::BitsPerKey(10.0)).unwrap()),
        ];
        let filters: Vec<Vec<Arc<dyn slatedb::Filter>>> = policies
            .iter()
            .map(|p| {
                (0..count)
                    .map(|t| {
                        let mut b = p.builder();
                        for j in 0..args.keys as u64 {
                            b.add_entry(&row(user(2 * (j * count + t))));
                        }
                        let mut bytes = Vec::new();
                        b.build().encode(&mut bytes);
                        p.decode(&bytes)
                    })
                    .collect()
            })
            .collect();
        let gets = 200_000u64 / count;
        let total = count * args.keys as u64;
        let mut times = vec![Vec::new(); 3];
        for round in 0..9u64 {
            for (c, tables) in filters.iter().enumerate() {
                let start = Instant::now();
                let mut maybe = 0usize;
                for i in 0..gets {
                    let key = user(2 * ((i * 7919 + round * 104_729) % total) + 1);
                    for f in tables {
                        maybe +=
                            usize::from(f.might_match(&FilterQuery::point(Bytes::copy_from_slice(&key))));
                    }
                }
                std::hint::black_box(maybe);
                times[c].push(start.elapsed().as_secs_f64() * 1e9 / gets as f64);
            }
        }
        let med: Vec<f64> = times
            .iter_mut()
            .map(|t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            })
            .collect();
        println!(
            "| {count} | {:.0} | {:.0} | {:.0} | {:.2} |",
            med[0],
            med[1],
            med[2],
            med[1] / med[0]
        );
    }

    // 3. Scans.
    println!(
        "\n## Scans over 64 overlapping L0 tables ({} keys each), {} scans each\n",
        args.keys, args.scans
    );
    println!(
        "| keys | scan | filters | tables skipped | store reads per scan | ms per scan at 10 ms per read |"
    );
    println!("|---|---|---|--:|--:|--:|");
    let tenants = 100u64;
    let composite = move |i: u64| format!("t{:04}:{:08}", i % tenants, i / tenants * 10).into_bytes();
    let decimal = |i: u64| format!("ev:{:020}", 1_700_000_000_000_000_000u64 + i * 1_000).into_bytes();
    let total = 64 * args.keys as u64;
    let (uuid_key, uuid_window) = uuid_v7(total as usize, 5);
    let shapes: [(&str, KeyFn, &str, ScanFn); 4] = [
        (
            "t{tenant}:{row}",
            Box::new(composite),
            "empty range inside a tenant",
            Box::new(move |s: u64| {
                let t = s * 37 % tenants;
                let r = (s * 7919 % (total / tenants)) * 10;
                (
                    format!("t{t:04}:{:08}", r + 1).into_bytes(),
                    format!("t{t:04}:{:08}", r + 9).into_bytes(),
                )
            }),
        ),
        (
            "t{tenant}:{row}",
            Box::new(composite),
            "absent tenant (prefix scan)",
            Box::new(move |s: u64| (format!("t{:04}x:", s % tenants).into_bytes(), Vec::new())),
        ),
        (
            "ev:{t:020}",
            Box::new(decimal),
            "empty time window",
            Box::new(move |s: u64| {
                let t = 1_700_000_000_000_000_000u64 + (s * 7919 % total) * 1_000;
                (
                    format!("ev:{:020}", t + 1).into_bytes(),
                    format!("ev:{:020}", t + 999).into_bytes(),
                )
            }),
        ),
        ("events/{UUIDv7}", uuid_key, "empty 5 ms window", uuid_window),
    ];
    for (shape, key_of, scan_name, scan_of) in &shapes {
        // The range policy fits new tables to the ranges it was asked: a
        // store of two tables is asked 256 scans like the measured ones
        // before the measured tables are written.
        let range = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0)).unwrap();
        {
            let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
            let metrics = Arc::new(DefaultMetricsRecorder::new());
            let policies: Vec<Arc<dyn FilterPolicy>> = vec![Arc::new(range.clone())];
            let cache = Arc::new(MapCache::filters_only());
            let db = tables(&store, policies, cache, &metrics, 2, key_of, args.keys).await;
            for s in 0..256 {
                let (lo, hi) = scan_of(1_000_000 + s);
                scan(&db, &lo, &hi).await;
            }
            db.close().await.unwrap();
        }
        let candidates: [(&str, Vec<Arc<dyn FilterPolicy>>); 3] = [
            ("none", vec![]),
            (
                "SlateDB prefix Bloom (`:`)",
                vec![Arc::new(
                    BloomFilterPolicy::new(10).with_prefix_extractor(Arc::new(Colon)),
                )],
            ),
            (
                "amq range (16 bits/key) + amq prefix",
                vec![
                    Arc::new(range.clone()),
                    Arc::new(
                        PrefixFilterPolicy::new(
                            Extractor::slatedb(Arc::new(Colon)),
                            FilterKind::BlockedBloom,
                            FilterSizing::BitsPerKey(10.0),
                        )
                        .unwrap(),
                    ),
                ],
            ),
        ];
        for (name, policies) in candidates {
            let counting = CountingStore::new(Arc::new(InMemory::new()));
            let store: Arc<dyn ObjectStore> = counting.clone();
            let metrics = Arc::new(DefaultMetricsRecorder::new());
            let db = tables(
                &store,
                policies,
                Arc::new(MapCache::filters_only()),
                &metrics,
                64,
                key_of,
                args.keys,
            )
            .await;
            // Warm the filters.
            let (lo, hi) = scan_of(0);
            scan(&db, &lo, &hi).await;
            let (neg0, evaluated0) = skipped(&metrics);
            counting.set_latency(Duration::from_millis(10));
            let before = counting.gets();
            let start = Instant::now();
            for s in 0..args.scans as u64 {
                let (lo, hi) = scan_of(s + 1);
                assert_eq!(scan(&db, &lo, &hi).await, 0, "{scan_name}: not empty");
            }
            let ms = start.elapsed().as_secs_f64() * 1e3 / args.scans as f64;
            let reads = (counting.gets() - before) as f64 / args.scans as f64;
            counting.set_latency(Duration::ZERO);
            let (neg, evaluated) = skipped(&metrics);
            let share = match evaluated - evaluated0 {
                0 => 0.0,
                e => (neg - neg0) as f64 / e as f64,
            };
            db.close().await.unwrap();
            println!(
                "| {shape} | {scan_name} | {name} | {:.1}% | {reads:.1} | {ms:.1} |",
                share * 100.0
            );
        }
    }
}

/// A shape's key `i`.
type KeyFn = Box<dyn Fn(u64) -> Vec<u8>>;
/// A shape's scan `s`: its bounds (`lo..hi`, or the prefix `lo` when `hi`
/// is empty).
type ScanFn = Box<dyn Fn(u64) -> (Vec<u8>, Vec<u8>)>;

/// `events/` and a UUIDv7-like id (48-bit milliseconds, then 80 random
/// bits), `n` events in bursts of 1 to 40 within two milliseconds and quiet
/// gaps of 3 to 122 ms: key `i` in time order, and scans of `window` whole
/// milliseconds strictly inside a gap.
fn uuid_v7(n: usize, window: u64) -> (KeyFn, ScanFn) {
    let mix = amq::hash::remix;
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(n);
    let (mut ms, mut i) = (1_700_000_000_000u64, 0u64);
    while events.len() < n {
        for _ in 0..1 + mix(i, 1) % 40 {
            events.push((ms + mix(i, 2) % 2, mix(i, 3)));
            i += 1;
        }
        ms += 3 + mix(i, 4) % 120;
    }
    events.truncate(n);
    events.sort_unstable();
    let events = Arc::new(events);
    let at = |ms: u64| [&b"events/"[..], &ms.to_be_bytes()[2..]].concat();
    let keys = Arc::clone(&events);
    let key = move |i: u64| {
        let (ms, r) = keys[i as usize];
        [&at(ms)[..], &r.to_be_bytes(), &mix(r, 9).to_be_bytes()[..2]].concat()
    };
    let scan = move |s: u64| {
        // The first gap wide enough at or after a random event.
        let mut e = (mix(s, 5) % (events.len() as u64 - 1)) as usize;
        while events[e + 1].0 <= events[e].0 + window + 1 {
            e = (e + 1) % (events.len() - 1);
        }
        let (t0, t1) = (events[e].0, events[e + 1].0);
        let from = t0 + 1 + (t1 - t0 - window - 1) / 2;
        (at(from), at(from + window))
    };
    (Box::new(key), Box::new(scan))
}

/// Tables skipped and asked by scan filters, over both target kinds.
fn skipped(metrics: &DefaultMetricsRecorder) -> (u64, u64) {
    let (a, b) = answers(metrics, "range");
    let (c, d) = answers(metrics, "prefix");
    (a + c, b + d)
}

/// Rows of a scan of `lo..hi`, or of the prefix `lo` when `hi` is empty.
async fn scan(db: &Db, lo: &[u8], hi: &[u8]) -> usize {
    let it = if hi.is_empty() {
        db.scan_prefix(lo, ..).await.unwrap()
    } else {
        db.scan(lo..hi).await.unwrap()
    };
    support::collect(it).await.len()
}
