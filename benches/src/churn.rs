//! One key at a time: the report's table of insert and remove times for the
//! deletable filters, each key through [`Deletable::insert`] and
//! [`Deletable::remove`] (no batch API), as a cache or a dedup set uses them.
//!
//! A round, for every filter in turn: an empty filter sized for n keys
//! takes the n keys one by one (timed), then gives them all back one by one
//! (timed; every remove must find its key). The filters are interleaved round by round, as in
//! [`crate::report`], and each time is the median of the rounds.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use crate::{Deletable, DeletableVisitor};

/// What [`Churn`] measured for one filter.
#[derive(Debug, Clone, PartialEq)]
pub struct ChurnRow {
    /// [`Subject::NAME`](crate::Subject::NAME).
    pub name: &'static str,
    /// Median ns per insert, into an empty filter sized for the keys.
    pub insert_ns: f64,
    /// Median ns per remove of a present key.
    pub remove_ns: f64,
    /// Inserts refused or removes that missed, over all rounds: must be 0.
    pub failures: usize,
}

type Pass<'k> = Box<dyn Fn() -> (f64, f64, usize) + 'k>;

/// The [`DeletableVisitor`] that times inserts and removes one key at a
/// time: visit every filter, then [`finish`](Churn::finish).
pub struct Churn<'k> {
    keys: &'k [u64],
    runs: usize,
    pending: Vec<(&'static str, Pass<'k>)>,
}

impl<'k> Churn<'k> {
    /// Times over `keys`, `runs` rounds (at least 1).
    pub fn new(keys: &'k [u64], runs: usize) -> Self {
        Churn {
            keys,
            runs: runs.max(1),
            pending: Vec::new(),
        }
    }

    /// Runs the rounds: one row per visited filter, in visiting order.
    pub fn finish(self) -> Vec<ChurnRow> {
        let mut times: Vec<(Vec<f64>, Vec<f64>, usize)> = vec![Default::default(); self.pending.len()];
        for round in 0..self.runs {
            eprintln!("timing round {} of {} (one key at a time)", round + 1, self.runs);
            for ((_, pass), t) in self.pending.iter().zip(&mut times) {
                let (insert, remove, failures) = pass();
                t.0.push(insert);
                t.1.push(remove);
                t.2 += failures;
            }
        }
        self.pending
            .iter()
            .zip(times)
            .map(|((name, _), (mut insert, mut remove, failures))| ChurnRow {
                name,
                insert_ns: median(&mut insert),
                remove_ns: median(&mut remove),
                failures,
            })
            .collect()
    }
}

impl DeletableVisitor for Churn<'_> {
    fn visit<D: Deletable>(&mut self) {
        let keys = self.keys;
        let pass = move || {
            let Ok(mut filter) = D::with_capacity(keys.len()) else {
                return (f64::NAN, f64::NAN, keys.len());
            };
            let per_key = |start: Instant| start.elapsed().as_nanos() as f64 / keys.len().max(1) as f64;
            let start = Instant::now();
            let mut refused = 0;
            for &k in black_box(keys) {
                refused += usize::from(!filter.insert(k));
            }
            let insert = per_key(start);
            let start = Instant::now();
            let mut missed = 0;
            for &k in black_box(keys) {
                missed += usize::from(!filter.remove(k));
            }
            let remove = per_key(start);
            (insert, remove, refused + missed)
        };
        self.pending.push((D::NAME, Box::new(pass)));
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The rows as a markdown table.
pub fn churn_markdown(rows: &[ChurnRow]) -> String {
    let mut md = String::from(
        "\n### Deletable filters, one key at a time (insert into an empty filter sized for n; remove every key)\n\n\
         | filter | insert ns | remove ns | refused or missed |\n|---|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {:.1} | {:.1} | {} |",
            r.name, r.insert_ns, r.remove_ns, r.failures
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::ours::QuotientSameAsQfilter;
    use crate::keys::KeySet;

    #[test]
    fn every_key_goes_in_and_comes_out() {
        let keys = KeySet::new(5_000, 0);
        let mut churn = Churn::new(&keys.present, 2);
        churn.visit::<QuotientSameAsQfilter>();
        let rows = churn.finish();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].failures, 0);
        assert!(rows[0].insert_ns > 0.0 && rows[0].remove_ns > 0.0);
        assert!(churn_markdown(&rows).contains("| amq-Quotient |"));
    }
}
