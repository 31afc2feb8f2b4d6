//! Standard Ribbon filter (Dillinger & Walzer 2021, "Ribbon filter:
//! practically smarter than Bloom and Xor", arXiv:2103.02515): a static
//! filter within a few percent of the space limit `log2(1/FPR)` bits per key.
//!
//! # The idea
//!
//! Each key `x` becomes one linear equation over GF(2) (see `row.rs`):
//!
//! ```text
//!   c(x) · Z[s(x) .. s(x) + 128] = f(x)          (r-bit values)
//! ```
//!
//! where `s(x)` is a start slot, `c(x)` 128 random coefficient bits with the
//! first one set, and `f(x)` an `r`-bit fingerprint. `Z` is a table of `m`
//! slots of `r` bits each. Construction solves the system for `Z`; a query
//! recomputes `c(y) · Z[..]` and compares it with `f(y)`. A stored key always
//! matches (no false negatives). For a key that was not stored, `f(y)` is
//! independent of `c(y) · Z`, so each of the `r` bits matches with
//! probability 1/2:
//!
//! ```text
//!   FPR = 2^-r,     bits/key = r · m / n = r · (1 + ε)
//! ```
//!
//! against the lower bound `log2(1/FPR) = r` bits per key (a Bloom filter
//! needs `1.44 r`). Everything turns on how small the slot overhead `ε` can
//! be while the system stays solvable.
//!
//! Because each row only covers 128 consecutive slots, the coefficient
//! matrix, with rows sorted by start, is a band, and Gaussian elimination
//! stays inside it: `banding.rs` adds equations one at a time ("on-the-fly",
//! section 2.2 of the paper) in O(1/ε) 128-bit XORs per key, and
//! `solution.rs` back-substitutes into an interleaved layout in O(r) per slot.
//!
//! # Shards: why the overhead can be 1.6–2.5%
//!
//! A band of width `w = 128` fails when, somewhere, more rows start in a
//! stretch of slots than fit there: mostly near the end of the band, where
//! the rows pushed forward by earlier overloads pile up. One big band must
//! avoid that everywhere, so the overhead it needs grows with `n`. Measured
//! with an earlier single-band version of this code (one seed per attempt,
//! `r = 7`): at `n = 100,000`, 3% overhead failed 9% of attempts and 2%
//! failed 44%; at `n = 1,000,000`, 3% failed 60% and 4% still 40%.
//!
//! So the keys are split into shards of about [`SHARD_KEYS`] (8,192) keys by
//! the high bits of their hash, and each shard is its own small band with its
//! own seed and its own size (`keys · SLOTS_PER_KEY`, at least 64 extra
//! slots, rounded to whole 64-slot blocks). A shard that fails is rebuilt
//! alone with the next seed, which is cheap, so a shard may fail often and
//! the overhead can be small. The cost is a 16-byte descriptor per shard
//! (0.016 bits/key) and one table lookup per query. The slots per key were
//! chosen from this measurement (`cargo run --release -p amq --example
//! ribbon_overhead -- K 300 RATIO...`: share of shard attempts that fail,
//! 300 random key sets per cell, `r = 7`; a cell's extra slots are
//! `max(K·(ratio − 1), 64)` rounded to whole blocks):
//!
//! | keys in shard `K` | ratio 1.0 (64 extra) | 1.0156 | **1.025** | 1.035 |
//! |-------------------|-----------|--------|-----------|-------|
//! | 2,048             | 0%        | 0%     | 0%        | 0%    |
//! | 4,096             | 17%       | 17%    | 0.7%      | 0.7%  |
//! | 6,144             | 38%       | 6.2%   | 6.2%      | 0.7%  |
//! | 8,192             | 58%       | 17%    | 4.2%      | 1.6%  |
//!
//! and, for the whole filter at `n = 1,000,000`, `r = 7` (`cargo run
//! --release -p amq-bench --example ribbon_speed -- 1000000 7 RATIO`, thread CPU
//! time on a shared 2-core machine, so build times are only comparable
//! within the table):
//!
//! | slots per key | bits/key | over `r` | shard attempts / shards | build ns/key |
//! |---------------|----------|----------|-------------------------|--------------|
//! | 1.0156        | 7.125    | 1.8%     | 161 / 123               | 145–160      |
//! | **1.025**     | 7.190    | 2.7%     | 128 / 123               | 96–110       |
//! | 1.035         | 7.258    | 3.7%     | 125 / 123               | 96           |
//! | 1.05          | 7.366    | 5.2%     | 123 / 123               | 83           |
//!
//! (Failure shares and attempts re-measured after the seed moved from the
//! remix to a multiplication, see `row.rs`: within the trial-to-trial noise
//! of the earlier numbers; build times are from the earlier measurement.)
//!
//! The default [`SLOTS_PER_KEY`] = 1.025 keeps the space well inside 5% over
//! `r` while construction stays near 100 ns/key; elimination work grows like
//! `1/ε` (about 26 XOR steps per key at 1.0156, 16 at 1.025, 8 at 1.05).
//! [`RibbonParams::with_slots_per_key`]`(1.0 + 1.0 / 64.0)` buys the 1.8%
//! setting for about 1.4× the build time.
//!
//! # Retries never hang
//!
//! A shard tries at most [`MAX_ATTEMPTS`] seeds. The seed redraws starts and
//! coefficients (redrawing coefficients alone rarely helps: the failures come
//! from where rows start), and every 8 failed attempts the shard's extra
//! slots double, so a shard of any size is solved long before the limit; only
//! then would [`Error::BuildFailed`] be returned. Duplicate hashes are
//! removed first (an identical row would be harmless, but the key count must
//! count distinct keys), so no key set can force a failure.
//!
//! # Fractional bits per key
//!
//! With an integer `r` the FPR can only be a power of two. As in RocksDB's
//! interleaved solution, blocks of 64 slots may hold `r` or `r + 1` columns:
//! each shard's blocks from `upper_start` on hold `r + 1`, and a key uses the
//! column count of its start block (rows only reach forward, so that is
//! always well defined; see `solution.rs`). [`RibbonParams::with_fpr`] and
//! [`RibbonParams::with_bits_per_key`] pick `r` and the share of `r + 1`
//! blocks; the expected FPR is the start-weighted mix of `2^-r` and
//! `2^-(r+1)`.
//!
//! # Layout and query
//!
//! Each shard's solution is stored block by block, one `u64` per column per
//! block of 64 slots (column-major inside the block), and the shards one
//! after another, followed by a few zero words of padding (in memory only,
//! not serialized). A query:
//!
//! 1. multiplies the hash once and looks up its shard descriptor, and *at
//!    the same time* remixes the hash (three multiplications) without the
//!    shard's seed, so the remix overlaps with the load;
//! 2. applies the seed with one multiplication, and takes the start slot
//!    and the 128 coefficient bits from the product;
//! 3. reads the three consecutive blocks its 128-slot row covers (at
//!    r = 7: 168 bytes, at most four cache lines) in groups of eight
//!    columns, running past a block's last column into the next block or the
//!    padding instead of branching per column, and computes eight parities
//!    per group without branches: portably with a shift-XOR fold and no
//!    popcount instruction (`solution.rs`), or, on CPUs with AVX-512F and
//!    `VPOPCNTDQ`, with three vector ANDs, a XOR, a `vpopcntq` and a test
//!    mask (`kernel.rs`). The kernel is chosen once, when the filter is made.
//!
//! [`Filter::contains_many`] first locates a batch of 16 keys and
//! prefetches their blocks, then computes their parities, so the batch's
//! cache misses overlap (this pays at 10M keys, where the filter no longer
//! fits in L2). The layout work and the AVX-512 kernel each made queries
//! faster; `docs/ribbon.md` and `docs/benchmarks.md` have the measurements
//! and their commands.
//!
//! # Build memory
//!
//! Besides the finished filter: 8 bytes per key (every key's first hash
//! step, grouped by shard, sorted and deduplicated in place), one count per
//! shard, and one banding of 32 bytes per slot for one shard at a time
//! (about 270 KB, reused for every shard). So about 8 bytes per key plus a
//! constant.
//!
//! # Invariants
//!
//! * A stored banding row at slot `i` has its leading 1 at `i` and no bit
//!   past the shard's last slot; every start is below `num_slots − 127`.
//! * Shards are laid out one after another; a query reads only its shard's
//!   words, and decoding checks every shard's shape and that the payload is
//!   exactly the words the shapes imply, before allocating.
//! * `r = 32` blocks never get an extra column (a fingerprint is a `u32`).

