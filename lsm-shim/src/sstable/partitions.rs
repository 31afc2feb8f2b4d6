//! Partitioned filters: a table's key filter split into partitions of about
//! `Options::filter_partition_bytes` each, so that the store can keep only the
//! partitions in use in memory (a filter cache under a byte cap) instead of
//! pinning every table's whole filter.
//!
//! # Layout
//!
//! ```text
//! data block*  [value filter block]  partition*  partition index  metadata  index  footer (version 2)
//! partition        = an amq filter (docs/format.md) of the keys of a run of consecutive data blocks
//! partition index  = count: varint  entry[count]
//! entry            = first_block: varint  keys: varint  offset: u64  length: u32
//! ```
//!
//! A partition covers whole data blocks: `first_block` is the number of its
//! first data block, and it holds the keys of every block up to the next
//! entry's `first_block`. So a partition's last key is its last block's,
//! which the table's index (always in memory) already holds: the partition
//! index on disk needs no keys (14–30 bytes per partition). In memory the
//! reader keeps, per partition, its entry and the first 16 bytes (past the
//! table's common prefix) of its last key as one integer, 48 bytes, and finds
//! a key's partition by a binary search over those integers. That index is
//! pinned: at 4 KiB partitions it is about 1% of the filter it indexes
//! (RocksDB can also load its top-level index on demand; ours is small
//! enough that pinning costs less than the lookups loading it would).
//!
//! The metadata block's filter-partitions extension (`props.rs`) says where
//! the first partition starts; the footer's filter handle names the partition
//! index block, and the footer's version is 2, so a build that predates
//! partitions refuses such a table by its version instead of misreading it.
//!
//! # Trust
//!
//! The index is checked when the table opens: the partitions tile the region
//! between the data (or value filter) and the index block in order, their
//! first blocks start at 0 and increase, and their key counts add up to the
//! table's entries. Each partition is checked when it is read from the file
//! (block checksum, then amq's checks of the frame's header, parameters and
//! lengths, [`FilterView::trusted`]; the kind and hash scheme the metadata
//! names, and the key count its entry records). Without a filter cache it
//! is then probed in place through that view, with no copy; with one it is
//! decoded once and the decoded filter cached (a cached partition is probed
//! many times: no header parse per probe, and the owned filter's SIMD
//! kernel). Kinds without a view (counting Bloom, cuckoo) are decoded in
//! both cases.
//! A partition that fails never gives a wrong answer: its keys "may be
//! present" (`Stats::untrusted_filter_partitions`), or, with
//! `Options::strict_filters`, the read that needed it fails with
//! `Error::UntrustedFilter`.
//!
//! # Where to cut
//!
//! The writer cuts a partition at the first data block boundary after the
//! partition holds `target = partition_bytes / bytes_per_entry` filter
//! entries (keys, prefixes, or both), with `bytes_per_entry` from amq's size
//! model for the level's kind and sizing ([`amq::plan::predict`]).

use std::cmp::Ordering;
use std::ops::Range;

use amq::{plan, AnyFilter, Filter, FilterKind, FilterSizing, FilterView};

use super::Handle;
use crate::coding::{put_u32, put_u64, put_varint, Cursor};
use crate::keys::{compare_keys, key_prefix};

/// One partition, as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Partition {
    /// Its first data block; it ends where the next partition's starts.
    pub first_block: u64,
    /// Keys (table entries) it holds.
    pub keys: u64,
    pub handle: Handle,
}

/// Keys added to the model when estimating bytes per key: large enough that
/// fixed overheads vanish, small enough to be arithmetic only.
const MODEL_KEYS: usize = 1 << 20;

/// The writer's side: where the partitions of a table are cut.
#[derive(Debug, Clone)]
pub(crate) struct Cutter {
    target_entries: usize,
    /// The open partition: its first key (an index into the table's keys),
    /// first data block, and the filter entries before it.
    start_key: usize,
    start_block: u64,
    start_entries: usize,
    cuts: Vec<(u64, Range<usize>)>,
}

