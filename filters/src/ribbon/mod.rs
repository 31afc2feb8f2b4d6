//! Ribbon filter (Dillinger & Walzer 2021, "Ribbon filter: practically
//! smarter than Bloom and Xor", arXiv:2103.02515), bumped as in BuRR
//! (Dillinger, Hübschle-Schneider, Sanders & Walzer, SEA 2022): a static
//! filter within 1% of the space limit `log2(1/FPR)` bits per key at a
//! power-of-two FPR (see "Bumping" below; the unbumped layouts are a few
//! percent above it).
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
//! the overhead can be small. The cost is 5 bytes per shard (its first
//! block and its seed, 0.005 bits/key; see "Layout and query") and one
//! table lookup per query. The slots per key were
//! chosen from this measurement (`cargo run --release -p amq-bench --example
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
//! interleaved solution, blocks of 64 slots may hold `r` or `r + 1` columns.
//! Which ones is one filter-wide rule on the *global* block index
//! (`layout.rs`): in every period of 256 blocks, the blocks from
//! `upper_from` on hold `r + 1`. A key checks `r + 1` columns when all three
//! blocks its row covers hold them, else `r`, so it never reads a column a
//! block lacks; back-substitution computes every column for every slot, so
//! any such pattern is correct (the proof is in `layout.rs`).
//! [`RibbonParams::with_fpr`] and [`RibbonParams::with_bits_per_key`] pick
//! `r` and the `upper_from` whose mean per-shard FPR (or whose words) come
//! closest to the target; the expected FPR of a shard is the start-weighted
//! mix of `2^-r` and `2^-(r+1)`. The keys in the last two blocks of each run
//! check only `r` columns: 2 blocks in 256 of extra-column words that buy no
//! FPR, about 0.1% of the space at a fractional FPR, nothing at an integer
//! `r`.
//!
//! (Version 1 gave each shard its own suffix of `r + 1` blocks, which needs
//! each shard's word offset and extra-column start at query time: the
//! 16-byte descriptor this layout removed. Version-1 frames of that kind
//! still decode, through `legacy.rs`.)
//!
//! # Layout and query
//!
//! All shards' blocks form one sequence; each block is stored as one `u64`
//! per column (column-major inside the block), followed in memory by a few
//! zero words of padding (not serialized). Shard `i` owns blocks
//! `starts[i] .. starts[i + 1]`; the shard table is those `u32` starts and
//! one seed byte per shard, 61 KB at 100M keys (12,208 shards), which stays
//! in L2 while the 90 MB of words do not. Block `g`'s first word is
//! arithmetic, `g·r + (g >> 8)·(256 − upper_from) + max(0, (g & 255) −
//! upper_from)` (just `g·r` at an integer `r`), so nothing but the cached
//! table is read before the words. A query:
//!
//! 1. multiplies the hash once and reads its shard's two starts and its
//!    seed, and *at the same time* remixes the hash (three
//!    multiplications) without the shard's seed, so the remix overlaps with
//!    the loads;
//! 2. applies the seed with one multiplication, and takes the start slot
//!    and the 128 coefficient bits from the product;
//! 3. reads the three consecutive blocks its 128-slot row covers (at
//!    r = 7: 168 bytes, three or four cache lines, 3.6 on average) in
//!    groups of eight columns, running past a block's last column into the
//!    next block or the padding instead of branching per column, and
//!    computes eight parities per group without branches: portably with a
//!    shift-XOR fold and no popcount instruction (`solution.rs`); on CPUs
//!    with AVX2 with two 256-bit registers, a delta swap, five shift-XOR
//!    steps and a `vmovmskps`; on CPUs with AVX-512F and `VPOPCNTDQ` with
//!    three vector ANDs, a XOR, a `vpopcntq` and a test mask (`kernel.rs`).
//!    The kernel is chosen once, when the filter is made.
//!
//! [`Filter::contains_hashes`] first locates a batch of 16 keys and
//! prefetches their blocks, then computes their parities, so the batch's
//! cache misses overlap (this pays once the filter no longer fits in L2).
//! `docs/ribbon.md` and `docs/results-amq.md` have the measurements and
//! their commands.
//!
//! # Two cache lines: the default from 6 to 8 result bits
//!
//! Once the filter is far larger than the caches, a query costs what its
//! cache lines cost. A 128-slot row covers `128 · r`
//! bits = 112 bytes at `r = 7`, and a line holds at most `⌊512 / 7⌋ = 73`
//! slots, so such a row spans three lines in the worst case (the blocked
//! layout above: 3 or 4). So from 6 to 8 result bits (FPR `2^-8` to
//! `2^-6`, 1% included) the default is the **two-line layout**
//! (`line_kind.rs`, `lines.rs`): 64-slot rows in 64-byte lines of 85, 73
//! or 64 slots of 6, 7 or 8 bits (lines of two widths mixed between), every
//! row within two lines (1.86 on average at `r = 7`). Without bumping
//! it has shards of [`LINE_SHARD_KEYS`] = 4,096 keys at
//! [`LINE_SLOTS_PER_KEY`] = 1.04 slots per key: 7.30 bits per key instead
//! of 7.18 (a narrower band needs more slack), about a fifth of first
//! shard attempts failing, and a build faster than the blocked one (the
//! elimination walks are shorter); bumped (below), 7.06 instead of 7.03.
//! At 100M keys its batches, single queries and builds measure faster
//! than the blocked layout's (`docs/results-amq.md`, "Ribbon").
//! [`RibbonParams::with_blocked_layout`] keeps the blocked layout there;
//! every other FPR has only the blocked layout (a 64-slot row of 9 or more
//! columns does not fit two lines).
//!
//! # Bumping: the default from 10,000 keys
//!
//! The shards above are sized to their keys and must leave every one of
//! them room: slack that no key uses. BuRR's bumping (`bumped.rs`,
//! `bumped_lines.rs`) turns that around. All shards of a filter have the
//! same size, with slightly *fewer* slots than keys (1.03 keys per slot
//! with 128-slot rows, 1.06 with the two-line layout's 64-slot rows), so a
//! query finds its shard's first block or line by a multiplication, with
//! no shard table. The slots are cut into buckets (128 slots, or one
//! line) and keys are banded bucket by bucket; when a key does not fit,
//! the bucket's keys that start below a threshold (one of four, two bits
//! per bucket) are taken out again and go to a small second filter, an
//! ordinary sharded one (3.1% of the keys with 128-slot rows, 5.7% in the
//! two-line layout). A query computes its shard, start and bucket from the
//! hash alone, loads the bucket's code and the row's words together, and
//! asks the second filter only when its start lies below the threshold.
//! Nearly every slot ends up holding a row (about 0.1% stay empty), so the
//! space is the information limit plus the codes (2 bits per 128 slots,
//! or per 511-bit line), the two-line layout's spare bit per line, and
//! the second filter's own few percent over its keys:
//!
//! | `r = 7`, 10^6 keys | bits/key | over `r` |
//! |---|--:|--:|
//! | blocked, bumped | 7.03 | 0.4% |
//! | two-line, bumped (the default) | 7.06 | 0.9% |
//! | blocked, [`RibbonParams::without_bumping`] | 7.18 | 2.6% |
//! | two-line, without bumping | 7.30 | 4.3% |
//!
//! (`cargo test --release -p amq --test ribbon_bumped -- --nocapture`
//! prints these and the fractional targets; `docs/results-amq.md` has the
//! speed at 10^6 to 10^8 keys.) At a fractional FPR the mix of `r` and
//! `r + 1` columns costs what it did (at exactly 1%, 1.15% over
//! `log2(100)` before any overhead: `(1 − f)·2^-6 + f·2^-7 = 1%` needs
//! `f = 0.72` and so 6.72 bits).
//!
//! A bumped layer never fails: at worst a bucket bumps all its keys. Only
//! the second filter retries seeds. Below [`BUMPED_MIN_KEYS`] keys the
//! unbumped layouts are built (a one-shard layer bumps an unsteady share
//! and saves little). A layer is sized for the hashes given; when more
//! than 1% of them were duplicates, it is built again for the distinct
//! ones. Frames of the unbumped layouts still decode and are still
//! written by [`RibbonParams::without_bumping`].
//!
//! # Build memory
//!
//! Besides the finished filter: 8 bytes per key (every key's first hash
//! step, grouped by shard, sorted and deduplicated in place), one count per
//! shard, and one banding of 32 bytes per slot for one shard at a time
//! (about 270 KB, reused for every shard). So about 8 bytes per key plus a
//! constant.
//!
//! [`Ribbon::build_streamed`] bounds the 8 bytes per key: it reads the
//! keys from a source, counts them per shard, then solves the shards in
//! passes of consecutive shards whose keys fit a memory budget
//! ([`StreamedBuild`](crate::streamed::StreamedBuild)), on one or more
//! threads (each solving a run of the pass's shards, appended in order;
//! `runs.rs`). The shards, seeds and words are the ones
//! [`Ribbon::build_with`] makes: at 10^9 keys and 1% the (bumped) filter is
//! 844 MB and the build's peak memory 1,555 MB (`docs/results-amq.md`).
//!
//! # Invariants
//!
//! * A stored banding row at slot `i` has its leading 1 at `i` and no bit
//!   past the shard's last slot; every start is below `num_slots − 127`.
//! * Shards are laid out one after another; a query reads only its shard's
//!   words, and decoding checks the shard table (starts from 0, never
//!   falling, ending at the block count; no shard of one block; seeds below
//!   [`MAX_ATTEMPTS`]) and that the payload is exactly the words the block
//!   count implies, before allocating.
//! * Every start is below `2^32` blocks (2.7·10^11 slots): a larger filter
//!   is [`Error::TooLarge`].
//! * `r = 32` blocks never get an extra column (a fingerprint is a `u32`).
//! * Two-line layout: every start is below the shard's slots less 63, so a
//!   row's 64 bits lie inside its shard and a row starting in the shard's
//!   last line has no bit in the next one; a shard holds at most 2^24 slots
//!   (what the reciprocals placing a start are exact for); one zero line after the last (not
//!   serialized) is what a query of the last line reads as its second;
//!   the lines are 64-byte aligned (`Line`), one cache line each.
//!
//! # The module's files, lowest first
//!
//! `table.rs` (the shard table and the attempt limits), `row.rs` (a
//! key's start, coefficients and result), `banding.rs` and `order.rs`
//! (Gaussian elimination on the fly, keys grouped by shard), `runs.rs`
//! (the construction loop: shards solved in runs, retried, put in order),
//! `layout.rs` (the column rule of the blocked layouts), `solution.rs`
//! (back-substitution into interleaved blocks, and the query's window),
//! `bumped.rs` (the bumped layer and its query), `line_kind.rs` and
//! `lines.rs` (the two-line layout's lines and their kinds, rows and
//! solution), `line_filter.rs` (a two-line filter's storage, bumped or
//! not, and its locate), `config.rs` ([`RibbonParams`]), `blocked.rs`
//! (the blocked layout's construction), `bumped_build.rs` and
//! `bumped_lines.rs` (bumped construction in each layout), `shard.rs` and
//! `legacy.rs` (version-1 frames), `build.rs`, `predict.rs`, `query.rs`,
//! `frame.rs` (the byte format), `kernel.rs` with `avx2.rs`/`avx512.rs`
//! inside it (the query kernels) and `view.rs` (queries on stored bytes).
//! Each imports only from the files before it, except `mod.rs`, which
//! holds the type they all work on.

