//! Standard Ribbon filter (placeholder doc; the full story comes with the measurements).

mod banding;
mod config;
mod order;
mod row;
mod shard;
mod solution;

pub use config::{RibbonParams, MAX_RESULT_BITS, SHARD_KEYS, SLOTS_PER_KEY};

use alloc::vec::Vec;

use self::banding::Banding;
use self::order::Grouped;
use self::row::{coeff_of, mixed, result_of, seeded, shard_of, start_of, unmixed, Row};
use self::shard::Shard;
use self::solution::{solve_into, Geometry, Window};
use crate::format::{self, ByteWriter, Frame};
use crate::{Error, Filter, FilterKind, FormatError, FromBytes, StaticFilter};

/// Seeds tried per shard before construction gives up with
/// [`Error::BuildFailed`]. The shard's extra slots double every 8 attempts,
/// so in practice the limit is never reached.
pub const MAX_ATTEMPTS: u32 = 64;

/// Serialized bytes per shard descriptor: blocks (u32), extra-column start
/// block (u32), result bits (u8), seed (u8).
const SHARD_RECORD_BYTES: usize = 10;

/// A standard Ribbon filter (Dillinger & Walzer 2021): a static filter at
/// about 2% above `log2(1/FPR)` bits per key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ribbon {
    /// Every shard's interleaved solution, one after the other.
    words: Vec<u64>,
    shards: Vec<Shard>,
    num_keys: u64,
}

impl Ribbon {
    /// Number of shards the keys were split into (`ceil(n / SHARD_KEYS)`).
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// Construction attempts over all shards (one per seed tried); the
    /// number of shards with keys when every first attempt succeeded.
    pub fn attempts(&self) -> u64 {
        self.shards.iter().filter(|s| s.geometry().num_blocks != 0).map(|s| s.seed() as u64 + 1).sum()
    }

    /// Total slots over all shards.
    pub fn num_slots(&self) -> usize {
        self.shards.iter().map(|s| s.geometry().num_slots()).sum()
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let a = mixed(hash);
        let num_shards = self.shards.len() as u64;
        let Some(shard) = self.shards.get(shard_of(a, num_shards)) else {
            return false; // no shards: no keys
        };
        let g = shard.geometry();
        if g.num_blocks == 0 {
            return false;
        }
        let q = seeded(hash, shard.seed());
        let start = start_of(q, g.num_starts() as u64);
        let columns = g.columns_at(start);
        Window::new(&g, start, coeff_of(q)).matches(&self.words[shard.first_word()..], columns, result_of(a))
    }

    /// Whether `key` may be in the set.
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(crate::hash_key(key))
    }

    pub(crate) fn from_frame(mut frame: Frame<'_>) -> Result<Self, FormatError> {
        let num_keys = frame.params.u64()?;
        let num_shards = frame.params.u64()?;
        frame.params.finish()?;
        let bad = FormatError::InvalidParameters;
        // Bound the shard count by the input before allocating for it.
        if num_shards > (frame.payload.remaining() / SHARD_RECORD_BYTES) as u64 {
            return Err(FormatError::Truncated);
        }
        if (num_shards == 0) != (num_keys == 0) {
            return Err(bad("key count does not match the shard count"));
        }
        let mut shards = Vec::with_capacity(num_shards as usize);
        let (mut total_words, mut total_slots) = (0usize, 0u64);
        for _ in 0..num_shards {
            let num_blocks = frame.payload.u32()?;
            let upper_start = frame.payload.u32()? as usize;
            let base_columns = frame.payload.u8()? as u32;
            let seed = frame.payload.u8()?;
            let g = Geometry {
                num_blocks: num_blocks as usize,
                base_columns,
                upper_start,
            };
            if !(1..=MAX_RESULT_BITS).contains(&base_columns) {
                return Err(bad("result bits must be in 1..=32"));
            }
            if upper_start > g.num_blocks || (base_columns == MAX_RESULT_BITS && upper_start != g.num_blocks) {
                return Err(bad("extra-column start block out of range"));
            }
            if g.num_blocks == 1 || seed as u32 >= MAX_ATTEMPTS {
                return Err(bad("invalid shard"));
            }
            shards.push(Shard::new(total_words, &g, seed).map_err(|_| bad("shard too large"))?);
            total_words = g
                .num_words()
                .and_then(|w| total_words.checked_add(w))
                .ok_or(FormatError::Truncated)?;
            total_slots = total_slots.saturating_add(g.num_slots() as u64);
        }
        if num_keys > total_slots {
            return Err(bad("more keys than slots"));
        }
        if frame.payload.remaining() != total_words.saturating_mul(8) {
            return Err(bad("payload length does not match the shards"));
        }
        let words = frame.payload.u64s(total_words)?;
        frame.payload.finish()?;
        Ok(Ribbon {
            words,
            shards,
            num_keys,
        })
    }
}

/// The low `columns` bits (`columns` in `1..=32`).
#[inline(always)]
fn column_mask(columns: u32) -> u32 {
    u32::MAX >> (32 - columns)
}

/// Bands one shard's keys (sorted by start) with shard seed `seed`; `false`
/// if the system has no solution.
fn band_shard(banding: &mut Banding, keys: &[u64], g: &Geometry, seed: u8) -> bool {
    banding.reset(g.num_slots());
    let num_starts = g.num_starts() as u64;
    banding.add_all(keys.iter().map(|&a| {
        let q = seeded(unmixed(a), seed);
        let start = start_of(q, num_starts);
        Row {
            start,
            coeff: coeff_of(q),
            result: result_of(a) & column_mask(g.columns_at(start)),
        }
    }))
}

impl StaticFilter for Ribbon {
    type Params = RibbonParams;

