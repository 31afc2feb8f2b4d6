//! [`GrowingTable`]: the state and steps the two growing filters share, the
//! expanding quotient filter (no payload) and the Memento range filter
//! (`range/memento/`, the key's low bits as payload).
//!
//! A value is a self-delimiting fingerprint code (`fingerprint.rs`) over
//! `payload` low bits that ride along unchanged. A hash `h` addresses the
//! table as a fraction of `2^64`: the quotient is `⌊h·N/2^64⌋` and the
//! bits of the fraction's part follow as the fingerprint. With `2N`
//! quotients the quotient is twice that plus the fraction's first bit,
//! which is what a doubling moves from each fingerprint into the quotient,
//! at any `N` (for `N = 2^q` this is the top `q` bits of `h`, then the next
//! ones).

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::fingerprint;
use super::grow::{doubled, expected_matches, histogram, VoidCopies};
use super::schedule::{Schedule, MAX_HORIZON, MAX_LENGTH};
use crate::error::invalid;
use crate::format::Reader;
use crate::quotient::kernel::Kernel;
use crate::quotient::table::{Table, MAX_QUOTIENTS};
use crate::succinct::bits::low_mask;
use crate::{Error, FormatError};

/// A table of fingerprint codes over `payload` bits that doubles when full,
/// with the schedule that gives new codes their length and the counts the
/// FPR and the cap need.
#[derive(Debug, Clone)]
pub(crate) struct GrowingTable {
    pub(crate) table: Table,
    /// How runs are found on this CPU: not part of what the filter holds.
    pub(crate) kernel: Kernel,
    pub(crate) schedule: Schedule,
    /// Low bits under each code, carried unchanged.
    pub(crate) payload: u32,
    /// Expansions so far: the generation of new entries.
    pub(crate) expansions: u32,
    /// Keys inserted less keys removed.
    pub(crate) keys: usize,
    pub(crate) max_keys: Option<usize>,
    /// The copies each void entry stands for past itself (`grow.rs`).
    pub(crate) copies: VoidCopies,
    /// Entries by fingerprint length (each void entry once, its copies
    /// not: they match no more keys).
    pub(crate) lengths: Box<[u64; 64]>,
}

impl PartialEq for GrowingTable {
    fn eq(&self, other: &Self) -> bool {
        type Parts<'a> = (
            &'a Table,
            &'a VoidCopies,
            Schedule,
            u32,
            u32,
            usize,
            Option<usize>,
        );
        fn parts(g: &GrowingTable) -> Parts<'_> {
            (
                &g.table,
                &g.copies,
                g.schedule,
                g.payload,
                g.expansions,
                g.keys,
                g.max_keys,
            )
        }
        parts(self) == parts(other)
    }
}

impl Eq for GrowingTable {}

/// Entries a table of `quotients` quotients holds before it doubles:
/// [`MAX_LOAD`](crate::quotient::MAX_LOAD) of them, `N − ⌈N/20⌉`.
pub(crate) fn capacity(quotients: u64) -> u64 {
    quotients - quotients.div_ceil(20)
}

/// The hash bits a quotient of `N` stands for: `⌈log2 N⌉`.
pub(crate) fn address_bits(quotients: u64) -> u32 {
    64 - quotients.saturating_sub(1).leading_zeros()
}

impl GrowingTable {
    /// An empty table of `quotients` quotients, codes of the schedule's
    /// first length over `payload` bits.
    pub(crate) fn empty(
        quotients: u64,
        schedule: Schedule,
        payload: u32,
        max_keys: Option<usize>,
    ) -> Result<Self, Error> {
        let width = schedule.base + 1 + payload;
        if width > 63 || address_bits(quotients) + schedule.base + 1 > 64 {
            return Err(invalid("fpr", "needs more hash bits than a 64-bit hash has"));
        }
        Ok(GrowingTable {
            table: Table::with_quotients(quotients, width)?,
            kernel: Kernel::detect(),
            schedule,
            payload,
            expansions: 0,
            keys: 0,
            max_keys,
            copies: VoidCopies::new(),
            lengths: Box::new([0; 64]),
        })
    }

