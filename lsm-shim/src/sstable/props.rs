//! The metadata block: a table's key range, counts and filter description.
//!
//! ```text
//! entries: varint  tombstones: varint  data_blocks: varint
//! smallest: bytes  largest: bytes
//! key_hash_scheme: u8          amq::HashScheme id of the keys' hashes
//! filter_kind: u8              amq::FilterKind id, 0 = no filter
//! sizing: u8  sizing_value: f64 LE   0 = none, 1 = bits per key, 2 = FPR
//! extension*                   each: tag: u8  length: varint  body
//!   tag 1, value filter:       offset: u64  length: u32  terms: varint
//!   tag 2, filter partitions:  offset: u64  count: varint   (`partitions.rs`)
//!   tag 3, filter contents:    flags: u8  entries: varint  [extractor: bytes]
//!                              flags bit 0: whole keys; bit 1: prefixes, of
//!                              the extractor whose identity follows
//!   tag 4, range filter:       offset: u64  length: u32  kind: u8
//!                              key_map: u8  width: u8  keys: varint
//!                              (`range_filter.rs`)
//! ```
//!
//! The filter-contents extension says what the filter holds; without it (a
//! table written before prefixes existed) the filter holds the whole keys
//! and nothing else, one entry per key. A query the filter cannot answer
//! (a point read without whole keys, a prefix of another extractor) reads
//! the table. A flag this build does not know makes the filter untrusted.
//!
//! Extensions are optional and written only when used, so a table without
//! a value filter has the bytes of a table written before extensions
//! existed. An extension with a tag this build does not know is skipped
//! (its length says how far); a known one whose body does not decode is
//! corruption.
//!
//! The filter kind is kept as its raw id so that a table written by a newer
//! version, with a kind this build does not know, still opens (its filter is
//! then not trusted and the table is read without it).

use amq::{ExtractorId, FilterSizing, HashScheme};

use super::Handle;
use crate::coding::{put_bytes, put_u32, put_u64, put_varint, Cursor};

/// The extension tag of the value filter's handle.
const EXT_VALUE_FILTER: u8 = 1;
/// The extension tag of a partitioned filter's region.
const EXT_FILTER_PARTITIONS: u8 = 2;
/// The extension tag of what the filter holds.
const EXT_FILTER_CONTENTS: u8 = 3;

/// The extension tag of the range filter's handle.
const EXT_RANGE_FILTER: u8 = 4;

/// Filter-contents flag: the filter holds every key's hash.
const HOLDS_KEYS: u8 = 1;
/// Filter-contents flag: the filter holds every key's extracted prefix.
const HOLDS_PREFIXES: u8 = 2;

/// What a table's filter holds (the filter-contents extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilterContents {
    /// Every key's [`amq::hash_key`].
    pub whole_keys: bool,
    /// The extractor whose prefixes ([`amq::hash_prefix`]) of every key in
    /// its domain the filter holds, if any.
    pub prefixes: Option<ExtractorId>,
    /// Distinct entries, over the whole filter or summed over the
    /// partitions (a prefix whose keys span two partitions is in both).
    pub entries: u64,
    /// `false` when the extension has flags this build does not know: the
    /// filter may hold something else, and is not used.
    pub understood: bool,
}

/// Where a partitioned filter's partitions start, and how many there are
/// (`super::partitions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionsExt {
    pub offset: u64,
    pub count: u64,
}

/// Where a table's range filter block is, what it is, and how many distinct
/// key `u64`s it holds (`super::range_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RangeFilterExt {
    pub handle: Handle,
    /// Raw `FilterKind` id.
    pub kind: u8,
    /// How keys became `u64`s (`super::range_filter::KEY_MAP_TOP8`).
    pub key_map: u8,
    /// The bytes past the common prefix the longest key has, at most 8.
    pub width: u8,
    pub keys: u64,
}

