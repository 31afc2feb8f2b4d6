//! amq's filters inside [SlateDB](https://slatedb.io): point filters of any
//! amq kind (Ribbon, binary fuse, blocked or split-block Bloom, …), prefix
//! filters and range filters, as SlateDB filter policies
//! ([`slatedb::FilterPolicy`]), registered with
//! `DbBuilder::with_filter_policies` (and the same list on every
//! `DbReaderBuilder`, `CompactorBuilder` and `CompactionWorkerBuilder`).
//!
//! * [`PointFilterPolicy`]: `get`s. Any kind and sizing, or the planner's
//!   choice per table ([`FilterChoice`]); one key hash per `get` however
//!   many tables it asks.
//! * [`PrefixFilterPolicy`]: `scan_prefix`, scans inside one prefix, and
//!   point reads, with amq's prefix extractors or SlateDB's.
//! * [`RangeFilterPolicy`]: any bounded scan, `scan_prefix`, and point reads,
//!   through a key map fitted to each table's keys, or an infix filter of
//!   keys past 64 bits ([`amq::range::KeyRangeFilter`]).
//!
//! `docs/slatedb.md` in the repository has a longer program, which policy
//! to pick for which workload, and the figures measured against SlateDB's
//! own Bloom filter. This crate only translates: the filters, their byte format and their
//! checks are amq's. Bytes that are not a valid filter of a policy (damaged,
//! truncated, of an unknown kind) decode to a filter that answers "may
//! contain", counted in the policy's [`FilterStats`]: never a wrong answer.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use amq::range::RangeSizing;
//! use amq::{FilterKind, FilterSizing};
//! use amq_slatedb::{PointFilterPolicy, RangeFilterPolicy};
//! use slatedb::object_store::memory::InMemory;
//! use slatedb::{Db, FilterPolicy};
//!
//! let policies: Vec<Arc<dyn FilterPolicy>> = vec![
//!     Arc::new(PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(0.01))?),
//!     Arc::new(RangeFilterPolicy::new(RangeSizing::BitsPerKey(16.0))?),
//! ];
//! let db = Db::builder("db", Arc::new(InMemory::new()))
//!     .with_filter_policies(policies)
//!     .build()
//!     .await?;
//! db.put(b"user:42", b"v").await?;
//! assert!(db.get(b"user:42").await?.is_some());
//! db.close().await?;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod choice;
mod fallback;
mod memo;
mod point;
mod prefix;
mod range;
mod stats;

pub use choice::FilterChoice;
pub use point::{POINT_POLICY_NAME, PointFilterPolicy};
pub use prefix::{Extractor, PrefixFilterPolicy};
pub use range::{RANGE_POLICY_NAME, RangeFilterPolicy};
pub use stats::FilterStats;
