//! Ribbon against BinaryFuse8 at one (large) size, in one process.
//!
//! `cargo run --release -p amq-bench --example ribbon_scale -- N [ROUNDS] [R]`
//! builds Ribbon filters of R result bits (default 7; an FPR when R has a
//! decimal point: `0.01` is 1%) in the blocked layout without and with
//! bumping (`RibbonParams::with_blocked_layout`, `without_bumping`,
//! `with_bumping`), at exactly 7 bits also in the two-line layout without
//! and with bumping (`with_two_line_layout`), and a `BinaryFuse8` over N
//! random key hashes (default 100,000,000), then times, in
//! alternating rounds (default 5), a loop of `contains_hash` ("single") and
//! `contains_hashes` over 1,024 hashes at a time ("batch") of each, over 4M
//! random absent hashes, and prints the median of the rounds (ns per key)
//! with bits/key, the FPR measured over the 4M hashes, bits/key over
//! `log2(1/FPR measured)`, and build ns/key. Times are thread CPU time (Linux
//! `schedstat`), so they hold on a machine shared with other jobs.

use std::hint::black_box;

use amq::hash::remix;
use amq::{BinaryFuse8, Filter, KeyHash, Ribbon, RibbonParams};

fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ns| ns / 1e9)
        .unwrap_or_else(|| {
            use std::sync::OnceLock;
            static START: OnceLock<std::time::Instant> = OnceLock::new();
            START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
        })
}

/// `AnonHugePages` of the process, in kB (0 where unavailable).
fn huge_kb() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn single(f: &dyn Filter, probes: &[KeyHash]) -> f64 {
    let t = cpu_seconds();
    let hits = probes.iter().filter(|&&h| f.contains_hash(black_box(h))).count();
    black_box(hits);
    (cpu_seconds() - t) * 1e9 / probes.len() as f64
}

fn batch(f: &dyn Filter, probes: &[KeyHash], out: &mut [bool]) -> f64 {
    let t = cpu_seconds();
    for (p, o) in probes.chunks(1024).zip(out.chunks_mut(1024)) {
        f.contains_hashes(black_box(p), o);
    }
    black_box(&out);
    (cpu_seconds() - t) * 1e9 / probes.len() as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000_000);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    // R result bits, or an FPR when it has a decimal point (0.01: 1%).
    let base = match args.get(2) {
        Some(a) if a.contains('.') => RibbonParams::with_fpr(a.parse().expect("an FPR")).unwrap(),
        Some(a) => RibbonParams::with_result_bits(a.parse().expect("result bits")).unwrap(),
        None => RibbonParams::with_result_bits(7).unwrap(),
    };
    let keys: Vec<KeyHash> = (0..n as u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 42)))
        .collect();
    let probes: Vec<KeyHash> = (0..4_000_000u64)
        .map(|i| KeyHash::from_well_mixed(remix(i, 43)))
        .collect();

    let huge_before = huge_kb();
    let t = cpu_seconds();
    let ribbon = Ribbon::build_with(&keys, &base.with_blocked_layout().without_bumping()).unwrap();
    let ribbon_build = (cpu_seconds() - t) * 1e9 / n as f64;
    let huge_ribbon = huge_kb();
    let t = cpu_seconds();
    let two_lines = base
        .with_two_line_layout()
        .ok()
        .map(|p| Ribbon::build_with(&keys, &p.without_bumping()).unwrap());
    let two_lines_build = (cpu_seconds() - t) * 1e9 / n as f64;
    let huge_two_lines = huge_kb();
    let t = cpu_seconds();
    let bumped = Ribbon::build_with(&keys, &base.with_blocked_layout().with_bumping()).unwrap();
    let bumped_build = (cpu_seconds() - t) * 1e9 / n as f64;
    let t = cpu_seconds();
    let bumped_lines = base
        .with_two_line_layout()
        .ok()
        .map(|p| Ribbon::build_with(&keys, &p.with_bumping()).unwrap());
    let bumped_lines_build = (cpu_seconds() - t) * 1e9 / n as f64;
    let huge_two_lines = huge_kb().max(huge_two_lines);
    let t = cpu_seconds();
    let fuse = BinaryFuse8::build(&keys).unwrap();
    let fuse_build = (cpu_seconds() - t) * 1e9 / n as f64;
    eprintln!(
        "AnonHugePages gained (kB): ribbon {}, two-line {}, fuse8 {}",
        huge_ribbon.saturating_sub(huge_before),
        huge_two_lines.saturating_sub(huge_ribbon),
        huge_kb().saturating_sub(huge_two_lines)
    );
    drop(keys);
    if let Ok(s) = std::fs::read_to_string("/proc/self/smaps_rollup") {
        for line in s
            .lines()
            .filter(|l| l.starts_with("AnonHugePages") || l.starts_with("Rss"))
        {
            eprintln!("{line}");
        }
    }

    let mut out = vec![false; probes.len()];
    let mut filters: Vec<(&str, &dyn Filter)> = vec![("ribbon", &ribbon), ("fuse8", &fuse)];
    let mut builds = vec![ribbon_build, fuse_build];
    filters.push(("ribbon-bumped", &bumped));
    builds.push(bumped_build);
    if let Some(f) = &two_lines {
        filters.push(("ribbon-two-line", f));
        builds.push(two_lines_build);
    }
    if let Some(f) = &bumped_lines {
        filters.push(("ribbon-two-line-bumped", f));
        builds.push(bumped_lines_build);
    }
    let mut times = vec![[Vec::new(), Vec::new()]; filters.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in filters.iter().enumerate() {
            times[i][0].push(single(*f, &probes));
            times[i][1].push(batch(*f, &probes, &mut out));
        }
    }
    let mut medians = Vec::new();
    for (i, (name, f)) in filters.iter().enumerate() {
        let [s, b] = times[i].clone();
        let (s, b) = (median(s), median(b));
        medians.push(s);
        f.contains_hashes(&probes, &mut out);
        let fpr = out.iter().filter(|&&o| o).count() as f64 / probes.len() as f64;
        println!(
            "n={n} {name}: bits/key={:.3} fpr={:.4}% over-limit={:.4} build={:.1} ns/key single={s:.1} ns batch={b:.1} ns/key",
            f.bits_per_key(),
            fpr * 100.0,
            f.bits_per_key() / -fpr.log2(),
            builds[i],
        );
    }
    println!(
        "ribbon single / fuse8 single = {:.2} (kernel {})",
        medians[0] / medians[1],
        ribbon.query_kernel()
    );
    println!(
        "ribbon-bumped single / fuse8 single = {:.2}; / blocked {:.2}",
        medians[2] / medians[1],
        medians[2] / medians[0]
    );
    if bumped_lines.is_some() {
        println!(
            "ribbon-two-line-bumped single / fuse8 single = {:.2}; / two-line {:.2}",
            medians[4] / medians[1],
            medians[4] / medians[3]
        );
    }
    if let Some(f) = &two_lines {
        println!(
            "ribbon-two-line single / fuse8 single = {:.2}; bumped / two-line {:.2}; attempts {} / shards {}",
            medians[3] / medians[1],
            medians[2] / medians[3],
            f.attempts(),
            f.num_shards()
        );
    }
}