impl Cutter {
    /// A cutter for filters of `kind` sized by `sizing` (`None` if amq has
    /// no size model for the kind: one whole filter then).
    pub(crate) fn new(kind: FilterKind, sizing: FilterSizing, partition_bytes: usize) -> Option<Cutter> {
        let predicted = plan::predict(kind, MODEL_KEYS, sizing).ok()?;
        let per_entry = (predicted.size_in_bytes() as f64 / MODEL_KEYS as f64).max(1.0 / 64.0);
        Some(Cutter {
            target_entries: ((partition_bytes as f64 / per_entry) as usize).max(1),
            start_key: 0,
            start_block: 0,
            start_entries: 0,
            cuts: Vec::new(),
        })
    }

    /// Called after each data block is written: `blocks` data blocks, `keys`
    /// keys and about `entries` filter entries so far (keys, prefixes or
    /// both). Cuts the open partition if it is full.
    pub(crate) fn block_done(&mut self, blocks: u64, keys: usize, entries: usize) {
        if entries - self.start_entries >= self.target_entries {
            self.cuts.push((self.start_block, self.start_key..keys));
            self.start_key = keys;
            self.start_block = blocks;
            self.start_entries = entries;
        }
    }

    /// Every partition of a table of `keys` keys: its first data block and
    /// the range of the table's keys it holds.
    pub(crate) fn finish(mut self, keys: usize) -> Vec<(u64, Range<usize>)> {
        if keys > self.start_key {
            self.cuts.push((self.start_block, self.start_key..keys));
        }
        self.cuts
    }
}

/// The partition index block's contents.
pub(crate) fn encode_index(parts: &[Partition]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + parts.len() * 24);
    put_varint(&mut out, parts.len() as u64);
    for p in parts {
        put_varint(&mut out, p.first_block);
        put_varint(&mut out, p.keys);
        put_u64(&mut out, p.handle.offset);
        put_u32(&mut out, p.handle.len);
    }
    out
}

/// What the index must agree with: the table's counts and where its
/// partitions lie.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expected {
    /// Partitions, from the metadata block.
    pub count: u64,
    /// The region they tile: from the end of the data (or value filter) to
    /// the partition index block.
    pub region: (u64, u64),
    pub data_blocks: u64,
    /// Filter entries (the metadata block's filter contents).
    pub entries: u64,
    /// Whether the filter holds every key: then no partition is empty.
    pub whole_keys: bool,
}

/// Decodes and checks the partition index block (see the module docs).
pub(crate) fn decode_index(bytes: &[u8], want: Expected) -> Result<Vec<Partition>, String> {
    let mut c = Cursor::new(bytes);
    let count = c.varint().ok_or("partition index count")?;
    if count != want.count || count == 0 {
        return Err(format!(
            "partition index holds {count} partitions, the metadata block says {}",
            want.count
        ));
    }
    // Each entry takes at least 14 bytes: no allocation beyond what the
    // block's length implies.
    if count > (bytes.len() / 14) as u64 {
        return Err("partition index shorter than its count".into());
    }
    let mut parts: Vec<Partition> = Vec::with_capacity(count as usize);
    let (mut offset, mut keys) = (want.region.0, 0u64);
    for i in 0..count {
        let (first_block, n, off, len) = match (c.varint(), c.varint(), c.u64(), c.u32()) {
            (Some(b), Some(n), Some(o), Some(l)) => (b, n, o, l),
            _ => return Err(format!("partition index entry {i}")),
        };
        let handle = Handle { offset: off, len };
        let first_ok = match parts.last() {
            None => first_block == 0,
            Some(prev) => first_block > prev.first_block,
        };
        if !first_ok || first_block >= want.data_blocks || (n == 0 && want.whole_keys) {
            return Err(format!("partition {i}: first block {first_block} or {n} keys"));
        }
        if off != offset || handle.end() > want.region.1 {
            return Err(format!("partition {i} is not where the previous one ends"));
        }
        offset = handle.end();
        keys = keys.saturating_add(n);
        parts.push(Partition {
            first_block,
            keys: n,
            handle,
        });
    }
    if !c.is_empty() {
        return Err("bytes after the partition index".into());
    }
    if offset != want.region.1 {
        return Err("partitions do not reach the partition index".into());
    }
    if keys != want.entries {
        return Err(format!(
            "partitions hold {keys} entries, the metadata block says {}",
            want.entries
        ));
    }
    Ok(parts)
}

