//! Range filters on the keys engines store: composite keys in the store,
//! decimal timestamps per table, and dense integer keys in amq's filter.
//!
//! ```text
//! cargo run --release -p amq-bench --bin range_keys_report --
//!     [--only composite|byte-keys|decimal|dense] [--tables 64,256] [--n 1000000,10000000] [--runs 5]
//! ```
//!
//! - **composite**: a store of N overlapping tables of 20,000 keys
//!   `t{tenant:06}:{row:08}` (64 tenants, each table holding every N-th row
//!   of every tenant, so every table spans the key space; rows with
//!   `row mod 100` in `40..80` absent everywhere), range filters at 16 bits
//!   per key. Empty scans of 32 rows inside a present tenant's gap against
//!   an absent `get` on the same tree: the share of tables ruled out and
//!   the time ratio.
//! - **byte-keys**: stores of overlapping tables of 20,000 keys: 16 or 64
//!   tables of `{21-byte head}{a}{b}`, `a` one of 300 random 8-byte ids (a
//!   customer id) and `b` a random 8-byte id (an order id), both big-endian,
//!   every table holding keys of every `a`, with empty scans of 16 and 1,024
//!   consecutive `b` inside a gap; 16 tables of `events/{UUIDv7-like id}`
//!   (events in bursts, quiet gaps of 1–120 ms) with empty windows of 1, 5
//!   and 20 ms inside gaps; 16 tables of `{tenant:04}/{email of 8–40 bytes}`
//!   with empty ranges between neighbouring keys (open, from one to the
//!   other, and inside the gap as Diva's benchmark draws them). Against an
//!   absent `get` inside each range: the share of tables ruled out, the
//!   time ratio.
//! - **decimal**: a store of 8 tables, keys `ev:{t:020}` (nanosecond
//!   timestamps about one second apart, dealt round-robin to the tables),
//!   range filters at 16 bits per key. Empty scans of `ℓ` nanoseconds just
//!   after a key, for ℓ = 1, 16, 256: the measured FPR per table probe
//!   against the filter's bound.
//! - **dense**: amq's `GrafiteRange` over consecutive keys, keys at stride
//!   4, runs of 1,000 with gaps, and uniform random keys, at 12, 16 and 20
//!   bits per key: the median time of a query (single, and batched with
//!   `may_contain_ranges`), ranges of 1 and 3 keys just after a key.

use std::ops::Bound;
use std::process::ExitCode;
use std::time::Instant;

use amq::hash::remix;
use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
use amq_bench::lsm::{median, Error};
use amq_bench::report::{cpu_model, verdict};
use amq_lsm::{Db, Options, RangeFilterPolicy, SyncMode, TieredOptions, WriteBatch};

struct Args {
    only: Option<String>,
    tables: Vec<usize>,
    n: Vec<u64>,
    runs: usize,
}

fn list<T: std::str::FromStr>(flag: &str, v: &str) -> Result<Vec<T>, String> {
    v.split(',')
        .map(|s| s.parse().map_err(|_| format!("{flag}: {s}")))
        .collect()
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        only: None,
        tables: vec![64, 256],
        n: vec![1_000_000, 10_000_000],
        runs: 5,
    };
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--only" => a.only = Some(value()?),
            "--tables" => a.tables = list("--tables", &value()?)?,
            "--n" => a.n = list("--n", &value()?)?,
            "--runs" => a.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(a)
}

/// A store that never compacts, with range filters at 16 bits per key,
/// fitted to the latest scans or (`fit` false) not.
fn open(dir: &std::path::Path, fit: bool) -> Result<Db, Error> {
    let opts = Options::default()
        .range_fit_scans(if fit { 256 } else { 0 })
        .compaction(TieredOptions::default().runs_per_level(100_000))
        .sync(SyncMode::OnSync)
        .memtable_bytes(1 << 30)
        .table_bytes(1 << 30)
        .range_filter_policy(RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(16.0)));
    Ok(Db::open(dir, opts)?)
}

fn ns_per(start: Instant, count: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / count.max(1) as f64
}

