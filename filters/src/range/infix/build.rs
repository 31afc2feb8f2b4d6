//! Building an [`InfixRange`]: the keys in order, the alphabet of every
//! position they vary at, the groups and their heads, the cells the
//! sizing buys, then every key's value.

use alloc::vec::Vec;

use super::{Group, InfixRange, MAX_CELLS, MAX_KEY_BYTES};
use crate::error::invalid;
use crate::range::keymap::{common_prefix, finish_digits, symbol, Alphabet, Digit, END};
use crate::range::RangeSizing;
use crate::succinct::{EfCore, Layout, DEFAULT_SAMPLE_LOG2};
use crate::Error;

/// Keys a group holds at most: a full group's entry and head cost about
/// 0.4 bits a key, and groups are cut smaller where the keys' prefixes
/// part, so they still follow the keys' density.
pub const GROUP_KEYS: usize = 1 << GROUP_LOG2;
const GROUP_LOG2: u32 = 8;

/// Bytes past the last digit that every key shares which the filter keeps
/// to compare a bound with (see [`Shape::into_filter`]).
const MAX_FIXED_TAIL: usize = 64;

/// A group's first digit when no position varies (one distinct key).
pub(super) const NO_DIGIT: u16 = u16::MAX;

/// The Elias–Fano code's bits per value beyond its low bits: one upper
/// bit per value, about one per bucket, and the select samples.
const EF_EXTRA_BITS: f64 = 2.3;

impl InfixRange {
    /// The filter of `keys` (any order, duplicates allowed; each cut at
    /// [`MAX_KEY_BYTES`]), sized by `sizing`:
    /// [`RangeSizing::BitsPerKey`] counts every byte
    /// ([`size_in_bytes`](Self::size_in_bytes)); [`RangeSizing::Fpr`] asks
    /// for cells of which that share hold a key
    /// ([`expected_fpr`](Self::expected_fpr); its range length is not
    /// used: a range inside a gap is ruled out whatever its length).
    /// [`Error::InvalidParameter`] for a sizing out of its domain or too
    /// small to leave the infixes a bit, [`Error::TooLarge`] if it cannot
    /// be allocated.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let keys: Vec<String> = (0..5_000u64).map(|i| format!("order/{:08x}", i * 2_654_435_761 % (1 << 32))).collect();
    /// let f = InfixRange::build(&keys, RangeSizing::Fpr { fpr: 0.001, max_range_len: 1 })?;
    /// assert!(f.expected_fpr() <= 0.001);
    /// assert!(InfixRange::build(&keys, RangeSizing::BitsPerKey(2.0)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build<K: AsRef<[u8]>>(keys: &[K], sizing: RangeSizing) -> Result<Self, Error> {
        let sizing = sizing.validate()?;
        let mut sorted: Vec<&[u8]> = keys.iter().map(|k| cut(k.as_ref())).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut f = Shape::of(&sorted, sizing);
        if sorted.is_empty() {
            return Ok(f.into_filter(1, EfCore::build(&[], 1, 0, DEFAULT_SAMPLE_LOG2)?));
        }
        // The cells the budget buys, then fewer while the whole is over
        // it (the code's exact size depends on how the infixes fall).
        let mut cells = f.cells_for(sizing)?;
        loop {
            f.fit_digits(cells);
            let sizes = f.sizes.clone();
            let filter = f
                .clone()
                .into_filter(cells, EfCore::build(&[], 1, 0, DEFAULT_SAMPLE_LOG2)?);
            let filter = filter.with_values(&sorted, &sizes)?;
            let over = match sizing {
                RangeSizing::BitsPerKey(b) => filter.bits_per_key() > b,
                _ => false,
            };
            if !over {
                return Ok(filter);
            }
            // About a twentieth of a bit a key less each time.
            let fewer = cells - cells / 32 - 1;
            if fewer < 2 {
                return Err(too_small());
            }
            cells = fewer;
        }
    }

    /// The filter with every key's value in its code.
    fn with_values(mut self, sorted: &[&[u8]], sizes: &[usize]) -> Result<Self, Error> {
        let mut values = Vec::with_capacity(sorted.len());
        let mut keys = sorted.iter();
        for (g, &size) in sizes.iter().enumerate() {
            for k in keys.by_ref().take(size) {
                let rest = &k[self.shared..];
                let place = self.place_in(k, rest, g);
                debug_assert_eq!(self.place(k, None), (place, Some(g)));
                debug_assert_eq!(place.lower + 1, place.upper_end, "a key falls on its own value");
                values.push(place.lower);
            }
        }
        values.dedup();
        let universe = self.universe();
        let low = Layout::best_low_bits(values.len() as u64, universe);
        self.ef = EfCore::build(&values, universe, low, DEFAULT_SAMPLE_LOG2)?;
        Ok(self)
    }
}