    /// The state around a decoded table and its void copies (in order), its
    /// fingerprint lengths counted.
    pub(crate) fn from_parts(
        table: Table,
        copies: impl IntoIterator<Item = ((usize, u64), u64)>,
        schedule: Schedule,
        payload: u32,
        expansions: u32,
        keys: usize,
        max_keys: Option<usize>,
    ) -> Result<Self, &'static str> {
        let lengths = histogram(&table, payload)
            .ok_or("an entry without a delimiter, or a void entry twice in a run")?;
        let copies = checked_copies(&table, payload, copies)?;
        // A void entry and its copies stand for copies of keys that may have
        // been removed: keys may be fewer than what the table holds, or more
        // (filters written before copies were counted), but not past the cap.
        if max_keys.is_some_and(|m| keys > m) {
            return Err("more keys than the cap");
        }
        Ok(GrowingTable {
            table,
            kernel: Kernel::detect(),
            schedule,
            payload,
            expansions,
            keys,
            max_keys,
            copies,
            lengths,
        })
    }

    /// `N`, the quotients now.
    pub(crate) fn quotients(&self) -> u64 {
        self.table.quotients() as u64
    }

    /// Bits of a code: the current fingerprint length, and its delimiter.
    #[inline(always)]
    pub(crate) fn code_width(&self) -> u32 {
        self.table.width() - self.payload
    }

    /// Fingerprint bits of the entries inserted now.
    pub(crate) fn fingerprint_bits(&self) -> u32 {
        self.schedule.length(self.expansions)
    }

    /// Entries the table holds before the next doubling: `N − ⌈N/20⌉`
    /// ([`MAX_LOAD`](crate::quotient::MAX_LOAD)).
    pub(crate) fn capacity(&self) -> usize {
        capacity(self.quotients()) as usize
    }

    /// The quotient of hash `h` and the code-width bits after it (see the
    /// module docs).
    #[inline(always)]
    pub(crate) fn split(&self, h: u64) -> (usize, u64) {
        let product = u128::from(h) * self.table.quotients() as u128;
        (
            (product >> 64) as usize,
            (product as u64) >> (64 - self.code_width()),
        )
    }

    /// Inserts one more entry for hash `h` over payload `low`, doubling
    /// the table first when it is full. [`Error::Full`] (nothing changed)
    /// at the cap, at `usize::MAX` keys (a decoded count may say so), or
    /// when the table may not grow.
    pub(crate) fn insert(&mut self, h: u64, low: u64) -> Result<(), Error> {
        if self.max_keys.is_some_and(|m| self.keys >= m) || self.keys == usize::MAX {
            return Err(Error::Full);
        }
        if self.table.len() >= self.capacity() {
            self.expand()?;
        }
        let length = loop {
            let (x, bits) = self.split(h);
            let length = self.fingerprint_bits();
            let v = fingerprint::entry(bits, self.code_width(), length) << self.payload | low;
            match self.kernel.insert(&mut self.table, x, v) {
                Ok(()) => break length,
                // A run near the end of the table passed its last slot (a
                // key repeated hundreds of times): double and try again.
                Err(Error::Full) => self.expand()?,
                Err(e) => return Err(e),
            }
        };
        self.lengths[length as usize] += 1;
        self.keys += 1;
        Ok(())
    }

    /// The copies quotient `x`'s void entry of payload `low` stands for
    /// past itself.
    #[inline]
    pub(crate) fn void_copies(&self, x: usize, low: u64) -> u64 {
        if self.copies.is_empty() {
            return 0;
        }
        self.copies.get(&(x, low)).copied().unwrap_or(0)
    }

    /// Removes one copy of a key of quotient `x`, code bits `bits` and
    /// payload `low`: a counted copy of the run's void entry when nothing
    /// longer matches, else the entry `remove` takes out of the table (the
    /// longest match). [`Error::NotPresent`] (nothing changed) if nothing
    /// matches.
    pub(crate) fn remove_copy(
        &mut self,
        x: usize,
        bits: u64,
        low: u64,
        remove: impl FnOnce(&mut Table) -> Option<u64>,
    ) -> Result<(), Error> {
        if self.void_copies(x, low) > 0 {
            let (p, width, table) = (self.payload, self.code_width(), &self.table);
            let longer = table.run(x).is_some_and(|run| {
                run.into_iter().any(|s| {
                    let v = table.value(s);
                    let code = v >> p;
                    v & low_mask(p) == low
                        && !fingerprint::is_void(code, width)
                        && fingerprint::matches(code, bits)
                })
            });
            if !longer {
                if let Some(n) = self.copies.get_mut(&(x, low)) {
                    *n -= 1;
                    if *n == 0 {
                        self.copies.remove(&(x, low));
                    }
                }
                self.count_removal();
                return Ok(());
            }
        }
        let v = remove(&mut self.table).ok_or(Error::NotPresent)?;
        let code = v >> self.payload;
        self.lengths[fingerprint::length(code, self.code_width()) as usize] -= 1;
        self.count_removal();
        Ok(())
    }

    /// One key fewer. The last key's removal empties the table: the void
    /// entries copied into halves their keys did not go to stand for no key
    /// then, and an empty filter matches nothing.
    fn count_removal(&mut self) {
        self.keys = self.keys.saturating_sub(1);
        if self.keys == 0 && self.table.len() > 0 {
            self.table.clear();
            self.copies.clear();
            *self.lengths = [0; 64];
        }
    }

    /// Doubles the table (see the module docs). [`Error::Full`] when it
    /// may not grow: past [`MAX_QUOTIENTS`], or when quotient, code and
    /// payload would need more than 64 hash bits or 63-bit slots. Nothing
    /// changes then.
    pub(crate) fn expand(&mut self) -> Result<(), Error> {
        let quotients = 2 * self.quotients();
        let next = self.expansions + 1;
        let length = self.schedule.length(next);
        if quotients > MAX_QUOTIENTS
            || length > MAX_LENGTH
            || address_bits(quotients) + length + 1 > 64
            || length + 1 + self.payload > 63
        {
            return Err(Error::Full);
        }
        let (table, copies, lengths) = doubled(
            &self.table,
            &self.copies,
            self.payload,
            length + 1 + self.payload,
            &self.lengths,
        )?;
        self.table = table;
        self.copies = copies;
        self.lengths = lengths;
        self.expansions = next;
        Ok(())
    }

    /// `λ`: the entries an absent key is expected to match now.
    pub(crate) fn expected_matches(&self) -> f64 {
        expected_matches(&self.lengths, self.table.quotients())
    }

    /// The mask of the payload bits.
    #[inline(always)]
    pub(crate) fn payload_mask(&self) -> u64 {
        low_mask(self.payload)
    }
}

