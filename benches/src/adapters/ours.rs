//! amq's Bloom filters as [`Subject`](crate::Subject)s, at the comparison's
//! 10 bits/key.

use amq::{BlockedBloom, StandardBloom};

/// Bits per key of the Bloom comparison.
pub const BLOOM_BITS_PER_KEY: f64 = 10.0;

amq_subject!(StandardBloom, "amq-StandardBloom", |keys| {
    StandardBloom::with_bits_per_key(keys.len(), BLOOM_BITS_PER_KEY).map(|mut f| {
        keys.iter().for_each(|&k| f.insert_hash(k));
        f
    })
});

amq_subject!(BlockedBloom, "amq-BlockedBloom", |keys| {
    BlockedBloom::with_bits_per_key(keys.len(), BLOOM_BITS_PER_KEY).map(|mut f| {
        keys.iter().for_each(|&k| f.insert_hash(k));
        f
    })
});