mod banding;
mod config;
mod kernel;
mod order;
mod row;
mod shard;
mod solution;
mod view;

pub use config::{RibbonParams, MAX_RESULT_BITS, SHARD_KEYS, SLOTS_PER_KEY};
pub use view::RibbonView;

use alloc::vec::Vec;

use self::banding::Banding;
use self::kernel::Kernel;
use self::order::Grouped;
use self::row::{coeff_of, mixed, result_of, seeded, shard_of, spread, start_of, unmixed, Row};
use self::shard::Shard;
use self::solution::{padding_words, solve_into, Geometry, GroupWords, Window};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::{Error, Filter, FilterKind, FormatError, FromBytes, StaticFilter};

/// Seeds tried per shard before construction gives up with
/// [`Error::BuildFailed`]. The shard's extra slots double every 8 attempts,
/// so in practice the limit is never reached.
pub const MAX_ATTEMPTS: u32 = 64;

/// Keys per batch in `contains_many`: their windows wait on the stack while
/// the prefetches of the whole batch are in flight.
const BATCH: usize = 16;

/// Serialized bytes per shard descriptor in format version 1: blocks (u32),
/// extra-column start block (u32), result bits (u8), seed (u8).
const SHARD_RECORD_BYTES_V1: usize = 10;
/// Serialized bytes per shard descriptor in format version 2: the shard's
/// two packed words (`shard.rs`), word offset included, so a view finds any
/// shard's words in O(1).
pub(crate) const SHARD_RECORD_BYTES_V2: usize = 16;

