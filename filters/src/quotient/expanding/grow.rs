//! The entry streams behind expansion and merge: a table's entries as they
//! go into a table of twice the quotients, or into wider slots, in order,
//! and the copies of void entries they carry.
//!
//! A value is a fingerprint code (`fingerprint.rs`) over `payload` low bits
//! that ride along unchanged: none for the expanding quotient filter, the
//! memento (a key's low bits) for the Memento range filter
//! (`range/memento/`).
//!
//! **Void copies.** An entry whose fingerprint ran out (void) is copied into
//! both halves of its quotient at every expansion, since nothing tells which
//! half its key went to. Copies of a key inserted `k` times would so become
//! `k` voids in each half, doubling with the table, and a filter holding a
//! few keys many times would double at every insert. So a run holds one
//! void entry per payload, and the copies past the first are counted beside
//! the table ([`VoidCopies`]): a count never falls below the copies
//! inserted, and removals take the counted copies before the entry.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::iter::Peekable;

use super::fingerprint;
use crate::quotient::table::{Entries, Table};
use crate::succinct::bits::low_mask;
use crate::Error;

/// Copies of void entries past the one in the table: `(quotient, payload)`
/// to how many more copies that run's void entry with that payload stands
/// for (at least 1; absent means none).
pub(crate) type VoidCopies = BTreeMap<(usize, u64), u64>;

/// The entries of a table after one expansion into `width`-bit slots, in
/// order: quotient `x`'s run becomes runs `2x` and `2x + 1` by each
/// fingerprint's first bit, a void entry goes to both with its copies, and
/// each new run is sorted (a void lands among values it did not precede
/// before), with one void per payload: equal voids (a key's copies whose
/// last fingerprint bit went into the quotient) become one, the others
/// counted in [`copies`](Self::copies).
pub(crate) struct Expand<'a> {
    entries: Peekable<Entries<'a>>,
    /// The old table's void copies.
    old_copies: &'a VoidCopies,
    /// Payload bits under each code.
    payload: u32,
    /// Code bits before and after.
    width: u32,
    new_width: u32,
    /// The next two runs, sorted, each entry with the copies it stands
    /// for, and how many of them were handed out.
    out: Vec<(usize, u64, u64)>,
    taken: usize,
    /// Void entries handed out so far.
    pub(crate) voids: u64,
    /// The new table's void copies.
    pub(crate) copies: VoidCopies,
}

impl<'a> Expand<'a> {
    /// The expansion of `table` (void copies `copies`) into
    /// `new_width`-bit slots, each value a code over `payload` bits.
    pub(crate) fn new(table: &'a Table, copies: &'a VoidCopies, payload: u32, new_width: u32) -> Self {
        Expand {
            entries: table.entries().peekable(),
            old_copies: copies,
            payload,
            width: table.width() - payload,
            new_width: new_width - payload,
            out: Vec::new(),
            taken: 0,
            voids: 0,
            copies: VoidCopies::new(),
        }
    }
}

impl Iterator for Expand<'_> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        if self.taken == self.out.len() {
            self.out.clear();
            self.taken = 0;
            let (x, _) = *self.entries.peek()?;
            let p = self.payload;
            while let Some((_, v)) = self.entries.next_if(|&(y, _)| y == x) {
                let (code, rest) = (v >> p, v & low_mask(p));
                match fingerprint::split_top(code, self.width, self.new_width) {
                    (Some(bit), code) => self.out.push((2 * x + bit as usize, code << p | rest, 1)),
                    (None, code) => {
                        let v = code << p | rest;
                        let n = 1 + self.old_copies.get(&(x, rest)).copied().unwrap_or(0);
                        self.out.push((2 * x, v, n));
                        self.out.push((2 * x + 1, v, n));
                    }
                }
            }
            self.out.sort_unstable();
            let void = 1u64 << (self.new_width - 1);
            let low = low_mask(p);
            // Equal voids of one run become the first, their copies summed.
            self.out.dedup_by(|later, first| {
                let same = later.0 == first.0 && later.1 == first.1 && later.1 >> p == void;
                if same {
                    first.2 = first.2.saturating_add(later.2);
                }
                same
            });
            for &(y, v, n) in &self.out {
                if v >> p == void {
                    self.voids += 1;
                    if n > 1 {
                        self.copies.insert((y, v & low), n - 1);
                    }
                }
            }
        }
        self.taken += 1;
        let (x, v, _) = self.out[self.taken - 1];
        Some((x, v))
    }
}

