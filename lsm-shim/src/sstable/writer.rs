//! Writes one SSTable from entries in key order.
//!
//! Each key is hashed once, with [`amq::hash_key`], as it is added (and its
//! prefix once per run of keys sharing it, with a prefix extractor:
//! `prefixes.rs`); at the end the filter of the table's level is built from
//! those hashes in one call ([`LevelFilter::build`]), so every filter kind,
//! static ones included, is built from the whole entry set; or, for a
//! partitioned filter, one filter per partition from its keys' entries
//! (`partitions.rs`). A range filter, if the level has one, is built from
//! every key's `u64` (`range_filter.rs`).

use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use amq::range::SampledScans;
use amq::{hash_key, HashScheme, KeyHash};

use super::partitions::{self, Cutter, Partition};
use super::prefixes::PrefixCollector;
use super::props::{FilterContents, PartitionsExt, Properties, RangeFilterExt, ValueFilterHandle};
use super::range_filter;
use super::range_keys::{self, RangeKeys};
use super::{trailer, BlockType, Footer, Handle, PARTITIONED_FILTER_VERSION, WHOLE_FILTER_VERSION};
use crate::block::BlockBuilder;
use crate::coding::{put_u32, put_u64};
use crate::env::{Env, WritableFile};
use crate::error::{Error, Result};
use crate::memtable::Entry;
use crate::options::Options;
use crate::policy::{LevelFilter, LevelRangeFilter};
use crate::value_filter::ValueFilterBuilder;

/// What a finished table holds, for the manifest.
#[derive(Debug, Clone)]
pub(crate) struct TableSummary {
    pub number: u64,
    pub file_bytes: u64,
    pub entries: u64,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    pub filter_build_nanos: u64,
    /// Whether the level's range filter could not be built for this table
    /// (its sizing needs more than the filter allows at this key count),
    /// so the table was written without one.
    pub range_filter_not_built: bool,
}

pub(crate) struct TableWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    number: u64,
    offset: u64,
    block_bytes: usize,
    data: BlockBuilder,
    index: BlockBuilder,
    /// Every key's hash, if the filter holds whole keys.
    hashes: Vec<KeyHash>,
    whole_keys: bool,
    /// The keys' prefixes, with a prefix extractor.
    prefixes: Option<PrefixCollector>,
    smallest: Option<Vec<u8>>,
    entries: u64,
    tombstones: u64,
    data_blocks: u64,
    filter: LevelFilter,
    /// The value filter, built as entries are added (with a value index).
    values: Option<ValueFilterBuilder>,
    /// Where the filter's partitions are cut (a partitioned filter only).
    partitions: Option<Cutter>,
    range_filter: LevelRangeFilter,
    /// The keys as the range filter takes them (with a range filter).
    range_keys: Option<RangeKeys>,
}

impl TableWriter {
    /// A table written as `opts` say (block size, value filter, filter
    /// partitions, prefixes and whole keys in the filter), with the filter
    /// `filter` and the range filter `range_filter` (the policies' choices
    /// for its level).
    pub(crate) fn create(
        env: &dyn Env,
        path: PathBuf,
        number: u64,
        opts: &Options,
        filter: LevelFilter,
        range_filter: LevelRangeFilter,
        scans: SampledScans,
    ) -> Result<Self> {
        let file = env.create(&path).map_err(Error::io("create table", &path))?;
        let has_filter = matches!(filter, LevelFilter::Filter { .. });
        Ok(TableWriter {
            file,
            path,
            number,
            offset: 0,
            block_bytes: opts.block_bytes,
            data: BlockBuilder::default(),
            index: BlockBuilder::default(),
            hashes: Vec::new(),
            whole_keys: opts.whole_key_filtering,
            prefixes: match (&opts.prefix_extractor, has_filter) {
                (Some(e), true) => Some(PrefixCollector::new(e.clone())),
                _ => None,
            },
            smallest: None,
            entries: 0,
            tombstones: 0,
            data_blocks: 0,
            filter,
            values: opts.value_index.as_ref().map(ValueFilterBuilder::new),
            // A level without a filter, or a kind amq has no size model
            // for, gets one whole filter.
            partitions: match (opts.filter_partition_bytes, filter) {
                (Some(bytes), LevelFilter::Filter { kind, sizing }) => Cutter::new(kind, sizing, bytes),
                _ => None,
            },
            range_filter,
            range_keys: range_filter.kind().map(|_| RangeKeys::new(scans)),
        })
    }