/// A standard Ribbon filter (Dillinger & Walzer 2021): a static filter at
/// about 2.7% above `log2(1/FPR)` bits per key. See the [module
/// docs](self) for the design.
///
/// ```
/// use amq::{Filter, Ribbon, RibbonParams, StaticFilter};
///
/// let keys: Vec<u64> = (0..100_000u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
/// let f = Ribbon::build(&keys, &RibbonParams::with_result_bits(7).unwrap()).unwrap();
/// assert!(keys.iter().all(|&h| f.contains_hash(h)));
///
/// // 7 bits of fingerprint: FPR 2^-7 = 0.78% at under 7.35 bits per key.
/// assert!(f.bits_per_key() < 7.35, "{}", f.bits_per_key());
/// assert_eq!(f.expected_fpr(), 1.0 / 128.0);
/// let absent = 200_000;
/// let fp = (1u64 << 40..(1 << 40) + absent)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// let fpr = fp as f64 / absent as f64;
/// assert!((fpr / f.expected_fpr() - 1.0).abs() < 0.15, "{fpr}");
///
/// // Any FPR, not only powers of two: 1% at about 6.9 bits per key
/// // (Bloom needs 9.6).
/// let g = Ribbon::build(&keys, &RibbonParams::with_fpr(0.01).unwrap()).unwrap();
/// assert!((g.expected_fpr() - 0.01).abs() < 1e-4);
/// assert!(g.bits_per_key() < 7.0, "{}", g.bits_per_key());
/// ```
#[derive(Debug, Clone)]
pub struct Ribbon {
    /// Every shard's interleaved solution, one after the other, then
    /// `padding_words` zeros (not serialized) that queries may over-read.
    words: Vec<u64>,
    shards: Vec<Shard>,
    num_keys: u64,
    /// The query kernel chosen for this CPU when the filter was made; never
    /// changes an answer, so it is not part of equality or of the bytes.
    kernel: Kernel,
}

impl PartialEq for Ribbon {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words && self.shards == other.shards && self.num_keys == other.num_keys
    }
}

impl Eq for Ribbon {}

impl Ribbon {
    /// Number of shards the keys were split into (`ceil(n / SHARD_KEYS)`).
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// Construction attempts over all shards (one per seed tried); the
    /// number of shards with keys when every first attempt succeeded.
    pub fn attempts(&self) -> u64 {
        self.shards
            .iter()
            .filter(|s| s.geometry().num_blocks != 0)
            .map(|s| s.seed() as u64 + 1)
            .sum()
    }

    /// Total slots over all shards.
    pub fn num_slots(&self) -> usize {
        self.shards.iter().map(|s| s.geometry().num_slots()).sum()
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.kernel.contains(self, hash)
    }

    /// The query kernel this filter chose for the running CPU when it was
    /// made: `"avx512"` (AVX-512F with `VPOPCNTDQ`: the eight parities of a
    /// column group in a handful of vector instructions) or `"portable"`.
    /// Both answer identically.
    ///
    /// ```
    /// use amq::{Ribbon, RibbonParams, StaticFilter};
    /// let f = Ribbon::build(&[1, 2, 3], &RibbonParams::with_result_bits(7).unwrap()).unwrap();
    /// assert!(["avx512", "portable"].contains(&f.query_kernel()));
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// The single query, with `group` computing a column group's parities
    /// (what a [`Kernel`] plugs in).
    #[inline(always)]
    fn contains_by(&self, hash: u64, group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32) -> bool {
        match self.locate(hash) {
            Some((window, result)) => window.matches(&self.words, result, group),
            None => false,
        }
    }

