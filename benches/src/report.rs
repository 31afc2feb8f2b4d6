//! The comparison report: for every filter, space, measured FPR and the
//! median time of build, hit and miss queries, by simple repeated timing.
//!
//! Criterion gives the careful per-operation numbers; this gives one table
//! (and the space/FPR chart of [`crate::svg`]) over every filter at once.
//! Each time is the median of `runs` passes; a pass times a whole operation
//! (all n builds keys, or a pool of 1M queries) with one `Instant`, so timer
//! overhead is nothing.
//!
//! **Interleaved rounds.** The hosts we measure on drift: the same binary has
//! run twice as slow an hour later, and by tens of percent within minutes.
//! Timing one filter's passes back to back and then the next filter's would
//! let that drift land between two filters and read as a difference between
//! them. So the filters of a section are all built first, then timed in
//! `runs` rounds, each round doing one pass of every operation of every filter
//! of the section (all builds, then all hit passes, then all miss passes, then
//! all batch passes); a slow spell then slows every filter's pass of that
//! round alike, and the medians and their ratios stay comparable.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use crate::keys::{KeySet, QueryPool, BATCH, POOL};
use crate::svg::thousands;
use crate::{Subject, Visitor};

/// What the report measured for one filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Which comparison the filter belongs to (a section heading).
    pub section: String,
    /// [`Subject::NAME`].
    pub name: &'static str,
    /// [`Subject::NOTE`].
    pub note: &'static str,
    /// Whether this is one of amq's filters.
    pub ours: bool,
    /// Keys built into the filter.
    pub keys: usize,
    /// Filter bytes × 8 / keys.
    pub bits_per_key: f64,
    /// False positives among the absent keys.
    pub false_positives: usize,
    /// Absent keys queried.
    pub absent: usize,
    /// Present keys the filter denied: must be 0.
    pub false_negatives: usize,
    /// What the filter's own formula predicts, if it has one.
    pub expected_fpr: Option<f64>,
    /// Median build time per key, ns.
    pub build_ns: f64,
    /// Median query time per present key, ns.
    pub hit_ns: f64,
    /// Median query time per absent key, ns.
    pub miss_ns: f64,
    /// Median time per absent key through the batch API, ns (batch filters only).
    pub many_ns: Option<f64>,
}

impl Row {
    /// `false_positives / absent`.
    pub fn fpr(&self) -> f64 {
        self.false_positives as f64 / self.absent.max(1) as f64
    }
}

/// The [`Visitor`] that measures each filter into a [`Row`]: space and FPR
/// when it is visited, times when its section is [finished](Measure::finish).
pub struct Measure<'k> {
    keys: &'k KeySet,
    runs: usize,
    section: String,
    /// Rows measured so far, in visiting order. Rows of the current section
    /// have NaN times until [`finish`](Measure::finish).
    pub rows: Vec<Row>,
    /// Filters that failed to build, with the error (they get no row).
    pub failures: Vec<String>,
    /// The current section's built filters, waiting for their timing rounds,
    /// with the index of their row.
    pending: Vec<(usize, Box<dyn Timed + 'k>)>,
}

/// One pass of each timed operation of a built filter.
trait Timed {
    /// Builds the filter again from the present keys (and drops it).
    fn build_pass(&self);
    /// Queries every key of the hit pool; returns how many were found.
    fn hit_pass(&self) -> usize;
    /// Queries the miss keys one at a time; returns how many were found.
    fn miss_pass(&self) -> usize;
    /// Queries the miss keys through the batch API, if the filter has one.
    fn many_pass(&mut self) -> Option<usize>;
    /// Keys in the hit pool.
    fn hit_len(&self) -> usize;
    /// Miss keys queried per pass.
    fn miss_len(&self) -> usize;
}

/// A built filter with the keys its passes use.
struct Built<'k, S> {
    filter: S,
    present: &'k [u64],
    hits: QueryPool,
    misses: &'k [u64],
    out: Vec<bool>,
}

