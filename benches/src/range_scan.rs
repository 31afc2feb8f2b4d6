//! Short range scans on trees of overlapping tables, with range filters and
//! without, for the range-scan report (`src/bin/range_scan_report.rs`).
//!
//! Two trees, each of N tables written as N flushes into a tiered store
//! that never compacts, with blocked Bloom key filters at 10 bits per key
//! and no block cache:
//!
//! - the prefix tree of [`crate::prefix`] (keys `t{tenant:08}:{row:08}`,
//!   every table spanning every tenant), with no prefix extractor, so only
//!   a range filter can skip a table: an empty scan is rows `r..r + w` of an
//!   absent tenant;
//! - an integer tree ([`IntTree`]): 20,000 uniformly random `u64` keys per
//!   table, written big-endian behind one byte (`u`), the workload of the
//!   range-filter literature inside a store: an empty scan is `w`
//!   consecutive integers holding no key.

use amq::hash::remix;
use amq::range::RangeSizing;
use amq_lsm::{Db, Options, RangeFilterPolicy, SyncMode, TieredOptions, WriteBatch};

use crate::lsm::Error;
use crate::prefix::{key, measure, Measured, KEYS_PER_TABLE};

/// The store's options for both trees: the prefix tree's (no extractor),
/// with range filters of `bits` bits per key, or none.
pub fn options(bits: Option<f64>) -> Options {
    let range = match bits {
        Some(b) => RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(b)),
        None => RangeFilterPolicy::none(),
    };
    crate::prefix::options(false, None).range_filter_policy(range)
}

/// An empty scan of `width` rows of each absent tenant of `tenants`,
/// starting at row `7 · i mod 1000` (ranges made before timing).
pub fn empty_tenant_scan(db: &Db, tenants: &[u64], width: u64) -> Measured {
    let ranges: Vec<(Vec<u8>, Vec<u8>)> = tenants
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let row = (7 * i as u64) % 1000;
            (key(t, row), key(t, row + width))
        })
        .collect();
    measure(db, &ranges, |(lo, hi)| {
        db.scan(lo.as_slice()..hi.as_slice()).count()
    })
}

/// The key of integer `x` in the integer tree.
pub fn int_key(x: u64) -> [u8; 9] {
    let mut k = [b'u'; 9];
    k[1..].copy_from_slice(&x.to_be_bytes());
    k
}

/// The integer tree (see the module docs).
pub struct IntTree {
    /// The store.
    pub db: Db,
    /// Its tables.
    pub tables: usize,
    /// Every key, sorted: what an empty range must avoid.
    keys: Vec<u64>,
    _dir: tempfile::TempDir,
}

impl IntTree {
    /// Writes `tables` tables of [`KEYS_PER_TABLE`] random keys each.
    pub fn build(tables: usize, opts: Options) -> Result<IntTree, Error> {
        let dir = tempfile::tempdir()?;
        let opts = opts
            .compaction(TieredOptions::default().runs_per_level(100_000))
            .sync(SyncMode::OnSync);
        let db = Db::open(dir.path(), opts)?;
        let mut keys = Vec::with_capacity(tables * KEYS_PER_TABLE as usize);
        for t in 0..tables as u64 {
            let mut batch = WriteBatch::new();
            for i in 0..KEYS_PER_TABLE {
                let x = remix(t * KEYS_PER_TABLE + i, 0x1a7e);
                keys.push(x);
                batch.put(int_key(x), b"value of an integer key");
            }
            db.write(batch)?;
            db.flush()?;
        }
        keys.sort_unstable();
        Ok(IntTree {
            db,
            tables,
            keys,
            _dir: dir,
        })
    }

    /// `count` ranges of `width` consecutive integers holding no key, from
    /// a fixed sequence of random starts.
    pub fn empty_ranges(&self, count: usize, width: u64) -> Vec<(u64, u64)> {
        (0u64..)
            .map(|i| remix(i, 0xe397))
            .map(|x| (x, x.saturating_add(width - 1)))
            .filter(|&(lo, hi)| {
                let at = self.keys.partition_point(|&k| k < lo);
                self.keys.get(at).is_none_or(|&k| k > hi)
            })
            .take(count)
            .collect()
    }

    /// An absent point read of each range's first integer.
    pub fn absent_get(&self, ranges: &[(u64, u64)]) -> Measured {
        let keys: Vec<[u8; 9]> = ranges.iter().map(|r| int_key(r.0)).collect();
        measure(&self.db, &keys, |k| {
            usize::from(self.db.get(k).expect("get").is_some())
        })
    }

    /// A scan of each range, both ends included.
    pub fn scan(&self, ranges: &[(u64, u64)]) -> Measured {
        let bounds: Vec<([u8; 9], [u8; 9])> = ranges.iter().map(|r| (int_key(r.0), int_key(r.1))).collect();
        measure(&self.db, &bounds, |(lo, hi)| {
            self.db.scan(&lo[..]..=&hi[..]).count()
        })
    }

    /// Ranges that each hold about `keys` keys: from a key, `keys` times
    /// the mean gap between keys wide.
    pub fn full_ranges(&self, count: usize, keys: u64) -> Vec<(u64, u64)> {
        let gap = u64::MAX / self.keys.len() as u64;
        (0..count as u64)
            .map(|i| {
                let k = self.keys[(remix(i, 0xf011) % self.keys.len() as u64) as usize];
                (k, k.saturating_add(gap.saturating_mul(keys)))
            })
            .collect()
    }
}