    /// The batched query: locates a batch of keys first, prefetching their
    /// blocks, then reads them, so the cache misses of a batch overlap.
    #[inline(always)]
    fn contains_many_by(
        &self,
        hashes: &[u64],
        out: &mut [bool],
        group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32 + Copy,
    ) {
        let mut located = [None; BATCH];
        for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (l, &h) in located.iter_mut().zip(hs) {
                *l = self.locate(h);
                if let Some((window, _)) = l {
                    window.prefetch(&self.words);
                }
            }
            for (o, l) in os.iter_mut().zip(&located) {
                *o = match l {
                    Some((window, result)) => window.matches(&self.words, *result, group),
                    None => false,
                };
            }
        }
    }

    /// The window of the key with this hash and its fingerprint bits; `None`
    /// when its shard holds no keys.
    #[inline(always)]
    fn locate(&self, hash: u64) -> Option<(Window, u32)> {
        locate_with(self.shards.len(), |i| self.shards.get(i).copied(), hash)
    }

    /// Whether `key` may be in the set.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(crate::hash_key(key))
    }

    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        if frame.version < 2 {
            return Self::from_frame_v1(frame);
        }
        let parts = parse_frame_v2(frame)?;
        let mut shards = Vec::new();
        shards
            .try_reserve_exact(parts.num_shards)
            .map_err(|_| Error::TooLarge)?;
        let (total_words, total_slots, _) = check_records_v2(parts.records, |s| shards.push(s))?;
        check_totals(&parts, total_words, total_slots)?;
        let mut words = Reader::new(parts.words);
        let words = words.u64s(parts.words.len() / 8, padding(&shards))?;
        Ok(Ribbon {
            words,
            shards,
            num_keys: parts.num_keys,
            kernel: Kernel::detect(),
        })
    }

    /// Format version 1: the shard records (10 bytes, no word offsets)
    /// before the words.
    fn from_frame_v1(mut frame: Frame<'_>) -> Result<Self, Error> {
        let num_keys = frame.params.u64()?;
        let num_shards = frame.params.u64()?;
        frame.params.finish()?;
        let bad = FormatError::InvalidParameters;
        // Bound the shard count by the input before allocating for it.
        if num_shards > (frame.payload.remaining() / SHARD_RECORD_BYTES_V1) as u64 {
            return Err(FormatError::Truncated.into());
        }
        if (num_shards == 0) != (num_keys == 0) {
            return Err(bad("key count does not match the shard count").into());
        }
        let mut shards = Vec::new();
        shards
            .try_reserve_exact(num_shards as usize)
            .map_err(|_| Error::TooLarge)?;
        let (mut total_words, mut total_slots) = (0usize, 0u64);
        for _ in 0..num_shards {
            let num_blocks = frame.payload.u32()?;
            let upper_start = frame.payload.u32()? as usize;
            let base_columns = frame.payload.u8()? as u32;
            let seed = frame.payload.u8()?;
            let g = Geometry {
                num_blocks: num_blocks as usize,
                base_columns,
                upper_start,
            };
            check_shard(&g, seed)?;
            shards.push(Shard::new(total_words, &g, seed).map_err(|_| bad("shard too large"))?);
            total_words = g
                .num_words()
                .and_then(|w| total_words.checked_add(w))
                .ok_or(FormatError::Truncated)?;
            total_slots = total_slots.saturating_add(g.num_slots() as u64);
        }
        if num_keys > total_slots {
            return Err(bad("more keys than slots").into());
        }
        if frame.payload.remaining() != total_words.saturating_mul(8) {
            return Err(bad("payload length does not match the shards").into());
        }
        let words = frame.payload.u64s(total_words, padding(&shards))?;
        frame.payload.finish()?;
        Ok(Ribbon {
            words,
            shards,
            num_keys,
            kernel: Kernel::detect(),
        })
    }
}

/// A version-2 Ribbon frame split into its parts, lengths checked (the
/// shard records themselves are checked by [`check_records_v2`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RibbonParts<'a> {
    pub(crate) num_keys: u64,
    pub(crate) num_shards: usize,
    /// The solution words, little-endian: `words.len() / 8` of them.
    pub(crate) words: &'a [u8],
    /// `num_shards` records of [`SHARD_RECORD_BYTES_V2`].
    pub(crate) records: &'a [u8],
}

