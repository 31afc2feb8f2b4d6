//! Builds the Parquet Bloom filter of a column and writes it as a Parquet
//! file stores it at the column chunk's `bloom_filter_offset`: the Thrift
//! `BloomFilterHeader` followed by the bitset. Any Parquet reader (arrow-rs,
//! DuckDB, Spark, Trino) reads these bytes; a Parquet writer that takes
//! pre-built filters can embed them as they are.
//!
//! ```text
//! cargo run --release -p amq --example parquet_column [-- OUT_FILE]
//! ```
//!
//! Without `OUT_FILE` the bytes go to a file in the system's temporary
//! directory. The example also reads the bytes back, as a reader would, and
//! checks every value of the column is found.

use amq::parquet::ParquetHeader;
use amq::{FilterSizing, ParquetBloom};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A column of 1,000,000 order ids (INT64) and their customers (strings),
    // as two column chunks of one row group.
    let n = 1_000_000usize;
    let order_ids: Vec<i64> = (0..n as i64).map(|i| 7_000_000_000 + 3 * i).collect();
    let customers: Vec<String> = (0..n).map(|i| format!("customer-{}", i % 250_000)).collect();

    // Sized for 1% false positives at the column's distinct values: 10.5
    // bits per value, not a power of two.
    let mut ids = ParquetBloom::new(order_ids.len(), FilterSizing::Fpr(0.01))?;
    ids.insert_values(&order_ids)?;
    // 250,000 distinct customers: size for those, insert every row (a
    // repeated value sets the same bits).
    let mut names = ParquetBloom::new(250_000, FilterSizing::Fpr(0.01))?;
    for c in &customers {
        names.insert(c.as_str())?;
    }

    let out = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("amq-order-id.bloom"));
    let bytes = ids.to_parquet_bytes();
    std::fs::write(&out, &bytes)?;
    let header = ParquetHeader::parse(&bytes)?;
    println!(
        "order_id: {} values, {} bytes ({}-byte header + {}-byte bitset), {:.2} bits/value, expected FPR {:.3}%",
        order_ids.len(),
        bytes.len(),
        header.header_len(),
        header.bitset_len(),
        ids.bits_per_key(),
        100.0 * ids.expected_fpr()
    );
    println!("wrote {}", out.display());
    println!(
        "customer: 250,000 distinct values, {} bytes of Parquet filter",
        names.to_parquet_bytes().len()
    );

    // Read back as a Parquet reader would, and probe in batches.
    let back = ParquetBloom::from_parquet_bytes(&std::fs::read(&out)?)?;
    let mut found = vec![false; order_ids.len()];
    back.contains_values(&order_ids, &mut found);
    assert!(found.iter().all(|&f| f), "a written value was missed");
    let absent: Vec<i64> = (0..100_000).map(|i| 7_000_000_001 + 3 * i).collect();
    let mut hits = vec![false; absent.len()];
    back.contains_values(&absent, &mut hits);
    let fp = hits.iter().filter(|&&h| h).count();
    println!(
        "read back: every value found; {:.2}% of 100,000 absent ids pass (estimated from the bits: {:.2}%)",
        100.0 * fp as f64 / absent.len() as f64,
        100.0 * estimated_fpr(&back)
    );
    Ok(())
}

/// The FPR estimated from the bits set, with no key count (a filter read
/// from a Parquet file has none): a probe tests one bit in each of a block's
/// eight words, so it is the mean over blocks of the product of the words'
/// fill.
fn estimated_fpr(f: &ParquetBloom) -> f64 {
    let bitset = f.parquet_bitset();
    let sum: f64 = bitset
        .chunks_exact(32)
        .map(|block| {
            block
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]).count_ones() as f64 / 32.0)
                .product::<f64>()
        })
        .sum();
    sum / (bitset.len() / 32) as f64
}
