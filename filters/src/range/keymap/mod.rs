//! An order-preserving map of byte-string keys onto `u64`s, fitted to one
//! set of keys ([`KeyMap`]): it keeps the bits that tell those keys apart,
//! so a range filter over the `u64`s sees neighbouring keys as neighbouring
//! integers.
//!
//! # The map
//!
//! A key is read as a sequence of symbols, one per byte position, padded
//! past its end with an *end* symbol that sorts below every byte; comparing
//! two such sequences position by position is exactly the bytes' `memcmp`
//! order (a proper prefix sorts first). Over the key set the map was built
//! from, a position is *fixed* when every key has the same symbol there,
//! and *varying* otherwise. Each varying position `p` has an alphabet
//! `A_p`, the symbols that occur there, and a key's *digit* at `p` is the
//! rank of its symbol in `A_p`. The map reads the digits of the varying
//! positions, most significant first, as one mixed-radix number:
//! `Σ digit_j · W_j`, with radix `|A_j|` and weight `W_j = Π_{k>j} |A_k|`.
//! Fixed positions cost nothing, and a position holding only decimal digits
//! costs `log2 10 ≈ 3.32` bits, not 8: twenty varying decimal digits need
//! 66.4 bits, and the first 19 of them fit.
//!
//! Where the first varying positions vary together (a random 8-byte id with
//! a few hundred values, a tenant name), the map may read them as one
//! *run*: a digit whose values are the distinct contents of those positions,
//! in order, so they cost `log2(values)` bits, not each position's alphabet.
//! It is chosen when the keys come in order, the map would otherwise be
//! truncated, and it saves at least a bit (`run.rs` has the rule).
//!
//! Digits are taken while their radices' product stays within `2^64`. The
//! first that does not fit is kept *coarsened* to the radix `C` still
//! available (`digit · C / |A_j|`, rounded down, when `C ≥ 2`), and the map
//! stops there: it is then [*truncated*](KeyMap::is_exact), and keys that
//! differ only past that point share a `u64`. This is the only way two of
//! the keys it was built from can meet, and [`KeyMap::bits`] says how much
//! room there was.
//!
//! # Any key, including the ones it was not built from
//!
//! A query bound is any byte string. [`KeyMap::lower`] gives the least
//! `u64` of the built keys at or above it, [`KeyMap::upper`] the greatest at
//! or below it: walking the positions, the first fixed symbol it differs
//! from, or the first varying symbol outside the alphabet, decides where
//! the bound falls among the keys (a byte that no key has at a position
//! lands between its neighbours' ranks). So for a built key `k` and bounds
//! `lo ≤ k ≤ hi`, `lower(lo) ≤ map(k) ≤ upper(hi)` for every byte string:
//! a range filter built from the keys' `u64`s and asked about
//! `lower(lo)..=upper(hi)` has no false negatives. Both never decrease as
//! the bound grows. [`KeyMap::range`] does it for `Bound`s, and says
//! `None` when the map alone proves that no built key lies in the range
//! (a bound between two keys' prefixes that no key has, for example).
//!
//! This is the idea of order-preserving key compression (HOPE: Zhang et
//! al., "Order-Preserving Key Compression for In-Memory Search Trees",
//! SIGMOD 2020), in its simplest form: one fixed-length code per byte
//! position, chosen per key set, which is what a static range filter over
//! one table's keys needs.
//!
//! ```
//! use amq::range::{GrafiteRange, KeyMap, RangeFilter, RangeSizing};
//!
//! // Composite keys: tenant, then row, both decimal.
//! let keys: Vec<String> = (0..64u32)
//!     .flat_map(|t| (0..100u32).map(move |r| format!("t{t:06}:{:08}", r * 7)))
//!     .collect();
//! let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
//! assert!(map.is_exact() && map.bits() < 32.0); // 2 + 3 varying digits
//! let codes: Vec<u64> = keys.iter().map(|k| map.map(k.as_bytes())).collect();
//! assert!(codes.windows(2).all(|w| w[0] < w[1])); // in order, none shared
//! let f = GrafiteRange::build(&codes, RangeSizing::BitsPerKey(16.0))?;
//!
//! let ask = |lo: &str, hi: &str| match map.range_inclusive(lo.as_bytes(), hi.as_bytes()) {
//!     Some((a, b)) => f.may_contain_range(a, b),
//!     None => false, // the map alone rules the range out
//! };
//! assert!(ask("t000003:00000007", "t000003:00000007")); // a key
//! assert!(!ask("t000070:", "t000070;")); // a tenant past every digit seen
//! // A gap of six rows within a tenant: six integers for the filter.
//! let (a, b) = map.range_inclusive(b"t000005:00000015", b"t000005:00000020").unwrap();
//! assert_eq!(b - a, 5);
//! # Ok::<(), amq::Error>(())
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::ops::Bound;