/// Splits a version-2 frame: parameters `u64` keys, `u64` shards, `u64`
/// words `W`; payload `W` words, then the shard records.
pub(crate) fn parse_frame_v2(mut frame: Frame<'_>) -> Result<RibbonParts<'_>, Error> {
    let num_keys = frame.params.u64()?;
    let num_shards = frame.params.u64()?;
    let num_words = frame.params.u64()?;
    frame.params.finish()?;
    let bad = FormatError::InvalidParameters;
    if (num_shards == 0) != (num_keys == 0) {
        return Err(bad("key count does not match the shard count").into());
    }
    let expected = num_words
        .checked_mul(8)
        .and_then(|w| w.checked_add(num_shards.checked_mul(SHARD_RECORD_BYTES_V2 as u64)?))
        .ok_or(FormatError::Truncated)?;
    if expected != frame.payload.remaining() as u64 {
        return Err(bad("payload length does not match the word and shard counts").into());
    }
    // Both fit: their sum is the payload length.
    let words = frame.payload.take(num_words as usize * 8)?;
    let records = frame.payload.take(num_shards as usize * SHARD_RECORD_BYTES_V2)?;
    frame.payload.finish()?;
    Ok(RibbonParts {
        num_keys,
        num_shards: num_shards as usize,
        words,
        records,
    })
}

/// Checks what the shard records imply against the rest of the frame.
pub(crate) fn check_totals(
    parts: &RibbonParts<'_>,
    total_words: usize,
    total_slots: u64,
) -> Result<(), Error> {
    let bad = FormatError::InvalidParameters;
    if parts.num_keys > total_slots {
        return Err(bad("more keys than slots").into());
    }
    if parts.words.len() != total_words.saturating_mul(8) {
        return Err(bad("payload length does not match the shards").into());
    }
    Ok(())
}

/// The window of the key with this hash and its fingerprint bits, reading
/// shard `i` of `num_shards` through `shard_at` (the owned table, or a
/// view's shard records in place); `None` when its shard holds no keys.
#[inline(always)]
pub(crate) fn locate_with(
    num_shards: usize,
    shard_at: impl Fn(usize) -> Option<Shard>,
    hash: u64,
) -> Option<(Window, u32)> {
    let a = mixed(hash);
    // Independent of the shard: overlaps with the descriptor's load.
    let p = spread(hash);
    let shard = shard_at(shard_of(a, num_shards as u64))?;
    let num_starts = shard.num_starts();
    if num_starts == 0 {
        return None;
    }
    let q = seeded(p, shard.seed());
    let start = start_of(q, num_starts as u64);
    let window = Window::new(shard.first_word(), &shard.geometry(), start, coeff_of(q));
    Some((window, result_of(a)))
}

/// Checks one shard's geometry and seed as decoded (either version).
fn check_shard(g: &Geometry, seed: u8) -> Result<(), Error> {
    let bad = FormatError::InvalidParameters;
    if !(1..=MAX_RESULT_BITS).contains(&g.base_columns) {
        return Err(bad("result bits must be in 1..=32").into());
    }
    if g.upper_start > g.num_blocks || (g.base_columns == MAX_RESULT_BITS && g.upper_start != g.num_blocks) {
        return Err(bad("extra-column start block out of range").into());
    }
    if g.num_blocks == 1 || seed as u32 >= MAX_ATTEMPTS {
        return Err(bad("invalid shard").into());
    }
    Ok(())
}

/// The shard records of a version-2 frame, checked: each record is the
/// shard's two packed words (`shard.rs`), and must be exactly what
/// [`Shard::new`] makes of the geometry it claims at the running word
/// offset, so an offset, a start count or a field out of range is refused.
/// Calls `each` with every shard in order; returns the total words, the
/// total slots and the summed per-shard FPR.
pub(crate) fn check_records_v2(
    records: &[u8],
    mut each: impl FnMut(Shard),
) -> Result<(usize, u64, f64), Error> {
    let bad = FormatError::InvalidParameters;
    let (mut total_words, mut total_slots, mut fpr) = (0usize, 0u64, 0.0);
    for record in records.chunks_exact(SHARD_RECORD_BYTES_V2) {
        let word = |i: usize| {
            let mut le = [0u8; 8];
            le.copy_from_slice(&record[8 * i..8 * i + 8]);
            u64::from_le_bytes(le)
        };
        let claimed = Shard::from_raw(word(0), word(1));
        let g = claimed.geometry();
        check_shard(&g, claimed.seed())?;
        if Shard::new(total_words, &g, claimed.seed()) != Ok(claimed) {
            return Err(bad("shard record does not match its geometry or offset").into());
        }
        total_words = g
            .num_words()
            .and_then(|w| total_words.checked_add(w))
            .ok_or(FormatError::Truncated)?;
        total_slots = total_slots.saturating_add(g.num_slots() as u64);
        fpr += g.expected_fpr();
        each(claimed);
    }
    Ok((total_words, total_slots, fpr))
}

/// What [`Ribbon::build`] makes from `n` distinct keys with `params`,
/// predicted without building it (see [`Prediction`]): the keys spread
/// evenly over the shards, every shard solved at its first attempt's size.
/// Real shards hold a binomial share of the keys and rarely need a second
/// size, so a built filter's bytes differ from this by a fraction of a
/// percent.
pub(crate) fn predict(n: usize, params: &RibbonParams) -> Result<Prediction, Error> {
    let num_shards = n.div_ceil(SHARD_KEYS);
    if num_shards == 0 {
        return Ok(Prediction::default());
    }
    // `bigger` shards of `base + 1` keys, the rest of `base` (at least 1).
    let (base, bigger) = (n / num_shards, n % num_shards);
    let (mut words, mut blocks, mut fpr, mut max_columns) = (0usize, 0usize, 0.0, 0);
    for (keys, shards) in [(base, num_shards - bigger), (base + 1, bigger)] {
        if shards == 0 {
            continue;
        }
        let g = params.geometry(keys, 0)?;
        words = g
            .num_words()
            .and_then(|w| w.checked_mul(shards))
            .and_then(|w| w.checked_add(words))
            .ok_or(Error::TooLarge)?;
        blocks = blocks.saturating_add(g.num_blocks.saturating_mul(shards));
        fpr += g.expected_fpr() * shards as f64;
        max_columns = max_columns.max(g.max_columns());
    }
    let bytes = words
        .checked_add(padding_words(max_columns))
        .and_then(|w| w.checked_mul(8))
        .and_then(|b| b.checked_add(num_shards.checked_mul(core::mem::size_of::<Shard>())?))
        .ok_or(Error::TooLarge)?;
    Ok(Prediction {
        bytes,
        fpr: fpr / num_shards as f64,
        mean_columns: words as f64 / blocks as f64,
    })
}

/// A Ribbon filter's size and FPR as [`predict`] computes them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Prediction {
    /// [`Filter::size_in_bytes`].
    pub(crate) bytes: usize,
    /// [`Filter::expected_fpr`].
    pub(crate) fpr: f64,
    /// Result bits (columns) per slot, averaged over the blocks.
    pub(crate) mean_columns: f64,
}

