//! The query kernel a [`QuotientFilter`](super::QuotientFilter) uses,
//! chosen once for the running CPU when the filter is made (the pattern of
//! `bloom/blocked/kernel.rs`, through the crate's one dispatch,
//! `crate::simd`).
//!
//! A query or insert is a rank in the occupied word and a select among the
//! run ends. The default x86-64 target has no `popcnt` instruction, so the
//! portable build counts bits with a dozen shifts and adds each, and
//! selects with Vigna's broadword algorithm. The popcnt kernel is the same
//! code compiled with the instruction; the BMI2 kernel also selects with
//! `pdep` and `tzcnt` (Pandey et al.'s select), except on AMD CPUs before
//! Zen 3, whose `pdep` is microcoded (`simd::Features::fast_pdep`). The
//! portable kernel is the oracle: the test below runs every kernel this CPU
//! supports against it. Off x86-64 (and with `--cfg amq_portable`) the
//! portable code is called directly and inlined.
#![allow(unsafe_code)]

use core::ops::RangeInclusive;

use super::expanding::fingerprint;
use super::table::{Broadword, Table};
use crate::Error;

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type ContainsFn = unsafe fn(&Table, usize, u64) -> bool;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type InsertFn = unsafe fn(&mut Table, usize, u64) -> Result<(), Error>;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type RemoveFn = unsafe fn(&mut Table, usize, u64) -> bool;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type RemoveLongestFn = unsafe fn(&mut Table, usize, u64) -> Option<u64>;
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
type RunFn = unsafe fn(&Table, usize) -> Option<RangeInclusive<usize>>;

