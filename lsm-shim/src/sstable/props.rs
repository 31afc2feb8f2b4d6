//! The metadata block: a table's key range, counts and filter description.
//!
//! ```text
//! entries: varint  tombstones: varint  data_blocks: varint
//! smallest: bytes  largest: bytes
//! key_hash_scheme: u8          amq::HashScheme id of the keys' hashes
//! filter_kind: u8              amq::FilterKind id, 0 = no filter
//! sizing: u8  sizing_value: f64 LE   0 = none, 1 = bits per key, 2 = FPR
//! ```
//!
//! The filter kind is kept as its raw id so that a table written by a newer
//! version, with a kind this build does not know, still opens (its filter is
//! then not trusted and the table is read without it).

use amq::{FilterSizing, HashScheme};

use crate::coding::{put_bytes, put_varint, Cursor};

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
        out
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
        if !c.is_empty() {
            return Err("metadata block trailing bytes");
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
        };
        let bytes = p.encode();
        assert_eq!(Properties::decode(&bytes), Ok(p));
        for cut in 0..bytes.len() {
            assert!(Properties::decode(&bytes[..cut]).is_err());
        }
    }
}
