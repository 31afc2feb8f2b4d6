//! A run of byte positions read as one digit: the distinct segments the
//! keys have there, sorted, each a digit value ([`Run`]); and what the
//! builder keeps to choose one ([`Heads`]).
//!
//! # Why
//!
//! A position-by-position map charges each varying position by its own
//! alphabet. Where positions vary together (a random 8-byte id with a few
//! hundred values, a tenant name, a big-endian user id), every one of them
//! shows close to 256 bytes and the run costs 64 bits, though it carries
//! about `log2(distinct values)`. Read as one digit, whose values are the
//! run's distinct segments in order, it costs exactly that, and the bits
//! saved go to the positions after it.
//!
//! # Order
//!
//! A segment is a key's bytes at positions `pos .. pos + span`, cut where
//! the key ends. Comparing two keys' segments as byte strings is comparing
//! their symbols there with the end symbol padding a short key, which is
//! how the map orders positions (see the module docs), so the rank of a
//! segment among the run's values is an order-preserving digit, and a
//! bound's segment that is not a value falls between its neighbours, as a
//! byte outside an alphabet does.
//!
//! # Choosing a run
//!
//! When the keys come in order (as a table writer gives them), the number
//! of distinct prefixes of length `q` is one plus the number of neighbours
//! whose longest common prefix is shorter than `q`: a histogram of those
//! lengths gives it for every `q` at once, and the keys that start a new
//! prefix (a neighbour's common prefix shorter than a limit) are the run's
//! values. [`Heads`] keeps them while they stay few, lowering the limit when
//! they do not.

use alloc::vec::Vec;
use core::cmp::Ordering;

/// Values a run may have: more, and the dictionary costs more than it
/// saves on the tables it is for.
pub(crate) const MAX_RUN_VALUES: usize = 4096;

/// Positions past which a run cannot reach (a run starts at the first
/// varying position and ends before this).
pub(crate) const MAX_RUN_END: usize = 128;

/// A run's values: distinct segments of at most `span` bytes, sorted.
/// Runs of up to 8 bytes (ids, most often) keep each value as an integer
/// that sorts as its bytes do, so a rank is a binary search over one
/// array of `u64`s; longer ones keep the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) span: usize,
    /// Runs of up to 8 bytes: each value big-endian, zero-padded ...
    short: Vec<u64>,
    /// ... and its length (which orders values that pad alike).
    lens: Vec<u8>,
    /// Longer runs: every value's bytes, one after another, ...
    bytes: Vec<u8>,
    /// ... and where each ends in `bytes`.
    ends: Vec<u32>,
}

/// `key`'s segment at `pos .. pos + span`, cut where the key ends.
#[inline(always)]
pub(crate) fn segment(key: &[u8], pos: usize, span: usize) -> &[u8] {
    let end = key.len().min(pos.saturating_add(span));
    &key[pos.min(end)..end]
}

/// At most 8 bytes, big-endian and zero-padded: with the length beside it,
/// it sorts as the bytes do (a string and the same with zero bytes
/// appended pad alike, and the shorter sorts first).
///
/// Shorter slices are read as two overlapping loads (4 to 7 bytes) or
/// three single bytes (1 to 3), not copied into a buffer: a copy of fewer
/// than 8 bytes followed by an 8-byte load of the buffer stalls the load
/// until the copy's stores retire, and keys' tails are most often short.
#[inline(always)]
pub(crate) fn padded(s: &[u8]) -> u64 {
    let n = s.len();
    if let Some(b) = s.first_chunk::<8>() {
        return u64::from_be_bytes(*b);
    }
    if n >= 4 {
        // Bytes 0..4 and n−4..n, each at its place; where they overlap
        // they are the same bytes.
        let head = u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]])) << 32;
        let tail = u64::from(u32::from_be_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]));
        return head | tail << (8 * (8 - n));
    }
    if n == 0 {
        return 0;
    }
    // Bytes 0, n/2 and n−1 cover every byte of 1 to 3.
    let at = |i: usize| u64::from(s[i]) << (56 - 8 * i);
    at(0) | at(n / 2) | at(n - 1)
}