/// A query kernel the running CPU supports (only [`Kernel::detect`] and
/// [`Kernel::runnable`] make one, and only with a CPU that has the
/// kernel's features).
#[derive(Clone, Copy)]
pub(crate) struct Kernel {
    name: &'static str,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    contains: ContainsFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    insert: InsertFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    remove: RemoveFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    contains_prefix: ContainsFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    remove_longest: RemoveLongestFn,
    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    run: RunFn,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_contains(t: &Table, x: usize, v: u64) -> bool {
    t.is_occupied(x) && portable_contains_occupied(t, x, v)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[inline(never)]
fn portable_contains_occupied(t: &Table, x: usize, v: u64) -> bool {
    t.contains_by(Broadword, x, v)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_insert(t: &mut Table, x: usize, v: u64) -> Result<(), Error> {
    t.insert_by(Broadword, x, v)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_remove(t: &mut Table, x: usize, v: u64) -> bool {
    t.remove_by(Broadword, x, v)
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_contains_prefix(t: &Table, x: usize, key: u64) -> bool {
    t.any_in_run_by(Broadword, x, |v| fingerprint::matches(v, key))
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_remove_longest(t: &mut Table, x: usize, key: u64) -> Option<u64> {
    t.remove_best_by(Broadword, x, |v| fingerprint::longest(v, key))
}

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
fn portable_run(t: &Table, x: usize) -> Option<RangeInclusive<usize>> {
    t.run_by(Broadword, x)
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_run(t: &Table, x: usize) -> Option<RangeInclusive<usize>> {
    t.run_by(Broadword, x)
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_contains_prefix(t: &Table, x: usize, key: u64) -> bool {
    t.any_in_run_by(Broadword, x, |v| fingerprint::matches(v, key))
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_remove_longest(t: &mut Table, x: usize, key: u64) -> Option<u64> {
    t.remove_best_by(Broadword, x, |v| fingerprint::longest(v, key))
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
unsafe fn popcnt_contains(t: &Table, x: usize, v: u64) -> bool {
    // SAFETY: the caller's promise.
    t.is_occupied(x) && unsafe { popcnt_contains_occupied(t, x, v) }
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
#[inline(never)]
unsafe fn popcnt_contains_occupied(t: &Table, x: usize, v: u64) -> bool {
    t.contains_by(Broadword, x, v)
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_insert(t: &mut Table, x: usize, v: u64) -> Result<(), Error> {
    t.insert_by(Broadword, x, v)
}

/// # Safety
/// The CPU must support `popcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt")]
unsafe fn popcnt_remove(t: &mut Table, x: usize, v: u64) -> bool {
    t.remove_by(Broadword, x, v)
}

/// Select with `pdep` and `tzcnt`: deposit a single bit at the `rank`-th
/// set bit of the word, then find it. A value is the proof that the CPU
/// has BMI2 (only the BMI2 kernels below make one).
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[derive(Clone, Copy)]
struct Pdep(());

#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
impl super::table::Select for Pdep {
    #[inline(always)]
    fn select(self, x: u64, rank: u32) -> u32 {
        // SAFETY: a `Pdep` exists only inside the BMI2 kernels, which run
        // only on CPUs with BMI2 (`Kernel::candidates`).
        unsafe { core::arch::x86_64::_pdep_u64(1 << (rank & 63), x) }.trailing_zeros()
    }
}

/// A query: the occupied bit first, in a function that saves no
/// registers, so that most absent keys cost a call and a load; the rest of
/// the query in one that does.
///
/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
unsafe fn bmi2_contains(t: &Table, x: usize, v: u64) -> bool {
    // SAFETY: the caller's promise.
    t.is_occupied(x) && unsafe { bmi2_contains_occupied(t, x, v) }
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
#[inline(never)]
unsafe fn bmi2_contains_occupied(t: &Table, x: usize, v: u64) -> bool {
    t.contains_by(Pdep(()), x, v)
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn bmi2_insert(t: &mut Table, x: usize, v: u64) -> Result<(), Error> {
    t.insert_by(Pdep(()), x, v)
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn bmi2_remove(t: &mut Table, x: usize, v: u64) -> bool {
    t.remove_by(Pdep(()), x, v)
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn bmi2_contains_prefix(t: &Table, x: usize, key: u64) -> bool {
    t.any_in_run_by(Pdep(()), x, |v| fingerprint::matches(v, key))
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn bmi2_remove_longest(t: &mut Table, x: usize, key: u64) -> Option<u64> {
    t.remove_best_by(Pdep(()), x, |v| fingerprint::longest(v, key))
}

/// # Safety
/// The CPU must support `popcnt`, `bmi1`, `bmi2` and `lzcnt`.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn bmi2_run(t: &Table, x: usize) -> Option<RangeInclusive<usize>> {
    t.run_by(Pdep(()), x)
}

impl Kernel {
    const PORTABLE: Kernel = Kernel {
        name: "portable",
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        contains: portable_contains,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        insert: portable_insert,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        remove: portable_remove,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        contains_prefix: portable_contains_prefix,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        remove_longest: portable_remove_longest,
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        run: portable_run,
    };

    /// The fastest kernel this CPU runs, within the `AMQ_KERNEL` cap.
    pub(crate) fn detect() -> Kernel {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::choose(&Self::candidates(), Self::PORTABLE, crate::simd::cap());
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        Self::PORTABLE
    }

    #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
    fn candidates() -> [crate::simd::Candidate<Kernel>; 2] {
        let f = crate::simd::features();
        [
            (
                crate::simd::Level::Avx2,
                f.popcnt && f.fast_pdep && f.lzcnt,
                Kernel {
                    name: "bmi2",
                    contains: bmi2_contains,
                    insert: bmi2_insert,
                    remove: bmi2_remove,
                    contains_prefix: bmi2_contains_prefix,
                    remove_longest: bmi2_remove_longest,
                    run: bmi2_run,
                },
            ),
            (
                crate::simd::Level::Popcnt,
                f.popcnt,
                Kernel {
                    name: "popcnt",
                    contains: popcnt_contains,
                    insert: popcnt_insert,
                    remove: popcnt_remove,
                    contains_prefix: popcnt_contains_prefix,
                    remove_longest: popcnt_remove_longest,
                    run: popcnt_run,
                },
            ),
        ]
    }

    /// Every kernel this CPU runs, the portable one last.
    #[cfg(test)]
    pub(super) fn runnable() -> alloc::vec::Vec<Kernel> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        return crate::simd::runnable(&Self::candidates(), Self::PORTABLE);
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        alloc::vec![Self::PORTABLE]
    }

    /// The kernel's name: `"bmi2"`, `"popcnt"` or `"portable"`.
    pub(super) fn name(&self) -> &'static str {
        self.name
    }

    /// Whether `t` holds value `v` in quotient `x`'s run.
    #[inline(always)]
    pub(super) fn contains(&self, t: &Table, x: usize, v: u64) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: a kernel other than the portable one is only made by
        // `candidates`, and handed out by `detect` or `runnable` only when
        // the CPU reported its features.
        return unsafe { (self.contains)(t, x, v) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.contains_by(Broadword, x, v)
    }

    /// Removes one entry `(x, v)` of `t`, if there is one: whether there was.
    #[inline(always)]
    pub(super) fn remove(&self, t: &mut Table, x: usize, v: u64) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as for `contains`.
        return unsafe { (self.remove)(t, x, v) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.remove_by(Broadword, x, v)
    }

    /// Whether a value of quotient `x`'s run of `t` is a fingerprint that
    /// `key` matches (`fingerprint::matches`).
    #[inline(always)]
    pub(super) fn contains_prefix(&self, t: &Table, x: usize, key: u64) -> bool {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as for `contains`.
        return unsafe { (self.contains_prefix)(t, x, key) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.any_in_run_by(Broadword, x, |v| fingerprint::matches(v, key))
    }

    /// Removes the longest fingerprint of quotient `x`'s run of `t` that
    /// `key` matches: the value removed, if any.
    #[inline(always)]
    pub(super) fn remove_longest(&self, t: &mut Table, x: usize, key: u64) -> Option<u64> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as for `contains`.
        return unsafe { (self.remove_longest)(t, x, key) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.remove_best_by(Broadword, x, |v| fingerprint::longest(v, key))
    }

    /// Inserts value `v` into quotient `x`'s run of `t` (`Table::insert`).
    #[inline(always)]
    pub(crate) fn insert(&self, t: &mut Table, x: usize, v: u64) -> Result<(), Error> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as for `contains`.
        return unsafe { (self.insert)(t, x, v) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.insert_by(Broadword, x, v)
    }

    /// The slots of quotient `x`'s run of `t`, if it has one (`Table::run`).
    #[inline(always)]
    pub(crate) fn run(&self, t: &Table, x: usize) -> Option<RangeInclusive<usize>> {
        #[cfg(all(target_arch = "x86_64", not(amq_portable)))]
        // SAFETY: as for `contains`.
        return unsafe { (self.run)(t, x) };
        #[cfg(any(not(target_arch = "x86_64"), amq_portable))]
        t.run_by(Broadword, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    /// Every kernel this CPU runs answers as the portable one, on runs of
    /// every length (a table filled to its capacity, with repeats), and
    /// its inserts make the same table.
    #[test]
    fn every_kernel_agrees_with_portable() {
        let kernels = Kernel::runnable();
        let mut tables = alloc::vec::Vec::new();
        for k in &kernels {
            let mut t = Table::new(10, 9).unwrap();
            for i in 0..970u64 {
                let r = remix(i, 4);
                let x = if i % 7 == 0 { 500 } else { (r % 1024) as usize };
                k.insert(&mut t, x, (r >> 20) & 0x1ff).unwrap();
            }
            tables.push(t);
        }
        assert!(tables.windows(2).all(|w| w[0] == w[1]), "kernels' inserts differ");
        // Removals, half of them of entries that are there: the same tables.
        let mut removed = alloc::vec::Vec::new();
        for (k, t) in kernels.iter().zip(tables.iter_mut().map(|t| t.clone())) {
            let mut t = t;
            let mut hits = 0;
            for i in 0..600u64 {
                let r = remix(if i % 2 == 0 { i } else { i + 5_000 }, 4);
                let x = if i % 7 == 0 { 500 } else { (r % 1024) as usize };
                hits += usize::from(k.remove(&mut t, x, (r >> 20) & 0x1ff));
            }
            assert!(hits >= 300, "{k:?}: {hits} removed");
            t.check();
            removed.push(t);
        }
        assert!(
            removed.windows(2).all(|w| w[0] == w[1]),
            "kernels' removals differ"
        );
        let t = tables.pop().unwrap();
        assert_eq!(kernels.last().map(Kernel::name), Some("portable"));
        let mut hits = 0;
        for i in 0..200_000u64 {
            let r = remix(i, 5);
            let (x, v) = ((r % 1024) as usize, (r >> 20) & 0x1ff);
            let want = t.contains(x, v);
            hits += usize::from(want);
            for k in &kernels {
                assert_eq!(k.contains(&t, x, v), want, "{k:?} at {x}, {v}");
                assert_eq!(k.run(&t, x), t.run(x), "{k:?}: run of {x}");
            }
        }
        assert!(hits > 100 && hits < 199_000, "{hits} hits");
    }

    /// The expanding filter's kernel paths (prefix matches, removal of the
    /// longest match) answer as the portable one, on fingerprints of every
    /// length and void entries.
    #[test]
    fn every_kernel_matches_prefixes_as_portable() {
        let kernels = Kernel::runnable();
        let width = 9;
        let mut t = Table::new(10, width).unwrap();
        for i in 0..900u64 {
            let r = remix(i, 6);
            let x = if i % 5 == 0 { 300 } else { (r % 1024) as usize };
            let v = fingerprint::entry((r >> 20) & 0x1ff, width, (i % 9) as u32);
            t.insert(x, v).unwrap();
        }
        for i in 0..100_000u64 {
            let r = remix(i, 7);
            let (x, key) = ((r % 1024) as usize, (r >> 20) & 0x1ff);
            let want = t.any_in_run_by(Broadword, x, |v| fingerprint::matches(v, key));
            let mut want_t = t.clone();
            let want_removed = want_t.remove_best_by(Broadword, x, |v| fingerprint::longest(v, key));
            for k in &kernels {
                assert_eq!(k.contains_prefix(&t, x, key), want, "{k:?} at {x}, {key}");
                if i % 50 == 0 {
                    let mut got_t = t.clone();
                    assert_eq!(k.remove_longest(&mut got_t, x, key), want_removed, "{k:?}");
                    assert_eq!(got_t, want_t, "{k:?}");
                }
            }
        }
    }
}
