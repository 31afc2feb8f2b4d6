//! Filters that grow with no size given: amq's `ExpandingQuotientFilter`,
//! `qfilter` made resizeable up to the final count, and
//! `growable-bloom-filter` (a scalable Bloom filter), each filled from empty
//! to `--max` keys, measured at every power of ten; beside them at the end,
//! amq's `QuotientFilter` sized in advance for `--max` keys.
//!
//! ```text
//! cargo run --release -p amq-bench --bin growth_report --
//!     [--max 100000000] [--fpr 0.01] [--probes 1000000] [--svg docs/growth.svg]
//! ```
//!
//! At each checkpoint: the measured FPR on `--probes` absent keys, heap
//! bits per key (every byte the filter has allocated, counted by this
//! binary's allocator), and the median ns of a query over the absent keys
//! and over as many present ones. amq and `qfilter` are given the key's
//! 64-bit hash (`hash_u64`); `growable-bloom-filter` hashes the `u64` key
//! itself (it has no prehashed API). The verdicts: amq's FPR within 1.5× of
//! the target at every checkpoint; at the end, its memory and query time
//! within 1.5× of the filter sized in advance, and its space × query time
//! below each other's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use amq::hash::remix;
use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter, QuotientFilter};
use amq::{hash_u64, Filter, FilterSizing, Insert};
use amq_bench::report::{cpu_model, verdict};
use amq_bench::svg::{log_log_chart, Series};

/// The system allocator, counting the bytes live: the one way to read the
/// memory of a filter that does not report it.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments, so
// `System`'s guarantees hold; the counter is only arithmetic beside it.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

struct Args {
    max: u64,
    fpr: f64,
    probes: u64,
    svg: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        max: 100_000_000,
        fpr: 0.01,
        probes: 1_000_000,
        svg: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--max" => {
                args.max = value()?
                    .replace('_', "")
                    .parse()
                    .map_err(|e| format!("--max: {e}"))?
            }
            "--fpr" => args.fpr = value()?.parse().map_err(|e| format!("--fpr: {e}"))?,
            "--probes" => args.probes = value()?.parse().map_err(|e| format!("--probes: {e}"))?,
            "--svg" => args.svg = Some(value()?),
            _ => return Err("usage: growth_report [--max N] [--fpr P] [--probes N] [--svg FILE]".into()),
        }
    }
    Ok(args)
}

/// The `i`-th present key and the `i`-th absent one (disjoint: another
/// seed, and 2^64 values).
fn present(i: u64) -> u64 {
    remix(i, 0x6772_6f77)
}
fn absent(i: u64) -> u64 {
    remix(i, 0x6162_7365)
}

/// A filter filled by inserts, as the report drives it.
trait Growing {
    fn insert(&mut self, key: u64);
    fn contains(&self, key: u64) -> bool;
}

/// An amq filter, given the key's hash.
struct Amq<F>(F);
impl<F: Filter + Insert> Growing for Amq<F> {
    #[inline]
    fn insert(&mut self, key: u64) {
        self.0.insert_hash(hash_u64(key)).expect("amq insert");
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(hash_u64(key))
    }
}

const AMQ: &str = "amq ExpandingQuotientFilter";
const SIZED: &str = "amq QuotientFilter sized in advance";
const QFILTER: &str = "qfilter, resizeable";
const GROWABLE: &str = "growable-bloom-filter";

struct Qf(qfilter::Filter);
impl Growing for Qf {
    #[inline]
    fn insert(&mut self, key: u64) {
        self.0
            .insert_fingerprint(false, hash_u64(key).get())
            .expect("qfilter insert");
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_fingerprint(hash_u64(key).get())
    }
}

struct Growable(growable_bloom_filter::GrowableBloom);
impl Growing for Growable {
    #[inline]
    fn insert(&mut self, key: u64) {
        self.0.insert(key);
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(key)
    }
}

/// One checkpoint's figures.
#[derive(Clone, Copy)]
struct Point {
    keys: u64,
    fpr: f64,
    bits_per_key: f64,
    absent_ns: f64,
    present_ns: f64,
}