impl Run {
    /// A run of `span` positions with no values yet.
    pub(crate) fn new(span: usize) -> Run {
        Run::with_capacity(span, 0, 0)
    }

    /// A run of `span` positions with room for `values` values of `bytes`
    /// bytes in all.
    pub(crate) fn with_capacity(span: usize, values: usize, bytes: usize) -> Run {
        let short = span <= 8;
        Run {
            span,
            short: Vec::with_capacity(if short { values } else { 0 }),
            lens: Vec::with_capacity(if short { values } else { 0 }),
            bytes: Vec::with_capacity(if short { 0 } else { bytes }),
            ends: Vec::with_capacity(if short { 0 } else { values }),
        }
    }

    #[inline(always)]
    fn is_short(&self) -> bool {
        self.span <= 8
    }

    /// Appends a value; `false` (and nothing added) unless it is at most
    /// `span` bytes and above the last one.
    pub(crate) fn push(&mut self, value: &[u8]) -> bool {
        if value.len() > self.span {
            return false;
        }
        if self.is_short() {
            let v = (padded(value), value.len() as u8);
            let last = self.short.last().zip(self.lens.last());
            if last.is_some_and(|(&p, &l)| (p, l) >= v) {
                return false;
            }
            self.short.push(v.0);
            self.lens.push(v.1);
            return true;
        }
        if self.len() > 0 && self.long_value(self.len() - 1) >= value {
            return false;
        }
        self.bytes.extend_from_slice(value);
        self.ends.push(self.bytes.len() as u32);
        true
    }

    /// Number of values: the digit's radix.
    pub(crate) fn len(&self) -> usize {
        if self.is_short() {
            self.short.len()
        } else {
            self.ends.len()
        }
    }

    /// Value `i` of a run longer than 8 bytes.
    #[inline(always)]
    fn long_value(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Calls `f` with each value in order.
    pub(crate) fn for_each_value(&self, mut f: impl FnMut(&[u8])) {
        if self.is_short() {
            for (&p, &l) in self.short.iter().zip(&self.lens) {
                f(&p.to_be_bytes()[..usize::from(l)]);
            }
        } else {
            (0..self.len()).for_each(|i| f(self.long_value(i)));
        }
    }

    /// Whether `key`'s segment at `pos` is a value, and how many values are
    /// below it.
    #[inline]
    pub(crate) fn rank(&self, key: &[u8], pos: usize) -> (bool, u64) {
        let seg = segment(key, pos, self.span);
        if self.is_short() {
            let (v, l) = (padded(seg), seg.len() as u8);
            return self.search(
                // `|` and `&`, not `||` and `&&`: no branch to mispredict.
                |i| (self.short[i] < v) | ((self.short[i] == v) & (self.lens[i] < l)),
                |i| (self.short[i] == v) & (self.lens[i] == l),
            );
        }
        self.search(|i| self.long_value(i) < seg, |i| self.long_value(i) == seg)
    }

    /// The binary search of `rank`: `below(i)` says value `i` sorts before
    /// the one sought, `equal(i)` that it is the one. Halves the range a
    /// fixed number of times without branching on the comparisons (a
    /// conditional move each), so a scan asking many tables does not pay a
    /// mispredicted branch per step; then the count of values below is
    /// `base` or `base + 1`.
    #[inline(always)]
    fn search(&self, below: impl Fn(usize) -> bool, equal: impl Fn(usize) -> bool) -> (bool, u64) {
        let n = self.len();
        if n == 0 {
            return (false, 0);
        }
        let (mut base, mut size) = (0, n);
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            base = if below(mid) { mid } else { base };
            size -= half;
        }
        let at = base + usize::from(below(base));
        (at < n && equal(at), at as u64)
    }
}