    /// Adds an entry; keys must strictly increase.
    pub(crate) fn add(&mut self, key: &[u8], entry: &Entry) -> Result<()> {
        if self.smallest.is_none() {
            self.smallest = Some(key.to_vec());
        }
        let value = match entry {
            Entry::Value(v) => {
                if let Some(b) = &mut self.values {
                    b.add(v);
                }
                Some(v.as_slice())
            }
            Entry::Tombstone => {
                self.tombstones += 1;
                None
            }
        };
        self.data.add(key, value);
        if self.whole_keys {
            self.hashes.push(hash_key(key));
        }
        if let Some(p) = &mut self.prefixes {
            p.add(self.entries as usize, key);
        }
        if let Some(r) = &mut self.range_keys {
            r.add(key);
        }
        self.entries += 1;
        if self.data.estimated_len() >= self.block_bytes {
            self.finish_data_block()?;
        }
        Ok(())
    }

    /// Bytes written so far plus the open block: where to cut output tables.
    pub(crate) fn estimated_bytes(&self) -> u64 {
        self.offset + self.data.estimated_len() as u64
    }

    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    fn write_block(&mut self, contents: &[u8], t: BlockType) -> Result<Handle> {
        let handle = Handle {
            offset: self.offset,
            len: u32::try_from(contents.len()).map_err(|_| Error::InvalidOptions("a block over 4 GiB"))?,
        };
        self.file
            .append(contents)
            .map_err(Error::io("write table", &self.path))?;
        self.file
            .append(&trailer(contents, t))
            .map_err(Error::io("write table", &self.path))?;
        self.offset = handle.end();
        Ok(handle)
    }

