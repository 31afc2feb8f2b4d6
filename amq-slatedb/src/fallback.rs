//! The filter that stands in for one that could not be built or decoded:
//! it answers "may contain" to every query, so its table is always read.
//! SlateDB's `decode` cannot fail, so bytes that are not a valid filter of
//! a policy come back as this, counted in the policy's
//! [`FilterStats::undecodable_filters`](crate::FilterStats::undecodable_filters).

use std::sync::Arc;

use slatedb::bytes::BufMut;
use slatedb::{Filter, FilterQuery};

/// "May contain" for every query; writes back the bytes it was given.
#[derive(Debug)]
pub(crate) struct MayContain {
    bytes: Arc<[u8]>,
}

impl MayContain {
    pub(crate) fn filter(bytes: &[u8]) -> Arc<dyn Filter> {
        Arc::new(MayContain { bytes: bytes.into() })
    }
}

impl Filter for MayContain {
    fn might_match(&self, _query: &FilterQuery) -> bool {
        true
    }

    fn encode(&self, writer: &mut dyn BufMut) {
        writer.put_slice(&self.bytes);
    }

    fn size(&self) -> usize {
        self.bytes.len()
    }

    fn clamp_allocated_size(&self) -> Arc<dyn Filter> {
        Arc::new(MayContain {
            bytes: Arc::clone(&self.bytes),
        })
    }
}
