//! [`InfixRange`]: a static range filter over byte-string keys of any
//! length, whose resolution follows the keys: "may any key lie between
//! these two byte strings?"
//!
//! # The design
//!
//! The sorted keys are cut into *groups* of up to 256 consecutive keys,
//! where the keys' own prefixes part (`build.rs` has the rule: a group's
//! infix must reach the bytes that tell its keys apart). Every key of a
//! group shares the bytes its first and last keys share; what tells the
//! group's keys apart starts at the first position where those two differ.
//! A key's *infix* is what it has from there on, read as a fraction of the
//! group's key space and scaled to `C` cells (about `m·2^b` for a group of
//! `m` keys, `b` what the sizing buys): the group's keys spread over cells
//! of the width their own spread sets. So the resolution is local: a group
//! of keys one microsecond apart gets cells of nanoseconds, a group spread
//! over days gets cells of seconds, and a key of 300 bytes costs what its
//! group needs, never a 64-bit truncation of the whole key. Each key's
//! value `g·C + infix` is kept in one [Elias–Fano code](crate::succinct)
//! (values in order, since groups and infixes are), about `2 + b` bits a
//! key, and each group's *head* (its first key's bytes as far as it
//! differs from the previous group's last, and from its own last) is kept
//! for finding a bound's group.
//!
//! This is Diva's idea (Eslami, Dayan et al., "Diva: Dynamic Range Filter
//! for Var-Length Keys and Queries", VLDB 2025: sampled keys, and the keys
//! between two samples compressed to an infix past their longest common
//! prefix), static, with the infixes of all groups in one Elias–Fano code
//! and read through per-position alphabets as [`KeyMap`](super::KeyMap)
//! reads them (HOPE, Zhang et al., SIGMOD 2020): a position holding only
//! lowercase letters costs `log2 27` bits of the infix, not 8, and
//! positions where every key has the same byte cost nothing.
//!
//! # A bound, and why there is no false negative
//!
//! A bound `q` is located among the heads (a binary search), compared with
//! the bytes its group's keys share (below them: before every key of the
//! group; above: after), then read digit by digit from the group's first
//! varying position, each digit the rank of `q`'s symbol (its byte plus
//! one, or the *end* symbol past its end, which sorts below every byte, so
//! symbol order is `memcmp` order) in that position's alphabet. Digits are
//! read until their radices' product `P` reaches `C`; the infix is
//! `⌊N·C/P⌋` for the digits' mixed-radix number `N`. Where `q` leaves
//! the keys' digits (a symbol no key has there, a byte other than a fixed
//! position's), `N` is the least digit string above `q` for the lower
//! bound and the one just below for the upper. Reading fewer digits and
//! scaling both keep order (`k ≤ q` gives `N(k) ≤ N(q)`), so every key in
//! `lo..=hi` has its value in the interval the code is asked about: no
//! false negative for any bounds, open, excluded or included, and keys of
//! any length, including keys that are prefixes of others.
//!
//! # False positives
//!
//! An empty range is let through only when a key's cell is one of the
//! cells its bounds fall in: a range inside a gap is ruled out whatever its
//! width (the code answers "any value in `a..=b`?" exactly, in one
//! successor query), and one whose bound shares a cell with a key passes.
//! A group's cells hold `m` keys in `C`, so a bound that falls at a random
//! place among a group's keys shares a key's cell with probability about
//! `m/C` ([`expected_fpr`](InfixRange::expected_fpr)). That is a
//! rate for ranges whose bounds fall where keys fall, not a bound for
//! every query (Diva's relaxed guarantee): a range that starts right after
//! a key shares that key's cell and always passes, where
//! [`GrafiteRange`](super::GrafiteRange) keeps every key's low bits exactly
//! and promises its bound for any query. [`KeyRangeFilter`](super::KeyRangeFilter)
//! is that filter for byte keys whose differences fit 64 bits.
//!
//! # Bytes
//!
//! [`to_bytes`](InfixRange::to_bytes) writes the layout in
//! `docs/format.md` ("Infix range filters"), checksummed; [`from_bytes`](InfixRange::from_bytes)
//! checks everything a query relies on and never panics.
//!
//! ```
//! use std::ops::Bound::{Excluded, Included};
//! use amq::range::{InfixRange, RangeSizing};
//!
//! // Tenant, then an e-mail address of any length.
//! let key = |t: u64, n: u64| format!("{t:04}/user{n:06}@example.com");
//! let keys: Vec<String> = (0..20_000u64).map(|i| key(i % 50, i)).collect();
//! let f = InfixRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
//! assert!(f.bits_per_key() <= 16.0);
//! assert!(keys.iter().all(|k| f.may_contain(k.as_bytes())));
//! // Ranges inside a tenant's gaps: the users numbered 10 to 40 past one
//! // of its own (a tenant's users are 50 apart).
//! let passed = (0..20_000u64 - 50)
//!     .filter(|&i| {
//!         let (lo, hi) = (format!("{:04}/user{:06}", i % 50, i + 10), format!("{:04}/user{:06}", i % 50, i + 40));
//!         f.may_contain_range(Included(lo.as_bytes()), Excluded(hi.as_bytes()))
//!     })
//!     .count();
//! assert!(passed < 20_000 / 100, "{passed}");
//! let back = InfixRange::from_bytes(&f.to_bytes())?;
//! assert_eq!(back, f);
//! # Ok::<(), amq::Error>(())
//! ```

