//! Where an empty bounded scan's time goes on a tree of overlapping tables
//! with range filters: builds the integer tree of `amq_bench::range_scan`
//! and runs empty scans in a loop, for a sampling profiler.
//!
//! ```text
//! cargo run --release -p amq-bench --example range_scan_profile -- [TABLES] [SECONDS]
//! ```

use std::time::Instant;

use amq_bench::range_scan::{options, IntTree};

fn main() -> Result<(), amq_bench::lsm::Error> {
    let mut args = std::env::args().skip(1);
    let tables: usize = args.next().map_or(Ok(256), |s| s.parse())?;
    let seconds: f64 = args.next().map_or(Ok(5.0), |s| s.parse())?;
    let tree = IntTree::build(tables, options(Some(16.0)))?;
    let empty = tree.empty_ranges(2000, 64);
    let get = tree.absent_get(&empty);
    let start = Instant::now();
    let mut rounds = 0;
    let mut ns = Vec::new();
    while start.elapsed().as_secs_f64() < seconds {
        ns.push(tree.scan(&empty).ns);
        rounds += 1;
    }
    ns.sort_by(f64::total_cmp);
    println!(
        "{tables} tables: absent get {:.1} µs; empty scan of 64 integers {:.1} µs (median of {rounds} rounds of {} scans)",
        get.ns / 1e3,
        ns[ns.len() / 2] / 1e3,
        empty.len()
    );
    Ok(())
}
