//! The range-scan report: short scans on trees of overlapping tables, with
//! range filters and without (`amq_bench::range_scan` has the trees).
//!
//! ```text
//! cargo run --release -p amq-bench --bin range_scan_report --
//!     [--tables 64,256] [--queries 2000] [--runs 5] [--bits 16]
//! ```
//!
//! Each store is built, timed `runs` times over every query kind, and
//! dropped before the next is built; printed are medians over runs, and the
//! issue's targets checked: an empty scan within 4× of an absent `get`,
//! opening at most 1.2 × tables × the filters' bound, and non-empty scans no
//! slower than without range filters (≤ 1.05×).

use std::process::ExitCode;

use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
use amq_bench::lsm::{median, Error};
use amq_bench::prefix::{absent_get, across, present_scan, Measured, PrefixTree, KEYS_PER_TABLE};
use amq_bench::range_scan::{empty_tenant_scan, options, IntTree};
use amq_bench::report::verdict;
use amq_lsm::{Db, Stats};

struct Args {
    tables: Vec<usize>,
    queries: usize,
    runs: usize,
    bits: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        tables: vec![64, 256],
        queries: 2000,
        runs: 5,
        bits: 16.0,
    };
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--tables" => {
                a.tables = value()?
                    .split(',')
                    .map(|s| s.parse().map_err(|e| format!("--tables: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--queries" => a.queries = value()?.parse().map_err(|e| format!("--queries: {e}"))?,
            "--runs" => a.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--bits" => a.bits = value()?.parse().map_err(|e| format!("--bits: {e}"))?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(a)
}

/// One query kind's measurements over runs, with the tables each query
/// opened (met and not ruled out by a range filter).
#[derive(Default, Clone)]
struct Cell {
    runs: Vec<Measured>,
    opened: Vec<f64>,
}

impl Cell {
    fn ns(&self) -> f64 {
        let mut v: Vec<f64> = self.runs.iter().map(|m| m.ns).collect();
        median(&mut v)
    }

    fn field(&self, f: impl Fn(&Measured) -> f64) -> f64 {
        let mut v: Vec<f64> = self.runs.iter().map(f).collect();
        median(&mut v)
    }

    fn opened(&self) -> f64 {
        let mut v = self.opened.clone();
        median(&mut v)
    }

    /// Times `query` once, counting the tables it opened per query.
    fn time(&mut self, db: &Db, queries: usize, query: impl FnOnce() -> Measured) {
        let before = db.stats();
        self.runs.push(query());
        let s = db.stats();
        let opened = |s: &Stats| s.scan_tables - s.range_negatives;
        self.opened
            .push((opened(&s) - opened(&before)) as f64 / queries.max(1) as f64);
    }

    fn show(&self, scan: bool) -> String {
        if self.runs.is_empty() {
            return "—".into();
        }
        let mut s = format!("{}, {:.2} blocks", time(self.ns()), self.field(|m| m.blocks));
        if scan {
            s.push_str(&format!(", {:.2} tables", self.opened()));
        }
        s
    }
}

fn time(ns: f64) -> String {
    match ns {
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

/// The bound of a table's range filter (`bits` bits per key over `keys`
/// distinct keys) for an empty range of `len` integers.
fn bound(bits: f64, keys: u64, len: u64) -> Result<f64, Error> {
    let sample: Vec<u64> = (0..keys).map(|i| i << 20).collect();
    Ok(GrafiteRange::build(&sample, RangeSizing::BitsPerKey(bits))?.expected_fpr(len))
}

fn run(args: &Args) -> Result<(), Error> {
    amq_bench::ordinary_pages();
    let configs = [None, Some(args.bits)];
    let names = [
        "no range filter".to_string(),
        format!("GrafiteRange {} b/k", args.bits),
    ];
    println!(
        "## Short scans on overlapping tables\n\n{KEYS_PER_TABLE} keys per table, tiered without \
         compaction, BlockedBloom 10 bits per key, no prefix extractor, no block cache; {} queries per \
         cell, medians of {} runs. Each cell: time per query, data blocks read, tables opened (met by \
         the scan's range and not ruled out by a range filter). CPU: {}.\n",
        args.queries,
        args.runs,
        amq_bench::report::cpu_model()
    );
    for &n in &args.tables {
        eprintln!("{n} tables: prefix tree ...");
        let mut rows = vec![
            [
                Cell::default(),
                Cell::default(),
                Cell::default(),
                Cell::default(),
                Cell::default()
            ];
            2
        ];
        let mut range_bytes = [0u64; 2];
        for (i, bits) in configs.into_iter().enumerate() {
            let tree = PrefixTree::build(n, options(bits))?;
            let absent = tree.absent_tenants(args.queries as u64);
            let starts: Vec<u64> = (0..args.queries as u64 / 10).collect();
            let present_times = (args.queries / 20).max(1);
            absent_get(&tree.db, &absent);
            empty_tenant_scan(&tree.db, &absent, 64);
            for _ in 0..args.runs {
                let r = &mut rows[i];
                let db = &tree.db;
                r[0].time(db, absent.len(), || absent_get(db, &absent));
                r[1].time(db, absent.len(), || empty_tenant_scan(db, &absent, 32));
                r[2].time(db, absent.len(), || empty_tenant_scan(db, &absent, 64));
                r[3].time(db, present_times, || present_scan(db, present_times));
                r[4].time(db, starts.len(), || across(&tree, &starts));
            }
            range_bytes[i] = tree.db.stats().range_filter_bytes();
        }
        println!("### {n} tables, the prefix tree (keys `t{{tenant:08}}:{{row:08}}`)\n");
        println!("| store | absent `get` | empty scan, 32 rows | empty scan, 64 rows | present prefix (32 rows) | 64 rows across prefixes |");
        println!("|---|--:|--:|--:|--:|--:|");
        for (name, r) in names.iter().zip(&rows) {
            println!(
                "| {name} | {} | {} | {} | {} | {} |",
                r[0].show(false),
                r[1].show(true),
                r[2].show(true),
                r[3].show(true),
                r[4].show(true)
            );
        }
        // Rows of one tenant agree on the eight bytes past each table's
        // common prefix: an empty scan inside a tenant is one integer.
        let b = bound(args.bits, KEYS_PER_TABLE / 10, 1)?;
        let with = &rows[1];
        let ratio = with[2].ns() / with[0].ns();
        let opened = with[2].opened();
        println!(
            "\nRange filters: {} bytes per table. Empty scan of 64 rows: {ratio:.2}× an absent get (target ≤ 4×: {}), \
             {opened:.3} tables opened (target ≤ 1.2 × {n} × {b:.2e} = {:.3}: {}). Present prefix {:.3}×, \
             across prefixes {:.3}× the store without range filters (target ≤ 1.05×: {}, {}).\n",
            range_bytes[1] / n as u64,
            verdict(ratio <= 4.0),
            1.2 * n as f64 * b,
            verdict(opened <= 1.2 * n as f64 * b),
            with[3].ns() / rows[0][3].ns(),
            with[4].ns() / rows[0][4].ns(),
            verdict(with[3].ns() <= 1.05 * rows[0][3].ns()),
            verdict(with[4].ns() <= 1.05 * rows[0][4].ns()),
        );

        eprintln!("{n} tables: integer tree ...");
        let mut rows = vec![[Cell::default(), Cell::default(), Cell::default(), Cell::default()]; 2];
        for (i, bits) in configs.into_iter().enumerate() {
            let tree = IntTree::build(n, options(bits))?;
            let e16 = tree.empty_ranges(args.queries, 16);
            let e64 = tree.empty_ranges(args.queries, 64);
            let full = tree.full_ranges(args.queries / 10, 8);
            tree.absent_get(&e64);
            tree.scan(&e64);
            for _ in 0..args.runs {
                let r = &mut rows[i];
                r[0].time(&tree.db, e64.len(), || tree.absent_get(&e64));
                r[1].time(&tree.db, e16.len(), || tree.scan(&e16));
                r[2].time(&tree.db, e64.len(), || tree.scan(&e64));
                r[3].time(&tree.db, full.len(), || tree.scan(&full));
            }
        }
        println!("### {n} tables, random integer keys (`u` + 8 bytes)\n");
        println!("| store | absent `get` | empty scan, 16 integers | empty scan, 64 integers | scan of about 8 keys |");
        println!("|---|--:|--:|--:|--:|");
        for (name, r) in names.iter().zip(&rows) {
            println!(
                "| {name} | {} | {} | {} | {} |",
                r[0].show(false),
                r[1].show(true),
                r[2].show(true),
                r[3].show(true)
            );
        }
        let b = bound(args.bits, KEYS_PER_TABLE, 64)?;
        let with = &rows[1];
        let ratio = with[2].ns() / with[0].ns();
        let opened = with[2].opened();
        println!(
            "\nEmpty scan of 64 integers: {ratio:.2}× an absent get (target ≤ 4×: {}), {opened:.3} tables opened \
             (target ≤ 1.2 × {n} × {b:.2e} = {:.3}: {}). Scans of about 8 keys: {:.3}× the store without range \
             filters (target ≤ 1.05×: {}).\n",
            verdict(ratio <= 4.0),
            1.2 * n as f64 * b,
            verdict(opened <= 1.2 * n as f64 * b),
            with[3].ns() / rows[0][3].ns(),
            verdict(with[3].ns() <= 1.05 * rows[0][3].ns()),
        );
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