fn composite(tables: usize, runs: usize) -> Result<(), Error> {
    const TENANTS: u64 = 64;
    const PER_TABLE: u64 = 20_000;
    let key = |t: u64, r: u64| format!("t{t:06}:{r:08}").into_bytes();
    let n = tables as u64;
    let rows = PER_TABLE / TENANTS * n;
    let queries = |seed: u64| -> Vec<EmptyScan> {
        (0..2_000u64)
            .map(|i| {
                let t = i % TENANTS;
                let base = remix(i, seed) % (rows / 100) * 100;
                (
                    Bound::Included(key(t, base + 42)),
                    Bound::Included(key(t, base + 73)),
                    key(t, base + 50),
                )
            })
            .collect()
    };
    let (_dir, db) = store_of(
        tables,
        |tb| {
            let mut keys = Vec::new();
            for t in 0..TENANTS {
                let (mut r, mut written) = (tb as u64, 0);
                while written < PER_TABLE / TENANTS {
                    if !(40..80).contains(&(r % 100)) {
                        keys.push(key(t, r));
                        written += 1;
                    }
                    r += n;
                }
            }
            keys
        },
        &queries(8),
        true,
    )?;
    let (ruled_out, scan, get) = empty_scans(&db, &queries(7), runs)?;
    println!(
        "| {tables} | {:.2}% | {:.1} µs | {:.1} µs | {:.2}× ({}) |",
        ruled_out * 100.0,
        scan / 1e3,
        get / 1e3,
        scan / get,
        verdict(ruled_out >= 0.95 && scan <= 4.0 * get)
    );
    Ok(())
}

/// An empty scan: its bounds, and a key inside them for the absent `get`.
type EmptyScan = (Bound<Vec<u8>>, Bound<Vec<u8>>, Vec<u8>);

/// A store of `tables` tables of the keys `table_keys(t)` gives (in any
/// order), flushed one by one after the store has seen the scans `warmup`
/// (which the tables' range filters are fitted to, unless `fit` is false).
fn store_of(
    tables: usize,
    table_keys: impl Fn(usize) -> Vec<Vec<u8>>,
    warmup: &[EmptyScan],
    fit: bool,
) -> Result<(tempfile::TempDir, Db), Error> {
    let dir = tempfile::tempdir()?;
    let db = open(dir.path(), fit)?;
    for (lo, hi, _) in warmup {
        assert_eq!(db.scan((lo.clone(), hi.clone())).count(), 0);
    }
    for t in 0..tables {
        let mut batch = WriteBatch::new();
        for k in table_keys(t) {
            batch.put(k, b"v");
        }
        db.write(batch)?;
        db.flush()?;
    }
    Ok((dir, db))
}

/// Runs the (empty) scans and their absent `get`s `runs` times: the share of
/// (table, scan) pairs ruled out and the median ns per scan and per `get`.
fn empty_scans(db: &Db, queries: &[EmptyScan], runs: usize) -> Result<(f64, f64, f64), Error> {
    let (mut scan, mut get) = (Vec::new(), Vec::new());
    let before = db.stats();
    for _ in 0..runs {
        let start = Instant::now();
        for (lo, hi, _) in queries {
            assert_eq!(db.scan((lo.clone(), hi.clone())).count(), 0);
        }
        scan.push(ns_per(start, queries.len()));
        let start = Instant::now();
        for (_, _, absent) in queries {
            assert!(db.get(absent)?.is_none());
        }
        get.push(ns_per(start, queries.len()));
    }
    let s = db.stats();
    let met = s.scan_tables - before.scan_tables;
    let ruled_out = (s.range_negatives - before.range_negatives) as f64 / met.max(1) as f64;
    Ok((ruled_out, median(&mut scan), median(&mut get)))
}

/// One row of the byte-key tables: shape, tables, `ℓ`, fitted to scans or
/// not, the figures.
fn print_row(shape: &str, tables: usize, len: &str, fit: bool, (ruled_out, scan, get): (f64, f64, f64)) {
    println!(
        "| {shape} | {tables} | {len} | {} | {:.2}% | {:.1} µs | {:.1} µs | {:.2}× ({}) |",
        if fit { "yes" } else { "no" },
        ruled_out * 100.0,
        scan / 1e3,
        get / 1e3,
        scan / get,
        verdict(ruled_out >= 0.95 && scan <= 4.0 * get)
    );
}

