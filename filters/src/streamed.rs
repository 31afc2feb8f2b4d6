//! Builds that read their keys as a stream, in bounded memory and, with
//! `std`, on several threads: [`StreamedBuild`].
//!
//! A static filter's build is usually given every key hash in one slice:
//! 8 bytes per key, 8 GB at 10^9 keys, before the build's own working set.
//! A streamed build is given a *source* instead: a closure that yields the
//! same key hashes each time it is called. The build reads the source a few
//! times: once to count the keys, once to count them per shard, then once per
//! *pass*, each pass keeping only the keys of a run of shards whose hashes
//! fit in [`StreamedBuild::with_memory`] bytes and building those shards (on
//! [`StreamedBuild::with_threads`] threads, each reading the source for its
//! own shards). So peak memory is the finished filter, one pass's hashes and
//! a small per-thread working set, whatever the key count.
//!
//! [`Ribbon::build_streamed`] solves the shards the in-memory build makes,
//! so it returns the filter [`Ribbon::build_with`] returns for the same
//! keys, for any memory and thread count. [`BinaryFuse::build_streamed`]
//! makes one table up to 2^23 keys and independent shards beyond (one
//! table would need every hash at once). [`BlockedBloom::build_streamed`]
//! holds no hashes at all: each thread sets the blocks it owns.
//! [`AnyFilter::build_streamed`] picks among them for a kind chosen at run
//! time.
//!
//! This module holds the options and the kind-independent planning (which
//! shards go in which pass and to which thread); each kind's streamed build
//! lives with the kind.
//!
//! [`Ribbon::build_streamed`]: crate::Ribbon::build_streamed
//! [`Ribbon::build_with`]: crate::Ribbon::build_with
//! [`BinaryFuse::build_streamed`]: crate::xor::BinaryFuse::build_streamed
//! [`BlockedBloom::build_streamed`]: crate::BlockedBloom::build_streamed
//! [`AnyFilter::build_streamed`]: crate::AnyFilter::build_streamed

use alloc::vec::Vec;
use core::ops::Range;

use crate::zeroed::zeroed_vec;
use crate::{Error, KeyHash};

/// How a streamed build may use memory and threads
/// ([`Ribbon::build_streamed`](crate::Ribbon::build_streamed),
/// [`BinaryFuse::build_streamed`](crate::xor::BinaryFuse::build_streamed),
/// [`BlockedBloom::build_streamed`](crate::BlockedBloom::build_streamed),
/// [`AnyFilter::build_streamed`](crate::AnyFilter::build_streamed)).
///
/// ```
/// use amq::streamed::StreamedBuild;
/// let options = StreamedBuild::new().with_memory(64 << 20);
/// assert_eq!(options.memory(), 64 << 20);
/// # #[cfg(feature = "std")]
/// assert_eq!(StreamedBuild::new().with_threads(2)?.threads(), 2);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamedBuild {
    memory: usize,
    threads: usize,
}

impl Default for StreamedBuild {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamedBuild {
    /// The default memory for key hashes: 512 MiB, 64M keys per pass. A
    /// build of fewer keys holds all their hashes at once, as a build from
    /// a slice does (50M keys: about 400 MB of hashes beside the filter);
    /// [`with_memory`](Self::with_memory) bounds it lower, for more reads of
    /// the source.
    pub const DEFAULT_MEMORY: usize = 512 << 20;

    /// [`DEFAULT_MEMORY`](Self::DEFAULT_MEMORY) and one thread (the
    /// caller's).
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// assert_eq!(StreamedBuild::new().threads(), 1);
    /// assert_eq!(StreamedBuild::new().memory(), StreamedBuild::DEFAULT_MEMORY);
    /// ```
    pub const fn new() -> Self {
        StreamedBuild {
            memory: Self::DEFAULT_MEMORY,
            threads: 1,
        }
    }

    /// At most `bytes` of key hashes held at once (8 bytes per key), over
    /// all threads; a pass holds at least one shard's keys, whatever the
    /// budget (a few thousand keys). Fewer bytes mean more passes over the
    /// source; the filter is the same.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// assert_eq!(StreamedBuild::new().with_memory(0).memory(), 0);
    /// ```
    pub const fn with_memory(self, bytes: usize) -> Self {
        StreamedBuild {
            memory: bytes,
            ..self
        }
    }