use run::Run;

mod build;
mod codec;
mod run;

pub(crate) use build::finish_digits;
pub use build::KeyMapBuilder;
pub(crate) use run::padded;

/// The end-of-key symbol; byte `b` is symbol `b + 1`.
pub(crate) const END: usize = 0;

/// The symbol of `key` at `pos`: its byte plus one, or [`END`] past its end.
#[inline(always)]
pub(crate) fn symbol(key: &[u8], pos: usize) -> usize {
    key.get(pos).map_or(END, |&b| usize::from(b) + 1)
}

/// A set of the 257 symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Alphabet(pub(crate) [u64; 5]);

impl Alphabet {
    #[inline(always)]
    pub(crate) fn insert(&mut self, s: usize) {
        self.0[s / 64] |= 1 << (s % 64);
    }
    pub(crate) fn len(&self) -> u64 {
        self.0.iter().map(|x| u64::from(x.count_ones())).sum()
    }
}

/// One digit of the map: a varying position, or a run of positions read
/// together (`run.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Digit {
    /// The byte position (a run's first).
    pub(crate) pos: usize,
    /// A run's values, in place of the alphabet.
    pub(crate) run: Option<Box<Run>>,
    /// `|alphabet|`, or the run's number of values.
    pub(crate) radix: u64,
    /// The radix the digit is written in: `radix`, or fewer for the last
    /// digit of a truncated map (at least 2).
    pub(crate) out: u64,
    /// `Π out` of the digits after this one.
    pub(crate) weight: u64,
    /// The smallest symbol, and whether the alphabet is every symbol from
    /// it to the largest (decimal digits, every byte): a rank is then a
    /// subtraction.
    pub(crate) first_symbol: u16,
    pub(crate) contiguous: bool,
    /// The symbols in the alphabet's words before each word: a rank is
    /// then one popcount.
    pub(crate) before: [u16; 5],
    /// The symbols the keys have there (at least two); empty for a run.
    /// Last: a query of a contiguous alphabet or a run reads only the
    /// fields above, one cache line.
    pub(crate) alphabet: Alphabet,
}

impl Digit {
    /// A digit of `alphabet` at `pos` written in radix `out` (its weight and
    /// ranks filled in by [`build::finish_digits`]).
    pub(crate) fn new(pos: usize, alphabet: Alphabet, radix: u64, out: u64) -> Digit {
        Digit {
            pos,
            alphabet,
            run: None,
            radix,
            out,
            weight: 0,
            before: [0; 5],
            first_symbol: 0,
            contiguous: false,
        }
    }

    /// A digit of the run `run` at `pos` (at least two values) written in
    /// radix `out`.
    pub(crate) fn of_run(pos: usize, run: Run, out: u64) -> Digit {
        let radix = run.len() as u64;
        let mut d = Digit::new(pos, Alphabet::default(), radix, out);
        d.run = Some(Box::new(run));
        d
    }

    /// The position after the digit's last.
    #[inline(always)]
    pub(crate) fn end(&self) -> usize {
        self.pos + self.run.as_ref().map_or(1, |r| r.span)
    }