/// Where a table's value filter block is, and how many terms it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValueFilterHandle {
    pub handle: Handle,
    pub terms: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Properties {
    pub entries: u64,
    pub tombstones: u64,
    pub data_blocks: u64,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    pub key_hash_scheme: u8,
    /// Raw `FilterKind` id; 0 for no filter.
    pub filter_kind: u8,
    pub sizing: Option<FilterSizing>,
    /// The value filter block, for tables written with a value index.
    pub value_filter: Option<ValueFilterHandle>,
    /// For a table with a partitioned filter, where its partitions are.
    pub filter_partitions: Option<PartitionsExt>,
    /// What the filter holds, when it is more than the whole keys.
    pub filter_contents: Option<FilterContents>,
    /// The range filter block, for tables written with one.
    pub range_filter: Option<RangeFilterExt>,
}

impl Properties {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, self.entries);
        put_varint(&mut out, self.tombstones);
        put_varint(&mut out, self.data_blocks);
        put_bytes(&mut out, &self.smallest);
        put_bytes(&mut out, &self.largest);
        out.push(self.key_hash_scheme);
        out.push(self.filter_kind);
        let (tag, v) = match self.sizing {
            None => (0u8, 0.0),
            Some(FilterSizing::BitsPerKey(b)) => (1, b),
            Some(FilterSizing::Fpr(p)) => (2, p),
        };
        out.push(tag);
        out.extend_from_slice(&v.to_le_bytes());
        if let Some(vf) = self.value_filter {
            let mut body = Vec::with_capacity(22);
            put_u64(&mut body, vf.handle.offset);
            put_u32(&mut body, vf.handle.len);
            put_varint(&mut body, vf.terms);
            out.push(EXT_VALUE_FILTER);
            put_bytes(&mut out, &body);
        }
        if let Some(p) = self.filter_partitions {
            let mut body = Vec::with_capacity(18);
            put_u64(&mut body, p.offset);
            put_varint(&mut body, p.count);
            out.push(EXT_FILTER_PARTITIONS);
            put_bytes(&mut out, &body);
        }
        if let Some(c) = &self.filter_contents {
            let mut body = Vec::with_capacity(16);
            let flags = u8::from(c.whole_keys) * HOLDS_KEYS + u8::from(c.prefixes.is_some()) * HOLDS_PREFIXES;
            body.push(flags);
            put_varint(&mut body, c.entries);
            if let Some(id) = &c.prefixes {
                put_bytes(&mut body, id.as_bytes());
            }
            out.push(EXT_FILTER_CONTENTS);
            put_bytes(&mut out, &body);
        }
        if let Some(r) = self.range_filter {
            let mut body = Vec::with_capacity(24);
            put_u64(&mut body, r.handle.offset);
            put_u32(&mut body, r.handle.len);
            body.push(r.kind);
            body.push(r.key_map);
            body.push(r.width);
            put_varint(&mut body, r.keys);
            out.push(EXT_RANGE_FILTER);
            put_bytes(&mut out, &body);
        }
        out
    }

    /// What the filter holds: the extension's, or, for a table written
    /// without one, the whole keys, one entry each.
    pub(crate) fn contents(&self) -> FilterContents {
        self.filter_contents.clone().unwrap_or(FilterContents {
            whole_keys: true,
            prefixes: None,
            entries: self.entries,
            understood: true,
        })
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Properties, &'static str> {
        let mut c = Cursor::new(bytes);
        let bad = "metadata block fields";
        let entries = c.varint().ok_or(bad)?;
        let tombstones = c.varint().ok_or(bad)?;
        let data_blocks = c.varint().ok_or(bad)?;
        let smallest = c.bytes().ok_or(bad)?.to_vec();
        let largest = c.bytes().ok_or(bad)?.to_vec();
        let key_hash_scheme = c.u8().ok_or(bad)?;
        let filter_kind = c.u8().ok_or(bad)?;
        let tag = c.u8().ok_or(bad)?;
        let v = c.f64().ok_or(bad)?;
        let sizing = match tag {
            0 => None,
            1 => Some(FilterSizing::BitsPerKey(v)),
            2 => Some(FilterSizing::Fpr(v)),
            _ => return Err("metadata block sizing tag"),
        };
        let mut value_filter = None;
        let mut filter_partitions = None;
        let mut filter_contents = None;
        let mut range_filter = None;
        while !c.is_empty() {
            let ext = c.u8().ok_or(bad)?;
            let body = c.bytes().ok_or("metadata block extension length")?;
            let mut b = Cursor::new(body);
            if ext == EXT_FILTER_CONTENTS {
                let damaged = "metadata block filter contents extension";
                let flags = b.u8().ok_or(damaged)?;
                let entries = b.varint().ok_or(damaged)?;
                let understood = flags & !(HOLDS_KEYS | HOLDS_PREFIXES) == 0;
                let c = if understood {
                    let prefixes = match flags & HOLDS_PREFIXES {
                        0 => None,
                        _ => Some(ExtractorId::from_bytes(b.bytes().ok_or(damaged)?).map_err(|_| damaged)?),
                    };
                    if !b.is_empty() || flags == 0 {
                        return Err(damaged);
                    }
                    FilterContents {
                        whole_keys: flags & HOLDS_KEYS != 0,
                        prefixes,
                        entries,
                        understood,
                    }
                } else {
                    // A later build's contents: the body past the flags may
                    // mean anything.
                    FilterContents {
                        whole_keys: false,
                        prefixes: None,
                        entries,
                        understood,
                    }
                };
                if filter_contents.replace(c).is_some() {
                    return Err("metadata block filter contents extension twice");
                }
                continue;
            }
            if ext == EXT_RANGE_FILTER {
                let r = match (b.u64(), b.u32(), b.u8(), b.u8(), b.u8(), b.varint(), b.is_empty()) {
                    (Some(offset), Some(len), Some(kind), Some(key_map), Some(width), Some(keys), true) => {
                        RangeFilterExt {
                            handle: Handle { offset, len },
                            kind,
                            key_map,
                            width,
                            keys,
                        }
                    }
                    _ => return Err("metadata block range filter extension"),
                };
                if range_filter.replace(r).is_some() {
                    return Err("metadata block range filter extension twice");
                }
                continue;
            }
            if ext == EXT_FILTER_PARTITIONS {
                let p = match (b.u64(), b.varint(), b.is_empty()) {
                    (Some(offset), Some(count), true) if count > 0 => PartitionsExt { offset, count },
                    _ => return Err("metadata block filter partitions extension"),
                };
                if filter_partitions.replace(p).is_some() {
                    return Err("metadata block filter partitions extension twice");
                }
                continue;
            }
            if ext != EXT_VALUE_FILTER {
                continue;
            }
            let vf = match (b.u64(), b.u32(), b.varint(), b.is_empty()) {
                (Some(offset), Some(len), Some(terms), true) => ValueFilterHandle {
                    handle: Handle { offset, len },
                    terms,
                },
                _ => return Err("metadata block value filter extension"),
            };
            if value_filter.replace(vf).is_some() {
                return Err("metadata block value filter extension twice");
            }
        }
        if tombstones > entries || smallest > largest || (entries > 0 && data_blocks == 0) {
            return Err("metadata block counts or key range");
        }
        Ok(Properties {
            entries,
            tombstones,
            data_blocks,
            smallest,
            largest,
            key_hash_scheme,
            filter_kind,
            sizing,
            value_filter,
            filter_partitions,
            filter_contents,
            range_filter,
        })
    }

    /// Whether the key hashes behind the filter are ones this build computes.
    pub(crate) fn hash_scheme_known(&self) -> bool {
        HashScheme::from_id(self.key_hash_scheme) == Some(HashScheme::Xxh3Seeded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_round_trip_and_reject_truncation() {
        let p = Properties {
            entries: 10,
            tombstones: 2,
            data_blocks: 1,
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
            key_hash_scheme: HashScheme::Xxh3Seeded.id(),
            filter_kind: 2,
            sizing: Some(FilterSizing::Fpr(0.01)),
            value_filter: None,
            filter_partitions: None,
            filter_contents: None,
            range_filter: None,
        };
        let bytes = p.encode();
        assert_eq!(Properties::decode(&bytes), Ok(p.clone()));
        for cut in 0..bytes.len() {
            assert!(Properties::decode(&bytes[..cut]).is_err());
        }
        let with_value = Properties {
            value_filter: Some(ValueFilterHandle {
                handle: Handle { offset: 7, len: 300 },
                terms: 1000,
            }),
            ..p
        };
        let bytes = with_value.encode();
        assert_eq!(Properties::decode(&bytes), Ok(with_value.clone()));
        // The extension is 16 bytes (tag, length, 8 + 4 + 2); every cut
        // inside it is an error, none a panic. (A cut just before it is a
        // valid block without one: the block's checksum catches that.)
        for cut in bytes.len() - 15..bytes.len() {
            assert!(Properties::decode(&bytes[..cut]).is_err(), "cut {cut}");
        }
        // An unknown extension is skipped.
        let mut newer = bytes.clone();
        newer.extend_from_slice(&[9, 2, 0xab, 0xcd]);
        assert_eq!(Properties::decode(&newer), Ok(with_value.clone()));
        // Filter partitions: round trip; damage and repeats are errors.
        let partitioned = Properties {
            filter_partitions: Some(PartitionsExt {
                offset: 4096,
                count: 3,
            }),
            ..with_value
        };
        let bytes = partitioned.encode();
        assert_eq!(Properties::decode(&bytes), Ok(partitioned.clone()));
        for cut in bytes.len() - 10..bytes.len() {
            assert!(Properties::decode(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut twice = bytes.clone();
        twice.extend_from_slice(&bytes[bytes.len() - 11..]);
        assert!(Properties::decode(&twice).is_err());
        let mut zero = bytes.clone();
        *zero.last_mut().unwrap() = 0;
        assert!(Properties::decode(&zero).is_err());
    }

    #[test]
    fn filter_contents_round_trip_and_later_flags_make_the_filter_unused() {
        let base = Properties {
            entries: 10,
            tombstones: 0,
            data_blocks: 1,
            smallest: b"a".to_vec(),
            largest: b"z".to_vec(),
            key_hash_scheme: HashScheme::Xxh3Seeded.id(),
            filter_kind: 2,
            sizing: Some(FilterSizing::Fpr(0.01)),
            value_filter: None,
            filter_partitions: None,
            filter_contents: None,
            range_filter: None,
        };
        // Without the extension: whole keys, one entry per key.
        assert_eq!(
            base.contents(),
            FilterContents {
                whole_keys: true,
                prefixes: None,
                entries: 10,
                understood: true
            }
        );
        let id = amq::ExtractorId::new("amq.fixed", &[4]).unwrap();
        for (whole_keys, prefixes) in [(true, Some(id.clone())), (false, Some(id.clone()))] {
            let p = Properties {
                filter_contents: Some(FilterContents {
                    whole_keys,
                    prefixes,
                    entries: 14,
                    understood: true,
                }),
                ..base.clone()
            };
            let bytes = p.encode();
            assert_eq!(Properties::decode(&bytes), Ok(p.clone()));
            assert_eq!(p.contents().entries, 14);
            for cut in base.encode().len() + 1..bytes.len() {
                assert!(Properties::decode(&bytes[..cut]).is_err(), "cut {cut}");
            }
        }
        // A flag of a later build: the table opens, its filter is not used.
        let mut later = base.encode();
        later.extend_from_slice(&[EXT_FILTER_CONTENTS, 3, HOLDS_KEYS | 0x80, 14, 0xee]);
        let decoded = Properties::decode(&later).unwrap();
        assert!(!decoded.contents().understood);
        // No flag at all, or bytes after the extractor: damage.
        let mut none = base.encode();
        none.extend_from_slice(&[EXT_FILTER_CONTENTS, 2, 0, 14]);
        assert!(Properties::decode(&none).is_err());
        let mut trailing = base.encode();
        trailing.extend_from_slice(&[EXT_FILTER_CONTENTS, 3, HOLDS_KEYS, 14, 0]);
        assert!(Properties::decode(&trailing).is_err());
    }
}
