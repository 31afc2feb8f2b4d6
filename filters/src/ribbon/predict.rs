//! What a Ribbon filter will be, predicted without building it: the
//! planner's model of the kind.

use super::bumped::Layer;
use super::config::{RibbonParams, SHARD_KEYS};
use super::layout::Columns;
use super::line_filter::LineBump;
use super::lines::{self, Line, LINE_ROW, LINE_SHARD_KEYS};
use super::solution::padding_words;
use super::table::shard_table_bytes;
use crate::Error;

/// What [`Ribbon::build`] makes from `n` distinct keys with `params`,
/// predicted without building it (see [`Prediction`]): the keys spread
/// evenly over the shards, every shard solved at its first attempt's size.
/// Real shards hold a binomial share of the keys and rarely need a second
/// size, so a built filter's bytes differ from this by a fraction of a
/// percent. The column rule and the FPR come from the first 4,096 shards
/// (the extra-column pattern repeats every 256 blocks, so more shards
/// change nothing), which keeps the prediction O(1) in `n`.
pub(crate) fn predict(n: usize, params: &RibbonParams) -> Result<Prediction, Error> {
    if params.bumped() && n >= super::bumped::BUMPED_MIN_KEYS {
        return predict_bumped(n, params);
    }
    predict_with(n, params, None)
}

/// [`predict`] without bumping, with the column rule `columns` if given
/// (a bumped filter's second filter may take its layer's).
fn predict_with(n: usize, params: &RibbonParams, columns: Option<Columns>) -> Result<Prediction, Error> {
    const SAMPLE_SHARDS: usize = 4096;
    if params.two_lines() {
        return predict_lines(n, params);
    }
    let num_shards = n.div_ceil(SHARD_KEYS);
    if num_shards == 0 {
        return Ok(Prediction::default());
    }
    // `bigger` shards of `base + 1` keys, the rest of `base` (at least 1).
    let (base, bigger) = (n / num_shards, n % num_shards);
    let small = params.blocks(base, 0)?;
    let big = if bigger > 0 {
        params.blocks(base + 1, 0)?
    } else {
        small
    };
    let blocks_of = |s: usize| if s < bigger { big } else { small };
    let total_blocks = small
        .checked_mul(num_shards - bigger)
        .and_then(|b| b.checked_add(big.checked_mul(bigger)?))
        .filter(|&b| b <= u32::MAX as usize)
        .ok_or(Error::TooLarge)?;
    let sample = num_shards.min(SAMPLE_SHARDS);
    let sample_keys = (n as f64 * sample as f64 / num_shards as f64) as usize;
    let columns = columns.unwrap_or_else(|| params.columns(sample_keys, sample, blocks_of));
    let (mut first, mut fpr) = (0usize, 0.0);
    for s in 0..sample {
        fpr += columns.shard_fpr(first, blocks_of(s));
        first += blocks_of(s);
    }
    let words = columns.checked_word_of(total_blocks).ok_or(Error::TooLarge)?;
    let bytes = words
        .checked_add(padding_words(columns.max_columns()))
        .and_then(|w| w.checked_mul(8))
        .and_then(|b| b.checked_add(shard_table_bytes(num_shards)?))
        .ok_or(Error::TooLarge)?;
    Ok(Prediction {
        bytes,
        fpr: fpr / sample as f64,
        mean_columns: words as f64 / total_blocks as f64,
    })
}