mod banding;
mod blocked;
mod build;
mod bumped;
mod bumped_build;
mod bumped_lines;
mod config;
mod frame;
mod kernel;
mod layout;
mod legacy;
mod line_filter;
mod line_kind;
mod lines;
mod order;
mod predict;
mod query;
mod row;
mod runs;
mod shard;
mod solution;
mod table;
mod view;

pub use bumped::{BUMPED_MIN_KEYS, BUMPED_SHARD_KEYS};
pub use config::{RibbonParams, SHARD_KEYS, SLOTS_PER_KEY};
pub use layout::MAX_RESULT_BITS;
pub use lines::{LINE_SHARD_KEYS, LINE_SLOTS_PER_KEY};
pub use table::MAX_ATTEMPTS;
pub use view::RibbonView;

use alloc::vec::Vec;

use self::frame::{bumped_to_bytes, lines_to_bytes};
use self::kernel::Kernel;
use self::layout::Columns;
use self::legacy::Legacy;
use self::line_filter::LineShards;
use self::lines::Line;
pub(crate) use self::predict::predict;
use self::query::locate_compact;
pub(crate) use self::solution::Window;
use self::solution::BLOCK_SLOTS;
use self::table::{shard_entry, shard_table_bytes};
use crate::format::{self, ByteWriter};
use crate::{Error, Filter, FilterKind, FilterSizing, FromBytes, KeyHash, StaticFilter};