fn random_ids(tables: usize, runs: usize) -> Result<(), Error> {
    const PER_TABLE: u64 = 20_000;
    const IDS: u64 = 300;
    const HEAD: &[u8; 21] = b"orders/eu-west-1/act:";
    let key = |a: u64, b: u64| [&HEAD[..], &a.to_be_bytes(), &b.to_be_bytes()].concat();
    let ids: Vec<u64> = (0..IDS).map(|i| remix(i, 0x1d5)).collect();
    let pair = |j: u64| (ids[(j % IDS) as usize], remix(j, 0xb0b));
    let mut all: Vec<(u64, u64)> = (0..tables as u64 * PER_TABLE).map(pair).collect();
    all.sort_unstable();
    // Inside the gap after a stored key, a third of the way to the next
    // key of the same `a` (gaps are about 2^64 / 67N wide).
    let queries = |len: u64, seed: u64| -> Vec<EmptyScan> {
        (0..2_000u64)
            .filter_map(|i| {
                let at = (remix(i, seed) % (all.len() as u64 - 1)) as usize;
                let ((a, b), (a2, b2)) = (all[at], all[at + 1]);
                let lo = b.checked_add(1 + (if a2 == a { b2 - b } else { u64::MAX - b }) / 3)?;
                let hi = lo.checked_add(len - 1)?;
                (a2 != a || hi < b2).then(|| {
                    (
                        Bound::Included(key(a, lo)),
                        Bound::Included(key(a, hi)),
                        key(a, lo),
                    )
                })
            })
            .collect()
    };
    let warmup: Vec<EmptyScan> = [16, 1024]
        .iter()
        .flat_map(|&len| queries(len, len + 99))
        .collect();
    for fit in [false, true] {
        let (_dir, db) = store_of(
            tables,
            |t| {
                let t = t as u64;
                (t * PER_TABLE..(t + 1) * PER_TABLE)
                    .map(|j| {
                        let (a, b) = pair(j);
                        key(a, b)
                    })
                    .collect()
            },
            &warmup,
            fit,
        )?;
        for len in [16u64, 1024] {
            let scans = empty_scans(&db, &queries(len, len), runs)?;
            print_row("random ids", tables, &len.to_string(), fit, scans);
        }
    }
    Ok(())
}

/// `events/` and a UUIDv7-like id: 48-bit milliseconds, then 80 random
/// bits; events in bursts of 1 to 40 within a millisecond or two, quiet
/// gaps of 1 to 120 ms, dealt round-robin to `tables` tables.
fn uuid_v7(tables: usize, runs: usize) -> Result<(), Error> {
    const PER_TABLE: usize = 20_000;
    let key = |ms: u64, r: u64| {
        let mut k = b"events/".to_vec();
        k.extend_from_slice(&ms.to_be_bytes()[2..]);
        k.extend_from_slice(&(r as u16).to_be_bytes());
        k.extend_from_slice(&remix(r, 9).to_be_bytes());
        k
    };
    let mut events: Vec<(u64, u64)> = Vec::with_capacity(tables * PER_TABLE);
    let mut ms = 1_700_000_000_000u64;
    let mut i = 0u64;
    while events.len() < tables * PER_TABLE {
        for _ in 0..1 + remix(i, 1) % 40 {
            events.push((ms + remix(i, 2) % 2, remix(i, 3)));
            i += 1;
        }
        ms += 3 + remix(i, 4) % 120;
    }
    events.sort_unstable();
    // Windows of whole milliseconds strictly inside a quiet gap.
    let queries = |window: u64, seed: u64| -> Vec<EmptyScan> {
        (0..2_000u64)
            .filter_map(|q| {
                let at = (remix(q, seed) % (events.len() as u64 - 1)) as usize;
                let (t0, t1) = (events[at].0, events[at + 1].0);
                (t1 > t0 + window + 1).then(|| {
                    let from = t0 + 1 + (t1 - t0 - window - 1) / 2;
                    let lo = [&b"events/"[..], &from.to_be_bytes()[2..]].concat();
                    let hi = [&b"events/"[..], &(from + window).to_be_bytes()[2..]].concat();
                    (
                        Bound::Included(lo.clone()),
                        Bound::Excluded(hi),
                        [&lo[..], &[0x55; 10]].concat(),
                    )
                })
            })
            .collect()
    };
    let warmup: Vec<EmptyScan> = [1, 5, 20].iter().flat_map(|&w| queries(w, w + 99)).collect();
    for fit in [false, true] {
        let (_dir, db) = store_of(
            tables,
            |t| {
                events
                    .iter()
                    .skip(t)
                    .step_by(tables)
                    .map(|&(ms, r)| key(ms, r))
                    .collect()
            },
            &warmup,
            fit,
        )?;
        for window in [1u64, 5, 20] {
            let scans = empty_scans(&db, &queries(window, window), runs)?;
            print_row("UUIDv7", tables, &format!("{window} ms"), fit, scans);
        }
    }
    Ok(())
}