    /// Builds on `threads` threads (scoped; the calling thread waits).
    /// Each thread reads the source once per pass, for its own shards.
    /// [`Error::InvalidParameter`] for 0.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// assert!(StreamedBuild::new().with_threads(0).is_err());
    /// ```
    #[cfg(feature = "std")]
    pub fn with_threads(self, threads: usize) -> Result<Self, Error> {
        if threads == 0 {
            return Err(Error::InvalidParameter {
                name: "threads",
                reason: "must be at least 1",
            });
        }
        Ok(StreamedBuild { threads, ..self })
    }

    /// The memory budget for key hashes, in bytes.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// assert_eq!(StreamedBuild::new().with_memory(1 << 30).memory(), 1 << 30);
    /// ```
    pub const fn memory(&self) -> usize {
        self.memory
    }

    /// Threads the build runs on.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// assert_eq!(StreamedBuild::new().threads(), 1);
    /// ```
    pub const fn threads(&self) -> usize {
        self.threads
    }

    /// One pass, all memory, one thread: what a build from a slice does.
    pub(crate) const fn in_memory() -> Self {
        StreamedBuild {
            memory: usize::MAX,
            threads: 1,
        }
    }

    /// The passes over `counts` (keys per shard): runs of consecutive
    /// shards, each split into at most `threads` parts of about equal key
    /// counts, a pass holding at most `memory / 8` keys (or one shard).
    pub(crate) fn plan(&self, counts: &[u32]) -> Vec<Vec<Range<usize>>> {
        let budget = (self.memory / 8).max(1);
        let mut passes = Vec::new();
        let (mut from, mut keys) = (0usize, 0usize);
        for (s, &c) in counts.iter().enumerate() {
            if s > from && keys + c as usize > budget {
                passes.push(split(counts, from..s, keys, self.threads));
                (from, keys) = (s, 0);
            }
            keys += c as usize;
        }
        if from < counts.len() {
            passes.push(split(counts, from..counts.len(), keys, self.threads));
        }
        passes
    }
}

/// `shards` (holding `keys` keys) cut into at most `parts` consecutive,
/// non-empty ranges of about `keys / parts` keys each.
fn split(counts: &[u32], shards: Range<usize>, keys: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, shards.len().max(1));
    let mut out = Vec::with_capacity(parts);
    let (mut from, mut seen) = (shards.start, 0usize);
    for s in shards.clone() {
        seen += counts[s] as usize;
        // Close part `out.len()` once it reaches its share of the keys,
        // leaving at least one shard for each part still to come.
        let share = keys * (out.len() + 1) / parts;
        let left = shards.end - (s + 1);
        if out.len() + 1 < parts && seen >= share && left >= parts - out.len() - 1 {
            out.push(from..s + 1);
            from = s + 1;
        }
    }
    if from < shards.end || out.is_empty() {
        out.push(from..shards.end);
    }
    out
}

