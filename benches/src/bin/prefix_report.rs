//! The prefix-filter report: seeks, prefix scans and scans across prefixes
//! on trees of overlapping tables, with a prefix extractor and without, and
//! beside fjall; then the filter memory prefixes cost, per kind.
//!
//! ```text
//! cargo run --release -p amq-bench --bin prefix_report --
//!     [--tables 8,64,256] [--queries 2000] [--runs 5] [--no-fjall] [--no-memory]
//! ```
//!
//! The trees are described in [`amq_bench::prefix`]. Each store is built,
//! timed `runs` times over every query kind, and dropped before the next is
//! built; printed are medians over runs.

use std::process::ExitCode;

use amq::FilterKind;
use amq_bench::lsm::{median, Error};
use amq_bench::prefix::{
    absent_get, across, filter_bytes, options, present_scan, seek, FjallTree, Measured, PrefixTree,
    KEYS_PER_TABLE, PRESENT_TABLES,
};
use amq_bench::report::verdict;

struct Args {
    tables: Vec<usize>,
    queries: u64,
    runs: usize,
    fjall: bool,
    memory: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        tables: vec![8, 64, 256],
        queries: 2000,
        runs: 5,
        fjall: true,
        memory: true,
    };
    let mut it = std::env::args().skip(1);
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
            "--no-fjall" => a.fjall = false,
            "--no-memory" => a.memory = false,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    Ok(a)
}

/// The queries of one store in one run.
#[derive(Default, Clone)]
struct Row {
    get: Vec<Measured>,
    seek: Vec<Measured>,
    present: Vec<Measured>,
    across: Vec<Measured>,
}

/// The median of one field over runs.
fn med(xs: &[Measured], f: impl Fn(&Measured) -> f64) -> f64 {
    let mut v: Vec<f64> = xs.iter().map(f).collect();
    median(&mut v)
}