/// Bytes of one void-copy record in a frame's payload: `u64` quotient,
/// `u64` payload bits, `u64` copies.
pub(crate) const COPY_RECORD: usize = 24;

impl GrowingTable {
    /// The void copies as a frame stores them: their count (a `u64`
    /// parameter, written only when not 0, so frames without copies are
    /// what they always were) and the records after the table's blocks.
    pub(crate) fn encode_copies(&self, params: &mut Vec<u8>) -> Vec<u8> {
        if self.copies.is_empty() {
            return Vec::new();
        }
        params.extend_from_slice(&(self.copies.len() as u64).to_le_bytes());
        let mut out = Vec::with_capacity(self.copies.len() * COPY_RECORD);
        for (&(x, low), &n) in &self.copies {
            for v in [x as u64, low, n] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }
}

/// The void-copy record count that ends a frame's parameters: 0 when
/// absent (a written 0 is refused: no filter writes it).
pub(crate) fn read_copy_count(params: &mut Reader<'_>) -> Result<u64, Error> {
    match params.remaining() {
        0 => Ok(0),
        _ => match params.u64()? {
            0 => Err(FormatError::InvalidParameters("a void-copy count of 0").into()),
            r => Ok(r),
        },
    }
}

/// A frame's payload as the table's blocks (`blocks_len` bytes) and its
/// `records` void-copy records, its length checked against both.
pub(crate) fn split_copies<'a>(
    payload: &mut Reader<'a>,
    blocks_len: usize,
    records: u64,
) -> Result<(&'a [u8], &'a [u8]), Error> {
    let copies_len = usize::try_from(records)
        .ok()
        .and_then(|r| r.checked_mul(COPY_RECORD));
    if copies_len.and_then(|c| c.checked_add(blocks_len)) != Some(payload.remaining()) {
        return Err(FormatError::InvalidParameters(
            "payload length does not match the table's shape and void copies",
        )
        .into());
    }
    let blocks = payload.take(blocks_len)?;
    let copies = payload.take(payload.remaining())?;
    Ok((blocks, copies))
}

