//! Binary fuse filters in shards, built from a stream of key hashes in
//! bounded memory and on several threads ([`BinaryFuse::build_streamed`]).
//!
//! # Why shards
//!
//! A binary fuse filter is one system of equations over its whole table:
//! building it needs every key hash at once (8 bytes per key) and peeling's
//! working set (about 24 bytes per key), 32 GB at 10^9 keys. So a filter of
//! more than [`FUSE_SHARD_KEYS`] keys is built as `S` independent binary
//! fuse tables ("shards"), each of at most about that many keys (`S` is
//! `⌈n / 2^23⌉` rounded up to a power of two, so a key's shard is its
//! hash's top bits), laid end to end in one fingerprint array:
//!
//! ```text
//!   shard(h) = h >> (64 − log2 S)        (the key hash's top bits)
//!   slots    = shard(h) · T + fuse slots of remix(h, seed[shard(h)])
//! ```
//!
//! Every shard has the same segment layout, the one of the largest shard
//! (`T` slots), so where a shard starts is one multiplication, not a table
//! lookup. Shards hold `n / S` keys give or take a few standard deviations
//! (`√(n/S)`, 0.03% at 2^23 keys), so sizing all of them for the largest
//! costs about 0.1% of space. Each shard keeps the seed it peeled with (8
//! bytes per shard, 1 KB at 10^9 keys, which stays in the L1 cache): a shard
//! that fails to peel is retried alone.
//!
//! A query reads the same three (or four) fingerprints as a single
//! table's, plus the cached seed, and runs about ten more instructions (a
//! shift, the seed's load, a multiplication and three additions). Far
//! beyond the caches that is what it costs: a loop of single queries keeps
//! fewer of them in flight, and measured 1.4–1.7× a single table's time at
//! 10^8 keys; batched queries ([`Filter::contains_hashes`](crate::Filter::contains_hashes)),
//! which overlap their misses explicitly, 1.03–1.12×.
//!
//! # Format
//!
//! A sharded frame is a binary fuse frame whose parameters go on after the
//! key count with the shard count `S` (`u32`, a power of two, at least 2) and `S` seeds
//! (`u64`); the segment layout is one shard's, and the payload is the `S`
//! tables in shard order. A single table's frame has no such fields. The
//! layout and its frame fields, shared with views, are `shard_layout.rs`.

use alloc::vec::Vec;

use super::binary_fuse::{BinaryFuse, FuseFingerprint, FuseParams};
use super::peel;
use super::segments::{FuseArity, Segments};
use crate::streamed::{count_shards, run_jobs, Group, StreamedBuild};
use crate::{Error, KeyHash};

/// Keys per shard of a streamed binary fuse build: filters of up to 2^23
/// keys are one table, larger ones `⌈n / 2^23⌉` shards rounded up to a power
/// of two. A shard's build needs about 32 bytes per key (268 MB) per
/// thread.
pub const FUSE_SHARD_KEYS: usize = 1 << 23;

