//! Fitting a [`KeyMap`] to keys: the symbols seen at each position, then
//! the varying positions as digits while 64 bits last, the first ones read
//! as one run where that saves bits (`run.rs`).

use alloc::vec::Vec;

use super::run::{Heads, MAX_RUN_VALUES};
use super::{Alphabet, Digit, KeyMap, END};

/// A run is chosen only when it saves at least this many bits.
const MIN_RUN_SAVING: f64 = 1.0;

/// A run is chosen only with at least this many distinct keys per value:
/// its values are stored with the map, and fewer keys would pay more for
/// them than a filter's bits gain.
const KEYS_PER_RUN_VALUE: u64 = 16;

/// Collects keys for a [`KeyMap`], one at a time, in any order: the
/// smallest key, and the bytes seen at each position. When the keys come in
/// order (as a table writer gives them), the map can read the first varying
/// positions as one digit whose values are their distinct contents (see
/// [`KeyMap`]), which takes the keys that start each new prefix. Memory: 40
/// bytes per byte position of the longest key, the smallest and last keys,
/// and, for keys in order, up to 4,096 keys' first 128 bytes.
///
/// ```
/// use amq::range::KeyMapBuilder;
/// let mut b = KeyMapBuilder::new();
/// for i in 0..100u32 {
///     b.add(format!("row:{i:04}").as_bytes());
/// }
/// let map = b.finish();
/// assert_eq!(map.map(b"row:0042"), 42);
/// ```
#[derive(Debug, Clone)]
pub struct KeyMapBuilder {
    /// The smallest key so far.
    first: Option<Vec<u8>>,
    /// The bytes (as symbols) seen at each position.
    seen: Vec<Alphabet>,
    /// The shortest key's length: every position from it on has the end
    /// symbol too.
    shortest: usize,
    /// The keys that start each prefix, while keys come in order.
    heads: Heads,
    /// The map's room: `2^room_bits` codes (64 but in tests).
    room_bits: u32,
    /// Distinct keys a run needs per value ([`KEYS_PER_RUN_VALUE`] but in
    /// tests).
    keys_per_value: u64,
}

impl Default for KeyMapBuilder {
    fn default() -> Self {
        KeyMapBuilder {
            first: None,
            seen: Vec::new(),
            shortest: 0,
            heads: Heads::default(),
            room_bits: 64,
            keys_per_value: KEYS_PER_RUN_VALUE,
        }
    }
}

impl KeyMapBuilder {
    /// A builder without keys.
    ///
    /// ```
    /// use amq::range::KeyMapBuilder;
    /// let map = KeyMapBuilder::new().finish();
    /// assert!(map.is_exact() && map.bits() == 0.0);
    /// ```
    pub fn new() -> Self {
        KeyMapBuilder::default()
    }

    /// A builder whose maps have `2^bits` codes and take a run of any
    /// number of values, so that tests reach truncation and runs with few,
    /// short keys.
    #[cfg(test)]
    pub(crate) fn with_room_bits(bits: u32) -> Self {
        KeyMapBuilder {
            room_bits: bits,
            keys_per_value: 1,
            ..KeyMapBuilder::default()
        }
    }

    /// Adds a key (duplicates allowed).
    ///
    /// ```
    /// use amq::range::KeyMapBuilder;
    /// let mut b = KeyMapBuilder::new();
    /// b.add(b"b");
    /// b.add(b"a");
    /// let map = b.finish();
    /// assert!(map.map(b"a") < map.map(b"b"));
    /// ```
    pub fn add(&mut self, key: &[u8]) {
        match &mut self.first {
            None => {
                self.first = Some(key.to_vec());
                self.shortest = key.len();
            }
            Some(first) => {
                if key < first.as_slice() {
                    first.clear();
                    first.extend_from_slice(key);
                }
                self.shortest = self.shortest.min(key.len());
            }
        }
        if self.seen.len() < key.len() {
            self.seen.resize(key.len(), Alphabet::default());
        }
        for (set, &b) in self.seen.iter_mut().zip(key) {
            set.insert(usize::from(b) + 1);
        }
        self.heads.add(key);
    }