/// A Ribbon filter (Dillinger & Walzer 2021), bumped (BuRR, SEA 2022): a
/// static filter within 1% of `log2(1/FPR)` bits per key at a
/// power-of-two FPR (0.4% in the blocked layout, 0.9% in the two-line
/// layout that is the default at exactly 7 result bits and reads at most
/// two cache lines per query). See the [module docs](self) for the design.
///
/// ```
/// use amq::{hash_u64, Filter, FilterSizing, KeyHash, Ribbon, RibbonParams};
///
/// let keys: Vec<KeyHash> = (0..100_000u64).map(hash_u64).collect();
/// let f = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(7).unwrap()).unwrap();
/// assert!(keys.iter().all(|&h| f.contains_hash(h)));
///
/// // 7 bits of fingerprint: FPR 2^-7 = 0.78% at under 1% over 7 bits per key.
/// assert!(f.bits_per_key() < 7.07, "{}", f.bits_per_key());
/// assert_eq!(f.expected_fpr(), 1.0 / 128.0);
/// let absent = 200_000;
/// let fp = (1u64 << 40..(1 << 40) + absent)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// let fpr = fp as f64 / absent as f64;
/// assert!((fpr / f.expected_fpr() - 1.0).abs() < 0.15, "{fpr}");
///
/// // Any FPR, not only powers of two: 1% at about 6.78 bits per key
/// // (Bloom needs 9.6).
/// let g = Ribbon::build(&keys, FilterSizing::Fpr(0.01)).unwrap();
/// assert!((g.expected_fpr() - 0.01).abs() < 1e-4);
/// assert!(g.bits_per_key() < 6.8, "{}", g.bits_per_key());
/// ```
#[derive(Debug, Clone)]
pub struct Ribbon {
    /// Every shard's interleaved solution, one after the other, then
    /// `padding_words` zeros (not serialized) that queries may over-read.
    words: Vec<u64>,
    /// Where each shard's words are and how they were solved.
    layout: Layout,
    num_keys: u64,
    /// The query kernel chosen for this CPU when the filter was made; never
    /// changes an answer, so it is not part of equality or of the bytes.
    kernel: Kernel,
}

