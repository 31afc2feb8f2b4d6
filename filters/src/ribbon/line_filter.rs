//! A two-line filter's storage and where a key is in it: the lines of its
//! shards and, when it is bumped, the layer before them (`LineBump`), with
//! the query's locate for both. The line format is in `lines.rs`; the
//! bumped build in `bumped_lines.rs`, the sharded one in `build.rs`.

use alloc::vec::Vec;

use super::bumped::{code_in, coeff_in_layer, place};
use super::lines::{locate_lines, Line, LineWindow, LINE_COLUMNS, LINE_ROW, LINE_SLOTS};
use super::row::{mixed, result_of};
use super::runs::Run;
use super::table::{shard_entry, shard_table};
use crate::Error;

/// Keys per shard of the bumped two-line layer, about.
const LAYER_SHARD_KEYS: usize = 1 << 16;

/// Keys per slot of the layer (see the module docs).
const LAYER_LOAD: f64 = 1.06;

/// Share of the keys the layer bumps at that load, on average (measured
/// at 10^6 keys by the layer exploration in `bumped_build.rs`): what the
/// planner's prediction expects of the second filter.
pub(crate) const SECOND_SHARE: f64 = 0.057;

/// Thresholds by two-bit code, in slots of the line: keys that start
/// below it in their line are bumped.
pub(crate) const LAYER_THRESHOLDS: [u32; 4] = [0, 18, 36, LINE_SLOTS as u32];

/// The shards of a two-line filter and their lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineShards {
    /// `starts[i]`: shard `i`'s first line; the last entry is the total.
    pub(crate) starts: Vec<u32>,
    /// `seeds[i]`: the attempt shard `i` was solved at (0 if empty).
    pub(crate) seeds: Vec<u8>,
    /// Every shard's lines, then one zero line (not serialized) that a
    /// query of the last line may read as its second.
    pub(crate) lines: Vec<Line>,
    /// A bumped filter's layer (`bumped_lines.rs`), whose lines come first;
    /// the shards above are then its second filter's, their starts counted
    /// from the filter's first line.
    pub(crate) bump: Option<LineBump>,
}

impl LineShards {
    /// Lines before the padding line.
    pub(crate) fn total_lines(&self) -> usize {
        let layer = self.bump.as_ref().map_or(0, |b| b.total_lines());
        self.starts.last().map_or(layer, |&b| b as usize)
    }

    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Option<(LineWindow, u32)> {
        if let Some(b) = &self.bump {
            if let Some(found) = b.locate(hash) {
                return Some(found);
            }
        }
        locate_lines(
            self.seeds.len(),
            |i| shard_entry(&self.starts, &self.seeds, i),
            hash,
        )
    }

    /// A window and fingerprint that never match: no coefficients (so the
    /// parities are 0) against a fingerprint of 1. Reads line 0 only (no
    /// coefficient reaches a second line), which a filter with keys has.
    pub(crate) const NEVER: (LineWindow, u32) = (
        LineWindow {
            line: 0,
            coeff: [0; 3],
        },
        1,
    );

    /// [`locate`](Self::locate), the lines prefetched; [`Self::NEVER`] for
    /// a key whose shard is empty. Only for a filter with keys.
    #[inline(always)]
    pub(crate) fn locate_prefetched(&self, hash: u64) -> (LineWindow, u32) {
        match self.locate(hash) {
            Some((window, result)) => {
                window.prefetch(&self.lines);
                (window, result)
            }
            None => Self::NEVER,
        }
    }

    pub(crate) fn attempts(&self) -> u64 {
        self.bump.as_ref().map_or(0, |b| b.num_shards as u64)
            + self
                .starts
                .windows(2)
                .zip(&self.seeds)
                .filter(|(w, _)| w[1] > w[0])
                .map(|(_, &seed)| seed as u64 + 1)
                .sum::<u64>()
    }

    /// Mean over the shards of each shard's FPR (`2^-7`, 0 when empty).
    pub(crate) fn expected_fpr(&self) -> f64 {
        if let Some(b) = &self.bump {
            return b.expected_fpr();
        }
        let s = self.seeds.len();
        if s == 0 {
            return 0.0;
        }
        let full = self.starts.windows(2).filter(|w| w[1] > w[0]).count();
        full as f64 / s as f64 / (1u32 << LINE_COLUMNS) as f64
    }

