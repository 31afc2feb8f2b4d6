//! A two-line filter's storage and where a key is in it: the lines of its
//! shards and, when it is bumped, the layer before them (`LineBump`), with
//! the query's locate for both. The line format is in `lines.rs`; the
//! bumped build in `bumped_lines.rs`, the sharded one in `build.rs`.

use alloc::vec::Vec;

use super::bumped::{code_in, coeff_in_layer, place};
use super::line_kind::{LineGeometry, LineKind};
use super::lines::{locate_lines, Line, LineWindow, LINE_ROW};
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

/// The shards of a two-line filter and their lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineShards {
    /// The kinds of the shards' lines (`line_kind.rs`).
    pub(crate) geometry: LineGeometry,
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
    /// The shape of its lines ([`shape`](Self::shape)), of the fields above.
    shape: u32,
}

impl LineShards {
    /// The shards of these starts, seeds and lines by `geometry`, after
    /// the layer `bump` if bumped.
    pub(crate) fn new(
        geometry: LineGeometry,
        starts: Vec<u32>,
        seeds: Vec<u8>,
        lines: Vec<Line>,
        bump: Option<LineBump>,
    ) -> Self {
        let layer = bump.as_ref().map_or(geometry, |b| b.geometry);
        let shape = match geometry.shape() == layer.shape() {
            true => layer.shape(),
            false => 0,
        };
        LineShards {
            geometry,
            starts,
            seeds,
            lines,
            bump,
            shape,
        }
    }

    /// Lines before the padding line.
    pub(crate) fn total_lines(&self) -> usize {
        let layer = self.bump.as_ref().map_or(0, |b| b.total_lines());
        self.starts.last().map_or(layer, |&b| b as usize)
    }

    /// Slots of every shard, the layer's included.
    pub(crate) fn total_slots(&self) -> usize {
        let layer = self
            .bump
            .as_ref()
            .map_or(0, |b| b.shape.num_shards * b.geometry.slots(b.shape.shard_lines));
        let second: usize = self
            .starts
            .windows(2)
            .map(|w| self.geometry.slots((w[1] - w[0]) as usize))
            .sum();
        layer + second
    }

    /// The shape of its lines (`LineGeometry::shape`) when its layer's is
    /// the same, else 0: what a kernel compiled for one shape checks.
    #[inline(always)]
    pub(crate) fn shape(&self) -> u32 {
        self.shape
    }

    /// The window and fingerprint of the key with this hash; `R` is 0 or
    /// [`shape`](Self::shape) (the line kinds then constants).
    #[inline(always)]
    pub(crate) fn locate<const R: u32>(&self, hash: u64) -> Option<(LineWindow, u32)> {
        let geometry = self.geometry.compiled::<R>();
        if let Some(b) = &self.bump {
            let layer = b.geometry.compiled::<R>();
            if let Some(found) = b.locate(&layer, hash) {
                return Some(found);
            }
        }
        locate_lines(
            self.seeds.len(),
            &geometry,
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
            kind: LineKind::NEVER,
            mask: 1,
        },
        1,
    );

    /// [`locate`](Self::locate), the lines prefetched; [`Self::NEVER`] for
    /// a key whose shard is empty. Only for a filter with keys.
    #[inline(always)]
    pub(crate) fn locate_prefetched<const R: u32>(&self, hash: u64) -> (LineWindow, u32) {
        match self.locate::<R>(hash) {
            Some((window, result)) => {
                window.prefetch(&self.lines);
                (window, result)
            }
            None => Self::NEVER,
        }
    }

    pub(crate) fn attempts(&self) -> u64 {
        self.bump.as_ref().map_or(0, |b| b.shape.num_shards as u64)
            + self
                .starts
                .windows(2)
                .zip(&self.seeds)
                .filter(|(w, _)| w[1] > w[0])
                .map(|(_, &seed)| seed as u64 + 1)
                .sum::<u64>()
    }

