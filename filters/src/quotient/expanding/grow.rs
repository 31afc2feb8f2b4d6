//! The entry streams behind expansion and merge: a table's entries as they
//! go into a table of twice the quotients, or into wider slots, in order.
//!
//! A value is a fingerprint code (`fingerprint.rs`) over `payload` low bits
//! that ride along unchanged: none for the expanding quotient filter, the
//! memento (a key's low bits) for the Memento range filter
//! (`range/memento/`).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::iter::Peekable;

use super::fingerprint;
use crate::quotient::table::{Entries, Table};
use crate::succinct::bits::low_mask;
use crate::Error;

/// The entries of a table after one expansion into `width`-bit slots, in
/// order: quotient `x`'s run becomes runs `2x` and `2x + 1` by each
/// fingerprint's first bit, a void entry goes to both, and each new run is
/// sorted (a void lands among values it did not precede before), with one
/// void at most (a void says "some key with this quotient": more say
/// nothing more, and copies of a key repeated `k` times would otherwise
/// double `k` slots at every expansion).
pub(crate) struct Expand<'a> {
    entries: Peekable<Entries<'a>>,
    /// Payload bits under each code.
    payload: u32,
    /// Code bits before and after.
    width: u32,
    new_width: u32,
    /// The next two runs, sorted, and how many of them were handed out.
    out: Vec<(usize, u64)>,
    taken: usize,
    /// Void entries handed out so far.
    pub(crate) voids: u64,
}

impl<'a> Expand<'a> {
    /// The expansion of `table` into `new_width`-bit slots, each value a
    /// code over `payload` bits.
    pub(crate) fn new(table: &'a Table, payload: u32, new_width: u32) -> Self {
        Expand {
            entries: table.entries().peekable(),
            payload,
            width: table.width() - payload,
            new_width: new_width - payload,
            out: Vec::new(),
            taken: 0,
            voids: 0,
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
                    (Some(bit), code) => self.out.push((2 * x + bit as usize, code << p | rest)),
                    (None, code) => {
                        let v = code << p | rest;
                        self.out.push((2 * x, v));
                        self.out.push((2 * x + 1, v));
                    }
                }
            }
            self.out.sort_unstable();
            let void = |v: u64| v >> p == 1 << (self.new_width - 1);
            self.out.dedup_by(|a, b| a == b && void(a.1));
            self.voids += self.out.iter().filter(|e| void(e.1)).count() as u64;
        }
        self.taken += 1;
        Some(self.out[self.taken - 1])
    }
}

/// An ordered entry stream of `width`-bit values (codes over `payload`
/// bits) with repeated void entries of a quotient dropped (the merge of
/// two tables may hold two).
pub(crate) fn one_void_per_run(
    entries: impl Iterator<Item = (usize, u64)>,
    payload: u32,
    width: u32,
) -> impl Iterator<Item = (usize, u64)> {
    let void = 1u64 << (width - payload - 1);
    let mut last = None;
    entries.filter(move |&e| {
        let repeat = e.1 >> payload == void && last == Some(e);
        last = Some(e);
        !repeat
    })
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

/// `table` (codes over `payload` bits, `lengths` its entries by code
/// length) doubled into `width`-bit slots (see [`Expand`]), and the new
/// table's entries by length: length `L` becomes `L − 1`, and the voids are
/// counted as written. [`Error::Full`] if the runs pass the last slot.
pub(crate) fn doubled(
    table: &Table,
    payload: u32,
    width: u32,
    lengths: &[u64; 64],
) -> Result<(Table, Box<[u64; 64]>), Error> {
    let mut entries = Expand::new(table, payload, width);
    let empty = Table::with_quotients(2 * table.quotients() as u64, width)?;
    let doubled = Table::from_sorted_into(empty, &mut entries)?;
    let mut shorter = Box::new([0u64; 64]);
    shorter[0] = entries.voids;
    shorter[1..63].copy_from_slice(&lengths[2..64]);
    debug_assert_eq!(shorter.iter().sum::<u64>(), doubled.len() as u64);
    Ok((doubled, shorter))
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