/// How a filter's shards are described.
#[derive(Debug, Clone, PartialEq)]
enum Layout {
    /// What this build makes, and what a version-2 frame holds: a block
    /// start and a seed per shard, and one column rule for all.
    Compact(Shards),
    /// A version-1 frame whose shards the compact layout cannot express
    /// (each shard's own suffix of extra-column blocks, or result bits that
    /// differ between shards): its shard records as read. Written back as
    /// version 1.
    Legacy(Legacy),
    /// The two-line layout (`lines.rs`): its shard table and its lines (the
    /// filter's `words` are then empty). A version-2 frame with the layout
    /// byte 1.
    Lines(LineShards),
    /// The bumped layout (`bumped.rs`): the layer's codes and the second
    /// filter (the layer's words are the filter's `words`). A version-2
    /// frame with the layout byte 2.
    Bumped(bumped::Bumped),
}

/// The compact shard table: 5 bytes per shard (61 KB at 100M keys), read
/// by every query, so it stays in the L2 cache while the words do not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shards {
    /// The filter-wide column rule (`layout.rs`).
    columns: Columns,
    /// `starts[i]`: the first (global) block of shard `i`; the last entry
    /// is the total, so shard `i` is blocks `starts[i] .. starts[i + 1]`
    /// (none for a shard without keys, at least two otherwise).
    starts: Vec<u32>,
    /// `seeds[i]`: the attempt shard `i` was solved at (0 if empty).
    seeds: Vec<u8>,
}

impl Shards {
    fn total_blocks(&self) -> usize {
        self.starts.last().map_or(0, |&b| b as usize)
    }

    /// The window of the key with this hash and its fingerprint bits.
    #[inline(always)]
    fn locate(&self, hash: u64) -> Option<(Window, u32)> {
        locate_compact(
            &self.columns,
            self.seeds.len(),
            |i| shard_entry(&self.starts, &self.seeds, i),
            hash,
        )
    }