use alloc::vec::Vec;
use core::cmp::Ordering;
use core::ops::Bound;

use super::keymap::{compare_segment, padded, symbol, Digit};
use crate::succinct::EfCore;

mod build;
mod codec;

pub use build::GROUP_KEYS;

/// Bytes of a key or bound the filter reads: a key is cut here, which
/// keeps the order (a cut key is at most the key), so two keys that share
/// these bytes share a value.
pub const MAX_KEY_BYTES: usize = 1 << 15;

/// The most cells a group's infixes may have: a digit string's number
/// times the cells stays within `u128` (the digits' product stays below
/// the cells times 257).
const MAX_CELLS: u64 = 1 << 48;

/// A group of consecutive keys: where its head ends in the heads' bytes,
/// its first varying digit, and how many of that digit's values its keys
/// span, less one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    head_end: u32,
    digit: u16,
    span: u16,
}

/// A range filter over byte-string keys of any length, with a resolution
/// that follows the keys (see the [module docs](self)).
///
/// ```
/// use std::ops::Bound::{Included, Unbounded};
/// use amq::range::{InfixRange, RangeSizing};
/// let keys = [&b"apple"[..], b"apricot", b"banana", b"blueberry", b"cherry"];
/// // A few keys: sized by their FPR (bits per key would be mostly heads).
/// let f = InfixRange::build(&keys, RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
/// assert!(f.may_contain_range(Included(&b"b"[..]), Included(&b"bb"[..])));
/// assert!(!f.may_contain_range(Included(&b"d"[..]), Unbounded)); // past the last key
/// assert!(!f.may_contain_range(Unbounded, Included(&b"a"[..]))); // before the first
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfixRange {
    /// Distinct keys (after cutting at [`MAX_KEY_BYTES`]).
    num_keys: u64,
    /// The smallest key's bytes, as far as a query compares them: every
    /// key's byte at a position no key varies at is this key's.
    first: Vec<u8>,
    /// How many leading bytes every key shares (`first`'s).
    shared: usize,
    /// The varying positions from `shared` on, as far as a group's infix
    /// reaches (`complete`: to the last position any key varies at).
    digits: Vec<Digit>,
    complete: bool,
    /// `log2` of the keys per group.
    group_log2: u32,
    /// `C`: each group's infixes are below it.
    cells: u64,
    /// The groups' heads past `shared`, one after another.
    heads: Vec<u8>,
    groups: Vec<Group>,
    /// Every value `g·C + infix`, below `groups·C`.
    ef: EfCore<Vec<u64>>,
    /// The first eight bytes of every [`TOP_STRIDE`]-th head, big-endian
    /// (derived, not stored): a bound's group is searched among them
    /// first, in one cache line or a few.
    tops: Vec<u64>,
}

/// Heads between two of [`InfixRange::tops`].
const TOP_STRIDE: usize = 8;

/// The first eight bytes of `s`, zero-padded, as a number that sorts as
/// they do: `a ≤ b` gives `top(a) ≤ top(b)`.
#[inline(always)]
fn top(s: &[u8]) -> u64 {
    padded(s)
}

/// `a` against `b` as byte strings, the first eight bytes compared as one
/// number (heads and the bounds' bytes past them are most often short).
#[inline(always)]
fn compare(a: &[u8], b: &[u8]) -> Ordering {
    match top(a).cmp(&top(b)) {
        // Equal tops and both within eight bytes: one pads to the other
        // with zeros, and the shorter sorts first.
        Ordering::Equal if a.len() <= 8 && b.len() <= 8 => a.len().cmp(&b.len()),
        Ordering::Equal => a.cmp(b),
        decided => decided,
    }
}

