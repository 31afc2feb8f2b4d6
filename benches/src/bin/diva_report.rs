//! amq's range filters on a workload file of the Diva benchmark (Eslami,
//! Dayan et al., VLDB 2025; its `workload_gen` writes them), to compare
//! with the numbers its own filters print on the same file.
//!
//! ```text
//! cargo run --release -p amq-bench --bin diva_report -- --file FILE [--bpk 12,16,20] [--runs 3] [--fit 256]
//! ```
//!
//! The file, as that benchmark writes it: a byte (1: byte-string keys, 0:
//! `u64` keys), then records, each an opcode byte: `0` a bulk load (a
//! `u32` count, then each key: a `u16` length and its bytes, or a `u64`),
//! `3` a query (its two inclusive bounds, written as keys, and a byte:
//! whether the range holds a key), `4` a timer mark (one more byte), `6` a
//! flush; integers little-endian. Inserts and deletes (`1`, `2`) are
//! refused: amq's byte-key range filter is static.
//!
//! Byte keys are measured with `KeyRangeFilter::build` and, with `--fit N`,
//! `KeyRangeFilter::build_for_scans` fitted to the first `N` queries (the
//! FPR then over the others); `u64` keys with `GrafiteRange`, and as
//! big-endian byte keys (what the benchmark hands its string filters) with
//! the fitted `KeyRangeFilter`. Printed:
//! bits per key measured, build time, the FPR over the empty ranges and
//! the median nanoseconds per query over `--runs` passes.

use std::ops::Bound;
use std::process::ExitCode;
use std::time::Instant;

use amq::range::{GrafiteRange, InfixRange, KeyRangeFilter, RangeFilter, RangeSizing};

/// A workload: its keys and its queries' bounds with their answers.
enum Workload {
    Bytes {
        keys: Vec<Vec<u8>>,
        queries: Vec<(Vec<u8>, Vec<u8>, bool)>,
    },
    Ints {
        keys: Vec<u64>,
        queries: Vec<(u64, u64, bool)>,
    },
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn key(&mut self) -> Result<Vec<u8>, String> {
        let n = usize::from(self.u16()?);
        Ok(self.take(n)?.to_vec())
    }
}

fn read(bytes: &[u8]) -> Result<Workload, String> {
    let mut r = Reader { bytes, at: 0 };
    let strings = r.u8()? != 0;
    let (mut skeys, mut squeries, mut ikeys, mut iqueries) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    while r.at < bytes.len() {
        match r.u8()? {
            0 => {
                for _ in 0..r.u32()? {
                    if strings {
                        skeys.push(r.key()?);
                    } else {
                        ikeys.push(r.u64()?);
                    }
                }
            }
            3 if strings => squeries.push((r.key()?, r.key()?, r.u8()? != 0)),
            3 => iqueries.push((r.u64()?, r.u64()?, r.u8()? != 0)),
            4 => {
                r.u8()?;
            }
            5 | 6 => {}
            op => {
                return Err(format!(
                    "opcode {op} at byte {}: only bulk loads and queries",
                    r.at - 1
                ))
            }
        }
    }
    Ok(if strings {
        Workload::Bytes {
            keys: skeys,
            queries: squeries,
        }
    } else {
        Workload::Ints {
            keys: ikeys,
            queries: iqueries,
        }
    })
}