/// Runs `job` on each of `jobs`, on one scoped thread each when there are
/// several (and `std`), and returns the results in order. A panicking job
/// panics the caller.
pub(crate) fn run_jobs<J, T>(jobs: Vec<J>, job: impl Fn(J) -> T + Sync) -> Vec<T>
where
    J: Send,
    T: Send,
{
    #[cfg(feature = "std")]
    if jobs.len() > 1 {
        let job = &job;
        return std::thread::scope(|scope| {
            let handles: Vec<_> = jobs.into_iter().map(|j| scope.spawn(move || job(j))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
    }
    jobs.into_iter().map(job).collect()
}

/// Keys per shard of `source`: `shard_of(hash)` for each of its hashes
/// (duplicates included), over `num_shards` shards. [`Error::TooLarge`] if
/// a shard would hold 2^32 keys or the counts cannot be allocated.
pub(crate) fn count_shards<I>(
    source: I,
    num_shards: usize,
    shard_of: impl Fn(u64) -> usize,
) -> Result<Vec<u32>, Error>
where
    I: IntoIterator<Item = KeyHash>,
{
    let mut counts: Vec<u32> = zeroed_vec(num_shards)?;
    if num_shards == 0 {
        return match source.into_iter().next() {
            None => Ok(counts),
            Some(_) => Err(source_changed()),
        };
    }
    for h in source {
        let c = &mut counts[shard_of(h.get())];
        *c = c.checked_add(1).ok_or(Error::TooLarge)?;
    }
    Ok(counts)
}

/// The keys of a run of shards, grouped by shard: a counting sort on the
/// shard index, with the counts known in advance, so each key goes straight
/// to its shard's next free slot.
#[derive(Debug)]
pub(crate) struct Group {
    values: Vec<u64>,
    /// Shard `shards.start + i` is `values[begin[i] .. begin[i + 1]]`.
    begin: Vec<usize>,
    shards: Range<usize>,
}

impl Group {
    /// Reads `source` and keeps the keys of `shards`, whose counts `counts`
    /// (indexed by shard) gave; `place(hash)` is a key's shard and the value
    /// kept for it. A source that yields other keys than it did when counted
    /// is an error ([`Error::InvalidParameter`]), never a filter missing
    /// keys.
    pub(crate) fn fill<I>(
        source: I,
        shards: Range<usize>,
        counts: &[u32],
        place: impl Fn(u64) -> (usize, u64),
    ) -> Result<Self, Error>
    where
        I: IntoIterator<Item = KeyHash>,
    {
        let mut begin: Vec<usize> = zeroed_vec(shards.len() + 1)?;
        for (i, s) in shards.clone().enumerate() {
            begin[i + 1] = begin[i] + counts[s] as usize;
        }
        let mut values: Vec<u64> = zeroed_vec(begin[shards.len()])?;
        // `next[i]` walks shard `shards.start + i` from its beginning.
        let mut next: Vec<usize> = zeroed_vec(shards.len())?;
        next.copy_from_slice(&begin[..shards.len()]);
        for h in source {
            let (s, value) = place(h.get());
            let i = s.wrapping_sub(shards.start);
            if i < next.len() {
                if next[i] == begin[i + 1] {
                    return Err(source_changed());
                }
                values[next[i]] = value;
                next[i] += 1;
            }
        }
        if next[..] != begin[1..] {
            return Err(source_changed());
        }
        Ok(Group {
            values,
            begin,
            shards,
        })
    }

    /// The values of shard `s` (one of the group's), in the order read.
    pub(crate) fn shard_mut(&mut self, s: usize) -> &mut [u64] {
        let i = s - self.shards.start;
        &mut self.values[self.begin[i]..self.begin[i + 1]]
    }
}

/// The error of a source that yielded other keys on a later pass than on
/// the first (more keys for a shard than were counted, or fewer).
pub(crate) fn source_changed() -> Error {
    Error::InvalidParameter {
        name: "source",
        reason: "yielded different key hashes on a later pass",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn passes_respect_the_budget_and_cover_every_shard_once() {
        let counts: Vec<u32> = (0..1000u32).map(|i| 50 + (i * 7919) % 100).collect();
        for (memory, threads) in [
            (0, 1),
            (8 * 400, 2),
            (8 * 5000, 3),
            (usize::MAX, 1),
            (usize::MAX, 4),
        ] {
            let o = StreamedBuild { memory, threads };
            let passes = o.plan(&counts);
            let mut next = 0;
            for pass in &passes {
                assert!(!pass.is_empty() && pass.len() <= threads);
                let keys: usize = pass
                    .iter()
                    .flat_map(|r| r.clone())
                    .map(|s| counts[s] as usize)
                    .sum();
                assert!(keys <= (memory / 8).max(1) || pass.iter().map(|r| r.len()).sum::<usize>() == 1);
                for r in pass {
                    assert_eq!(r.start, next, "{memory} {threads}");
                    assert!(!r.is_empty());
                    next = r.end;
                }
            }
            assert_eq!(next, counts.len());
            if memory == usize::MAX {
                assert_eq!(passes.len(), 1);
                assert_eq!(passes[0].len(), threads);
            }
        }
        assert!(StreamedBuild::new().plan(&[]).is_empty());
    }

    #[test]
    fn parts_are_balanced_by_keys() {
        let counts = vec![1u32, 1, 1, 1, 100, 1, 1, 1, 1, 100];
        let parts = split(&counts, 0..10, 208, 2);
        assert_eq!(parts, vec![0..5, 5..10]);
        assert_eq!(split(&counts, 3..4, 1, 4), vec![3..4]);
        assert_eq!(split(&counts, 0..3, 3, 3), vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn jobs_return_in_order() {
        let out = run_jobs((0..5u64).collect(), |j| j * j);
        assert_eq!(out, vec![0, 1, 4, 9, 16]);
    }
}
