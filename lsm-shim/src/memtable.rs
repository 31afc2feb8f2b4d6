//! The memtable: the newest writes, in a sorted map, until a flush writes them
//! out as an SSTable. Its contents are also in the write-ahead log, so losing
//! it (a crash) loses nothing acknowledged.

use std::collections::BTreeMap;
use std::ops::Bound;

/// What a key maps to: a value, or a tombstone that hides older values of the
/// key until compaction reaches the deepest data and drops both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    Value(Vec<u8>),
    Tombstone,
}

impl Entry {
    pub(crate) fn into_value(self) -> Option<Vec<u8>> {
        match self {
            Entry::Value(v) => Some(v),
            Entry::Tombstone => None,
        }
    }
}

/// Per-entry bookkeeping counted into the memtable's size: the map node's
/// pointers and lengths, roughly.
const ENTRY_OVERHEAD: usize = 32;

#[derive(Debug, Default)]
pub(crate) struct MemTable {
    map: BTreeMap<Vec<u8>, Entry>,
    bytes: usize,
}

fn entry_bytes(key: &[u8], e: &Entry) -> usize {
    key.len()
        + ENTRY_OVERHEAD
        + match e {
            Entry::Value(v) => v.len(),
            Entry::Tombstone => 0,
        }
}

impl MemTable {
    pub(crate) fn insert(&mut self, key: Vec<u8>, entry: Entry) {
        self.bytes += entry_bytes(&key, &entry);
        if let Some(old) = self.map.get(&key) {
            self.bytes -= entry_bytes(&key, old);
        }
        self.map.insert(key, entry);
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.map.get(key)
    }

    /// Approximate heap bytes held: what the flush threshold compares.
    pub(crate) fn approximate_bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every entry in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Vec<u8>, &Entry)> {
        self.map.iter()
    }

    /// A copy of the entries in a range, for a scan that must not hold the
    /// memtable's lock while it runs.
    pub(crate) fn snapshot_range(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Vec<(Vec<u8>, Entry)> {
        // `BTreeMap::range` panics on an inverted range, and on an empty one
        // with both ends excluded; both hold nothing.
        if let (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) = (lo, hi) {
            let both_excluded = matches!((lo, hi), (Bound::Excluded(_), Bound::Excluded(_)));
            if a > b || (a == b && both_excluded) {
                return Vec::new();
            }
        }
        self.map
            .range::<[u8], _>((lo, hi))
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_tracks_overwrites() {
        let mut m = MemTable::default();
        m.insert(b"k".to_vec(), Entry::Value(vec![0; 100]));
        let one = m.approximate_bytes();
        m.insert(b"k".to_vec(), Entry::Value(vec![0; 10]));
        assert_eq!(m.approximate_bytes(), one - 90);
        m.insert(b"k".to_vec(), Entry::Tombstone);
        assert_eq!(m.len(), 1);
        assert_eq!(m.get(b"k"), Some(&Entry::Tombstone));
    }

    #[test]
    fn inverted_ranges_are_empty() {
        let mut m = MemTable::default();
        m.insert(b"a".to_vec(), Entry::Tombstone);
        assert!(m
            .snapshot_range(Bound::Included(b"b"), Bound::Included(b"a"))
            .is_empty());
        assert!(m
            .snapshot_range(Bound::Excluded(b"a"), Bound::Excluded(b"a"))
            .is_empty());
        assert_eq!(m.snapshot_range(Bound::Unbounded, Bound::Unbounded).len(), 1);
    }
}