    fn finish_data_block(&mut self) -> Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        let last_key = self.data.last_key().to_vec();
        let contents = self.data.finish();
        let handle = self.write_block(&contents, BlockType::Data)?;
        let mut v = Vec::with_capacity(12);
        put_u64(&mut v, handle.offset);
        put_u32(&mut v, handle.len);
        self.index.add(&last_key, Some(&v));
        self.data_blocks += 1;
        if let Some(c) = &mut self.partitions {
            let keys = self.entries as usize;
            let entries = self.hashes.len() + self.prefixes.as_ref().map_or(0, PrefixCollector::prefixes);
            c.block_done(self.data_blocks, keys, entries);
        }
        Ok(())
    }

    /// The filter entries of keys `keys`: their hashes (with whole keys) and
    /// their distinct prefixes' (with an extractor).
    fn filter_entries(&self, keys: Range<usize>, out: &mut Vec<KeyHash>) {
        out.clear();
        if self.whole_keys {
            out.extend_from_slice(&self.hashes[keys.clone()]);
        }
        if let Some(p) = &self.prefixes {
            p.hashes_of(keys, out);
        }
    }

    /// What the filter holds, for the metadata block: `None` for whole keys
    /// alone (the form every reader understands).
    fn filter_contents(&self, entries: u64) -> Option<FilterContents> {
        let prefixes = self.prefixes.as_ref().map(PrefixCollector::id);
        (prefixes.is_some() || !self.whole_keys).then_some(FilterContents {
            whole_keys: self.whole_keys,
            prefixes,
            entries,
            understood: true,
        })
    }

    /// Writes the filter, metadata and index blocks and the footer, and syncs
    /// the file. The caller syncs the directory before the table is used.
    pub(crate) fn finish(mut self) -> Result<TableSummary> {
        self.finish_data_block()?;
        let value_filter = match self.values.take() {
            Some(b) => {
                let (contents, terms) = b.finish();
                let handle = self.write_block(&contents, BlockType::ValueFilter)?;
                Some(ValueFilterHandle { handle, terms })
            }
            None => None,
        };
        let start = Instant::now();
        let (range_filter, range_filter_not_built) = match self.write_range_filter()? {
            Ok(r) => (r, false),
            Err(()) => (None, true),
        };
        let range_nanos = start.elapsed().as_nanos() as u64;
        let start = Instant::now();
        let keys = self.entries as usize;
        let mut entries = Vec::new();
        let mut filter_entries = 0;
        let (filter, filter_partitions, filter_build_nanos) = match self.partitions.take() {
            Some(cutter) if keys > 0 => {
                let region = self.offset;
                let mut parts = Vec::new();
                let mut nanos = 0;
                for (first_block, keys) in cutter.finish(keys) {
                    let start = Instant::now();
                    self.filter_entries(keys, &mut entries);
                    let bytes = self.filter.build(&entries)?.unwrap_or_default();
                    nanos += start.elapsed().as_nanos() as u64;
                    filter_entries += entries.len() as u64;
                    parts.push(Partition {
                        first_block,
                        keys: entries.len() as u64,
                        handle: self.write_block(&bytes, BlockType::FilterPartition)?,
                    });
                }
                let ext = PartitionsExt {
                    offset: region,
                    count: parts.len() as u64,
                };
                let index = self.write_block(&partitions::encode_index(&parts), BlockType::FilterIndex)?;
                (index, Some(ext), nanos)
            }
            _ => {
                let filter_bytes = match &self.prefixes {
                    None => self.filter.build(&self.hashes)?,
                    Some(_) => {
                        self.filter_entries(0..keys, &mut entries);
                        self.filter.build(&entries)?
                    }
                };
                filter_entries = match &self.prefixes {
                    None => self.hashes.len() as u64,
                    Some(_) => entries.len() as u64,
                };
                let nanos = start.elapsed().as_nanos() as u64;
                let handle = match &filter_bytes {
                    Some(b) => self.write_block(b, BlockType::Filter)?,
                    None => Handle::default(),
                };
                (handle, None, nanos)
            }
        };
        let smallest = self.smallest.take().unwrap_or_default();
        let largest = self.index.last_key().to_vec();
        let props = Properties {
            entries: self.entries,
            tombstones: self.tombstones,
            data_blocks: self.data_blocks,
            smallest: smallest.clone(),
            largest: largest.clone(),
            key_hash_scheme: HashScheme::Xxh3Seeded.id(),
            filter_kind: self.filter.kind().map_or(0, |k| k.id()),
            sizing: match self.filter {
                LevelFilter::None => None,
                LevelFilter::Filter { sizing, .. } => Some(sizing),
            },
            value_filter,
            filter_partitions,
            filter_contents: match self.filter {
                LevelFilter::None => None,
                LevelFilter::Filter { .. } => self.filter_contents(filter_entries),
            },
            range_filter,
        };
        let meta = self.write_block(&props.encode(), BlockType::Meta)?;
        let index_contents = self.index.finish();
        let index = self.write_block(&index_contents, BlockType::Index)?;
        let version = match filter_partitions {
            Some(_) => PARTITIONED_FILTER_VERSION,
            None => WHOLE_FILTER_VERSION,
        };
        let footer = Footer {
            filter,
            meta,
            index,
            version,
        }
        .encode();
        self.file
            .append(&footer)
            .map_err(Error::io("write table", &self.path))?;
        self.file.sync().map_err(Error::io("sync table", &self.path))?;
        Ok(TableSummary {
            number: self.number,
            file_bytes: self.offset + footer.len() as u64,
            entries: self.entries,
            smallest,
            largest,
            filter_build_nanos: filter_build_nanos + range_nanos,
            range_filter_not_built,
        })
    }

    /// Builds and writes the range filter, if the level has one: the key
    /// map fitted to the table's keys (or key map 1 where that is as good)
    /// and the filter of their distinct `u64`s, seeded by the table's
    /// number, or the infix filter of the keys (`range_keys.rs` has the
    /// blocks and the choice). A filter the sizing cannot build at this key count (an FPR
    /// whose universe passes the filter's limit) is left out, and the
    /// table written without it: `Ok(Err(()))`. Only I/O fails the table.
    fn write_range_filter(&mut self) -> Result<std::result::Result<Option<RangeFilterExt>, ()>> {
        let (Some(keys), Some(kind)) = (self.range_keys.take(), self.range_filter.kind()) else {
            return Ok(Ok(None));
        };
        let LevelRangeFilter::Filter { sizing, .. } = self.range_filter else {
            return Ok(Ok(None));
        };
        let keys = keys.finish(sizing);
        if let Some(infix) = &keys.infix {
            let handle = self.write_block(&infix.to_bytes(), BlockType::RangeFilter)?;
            return Ok(Ok(Some(RangeFilterExt {
                handle,
                kind: kind.id(),
                key_map: range_filter::KEY_MAP_INFIX,
                width: 0,
                keys: infix.num_keys(),
            })));
        }
        let filter = match LevelRangeFilter::new(kind, keys.sizing)
            .build(&keys.codes, range_filter::seed_for(self.number))
        {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Ok(None)),
            Err(_) => return Ok(Err(())),
        };
        let (block, key_map, width) = match keys.top8 {
            Some(width) => (filter, range_filter::KEY_MAP_TOP8, width),
            None => (
                range_keys::encode_block(&keys, &filter),
                range_filter::KEY_MAP_FITTED,
                0,
            ),
        };
        let handle = self.write_block(&block, BlockType::RangeFilter)?;
        Ok(Ok(Some(RangeFilterExt {
            handle,
            kind: kind.id(),
            key_map,
            width,
            keys: keys.codes.len() as u64,
        })))
    }
}
