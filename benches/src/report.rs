//! The comparison report: for every filter, space, measured FPR and the
//! median time of build, hit and miss queries, by simple repeated timing.
//!
//! Criterion gives the careful per-operation numbers; this gives one table
//! (and the space/FPR chart of [`crate::svg`]) over every filter at once.
//! Each time is the median of `runs` passes; a pass times a whole operation
//! (all n builds keys, or a pool of 1M queries) with one `Instant`, so timer
//! overhead is nothing.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use crate::keys::{KeySet, BATCH, POOL};
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

/// The [`Visitor`] that measures each filter into a [`Row`].
pub struct Measure<'k> {
    keys: &'k KeySet,
    runs: usize,
    section: String,
    /// Rows measured so far, in visiting order.
    pub rows: Vec<Row>,
    /// Filters that failed to build, with the error (they get no row).
    pub failures: Vec<String>,
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
        }
    }

    /// Starts a new section: later rows carry this heading.
    pub fn section(&mut self, heading: &str) {
        self.section = heading.to_string();
    }
}

impl Visitor for Measure<'_> {
    fn visit<S: Subject>(&mut self) {
        let present = &self.keys.present;
        let absent = &self.keys.absent;
        let n = present.len();
        eprintln!("measuring {} over {n} keys", S::NAME);

        // A filter that cannot be built over these keys is reported, not fatal.
        let filter = match S::build(present) {
            Ok(filter) => filter,
            Err(e) => {
                eprintln!("{e}");
                self.failures.push(e);
                return;
            }
        };
        let build_ns = median_ns(self.runs, n, || {
            black_box(S::build(black_box(present)).ok());
        });
        let false_negatives = present.iter().filter(|&&k| !filter.contains(k)).count();
        let false_positives = absent.iter().filter(|&&k| filter.contains(k)).count();

        let hits = self.keys.hit_pool(POOL.min(n.max(1)).div_ceil(BATCH) * BATCH);
        let misses = &absent[..absent.len().min(POOL)];
        let hit_ns = median_ns(self.runs, hits.all().len(), || {
            black_box(count_present(&filter, black_box(hits.all())));
        });
        let miss_ns = median_ns(self.runs, misses.len(), || {
            black_box(count_present(&filter, black_box(misses)));
        });
        let many_ns = S::HAS_BATCH.then(|| {
            let mut out = vec![false; BATCH];
            median_ns(self.runs, misses.len(), || {
                for chunk in misses.chunks(BATCH) {
                    filter.contains_many(black_box(chunk), &mut out[..chunk.len()]);
                    black_box(&out);
                }
            })
        });

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
            build_ns,
            hit_ns,
            miss_ns,
            many_ns,
        });
    }
}

fn count_present<S: Subject>(filter: &S, keys: &[u64]) -> usize {
    keys.iter().map(|&k| filter.contains(k) as usize).sum()
}

/// Median over `runs` runs of `f`, in ns per item for `items` items.
fn median_ns(runs: usize, items: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64 / items.max(1) as f64
        })
        .collect();
    median(&mut times)
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
        let row = &m.rows[0];
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
