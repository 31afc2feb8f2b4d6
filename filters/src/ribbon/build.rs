//! Building a Ribbon filter, from a slice or a stream of key hashes: the
//! keys counted per shard, the column rule chosen, then every shard solved
//! (`runs.rs`); and the blocked layout's banding and solution of a shard.

use super::blocked::build_compact;
use super::bumped::BUMPED_MIN_KEYS;
use super::bumped_build::build_bumped;
use super::bumped_lines::build_bumped_lines;
use super::config::RibbonParams;
use super::line_filter;
use super::lines::LINE_SHARD_KEYS;
use super::runs;
use super::{Kernel, Layout, Ribbon};
use crate::streamed::StreamedBuild;
use crate::{Error, FilterSizing, KeyHash};

impl Ribbon {
    /// Builds the filter from key hashes: unlike xorf's
    /// `BinaryFuse8::try_from(&keys)` on raw `u64`s, hash your keys with
    /// [`hash_u64`](crate::hash_u64) first ([`hash_key`](crate::hash_key)
    /// for bytes).
    ///
    /// There is no `TryFrom<&[u64]>`: a `u64` could be a key or a hash, and
    /// taking one for the other ruins the filter silently ([`KeyHash`]).
    /// Duplicates are allowed. Sized by `sizing`: the result bits and
    /// layout of [`RibbonParams::with_fpr`] or
    /// [`RibbonParams::with_bits_per_key`].
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, KeyHash, Ribbon};
    /// let keys: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
    /// let f = Ribbon::build(&keys, FilterSizing::Fpr(0.01))?;
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert!((f.expected_fpr() - 0.01).abs() < 1e-3);
    /// assert!(f.bits_per_key() < 7.5);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "try_from", alias = "from_keys")]
    pub fn build(hashes: &[KeyHash], sizing: FilterSizing) -> Result<Self, Error> {
        Self::build_with(hashes, &RibbonParams::for_sizing(sizing)?)
    }

    /// Builds the filter from key hashes (duplicates allowed) with every
    /// parameter given ([`RibbonParams`]: result bits, slots per key,
    /// layout).
    ///
    /// The column rule is chosen once, from every shard's first-attempt
    /// size; the words are allocated once, for every shard solved at that
    /// size (what almost always happens); a shard that needs more slots
    /// grows them by exactly its size, and any excess is given back at the
    /// end, so [`size_in_bytes`](crate::Filter::size_in_bytes) is what the filter
    /// holds.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, KeyHash, Ribbon, RibbonParams};
    /// let keys: Vec<KeyHash> = (0..1000u64).map(hash_u64).collect();
    /// let f = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(10)?)?;
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert_eq!(f.expected_fpr(), 1.0 / 1024.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_with(hashes: &[KeyHash], params: &RibbonParams) -> Result<Self, Error> {
        build_from(
            &|| hashes.iter().copied(),
            hashes.len(),
            params,
            &StreamedBuild::in_memory(),
        )
    }

    /// Builds the filter from a source of key hashes read a few times
    /// (`source()` must yield the same hashes, duplicates allowed, each
    /// time), holding at most [`StreamedBuild::memory`] bytes of them at
    /// once, on [`StreamedBuild::threads`] threads. The filter is the one
    /// [`build_with`](Self::build_with) returns for the same keys: the same
    /// shards, seeds and bytes, queried as fast.
    ///
    /// The source is read `2 + passes × threads` times: to count the keys,
    /// to count them per shard, then once per pass by each thread, for its
    /// shards. A pass holds `memory / 8` keys (at least one shard). Peak
    /// memory is the finished filter (its words grow as shards are solved),
    /// one pass's hashes, each thread's solved shards until they are
    /// appended, and 0.3 MB of working space per thread. A bumped filter
    /// (the default from [`BUMPED_MIN_KEYS`] keys) allocates its layer's
    /// words at once, holds the bumped keys' hashes (3–6% of the keys) for
    /// its second filter, and uses 2 MB of banding per thread; when more
    /// than 1% of the hashes were duplicates it reads the source as many
    /// times again, for the distinct keys. A source that yields a different
    /// number of hashes for a shard on a later read is
    /// [`Error::InvalidParameter`].
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// use amq::{hash_u64, Filter, KeyHash, Ribbon, RibbonParams};
    ///
    /// // Keys made on the fly, never held in a vector.
    /// let source = || (0..50_000u64).map(|i| hash_u64(i * 7));
    /// let params = RibbonParams::with_fpr(0.01)?;
    /// // 64 KB of hashes at a time: about 8,000 keys per pass.
    /// let options = StreamedBuild::new().with_memory(64 << 10);
    /// let f = Ribbon::build_streamed(source, &params, &options)?;
    /// assert!(source().all(|h| f.contains_hash(h)));
    ///
    /// let keys: Vec<KeyHash> = source().collect();
    /// assert_eq!(f.to_bytes(), Ribbon::build_with(&keys, &params)?.to_bytes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_streamed<F, I>(
        source: F,
        params: &RibbonParams,
        options: &StreamedBuild,
    ) -> Result<Self, Error>
    where
        F: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        let n = source().into_iter().count();
        build_from(&source, n, params, options)
    }
}

/// Builds a filter of the `n` hashes `source` yields.
fn build_from<F, I>(
    source: &F,
    n: usize,
    params: &RibbonParams,
    options: &StreamedBuild,
) -> Result<Ribbon, Error>
where
    F: Fn() -> I + Sync,
    I: IntoIterator<Item = KeyHash>,
{
    if params.bumped() && n >= BUMPED_MIN_KEYS {
        let built = match params.two_lines() {
            true => build_bumped_lines(source, n, params, options)?,
            false => build_bumped(source, n, params, options)?,
        };
        // Many duplicates: build for the distinct keys (at most once, as
        // those are all distinct).
        return match built {
            Ok(filter) => Ok(filter),
            Err(distinct) => build_from(source, distinct, params, options),
        };
    }
    if params.two_lines() {
        let make = |n: usize, plan: &[u32]| params.line_solver(n, plan.len());
        let (solver, run, num_keys) = runs::solve_distinct(&make, source, n, LINE_SHARD_KEYS, options)?;
        return Ok(Ribbon::of_lines(
            line_filter::finish(run, solver.geometry)?,
            num_keys,
        ));
    }
    let (words, shards, num_keys) = build_compact(source, n, params, None, options)?;
    Ok(Ribbon {
        words,
        layout: Layout::Compact(shards),
        num_keys,
        kernel: Kernel::detect(None),
    })
}