    /// Whether `key`'s symbol (or segment, for a run) is one of the digit's
    /// values, and how many of them are below it.
    #[inline(always)]
    pub(crate) fn rank_of(&self, key: &[u8]) -> (bool, u64) {
        match &self.run {
            None => self.rank(symbol(key, self.pos)),
            Some(run) => run.rank(key, self.pos),
        }
    }

    /// Whether symbol `s` is in the alphabet, and how many of its symbols
    /// are below `s`.
    #[inline(always)]
    pub(crate) fn rank(&self, s: usize) -> (bool, u64) {
        if self.contiguous {
            let r = (s as u64).saturating_sub(u64::from(self.first_symbol));
            return (
                r < self.radix && s as u64 >= u64::from(self.first_symbol),
                r.min(self.radix),
            );
        }
        let (w, b) = (s / 64, s % 64);
        let word = self.alphabet.0[w];
        let below = u64::from(self.before[w]) + u64::from((word & ((1u64 << b) - 1)).count_ones());
        (word >> b & 1 != 0, below)
    }

    /// Digit `d` (`0..=radix`) in the output radix: `d · out / radix`,
    /// which is `out` for `d = radix` (one past the last symbol).
    #[inline(always)]
    fn scale(&self, d: u64) -> u64 {
        if self.out == self.radix {
            d
        } else {
            (u128::from(d) * u128::from(self.out) / u128::from(self.radix)) as u64
        }
    }
}

/// An order-preserving map of byte-string keys onto `u64`s, fitted to a set
/// of keys: see the [module docs](self) for how it works and why it never
/// causes a false negative. Build it with [`KeyMap::from_keys`] or a
/// [`KeyMapBuilder`]; store it with [`to_bytes`](KeyMap::to_bytes) beside
/// the range filter built from its `u64`s.
///
/// ```
/// use amq::range::KeyMap;
/// let keys: [&[u8]; 4] = [b"ev:0001", b"ev:0002", b"ev:0010", b"ev:0011"];
/// let map = KeyMap::from_keys(keys);
/// // Only the last two positions vary, over {0, 1} and {0, 1, 2}.
/// let codes: Vec<u64> = keys.iter().map(|k| map.map(k)).collect();
/// assert_eq!(codes, [1, 2, 3, 4]);
/// assert_eq!(map.bits(), 6f64.log2());
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMap {
    /// The smallest key: its bytes are the fixed positions' symbols.
    first: Vec<u8>,
    /// The varying positions in order, as far as 64 bits reach.
    digits: Vec<Digit>,
    /// Whether varying positions were left out (or the last coarsened).
    truncated: bool,
    /// Codes are the mixed-radix number shifted right by this many bits
    /// (0 but for a map [coarsened](KeyMap::coarsened) to its scans).
    shift: u32,
}

/// Where a bound falls among the keys' `u64`s: the least at or above it
/// (`lower`, up to `2^64` for "above every key") and the greatest at or
/// below it (`upper`, down to −1 for "below every key"), and whether the
/// bound is itself a code's one key (`exact`: nothing of it was left out).
#[derive(Clone, Copy)]
struct Place {
    lower: u128,
    upper: i128,
    exact: bool,
}