/// False positives over the empty queries, and the median ns per query.
fn measure(runs: usize, n: usize, mut ask: impl FnMut(usize) -> (bool, bool)) -> (u64, u64, f64) {
    let mut times = Vec::new();
    let (mut fp, mut empty) = (0, 0);
    for _ in 0..runs.max(1) {
        let (mut f, mut e) = (0, 0);
        let start = Instant::now();
        for i in 0..n {
            let (says, holds) = ask(i);
            assert!(says || !holds, "a false negative at query {i}");
            e += u64::from(!holds);
            f += u64::from(says && !holds);
        }
        times.push(start.elapsed().as_nanos() as f64 / n.max(1) as f64);
        (fp, empty) = (f, e);
    }
    times.sort_by(f64::total_cmp);
    (fp, empty, times[times.len() / 2])
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let file = flag("--file").ok_or("give --file FILE")?;
    let bpks: Vec<f64> = flag("--bpk")
        .map_or("12,16,20", String::as_str)
        .split(',')
        .map(|s| s.parse().map_err(|_| format!("--bpk: bad value {s}")))
        .collect::<Result<_, _>>()?;
    let runs: usize = flag("--runs")
        .map_or(Ok(3), |s| s.parse())
        .map_err(|_| "--runs: a count")?;
    let fit: usize = flag("--fit")
        .map_or(Ok(256), |s| s.parse())
        .map_err(|_| "--fit: a count")?;
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let w = read(&bytes)?;
    println!("| filter | bits/key | build ms | empty queries | false positives | FPR | ns/query |");
    println!("|---|--:|--:|--:|--:|--:|--:|");
    for bpk in bpks {
        let sizing = RangeSizing::BitsPerKey(bpk);
        match &w {
            Workload::Bytes { keys, queries } => {
                let start = Instant::now();
                let f = InfixRange::build(keys, sizing).map_err(|e| e.to_string())?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let (fp, empty, ns) = measure(runs, queries.len(), |i| {
                    let (l, r, holds) = &queries[i];
                    (
                        f.may_contain_range(Bound::Included(l), Bound::Included(r)),
                        *holds,
                    )
                });
                print_row(
                    &format!("InfixRange {bpk}"),
                    f.size_in_bytes(),
                    keys.len(),
                    ms,
                    fp,
                    empty,
                    ns,
                );
                let sample: Vec<_> = queries[..fit.min(queries.len())]
                    .iter()
                    .map(|(l, r, _)| (Bound::Included(&l[..]), Bound::Included(&r[..])))
                    .collect();
                for fitted in [false, true] {
                    if fitted && fit == 0 {
                        continue;
                    }
                    let start = Instant::now();
                    let f = if fitted {
                        KeyRangeFilter::build_for_scans(keys, sizing, 1, &sample)
                    } else {
                        KeyRangeFilter::build(keys, sizing, 1)
                    }
                    .map_err(|e| e.to_string())?;
                    let ms = start.elapsed().as_secs_f64() * 1e3;
                    let asked = &queries[if fitted { sample.len() } else { 0 }..];
                    let (fp, empty, ns) = measure(runs, asked.len(), |i| {
                        let (l, r, holds) = &asked[i];
                        (
                            f.may_contain_range(Bound::Included(l), Bound::Included(r)),
                            *holds,
                        )
                    });
                    let name = if fitted {
                        format!(
                            "KeyRangeFilter {bpk}, fitted to {} queries (shift {})",
                            sample.len(),
                            f.key_map().map_or(0, amq::range::KeyMap::shift)
                        )
                    } else {
                        format!("KeyRangeFilter {bpk}")
                    };
                    print_row(&name, f.size_in_bytes(), keys.len(), ms, fp, empty, ns);
                }
            }
            Workload::Ints { keys, queries } => {
                let start = Instant::now();
                let f = GrafiteRange::build(keys, sizing).map_err(|e| e.to_string())?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let (fp, empty, ns) = measure(runs, queries.len(), |i| {
                    let (l, r, holds) = queries[i];
                    (f.may_contain_range(l, r), holds)
                });
                let n = keys.len();
                print_row(
                    &format!("GrafiteRange {bpk}"),
                    f.size_in_bytes(),
                    n,
                    ms,
                    fp,
                    empty,
                    ns,
                );
                // The same keys big-endian, in the byte-key filters.
                let be = |x: u64| x.to_be_bytes();
                let bytes: Vec<[u8; 8]> = keys.iter().map(|&k| be(k)).collect();
                let bounds: Vec<([u8; 8], [u8; 8])> =
                    queries.iter().map(|&(l, r, _)| (be(l), be(r))).collect();
                let start = Instant::now();
                let f = InfixRange::build(&bytes, sizing).map_err(|e| e.to_string())?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let (fp, empty, ns) = measure(runs, queries.len(), |i| {
                    let (l, r) = &bounds[i];
                    (
                        f.may_contain_range(Bound::Included(l), Bound::Included(r)),
                        queries[i].2,
                    )
                });
                print_row(
                    &format!("InfixRange {bpk} of the big-endian keys"),
                    f.size_in_bytes(),
                    n,
                    ms,
                    fp,
                    empty,
                    ns,
                );
                if fit == 0 {
                    continue;
                }
                // Fitted to the first queries., fitted to the first queries.
                let be = |x: u64| x.to_be_bytes();
                let bytes: Vec<[u8; 8]> = keys.iter().map(|&k| be(k)).collect();
                let bounds: Vec<([u8; 8], [u8; 8])> =
                    queries.iter().map(|&(l, r, _)| (be(l), be(r))).collect();
                let sample: Vec<_> = bounds[..fit.min(bounds.len())]
                    .iter()
                    .map(|(l, r)| (Bound::Included(&l[..]), Bound::Included(&r[..])))
                    .collect();
                let start = Instant::now();
                let f =
                    KeyRangeFilter::build_for_scans(&bytes, sizing, 1, &sample).map_err(|e| e.to_string())?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                let skip = sample.len();
                let (fp, empty, ns) = measure(runs, queries.len() - skip, |i| {
                    let (l, r) = &bounds[skip + i];
                    (
                        f.may_contain_range(Bound::Included(l), Bound::Included(r)),
                        queries[skip + i].2,
                    )
                });
                let name = format!(
                    "KeyRangeFilter {bpk} of the big-endian keys, fitted to {skip} queries (shift {})",
                    f.key_map().map_or(0, amq::range::KeyMap::shift)
                );
                print_row(&name, f.size_in_bytes(), n, ms, fp, empty, ns);
            }
        }
    }
    Ok(())
}

fn print_row(name: &str, bytes: usize, n: usize, ms: f64, fp: u64, empty: u64, ns: f64) {
    println!(
        "| {name} | {:.2} | {ms:.0} | {empty} | {fp} | {:.3e} | {ns:.0} |",
        bytes as f64 * 8.0 / n.max(1) as f64,
        fp as f64 / empty.max(1) as f64
    );
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("diva_report: {e}");
            ExitCode::FAILURE
        }
    }
}
