//! Range-filter workloads and their measurement, for `benches/range.rs` and
//! `src/bin/range_report.rs`.
//!
//! A workload is a directory of files in the format range-filter
//! benchmarks (Grafite's among them) exchange: each file is a `u64` count
//! followed by that many raw little-endian `u64`s. `keys` holds the keys;
//! `left` and `right` the query ranges, query `i` being `left[i]..=right[i]`
//! (both ends included); `point` point queries (optional here).
//! [`Workload::generate`] writes such a directory from a seed, so the report
//! runs without another benchmark's generator.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use amq::hash::remix;
use amq::range::RangeFilter;

/// The files of a workload.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Keys, in the file's order (any order, duplicates possible).
    pub keys: Vec<u64>,
    /// Query ranges, `left[i]..=right[i]`.
    pub left: Vec<u64>,
    /// Inclusive right ends, as many as `left`.
    pub right: Vec<u64>,
    /// Point queries (empty when the directory has no `point` file).
    pub point: Vec<u64>,
}

/// How generated queries sit relative to the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    /// Queries start anywhere in `u64`.
    Uniform,
    /// Queries start a short random distance (1 to 1,024) after a key: the
    /// correlated workload that defeats heuristic range filters.
    Correlated,
}

impl Dist {
    /// `uniform` or `correlated`.
    pub fn parse(s: &str) -> Option<Dist> {
        match s {
            "uniform" => Some(Dist::Uniform),
            "correlated" => Some(Dist::Correlated),
            _ => None,
        }
    }
}

/// Reads one file: a count, then that many little-endian `u64`s.
pub fn read_u64s(path: &Path) -> io::Result<Vec<u64>> {
    let bytes = fs::read(path)?;
    let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {why}", path.display()));
    let (count, rest) = bytes
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("shorter than its count"))?;
    let count = u64::from_le_bytes(*count);
    if rest.len() as u64 != count.saturating_mul(8) {
        return Err(bad("length is not 8 bytes per counted value"));
    }
    Ok(rest
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// Writes one file in the same format.
pub fn write_u64s(path: &Path, values: &[u64]) -> io::Result<()> {
    let mut w = BufWriter::new(fs::File::create(path)?);
    w.write_all(&(values.len() as u64).to_le_bytes())?;
    for v in values {
        w.write_all(&v.to_le_bytes())?;
    }
    w.flush()
}

/// The sorted, distinct keys, and whether a range holds one of them.
#[derive(Debug, Clone)]
pub struct SortedKeys(Vec<u64>);

impl SortedKeys {
    /// Sorts and deduplicates `keys`.
    pub fn new(keys: &[u64]) -> Self {
        let mut v = keys.to_vec();
        v.sort_unstable();
        v.dedup();
        SortedKeys(v)
    }

    /// Whether some key lies in `lo..=hi`.
    pub fn any_in(&self, lo: u64, hi: u64) -> bool {
        let i = self.0.partition_point(|&k| k < lo);
        self.0.get(i).is_some_and(|&k| k <= hi)
    }

    /// The distinct keys, in order.
    pub fn as_slice(&self) -> &[u64] {
        &self.0
    }
}

impl Workload {
    /// Reads `keys` from `dir` (or, where `dir` has none, from its parent:
    /// the Grafite benchmark's `workload_gen` writes one `keys` file beside
    /// a directory of queries per distribution and length), and `left`,
    /// `right` and `point` where present (a directory of point queries only
    /// has no ranges).
    pub fn read(dir: &Path) -> io::Result<Workload> {
        let optional = |name: &str| match read_u64s(&dir.join(name)) {
            Ok(v) => Ok(v),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        };
        let keys = match (dir.join("keys").exists(), dir.parent()) {
            (false, Some(parent)) if parent.join("keys").exists() => read_u64s(&parent.join("keys"))?,
            _ => read_u64s(&dir.join("keys"))?,
        };
        let left = optional("left")?;
        let right = optional("right")?;
        if left.len() != right.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "left and right differ in length",
            ));
        }
        let point = optional("point")?;
        Ok(Workload {
            keys,
            left,
            right,
            point,
        })
    }

    /// Keeps the first `n` ranges and the first `n` point queries (as a
    /// benchmark that runs a file's first `n` queries does).
    pub fn truncate(&mut self, n: usize) {
        self.left.truncate(n);
        self.right.truncate(n);
        self.point.truncate(n);
    }

    /// Writes the four files into `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)?;
        write_u64s(&dir.join("keys"), &self.keys)?;
        write_u64s(&dir.join("left"), &self.left)?;
        write_u64s(&dir.join("right"), &self.right)?;
        write_u64s(&dir.join("point"), &self.point)
    }

    /// `n` uniform random keys; `queries` empty ranges, their lengths taken
    /// in turn from `range_lens`, placed by `dist`; `queries` point queries
    /// that are not keys. Reproducible from `seed`.
    pub fn generate(n: usize, queries: usize, range_lens: &[u64], dist: Dist, seed: u64) -> Workload {
        let keys: Vec<u64> = (0..n as u64).map(|i| remix(i, seed)).collect();
        let sorted = SortedKeys::new(&keys);
        let (mut left, mut right) = (Vec::with_capacity(queries), Vec::with_capacity(queries));
        let mut draw = 0u64;
        let mut next = || {
            draw += 1;
            remix(draw, seed ^ 0x5eed)
        };
        for i in 0..queries {
            let len = range_lens[i % range_lens.len()].max(1);
            loop {
                let lo = match dist {
                    Dist::Uniform => next(),
                    Dist::Correlated if !sorted.as_slice().is_empty() => {
                        let k = sorted.as_slice()[(next() % sorted.as_slice().len() as u64) as usize];
                        k.wrapping_add(1 + next() % 1024)
                    }
                    Dist::Correlated => next(),
                };
                let Some(hi) = lo.checked_add(len - 1) else {
                    continue;
                };
                if !sorted.any_in(lo, hi) {
                    left.push(lo);
                    right.push(hi);
                    break;
                }
            }
        }
        let point = std::iter::repeat_with(next)
            .filter(|&x| !sorted.any_in(x, x))
            .take(queries)
            .collect();
        Workload {
            keys,
            left,
            right,
            point,
        }
    }
}