/// The void-copy records of a frame (`bytes`, whole records, checked by
/// [`split_copies`]), as [`GrowingTable::from_parts`] takes them; a
/// quotient past `usize` becomes one no table has.
pub(crate) fn decode_copies(bytes: &[u8]) -> impl Iterator<Item = ((usize, u64), u64)> + '_ {
    bytes.chunks_exact(COPY_RECORD).map(|r| {
        let word = |i: usize| u64::from_le_bytes(r[8 * i..8 * i + 8].try_into().unwrap_or([0xff; 8]));
        ((usize::try_from(word(0)).unwrap_or(usize::MAX), word(1)), word(2))
    })
}

/// Void copies read from bytes, checked against `table`: in strictly
/// increasing order, at least one copy each, each of a void entry the
/// table holds (one pass over both, as both are sorted the same way).
fn checked_copies(
    table: &Table,
    payload: u32,
    copies: impl IntoIterator<Item = ((usize, u64), u64)>,
) -> Result<VoidCopies, &'static str> {
    let void = 1u64 << (table.width() - payload - 1);
    let mut entries = table.entries().peekable();
    let mut checked = VoidCopies::new();
    let mut last = None;
    for ((x, low), n) in copies {
        if n == 0 || low > low_mask(payload) || last.is_some_and(|l| l >= (x, low)) {
            return Err("void copies out of order, out of range or zero");
        }
        last = Some((x, low));
        let target = (x, void << payload | low);
        while entries.next_if(|&e| e < target).is_some() {}
        if entries.next_if_eq(&target).is_none() {
            return Err("void copies of a void entry the table does not hold");
        }
        checked.insert((x, low), n);
    }
    Ok(checked)
}

/// The horizon a filter starting at `quotients` quotients plans for: the
/// asked `horizon` (at most [`MAX_HORIZON`]), cut to the doublings that
/// reach `max_keys` when there is a cap (at least 1).
pub(crate) fn planned_horizon(quotients: u64, horizon: u32, max_keys: Option<usize>) -> Result<u32, Error> {
    if horizon > MAX_HORIZON {
        return Err(invalid("horizon", "must be at most 64 expansions"));
    }
    let Some(max) = max_keys else {
        return Ok(horizon);
    };
    if max == 0 {
        return Err(invalid("max_keys", "must be at least 1"));
    }
    let mut reach = 0;
    while capacity(quotients << reach) < max as u64 && quotients << reach < MAX_QUOTIENTS {
        reach += 1;
    }
    Ok(horizon.min(reach))
}
