//! The byte format of a Ribbon filter: decoding version-2 frames (blocked
//! and two-line layouts) with every shard checked, and encoding the
//! two-line layout (version-1 frames are `legacy.rs`'s).

use alloc::vec::Vec;

use super::bumped::{Bumped, Layer};
use super::layout::Columns;
use super::line_filter::{LineBump, LineShards};
use super::line_kind::LineGeometry;
use super::lines::{check_line_shards, Line};
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
                kernel: Kernel::detect(None),
            });
        }
        let parts = parse_frame_v2(frame)?;
        if parts.lines {
            return Self::from_line_parts(&parts, parts.bumped.as_ref());
        }
        if let Some(layer) = &parts.bumped {
            return Self::from_bumped_parts(&parts, layer);
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
            kernel: Kernel::detect(None),
        })
    }
}

impl Ribbon {
    /// The bumped filter of checked frame parts: `parts` describe the
    /// second filter, `layer` the layer.
    fn from_bumped_parts(parts: &RibbonParts<'_>, layer: &LayerParts<'_>) -> Result<Self, Error> {
        let (mut starts, mut seeds) = shard_table(parts.num_shards)?;
        check_shards(parts, |start, seed| {
            if parts.num_shards > 0 {
                starts.push(start);
            }
            seeds.extend(seed);
        })?;
        let second_words = Reader::new(parts.words)
            .u64s(parts.words.len() / 8, padding(&parts.columns, parts.num_shards))?;
        let words = Reader::new(layer.words).u64s(
            layer.words.len() / 8,
            padding(&layer.columns, layer.layer.num_shards),
        )?;
        let codes = Reader::new(layer.codes).u64s(layer.codes.len() / 8, 0)?;
        Ok(Ribbon {
            words,
            layout: Layout::Bumped(Bumped {
                columns: layer.columns,
                layer: layer.layer,
                codes,
                second_keys: parts.num_keys,
                second: Shards {
                    columns: parts.columns,
                    starts,
                    seeds,
                },
                second_words,
            }),
            num_keys: layer.num_keys,
            kernel: Kernel::detect(None),
        })
    }

    /// The two-line filter of checked frame parts (`parts.lines`), with
    /// its bumped layer if `layer` (the parts then describe its second
    /// filter, whose lines follow the layer's).
    fn from_line_parts(parts: &RibbonParts<'_>, layer: Option<&LayerParts<'_>>) -> Result<Self, Error> {
        let layer_lines = layer.map_or(0, |l| l.layer.total_blocks());
        // The second filter's line starts count from the layer's end: both
        // together must fit a `u32` start.
        let offset = u32::try_from(layer_lines).map_err(|_| Error::TooLarge)?;
        if layer_lines + parts.total_blocks > u32::MAX as usize {
            return Err(FormatError::InvalidParameters("more lines than a line start holds").into());
        }
        let geometry = line_geometry(parts.columns)?;
        let (mut starts, mut seeds) = shard_table(parts.num_shards)?;
        check_line_shards(
            parts.starts,
            parts.seeds,
            parts.total_blocks,
            &geometry,
            |start, seed| {
                if parts.num_shards > 0 {
                    starts.push(start + offset);
                }
                seeds.extend(seed);
            },
        )?;
        let total = layer_lines + parts.total_blocks;
        let padding = (parts.num_shards > 0 || layer.is_some()) as usize;
        let mut lines = Vec::new();
        lines
            .try_reserve_exact(total + padding)
            .map_err(|_| Error::TooLarge)?;
        let mut read = |bytes: &[u8], count: usize| -> Result<(), Error> {
            let mut words = Reader::new(bytes);
            for _ in 0..count {
                let mut line = Line::default();
                for w in &mut line.0 {
                    *w = words.u64()?;
                }
                lines.push(line);
            }
            Ok(words.finish()?)
        };
        if let Some(l) = layer {
            read(l.words, layer_lines)?;
        }
        read(parts.words, parts.total_blocks)?;
        lines.resize(total + padding, Line::default());
        let bump = match layer {
            Some(l) => Some(
                LineBump::new(
                    line_geometry(l.columns)?,
                    l.layer.num_shards,
                    l.layer.shard_blocks,
                    Reader::new(l.codes).u64s(l.codes.len() / 8, 0)?,
                    parts.num_keys,
                )
                .ok_or(FormatError::InvalidParameters("a layer shard has too many lines"))?,
            ),
            None => None,
        };
        Ok(Ribbon::of_lines(
            LineShards::new(geometry, starts, seeds, lines, bump),
            layer.map_or(parts.num_keys, |l| l.num_keys),
        ))
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
    /// eight words, `columns` is their line kinds (`LineGeometry`).
    pub(crate) lines: bool,
    pub(crate) columns: Columns,
    /// The solution words, little-endian: `columns.word_of(total_blocks)`.
    pub(crate) words: &'a [u8],
    /// `num_shards + 1` block starts, `u32` little-endian.
    pub(crate) starts: &'a [u8],
    /// `num_shards` seeds, one byte each.
    pub(crate) seeds: &'a [u8],
    /// A bumped frame (layout byte 2, or 3 with `lines`): its layer. The
    /// fields above then describe its second filter.
    pub(crate) bumped: Option<LayerParts<'a>>,
}

/// The layer of a bumped frame, lengths and shape checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayerParts<'a> {
    /// Keys of the whole filter (the layer's and the second filter's).
    pub(crate) num_keys: u64,
    /// The layer's shape; in a two-line frame its "blocks" are lines.
    pub(crate) layer: Layer,
    /// The layer's column rule (the parts' is the second filter's).
    pub(crate) columns: Columns,
    /// The layer's words (or lines), little-endian.
    pub(crate) words: &'a [u8],
    /// The buckets' codes, packed 32 to a `u64`, little-endian.
    pub(crate) codes: &'a [u8],
}

