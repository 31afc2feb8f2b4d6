//! The value-search report: the paper's Fig. 8, Fig. 10–12 and
//! Table III at this machine's scale, as markdown, for (a) scanning every
//! table, (b) probing every leaf filter, (c) the hierarchy, (d) the flat
//! variant, and `find_by_value`'s automatic choice.
//!
//! ```text
//! cargo run --release -p amq-bench --bin value_report -- fig8    [--sizes 1000000,5000000,10000000] [--queries 21] [--scan-queries 5] [--rounds 3]
//! cargo run --release -p amq-bench --bin value_report -- filters [--n 10000000] [--bits 20000,200000,2000000] [--orders 2,3,5,10] [--queries 51]
//! cargo run --release -p amq-bench --bin value_report -- domain  [--n 5000000] [--domains 0.01,0.05,0.1,0.4,0.7,1] [--queries 21]
//! cargo run --release -p amq-bench --bin value_report -- updates [--n 2000000]
//! cargo run --release -p amq-bench --bin value_report -- probes  [--n 10000000] [--bits 2000000] [--ks 2,4,8,16,24]
//! cargo run --release -p amq-bench --bin value_report -- write   [--n 10000000] [--runs 3]
//! ```
//!
//! Every store is loaded as [`amq_bench::value`] describes (16-byte keys
//! and values, ~2 MiB tables) in a temporary directory under `--dir`
//! (default: the system's), and removed afterwards.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use amq_bench::lsm::Error;
use amq_bench::value::{load, options, queries, time_method, time_methods, Timing, MEMTABLE_BYTES};
use amq_lsm::{Db, SearchMethod, UpdateStrategy, ValueFilterSizing, ValueIndexOptions};

/// Entries per ~2 MiB table: what the filters are sized for.
const VALUES_PER_TABLE: u64 = 57_000;

/// The targets at 10M unique values.
const LEAF_FRACTION_TARGET: f64 = 0.10;
const SPEEDUP_TARGET: f64 = 50.0;
const FALLBACK_SLOWDOWN: f64 = 1.10;

const METHODS: [(Option<SearchMethod>, &str); 5] = [
    (Some(SearchMethod::Scan), "(a) scan every table"),
    (Some(SearchMethod::Leaves), "(b) every leaf filter"),
    (Some(SearchMethod::Hierarchy), "(c) hierarchy"),
    (Some(SearchMethod::Flat), "(d) flat"),
    (None, "auto (`find_by_value`)"),
];

fn value_options(bits: u64, order: usize, probes: Option<u32>) -> ValueIndexOptions {
    ValueIndexOptions::default()
        .sizing(ValueFilterSizing::FixedBits {
            bits,
            expected_values: VALUES_PER_TABLE,
        })
        .order(order)
        .probes(probes)
}

struct Args {
    sub: String,
    flags: HashMap<String, String>,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
        let sub = it
            .next()
            .ok_or("usage: value_report fig8|filters|domain|updates [--flag value]...")?;
        let mut flags = HashMap::new();
        while let Some(f) = it.next() {
            let name = f.strip_prefix("--").ok_or(format!("unexpected {f}"))?.to_string();
            flags.insert(name, it.next().ok_or(format!("--{f} needs a value"))?);
        }
        Ok(Args { sub, flags })
    }

    fn list<T: std::str::FromStr>(&self, name: &str, default: &str) -> Result<Vec<T>, String> {
        self.flags
            .get(name)
            .map_or(default, String::as_str)
            .split(',')
            .map(|s| s.parse().map_err(|_| format!("--{name}: bad value {s}")))
            .collect()
    }

    fn one<T: std::str::FromStr>(&self, name: &str, default: &str) -> Result<T, String> {
        let v = self.flags.get(name).map_or(default, String::as_str);
        v.parse().map_err(|_| format!("--{name}: bad value {v}"))
    }

    fn dir(&self) -> PathBuf {
        self.flags
            .get("dir")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
    }
}

/// Every method of [`METHODS`] over `qs`; a plain scan over the first
/// `scan_q` only (each reads every table).
fn plan(qs: &[Vec<u8>], scan_q: usize) -> Vec<(Option<SearchMethod>, &[Vec<u8>])> {
    METHODS
        .iter()
        .map(|&(m, _)| {
            let slow = m == Some(SearchMethod::Scan);
            (m, if slow { &qs[..scan_q.min(qs.len())] } else { qs })
        })
        .collect()
}

