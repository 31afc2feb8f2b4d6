//! The SSTable file: sorted data blocks, a filter block holding an amq
//! filter, a metadata block, an index block and a fixed-size footer. Every
//! block carries its own checksum. The byte layout is in `docs/lsm-format.md`.
//!
//! ```text
//! data block*  [filter block]  meta block  index block  footer
//! block   = contents  type: u8  checksum(contents ++ type): u32 LE
//! footer  = filter handle  meta handle  index handle      (3 × 12 bytes)
//!           format_version: u32  checksum(first 40 bytes): u32  magic: u64
//! handle  = offset: u64 LE  length: u32 LE                (contents only)
//! ```
//!
//! A table written with a value index also has a value filter block between
//! its data blocks and its filter block; its handle is in the metadata block
//! (`props`), so tables without one keep the same footer.
//!
//! A table with a partitioned filter (`partitions`) has filter partition
//! blocks where the filter block would be, the partition index block after
//! them (named by the footer's filter handle) and footer version 2.
//!
//! A table written with a range filter has a range filter block after
//! those (and before the filter block or partitions); its handle is in the
//! metadata block too (`ranges`).
//!
//! With a prefix extractor the filter holds each key's prefix too, or only
//! the prefixes (`prefixes`); the metadata block says which. Point reads
//! are in `point`, range reads through a `TableCursor` (`cursor`).
//!
//! The type byte makes a handle that points at the wrong block an error
//! rather than a misread. A filter handle of length 0 means "no filter".

mod cursor;
mod partitions;
mod point;
mod prefixes;
mod props;
mod range_filter;
mod range_keys;
mod ranges;
mod reader;
mod writer;

pub(crate) use cursor::{CursorCounts, FilterMaybe};
pub(crate) use prefixes::{prefix_hash, KeyPrefix};
pub(crate) use reader::{Caches, Table};
pub(crate) use writer::{TableSummary, TableWriter};

use crate::coding::{checksum, put_u32, put_u64, Cursor};

/// `"amqlsmT\x01"`: the last 8 bytes of every table.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"amqlsmT\x01");
/// The table format of tables with a whole filter (or none).
pub(crate) const WHOLE_FILTER_VERSION: u32 = 1;
/// The table format of tables with a partitioned filter: the footer's filter
/// handle names the partition index block. A build that reads only version
/// 1 refuses these tables instead of misreading them.
pub(crate) const PARTITIONED_FILTER_VERSION: u32 = 2;
pub(crate) const FOOTER_LEN: usize = 3 * 12 + 4 + 4 + 8;
/// Type byte and checksum after each block's contents.
pub(crate) const TRAILER_LEN: usize = 5;

/// What a block holds, as recorded in its trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum BlockType {
    Data = 1,
    Filter = 2,
    Meta = 3,
    Index = 4,
    /// The value filter block (`crate::value_filter`).
    ValueFilter = 5,
    /// One partition of a partitioned filter (`partitions`).
    FilterPartition = 6,
    /// The index of a partitioned filter's partitions.
    FilterIndex = 7,
    /// The range filter block (`ranges`).
    RangeFilter = 8,
}

/// Where a block's contents are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Handle {
    pub offset: u64,
    pub len: u32,
}

impl Handle {
    fn put(&self, out: &mut Vec<u8>) {
        put_u64(out, self.offset);
        put_u32(out, self.len);
    }

    fn get(c: &mut Cursor) -> Option<Handle> {
        Some(Handle {
            offset: c.u64()?,
            len: c.u32()?,
        })
    }

    /// The offset just past the block's trailer.
    pub(crate) fn end(&self) -> u64 {
        self.offset + u64::from(self.len) + TRAILER_LEN as u64
    }
}

/// The trailer of a block with `contents` of type `t`.
pub(crate) fn trailer(contents: &[u8], t: BlockType) -> [u8; TRAILER_LEN] {
    let ty = [t as u8];
    let sum = checksum(&[contents, &ty]).to_le_bytes();
    [ty[0], sum[0], sum[1], sum[2], sum[3]]
}

/// The fixed-size end of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    pub filter: Handle,
    pub meta: Handle,
    pub index: Handle,
    /// [`WHOLE_FILTER_VERSION`] or [`PARTITIONED_FILTER_VERSION`].
    pub version: u32,
}

/// Why a footer was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FooterError {
    Damaged(&'static str),
    UnsupportedVersion(u32),
}

impl Footer {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        self.filter.put(&mut out);
        self.meta.put(&mut out);
        self.index.put(&mut out);
        put_u32(&mut out, self.version);
        let sum = checksum(&[&out]);
        put_u32(&mut out, sum);
        put_u64(&mut out, MAGIC);
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Footer, FooterError> {
        let mut c = Cursor::new(bytes);
        let body = c.take(40).ok_or(FooterError::Damaged("footer length"))?;
        let sum = c.u32().ok_or(FooterError::Damaged("footer length"))?;
        let magic = c.u64().ok_or(FooterError::Damaged("footer length"))?;
        if magic != MAGIC {
            return Err(FooterError::Damaged("footer magic"));
        }
        if checksum(&[body]) != sum {
            return Err(FooterError::Damaged("footer checksum"));
        }
        let mut c = Cursor::new(body);
        let (filter, meta, index) = (Handle::get(&mut c), Handle::get(&mut c), Handle::get(&mut c));
        let version = c.u32();
        match (filter, meta, index, version) {
            (Some(filter), Some(meta), Some(index), Some(version))
                if version == WHOLE_FILTER_VERSION || version == PARTITIONED_FILTER_VERSION =>
            {
                Ok(Footer {
                    filter,
                    meta,
                    index,
                    version,
                })
            }
            (_, _, _, Some(v)) => Err(FooterError::UnsupportedVersion(v)),
            _ => Err(FooterError::Damaged("footer fields")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trips_and_rejects_damage() {
        let f = Footer {
            filter: Handle { offset: 1, len: 2 },
            meta: Handle { offset: 3, len: 4 },
            index: Handle { offset: 5, len: 6 },
            version: PARTITIONED_FILTER_VERSION,
        };
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&bytes), Ok(f));
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(Footer::decode(&b).is_err(), "byte {i}");
        }
    }
}