/// Splits a version-2 frame. Parameters: `u64` keys, `u64` shards `S`,
/// `u64` blocks `B`, `u8` result bits `r`, `u16` extra-column start in each
/// period of 256 blocks (256: none), and optionally a `u8` layout (absent:
/// blocks; 1: the two-line layout, `B` then counts 64-byte lines, `r` is 7
/// and the start 256; 2: bumped, see [`parse_bumped`]); payload: the
/// words of `B` blocks (or lines), then `S + 1` block (or line) starts
/// (`u32`), then `S` seeds (`u8`).
pub(crate) fn parse_frame_v2(mut frame: Frame<'_>) -> Result<RibbonParts<'_>, Error> {
    let num_keys = frame.params.u64()?;
    let num_shards = frame.params.u64()?;
    let total_blocks = frame.params.u64()?;
    let base = frame.params.u8()?;
    let upper_from = frame.params.u16()?;
    let bad = FormatError::InvalidParameters;
    let (lines, bumped) = match frame.params.remaining() {
        0 => (false, false),
        _ => match frame.params.u8()? {
            LAYOUT_LINES => (true, false),
            LAYOUT_BUMPED => (false, true),
            LAYOUT_BUMPED_LINES => (true, true),
            _ => return Err(bad("unknown Ribbon layout").into()),
        },
    };
    let columns = Columns::new(base as u32, upper_from as u32)
        .ok_or(bad("result bits or extra-column start out of range"))?;
    if bumped {
        return parse_bumped(frame, (num_keys, num_shards, total_blocks), columns, lines);
    }
    frame.params.finish()?;
    let parts = split_payload(
        &mut frame.payload,
        (num_keys, num_shards, total_blocks),
        columns,
        lines,
    )?;
    frame.payload.finish()?;
    Ok(parts)
}

/// The words, block starts and seeds of a blocked or two-line filter of
/// `num_keys` keys in `num_shards` shards of `total_blocks` blocks (or
/// lines), taken from `payload`, lengths checked.
fn split_payload<'a>(
    payload: &mut Reader<'a>,
    (num_keys, num_shards, total_blocks): (u64, u64, u64),
    columns: Columns,
    lines: bool,
) -> Result<RibbonParts<'a>, Error> {
    let bad = FormatError::InvalidParameters;
    let (unit_slots, unit_words) = match lines {
        true => (line_geometry(columns)?.max_slots_per_line() as u64, 8u64),
        false => (BLOCK_SLOTS as u64, 0),
    };
    if (num_shards == 0) != (num_keys == 0) {
        return Err(bad("key count does not match the shard count").into());
    }
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
    if expected != payload.remaining() as u64 {
        return Err(bad("payload length does not match the block and shard counts").into());
    }
    // All three fit: their sum is the payload length.
    let words = payload.take(num_words as usize * 8)?;
    let starts = payload.take((num_shards as usize + 1) * 4)?;
    let seeds = payload.take(num_shards as usize)?;
    Ok(RibbonParts {
        num_keys,
        num_shards: num_shards as usize,
        total_blocks: total_blocks as usize,
        lines,
        columns,
        words,
        starts,
        seeds,
        bumped: None,
    })
}