impl<S: Subject> Timed for Built<'_, S> {
    fn build_pass(&self) {
        black_box(S::build(black_box(self.present)).ok());
    }
    fn hit_pass(&self) -> usize {
        count_present(&self.filter, black_box(self.hits.all()))
    }
    fn miss_pass(&self) -> usize {
        count_present(&self.filter, black_box(self.misses))
    }
    fn hit_len(&self) -> usize {
        self.hits.all().len()
    }
    fn miss_len(&self) -> usize {
        self.misses.len()
    }
    fn many_pass(&mut self) -> Option<usize> {
        S::HAS_BATCH.then(|| {
            let mut found = 0;
            for chunk in self.misses.chunks(BATCH) {
                let out = &mut self.out[..chunk.len()];
                self.filter.contains_many(black_box(chunk), out);
                found += black_box(&*out).iter().filter(|&&b| b).count();
            }
            found
        })
    }
}

impl<'k> Measure<'k> {
    /// Measures over `keys`, timing each operation `runs` times (at least 1).
    pub fn new(keys: &'k KeySet, runs: usize) -> Self {
        Measure {
            keys,
            runs: runs.max(1),
            section: String::new(),
            rows: Vec::new(),
            failures: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Starts a new section: finishes the current one, and later rows carry
    /// this heading.
    pub fn section(&mut self, heading: &str) {
        self.finish();
        self.section = heading.to_string();
    }

    /// Times the current section's filters in interleaved rounds and fills in
    /// their rows' times. Call once after the last visit.
    pub fn finish(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return;
        }
        let n = self.keys.present.len();
        let mut pending: Vec<_> = pending
            .into_iter()
            .map(|(row, t)| (row, t, Times::default()))
            .collect();
        for round in 0..self.runs {
            eprintln!("timing round {} of {} ({})", round + 1, self.runs, self.section);
            // Operation-major: every filter's build, then every filter's
            // hits, and so on. A build streams through far more memory than
            // the caches hold, so a query pass timed right after it would
            // start cold and partly measure the refill.
            for (_, t, times) in &mut pending {
                times.build.push(per_item(n, || t.build_pass()));
            }
            for (_, t, times) in &mut pending {
                let hits = t.hit_len();
                times.hit.push(per_item(hits, || {
                    black_box(t.hit_pass());
                }));
            }
            for (_, t, times) in &mut pending {
                let misses = t.miss_len();
                times.miss.push(per_item(misses, || {
                    black_box(t.miss_pass());
                }));
            }
            for (_, t, times) in &mut pending {
                let misses = t.miss_len();
                let start = Instant::now();
                if t.many_pass().is_some() {
                    times
                        .many
                        .push(start.elapsed().as_nanos() as f64 / misses.max(1) as f64);
                }
            }
        }
        for (row, _, mut times) in pending {
            let row = &mut self.rows[row];
            row.build_ns = median(&mut times.build);
            row.hit_ns = median(&mut times.hit);
            row.miss_ns = median(&mut times.miss);
            row.many_ns = (!times.many.is_empty()).then(|| median(&mut times.many));
        }
    }
}

/// The pass times (ns per item) of one filter, one entry per round.
#[derive(Default)]
struct Times {
    build: Vec<f64>,
    hit: Vec<f64>,
    miss: Vec<f64>,
    many: Vec<f64>,
}

impl<'k> Visitor for Measure<'k> {
    fn visit<S: Subject>(&mut self) {
        let keys: &'k KeySet = self.keys;
        let present = &keys.present;
        let absent = &keys.absent;
        let n = present.len();
        eprintln!("building {} over {n} keys", S::NAME);

        // A filter that cannot be built over these keys is reported, not fatal.
        let filter = match S::build(present) {
            Ok(filter) => filter,
            Err(e) => {
                eprintln!("{e}");
                self.failures.push(e);
                return;
            }
        };
        let false_negatives = present.iter().filter(|&&k| !filter.contains(k)).count();
        let false_positives = absent.iter().filter(|&&k| filter.contains(k)).count();

        self.rows.push(Row {
            section: self.section.clone(),
            name: S::NAME,
            note: S::NOTE,
            ours: S::NAME.starts_with("amq-"),
            keys: n,
            bits_per_key: filter.size_in_bytes() as f64 * 8.0 / n.max(1) as f64,
            false_positives,
            absent: absent.len(),
            false_negatives,
            expected_fpr: filter.expected_fpr(),
            build_ns: f64::NAN,
            hit_ns: f64::NAN,
            miss_ns: f64::NAN,
            many_ns: None,
        });
        let built = Built {
            filter,
            present,
            hits: keys.hit_pool(POOL.min(n.max(1)).div_ceil(BATCH) * BATCH),
            misses: &absent[..absent.len().min(POOL)],
            out: vec![false; BATCH],
        };
        self.pending.push((self.rows.len() - 1, Box::new(built)));
    }
}

fn count_present<S: Subject>(filter: &S, keys: &[u64]) -> usize {
    keys.iter().map(|&k| filter.contains(k) as usize).sum()
}

/// The time of one call of `f`, in ns per item for `items` items.
fn per_item(items: usize, f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_nanos() as f64 / items.max(1) as f64
}

/// The median (mean of the middle two for an even count); NaN if empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The rows as markdown: one table per section.
pub fn markdown(rows: &[Row]) -> String {
    let mut md = String::new();
    let mut section: Option<&str> = None;
    for row in rows {
        if section != Some(row.section.as_str()) {
            section = Some(&row.section);
            let _ = write!(
                md,
                "\n### {}\n\n\
                 | filter | bits/key | FPR measured | FPR expected | false neg. | build ns/key | hit ns | miss ns | contains_many ns/key | note |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
                row.section
            );
        }
        let _ = writeln!(
            md,
            "| {} | {:.2} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
            row.name,
            row.bits_per_key,
            format_fpr(row.false_positives, row.absent),
            row.expected_fpr.map_or("—".to_string(), percent),
            row.false_negatives,
            row.build_ns,
            row.hit_ns,
            row.miss_ns,
            row.many_ns.map_or("—".to_string(), |t| format!("{t:.1}")),
            row.note,
        );
    }
    md
}

/// A measured FPR as a percentage, or "0 of <absent>" when nothing was a false positive.
fn format_fpr(false_positives: usize, absent: usize) -> String {
    if false_positives == 0 {
        format!("0 of {}", thousands(absent))
    } else {
        percent(false_positives as f64 / absent as f64)
    }
}

/// A rate as a percentage with four decimals, or in scientific notation when
/// that would show too few digits.
fn percent(rate: f64) -> String {
    if rate >= 1e-5 {
        format!("{:.4}%", rate * 100.0)
    } else {
        format!("{:.2e}%", rate * 100.0)
    }
}

/// How a report prints a target's outcome: "met", or "**not met**" in bold.
pub fn verdict(met: bool) -> &'static str {
    match met {
        true => "met",
        false => "**not met**",
    }
}