    /// The words of every line but the padding, in order.
    pub(crate) fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.lines[..self.total_lines()].iter().flat_map(|l| l.0)
    }
}

/// The two-line layout of a solved run of every shard (whose lines end
/// with the zero line queries may read).
pub(crate) fn finish(run: Run<Line>) -> Result<LineShards, Error> {
    let Run {
        ends,
        seeds,
        storage: lines,
        ..
    } = run;
    let (mut starts, _) = shard_table(ends.len())?;
    if !ends.is_empty() {
        starts.push(0);
        starts.extend_from_slice(&ends);
    }
    Ok(LineShards {
        starts,
        seeds,
        lines,
        bump: None,
    })
}

/// The layer of a bumped two-line filter: `num_shards` shards of
/// `shard_lines` lines each, the first lines of the filter's; a code per
/// line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineBump {
    pub(crate) num_shards: usize,
    pub(crate) shard_lines: usize,
    /// Each line's two-bit code, 32 to a word, low bits first.
    pub(crate) codes: Vec<u64>,
    /// Keys in the second filter (whose shard starts, in the filter's
    /// `LineShards`, count from the layer's end).
    pub(crate) second_keys: u64,
}

impl LineBump {
    /// Shards and lines per shard for `n` keys.
    pub(crate) fn shape_for(n: usize) -> Result<(usize, usize), Error> {
        let num_shards = n.div_ceil(LAYER_SHARD_KEYS);
        if num_shards == 0 {
            return Ok((0, 0));
        }
        let lines =
            libm::round(n as f64 / (num_shards as f64 * LAYER_LOAD * LINE_SLOTS as f64)).max(1.0) as usize;
        num_shards
            .checked_mul(lines)
            .filter(|&l| l < u32::MAX as usize)
            .ok_or(Error::TooLarge)?;
        Ok((num_shards, lines))
    }

    /// Lines of the layer.
    pub(crate) fn total_lines(&self) -> usize {
        self.num_shards * self.shard_lines
    }

    /// Words of packed codes for `lines` lines.
    pub(crate) fn code_words(lines: usize) -> usize {
        lines.div_ceil(32)
    }

    /// The window and fingerprint of the key in the layer; `None` when it
    /// is bumped.
    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Option<(LineWindow, u32)> {
        locate_in_layer(
            self.num_shards,
            self.shard_lines,
            |i| code_in(self.codes[i >> 5], i),
            hash,
        )
    }

    /// Expected FPR: `2^-7` wherever a key lands (layer or second filter),
    /// 0 only for an empty filter.
    pub(crate) fn expected_fpr(&self) -> f64 {
        match self.num_shards {
            0 => 0.0,
            _ => 1.0 / (1u32 << LINE_COLUMNS) as f64,
        }
    }
}

/// The window and fingerprint of the key with this hash in a bumped
/// two-line layer of `num_shards` shards of `shard_lines` lines, reading
/// line `i`'s code through `code_of`; `None` when the key is bumped (or
/// the layer is empty).
#[inline(always)]
pub(crate) fn locate_in_layer(
    num_shards: usize,
    shard_lines: usize,
    code_of: impl Fn(usize) -> u32,
    hash: u64,
) -> Option<(LineWindow, u32)> {
    if num_shards == 0 {
        return None;
    }
    let a = mixed(hash);
    let num_starts = (shard_lines * LINE_SLOTS - (LINE_ROW - 1)) as u64;
    let (shard, start) = place(a, num_shards as u64, num_starts);
    let first = shard * shard_lines;
    let code = code_of(first + start / LINE_SLOTS);
    let coeff = coeff_in_layer(hash) as u64;
    if ((start % LINE_SLOTS) as u32) < LAYER_THRESHOLDS[(code & 3) as usize] {
        return None;
    }
    Some((
        LineWindow::new(first, start, coeff),
        result_of(a) & ((1 << LINE_COLUMNS) - 1),
    ))
}