/// `key` against `first` over positions `from..to` (see
/// [`compare_segment`]), without a call for an empty segment.
#[inline(always)]
fn compare_at(key: &[u8], first: &[u8], from: usize, to: usize) -> Ordering {
    if from >= to {
        return Ordering::Equal;
    }
    fn cut(k: &[u8], from: usize, to: usize) -> &[u8] {
        let end = k.len().min(to);
        &k[from.min(end)..end]
    }
    compare(cut(key, from, to), cut(first, from, to))
}

/// A bound's place among the values: the least value a key at or above it
/// can have, and one past the greatest a key at or below it can have;
/// `whole` when the bound was read to its end and no other byte string
/// has its value (an excluded bound then excludes the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    lower: u64,
    upper_end: u64,
    whole: bool,
}

impl Place {
    /// A bound between values: keys at or above it from `lower` on, keys at
    /// or below it before `upper_end`.
    fn between(lower: u64, upper_end: u64) -> Place {
        Place {
            lower,
            upper_end,
            whole: false,
        }
    }
}

impl InfixRange {
    /// Whether some key may lie in the range `lo..hi` (`Bound`s as in
    /// [`BTreeMap::range`](alloc::collections::BTreeMap::range); a range
    /// whose start is past its end is empty and answers `false`). `false`
    /// is definite; see the [module docs](self) for how often `true` is
    /// wrong.
    ///
    /// ```
    /// use std::ops::Bound::{Excluded, Included, Unbounded};
    /// use amq::range::{InfixRange, RangeSizing};
    /// let keys: Vec<String> = (0..1_000u32).map(|i| format!("user:{:06}", i * 10)).collect();
    /// let f = InfixRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
    /// assert!(f.may_contain_range(Included(&b"user:000095"[..]), Included(&b"user:000100"[..])));
    /// assert!(f.may_contain_range(Unbounded, Unbounded));
    /// assert!(!f.may_contain_range(Excluded(&b"user:009990"[..]), Unbounded));
    /// assert!(!f.may_contain_range(Included(&b"user:5"[..]), Included(&b"user:4"[..])));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn may_contain_range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
        self.prepare_range(lo, hi)
            .is_some_and(|values| self.may_contain_values(values))
    }

    /// The first half of [`may_contain_range`](Self::may_contain_range),
    /// for asking many filters at once (every table a scan meets): the
    /// values the range's keys can have, `None` when the bounds alone rule
    /// it out, with the first words the answer reads already on their way
    /// to the cache. [`may_contain_values`](Self::may_contain_values) is
    /// the second half.
    ///
    /// ```
    /// use std::ops::Bound::Included;
    /// use amq::range::{InfixRange, RangeSizing};
    /// let f = InfixRange::build(&[b"a1", b"a5", b"b3"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
    /// let values = f.prepare_range(Included(&b"a2"[..]), Included(&b"a6"[..])).unwrap();
    /// assert!(f.may_contain_values(values));
    /// assert_eq!(f.prepare_range(Included(&b"c"[..]), Included(&b"d"[..])), None);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline]
    pub fn prepare_range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<(u64, u64)> {
        if self.num_keys == 0 {
            return None;
        }
        let (start, near) = match lo {
            Bound::Included(k) => {
                let (p, g) = self.place(k, None);
                (p.lower, g)
            }
            Bound::Excluded(k) => {
                let (p, g) = self.place(k, None);
                (p.lower + u64::from(p.whole), g)
            }
            Bound::Unbounded => (0, None),
        };
        let end = match hi {
            // A short range's bounds most often fall in one group.
            Bound::Included(k) => self.place(k, near).0.upper_end,
            Bound::Excluded(k) => {
                let p = self.place(k, near).0;
                p.upper_end - u64::from(p.whole)
            }
            Bound::Unbounded => self.universe(),
        };
        if start >= end {
            return None;
        }
        self.ef.prefetch_bucket(start >> self.ef.layout.low_bits);
        Some((start, end - 1))
    }

    /// Whether a key's value lies in `values` (both ends included), as
    /// [`prepare_range`](Self::prepare_range) gave them.
    #[inline]
    pub fn may_contain_values(&self, (first, last): (u64, u64)) -> bool {
        self.ef.contains_in(first, last)
    }

    /// Whether `key` may be one of the keys.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let f = InfixRange::build(&[b"a1", b"a3"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
    /// assert!(f.may_contain(b"a1") && !f.may_contain(b"a2") && !f.may_contain(b"b"));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_range(Bound::Included(key), Bound::Included(key))
    }

    /// Distinct keys it was built from.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let f = InfixRange::build(&[b"a", b"b", b"a"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
    /// assert_eq!(f.num_keys(), 2);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// Bytes of [`to_bytes`](Self::to_bytes): everything, heads and
    /// alphabets included.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let f = InfixRange::build(&[b"a", b"b"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
    /// assert_eq!(f.size_in_bytes(), f.to_bytes().len());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn size_in_bytes(&self) -> usize {
        codec::encoded_len(self)
    }

    /// [`size_in_bytes`](Self::size_in_bytes) in bits per distinct key (0
    /// for no keys).
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let keys: Vec<u64> = (0..10_000u64).map(|i| i * 7_919).collect();
    /// let keys: Vec<[u8; 8]> = keys.iter().map(|k| k.to_be_bytes()).collect();
    /// let f = InfixRange::build(&keys, RangeSizing::BitsPerKey(12.0))?;
    /// assert!(f.bits_per_key() <= 12.0 && f.bits_per_key() > 10.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn bits_per_key(&self) -> f64 {
        match self.num_keys {
            0 => 0.0,
            n => self.size_in_bytes() as f64 * 8.0 / n as f64,
        }
    }

    /// The share of the groups' cells that hold a key (`values / (groups ·
    /// C)`): about how often a range whose bounds fall at random places
    /// among the keys (not right after a key) is let through while empty;
    /// up to twice that for a range whose two bounds fall in different
    /// cells. Bounds drawn near keys (Diva's benchmark draws each from two
    /// neighbours' shared prefix) pass more often.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let keys: Vec<[u8; 8]> = (0..10_000u64).map(|i| (i * 7_919).to_be_bytes()).collect();
    /// let f = InfixRange::build(&keys, RangeSizing::BitsPerKey(16.0))?;
    /// assert!(f.expected_fpr() < 1.0 / 4_000.0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expected_fpr(&self) -> f64 {
        self.ef.len() as f64 / self.universe().max(1) as f64
    }

    /// Every value is below this: `groups · C`.
    fn universe(&self) -> u64 {
        self.groups.len() as u64 * self.cells
    }

    /// Group `g`'s head: its first key's bytes past `shared`, as far as they
    /// tell it from the previous group's last key and reach its first
    /// varying digit.
    #[inline]
    fn head(&self, g: usize) -> &[u8] {
        let start = match g {
            0 => 0,
            _ => self.groups[g - 1].head_end as usize,
        };
        &self.heads[start..self.groups[g].head_end as usize]
    }

    /// Where `bound` falls among the values (see [`Place`]), and its group
    /// if it has one; `near` is a group to try first.
    fn place(&self, bound: &[u8], near: Option<usize>) -> (Place, Option<usize>) {
        let q = &bound[..bound.len().min(MAX_KEY_BYTES)];
        let all = self.universe();
        match compare_at(q, &self.first, 0, self.shared) {
            Ordering::Less => return (Place::between(0, 0), None),
            Ordering::Greater => return (Place::between(all, all), None),
            Ordering::Equal => {}
        }
        // `q` has the shared bytes: its group is the last whose head is at
        // most the rest of it.
        let rest = &q[self.shared.min(q.len())..];
        match self.heads_at_most(rest, near) {
            0 => (Place::between(0, 0), None),
            g => (self.place_in(q, rest, g - 1), Some(g - 1)),
        }
    }

    /// How many heads are at most `rest`: group `near`'s bound if its head
    /// is and the next one's is not, else a search of the tops, then of the
    /// heads between the two tops that bracket `rest`.
    #[inline]
    fn heads_at_most(&self, rest: &[u8], near: Option<usize>) -> usize {
        let n = self.groups.len();
        if let Some(g) = near {
            let after = |h: &[u8]| compare(h, rest) == Ordering::Greater;
            if !after(self.head(g)) && (g + 1 == n || after(self.head(g + 1))) {
                return g + 1;
            }
        }
        let t = top(rest);
        // Tops below `t` are heads below `rest`; tops above, heads above.
        let below = self.tops.partition_point(|&x| x < t);
        let not_above = below + self.tops[below..].partition_point(|&x| x == t);
        let from = below.saturating_sub(1) * TOP_STRIDE;
        let to = (not_above * TOP_STRIDE).min(n);
        from + partition_point(to - from, |i| {
            compare(self.head(from + i), rest) != Ordering::Greater
        })
    }

    /// The tops of the heads ([`InfixRange::tops`]).
    fn index_heads(&mut self) {
        self.tops = (0..self.groups.len())
            .step_by(TOP_STRIDE)
            .map(|g| top(self.head(g)))
            .collect();
    }

    /// Where `q` (which has the shared bytes, followed by `rest`, at least
    /// group `g`'s head) falls: before group `g`'s keys, after them, or
    /// among them at the infix its digits give.
    #[inline]
    fn place_in(&self, q: &[u8], rest: &[u8], g: usize) -> Place {
        let unit = self.cells;
        let base = g as u64 * unit;
        let below = Place::between(base, base);
        let above = Place::between(base + unit, base + unit);
        let group = self.groups[g];
        let Some(first_digit) = self.digits.get(usize::from(group.digit)) else {
            // No position varies (a single key): `q` against it.
            return match compare_segment(q, &self.first, self.shared, usize::MAX) {
                Ordering::Less => below,
                Ordering::Greater => above,
                Ordering::Equal => Place {
                    lower: base,
                    upper_end: base + 1,
                    whole: true,
                },
            };
        };
        let head = self.head(g);
        let pos = first_digit.pos;
        // The bytes the group's keys share: the head's up to the digit.
        match compare_at(rest, head, 0, pos - self.shared) {
            Ordering::Less => return below,
            Ordering::Greater => return above,
            Ordering::Equal => {}
        }
        // The first digit, relative to the group's lowest value there.
        let lowest = first_digit.rank(symbol(head, pos - self.shared)).1;
        let radix = u64::from(group.span) + 1;
        let (present, r) = first_digit.rank_of(q);
        if r < lowest {
            return below;
        }
        let v = r - lowest;
        if v >= radix {
            return above;
        }
        let mut walk = Digits {
            acc: u128::from(v),
            p: u128::from(radix),
            off: !present,
        };
        let mut at = first_digit.end();
        for d in &self.digits[usize::from(group.digit) + 1..] {
            if walk.p >= u128::from(unit) {
                break;
            }
            if !walk.off {
                match compare_at(q, &self.first, at, d.pos) {
                    Ordering::Equal => {
                        let (present, r) = d.rank_of(q);
                        walk.push(d.radix, r);
                        walk.off = !present;
                        at = d.end();
                        continue;
                    }
                    Ordering::Less => walk.off = true,
                    Ordering::Greater => {
                        walk.acc += 1;
                        walk.off = true;
                    }
                }
            }
            // Past where `q` left the keys' digits: the least string above
            // it has the smallest digit everywhere.
            walk.push(d.radix, 0);
        }
        let mut whole = false;
        if !walk.off && walk.p < u128::from(unit) && self.complete {
            // Every digit matched and none is left: the rest is fixed.
            // Equal, `q` is a key's every symbol: the scaling is one to
            // one below `unit`, so no other string has its value.
            match compare_segment(q, &self.first, at, usize::MAX) {
                Ordering::Equal => whole = true,
                Ordering::Less => walk.off = true,
                Ordering::Greater => {
                    walk.acc += 1;
                    walk.off = true;
                }
            }
        }
        let scale = |n: u128| (n * u128::from(unit) / walk.p) as u64;
        match walk.off {
            // `acc` is the least digit string above `q`; the greatest below
            // it is one less.
            true => Place::between(
                base + scale(walk.acc),
                match walk.acc {
                    0 => base,
                    a => base + scale(a - 1) + 1,
                },
            ),
            false => {
                let c = base + scale(walk.acc);
                Place {
                    lower: c,
                    upper_end: c + 1,
                    whole,
                }
            }
        }
    }
}

/// A group's digits read so far: their mixed-radix number, the product of
/// their radices, and whether the bound has left the keys' digits (then
/// `acc` is the least digit string above it).
struct Digits {
    acc: u128,
    p: u128,
    off: bool,
}

impl Digits {
    #[inline(always)]
    fn push(&mut self, radix: u64, digit: u64) {
        self.acc = self.acc * u128::from(radix) + u128::from(digit);
        self.p *= u128::from(radix);
    }
}

/// The first of `0..n` for which `pred` is false (`pred` true then false).
#[inline]
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut len) = (0, n);
    while len > 0 {
        let half = len / 2;
        if pred(lo + half) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    lo
}

#[cfg(test)]
mod tests;
