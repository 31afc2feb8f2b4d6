//! The byte format of a Ribbon filter: decoding version-2 frames (blocked
//! and two-line layouts) with every shard checked, and encoding the
//! two-line layout (version-1 frames are `legacy.rs`'s).

use alloc::vec::Vec;

use super::layout::Columns;
use super::lines::{check_line_shards, Line, LineShards, LINE_COLUMNS, LINE_SLOTS};
use super::solution::{padding, BLOCK_SLOTS};
use super::table::{shard_table, shard_table_bytes, u32_at, MAX_ATTEMPTS};
use super::{legacy, Kernel, Layout, Ribbon, Shards};
use crate::format::{self, ByteWriter, Frame, Reader};
use crate::{Error, FilterKind, FormatError};

impl Ribbon {
    pub(crate) fn from_frame(frame: Frame<'_>) -> Result<Self, Error> {
        if frame.version < 2 {
            let (words, layout, num_keys) = legacy::from_frame_v1(frame)?;
            return Ok(Ribbon {
                words,
                layout,
                num_keys,
                kernel: Kernel::detect(false),
            });
        }
        let parts = parse_frame_v2(frame)?;
        if parts.lines {
            return Self::from_line_parts(&parts);
        }
        let (mut starts, mut seeds) = shard_table(parts.num_shards)?;
        check_shards(&parts, |start, seed| {
            // An empty filter keeps no table (its one start is 0).
            if parts.num_shards > 0 {
                starts.push(start);
            }
            seeds.extend(seed);
        })?;
        let mut words = Reader::new(parts.words);
        let words = words.u64s(parts.words.len() / 8, padding(&parts.columns, parts.num_shards))?;
        Ok(Ribbon {
            words,
            layout: Layout::Compact(Shards {
                columns: parts.columns,
                starts,
                seeds,
            }),
            num_keys: parts.num_keys,
            kernel: Kernel::detect(false),
        })
    }
}

impl Ribbon {
    /// The two-line filter of checked frame parts (`parts.lines`).
    fn from_line_parts(parts: &RibbonParts<'_>) -> Result<Self, Error> {
        let (mut starts, mut seeds) = shard_table(parts.num_shards)?;
        check_line_shards(parts.starts, parts.seeds, parts.total_blocks, |start, seed| {
            if parts.num_shards > 0 {
                starts.push(start);
            }
            seeds.extend(seed);
        })?;
        let padding = (parts.num_shards > 0) as usize;
        let mut lines = Vec::new();
        lines
            .try_reserve_exact(parts.total_blocks + padding)
            .map_err(|_| Error::TooLarge)?;
        let mut words = Reader::new(parts.words);
        for _ in 0..parts.total_blocks + padding {
            let mut line = Line::default();
            if lines.len() < parts.total_blocks {
                for w in &mut line.0 {
                    *w = words.u64()?;
                }
            }
            lines.push(line);
        }
        words.finish()?;
        Ok(Ribbon {
            words: Vec::new(),
            layout: Layout::Lines(LineShards { starts, seeds, lines }),
            num_keys: parts.num_keys,
            kernel: Kernel::detect(true),
        })
    }
}

/// A version-2 Ribbon frame split into its parts, lengths checked (the
/// shard starts and seeds themselves are checked by [`check_shards`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RibbonParts<'a> {
    pub(crate) num_keys: u64,
    pub(crate) num_shards: usize,
    /// Blocks, or lines in the two-line layout.
    pub(crate) total_blocks: usize,
    /// The two-line layout (layout byte 1): `total_blocks` counts lines of
    /// eight words, `columns` is 7 everywhere.
    pub(crate) lines: bool,
    pub(crate) columns: Columns,
    /// The solution words, little-endian: `columns.word_of(total_blocks)`.
    pub(crate) words: &'a [u8],
    /// `num_shards + 1` block starts, `u32` little-endian.
    pub(crate) starts: &'a [u8],
    /// `num_shards` seeds, one byte each.
    pub(crate) seeds: &'a [u8],
}

