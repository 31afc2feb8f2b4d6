//! Inserts, removals, the bulk build and expansion of a [`MementoFilter`].

use alloc::vec::Vec;

use super::{MementoFilter, MementoOptions};
use crate::quotient::expanding::fingerprint;
use crate::quotient::expanding::grow::doubled;
use crate::quotient::expanding::schedule::MAX_LENGTH;
use crate::quotient::table::{Broadword, Table, MAX_QUOTIENTS};
use crate::succinct::bits::low_mask;
use crate::Error;

impl MementoFilter {
    /// The quotient and the code bits of the partition holding `key`, and
    /// the key's memento.
    #[inline(always)]
    pub(super) fn split(&self, key: u64) -> (usize, u64, u64) {
        let m = self.memento_bits;
        let (x, bits) = self.split_prefix(key >> m);
        (x, bits, key & low_mask(m))
    }

    /// The quotient of partition `prefix` and the code-width hash bits
    /// after it, from one xxh3 hash `h` of the partition number read as a
    /// fraction of `2^64`: `h·N/2^64` is the quotient, and the bits of its
    /// fractional part follow. With `2N` quotients the quotient is twice
    /// that plus the first of those bits, which is what expansion moves
    /// from each fingerprint into the quotient (and `N` need not be a power
    /// of two).
    #[inline(always)]
    pub(super) fn split_prefix(&self, prefix: u64) -> (usize, u64) {
        let w = self.table.width() - self.memento_bits;
        let h = crate::hash::hash_u64(prefix).get();
        let product = u128::from(h) * self.table.quotients() as u128;
        ((product >> 64) as usize, (product as u64) >> (64 - w))
    }

    /// A filter holding `keys` (any order, repeats held as often as they
    /// come), built in one sorted pass, its first table sized for
    /// `options.initial_keys` or the keys, whichever is more.
    /// [`Error::Full`] if there are more keys than
    /// [`max_keys`](MementoOptions::max_keys); otherwise as
    /// [`new`](Self::new).
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
    /// let keys: Vec<u64> = (0..10_000u64).map(|i| i * 100).collect();
    /// let f = MementoFilter::build(&keys, MementoOptions::new(0.01, 16))?;
    /// assert_eq!(f.num_keys(), 10_000);
    /// assert!(f.may_contain_range(4_990, 5_005));
    /// assert_eq!(f.expansions(), 0);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(keys: &[u64], options: MementoOptions) -> Result<Self, Error> {
        if options.max_keys.is_some_and(|m| keys.len() > m) {
            return Err(Error::Full);
        }
        let mut f = Self::for_keys(options, keys.len())?;
        let length = f.fingerprint_bits();
        loop {
            let width = f.table.width() - f.memento_bits;
            let mut entries: Vec<(usize, u64)> = keys
                .iter()
                .map(|&k| {
                    let (x, bits, memento) = f.split(k);
                    (
                        x,
                        fingerprint::entry(bits, width, length) << f.memento_bits | memento,
                    )
                })
                .collect();
            entries.sort_unstable();
            let empty = Table::with_quotients(f.quotients(), f.table.width())?;
            match Table::from_sorted_into(empty, entries) {
                Ok(table) => {
                    f.table = table;
                    break;
                }
                // The runs passed the last slot (keys crowding the end):
                // a larger first table.
                Err(Error::Full) if f.quotients() < MAX_QUOTIENTS => {
                    let more = f.quotients() + f.quotients().div_ceil(8);
                    f.table = Table::with_quotients(more.min(MAX_QUOTIENTS), f.table.width())?;
                }
                Err(e) => return Err(e),
            }
        }
        f.lengths[length as usize] = keys.len() as u64;
        f.keys = keys.len();
        Ok(f)
    }

    /// Inserts one more copy of `key`, doubling the table first when it is
    /// full. [`Error::Full`] (nothing changed) at the
    /// [`max_keys`](MementoOptions::max_keys) cap, or when the table may
    /// not grow (past `2^40` quotients, or slots past 63 bits).
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
    /// let mut f = MementoFilter::new(MementoOptions::new(0.01, 8))?;
    /// f.insert(42)?;
    /// assert!(f.may_contain_range(40, 47) && f.may_contain(42));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn insert(&mut self, key: u64) -> Result<(), Error> {
        if self.max_keys.is_some_and(|m| self.keys >= m) {
            return Err(Error::Full);
        }
        if self.table.len() >= self.capacity() {
            self.expand()?;
        }
        let m = self.memento_bits;
        let length = loop {
            let (x, bits, memento) = self.split(key);
            let length = self.fingerprint_bits();
            let v = fingerprint::entry(bits, self.table.width() - m, length) << m | memento;
            match self.kernel.insert(&mut self.table, x, v) {
                Ok(()) => break length,
                // A run near the end of the table passed its last slot:
                // double and try again.
                Err(Error::Full) => self.expand()?,
                Err(e) => return Err(e),
            }
        };
        self.lengths[length as usize] += 1;
        self.keys += 1;
        Ok(())
    }

    /// Removes one copy of `key`: the entry with its memento and the
    /// longest fingerprint that matches its partition (any key whose entry
    /// that is also matches its own, shorter or equal, entry, so no
    /// inserted key loses its last match). When only a void entry matches,
    /// it stays (it may stand for other keys too) and only the key count
    /// falls. [`Error::NotPresent`] (nothing changed) if nothing matches.
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
    /// let mut f = MementoFilter::new(MementoOptions::new(0.001, 8))?;
    /// f.insert(42)?;
    /// f.insert(42)?;
    /// f.remove(42)?;
    /// assert!(f.may_contain(42));
    /// f.remove(42)?;
    /// assert!(!f.may_contain(42) && f.is_empty());
    /// assert_eq!(f.remove(42), Err(amq::Error::NotPresent));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn remove(&mut self, key: u64) -> Result<(), Error> {
        let (x, bits, memento) = self.split(key);
        let m = self.memento_bits;
        let low = low_mask(m);
        let score = |v: u64| {
            if v & low == memento {
                fingerprint::longest(v >> m, bits)
            } else {
                None
            }
        };
        match self.table.remove_best_by(Broadword, x, score) {
            Some(v) => {
                let width = self.table.width() - m;
                self.lengths[fingerprint::length(v >> m, width) as usize] -= 1;
            }
            None if self.probe(x, bits, memento, memento) => {}
            None => return Err(Error::NotPresent),
        }
        self.keys = self.keys.saturating_sub(1);
        Ok(())
    }

    /// Doubles the table (see the module docs). [`Error::Full`] when it
    /// may not grow; nothing changes then.
    pub(super) fn expand(&mut self) -> Result<(), Error> {
        let quotients = 2 * self.quotients();
        let next = self.expansions + 1;
        let length = self.schedule.length(next);
        let m = self.memento_bits;
        if quotients > MAX_QUOTIENTS
            || length > MAX_LENGTH
            || super::address_bits(quotients) + length + 1 > 64
            || length + 1 + m > 63
        {
            return Err(Error::Full);
        }
        let (table, lengths) = doubled(&self.table, m, length + 1 + m, &self.lengths)?;
        self.table = table;
        self.lengths = lengths;
        self.expansions = next;
        Ok(())
    }
}