/// A table's partitioned filter as the reader keeps it: the pinned index.
#[derive(Debug)]
pub(crate) struct PartitionedFilter {
    pub kind: FilterKind,
    pub parts: Vec<Partition>,
    /// amq's expected FPR of the partitions, weighted by their keys.
    pub expected_fpr: f64,
    /// Bytes every key of the table starts with (the common prefix of its
    /// smallest and largest keys).
    skip: usize,
    /// [`key_prefix`] of each partition's last key past `skip`: the search
    /// for a key's partition runs over this one array, and reads a full key
    /// (from the table's index) only when a prefix ties the key's.
    last_prefix: Vec<u128>,
}

impl PartitionedFilter {
    /// The filter of a table of `data_blocks` blocks whose keys all start
    /// with `skip` bytes; `block_last_key(b)` is data block `b`'s last key.
    pub(crate) fn new<'k>(
        kind: FilterKind,
        sizing: Option<FilterSizing>,
        parts: Vec<Partition>,
        skip: usize,
        data_blocks: usize,
        block_last_key: impl Fn(usize) -> &'k [u8],
    ) -> Self {
        let keys: u64 = parts.iter().map(|p| p.keys).sum();
        let expected_fpr = parts
            .iter()
            .map(|p| {
                let fpr = sizing
                    .and_then(|s| plan::predict(kind, p.keys as usize, s).ok())
                    .map_or(1.0, |p| p.expected_fpr());
                fpr * p.keys as f64
            })
            .sum::<f64>()
            / keys.max(1) as f64;
        let mut f = PartitionedFilter {
            kind,
            parts,
            expected_fpr,
            skip,
            last_prefix: Vec::new(),
        };
        f.last_prefix = (0..f.parts.len())
            .map(|i| {
                key_prefix(
                    block_last_key(f.last_block(i, data_blocks))
                        .get(skip..)
                        .unwrap_or_default(),
                )
            })
            .collect();
        f
    }

    /// The partition that holds `key` if the table does (`None` if the key
    /// lies past the table's last key), given each partition's last key.
    /// `key_prefix(a) < key_prefix(b)` implies `a < b`, so partitions whose
    /// prefix is below the key's end before it and those above it end
    /// after it; only ties compare whole keys.
    #[inline]
    pub(crate) fn partition_for<'t>(
        &self,
        key: &[u8],
        last_key: impl Fn(usize) -> &'t [u8],
    ) -> Option<usize> {
        let (mut lo, mut hi) = match key.get(self.skip..) {
            Some(suffix) => {
                let kp = key_prefix(suffix);
                let lo = self.last_prefix.partition_point(|&p| p < kp);
                (lo, lo + self.last_prefix[lo..].partition_point(|&p| p == kp))
            }
            // Shorter than the prefix every key has: whole keys decide.
            None => (0, self.parts.len()),
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if compare_keys(last_key(mid), key) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.parts.len()).then_some(lo)
    }

    /// The last data block partition `i` covers (the one before the next
    /// partition's first; `data_blocks - 1` for the last partition).
    pub(crate) fn last_block(&self, i: usize, data_blocks: usize) -> usize {
        self.parts
            .get(i + 1)
            .map_or(data_blocks, |n| n.first_block as usize)
            - 1
    }

    /// Bytes of all partitions (what the filter would take pinned whole).
    pub(crate) fn filter_bytes(&self) -> u64 {
        self.parts.iter().map(|p| u64::from(p.handle.len)).sum()
    }

    /// Bytes the pinned index takes in memory.
    pub(crate) fn index_bytes(&self) -> u64 {
        (self.parts.len() * (std::mem::size_of::<Partition>() + std::mem::size_of::<u128>())) as u64
    }

    /// Checks partition `i`'s bytes as read from the file (their block
    /// checksum already held): amq's checks of the frame, then that it is
    /// the kind, hash scheme and key count the table says.
    pub(crate) fn check<'b>(&self, i: usize, bytes: &'b [u8]) -> Result<Checked<'b>, String> {
        // The block checksum covered these bytes; amq's own checksum would
        // check the same bytes again (the whole-filter path decodes once per
        // table open and lets amq check it; a partition is read on every
        // cache miss). Everything else amq checks: header, parameters and
        // lengths, so a view never reads out of bounds. A kind without a
        // view is decoded (and its checksum checked) instead.
        let checked = match FilterView::trusted(bytes) {
            Ok(v) => Checked::View(v),
            Err(amq::Error::Unsupported { .. }) => Checked::Decoded(
                AnyFilter::from_bytes(bytes).map_err(|e| format!("filter partition {i}: {e:?}"))?,
            ),
            Err(e) => return Err(format!("filter partition {i}: {e:?}")),
        };
        let v = checked.filter();
        if v.kind() != self.kind {
            return Err(format!(
                "filter partition {i} is a {:?} filter, the table's are {:?}",
                v.kind(),
                self.kind
            ));
        }
        if v.num_keys() as u64 != self.parts[i].keys {
            return Err(format!(
                "filter partition {i} holds {} keys, its index entry {}",
                v.num_keys(),
                self.parts[i].keys
            ));
        }
        Ok(checked)
    }
}