/// An ordered entry stream of `width`-bit values (codes over `payload`
/// bits) with a void equal to the one before it dropped: the merge of two
/// tables may hold two in a run. Each drop is counted as a copy in
/// [`copies`](Self::copies), which starts as the sum of both tables'.
pub(crate) struct OneVoidPerRun<I> {
    entries: I,
    void: u64,
    payload: u32,
    last: Option<(usize, u64)>,
    pub(crate) copies: VoidCopies,
}

impl<I> OneVoidPerRun<I> {
    /// `entries` with repeated voids dropped, the copies of `a` and `b`
    /// (both keyed in the stream's quotients) added up.
    pub(crate) fn new(entries: I, payload: u32, width: u32, a: &VoidCopies, b: &VoidCopies) -> Self {
        let mut copies = a.clone();
        for (&k, &n) in b {
            let c = copies.entry(k).or_insert(0);
            *c = c.saturating_add(n);
        }
        OneVoidPerRun {
            entries,
            void: 1u64 << (width - payload - 1),
            payload,
            last: None,
            copies,
        }
    }
}

impl<I: Iterator<Item = (usize, u64)>> Iterator for OneVoidPerRun<I> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        loop {
            let e = self.entries.next()?;
            let repeat = e.1 >> self.payload == self.void && self.last == Some(e);
            self.last = Some(e);
            if !repeat {
                return Some(e);
            }
            let c = self
                .copies
                .entry((e.0, e.1 & low_mask(self.payload)))
                .or_insert(0);
            *c = c.saturating_add(1);
        }
    }
}

/// A table's entries re-encoded in `width`-bit slots (`width` at least the
/// table's): the same fingerprints over the same `payload` bits, in the
/// same order.
pub(crate) fn widened(table: &Table, payload: u32, width: u32) -> impl Iterator<Item = (usize, u64)> + '_ {
    let shift = width - table.width();
    let low = low_mask(payload);
    table
        .entries()
        .map(move |(x, v)| (x, (v & !low) << shift | v & low))
}

/// `table` (codes over `payload` bits, `copies` its void copies,
/// `lengths` its entries by code length) doubled into `width`-bit slots
/// (see [`Expand`]), and the new table's void copies and entries by length:
/// length `L` becomes `L − 1`, and the voids are counted as written.
/// [`Error::Full`] if the runs pass the last slot.
pub(crate) fn doubled(
    table: &Table,
    copies: &VoidCopies,
    payload: u32,
    width: u32,
    lengths: &[u64; 64],
) -> Result<(Table, VoidCopies, Box<[u64; 64]>), Error> {
    let mut entries = Expand::new(table, copies, payload, width);
    let empty = Table::with_quotients(2 * table.quotients() as u64, width)?;
    let doubled = Table::from_sorted_into(empty, &mut entries)?;
    let mut shorter = Box::new([0u64; 64]);
    shorter[0] = entries.voids;
    shorter[1..63].copy_from_slice(&lengths[2..64]);
    debug_assert_eq!(shorter.iter().sum::<u64>(), doubled.len() as u64);
    Ok((doubled, entries.copies, shorter))
}

/// `λ`: the entries an absent key is expected to match in a table of
/// `quotients` quotients whose entries by fingerprint length are
/// `lengths`, `Σ 2^−length / N`. The FPR of one probe is `1 − e^(−λ)`.
pub(crate) fn expected_matches(lengths: &[u64; 64], quotients: usize) -> f64 {
    let sum: f64 = lengths
        .iter()
        .enumerate()
        .map(|(l, &n)| n as f64 * libm::exp2(-(l as f64)))
        .sum();
    sum / quotients as f64
}

/// The entries of `table` (codes over `payload` bits) by fingerprint
/// length, or `None` if one has no delimiter or a run holds two equal void
/// entries (no filter makes either).
pub(crate) fn histogram(table: &Table, payload: u32) -> Option<Box<[u64; 64]>> {
    let mut lengths = Box::new([0u64; 64]);
    let width = table.width() - payload;
    let mut last = None;
    for e in table.entries() {
        let code = e.1 >> payload;
        if code == 0 || (fingerprint::is_void(code, width) && last == Some(e)) {
            return None;
        }
        lengths[fingerprint::length(code, width) as usize] += 1;
        last = Some(e);
    }
    Some(lengths)
}