    /// Mean over the shards of each shard's expected FPR.
    fn expected_fpr(&self) -> f64 {
        let s = self.seeds.len();
        if s == 0 {
            return 0.0;
        }
        let sum: f64 = self
            .starts
            .windows(2)
            .map(|w| self.columns.shard_fpr(w[0] as usize, (w[1] - w[0]) as usize))
            .sum();
        sum / s as f64
    }
}

/// Construction attempts of a blocked filter's shards (one per seed tried).
fn second_attempts(s: &Shards) -> u64 {
    s.starts
        .windows(2)
        .zip(&s.seeds)
        .filter(|(w, _)| w[1] > w[0])
        .map(|(_, &seed)| seed as u64 + 1)
        .sum()
}

impl PartialEq for Ribbon {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words && self.layout == other.layout && self.num_keys == other.num_keys
    }
}

impl Eq for Ribbon {}

impl Ribbon {
    /// A two-line filter of these lines and keys, with the kernel made for
    /// its line widths.
    fn of_lines(lines: LineShards, num_keys: u64) -> Ribbon {
        Ribbon {
            words: Vec::new(),
            kernel: Kernel::detect(Some(lines.shape())),
            layout: Layout::Lines(lines),
            num_keys,
        }
    }

    /// Number of shards the keys were split into (`ceil(n / SHARD_KEYS)`).
    pub fn num_shards(&self) -> usize {
        match &self.layout {
            Layout::Compact(s) => s.seeds.len(),
            Layout::Legacy(l) => l.num_shards(),
            Layout::Lines(l) => l.seeds.len() + l.bump.as_ref().map_or(0, |b| b.shape.num_shards),
            Layout::Bumped(b) => b.layer.num_shards + b.second.seeds.len(),
        }
    }

    /// Construction attempts over all shards (one per seed tried); the
    /// number of shards with keys when every first attempt succeeded.
    pub fn attempts(&self) -> u64 {
        match &self.layout {
            Layout::Compact(s) => second_attempts(s),
            Layout::Legacy(l) => l.attempts(),
            Layout::Lines(l) => l.attempts(),
            Layout::Bumped(b) => b.layer.num_shards as u64 + second_attempts(&b.second),
        }
    }

    /// Total slots over all shards.
    pub fn num_slots(&self) -> usize {
        match &self.layout {
            Layout::Compact(s) => s.total_blocks() * BLOCK_SLOTS,
            Layout::Legacy(l) => l.num_slots(),
            Layout::Lines(l) => l.total_slots(),
            Layout::Bumped(b) => (b.layer.total_blocks() + b.second.total_blocks()) * BLOCK_SLOTS,
        }
    }

    /// Whether the filter was built with bumping
    /// ([`RibbonParams::with_bumping`]), in either layout.
    pub fn is_bumped_layout(&self) -> bool {
        match &self.layout {
            Layout::Bumped(_) => true,
            Layout::Lines(l) => l.bump.is_some(),
            _ => false,
        }
    }

    /// Whether the filter has the two-line layout
    /// ([`RibbonParams::with_two_line_layout`]).
    pub fn is_two_line_layout(&self) -> bool {
        matches!(self.layout, Layout::Lines(_))
    }

    /// The query kernel this filter chose for the running CPU when it was
    /// made: `"avx512"` (AVX-512F with `VPOPCNTDQ`: the eight parities of a
    /// column group in a handful of vector instructions), `"avx2"` (two
    /// 256-bit registers and a shift-XOR fold) or `"portable"`. All answer
    /// identically.
    ///
    /// ```
    /// use amq::{hash_u64, Filter, FilterSizing, Ribbon};
    /// let f = Ribbon::build(&[1, 2, 3].map(hash_u64), FilterSizing::Fpr(0.01))?;
    /// assert!(["avx512", "avx2", "portable"].contains(&f.query_kernel()));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }
}

impl crate::cost::CostModel for Ribbon {
    const TRAITS: crate::cost::Traits = crate::cost::Traits {
        knob: crate::cost::Knob::Fpr {
            min: 1.0 / (1u64 << MAX_RESULT_BITS) as f64,
            max: 0.5,
        },
        // Its shards hold a binomial share of the keys, each rounded to
        // whole 64-slot blocks (the prediction spreads them evenly).
        size_spread: 0.005,
        cost: crate::cost::QueryCost::High,
        reason: "static, any FPR, within 1-2% of log2(1/FPR) bits per key (bumped); slower build and query",
        ..crate::cost::Traits::FIXED
    };