/// The 95% Wilson score interval of `hits` successes in `trials`.
pub fn wilson95(hits: u64, trials: u64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let (z, n) = (1.959_964, trials as f64);
    let p = hits as f64 / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// False positives among `ranges` (all empty) and the median time per
/// query over `runs` passes, in nanoseconds: one at a time, and as one
/// batch (`RangeFilter::may_contain_ranges`, which must agree).
pub fn time_ranges(f: &dyn RangeFilter, ranges: &[(u64, u64)], runs: usize) -> (u64, f64, f64) {
    let (mut single, mut batched) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let mut positives = 0;
    let mut out = vec![false; ranges.len()];
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        positives = ranges
            .iter()
            .filter(|&&(lo, hi)| f.may_contain_range(lo, hi))
            .count() as u64;
        single.push(start.elapsed().as_nanos() as f64 / ranges.len().max(1) as f64);
        let start = Instant::now();
        f.may_contain_ranges(ranges, &mut out);
        batched.push(start.elapsed().as_nanos() as f64 / ranges.len().max(1) as f64);
        assert_eq!(
            out.iter().filter(|&&o| o).count() as u64,
            positives,
            "batch and single queries disagree"
        );
    }
    single.sort_by(f64::total_cmp);
    batched.sort_by(f64::total_cmp);
    (positives, single[single.len() / 2], batched[batched.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_generated_ranges_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        for dist in [Dist::Uniform, Dist::Correlated] {
            let w = Workload::generate(1_000, 500, &[1, 4, 1 << 20], dist, 9);
            w.write(dir.path()).unwrap();
            let back = Workload::read(dir.path()).unwrap();
            assert_eq!(
                (back.keys, &back.left, &back.right, back.point.len()),
                (w.keys.clone(), &w.left, &w.right, 500)
            );
            let sorted = SortedKeys::new(&w.keys);
            for (&lo, &hi) in w.left.iter().zip(&w.right) {
                assert!(!sorted.any_in(lo, hi));
                assert!([1, 4, 1 << 20].contains(&(hi - lo + 1)));
            }
        }
        // A directory of queries beside the keys, as Grafite's generator
        // lays them out.
        let queries = dir.path().join("4_quniform");
        fs::create_dir(&queries).unwrap();
        write_u64s(&queries.join("left"), &[5]).unwrap();
        write_u64s(&queries.join("right"), &[8]).unwrap();
        let beside = Workload::read(&queries).unwrap();
        assert_eq!(
            (beside.keys.len(), beside.left, beside.point.len()),
            (1_000, vec![5], 0)
        );
        fs::write(dir.path().join("keys"), [1, 0, 0, 0, 0, 0, 0, 0, 7]).unwrap();
        assert!(Workload::read(dir.path()).is_err());
    }

    #[test]
    fn wilson_brackets_the_rate() {
        let (lo, hi) = wilson95(100, 10_000);
        assert!(lo < 0.01 && hi > 0.01 && hi - lo < 0.005);
        assert_eq!(wilson95(0, 10).0, 0.0);
    }
}
