//! The range-filter report: amq's `GrafiteRange` on a workload in the
//! format range-filter benchmarks exchange (`amq_bench::range`: files
//! `keys`, `left`, `right`, `point`, each a `u64` count and that many
//! little-endian `u64`s; query `i` is `left[i]..=right[i]`), as a markdown
//! table: per bits-per-key setting and range length, the false-positive
//! rate with its 95% Wilson interval, the proven bound, nanoseconds per
//! query, build time and measured bits per key.
//!
//! ```text
//! cargo run --release -p amq-bench --bin range_report -- --dir DIR [--bpk 12,16,20] [--runs 3] [--seed S] [--max-queries N]
//! cargo run --release -p amq-bench --bin range_report -- --generate DIR [--n 10000000] [--queries 1000000]
//!     [--range-lens 1,4,16,64,256,1024] [--dist uniform|correlated] [--workload-seed S] [--generate-only]
//! ```
//!
//! * `--dir DIR`: the workload to measure.
//! * `--bpk B1,B2,...`: the `RangeSizing::BitsPerKey` settings (default
//!   `12,16,20`).
//! * `--runs R`: timed passes over the queries; the median is reported
//!   (default 3).
//! * `--seed S`: the filter's hash seed (default `grafite::DEFAULT_SEED`).
//! * `--max-queries N`: only the first `N` ranges and point queries of each
//!   file (the files of some generators are sorted: the first `N` are then
//!   a sweep over the lowest keys, as a benchmark that reads `N` of them
//!   runs).
//! * `--generate DIR`: write a synthetic workload into `DIR` first, then
//!   measure it (with `--generate-only`, just write it): `--n` uniform random
//!   keys (default 10,000,000), `--queries` empty ranges (default 1,000,000)
//!   with lengths taken in turn from `--range-lens` (default
//!   `1,4,16,64,256,1024`), placed by `--dist`: `uniform` anywhere in `u64`,
//!   `correlated` 1 to 1,024 after a key (default `uniform`); and as many
//!   point queries that are not keys. `--workload-seed` (default 1) makes it
//!   reproducible.
//!
//! Queries whose range holds a key (possible in another generator's
//! workloads) cannot be false positives: they are checked against the
//! sorted keys, skipped, and counted in the table. Rows group queries by
//! length: exact lengths when there are at most 16 distinct ones, else
//! power-of-two classes.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use amq::range::{grafite, GrafiteRange, RangeFilter, RangeSizing};
use amq_bench::range::{time_ranges, wilson95, Dist, SortedKeys, Workload};

struct Args(HashMap<String, String>);

impl Args {
    fn parse() -> Result<Args, String> {
        let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
        let mut flags = HashMap::new();
        while let Some(f) = it.next() {
            let name = f.strip_prefix("--").ok_or(format!("unexpected {f}"))?.to_string();
            if name == "generate-only" {
                flags.insert(name, String::new());
                continue;
            }
            flags.insert(name, it.next().ok_or(format!("{f} needs a value"))?);
        }
        Ok(Args(flags))
    }

    fn get<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        self.0.get(name).map_or(Ok(default), |s| {
            s.parse().map_err(|_| format!("--{name}: bad value {s}"))
        })
    }

    fn list<T: std::str::FromStr>(&self, name: &str, default: &str) -> Result<Vec<T>, String> {
        self.0
            .get(name)
            .map_or(default, String::as_str)
            .split(',')
            .map(|s| s.parse().map_err(|_| format!("--{name}: bad value {s}")))
            .collect()
    }
}

/// The row a query of length `len` belongs to.
fn group_of(len: u64, exact: bool) -> (u64, u64) {
    if exact {
        (len, len)
    } else {
        let hi = len.checked_next_power_of_two().unwrap_or(u64::MAX);
        (hi / 2 + 1, hi)
    }
}

fn label((lo, hi): (u64, u64)) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// A line of the table: its name, its empty ranges, how many were skipped.
type Line<'a> = (String, &'a [(u64, u64)], u64);

/// A row's queries: the empty ones, and how many were skipped.
struct Row {
    ranges: Vec<(u64, u64)>,
    skipped: u64,
}

