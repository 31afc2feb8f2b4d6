//! The layout of a sharded binary fuse table, which owned filters and
//! views share: `S` (a power of two) fuse tables of one [`Segments`]
//! layout, end to end, each with its own seed. A key's shard is the top
//! `log2 S` bits of its hash, then its slots are that shard's fuse slots of
//! the hash remixed with the shard's seed, moved to the shard's start. In a
//! frame the shard fields follow the key count: `u32 S`, then `S` `u64`
//! seeds (none for a single table). The streamed build that makes sharded
//! tables is `sharded.rs`.

use super::peel::Geometry;
use super::query::Locate;
use super::segments::Segments;
use crate::format::{ByteWriter, Reader};
use crate::hash::remix;
use crate::{Error, FormatError};

/// The seeds of a sharded table, owned or read in place.
pub(crate) trait ShardSeeds {
    /// Number of shards.
    fn count(&self) -> usize;
    /// Shard `s`'s seed (`s < count()`).
    fn seed(&self, s: usize) -> u64;
}

impl ShardSeeds for [u64] {
    #[inline(always)]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn seed(&self, s: usize) -> u64 {
        self[s]
    }
}

/// Seeds stored as little-endian `u64`s in a frame's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LeSeeds<'a>(&'a [u8]);

impl ShardSeeds for LeSeeds<'_> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.0.len() / 8
    }
    #[inline(always)]
    fn seed(&self, s: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[8 * s..8 * s + 8]);
        u64::from_le_bytes(b)
    }
}

/// Where a key's slots lie in a sharded table: its shard from the top bits
/// of its hash, then that shard's fuse slots, moved to the shard's start.
pub(crate) struct Sharded<'a, T: ?Sized> {
    pub(crate) segments: &'a Segments,
    pub(crate) seeds: &'a T,
}

impl<T: ShardSeeds + ?Sized, const A: usize> Locate<A> for Sharded<'_, T>
where
    Segments: Geometry<A>,
{
    /// `seed` is unused: each shard has its own.
    #[inline(always)]
    fn locate(&self, _seed: u64, hash: u64) -> (u64, [usize; A]) {
        let s = (hash >> (64 - self.seeds.count().trailing_zeros())) as usize;
        let mixed = remix(hash, self.seeds.seed(s));
        let base = s * self.segments.len() as usize;
        let mut slots = Geometry::<A>::slots(self.segments, mixed);
        for slot in &mut slots {
            *slot += base;
        }
        (mixed, slots)
    }
}

/// Runs `query::$call::<_, _, _, A>($table, layout, $seed, $rest...)` with
/// the layout of a binary fuse filter of `$segments` and `$seeds`
/// ([`ShardSeeds`]; none for a single table) and its arity `A`.
macro_rules! fuse_query {
    ($call:ident, $table:expr, $segments:expr, $seeds:expr, $seed:expr, $($rest:expr),+) => {{
        use $crate::xor::segments::FuseArity;
        use $crate::xor::query;
        use $crate::xor::shard_layout::{ShardSeeds, Sharded};
        let (table, segments, seeds, seed) = ($table, $segments, $seeds, $seed);
        match (segments.arity(), seeds.count() == 0) {
            (FuseArity::Three, true) => query::$call::<_, _, _, 3>(table, segments, seed, $($rest),+),
            (FuseArity::Four, true) => query::$call::<_, _, _, 4>(table, segments, seed, $($rest),+),
            (FuseArity::Three, false) => {
                query::$call::<_, _, _, 3>(table, &Sharded { segments, seeds }, seed, $($rest),+)
            }
            (FuseArity::Four, false) => {
                query::$call::<_, _, _, 4>(table, &Sharded { segments, seeds }, seed, $($rest),+)
            }
        }
    }};
}
pub(crate) use fuse_query;

/// Writes the shard fields of a sharded frame's parameters (nothing for a
/// single table).
pub(crate) fn write_shards(p: &mut ByteWriter, seeds: &[u64]) {
    if !seeds.is_empty() {
        p.u32(seeds.len() as u32);
        for &s in seeds {
            p.u64(s);
        }
    }
}

/// Reads the shard fields after a binary fuse frame's key count: no seeds
/// for a single table (no bytes left), else at least two.
pub(crate) fn read_shards<'a>(params: &mut Reader<'a>) -> Result<LeSeeds<'a>, Error> {
    if params.remaining() == 0 {
        return Ok(LeSeeds(&[]));
    }
    let count = params.u32()? as usize;
    // A key's shard is the top `log2 S` bits of its hash: any other count
    // would leave shards out or address past the last one.
    if count < 2 || !count.is_power_of_two() {
        return Err(FormatError::InvalidParameters(
            "a sharded binary fuse filter has a power of two of shards, at least two",
        )
        .into());
    }
    let bytes = params.take(count.checked_mul(8).ok_or(FormatError::Truncated)?)?;
    Ok(LeSeeds(bytes))
}
