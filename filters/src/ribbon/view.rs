//! [`RibbonView`]: a Ribbon filter answered in place from its serialized
//! bytes, with no copy of the filter and no allocation.
//!
//! A version-2 Ribbon payload is the solution words, then the shard table:
//! a `u32` first block per shard (and the total), then a seed byte per
//! shard. So a query reads its shard's two starts and its seed in place and
//! runs the owned filter's own steps: [`locate_compact`] picks the shard
//! and the window (its word offsets are arithmetic on the block index), and
//! the window's words (about `3r` of them) are copied from the bytes into a
//! buffer on the stack ([`Window::gather`]) that the portable parity code
//! ([`portable_group`]) reads, so owned and borrowed answer identically.
//! A two-line payload (`lines.rs`) is viewed the same way: the query's one
//! or two lines (16 words) are copied to the stack and read by
//! [`portable_pair`].
//! A bumped payload (layouts 2 and 3, `bumped.rs`) is viewed the same way:
//! a query computes its bucket, reads the bucket's two-bit code from the
//! bytes and either the layer's words or, for a bumped key, the second
//! filter's (whose shard table is checked like any other).
//! Version-1 payloads have no block starts (each shard's place is the sum
//! of the sizes before it), so they cannot be viewed: [`Error::Unsupported`].
//!
//! Making a view checks the whole shard table (O(shards): 1,221 shards for
//! 10M keys), checksum or not, so no byte string can make a query read out
//! of bounds.

use alloc::vec::Vec;

use super::bumped::{code_in, Layer};
use super::frame::line_geometry;
use super::frame::{check_shards, parse_frame_v2};
use super::layout::Columns;
use super::line_filter::{layer_fpr, locate_in_layer, LayerShape};
use super::line_kind::LineGeometry;
use super::lines::{check_line_shards, locate_lines, portable_pair, Line, LineWindow};
use super::query::{locate_compact, BATCH};
use super::solution::{portable_group, Window, GATHERED_WORDS};
use super::table::u32_at;
use super::Ribbon;
use crate::format::{self, Checksum};
use crate::prefetch::prefetch;
use crate::{Error, Filter, FilterKind, FormatError, KeyHash};

/// A [`Ribbon`] filter read in place from its bytes ([`Filter::to_bytes`],
/// format version 2). [`new`](Self::new) checks everything, checksum
/// included; [`trusted`](Self::trusted) all but the checksum, in O(shards).
///
/// ```
/// use amq::ribbon::RibbonView;
/// use amq::{Filter, Ribbon, RibbonParams, StaticFilter};
///
/// let keys: Vec<amq::KeyHash> = (0..20_000u64).map(amq::hash_u64).collect();
/// let f = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(7).unwrap()).unwrap();
/// let bytes = f.to_bytes();
/// let view = RibbonView::new(&bytes).unwrap();
/// assert!(keys.iter().all(|&h| view.contains_hash(h)));
/// assert_eq!(view.expected_fpr(), f.expected_fpr());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RibbonView<'a> {
    frame: &'a [u8],
    /// The solution words, little-endian.
    words: &'a [u8],
    /// `num_shards + 1` checked block starts, `u32` little-endian.
    starts: &'a [u8],
    /// `num_shards` checked seeds.
    seeds: &'a [u8],
    columns: Columns,
    /// The two-line layout: `words` are 64-byte lines of these kinds.
    lines: Option<LineGeometry>,
    /// A bumped filter's layer; the fields above then describe its second
    /// filter.
    layer: Option<LayerView<'a>>,
    num_keys: u64,
    expected_fpr: f64,
}

/// The layer of a bumped filter, in place.
#[derive(Debug, Clone, Copy)]
struct LayerView<'a> {
    layer: Layer,
    /// The layer's column rule (the view's own is the second filter's).
    columns: Columns,
    /// A two-line layer's line kinds and shape.
    lines: Option<(LineGeometry, LayerShape)>,
    /// The layer's words, little-endian.
    words: &'a [u8],
    /// The buckets' two-bit codes, 32 to a little-endian `u64`.
    codes: &'a [u8],
}