/// Splits a version-2 frame. Parameters: `u64` keys, `u64` shards `S`,
/// `u64` blocks `B`, `u8` result bits `r`, `u16` extra-column start in each
/// period of 256 blocks (256: none), and optionally a `u8` layout (absent:
/// blocks; 1: the two-line layout, `B` then counts 64-byte lines, `r` is 7
/// and the start 256); payload: the words of `B` blocks (or lines), then
/// `S + 1` block (or line) starts (`u32`), then `S` seeds (`u8`).
pub(crate) fn parse_frame_v2(mut frame: Frame<'_>) -> Result<RibbonParts<'_>, Error> {
    let num_keys = frame.params.u64()?;
    let num_shards = frame.params.u64()?;
    let total_blocks = frame.params.u64()?;
    let base = frame.params.u8()?;
    let upper_from = frame.params.u16()?;
    let bad = FormatError::InvalidParameters;
    let lines = match frame.params.remaining() {
        0 => false,
        _ => match frame.params.u8()? {
            LAYOUT_LINES => true,
            _ => return Err(bad("unknown Ribbon layout").into()),
        },
    };
    frame.params.finish()?;
    if lines && (base as u32 != LINE_COLUMNS || upper_from != 256) {
        return Err(bad("the two-line layout has 7 columns everywhere").into());
    }
    let (unit_slots, unit_words) = match lines {
        true => (LINE_SLOTS as u64, 8u64),
        false => (BLOCK_SLOTS as u64, 0),
    };
    if (num_shards == 0) != (num_keys == 0) {
        return Err(bad("key count does not match the shard count").into());
    }
    let columns = Columns::new(base as u32, upper_from as u32)
        .ok_or(bad("result bits or extra-column start out of range"))?;
    if total_blocks > u32::MAX as u64 {
        return Err(bad("more blocks than a block start holds").into());
    }
    if num_keys > total_blocks * unit_slots {
        return Err(bad("more keys than slots").into());
    }
    let num_words = match lines {
        true => total_blocks * unit_words,
        false => columns
            .checked_word_of(total_blocks as usize)
            .ok_or(FormatError::Truncated)? as u64,
    };
    let expected = num_words
        .checked_mul(8)
        .and_then(|w| w.checked_add(num_shards.checked_add(1)?.checked_mul(4)?))
        .and_then(|w| w.checked_add(num_shards))
        .ok_or(FormatError::Truncated)?;
    if expected != frame.payload.remaining() as u64 {
        return Err(bad("payload length does not match the block and shard counts").into());
    }
    // All three fit: their sum is the payload length.
    let words = frame.payload.take(num_words as usize * 8)?;
    let starts = frame.payload.take((num_shards as usize + 1) * 4)?;
    let seeds = frame.payload.take(num_shards as usize)?;
    frame.payload.finish()?;
    Ok(RibbonParts {
        num_keys,
        num_shards: num_shards as usize,
        total_blocks: total_blocks as usize,
        lines,
        columns,
        words,
        starts,
        seeds,
    })
}

/// The layout byte of a two-line frame's parameters.
const LAYOUT_LINES: u8 = 1;

/// Checks the shard table of a version-2 frame: the starts begin at 0,
/// never fall, end at the block count, and give each shard no block or at
/// least two; a seed is below [`MAX_ATTEMPTS`], and 0 for an empty shard.
/// Calls `each` with every start and with every shard's seed (`None` after
/// the last start); returns the summed per-shard FPR.
pub(crate) fn check_shards(
    parts: &RibbonParts<'_>,
    mut each: impl FnMut(u32, Option<u8>),
) -> Result<f64, Error> {
    let bad = FormatError::InvalidParameters;
    if u32_at(parts.starts, 0) != 0 || u32_at(parts.starts, parts.num_shards) as usize != parts.total_blocks {
        return Err(bad("shard starts do not span the blocks").into());
    }
    let mut fpr = 0.0;
    for (i, &seed) in parts.seeds.iter().enumerate() {
        let (start, end) = (u32_at(parts.starts, i), u32_at(parts.starts, i + 1));
        let blocks = end.checked_sub(start).ok_or(bad("shard starts fall"))?;
        if blocks == 1 || seed as u32 >= MAX_ATTEMPTS || (blocks == 0 && seed != 0) {
            return Err(bad("invalid shard").into());
        }
        fpr += parts.columns.shard_fpr(start as usize, blocks as usize);
        each(start, Some(seed));
    }
    each(parts.total_blocks as u32, None);
    Ok(fpr)
}

/// A two-line filter's bytes: the version-2 parameters with the layout
/// byte 1, then its lines' words, line starts and seeds.
pub(super) fn lines_to_bytes(l: &LineShards, num_keys: u64) -> Vec<u8> {
    let mut p = ByteWriter::default();
    p.u64(num_keys)
        .u64(l.seeds.len() as u64)
        .u64(l.total_lines() as u64)
        .u8(LINE_COLUMNS as u8)
        .u16(256)
        .u8(LAYOUT_LINES);
    let payload_len = l.total_lines() * 64 + shard_table_bytes(l.seeds.len()).expect("allocated");
    format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
        for word in l.words() {
            w.u64(word);
        }
        if l.starts.is_empty() {
            w.u32(0); // an empty filter's one start
        }
        for &start in &l.starts {
            w.u32(start);
        }
        w.bytes(&l.seeds);
    })
}