fn rows(w: &Workload, sorted: &SortedKeys) -> BTreeMap<(u64, u64), Row> {
    let len = |i: usize| w.right[i].wrapping_sub(w.left[i]).wrapping_add(1);
    let mut distinct: Vec<u64> = (0..w.left.len()).map(len).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let exact = distinct.len() <= 16;
    let mut rows: BTreeMap<(u64, u64), Row> = BTreeMap::new();
    for i in 0..w.left.len() {
        let (lo, hi) = (w.left[i], w.right[i]);
        let row = rows.entry(group_of(len(i), exact)).or_insert(Row {
            ranges: Vec::new(),
            skipped: 0,
        });
        if lo > hi || sorted.any_in(lo, hi) {
            row.skipped += 1;
        } else {
            row.ranges.push((lo, hi));
        }
    }
    rows
}

fn run() -> Result<(), String> {
    let args = Args::parse()?;
    let dir = if let Some(out) = args.0.get("generate") {
        let dist_name: String = args.get("dist", "uniform".to_string())?;
        let dist = Dist::parse(&dist_name).ok_or(format!("--dist {dist_name}: uniform or correlated"))?;
        let lens: Vec<u64> = args.list("range-lens", "1,4,16,64,256,1024")?;
        let (n, queries) = (
            args.get("n", 10_000_000usize)?,
            args.get("queries", 1_000_000usize)?,
        );
        let start = Instant::now();
        let w = Workload::generate(n, queries, &lens, dist, args.get("workload-seed", 1u64)?);
        w.write(out.as_ref()).map_err(|e| format!("{out}: {e}"))?;
        eprintln!(
            "wrote {n} keys, {queries} ranges and points to {out} in {:.1} s",
            start.elapsed().as_secs_f64()
        );
        if args.0.contains_key("generate-only") {
            return Ok(());
        }
        PathBuf::from(out)
    } else {
        PathBuf::from(args.0.get("dir").ok_or("give --dir DIR or --generate DIR")?)
    };
    let mut w = Workload::read(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(n) = args.0.get("max-queries") {
        w.truncate(n.parse().map_err(|_| format!("--max-queries: bad value {n}"))?);
    }
    let sorted = SortedKeys::new(&w.keys);
    let rows = rows(&w, &sorted);
    let points: Vec<(u64, u64)> = w
        .point
        .iter()
        .filter(|&&x| !sorted.any_in(x, x))
        .map(|&x| (x, x))
        .collect();
    let runs = args.get("runs", 3usize)?;
    let seed = args.get("seed", grafite::DEFAULT_SEED)?;

    println!(
        "GrafiteRange on `{}`: {} keys ({} distinct), {} ranges, {} point queries; median of {runs} timed passes.\n",
        dir.display(),
        w.keys.len(),
        sorted.as_slice().len(),
        w.left.len(),
        w.point.len(),
    );
    println!("| bits/key (asked) | bits/key (measured) | build ms | range length | empty ranges | skipped (not empty) | false positives | FPR | 95% Wilson | bound | within | ns/query (single / batched) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for bpk in args.list::<f64>("bpk", "12,16,20")? {
        let start = Instant::now();
        let f = GrafiteRange::build_seeded(&w.keys, RangeSizing::BitsPerKey(bpk), seed)
            .map_err(|e| e.to_string())?;
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut table: Vec<Line<'_>> = rows
            .iter()
            .map(|(g, r)| (label(*g), &r.ranges[..], r.skipped))
            .collect();
        if !points.is_empty() {
            table.push(("point".into(), &points[..], (w.point.len() - points.len()) as u64));
        }
        for (name, ranges, skipped) in table {
            let (fp, ns, batched_ns) = time_ranges(&f, ranges, runs);
            let asked = ranges.len() as u64;
            let (lo, hi) = wilson95(fp, asked);
            // The bound averaged over the row's queries (one value per length).
            let bound = ranges
                .iter()
                .map(|&(a, b)| f.expected_fpr(b - a + 1))
                .sum::<f64>()
                / asked.max(1) as f64;
            println!(
                "| {bpk} | {:.3} | {build_ms:.0} | {name} | {asked} | {skipped} | {fp} | {:.3e} | {:.2e}–{:.2e} | {bound:.3e} | {} | {ns:.1} / {batched_ns:.1} |",
                f.bits_per_key(),
                fp as f64 / asked.max(1) as f64,
                lo,
                hi,
                if lo <= bound { "yes" } else { "NO" },
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("range_report: {e}");
            ExitCode::FAILURE
        }
    }
}
