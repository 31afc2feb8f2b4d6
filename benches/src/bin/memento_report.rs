//! The dynamic range filter's report: amq's `MementoFilter` filled one
//! insert at a time from a workload in the format range-filter benchmarks
//! exchange (`amq_bench::range`; write one with `range_report --generate`),
//! then asked its empty ranges, by length: bits per key, insert time, and
//! per length the FPR, the promised bound and ns per query.
//!
//! ```text
//! cargo run --release -p amq-bench --bin range_report -- --generate DIR --generate-only \
//!     --n 1000000 --queries 3000000 --range-lens 1,32,1024
//! cargo run --release -p amq-bench --bin memento_report -- --dir DIR
//!     [--fpr 0.01,0.001] [--max-range-len 1024] [--initial sized,1000] [--runs 3]
//! ```
//!
//! * `--fpr`: the targets for ranges of up to `--max-range-len` keys.
//! * `--initial`: `sized` starts the table at the key count with no
//!   expansion planned (horizon 0: the shortest fingerprints for the
//!   target); a number starts it there, plans the default 18 expansions
//!   and lets it double as keys come.
//! * `--runs`: timed query passes; the median is reported.
//!
//! The keys are inserted in the file's order, repeats held as often as they
//! come; queries whose range holds a key are skipped.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use amq::range::{MementoFilter, MementoOptions, RangeFilter};
use amq_bench::range::{time_ranges, SortedKeys, Workload};

struct Args(HashMap<String, String>);

impl Args {
    fn parse() -> Result<Args, String> {
        let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
        let mut flags = HashMap::new();
        while let Some(f) = it.next() {
            let name = f.strip_prefix("--").ok_or(format!("unexpected {f}"))?.to_string();
            flags.insert(name, it.next().ok_or(format!("{f} needs a value"))?);
        }
        Ok(Args(flags))
    }

    fn get<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        self.0.get(name).map_or(Ok(default), |s| {
            s.parse().map_err(|_| format!("--{name}: bad value {s}"))
        })
    }

    fn list(&self, name: &str, default: &str) -> Vec<String> {
        self.0
            .get(name)
            .map_or(default, String::as_str)
            .split(',')
            .map(str::to_string)
            .collect()
    }
}

fn run() -> Result<(), String> {
    let args = Args::parse()?;
    let dir = PathBuf::from(
        args.0
            .get("dir")
            .ok_or("give --dir DIR (write one with range_report --generate)")?,
    );
    let w = Workload::read(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let sorted = SortedKeys::new(&w.keys);
    let mut by_len: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    let mut skipped = 0;
    for (&lo, &hi) in w.left.iter().zip(&w.right) {
        if lo > hi || sorted.any_in(lo, hi) {
            skipped += 1;
        } else {
            by_len.entry(hi - lo + 1).or_default().push((lo, hi));
        }
    }
    let runs = args.get("runs", 3usize)?;
    let max_range_len = args.get("max-range-len", 1_024u64)?;
    println!(
        "MementoFilter on `{}`: {} keys, {} empty ranges ({skipped} skipped: not empty), ranges promised up to {max_range_len} keys; median of {runs} timed passes; {}.\n",
        dir.display(),
        w.keys.len(),
        w.left.len() - skipped,
        amq_bench::report::cpu_model(),
    );
    print!("| target FPR | start | expansions | bits/key | insert ns/key |");
    for len in by_len.keys() {
        print!(" ℓ = {len}: FPR (bound) | ns/query (single / batched) |");
    }
    println!();
    println!("|---|---|---|---|---|{}", "---|---|".repeat(by_len.len()));
    for fpr in args.list("fpr", "0.01,0.001") {
        let fpr: f64 = fpr.parse().map_err(|_| format!("--fpr: bad value {fpr}"))?;
        for start in args.list("initial", "sized,1000") {
            let mut o = MementoOptions::new(fpr, max_range_len);
            match start.as_str() {
                "sized" => {
                    o.initial_keys = w.keys.len().max(1);
                    o.horizon = 0;
                }
                s => o.initial_keys = s.parse().map_err(|_| format!("--initial: bad value {s}"))?,
            }
            let mut f = MementoFilter::new(o).map_err(|e| e.to_string())?;
            let clock = Instant::now();
            for &k in &w.keys {
                f.insert(k).map_err(|e| e.to_string())?;
            }
            let insert_ns = clock.elapsed().as_nanos() as f64 / w.keys.len().max(1) as f64;
            print!(
                "| {fpr} | {start} | {} | {:.2} | {insert_ns:.1} |",
                f.expansions(),
                f.bits_per_key()
            );
            for (&len, ranges) in &by_len {
                let (fp, ns, batched) = time_ranges(&f, ranges, runs);
                print!(
                    " {:.3e} ({:.2e}) | {ns:.1} / {batched:.1} |",
                    fp as f64 / ranges.len() as f64,
                    f.expected_fpr(len)
                );
            }
            println!();
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memento_report: {e}");
            ExitCode::FAILURE
        }
    }
}