/// Median ns per query of `f` over `keys`, in 5 rounds; and how many
/// answered yes.
fn time_queries<F: Growing>(f: &F, keys: &[u64]) -> (f64, usize) {
    let mut times = Vec::new();
    let mut yes = 0;
    for _ in 0..5 {
        let start = Instant::now();
        yes = keys.iter().filter(|&&k| f.contains(k)).count();
        times.push(start.elapsed().as_secs_f64() * 1e9 / keys.len() as f64);
    }
    times.sort_by(f64::total_cmp);
    (times[2], yes)
}

/// Fills `f` (made with `LIVE` at `base`) to `max` keys, measuring at every
/// power of ten (`checkpoints`).
fn grow<F: Growing>(
    name: &str,
    mut f: F,
    base: usize,
    max: u64,
    probes: &[u64],
    checkpoints: &[u64],
) -> Vec<Point> {
    let mut points = Vec::new();
    let mut n = 0u64;
    let start = Instant::now();
    for &c in checkpoints {
        while n < c {
            f.insert(present(n));
            n += 1;
        }
        let bits = (LIVE.load(Ordering::Relaxed) - base) as f64 * 8.0 / n as f64;
        let (absent_ns, false_positives) = time_queries(&f, probes);
        let sample: Vec<u64> = (0..probes.len() as u64).map(|i| present(i % n)).collect();
        let (present_ns, found) = time_queries(&f, &sample);
        assert_eq!(found, sample.len(), "{name}: a false negative");
        points.push(Point {
            keys: n,
            fpr: false_positives as f64 / probes.len() as f64,
            bits_per_key: bits,
            absent_ns,
            present_ns,
        });
    }
    eprintln!("{name}: {max} keys in {:.1} s", start.elapsed().as_secs_f64());
    points
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut checkpoints: Vec<u64> = std::iter::successors(Some(1_000u64), |c| Some(c * 10))
        .take_while(|&c| c <= args.max)
        .collect();
    if checkpoints.last() != Some(&args.max) {
        checkpoints.push(args.max);
    }
    let probes: Vec<u64> = (0..args.probes).map(absent).collect();

    let base = LIVE.load(Ordering::Relaxed);
    let amq = {
        let f = ExpandingQuotientFilter::new(ExpandingOptions::new(args.fpr)).expect("amq");
        grow(AMQ, Amq(f), base, args.max, &probes, &checkpoints)
    };
    let base = LIVE.load(Ordering::Relaxed);
    let qf = {
        let f = qfilter::Filter::new_resizeable(1_000, args.max, args.fpr).expect("qfilter");
        grow(QFILTER, Qf(f), base, args.max, &probes, &checkpoints)
    };
    let base = LIVE.load(Ordering::Relaxed);
    let growable = grow(
        GROWABLE,
        Growable(growable_bloom_filter::GrowableBloom::new(args.fpr, 1_000)),
        base,
        args.max,
        &probes,
        &checkpoints,
    );
    let base = LIVE.load(Ordering::Relaxed);
    let sized = {
        let f = QuotientFilter::new(args.max as usize, FilterSizing::Fpr(args.fpr)).expect("amq sized");
        grow(SIZED, Amq(f), base, args.max, &probes, &[args.max])
    };

    println!(
        "# Growth from 1,000 to {} keys, target FPR {} ({}, one run)\n",
        amq_bench::svg::thousands(args.max as usize),
        args.fpr,
        cpu_model()
    );
    println!("| keys | filter | FPR | bits/key | absent query ns | present query ns |");
    println!("|-----:|--------|----:|---------:|----------------:|-----------------:|");
    let rows: [(&str, &[Point]); 3] = [(AMQ, &amq), (QFILTER, &qf), (GROWABLE, &growable)];
    for (i, &c) in checkpoints.iter().enumerate() {
        for (name, points) in rows {
            let p = points[i];
            println!(
                "| {} | {name} | {:.3}% | {:.2} | {:.1} | {:.1} |",
                amq_bench::svg::thousands(c as usize),
                p.fpr * 100.0,
                p.bits_per_key,
                p.absent_ns,
                p.present_ns
            );
        }
    }
    let s = sized[0];
    println!(
        "| {} | {} | {:.3}% | {:.2} | {:.1} | {:.1} |\n",
        amq_bench::svg::thousands(args.max as usize),
        SIZED,
        s.fpr * 100.0,
        s.bits_per_key,
        s.absent_ns,
        s.present_ns
    );

    // A filter sized in advance for each checkpoint's count takes 6- or
    // 7-bit remainders, as its load allows: the ratio swings with it.
    let ratios: Vec<String> = checkpoints
        .iter()
        .zip(&amq)
        .map(|(&c, p)| {
            let sized = QuotientFilter::new(c as usize, FilterSizing::Fpr(args.fpr)).expect("amq sized");
            let bits = sized.size_in_bytes() as f64 * 8.0 / c as f64;
            format!("{:.2}", p.bits_per_key / bits)
        })
        .collect();
    println!(
        "- memory at each checkpoint against a filter sized in advance for it: {}×",
        ratios.join(" / ")
    );
    let end = *amq.last().expect("a checkpoint");
    let worst_fpr = amq.iter().map(|p| p.fpr / args.fpr).fold(0.0, f64::max);
    let space = end.bits_per_key / s.bits_per_key;
    let query = |p: Point| (p.absent_ns + p.present_ns) / 2.0;
    let slower = query(end) / query(s);
    let product = |p: Point| p.bits_per_key * query(p);
    println!(
        "- FPR within 1.5× of the target at every checkpoint: worst {worst_fpr:.2}× ({})",
        verdict(worst_fpr <= 1.5)
    );
    println!(
        "- memory at the end against the filter sized in advance: {space:.2}× ({})",
        verdict(space <= 1.5)
    );
    println!(
        "- query time at the end (mean of absent and present) against it: {slower:.2}× ({})",
        verdict(slower <= 1.5)
    );
    for (name, points) in [(QFILTER, &qf), (GROWABLE, &growable)] {
        let other = *points.last().expect("a checkpoint");
        println!(
            "- space × query time at the end against {name}: {:.2}× ({})",
            product(end) / product(other),
            verdict(product(end) < product(other))
        );
    }

    if let Some(path) = args.svg {
        let colours = ["#1f77b4", "#d62728", "#2ca02c"];
        let series: Vec<Series> = rows
            .iter()
            .zip(colours)
            .map(|(&(name, points), colour)| Series {
                label: name.to_string(),
                colour: colour.to_string(),
                dashed: name != AMQ,
                reference: false,
                // No false positive among the probes: off a log scale.
                points: points
                    .iter()
                    .filter(|p| p.fpr > 0.0)
                    .map(|p| (p.keys as f64, p.fpr))
                    .collect(),
            })
            .chain(std::iter::once(Series {
                label: format!("target {}", args.fpr),
                colour: "#777".to_string(),
                dashed: false,
                reference: true,
                points: vec![(checkpoints[0] as f64, args.fpr), (args.max as f64, args.fpr)],
            }))
            .collect();
        let chart = log_log_chart(
            &format!("Measured FPR while growing from 1,000 keys (target {})", args.fpr),
            "keys inserted",
            "measured FPR",
            &series,
        );
        if let Err(e) = std::fs::write(&path, chart) {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting allocator sees an allocation, its growth and its
    /// release (other test threads may allocate too: the figures are
    /// lower bounds, checked with room).
    #[test]
    fn the_allocator_counts_live_bytes() {
        let before = LIVE.load(Ordering::Relaxed);
        let mut v: Vec<u8> = Vec::with_capacity(1 << 24);
        assert!(LIVE.load(Ordering::Relaxed) >= before + (1 << 24) - (1 << 20));
        v.reserve_exact(1 << 25);
        v.push(1);
        assert!(LIVE.load(Ordering::Relaxed) >= before + (1 << 25) - (1 << 20));
        drop(v);
        assert!(LIVE.load(Ordering::Relaxed) < before + (1 << 22));
        let z = vec![0u64; 1 << 20];
        assert!(LIVE.load(Ordering::Relaxed) >= before + (8 << 20) - (1 << 20));
        drop(z);
    }
}
