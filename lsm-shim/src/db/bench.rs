//! Hooks for amq-bench's hash-sharing measurement, behind the
//! `bench-internals` feature: a point read that hashes the key again for
//! every table it consults (what a store without hash sharing does), and
//! the filters a point read asks. Not part of the supported API; the default
//! read path does not depend on them.

use std::sync::Arc;

use amq::{hash_key, AnyFilter, Filter};

use super::Db;
use crate::error::Result;
use crate::memtable::Entry;
use crate::sstable::KeyPrefix;
use crate::stats::{inc, ReadCounts};
use crate::version::Version;

impl Db {
    /// [`get`](Self::get), but hashing the key again for every table
    /// consulted and asking each filter with its plain query
    /// (`contains_hash`, which prepares nothing ahead): what a store without
    /// hash sharing does, the baseline of the hash-sharing benchmark. The
    /// same answers and counters as `get`, but `key_hashes` counts every
    /// hash.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert_eq!(db.get_rehashing_per_table("k")?, db.get("k")?);
    /// # Ok(()) }
    /// ```
    pub fn get_rehashing_per_table<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        inc(&self.stats.gets);
        let version = {
            let r = self.read_state();
            if let Some(e) = r.mem.get(key) {
                return Ok(e.clone().into_value());
            }
            r.version.clone()
        };
        let mut counts = ReadCounts::default();
        let found = lookup_rehashing(&version, key, &mut counts);
        self.stats.add_reads(&counts);
        Ok(found?.and_then(Entry::into_value))
    }

    /// The filters a point lookup asks, in the order it asks them (newest
    /// run first; a run of several tables, or a table without a trusted
    /// filter, has none), as the store holds them in memory: the benchmark's
    /// per-table reference is these filters' own `contains_hash`, where they
    /// lie.
    ///
    /// ```
    /// # fn main() -> Result<(), amq_lsm::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = amq_lsm::Db::open(dir.path(), amq_lsm::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert_eq!(db.walked_filters().len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn walked_filters(&self) -> Vec<Arc<AnyFilter>> {
        let version = self.read_state().version.clone();
        let filters = version.walked_filters().cloned().collect();
        filters
    }
}

/// The point read's walk without hash sharing: per run in age order, the
/// range test the shared walk makes first, then the key hashed again and
/// the filter asked with `contains_hash`; a table read after a filter's
/// "maybe" reuses that filter's hash, as such a store would.
fn lookup_rehashing(version: &Version, key_bytes: &[u8], counts: &mut ReadCounts) -> Result<Option<Entry>> {
    let Some(key) = version.probe_key(key_bytes) else {
        return Ok(None);
    };
    let (probes, settles, top) = (version.run_probes(), version.filter_settles(), key.top());
    let (mut negatives, mut read_on) = (0u64, 0u64);
    let mut found = Ok(None);
    for (position, (p, s)) in probes.iter().zip(settles).enumerate() {
        let mut hashed = None;
        if let Some(f) = s.settling_filter(top) {
            counts.key_hashes += 1;
            let h = hash_key(key_bytes);
            if !f.contains_hash(h) {
                negatives += 1;
                continue;
            }
            hashed = Some(h);
        }
        let Some(c) = version.locate(position as u32, p, key) else {
            continue;
        };
        let answer = match (hashed, c.filter) {
            (Some(_), _) => Some(true),
            (None, Some(f)) => {
                counts.key_hashes += 1;
                let h = hash_key(key_bytes);
                hashed = Some(h);
                Some(f.contains_hash(h))
            }
            (None, None) => None,
        };
        if answer == Some(false) {
            negatives += 1;
            continue;
        }
        read_on += 1;
        let hash = match hashed {
            Some(h) => h,
            None => {
                counts.key_hashes += 1;
                hash_key(key_bytes)
            }
        };
        // The baseline asks whole-key filters only.
        let mut no_prefix = KeyPrefix::new(None);
        match version
            .table(&c)
            .get_given(key_bytes, hash, answer, &mut no_prefix, counts)
        {
            Ok(None) => {}
            other => {
                found = other;
                break;
            }
        }
    }
    counts.tables_consulted += negatives + read_on;
    counts.filter_probes += negatives;
    counts.filter_negatives += negatives;
    found
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::env::{Env, FaultEnv};
    use crate::{CompactionStyle, Db, Options, TieredOptions};

    fn key(i: u32) -> Vec<u8> {
        format!("key{i:05}").into_bytes()
    }

    /// Against eight overlapping runs, the shared walk hashes each missing
    /// key once and the rehashing one once per table, with the same answers
    /// and the same tables consulted and filters asked.
    #[test]
    fn rehashing_hashes_once_per_table_and_answers_as_get() {
        let env: Arc<dyn Env> = Arc::new(FaultEnv::new());
        let opts = Options::default()
            .env(env)
            .compaction(CompactionStyle::Tiered(
                TieredOptions::default().runs_per_level(9).max_levels(2),
            ))
            .auto_compact(false);
        let db = Db::open("/db", opts).unwrap();
        for run in 0..8u32 {
            for i in 0..200u32 {
                db.put(key(i * 16 + run), b"v").unwrap();
            }
            db.flush().unwrap();
        }
        assert_eq!(db.walked_filters().len(), 8);
        let before = db.stats();
        for i in 0..100u32 {
            assert_eq!(db.get(key(i * 16 + 15)).unwrap(), None);
        }
        let shared = db.stats();
        for i in 0..100u32 {
            assert_eq!(db.get_rehashing_per_table(key(i * 16 + 15)).unwrap(), None);
        }
        let rehashed = db.stats();
        assert_eq!(shared.key_hashes - before.key_hashes, 100);
        assert_eq!(rehashed.key_hashes - shared.key_hashes, 800);
        assert_eq!(
            rehashed.tables_consulted - shared.tables_consulted,
            shared.tables_consulted - before.tables_consulted
        );
        assert_eq!(
            rehashed.filter_negatives - shared.filter_negatives,
            shared.filter_negatives - before.filter_negatives
        );
        for i in 0..200u32 {
            assert_eq!(
                db.get_rehashing_per_table(key(i * 16 + 3)).unwrap(),
                Some(b"v".to_vec())
            );
        }
    }
}
