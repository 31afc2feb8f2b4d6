//! What the tests and the report share: an object store that counts (and
//! can slow) its reads, an in-memory filter cache, settings for many
//! overlapping L0 tables, a merge operator, a policy that damages its
//! filters' bytes, and helpers to read a scan whole.
#![allow(dead_code)] // each binary uses a part

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use slatedb::bytes::{BufMut, Bytes};
use slatedb::config::{CompactorOptions, FlushOptions, FlushType, Settings};
use slatedb::db_cache::{CachedEntry, CachedKey, DbCache};
use slatedb::object_store::path::Path;
use slatedb::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use slatedb::{
    Db, DbIterator, Filter, FilterBuilder, FilterPolicy, FilterQuery, MergeOperator, MergeOperatorError,
    RowEntry,
};

/// An object store that counts the reads it serves, and sleeps `latency`
/// before each (a remote store's round trip).
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    gets: AtomicU64,
    latency: Mutex<Duration>,
}

impl CountingStore {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Arc<Self> {
        Arc::new(CountingStore {
            inner,
            gets: AtomicU64::new(0),
            latency: Mutex::new(Duration::ZERO),
        })
    }

    /// Reads (GETs, ranged or not, and HEADs) so far.
    pub fn gets(&self) -> u64 {
        self.gets.load(Relaxed)
    }

    pub fn set_latency(&self, latency: Duration) {
        *self.latency.lock().unwrap() = latency;
    }
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountingStore({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> slatedb::object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> slatedb::object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> slatedb::object_store::Result<GetResult> {
        self.gets.fetch_add(1, Relaxed);
        let latency = *self.latency.lock().unwrap();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, slatedb::object_store::Result<Path>>,
    ) -> BoxStream<'static, slatedb::object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, slatedb::object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> slatedb::object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> slatedb::object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// An unbounded in-memory cache of blocks, indexes and filters: a build
/// of SlateDB without its `moka` or `foyer` feature caches nothing, and
/// reads every table's filter from the store for every query.
#[derive(Default)]
pub struct MapCache {
    map: Mutex<HashMap<CachedKey, CachedEntry>>,
    /// Serve filters (and table stats) only: every index and data block a
    /// read needs is fetched from the store.
    filters_only: bool,
}

impl MapCache {
    /// A cache of filters alone.
    pub fn filters_only() -> Self {
        MapCache {
            filters_only: true,
            ..MapCache::default()
        }
    }

    fn get(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        Ok(self.map.lock().unwrap().get(key).cloned())
    }

    fn get_data(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        if self.filters_only {
            return Ok(None);
        }
        self.get(key)
    }
}

#[async_trait::async_trait]
impl DbCache for MapCache {
    async fn get_block(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        self.get_data(key)
    }
    async fn get_index(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        self.get_data(key)
    }
    async fn get_filter(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        self.get(key)
    }
    async fn get_stats(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        self.get(key)
    }
    async fn insert(&self, key: CachedKey, value: CachedEntry) {
        self.map.lock().unwrap().insert(key, value);
    }
    async fn remove(&self, key: &CachedKey) {
        self.map.lock().unwrap().remove(key);
    }
    fn entry_count(&self) -> u64 {
        self.map.lock().unwrap().len() as u64
    }
}

/// Settings for many overlapping L0 tables: no compactor (unless
/// `compact`), filters on tables of any size, no stall before 1,000 L0
/// tables, WAL flushes only when asked.
pub fn settings(compact: bool) -> Settings {
    let mut s = Settings {
        min_filter_keys: 1,
        l0_max_ssts: 1_000,
        l0_max_ssts_per_key: 1_000,
        flush_interval: None,
        garbage_collector_options: None,
        ..Settings::default()
    };
    if compact {
        let mut c = CompactorOptions {
            poll_interval: Duration::from_millis(20),
            ..CompactorOptions::default()
        };
        c.scheduler_options
            .insert("min_compaction_sources".into(), "2".into());
        if let Some(w) = &mut c.worker {
            w.min_filter_keys = 1;
        }
        s.compactor_options = Some(c);
    } else {
        s.compactor_options = None;
    }
    s
}

/// Flushes the memtable into a new L0 table.
pub async fn flush(db: &Db) {
    db.flush_with_options(FlushOptions {
        flush_type: FlushType::MemTable,
    })
    .await
    .unwrap();
}

/// Every row of a scan, in order.
pub async fn collect(mut it: DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rows = Vec::new();
    while let Some(kv) = it.next().await.unwrap() {
        rows.push((kv.key.to_vec(), kv.value.to_vec()));
    }
    rows
}

/// Merge operands appended to the value.
pub struct Concat;

impl MergeOperator for Concat {
    fn merge(
        &self,
        _key: &Bytes,
        existing: Option<Bytes>,
        value: Bytes,
    ) -> Result<Bytes, MergeOperatorError> {
        let mut v = existing.map(|e| e.to_vec()).unwrap_or_default();
        v.extend_from_slice(&value);
        Ok(v.into())
    }
}

/// How [`Damaging`] changes the bytes it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// One byte flipped, every 97th byte from the 13th.
    Flip,
    /// The last third cut off.
    Truncate,
    /// Nothing written.
    Empty,
}

/// A policy that writes its inner policy's filters damaged (SlateDB's own
/// checksum over the filter block then passes: the bytes it hands back are
/// the damaged ones), under the inner policy's name.
pub struct Damaging {
    pub inner: Arc<dyn FilterPolicy>,
    pub damage: Damage,
}

impl FilterPolicy for Damaging {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn builder(&self) -> Box<dyn FilterBuilder> {
        Box::new(DamagingBuilder {
            inner: self.inner.builder(),
            damage: self.damage,
        })
    }
    fn decode(&self, data: &[u8]) -> Arc<dyn Filter> {
        self.inner.decode(data)
    }
    fn estimate_size(&self, num_keys: usize) -> usize {
        self.inner.estimate_size(num_keys)
    }
    fn supports_prefix_queries(&self) -> bool {
        self.inner.supports_prefix_queries()
    }
    fn supports_range_queries(&self) -> bool {
        self.inner.supports_range_queries()
    }
}

struct DamagingBuilder {
    inner: Box<dyn FilterBuilder>,
    damage: Damage,
}

impl FilterBuilder for DamagingBuilder {
    fn add_entry(&mut self, entry: &RowEntry) {
        self.inner.add_entry(entry);
    }
    fn build(&mut self) -> Arc<dyn Filter> {
        Arc::new(DamagedFilter {
            inner: self.inner.build(),
            damage: self.damage,
        })
    }
}

/// A built filter that answers as its inner one (the writer's cached
/// copy) and writes damaged bytes.
struct DamagedFilter {
    inner: Arc<dyn Filter>,
    damage: Damage,
}

impl Filter for DamagedFilter {
    fn might_match(&self, query: &FilterQuery) -> bool {
        self.inner.might_match(query)
    }
    fn encode(&self, writer: &mut dyn BufMut) {
        let mut bytes = Vec::new();
        self.inner.encode(&mut bytes);
        match self.damage {
            Damage::Flip => {
                for i in (13..bytes.len()).step_by(97) {
                    bytes[i] ^= 0x20;
                }
            }
            Damage::Truncate => bytes.truncate(bytes.len() * 2 / 3),
            Damage::Empty => bytes.clear(),
        }
        writer.put_slice(&bytes);
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(DamagedFilter {
            inner: self.inner.clamp_allocated_size(),
            damage: self.damage,
        })
    }
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        amq::hash::remix(self.0, 0)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