    fn build(hashes: &[u64], params: &RibbonParams) -> Result<Self, Error> {
        let num_shards = hashes.len().div_ceil(SHARD_KEYS);
        let grouped = Grouped::new(hashes, num_shards);
        let mut words = Vec::new();
        let mut shards = Vec::with_capacity(num_shards);
        let mut banding = Banding::new(0);
        for s in 0..num_shards {
            let keys = grouped.shard(s);
            if keys.is_empty() {
                let g = Geometry {
                    num_blocks: 0,
                    base_columns: params.empty_columns(),
                    upper_start: 0,
                };
                shards.push(Shard::new(words.len(), &g, 0)?);
                continue;
            }
            let mut solved = false;
            for attempt in 0..MAX_ATTEMPTS {
                let g = params.geometry(keys.len(), attempt)?;
                let seed = attempt as u8;
                if band_shard(&mut banding, keys, &g, seed) {
                    shards.push(Shard::new(words.len(), &g, seed)?);
                    solve_into(&banding, &g, &mut words);
                    solved = true;
                    break;
                }
            }
            if !solved {
                return Err(Error::BuildFailed {
                    attempts: MAX_ATTEMPTS,
                });
            }
        }
        Ok(Ribbon {
            words,
            shards,
            num_keys: grouped.num_distinct() as u64,
        })
    }
}

impl Filter for Ribbon {
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        Ribbon::contains_hash(self, hash)
    }

    fn size_in_bytes(&self) -> usize {
        self.words.len() * 8 + self.shards.len() * core::mem::size_of::<Shard>()
    }

    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }

    fn expected_fpr(&self) -> f64 {
        // A random query lands in each shard with equal probability.
        match self.shards.len() {
            0 => 0.0,
            s => self.shards.iter().map(|sh| sh.geometry().expected_fpr()).sum::<f64>() / s as f64,
        }
    }

    fn kind(&self) -> FilterKind {
        FilterKind::Ribbon
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(self.num_keys).u64(self.shards.len() as u64);
        let payload_len = self.shards.len() * SHARD_RECORD_BYTES + self.words.len() * 8;
        format::encode(FilterKind::Ribbon, &p.into_vec(), payload_len, |w| {
            for shard in &self.shards {
                let g = shard.geometry();
                w.u32(g.num_blocks as u32)
                    .u32(g.upper_start as u32)
                    .u8(g.base_columns as u8)
                    .u8(shard.seed());
            }
            w.u64s(&self.words);
        })
    }
}

impl FromBytes for Ribbon {
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self::from_frame(format::decode_kind(bytes, FilterKind::Ribbon)?)?)
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// A frame with a valid checksum around hand-made shard records.
    fn frame(num_keys: u64, shards: &[(u32, u32, u8, u8)], words: usize) -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u64(num_keys).u64(shards.len() as u64);
        let len = shards.len() * SHARD_RECORD_BYTES + words * 8;
        format::encode(FilterKind::Ribbon, &p.into_vec(), len, |w| {
            for &(blocks, upper, r, seed) in shards {
                w.u32(blocks).u32(upper).u8(r).u8(seed);
            }
            w.u64s(&vec![0; words]);
        })
    }

    #[test]
    fn decoder_checks_every_shard_field() {
        // Well formed: 2 blocks, 3 columns, the second block with 4.
        assert!(Ribbon::from_bytes(&frame(5, &[(2, 1, 3, 0)], 7)).is_ok());
        let bad = [
            frame(5, &[(2, 1, 0, 0)], 2),                     // 0 columns
            frame(5, &[(2, 1, 33, 0)], 67),                   // 33 columns
            frame(5, &[(2, 3, 3, 0)], 6),                     // extra columns past the end
            frame(5, &[(2, 1, 32, 0)], 65),                   // 33 columns in block 1
            frame(5, &[(1, 1, 3, 0)], 3),                     // one block: no room for a row
            frame(5, &[(2, 2, 3, 64)], 6),                    // seed beyond the attempts
            frame(500, &[(2, 2, 3, 0)], 6),                   // more keys than slots
            frame(0, &[(2, 2, 3, 0)], 6),                     // shards but no keys
            frame(5, &[], 0),                                 // keys but no shards
            frame(5, &[(2, 2, 3, 0)], 7),                     // payload longer than the shards
            frame(5, &[(2, 2, 3, 0)], 5),                     // payload shorter
            frame(5, &[(u32::MAX, u32::MAX, 32, 0)], 0),      // huge shard, tiny payload
        ];
        for (i, bytes) in bad.iter().enumerate() {
            assert!(Ribbon::from_bytes(bytes).is_err(), "case {i} decoded");
        }
    }

    #[test]
    fn huge_shard_count_is_refused_before_allocating() {
        let mut p = ByteWriter::default();
        p.u64(1).u64(u64::MAX);
        let bytes = format::encode(FilterKind::Ribbon, &p.into_vec(), 0, |_| {});
        assert_eq!(Ribbon::from_bytes(&bytes), Err(Error::Format(FormatError::Truncated)));
    }

    #[test]
    fn empty_shards_answer_no() {
        // Two shards of input but one distinct key: one shard stays empty.
        let keys = vec![7u64; SHARD_KEYS + 1];
        let f = Ribbon::build(&keys, &RibbonParams::with_result_bits(4).unwrap()).unwrap();
        assert_eq!((f.num_shards(), f.num_keys()), (2, 1));
        assert!(f.contains_hash(7));
        let back = Ribbon::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(back, f);
        let absent = (0..10_000u64).filter(|&h| f.contains_hash(h)).count();
        assert!(absent < 2_000, "{absent}");
    }
}
