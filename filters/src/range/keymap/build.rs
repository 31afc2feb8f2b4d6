//! Fitting a [`KeyMap`] to keys: the symbols seen at each position, then
//! the varying positions as digits while 64 bits last.

use alloc::vec::Vec;

use super::{symbol, Alphabet, Digit, KeyMap, END};

/// Collects keys for a [`KeyMap`], one at a time, in any order: the
/// smallest key, and the bytes seen at each position. Memory: 40 bytes per
/// byte position of the longest key, plus the smallest key.
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
#[derive(Debug, Clone, Default)]
pub struct KeyMapBuilder {
    /// The smallest key so far.
    first: Option<Vec<u8>>,
    /// The bytes (as symbols) seen at each position.
    seen: Vec<Alphabet>,
    /// The shortest key's length: every position from it on has the end
    /// symbol too.
    shortest: usize,
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
    }

    /// The map: every varying position, most significant first, as a digit
    /// of its alphabet's size, while the product of the sizes stays within
    /// `2^64`; the first that does not fit is coarsened to the room left
    /// (if at least 2) and ends the map.
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
    pub fn finish(self) -> KeyMap {
        let first = self.first.unwrap_or_default();
        let mut digits: Vec<Digit> = Vec::new();
        let mut room: u128 = 1 << 64;
        let mut truncated = false;
        for (pos, set) in self.seen.iter().enumerate() {
            let mut alphabet = *set;
            if pos >= self.shortest {
                alphabet.insert(END);
            }
            let radix = alphabet.len();
            if radix < 2 {
                continue;
            }
            let out = match room / u128::from(radix) {
                0 => {
                    truncated = true;
                    if room < 2 {
                        break;
                    }
                    room as u64
                }
                _ => radix,
            };
            room /= u128::from(out);
            digits.push(Digit::new(pos, alphabet, radix, out));
            if out < radix {
                break;
            }
        }
        finish_digits(&mut digits);
        debug_assert!(digits.iter().all(|d| d.alphabet.contains(symbol(&first, d.pos))));
        KeyMap {
            first,
            digits,
            truncated,
        }
    }
}

/// Each digit's weight (the product of the output radices after it) and
/// the symbols before each word of its alphabet.
pub(super) fn finish_digits(digits: &mut [Digit]) {
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