fn tables(db: &Db) -> u64 {
    db.stats().levels.iter().map(|l| l.tables as u64).sum()
}

fn per_query(x: u64, t: &Timing) -> f64 {
    x as f64 / t.stats.searches.max(1) as f64
}

fn millions(n: u64) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else {
        format!("{n}")
    }
}

/// Fig. 8: time per search and tables scanned against entries.
fn fig8(a: &Args) -> Result<String, Error> {
    let sizes: Vec<u64> = a.list("sizes", "1000000,5000000,10000000")?;
    let nq: usize = a.one("queries", "21")?;
    let scan_q: usize = a.one("scan-queries", "5")?;
    let rounds: usize = a.one("rounds", "3")?;
    let vo = value_options(2_000_000, 3, None);
    let mut md = String::new();
    writeln!(
        md,
        "### Fig. 8: unique values, m = 2,000,000 bits, d = 3, k = {}\n",
        vo.num_probes()
    )?;
    writeln!(md, "| entries | tables | method | ms per search (median) | µs choosing tables (mean) | tables scanned | leaf filters probed | internal filters probed | false-positive tables | speed-up over (a) |")?;
    writeln!(md, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")?;
    let mut verdicts = Vec::new();
    for &n in &sizes {
        let dir = tempfile::tempdir_in(a.dir())?;
        let secs = load(dir.path(), n, 1.0, Some(vo.clone()))?;
        let db = Db::open(dir.path(), options(Some(vo.clone())))?;
        let (t, vs) = (tables(&db), db.value_stats());
        eprintln!(
            "{n}: loaded in {secs:.1} s, {t} tables, {} internal filters",
            vs.internal_filters
        );
        let qs = queries(n, 1.0, nq);
        let timings = time_methods(&db, &plan(&qs, scan_q), rounds)?;
        let scan_ms = timings[0].median_ms;
        let mut row = HashMap::new();
        for ((_, label), tm) in METHODS.into_iter().zip(timings) {
            writeln!(
                md,
                "| {} | {t} | {label} | {:.3} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}× |",
                millions(n),
                tm.median_ms,
                per_query(tm.stats.index_nanos, &tm) / 1e3,
                per_query(tm.stats.tables_scanned, &tm),
                per_query(tm.stats.leaf_probes, &tm),
                per_query(tm.stats.internal_probes, &tm),
                per_query(tm.stats.false_positive_tables, &tm),
                scan_ms / tm.median_ms
            )?;
            row.insert(label, tm);
        }
        let h = &row["(c) hierarchy"];
        let f = &row["(d) flat"];
        let leaf_frac = per_query(h.stats.leaf_probes, h) / vs.leaf_filters.max(1) as f64;
        verdicts.push(format!(
            "- {}: {t} tables, {} internal filters (height {}); the hierarchy probed {:.1}% of the leaf filters \
             (target ≤ {:.0}%: {}) and was {:.0}× faster than scanning (target ≥ {SPEEDUP_TARGET:.0}×: {}); \
             flat {:.0}× ({}).",
            millions(n),
            vs.internal_filters,
            vs.hierarchy_height,
            100.0 * leaf_frac,
            100.0 * LEAF_FRACTION_TARGET,
            if leaf_frac <= LEAF_FRACTION_TARGET { "met" } else { "not met" },
            scan_ms / h.median_ms,
            if scan_ms / h.median_ms >= SPEEDUP_TARGET { "met" } else { "not met" },
            scan_ms / f.median_ms,
            if f.median_ms < h.median_ms { "faster than the hierarchy" } else { "not faster than the hierarchy" },
        ));
    }
    writeln!(md, "\n{}", verdicts.join("\n"))?;
    Ok(md)
}

/// Fig. 10–12: filters probed and time against m and d.
fn filters(a: &Args) -> Result<String, Error> {
    let n: u64 = a.one("n", "10000000")?;
    let bits: Vec<u64> = a.list("bits", "20000,200000,2000000")?;
    let orders: Vec<usize> = a.list("orders", "2,3,5,10")?;
    let nq: usize = a.one("queries", "51")?;
    let scan_q: usize = a.one("scan-queries", "5")?;
    let rounds: usize = a.one("rounds", "3")?;
    let qs = queries(n, 1.0, nq);
    let mut fig10 = String::new();
    let mut fig11 = String::new();
    writeln!(
        fig10,
        "### Fig. 10 and 12: filters probed by the hierarchy, {} unique values\n",
        millions(n)
    )?;
    writeln!(fig10, "| m (bits) | k | d | leaves | internal filters | height | leaf filters probed | % of leaves | internal probed | % of internal | tables scanned | µs choosing tables | ms per search |")?;
    writeln!(
        fig10,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )?;
    writeln!(fig11, "### Fig. 11: ms per search (median) against m, d = 3\n")?;
    writeln!(fig11, "| m (bits) | (a) scan | (b) leaves | (c) hierarchy | (d) flat | auto | auto chose a plain scan | auto / (a) |")?;
    writeln!(fig11, "|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    for &m in &bits {
        // k for d = 3, fixed for every d so one store serves them all.
        let k = value_options(m, 3, None).num_probes();
        let dir = tempfile::tempdir_in(a.dir())?;
        let secs = load(dir.path(), n, 1.0, Some(value_options(m, 3, Some(k))))?;
        eprintln!("m = {m}: loaded in {secs:.1} s");
        for &d in &orders {
            let db = Db::open(dir.path(), options(Some(value_options(m, d, Some(k)))))?;
            let vs = db.value_stats();
            let tm = time_method(&db, &qs, Some(SearchMethod::Hierarchy), 1)?;
            writeln!(
                fig10,
                "| {m} | {k} | {d} | {} | {} | {} | {:.1} | {:.1}% | {:.1} | {:.1}% | {:.1} | {:.1} | {:.3} |",
                vs.leaf_filters,
                vs.internal_filters,
                vs.hierarchy_height,
                per_query(tm.stats.leaf_probes, &tm),
                100.0 * per_query(tm.stats.leaf_probes, &tm) / vs.leaf_filters.max(1) as f64,
                per_query(tm.stats.internal_probes, &tm),
                100.0 * per_query(tm.stats.internal_probes, &tm) / vs.internal_filters.max(1) as f64,
                per_query(tm.stats.tables_scanned, &tm),
                per_query(tm.stats.index_nanos, &tm) / 1e3,
                tm.median_ms,
            )?;
        }
        let db = Db::open(dir.path(), options(Some(value_options(m, 3, Some(k)))))?;
        // Where the filters cannot prune every method reads (nearly) every
        // table: as few queries for all of them as for the plain scan.
        let q = if m < 1_000_000 {
            &qs[..scan_q.min(nq)]
        } else {
            &qs[..]
        };
        let timings = time_methods(&db, &plan(q, scan_q), rounds)?;
        let ms: Vec<f64> = timings.iter().map(|t| t.median_ms).collect();
        let auto: &Timing = &timings[4];
        writeln!(
            fig11,
            "| {m} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {}/{} | {:.2} |",
            ms[0],
            ms[1],
            ms[2],
            ms[3],
            ms[4],
            auto.plain_scans,
            auto.stats.searches,
            ms[4] / ms[0]
        )?;
    }
    writeln!(
        fig11,
        "\nTarget: the automatic choice never more than {:.0}% slower than (a).",
        100.0 * (FALLBACK_SLOWDOWN - 1.0)
    )?;
    Ok(format!("{fig10}\n{fig11}"))
}

/// Table III: the value-domain sweep.
fn domain(a: &Args) -> Result<String, Error> {
    let n: u64 = a.one("n", "5000000")?;
    let domains: Vec<f64> = a.list("domains", "0.01,0.05,0.1,0.4,0.7,1")?;
    let nq: usize = a.one("queries", "21")?;
    let scan_q: usize = a.one("scan-queries", "5")?;
    let rounds: usize = a.one("rounds", "3")?;
    let vo = value_options(2_000_000, 3, None);
    let mut md = String::new();
    writeln!(
        md,
        "### Table III: value domain, {} entries, m = 2,000,000 bits, d = 3\n",
        millions(n)
    )?;
    writeln!(md, "| domain | tables | leaf filters found (b) | tables holding the value | leaf filters probed (c) | internal probed (c) | (a) ms | (b) ms | (c) ms | (d) ms | auto ms | auto plain scans | auto / (a) |")?;
    writeln!(
        md,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )?;
    for &dom in &domains {
        let dir = tempfile::tempdir_in(a.dir())?;
        let secs = load(dir.path(), n, dom, Some(vo.clone()))?;
        eprintln!("domain {dom}: loaded in {secs:.1} s");
        // Values repeat n · (1 - domain) times: fewer queries where each
        // returns thousands of entries.
        let nq = if dom < 0.01 { nq.min(5) } else { nq };
        let db = Db::open(dir.path(), options(Some(vo.clone())))?;
        let qs = queries(n, dom, nq);
        let r = time_methods(&db, &plan(&qs, scan_q), rounds)?;
        let (b, c) = (&r[1], &r[2]);
        writeln!(
            md,
            "| {}% | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {}/{} | {:.2} |",
            dom * 100.0,
            tables(&db),
            per_query(b.stats.tables_scanned, b),
            per_query(b.stats.tables_scanned - b.stats.false_positive_tables, b),
            per_query(c.stats.leaf_probes, c),
            per_query(c.stats.internal_probes, c),
            r[0].median_ms,
            r[1].median_ms,
            r[2].median_ms,
            r[3].median_ms,
            r[4].median_ms,
            r[4].plain_scans,
            r[4].stats.searches,
            r[4].median_ms / r[0].median_ms,
        )?;
    }
    Ok(md)
}

/// The probe count's effect on the hierarchy: the leaf-optimal `k` against
/// the one chosen for the nodes above the leaves.
fn probes(a: &Args) -> Result<String, Error> {
    let n: u64 = a.one("n", "10000000")?;
    let m: u64 = a.one("bits", "2000000")?;
    let ks: Vec<u32> = a.list("ks", "2,4,8,16,24")?;
    let nq: usize = a.one("queries", "51")?;
    let qs = queries(n, 1.0, nq);
    let absent: Vec<Vec<u8>> = (0..nq as u64)
        .map(|i| amq_bench::value::value(n + 1 + i))
        .collect();
    let mut md = String::new();
    writeln!(
        md,
        "### The probe count k, {} unique values, m = {m} bits, d = 3
",
        millions(n)
    )?;
    writeln!(md, "| k | leaf filters probed (c) | % of leaves | internal probed (c) | tables scanned for absent values (b): leaf false positives | µs choosing tables (c) | µs choosing tables (b) | µs choosing tables (d) |")?;
    writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|")?;
    for &k in &ks {
        let dir = tempfile::tempdir_in(a.dir())?;
        let vo = value_options(m, 3, Some(k));
        let secs = load(dir.path(), n, 1.0, Some(vo.clone()))?;
        eprintln!("k = {k}: loaded in {secs:.1} s");
        let db = Db::open(dir.path(), options(Some(vo)))?;
        let leaves = db.value_stats().leaf_filters.max(1) as f64;
        let c = time_method(&db, &qs, Some(SearchMethod::Hierarchy), 1)?;
        let b = time_method(&db, &absent, Some(SearchMethod::Leaves), 1)?;
        let d = time_method(&db, &qs, Some(SearchMethod::Flat), 1)?;
        writeln!(
            md,
            "| {k} | {:.1} | {:.1}% | {:.1} | {:.3} | {:.1} | {:.1} | {:.1} |",
            per_query(c.stats.leaf_probes, &c),
            100.0 * per_query(c.stats.leaf_probes, &c) / leaves,
            per_query(c.stats.internal_probes, &c),
            per_query(b.stats.false_positive_tables, &b),
            per_query(c.stats.index_nanos, &c) / 1e3,
            per_query(b.stats.index_nanos, &b) / 1e3,
            per_query(d.stats.index_nanos, &d) / 1e3,
        )?;
    }
    Ok(md)
}

/// The write cost (the paper's Fig. 6) and the memory of the index (its
/// Table II): loading with and without value filters.
fn write(a: &Args) -> Result<String, Error> {
    let n: u64 = a.one("n", "10000000")?;
    let runs: usize = a.one("runs", "3")?;
    let mut md = String::new();
    writeln!(
        md,
        "### Write cost and memory, {} unique values (median of {runs} loads)\n",
        millions(n)
    )?;
    writeln!(md, "| value filters | load s | tables | table MB | leaf filters MB | internal filters MB | flat slices MB |")?;
    writeln!(md, "|---|---:|---:|---:|---:|---:|---:|")?;
    let hierarchy_only = value_options(2_000_000, 3, None).method(SearchMethod::Hierarchy);
    for (label, vo) in [
        ("none", None),
        (
            "m = 2,000,000 bits, d = 3, method flat (default)",
            Some(value_options(2_000_000, 3, None)),
        ),
        (
            "m = 2,000,000 bits, d = 3, method hierarchy (no slices kept)",
            Some(hierarchy_only),
        ),
    ] {
        let mut secs = Vec::new();
        let mut row = String::new();
        for _ in 0..runs {
            let dir = tempfile::tempdir_in(a.dir())?;
            secs.push(load(dir.path(), n, 1.0, vo.clone())?);
            let db = Db::open(dir.path(), options(vo.clone()))?;
            let s = db.stats();
            let v = db.value_stats();
            let kept = vo.as_ref().is_some_and(|o| o.method == SearchMethod::Flat);
            let flat = if kept {
                v.leaf_filters.div_ceil(64) as f64 * 64.0 * v.leaf_filter_bytes as f64
                    / v.leaf_filters.max(1) as f64
            } else {
                0.0
            };
            row = format!(
                "{} | {:.0} | {:.1} | {:.1} | {:.1}",
                tables(&db),
                s.levels.iter().map(|l| l.file_bytes).sum::<u64>() as f64 / 1e6,
                v.leaf_filter_bytes as f64 / 1e6,
                v.internal_filter_bytes as f64 / 1e6,
                flat / 1e6,
            );
        }
        writeln!(
            md,
            "| {label} | {:.1} | {row} |",
            amq_bench::lsm::median(&mut secs)
        )?;
    }
    Ok(md)
}

/// Path update against rebuild, while a store is loaded with compactions.
fn updates(a: &Args) -> Result<String, Error> {
    let n: u64 = a.one("n", "2000000")?;
    let mut md = String::new();
    writeln!(
        md,
        "### Hierarchy upkeep: {} entries loaded with leveled compaction, 512 KiB memtable\n",
        millions(n)
    )?;
    writeln!(md, "| strategy | hierarchy updates | path updates | rebuilds | µs per update (mean) | flat µs per update (mean) | leaves at the end |")?;
    writeln!(md, "|---|---:|---:|---:|---:|---:|---:|")?;
    for (strategy, label) in [
        (UpdateStrategy::PathUpdate, "path update"),
        (UpdateStrategy::Rebuild, "rebuild"),
        (UpdateStrategy::Auto, "auto (cost model)"),
    ] {
        let dir = tempfile::tempdir_in(a.dir())?;
        let vo = value_options(2_000_000, 3, None).update(strategy);
        let opts = options(Some(vo))
            .memtable_bytes(MEMTABLE_BYTES / 7)
            .table_bytes(512 << 10)
            .auto_compact(true);
        let db = Db::open(dir.path(), opts)?;
        let mut b = amq_lsm::WriteBatch::new();
        for i in 0..n {
            let j = amq::hash::remix(i, 7);
            b.put(amq_bench::value::key(j % (4 * n)), amq_bench::value::value(i));
            if b.len() == 1000 {
                db.write(std::mem::take(&mut b))?;
            }
        }
        db.write(b)?;
        db.flush()?;
        let s = db.value_stats();
        let updates = (s.path_updates + s.rebuilds).max(1);
        writeln!(
            md,
            "| {label} | {} | {} | {} | {:.0} | {:.0} | {} |",
            s.path_updates + s.rebuilds,
            s.path_updates,
            s.rebuilds,
            s.hierarchy_update_nanos as f64 / 1e3 / updates as f64,
            s.flat_update_nanos as f64 / 1e3 / updates as f64,
            s.leaf_filters
        )?;
    }
    Ok(md)
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.sub.as_str() {
        "fig8" => fig8(&args),
        "filters" => filters(&args),
        "domain" => domain(&args),
        "updates" => updates(&args),
        "probes" => probes(&args),
        "write" => write(&args),
        s => Err(format!("unknown subcommand {s}").into()),
    };
    match result {
        Ok(md) => {
            println!(
                "<!-- value_report {} on {} -->\n{md}",
                args.sub,
                amq_bench::report::cpu_model()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