/// The rest of a bumped frame (layout byte 2, or 3 for the two-line
/// layout) after the layer's key, shard and block (or line) counts and
/// the column rule. Parameters: `u64` keys, `u64` shards, `u64` blocks
/// (or lines), `u8` result bits and `u16` extra-column start of the
/// second filter. Payload: the layer's words, its codes
/// (two bits per bucket, 32 to a `u64`, the bits past the last bucket
/// zero; a bucket is 128 slots, or one line), then the second filter's
/// words, starts and seeds as in a blocked (or two-line) frame.
fn parse_bumped(
    mut frame: Frame<'_>,
    (num_keys, num_shards, total_blocks): (u64, u64, u64),
    columns: Columns,
    lines: bool,
) -> Result<RibbonParts<'_>, Error> {
    let bad = FormatError::InvalidParameters;
    let second = (frame.params.u64()?, frame.params.u64()?, frame.params.u64()?);
    let second_columns = Columns::new(frame.params.u8()? as u32, frame.params.u16()? as u32)
        .ok_or(bad("result bits or extra-column start out of range"))?;
    frame.params.finish()?;
    let layer = usize::try_from(num_shards)
        .ok()
        .zip(usize::try_from(total_blocks).ok())
        .and_then(|(s, b)| match lines {
            true => Layer::from_line_parts(s, b),
            false => Layer::from_parts(s, b),
        })
        .filter(|l| l.checked_total_blocks().is_some())
        .ok_or(bad("layer units do not split into equal shards of whole buckets"))?;
    if (num_shards == 0) != (num_keys == 0) || second.0 > num_keys {
        return Err(bad("key counts do not match the layer").into());
    }
    let slots = match lines {
        true => {
            let shard = line_geometry(columns)?
                .checked_slots(layer.shard_blocks)
                .ok_or(bad("a layer shard has too many lines"))?;
            shard as u64 * layer.num_shards as u64
        }
        false => total_blocks * BLOCK_SLOTS as u64,
    };
    if num_keys - second.0 > slots {
        return Err(bad("more keys than slots").into());
    }
    let (num_words, buckets) = match lines {
        true => (layer.total_blocks() * 8, layer.total_blocks()),
        false => (
            columns
                .checked_word_of(layer.total_blocks())
                .ok_or(FormatError::Truncated)?,
            layer.num_buckets(),
        ),
    };
    let code_words = buckets.div_ceil(32);
    let layer_bytes = num_words
        .checked_add(code_words)
        .and_then(|w| w.checked_mul(8))
        .ok_or(FormatError::Truncated)?;
    let words = frame.payload.take(layer_bytes - code_words * 8)?;
    let codes = frame.payload.take(code_words * 8)?;
    let used = buckets % 32;
    if used != 0 {
        let last = Reader::new(&codes[codes.len() - 8..]).u64()?;
        if last >> (2 * used) != 0 {
            return Err(bad("codes past the last bucket").into());
        }
    }
    // The second filter: a blocked (or two-line) frame's fields and payload.
    let parts = split_payload(&mut frame.payload, second, second_columns, lines)?;
    frame.payload.finish()?;
    Ok(RibbonParts {
        bumped: Some(LayerParts {
            num_keys,
            layer,
            columns,
            words,
            codes,
        }),
        ..parts
    })
}

/// The layout byte of a two-line frame's parameters.
const LAYOUT_LINES: u8 = 1;