    /// Mean over the shards of each shard's FPR (0 when empty); for a
    /// bumped filter, its layer's, where the bumped starts have this one.
    pub(crate) fn expected_fpr(&self) -> f64 {
        let s = self.seeds.len();
        let own = match s {
            0 => 0.0,
            _ => {
                let sum: f64 = self
                    .starts
                    .windows(2)
                    .filter(|w| w[1] > w[0])
                    .map(|w| {
                        let n = (w[1] - w[0]) as usize;
                        self.geometry
                            .shard_fpr(n, self.geometry.slots(n) - (LINE_ROW - 1))
                    })
                    .sum();
                sum / s as f64
            }
        };
        match &self.bump {
            Some(b) => b.expected_fpr(|i| code_in(b.codes[i >> 5], i), own),
            None => own,
        }
    }

    /// The words of every line but the padding, in order.
    pub(crate) fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.lines[..self.total_lines()].iter().flat_map(|l| l.0)
    }
}

/// The two-line layout by `geometry` of a solved run of every shard (whose
/// lines end with the zero line queries may read).
pub(crate) fn finish(run: Run<Line>, geometry: LineGeometry) -> Result<LineShards, Error> {
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
    Ok(LineShards::new(geometry, starts, seeds, lines, None))
}

/// The layer of a bumped two-line filter: `num_shards` shards of
/// `shard_lines` lines each, the first lines of the filter's; a code per
/// line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineBump {
    /// The kinds of the layer's lines.
    pub(crate) geometry: LineGeometry,
    /// Its shards, lines per shard, and what the query needs of them.
    pub(crate) shape: LayerShape,
    /// Each line's two-bit code, 32 to a word, low bits first.
    pub(crate) codes: Vec<u64>,
    /// Keys in the second filter (whose shard starts, in the filter's
    /// `LineShards`, count from the layer's end).
    pub(crate) second_keys: u64,
}

impl LineBump {
    /// The layer of `num_shards` shards of `shard_lines` lines (at most
    /// [`MAX_SHARD_SLOTS`](super::line_kind::MAX_SHARD_SLOTS) slots each) by
    /// `geometry`, with these codes and keys in its second filter.
    pub(crate) fn new(
        geometry: LineGeometry,
        num_shards: usize,
        shard_lines: usize,
        codes: Vec<u64>,
        second_keys: u64,
    ) -> Option<Self> {
        Some(LineBump {
            geometry,
            shape: LayerShape::of(&geometry, num_shards, shard_lines)?,
            codes,
            second_keys,
        })
    }

    /// Shards and lines per shard for `n` keys in lines of `slots_per_line`
    /// slots on average.
    pub(crate) fn shape_for(n: usize, slots_per_line: f64) -> Result<(usize, usize), Error> {
        let num_shards = n.div_ceil(LAYER_SHARD_KEYS);
        if num_shards == 0 {
            return Ok((0, 0));
        }
        let lines =
            libm::round(n as f64 / (num_shards as f64 * LAYER_LOAD * slots_per_line)).max(1.0) as usize;
        num_shards
            .checked_mul(lines)
            .filter(|&l| l < u32::MAX as usize)
            .ok_or(Error::TooLarge)?;
        Ok((num_shards, lines))
    }

    /// Lines of the layer.
    pub(crate) fn total_lines(&self) -> usize {
        self.shape.num_shards * self.shape.shard_lines
    }

    /// Words of packed codes for `lines` lines.
    pub(crate) fn code_words(lines: usize) -> usize {
        lines.div_ceil(32)
    }

    /// The window and fingerprint of the key in the layer laid out by
    /// `geometry` (its own, or the same as a constant); `None` when it is
    /// bumped.
    #[inline(always)]
    pub(crate) fn locate(&self, geometry: &LineGeometry, hash: u64) -> Option<(LineWindow, u32)> {
        let shape = LayerShape {
            upper_lines: geometry.upper_lines_of(self.shape.upper_lines),
            ..self.shape
        };
        locate_in_layer(&shape, geometry, |i| code_in(self.codes[i >> 5], i), hash)
    }