/// [`predict`] for the two-line layout: keys spread evenly, first-attempt
/// sizes, one padding line.
fn predict_lines(n: usize, params: &RibbonParams) -> Result<Prediction, Error> {
    let num_shards = n.div_ceil(LINE_SHARD_KEYS);
    if num_shards == 0 {
        return Ok(Prediction::default());
    }
    let (base, bigger) = (n / num_shards, n % num_shards);
    let solver = params.line_solver(n, num_shards)?;
    let (g, ratio) = (&solver.geometry, solver.slots_per_key);
    let small = lines::lines_for(g, base, ratio, 0)?;
    let big = lines::lines_for(g, base + 1, ratio, 0)?;
    let total = small
        .checked_mul(num_shards - bigger)
        .and_then(|b| b.checked_add(big.checked_mul(bigger)?))
        .filter(|&b| b <= u32::MAX as usize)
        .ok_or(Error::TooLarge)?;
    let bytes = total
        .checked_add(1)
        .and_then(|l| l.checked_mul(core::mem::size_of::<Line>()))
        .and_then(|b| b.checked_add(shard_table_bytes(num_shards)?))
        .ok_or(Error::TooLarge)?;
    let shard_fpr = |lines: usize| g.shard_fpr(lines, g.slots(lines) - (LINE_ROW - 1));
    let fpr = (shard_fpr(small) * (num_shards - bigger) as f64 + shard_fpr(big) * bigger as f64)
        / num_shards as f64;
    Ok(Prediction {
        bytes,
        fpr,
        mean_columns: mean_columns(g, total, num_shards),
    })
}

/// Mean columns per slot of `total` lines by `g` in `shards` shards.
fn mean_columns(g: &super::line_kind::LineGeometry, total: usize, shards: usize) -> f64 {
    let n = total.div_ceil(shards.max(1)).max(1);
    let bits: usize = (0..n)
        .map(|l| g.kind_of(n, l).slots * g.kind_of(n, l).columns as usize)
        .sum();
    bits as f64 / g.slots(n) as f64
}

/// [`predict`] with bumping: the layer's words (or lines) and codes as
/// built, and the second filter predicted for the share of keys a layer
/// bumps on average (measured at 10^6 keys).
fn predict_bumped(n: usize, params: &RibbonParams) -> Result<Prediction, Error> {
    let standard = params.without_bumping();
    if params.two_lines() {
        let guess = params.line_geometry(super::bumped_lines::LAYER_LINES_GUESS)?;
        let (shards, shard_lines) =
            LineBump::shape_for(n, guess.slots_per_line(super::bumped_lines::LAYER_LINES_GUESS))?;
        let g = params.line_geometry(shard_lines)?;
        let lines = shards * shard_lines;
        let second = predict_lines(share_of(n, LINES_BUMPED), &standard)?;
        let bytes = (lines + (second.bytes == 0) as usize) * core::mem::size_of::<Line>()
            + LineBump::code_words(lines) * 8
            + second.bytes;
        // Every start keeps its line's FPR, the bumped ones the second
        // filter's, which is the same target.
        let fpr = match shards {
            0 => 0.0,
            _ => g.shard_fpr(shard_lines, g.slots(shard_lines) - (LINE_ROW - 1)),
        };
        return Ok(Prediction {
            bytes,
            fpr,
            mean_columns: mean_columns(&g, lines, shards),
        });
    }
    let layer = Layer::for_keys(n)?;
    if layer.num_shards == 0 {
        return Ok(Prediction::default());
    }
    let columns = params.bumped_columns(n, &layer);
    let second = predict_with(
        share_of(n, BLOCKS_BUMPED),
        &standard,
        params.second_columns(columns),
    )?;
    let words = columns
        .checked_word_of(layer.total_blocks())
        .ok_or(Error::TooLarge)?;
    let bytes = (words + padding_words(columns.max_columns()) + layer.code_words()) * 8 + second.bytes;
    // The pattern repeats every 256 blocks: a few shards tell the FPR.
    let sample = layer.num_shards.min(64);
    let fpr = (0..sample)
        .map(|s| columns.shard_fpr(s * layer.shard_blocks, layer.shard_blocks))
        .sum::<f64>()
        / sample as f64;
    Ok(Prediction {
        bytes,
        fpr,
        mean_columns: words as f64 / layer.total_blocks() as f64,
    })
}

/// Shares of keys bumped by the blocked and the two-line layers, measured.
const BLOCKS_BUMPED: f64 = super::bumped::SECOND_SHARE;
const LINES_BUMPED: f64 = super::line_filter::SECOND_SHARE;

fn share_of(n: usize, share: f64) -> usize {
    libm::round(n as f64 * share) as usize
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