    /// The map: every varying position, most significant first, as a digit
    /// of its alphabet's size, while the product of the sizes stays within
    /// `2^64`; the first that does not fit is coarsened to the room left
    /// (if at least 2) and ends the map. Where that truncates the map and
    /// the keys came in order, the first varying positions up to some `q`
    /// may be read as one digit of their distinct contents instead: the `q`
    /// that saves the most bits, if it saves at least one and the table has
    /// at least 16 keys per value (at most 4,096 values).
    ///
    /// ```
    /// use amq::range::KeyMapBuilder;
    /// let mut b = KeyMapBuilder::new();
    /// for k in ["x10", "x11", "x20"] {
    ///     b.add(k.as_bytes());
    /// }
    /// let map = b.finish();
    /// assert_eq!(map.bits(), 2.0); // {1, 2} × {0, 1}
    /// assert!(map.is_exact());
    /// ```
    pub fn finish(mut self) -> KeyMap {
        let first = self.first.take().unwrap_or_default();
        let room = 1u128 << self.room_bits;
        let (mut digits, mut truncated) = self.position_digits(0, room);
        if truncated && self.heads.in_order {
            if let Some(with_run) = self.with_run(&first, room) {
                (digits, truncated) = with_run;
            }
        }
        finish_digits(&mut digits);
        debug_assert!(digits.iter().all(|d| d.rank_of(&first).0));
        KeyMap {
            first,
            digits,
            truncated,
            shift: 0,
        }
    }

    /// Position `pos`'s alphabet (the end symbol included past the shortest
    /// key).
    fn alphabet(&self, pos: usize) -> Alphabet {
        let mut alphabet = self.seen.get(pos).copied().unwrap_or_default();
        if pos >= self.shortest {
            alphabet.insert(END);
        }
        alphabet
    }

    /// The digits of the varying positions from `from` on in `room` codes,
    /// and whether they were cut short.
    fn position_digits(&self, from: usize, mut room: u128) -> (Vec<Digit>, bool) {
        let mut digits = Vec::new();
        for pos in from..self.seen.len() {
            let alphabet = self.alphabet(pos);
            let radix = alphabet.len();
            if radix < 2 {
                continue;
            }
            let out = match room / u128::from(radix) {
                0 => {
                    if room >= 2 {
                        digits.push(Digit::new(pos, alphabet, radix, room as u64));
                    }
                    return (digits, true);
                }
                _ => radix,
            };
            room /= u128::from(out);
            digits.push(Digit::new(pos, alphabet, radix, out));
        }
        (digits, false)
    }

    /// The best run (see [`finish`](Self::finish)) and the digits with it,
    /// or `None` when none saves enough.
    fn with_run(&self, first: &[u8], room: u128) -> Option<(Vec<Digit>, bool)> {
        let pos = (0..self.seen.len()).find(|&p| self.alphabet(p).len() >= 2)?;
        let most_values = MAX_RUN_VALUES.min((self.heads.keys / self.keys_per_value) as usize) as u64;
        let mut by_position = 0.0;
        let mut best: Option<(f64, usize)> = None;
        for q in pos + 1..=self.heads.limit().min(self.seen.len()) {
            by_position += libm::log2(self.alphabet(q - 1).len() as f64);
            let values = self.heads.prefixes(q);
            if values > most_values {
                break;
            }
            let saving = by_position - libm::log2(values as f64);
            if saving >= MIN_RUN_SAVING && best.is_none_or(|(s, _)| saving > s) {
                best = Some((saving, q));
            }
        }
        let (_, q) = best?;
        let run = self.heads.run(first, pos, q);
        let values = run.len() as u64;
        if u128::from(values) > room {
            return None;
        }
        let mut digits = alloc::vec![Digit::of_run(pos, run, values)];
        let (rest, truncated) = self.position_digits(q, room / u128::from(values));
        digits.extend(rest);
        Some((digits, truncated))
    }
}

/// Each digit's weight (the product of the output radices after it) and
/// the symbols before each word of its alphabet.
pub(crate) fn finish_digits(digits: &mut [Digit]) {
    let mut w: u64 = 1;
    for d in digits.iter_mut().rev() {
        d.weight = w;
        w = w.saturating_mul(d.out);
        let mut seen = 0u16;
        for (before, word) in d.before.iter_mut().zip(d.alphabet.0) {
            *before = seen;
            seen += word.count_ones() as u16;
        }
        let words = d.alphabet.0;
        let lowest = words.iter().enumerate().find(|(_, w)| **w != 0);
        d.first_symbol = lowest.map_or(0, |(i, w)| (i * 64) as u16 + w.trailing_zeros() as u16);
        let highest = words.iter().enumerate().rev().find(|(_, w)| **w != 0);
        let last_symbol = highest.map_or(0, |(i, w)| (i * 64) as u16 + 63 - w.leading_zeros() as u16);
        d.contiguous = u64::from(last_symbol - d.first_symbol) + 1 == d.radix;
    }
}