/// `{tenant:04}/{email}`: 50 tenants, addresses of 8 to 40 bytes; empty
/// ranges between two neighbouring keys of the tree: the open range from
/// one to the other (which only a filter holding both keys whole could
/// rule out in their own tables), and ranges inside the gap as Diva's
/// benchmark draws them (each bound the two keys' shared prefix, a byte
/// between theirs where they part, then eight random letters).
fn emails(tables: usize, runs: usize) -> Result<(), Error> {
    const PER_TABLE: u64 = 20_000;
    const DOMAINS: [&str; 4] = ["example.com", "mail.example.org", "corp.example", "x.io"];
    let key = |j: u64| {
        let name_len = 2 + (remix(j, 5) % 20) as usize;
        let name: String = (0..name_len)
            .map(|c| (b'a' + (remix(j, 6 + c as u64) % 26) as u8) as char)
            .collect();
        let domain = DOMAINS[(remix(j, 7) % 4) as usize];
        let email = format!("{name}@{domain}");
        format!("{:04}/{}", remix(j, 8) % 50, &email[..email.len().min(40)]).into_bytes()
    };
    let mut all: Vec<Vec<u8>> = (0..tables as u64 * PER_TABLE).map(key).collect();
    all.sort_unstable();
    all.dedup();
    let open = |seed: u64| -> Vec<EmptyScan> {
        (0..2_000u64)
            .map(|q| {
                let at = (remix(q, seed) % (all.len() as u64 - 1)) as usize;
                let (a, b) = (all[at].clone(), all[at + 1].clone());
                let inside = [&a[..], &[0]].concat();
                (Bound::Excluded(a), Bound::Excluded(b), inside)
            })
            .collect()
    };
    let inside = |seed: u64| -> Vec<EmptyScan> {
        (0..4_000u64)
            .filter_map(|q| {
                let at = (remix(q, seed) % (all.len() as u64 - 1)) as usize;
                let (a, b) = (&all[at], &all[at + 1]);
                let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                let (from, to) = (u64::from(a.get(p).copied().unwrap_or(0)), u64::from(b[p]));
                let draw = |s: u64| {
                    let mut k = a[..p].to_vec();
                    k.push((from + remix(q, s) % (to - from + 1)) as u8);
                    k.extend((0..8).map(|j| b'a' + (remix(q, s + 1 + j) % 26) as u8));
                    k
                };
                let (lo, hi) = (draw(seed * 100), draw(seed * 100 + 50));
                let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
                (lo > *a && hi < *b).then(|| (Bound::Included(lo.clone()), Bound::Included(hi), lo))
            })
            .take(2_000)
            .collect()
    };
    for fit in [false, true] {
        let warmup: Vec<EmptyScan> = open(12).into_iter().chain(inside(12)).collect();
        let (_dir, db) = store_of(
            tables,
            |t| {
                let t = t as u64;
                (t * PER_TABLE..(t + 1) * PER_TABLE).map(key).collect()
            },
            &warmup,
            fit,
        )?;
        let scans = empty_scans(&db, &open(11), runs)?;
        print_row("emails", tables, "open, neighbour to neighbour", fit, scans);
        let scans = empty_scans(&db, &inside(11), runs)?;
        print_row("emails", tables, "inside the gap", fit, scans);
    }
    Ok(())
}

fn decimal() -> Result<(), Error> {
    const TABLES: u64 = 8;
    const PER_TABLE: u64 = 50_000;
    let key = |t: u64| format!("ev:{t:020}");
    // Nanosecond timestamps from 2023 on, gaps uniform in 0.5..1.5 s.
    let mut t = 1_700_000_000_000_000_000u64;
    let mut stamps = Vec::with_capacity((TABLES * PER_TABLE) as usize);
    for i in 0..TABLES * PER_TABLE {
        t += 500_000_000 + remix(i, 3) % 1_000_000_000;
        stamps.push(t);
    }
    // The store has seen scans like the ones measured.
    let warmup: Vec<EmptyScan> = (0..768u64)
        .map(|i| {
            let (k, len) = (
                stamps[(remix(i, 5) % stamps.len() as u64) as usize],
                [1, 16, 256][i as usize % 3],
            );
            let (lo, hi) = (key(k + 1).into_bytes(), key(k + len).into_bytes());
            (Bound::Included(lo.clone()), Bound::Included(hi), lo)
        })
        .collect();
    let (_dir, db) = store_of(
        TABLES as usize,
        |tb| {
            stamps
                .iter()
                .skip(tb)
                .step_by(TABLES as usize)
                .map(|&s| key(s).into_bytes())
                .collect()
        },
        &warmup,
        true,
    )?;
    let bound = |len: u64| -> Result<f64, Error> {
        let sample: Vec<u64> = (0..PER_TABLE).map(|i| i << 30).collect();
        Ok(GrafiteRange::build(&sample, RangeSizing::BitsPerKey(16.0))?.expected_fpr(len))
    };
    for len in [1u64, 16, 256] {
        let before = db.stats();
        for i in 0..50_000u64 {
            let k = stamps[(remix(i, len) % stamps.len() as u64) as usize];
            let (lo, hi) = (key(k + 1), key(k + len));
            assert_eq!(db.scan(lo.as_bytes()..=hi.as_bytes()).count(), 0);
        }
        let s = db.stats();
        let probes = s.range_probes - before.range_probes;
        let fp = s.range_false_positives - before.range_false_positives;
        let fpr = fp as f64 / probes.max(1) as f64;
        let b = bound(len)?;
        println!(
            "| {len} | {probes} | {fp} | {:.4}% | {:.4}% | {:.2} ({}) |",
            fpr * 100.0,
            b * 100.0,
            fpr / b,
            verdict(fpr <= 1.5 * b)
        );
    }
    Ok(())
}

