//! The planner on the command line: which filter for my keys, my FPR or
//! memory budget, and what I need from it. Prints the ranking as a markdown
//! table; `--check` also builds every candidate over synthetic keys and
//! prints what it measured beside what was predicted.
//!
//! ```text
//! cargo run --release -p amq --bin amq-plan -- --n 1000000 --fpr 0.01
//! cargo run --release -p amq --bin amq-plan -- --n 1000000 --fpr 0.001 --deletes
//! cargo run --release -p amq --bin amq-plan -- --n 10000000 --budget 8 --check
//! ```
//!
//! Flags: `--n KEYS` (default 1,000,000), `--fpr P`, `--budget BITS_PER_KEY`,
//! `--budget-bits BITS` (for the whole filter), `--inserts` (keys added after
//! the build), `--streaming` (keys not known up front), `--unknown-count`
//! (more keys may come than `--n`), `--deletes`,
//! `--concurrent` (inserts from many threads), `--speed` (query cost first),
//! `--check` (build and measure every candidate), `--absent N` (absent keys
//! `--check` queries; default max(n, 1,000,000)).

use std::process::ExitCode;
use std::time::Instant;

use amq::hash::remix;
use amq::plan::{Planner, Priority, Ranking};
use amq::{Filter, KeyHash};

struct Args {
    planner: Planner,
    check: bool,
    absent: Option<usize>,
}

fn parse() -> Result<Args, String> {
    let mut n = 1_000_000usize;
    let mut fpr = None;
    let (mut budget, mut budget_bits) = (None, None);
    let mut flags = Vec::new();
    let mut absent = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.replace(['_', ','], "")
                .parse::<f64>()
                .map_err(|e| format!("{v}: {e}"))
        };
        match flag.as_str() {
            "--n" => n = number(value()?)? as usize,
            "--fpr" => fpr = Some(number(value()?)?),
            "--budget" => budget = Some(number(value()?)?),
            "--budget-bits" => budget_bits = Some(number(value()?)? as u64),
            "--absent" => absent = Some(number(value()?)? as usize),
            "--inserts" | "--streaming" | "--unknown-count" | "--deletes" | "--concurrent" | "--speed" | "--check" => {
                flags.push(flag)
            }
            "-h" | "--help" => {
                return Err(
                    "usage: plan [--n KEYS] [--fpr P] [--budget BITS_PER_KEY] [--budget-bits BITS] \
                     [--inserts] [--streaming] [--unknown-count] [--deletes] [--concurrent] [--speed] [--check] [--absent N]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other} (try --help)")),
        }
    }
    let has = |f: &str| flags.iter().any(|g| g == f);
    let mut planner = Planner::for_keys(n)
        .inserts_after_build(has("--inserts"))
        .keys_known_up_front(!has("--streaming"))
        .key_count_known(!has("--unknown-count"))
        .deletes(has("--deletes"))
        .concurrent_inserts(has("--concurrent"))
        .priority(if has("--speed") {
            Priority::Speed
        } else {
            Priority::Space
        });
    if let Some(p) = fpr {
        planner = planner.fpr(p);
    }
    if let Some(b) = budget {
        planner = planner.budget_bits_per_key(b);
    }
    if let Some(b) = budget_bits {
        planner = planner.budget_bits(b);
    }
    if fpr.is_none() && budget.is_none() && budget_bits.is_none() {
        planner = planner.fpr(0.01);
    }
    Ok(Args {
        planner,
        check: has("--check"),
        absent,
    })
}

/// Builds every candidate over `n` synthetic key hashes and prints its
/// predicted and measured bits/key and FPR, and its build time.
fn check(ranking: &Ranking, n: usize, absent: usize) -> Result<(), amq::Error> {
    // Distinct by construction: `remix` is a bijection for a fixed seed.
    let keys: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 0x5eed_0001)))
        .collect();
    println!("\nEach candidate built over {n} keys, its FPR measured over {absent} absent keys:\n");
    println!(
        "| filter | bits/key predicted | bits/key built | FPR predicted | FPR measured | build ns/key |"
    );
    println!(
        "|--------|-------------------:|---------------:|--------------:|-------------:|-------------:|"
    );
    for plan in ranking.plans() {
        let start = Instant::now();
        let f = plan.build(&keys)?;
        let build_ns = start.elapsed().as_nanos() as f64 / n as f64;
        assert!(keys.iter().all(|&h| f.contains_hash(h)), "false negative");
        // Absent keys from another seed (a collision with a key is a
        // 2^-64 event per pair).
        let hits = (0..absent as u64)
            .filter(|&i| f.contains_hash(KeyHash::from_well_mixed(remix(i, 0xab5e_0002))))
            .count();
        println!(
            "| {:?} | {:.2} | {:.2} | {} | {} ({hits}) | {:.1} |",
            plan.kind(),
            plan.bits_per_key(),
            f.bits_per_key(),
            percent(plan.expected_fpr()),
            percent(hits as f64 / absent as f64),
            build_ns
        );
    }
    Ok(())
}

/// A probability as a percentage: four decimals, or scientific when smaller.
fn percent(p: f64) -> String {
    if p == 0.0 || p >= 1e-6 {
        format!("{:.4}%", 100.0 * p)
    } else {
        format!("{:.2e}%", 100.0 * p)
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let ranking = match args.planner.rank() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{ranking}");
    if args.check {
        let n = ranking.plans().first().map_or(0, |p| p.keys());
        let absent = args.absent.unwrap_or(n.max(1_000_000));
        if let Err(e) = check(&ranking, n, absent) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    if ranking.plans().is_empty() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
