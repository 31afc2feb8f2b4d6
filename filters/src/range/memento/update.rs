//! Inserts, removals and the bulk build of a [`MementoFilter`]; growth is
//! the shared `quotient/expanding/growing.rs`.

use alloc::vec::Vec;

use super::{MementoFilter, MementoOptions};
use crate::quotient::expanding::fingerprint;
use crate::quotient::table::{Broadword, Table, MAX_QUOTIENTS};
use crate::Error;

impl MementoFilter {
    /// The quotient and the code bits of the partition holding `key`, and
    /// the key's memento.
    #[inline(always)]
    pub(super) fn split(&self, key: u64) -> (usize, u64, u64) {
        let (x, bits) = self.split_prefix(key >> self.g.payload);
        (x, bits, key & self.g.payload_mask())
    }

    /// The quotient of partition `prefix` and the code-width hash bits
    /// after it, from one xxh3 hash of the partition number (addressed as
    /// `GrowingTable::split` says: any quotient count, and doublings move
    /// one fingerprint bit into the quotient).
    #[inline(always)]
    pub(super) fn split_prefix(&self, prefix: u64) -> (usize, u64) {
        self.g.split(crate::hash::hash_u64(prefix).get())
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
        let m = f.g.payload;
        loop {
            let width = f.g.code_width();
            let mut entries: Vec<(usize, u64)> = keys
                .iter()
                .map(|&k| {
                    let (x, bits, memento) = f.split(k);
                    (x, fingerprint::entry(bits, width, length) << m | memento)
                })
                .collect();
            entries.sort_unstable();
            let empty = Table::with_quotients(f.quotients(), f.g.table.width())?;
            match Table::from_sorted_into(empty, entries) {
                Ok(table) => {
                    f.g.table = table;
                    break;
                }
                // The runs passed the last slot (keys crowding the end):
                // a larger first table.
                Err(Error::Full) if f.quotients() < MAX_QUOTIENTS => {
                    let more = f.quotients() + f.quotients().div_ceil(8);
                    f.g.table = Table::with_quotients(more.min(MAX_QUOTIENTS), f.g.table.width())?;
                }
                Err(e) => return Err(e),
            }
        }
        f.g.lengths[length as usize] = keys.len() as u64;
        f.g.keys = keys.len();
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
        let h = crate::hash::hash_u64(key >> self.g.payload).get();
        self.g.insert(h, key & self.g.payload_mask())
    }

    /// Removes one copy of `key`: the entry with its memento and the
    /// longest fingerprint that matches its partition (any key whose entry
    /// that is also matches its own, shorter or equal, entry, so no
    /// inserted key loses its last match), a void entry if nothing longer
    /// matches; removing the last key empties the filter.
    /// [`Error::NotPresent`] (nothing changed) if nothing matches.
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
        let (m, low) = (self.g.payload, self.g.payload_mask());
        let score = |v: u64| {
            if v & low == memento {
                fingerprint::longest(v >> m, bits)
            } else {
                None
            }
        };
        self.g.remove_copy(x, bits, memento, |table| {
            table.remove_best_by(Broadword, x, score)
        })
    }
}