impl<F: FuseFingerprint> BinaryFuse<F> {
    /// Builds the filter from a source of key hashes (`source()` must yield
    /// the same hashes, duplicates allowed, each time), in bounded memory,
    /// on [`StreamedBuild::threads`] threads.
    ///
    /// Up to [`FUSE_SHARD_KEYS`] keys, the filter is the one
    /// [`build_with`](Self::build_with) makes. More keys are split by the
    /// top bits of their hash into `⌈n / 2^23⌉` shards (rounded up to a
    /// power of two), each its own fuse table of one common layout, built
    /// apart and laid end to end (see [`crate::xor`], "Sharded binary fuse
    /// filters": about 0.1% more space; batched queries within 1.1×, single
    /// ones 1.4–1.7× slower far beyond the caches). The source is read
    /// `2 + passes × threads` times, a pass holding
    /// [`StreamedBuild::memory`] bytes of hashes (at least one shard's). Peak memory is the filter, one pass's hashes and one
    /// shard's peeling state (about 24 bytes per key) per thread.
    ///
    /// ```
    /// use amq::streamed::StreamedBuild;
    /// use amq::xor::FuseParams;
    /// use amq::{hash_u64, BinaryFuse8, Filter, KeyHash};
    ///
    /// let source = || (0..30_000u64).map(hash_u64);
    /// let f = BinaryFuse8::build_streamed(source, &FuseParams::THREE_WISE, &StreamedBuild::new())?;
    /// assert!(source().all(|h| f.contains_hash(h)));
    /// let keys: Vec<KeyHash> = source().collect();
    /// assert_eq!(f, BinaryFuse8::build(&keys)?);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build_streamed<S, I>(
        source: S,
        params: &FuseParams,
        options: &StreamedBuild,
    ) -> Result<Self, Error>
    where
        S: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        let n = source().into_iter().count();
        Self::build_sharded(
            &source,
            n.div_ceil(FUSE_SHARD_KEYS).next_power_of_two(),
            params,
            options,
        )
    }

    /// Builds `num_shards` shards (a power of two; one table for 0 or 1) of
    /// `source`'s keys.
    pub(crate) fn build_sharded<S, I>(
        source: &S,
        num_shards: usize,
        params: &FuseParams,
        options: &StreamedBuild,
    ) -> Result<Self, Error>
    where
        S: Fn() -> I + Sync,
        I: IntoIterator<Item = KeyHash>,
    {
        debug_assert!(num_shards.is_power_of_two() || num_shards == 0);
        if num_shards <= 1 {
            let mut keys = Vec::new();
            for h in source() {
                keys.try_reserve(1).map_err(|_| Error::TooLarge)?;
                keys.push(h);
            }
            return Self::build_with(&keys, params);
        }
        let shard_of = |h: u64| (h >> (64 - num_shards.trailing_zeros())) as usize;
        let counts = count_shards(source(), num_shards, shard_of)?;
        let largest = counts.iter().copied().max().unwrap_or(0) as usize;
        if largest == 0 {
            return Self::build_with(&[], params); // no keys: the empty filter
        }
        let segments = Segments::for_keys(largest.max(2), params.arity)?;
        let shard_slots = segments.len() as usize;
        let total = shard_slots
            .checked_mul(num_shards)
            .filter(|&t| t <= u32::MAX as usize)
            .ok_or(Error::TooLarge)?;
        let mut fingerprints: Vec<F> = crate::zeroed::zeroed_vec(total)?;
        let mut seeds: Vec<u64> = crate::zeroed::zeroed_vec(num_shards)?;
        let mut num_keys = 0u64;
        for pass in options.plan(&counts) {
            // Each part gets its shards' tables and seeds to write.
            let first = pass[0].start;
            let mut tables = &mut fingerprints[first * shard_slots..];
            let mut shard_seeds = &mut seeds[first..];
            let mut jobs = Vec::with_capacity(pass.len());
            for part in pass {
                let (t, rest) = core::mem::take(&mut tables).split_at_mut(part.len() * shard_slots);
                let (s, more) = core::mem::take(&mut shard_seeds).split_at_mut(part.len());
                (tables, shard_seeds) = (rest, more);
                jobs.push((part, t, s));
            }
            let built = run_jobs(jobs, |(part, tables, seeds)| {
                let mut group = Group::fill(source(), part.clone(), &counts, |h| (shard_of(h), h))?;
                let mut keys = 0u64;
                let shards = tables.chunks_mut(shard_slots).zip(seeds.iter_mut());
                for (s, (table, seed)) in part.zip(shards) {
                    let hashes = group.shard_mut(s);
                    if hashes.is_empty() {
                        continue;
                    }
                    let layout = |_| Ok(segments);
                    let shard = match segments.arity() {
                        FuseArity::Three => peel::build::<F, _, 3>(hashes, layout)?,
                        FuseArity::Four => peel::build::<F, _, 4>(hashes, layout)?,
                    };
                    table.copy_from_slice(&shard.fingerprints);
                    *seed = shard.seed;
                    keys += shard.num_keys as u64;
                }
                Ok::<_, Error>(keys)
            });
            for keys in built {
                num_keys += keys?;
            }
        }
        Ok(BinaryFuse::from_shards(fingerprints, segments, seeds, num_keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xor::{BinaryFuse16View, BinaryFuse8View};
    use crate::{hash_u64, BinaryFuse16, BinaryFuse8, Filter, FromBytes};

    fn key(i: u64) -> KeyHash {
        hash_u64(2 * i)
    }

    /// The keys `key(0..n)`, as a source.
    fn keys(n: u64) -> impl Fn() -> core::iter::Map<core::ops::Range<u64>, fn(u64) -> KeyHash> + Sync {
        move || (0..n).map(key as fn(u64) -> KeyHash)
    }

    fn sharded<F: FuseFingerprint>(n: u64, shards: usize, arity: FuseArity, threads: usize) -> BinaryFuse<F> {
        let options = StreamedBuild::new().with_memory(8 * 3000);
        // Without `std` every build runs on the calling thread.
        #[cfg(feature = "std")]
        let options = options.with_threads(threads).unwrap();
        #[cfg(not(feature = "std"))]
        let _ = threads;
        BinaryFuse::<F>::build_sharded(&keys(n), shards, &FuseParams::with_arity(arity), &options).unwrap()
    }

    #[test]
    fn shards_answer_like_a_set_at_the_fingerprint_fpr() {
        for arity in [FuseArity::Three, FuseArity::Four] {
            for (shards, threads) in [(2, 1), (8, 2), (16, 3)] {
                let f = sharded::<u8>(20_000, shards, arity, threads);
                assert_eq!((f.num_shards(), f.num_keys()), (shards, 20_000));
                assert!(keys(20_000)().all(|h| f.contains_hash(h)));
                // Space: the shards' tables, each sized for the largest.
                let single = Segments::for_keys(20_000 / shards, arity).unwrap().len() as f64;
                assert!(f.num_slots() as f64 <= 1.1 * single * shards as f64);
                let absent: Vec<KeyHash> = (0..200_000u64).map(|i| hash_u64(2 * i + 1)).collect();
                let fp = absent.iter().filter(|&&h| f.contains_hash(h)).count() as f64;
                let fpr = fp / absent.len() as f64;
                assert!((fpr * 256.0 - 1.0).abs() < 0.15, "{arity:?} {shards}: {fpr}");
                let mut out = alloc::vec![false; absent.len()];
                f.contains_hashes(&absent, &mut out);
                assert!(absent.iter().zip(&out).all(|(&h, &o)| o == f.contains_hash(h)));
            }
        }
    }

    #[test]
    fn sharded_bytes_round_trip_and_read_in_place() {
        let f = sharded::<u16>(9_000, 4, FuseArity::Three, 2);
        let bytes = f.to_bytes();
        assert_eq!(BinaryFuse16::from_bytes(&bytes).unwrap(), f);
        let view = BinaryFuse16View::new(&bytes).unwrap();
        let probes: Vec<KeyHash> = (0..20_000u64).map(hash_u64).collect();
        let mut out = alloc::vec![false; probes.len()];
        view.contains_hashes(&probes, &mut out);
        for (&h, &o) in probes.iter().zip(&out) {
            assert_eq!(view.contains_hash(h), f.contains_hash(h));
            assert_eq!(o, f.contains_hash(h));
        }
        assert_eq!(view.to_bytes(), bytes);
        // A single table's frame is unchanged by the shard fields.
        let single =
            BinaryFuse8::build_sharded(&keys(500), 1, &FuseParams::THREE_WISE, &StreamedBuild::new())
                .unwrap();
        let all: Vec<KeyHash> = keys(500)().collect();
        assert_eq!(single.to_bytes(), BinaryFuse8::build(&all).unwrap().to_bytes());
        assert!(BinaryFuse8View::new(&single.to_bytes()).is_ok());
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 24,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0017),
            ..proptest::test_runner::Config::default()
        })]

        /// Any key set drawn from a small pool (so with duplicates), 2 to
        /// 16 shards, either arity: every key found, the distinct keys
        /// counted, batches and the view answering as single queries.
        #[test]
        fn sharded_filters_hold_any_key_set(
            raw in proptest::collection::vec(0u64..4_000, 0..6_000usize),
            log_shards in 1u32..5,
            four in proptest::bool::ANY,
        ) {
            let hashes: Vec<KeyHash> = raw.iter().map(|&i| key(i)).collect();
            let arity = if four { FuseArity::Four } else { FuseArity::Three };
            let source = || hashes.iter().copied();
            let f = BinaryFuse::<u16>::build_sharded(
                &source,
                1 << log_shards,
                &FuseParams::with_arity(arity),
                &StreamedBuild::new().with_memory(8 * 500),
            ).unwrap();
            let mut distinct = raw.clone();
            distinct.sort_unstable();
            distinct.dedup();
            proptest::prop_assert_eq!(f.num_keys(), distinct.len());
            proptest::prop_assert!(hashes.iter().all(|&h| f.contains_hash(h)));
            let probes: Vec<KeyHash> = (0..5_000u64).map(key).collect();
            let bytes = f.to_bytes();
            let view = crate::xor::BinaryFuse16View::new(&bytes).unwrap();
            let mut out = alloc::vec![false; probes.len()];
            f.contains_hashes(&probes, &mut out);
            for (&h, &o) in probes.iter().zip(&out) {
                proptest::prop_assert_eq!(o, f.contains_hash(h));
                proptest::prop_assert_eq!(view.contains_hash(h), o);
            }
        }
    }

    #[test]
    fn no_keys_give_the_empty_filter() {
        let f =
            BinaryFuse8::build_sharded(&keys(0), 4, &FuseParams::THREE_WISE, &StreamedBuild::new()).unwrap();
        assert_eq!(f, BinaryFuse8::build(&[]).unwrap());
        assert!(BinaryFuse8::from_bytes(&f.to_bytes()).is_ok());
    }

    /// Pins the sharded frame: two shards of 40 keys' worth, 3-wise, 8-bit.
    #[test]
    fn golden_sharded_frame() {
        let f = sharded::<u8>(40, 2, FuseArity::Three, 1);
        let bytes = f.to_bytes();
        let hex: alloc::string::String = bytes.iter().map(|b| alloc::format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_SHARDED);
        assert_eq!(BinaryFuse8::from_bytes(&bytes).unwrap(), f);
    }

    const GOLDEN_SHARDED: &str = concat!(
        "414d5146020007012d000000800000000000000000000000000000000310000000020000002800000000000000020000",
        "00efba76d7bf8ca3faefba76d7bf8ca3fa00000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "595c003800e5a4000000000000000000c80000a477a49e0000940030a800032900000000000000003700002be4940000",
        "81000000000000000000000000005200a7009aa30c8d0000d300000000000000075000606c00000000b60331e300e500",
        "f70000000000000000a300d30000008de581cd34671f7010",
    );

    #[test]
    fn bad_shard_fields_are_errors() {
        let f = sharded::<u8>(5_000, 2, FuseArity::Three, 1);
        let good = f.to_bytes();
        // The shard count sits after the 25 bytes of fuse parameters, at
        // byte 20 + 25 of the frame; rewrite it and reseal.
        for count in [2u32, 0, 1, 3, 6, 1 << 31] {
            let mut bytes = good.clone();
            bytes[45..49].copy_from_slice(&count.to_le_bytes());
            let end = bytes.len() - 8;
            let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
            bytes[end..].copy_from_slice(&sum.to_le_bytes());
            // The true count, resealed, still decodes.
            assert_eq!(BinaryFuse8::from_bytes(&bytes).is_ok(), count == 2, "{count}");
            assert_eq!(BinaryFuse8View::new(&bytes).is_ok(), count == 2, "{count}");
        }
    }
}