/// The CPU's model name, from /proc/cpuinfo where there is one (what every
/// report prints beside its figures).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn measures_a_bloom_filter_without_false_negatives() {
        let keys = KeySet::new(20_000, 100_000);
        let mut m = Measure::new(&keys, 1);
        m.section("Bloom");
        m.visit::<amq::BlockedBloom>();
        assert!(m.rows[0].hit_ns.is_nan(), "timed before its section finished");
        m.finish();
        let row = &m.rows[0];
        assert!(row.hit_ns > 0.0 && row.miss_ns > 0.0 && row.build_ns > 0.0);
        assert_eq!(row.false_negatives, 0);
        assert!(row.ours);
        assert!((9.9..10.5).contains(&row.bits_per_key), "{}", row.bits_per_key);
        assert!((0.005..0.015).contains(&row.fpr()), "{}", row.fpr());
        assert!(row.many_ns.is_some());
        let md = markdown(&m.rows);
        assert!(md.contains("### Bloom"));
        assert!(md.contains("| amq-BlockedBloom |"));
    }

    /// A filter that never builds.
    struct Unbuildable;

    impl Subject for Unbuildable {
        const NAME: &'static str = "unbuildable";
        fn build(_: &[u64]) -> Result<Self, String> {
            Err("unbuildable: no".into())
        }
        fn contains(&self, _: u64) -> bool {
            true
        }
        fn size_in_bytes(&self) -> usize {
            0
        }
    }

    #[test]
    fn a_failed_build_is_recorded_not_fatal() {
        let keys = KeySet::new(1_000, 1_000);
        let mut m = Measure::new(&keys, 1);
        m.visit::<Unbuildable>();
        m.visit::<amq::StandardBloom>();
        assert_eq!(m.failures, vec!["unbuildable: no".to_string()]);
        assert_eq!(m.rows.len(), 1);
    }

    #[test]
    fn zero_false_positives_are_shown_as_a_count() {
        assert_eq!(format_fpr(0, 1_000_000), "0 of 1,000,000");
        assert_eq!(format_fpr(5, 1000), "0.5000%");
        assert_eq!(percent(2.3e-10), "2.30e-8%");
    }
}