/// Where each group of `keys` (sorted, distinct) ends: groups of at most
/// [`GROUP_KEYS`] consecutive keys, each told apart by its infix. A
/// group's infix starts where its first and last keys part, and `reach(p)`
/// is where an infix starting at byte `p` ends (its cells used up); a
/// group is taken whole when every two neighbours in it part before that.
/// Otherwise the keys are cut where they part first (a trie node's
/// children: tenants, account ids), and neighbouring children are put
/// together while each one's keys part within an infix from that cut
/// (single keys, letters of a name); a child of at least 16 keys whose
/// keys part further on (an account id of 8 random bytes before its keys'
/// own bytes) is cut on its own. So a group rarely spends its infix on the bytes that tell two
/// clusters apart, and does not fall short of the bytes that tell its keys
/// apart.
fn group_ends(keys: &[&[u8]], reach: &dyn Fn(usize) -> usize) -> Vec<usize> {
    let lcp: Vec<usize> = keys.windows(2).map(|w| common_prefix(w[0], w[1])).collect();
    let mut ends = Vec::with_capacity(2 * keys.len() / GROUP_KEYS + 1);
    if !keys.is_empty() {
        part(&lcp, 0, keys.len(), 0, reach, &mut ends);
    }
    ends
}

/// A child whose keys part past an infix from its parent's cut is cut on
/// its own only with at least this many keys: a few keys sharing a cell
/// cost less than a group's head and entry.
const MIN_ALONE: usize = 16;

/// Cuts have no more levels than this; past it, groups of
/// [`GROUP_KEYS`] keys in order (keys that extend each other a byte at a
/// time would take one level a key).
const MAX_PART_DEPTH: usize = 64;

/// The groups of keys `i..j` (at least one), whose neighbours share `lcp`:
/// see [`group_ends`].
fn part(
    lcp: &[usize],
    i: usize,
    j: usize,
    depth: usize,
    reach: &dyn Fn(usize) -> usize,
    ends: &mut Vec<usize>,
) {
    let inside = &lcp[i..j - 1];
    let shortest = inside.iter().copied().min().unwrap_or(usize::MAX);
    let longest = inside.iter().copied().max().unwrap_or(0);
    if j - i == 1 || (j - i <= GROUP_KEYS && longest < reach(shortest)) {
        ends.push(j);
        return;
    }
    if depth >= MAX_PART_DEPTH {
        let mut at = i;
        while at < j {
            at = (at + GROUP_KEYS).min(j);
            ends.push(at);
        }
        return;
    }
    let far = reach(shortest);
    let mut group = i; // where the group being filled starts
    let mut child = i;
    let mut child_longest = 0; // how far the child's own keys share
    for t in i..j {
        // Child `child..=t` ends at `t` when `t` parts from `t + 1` at the
        // shortest prefix, or the range ends.
        if t + 1 < j && lcp[t] != shortest {
            child_longest = child_longest.max(lcp[t]);
            continue;
        }
        let end = t + 1;
        if end - child > GROUP_KEYS || (end - child >= MIN_ALONE && child_longest >= far) {
            // Its keys part past an infix from here: cut on its own.
            if group < child {
                ends.push(child);
            }
            part(lcp, child, end, depth + 1, reach, ends);
            group = end;
        } else if end - group > GROUP_KEYS {
            ends.push(child);
            group = child;
        }
        child = end;
        child_longest = 0;
    }
    if group < j {
        ends.push(j);
    }
}

/// A count of cells: `x` rounded, within `2..=MAX_CELLS`.
fn cells_of(x: f64) -> u64 {
    (libm::round(x) as u64).clamp(2, MAX_CELLS)
}

/// A key as the filter reads it: its first [`MAX_KEY_BYTES`] bytes.
pub(super) fn cut(key: &[u8]) -> &[u8] {
    &key[..key.len().min(MAX_KEY_BYTES)]
}

fn too_small() -> Error {
    invalid(
        "sizing",
        "too small for an infix filter: its heads and code need more bits per key",
    )
}