/// What a [`KeyMapBuilder`](super::KeyMapBuilder) keeps, while keys come
/// in order, to choose a run: see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Heads {
    /// Whether every key so far was at or above the one before.
    pub(crate) in_order: bool,
    /// The last key.
    last: Vec<u8>,
    /// `lcps[l]`: neighbours whose longest common prefix is `l` bytes.
    lcps: [u32; MAX_RUN_END],
    /// Prefixes are counted (and their keys kept) below this length.
    limit: usize,
    /// The keys that start a new prefix of length `limit` (cut there), with
    /// their common prefix with the key before; the first key is not here.
    starts: Vec<(u8, Vec<u8>)>,
    /// Distinct keys.
    pub(crate) keys: u64,
}

impl Default for Heads {
    fn default() -> Self {
        Heads {
            in_order: true,
            last: Vec::new(),
            lcps: [0; MAX_RUN_END],
            limit: MAX_RUN_END,
            starts: Vec::new(),
            keys: 0,
        }
    }
}

impl Heads {
    /// Records the next key (after the first, which `first` starts).
    pub(crate) fn add(&mut self, key: &[u8]) {
        if !self.in_order {
            return;
        }
        if self.keys == 0 {
            self.first(key);
            return;
        }
        match key.cmp(&self.last) {
            Ordering::Equal => return,
            Ordering::Less => {
                self.in_order = false;
                self.starts = Vec::new();
                return;
            }
            Ordering::Greater => {}
        }
        self.keys += 1;
        let lcp = super::common_prefix(key, &self.last);
        if lcp < MAX_RUN_END {
            self.lcps[lcp] += 1;
        }
        if lcp < self.limit {
            self.starts
                .push((lcp as u8, key[..key.len().min(self.limit)].to_vec()));
            if self.starts.len() >= MAX_RUN_VALUES {
                self.lower_limit();
            }
        }
        self.last.clear();
        self.last.extend_from_slice(key);
    }

    fn first(&mut self, key: &[u8]) {
        self.keys = 1;
        self.last = key.to_vec();
    }

    /// Distinct prefixes of length `q` (`q ≤ limit`).
    pub(crate) fn prefixes(&self, q: usize) -> u64 {
        1 + self.lcps[..q].iter().map(|&c| u64::from(c)).sum::<u64>()
    }

    /// The longest prefix length whose distinct prefixes were all kept.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Keeps only the keys that start a prefix of the longest length with
    /// fewer than [`MAX_RUN_VALUES`] distinct ones.
    fn lower_limit(&mut self) {
        while self.limit > 0 && self.prefixes(self.limit) >= MAX_RUN_VALUES as u64 {
            self.limit -= 1;
        }
        let limit = self.limit;
        self.starts.retain(|(lcp, _)| usize::from(*lcp) < limit);
        for (_, head) in &mut self.starts {
            head.truncate(limit);
        }
    }

