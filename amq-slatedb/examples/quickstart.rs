//! A SlateDB database whose tables carry amq's point, prefix and range
//! filters (the program `docs/slatedb.md` shows; a test keeps the two the
//! same). `cargo run -p amq-slatedb --example quickstart`
use std::sync::Arc;

use amq::range::RangeSizing;
use amq::{DelimitedPrefix, FilterKind, FilterSizing};
use amq_slatedb::{PointFilterPolicy, PrefixFilterPolicy, RangeFilterPolicy};
use slatedb::config::{FlushOptions, FlushType};
use slatedb::object_store::ObjectStore;
use slatedb::object_store::memory::InMemory;
use slatedb::{Db, DbReader, FilterPolicy};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `get`s: Ribbon at 1%; prefix scans of tenants; bounded scans.
    let point = Arc::new(PointFilterPolicy::new(
        FilterKind::Ribbon,
        FilterSizing::Fpr(0.01),
    )?);
    let prefix = PrefixFilterPolicy::new(
        DelimitedPrefix::new(b':'),
        FilterKind::BlockedBloom,
        FilterSizing::Fpr(0.01),
    )?;
    let range = RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0))?;
    let policies: Vec<Arc<dyn FilterPolicy>> = vec![point.clone(), Arc::new(prefix), Arc::new(range)];

    // Any object store: S3, GCS, Azure or a local directory in production.
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let db = Db::builder("orders", store.clone())
        .with_filter_policies(policies.clone())
        .build()
        .await?;
    for tenant in 0..10 {
        for order in 0..100 {
            db.put(format!("t{tenant:03}:{:08}", order * 10), b"...").await?;
        }
    }
    db.flush_with_options(FlushOptions {
        flush_type: FlushType::MemTable,
    })
    .await?;

    assert!(db.get(b"t003:00000420").await?.is_some());
    let mut rows = db.scan_prefix(b"t003:", ..).await?;
    let mut n = 0;
    while rows.next().await?.is_some() {
        n += 1;
    }
    assert_eq!(n, 100);
    // An empty range inside a tenant: the range filter rules the table out.
    let mut empty = db.scan(&b"t003:00000421"[..]..&b"t003:00000429"[..]).await?;
    assert!(empty.next().await?.is_none());

    // Readers (and compactors) take the same list, or they skip these filters.
    let reader = DbReader::builder("orders", store)
        .with_filter_policies(policies)
        .build()
        .await?;
    assert!(reader.get(b"t003:00000420").await?.is_some());
    println!("{:?}", point.stats());
    reader.close().await?;
    db.close().await?;
    Ok(())
}