/// What the keys fix before the cells are chosen: the shared bytes, each
/// position's alphabet, the groups and their heads.
#[derive(Clone, Default)]
struct Shape {
    num_keys: u64,
    /// The smallest key (cut to what queries compare once the digits are
    /// chosen).
    first: Vec<u8>,
    shared: usize,
    /// The symbols at positions `shared..`, the end symbol included from
    /// the shortest key's length on.
    alphabets: Vec<Alphabet>,
    /// Each group's first varying position (`usize::MAX`: none) and the
    /// ranks its first and last keys have there.
    starts: Vec<(usize, u64, u64)>,
    /// Each group's keys.
    sizes: Vec<usize>,
    heads: Vec<u8>,
    head_ends: Vec<u32>,
    /// The digits chosen for a cell count, and whether they reach the last
    /// varying position.
    digits: Vec<Digit>,
    complete: bool,
}

impl Shape {
    fn of(keys: &[&[u8]], sizing: RangeSizing) -> Shape {
        let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else {
            return Shape::default();
        };
        let shared = common_prefix(first, last);
        let longest = keys.iter().map(|k| k.len()).max().unwrap_or(0);
        let shortest = keys.iter().map(|k| k.len()).min().unwrap_or(0);
        let mut alphabets = alloc::vec![Alphabet::default(); longest.saturating_sub(shared) + 1];
        for k in keys {
            for (a, &b) in alphabets.iter_mut().zip(&k[shared..]) {
                a.insert(usize::from(b) + 1);
            }
        }
        for (i, a) in alphabets.iter_mut().enumerate() {
            if shared + i >= shortest {
                a.insert(END);
            }
        }
        let mut layout = Shape {
            num_keys: keys.len() as u64,
            first: first.to_vec(),
            shared,
            alphabets,
            ..Shape::default()
        };
        // Where an infix from each byte ends, at about the cells a
        // full group gets at `sizing`.
        let low = match sizing {
            RangeSizing::BitsPerKey(b) => libm::fmax(b - EF_EXTRA_BITS - 1.5, 1.0),
            RangeSizing::Fpr { fpr, .. } => -libm::log2(fpr),
        };
        let cells = GROUP_KEYS as f64 * libm::exp2(low);
        let reach = |p: usize| {
            let mut product = 1.0;
            let mut q = p;
            while product < cells && q < layout.shared + layout.alphabets.len() {
                product *= layout.alphabet(q).len() as f64;
                q += 1;
            }
            q
        };
        let ends = group_ends(keys, &reach);
        let mut from = 0;
        for end in ends {
            let group = &keys[from..end];
            let (f, l) = (group[0], group[group.len() - 1]);
            let previous = from.checked_sub(1).map(|i| keys[i]);
            // Where the group's own keys part, or (one key) where it parts
            // from the previous group's last key, or the next group's first.
            let apart = previous.map(|p| common_prefix(p, f));
            let next = keys.get(end).map(|n| common_prefix(f, n));
            let start = match (f != l, apart) {
                (true, _) => Some(common_prefix(f, l)),
                (false, Some(a)) => Some(a),
                (false, None) => next,
            };
            let head_len = start.max(apart).map_or(shared, |p| (p + 1).min(f.len()));
            layout.heads.extend_from_slice(&f[shared..head_len]);
            layout.head_ends.push(layout.heads.len() as u32);
            layout.starts.push(match start {
                Some(p) => (p, layout.rank(p, f), layout.rank(p, l)),
                None => (usize::MAX, 0, 0),
            });
            layout.sizes.push(group.len());
            from = end;
        }
        layout
    }

    /// Position `pos`'s alphabet (`pos ≥ shared`).
    fn alphabet(&self, pos: usize) -> Alphabet {
        let i = (pos - self.shared).min(self.alphabets.len() - 1);
        self.alphabets[i]
    }

    /// The rank of `key`'s symbol at `pos` among those the keys have there.
    fn rank(&self, pos: usize, key: &[u8]) -> u64 {
        let mut d = Digit::new(pos, self.alphabet(pos), self.alphabet(pos).len(), 0);
        finish_digits(core::slice::from_mut(&mut d));
        d.rank(symbol(key, pos)).1
    }