    /// Expected FPR: over the layer's starts, each line's FPR for the
    /// starts it keeps and `second_fpr` for those its code bumps; line
    /// `i`'s code read through `code_of`. 0 for an empty filter.
    pub(crate) fn expected_fpr(&self, code_of: impl Fn(usize) -> u32, second_fpr: f64) -> f64 {
        layer_fpr(
            &self.geometry,
            self.shape.num_shards,
            self.shape.shard_lines,
            code_of,
            second_fpr,
        )
    }
}

/// [`LineBump::expected_fpr`] of a layer of `num_shards` shards of
/// `shard_lines` lines laid out by `geometry`.
pub(crate) fn layer_fpr(
    geometry: &LineGeometry,
    num_shards: usize,
    shard_lines: usize,
    code_of: impl Fn(usize) -> u32,
    second_fpr: f64,
) -> f64 {
    if num_shards == 0 {
        return 0.0;
    }
    let num_starts = geometry.slots(shard_lines) - (LINE_ROW - 1);
    let mut sum = 0.0;
    for s in 0..num_shards {
        for l in 0..shard_lines {
            let first = geometry.line_start(shard_lines, l);
            let p = geometry.place(shard_lines, first);
            let starts = p.kind.slots.min(num_starts.saturating_sub(first));
            let bumped =
                (p.kind.thresholds[(code_of(s * shard_lines + l) & 3) as usize] as usize).min(starts);
            sum += bumped as f64 * second_fpr + (starts - bumped) as f64 * libm::exp2(-(p.checks as f64));
        }
    }
    sum / (num_shards * num_starts) as f64
}

/// A bumped two-line layer's shape: `num_shards` shards of `shard_lines`
/// lines, each with `num_starts` starts and its first `upper_lines` lines
/// of `r + 1` columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LayerShape {
    pub(crate) num_shards: usize,
    pub(crate) shard_lines: usize,
    pub(crate) num_starts: u64,
    pub(crate) upper_lines: usize,
}

impl LayerShape {
    /// The shape of `num_shards` shards of `shard_lines` lines by
    /// `geometry`; `None` past the slots a shard may hold.
    pub(crate) fn of(geometry: &LineGeometry, num_shards: usize, shard_lines: usize) -> Option<Self> {
        let slots = match num_shards {
            0 => LINE_ROW,
            _ => geometry.checked_slots(shard_lines)?,
        };
        Some(LayerShape {
            num_shards,
            shard_lines,
            num_starts: (slots - (LINE_ROW - 1)) as u64,
            upper_lines: geometry.upper_lines(shard_lines),
        })
    }
}

/// The window and fingerprint of the key with this hash in a bumped
/// two-line layer of this shape laid out by `geometry`, reading line `i`'s
/// code through `code_of`; `None` when the key is bumped (or the layer is
/// empty).
#[inline(always)]
pub(crate) fn locate_in_layer(
    shape: &LayerShape,
    geometry: &LineGeometry,
    code_of: impl Fn(usize) -> u32,
    hash: u64,
) -> Option<(LineWindow, u32)> {
    if shape.num_shards == 0 {
        return None;
    }
    let a = mixed(hash);
    let (shard, start) = place(a, shape.num_shards as u64, shape.num_starts);
    let first = shard * shape.shard_lines;
    let p = geometry.place_after(shape.upper_lines, start);
    let code = code_of(first + p.line);
    let coeff = coeff_in_layer(hash) as u64;
    if (p.offset as u32) < p.kind.thresholds[(code & 3) as usize] {
        return None;
    }
    Some((LineWindow::new(first, p, coeff), result_of(a)))
}