    fn shape(n: usize, sizing: FilterSizing) -> Result<crate::cost::Shape, Error> {
        let predicted = predict(n, &RibbonParams::for_sizing(sizing)?)?;
        Ok(crate::cost::Shape {
            bytes: predicted.bytes as u64,
            fpr: predicted.fpr,
            fpr_floor: 0.0,
            params: crate::cost::Params::Ribbon {
                result_bits: predicted.mean_columns,
            },
        })
    }
}

impl StaticFilter for Ribbon {
    type Params = RibbonParams;

    fn build_with(hashes: &[KeyHash], params: &RibbonParams) -> Result<Self, Error> {
        Ribbon::build_with(hashes, params)
    }
}

impl Filter for Ribbon {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.kernel.contains(self, hash.get())
    }

    /// Locates the key's row (through its shard's start and seed) and asks
    /// for the lines it reads: up to four for the blocked layouts, two for
    /// the two-line one.
    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let hash = hash.get();
        // Each prefetches what it locates; one of them is for this layout.
        if self.locate_row(hash).is_none() {
            let _ = self.locate_window(hash);
        }
    }

    /// Locates a batch of keys first, prefetching their blocks, then reads
    /// them, so the cache misses of a batch overlap.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        self.kernel.contains_many(self, crate::hash::raw(hashes), out);
    }

    /// The words (with the few zero words of query padding after them) and
    /// the shard table: every heap byte the filter holds.
    fn size_in_bytes(&self) -> usize {
        self.words.capacity() * 8
            + match &self.layout {
                Layout::Compact(s) => s.starts.capacity() * 4 + s.seeds.capacity(),
                Layout::Legacy(l) => l.size_in_bytes(),
                Layout::Lines(l) => {
                    l.lines.capacity() * core::mem::size_of::<Line>()
                        + l.starts.capacity() * 4
                        + l.seeds.capacity()
                        + l.bump.as_ref().map_or(0, |b| b.codes.capacity() * 8)
                }
                Layout::Bumped(b) => {
                    b.codes.capacity() * 8
                        + b.second_words.capacity() * 8
                        + b.second.starts.capacity() * 4
                        + b.second.seeds.capacity()
                }
            }
    }

    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }

    fn expected_fpr(&self) -> f64 {
        // A random query lands in each shard with equal probability.
        match &self.layout {
            Layout::Compact(s) => s.expected_fpr(),
            Layout::Legacy(l) => l.expected_fpr(),
            Layout::Lines(l) => l.expected_fpr(),
            Layout::Bumped(b) => b.expected_fpr(),
        }
    }

    fn kind(&self) -> FilterKind {
        FilterKind::Ribbon
    }

    fn to_bytes(&self) -> Vec<u8> {
        let s = match &self.layout {
            Layout::Compact(s) => s,
            Layout::Legacy(l) => return l.to_bytes_v1(&self.words, self.num_keys),
            Layout::Lines(l) => return lines_to_bytes(l, self.num_keys),
            Layout::Bumped(b) => return bumped_to_bytes(b, &self.words, self.num_keys),
        };
        let words = &self.words[..s.columns.word_of(s.total_blocks())];
        let mut p = ByteWriter::default();
        p.u64(self.num_keys)
            .u64(s.seeds.len() as u64)
            .u64(s.total_blocks() as u64)
            .u8(s.columns.base() as u8)
            .u16(s.columns.upper_from() as u16);
        let payload_len = words.len() * 8 + shard_table_bytes(s.seeds.len()).expect("allocated");
        format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
            w.u64s(words);
            if s.starts.is_empty() {
                w.u32(0); // an empty filter's one start
            }
            for &start in &s.starts {
                w.u32(start);
            }
            w.bytes(&s.seeds);
        })
    }
}

impl FromBytes for Ribbon {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_frame(format::decode_kind(bytes, FilterKind::Ribbon)?)
    }
}

#[cfg(test)]
mod layering;
#[cfg(test)]
mod tests;