impl KeyMap {
    /// The map of `keys` (any order, duplicates allowed): a
    /// [`KeyMapBuilder`] fed every key in order (sorted here first, so
    /// that the map may read a run of positions as one digit).
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"b"[..], b"a", b"ab"]);
    /// assert!(map.map(b"a") < map.map(b"ab") && map.map(b"ab") < map.map(b"b"));
    /// ```
    pub fn from_keys<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> KeyMap {
        let mut keys: Vec<&[u8]> = keys.into_iter().collect();
        keys.sort_unstable();
        let mut b = KeyMapBuilder::new();
        for k in keys {
            b.add(k);
        }
        b.finish()
    }

    /// The `u64` of a key the map was built from (for any other byte string,
    /// the same as [`lower`](Self::lower)). Keys in order get `u64`s in
    /// order; two of them share one only where the map
    /// [is truncated](Self::is_exact).
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"k7"[..], b"k8", b"k9"]);
    /// assert_eq!((map.map(b"k7"), map.map(b"k9")), (0, 2));
    /// ```
    pub fn map(&self, key: &[u8]) -> u64 {
        self.lower(key)
    }

    /// The least `u64` of the built keys at or above `bound`: every built
    /// key `k ≥ bound` has `map(k) ≥ lower(bound)`. `u64::MAX` when no
    /// built key is above `bound` (which a built key can also map to: use
    /// [`range`](Self::range) to tell the two apart).
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"a1"[..], b"a3", b"a5"]);
    /// assert_eq!(map.lower(b"a2"), map.map(b"a3"));
    /// assert_eq!(map.lower(b"a"), map.map(b"a1"));
    /// ```
    pub fn lower(&self, bound: &[u8]) -> u64 {
        (self.place(bound).lower.min(u128::from(u64::MAX)) as u64) >> self.shift
    }

    /// The greatest `u64` of the built keys at or below `bound`: every built
    /// key `k ≤ bound` has `map(k) ≤ upper(bound)`. 0 when no built key is
    /// below `bound`.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"a1"[..], b"a3", b"a5"]);
    /// assert_eq!(map.upper(b"a4"), map.map(b"a3"));
    /// assert_eq!(map.upper(b"b"), map.map(b"a5"));
    /// ```
    pub fn upper(&self, bound: &[u8]) -> u64 {
        (self.place(bound).upper.max(0) as u64) >> self.shift
    }

    /// The `u64`s a range filter built from the keys' codes must be asked
    /// about for the keys in `lo..hi` (`Bound`s as in
    /// [`BTreeMap::range`](alloc::collections::BTreeMap::range)): `Some((a,
    /// b))` with `a ≤ b` holding the code of every built key in the range,
    /// or `None` when no built key can lie in it (the map alone decides).
    /// An excluded bound that is itself one of the built keys' exact codes
    /// is excluded from the `u64`s too.
    ///
    /// ```
    /// use std::ops::Bound::{Excluded, Included, Unbounded};
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"a1"[..], b"a3", b"a5"]);
    /// assert_eq!(map.range(Included(&b"a2"[..]), Included(&b"a4"[..])), Some((1, 1)));
    /// assert_eq!(map.range(Excluded(&b"a1"[..]), Excluded(&b"a3"[..])), None);
    /// assert_eq!(map.range(Unbounded, Included(&b"a0"[..])), None);
    /// assert_eq!(map.range(Unbounded, Unbounded), Some((0, 2)));
    /// ```
    pub fn range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<(u64, u64)> {
        fn key(b: Bound<&[u8]>) -> Option<&[u8]> {
            match b {
                Bound::Included(k) | Bound::Excluded(k) => Some(k),
                Bound::Unbounded => None,
            }
        }
        let (pa, pb) = match (key(lo), key(hi)) {
            (Some(a), Some(b)) => {
                let (pa, pb) = self.place_both(a, b);
                (Some(pa), Some(pb))
            }
            (a, b) => (a.map(|k| self.place(k)), b.map(|k| self.place(k))),
        };
        let a: u128 = match (lo, pa) {
            (Bound::Excluded(_), Some(p)) => p.lower + u128::from(p.exact),
            (_, Some(p)) => p.lower,
            (_, None) => 0,
        };
        let last = self.codes() as i128 - 1;
        let b: i128 = match (hi, pb) {
            (Bound::Excluded(_), Some(p)) => p.upper - i128::from(p.exact),
            (_, Some(p)) => p.upper,
            (_, None) => last,
        };
        let b = b.min(last);
        if b < 0 || a as i128 > b {
            return None;
        }
        // Dropping low bits keeps the order, so a key inside still is.
        Some(((a as u64) >> self.shift, (b as u64) >> self.shift))
    }

    /// [`range`](Self::range) of `lo..=hi`.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"a1"[..], b"a3", b"a5"]);
    /// assert_eq!(map.range_inclusive(b"a1", b"a3"), Some((0, 1)));
    /// assert_eq!(map.range_inclusive(b"a6", b"a9"), None);
    /// ```
    pub fn range_inclusive(&self, lo: &[u8], hi: &[u8]) -> Option<(u64, u64)> {
        self.range(Bound::Included(lo), Bound::Included(hi))
    }

    /// Whether every varying position fit in 64 bits, so that distinct
    /// built keys have distinct `u64`s.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// // Twenty varying decimal digits need 66.4 bits.
    /// let keys: Vec<String> = (0..1000u64).map(|i| format!("{:020}", i * 10_203_040_506_070_809)).collect();
    /// let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
    /// assert!(!map.is_exact());
    /// assert!(KeyMap::from_keys([&b"a"[..], b"b"]).is_exact());
    /// ```
    pub fn is_exact(&self) -> bool {
        !self.truncated && self.shift == 0
    }

    /// `log2` of the number of `u64`s the map uses (its radices' product):
    /// how many bits the keys' differences take, at most 64.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let keys: Vec<String> = (0..1000u32).map(|i| format!("id:{i:06}")).collect();
    /// let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
    /// assert!((map.bits() - 1000f64.log2()).abs() < 1e-9); // three decimal digits
    /// ```
    pub fn bits(&self) -> f64 {
        let all: f64 = self.digits.iter().map(|d| libm::log2(d.out as f64)).sum();
        libm::fmax(all - f64::from(self.shift), 0.0)
    }

    /// The map whose codes are this one's shifted right by `shift` more
    /// bits (`shift() + shift` below 64, else
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter)):
    /// keys whose codes differ only in the bits dropped share a code, and a
    /// range of `ℓ` codes becomes one of about `ℓ / 2^shift`. Order and
    /// conservative bounds hold as before, so a filter over the coarse codes
    /// has no false negative. [`fit_to_scans`](super::fit_to_scans) says
    /// when it pays: time windows over keys with a random tail, say.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let keys: Vec<String> = (0..1000u32).map(|i| format!("id:{i:06}")).collect();
    /// let map = KeyMap::from_keys(keys.iter().map(String::as_bytes));
    /// let coarse = map.clone().coarsened(3)?;
    /// assert_eq!((coarse.map(b"id:000017"), coarse.map(b"id:000023")), (2, 2));
    /// assert_eq!(coarse.range_inclusive(b"id:000100", b"id:000199"), Some((12, 24)));
    /// assert!(!coarse.is_exact() && coarse.shift() == 3);
    /// assert!(map.coarsened(64).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn coarsened(mut self, shift: u32) -> Result<KeyMap, crate::Error> {
        let total = self.shift.saturating_add(shift);
        if total >= 64 {
            return Err(crate::error::invalid(
                "shift",
                "a key map drops at most 63 bits of its codes",
            ));
        }
        self.shift = total;
        Ok(self)
    }

    /// How many low bits of the mixed-radix number codes leave out (see
    /// [`coarsened`](Self::coarsened)).
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// assert_eq!(KeyMap::from_keys([&b"a"[..], b"b"]).shift(), 0);
    /// ```
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// Whether the map reads a run of positions as one digit.
    #[cfg(test)]
    pub(crate) fn has_run(&self) -> bool {
        self.digits.iter().any(|d| d.run.is_some())
    }

    /// How many `u64`s the map uses, `1..=2^64`: codes are below it.
    fn codes(&self) -> u128 {
        self.digits
            .first()
            .map_or(1, |d| u128::from(d.weight) * u128::from(d.out))
    }

    /// Where `key` falls among the built keys' codes.
    fn place(&self, key: &[u8]) -> Place {
        match self.walk(key, self.start(), usize::MAX) {
            Step::Done(p) => p,
            Step::Go(w) => self.finish(key, w),
        }
    }

    /// Where `a` and `b` fall: the digits at the positions where the two
    /// agree (a short range's bounds agree on most) are read once.
    fn place_both(&self, a: &[u8], b: &[u8]) -> (Place, Place) {
        let shared = common_prefix(a, b);
        match self.walk(a, self.start(), shared) {
            Step::Done(p) => (p, p),
            Step::Go(w) => {
                let pa = match self.walk(a, w, usize::MAX) {
                    Step::Done(p) => p,
                    Step::Go(w) => self.finish(a, w),
                };
                let pb = match self.walk(b, w, usize::MAX) {
                    Step::Done(p) => p,
                    Step::Go(w) => self.finish(b, w),
                };
                (pa, pb)
            }
        }
    }

    /// A walk before any digit.
    fn start(&self) -> Walk {
        Walk {
            acc: 0,
            unit: self.codes(),
            at: 0,
            next: 0,
        }
    }

    /// Reads `key`'s digits from `w` on, those at positions below `stop`,
    /// until one decides where the key falls.
    #[inline]
    fn walk(&self, key: &[u8], mut w: Walk, stop: usize) -> Step {
        for d in &self.digits[w.next..] {
            if d.end() > stop {
                break;
            }
            // The fixed positions before it: every key has `first`'s bytes.
            if w.at < d.pos {
                match compare_segment(key, &self.first, w.at, d.pos) {
                    Ordering::Less => return Step::Done(below(w.acc)),
                    Ordering::Greater => return Step::Done(above(w.acc, w.unit)),
                    Ordering::Equal => {}
                }
            }
            let (present, r) = d.rank_of(key);
            if !present {
                // Between the keys with the `r` symbols below and the rest.
                let (acc, weight) = (u128::from(w.acc), u128::from(d.weight));
                let lower = acc + u128::from(d.scale(r)) * weight;
                let upper = match r {
                    0 => acc as i128 - 1,
                    _ => (acc + u128::from(d.scale(r - 1)) * weight + weight) as i128 - 1,
                };
                return Step::Done(Place {
                    lower,
                    upper,
                    exact: false,
                });
            }
            // In the alphabet: a code's digit, so the sum stays a code.
            w.acc += d.scale(r) * d.weight;
            w.unit = u128::from(d.weight);
            w.at = d.end();
            w.next += 1;
        }
        Step::Go(w)
    }

    /// Where `key` falls once every digit matched (`w` past the last).
    fn finish(&self, key: &[u8], w: Walk) -> Place {
        if self.truncated {
            // Keys that differ only past the last digit share this code.
            return Place {
                lower: u128::from(w.acc),
                upper: i128::from(w.acc),
                exact: false,
            };
        }
        // Every position past the last digit is fixed.
        match compare_segment(key, &self.first, w.at, usize::MAX) {
            Ordering::Less => below(w.acc),
            Ordering::Greater => above(w.acc, w.unit),
            Ordering::Equal => Place {
                lower: u128::from(w.acc),
                upper: i128::from(w.acc),
                exact: true,
            },
        }
    }
}