/// A partition that passed its checks: a borrowed view over its bytes, or,
/// for a kind without one (counting Bloom, cuckoo), the decoded filter.
pub(crate) enum Checked<'b> {
    View(FilterView<'b>),
    Decoded(AnyFilter),
}

impl Checked<'_> {
    pub(crate) fn filter(&self) -> &dyn Filter {
        match self {
            Checked::View(v) => v,
            Checked::Decoded(f) => f,
        }
    }

    /// The decoded filter, to keep in the filter cache (`bytes`: the bytes
    /// it was checked from).
    pub(crate) fn into_decoded(self, i: usize, bytes: &[u8]) -> Result<AnyFilter, String> {
        match self {
            Checked::View(_) => {
                AnyFilter::from_bytes(bytes).map_err(|e| format!("filter partition {i}: {e:?}"))
            }
            Checked::Decoded(f) => Ok(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> Vec<Partition> {
        vec![
            Partition {
                first_block: 0,
                keys: 100,
                handle: Handle {
                    offset: 1000,
                    len: 95,
                },
            },
            Partition {
                first_block: 3,
                keys: 50,
                handle: Handle {
                    offset: 1100,
                    len: 45,
                },
            },
        ]
    }

    fn expected() -> Expected {
        Expected {
            count: 2,
            region: (1000, 1150),
            data_blocks: 5,
            entries: 150,
            whole_keys: true,
        }
    }

    #[test]
    fn the_index_round_trips_and_every_damage_is_an_error() {
        let bytes = encode_index(&parts());
        assert_eq!(decode_index(&bytes, expected()), Ok(parts()));
        let f = PartitionedFilter::new(FilterKind::Xor8, None, parts(), 0, 5, |b| {
            [&b"a"[..], b"b", b"c", b"d", b"e"][b]
        });
        assert_eq!((f.filter_bytes(), f.expected_fpr), (140, 1.0));
        for cut in 0..bytes.len() {
            assert!(decode_index(&bytes[..cut], expected()).is_err(), "cut {cut}");
        }
        let wrong = [
            Expected {
                count: 3,
                ..expected()
            },
            Expected {
                region: (1000, 1160),
                ..expected()
            },
            Expected {
                region: (990, 1150),
                ..expected()
            },
            Expected {
                data_blocks: 3,
                ..expected()
            },
            Expected {
                entries: 151,
                ..expected()
            },
        ];
        for w in wrong {
            assert!(decode_index(&bytes, w).is_err(), "{w:?}");
        }
        let mut p = parts();
        p[1].first_block = 0;
        assert!(decode_index(&encode_index(&p), expected()).is_err());
        let mut p = parts();
        p[0].first_block = 1;
        assert!(decode_index(&encode_index(&p), expected()).is_err());
        // A count far beyond the block's length allocates nothing.
        let mut huge = Vec::new();
        put_varint(&mut huge, u64::MAX / 2);
        assert!(decode_index(
            &huge,
            Expected {
                count: u64::MAX / 2,
                ..expected()
            }
        )
        .is_err());
    }

    #[test]
    fn a_key_is_found_in_the_partition_whose_range_holds_it() {
        // Last keys with a 20-byte common prefix and ties in the 16 bytes
        // after it, so both the integer search and the whole-key one run.
        let prefix = "tenant-0042/orders//";
        let lasts: Vec<Vec<u8>> = ["b", "d", "d0000000000000000x", "d0000000000000000y", "f"]
            .iter()
            .map(|s| format!("{prefix}{s}").into_bytes())
            .collect();
        let parts: Vec<Partition> = (0..5)
            .map(|i| Partition {
                first_block: i,
                keys: 10_000,
                handle: Handle::default(),
            })
            .collect();
        let f = PartitionedFilter::new(
            FilterKind::BlockedBloom,
            Some(FilterSizing::BitsPerKey(10.0)),
            parts,
            prefix.len(),
            5,
            |b| lasts[b].as_slice(),
        );
        assert!((f.expected_fpr - 0.01).abs() < 0.005, "{}", f.expected_fpr);
        let last = |i: usize| lasts[i].as_slice();
        // The answer is the first partition whose last key is ≥ the key.
        let want = |k: &[u8]| lasts.iter().position(|l| l.as_slice() >= k);
        let mut probes: Vec<Vec<u8>> = Vec::new();
        for s in [
            "a",
            "b",
            "b0",
            "c",
            "d",
            "d0",
            "d0000000000000000",
            "d0000000000000000x",
            "d0000000000000000xa",
            "d0000000000000000y",
            "d1",
            "e",
            "f",
            "g",
        ] {
            probes.push(format!("{prefix}{s}").into_bytes());
        }
        probes.push(b"short".to_vec());
        probes.push(b"zzzz".to_vec());
        for k in &probes {
            assert_eq!(
                f.partition_for(k, last),
                want(k),
                "{}",
                String::from_utf8_lossy(k)
            );
        }
        assert_eq!(f.last_block(1, 9), 1);
        assert_eq!(f.last_block(4, 9), 8);
    }

    #[test]
    fn cuts_fall_on_block_boundaries_once_a_partition_is_full() {
        // 10 bits per key: 4,096 bytes hold about 3,300 keys.
        let mut c = Cutter::new(FilterKind::BlockedBloom, FilterSizing::BitsPerKey(10.0), 4096).unwrap();
        let target = c.target_entries;
        assert!((3000..3400).contains(&target), "{target}");
        let mut keys = 0;
        for block in 1..=100u64 {
            keys += 100;
            c.block_done(block, keys, keys);
        }
        let cuts = c.finish(keys);
        assert_eq!(cuts.first().map(|c| c.0), Some(0));
        let mut next = 0;
        for (i, (first_block, range)) in cuts.iter().enumerate() {
            assert_eq!(range.start, next);
            assert_eq!(range.start, *first_block as usize * 100);
            if i + 1 < cuts.len() {
                assert!(range.len() >= target && range.len() < target + 100);
            }
            next = range.end;
        }
        assert_eq!(next, keys);
        // Every kind is cut, those without a view too.
        assert!(Cutter::new(FilterKind::CuckooFilter, FilterSizing::BitsPerKey(12.0), 4096).is_some());
    }
}