/// The layout byte of a bumped frame's parameters.
const LAYOUT_BUMPED: u8 = 2;

/// The layout byte of a bumped two-line frame's parameters.
const LAYOUT_BUMPED_LINES: u8 = 3;

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
    if let Some(b) = &l.bump {
        return bumped_lines_to_bytes(l, b, num_keys);
    }
    let mut p = ByteWriter::default();
    p.u64(num_keys)
        .u64(l.seeds.len() as u64)
        .u64(l.total_lines() as u64)
        .u8(l.geometry.to_columns().base() as u8)
        .u16(l.geometry.to_columns().upper_from() as u16)
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

/// A bumped filter's bytes: the version-2 parameters of its layer with the
/// layout byte 2 and its second filter's counts, then the layer's words and
/// codes and the second filter's words, starts and seeds.
pub(super) fn bumped_to_bytes(b: &Bumped, words: &[u64], num_keys: u64) -> Vec<u8> {
    let layer_words = &words[..b.columns.word_of(b.layer.total_blocks())];
    let second_words = &b.second_words[..b.second.columns.word_of(b.second.total_blocks())];
    let mut p = ByteWriter::default();
    p.u64(num_keys)
        .u64(b.layer.num_shards as u64)
        .u64(b.layer.total_blocks() as u64)
        .u8(b.columns.base() as u8)
        .u16(b.columns.upper_from() as u16)
        .u8(LAYOUT_BUMPED)
        .u64(b.second_keys)
        .u64(b.second.seeds.len() as u64)
        .u64(b.second.total_blocks() as u64)
        .u8(b.second.columns.base() as u8)
        .u16(b.second.columns.upper_from() as u16);
    let table = shard_table_bytes(b.second.seeds.len()).expect("allocated");
    let payload_len = (layer_words.len() + b.codes.len() + second_words.len()) * 8 + table;
    format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
        w.u64s(layer_words);
        w.u64s(&b.codes);
        w.u64s(second_words);
        if b.second.starts.is_empty() {
            w.u32(0); // an empty second filter's one start
        }
        for &start in &b.second.starts {
            w.u32(start);
        }
        w.bytes(&b.second.seeds);
    })
}

/// A bumped two-line filter's bytes: the parameters of its layer with the
/// layout byte 3 and its second filter's counts, then the layer's lines
/// and codes and the second filter's lines, starts (from 0) and seeds.
fn bumped_lines_to_bytes(l: &LineShards, b: &LineBump, num_keys: u64) -> Vec<u8> {
    let layer_lines = b.total_lines();
    let second_lines = l.total_lines() - layer_lines;
    let num_shards = l.seeds.len();
    let mut p = ByteWriter::default();
    p.u64(num_keys)
        .u64(b.shape.num_shards as u64)
        .u64(layer_lines as u64)
        .u8(b.geometry.to_columns().base() as u8)
        .u16(b.geometry.to_columns().upper_from() as u16)
        .u8(LAYOUT_BUMPED_LINES)
        .u64(b.second_keys)
        .u64(num_shards as u64)
        .u64(second_lines as u64)
        .u8(l.geometry.to_columns().base() as u8)
        .u16(l.geometry.to_columns().upper_from() as u16);
    let table = shard_table_bytes(num_shards).expect("allocated");
    let payload_len = (layer_lines + second_lines) * 64 + b.codes.len() * 8 + table;
    format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
        for line in &l.lines[..layer_lines] {
            w.u64s(&line.0);
        }
        w.u64s(&b.codes);
        for line in &l.lines[layer_lines..layer_lines + second_lines] {
            w.u64s(&line.0);
        }
        if l.starts.is_empty() {
            w.u32(0); // an empty second filter's one start
        }
        for &start in &l.starts {
            w.u32(start - layer_lines as u32);
        }
        w.bytes(&l.seeds);
    })
}

/// The line kinds a two-line frame's column rule describes, or the error
/// for a rule no line holds.
pub(super) fn line_geometry(columns: Columns) -> Result<LineGeometry, Error> {
    LineGeometry::from_columns(columns)
        .ok_or_else(|| FormatError::InvalidParameters("two-line layout with columns no line holds").into())
}
