//! The value filter block of an SSTable: a standard Bloom filter of the
//! table's value terms, of the tree's one shape, and the checks that decide
//! whether a filter read back can be trusted.
//!
//! ```text
//! value filter block = version: u8 (1)  extractor: bytes  terms: varint  filter
//! filter             = an amq StandardBloom in amq's byte format (magic AMQF,
//!                      kind, hash scheme, m, k, key count, words, xxh3 checksum)
//! ```
//!
//! Terms are hashed with [`amq::hash_key`]; `terms` counts every term added
//! (repeats included), as does the filter's own key count, and the table's
//! metadata block records it again beside the block's handle. The block is
//! trusted only if all of these agree, its version is known, the extractor
//! name is the store's and the shape is the tree's: a filter built from other
//! terms, or of another shape, could answer "absent" for a value the table
//! holds, or could not be OR-ed with its siblings.
//!
//! The layer below value search (`crate::value`) that table files need:
//! [`options`] (what every value filter of a tree shares) and the block
//! itself, so the table writer and reader depend on this module and not on
//! the index built over the tables.

use std::sync::Arc;

use amq::{hash_key, Filter, FromBytes, Insert, StandardBloom};

pub(crate) mod options;

use self::options::ValueIndexOptions;
use crate::coding::{put_bytes, put_varint, Cursor};

/// The block version this build writes and reads.
const BLOCK_VERSION: u8 = 1;

/// The shape (bits, probes) all value filters of a tree share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub bits: u64,
    pub probes: u32,
}

impl Shape {
    pub(crate) fn of(opts: &ValueIndexOptions) -> Shape {
        Shape {
            bits: opts.sizing.num_bits(),
            probes: opts.num_probes(),
        }
    }

    /// An empty filter of this shape.
    pub(crate) fn empty(&self) -> StandardBloom {
        // Validated options give 64 ≤ bits ≤ 2^34, a multiple of 64, and
        // 1 ≤ probes ≤ 30, which `with_shape` accepts; allocation failure
        // aborts as any allocation does.
        StandardBloom::with_shape(self.bits, self.probes).expect("validated value filter shape")
    }
}

/// Builds one table's value filter as its entries are written.
pub(crate) struct ValueFilterBuilder {
    opts: ValueIndexOptions,
    bloom: StandardBloom,
    terms: u64,
}

impl ValueFilterBuilder {
    pub(crate) fn new(opts: &ValueIndexOptions) -> Self {
        ValueFilterBuilder {
            bloom: Shape::of(opts).empty(),
            opts: opts.clone(),
            terms: 0,
        }
    }

    /// Adds the terms of one value (tombstones have none).
    pub(crate) fn add(&mut self, value: &[u8]) {
        let (bloom, terms) = (&mut self.bloom, &mut self.terms);
        self.opts.extractor.terms(value, &mut |t| {
            // A Bloom filter's insert never fails.
            let _ = bloom.insert_hash(hash_key(t));
            *terms += 1;
        });
    }

    /// The block's contents and the number of terms added.
    pub(crate) fn finish(self) -> (Vec<u8>, u64) {
        let mut out = vec![BLOCK_VERSION];
        put_bytes(&mut out, self.opts.extractor.name().as_bytes());
        put_varint(&mut out, self.terms);
        out.extend_from_slice(&self.bloom.to_bytes());
        (out, self.terms)
    }
}

/// Decodes a value filter block read from a table whose metadata block
/// recorded `recorded_terms`, and checks it against the store's options.
/// `Err` is the reason it is not trusted.
pub(crate) fn decode(
    bytes: &[u8],
    recorded_terms: u64,
    opts: &ValueIndexOptions,
) -> Result<Arc<StandardBloom>, String> {
    let mut c = Cursor::new(bytes);
    let version = c.u8().ok_or("value filter block too short")?;
    if version != BLOCK_VERSION {
        return Err(format!(
            "value filter block version {version} unknown to this build"
        ));
    }
    let name = c.bytes().ok_or("value filter block header")?;
    let terms = c.varint().ok_or("value filter block header")?;
    if name != opts.extractor.name().as_bytes() {
        return Err(format!(
            "value filter built by extractor {:?}, the store uses {:?}",
            String::from_utf8_lossy(name),
            opts.extractor.name()
        ));
    }
    let bloom =
        StandardBloom::from_bytes(c.remaining()).map_err(|e| format!("amq could not decode it: {e}"))?;
    let shape = Shape::of(opts);
    if (bloom.num_bits(), bloom.num_probes()) != (shape.bits, shape.probes) {
        return Err(format!(
            "value filter of {} bits and {} probes, the tree's are {} and {}",
            bloom.num_bits(),
            bloom.num_probes(),
            shape.bits,
            shape.probes
        ));
    }
    // The filter's own count saturates at 64 per bit; ours does not.
    let own = bloom.num_keys() as u64;
    if terms != recorded_terms || own != terms.min(bloom.num_bits().saturating_mul(64)) {
        return Err(format!(
            "value filter holds {own} terms, its header says {terms}, the table {recorded_terms}"
        ));
    }
    Ok(Arc::new(bloom))
}

#[cfg(test)]
mod tests {
    use super::options::{TermExtractor, ValueFilterSizing};
    use super::*;

    fn opts() -> ValueIndexOptions {
        ValueIndexOptions {
            sizing: ValueFilterSizing::FixedBits {
                bits: 4096,
                expected_values: 100,
            },
            ..ValueIndexOptions::default()
        }
    }

    #[test]
    fn round_trips_and_holds_every_value() {
        let mut b = ValueFilterBuilder::new(&opts());
        for i in 0..100u32 {
            b.add(format!("v{i}").as_bytes());
        }
        let (bytes, terms) = b.finish();
        assert_eq!(terms, 100);
        let f = decode(&bytes, 100, &opts()).unwrap();
        assert!((0..100u32).all(|i| f.contains(format!("v{i}").as_bytes())));
        assert!(decode(&bytes, 99, &opts()).is_err(), "count from another table");
    }

    #[test]
    fn any_damage_or_mismatch_is_untrusted_never_a_panic() {
        let mut b = ValueFilterBuilder::new(&opts());
        b.add(b"x");
        let (bytes, _) = b.finish();
        for i in 0..bytes.len() {
            let mut d = bytes.clone();
            d[i] ^= 0x41;
            assert!(decode(&d, 1, &opts()).is_err(), "byte {i}");
        }
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 1, &opts()).is_err());
        }
        let other_shape = ValueIndexOptions {
            probes: Some(1),
            ..opts()
        };
        assert!(decode(&bytes, 1, &other_shape).unwrap_err().contains("probes"));
        struct Other;
        impl TermExtractor for Other {
            fn name(&self) -> &str {
                "other"
            }
            fn terms(&self, v: &[u8], emit: &mut dyn FnMut(&[u8])) {
                emit(v)
            }
        }
        let other_terms = ValueIndexOptions {
            extractor: Arc::new(Other),
            ..opts()
        };
        assert!(decode(&bytes, 1, &other_terms).unwrap_err().contains("extractor"));
    }
}
