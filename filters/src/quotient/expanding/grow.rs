//! The entry streams behind expansion and merge: a table's entries as they
//! go into a table of twice the quotients, or into wider slots, in order.

use alloc::vec::Vec;
use core::iter::Peekable;

use super::fingerprint;
use crate::quotient::table::{Entries, Table};

/// The entries of a table after one expansion into `width`-bit slots, in
/// order: quotient `x`'s run becomes runs `2x` and `2x + 1` by each
/// fingerprint's first bit, a void entry goes to both, and each new run is
/// sorted (a void lands among values it did not precede before), with one
/// void at most (a void says "some key with this quotient": more say
/// nothing more, and copies of a key repeated `k` times would otherwise
/// double `k` slots at every expansion).
pub(crate) struct Expand<'a> {
    entries: Peekable<Entries<'a>>,
    width: u32,
    new_width: u32,
    /// The next two runs, sorted, and how many of them were handed out.
    out: Vec<(usize, u64)>,
    taken: usize,
    /// Void entries handed out so far.
    pub(crate) voids: u64,
}

impl<'a> Expand<'a> {
    pub(crate) fn new(table: &'a Table, new_width: u32) -> Self {
        Expand {
            entries: table.entries().peekable(),
            width: table.width(),
            new_width,
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
            while let Some((_, v)) = self.entries.next_if(|&(y, _)| y == x) {
                match fingerprint::split_top(v, self.width, self.new_width) {
                    (Some(bit), v) => self.out.push((2 * x + bit as usize, v)),
                    (None, v) => {
                        self.out.push((2 * x, v));
                        self.out.push((2 * x + 1, v));
                    }
                }
            }
            self.out.sort_unstable();
            let void = 1 << (self.new_width - 1);
            self.out.dedup_by(|a, b| a == b && a.1 == void);
            self.voids += self.out.iter().filter(|e| e.1 == void).count() as u64;
        }
        self.taken += 1;
        Some(self.out[self.taken - 1])
    }
}

/// An ordered entry stream of `width`-bit values with repeated void
/// entries of a quotient dropped (the merge of two tables may hold two).
pub(crate) fn one_void_per_run(
    entries: impl Iterator<Item = (usize, u64)>,
    width: u32,
) -> impl Iterator<Item = (usize, u64)> {
    let void = 1u64 << (width - 1);
    let mut last = None;
    entries.filter(move |&e| {
        let repeat = e.1 == void && last == Some(e);
        last = Some(e);
        !repeat
    })
}

/// A table's entries re-encoded in `width`-bit slots (`width` at least the
/// table's): the same fingerprints, in the same order.
pub(crate) fn widened(table: &Table, width: u32) -> impl Iterator<Item = (usize, u64)> + '_ {
    let shift = width - table.width();
    table.entries().map(move |(x, v)| (x, v << shift))
}