/// The zero words after the solution: enough for the widest block.
fn padding(shards: &[Shard]) -> usize {
    let max_columns = shards.iter().map(|s| s.geometry().max_columns()).max();
    padding_words(max_columns.unwrap_or(0))
}

/// The low `columns` bits (`columns` in `1..=32`).
#[inline(always)]
fn column_mask(columns: u32) -> u32 {
    u32::MAX >> (32 - columns)
}

/// Bands one shard's keys (sorted by start) with shard seed `seed`; `false`
/// if the system has no solution.
fn band_shard(banding: &mut Banding, keys: &[u64], g: &Geometry, seed: u8) -> Result<bool, Error> {
    banding.reset(g.num_slots())?;
    let num_starts = g.num_starts() as u64;
    Ok(banding.add_all(keys.iter().map(|&a| {
        let q = seeded(spread(unmixed(a)), seed);
        let start = start_of(q, num_starts);
        Row {
            start,
            coeff: coeff_of(q),
            result: result_of(a) & column_mask(g.columns_at(start)),
        }
    })))
}

/// Grows `v` by `n` zeros, reserving exactly that much if it lacks room
/// ([`Error::TooLarge`] if the allocator refuses).
fn grow_exact(v: &mut Vec<u64>, n: usize) -> Result<(), Error> {
    let capacity = v.capacity();
    v.try_reserve_exact(n).map_err(|_| Error::TooLarge)?;
    if v.capacity() != capacity {
        crate::zeroed::advise_huge_pages(v);
    }
    v.resize(v.len() + n, 0);
    Ok(())
}

impl Ribbon {
    /// Builds the filter from [`hash_key`](crate::hash_key) values
    /// (duplicates allowed): the same as [`StaticFilter::build`], without
    /// importing the trait.
    ///
    /// The words are allocated once, for every shard solved at its first
    /// attempt's size (what almost always happens); a shard that needs more
    /// slots grows them by exactly its size, and any excess is given back at
    /// the end, so [`size_in_bytes`](Filter::size_in_bytes) is what the
    /// filter holds.
    ///
    /// ```
    /// use amq::{Filter, Ribbon, RibbonParams};
    /// let keys: Vec<u64> = (0..1000u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
    /// let f = Ribbon::build(&keys, &RibbonParams::with_fpr(0.01)?)?;
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(hashes: &[u64], params: &RibbonParams) -> Result<Self, Error> {
        let num_shards = hashes.len().div_ceil(SHARD_KEYS);
        let grouped = Grouped::new(hashes, num_shards)?;
        let (mut first_words, mut max_columns) = (0usize, 0);
        for s in 0..num_shards {
            let keys = grouped.shard(s).len();
            if keys > 0 {
                let g = params.geometry(keys, 0)?;
                first_words = g
                    .num_words()
                    .and_then(|w| first_words.checked_add(w))
                    .ok_or(Error::TooLarge)?;
                max_columns = max_columns.max(g.max_columns());
            }
        }
        let mut words = Vec::new();
        let estimate = first_words.checked_add(padding_words(max_columns));
        words
            .try_reserve_exact(estimate.ok_or(Error::TooLarge)?)
            .map_err(|_| Error::TooLarge)?;
        let mut shards = Vec::new();
        shards
            .try_reserve_exact(num_shards)
            .map_err(|_| Error::TooLarge)?;
        let mut banding = Banding::new(0)?;
        for s in 0..num_shards {
            let keys = grouped.shard(s);
            if keys.is_empty() {
                let g = Geometry {
                    num_blocks: 0,
                    base_columns: params.empty_columns(),
                    upper_start: 0,
                };
                shards.push(Shard::new(words.len(), &g, 0)?);
                continue;
            }
            let mut solved = false;
            for attempt in 0..MAX_ATTEMPTS {
                let g = params.geometry(keys.len(), attempt)?;
                let seed = attempt as u8;
                if band_shard(&mut banding, keys, &g, seed)? {
                    shards.push(Shard::new(words.len(), &g, seed)?);
                    let first = words.len();
                    grow_exact(&mut words, g.num_words().ok_or(Error::TooLarge)?)?;
                    solve_into(&banding, &g, &mut words[first..]);
                    solved = true;
                    break;
                }
            }
            if !solved {
                return Err(Error::BuildFailed {
                    attempts: MAX_ATTEMPTS,
                });
            }
        }
        let grouped_distinct = grouped.num_distinct() as u64;
        drop((banding, grouped));
        grow_exact(&mut words, padding(&shards))?;
        words.shrink_to_fit();
        Ok(Ribbon {
            words,
            shards,
            num_keys: grouped_distinct,
            kernel: Kernel::detect(),
        })
    }
}