    /// How much of the smallest key the filter keeps, and whether a query
    /// compares what follows the last digit with it. Past the digits, the
    /// smallest key is kept whole only when its rest is short: a query that
    /// reads every digit compares the rest (all keys have it), and without
    /// it takes the digits' value as its own, which is conservative.
    fn first_kept(&self) -> (usize, bool) {
        let digits_end = self.digits.last().map_or(self.shared, |d| d.pos + 1);
        match self.complete && self.first.len() <= digits_end + MAX_FIXED_TAIL {
            true => (self.first.len(), true),
            false => (digits_end.min(self.first.len()), false),
        }
    }

    /// Bits everything but the code takes, with the digits chosen.
    fn overhead_bits(&self) -> f64 {
        let fixed = super::codec::FIXED_BYTES + self.first_kept().0 + self.heads.len();
        let per_group = super::codec::GROUP_BYTES * self.starts.len();
        let digits: usize = self.digits.iter().map(super::codec::digit_len).sum();
        8.0 * (fixed + per_group + digits) as f64
    }

    /// The cells a sizing buys: a group's keys over about `2^low` times
    /// their number of cells, `low` what the bits per key leave for the
    /// code's low bits (at least one), or `1/fpr`.
    fn cells_for(&mut self, sizing: RangeSizing) -> Result<u64, Error> {
        let n = self.num_keys as f64;
        // Cells in proportion to a group's keys on average.
        let m = n / self.starts.len().max(1) as f64;
        let low = match sizing {
            RangeSizing::BitsPerKey(b) => {
                // The digits a first guess needs, counted in the overhead.
                self.fit_digits(cells_of(m * libm::exp2(libm::fmax(b - EF_EXTRA_BITS, 1.0))));
                let per_key = b - self.overhead_bits() / n - EF_EXTRA_BITS;
                if per_key < 1.0 {
                    return Err(too_small());
                }
                per_key
            }
            RangeSizing::Fpr { fpr, .. } => -libm::log2(fpr),
        };
        let most = crate::succinct::MAX_UNIVERSE / self.starts.len().max(1) as u64;
        Ok(cells_of(m * libm::exp2(low)).min(most))
    }

    /// The digits `cells` need: every varying position from `shared` to
    /// the last any group's infix reads (a group reads from its first
    /// varying position until the radices' product reaches the cells).
    fn fit_digits(&mut self, cells: u64) {
        let unit = u128::from(cells);
        let varying: Vec<usize> = (self.shared..self.shared + self.alphabets.len())
            .filter(|&p| self.alphabet(p).len() >= 2)
            .collect();
        // Each group's window: its first varying position and those after
        // it, until their radices reach the cells (or run out).
        let mut read = alloc::vec![false; varying.len()];
        for &(start, lo, hi) in &self.starts {
            let Ok(mut j) = varying.binary_search(&start) else {
                continue; // no varying position: a single key
            };
            read[j] = true;
            let mut product = u128::from(hi - lo + 1);
            while product < unit && j + 1 < varying.len() {
                j += 1;
                read[j] = true;
                product *= u128::from(self.alphabet(varying[j]).len());
            }
        }
        // A walk past the last varying position compares the rest with the
        // smallest key's, all keys' alike.
        self.complete = read.last().is_none_or(|&r| r);
        self.digits = varying
            .iter()
            .zip(&read)
            .filter(|(_, &r)| r)
            .map(|(&p, _)| {
                let a = self.alphabet(p);
                Digit::new(p, a, a.len(), a.len())
            })
            .collect();
        finish_digits(&mut self.digits);
    }

    /// The filter of this layout with `cells` cells a group, and the code
    /// `ef`.
    fn into_filter(self, cells: u64, ef: EfCore<alloc::vec::Vec<u64>>) -> InfixRange {
        let digit_of = |pos: usize| -> u16 {
            match pos {
                usize::MAX => NO_DIGIT,
                p => self.digits.partition_point(|d| d.pos < p) as u16,
            }
        };
        let groups = self
            .starts
            .iter()
            .zip(&self.head_ends)
            .map(|(&(start, lo, hi), &head_end)| Group {
                head_end,
                digit: digit_of(start),
                span: (hi - lo) as u16,
            })
            .collect();
        let (first_len, complete) = self.first_kept();
        let mut first = self.first;
        first.truncate(first_len);
        let mut f = InfixRange {
            num_keys: self.num_keys,
            first,
            shared: self.shared,
            digits: self.digits,
            complete,
            group_log2: GROUP_LOG2,
            cells,
            heads: self.heads,
            groups,
            ef,
            tops: Vec::new(),
        };
        f.index_heads();
        f
    }
}
