//! The comparison report: builds every filter (ours and the other crates')
//! over n keys, prints a markdown table of bits/key, measured FPR and median
//! ns per build key / hit / miss (and, for the deletable filters, per insert
//! and remove one key at a time), and writes the space/FPR chart as SVG.
//!
//! ```text
//! cargo run --release -p amq-bench --bin report -- [--n 1000000] [--absent N] [--runs 5]
//!     [--only bloom|static|deletable|parquet] [--huge-pages] [--svg docs/space-fpr.svg] [--md FILE]
//! ```
//!
//! `--only` measures one comparison (its filters still interleaved round by
//! round), for more rounds of one head-to-head in the same time.
//!
//! `--huge-pages` lets amq's tables of 4 MiB and more ask Linux for
//! transparent huge pages (`amq::huge_pages`); off by default, since the other
//! crates' tables do not.
//!
//! `--absent` defaults to max(n, 1,000,000) absent keys for the FPR. Exits non-zero if a filter
//! gives a false negative or fails to build (the others are still reported).

use std::process::ExitCode;

use amq_bench::churn::{churn_markdown, Churn};
use amq_bench::keys::KeySet;
use amq_bench::report::{markdown, Measure};
use amq_bench::svg::{space_fpr_chart, thousands, Point};
use amq_bench::{bloom_filters, cuckoo_filters, parquet_filters, static_filters, AsSubjects};

struct Args {
    n: usize,
    absent: Option<usize>,
    runs: usize,
    svg: String,
    md: Option<String>,
    only: Option<String>,
    huge_pages: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1_000_000,
        absent: None,
        runs: 5,
        svg: concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/space-fpr.svg").to_string(),
        md: None,
        only: None,
        huge_pages: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.replace('_', "")
                .parse::<usize>()
                .map_err(|e| format!("{v}: {e}"))
        };
        match flag.as_str() {
            "--n" => args.n = number(value()?)?,
            "--absent" => args.absent = Some(number(value()?)?),
            "--runs" => args.runs = number(value()?)?,
            "--svg" => args.svg = value()?,
            "--md" => args.md = Some(value()?),
            "--only" => {
                let v = value()?;
                if !["bloom", "static", "deletable", "parquet"].contains(&v.as_str()) {
                    return Err(format!("--only {v}: expected bloom, static, deletable or parquet"));
                }
                args.only = Some(v);
            }
            "--huge-pages" => args.huge_pages = true,
            "--bench" => {} // passed by `cargo bench`; harmless
            "-h" | "--help" => {
                return Err(
                    "usage: report [--n N] [--absent N] [--runs R] [--only bloom|static|deletable|parquet] [--huge-pages] [--svg FILE] [--md FILE]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other} (try --help)")),
        }
    }
    if args.n == 0 {
        return Err("--n must be at least 1".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // amq's tables of 4 MiB and more ask Linux for huge pages only when
    // asked to (`docs/results-amq.md`, "Huge pages"): the other crates' tables
    // never do, so the default compares like with like.
    #[cfg(target_os = "linux")]
    amq::huge_pages::set_enabled(args.huge_pages);
    let absent = args.absent.unwrap_or(args.n.max(1_000_000));
    let keys = KeySet::new(args.n, absent);

    let mut m = Measure::new(&keys, args.runs);
    let wanted = |name: &str| args.only.as_deref().is_none_or(|only| only == name);
    if wanted("bloom") {
        m.section("Bloom filters (10 bits/key; bloomfilter sized for 1%)");
        bloom_filters(&mut m);
    }
    if wanted("static") {
        m.section("Static filters");
        static_filters(&mut m);
    }
    if wanted("deletable") {
        m.section("Deletable filters (sized for n keys; counting Bloom for 1%)");
        cuckoo_filters(&mut AsSubjects(&mut m));
    }
    if wanted("parquet") {
        m.section("Parquet split-block Bloom filters (INT64 values, 1% target; every operation hashes its value with XXH64)");
        parquet_filters(&mut m);
    }
    m.finish();
    let churn = wanted("deletable").then(|| {
        let mut churn = Churn::new(&keys.present, args.runs);
        cuckoo_filters(&mut churn);
        churn.finish()
    });

    let mut md = format!(
        "## Comparison at n = {} keys\n\n{} absent keys for the FPR; times are medians of {} interleaved rounds, ns per key.\n\
         CPU: {}; sbbf-rs implementation: {}.\n",
        thousands(args.n),
        thousands(absent),
        args.runs,
        amq_bench::report::cpu_model(),
        amq_bench::adapters::sbbf::SplitBlockBloom::with_bits_per_key(1, 10.0).implementation(),
    );
    md.push_str(&markdown(&m.rows));
    if let Some(rows) = &churn {
        md.push_str(&churn_markdown(rows));
    }
    for failure in &m.failures {
        md.push_str(&format!("\n**Build failed:** {failure}\n"));
    }
    print!("{md}");

    let failed: Vec<_> = m
        .rows
        .iter()
        .filter(|r| r.false_negatives > 0)
        .map(|r| r.name)
        .collect();
    if !failed.is_empty() {
        eprintln!("FALSE NEGATIVES in: {failed:?}");
    }
    let churn_failed: Vec<_> = churn
        .iter()
        .flatten()
        .filter(|r| r.failures > 0)
        .map(|r| r.name)
        .collect();
    if !churn_failed.is_empty() {
        eprintln!("REFUSED INSERTS OR MISSED REMOVES in: {churn_failed:?}");
    }

    let points: Vec<Point> = m.rows.iter().map(Point::from_row).collect();
    let svg = space_fpr_chart(
        &format!("Space vs false-positive rate, n = {} keys", thousands(args.n)),
        &points,
    );
    let mut written = vec![(args.svg.as_str(), svg)];
    if let Some(path) = &args.md {
        written.push((path.as_str(), md));
    }
    for (path, text) in written {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("writing {path}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {path}");
    }
    if failed.is_empty() && churn_failed.is_empty() && m.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