impl StaticFilter for Ribbon {
    type Params = RibbonParams;

    fn build(hashes: &[u64], params: &RibbonParams) -> Result<Self, Error> {
        Ribbon::build(hashes, params)
    }
}

impl Filter for Ribbon {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        Ribbon::contains_hash(self, hash)
    }

    /// Locates a batch of keys first, prefetching their blocks, then reads
    /// them, so the cache misses of a batch overlap.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    fn contains_many(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
        self.kernel.contains_many(self, hashes, out);
    }

    /// The words (with the few zero words of query padding after them) and
    /// the shard descriptors: every heap byte the filter holds.
    fn size_in_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.shards.capacity() * core::mem::size_of::<Shard>()
    }

    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }

    fn expected_fpr(&self) -> f64 {
        // A random query lands in each shard with equal probability.
        match self.shards.len() {
            0 => 0.0,
            s => {
                self.shards
                    .iter()
                    .map(|sh| sh.geometry().expected_fpr())
                    .sum::<f64>()
                    / s as f64
            }
        }
    }

    fn kind(&self) -> FilterKind {
        FilterKind::Ribbon
    }

    fn to_bytes(&self) -> Vec<u8> {
        let words = &self.words[..self.words.len() - padding(&self.shards)];
        let mut p = ByteWriter::default();
        p.u64(self.num_keys)
            .u64(self.shards.len() as u64)
            .u64(words.len() as u64);
        let payload_len = words.len() * 8 + self.shards.len() * SHARD_RECORD_BYTES_V2;
        format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
            w.u64s(words);
            for shard in &self.shards {
                w.u64s(&shard.to_raw());
            }
        })
    }
}