/// A walk through a key's digits: the code of those read, the weight of
/// one step of them (past every code with their values), the next
/// position to compare, and the next digit.
#[derive(Clone, Copy)]
struct Walk {
    acc: u64,
    unit: u128,
    at: usize,
    next: usize,
}

/// A walk that goes on, or where the key fell.
enum Step {
    Go(Walk),
    Done(Place),
}

/// A key below every built key whose digits so far are `acc`'s.
fn below(acc: u64) -> Place {
    Place {
        lower: u128::from(acc),
        upper: i128::from(acc) - 1,
        exact: false,
    }
}

/// A key above every built key whose digits so far are `acc`'s.
fn above(acc: u64, unit: u128) -> Place {
    Place {
        lower: u128::from(acc) + unit,
        upper: (u128::from(acc) + unit) as i128 - 1,
        exact: false,
    }
}

/// How many leading bytes `a` and `b` share, eight at a time.
#[inline]
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().unwrap_or([0; 8]));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// `key` against `first` over positions `from..to`, both padded with the
/// end symbol (which is how slices compare: a shorter one sorts first).
#[inline]
pub(crate) fn compare_segment(key: &[u8], first: &[u8], from: usize, to: usize) -> Ordering {
    fn cut(k: &[u8], from: usize, to: usize) -> &[u8] {
        let end = k.len().min(to);
        &k[from.min(end)..end]
    }
    cut(key, from, to).cmp(cut(first, from, to))
}

#[cfg(test)]
mod tests;