fn dense(n: u64, runs: usize) -> Result<(), Error> {
    let shapes: [(&str, Vec<u64>); 4] = [
        ("uniform", {
            let mut v: Vec<u64> = (0..n).map(|i| remix(i, 1) >> 4).collect();
            v.sort_unstable();
            v
        }),
        ("consecutive", (1 << 40..(1 << 40) + n).collect()),
        ("stride 4", (0..n).map(|i| (1 << 40) + 4 * i).collect()),
        (
            "runs of 1,000",
            (0..n).map(|i| (i / 1000) * 1_000_000 + i % 1000).collect(),
        ),
    ];
    for bits in [12.0, 16.0, 20.0] {
        let mut uniform = f64::NAN;
        for (name, keys) in &shapes {
            let f = GrafiteRange::build(keys, RangeSizing::BitsPerKey(bits))?;
            let ranges: Vec<(u64, u64)> = (0..1_000_000u64)
                .map(|i| {
                    let k = keys[(remix(i, 77) % n) as usize] + 1;
                    (k, k + 2 * (i % 2))
                })
                .collect();
            let mut out = vec![false; ranges.len()];
            let (mut single, mut batched) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let start = Instant::now();
                for (o, &(lo, hi)) in out.iter_mut().zip(&ranges) {
                    *o = f.may_contain_range(lo, hi);
                }
                single.push(ns_per(start, ranges.len()));
                let start = Instant::now();
                f.may_contain_ranges(&ranges, &mut out);
                batched.push(ns_per(start, ranges.len()));
            }
            let (single, batched) = (median(&mut single), median(&mut batched));
            if *name == "uniform" {
                uniform = single;
            }
            println!(
                "| {n} | {bits} | {name} | {:.2} | {single:.0} | {batched:.0} | {:.2}× ({}) |",
                f.bits_per_key(),
                single / uniform,
                verdict(single <= 2.0 * uniform)
            );
        }
    }
    Ok(())
}

fn run(a: &Args) -> Result<(), Error> {
    amq_bench::ordinary_pages();
    let want = |s: &str| a.only.as_deref().is_none_or(|o| o == s);
    println!("CPU: {}; medians of {} runs.\n", cpu_model(), a.runs);
    if want("composite") {
        println!("### Composite keys: empty 32-row scans inside a tenant's gap\n");
        println!("| tables | tables ruled out | empty scan | absent `get` | ratio (≥ 95%, ≤ 4×) |");
        println!("|--:|--:|--:|--:|--:|");
        for &t in &a.tables {
            composite(t, a.runs)?;
        }
        println!();
    }
    if want("byte-keys") {
        println!("### Byte keys: empty scans inside gaps (random ids: ℓ consecutive second ids)\n");
        println!(
            "| keys | tables | ℓ | fitted to scans | tables ruled out | empty scan | absent `get` | ratio (≥ 95%, ≤ 4×) |"
        );
        println!("|---|--:|--:|---|--:|--:|--:|--:|");
        for t in [16, 64] {
            random_ids(t, a.runs)?;
        }
        uuid_v7(16, a.runs)?;
        emails(16, a.runs)?;
        println!();
    }
    if want("decimal") {
        println!("### Decimal timestamps: per-table FPR of empty scans of ℓ nanoseconds\n");
        println!("| ℓ | table probes | false positives | FPR | bound | ratio (≤ 1.5) |");
        println!("|--:|--:|--:|--:|--:|--:|");
        decimal()?;
        println!();
    }
    if want("dense") {
        println!("### Dense keys: ns per query (ranges of 1 and 3 keys just after a key)\n");
        println!("| keys | bits/key | keys | built bits/key | single | batched | single vs uniform (≤ 2×) |");
        println!("|--:|--:|---|--:|--:|--:|--:|");
        for &n in &a.n {
            dense(n, a.runs)?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