impl FromBytes for Ribbon {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::Ribbon)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// A version-1 frame with a valid checksum around hand-made shard
    /// records (records first, 10 bytes each, then the words).
    fn frame(num_keys: u64, shards: &[(u32, u32, u8, u8)], words: usize) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(num_keys).u64(shards.len() as u64);
        let params = p.into_vec();
        let mut w = ByteWriter::default();
        w.bytes(b"AMQF").u16(1).u8(FilterKind::Ribbon.id()).u8(1);
        w.u32(params.len() as u32)
            .u64((shards.len() * SHARD_RECORD_BYTES_V1 + words * 8) as u64)
            .bytes(&params);
        for &(blocks, upper, r, seed) in shards {
            w.u32(blocks).u32(upper).u8(r).u8(seed);
        }
        w.u64s(&vec![0; words]);
        let mut b = w.into_vec();
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// The same shards as a version-2 frame: the words, then each shard's
    /// packed words as `shard.rs` lays them out, offsets running (or as
    /// `offset_error` skews them).
    fn frame_v2(num_keys: u64, shards: &[(u32, u32, u8, u8)], words: usize, offset_error: u64) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(num_keys).u64(shards.len() as u64).u64(words as u64);
        let len = words * 8 + shards.len() * SHARD_RECORD_BYTES_V2;
        format::encode(FilterKind::Ribbon, &p.into_vec(), len, |w| {
            w.u64s(&vec![0; words]);
            let mut first_word = offset_error;
            for &(blocks, upper, r, seed) in shards {
                let starts = (blocks as u64 * 64).saturating_sub(127);
                w.u64(first_word | (r as u64) << 48 | (seed as u64) << 56)
                    .u64(starts | (upper as u64) << 32);
                first_word += blocks as u64 * r as u64 + (blocks - upper.min(blocks)) as u64;
            }
        })
    }

    #[test]
    fn decoder_checks_every_shard_field() {
        // Well formed: 2 blocks, 3 columns, the second block with 4.
        assert!(Ribbon::from_bytes(&frame(5, &[(2, 1, 3, 0)], 7)).is_ok());
        assert_eq!(
            Ribbon::from_bytes(&frame(5, &[(2, 1, 3, 0)], 7)),
            Ribbon::from_bytes(&frame_v2(5, &[(2, 1, 3, 0)], 7, 0))
        );
        type Case<'a> = (u64, &'a [(u32, u32, u8, u8)], usize);
        let bad: [Case<'_>; 12] = [
            (5, &[(2, 1, 0, 0)], 2),                // 0 columns
            (5, &[(2, 1, 33, 0)], 67),              // 33 columns
            (5, &[(2, 3, 3, 0)], 6),                // extra columns past the end
            (5, &[(2, 1, 32, 0)], 65),              // 33 columns in block 1
            (5, &[(1, 1, 3, 0)], 3),                // one block: no room for a row
            (5, &[(2, 2, 3, 64)], 6),               // seed beyond the attempts
            (500, &[(2, 2, 3, 0)], 6),              // more keys than slots
            (0, &[(2, 2, 3, 0)], 6),                // shards but no keys
            (5, &[], 0),                            // keys but no shards
            (5, &[(2, 2, 3, 0)], 7),                // payload longer than the shards
            (5, &[(2, 2, 3, 0)], 5),                // payload shorter
            (5, &[(u32::MAX, u32::MAX, 32, 0)], 0), // huge shard, tiny payload
        ];
        for (i, (keys, shards, words)) in bad.iter().enumerate() {
            assert!(
                Ribbon::from_bytes(&frame(*keys, shards, *words)).is_err(),
                "v1 case {i} decoded"
            );
            assert!(
                Ribbon::from_bytes(&frame_v2(*keys, shards, *words, 0)).is_err(),
                "v2 case {i} decoded"
            );
        }
        // Version 2 only: a word offset that is not the running sum.
        let two = [(2, 1, 3, 0), (2, 2, 3, 1)];
        assert!(Ribbon::from_bytes(&frame_v2(5, &two, 13, 0)).is_ok());
        assert!(Ribbon::from_bytes(&frame_v2(5, &two, 13, 1)).is_err());
        // A start count that no block count gives.
        let mut b = frame_v2(5, &[(2, 1, 3, 0)], 7, 0);
        let shape_at = b.len() - 8 - 8;
        b[shape_at] ^= 2;
        let end = b.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&b[..end]);
        b[end..].copy_from_slice(&sum.to_le_bytes());
        assert!(Ribbon::from_bytes(&b).is_err());
    }

    #[test]
    fn huge_shard_count_is_refused_before_allocating() {
        let mut p = ByteWriter::default();
        p.u64(1).u64(u64::MAX).u64(0);
        let bytes = format::encode(FilterKind::Ribbon, &p.into_vec(), 0, |_| {});
        assert_eq!(
            Ribbon::from_bytes(&bytes),
            Err(Error::Format(FormatError::Truncated))
        );
        let mut p = ByteWriter::default();
        p.u64(1).u64(u64::MAX);
        let mut b = frame(1, &[], 0);
        b.truncate(20);
        b[8..12].copy_from_slice(&16u32.to_le_bytes());
        b.extend_from_slice(&p.into_vec());
        let sum = xxhash_rust::xxh3::xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(Ribbon::from_bytes(&b), Err(Error::Format(FormatError::Truncated)));
    }

    #[test]
    fn empty_shards_answer_no() {
        // Two shards of input but one distinct key: one shard stays empty.
        let keys = vec![7u64; SHARD_KEYS + 1];
        let f = Ribbon::build(&keys, &RibbonParams::with_result_bits(4).unwrap()).unwrap();
        assert_eq!((f.num_shards(), f.num_keys()), (2, 1));
        assert!(f.contains_hash(7));
        let back = Ribbon::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(back, f);
        let absent = (0..10_000u64).filter(|&h| f.contains_hash(h)).count();
        assert!(absent < 2_000, "{absent}");
        // The batch path agrees, keys in the empty shard included.
        let probe: Vec<u64> = (0..10_000u64).collect();
        let mut out = vec![false; probe.len()];
        f.contains_many(&probe, &mut out);
        assert!(probe.iter().zip(&out).all(|(&h, &o)| f.contains_hash(h) == o));
    }
}