    /// The run at `pos .. q` (`q ≤ limit`, every position before `pos`
    /// fixed) of keys whose smallest is `first`: its distinct segments.
    pub(crate) fn run(&self, first: &[u8], pos: usize, q: usize) -> Run {
        let mut run = Run::new(q - pos);
        let values = core::iter::once(first).chain(
            self.starts
                .iter()
                .filter(|(lcp, _)| usize::from(*lcp) < q)
                .map(|(_, h)| h.as_slice()),
        );
        for v in values {
            let pushed = run.push(segment(v, pos, q - pos));
            debug_assert!(pushed, "keys in order start distinct, increasing segments");
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use alloc::format;
    use alloc::string::String;

    /// The loads of short slices give what a zero-padded copy gives, at
    /// every length and for bytes that differ at every position.
    #[test]
    fn padded_reads_as_a_zero_padded_copy() {
        let bytes: [u8; 10] = [0x81, 2, 0xf3, 4, 0x05, 0xe6, 7, 0x98, 9, 10];
        for n in 0..=10 {
            for from in 0..=(10 - n) {
                let s = &bytes[from..from + n];
                let mut b = [0u8; 8];
                b[..n.min(8)].copy_from_slice(&s[..n.min(8)]);
                assert_eq!(padded(s), u64::from_be_bytes(b), "{s:?}");
            }
        }
    }

    #[test]
    fn ranks_segments_among_the_values() {
        let mut run = Run::new(2);
        for v in [&b""[..], b"a", b"a\x00", b"b7", b"c"] {
            assert!(run.push(v));
        }
        assert!(!run.push(b"c"), "not above the last");
        assert!(!run.push(b"zzz"), "longer than the span");
        assert_eq!(run.len(), 5);
        assert_eq!(run.rank(b"xxa", 2), (true, 1));
        assert_eq!(run.rank(b"xxa\x00\xff", 2), (true, 2));
        assert_eq!(run.rank(b"xx", 2), (true, 0));
        assert_eq!(run.rank(b"x", 2), (true, 0));
        assert_eq!(run.rank(b"xxb", 2), (false, 3));
        assert_eq!(run.rank(b"xxb8", 2), (false, 4));
        assert_eq!(run.rank(b"xxd", 2), (false, 5));
    }

    /// Runs of up to 8 bytes and longer ones rank alike, zero bytes and
    /// lengths included.
    #[test]
    fn short_and_long_runs_rank_as_the_bytes_sort() {
        let mut all: BTreeSet<Vec<u8>> = BTreeSet::new();
        all.insert(Vec::new());
        for len in 1..=3 {
            let shorter: Vec<Vec<u8>> = all.iter().filter(|s| s.len() == len - 1).cloned().collect();
            for s in shorter {
                for b in [0u8, 1, 0x7f, 0xff] {
                    all.insert([&s[..], &[b]].concat());
                }
            }
        }
        all.insert(alloc::vec![0xff; 8]);
        all.insert(alloc::vec![0; 8]);
        let (mut short, mut long) = (Run::new(8), Run::new(9));
        for v in all.iter().step_by(2) {
            assert!(short.push(v) && long.push(v), "{v:?}");
        }
        assert!(!short.push(b"\x00") && !long.push(b"\x00"), "not above the last");
        assert!(!short.push(&[0xff; 9]), "longer than the span");
        for q in &all {
            let key = [&b"xy"[..], q].concat();
            let below = all.iter().step_by(2).filter(|v| *v < q).count() as u64;
            let held = all.iter().step_by(2).any(|v| v == q);
            assert_eq!(short.rank(&key, 2), (held, below), "{q:?}");
            assert_eq!(long.rank(&key, 2), (held, below), "{q:?}");
        }
        let (mut back, mut back_long) = (Vec::new(), Vec::new());
        short.for_each_value(|v| back.push(v.to_vec()));
        long.for_each_value(|v| back_long.push(v.to_vec()));
        assert!(back.iter().eq(all.iter().step_by(2)));
        assert_eq!(back, back_long);
    }

    /// The prefixes counted and the values kept are those of a set of the
    /// keys' prefixes, for every length up to the limit.
    #[test]
    fn counts_and_keeps_every_prefix_below_the_limit() {
        let keys: Vec<String> = (0..20_000u64)
            .map(|i| format!("head/{:03}/{:05}", (i * 7919) % 600, i))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut heads = Heads::default();
        for k in &keys {
            heads.add(k.as_bytes());
            heads.add(k.as_bytes());
        }
        assert!(heads.in_order);
        assert_eq!(heads.keys, keys.len() as u64);
        // 600 groups fit; 20,000 keys do not: the limit falls below their end.
        assert!(heads.limit() >= 9 && heads.limit() < 15, "{}", heads.limit());
        for q in 0..=heads.limit() {
            let model: BTreeSet<&[u8]> = keys.iter().map(|k| &k.as_bytes()[..q.min(k.len())]).collect();
            assert_eq!(heads.prefixes(q), model.len() as u64, "q = {q}");
            let run = heads.run(keys[0].as_bytes(), 0, q);
            let mut values = Vec::new();
            run.for_each_value(|v| values.push(v.to_vec()));
            assert!(
                values.iter().map(Vec::as_slice).eq(model.iter().copied()),
                "q = {q}"
            );
        }
        let mut late = heads.clone();
        late.add(b"a");
        assert!(!late.in_order);
    }
}
