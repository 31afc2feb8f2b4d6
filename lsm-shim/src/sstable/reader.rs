//! Opens an SSTable and answers point lookups and range iteration from it.
//!
//! Opening reads the footer, the metadata block, the index block and the
//! filter block, and keeps the index and the decoded filter in memory; data
//! blocks are read from the file when a lookup needs one.
//!
//! A damaged footer, metadata or index block makes `open` fail with
//! [`Error::Corruption`] naming the file; a damaged data block makes the read
//! that needs it fail so. A filter block that cannot be trusted (bad checksum,
//! a kind or hash scheme this build does not know, bytes amq cannot decode, a
//! kind other than the metadata says) never causes a wrong answer: the table
//! is used with no filter, as if every key "may be present", unless the store
//! is strict about filters, when `open` fails with
//! [`Error::UntrustedFilter`]. A filter must also hold exactly as many keys as
//! the table: one built from other keys would pass every checksum and still
//! answer "absent" for the table's keys.
//!
//! A partitioned filter (`partitions.rs`) keeps only its partition index in
//! memory; a lookup reads the one partition it needs through the filter
//! cache (or from the file, without one) and probes it in place.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use amq::{AnyFilter, Filter, FilterKind, KeyHash, PrefixExtractor};

use super::partitions::{self, PartitionedFilter};
use super::props::{FilterContents, Properties};
use super::range_filter::{self, RangeFilterState};
use super::{
    trailer, BlockType, Footer, FooterError, Handle, FOOTER_LEN, PARTITIONED_FILTER_VERSION, TRAILER_LEN,
};
use crate::block::Block;
use crate::cache::{BlockCache, CachedBlock};
use crate::coding::Cursor;
use crate::env::{Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filenames::file_name;
use crate::stats::ReadCounts;

/// The state of a table's filter.
#[derive(Debug)]
pub(crate) enum FilterState {
    /// The table was written without a filter.
    Absent,
    /// A filter that passed every check.
    /// Shared with the read path's per-version summary ([`crate::version`]).
    Trusted(Arc<AnyFilter>),
    /// A partitioned filter whose index passed every check (each partition
    /// is checked when it is read).
    Partitioned(PartitionedFilter),
    /// A filter block that failed a check (the reason), not used.
    Untrusted(String),
}

pub(crate) struct Table {
    number: u64,
    /// The file's path, as errors name it.
    path: PathBuf,
    /// The file's name (inside the store's directory), as corruption
    /// errors name it.
    name: String,
    file: Arc<dyn RandomAccessFile>,
    pub(super) props: Properties,
    /// Last key of each data block, and where the block is.
    pub(super) index: Vec<(Vec<u8>, Handle)>,
    pub(super) filter: FilterState,
    /// The range filter, if the table has one (`range_filter.rs`).
    pub(super) range_filter: RangeFilterState,
    /// What the filter holds (`prefixes.rs`).
    pub(super) contents: FilterContents,
    /// Whether the filter holds the prefixes of the store's extractor:
    /// recorded with that extractor's identity, and trusted.
    pub(super) prefixes_usable: bool,
    /// The filter's expected false-positive rate (1 without a usable
    /// filter), computed once at open: for some kinds it is a sum over the
    /// filter's blocks, far too slow to compute per `Db::stats` call.
    expected_fpr: f64,
    /// Where point reads keep the data blocks they read, if anywhere.
    cache: Option<Arc<BlockCache>>,
    /// Where the partitions of partitioned filters are kept, decoded, if
    /// anywhere.
    filter_cache: Option<Arc<BlockCache<AnyFilter>>>,
    /// Whether a filter partition that fails its checks fails the read.
    strict_filters: bool,
}

/// The caches a table reads through.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caches {
    /// Data blocks of point reads.
    pub blocks: Option<Arc<BlockCache>>,
    /// Filter partitions, decoded.
    pub filters: Option<Arc<BlockCache<AnyFilter>>>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Table {
    pub(crate) fn open(
        env: &dyn Env,
        path: &Path,
        number: u64,
        strict_filters: bool,
        caches: Caches,
        prefix_extractor: Option<&dyn PrefixExtractor>,
    ) -> Result<Table> {
        let name = file_name(path);
        let file = env.open_read(path).map_err(Error::io("open table", path))?;
        let len = file.len();
        if len < FOOTER_LEN as u64 {
            return Err(Error::corruption(&name, "file shorter than a footer"));
        }
        let mut footer = [0u8; FOOTER_LEN];
        file.read_exact_at(len - FOOTER_LEN as u64, &mut footer)
            .map_err(Error::io("read table footer", path))?;
        let footer = Footer::decode(&footer).map_err(|e| match e {
            FooterError::Damaged(what) => Error::corruption(&name, what),
            FooterError::UnsupportedVersion(_) => {
                Error::corruption(&name, "table format version this build cannot read")
            }
        })?;
        let body_end = len - FOOTER_LEN as u64;
        let mut table = Table {
            number,
            path: path.to_path_buf(),
            name,
            file,
            props: empty_props(),
            index: Vec::new(),
            contents: empty_props().contents(),
            prefixes_usable: false,
            cache: caches.blocks,
            filter_cache: caches.filters,
            strict_filters,
            filter: FilterState::Absent,
            range_filter: RangeFilterState::Absent,
            expected_fpr: 1.0,
        };
        // The blocks after the data must lie in order before the footer.
        let filter_start = if footer.filter.len > 0 {
            footer.filter.offset
        } else {
            footer.meta.offset
        };
        let in_order = (footer.filter.len == 0 || footer.filter.end() == footer.meta.offset)
            && footer.meta.end() == footer.index.offset
            && footer.index.end() == body_end;
        if !in_order {
            return Err(Error::corruption(&table.name, "footer handles"));
        }
        let meta = table.read_block(footer.meta, BlockType::Meta)?;
        table.props = Properties::decode(&meta).map_err(|what| Error::corruption(&table.name, what))?;
        table.contents = table.props.contents();
        // A partitioned filter's partitions lie before its index block.
        let partitioned = footer.version == PARTITIONED_FILTER_VERSION;
        let data_end = match (partitioned, table.props.filter_partitions) {
            (false, None) => filter_start,
            (true, Some(p)) if footer.filter.len > 0 && p.offset <= filter_start => p.offset,
            _ => {
                return Err(Error::corruption(
                    &table.name,
                    "footer version and metadata block disagree on filter partitions",
                ))
            }
        };
        // A range filter block sits just before the filter block (or its
        // partitions), and a value filter block before that.
        let data_end = match table.props.range_filter {
            Some(r) if r.handle.end() == data_end => r.handle.offset,
            Some(_) => return Err(Error::corruption(&table.name, "range filter handle")),
            None => data_end,
        };
        let data_end = match table.props.value_filter {
            Some(v) if v.handle.end() == data_end => v.handle.offset,
            Some(_) => return Err(Error::corruption(&table.name, "value filter handle")),
            None => data_end,
        };
        let index = table.read_block(footer.index, BlockType::Index)?;
        table.index = decode_index(&index, data_end).map_err(|what| Error::corruption(&table.name, what))?;
        if table.index.len() as u64 != table.props.data_blocks
            || table.index.last().map(|(k, _)| k.as_slice())
                != (table.props.entries > 0).then_some(&table.props.largest[..])
        {
            return Err(Error::corruption(
                &table.name,
                "index disagrees with the metadata block",
            ));
        }
        table.filter = table.load_filter(footer.filter)?;
        let usable = matches!(
            table.filter,
            FilterState::Trusted(_) | FilterState::Partitioned(_)
        );
        // A point read asks the filter for a whole key only if it holds them
        // (else, through the key's prefix, an answer with no simple rate).
        table.expected_fpr = match &table.filter {
            _ if !table.contents.whole_keys => 1.0,
            FilterState::Trusted(f) => f.expected_fpr(),
            FilterState::Partitioned(p) => p.expected_fpr,
            FilterState::Absent | FilterState::Untrusted(_) => 1.0,
        };
        // Prefixes are asked only of a filter that recorded the very
        // extractor the store uses now.
        table.prefixes_usable = usable
            && match (&table.contents.prefixes, prefix_extractor) {
                (Some(recorded), Some(e)) => *recorded == e.id(),
                _ => false,
            };
        if let (true, FilterState::Untrusted(reason)) = (strict_filters, &table.filter) {
            return Err(Error::UntrustedFilter {
                file: table.name.clone(),
                reason: reason.clone(),
            });
        }
        table.range_filter = table.load_range_filter()?;
        if let (true, RangeFilterState::Untrusted(reason)) = (strict_filters, &table.range_filter) {
            return Err(Error::UntrustedFilter {
                file: table.name.clone(),
                reason: format!("range filter: {reason}"),
            });
        }
        Ok(table)
    }

    fn load_filter(&self, handle: Handle) -> Result<FilterState> {
        if !self.contents.understood {
            return Ok(FilterState::Untrusted(
                "the filter holds entries this build does not know".into(),
            ));
        }
        if let Some(ext) = self.props.filter_partitions {
            return self.load_partition_index(handle, ext);
        }
        if handle.len == 0 {
            return Ok(if self.props.filter_kind == 0 {
                FilterState::Absent
            } else {
                FilterState::Untrusted("metadata names a filter but the table has no filter block".into())
            });
        }
        let (bytes, kind) = match self.read_filter_block(handle, BlockType::Filter)? {
            Ok(read) => read,
            Err(why) => return Ok(FilterState::Untrusted(why)),
        };
        Ok(match AnyFilter::from_bytes(&bytes) {
            // A filter that passes its checksums but holds another number of
            // keys than the table was built from other keys (or forged): it
            // could answer "absent" for keys the table holds.
            Ok(f) if f.kind() == kind && f.num_keys() as u64 != self.contents.entries => {
                FilterState::Untrusted(format!(
                    "filter holds {} entries, the metadata block says {}",
                    f.num_keys(),
                    self.contents.entries
                ))
            }
            Ok(f) if f.kind() == kind => FilterState::Trusted(Arc::new(f)),
            Ok(f) => FilterState::Untrusted(format!(
                "filter block holds {:?}, metadata says {kind:?}",
                f.kind()
            )),
            Err(e) => FilterState::Untrusted(format!("amq could not decode the filter: {e:?}")),
        })
    }

    /// The filter block (or partition index block) at `handle` and the
    /// filter kind the metadata names, or why the filter cannot be trusted:
    /// a damaged block, or a kind or key-hash scheme this build does not
    /// know. I/O errors are errors.
    fn read_filter_block(
        &self,
        handle: Handle,
        t: BlockType,
    ) -> Result<Result<(Vec<u8>, FilterKind), String>> {
        let bytes = match self.read_block(handle, t) {
            Ok(b) => b,
            Err(Error::Corruption { what, .. }) => return Ok(Err(what.into())),
            Err(e) => return Err(e),
        };
        let Some(kind) = FilterKind::from_id(self.props.filter_kind) else {
            return Ok(Err(format!(
                "filter kind {} unknown to this build",
                self.props.filter_kind
            )));
        };
        if !self.props.hash_scheme_known() {
            return Ok(Err("key hash scheme unknown to this build".into()));
        }
        Ok(Ok((bytes, kind)))
    }

    /// Reads and checks the range filter the metadata block names.
    pub(super) fn load_range_filter(&self) -> Result<RangeFilterState> {
        let Some(ext) = self.props.range_filter else {
            return Ok(RangeFilterState::Absent);
        };
        let bytes = match self.read_block(ext.handle, BlockType::RangeFilter) {
            Ok(b) => b,
            Err(Error::Corruption { what, .. }) => return Ok(RangeFilterState::Untrusted(what.into())),
            Err(e) => return Err(e),
        };
        Ok(match range_filter::check(&self.props, ext, &bytes) {
            Ok(state) => state,
            Err(why) => RangeFilterState::Untrusted(why),
        })
    }

    /// The partition index of a partitioned filter (`partitions.rs`), or
    /// why it cannot be trusted.
    fn load_partition_index(&self, handle: Handle, ext: super::props::PartitionsExt) -> Result<FilterState> {
        let (bytes, kind) = match self.read_filter_block(handle, BlockType::FilterIndex)? {
            Ok(read) => read,
            Err(why) => return Ok(FilterState::Untrusted(why)),
        };
        let want = partitions::Expected {
            count: ext.count,
            region: (ext.offset, handle.offset),
            data_blocks: self.props.data_blocks,
            entries: self.contents.entries,
            whole_keys: self.contents.whole_keys,
        };
        let parts = match partitions::decode_index(&bytes, want) {
            Ok(parts) => parts,
            Err(why) => return Ok(FilterState::Untrusted(why)),
        };
        // Every key of the table starts with the bytes its smallest and
        // largest keys share.
        let skip = (self.props.smallest.iter())
            .zip(&self.props.largest)
            .take_while(|(a, b)| a == b)
            .count();
        // The index has `data_blocks` entries and every partition's first
        // block is below that (both checked): every last block is in it.
        Ok(FilterState::Partitioned(PartitionedFilter::new(
            kind,
            self.props.sizing,
            parts,
            skip,
            self.index.len(),
            |b| self.index[b].0.as_slice(),
        )))
    }

    /// `probe(filter)` over filter partition `i`: the decoded partition in
    /// the filter cache, or read from the file and checked, then probed in
    /// place through a view (no filter cache; kinds without a view are
    /// decoded) or decoded and cached. `None`
    /// when the partition fails a check (counted; with strict filters that
    /// is an error instead).
    ///
    /// Why the cache holds decoded filters, not bytes: a cached partition is
    /// probed many times and read once, and a decoded filter answers with
    /// no header parse and with its SIMD kernel on aligned blocks, where a
    /// view over cached bytes parses the header on every probe and runs the
    /// portable kernel (measured: `docs/results-lsm.md`, "Partitioned filters").
    /// The copy that decoding makes is paid once per cache miss, beside a
    /// file read; without a cache the view spares it.
    pub(super) fn with_partition<R>(
        &self,
        f: &PartitionedFilter,
        i: usize,
        counts: &mut ReadCounts,
        probe: impl Fn(&dyn Filter) -> R,
    ) -> Result<Option<R>> {
        let handle = f.parts[i].handle;
        if let Some(r) = self
            .filter_cache
            .as_ref()
            .and_then(|c| c.with(self.number, handle.offset, |f| probe(f)))
        {
            return Ok(Some(r));
        }
        counts.filter_partitions_read += 1;
        let read = match self.read_block(handle, BlockType::FilterPartition) {
            Ok(bytes) => Ok(bytes),
            Err(Error::Corruption { what, .. }) => Err(String::from(what)),
            Err(e) => return Err(e),
        };
        let probed = read.and_then(|bytes| {
            let checked = f.check(i, &bytes)?;
            match &self.filter_cache {
                Some(cache) => {
                    let filter = checked.into_decoded(i, &bytes)?;
                    let r = probe(&filter);
                    cache.insert(self.number, handle.offset, Arc::new(filter));
                    Ok(r)
                }
                None => Ok(probe(checked.filter())),
            }
        });
        match probed {
            Ok(r) => Ok(Some(r)),
            Err(reason) => {
                counts.untrusted_filter_partitions += 1;
                if self.strict_filters {
                    return Err(Error::UntrustedFilter {
                        file: self.name.clone(),
                        reason,
                    });
                }
                Ok(None)
            }
        }
    }

    /// The partition of `f` that holds `key` if the table does.
    #[inline]
    pub(super) fn partition_for(&self, f: &PartitionedFilter, key: &[u8]) -> Option<usize> {
        f.partition_for(key, |i| {
            self.index[f.last_block(i, self.index.len())].0.as_slice()
        })
    }

    /// The answer of partition `i` for `hash`: `None` if that partition
    /// cannot be trusted.
    pub(super) fn partition_answer(
        &self,
        f: &PartitionedFilter,
        i: usize,
        hash: KeyHash,
        counts: &mut ReadCounts,
    ) -> Result<Option<bool>> {
        self.with_partition(f, i, counts, |filter| filter.contains_hash(hash))
    }

    /// Reads and checks the block at `handle`, which must be of type `t`.
    pub(crate) fn read_block(&self, handle: Handle, t: BlockType) -> Result<Vec<u8>> {
        if handle.end() > self.file.len() {
            return Err(Error::corruption(
                &self.name,
                "block handle past the end of the file",
            ));
        }
        let mut buf = vec![0u8; handle.len as usize + TRAILER_LEN];
        self.file
            .read_exact_at(handle.offset, &mut buf)
            .map_err(Error::io("read table block", &self.path))?;
        let (contents, stored) = buf.split_at(handle.len as usize);
        if *stored != trailer(contents, t) {
            return Err(Error::corruption(
                &self.name,
                match t {
                    BlockType::Data => "data block checksum or type",
                    BlockType::Filter => "filter block checksum or type",
                    BlockType::Meta => "metadata block checksum or type",
                    BlockType::Index => "index block checksum or type",
                    BlockType::ValueFilter => "value filter block checksum or type",
                    BlockType::RangeFilter => "range filter block checksum or type",
                    BlockType::FilterPartition => "filter partition block checksum or type",
                    BlockType::FilterIndex => "filter partition index block checksum or type",
                },
            ));
        }
        buf.truncate(handle.len as usize);
        Ok(buf)
    }

    /// A data block for a point read: from the block cache when it holds
    /// it, else read, verified and cached. (`data_blocks_read` counts both:
    /// it is what the filters did not save.)
    pub(super) fn read_data_block(&self, handle: Handle) -> Result<CachedBlock> {
        let Some(cache) = &self.cache else {
            return Ok(Arc::new(self.read_block(handle, BlockType::Data)?));
        };
        if let Some(block) = cache.get(self.number, handle.offset) {
            return Ok(block);
        }
        let block = Arc::new(self.read_block(handle, BlockType::Data)?);
        cache.insert(self.number, handle.offset, Arc::clone(&block));
        Ok(block)
    }

    /// Data block `b` for a scan or compaction: read and verified, not
    /// through the block cache (one scan must not evict the point reads'
    /// working set).
    pub(super) fn scan_block(&self, b: usize) -> Result<CachedBlock> {
        Ok(Arc::new(self.read_block(self.index[b].1, BlockType::Data)?))
    }

    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn smallest(&self) -> &[u8] {
        &self.props.smallest
    }

    pub(crate) fn largest(&self) -> &[u8] {
        &self.props.largest
    }

    pub(crate) fn entries(&self) -> u64 {
        self.props.entries
    }

    pub(crate) fn file_bytes(&self) -> u64 {
        self.file.len()
    }

    pub(crate) fn filter(&self) -> Option<&AnyFilter> {
        self.shared_filter().map(|f| &**f)
    }

    /// The trusted whole filter, if it holds the whole keys, to keep beside
    /// the table's key range where the read path looks first
    /// ([`crate::version::RunProbe`]).
    pub(crate) fn shared_filter(&self) -> Option<&Arc<AnyFilter>> {
        match &self.filter {
            FilterState::Trusted(f) if self.contents.whole_keys => Some(f),
            _ => None,
        }
    }

    /// Where the value filter block is and how many terms it holds, if the
    /// table has one.
    pub(crate) fn value_filter(&self) -> Option<(Handle, u64)> {
        self.props.value_filter.map(|v| (v.handle, v.terms))
    }

    /// Calls `f(key, value)` for every entry (`None` for a tombstone), in
    /// key order, reading and checking each data block once: the table scan
    /// of a value search.
    pub(crate) fn for_each_entry(&self, mut f: impl FnMut(&[u8], Option<&[u8]>)) -> Result<()> {
        for &(_, handle) in &self.index {
            let data = self.read_block(handle, BlockType::Data)?;
            let block = Block::new(&data).map_err(|what| Error::corruption(&self.name, what))?;
            block
                .visit(&mut f)
                .map_err(|what| Error::corruption(&self.name, what))?;
        }
        Ok(())
    }

    pub(crate) fn filter_kind(&self) -> Option<FilterKind> {
        match &self.filter {
            FilterState::Trusted(f) => Some(f.kind()),
            FilterState::Partitioned(p) => Some(p.kind),
            _ => None,
        }
    }

    /// Bytes of the table's usable filter, whole or all its partitions.
    pub(crate) fn filter_bytes(&self) -> u64 {
        match &self.filter {
            FilterState::Trusted(f) => f.size_in_bytes() as u64,
            FilterState::Partitioned(p) => p.filter_bytes(),
            _ => 0,
        }
    }

    /// Bytes of filter the table keeps in memory: a whole filter, or a
    /// partitioned filter's index (its partitions are in the filter cache).
    pub(crate) fn pinned_filter_bytes(&self) -> u64 {
        match &self.filter {
            FilterState::Trusted(f) => f.size_in_bytes() as u64,
            FilterState::Partitioned(p) => p.index_bytes(),
            _ => 0,
        }
    }

    /// The chance a missing key in the table's range gets past its filter:
    /// amq's expected FPR, 1 without a usable filter.
    pub(crate) fn expected_fpr(&self) -> f64 {
        self.expected_fpr
    }

    pub(crate) fn filter_untrusted(&self) -> Option<&str> {
        match &self.filter {
            FilterState::Untrusted(r) => Some(r),
            _ => None,
        }
    }
}

fn empty_props() -> Properties {
    Properties {
        entries: 0,
        tombstones: 0,
        data_blocks: 0,
        smallest: Vec::new(),
        largest: Vec::new(),
        key_hash_scheme: 0,
        filter_kind: 0,
        sizing: None,
        value_filter: None,
        filter_partitions: None,
        filter_contents: None,
        range_filter: None,
    }
}

/// Decodes the index block, checking that keys increase and every handle
/// lies inside the data region, in order, without gaps.
fn decode_index(bytes: &[u8], data_end: u64) -> Result<Vec<(Vec<u8>, Handle)>, &'static str> {
    let block = Block::new(bytes)?;
    let mut out = Vec::new();
    let mut expected_offset = 0u64;
    for e in block.entries()? {
        let mut c = Cursor::new(e.value.ok_or("index entry without a handle")?);
        let handle = match (c.u64(), c.u32(), c.is_empty()) {
            (Some(offset), Some(len), true) => Handle { offset, len },
            _ => return Err("index entry handle"),
        };
        if handle.offset != expected_offset || handle.end() > data_end {
            return Err("index handle outside the data blocks");
        }
        expected_offset = handle.end();
        out.push((e.key, handle));
    }
    if expected_offset != data_end {
        return Err("index does not cover the data blocks");
    }
    Ok(out)
}