impl<'a> RibbonView<'a> {
    /// A view over a serialized Ribbon filter (format version 2), every
    /// check made.
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Verify)
    }

    /// A view over bytes whose checksum was verified before: every check but
    /// the checksum (the shard table is checked, O(shards)).
    pub fn trusted(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, Checksum::Trusted)
    }

    fn parse(bytes: &'a [u8], checksum: Checksum) -> Result<Self, Error> {
        let frame = format::decode_kind_with(bytes, FilterKind::Ribbon, checksum)?;
        if frame.version < 2 {
            return Err(crate::error::unsupported(
                FilterKind::Ribbon,
                "view of a version-1 frame",
            ));
        }
        let parts = parse_frame_v2(frame)?;
        let lines = match parts.lines {
            true => Some(line_geometry(parts.columns)?),
            false => None,
        };
        let fpr_sum = match &lines {
            Some(g) => check_line_shards(parts.starts, parts.seeds, parts.total_blocks, g, |_, _| {})?,
            None => check_shards(&parts, |_, _| {})?,
        };
        let second_fpr = match parts.num_shards {
            0 => 0.0,
            s => fpr_sum / s as f64,
        };
        let layer = match parts.bumped {
            Some(l) => Some(LayerView {
                layer: l.layer,
                columns: l.columns,
                lines: match parts.lines {
                    true => {
                        let g = line_geometry(l.columns)?;
                        let shape = LayerShape::of(&g, l.layer.num_shards, l.layer.shard_blocks)
                            .ok_or(FormatError::InvalidParameters("a layer shard has too many lines"))?;
                        Some((g, shape))
                    }
                    false => None,
                },
                words: l.words,
                codes: l.codes,
            }),
            None => None,
        };
        let (num_keys, expected_fpr) = match &layer {
            None => (parts.num_keys, second_fpr),
            Some(
                l @ LayerView {
                    lines: Some((g, _)), ..
                },
            ) => {
                let (shards, lines) = (l.layer.num_shards, l.layer.shard_blocks);
                let fpr = layer_fpr(g, shards, lines, |i| l.code(i), second_fpr);
                (parts.bumped.map_or(0, |b| b.num_keys), fpr)
            }
            Some(l) => {
                let codes = (0..l.layer.num_buckets()).map(|i| l.code(i));
                let fpr = l.layer.expected_fpr(&l.columns, codes, second_fpr);
                (parts.bumped.map_or(0, |b| b.num_keys), fpr)
            }
        };
        Ok(RibbonView {
            frame: bytes,
            words: parts.words,
            starts: parts.starts,
            seeds: parts.seeds,
            columns: parts.columns,
            lines,
            layer,
            num_keys,
            expected_fpr,
        })
    }

    #[inline(always)]
    fn u64_at(bytes: &[u8], i: usize) -> u64 {
        let mut le = [0u8; 8];
        le.copy_from_slice(&bytes[8 * i..8 * i + 8]);
        u64::from_le_bytes(le)
    }

    /// The two-line layout's window of the key with this hash, and the
    /// lines it reads (a bumped filter's layer's or second filter's).
    #[inline(always)]
    fn locate_lines(&self, hash: u64) -> (Option<(LineWindow, u32)>, &'a [u8]) {
        if let Some(l) = &self.layer {
            let (g, shape) = l.lines.as_ref().expect("a two-line layer");
            if let Some(found) = locate_in_layer(shape, g, |i| l.code(i), hash) {
                return (Some(found), l.words);
            }
        }
        let found = locate_lines(
            self.seeds.len(),
            self.lines.as_ref().expect("a two-line filter"),
            |i| {
                (
                    u32_at(self.starts, i) as usize,
                    u32_at(self.starts, i + 1) as usize,
                    self.seeds[i],
                )
            },
            hash,
        );
        (found, self.words)
    }

    /// Whether a two-line window's fingerprint is `result`: its lines (the
    /// second only if the row reaches into it) copied from `words` (a
    /// second line past the last one reads as zeros; the row never reaches
    /// into it then).
    #[inline(always)]
    fn matches_lines(words: &[u8], window: &LineWindow, result: u32) -> bool {
        let num_words = words.len() / 8;
        let mut buf = [Line::default(), Line::default()];
        let read = 1 + window.two_lines() as usize;
        for (k, line) in buf.iter_mut().enumerate().take(read) {
            for (j, w) in line.0.iter_mut().enumerate() {
                let i = (window.line + k) * 8 + j;
                if i < num_words {
                    *w = Self::u64_at(words, i);
                }
            }
        }
        LineWindow { line: 0, ..*window }.matches(&buf, result, portable_pair)
    }

    #[inline(always)]
    fn prefetch_lines(words: &[u8], window: &LineWindow) {
        let last = words.len().saturating_sub(1);
        prefetch(&words[(window.line * 64).min(last)]);
        if window.two_lines() {
            prefetch(&words[(window.line * 64 + 64).min(last)]);
        }
    }

    #[inline(always)]
    fn locate(&self, hash: u64) -> Option<(Window, u32)> {
        locate_compact(
            &self.columns,
            self.seeds.len(),
            |i| {
                (
                    u32_at(self.starts, i) as usize,
                    u32_at(self.starts, i + 1) as usize,
                    self.seeds[i],
                )
            },
            hash,
        )
    }

    /// A blocked or bumped filter's window of the key with this hash and
    /// the words it reads (the layer's or the second filter's).
    #[inline(always)]
    fn locate_any(&self, hash: u64) -> (Option<(Window, u32)>, &'a [u8]) {
        if let Some(l) = &self.layer {
            if let Some(found) = l.layer.locate(&l.columns, |i| l.code(i), hash) {
                return (Some(found), l.words);
            }
        }
        (self.locate(hash), self.words)
    }

    /// Whether the window's fingerprint is `result`, reading the window's
    /// words (of `words`) through `buf` (any contents: [`Window::gather`]
    /// overwrites every word that can change the answer, so a batch reuses
    /// one).
    #[inline(always)]
    fn matches(words: &[u8], window: &Window, result: u32, buf: &mut [u64; GATHERED_WORDS]) -> bool {
        let num_words = words.len() / 8;
        let local = window.gather(|i| Self::u64_at(words, i), num_words, buf);
        local.matches(buf, result, portable_group)
    }

    #[inline(always)]
    fn prefetch_window(words: &[u8], window: &Window) {
        let last = words.len().saturating_sub(1);
        for o in window.block_offsets() {
            prefetch(&words[(o * 8).min(last)]);
        }
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    fn query(&self, hash: u64) -> bool {
        if self.lines.is_some() {
            return match self.locate_lines(hash) {
                (Some((window, result)), words) => Self::matches_lines(words, &window, result),
                (None, _) => false,
            };
        }
        match self.locate_any(hash) {
            (Some((window, result)), words) => {
                Self::matches(words, &window, result, &mut [0; GATHERED_WORDS])
            }
            (None, _) => false,
        }
    }

    /// Number of shards (a bumped filter's layer's and second filter's).
    pub fn num_shards(&self) -> usize {
        self.seeds.len() + self.layer.map_or(0, |l| l.layer.num_shards)
    }

    /// The filter copied out of the bytes.
    pub fn to_filter(&self) -> Result<Ribbon, Error> {
        Ribbon::from_frame(format::decode_kind_with(
            self.frame,
            FilterKind::Ribbon,
            Checksum::Trusted,
        )?)
    }
}