fn time(ns: f64) -> String {
    match ns {
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

fn cell(xs: &[Measured]) -> String {
    if xs.is_empty() {
        return "—".into();
    }
    let blocks = med(xs, |m| m.blocks);
    match blocks.is_nan() {
        true => time(med(xs, |m| m.ns)),
        false => format!("{}, {:.2} blocks", time(med(xs, |m| m.ns)), blocks),
    }
}

fn run(args: &Args) -> Result<(), Error> {
    amq_bench::ordinary_pages();
    println!(
        "## Prefix seeks on overlapping tables\n\n{KEYS_PER_TABLE} keys per table, ten rows per tenant, \
         tiered without compaction, BlockedBloom 10 bits per entry, no block cache; {} queries per \
         cell, medians of {} runs. CPU: {}.\n",
        args.queries,
        args.runs,
        amq_bench::report::cpu_model()
    );
    for &n in &args.tables {
        eprintln!("{n} tables ...");
        let starts: Vec<u64> = (0..args.queries / 10).collect();
        let present_times = (args.queries / 20).max(1) as usize;
        // One store at a time, each built, timed and dropped before the
        // next: with two stores alive, the second's timings moved by up to
        // 2× with what the first had just done, where one store alone gives
        // steady figures.
        let mut rows = [Row::default(), Row::default(), Row::default()];
        let mut absent = Vec::new();
        let mut fpr = 0.0;
        for (i, extractor) in [true, false].into_iter().enumerate() {
            let tree = PrefixTree::build(n, options(extractor, None))?;
            absent = tree.absent_tenants(args.queries);
            if extractor {
                fpr = mean_expected_fpr(&tree.db.stats());
            }
            // Warm the page cache and the store.
            absent_get(&tree.db, &absent);
            seek(&tree.db, &absent);
            for _ in 0..args.runs {
                measure_amq(&tree, &absent, &starts, present_times, &mut rows[i]);
            }
        }
        // fjall alone afterwards: its background threads must not run
        // beside the other stores' timings.
        let fjall_tables = match args.fjall {
            true => {
                let f = FjallTree::build(n)?;
                f.seek(&absent);
                for _ in 0..args.runs {
                    rows[2].get.push(f.absent_get(&absent));
                    rows[2].seek.push(f.seek(&absent));
                    rows[2].present.push(f.present_scan(present_times));
                    rows[2].across.push(f.across(n, &starts));
                }
                f.tables()
            }
            false => 0,
        };
        println!("### {n} tables\n");
        println!("| store | absent `get` | absent-prefix seek | seek ÷ get | present prefix ({PRESENT_TABLES} rows in {PRESENT_TABLES} tables) | 64 rows across prefixes |");
        println!("|---|--:|--:|--:|--:|--:|");
        let names = [
            "amq-lsm, prefix extractor".to_string(),
            "amq-lsm, no extractor".to_string(),
            format!("fjall 3.1.13 (compacted to {fjall_tables} tables; no prefix filter)"),
        ];
        for (name, row) in names.iter().zip(&rows) {
            if row.get.is_empty() {
                continue;
            }
            let ratio = med(&row.seek, |m| m.ns) / med(&row.get, |m| m.ns);
            println!(
                "| {name} | {} | {} | {ratio:.2}× | {} | {} |",
                cell(&row.get),
                cell(&row.seek),
                cell(&row.present),
                cell(&row.across)
            );
        }
        let seek_ratio = med(&rows[0].seek, |m| m.ns) / med(&rows[0].get, |m| m.ns);
        let seek_blocks = med(&rows[0].seek, |m| m.blocks);
        let present_blocks = med(&rows[0].present, |m| m.blocks);
        let others = n.saturating_sub(PRESENT_TABLES) as f64;
        let present_bound = PRESENT_TABLES.min(n) as f64 + 1.2 * fpr * others;
        let present_speedup = med(&rows[1].present, |m| m.ns) / med(&rows[0].present, |m| m.ns);
        let across_ratio = med(&rows[0].across, |m| m.ns) / med(&rows[1].across, |m| m.ns);
        println!(
            "\nExpected FPR of the tables' filters (keys and prefixes): {:.3}%. Absent seek: {seek_ratio:.2}× an \
             absent get (target ≤ 2×: {}), {seek_blocks:.2} blocks (target ≤ 1.2 × {n} × FPR = {:.2}: {}). \
             Present prefix: {present_blocks:.1} blocks (target ≤ {present_bound:.1}: {}), {present_speedup:.1}× \
             faster than without an extractor. Across prefixes: {across_ratio:.2}× the store without an \
             extractor.\n",
            fpr * 100.0,
            verdict(seek_ratio <= 2.0),
            1.2 * n as f64 * fpr,
            verdict(seek_blocks <= 1.2 * n as f64 * fpr),
            verdict(present_blocks <= present_bound),
        );
    }
    if args.memory {
        println!(
            "### Filter memory of one table ({KEYS_PER_TABLE} keys, 2,000 tenants), 10 bits per entry\n"
        );
        println!("| kind | whole keys | whole keys and prefixes | prefixes only |");
        println!("|---|--:|--:|--:|");
        for kind in [
            FilterKind::BlockedBloom,
            FilterKind::StandardBloom,
            FilterKind::Ribbon,
            FilterKind::Xor8,
            FilterKind::BinaryFuse8,
            FilterKind::CuckooFilter,
        ] {
            let [whole, both, only] = filter_bytes(kind)?;
            println!(
                "| {kind:?} | {whole} B | {both} B ({:+.1}%) | {only} B ({:.1}%) |",
                (both as f64 / whole as f64 - 1.0) * 100.0,
                only as f64 / whole as f64 * 100.0
            );
        }
        println!();
    }
    Ok(())
}

fn measure_amq(tree: &PrefixTree, absent: &[u64], starts: &[u64], present_times: usize, row: &mut Row) {
    row.get.push(absent_get(&tree.db, absent));
    row.seek.push(seek(&tree.db, absent));
    row.present.push(present_scan(&tree.db, present_times));
    row.across.push(across(tree, starts));
}

/// The mean of the tables' expected FPRs (what a filter lets through).
fn mean_expected_fpr(s: &amq_lsm::Stats) -> f64 {
    let fprs: Vec<f64> = s
        .levels
        .iter()
        .flat_map(|l| l.table_stats.iter().map(|t| t.expected_fpr))
        .collect();
    fprs.iter().sum::<f64>() / fprs.len().max(1) as f64
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
