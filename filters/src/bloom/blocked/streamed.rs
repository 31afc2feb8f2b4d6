//! A blocked Bloom filter built from a stream of key hashes, on several
//! threads: each thread owns a consecutive range of blocks, reads the whole
//! source, and sets the bits of the keys whose block is its own. Bloom
//! inserts commute, so the filter is the one sequential inserts make, and
//! no hash is held beyond a few in flight: memory is the filter itself.

use alloc::vec::Vec;

use super::kernel::Kernel;
use super::probe::{block_of, Block};
use super::BlockedBloom;
use crate::prefetch::prefetch;
use crate::streamed::{run_jobs, StreamedBuild};
use crate::{Error, FilterSizing, KeyHash};

/// Keys whose blocks are prefetched ahead of the one being set (a power
/// of two).
const AHEAD: usize = 8;

impl BlockedBloom {
    /// Builds the filter sized by `sizing` for the hashes `source()`
    /// yields (the same ones on every call), on
    /// [`StreamedBuild::threads`] threads: the source is read once to count
    /// the keys, then once by each thread, which sets the bits of the
    /// blocks it owns. The result is what inserting every hash into
    /// [`new`](Self::new)`(count, sizing)` gives, bit for bit (an empty
    /// source gets the filter sized for one key). No hashes are
    /// held, so [`StreamedBuild::memory`] does not apply: peak memory is the
    /// filter.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// use amq::{hash_u64, BlockedBloom, Filter, FilterSizing, Insert};
    ///
    /// let source = || (0..20_000u64).map(hash_u64);
    /// let f = BlockedBloom::build_streamed(source, FilterSizing::Fpr(0.01), &StreamedBuild::new())?;
    /// assert!(source().all(|h| f.contains_hash(h)));
    ///
    /// let mut g = BlockedBloom::new(20_000, FilterSizing::Fpr(0.01))?;
    /// source().try_for_each(|h| g.insert_hash(h))?;
    /// assert_eq!(f.to_bytes(), g.to_bytes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_streamed<F, I>(
        source: F,
        sizing: FilterSizing,
        options: &StreamedBuild,
    ) -> Result<Self, Error>
    where
        F: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        let n = source().into_iter().count();
        let mut f = BlockedBloom::new(n.max(1), sizing)?;
        let (num_blocks, probes, kernel) = (f.blocks.len() as u32, f.num_probes, f.kernel);
        let per_thread = f.blocks.len().div_ceil(options.threads());
        let mut jobs = Vec::with_capacity(options.threads());
        for (t, chunk) in f.blocks.chunks_mut(per_thread).enumerate() {
            jobs.push((t * per_thread, chunk));
        }
        let source = &source;
        run_jobs(jobs, |(from, chunk)| {
            set_owned(kernel, chunk, from, num_blocks, probes, source())
        });
        f.num_keys = (n as u64).min(f.max_keys());
        Ok(f)
    }
}

/// Sets the bits of every hash of `source` whose block (out of
/// `num_blocks`) is one of `chunk`, blocks `from .. from + chunk.len()`;
/// blocks are prefetched [`AHEAD`] keys before they are set.
fn set_owned<I>(kernel: Kernel, chunk: &mut [Block], from: usize, num_blocks: u32, probes: u32, source: I)
where
    I: IntoIterator<Item = KeyHash>,
{
    let mut ring = [(0usize, 0u64); AHEAD];
    let mut pending = 0usize;
    for h in source {
        let i = block_of(h.get(), num_blocks).wrapping_sub(from);
        if i >= chunk.len() {
            continue;
        }
        prefetch(&chunk[i]);
        let slot = &mut ring[pending & (AHEAD - 1)];
        if pending >= AHEAD {
            // `slot` holds the key prefetched AHEAD keys ago.
            let (j, hash) = *slot;
            kernel.insert(core::slice::from_mut(&mut chunk[j]), hash, probes);
        }
        *slot = (i, h.get());
        pending += 1;
    }
    for k in pending.saturating_sub(AHEAD)..pending {
        let (j, hash) = ring[k & (AHEAD - 1)];
        kernel.insert(core::slice::from_mut(&mut chunk[j]), hash, probes);
    }
}