impl LayerView<'_> {
    /// Bucket `i`'s code.
    #[inline(always)]
    fn code(&self, i: usize) -> u32 {
        code_in(RibbonView::u64_at(self.codes, i >> 5), i)
    }
}

impl Filter for RibbonView<'_> {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.query(hash.get())
    }

    /// Locates a batch of keys first, prefetching their blocks, then reads
    /// them, as the owned filter does.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        let hashes = crate::hash::raw(hashes);
        if self.lines.is_some() {
            let mut located = [(None, self.words); BATCH];
            for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
                for (l, &h) in located.iter_mut().zip(hs) {
                    *l = self.locate_lines(h);
                    if let (Some((window, _)), words) = l {
                        Self::prefetch_lines(words, window);
                    }
                }
                for (o, l) in os.iter_mut().zip(&located) {
                    *o = match l {
                        (Some((window, result)), words) => Self::matches_lines(words, window, *result),
                        (None, _) => false,
                    };
                }
            }
            return;
        }
        let mut located = [(None, self.words); BATCH];
        let mut buf = [0; GATHERED_WORDS];
        for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (l, &h) in located.iter_mut().zip(hs) {
                *l = self.locate_any(h);
                if let (Some((window, _)), words) = l {
                    Self::prefetch_window(words, window);
                }
            }
            for (o, l) in os.iter_mut().zip(&located) {
                *o = match l {
                    (Some((window, result)), words) => Self::matches(words, window, *result, &mut buf),
                    (None, _) => false,
                };
            }
        }
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        let hash = hash.get();
        if self.lines.is_some() {
            if let (Some((window, _)), words) = self.locate_lines(hash) {
                Self::prefetch_lines(words, &window);
            }
            return;
        }
        if let (Some((window, _)), words) = self.locate_any(hash) {
            Self::prefetch_window(words, &window);
        }
    }

    /// The words and the shard table (and a bumped filter's layer).
    fn size_in_bytes(&self) -> usize {
        let layer = self.layer.map_or(0, |l| l.words.len() + l.codes.len());
        self.words.len() + self.starts.len() + self.seeds.len() + layer
    }

    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }

    fn expected_fpr(&self) -> f64 {
        self.expected_fpr
    }

    fn kind(&self) -> FilterKind {
        FilterKind::Ribbon
    }

    /// The bytes in the current format version.
    fn to_bytes(&self) -> Vec<u8> {
        crate::format::current_bytes(self.frame, || self.to_filter().map(|f| f.to_bytes()))
    }
}
